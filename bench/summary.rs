//! Time to summarise one million values in a thousand cells of 1000 (`schedlab_analyze::
//! summarize`: mean, sd, percentiles, the median's order-statistic interval and the mean's t
//! interval), once a target of a timed unit test (under 3 s), which a slow day on this VM
//! could fail; a benchmark says how long it takes instead.
//!
//! Median of REPS repetitions, each on the same seeded values; also the time of sorting the
//! same cells alone, side by side in the same run (the floor: a summary sorts its values).
//!
//! Run: `cargo bench --bench summary`.

use schedlab_analyze::summarize;
use std::hint::black_box;
use std::time::Instant;

const REPS: usize = 7;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut rng = fastrand::Rng::with_seed(0);
    let cells: Vec<Vec<f64>> = (0..1000)
        .map(|_| (0..1000).map(|_| rng.f64() * 100.0).collect())
        .collect();
    let (mut summary_ms, mut sort_ms) = (Vec::new(), Vec::new());
    for _ in 0..REPS {
        let start = Instant::now();
        let n = cells.iter().filter_map(|c| summarize(c)).count();
        summary_ms.push(start.elapsed().as_secs_f64() * 1e3);
        assert_eq!(black_box(n), 1000);
        let start = Instant::now();
        for c in &cells {
            let mut v = c.clone();
            v.sort_by(f64::total_cmp);
            black_box(v);
        }
        sort_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let (s, f) = (median(summary_ms), median(sort_ms));
    println!(
        "1000 cells x 1000 values: summarize {s:.1} ms, sort alone {f:.1} ms (median of {REPS}); ratio {:.2}",
        s / f
    );
}
