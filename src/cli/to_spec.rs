//! The run's flags as a spec: the spec file (or the quick experiment) with each flag applied
//! over it, axes, adaptive settings, claims and settings in turn.

use super::RunArgs;
use schedlab_spec::{Spec, SpecError, WorkloadSpec};

impl RunArgs {
    /// Whether any flag that shapes the experiment was given.
    fn has_axis_flags(&self) -> bool {
        !(self.policies.is_empty()
            && self.priorities.is_empty()
            && self.workloads.is_empty()
            && self.tasks.is_empty()
            && self.kind.is_empty()
            && self.start.is_empty()
            && self.cpus.is_none()
            && self.antagonists.is_empty()
            && self.io_schedulers.is_empty()
            && self.slices.is_empty()
            && self.knobs.is_empty()
            && self.scx.is_empty()
            && !self.cgroups.any())
    }

    /// The spec these flags describe: the file (or quick experiment) with the flags applied over it.
    pub fn to_spec(&self) -> Result<Spec, SpecError> {
        let mut spec = self.base_spec()?;
        self.apply_workloads(&mut spec.axes);
        self.comm.apply(&mut spec)?;
        self.apply_axes(&mut spec.axes)?;
        self.apply_adaptive(&mut spec.settings);
        self.claim.apply(&mut spec)?;
        self.apply_settings(&mut spec.settings);
        Ok(spec)
    }

    /// The spec file, the quick experiment, or (axis flags without a file) the quick
    /// experiment's settings with no axes yet.
    fn base_spec(&self) -> Result<Spec, SpecError> {
        let mut spec = match &self.spec {
            Some(path) => {
                let text = schedlab_spec::locate::read_spec_file(path)?;
                schedlab_spec::locate::parse_spec_file(path, &text)?
            }
            None if self.has_axis_flags() => Spec {
                name: "cli".into(),
                ..Spec::default_quick()
            },
            None => Spec::default_quick(),
        };
        if self.spec.is_none() && self.has_axis_flags() {
            // Flags describe the experiment from scratch, with the default settings (3 trials
            // of 50 ms tasks) and without the quick experiment's claims, which name its cells.
            spec.axes = schedlab_spec::Axes::default();
            spec.settings = schedlab_spec::Settings::default();
            spec.claims.clear();
            spec.description = "experiment from command-line flags".into();
        }
        Ok(spec)
    }

    /// The workload flags: the workloads, and what each of them does.
    fn apply_workloads(&self, a: &mut schedlab_spec::Axes) {
        if !self.policies.is_empty() {
            a.policies = self.policies.clone();
        }
        if !self.priorities.is_empty() {
            a.priorities = self.priorities.clone();
        }
        if !self.workloads.is_empty() {
            a.workloads = self
                .workloads
                .iter()
                .map(|&kind| WorkloadSpec {
                    kind,
                    ..WorkloadSpec::default()
                })
                .collect();
        }
        for w in &mut a.workloads {
            w.split |= self.split;
            w.period = self.period.clone().or(w.period.take());
            w.run = self.run.clone().or(w.run.take());
            if let Some(k) = self.cpu_kernel {
                w.cpu_kernel = k;
            }
            if let Some(m) = self.io_mode {
                w.io_mode = m;
            }
            w.io_block = self.io_block.or(w.io_block);
            w.io_bytes = self.io_bytes.or(w.io_bytes);
            w.io_every = self.io_every.or(w.io_every);
            if let Some(n) = self.iterations {
                w.iterations = Some(n);
                w.work = None;
            }
            if let Some(d) = &self.work {
                w.work = Some(d.clone());
                w.iterations = None;
            }
        }
    }

    /// The other axes' flags: tasks, kinds, starts, CPUs, antagonists, I/O schedulers, slices,
    /// BPF schedulers, knobs and cgroups.
    fn apply_axes(&self, a: &mut schedlab_spec::Axes) -> Result<(), SpecError> {
        if !self.tasks.is_empty() {
            a.tasks = self.tasks.clone();
        }
        if !self.kind.is_empty() {
            a.kind = self.kind.clone();
        }
        if !self.start.is_empty() {
            a.start = self.start.clone();
        }
        if let Some(c) = &self.cpus {
            a.cpus = vec![c.clone()];
        }
        if !self.antagonists.is_empty() {
            a.antagonists = self.antagonists.clone();
        }
        if !self.io_schedulers.is_empty() {
            a.io_schedulers = self.io_schedulers.clone();
        }
        if !self.slices.is_empty() {
            a.slices = self.slices.clone();
        }
        if !self.scx.is_empty() {
            a.scx = self
                .scx
                .iter()
                .cloned()
                .map(schedlab_spec::ScxSpec::Command)
                .collect();
        }
        if !self.knobs.is_empty() {
            let knobs = self
                .knobs
                .iter()
                .map(|k| schedlab_spec::KnobAxis::from_flag(k));
            a.knobs = knobs.collect::<Result<_, _>>()?;
        }
        self.cgroups.apply(a)
    }

    /// The trial counts and the adaptive run's flags.
    fn apply_adaptive(&self, s: &mut schedlab_spec::Settings) {
        s.trials = self.trials.unwrap_or(s.trials);
        s.warmup = self.warmup.unwrap_or(s.warmup);
        s.retries = self.retries.or(s.retries);
        s.precision = self.precision.clone().or(s.precision.take());
        s.min_trials = self.min_trials.or(s.min_trials);
        s.max_trials = self.max_trials.or(s.max_trials);
        s.max_time = self.max_time.clone().or(s.max_time.take());
        s.precision_metric = self.precision_metric.clone().or(s.precision_metric.take());
    }

    /// The settings' flags.
    fn apply_settings(&self, s: &mut schedlab_spec::Settings) {
        if let Some(w) = &self.work {
            s.work = w.clone();
        }
        s.timeout = self.timeout.clone().or(s.timeout.take());
        s.seed = self.seed.or(s.seed);
        s.nice = self.nice.or(s.nice);
        s.rt_priority = self.rt_priority.or(s.rt_priority);
        s.io_dir = self.io_dir.clone().or(s.io_dir.take());
        if let Some(p) = self.antagonist_policy {
            s.antagonist_policy = p;
        }
        if let Some(w) = self.antagonist_workload {
            s.antagonist_workload = w;
        }
        if let Some(i) = &self.sample_interval {
            s.sample_interval = i.clone();
        }
        s.device = self.device.clone().or(s.device.take());
        s.trace |= self.trace;
        s.allow_knobs.extend(self.allow_knobs.iter().cloned());
        if let Some(v) = &self.dl_runtime {
            s.deadline.runtime = v.clone();
        }
        if let Some(v) = &self.dl_deadline {
            s.deadline.deadline = v.clone();
        }
        if let Some(v) = &self.dl_period {
            s.deadline.period = v.clone();
        }
    }
}
