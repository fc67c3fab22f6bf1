//! The end-groups metric (study 003): in how many groups a trial's tasks finish.

/// The groups one trial's tasks finish in: sorted end times split where the gap between
/// consecutive ends exceeds 10 % of the trial's makespan (first release to last end). None
/// without end times.
pub(crate) fn end_groups(trial: &[schedlab_store::query::TaskRow]) -> Option<f64> {
    let mut ends: Vec<i64> = trial.iter().map(|r| r.t_end_ns).collect::<Option<_>>()?;
    let first_release = trial
        .iter()
        .map(|r| r.t_end_ns.zip(r.turnaround_ns).map(|(e, t)| e - t))
        .collect::<Option<Vec<i64>>>()?
        .into_iter()
        .min()?;
    ends.sort_unstable();
    let makespan = (*ends.last()? - first_release).max(1) as f64;
    let gaps = ends
        .windows(2)
        .filter(|w| (w[1] - w[0]) as f64 > 0.1 * makespan)
        .count();
    Some(gaps as f64 + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_store::query::TaskRow;

    fn task(release_ms: i64, end_ms: i64) -> TaskRow {
        TaskRow {
            t_end_ns: Some(end_ms * 1_000_000),
            turnaround_ns: Some((end_ms - release_ms) * 1_000_000),
            ..TaskRow::default()
        }
    }

    #[test]
    fn ends_split_into_groups_at_gaps_above_a_tenth_of_the_makespan() {
        // Six threads on two CPUs run to completion two at a time: ends at 100, 101, 200,
        // 202, 300, 300 ms after a release at 0; gaps of 99 and 98 ms exceed 30 ms.
        let fifo: Vec<TaskRow> = [100, 101, 200, 202, 300, 300].map(|e| task(0, e)).to_vec();
        assert_eq!(end_groups(&fifo), Some(3.0));
        // Shared fairly they all end within 12 ms of each other: one group.
        let fair: Vec<TaskRow> = [290, 292, 295, 296, 300, 302].map(|e| task(0, e)).to_vec();
        assert_eq!(end_groups(&fair), Some(1.0));
        // Staggered releases count from the first: makespan 400, a 39 ms gap is no split.
        let staggered = vec![task(0, 361), task(100, 400)];
        assert_eq!(end_groups(&staggered), Some(1.0));
        assert_eq!(end_groups(&[TaskRow::default()]), None);
    }
}
