//! A report's input read from the store: one run ([`load_input`]), or several runs of one
//! spec in one report (`--runs 3,4,5`, `--spec-hash H`): the runs' cells side by side, with
//! the host and the kernel they ran on as treatments compared like policies (see
//! [`super::model::CellKey::all_of`]); runs of the same host and kernel pool their trials.

use super::error::ReportError;
use super::model::{self, CellKey, ReportInput};

type Result<T, E = ReportError> = std::result::Result<T, E>;
use schedlab_core::records::RunStatus;
use schedlab_store::error::Context;
use schedlab_store::kernel::{self, kernel_rows, KernelCellRows};
use schedlab_store::query::{self, CellView};
use schedlab_store::Store;

/// The runs a report covers: `run` (else the latest) alone, or `runs`, or every run whose spec
/// hash starts with `hash`.
pub fn chosen_runs(
    store: &Store,
    run: Option<i64>,
    runs: &[i64],
    hash: Option<&str>,
) -> Result<Vec<i64>> {
    if let Some(h) = hash {
        let ids = query::runs_of_spec(store, h)?;
        if ids.is_empty() {
            return Err(ReportError::NoRunOfSpec {
                hash: h.to_string(),
                location: store.location().to_string(),
            });
        }
        return Ok(ids);
    }
    if !runs.is_empty() {
        for &id in runs {
            store
                .require_run(id)
                .with_context(|| format!("--runs {id}, in {}", store.location()))?;
        }
        return Ok(runs.to_vec());
    }
    Ok(vec![store.resolve_run(run, "--run", store.location())?])
}

/// The name of a report's directory: the run id, or `runs-3-4-5`.
pub fn dir_name(ids: &[i64]) -> String {
    match ids {
        [one] => one.to_string(),
        _ => format!(
            "runs-{}",
            ids.iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join("-")
        ),
    }
}

/// Reads everything a report of `run_id` needs from the store.
pub fn load_input(store: &Store, run_id: i64, include_warmup: bool) -> Result<ReportInput> {
    let cells = query::cells(store, run_id, include_warmup)
        .with_context(|| format!("cannot read the cells of run {run_id}"))?;
    let groups = schedlab_store::groups::group_rows(store, run_id, include_warmup)
        .with_context(|| format!("cannot read the task groups of run {run_id}"))?;
    Ok(ReportInput {
        run: query::run_info(store, run_id)?,
        cgroups: model::cgroups::build(&groups, &cells),
        cells,
        warnings: query::coded_warnings(store, run_id)?,
        problems: query::problems(store, run_id, include_warmup)?,
        include_warmup,
        kernel: model::kernel::build(
            &kernel::kernel_rows(store, run_id, include_warmup).with_context(|| {
                format!("cannot read the latency histograms and traces of run {run_id}")
            })?,
        ),
        iosched: model::iosched::build(
            &kernel::scheduler_samples(
                store,
                run_id,
                include_warmup,
                &model::iosched::column_names(),
            )
            .with_context(|| format!("cannot read the samples of run {run_id}"))?,
        ),
        baseline: None,
        quality: schedlab_store::quality::trial_quality(store, run_id, include_warmup)
            .with_context(|| format!("cannot read the trials of run {run_id}"))?,
        exclude_noisy: false,
        claims: Default::default(),
    })
}

/// The report input of runs `ids` (one run: as [`load_input`]).
pub fn load(store: &Store, ids: &[i64], include_warmup: bool) -> Result<ReportInput> {
    if let [one] = ids {
        return load_input(store, *one, include_warmup);
    }
    let mut infos = Vec::with_capacity(ids.len());
    for &id in ids {
        infos.push(query::run_info(store, id)?);
    }
    let hash = one_spec(&infos)?;
    let mut read = Gathered::read(store, &infos, include_warmup)?;
    read.input.run.trials_planned = infos.iter().map(|i| i.trials_planned).sum();
    read.input.warnings.insert(
        0,
        query::StoredWarning {
            code: None,
            message: pooled_note(&infos, &hash),
        },
    );
    Ok(read.pooled())
}

