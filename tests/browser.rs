//! The HTML report in a real browser: headless Chromium loads it offline, without console
//! errors, every plot is laid out with a size, and a screenshot is saved for people to look at.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Runs headless Chromium on `url` with `extra` arguments; returns (stdout, stderr).
fn headless(bin: &Path, profile: &Path, url: &str, extra: &[&str]) -> (String, String) {
    let out = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("chromium runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_html_report_renders_offline_without_console_errors() {
    let Some(bin) = chromium() else {
        return skip(
            Need::Program,
            "Chromium is not installed (apt-get install chromium; .ci/run installs it)",
        );
    };
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy",
            "other,batch",
            "--tasks",
            "2,3",
            "--work",
            "5ms",
            "--trials",
            "3",
        ],
    );
    let out_dir = s.path().join("report");
    let out = schedlab()
        .args([
            "report",
            "--db",
            s.db().to_str().unwrap(),
            "--format",
            "html",
            // Every trial, whatever other programs on this machine did to them: the plots
            // are the subject here.
            "--include-disturbed",
            "--include-slowed",
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let index = out_dir.join("1").join("index.html");
    let html = std::fs::read_to_string(&index).expect("index.html written");
    for external in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(
            !html.contains(external),
            "the report must work offline, found {external}"
        );
    }
    let figures = html.matches("<svg").count();
    assert!(figures >= 2, "the report has plots: {figures}");

    // A copy with a probe script that measures every plot once the page has loaded.
    let probe = index.with_file_name("probe.html");
    let script = r#"<script>
window.addEventListener('load', () => {
  const svgs = [...document.querySelectorAll('svg')];
  const empty = svgs.filter(s => { const r = s.getBoundingClientRect(); return !(r.width > 50 && r.height > 50) || s.querySelectorAll('*').length < 5; });
  const imgs = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0));
  document.body.setAttribute('data-probe', 'svgs=' + svgs.length + ' empty=' + empty.length + ' broken_images=' + imgs.length);
});
</script>"#;
    std::fs::write(
        &probe,
        html.replacen("</body>", &format!("{script}</body>"), 1),
    )
    .unwrap();
    let profile = s.path().join("chromium-profile");
    let (dom, log) = headless(
        &bin,
        &profile,
        &format!("file://{}", probe.display()),
        &["--dump-dom"],
    );
    let probe_line = dom
        .split("data-probe=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or("");
    assert_eq!(
        probe_line,
        format!("svgs={figures} empty=0 broken_images=0"),
        "every plot rendered"
    );
    let console_errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") && (l.contains("ERROR") || l.contains("Uncaught")))
        .collect();
    assert!(
        console_errors.is_empty(),
        "console errors: {console_errors:?}"
    );

    // The screenshot, kept under target/ for people to look at.
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser-check");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join("report.png");
    let _ = std::fs::remove_file(&shot);
    headless(
        &bin,
        &profile,
        &format!("file://{}", index.display()),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,3000",
        ],
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "a non-trivial screenshot: {} bytes",
        png.len()
    );
}

/// The report's first screen at 1280x800: the claims table (with a claim over several cells,
/// its cell rows and the notes under it) fits the window without sideways scrolling, and
/// every column, the effect's included, is inside it. A screenshot is kept for people to
/// look at (target/browser-check/claims-1280x800.png).
#[test]
fn the_claims_table_fits_a_1280_pixel_screen() {
    let Some(bin) = chromium() else {
        return skip(
            Need::Program,
            "Chromium is not installed (apt-get install chromium; .ci/run installs it)",
        );
    };
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy",
            "other,batch",
            "--tasks",
            "2,3",
            "--work",
            "5ms",
            "--trials",
            "3",
            "--claim",
            "makespan: batch < other",
            "--claim",
            "turnaround: other = batch within 20%",
        ],
    );
    let out_dir = s.path().join("report");
    let out = schedlab()
        .args([
            "report",
            "--db",
            s.db().to_str().unwrap(),
            "--format",
            "html",
        ])
        // Every trial counts, so the effect column holds intervals even on a busy machine.
        .args(["--include-disturbed", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let index = out_dir.join("1").join("index.html");
    let html = std::fs::read_to_string(&index).unwrap();
    assert!(html.contains("<table class=\"claims\">"), "a claims table");
    let probe = index.with_file_name("probe-claims.html");
    let script = r#"<script>
window.addEventListener('load', () => {
  const t = document.querySelector('table.claims');
  const box = t.parentElement;
  const right = Math.max(...[...t.querySelectorAll('th,td')].map(c => c.getBoundingClientRect().right));
  document.body.setAttribute('data-probe', 'overflow=' + (box.scrollWidth > box.clientWidth + 1) + ' right=' + Math.ceil(right) + ' window=' + window.innerWidth + ' columns=' + t.querySelectorAll('thead th').length);
});
</script>"#;
    std::fs::write(
        &probe,
        html.replacen("</body>", &format!("{script}</body>"), 1),
    )
    .unwrap();
    let profile = s.path().join("chromium-profile");
    let (dom, _) = headless(
        &bin,
        &profile,
        &format!("file://{}", probe.display()),
        &["--dump-dom", "--window-size=1280,800"],
    );
    let line = dom
        .split("data-probe=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or("")
        .to_string();
    let field = |k: &str| -> String {
        line.split_whitespace()
            .find_map(|f| f.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("no {k} in probe {line:?}"))
            .to_string()
    };
    assert_eq!(field("overflow"), "false", "{line}");
    assert_eq!(field("columns"), "6", "{line}");
    let (right, window): (u32, u32) = (
        field("right").parse().unwrap(),
        field("window").parse().unwrap(),
    );
    assert!(
        right <= window,
        "the last column ends at {right} px of {window}: {line}"
    );
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser-check");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join("claims-1280x800.png");
    let _ = std::fs::remove_file(&shot);
    headless(
        &bin,
        &profile,
        &format!("file://{}", index.display()),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,800",
        ],
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
}
