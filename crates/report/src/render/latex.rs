//! LaTeX tables (booktabs) ready to paste into a paper (report.tex): study 001's execution,
//! response and turnaround time per policy and load for each panel, and the headline exploratory comparisons.

use crate::model::{Metric, Report};
use crate::render::fmt::{fmt_effect, fmt_num, fmt_with_unit, median_ci_coverage};

/// Text with every character LaTeX gives a meaning escaped: the ten specials, `<`, `>` and
/// `|` (which the default font turns into other glyphs), and every control or bidirectional
/// character made a space (a CR ends a line, so a `%` comment, for TeX).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\\' => out += "\\textbackslash{}",
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(ch);
            }
            '~' => out += "\\textasciitilde{}",
            '^' => out += "\\textasciicircum{}",
            '<' => out += "\\textless{}",
            '>' => out += "\\textgreater{}",
            '|' => out += "\\textbar{}",
            c if schedlab_core::text::is_unsafe(c) => out.push(' '),
            _ => out.push(ch),
        }
    }
    out
}

/// A label-safe form of `s`: letters, digits and '-'.
fn label(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// A p-value in math mode: "$0.004$" or "$< 0.001$".
fn tex_p(p: Option<f64>) -> String {
    match p {
        None => "--".into(),
        Some(p) if p < 0.001 => "$< 0.001$".into(),
        Some(p) => format!("${p:.3}$"),
    }
}

/// One measure's rows of a panel's table: a row per policy with data, its median and CI per
/// task count ("--" where the policy has no cell); the measure's name on the first row.
fn measure_rows(r: &Report, panel: usize, metric: Metric, name: &str) -> String {
    let p = &r.panels[panel];
    let mut block = String::new();
    for policy in &p.policies {
        let values: Vec<Option<String>> = p
            .groups
            .iter()
            .map(|&g| {
                let s = &r.cell_of(g, policy)?.summary(metric)?.summary;
                let coverage = median_ci_coverage(s)
                    .map_or(String::new(), |c| format!(" {}", c.replace('%', "\\%")));
                Some(format!(
                    "{} {{\\footnotesize [{}, {}]{coverage}}}",
                    fmt_num(s.median),
                    fmt_num(s.median_ci.0),
                    fmt_num(s.median_ci.1)
                ))
            })
            .collect();
        if values.iter().all(Option::is_none) {
            continue;
        }
        let cells: Vec<String> = values
            .into_iter()
            .map(|v| v.unwrap_or_else(|| "--".into()))
            .collect();
        block += &format!(
            "    {} & {} & {} \\\\\n",
            if block.is_empty() { name } else { "" },
            escape(policy),
            cells.join(" & ")
        );
    }
    block
}

/// Study 001's table for one panel.
fn panel_table(r: &Report, panel: usize) -> Option<String> {
    let p = &r.panels[panel];
    let n = p.groups.len();
    let blocks: Vec<String> = [
        (Metric::Makespan, "Execution"),
        (Metric::Response, "Response"),
        (Metric::Turnaround, "Turnaround"),
    ]
    .into_iter()
    .map(|(metric, name)| measure_rows(r, panel, metric, name))
    .filter(|b| !b.is_empty())
    .collect();
    let body = blocks.join("    \\addlinespace\n");
    if body.is_empty() {
        return None;
    }
    let tasks: Vec<String> = p
        .groups
        .iter()
        .map(|&g| r.groups[g].tasks.to_string())
        .collect();
    Some(format!(
        "\\begin{{table}}[htbp]
  \\centering
  \\caption{{{}: execution (makespan), response and turnaround time in ms; median and 95\\% CI over trials (response, turnaround: each trial's median over its tasks); schedlab run {}.}}
  \\label{{tab:schedlab-run{}-{}}}
  \\begin{{tabular}}{{ll{}}}
    \\toprule
     & & \\multicolumn{{{n}}}{{c}}{{Tasks}} \\\\
    \\cmidrule(lr){{3-{}}}
    Measure & Policy & {} \\\\
    \\midrule
{body}    \\bottomrule
  \\end{{tabular}}
\\end{{table}}
",
        escape(&p.label),
        r.run.run_id,
        r.run.run_id,
        label(&p.label),
        "r".repeat(n),
        n + 2,
        tasks.join(" & "),
    ))
}

/// The headline exploratory comparisons as one table: every policy against its group's
/// baseline, with the effect, its CI and the unadjusted p; p below alpha marked with stars.
fn exploratory_table(r: &Report) -> Option<String> {
    let mut body = String::new();
    for f in r.exploratory.iter().filter(|f| f.metric.headline()) {
        let stars = if f.significant_at_01 {
            "$^{**}$"
        } else if f.significant_at_05 {
            "$^{*}$"
        } else if f.too_few_trials && f.p.is_some() {
            "$^{\\dagger}$"
        } else {
            ""
        };
        let effect = f.effect.as_ref().map_or("--".into(), |e| {
            let (est, rest) = match fmt_effect(e, Some(f.metric)).split_once(" [") {
                Some((est, rest)) => (est.to_string(), format!("[{rest}")),
                None => (String::new(), String::new()),
            };
            format!("{} {{\\footnotesize {}}}", escape(&est), escape(&rest))
        });
        body += &format!(
            "    {} & {} & {} & {} & {} & {} & {}{stars} & {} \\\\\n",
            escape(&r.groups[f.group].label),
            escape(f.metric.label()),
            escape(&f.policy),
            escape(&f.baseline),
            escape(&fmt_with_unit(f.median, f.metric)),
            escape(&fmt_with_unit(f.baseline_median, f.metric)),
            effect,
            tex_p(f.p),
        );
    }
    if body.is_empty() {
        return None;
    }
    Some(format!(
        "\\begin{{table}}[htbp]
  \\centering
  \\caption{{Exploratory comparisons (not declared as claims): every policy against its group's baseline, medians of the trial values (per-task metrics: of the trial medians), the effect policy / baseline (Hodges-Lehmann ratio, or the difference where a value is $\\le 0$) with its 95\\% CI from the exact Mann-Whitney distribution (its coverage where lower), and the unadjusted $p$ of the two-sided Mann-Whitney test on the trial values; $^{{*}}$ $p < 0.05$, $^{{**}}$ $p < 0.01$, $^{{\\dagger}}$ too few trials to reach $p < 0.05$; schedlab run {}.}}
  \\label{{tab:schedlab-run{}-exploratory}}
  \\begin{{tabular}}{{llllrrrr}}
    \\toprule
    Group & Metric & Policy & Baseline & Median & Baseline & Effect [95\\% CI] & $p$ (unadjusted) \\\\
    \\midrule
{body}    \\bottomrule
  \\end{{tabular}}
\\end{{table}}
",
        r.run.run_id, r.run.run_id
    ))
}

/// The whole file: a comment header, one table per panel, then the exploratory comparisons.
pub fn render(r: &Report) -> String {
    let mut out = format!(
        "% schedlab report of run {} \"{}\" (seed {}), schedlab {}.\n% Tables use booktabs: \\usepackage{{booktabs}} in the preamble.\n\n",
        r.run.run_id,
        escape(&r.run.name),
        r.run.seed,
        r.run.version
    );
    out += &super::claims::latex::render(r.claims.as_ref());
    for p in 0..r.panels.len() {
        if let Some(t) = panel_table(r, p) {
            out += &t;
            out += "\n";
        }
    }
    if let Some(t) = exploratory_table(r) {
        out += &t;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_characters_are_escaped_and_labels_are_plain() {
        assert_eq!(
            escape("a_b & 50% #1 {x} ~ ^"),
            "a\\_b \\& 50\\% \\#1 \\{x\\} \\textasciitilde{} \\textasciicircum{}"
        );
        assert_eq!(escape("c:\\d"), "c:\\textbackslash{}d");
        assert_eq!(
            escape("x\r\\immediate<a>|\u{1b}"),
            "x \\textbackslash{}immediate\\textless{}a\\textgreater{}\\textbar{} "
        );
        assert_eq!(
            label("cpu:pi, spread priorities"),
            "cpu-pi-spread-priorities"
        );
        assert_eq!(tex_p(Some(0.0004)), "$< 0.001$");
        assert_eq!(tex_p(None), "--");
    }
}
