//! Claims read from TOML and checked against the axes: every form, every treatment syntax,
//! and the key each mistake is tied to.

use super::*;

fn spec(claims: &str) -> Spec {
    let text = format!(
        "[axes]\npolicies = [\"other\", \"fifo\", \"rr\"]\npriorities = [\"same\", \"spread\"]\ntasks = [4, 10]\nslices = [\"0.1ms\", \"3ms\"]\nio_schedulers = [\"none\", \"bfq\"]\n{claims}"
    );
    Spec::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn problem(claims: &str) -> Problem {
    check_claims(&spec(claims)).expect_err("a mistake")
}

fn t(pairs: &[(ClaimAxis, &str)]) -> Treatment {
    let mut values: Vec<(ClaimAxis, String)> = pairs
        .iter()
        .map(|(a, v)| (a.clone(), v.to_string()))
        .collect();
    values.sort();
    Treatment { values }
}

#[test]
fn every_form_reads_into_its_relation() {
    let c = check_claims(&spec(
        r#"
[[claims]]
name = "fifo-turnaround"
text = "FIFO finishes sooner"
metric = "turnaround"
lower = "fifo"
than = ["other", "rr"]
where = { tasks = [4, 10], io_scheduler = "bfq" }
smallest_effect = "5%"
[[claims]]
name = "makespan-conserved"
metric = "makespan"
equal = ["fifo", "other"]
margin = 2.5
[[claims]]
name = "switches"
metric = "ivcsw"
ratio = ["other", "fifo"]
ratio_at_least = 10
[[claims]]
name = "converges"
metric = "makespan"
ratio = [{ policy = "fifo" }, { policy = "other" }]
trend = { along = "tasks", toward = 1 }
[[claims]]
name = "slices"
metric = "response"
higher = { slice = "3000us" }
than = { slice = "0.1ms" }
"#,
    ))
    .expect("valid claims");
    assert_eq!(c.len(), 5);
    assert_eq!(c[0].a, t(&[(ClaimAxis::Policy, "fifo")]));
    assert_eq!(c[0].others.len(), 2);
    assert_eq!(
        c[0].relation,
        ClaimRelation::Pair(Relation::Lower {
            smallest_effect: Some(ClaimAmount::Relative(0.05))
        })
    );
    assert_eq!(
        c[0].scope,
        vec![
            (ClaimAxis::IoScheduler, vec!["bfq".to_string()]),
            (ClaimAxis::Tasks, vec!["4".to_string(), "10".to_string()])
        ]
    );
    assert_eq!(c[0].declared, Declared::Before);
    assert_eq!(
        c[1].text, "makespan-conserved",
        "the name stands in for a missing text"
    );
    assert_eq!(
        c[1].relation,
        ClaimRelation::Pair(Relation::Equal {
            margin: ClaimAmount::Absolute(2.5)
        })
    );
    assert!(
        matches!(c[2].relation, ClaimRelation::Pair(Relation::RatioAtLeast { ratio, .. }) if ratio == 10.0)
    );
    assert_eq!(
        c[3].relation,
        ClaimRelation::Trend {
            along: ClaimAxis::Tasks,
            toward: 1.0
        }
    );
    // Slices compare as the store labels them: 3000us is 3ms.
    assert_eq!(c[4].a, t(&[(ClaimAxis::Slice, "3ms")]));
    assert_eq!(c[4].others[0].label(), "0.1ms");
}

#[test]
fn treatments_may_name_several_axes_and_bare_values_find_their_axis() {
    let c = check_claims(&spec(
        r#"
[[claims]]
name = "spread"
metric = "ivcsw"
higher = { policy = "fifo", priorities = "spread" }
than = { priorities = "same", policy = "fifo" }
[[claims]]
name = "bfq"
metric = "makespan"
lower = "bfq"
than = "none"
"#,
    ))
    .expect("valid");
    assert_eq!(c[0].a.label(), "policy=fifo priorities=spread");
    assert_eq!(c[1].a, t(&[(ClaimAxis::IoScheduler, "bfq")]));
}

#[test]
fn mistakes_are_tied_to_their_key() {
    let cases = [
        ("name = \"x\"\nmetric = \"speed\"\nlower = \"fifo\"\nthan = \"other\"", "claims[0].metric", "turnaround"),
        ("name = \"x\"\nmetric = \"makespan\"\nlower = \"deadline\"\nthan = \"other\"", "claims[0].lower", "fifo"),
        ("name = \"x\"\nmetric = \"makespan\"\nlower = \"fifo\"\nthan = [\"other\", \"batch\"]", "claims[0].than[1]", "rr"),
        ("name = \"x\"\nmetric = \"makespan\"\nlower = \"fifo\"", "claims[0].than", "treatment"),
        ("name = \"x\"\nmetric = \"makespan\"", "claims[0]", "lower"),
        ("name = \"x\"\nmetric = \"makespan\"\nlower = \"fifo\"\nhigher = \"rr\"\nthan = \"other\"", "claims[0].higher", "one of"),
        ("name = \"x\"\nmetric = \"makespan\"\nequal = [\"fifo\", \"other\"]", "claims[0].margin", "5%"),
        ("name = \"x\"\nmetric = \"makespan\"\nequal = [\"fifo\"]\nmargin = \"5%\"", "claims[0].equal", "two"),
        ("name = \"x\"\nmetric = \"makespan\"\nequal = [\"fifo\", \"rr\"]\nmargin = \"150%\"", "claims[0].margin", "percentage"),
        ("name = \"x\"\nmetric = \"makespan\"\nlower = \"fifo\"\nthan = \"other\"\nmargin = \"5%\"", "claims[0].margin", "than"),
        ("name = \"x\"\nmetric = \"makespan\"\nratio = [\"fifo\", \"other\"]", "claims[0].ratio", "trend"),
        ("name = \"x\"\nmetric = \"makespan\"\nratio = [\"fifo\", \"other\"]\nratio_at_least = -1", "claims[0].ratio_at_least", "above 0"),
        ("name = \"x\"\nmetric = \"makespan\"\nratio = [\"fifo\", \"other\"]\nratio_at_least = 2\nsmallest_effect = 3", "claims[0].smallest_effect", "%"),
        ("name = \"x\"\nmetric = \"makespan\"\nratio = [\"fifo\", \"other\"]\ntrend = { along = \"policy\", toward = 1 }", "claims[0].trend.along", "tasks"),
        ("name = \"x\"\nmetric = \"makespan\"\nlower = \"fifo\"\nthan = \"other\"\nwhere = { tasks = 50 }", "claims[0].where.tasks", "4, 10"),
        ("name = \"x\"\nmetric = \"makespan\"\nlower = \"fifo\"\nthan = \"other\"\nwhere = { colour = \"red\" }", "claims[0].where.colour", "io_scheduler"),
        ("name = \"x\"\nmetric = \"makespan\"\nlower = \"fifo\"\nthan = { slice = \"3ms\" }", "claims[0].than", "same axes"),
        ("name = \"x\"\nmetric = \"makespan\"\nlower = \"fifo\"\nthan = \"fifo\"", "claims[0].than", "two different"),
        ("name = \"x\"\nmetric = \"makespan\"\nlower = 4\nthan = \"fifo\"", "claims[0].lower", "slice"),
    ];
    for (body, key, accepted) in cases {
        let p = problem(&format!("[[claims]]\n{body}\n"));
        assert_eq!(p.key, key, "{body}: {p}");
        let all = format!("{} {}", p.message, p.accepted.clone().unwrap_or_default());
        assert!(all.contains(accepted), "{body}: {p}");
    }
    let p = problem("[[claims]]\nname = \"a\"\nmetric = \"makespan\"\nlower = \"fifo\"\nthan = \"rr\"\n[[claims]]\nname = \"a\"\nmetric = \"makespan\"\nlower = \"rr\"\nthan = \"fifo\"\n");
    assert_eq!(p.key, "claims[1].name");
}

#[test]
fn a_value_of_two_axes_must_name_its_axis() {
    let s = Spec::from_toml(
        "[axes]\npolicies = [\"other\"]\nio_schedulers = [\"none\"]\nscx = [\"none\"]\n[[claims]]\nname = \"x\"\nmetric = \"makespan\"\nlower = \"none\"\nthan = \"none\"\n",
    )
    .expect("parses");
    let p = check_claims(&s).expect_err("ambiguous");
    assert!(p.message.contains("several axes"), "{p}");
    assert!(p.accepted.unwrap().contains("{ io_scheduler = \"none\" }"));
}

#[test]
fn claims_round_trip_through_the_spec_as_run_and_post_hoc_ones_are_labelled() {
    let s = spec("[[claims]]\nname = \"x\"\nmetric = \"makespan\"\nlower = { \"policy\" = \"fifo\" }\nthan = \"other\"\nwhere = { tasks = 4 }\n");
    let text = toml::to_string(&s).expect("serialises");
    let back = Spec::from_toml(&text).expect("parses back");
    assert_eq!(back.claims, s.claims);
    let flag = parse_claim_flag("turnaround: fifo < other, rr").expect("reads");
    let c = check_post_hoc(&s, &[flag]).expect("valid");
    assert_eq!(c[0].declared, Declared::PostHoc);
    assert_eq!(c[0].others.len(), 2);
    let bad = parse_claim_flag("turnaround: fifo < batch").expect("reads");
    assert_eq!(
        check_post_hoc(&s, &[bad]).unwrap_err().key,
        "--claim 1.than"
    );
}

#[test]
fn a_claim_reads_overall_by_default_or_in_every_cell() {
    let base =
        "[[claims]]\nname = \"x\"\nmetric = \"makespan\"\nlower = \"fifo\"\nthan = \"other\"\n";
    let s = spec(base);
    assert_eq!(
        check_claims(&s).expect("valid")[0].reading,
        ClaimScope::Overall
    );
    let every = spec(&format!("{base}scope = \"every\"\n"));
    assert_eq!(
        check_claims(&every).expect("valid")[0].reading,
        ClaimScope::Every
    );
    let p = problem(&format!("{base}scope = \"most\"\n"));
    assert_eq!(p.key, "claims[0].scope");
    assert!(p.accepted.expect("accepted").contains("\"every\""));
}
