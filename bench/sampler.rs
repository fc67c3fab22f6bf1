//! CPU cost of the system-wide sampler: percent of one CPU at 100 ms (target < 0.5%) and 10 ms.
//!
//! Each round runs, side by side, a window with the sampler thread and one without it, with
//! the main thread asleep; the process CPU time (RUSAGE_SELF) difference over the wall time is
//! the sampler's cost. Medians over the rounds. Run: `cargo bench --bench sampler`.

use schedlab::run::sampler::Sampler;
use std::time::{Duration, Instant};

const ROUNDS: usize = 5;
const WINDOW: Duration = Duration::from_secs(8);

/// CPU time of this process so far, ns (user + system).
fn process_cpu_ns() -> u64 {
    // SAFETY: zeroed rusage is valid; RUSAGE_SELF with a valid out-pointer.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    ns(ru.ru_utime) + ns(ru.ru_stime)
}

/// (process CPU ns, wall ns, samples) over one window, with a sampler at `interval` or none.
fn window(interval: Option<Duration>) -> (u64, u64, usize) {
    let cpu0 = process_cpu_ns();
    let t0 = Instant::now();
    let sampler = interval.map(|i| Sampler::start(i, false));
    std::thread::sleep(WINDOW);
    let samples = sampler.map_or(0, |s| s.finish().len());
    (
        process_cpu_ns() - cpu0,
        t0.elapsed().as_nanos() as u64,
        samples,
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    println!(
        "sampler cost: {ROUNDS} rounds of {} s windows, with and without the sampler, side by side",
        WINDOW.as_secs()
    );
    println!("| interval | samples/window | CPU with sampler (% of one CPU) | CPU without (%) | sampler cost (% of one CPU) | per sample (us) |");
    println!("|---|---|---|---|---|---|");
    for interval_ms in [100u64, 10] {
        let interval = Duration::from_millis(interval_ms);
        let (mut with, mut without, mut cost, mut per_sample, mut count) =
            (vec![], vec![], vec![], vec![], 0);
        for _ in 0..ROUNDS {
            let (c1, w1, n) = window(Some(interval));
            let (c0, w0, _) = window(None);
            let pct_with = c1 as f64 / w1 as f64 * 100.0;
            let pct_without = c0 as f64 / w0 as f64 * 100.0;
            with.push(pct_with);
            without.push(pct_without);
            cost.push(pct_with - pct_without);
            per_sample
                .push((c1 as f64 - c0 as f64 * w1 as f64 / w0 as f64) / n.max(1) as f64 / 1e3);
            count = n;
        }
        println!(
            "| {interval_ms} ms | {count} | {:.3} | {:.3} | {:.3} | {:.1} |",
            median(with),
            median(without),
            median(cost),
            median(per_sample)
        );
    }
}
