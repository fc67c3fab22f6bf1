//! The work queue: the trials of submitted runs, claimed by workers one at a time.
//!
//! A claim is one statement that picks the first claimable row (`SELECT ... FOR UPDATE SKIP
//! LOCKED` on PostgreSQL, so concurrent workers never wait for nor take the same row; SQLite
//! locks the whole file instead) and marks it claimed with a lease: a time, by the server's
//! clock, after which the trial goes back to whoever claims next. Every claim counts an
//! attempt, which is the claim's token: completing a claim stores the trial and marks the row
//! done in one transaction, and only while the row is still claimed with that token; the
//! trials table's uniqueness on (cell, trial index, retry) backs this up. So a worker that
//! died or lost its lease never stores a trial a second time.
//!
//! A contaminated trial to be run again (`TrialMeta::retried`) adds, in the same transaction,
//! a queue row for its next attempt (`retry` + 1) placed at the end of its round: the position
//! of the round's last planned trial, after which rows of the same position come in order of
//! their retry.

use super::db::{params, Value};
use super::write::RunIdentity;
use super::{NewRun, Store};
use crate::error::Result;
use schedlab_core::records::{RunStatus, TrialMeta, TrialOutcome, TrialStatus};
use schedlab_machine::HostIdentity;
use schedlab_spec::plan::{Cell, PlannedTrial};

/// A trial whose workers died this many times is given up (state failed).
pub const MAX_ATTEMPTS: i64 = 3;

/// A trial claimed by this worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The queue row.
    pub queue_id: i64,
    /// The run.
    pub run_id: i64,
    /// The trial's cell.
    pub cell_index: usize,
    /// The trial's index in its cell.
    pub trial_index: u32,
    /// Index of the trial in the run's order.
    pub position: usize,
    /// The claim's token (attempts so far, this one included).
    pub attempt: i64,
    /// 0: the planned trial; k: its k-th re-run.
    pub retry: u32,
}

/// What the queue holds for a worker when it has no trial to give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// Trials are claimed by other workers; they come back if those workers die.
    Claimed,
    /// Nothing is pending or claimed.
    Empty,
}

/// How completing a claim went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completed {
    /// Stored, as this trial id.
    Stored(i64),
    /// The claim had lapsed and another worker took the trial over: nothing stored.
    Lost,
}

/// One line of `schedlab queue`: trials of one run for one host label, per state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueLine {
    /// The run.
    pub run_id: i64,
    /// Its experiment's name.
    pub name: String,
    /// The host label its trials wait for; None: any worker.
    pub label: Option<String>,
    /// Trials per state.
    pub pending: i64,
    pub claimed: i64,
    pub done: i64,
    pub failed: i64,
}

/// One worker's share: trials it holds or ran, per state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerLine {
    /// host:pid of the worker.
    pub worker: String,
    pub claimed: i64,
    pub done: i64,
    pub failed: i64,
}

/// The condition on a queue row's label for a worker with `labels` bound from placeholder
/// `?first` on: the label equals one of them exactly (`=`: `%` and `_` are plain characters,
/// unlike in `LIKE`), or the row is anyone's.
fn label_matches(first: usize, labels: usize) -> String {
    let marks: Vec<String> = (first..first + labels).map(|i| format!("?{i}")).collect();
    if marks.is_empty() {
        "label IS NULL".into()
    } else {
        format!("(label IS NULL OR label IN ({}))", marks.join(", "))
    }
}

/// `params` followed by every label, as bound values.
fn with_labels(params: &[Value], labels: &[String]) -> Vec<Value> {
    let mut v = params.to_vec();
    v.extend(labels.iter().map(|l| Value::Text(l.clone())));
    v
}

