//! What a worker lets queued runs do to its machine. A run arrives through the shared
//! database, so anyone who can write there could otherwise run any program, or change any
//! kernel setting, as root on every worker. A queued run that starts programs (`command`
//! workloads), changes kernel settings (knobs, the I/O scheduler) or starts a BPF scheduler
//! is refused unless the worker's own flags allow exactly that; each of its trials is stored
//! as skipped, with the reason naming the flag, so its queue rows end.
//!
//! Custom slices (`slices`) need no flag: a slice is an attribute of the trial's own tasks
//! (`sched_setattr` on them), gone when they exit, and changes nothing else on the machine.
//!
//! Files: a worker writes trial files only under its own `--io-dir` (default /var/tmp). A
//! queued run's `settings.io_dir` names a directory on the submitter's say; as root, writing
//! there would let anyone with database access make the worker create (and remove) files
//! anywhere. A run whose trials write files is run only if its io_dir is the worker's
//! `--io-dir` or a directory inside it (after resolving links), else refused; a run that
//! writes none runs with the worker's `--io-dir`.

use schedlab_core::records::{TrialMeta, TrialOutcome, TrialStatus};
use schedlab_core::workload::WorkloadKind;
use schedlab_spec::plan::{Cell, Plan};
use std::path::{Path, PathBuf};

/// The name that allows the I/O scheduler axis in `--allow-knobs`.
pub const IO_SCHEDULER: &str = super::super::knobs::IO_SCHEDULER;

/// What this worker allows queued runs (its `--allow-*` flags); nothing by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowed {
    /// `--allow-commands`: `command` workloads, programs run as the worker's user.
    pub commands: bool,
    /// `--allow-knobs`: the kernel settings queued runs may change, each as the file the
    /// spec's knob name stands for (`spec::knob_path`), or [`IO_SCHEDULER`]; compared exactly.
    pub knobs: Vec<String>,
    /// `--allow-scx`: BPF schedulers (sched_ext), programs run as root.
    pub scx: bool,
    /// `--io-dir`: the directory under which queued runs' trial files go (empty: none may).
    pub io_dir: PathBuf,
}

impl Allowed {
    /// Why this worker refuses run `run_id` (whose plan has `cells`), naming the flag that
    /// would allow it; None when it may run. A run is refused whole: its knobs are prepared
    /// (originals read, journaled) for all its cells at once.
    pub fn refusal(&self, run_id: i64, cells: &[Cell]) -> Option<String> {
        let why = cells.iter().find_map(|c| self.cell_refusal(c))?;
        Some(format!(
            "this worker refuses queued run {run_id}: it {why} (a worker runs only what its own flags allow: write access to the database must not make anyone root on every worker)"
        ))
    }

    /// The I/O directory run `run_id` (of `plan`) uses on this worker: its own io_dir when
    /// its trials write files and it lies within this worker's `--io-dir`, this worker's
    /// `--io-dir` when they write none; else why the run is refused.
    pub fn io_dir(&self, run_id: i64, plan: &Plan) -> Result<PathBuf, String> {
        if !plan.cells.iter().any(super::super::one::needs_trial_dir) {
            return Ok(self.io_dir.clone());
        }
        let asked = &plan.settings.io_dir;
        if within(asked, &self.io_dir) {
            return Ok(asked.clone());
        }
        Err(format!(
            "this worker refuses queued run {run_id}: its trials write files in {}, outside this worker's --io-dir {}; start the worker with --io-dir {} (or a directory holding it) to allow it (a worker writes only where its own flags allow: write access to the database must not let anyone make root create files anywhere)",
            asked.display(),
            self.io_dir.display(),
            asked.display()
        ))
    }

    fn cell_refusal(&self, cell: &Cell) -> Option<String> {
        if cell.workload.kind == WorkloadKind::Command && !self.commands {
            let program = cell
                .workload
                .commands
                .first()
                .and_then(|c| c.argv.first())
                .map_or(String::new(), |p| format!(" ({p})"));
            return Some(format!(
                "runs programs{program}; start the worker with --allow-commands to run them"
            ));
        }
        if let Some(k) = cell.knobs.iter().find(|k| !self.knobs.contains(&k.path)) {
            return Some(format!(
                "changes the kernel setting {} ({}); start the worker with --allow-knobs {} to allow it",
                k.name, k.path, k.name
            ));
        }
        if cell.io_scheduler.is_some() && !self.knobs.iter().any(|k| k == IO_SCHEDULER) {
            return Some(format!(
                "changes the I/O scheduler of a block device; start the worker with --allow-knobs {IO_SCHEDULER} to allow it"
            ));
        }
        if let (Some(scx), false) = (&cell.scx, self.scx) {
            return Some(format!(
                "starts the BPF scheduler `{}` as root; start the worker with --allow-scx to allow it",
                scx.command_line()
            ));
        }
        None
    }
}

/// Whether `path` is `dir` or lies inside it, both with every link resolved; false when either
/// cannot be resolved (does not exist).
fn within(path: &Path, dir: &Path) -> bool {
    match (path.canonicalize(), dir.canonicalize()) {
        (Ok(p), Ok(d)) => p.starts_with(d),
        _ => false,
    }
}

