//! Tests of the restore journal against settings files in a scratch directory (allowed as
//! the only root), so that nothing of the real system changes. Tests that create a journal of
//! this process take turns ([`one_journal`]): a process holds one journal at a time.

use super::*;

/// Held by every test that creates a journal of this process.
fn one_journal() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes `record` as journal `name` into the state directory `state` (created if missing).
fn plant(state: &Path, name: &str, record: &Record) -> PathBuf {
    let dir = StateDir::open(state, true).unwrap().unwrap();
    dir.write(name, &serde_json::to_string(record).unwrap())
        .unwrap();
    dir.file(name)
}

/// A scratch directory with a state directory and a "settings" tree allowed as root.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let s = Scratch {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(s.settings()).unwrap();
        s
    }
    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }
    fn settings(&self) -> PathBuf {
        self.dir.path().join("settings")
    }
    fn roots(&self) -> Vec<PathBuf> {
        vec![std::fs::canonicalize(self.settings()).unwrap()]
    }
    fn setting(&self, name: &str, text: &str) -> String {
        let p = self.settings().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.settings().join(name)).unwrap()
    }
    /// Writes a journal as a process that is not running any more would have left it.
    fn dead_journal(&self, entries: Vec<Entry>, boot_id: Option<String>) -> PathBuf {
        let me = Owner::this_process();
        let record = Record {
            version: VERSION,
            // This pid with a start time it never had: the owner is gone.
            owner: Owner {
                start_ticks: Some(1),
                boot_id,
                ..me
            },
            command: "schedlab run --knob x=1".into(),
            created_at: "2026-11-30T10:00:00Z".into(),
            entries,
            scx: None,
            cgroups: Vec::new(),
        };
        plant(&self.state(), "restore-999999.json", &record)
    }
}

fn entry(name: &str, path: &str, original: &str) -> Entry {
    Entry {
        name: name.into(),
        path: path.into(),
        original: original.into(),
    }
}

#[test]
fn a_dead_owners_journal_is_restored_reported_and_removed() {
    let s = Scratch::new();
    let quantum = s.setting("rr_ms", "10\n");
    let io = s.setting("scheduler", "none mq-deadline [bfq] kyber\n");
    let same = s.setting("same", "7\n");
    let journal = s.dead_journal(
        vec![
            entry("kernel.sched_rr_timeslice_ms", &quantum, "100"),
            entry("io_scheduler", &io, "mq-deadline"),
            entry("unchanged", &same, "7"),
        ],
        schedlab_machine::boot_id(),
    );
    let r = recover(&s.state(), &s.roots()).unwrap();
    assert_eq!(s.read("rr_ms"), "100");
    assert_eq!(s.read("scheduler"), "mq-deadline");
    assert_eq!(s.read("same"), "7\n", "an unchanged setting is not written");
    assert!(!journal.exists(), "the journal is removed");
    assert_eq!(r.lines.len(), 3, "{:?}", r.lines);
    assert!(
        r.lines[0].contains("ended without restoring"),
        "{:?}",
        r.lines
    );
    assert!(
        r.lines[1].contains("kernel.sched_rr_timeslice_ms") && r.lines[1].contains("10 -> 100")
    );
    assert!(r.lines[2].contains("bfq -> mq-deadline"), "{:?}", r.lines);
}

#[test]
fn a_live_owners_journal_is_left_alone_and_blocks_the_same_setting() {
    let _turn = one_journal();
    let s = Scratch::new();
    let quantum = s.setting("rr_ms", "10\n");
    let other = s.setting("other", "1\n");
    // Another process that is alive: its journal says it changed rr_ms from 100.
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let record = Record {
        version: VERSION,
        owner: Owner::of(child.id() as i32),
        command: "schedlab run (another one)".into(),
        created_at: "2026-11-30T10:00:00Z".into(),
        entries: vec![entry("kernel.sched_rr_timeslice_ms", &quantum, "100")],
        scx: None,
        cgroups: Vec::new(),
    };
    plant(&s.state(), &name_of(record.owner.pid), &record);
    let r = recover(&s.state(), &s.roots()).unwrap();
    assert_eq!(r.live, vec![(record.owner.pid, record.command.clone())]);
    assert_eq!(
        s.read("rr_ms"),
        "10\n",
        "a live owner's setting is not touched"
    );
    let e = Journal::create(
        &s.state(),
        vec![entry("kernel.sched_rr_timeslice_ms", &quantum, "10")],
        &s.roots(),
    )
    .unwrap_err();
    assert!(
        matches!(&e, KernelError::Busy(b) if b.name == "kernel.sched_rr_timeslice_ms" && b.pid == record.owner.pid)
            && e.to_string().contains("another schedlab process"),
        "{e}"
    );
    // Another setting is fine; the journal holds this process's identity and the original.
    let mine = Journal::create(&s.state(), vec![entry("o", &other, "1")], &s.roots()).unwrap();
    let back: Record =
        serde_json::from_str(&std::fs::read_to_string(mine.path()).unwrap()).unwrap();
    assert_eq!(back.owner, Owner::this_process());
    assert_eq!(back.entries, vec![entry("o", &other, "1")]);
    mine.remove();
    // Once the other process is gone, its journal is restored on the next creation.
    child.kill().unwrap();
    child.wait().unwrap();
    let mine = Journal::create(
        &s.state(),
        vec![entry("kernel.sched_rr_timeslice_ms", &quantum, "100")],
        &s.roots(),
    )
    .unwrap();
    assert_eq!(s.read("rr_ms"), "100");
    mine.remove();
    let dir = StateDir::open(&s.state(), false).unwrap().unwrap();
    assert!(journals(&dir).is_empty());
}

