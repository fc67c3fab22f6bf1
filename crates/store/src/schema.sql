-- schedlab results store, schema version 8 (see MIGRATIONS in migrate.rs for what changed). Every time is an integer in nanoseconds (CLOCK_MONOTONIC
-- for instants, durations as differences); every count is an integer.

CREATE TABLE IF NOT EXISTS runs (
    run_id          INTEGER PRIMARY KEY,
    name            TEXT    NOT NULL,
    started_at      TEXT    NOT NULL,           -- UTC, RFC 3339
    finished_at     TEXT,
    status          TEXT    NOT NULL,           -- queued | running | done | interrupted | failed
    seed            INTEGER NOT NULL,
    spec_toml       TEXT    NOT NULL,           -- the spec as run, defaults filled in
    argv            TEXT    NOT NULL,
    env_json        TEXT,                       -- environment record
    version         TEXT    NOT NULL,
    trials_planned  INTEGER NOT NULL,
    runner_pid      INTEGER,                    -- the process running it, to tell a dead run from a live one
    runner_boot_id  TEXT,                       -- /proc/sys/kernel/random/boot_id when it started
    runner_start_ticks INTEGER,                 -- the runner's start time (/proc/PID/stat field 22)
    uuid            TEXT,                       -- identity across databases (push copies a run once)
    host            TEXT,                       -- host name of the machine that ran it
    machine_id      TEXT,                       -- /etc/machine-id of that machine
    kernel          TEXT,                       -- its kernel release
    cpu_model       TEXT,                       -- its CPU model
    git_commit      TEXT,                       -- commit of the schedlab that ran it (version: its version)
    spec_hash       TEXT    NOT NULL            -- hash of spec_toml, seed aside (`--spec-hash`), written with the row
);

CREATE TABLE IF NOT EXISTS cells (
    cell_id         INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs(run_id),
    cell_index      INTEGER NOT NULL,
    policy          TEXT    NOT NULL,
    priorities      TEXT    NOT NULL,
    workload        TEXT    NOT NULL,           -- label, e.g. cpu:pi
    workload_json   TEXT    NOT NULL,           -- every workload parameter
    kind            TEXT    NOT NULL,           -- process | thread
    start           TEXT    NOT NULL,           -- barrier | staggered
    tasks           INTEGER NOT NULL,
    cpus            TEXT,                       -- pinned CPU list, NULL if not pinned
    nice            INTEGER,                    -- override, NULL if none
    rt_priority     INTEGER,                    -- override, NULL if none
    dl_runtime_ns   INTEGER NOT NULL,
    dl_deadline_ns  INTEGER NOT NULL,
    dl_period_ns    INTEGER NOT NULL,
    work_ns         INTEGER,                    -- requested work alone, if sized by time
    units           INTEGER,                    -- units of work per task (exact or calibrated)
    split           INTEGER NOT NULL DEFAULT 0, -- 1: the size was the trial's total, divided among tasks
    antagonists     INTEGER NOT NULL DEFAULT 0, -- load tasks sharing the machine (not measured)
    antagonist_policy TEXT,
    antagonist_workload TEXT,
    io_scheduler    TEXT,                       -- block-device I/O scheduler requested for the cell
    slice_ns        INTEGER,                    -- EEVDF custom slice of the measured tasks (fair policies), NULL = kernel default
    knobs           TEXT,                       -- kernel settings set for the cell, "name=value" separated by spaces
    scx             TEXT,                       -- BPF scheduler (sched_ext) command the cell runs under
    cgroups         TEXT,                       -- task groups (CPU cgroups) and their settings, e.g. "cg[a:1 w=100 | b:1 w=300]"
    UNIQUE (run_id, cell_index)
);

