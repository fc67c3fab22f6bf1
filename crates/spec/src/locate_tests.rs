//! Tests of positioned spec errors.

use super::*;

fn err(text: &str) -> String {
    match check_text("f.toml", text) {
        Ok(_) => panic!("{text:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn line_and_column_count_lines_and_characters_from_one() {
    let text = "a = 1\nbé = \"x\"\n";
    assert_eq!(line_col(text, 0), (1, 1));
    assert_eq!(line_col(text, 4), (1, 5));
    assert_eq!(line_col(text, 6), (2, 1));
    // `é` is two bytes but one column.
    assert_eq!(line_col(text, text.rfind('=').unwrap_or(0)), (2, 4));
}

#[test]
fn line_and_column_clamp_offsets_past_the_end_or_inside_a_character() {
    let text = "a\nbé";
    assert_eq!(line_col(text, 1000), (2, 3));
    // Byte 4 is inside `é`: the column of `é` itself.
    assert_eq!(line_col(text, 4), (2, 2));
    assert_eq!(line_col("", 3), (1, 1));
    // The end of a text ending in a line break stays on its last line, counted as toml
    // counts it: one column past the line break.
    assert_eq!(line_col("x = [\n", 6), (1, 7));
}

#[test]
fn expected_lists_are_read_from_every_serde_wording() {
    let one_of = "unknown variant `fast`, expected one of `other`, `batch`, `rr`";
    assert_eq!(
        expected_list(one_of),
        Some(vec!["other".into(), "batch".into(), "rr".into()])
    );
    assert_eq!(
        expected_list("unknown field `x`, expected `a` or `b`"),
        Some(vec!["a".into(), "b".into()])
    );
    assert_eq!(expected_list("invalid type: string, expected u32"), None);
    assert_eq!(expected_list("missing field `kind`"), None);
}

#[test]
fn a_syntax_error_gives_its_position_key_and_one_line_message() {
    let e = err("[axes]\ntasks = [4,\n");
    assert!(
        e.starts_with("f.toml:2:13: axes.tasks: invalid array, expected `]`"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn an_unknown_key_lists_the_keys_of_its_table() {
    let e = err("[settings]\ntrails = 3\n");
    assert!(
        e.starts_with(
            "f.toml:2:1: settings.trails: unknown key `trails` (accepted: trials, warmup, work,"
        ),
        "{e}"
    );
    let e = err("[setting]\n");
    assert!(
        e.starts_with("f.toml:1:2: setting: unknown key `setting` (accepted: name, description, axes, settings, claims)"),
        "{e}"
    );
}

#[test]
fn an_unknown_value_lists_every_accepted_value() {
    let e = err("[axes]\npolicies = [\"other\", \"fast\"]\n");
    assert_eq!(
        e,
        "f.toml:2:22: axes.policies[1]: unknown value `fast` (accepted: other, batch, idle, fifo, rr, deadline, ext)"
    );
}

#[test]
fn a_wrong_type_names_what_the_key_accepts() {
    let e = err("[axes]\npolicies = \"fifo\"\n");
    assert!(
        e.starts_with("f.toml:2:12: axes.policies: wrong type: string \"fifo\" (accepted: a list of: other, batch,"),
        "{e}"
    );
    let e = err("settings.trials = -1\n");
    assert!(
        e.starts_with("f.toml:1:19: settings.trials: invalid value: integer `-1` (accepted: a whole number from 1"),
        "{e}"
    );
}

#[test]
fn a_missing_workload_kind_lists_the_kinds() {
    let e = err("[[axes.workloads]]\niterations = 5\n");
    assert_eq!(
        e,
        format!(
            "f.toml:1:1: axes.workloads[0].kind: missing key `kind` (accepted: {})",
            accepted_values::<WorkloadKind>()
        )
    );
    assert!(e.contains("cpu, io, mixed"), "{e}");
}

#[test]
fn plan_problems_are_placed_at_their_key() {
    let e = err("[axes]\ntasks = [4, 0]\n");
    assert_eq!(
        e,
        "f.toml:2:13: axes.tasks[1]: 0 is not a usable task count (accepted: 1..=100000)"
    );
    let e = err("[axes]\nworkloads = [{ kind = \"cpu\", iterations = 0 }]\n");
    assert!(
        e.starts_with("f.toml:2:43: axes.workloads[0].iterations: must be above 0"),
        "{e}"
    );
    let e = err(
        "[[axes.workloads]]\nkind = \"io\"\n[[axes.workloads]]\nkind = \"cpu\"\nwork = \"50\"\n",
    );
    assert!(
        e.starts_with("f.toml:5:8: axes.workloads[1].work: '50' is not a duration (accepted: a number with a unit"),
        "{e}"
    );
    let e = err("[axes]\npolicies = [\"deadline\"]\n[settings]\ndeadline.runtime = \"60ms\"\n");
    assert!(
        e.starts_with("f.toml:4:20: settings.deadline.runtime: deadline parameters need runtime <= deadline <= period"),
        "{e}"
    );
}

#[test]
fn a_problem_at_an_unwritten_key_falls_back_to_its_table_or_to_no_position() {
    // The deadline is the default, so the `[settings.deadline]` header is the place.
    let e = err("[axes]\npolicies = [\"deadline\"]\n[settings.deadline]\nperiod = \"1ms\"\n");
    assert!(
        e.starts_with("f.toml:3:11: settings.deadline.deadline: deadline parameters"),
        "{e}"
    );
    let p = Problem::new("settings.trials", "must be at least 1");
    assert_eq!(
        locate_problem("name = \"x\"\n", &p).render(Some("f.toml")),
        "f.toml: settings.trials: must be at least 1"
    );
}

#[test]
fn without_an_origin_the_position_is_spelled_out() {
    let l = Located {
        line_col: Some((2, 5)),
        key: Some("axes.tasks".into()),
        message: "bad".into(),
        accepted: Some("1..=3".into()),
    };
    assert_eq!(
        l.render(None),
        "line 2, column 5: axes.tasks: bad (accepted: 1..=3)"
    );
    assert_eq!(
        l.render(Some("x.toml")),
        "x.toml:2:5: axes.tasks: bad (accepted: 1..=3)"
    );
}

#[test]
fn a_valid_spec_file_text_checks() {
    let (spec, checked) = check_text("f.toml", "[axes]\ntasks = [1, 2]\n").unwrap();
    assert_eq!(spec.axes.tasks, vec![1, 2]);
    assert_eq!(checked.tasks, vec![1, 2]);
}
