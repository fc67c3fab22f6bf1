//! The report's quality tables as text: the precision an adaptive run reached per cell, the
//! machine's drift over the run, RT throttling (computed in [`crate::model::quality`]).

use crate::model::quality::{drift, Quality, Spread};
use crate::render::fmt::fmt_with_unit;
use crate::render::text_table::Table;

/// "0.98 [0.91, 1.02]": a median and range, or "-".
fn spread(s: Option<Spread>) -> String {
    s.map_or_else(
        || "-".into(),
        |s| format!("{:.2} [{:.2}, {:.2}]", s.median, s.min, s.max),
    )
}

/// Per cell: trials, median, the 95 % CI's half-width and whether the target was met.
pub fn precision_table(q: &Quality) -> Option<Table> {
    let (t, cells) = q.precision.as_ref()?;
    let rows = cells
        .iter()
        .map(|c| {
            vec![
                super::notes::cell_name(&c.label),
                c.trials.to_string(),
                c.median
                    .map_or("-".into(), |m| fmt_with_unit(m, t.adaptive.metric)),
                c.half_width_pct
                    .map_or("unbounded".into(), |h| format!("±{h:.2}%")),
                if c.met { "yes" } else { "no" }.into(),
            ]
        })
        .collect();
    Some(Table {
        title: format!(
            "Precision of the adaptive run: {} per trial, target ±{}% of the median (95% confidence sequence of the median, unbounded below 10 trials), {}..{} trials",
            t.adaptive.metric.label(),
            t.precision * 100.0,
            t.adaptive.min_trials,
            t.adaptive.max_trials
        ),
        header: ["cell", "trials", "median", "95% CI", "met"]
            .map(String::from)
            .to_vec(),
        rows,
    })
}

/// The machine's drift over the run: the reference speed before and after the trials and
/// the steal during them, over consecutive segments of trials in run order.
pub fn drift_table(q: &Quality) -> Option<Table> {
    let segments = drift(q);
    if segments.is_empty() {
        return None;
    }
    let rows = segments
        .iter()
        .map(|s| {
            vec![
                format!("{}-{}", s.first, s.last),
                if s.rounds.0 == s.rounds.1 {
                    s.rounds.0.to_string()
                } else {
                    format!("{}-{}", s.rounds.0, s.rounds.1)
                },
                spread(s.speed_before),
                spread(s.speed_after),
                spread(s.speed_steady),
                s.steal_pct
                    .map_or("-".into(), |(m, max)| format!("{m:.1} (max {max:.1})")),
                s.noisy.to_string(),
            ]
        })
        .collect();
    Some(Table {
        title: "Drift over the run: reference-loop speed just before and after the trials and the run's steady speed (median [min, max]; 1 = as calibrated), steal on their CPUs (%), trials flagged noisy (speed over 10% off the steady speed)".into(),
        header: ["trials", "rounds", "speed before", "speed after", "steady", "steal %", "noisy"]
            .map(String::from)
            .to_vec(),
        rows,
    })
}

/// Per cell with CPU-bound RT tasks: trials judged and trials throttled.
pub fn throttling_table(q: &Quality) -> Option<Table> {
    if !q.throttling.iter().any(|(_, _, hit)| *hit > 0) {
        return None;
    }
    Some(Table {
        title: "RT throttling: trials in which the kernel's RT budget (sched_rt_runtime_us per sched_rt_period_us) stopped the CPU-bound RT tasks; their turnarounds include the throttled time".into(),
        header: ["cell", "trials judged", "throttled"].map(String::from).to_vec(),
        rows: q
            .throttling
            .iter()
            .map(|(l, n, hit)| vec![super::notes::cell_name(l), n.to_string(), hit.to_string()])
            .collect(),
    })
}

/// The quality tables that have data: precision, drift, throttling.
pub fn tables(q: &Quality) -> Vec<Table> {
    [precision_table(q), drift_table(q), throttling_table(q)]
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_store::quality::TrialQuality;

    #[test]
    fn the_drift_table_shows_each_segment_median_range_and_steal() {
        let trials: Vec<TrialQuality> = (0..25)
            .map(|i| TrialQuality {
                trial_id: i,
                round: i / 5,
                speed_before: Some(1.0 - i as f64 / 100.0),
                speed_after: Some(1.0),
                speed_steady: Some(1.3),
                steal_pct: Some(2.0),
                noisy: i == 24,
                ..TrialQuality::default()
            })
            .collect();
        let q = Quality {
            trials,
            ..Quality::default()
        };
        let t = drift_table(&q).unwrap();
        assert_eq!(t.rows.len(), 9, "25 trials in segments of 3");
        assert_eq!(t.rows[0][0], "1-3");
        assert_eq!(t.rows[0][2], "0.99 [0.98, 1.00]");
        assert_eq!(
            t.rows[8],
            [
                "25-25",
                "4",
                "0.76 [0.76, 0.76]",
                "1.00 [1.00, 1.00]",
                "1.30 [1.30, 1.30]",
                "2.0 (max 2.0)",
                "1"
            ]
        );
        assert!(drift_table(&Quality::default()).is_none());
    }
}