/// A refused trial as stored: skipped, with the reason.
pub fn refused(reason: &str) -> (TrialOutcome, TrialMeta) {
    let meta = TrialMeta {
        started_at: schedlab_core::records::now_utc(),
        ..Default::default()
    };
    (TrialOutcome::not_run(TrialStatus::Skipped, reason), meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::policy::{DeadlineParams, PolicyKind, PriorityMode};
    use schedlab_core::records::{KnobSetting, ScxCommand, StartMode, TaskKind, WorkSize};
    use schedlab_core::workload::{Command, Workload};

    fn cell() -> Cell {
        Cell {
            policy: PolicyKind::Other,
            priorities: PriorityMode::Same,
            workload: Workload::default(),
            size: WorkSize::WorkNs(1_000_000),
            split: false,
            tasks: 1,
            kind: TaskKind::Process,
            start: StartMode::Barrier,
            cpus: None,
            nice: None,
            rt_priority: None,
            deadline: DeadlineParams {
                runtime_ns: 5_000_000,
                deadline_ns: 50_000_000,
                period_ns: 50_000_000,
            },
            antagonists: 0,
            antagonist_policy: PolicyKind::Other,
            antagonist_workload: WorkloadKind::Cpu,
            io_scheduler: None,
            slice_ns: None,
            knobs: Vec::new(),
            scx: None,
            groups: Vec::new(),
        }
    }

    #[test]
    fn each_kind_of_host_change_needs_its_own_flag() {
        let none = Allowed::default();
        let plain = cell();
        let sliced = Cell {
            slice_ns: Some(3_000_000),
            ..cell()
        };
        assert_eq!(
            none.refusal(1, &[plain.clone(), sliced]),
            None,
            "slices need no flag"
        );
        let mut command = cell();
        command.workload.kind = WorkloadKind::Command;
        command.workload.commands = vec![Command {
            name: None,
            argv: vec!["/bin/sh".into(), "-c".into(), "id".into()],
            cwd: None,
            env: Default::default(),
        }];
        let why = none.refusal(7, &[plain.clone(), command.clone()]).unwrap();
        assert!(
            why.contains("run 7") && why.contains("--allow-commands") && why.contains("/bin/sh"),
            "{why}"
        );
        let commands = Allowed {
            commands: true,
            ..Allowed::default()
        };
        assert_eq!(commands.refusal(7, &[command]), None);

        let knob = Cell {
            knobs: vec![KnobSetting {
                name: "vm.swappiness".into(),
                path: "/proc/sys/vm/swappiness".into(),
                value: "10".into(),
            }],
            ..cell()
        };
        let why = commands.refusal(1, std::slice::from_ref(&knob)).unwrap();
        assert!(why.contains("--allow-knobs vm.swappiness"), "{why}");
        let other_knob = Allowed {
            knobs: vec!["/proc/sys/vm/dirty_ratio".into()],
            ..Allowed::default()
        };
        assert!(
            other_knob.refusal(1, std::slice::from_ref(&knob)).is_some(),
            "names match exactly"
        );
        let swappiness = Allowed {
            knobs: vec!["/proc/sys/vm/swappiness".into()],
            ..Allowed::default()
        };
        assert_eq!(swappiness.refusal(1, std::slice::from_ref(&knob)), None);

        let io = Cell {
            io_scheduler: Some("bfq".into()),
            ..cell()
        };
        let why = swappiness.refusal(1, std::slice::from_ref(&io)).unwrap();
        assert!(why.contains("--allow-knobs io_scheduler"), "{why}");
        let io_ok = Allowed {
            knobs: vec![IO_SCHEDULER.into()],
            ..Allowed::default()
        };
        assert_eq!(io_ok.refusal(1, &[io]), None);

        let scx = Cell {
            scx: Some(ScxCommand {
                argv: vec!["scx_lavd".into()],
                ops: "lavd".into(),
            }),
            ..cell()
        };
        let why = commands.refusal(1, std::slice::from_ref(&scx)).unwrap();
        assert!(
            why.contains("--allow-scx") && why.contains("scx_lavd"),
            "{why}"
        );
        assert_eq!(
            Allowed {
                scx: true,
                ..Allowed::default()
            }
            .refusal(1, &[scx]),
            None
        );
    }

    #[test]
    fn files_go_only_under_the_workers_io_dir() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().join("io");
        let inner = base.join("ssd");
        let outside = t.path().join("elsewhere");
        for d in [&inner, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(&outside, base.join("link")).unwrap();
        let worker = Allowed {
            io_dir: base.clone(),
            ..Allowed::default()
        };
        let plan = |kind: &str, dir: &Path| {
            schedlab_spec::plan::build_from_text(
                "q.toml",
                &format!(
                    "name = \"q\"\n[axes]\nworkloads = [{{ kind = \"{kind}\" }}]\n[settings]\nio_dir = \"{}\"\n",
                    dir.display()
                ),
                1,
            )
            .unwrap()
            .1
        };
        assert_eq!(worker.io_dir(1, &plan("io", &base)), Ok(base.clone()));
        assert_eq!(worker.io_dir(1, &plan("io", &inner)), Ok(inner.clone()));
        let why = worker.io_dir(3, &plan("io", &outside)).unwrap_err();
        assert!(
            why.contains("run 3") && why.contains(&format!("--io-dir {}", outside.display())),
            "{why}"
        );
        // Inside by name only: the link leads out.
        assert!(worker.io_dir(1, &plan("io", &base.join("link"))).is_err());
        assert!(worker
            .io_dir(1, &plan("mixed", &base.join("../elsewhere")))
            .is_err());
        assert!(worker
            .io_dir(1, &plan("io", &base.join("missing")))
            .is_err());
        // A run that writes no file runs in the worker's directory, whatever it named.
        assert_eq!(worker.io_dir(1, &plan("cpu", &outside)), Ok(base.clone()));
        assert!(Allowed::default().io_dir(1, &plan("io", &base)).is_err());
    }
}
