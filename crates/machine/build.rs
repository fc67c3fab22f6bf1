//! Build script: records the git commit the binary was built from (for the environment record).

fn main() {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    if let Some(c) = commit {
        // Dirty trees are marked, so a result is never attributed to a commit it did not come from.
        let dirty = std::process::Command::new("git")
            .args(["status", "--porcelain", "--untracked-files=no"])
            .output()
            .map(|o| !o.stdout.is_empty())
            .unwrap_or(false);
        println!(
            "cargo:rustc-env=SCHEDLAB_GIT_COMMIT={c}{}",
            if dirty { "-dirty" } else { "" }
        );
    }
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
}
