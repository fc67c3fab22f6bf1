//! Which scheduling policies this process may use, found by asking the kernel: each policy is
//! tried with `sched_setattr` in a short-lived thread, so the caller's own policy never changes.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{EnvRecord, Privileges};
use schedlab_sys::SchedAttr;

pub use super::slice::{slice_support, SliceError};

/// Whether this process may use one policy, why, and what to do if not.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct PolicyAvailability {
    /// Policy as schedlab spells it: `other`, `batch`, `idle`, `fifo`, `rr` or `deadline`.
    pub policy: String,
    /// The kernel accepted the probe.
    pub allowed: bool,
    /// Name of the refusal's errno (`EPERM`, `EBUSY`, `EINVAL`...).
    pub errno: Option<String>,
    /// Why it is allowed or refused.
    pub reason: String,
    /// What to do about a refusal.
    pub remedy: Option<String>,
    /// For `other` and `batch`: the lowest nice value this process may set (-20 = all).
    pub lowest_nice: Option<i32>,
}

/// Policy names and kernel numbers, in report order.
const POLICIES: [(&str, u32); 7] = [
    ("other", 0),
    ("batch", 3),
    ("idle", 5),
    ("fifo", 1),
    ("rr", 2),
    ("deadline", SCHED_DEADLINE),
    ("ext", SCHED_EXT),
];
/// Kernel number of SCHED_EXT (sched_ext, Linux 6.12+).
const SCHED_EXT: u32 = 7;
/// Kernel number of SCHED_DEADLINE.
const SCHED_DEADLINE: u32 = 6;
/// DEADLINE probe runtime: 1 ms, in nanoseconds.
const DL_RUNTIME_NS: u64 = 1_000_000;
/// DEADLINE probe deadline and period: 100 ms, in nanoseconds.
const DL_PERIOD_NS: u64 = 100_000_000;
/// FIFO/RR probe priority: the lowest, the one RLIMIT_RTPRIO = 1 allows.
const RT_PROBE_PRIORITY: u32 = 1;

const REMEDY_RT: &str =
    "grant CAP_SYS_NICE (run as root, or setcap cap_sys_nice+ep on the binary) or raise \
     RLIMIT_RTPRIO (ulimit -r 99 / rtprio in /etc/security/limits.conf)";
const REMEDY_CAP: &str =
    "grant CAP_SYS_NICE (run as root, or setcap cap_sys_nice+ep on the binary)";

/// How one probe ended: `Ok`, the errno of the refusal, or no thread could be started.
type Outcome = Result<(), Option<i32>>;

/// Applies `policy` with `nice` (`None`: the thread's current nice) and `priority` to a fresh
/// thread, which then exits. Returns the outcome and the nice the thread started with.
fn probe(policy: u32, nice: Option<i32>, priority: u32) -> (Outcome, i32) {
    let spawned = std::thread::Builder::new()
        .name("policy-probe".into())
        .spawn(move || {
            let current_nice = schedlab_sys::sched_getattr().map_or(0, |a| a.nice);
            let mut attr = SchedAttr {
                policy,
                nice: nice.unwrap_or(current_nice),
                priority,
                ..Default::default()
            };
            if policy == SCHED_DEADLINE {
                attr.runtime_ns = DL_RUNTIME_NS;
                attr.deadline_ns = DL_PERIOD_NS;
                attr.period_ns = DL_PERIOD_NS;
            }
            // Applies to this probe thread only.
            let outcome = schedlab_sys::sched_setattr(&attr).map_err(Some);
            (outcome, current_nice)
        });
    match spawned.map(|handle| handle.join()) {
        Ok(Ok(result)) => result,
        _ => (Err(None), 0),
    }
}

/// Symbolic name of an errno (`EPERM`), for messages.
pub(crate) fn errno_name(e: i32) -> String {
    match e {
        libc::EPERM => "EPERM".into(),
        libc::EBUSY => "EBUSY".into(),
        libc::EINVAL => "EINVAL".into(),
        libc::ENOSYS => "ENOSYS".into(),
        libc::EACCES => "EACCES".into(),
        libc::EAGAIN => "EAGAIN".into(),
        _ => format!("errno {e}"),
    }
}

