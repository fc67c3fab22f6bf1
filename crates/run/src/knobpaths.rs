//! The files a plan's knobs name on this machine: globs expanded and links resolved to the
//! real files, so that two names for one file (`vm.swappiness` and `/proc/sys/vm/swappines*`,
//! or a link under /sys and the file it leads to) are caught, and the deny list is checked on
//! the real file as well as on the name given. A file that makes the kernel run a program,
//! or a value that does (a core_pattern pipe), is refused whatever `--allow-knob` says, and a
//! knob on a file another axis holds (the root cpuset's load balancing a partition switches
//! off) is refused too. `plan`, `run` and `submit` refuse such a plan as bad input; a worker
//! skips its cells with the reason.

use super::knobfile;
use crate::error::{KernelError, Refusal, Unavailable};
use std::path::{Path, PathBuf};

/// One knob of a plan, resolved on this machine.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Its name as the spec gives it.
    pub name: String,
    /// Its path (may hold a `*`).
    pub pattern: String,
    /// Each file it names: the real file under /proc/sys or /sys, or why it is not usable.
    /// Empty when nothing matches here.
    pub files: Vec<Result<PathBuf, Unavailable>>,
    /// Why it may not be used at all: on the deny list and not allowed, or the same file as
    /// another knob.
    pub refused: Option<Refusal>,
}

impl Resolved {
    /// `name (path)`, or the path alone when the name is the path.
    pub fn label(&self) -> String {
        if self.name == self.pattern {
            self.pattern.clone()
        } else {
            format!("{} ({})", self.name, self.pattern)
        }
    }
}

/// Whether `--allow-knob` entry `allow` (a path, from `knob_path`) names `pattern` or `real`.
fn allows(allow: &str, pattern: &str, real: Option<&Path>) -> bool {
    allow == pattern
        || real.is_some_and(|r| {
            Path::new(allow) == r || std::fs::canonicalize(allow).is_ok_and(|a| a == r)
        })
}

/// Why `file` (the real file of knob `pattern`, or the pattern itself when `file` is None) is
/// refused by the deny list, unless `allow` names it (a file that makes the kernel run a
/// program, whatever it names).
fn deny_refusal(pattern: &str, file: Option<&Path>, allow: &[String]) -> Option<Refusal> {
    let checked = file.map_or(pattern.to_string(), |f| f.display().to_string());
    let reason = schedlab_core::records::denied(&checked)?;
    let via = (checked != pattern).then(|| pattern.to_string());
    if schedlab_core::records::runs_program(&checked).is_some() {
        return Some(Refusal::RunsProgram {
            file: checked,
            pattern: via,
            reason,
        });
    }
    if allow.iter().any(|a| allows(a, pattern, file)) {
        return None;
    }
    Some(Refusal::Denied {
        file: checked,
        pattern: via,
        reason,
    })
}

/// Why one of `values` may not be written to `file` (the real file of knob `pattern`),
/// whatever the flags: it makes the kernel run a program.
fn value_refusal(pattern: &str, file: &Path, values: &[String]) -> Option<Refusal> {
    let real = file.display().to_string();
    values.iter().find_map(|v| {
        let reason = schedlab_core::records::program_value(&real, v)?;
        Some(Refusal::ProgramValue {
            pattern: pattern.to_string(),
            value: v.clone(),
            reason,
        })
    })
}

/// One knob of a plan as [`resolve`] takes it: its name, its path (may hold a `*`) and every
/// value the plan gives it.
#[derive(Debug, Clone)]
pub struct Setting {
    /// The name as the spec gives it (`io_scheduler` for the I/O scheduler axis).
    pub name: String,
    /// Its path.
    pub pattern: String,
    /// Every value asked for.
    pub values: Vec<String>,
}

/// A file another axis of the plan holds (not a knob), so no knob may name it: what holds it
/// and the file.
#[derive(Debug, Clone)]
pub struct Held {
    /// What holds it, for the message (e.g. `the partition axis`).
    pub by: String,
    /// The file.
    pub file: PathBuf,
}

/// Resolves each setting on this machine against `roots`, and marks the knobs that are
/// refused: denied (unless in `allow`; never for a file or value that makes the kernel run a
/// program), naming a file an earlier knob names (both are marked, each naming the other), or
/// naming a file in `held`.
pub fn resolve(
    settings: &[Setting],
    allow: &[String],
    held: &[Held],
    roots: &[PathBuf],
) -> Vec<Resolved> {
    let mut out: Vec<Resolved> = Vec::with_capacity(settings.len());
    for Setting {
        name,
        pattern,
        values,
    } in settings
    {
        let files: Vec<Result<PathBuf, Unavailable>> = knobfile::expand(pattern)
            .iter()
            .map(|f| knobfile::check_allowed(f, roots))
            .collect();
        let mut refused = if pattern.contains('*') {
            None
        } else {
            deny_refusal(pattern, None, allow)
        };
        for real in files.iter().flatten() {
            refused = refused
                .or_else(|| value_refusal(pattern, real, values))
                .or_else(|| deny_refusal(pattern, Some(real), allow))
                .or_else(|| held_refusal(name, pattern, real, held));
        }
        let mut me = Resolved {
            name: name.clone(),
            pattern: pattern.clone(),
            files,
            refused,
        };
        let real: Vec<PathBuf> = me.files.iter().flatten().cloned().collect();
        for earlier in out.iter_mut() {
            let Some(shared) = earlier.files.iter().flatten().find(|f| real.contains(f)) else {
                continue;
            };
            let why = Refusal::SameFile {
                first: earlier.label(),
                second: me.label(),
                file: shared.clone(),
            };
            earlier.refused.get_or_insert_with(|| why.clone());
            me.refused.get_or_insert(why);
        }
        out.push(me);
    }
    out
}

