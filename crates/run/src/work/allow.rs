//! What a worker lets queued runs do to its machine. A run arrives through the shared
//! database, so anyone who can write there could otherwise run any program, or change any
//! kernel setting, as root on every worker. A queued run that starts programs (`command`
//! workloads), changes kernel settings (knobs, the I/O scheduler, CPU partitions) or starts a
//! BPF scheduler is refused unless the worker's own flags allow exactly that; each of its
//! trials is stored as skipped, with the reason naming the flag, so its queue rows end.
//!
//! Programs: only those on `--allow-commands`' list of absolute paths (compared with links
//! resolved; a program named without a path, looked up in PATH, is refused), and they run as
//! `--command-user` (nobody unless the worker says otherwise) with only the spec's environment
//! ([`Allowed::confine`]): the worker's own (PGPASSWORD, SCHEDLAB_DB) is not theirs.
//!
//! Partitions (`partition = [true]`) change the machine beyond the trial's own groups (v1:
//! the root cpuset's load balancing; v2: CPUs taken from the rest of the system): they need
//! `--allow-knobs partition`.
//!
//! Custom slices (`slices`) need no flag: a slice is an attribute of the trial's own tasks
//! (`sched_setattr` on them), gone when they exit, and changes nothing else on the machine.
//!
//! Files: a worker writes trial files only under its own `--io-dir` (default /var/tmp), see
//! [`super::iodir`].

use schedlab_core::records::{TrialMeta, TrialOutcome, TrialStatus};
use schedlab_core::workload::{Sandbox, WorkloadKind};
use schedlab_spec::plan::{Cell, Plan};
use std::path::{Path, PathBuf};

/// The name that allows the I/O scheduler axis in `--allow-knobs`.
pub const IO_SCHEDULER: &str = super::super::knobs::IO_SCHEDULER;
/// The name that allows CPU partitions in `--allow-knobs`.
pub const PARTITION: &str = "partition";

/// What this worker allows queued runs (its `--allow-*` flags); nothing by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowed {
    /// `--allow-commands`: the programs queued runs may start, as absolute paths with every
    /// link resolved (empty: none).
    pub commands: Vec<PathBuf>,
    /// `--command-user`: who those programs run as, with only the spec's environment (None:
    /// the worker's own user and environment).
    pub command_user: Option<Sandbox>,
    /// `--allow-knobs`: the kernel settings queued runs may change, each as the file the
    /// spec's knob name stands for (`spec::knob_path`), or [`IO_SCHEDULER`] or [`PARTITION`];
    /// compared exactly.
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

    /// The I/O directory run `run_id` (of `plan`) uses on this worker, or why it is refused
    /// (see [`super::iodir::choose`]).
    pub fn io_dir(
        &self,
        run_id: i64,
        plan: &Plan,
    ) -> Result<super::iodir::IoDir, super::iodir::IoDirRefusal> {
        super::iodir::choose(&self.io_dir, run_id, plan)
    }

    /// Puts the admitted `plan`'s programs in this worker's sandbox: they run as
    /// `--command-user` with only the spec's environment.
    pub fn confine(&self, plan: &mut Plan) {
        for c in plan
            .cells
            .iter_mut()
            .filter(|c| c.workload.kind == WorkloadKind::Command)
        {
            c.workload.sandbox = self.command_user.clone();
        }
    }

    /// Whether `program` (a command's argv[0]) is on the allow-list: an absolute path whose
    /// real file is one of [`Allowed::commands`].
    fn program_allowed(&self, program: &str) -> bool {
        Path::new(program).is_absolute()
            && std::fs::canonicalize(program).is_ok_and(|real| self.commands.contains(&real))
    }

    fn cell_refusal(&self, cell: &Cell) -> Option<String> {
        if cell.workload.kind == WorkloadKind::Command {
            let refused = cell
                .workload
                .commands
                .iter()
                .filter_map(|c| c.argv.first())
                .find(|p| !self.program_allowed(p));
            if let Some(p) = refused {
                let how = if Path::new(p).is_absolute() {
                    format!("start the worker with --allow-commands {p} to run it")
                } else {
                    "name it by its absolute path in the spec (a program is never looked up in PATH), and start the worker with --allow-commands PATH".to_string()
                };
                return Some(format!(
                    "runs the program {p}, which is not on this worker's --allow-commands list; {how}"
                ));
            }
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
        let partitions = cell
            .trial_spec("queued")
            .is_some_and(|s| !s.partition_cpus().is_empty());
        if partitions && !self.knobs.iter().any(|k| k == PARTITION) {
            return Some(format!(
                "makes CPU partitions (the root cpuset's load balancing switched off, or CPUs taken from the rest of the system); start the worker with --allow-knobs {PARTITION} to allow it"
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
            commands: vec![std::fs::canonicalize("/bin/sh").unwrap()],
            ..Allowed::default()
        };
        assert_eq!(commands.refusal(7, std::slice::from_ref(&command)), None);
        // Another program, or the same one looked up in PATH: not on the list.
        for argv0 in ["/usr/bin/id", "sh"] {
            let mut other = command.clone();
            other.workload.commands[0].argv[0] = argv0.into();
            let why = commands.refusal(7, &[other]).unwrap();
            assert!(
                why.contains(argv0) && why.contains("--allow-commands"),
                "{why}"
            );
        }
        // Partitions are a machine-wide change: their own name in --allow-knobs.
        let part = Cell {
            groups: vec![schedlab_spec::plan::CellGroup {
                name: schedlab_cgroup::Name::new("a").unwrap(),
                tasks: 1,
                settings: schedlab_cgroup::GroupSettings {
                    cpus: Some(schedlab_cgroup::CpuList::parse("1").unwrap()),
                    partition: true,
                    ..Default::default()
                },
            }],
            ..cell()
        };
        let why = none.refusal(2, std::slice::from_ref(&part)).unwrap();
        assert!(why.contains("--allow-knobs partition"), "{why}");
        let partitions = Allowed {
            knobs: vec![PARTITION.into()],
            ..Allowed::default()
        };
        assert_eq!(partitions.refusal(2, &[part]), None);

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
}
