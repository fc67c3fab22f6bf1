//! Build script: records the git commit the binary was built from (for the environment record).

#![forbid(unsafe_code)]

use std::process::Command;

/// The output of `git ARGS`, trimmed, where git runs and succeeds.
fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    if let Some(c) = git(&["rev-parse", "--short=12", "HEAD"]) {
        // Dirty trees are marked, so a result is never attributed to a commit it did not come from.
        let dirty = Command::new("git")
            .args(["status", "--porcelain", "--untracked-files=no"])
            .output()
            .map(|o| !o.stdout.is_empty())
            .unwrap_or(false);
        println!(
            "cargo:rustc-env=SCHEDLAB_GIT_COMMIT={c}{}",
            if dirty { "-dirty" } else { "" }
        );
    }
    // Run again when HEAD, the branch it names or the index changes. The files are asked of git
    // (this crate sits below the repository's top, whose .git may be a file in a worktree): a
    // path that does not exist would make cargo rebuild this crate, and all above it, every time.
    let mut watched = vec!["HEAD".to_string(), "index".to_string()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
            if std::path::Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
