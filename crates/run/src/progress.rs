//! Progress of a run: a bar with ETA on a terminal, one line per trial otherwise, nothing with --quiet.

use indicatif::{ProgressBar, ProgressStyle};
use schedlab_core::records::{TrialOutcome, TrialStatus};
use std::io::IsTerminal;

/// Reports trials as they end.
pub struct Progress {
    bar: Option<ProgressBar>,
    total: std::cell::Cell<usize>,
    quiet: bool,
}

impl Progress {
    /// A reporter for `total` trials.
    pub fn new(total: usize, quiet: bool) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} trials, {elapsed} elapsed, ETA {eta} {msg}",
                )
                .expect("valid template"),
            );
            b
        });
        Progress {
            bar,
            total: std::cell::Cell::new(total),
            quiet,
        }
    }

    /// Changes the total (an adaptive run adds rounds as it goes).
    pub fn set_total(&self, total: usize) {
        if self.total.replace(total) != total {
            if let Some(b) = &self.bar {
                b.set_length(total as u64);
            }
        }
    }

    /// A transient note (e.g. calibrating).
    pub fn note(&self, msg: &str) {
        match &self.bar {
            Some(b) => b.set_message(msg.to_string()),
            None if !self.quiet => say_err!("{msg}"),
            None => {}
        }
    }

    /// Trial `done` of the total ended with `outcome`.
    pub fn trial_done(&self, done: usize, label: &str, warmup: bool, outcome: &TrialOutcome) {
        let what = match (outcome.status, outcome.makespan_ns) {
            (TrialStatus::Ok, Some(m)) => format!("ok, makespan {:.1} ms", m as f64 / 1e6),
            (s, _) => format!("{}: {}", s.name(), outcome.reason.as_deref().unwrap_or("")),
        };
        let w = if warmup { " (warm-up)" } else { "" };
        match &self.bar {
            Some(b) => {
                b.set_position(done as u64);
                b.set_message(format!("{label}{w}: {what}"));
            }
            None if !self.quiet => say_err!("[{done}/{}] {label}{w}: {what}", self.total.get()),
            None => {}
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
