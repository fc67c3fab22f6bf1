//! Trials as the unit of replication: per-task values summarised to one value per trial, so
//! that tests compare trials, not tasks pooled across trials as if they were independent.

use std::collections::BTreeMap;

use serde::Serialize;

use super::summary::{mean, median};

/// A location statistic: how one trial's task values become one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Location {
    /// The median (linear interpolation); robust to a few stalled tasks. The default.
    #[default]
    Median,
    /// The arithmetic mean.
    Mean,
}

impl Location {
    /// The location of `values`; `None` if empty or any value is non-finite.
    pub fn of(self, values: &[f64]) -> Option<f64> {
        if values.iter().any(|x| !x.is_finite()) {
            return None;
        }
        match self {
            Location::Median => median(values),
            Location::Mean => mean(values),
        }
    }

    /// "median" or "mean", for the report's methods section.
    pub fn name(self) -> &'static str {
        match self {
            Location::Median => "median",
            Location::Mean => "mean",
        }
    }
}

/// One value per trial: the `how` (median by default) of each trial's values, in input
/// order. Trials without values are skipped (they have nothing to summarise).
///
/// `None` if any value is non-finite.
pub fn per_trial<I, S>(trials: I, how: Location) -> Option<Vec<f64>>
where
    I: IntoIterator<Item = S>,
    S: AsRef<[f64]>,
{
    let mut out = Vec::new();
    for t in trials {
        let values = t.as_ref();
        if !values.is_empty() {
            out.push(how.of(values)?);
        }
    }
    Some(out)
}

/// Groups `(trial key, value)` pairs (e.g. one per task, keyed by trial id or round) by
/// trial and summarises each trial's values with `how`: one `(key, value)` per trial,
/// ordered by key, ready for [`super::mann_whitney_u`] on the values or for pairing trials
/// by round for a claim (see [`super::Arm`]).
///
/// `None` if any value is non-finite.
pub fn per_trial_by_key<K, I>(values: I, how: Location) -> Option<Vec<(K, f64)>>
where
    K: Ord,
    I: IntoIterator<Item = (K, f64)>,
{
    let mut groups: BTreeMap<K, Vec<f64>> = BTreeMap::new();
    for (k, v) in values {
        groups.entry(k).or_default().push(v);
    }
    groups
        .into_iter()
        .map(|(k, vs)| Some((k, how.of(&vs)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_trial_becomes_its_median_by_default_and_empty_trials_are_skipped() {
        let trials = vec![
            vec![1.0, 9.0, 2.0],
            vec![],
            vec![4.0, 6.0],
            vec![100.0, 1.0, 2.0, 3.0],
        ];
        assert_eq!(
            per_trial(&trials, Location::default()),
            Some(vec![2.0, 5.0, 2.5])
        );
        assert_eq!(
            per_trial(&trials, Location::Mean),
            Some(vec![4.0, 5.0, 26.5])
        );
        assert_eq!(per_trial([vec![1.0, f64::NAN]], Location::Median), None);
    }

    #[test]
    fn task_values_keyed_by_trial_become_one_value_per_trial_in_key_order() {
        // Tasks of trials 7 and 3, interleaved as rows might come from a store.
        let rows = [
            (7, 10.0),
            (3, 1.0),
            (7, 30.0),
            (3, 5.0),
            (7, 20.0),
            (3, 3.0),
        ];
        let got = per_trial_by_key(rows, Location::Median).expect("finite");
        assert_eq!(got, vec![(3, 3.0), (7, 20.0)]);
        let got = per_trial_by_key(rows, Location::Mean).expect("finite");
        assert_eq!(got, vec![(3, 3.0), (7, 20.0)]);
        let skewed = [(1, 1.0), (1, 2.0), (1, 90.0)];
        assert_eq!(
            per_trial_by_key(skewed, Location::Median),
            Some(vec![(1, 2.0)])
        );
        assert_eq!(
            per_trial_by_key(skewed, Location::Mean),
            Some(vec![(1, 31.0)])
        );
        assert_eq!(per_trial_by_key([(1, f64::INFINITY)], Location::Mean), None);
    }

    #[test]
    fn pooling_tasks_overstates_significance_that_trials_do_not_have() {
        // Three trials per policy, 20 tasks each; the trials' levels overlap (0, 2, 4 vs
        // 1, 3, 5) but tasks within a trial are nearly identical. Pooled tasks look
        // highly significant; the trial medians cannot be (3 vs 3 cannot reach 0.05).
        let trial =
            |level: f64| -> Vec<f64> { (0..20).map(|i| level + 0.001 * i as f64).collect() };
        let a: Vec<Vec<f64>> = [0.0, 2.0, 4.0].map(trial).to_vec();
        let b: Vec<Vec<f64>> = [1.0, 3.0, 5.0].map(trial).to_vec();
        let pooled = |t: &[Vec<f64>]| -> Vec<f64> { t.concat() };
        let tasks = super::super::mann_whitney_u(&pooled(&a), &pooled(&b)).expect("u");
        assert!(tasks.p_value < 0.01, "{tasks:?}");
        let (ta, tb) = (
            per_trial(&a, Location::Median).expect("finite"),
            per_trial(&b, Location::Median).expect("finite"),
        );
        let trials = super::super::mann_whitney_u(&ta, &tb).expect("u");
        assert!(trials.p_value > 0.5, "{trials:?}");
    }
}