/// Probes every policy on this process; see [`PolicyAvailability`].
pub fn policy_report() -> Vec<PolicyAvailability> {
    let privileges = Privileges::capture();
    let rt_runtime_us = super::read_parsed("/proc/sys/kernel/sched_rt_runtime_us");
    let rt_period_us = super::read_parsed("/proc/sys/kernel/sched_rt_period_us");
    POLICIES
        .iter()
        .map(|&(name, number)| {
            let priority = if matches!(name, "fifo" | "rr") {
                RT_PROBE_PRIORITY
            } else {
                0
            };
            let (outcome, current_nice) = probe(number, None, priority);
            let lowest_nice = matches!(name, "other" | "batch").then(|| {
                if probe(number, Some(-20), 0).0.is_ok() {
                    -20
                } else {
                    current_nice.min(privileges.nice_floor_by_rlimit()).max(-20)
                }
            });
            let (reason, remedy) = if name == "ext" {
                explain_ext(outcome, &super::sched_ext::SchedExt::now())
            } else {
                let (r, m) = explain(name, outcome, &privileges, rt_runtime_us, rt_period_us);
                (r, m.map(str::to_string))
            };
            PolicyAvailability {
                policy: name.to_string(),
                allowed: outcome.is_ok(),
                errno: outcome.err().flatten().map(errno_name),
                reason,
                remedy,
                lowest_nice,
            }
        })
        .collect()
}

/// The reason and remedy of probing SCHED_EXT, given what /sys/kernel/sched_ext says.
fn explain_ext(outcome: Outcome, ext: &super::sched_ext::SchedExt) -> (String, Option<String>) {
    match outcome {
        Ok(()) => (
            match &ext.ops {
                Some(ops) => format!("sched_ext {}: BPF scheduler {ops} is loaded", ext.state),
                None => format!(
                    "sched_ext {}: no BPF scheduler is loaded, so SCHED_EXT tasks run in the fair class until one is (use the scx axis)",
                    ext.state
                ),
            },
            None,
        ),
        Err(Some(libc::EINVAL)) if !ext.present() => (
            "this kernel has no sched_ext class (CONFIG_SCHED_CLASS_EXT off, or Linux before 6.12; /sys/kernel/sched_ext is absent)".into(),
            Some("boot a kernel built with CONFIG_SCHED_CLASS_EXT=y (Linux 6.12+, BPF and BTF) and install a BPF scheduler (the scx packages, e.g. scx_lavd)".into()),
        ),
        Err(Some(e)) => (
            format!("refused with {} (sched_ext {})", errno_name(e), ext.state),
            Some("check dmesg for sched_ext messages".into()),
        ),
        Err(None) => ("could not start a probe thread".into(), None),
    }
}

/// "sched_rt_runtime_us/sched_rt_period_us = 950000/1000000 (95.0% of each CPU)".
fn bandwidth(runtime_us: Option<i64>, period_us: Option<u64>) -> String {
    match (runtime_us, period_us) {
        (Some(-1), _) => "sched_rt_runtime_us = -1 (no limit)".to_string(),
        (Some(r), Some(p)) if p > 0 => format!(
            "sched_rt_runtime_us/sched_rt_period_us = {r}/{p} ({:.1}% of each CPU)",
            r as f64 * 100.0 / p as f64
        ),
        _ => "sched_rt_runtime_us/sched_rt_period_us unreadable".to_string(),
    }
}

/// The reason for `outcome` of probing `policy`, and a remedy when refused.
fn explain(
    policy: &str,
    outcome: Outcome,
    p: &Privileges,
    rt_runtime_us: Option<i64>,
    rt_period_us: Option<u64>,
) -> (String, Option<&'static str>) {
    let asked = Asked {
        rt: matches!(policy, "fifo" | "rr"),
        dl: policy == "deadline",
        privileged: p.is_root || p.cap_sys_nice == Some(true),
        who: if p.is_root {
            "running as root"
        } else {
            "CAP_SYS_NICE"
        },
        rtprio: p
            .rlimit_rtprio
            .map_or("unlimited".to_string(), |n| n.to_string()),
        budget: bandwidth(rt_runtime_us, rt_period_us),
    };
    match outcome {
        Ok(()) => (asked.allowed(), None),
        Err(None) => ("could not start a probe thread".to_string(), None),
        Err(Some(errno)) => match asked.refused(errno, p) {
            Some((reason, remedy)) => (reason, Some(remedy)),
            None => (format!("refused with {}", errno_name(errno)), None),
        },
    }
}

