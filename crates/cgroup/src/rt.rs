//! cgroup v1 real-time budgets (CONFIG_RT_GROUP_SCHED): a new cpu group gets
//! `cpu.rt_runtime_us` = 0, and a FIFO/RR task can then neither be set in it nor moved into
//! it (EPERM). The layer gives its groups a budget when the trial has FIFO/RR tasks: its
//! `schedlab-PID-START` parent takes all the root's RT time that other groups leave free, the
//! trial directory all of the parent's, and the trial's groups with FIFO/RR tasks an equal
//! share each. DEADLINE tasks need none (since Linux 6.11 `rt_task()` excludes them).
//!
//! The kernel's rule (`tg_rt_schedulable()`, kernel/sched/rt.c): with
//! `to_ratio(period, runtime) = (runtime << 20) / period` (integer division; `BW_UNIT` = 2^20
//! for an unlimited runtime), the children's ratios may sum to at most their parent's. The
//! arithmetic here replicates it so that every budget written is accepted.

use crate::error::{Error, IoAction, ParseProblem};
use crate::fs::CgroupFs;
use serde::Serialize;
use std::path::Path;

/// `BW_SHIFT` of kernel/sched/sched.h.
const BW_SHIFT: u32 = 20;
/// `BW_UNIT`: the ratio of an unlimited runtime.
const BW_UNIT: u64 = 1 << BW_SHIFT;

/// A cpu group's RT bandwidth: `runtime_us` per `period_us` (`-1`: unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RtBandwidth {
    /// `cpu.rt_runtime_us` (-1 for unlimited).
    pub runtime_us: i64,
    /// `cpu.rt_period_us`.
    pub period_us: u64,
}

impl RtBandwidth {
    /// Read `dir`'s `cpu.rt_runtime_us` and `cpu.rt_period_us`.
    pub fn read(fs: &dyn CgroupFs, dir: &Path) -> Result<RtBandwidth, Error> {
        let num = |name: &str| -> Result<i64, Error> {
            let path = dir.join(name);
            let text = fs
                .read(&path)
                .map_err(|e| Error::io(IoAction::Read, &path, e))?;
            text.trim().parse().map_err(|_| Error::Parse {
                file: path.display().to_string(),
                detail: ParseProblem::NotANumber { text },
            })
        };
        let period = num("cpu.rt_period_us")?;
        Ok(RtBandwidth {
            runtime_us: num("cpu.rt_runtime_us")?,
            period_us: u64::try_from(period).unwrap_or(0),
        })
    }

    /// The kernel's `to_ratio()` of this bandwidth.
    pub fn ratio(self) -> u64 {
        if self.runtime_us < 0 {
            BW_UNIT
        } else {
            ((self.runtime_us as u64) << BW_SHIFT)
                .checked_div(self.period_us)
                .unwrap_or(0)
        }
    }
}

/// The largest runtime (µs per `period_us`) a new child of `parent` can get next to
/// `siblings`, or None if nothing is left.
pub fn free_runtime_us(
    parent: RtBandwidth,
    siblings: &[RtBandwidth],
    period_us: u64,
) -> Option<u64> {
    let used: u64 = siblings.iter().map(|s| s.ratio()).sum();
    let free = parent.ratio().checked_sub(used)?;
    // The largest r with (r << 20) / period <= free is ceil((free + 1) * period / 2^20) - 1.
    let bound = ((free as u128 + 1) * period_us as u128).div_ceil(BW_UNIT as u128) - 1;
    let r = bound.min(period_us as u128) as u64;
    (r > 0).then_some(r)
}

/// An equal share of `runtime_us` for each of `n` children (whose ratios then sum to at most
/// the parent's).
pub fn share_us(runtime_us: u64, n: usize) -> u64 {
    if n == 0 {
        0
    } else {
        runtime_us / n as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bw(runtime_us: i64, period_us: u64) -> RtBandwidth {
        RtBandwidth {
            runtime_us,
            period_us,
        }
    }

    #[test]
    fn ratios_as_the_kernel_computes_them() {
        // (950000 << 20) / 1000000 = 996147.2 -> 996147 (hand computation).
        assert_eq!(bw(950_000, 1_000_000).ratio(), 996_147);
        assert_eq!(bw(-1, 1_000_000).ratio(), 1 << 20);
        assert_eq!(bw(0, 1_000_000).ratio(), 0);
    }

    #[test]
    fn free_runtime_is_the_largest_the_kernel_accepts() {
        let root = bw(950_000, 1_000_000);
        // This machine: the root's 950000 µs is free, and the kernel took 950000 for a child
        // (and refused 950000 + 500000 for two).
        assert_eq!(free_runtime_us(root, &[], 1_000_000), Some(950_000));
        let r = free_runtime_us(root, &[bw(300_000, 1_000_000)], 1_000_000).unwrap();
        // The kernel floors each ratio: 300000 µs counts 314572 of 2^20, leaving 681575, and
        // 650001 µs counts 681575 (650001 × 1.048576 = 681575.45), so it still fits.
        assert_eq!(r, 650_001);
        for (r, ok) in [(r, true), (r + 1, false)] {
            let sum = bw(300_000, 1_000_000).ratio() + bw(r as i64, 1_000_000).ratio();
            assert_eq!(sum <= root.ratio(), ok, "{r}");
        }
        assert_eq!(
            free_runtime_us(root, &[bw(950_000, 1_000_000)], 1_000_000),
            None
        );
        assert_eq!(free_runtime_us(root, &[bw(-1, 1_000_000)], 1_000_000), None);
        // An unlimited root leaves a whole period.
        assert_eq!(
            free_runtime_us(bw(-1, 1_000_000), &[], 1_000_000),
            Some(1_000_000)
        );
        // Another period: 950000/1000000 of 100000 µs, rounded down to what fits.
        let r = free_runtime_us(root, &[], 100_000).unwrap();
        assert!(bw(r as i64, 100_000).ratio() <= root.ratio());
        assert!(bw(r as i64 + 1, 100_000).ratio() > root.ratio());
    }

    #[test]
    fn shares_fit_their_parent() {
        for n in 1..=7usize {
            for parent in [950_000u64, 1, 999_999, 333_333] {
                let s = share_us(parent, n);
                let sum: u64 = (0..n).map(|_| bw(s as i64, 1_000_000).ratio()).sum();
                assert!(
                    sum <= bw(parent as i64, 1_000_000).ratio(),
                    "n {n} parent {parent}"
                );
            }
        }
        assert_eq!(share_us(950_000, 2), 475_000);
    }
}
