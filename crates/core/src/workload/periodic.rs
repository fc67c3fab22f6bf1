//! Periodic work: sleep until the next absolute period, record the wake-up latency, run busy work.
//!
//! Wake-up latency = actual wake time - intended wake time, every period, both CLOCK_MONOTONIC
//! (the cyclictest definition). Latencies go into a preallocated HDR histogram (2 significant
//! digits: relative error <= 1%) that never allocates while recording.

use super::cpu::{CpuKernel, CpuState};
use hdrhistogram::serialization::Serializer;
use hdrhistogram::Histogram;

/// Highest latency the histogram holds, in nanoseconds (larger values are clamped to it).
pub const MAX_LATENCY_NS: u64 = 60_000_000_000;
/// Significant digits of the histogram: 2 gives a relative error of at most 1%.
pub const SIGFIG: u8 = 2;
/// Bytes reserved per task for the serialised histogram.
pub const HIST_BYTES: usize = 32 * 1024;

/// A new, fully preallocated latency histogram (1 ns .. 60 s).
pub fn new_histogram() -> Histogram<u64> {
    let mut h =
        Histogram::new_with_bounds(1, MAX_LATENCY_NS, SIGFIG).expect("valid histogram bounds");
    h.auto(false);
    h
}

/// Runs `periods` periods of `period_ns`: sleep to the next period boundary, record the
/// wake-up latency, then do `run_units` of `kernel`. Returns the periods completed.
pub fn run(
    cpu: &mut CpuState,
    kernel: CpuKernel,
    run_units: u64,
    period_ns: u64,
    periods: u64,
    hist: &mut Histogram<u64>,
) -> u64 {
    let start = schedlab_sys::now_ns();
    for k in 1..=periods {
        let intended = start + k * period_ns;
        schedlab_sys::sleep_until_ns(intended);
        let late = schedlab_sys::now_ns().saturating_sub(intended);
        // Within bounds by construction (clamped), so this never allocates or fails.
        let _ = hist.record(late.clamp(1, MAX_LATENCY_NS));
        cpu.run(kernel, run_units);
    }
    periods
}

/// Latency percentiles of one histogram, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct LatencySummary {
    /// Number of wake-ups recorded.
    pub count: u64,
    /// Minimum, ns.
    pub min_ns: u64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 90th percentile, ns.
    pub p90_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p999_ns: u64,
    /// Maximum, ns.
    pub max_ns: u64,
}

/// Summarises a histogram (None when empty).
pub fn summarize(h: &Histogram<u64>) -> Option<LatencySummary> {
    if h.is_empty() {
        return None;
    }
    Some(LatencySummary {
        count: h.len(),
        min_ns: h.min(),
        p50_ns: h.value_at_quantile(0.5),
        p90_ns: h.value_at_quantile(0.9),
        p99_ns: h.value_at_quantile(0.99),
        p999_ns: h.value_at_quantile(0.999),
        max_ns: h.max(),
    })
}

/// Serialises a histogram (HdrHistogram V2 format, mergeable).
pub fn serialize(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = hdrhistogram::serialization::V2Serializer::new().serialize(h, &mut out);
    out
}

/// Reads a histogram written by [`serialize`].
pub fn deserialize(bytes: &[u8]) -> Option<Histogram<u64>> {
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut &bytes[..])
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_are_kept_and_latencies_are_recorded_once_per_period() {
        let mut h = new_histogram();
        let mut cpu = CpuState::new(1);
        let t0 = schedlab_sys::now_ns();
        let done = run(&mut cpu, CpuKernel::Spin, 1000, 2_000_000, 10, &mut h);
        let elapsed = schedlab_sys::now_ns() - t0;
        assert_eq!(done, 10);
        assert_eq!(h.len(), 10);
        // Ten 2 ms periods take at least 20 ms: the sleeps are absolute.
        assert!(elapsed >= 20_000_000, "{elapsed}");
        let s = summarize(&h).unwrap();
        assert!(s.min_ns >= 1 && s.max_ns < 1_000_000_000, "{s:?}");
        assert!(s.p50_ns <= s.p99_ns && s.p99_ns <= s.max_ns);
    }

    #[test]
    fn the_histogram_keeps_relative_error_within_one_percent() {
        let mut h = new_histogram();
        for v in [1_234u64, 56_789, 1_000_000, 7_777_777, 123_456_789] {
            h.clear();
            h.record(v).unwrap();
            let got = h.value_at_quantile(0.5) as f64;
            assert!((got - v as f64).abs() / v as f64 <= 0.01, "{v} -> {got}");
        }
    }

    #[test]
    fn serialised_histograms_round_trip_and_merge() {
        let mut a = new_histogram();
        let mut b = new_histogram();
        for v in 1..=100u64 {
            a.record(v * 1000).unwrap();
            b.record(v * 2000).unwrap();
        }
        let bytes = serialize(&a);
        assert!(bytes.len() < HIST_BYTES);
        let mut back = deserialize(&bytes).unwrap();
        assert_eq!(back.len(), 100);
        assert_eq!(back.max(), a.max());
        back.add(&b).unwrap();
        assert_eq!(back.len(), 200);
        assert!(deserialize(b"garbage").is_none());
    }
}
