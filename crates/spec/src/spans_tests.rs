//! Tests of the spans of keys and values.

use super::*;

const DOC: &str = "name = \"x\"\n\
    [axes]\n\
    tasks = [1, 2]\n\
    workloads = [{ kind = \"cpu\", iterations = 0 }]\n\
    [settings]\n\
    trials = 0\n\
    [settings.deadline]\n\
    runtime = \"60ms\"\n\
    [other]\n\
    sub.period = \"1ms\"\n";

fn at(text: &str, needle: &str) -> usize {
    text.find(needle).expect("needle in text")
}

#[test]
fn paths_split_into_keys_and_indices_and_render_back() {
    let p = parse_path("axes.workloads[1].iterations");
    assert_eq!(
        p,
        vec![
            Seg::Key("axes".into()),
            Seg::Key("workloads".into()),
            Seg::Index(1),
            Seg::Key("iterations".into())
        ]
    );
    assert_eq!(render_path(&p), "axes.workloads[1].iterations");
    assert_eq!(render_path(&[Seg::Key("a b".into())]), "\"a b\"");
}

#[test]
fn an_offset_maps_to_the_innermost_key_or_value() {
    let t = Spans::parse(DOC).unwrap();
    let path = |off| t.path_at(off).map(|p| render_path(&p));
    assert_eq!(path(at(DOC, "2]")).as_deref(), Some("axes.tasks[1]"));
    assert_eq!(
        path(at(DOC, "iterations")).as_deref(),
        Some("axes.workloads[0].iterations")
    );
    assert_eq!(
        path(at(DOC, "{ kind")).as_deref(),
        Some("axes.workloads[0]")
    );
    assert_eq!(path(at(DOC, "trials")).as_deref(), Some("settings.trials"));
    assert_eq!(
        path(at(DOC, "\"60ms\"")).as_deref(),
        Some("settings.deadline.runtime")
    );
    assert_eq!(path(DOC.len() + 10), None);
}

#[test]
fn a_path_maps_to_where_it_is_written() {
    let t = Spans::parse(DOC).unwrap();
    let off = |p: &str| t.offset_of(&parse_path(p));
    // Scalars point at their value, lists and tables at their key.
    assert_eq!(
        off("settings.trials"),
        Some(at(DOC, "0\n[settings.deadline"))
    );
    assert_eq!(off("axes.tasks"), Some(at(DOC, "tasks")));
    assert_eq!(off("axes.tasks[1]"), Some(at(DOC, "2]")));
    assert_eq!(off("axes.workloads[0].iterations"), Some(at(DOC, "0 }")));
    // Dotted keys and [section.headers] are both found.
    assert_eq!(off("other.sub.period"), Some(at(DOC, "\"1ms\"")));
    assert_eq!(off("settings.deadline.runtime"), Some(at(DOC, "\"60ms\"")));
    // A key not written falls back to its longest written prefix.
    assert_eq!(off("axes.tasks[7]"), Some(at(DOC, "tasks")));
    assert_eq!(off("axes.kind"), Some(at(DOC, "axes")));
    assert_eq!(off("nothing.here"), None);
}

#[test]
fn arrays_of_tables_get_one_span_per_table() {
    let text =
        "[[axes.workloads]]\nkind = \"io\"\n[[axes.workloads]]\nkind = \"cpu\"\nwork = \"5\"\n";
    let t = Spans::parse(text).unwrap();
    assert_eq!(
        t.offset_of(&parse_path("axes.workloads[1].work")),
        Some(at(text, "\"5\""))
    );
    assert_eq!(
        t.offset_of(&parse_path("axes.workloads[1]")),
        Some(text.rfind("[[").unwrap())
    );
    assert_eq!(
        t.path_at(at(text, "\"5\""))
            .map(|p| render_path(&p))
            .as_deref(),
        Some("axes.workloads[1].work")
    );
}

#[test]
fn invalid_toml_gives_no_spans_and_odd_values_do_not_break_them() {
    assert!(Spans::parse("tasks = [4,").is_none());
    let text = "when = 1979-05-27T07:32:00Z\n\"quoted key\" = 1.5\n";
    let t = Spans::parse(text).unwrap();
    // A date is a scalar: its value is the place.
    assert_eq!(t.offset_of(&parse_path("when")), Some(at(text, "1979")));
    assert_eq!(
        t.path_at(at(text, "quoted"))
            .map(|p| render_path(&p))
            .as_deref(),
        Some("\"quoted key\"")
    );
}