/// What a probed policy asks, and what this process has to grant it.
struct Asked {
    /// A real-time policy (fifo, rr).
    rt: bool,
    /// SCHED_DEADLINE.
    dl: bool,
    /// Root or CAP_SYS_NICE.
    privileged: bool,
    /// Where the privilege comes from, in words.
    who: &'static str,
    /// RLIMIT_RTPRIO, in words.
    rtprio: String,
    /// The RT bandwidth, in words.
    budget: String,
}

impl Asked {
    /// Why the policy was allowed.
    fn allowed(&self) -> String {
        let Asked { who, .. } = self;
        if self.dl {
            format!(
                "{who}; admission accepted 1 ms every 100 ms within {}",
                self.budget
            )
        } else if self.rt && self.privileged {
            who.to_string()
        } else if self.rt {
            format!("RLIMIT_RTPRIO allows priorities up to {}", self.rtprio)
        } else {
            "no privilege needed at the current nice value".to_string()
        }
    }

    /// Why the policy was refused with `errno`, and the remedy; None for an errno without a
    /// known cause.
    fn refused(&self, errno: i32, p: &Privileges) -> Option<(String, &'static str)> {
        const NO_RT_BUDGET: &str = "under CONFIG_RT_GROUP_SCHED the cpu cgroup of this process \
                                    may have no RT runtime (cpu.rt_runtime_us = 0)";
        const DL_AFFINITY: &str = "SCHED_DEADLINE needs a CPU affinity covering its whole root \
                                   domain (no taskset or narrowed cpuset), or ";
        let (rt, dl, who) = (self.rt, self.dl, self.who);
        Some(match errno {
            libc::EPERM if (rt || dl) && self.privileged => (
                format!(
                    "refused despite {who}: {}{NO_RT_BUDGET}",
                    if dl { DL_AFFINITY } else { "" }
                ),
                "run from the root cpu cgroup (or give this cgroup cpu.rt_runtime_us) without a \
                 narrowed CPU affinity",
            ),
            libc::EPERM if dl => (
                "SCHED_DEADLINE needs CAP_SYS_NICE; RLIMIT_RTPRIO does not grant it".to_string(),
                REMEDY_CAP,
            ),
            libc::EPERM if rt => (
                format!("no CAP_SYS_NICE and RLIMIT_RTPRIO is {}", self.rtprio),
                REMEDY_RT,
            ),
            libc::EPERM => (
                format!(
                    "leaving the current policy or nice value needs CAP_SYS_NICE or a higher \
                     RLIMIT_NICE (now {})",
                    p.rlimit_nice
                        .map_or("unlimited".to_string(), |n| n.to_string())
                ),
                "raise RLIMIT_NICE (nice in /etc/security/limits.conf) or grant CAP_SYS_NICE",
            ),
            libc::EBUSY if dl => (
                format!(
                    "admission control refused 1 ms every 100 ms: the DEADLINE bandwidth ({}) \
                     is already reserved by other deadline tasks (and, on Linux 6.12+, the fair \
                     server)",
                    self.budget
                ),
                "stop other SCHED_DEADLINE tasks or raise /proc/sys/kernel/sched_rt_runtime_us \
                 (as root)",
            ),
            libc::EINVAL => (
                "the kernel rejects this policy or its parameters (unknown class: DEADLINE needs \
                 Linux 3.14)"
                    .to_string(),
                "use a newer kernel",
            ),
            libc::ENOSYS => (
                "sched_setattr is unavailable (kernel before 3.14, or blocked by a seccomp filter)"
                    .to_string(),
                "run outside the container or sandbox, or on a newer kernel",
            ),
            _ => return None,
        })
    }
}

/// The text of `schedlab policies`: one line per policy, then privileges and scheduler settings.
pub fn render_policy_report(report: &[PolicyAvailability], env: &EnvRecord) -> String {
    let mut out = String::from(
        "Scheduling policies for this process (probed with sched_setattr in a short-lived \
         thread):\n",
    );
    render_policies(&mut out, report);
    render_privileges(&mut out, &env.privileges);
    render_kernel(&mut out, env);
    render_cgroups(&mut out, env);
    out
}

/// One line per probed policy: allowed or refused, why, and the remedy.
fn render_policies(out: &mut String, report: &[PolicyAvailability]) {
    for p in report {
        let verdict = match (&p.allowed, &p.errno) {
            (true, _) => "allowed".to_string(),
            (false, Some(e)) => format!("REFUSED ({e})"),
            (false, None) => "REFUSED".to_string(),
        };
        let nice = p
            .lowest_nice
            .map_or(String::new(), |n| format!("; nice down to {n}"));
        let _ = writeln!(out, "  {:<9} {verdict:<16} {}{nice}", p.policy, p.reason);
        if let Some(remedy) = &p.remedy {
            let _ = writeln!(out, "  {:<9} {:<16} remedy: {remedy}", "", "");
        }
    }
}