impl Store {
    /// Submits a run: the run (state queued, no host yet) with its cells, and one queue row per
    /// trial of `trials` (cell index, trial index) in run order, for workers labelled `label`
    /// (None: any worker). One transaction; returns the run id.
    pub fn submit(
        &mut self,
        run: &NewRun,
        cells: &[Cell],
        trials: &[PlannedTrial],
        label: Option<&str>,
    ) -> Result<i64> {
        let id = RunIdentity {
            uuid: None,
            host: None,
            status: RunStatus::Queued,
        };
        self.db.transaction(|| {
            let run_id = self.create_run_rows(run, cells, &id)?;
            let rows: Vec<_> = trials
                .iter()
                .enumerate()
                .map(|(n, t)| {
                    params![
                        run_id,
                        t.cell as i64,
                        t.trial_index,
                        n as i64,
                        label,
                        "pending"
                    ]
                    .to_vec()
                })
                .collect();
            self.db.insert_rows(
                "queue",
                &[
                    "run_id",
                    "cell_index",
                    "trial_index",
                    "position",
                    "label",
                    "state",
                ],
                &rows,
            )?;
            Ok(run_id)
        })
    }

    /// Claims the next trial for worker `worker` with `labels`, with a lease of `lease_ms`;
    /// or says why there is none.
    pub fn claim(
        &self,
        worker: &str,
        labels: &[String],
        lease_ms: i64,
    ) -> Result<Result<Claim, Idle>> {
        self.claim_except(worker, labels, lease_ms, &[])
    }

    /// [`Store::claim`], passing over the runs in `except` (which this worker cannot run).
    pub fn claim_except(
        &self,
        worker: &str,
        labels: &[String],
        lease_ms: i64,
        except: &[i64],
    ) -> Result<Result<Claim, Idle>> {
        let skip = |first: usize| {
            let marks: Vec<String> = (first..first + except.len())
                .map(|i| format!("?{i}"))
                .collect();
            if marks.is_empty() {
                String::new()
            } else {
                format!(" AND run_id NOT IN ({})", marks.join(", "))
            }
        };
        let excepted = |mut v: Vec<Value>| {
            v.extend(except.iter().map(|&id| Value::Int(id)));
            v
        };
        self.db.execute(
            &format!(
                "UPDATE queue SET state = 'failed', lease_until_ms = NULL,
                        reason = 'its worker stopped without storing it ' || attempts || ' times'
                 WHERE state = 'claimed' AND lease_until_ms < {{now_ms}} AND attempts >= ?1 AND {}",
                label_matches(2, labels.len())
            ),
            &with_labels(params![MAX_ATTEMPTS], labels),
        )?;
        let claim = self.db.query_opt(
            &format!(
                "UPDATE queue SET state = 'claimed', attempts = attempts + 1, worker = ?1,
                        lease_until_ms = {{now_ms}} + ?2
                 WHERE queue_id = (SELECT queue_id FROM queue
                                   WHERE (state = 'pending' OR (state = 'claimed' AND lease_until_ms < {{now_ms}}))
                                     AND {}{}
                                   ORDER BY run_id, position, retry LIMIT 1 {{skip_locked}})
                 RETURNING queue_id, run_id, cell_index, trial_index, position, attempts, retry",
                label_matches(3, labels.len()),
                skip(3 + labels.len())
            ),
            &excepted(with_labels(params![worker, lease_ms], labels)),
            |r| {
                Ok(Claim {
                    queue_id: r.get(0)?,
                    run_id: r.get(1)?,
                    cell_index: r.get::<i64>(2)? as usize,
                    trial_index: r.get::<i64>(3)? as u32,
                    position: r.get::<i64>(4)? as usize,
                    attempt: r.get(5)?,
                    retry: r.get::<i64>(6)? as u32,
                })
            },
        )?;
        if let Some(c) = claim {
            return Ok(Ok(c));
        }
        let claimed: i64 = self.db.query_one(
            &format!(
                "SELECT COUNT(*) FROM queue WHERE state IN ('pending', 'claimed') AND {}{}",
                label_matches(1, labels.len()),
                skip(1 + labels.len())
            ),
            &excepted(with_labels(&[], labels)),
            |r| r.get(0),
        )?;
        Ok(Err(if claimed > 0 {
            Idle::Claimed
        } else {
            Idle::Empty
        }))
    }

    /// Keeps `claim` for `lease_ms` from now; false if it is no longer this worker's.
    pub fn extend_lease(&self, claim: &Claim, lease_ms: i64) -> Result<bool> {
        Ok(self.db.execute(
            "UPDATE queue SET lease_until_ms = {now_ms} + ?3 WHERE queue_id = ?1 AND attempts = ?2 AND state = 'claimed'",
            params![claim.queue_id, claim.attempt, lease_ms],
        )? == 1)
    }

