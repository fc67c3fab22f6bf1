//! The report's model holds values, not text (issue 28): no production file under
//! `crates/report/src/model/` calls `format!` or a text formatter of `model::fmt` (an
//! identifier `fmt_*`), but the files still listed below, each with why. A listed file that no
//! longer formats fails the check too, so the list only shrinks.

use super::{read, relative, workspace};
use syn::visit::{self, Visit};

/// Files under `crates/report/src/model/` that still format text, and why: each is a label,
/// a figure's id, title or caption, or the table printed after a run. Issue 28 round 2 made
/// the sections' tables (workload, iosched, cgroups, kernel), the exploratory comparisons,
/// compare, quality and the notes (with `warning.rs`) values; the formatters moved to
/// `render/fmt.rs`.
const PENDING: &[(&str, &str)] = &[
    (
        "workload.rs",
        "the group label's prefix that other_axes strips",
    ),
    (
        "iosched.rs",
        "a pooled command label, figure ids, titles and captions",
    ),
    ("cgroups.rs", "cell labels and series names of its figures"),
    ("kernel.rs", "cell labels, figure ids, titles and lanes"),
    ("figures.rs", "figure ids and captions"),
    ("workload_plots.rs", "figure captions and series labels"),
    ("layout.rs", "group and panel labels"),
    ("baseline.rs", "treatment labels"),
    ("machines.rs", "treatment labels with the machine"),
    ("run_table.rs", "the table after a run as text"),
];

/// The lines of production code (outside `#[cfg(test)]` modules and `#[test]` functions) that
/// call `format!` or name an identifier starting with `fmt_`.
#[derive(Default)]
struct Formats {
    lines: Vec<(usize, String)>,
}

impl<'ast> Visit<'ast> for Formats {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !super::source::is_test_attr(&m.attrs) {
            visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !super::source::is_test_attr(&f.attrs) {
            visit::visit_item_fn(self, f);
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if let Some(last) = m.path.segments.last() {
            if last.ident == "format" {
                self.lines
                    .push((last.ident.span().start().line, "format!".into()));
            }
        }
        visit::visit_macro(self, m);
    }

    fn visit_ident(&mut self, i: &'ast syn::Ident) {
        let name = i.to_string();
        if name.starts_with("fmt_") {
            self.lines.push((i.span().start().line, name));
        }
    }
}

fn formats(file: &syn::File) -> Vec<(usize, String)> {
    let mut v = Formats::default();
    v.visit_file(file);
    v.lines
}

#[test]
fn the_report_model_formats_no_text_but_in_the_files_still_pending() {
    let ws = workspace();
    let report = ws
        .packages
        .iter()
        .find(|p| p.name == "schedlab-report")
        .expect("schedlab-report in the workspace");
    let model = ws.root.join("crates/report/src/model");
    let files: Vec<_> = super::production_files(report)
        .into_iter()
        .filter(|f| f.starts_with(&model))
        .collect();
    assert!(files.len() > 10, "{files:?}");
    let (mut wrong, mut stale) = (Vec::new(), Vec::new());
    for (name, _) in PENDING {
        assert!(
            files.iter().any(|f| f.ends_with(name)),
            "model/{name} is no production file: take it out of PENDING"
        );
    }
    for f in &files {
        let (_, file) = read(f);
        let found = formats(&file);
        let name = f.strip_prefix(&model).unwrap().display().to_string();
        let pending = PENDING.iter().any(|(p, _)| *p == name);
        if pending && found.is_empty() {
            stale.push(name);
        } else if !pending {
            let at = relative(&ws, f);
            wrong.extend(
                found
                    .iter()
                    .map(|(line, what)| format!("{at}:{line}: {what}")),
            );
        }
    }
    assert!(
        wrong.is_empty(),
        "the report model formats text (keep numbers with their unit and enums in the model, and word them under render/):\n{}",
        wrong.join("\n")
    );
    assert!(
        stale.is_empty(),
        "formats no text any more: take it out of PENDING in tests/architecture/model_text.rs: {stale:?}"
    );
}

#[test]
fn the_model_text_check_finds_formatting_outside_tests_only() {
    let found = |text: &str| formats(&super::source::parse("t.rs", text));
    assert_eq!(
        found("fn f(x: f64) -> String {\n    format!(\"{x:.2}\")\n}\n"),
        [(2, "format!".to_string())]
    );
    assert_eq!(
        found("fn f(x: f64) -> String {\n    std::format!(\"{x}\")\n}\n").len(),
        1
    );
    assert_eq!(
        found("use super::fmt::fmt_ratio_bare;\nfn f() {}\n"),
        [(1, "fmt_ratio_bare".to_string())]
    );
    assert_eq!(
        found("fn f(r: f64) -> usize {\n    super::fmt_with_unit(r, M).len()\n}\n"),
        [(2, "fmt_with_unit".to_string())]
    );
    for clean in [
        "#[cfg(test)]\nmod tests {\n    fn f() -> String { format!(\"x\") }\n}\n",
        "#[test]\nfn t() { let _ = fmt_num(1.0); }\n",
        "//! Worded by `format!` in render.\nuse std::fmt;\nfn f() -> u8 { 1 }\n",
        "fn f() -> &'static str { \"fmt_num\" }\n",
    ] {
        assert!(found(clean).is_empty(), "{clean}");
    }
}