CREATE TABLE IF NOT EXISTS trials (
    trial_id        INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs(run_id),
    cell_id         INTEGER NOT NULL REFERENCES cells(cell_id),
    trial_index     INTEGER NOT NULL,
    round           INTEGER NOT NULL,
    warmup          INTEGER NOT NULL,           -- 1 for warm-up trials
    status          TEXT    NOT NULL,           -- ok | timeout | skipped | failed
    reason          TEXT,
    makespan_ns     INTEGER,
    timeout_ns      INTEGER NOT NULL,
    harness_cpu_ns  INTEGER,                    -- launcher + host CPU during the trial
    pgid            INTEGER,                    -- process group of the trial (its host's pid)
    load1           REAL,                       -- 1-minute load average before the trial
    busy_pct        REAL,                       -- non-idle CPU share in the settle window before the trial
    steal_pct       REAL,                       -- steal share in that window
    psi_cpu_some_pct REAL,                      -- share of that window some task waited for a CPU (PSI)
    io_scheduler    TEXT,                       -- I/O scheduler read back before the trial (device: runs.env_json)
    trace_lost_events INTEGER,                  -- --trace: events lost or overwritten
    started_at      TEXT    NOT NULL,
    host            TEXT,                       -- host name of the machine that ran the trial
    speed_before    REAL,                       -- reference loop just before the trial, relative to its calibration (1 = as calibrated)
    speed_after     REAL,                       -- the same just after the trial
    trial_steal_pct REAL,                       -- steal share of the trial's CPUs during the trial
    noisy           INTEGER,                    -- 1: the reference speed before or after was off by more than 10 %
    rt_throttled    INTEGER,                    -- 1: RT throttling cut its CPU-bound RT tasks short; NULL: none to judge
    outside_cpu_ns  INTEGER,                    -- CPU time used on the trial's CPUs by anything outside the trial during it
    outside_share   REAL,                       -- outside_cpu_ns / (the trial's CPUs x its wall time), 0..1
    interference_source TEXT,                   -- where the busy time was read: schedstat | cpuacct | cgroup2 | proc-stat
    disturbed       INTEGER,                    -- 1: outside_process_share above the threshold (10 %; before schema 8: outside_share)
    ops             INTEGER,                    -- messages received (messaging), requests completed (request), round trips (pipe), periods (periodic)
    ops_per_s       REAL,                       -- ops / makespan
    wake_p50_ns     INTEGER,                    -- wake-up latency of every measured task together (request, periodic; HDR, <= 1% error)
    wake_p90_ns     INTEGER,
    wake_p99_ns     INTEGER,
    wake_p999_ns    INTEGER,
    op_p50_ns       INTEGER,                    -- request latency (request), message latency (messaging with message_latency), all tasks together
    op_p90_ns       INTEGER,
    op_p99_ns       INTEGER,
    op_p999_ns      INTEGER,
    misses          INTEGER,                    -- missed periods (periodic), dropped requests (request with rps)
    miss_pct        REAL,                       -- periodic: missed periods, percent of periods
    slack_p1_ns     INTEGER,                    -- periodic: slack (next period start - end of work; <= 0: missed) over every period
    slack_p50_ns    INTEGER,
    slack_p99_ns    INTEGER,
    late_max_ns     INTEGER,                    -- periodic: largest lateness of a missed period
    outside_process_ns INTEGER,                 -- other processes' CPU time on the trial's CPUs during it (what disturbs a trial)
    outside_process_share REAL,                 -- outside_process_ns / (the trial's CPUs x its wall time), 0..1
    outside_kthread_ns INTEGER,                 -- kernel threads' CPU time on the trial's CPUs during it
    outside_irq_ns  INTEGER,                    -- hard + soft interrupts on the trial's CPUs during it (/proc/stat, 10 ms ticks)
    kernel_cpu_ns   INTEGER,                    -- kernel work the trial caused: kthreads + irq beyond the settle window's rate
    speed_steady    REAL,                       -- the run's steady reference speed (median so far) against the loop's calibration
    speed_in_trial  REAL,                       -- calibrated CPU work: units per CPU second against the workload's calibration
    speed_in_trial_steady REAL,                 -- the run's steady in-trial speed it was judged against
    slowed          INTEGER,                    -- 1: speed_in_trial more than 10 % below speed_in_trial_steady; NULL: not judged
    retry           INTEGER NOT NULL DEFAULT 0, -- 0: the planned trial; k: its k-th re-run (same round)
    retried         INTEGER NOT NULL DEFAULT 0, -- 1: contaminated (disturbed or slowed) and run again; kept, flagged
    descendants_cpu_ns INTEGER,                 -- CPU time of the tasks' descendants reaped by the launcher (the trial's own)
    UNIQUE (cell_id, trial_index, retry)
);

CREATE TABLE IF NOT EXISTS tasks (
    trial_id        INTEGER NOT NULL REFERENCES trials(trial_id),
    task_index      INTEGER NOT NULL,
    pid             INTEGER,
    tid             INTEGER,
    policy_in_force TEXT,                       -- read back from the kernel
    nice            INTEGER,
    rt_priority     INTEGER,
    t_release_ns    INTEGER,
    t_start_ns      INTEGER,
    t_end_ns        INTEGER,
    response_ns     INTEGER,
    turnaround_ns   INTEGER,
    run_span_ns     INTEGER,
    utime_ns        INTEGER,
    stime_ns        INTEGER,
    nvcsw           INTEGER,
    nivcsw          INTEGER,
    run_delay_ns    INTEGER,
    timeslices      INTEGER,
    migrations      INTEGER,
    work_units      INTEGER,
    exit_status     INTEGER,
    role            TEXT    NOT NULL DEFAULT 'task', -- task (measured) | antagonist (load sharing the machine)
    lat_count       INTEGER,                    -- periodic: wake-ups recorded
    lat_min_ns      INTEGER,                    -- periodic: wake-up latency percentiles (HDR histogram, <= 1% error)
    lat_p50_ns      INTEGER,
    lat_p90_ns      INTEGER,
    lat_p99_ns      INTEGER,
    lat_p999_ns     INTEGER,
    lat_max_ns      INTEGER,
    trace_wakeups   INTEGER,                    -- --trace: wake-ups seen in the kernel trace
    trace_delay_p50_ns INTEGER,                 -- --trace: wake-up-to-run delay (perf sched latency), 1 us resolution
    trace_delay_max_ns INTEGER,
    trace_preemptions INTEGER,                  -- --trace: switched out while runnable
    trace_migrations INTEGER,
    trace_unseen_switch_ins INTEGER,            -- --trace: slices whose switch-in the trace lacks
    slice_getattr_ns INTEGER,                   -- EEVDF slice read back with sched_getattr (sched_runtime), fair classes
    slice_proc_ns   INTEGER,                    -- EEVDF slice in /proc/thread-self/sched (se.slice), fair classes
    cpu_ns          INTEGER,                    -- exact CPU time of the work (thread CPU clock); utime/stime are rusage
    group_name      TEXT,                       -- the task group (CPU cgroup) it ran in; NULL outside groups
    workload_role   TEXT,                       -- receiver | sender (messaging), messenger | worker (request), ping | pong (pipe)
    bytes           INTEGER,                    -- messaging: bytes written (sender) or read (receiver)
    misses          INTEGER,                    -- missed periods (periodic), dropped requests (request message thread)
    op_count        INTEGER,                    -- operations timed: requests (request worker), messages (messaging receiver)
    op_p50_ns       INTEGER,                    -- their latency (request: sent to completed; messaging: written to read)
    op_p99_ns       INTEGER,
    op_max_ns       INTEGER,
    slack_p1_ns     INTEGER,                    -- periodic: slack percentiles of this task (negative: missed)
    slack_p50_ns    INTEGER,
    slack_p99_ns    INTEGER,
    late_max_ns     INTEGER,                    -- periodic: largest lateness of a missed period
    PRIMARY KEY (trial_id, task_index)
);

-- One row per task group (CPU cgroup) of a trial: its settings and the kernel's figures.
CREATE TABLE IF NOT EXISTS task_groups (
    trial_id        INTEGER NOT NULL REFERENCES trials(trial_id),
    group_index     INTEGER NOT NULL,           -- its tasks follow the earlier groups' tasks
    name            TEXT    NOT NULL,
    tasks           INTEGER NOT NULL,
    weight          INTEGER,                    -- cpu.weight (v1: cpu.shares = round(weight * 1024 / 100)); NULL: default 100
    quota_us        INTEGER,                    -- CFS bandwidth quota per period (cpu.max); NULL: no limit
    period_us       INTEGER,
    idle            INTEGER,                    -- cpu.idle as set; NULL: default
    cpus            TEXT,                       -- cpuset.cpus as set; NULL: all
    is_partition    INTEGER NOT NULL DEFAULT 0, -- 1: its CPUs had a root domain of their own
    rt_runtime_us   INTEGER,                    -- v1 RT group scheduling: cpu.rt_runtime_us per second
    usage_ns        INTEGER,                    -- CPU time of its tasks, release to the end of the last measured task
    nr_periods      INTEGER,                    -- cpu.stat over the same period
    nr_throttled    INTEGER,
    throttled_ns    INTEGER,
    contended_ns    INTEGER,                    -- release to the end of the first measured task (every group still running)
    usage_contended_ns INTEGER,                 -- CPU time of its tasks in that window
    PRIMARY KEY (trial_id, group_index)
);

CREATE TABLE IF NOT EXISTS histograms (
    trial_id        INTEGER NOT NULL REFERENCES trials(trial_id),
    task_index      INTEGER NOT NULL,
    metric          TEXT    NOT NULL,           -- wakeup_latency_ns, request_latency_ns, message_latency_ns, slack_ns, lateness_ns, trace_wakeup_delay_ns
    hdr_v2          BLOB    NOT NULL,           -- HdrHistogram V2 serialisation (mergeable)
    PRIMARY KEY (trial_id, task_index, metric)
);

CREATE TABLE IF NOT EXISTS samples (
    trial_id        INTEGER NOT NULL REFERENCES trials(trial_id),
    t_ns            INTEGER NOT NULL,           -- end of the interval, ns after sampling started
    interval_ns     INTEGER NOT NULL,
    r               INTEGER,                    -- vmstat columns, computed as vmstat does
    b               INTEGER,
    in_per_s        REAL,
    cs_per_s        REAL,
    us_pct          REAL,
    sy_pct          REAL,
    id_pct          REAL,
    wa_pct          REAL,
    st_pct          REAL,
    bi_kib_s        REAL,
    bo_kib_s        REAL,
    psi_cpu_some_pct REAL,                      -- PSI stall, percent of the interval
    psi_cpu_full_pct REAL,
    psi_io_some_pct  REAL,
    psi_io_full_pct  REAL,
    psi_mem_some_pct REAL,
    psi_mem_full_pct REAL,
    load1           REAL
);

CREATE TABLE IF NOT EXISTS trace_slices (
    trial_id        INTEGER NOT NULL REFERENCES trials(trial_id),
    task_index      INTEGER NOT NULL,
    cpu             INTEGER NOT NULL,
    start_ns        INTEGER NOT NULL,           -- CLOCK_MONOTONIC (trace clock mono), 1 us resolution
    end_ns          INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS knob_readings (
    reading_id      INTEGER PRIMARY KEY,        -- keeps the readings' order on every engine
    trial_id        INTEGER NOT NULL REFERENCES trials(trial_id),
    name            TEXT    NOT NULL,           -- knob name (io_scheduler, sched_ext, a sysctl name or path)
    path            TEXT    NOT NULL,           -- file read (symbolic links resolved)
    requested       TEXT    NOT NULL,           -- value the cell asked for
    read_back       TEXT    NOT NULL            -- value the file showed just before the trial
);

CREATE TABLE IF NOT EXISTS calibrations (
    key             TEXT    NOT NULL,
    kernel          TEXT    NOT NULL,
    cpu_model       TEXT    NOT NULL,
    units_per_sec   REAL    NOT NULL,
    measured_at     TEXT    NOT NULL,
    spread          REAL,                       -- reference loop: (90 % - 10 % quantile) / 90 % quantile of its measurements
    PRIMARY KEY (key, kernel, cpu_model)
);

CREATE TABLE IF NOT EXISTS warnings (
    warning_id      INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs(run_id),
    trial_id        INTEGER,
    message         TEXT    NOT NULL,               -- the sentence, as shown
    code            TEXT,                           -- the warning's stable code (README); NULL: stored before schema 6
    params          TEXT                            -- its parameters, a JSON object; NULL: stored before schema 6
);

-- The work queue (`schedlab submit`, `schedlab worker`): one row per trial of a submitted run.
CREATE TABLE IF NOT EXISTS queue (
    queue_id        INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs(run_id),
    cell_index      INTEGER NOT NULL,
    trial_index     INTEGER NOT NULL,
    position        INTEGER NOT NULL,           -- index of the trial in the run's order
    label           TEXT,                       -- host label of the workers that may run it; NULL: any
    state           TEXT    NOT NULL,           -- pending | claimed | done | failed
    attempts        INTEGER NOT NULL DEFAULT 0, -- claims so far (the claim's token)
    worker          TEXT,                       -- host:pid of the last claimer
    lease_until_ms  INTEGER,                    -- a claim lapses then (ms since the epoch, server clock)
    trial_id        INTEGER,                    -- the stored trial, once done
    reason          TEXT,                       -- why it failed
    retry           INTEGER NOT NULL DEFAULT 0, -- 0: the planned trial; k: its k-th re-run (queued when the k-1-th was contaminated)
    UNIQUE (run_id, cell_index, trial_index, retry)
);

CREATE INDEX IF NOT EXISTS trials_by_run ON trials(run_id);
CREATE INDEX IF NOT EXISTS cells_by_run ON cells(run_id);
CREATE INDEX IF NOT EXISTS samples_by_trial ON samples(trial_id);
CREATE INDEX IF NOT EXISTS slices_by_trial ON trace_slices(trial_id);
CREATE INDEX IF NOT EXISTS queue_by_state ON queue(state, label);
CREATE UNIQUE INDEX IF NOT EXISTS runs_by_uuid ON runs(uuid);
CREATE INDEX IF NOT EXISTS knob_readings_by_trial ON knob_readings(trial_id);
CREATE INDEX IF NOT EXISTS task_groups_by_trial ON task_groups(trial_id);