    /// Gives `claim` back as one this worker cannot run, for `reason` (its machine lacks what
    /// the run needs): the attempt counts, and the trial is pending again for other workers,
    /// unless [`MAX_ATTEMPTS`] workers have tried: then every trial of the run still waiting
    /// is failed with the reason and the run with them. Returns whether it was refused so.
    pub fn give_back(&self, claim: &Claim, reason: &str) -> Result<bool> {
        self.db.transaction(|| {
            let mine = self.db.execute(
                "UPDATE queue SET state = 'pending', worker = NULL, lease_until_ms = NULL, reason = ?3
                 WHERE queue_id = ?1 AND attempts = ?2 AND state = 'claimed'",
                params![claim.queue_id, claim.attempt, reason],
            )?;
            if mine == 0 || claim.attempt < MAX_ATTEMPTS {
                return Ok(false);
            }
            let why = format!(
                "no worker could run it ({} tried): {reason}",
                claim.attempt
            );
            self.db.execute(
                "UPDATE queue SET state = 'failed', reason = ?2
                 WHERE run_id = ?1 AND state = 'pending'",
                params![claim.run_id, why.as_str()],
            )?;
            self.db.execute(
                "UPDATE runs SET status = 'failed', finished_at = ?2
                 WHERE run_id = ?1 AND status IN ('queued', 'running')
                   AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.run_id = ?1 AND q.state IN ('pending', 'claimed'))",
                params![claim.run_id, super::now_utc()],
            )?;
            Ok(true)
        })
    }

    /// Gives `claim` back: the trial is pending again (and this attempt does not count).
    pub fn release(&self, claim: &Claim) -> Result<()> {
        self.db.execute(
            "UPDATE queue SET state = 'pending', worker = NULL, lease_until_ms = NULL, attempts = attempts - 1
             WHERE queue_id = ?1 AND attempts = ?2 AND state = 'claimed'",
            params![claim.queue_id, claim.attempt],
        )?;
        Ok(())
    }

    /// Stores the claimed trial and marks its row done (failed for a trial that timed out or
    /// failed), in one transaction, if the claim is still this worker's; a run whose every
    /// trial is stored is marked done.
    pub fn complete(
        &self,
        claim: &Claim,
        planned: &PlannedTrial,
        outcome: &TrialOutcome,
        meta: &TrialMeta,
    ) -> Result<Completed> {
        let state = match outcome.status {
            TrialStatus::Timeout | TrialStatus::Failed => "failed",
            _ => "done",
        };
        self.db.transaction(|| {
            // The run's row first: completions of one run take turns, so the last one sees
            // every other as committed when it asks whether the run is done (two at once
            // would each see the other's trial still claimed).
            self.db.execute(
                "UPDATE runs SET status = status WHERE run_id = ?1",
                params![claim.run_id],
            )?;
            let mine = self.db.execute(
                "UPDATE queue SET state = ?3, lease_until_ms = NULL
                 WHERE queue_id = ?1 AND attempts = ?2 AND state = 'claimed'",
                params![claim.queue_id, claim.attempt, state],
            )?;
            if mine == 0 {
                return Ok(Completed::Lost);
            }
            let (trial_id, _) = self.insert_trial_rows(claim.run_id, planned, outcome, meta)?;
            self.db.execute(
                "UPDATE queue SET trial_id = ?2, reason = ?3 WHERE queue_id = ?1",
                params![claim.queue_id, trial_id, (state == "failed").then_some(outcome.status.name())],
            )?;
            if meta.retried {
                self.queue_rerun(claim)?;
            }
            self.db.execute(
                "UPDATE runs SET status = 'done', finished_at = ?2
                 WHERE run_id = ?1 AND status IN ('queued', 'running')
                   AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.run_id = ?1 AND q.state IN ('pending', 'claimed'))",
                params![claim.run_id, super::now_utc()],
            )?;
            Ok(Completed::Stored(trial_id))
        })
    }

    /// Queues the next attempt at the trial `claim` ran, at the end of its round (a trial's
    /// index is its round: the rows of its index are the round's), for the same workers;
    /// inside the caller's transaction.
    fn queue_rerun(&self, claim: &Claim) -> Result<()> {
        self.db.execute(
            "INSERT INTO queue (run_id, cell_index, trial_index, retry, position, label, state)
             SELECT q.run_id, q.cell_index, q.trial_index, ?2,
                    (SELECT MAX(r.position) FROM queue r WHERE r.run_id = q.run_id AND r.trial_index = q.trial_index),
                    q.label, 'pending'
             FROM queue q WHERE q.queue_id = ?1
             ON CONFLICT (run_id, cell_index, trial_index, retry) DO NOTHING",
            params![claim.queue_id, claim.retry + 1],
        )?;
        Ok(())
    }

    /// A worker starts on run `run_id`: a queued run becomes running, and a run without a host
    /// gets this worker's identity and environment record.
    pub fn start_queued_run(&self, run_id: i64, host: &HostIdentity, env_json: &str) -> Result<()> {
        self.db.execute(
            "UPDATE runs SET status = 'running' WHERE run_id = ?1 AND status = 'queued'",
            params![run_id],
        )?;
        self.db.execute(
            "UPDATE runs SET host = ?2, machine_id = ?3, kernel = ?4, cpu_model = ?5, version = ?6, git_commit = ?7,
                             env_json = ?8
             WHERE run_id = ?1 AND host IS NULL",
            params![
                run_id,
                host.hostname.as_str(),
                host.machine_id.as_deref(),
                host.kernel.as_str(),
                host.cpu_model.as_str(),
                host.version.as_str(),
                host.git_commit.as_deref(),
                env_json
            ],
        )?;
        Ok(())
    }

    /// Gives cell `cell_index` of run `run_id` these units of work per task unless it has some
    /// already; returns the units in force.
    pub fn settle_cell_units(&self, run_id: i64, cell_index: usize, units: u64) -> Result<u64> {
        self.db.transaction(|| {
            self.db.execute(
                "UPDATE cells SET units = ?3 WHERE run_id = ?1 AND cell_index = ?2 AND units IS NULL",
                params![run_id, cell_index as i64, units as i64],
            )?;
            let u: i64 = self.db.query_one(
                "SELECT units FROM cells WHERE run_id = ?1 AND cell_index = ?2",
                params![run_id, cell_index as i64],
                |r| r.get(0),
            )?;
            Ok(u as u64)
        })
    }

    /// The queue per run and host label, oldest run first (runs with queue rows only).
    pub fn queue_lines(&self) -> Result<Vec<QueueLine>> {
        self.db.query(
            "SELECT q.run_id, r.name, q.label,
                    COUNT(CASE WHEN q.state = 'pending' THEN 1 END), COUNT(CASE WHEN q.state = 'claimed' THEN 1 END),
                    COUNT(CASE WHEN q.state = 'done' THEN 1 END), COUNT(CASE WHEN q.state = 'failed' THEN 1 END)
             FROM queue q JOIN runs r ON r.run_id = q.run_id
             GROUP BY q.run_id, r.name, q.label ORDER BY q.run_id, q.label",
            &[],
            |r| {
                Ok(QueueLine {
                    run_id: r.get(0)?,
                    name: r.get(1)?,
                    label: r.get(2)?,
                    pending: r.get(3)?,
                    claimed: r.get(4)?,
                    done: r.get(5)?,
                    failed: r.get(6)?,
                })
            },
        )
    }

    /// Trials per worker that claimed them (the last claimer of each).
    pub fn worker_lines(&self) -> Result<Vec<WorkerLine>> {
        self.db.query(
            "SELECT worker, COUNT(CASE WHEN state = 'claimed' THEN 1 END), COUNT(CASE WHEN state = 'done' THEN 1 END),
                    COUNT(CASE WHEN state = 'failed' THEN 1 END)
             FROM queue WHERE worker IS NOT NULL GROUP BY worker ORDER BY worker",
            &[],
            |r| {
                Ok(WorkerLine {
                    worker: r.get(0)?,
                    claimed: r.get(1)?,
                    done: r.get(2)?,
                    failed: r.get(3)?,
                })
            },
        )
    }
}