#[test]
fn a_journal_from_an_earlier_boot_is_removed_without_writing() {
    let s = Scratch::new();
    let quantum = s.setting("rr_ms", "100\n");
    let journal = s.dead_journal(
        vec![entry("kernel.sched_rr_timeslice_ms", &quantum, "10")],
        Some("00000000-0000-0000-0000-000000000000".into()),
    );
    let r = recover(&s.state(), &s.roots()).unwrap();
    assert_eq!(s.read("rr_ms"), "100\n", "the boot value stays");
    assert!(!journal.exists());
    assert!(r.lines[0].contains("earlier boot"), "{:?}", r.lines);
}

#[test]
fn a_setting_outside_the_roots_is_not_written_and_the_journal_is_kept() {
    let s = Scratch::new();
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), "5").unwrap();
    let journal = s.dead_journal(
        vec![entry("evil", &outside.path().display().to_string(), "6")],
        schedlab_machine::boot_id(),
    );
    let r = recover(&s.state(), &s.roots()).unwrap();
    assert_eq!(std::fs::read_to_string(outside.path()).unwrap(), "5");
    assert!(journal.exists(), "kept for a person to look at");
    assert!(
        r.lines.iter().any(|l| l.contains("outside")),
        "{:?}",
        r.lines
    );
}

#[test]
fn an_empty_or_missing_state_directory_needs_no_lock() {
    let s = Scratch::new();
    assert_eq!(
        recover(&s.state(), &s.roots()).unwrap(),
        Recovery::default()
    );
    assert!(
        !s.state().exists(),
        "nothing is created when there is nothing to do"
    );
}

#[test]
fn a_bpf_scheduler_left_running_by_a_dead_owner_is_stopped() {
    let s = Scratch::new();
    let mut sched = std::process::Command::new("sleep");
    sched.arg("30");
    std::os::unix::process::CommandExt::process_group(&mut sched, 0);
    let mut child = sched.spawn().unwrap();
    let journal = s.dead_journal(Vec::new(), schedlab_machine::boot_id());
    let mut record: Record =
        serde_json::from_str(&std::fs::read_to_string(&journal).unwrap()).unwrap();
    record.scx = Some(ScxProcess {
        owner: Owner::of(child.id() as i32),
        command: "scx_lavd".into(),
    });
    plant(&s.state(), "restore-999999.json", &record);
    let r = recover(&s.state(), &s.roots()).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGTERM),
        "stopped with SIGTERM"
    );
    assert!(
        r.lines
            .iter()
            .any(|l| l.contains("stopped the BPF scheduler `scx_lavd`")),
        "{:?}",
        r.lines
    );
    assert!(!journal.exists());
}

#[test]
fn a_planted_temp_file_link_is_not_followed() {
    let _turn = one_journal();
    let s = Scratch::new();
    let other = s.setting("other", "1\n");
    let victim = s.dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::create_dir(s.state()).unwrap();
    std::fs::set_permissions(
        s.state(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let tmp = s
        .state()
        .join(format!("{}.tmp", name_of(std::process::id() as i32)));
    std::os::unix::fs::symlink(&victim, &tmp).unwrap();
    let mine = Journal::create(&s.state(), vec![entry("o", &other, "1")], &s.roots()).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!tmp.exists() && std::fs::symlink_metadata(&tmp).is_err());
    let meta = std::fs::symlink_metadata(mine.path()).unwrap();
    assert!(meta.file_type().is_file());
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o600
    );
    mine.remove();
}

#[test]
fn a_process_holds_one_journal_at_a_time() {
    let _turn = one_journal();
    let s = Scratch::new();
    let a = s.setting("a", "1\n");
    let first = Journal::create(&s.state(), vec![entry("a", &a, "1")], &s.roots()).unwrap();
    assert!(held());
    let e = Journal::create(&s.state(), vec![entry("a", &a, "1")], &s.roots()).unwrap_err();
    assert!(
        matches!(&e, KernelError::Internal(Internal::JournalHeld))
            && e.to_string().contains("holds a restore journal already"),
        "{e}"
    );
    first.remove();
    assert!(!held());
    Journal::create(&s.state(), vec![entry("a", &a, "1")], &s.roots())
        .unwrap()
        .remove();
}

