//! What the real-cgroup tests share: the skip reason, child processes that are killed when
//! dropped, the root cpuset setting a v1 partition needs (restored when dropped), and specs.

use crate::child::CHILD_ENV;
use schedlab_cgroup::*;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a test did not run, or did not check all it checks.
pub enum Skip {
    /// What the machine lacks: root, else the cgroup hierarchy or a controller.
    Machine(String),
    /// The machine was too busy for the behaviour to show (`Need::Idle`).
    Busy(String),
}

/// The machine's capabilities, or why the real tests cannot run.
pub fn caps() -> Result<Capabilities, Skip> {
    let caps = Capabilities::detect(&RealFs)
        .map_err(|e| Skip::Machine(format!("cannot detect cgroups: {e}")))?;
    if !caps.root_user {
        return Err(Skip::Machine("needs root (creates cgroups)".into()));
    }
    Ok(caps)
}

/// The placement of a controller, or a skip.
pub fn need(caps: &Capabilities, c: Controller) -> Result<(), Skip> {
    caps.placement(c)
        .map(|_| ())
        .map_err(|u| Skip::Machine(format!("{c}: {u}")))
}

/// A session of this process.
pub fn session(caps: &Capabilities, specs: &[&TrialSpec]) -> Session {
    let owner = OwnerId::this_process().expect("owner");
    Session::open(
        Arc::new(RealFs),
        caps.clone(),
        owner,
        Needs::of(specs.iter().copied()),
    )
    .expect("open the session")
}

/// A trial of one or more groups.
pub fn trial(label: &str, groups: Vec<(&str, GroupSettings)>) -> TrialSpec {
    TrialSpec {
        label: Name::new(label).expect("label"),
        groups: groups
            .into_iter()
            .map(|(n, settings)| GroupSpec {
                name: Name::new(n).expect("name"),
                settings,
            })
            .collect(),
        threads: false,
    }
}

/// A child process, killed and reaped when dropped.
pub struct Kid {
    pub child: Child,
    out: BufReader<ChildStdout>,
}

impl Kid {
    /// Start the test binary as a child in `mode`.
    pub fn spawn(mode: &str) -> Kid {
        let mut child = Command::new(std::env::current_exe().expect("own path"))
            .env(CHILD_ENV, mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn a child");
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        Kid { child, out }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Send the start byte.
    pub fn start(&mut self) {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        stdin.write_all(b"g").expect("start byte");
        stdin.flush().expect("flush");
    }

    /// Close the child's stdin.
    pub fn close_stdin(&mut self) {
        drop(self.child.stdin.take());
    }

    /// The next line the child prints.
    pub fn line(&mut self) -> String {
        let mut l = String::new();
        self.out.read_line(&mut l).expect("a line from the child");
        l.trim().to_string()
    }

    /// Wait for the child (at most `limit`); its exit status and stderr.
    pub fn finish(&mut self, limit: Duration) -> (bool, String) {
        let t0 = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().expect("wait") {
                let mut err = String::new();
                if let Some(e) = self.child.stderr.as_mut() {
                    let _ = std::io::Read::read_to_string(e, &mut err);
                }
                return (st.success(), err);
            }
            assert!(
                t0.elapsed() < limit,
                "the child did not end within {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// `done WALL_NS CPU_NS` as (wall, cpu) in ms.
    pub fn done(&mut self) -> (f64, f64) {
        let l = self.line();
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(f.first(), Some(&"done"), "child said {l:?}");
        let ms = |s: &str| s.parse::<f64>().expect("ns") / 1e6;
        (ms(f[1]), ms(f[2]))
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A kernel setting changed for a test and restored when dropped (standing in for the
/// program's owner of kernel settings).
pub struct Setting {
    path: PathBuf,
    original: String,
}

impl Setting {
    pub fn set(s: &RootSetting) -> Setting {
        let original = std::fs::read_to_string(&s.path)
            .expect("read the setting")
            .trim()
            .to_string();
        std::fs::write(&s.path, &s.value).expect("write the setting");
        Setting {
            path: s.path.clone(),
            original,
        }
    }
}

impl Drop for Setting {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(&self.path, &self.original) {
            eprintln!(
                "COULD NOT RESTORE {} to {}: {e}",
                self.path.display(),
                self.original
            );
        }
    }
}

/// Every `schedlab-*` directory under the layer's hierarchies whose owner is this process or
/// is dead.
pub fn leftovers(caps: &Capabilities) -> Vec<PathBuf> {
    let me = OwnerId::this_process().expect("owner");
    let mut out = Vec::new();
    for c in [Controller::Cpu, Controller::Cpuacct, Controller::Cpuset] {
        let Ok(p) = caps.placement(c) else { continue };
        for e in std::fs::read_dir(&p.mount).expect("mount").flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(o) = OwnerId::from_dir_name(&name) {
                if o == me || !o.alive() {
                    out.push(e.path());
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}
