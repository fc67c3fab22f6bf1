//! Why the cgroup layer refuses a value ([`crate::Error::InvalidValue`]): each reason with
//! the values its sentence names; Display builds the sentence.

use crate::value::{CpuList, CONTROL_FILES, WEIGHT_DEFAULT, WEIGHT_MAX, WEIGHT_MIN};
use std::path::PathBuf;

/// Why a value is refused, and what would be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    /// A weight outside the kernel's range.
    #[error("a cgroup CPU weight is {WEIGHT_MIN}..={WEIGHT_MAX} (default {WEIGHT_DEFAULT})")]
    WeightRange,
    /// A weight that is no whole number.
    #[error("a weight is a whole number 1..=10000")]
    WeightNotNumber,
    /// A cpu.max period outside the kernel's range.
    #[error("the period must be 1ms..=1s")]
    PeriodRange,
    /// A cpu.max quota below the kernel's least.
    #[error("the quota must be at least 1ms")]
    QuotaTooSmall,
    /// A cpu.max value that is neither `QUOTA/PERIOD` nor `max`.
    #[error("write QUOTA/PERIOD with units (e.g. 20ms/100ms) or max")]
    CpuMaxSyntax,
    /// A cpu.idle value that is neither 0 nor 1.
    #[error("cpu.idle is 0 or 1")]
    IdleValue,
    /// A CPU list that cannot be read; `separator` joins its items.
    #[error("{fault}; write CPUs as 0-3{separator}5")]
    CpuList {
        /// What is wrong in it.
        fault: CpuListFault,
        /// The separator of its items (`,` in the kernel's files, `+` in the flags).
        separator: char,
    },
    /// A cpuset without CPUs.
    #[error("a cpuset needs at least one CPU")]
    EmptyCpuset,
    /// A duration without a unit.
    #[error("write a number with a unit: 500us, 20ms, 0.5s")]
    DurationSyntax,
    /// A duration that is not a whole number of microseconds.
    #[error("a duration is a whole number of microseconds")]
    DurationFraction,
    /// A group name that is one of the cgroup control files.
    #[error(
        "{name} is a cgroup control file, so no group directory can have that name; choose another (not {})",
        CONTROL_FILES.join(", ")
    )]
    ControlFileName {
        /// The name.
        name: String,
    },
    /// A group name outside the names' syntax.
    #[error("a name is 1 to 32 of a-z, 0-9, _ and -, starting with a letter or digit")]
    NameSyntax,
    /// A flag without values.
    #[error("give at least one value")]
    NoValues,
    /// An empty value among a flag's.
    #[error("an empty value (use - for the default)")]
    EmptyValue,
    /// A flag with neither one value nor one per group.
    #[error("give one value for all groups or one per group ({groups}), separated by :")]
    ValueCount {
        /// The groups of the cell.
        groups: usize,
    },
    /// `--partition` without `--cpuset`.
    #[error("a partition needs the group's CPUs: give --cpuset")]
    PartitionFlagWithoutCpus,
    /// A trial without groups.
    #[error("a trial needs at least one group")]
    NoGroups,
    /// A group name given twice.
    #[error("two groups have this name")]
    DuplicateName,
    /// An idle group given a weight.
    #[error(
        "group {group} is idle: an idle group has the lowest weight and the kernel refuses a weight for it; drop one of the two"
    )]
    IdleWithWeight {
        /// The group.
        group: String,
    },
    /// A group's CPUs outside the usable ones.
    #[error("group {group}: the CPUs must be among the usable CPUs {online}")]
    CpusNotUsable {
        /// The group.
        group: String,
        /// The usable CPUs.
        online: CpuList,
    },
    /// A partition group without CPUs.
    #[error("a partition needs the group's CPUs (--cpuset)")]
    PartitionWithoutCpus,
    /// Partitions that would take every usable CPU.
    #[error(
        "partitions may not take every CPU ({online}): leave at least one to the rest of the system"
    )]
    PartitionTakesAll {
        /// The usable CPUs.
        online: CpuList,
    },
    /// Two groups sharing CPUs where one is a partition.
    #[error("groups {a} and {b} share CPUs {shared}, but a partition's CPUs are its own")]
    PartitionShared {
        /// The first group.
        a: String,
        /// The second group.
        b: String,
        /// The CPUs they share.
        shared: CpuList,
    },
    /// A root setting a partition needs that no longer holds while the trial runs.
    #[error("{} must be {value} while the trial runs ({why})", path.display())]
    RootSettingLost {
        /// The file.
        path: PathBuf,
        /// The value the trial needs.
        value: String,
        /// Why it needs it (the root setting's own reason).
        why: String,
    },
    /// A trial the session was not opened for.
    #[error(
        "the session was opened without {lacking}; open it with Needs::of(every trial of the run)"
    )]
    SessionLacks {
        /// What the session lacks.
        lacking: &'static str,
    },
    /// A group index past the trial's groups.
    #[error("the trial has {groups} groups")]
    NoSuchGroup {
        /// The trial's groups.
        groups: usize,
    },
    /// A process placed with `add` in a trial of threaded groups.
    #[error(
        "this trial's v2 groups are threaded: place the host with add_host and each thread with add_thread"
    )]
    ThreadedTrial,
    /// A thread placed in a group outside a thread trial on v2.
    #[error("on cgroup v2 a thread can join a group only in a thread trial (threaded groups)")]
    ThreadOutsideThreadTrial,
}

/// What is wrong in a CPU list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListFault {
    /// An item that is no CPU number (or one past the limit).
    #[error("{0:?} is not a CPU number")]
    NotCpu(String),
    /// A range from a higher CPU to a lower one.
    #[error("range {from}-{to} runs backwards")]
    Backwards {
        /// Its first CPU.
        from: u32,
        /// Its last CPU.
        to: u32,
    },
}

#[cfg(test)]
mod tests {
    use crate::{CpuList, CpuListFault, Error, Invalid, Name, Weight};

    /// The reason of an invalid value, or a panic naming what came instead.
    fn why(e: Error) -> Invalid {
        match e {
            Error::InvalidValue { why, .. } => why,
            e => panic!("not an invalid value: {e}"),
        }
    }

    #[test]
    fn reasons_are_values_and_the_sentences_stay_as_they_were() {
        let e = Weight::new(0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"0\" is not a valid cpu weight: a cgroup CPU weight is 1..=10000 (default 100)"
        );
        assert_eq!(why(e), Invalid::WeightRange);
        let e = CpuList::parse_with("3-1", '+').unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"3-1\" is not a valid CPU list: range 3-1 runs backwards; write CPUs as 0-3+5"
        );
        assert_eq!(
            why(e),
            Invalid::CpuList {
                fault: CpuListFault::Backwards { from: 3, to: 1 },
                separator: '+',
            }
        );
        let e = CpuList::parse("0,x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"0,x\" is not a valid CPU list: \"x\" is not a CPU number; write CPUs as 0-3,5"
        );
        let e = Name::new("tasks").unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"tasks\" is not a valid group name: tasks is a cgroup control file, so no group directory can have that name; choose another (not tasks, notify_on_release, release_agent)"
        );
        assert_eq!(
            why(e),
            Invalid::ControlFileName {
                name: "tasks".into()
            }
        );
    }
}