#[test]
fn journals_anyone_else_could_have_written_are_refused_not_obeyed() {
    let s = Scratch::new();
    let quantum = s.setting("rr_ms", "10\n");
    let journal = s.dead_journal(
        vec![entry("kernel.sched_rr_timeslice_ms", &quantum, "100")],
        schedlab_machine::boot_id(),
    );
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap()
    };
    // World-writable: refused with the cause and the remedy, kept, not obeyed.
    mode(&journal, 0o666);
    let r = recover(&s.state(), &s.roots()).unwrap();
    assert_eq!(r.refused.len(), 1, "{r:?}");
    assert!(
        r.refused[0].contains("mode 0666") && r.refused[0].contains("rm "),
        "{r:?}"
    );
    assert_eq!(s.read("rr_ms"), "10\n");
    assert!(journal.exists());
    // A symbolic link to a journal elsewhere, and a hard link: refused.
    mode(&journal, 0o600);
    let elsewhere = s.dir.path().join("elsewhere.json");
    std::fs::rename(&journal, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &journal).unwrap();
    let r = recover(&s.state(), &s.roots()).unwrap();
    assert!(r.refused[0].contains("symbolic link"), "{r:?}");
    std::fs::remove_file(&journal).unwrap();
    std::fs::hard_link(&elsewhere, &journal).unwrap();
    let r = recover(&s.state(), &s.roots()).unwrap();
    assert!(r.refused[0].contains("2 hard links"), "{r:?}");
    assert_eq!(s.read("rr_ms"), "10\n");
    // A group-writable state directory, and one reached through a link: refused whole.
    std::fs::remove_file(&elsewhere).unwrap();
    mode(&s.state(), 0o770);
    let e = recover(&s.state(), &s.roots()).unwrap_err();
    assert!(matches!(e, KernelError::State(_)), "{e}");
    let e = e.to_string();
    assert!(e.contains("mode 0770") && e.contains("chmod 0700"), "{e}");
    mode(&s.state(), 0o700);
    let link = s.dir.path().join("state-link");
    std::os::unix::fs::symlink(s.state(), &link).unwrap();
    let e = recover(&link, &s.roots()).unwrap_err().to_string();
    assert!(
        e.contains("symbolic link") && e.contains(STATE_DIR_ENV),
        "{e}"
    );
    assert_eq!(s.read("rr_ms"), "10\n");
    // Trusted again: obeyed.
    let r = recover(&s.state(), &s.roots()).unwrap();
    assert!(r.refused.is_empty() && !r.failed, "{r:?}");
    assert_eq!(s.read("rr_ms"), "100");
}

#[test]
fn entries_are_checked_again_before_they_are_written() {
    let s = Scratch::new();
    let quantum = s.setting("rr_ms", "10\n");
    s.setting("other", "5\n");
    let roundabout = s.settings().join("../settings/other").display().to_string();
    let journal = s.dead_journal(
        vec![
            entry("kernel.sched_rr_timeslice_ms", &quantum, "100\n|/tmp/evil"),
            entry("other", &roundabout, "6"),
        ],
        schedlab_machine::boot_id(),
    );
    let r = recover(&s.state(), &s.roots()).unwrap();
    assert!(r.failed, "{r:?}");
    assert_eq!(
        s.read("rr_ms"),
        "10\n",
        "a value with a newline is not written"
    );
    assert_eq!(s.read("other"), "5\n", "a path with .. is not written");
    assert!(
        r.lines[0].contains("did not restore") && r.lines[0].contains("control character"),
        "{r:?}"
    );
    assert!(r.lines[1].contains("not the file's own path"), "{r:?}");
    assert!(journal.exists(), "kept for a person to look at");
}

#[test]
fn originals_are_read_after_a_dead_owners_journal_is_restored() {
    // Issue 27 item 1: read before the recovery, a dead run's value was journaled as original.
    let _turn = one_journal();
    let s = Scratch::new();
    let swap = s.setting("swappiness", "10\n");
    let other = s.setting("other", "1\n");
    s.dead_journal(
        vec![entry("vm.swappiness", &swap, "60")],
        schedlab_machine::boot_id(),
    );
    let read = |path: &str| knobfile::read(Path::new(path)).unwrap().value;
    let mut mine = Journal::create_reading(&s.state(), &s.roots(), || {
        Ok(vec![entry("vm.swappiness", &swap, &read(&swap))])
    })
    .unwrap();
    assert_eq!(
        mine.record.entries,
        vec![entry("vm.swappiness", &swap, "60")]
    );
    // A journal of a run killed after this one started is restored before more is read.
    std::fs::write(&other, "5\n").unwrap();
    s.dead_journal(vec![entry("o", &other, "1")], schedlab_machine::boot_id());
    mine.add_reading(|| Ok(vec![entry("o", &other, &read(&other))]))
        .unwrap();
    assert_eq!(mine.record.entries[1], entry("o", &other, "1"));
    mine.remove();
}