/// The spec hash the runs share; [`ReportError::DifferentSpecs`] for runs of different specs.
fn one_spec(infos: &[query::RunInfo]) -> Result<String> {
    let hash = infos[0].spec_hash();
    if let Some(other) = infos.iter().find(|i| i.spec_hash() != hash) {
        return Err(ReportError::DifferentSpecs {
            a: infos[0].run_id,
            b: other.run_id,
            hash_a: hash[..8].to_string(),
            hash_b: other.spec_hash()[..8].to_string(),
        });
    }
    Ok(hash.to_string())
}

/// Every run's rows one after another, before the cells of equal keys are pooled.
struct Gathered {
    /// The first run's input, with every run's warnings, problems and trial conditions.
    input: ReportInput,
    /// Every run's cells, run by run.
    cells: Vec<CellView>,
    /// Kernel rows, and the position in `cells` of each one's cell.
    kernel: Vec<(KernelCellRows, usize)>,
    /// Where each run's cells, trial conditions and problems start in the lists.
    firsts: Vec<(usize, usize, usize)>,
}

impl Gathered {
    /// Reads the rows of every run in `infos`.
    fn read(store: &Store, infos: &[query::RunInfo], include_warmup: bool) -> Result<Gathered> {
        let mut g = Gathered {
            input: ReportInput {
                run: infos[0].clone(),
                include_warmup,
                ..ReportInput::default()
            },
            cells: Vec::new(),
            kernel: Vec::new(),
            firsts: Vec::new(),
        };
        for info in infos {
            g.read_run(store, info, include_warmup)?;
        }
        Ok(g)
    }

    /// Adds one run's rows; its cells take its host and kernel.
    fn read_run(&mut self, store: &Store, info: &query::RunInfo, warmup: bool) -> Result<()> {
        let (id, input) = (info.run_id, &mut self.input);
        let first = self.cells.len();
        self.firsts
            .push((first, input.quality.len(), input.problems.len()));
        let mut cs = query::cells(store, id, warmup)?;
        for c in &mut cs {
            c.host = info.host.clone();
            c.kernel = info.kernel.clone();
        }
        for k in kernel_rows(store, id, warmup)? {
            if let Some(pos) = cs.iter().position(|c| c.cell_index == k.cell_index) {
                self.kernel.push((k, first + pos));
            }
        }
        self.cells.extend(cs);
        let host = info.host.as_deref().unwrap_or("unknown host");
        input
            .warnings
            .extend(
                query::coded_warnings(store, id)?
                    .into_iter()
                    .map(|w| query::StoredWarning {
                        message: format!("run {id} ({host}): {}", w.message),
                        ..w
                    }),
            );
        input.problems.extend(query::problems(store, id, warmup)?);
        input
            .quality
            .extend(schedlab_store::quality::trial_quality(store, id, warmup)?);
        if info.status != RunStatus::Done && input.run.status == RunStatus::Done {
            input.run.status = info.status;
        }
        Ok(())
    }

    /// The position in `cells` of run `run`'s cell of index `index`.
    fn position(&self, run: usize, index: i64) -> Option<usize> {
        let start = self.firsts[run].0;
        let end = self.firsts.get(run + 1).map_or(self.cells.len(), |f| f.0);
        (start..end).find(|&i| self.cells[i].cell_index == index)
    }

    /// The run whose part of a list starts at or before `at`.
    fn run_of(&self, start_of: fn(&(usize, usize, usize)) -> usize, at: usize) -> usize {
        self.firsts
            .iter()
            .rposition(|f| start_of(f) <= at)
            .unwrap_or(0)
    }

