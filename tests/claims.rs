//! Declared claims on real runs: each verdict word reached where the scheduler makes it so,
//! inconclusive with the trials 80 % power needs, post-hoc claims labelled exploratory, and
//! the claims table first in every output.

mod common;

use common::*;

fn stats(s: &Scratch, extra: &[&str]) -> String {
    let out = schedlab()
        .args(["stats", "--db", s.db().to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The table row of claim `name` in `text`.
fn row<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(&format!("│ {name} ")))
        .unwrap_or_else(|| panic!("no row of {name}: {text}"))
}

#[test]
fn each_verdict_word_is_reached_on_a_real_run_and_every_output_opens_with_the_claims() {
    if !root("SCHED_FIFO and SCHED_RR") {
        return;
    }
    let _turn = rt_turn();
    // 4 equal CPU tasks of 30 ms on CPU 0. FIFO runs them one after another (turnarounds
    // 30, 60, 90, 120 ms: median 75), OTHER shares the CPU until all end near 120 ms; RR's
    // 100 ms quantum is longer than the work, so it behaves as FIFO. 8 rounds: the signed-rank
    // test's smallest two-sided p is 2/256, below 0.05/3 for Holm over the 3 claims.
    // The equivalence is a count, not a time (this VM's speed drifts between trials by tens of
    // percent, which a makespan's margin had to absorb): FIFO and RR end the four tasks one at
    // a time, 30 ms apart, in 4 end groups (a gap of more than 10 % of the makespan starts a
    // group) however fast the machine runs, so every round's ratio is exactly 1.
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy",
            "other,fifo,rr",
            "--tasks",
            "4",
            "--cpus",
            "0",
            "--work",
            "30ms",
            "--trials",
            "8",
            "--claim",
            "turnaround: fifo < other",
            "--claim",
            "turnaround: other < fifo",
            "--claim",
            "end_groups: fifo = rr within 10%",
        ],
    );
    // Outside work on this shared machine may disturb the OTHER trials (the RT ones hardly
    // yield to it), and slow any: the verdicts are checked on every trial, the default's
    // count below.
    let all = stats(&s, &["--include-disturbed", "--include-slowed"]);
    assert!(
        row(&all, "turnaround: fifo < other").contains("│ supported "),
        "{all}"
    );
    assert!(
        row(&all, "turnaround: other < fifo").contains("│ contradicted "),
        "{all}"
    );
    assert!(
        row(&all, "end_groups: fifo = rr within 10%").contains("│ equivalent "),
        "{all}"
    );
    assert!(
        all.contains("3 declared claims decided together (Holm"),
        "{all}"
    );
    let claims_at = all.find("Claims").unwrap();
    assert!(
        all.find("Exploratory comparisons")
            .is_some_and(|f| f > claims_at),
        "claims come first: {all}"
    );
    // The default leaves the disturbed and slowed trials out and says how many.
    let contaminated = ints(
        &s.conn(),
        "SELECT COUNT(*) FROM trials WHERE status = 'ok' AND (disturbed = 1 OR slowed = 1)",
    )[0];
    let default = stats(&s, &[]);
    assert!(
        default.contains(&format!("{contaminated} trials left out (disturbed: ")),
        "{default}"
    );
    // Every written format has them, first.
    let out = s.path().join("report");
    let o = schedlab()
        .args([
            "report",
            "--db",
            s.db().to_str().unwrap(),
            "--include-disturbed",
            "--include-slowed",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = out.join("1");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let html = read("index.html");
    let (claims, exploratory) = (
        html.find("id=\"claims\"").unwrap(),
        html.find("id=\"exploratory\"").unwrap(),
    );
    assert!(
        claims < exploratory && html.contains("<td>contradicted</td>"),
        "HTML"
    );
    let md = read("report.md");
    let (claims, exploratory) = (
        md.find("## Claims").expect("a Claims section"),
        md.find("## Exploratory comparisons")
            .expect("an Exploratory comparisons section"),
    );
    assert!(claims < exploratory, "Markdown: claims come first");
    assert!(read("report.tex").contains("\\label{tab:claims}"));
    let csv = read("csv/claims.csv");
    let lines: Vec<&str> = csv.lines().collect();
    // A row per claim and one per claim cell (each claim here has one cell).
    assert_eq!(lines.len(), 7, "{csv}");
    assert!(
        lines[0].starts_with("claim,level,text,metric,a,relation,others,declared,where,verdict")
    );
    assert!(lines.iter().any(|l| l.contains(",equivalent,")), "{csv}");
}

#[test]
fn two_trials_are_inconclusive_and_say_how_many_trials_power_needs() {
    // No RT needed: processes against threads under OTHER, 2 trials each. With 2 rounds the
    // signed-rank test's smallest p is 0.5: no verdict is possible, and the claim's
    // smallest_effect gives the trials that 80 % power needs.
    let s = Scratch::new();
    let spec = s.path().join("two.toml");
    std::fs::write(
        &spec,
        r#"
name = "two-trials"
[axes]
policies = ["other"]
kind = ["process", "thread"]
tasks = [2]
[settings]
work = "10ms"
trials = 2
sample_interval = "off"
[[claims]]
name = "threads-start-sooner"
text = "Threads respond sooner than processes"
metric = "response"
lower = "thread"
than = "process"
smallest_effect = "20%"
"#,
    )
    .unwrap();
    run_ok(&s, &[spec.to_str().unwrap()]);
    let text = stats(&s, &["--include-disturbed", "--include-slowed"]);
    let r = row(&text, "threads-start-sooner");
    assert!(r.contains("│ inconclusive [1] "), "{text}");
    assert!(
        text.contains("[1] 80% power at smallest_effect needs "),
        "{text}"
    );
    assert!(text.contains("threads-start-sooner (response: thread < process): inconclusive (every cell); these rounds cannot decide it: it can be decided from round 6"), "{text}");
    // The claims as JSON, for pipelines; --fail-on makes the exit status follow them.
    let json = schedlab()
        .args([
            "stats",
            "--format",
            "json",
            "--include-disturbed",
            "--include-slowed",
            "--fail-on",
            "inconclusive",
            "--db",
        ])
        .arg(s.db())
        .output()
        .unwrap();
    assert_eq!(
        json.status.code(),
        Some(1),
        "an inconclusive claim fails the gate"
    );
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(doc["schema"], "schedlab.claims/1");
    let claim = &doc["claims"][0];
    assert_eq!(claim["name"], "threads-start-sooner");
    assert_eq!(claim["verdict"], "inconclusive");
    assert_eq!(claim["rounds"]["used"], 2);
    assert_eq!(claim["earliest_round"], 6);
    assert!(
        claim["cells"][0]["trials_needed"]["rounds"].is_number(),
        "{doc}"
    );
    // One cell: its interval is shown at the claim's level; 2 rounds cannot bound it there.
    let effect = &claim["cells"][0]["effect"];
    assert!(
        effect["level"].is_number() && effect["lo"].is_null(),
        "{effect}"
    );
    let pass = schedlab()
        .args([
            "stats",
            "--include-disturbed",
            "--include-slowed",
            "--fail-on",
            "contradicted",
            "--db",
        ])
        .arg(s.db())
        .output()
        .unwrap();
    assert_eq!(pass.status.code(), Some(0));
    // A claim given to stats is post hoc: exploratory, outside the family, no verdict word.
    let post = stats(
        &s,
        &[
            "--include-disturbed",
            "--include-slowed",
            "--claim",
            "cpu: thread < process",
        ],
    );
    assert!(
        row(&post, "cpu: thread < process").contains("exploratory"),
        "{post}"
    );
    assert!(post.contains("1 declared claims"), "{post}");
    let bad = schedlab()
        .args([
            "stats",
            "--db",
            s.db().to_str().unwrap(),
            "--claim",
            "cpu: thread < fifo",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("'fifo' is not a value"));
}

#[test]
fn declared_claims_a_stored_spec_cannot_check_are_a_warning_and_refuse_a_claim() {
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy",
            "other,batch",
            "--tasks",
            "1",
            "--work",
            "2ms",
            "--trials",
            "1",
        ],
    );
    // As if written by another version: a declared claim on a metric this one does not
    // know; the spec itself still reads.
    s.conn()
        .execute_batch(
            "UPDATE runs SET spec_toml = spec_toml || char(10) || '[[claims]]' || char(10)
             || 'name = \"q\"' || char(10) || 'metric = \"quantum_ms\"' || char(10)
             || 'lower = \"other\"' || char(10) || 'than = \"batch\"' || char(10)",
        )
        .unwrap();
    let text = stats(&s, &[]);
    assert!(
        text.contains("the claims stored with the run do not check against its spec as run")
            && text.contains("claims[0].metric")
            && text.contains("No declared claim is judged."),
        "{text}"
    );
    let o = schedlab()
        .args(["stats", "--db", s.db().to_str().unwrap()])
        .args(["--claim", "makespan: other < batch"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--claim cannot be checked against run 1: the claims stored with the run")
            && err.contains("claims[0].metric"),
        "{err}"
    );
}
