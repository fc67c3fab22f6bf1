//! Flags of the commands for many machines: `push`, `submit`, `worker`, and `runs --host`.

use super::{DbArg, LocationParser, SharedDbArg};
use clap::Args;
use schedlab_store::Location;
use std::path::PathBuf;

/// Flags of `schedlab runs`.
#[derive(Debug, Args)]
pub struct RunsArgs {
    /// The results database.
    #[command(flatten)]
    pub db: DbArg,
    /// Only the runs of this host (its host name, as the `host` column shows).
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
}

/// Flags of `schedlab push`.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// The results database to copy from (a file written offline, or any store).
    #[arg(required_unless_present = "spool", value_parser = LocationParser)]
    pub from: Option<Location>,
    /// The store to copy to (default: SCHEDLAB_DB), e.g. postgres://USER@HOST:PORT/DATABASE.
    #[arg(long, env = "SCHEDLAB_DB", hide_env_values = true, value_parser = LocationParser)]
    pub to: Location,
    /// Push the spool: the trials kept while the server could not be reached; the spool keeps
    /// only what the server does not have afterwards.
    #[arg(long, conflicts_with = "from")]
    pub spool: bool,
    /// The spool (default: ~/.local/state/schedlab/spool.db, or SCHEDLAB_SPOOL).
    #[arg(long, value_name = "PATH")]
    pub spool_file: Option<PathBuf>,
    /// Only these runs of the source, e.g. 3,4.
    #[arg(long, value_delimiter = ',')]
    pub runs: Vec<i64>,
}

/// Flags of `schedlab submit`.
#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// Experiment file (TOML).
    pub spec: PathBuf,
    /// The shared store.
    #[command(flatten)]
    pub db: SharedDbArg,
    /// Host labels, e.g. web1,web2: one run per label, run only by workers with that label
    /// (a worker's label is its host name unless it says otherwise). Default: one run, any worker.
    #[arg(long, value_delimiter = ',')]
    pub hosts: Vec<String>,
    /// Runs per host label (each the whole experiment).
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Seed of the trial order, the same for every run submitted (default: random, stored).
    #[arg(long)]
    pub seed: Option<u64>,
}

/// Flags of `schedlab worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The shared store.
    #[command(flatten)]
    pub db: SharedDbArg,
    /// The host labels this worker runs trials for, e.g. web1,fast (default: its host name).
    /// Trials submitted without --hosts are anyone's.
    #[arg(long, value_delimiter = ',')]
    pub labels: Vec<String>,
    /// How long a claim outlives its trial's deadline (and lasts before the trial starts):
    /// when a worker dies, its trial goes back to the queue that long after. At most 7 days.
    #[arg(long, default_value = "60s")]
    pub lease: String,
    /// When the queue is empty, wait for more trials instead of exiting.
    #[arg(long)]
    pub wait: bool,
    /// Where trials wait while the server cannot be reached
    /// (default: ~/.local/state/schedlab/spool.db, or SCHEDLAB_SPOOL).
    #[arg(long, value_name = "PATH")]
    pub spool_file: Option<PathBuf>,
    /// No line per trial.
    #[arg(long, short)]
    pub quiet: bool,
    /// Programs queued `command` workloads may run, by absolute path, e.g.
    /// /usr/bin/chromium,/bin/sh (a spec must name them so; links resolved on both sides).
    /// They are named by whoever can write to the database; they run as --command-user with
    /// only the spec's environment. None by default.
    #[arg(long, value_delimiter = ',', value_name = "PATH,...")]
    pub allow_commands: Vec<PathBuf>,
    /// The user queued programs run as (their only group its primary group; the trial
    /// directory theirs while they run). `root` keeps root, for programs that need it.
    #[arg(long, value_name = "USER", default_value = "nobody")]
    pub command_user: String,
    /// Kernel settings queued runs may change, by exact name, e.g. vm.swappiness,io_scheduler
    /// (`io_scheduler`: the I/O scheduler axis; `partition`: CPU partitions, which switch the
    /// root cpuset's load balancing off or take CPUs from the rest of the system). Refused by
    /// default.
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub allow_knobs: Vec<String>,
    /// Start the BPF schedulers (sched_ext) queued runs name: programs run as root. Refused
    /// by default.
    #[arg(long)]
    pub allow_scx: bool,
    /// The directory under which queued runs write their trial files: a queued run whose
    /// settings.io_dir is neither this directory nor inside it is refused if its trials write
    /// files (and runs here if they write none).
    #[arg(long, value_name = "DIR", default_value = "/var/tmp")]
    pub io_dir: PathBuf,
}
