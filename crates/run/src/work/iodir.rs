//! Where a queued run's trial files go on a worker. A queued run's `settings.io_dir` names a
//! directory on the submitter's say; as root, writing there would let anyone with database
//! access make the worker create (and remove) files anywhere. So a run whose trials write
//! files runs only if its io_dir, with every link resolved once at admission, is the worker's
//! `--io-dir` or a directory inside it, and only if no other user can change the way there:
//! every directory below the worker's `--io-dir` down to it is owned by root (or the worker's
//! user) and lies in a directory others may not write (unless sticky, which keeps them from
//! moving it). Its identity is kept from admission, and a trial finds it the same or is not
//! run. A run that writes no file runs with the worker's `--io-dir`.

use schedlab_spec::plan::Plan;
use std::path::{Path, PathBuf};

/// A queued run's I/O directory on this worker, as admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoDir {
    /// Its path, every link resolved at admission.
    pub path: PathBuf,
    /// Its device and inode then (None: the run writes no file).
    pub id: Option<schedlab_sys::dir::DirId>,
}

impl IoDir {
    /// Why a trial may not use the directory any more: it is not the one admitted.
    pub fn moved(&self) -> Option<String> {
        let id = self.id?;
        match schedlab_sys::lstat(&self.path) {
            Ok(m) if m.is_dir() && m.id == id => None,
            _ => Some(format!(
                "the I/O directory {} is no longer the directory this worker admitted the run with (moved or replaced); the trial is not run",
                self.path.display()
            )),
        }
    }
}

/// `uid 65534 (nobody)`.
fn who(uid: u32) -> String {
    match schedlab_sys::user_name(uid) {
        Some(n) => format!("uid {uid} ({n})"),
        None => format!("uid {uid}"),
    }
}

/// Why the way from a worker's `--io-dir` to a run's directory could be changed by others.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WayOpen {
    /// A directory on the way could not be checked.
    #[error("{} cannot be checked", path.display())]
    Unchecked {
        /// The directory.
        path: PathBuf,
    },
    /// Something on the way that is no directory.
    #[error("{} is not a directory", path.display())]
    NotDir {
        /// What is there.
        path: PathBuf,
    },
    /// A directory of another user than root or the worker's.
    #[error("{} is owned by {}", path.display(), who(*uid))]
    Owner {
        /// The directory.
        path: PathBuf,
        /// Its owner.
        uid: u32,
    },
    /// A directory in a parent others may write (not sticky).
    #[error("{} lies in {}, which others may write (mode {mode:04o}, not sticky)", path.display(), parent.display())]
    OpenParent {
        /// The directory.
        path: PathBuf,
        /// Its parent.
        parent: PathBuf,
        /// The parent's mode bits.
        mode: u32,
    },
}

/// Why a worker refuses the I/O directory of a queued run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IoDirRefusal {
    /// The run's io_dir is not under the worker's `--io-dir`.
    #[error(
        "this worker refuses queued run {run_id}: its trials write files in {}, outside this worker's --io-dir {}; start the worker with --io-dir {} (or a directory holding it) to allow it (a worker writes only where its own flags allow: write access to the database must not let anyone make root create files anywhere)",
        asked.display(),
        base.display(),
        asked.display()
    )]
    Outside {
        /// The queued run.
        run_id: i64,
        /// Its io_dir.
        asked: PathBuf,
        /// The worker's `--io-dir`.
        base: PathBuf,
    },
    /// Another user could change the way to the run's io_dir.
    #[error(
        "this worker refuses queued run {run_id}: its trials write files in {}, and {why}, so another user could move it or put a link in its place while root writes there; give the run an io_dir that only root can change",
        dir.display()
    )]
    WayOpen {
        /// The queued run.
        run_id: i64,
        /// Its io_dir, links resolved.
        dir: PathBuf,
        /// What others could change.
        why: WayOpen,
    },
    /// The io_dir could not be examined.
    #[error("{cause}")]
    Stat {
        /// What failed.
        cause: crate::error::IoCause,
    },
}

/// Why a directory from below `base` down to `dir` (both with links resolved) could be
/// changed by another user, if one could.
fn changeable(base: &Path, dir: &Path) -> Option<WayOpen> {
    let euid = schedlab_sys::euid();
    let mut parent = base.to_path_buf();
    for part in dir.strip_prefix(base).ok()?.components() {
        let cur = parent.join(part);
        let (Ok(m), Ok(p)) = (schedlab_sys::lstat(&cur), schedlab_sys::lstat(&parent)) else {
            return Some(WayOpen::Unchecked { path: cur });
        };
        if !m.is_dir() {
            return Some(WayOpen::NotDir { path: cur });
        }
        if m.uid != 0 && m.uid != euid {
            return Some(WayOpen::Owner {
                path: cur,
                uid: m.uid,
            });
        }
        if p.mode & 0o022 != 0 && p.mode & 0o1000 == 0 {
            return Some(WayOpen::OpenParent {
                path: cur,
                parent,
                mode: p.mode,
            });
        }
        parent = cur;
    }
    None
}