/// `yes` or `no` for a flag, "unknown" when it could not be read.
fn yes_no(v: Option<bool>, yes: &str, no: &str) -> String {
    v.map_or("unknown", |b| if b { yes } else { no })
        .to_string()
}

/// The privileges and limits that decide what this process may set.
fn render_privileges(out: &mut String, pr: &Privileges) {
    let limit = |v: Option<u64>| v.map_or("unlimited".to_string(), |n| n.to_string());
    let floor = match pr.nice_floor_by_rlimit() {
        20 => "nice cannot be lowered".to_string(),
        n => format!("nice down to {n}"),
    };
    let _ = writeln!(
        out,
        "Privileges: uid {}{}; CAP_SYS_NICE {}; RLIMIT_RTPRIO {}; RLIMIT_NICE {} ({floor} without \
         CAP_SYS_NICE); RLIMIT_RTTIME {}",
        pr.euid,
        if pr.is_root { " (root)" } else { "" },
        yes_no(pr.cap_sys_nice, "yes", "no"),
        limit(pr.rlimit_rtprio),
        limit(pr.rlimit_nice),
        pr.rlimit_rttime_us
            .map_or("unlimited".to_string(), |us| format!("{us} us")),
    );
}

/// The kernel's scheduling settings: RT throttling, the RR timeslice, autogroup, sched_ext and
/// the fair server.
fn render_kernel(out: &mut String, env: &EnvRecord) {
    let _ = writeln!(
        out,
        "RT throttling: {}",
        bandwidth(env.rt_runtime_us, env.rt_period_us)
    );
    let timeslice = env.rr_timeslice_ms.map(|t| format!("{t} ms"));
    let _ = writeln!(
        out,
        "RR timeslice: {}",
        timeslice.as_deref().unwrap_or("unknown")
    );
    let _ = writeln!(
        out,
        "Autogroup: {}",
        yes_no(env.autogroup_enabled, "enabled", "disabled")
    );
    let ops = env
        .sched_ext_ops
        .as_ref()
        .map_or(String::new(), |o| format!(" ({o})"));
    let _ = writeln!(out, "sched_ext: {}{ops}", env.sched_ext_state);
    if let Some(servers) = &env.fair_server {
        let show =
            |v: Option<u64>| v.map_or("?".to_string(), |ns| format!("{:.1}", ns as f64 / 1e6));
        let cpus: Vec<String> = servers
            .iter()
            .map(|s| {
                format!(
                    "cpu{} {}/{} ms",
                    s.cpu,
                    show(s.runtime_ns),
                    show(s.period_ns)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "Fair server (DEADLINE reservation for fair tasks): {}",
            cpus.join(", ")
        );
    }
}

/// The CPU cgroup controllers of the environment record, one line each.
fn render_cgroups(out: &mut String, env: &EnvRecord) {
    if env.cgroups.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "CPU cgroups (task groups, --cpu-weight/--cpu-max/--cpu-idle/--cpuset/--partition):"
    );
    for line in &env.cgroups {
        let _ = writeln!(out, "  {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(rtprio: u64) -> Privileges {
        Privileges {
            euid: 1000,
            cap_sys_nice: Some(false),
            rlimit_rtprio: Some(rtprio),
            rlimit_nice: Some(0),
            ..Privileges::default()
        }
    }

    #[test]
    fn unprivileged_rt_refusal_names_rtprio_and_both_remedies() {
        let (reason, remedy) = explain(
            "fifo",
            Err(Some(libc::EPERM)),
            &user(0),
            Some(950_000),
            Some(1_000_000),
        );
        assert_eq!(reason, "no CAP_SYS_NICE and RLIMIT_RTPRIO is 0");
        let remedy = remedy.unwrap();
        assert!(
            remedy.contains("setcap cap_sys_nice+ep") && remedy.contains("ulimit -r 99"),
            "{remedy}"
        );
    }

    #[test]
    fn rt_allowed_by_rlimit_and_deadline_refusals_say_why() {
        let (reason, remedy) = explain("rr", Ok(()), &user(10), None, None);
        assert_eq!(
            (reason.as_str(), remedy),
            ("RLIMIT_RTPRIO allows priorities up to 10", None)
        );
        let (reason, _) = explain("deadline", Err(Some(libc::EPERM)), &user(99), None, None);
        assert!(
            reason.contains("RLIMIT_RTPRIO does not grant it"),
            "{reason}"
        );
        let root = Privileges {
            is_root: true,
            ..user(0)
        };
        let (reason, remedy) = explain(
            "deadline",
            Err(Some(libc::EBUSY)),
            &root,
            Some(950_000),
            Some(1_000_000),
        );
        assert!(
            reason.contains("950000/1000000 (95.0% of each CPU)"),
            "{reason}"
        );
        assert!(remedy.unwrap().contains("sched_rt_runtime_us"));
        let (reason, _) = explain("deadline", Err(Some(libc::EPERM)), &root, None, None);
        assert!(
            reason.contains("running as root") && reason.contains("affinity"),
            "{reason}"
        );
        let (reason, _) = explain("deadline", Ok(()), &root, Some(-1), Some(1_000_000));
        assert!(reason.contains("no limit"), "{reason}");
    }

    #[test]
    fn rendering_lists_every_policy_then_privileges_and_scheduler_settings() {
        let report = vec![
            PolicyAvailability {
                policy: "other".into(),
                allowed: true,
                errno: None,
                reason: "no privilege needed at the current nice value".into(),
                remedy: None,
                lowest_nice: Some(0),
            },
            PolicyAvailability {
                policy: "fifo".into(),
                allowed: false,
                errno: Some("EPERM".into()),
                reason: "no CAP_SYS_NICE and RLIMIT_RTPRIO is 0".into(),
                remedy: Some(REMEDY_RT.into()),
                lowest_nice: None,
            },
        ];
        let env = EnvRecord {
            privileges: user(0),
            rt_runtime_us: Some(950_000),
            rt_period_us: Some(1_000_000),
            rr_timeslice_ms: Some(100),
            autogroup_enabled: Some(false),
            sched_ext_state: "absent".into(),
            fair_server: Some(vec![super::super::FairServerCpu {
                cpu: 0,
                runtime_ns: Some(50_000_000),
                period_ns: Some(1_000_000_000),
            }]),
            ..EnvRecord::default()
        };
        let text = render_policy_report(&report, &env);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("  other     allowed "), "{text}");
        assert!(lines[1].ends_with("; nice down to 0"), "{text}");
        assert!(
            lines[2].starts_with("  fifo      REFUSED (EPERM)")
                && lines[2].contains("RLIMIT_RTPRIO is 0"),
            "{text}"
        );
        assert!(
            lines[3]
                .trim_start()
                .starts_with("remedy: grant CAP_SYS_NICE"),
            "{text}"
        );
        assert!(
            text.contains(
                "uid 1000; CAP_SYS_NICE no; RLIMIT_RTPRIO 0; RLIMIT_NICE 0 (nice cannot be lowered without"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "RT throttling: sched_rt_runtime_us/sched_rt_period_us = 950000/1000000 (95.0%"
            ),
            "{text}"
        );
        assert!(
            text.contains("RR timeslice: 100 ms\nAutogroup: disabled\nsched_ext: absent\n"),
            "{text}"
        );
        assert!(text.contains("cpu0 50.0/1000.0 ms"), "{text}");
    }

    #[test]
    fn probing_this_process_covers_seven_policies_and_allows_other() {
        let before = schedlab_sys::sched_getattr().map(|a| a.policy);
        let report = policy_report();
        let names: Vec<&str> = report.iter().map(|p| p.policy.as_str()).collect();
        assert_eq!(
            names,
            ["other", "batch", "idle", "fifo", "rr", "deadline", "ext"]
        );
        // SCHED_EXT is allowed exactly when the kernel has sched_ext.
        let ext = super::super::sched_ext::SchedExt::now();
        assert_eq!(report[6].allowed, ext.present(), "{:?}", report[6]);
        if !ext.present() {
            assert!(
                report[6].reason.contains("no sched_ext")
                    && report[6]
                        .remedy
                        .as_deref()
                        .unwrap()
                        .contains("CONFIG_SCHED_CLASS_EXT=y"),
                "{:?}",
                report[6]
            );
        }
        assert!(report[0].allowed, "{report:?}");
        assert!(report
            .iter()
            .all(|p| p.allowed || p.remedy.is_some() || p.errno.is_some()));
        // The probes ran in other threads: this one keeps its policy.
        assert_eq!(schedlab_sys::sched_getattr().map(|a| a.policy), before);
    }
}