/// Why knob `name` (`pattern`, real file `real`) may not be used: another axis holds its file.
fn held_refusal(name: &str, pattern: &str, real: &Path, held: &[Held]) -> Option<Refusal> {
    let h = held
        .iter()
        .find(|h| h.file == real || std::fs::canonicalize(&h.file).is_ok_and(|f| f == real))?;
    let label = if name == pattern {
        pattern.to_string()
    } else {
        format!("{name} ({pattern})")
    };
    Some(Refusal::HeldByAxis {
        label,
        file: real.to_path_buf(),
        by: h.by.clone(),
    })
}

/// The first reason the knobs `settings` cannot be used as a plan (deny list, programs run by
/// the kernel, two names for one file, a file `held` by another axis), checked on this
/// machine's files under /proc/sys and /sys.
pub fn check(settings: &[Setting], allow: &[String], held: &[Held]) -> Result<(), KernelError> {
    match resolve(settings, allow, held, &knobfile::system_roots())
        .into_iter()
        .find_map(|r| r.refused)
    {
        Some(why) => Err(why.into()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(name: &str, pattern: &str) -> Setting {
        Setting {
            name: name.into(),
            pattern: pattern.into(),
            values: vec!["1".into()],
        }
    }

    #[test]
    fn a_knob_on_a_file_another_axis_holds_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::write(root.join("balance"), "1").unwrap();
        let file = root.join("balance").display().to_string();
        let held = [Held {
            by: "the partition axis".into(),
            file: root.join("balance"),
        }];
        let r = resolve(
            &[setting(&file, &file)],
            &[],
            &held,
            std::slice::from_ref(&root),
        );
        let why = r[0].refused.as_ref().unwrap().to_string();
        assert!(why.contains("the partition axis"), "{why}");
        let free = resolve(
            &[setting(&file, &file)],
            &[],
            &[],
            std::slice::from_ref(&root),
        );
        assert_eq!(free[0].refused, None);
    }

    #[test]
    fn two_names_of_one_file_are_both_refused_naming_each_other() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(root.join("vm")).unwrap();
        std::fs::write(root.join("vm/swappiness"), "60").unwrap();
        std::fs::write(root.join("vm/other"), "1").unwrap();
        std::os::unix::fs::symlink(root.join("vm"), root.join("link")).unwrap();
        let p = |s: &str| root.join(s).display().to_string();
        let settings = vec![
            setting("vm.swappiness", &p("vm/swappiness")),
            setting(&p("vm/swappines*"), &p("vm/swappines*")),
            setting(&p("link/swappiness"), &p("link/swappiness")),
            setting(&p("vm/other"), &p("vm/other")),
        ];
        let r = resolve(&settings, &[], &[], std::slice::from_ref(&root));
        let why = r[0].refused.as_ref().unwrap().to_string();
        assert!(
            why.contains(&format!("vm.swappiness ({})", p("vm/swappiness")))
                && why.contains(&p("vm/swappines*"))
                && why.contains("same file"),
            "{why}"
        );
        assert!(r[1].refused.is_some());
        assert!(r[2]
            .refused
            .as_ref()
            .unwrap()
            .to_string()
            .contains(&p("link/swappiness")));
        assert_eq!(r[3].refused, None);
        assert_eq!(r[3].files, [Ok(root.join("vm/other"))]);
    }

    #[test]
    fn the_deny_list_holds_for_the_real_file_unless_allowed() {
        let roots = knobfile::system_roots();
        let core = "/proc/sys/kernel/core_pattern";
        let s = |name: &str, path: &str| vec![setting(name, path)];
        let r = resolve(&s("kernel.core_pattern", core), &[], &[], &roots);
        let why = r[0].refused.as_ref().unwrap().to_string();
        assert!(
            why.contains("--allow-knob /proc/sys/kernel/core_pattern"),
            "{why}"
        );
        let glob = "/proc/sys/kernel/core_patter*";
        let r = resolve(&s(glob, glob), &[], &[], &roots);
        let why = r[0].refused.as_ref().unwrap().to_string();
        assert!(
            why.contains("(/proc/sys/kernel/core_patter* leads to it)"),
            "{why}"
        );
        let allowed = [core.to_string()];
        assert_eq!(
            resolve(&s(glob, glob), &allowed, &[], &roots)[0].refused,
            None
        );
        assert_eq!(
            resolve(&s("x", core), &allowed, &[], &roots)[0].refused,
            None
        );
        assert!(check(&s("vm.swappiness", "/proc/sys/vm/swappiness"), &[], &[]).is_ok());
        // A pipe to a program: refused even when the file is allowed.
        let pipe = vec![Setting {
            values: vec!["core".into(), "|/tmp/x %p".into()],
            ..setting("kernel.core_pattern", core)
        }];
        let why = resolve(&pipe, &allowed, &[], &roots)[0]
            .refused
            .clone()
            .unwrap();
        assert!(
            matches!(&why, Refusal::ProgramValue { value, .. } if value == "|/tmp/x %p"),
            "{why}"
        );
        assert!(why.to_string().contains("no flag allows it"), "{why}");
    }
}