/// The I/O directory run `run_id` (of `plan`) uses on this worker, whose `--io-dir` is
/// `base`: its own io_dir when its trials write files, it lies within `base` and no other
/// user can change the way there; `base` when they write none; else why the run is refused.
pub fn choose(base: &Path, run_id: i64, plan: &Plan) -> Result<IoDir, IoDirRefusal> {
    if !plan.cells.iter().any(super::super::one::needs_trial_dir) {
        return Ok(IoDir {
            path: base.to_path_buf(),
            id: None,
        });
    }
    let asked = &plan.settings.io_dir;
    let outside = || IoDirRefusal::Outside {
        run_id,
        asked: asked.clone(),
        base: base.to_path_buf(),
    };
    let (Ok(real), Ok(root)) = (asked.canonicalize(), base.canonicalize()) else {
        return Err(outside());
    };
    if !real.starts_with(&root) {
        return Err(outside());
    }
    if let Some(why) = changeable(&root, &real) {
        return Err(IoDirRefusal::WayOpen {
            run_id,
            dir: real,
            why,
        });
    }
    let id = schedlab_sys::lstat(&real)
        .map_err(|e| IoDirRefusal::Stat { cause: e.into() })?
        .id;
    Ok(IoDir {
        path: real,
        id: Some(id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(kind: &str, dir: &Path) -> Plan {
        schedlab_spec::plan::build_from_text(
            "q.toml",
            &format!(
                "name = \"q\"\n[axes]\nworkloads = [{{ kind = \"{kind}\" }}]\n[settings]\nio_dir = \"{}\"\n",
                dir.display()
            ),
            1,
        )
        .unwrap()
        .1
    }

    #[test]
    fn files_go_only_under_the_workers_io_dir() {
        let t = tempfile::tempdir().unwrap();
        let t = t.path().canonicalize().unwrap();
        let base = t.join("io");
        let inner = base.join("ssd");
        let outside = t.join("elsewhere");
        for d in [&inner, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(&outside, base.join("link")).unwrap();
        std::os::unix::fs::symlink(&inner, base.join("to-inner")).unwrap();
        let path = |kind: &str, dir: &Path| choose(&base, 1, &plan(kind, dir)).map(|d| d.path);
        assert_eq!(path("io", &base), Ok(base.clone()));
        assert_eq!(path("io", &inner), Ok(inner.clone()));
        // Links are resolved once, at admission.
        assert_eq!(path("io", &base.join("to-inner")), Ok(inner.clone()));
        let why = choose(&base, 3, &plan("io", &outside)).unwrap_err();
        assert!(
            matches!(&why, IoDirRefusal::Outside { run_id: 3, .. }),
            "{why}"
        );
        let why = why.to_string();
        assert!(
            why.contains("run 3") && why.contains(&format!("--io-dir {}", outside.display())),
            "{why}"
        );
        // Inside by name only: the link leads out.
        assert!(path("io", &base.join("link")).is_err());
        assert!(path("mixed", &base.join("../elsewhere")).is_err());
        assert!(path("io", &base.join("missing")).is_err());
        // A run that writes no file runs in the worker's directory, whatever it named.
        assert_eq!(path("cpu", &outside), Ok(base.clone()));
        assert!(choose(Path::new(""), 1, &plan("io", &base)).is_err());
        // The directory kept from admission: moved away and replaced, it is not used.
        let d = choose(&base, 1, &plan("io", &inner)).unwrap();
        assert_eq!(d.moved(), None);
        std::fs::rename(&inner, base.join("old")).unwrap();
        std::fs::create_dir(&inner).unwrap();
        assert!(d.moved().unwrap().contains("no longer"));
    }

    #[test]
    fn a_way_others_can_change_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let open = base.join("open");
        let inner = open.join("ssd");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let why = choose(&base, 1, &plan("io", &inner)).unwrap_err();
        assert!(
            matches!(&why, IoDirRefusal::WayOpen { why: WayOpen::OpenParent { mode, .. }, .. } if mode & 0o777 == 0o777),
            "{why}"
        );
        assert!(
            why.to_string().contains("others may write (mode 0777"),
            "{why}"
        );
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(choose(&base, 1, &plan("io", &inner)).is_ok(), "sticky");
    }
}