    /// The input with cells of equal keys (the same host and kernel) pooled, numbered anew
    /// (runs number their cells from 0 each), and what points at a cell following it.
    fn pooled(self) -> ReportInput {
        let quality_cells: Vec<Option<usize>> = (0..self.input.quality.len())
            .map(|q| self.position(self.run_of(|f| f.1, q), self.input.quality[q].cell_index))
            .collect();
        let problem_cells: Vec<Option<usize>> = (0..self.input.problems.len())
            .map(|p| self.position(self.run_of(|f| f.2, p), self.input.problems[p].cell_index))
            .collect();
        let Gathered {
            mut input,
            cells,
            kernel,
            ..
        } = self;
        let keys = CellKey::all_of(&cells);
        let mut pooled: Vec<(CellKey, CellView)> = Vec::new();
        let mut slot = Vec::with_capacity(cells.len());
        for (k, c) in keys.iter().zip(cells) {
            match pooled.iter().position(|(pk, _)| pk == k) {
                Some(i) => {
                    pool(&mut pooled[i].1, c);
                    slot.push(i);
                }
                None => {
                    slot.push(pooled.len());
                    pooled.push((k.clone(), c));
                }
            }
        }
        for (i, (_, c)) in pooled.iter_mut().enumerate() {
            c.cell_index = i as i64;
        }
        for (q, cell) in input.quality.iter_mut().zip(quality_cells) {
            q.cell_index = cell.map_or(-1, |c| slot[c] as i64);
        }
        for (p, cell) in input.problems.iter_mut().zip(problem_cells) {
            p.cell_index = cell.map_or(-1, |c| slot[c] as i64);
        }
        input.kernel = model::kernel::build(&pool_kernel(kernel, &slot, &pooled));
        input.cells = pooled.into_iter().map(|(_, c)| c).collect();
        input
    }
}

/// Kernel rows of pooled cells merged: latency histograms added, the first trace kept.
fn pool_kernel(
    kernel: Vec<(KernelCellRows, usize)>,
    slot: &[usize],
    pooled: &[(CellKey, CellView)],
) -> Vec<KernelCellRows> {
    let mut krows: Vec<KernelCellRows> = Vec::new();
    let mut kslot: Vec<usize> = Vec::new();
    for (mut k, cell) in kernel {
        let s = slot[cell];
        k.policy = pooled[s].0.policy.clone();
        k.cell_index = s as i64;
        match kslot.iter().position(|&x| x == s) {
            Some(i) => {
                krows[i].latency_hdr_v2.extend(k.latency_hdr_v2);
                if krows[i].trace_slices.is_none() {
                    krows[i].trace_slices = k.trace_slices;
                }
            }
            None => {
                kslot.push(s);
                krows.push(k);
            }
        }
    }
    krows
}

/// The first line of a pooled report's warnings: which runs, and what is compared.
fn pooled_note(infos: &[schedlab_store::query::RunInfo], hash: &str) -> String {
    let distinct = |f: &dyn Fn(&schedlab_store::query::RunInfo) -> Option<String>| {
        let mut v: Vec<String> = infos
            .iter()
            .map(|i| f(i).unwrap_or_else(|| "unknown".into()))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let hosts = distinct(&|i| i.host.clone());
    let kernels = distinct(&|i| i.kernel.clone());
    let compared: Vec<&str> = [(hosts.len() > 1, "host"), (kernels.len() > 1, "kernel")]
        .into_iter()
        .filter(|(d, _)| *d)
        .map(|(_, w)| w)
        .collect();
    format!(
        "This report pools runs {} of one spec (hash {}) from hosts {} on kernels {}{}.",
        infos
            .iter()
            .map(|i| i.run_id.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        &hash[..8],
        hosts.join(", "),
        kernels.join(", "),
        if compared.is_empty() {
            "; the runs' trials are pooled per cell".to_string()
        } else {
            format!(
                "; the {} is compared like a policy (runs of the same one pool their trials)",
                compared.join(" and ")
            )
        }
    )
}

/// Adds cell `c`'s rows (another run's) to `into`.
fn pool(into: &mut CellView, c: CellView) {
    for (status, n) in c.statuses {
        match into.statuses.iter_mut().find(|(s, _)| *s == status) {
            Some((_, m)) => *m += n,
            None => into.statuses.push((status, n)),
        }
    }
    // In the order of their names, then counts, as each run's are.
    into.statuses.sort_by_key(|&(s, n)| (s.name(), n));
    if into.reason.is_none() {
        into.reason = c.reason;
    }
    into.makespans_ns.extend(c.makespans_ns);
    into.trial_rounds.extend(c.trial_rounds);
    into.trial_ids.extend(c.trial_ids);
    into.task_rows.extend(c.task_rows);
    into.figures.extend(c.figures);
}
