//! The HTML report (index.html): one self-contained page with the run and its environment
//! record, warnings, exploratory comparisons, figures inline as SVG, and every table. No scripts, no
//! external requests: it works offline and from a copied directory.

use super::tables::{self, env_rows};
use crate::error::RenderError;
use crate::model::plot_data::Figure;
use crate::model::{Metric, Report, EXPLORATORY_HEADING, EXPLORATORY_NOTE};
use minijinja::{context, Environment, Value};

/// The page template (minijinja, HTML auto-escaping).
const TEMPLATE: &str = r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>schedlab report: run {{ run.run_id }} {{ run.name }}</title>
<style>
body { font-family: "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; max-width: 1180px; margin: 0 auto; padding: 1em 2em 4em; color: #222; line-height: 1.45; font-size: 15px; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
h3 { margin-top: 1.6em; }
table { border-collapse: collapse; margin: .3em 0 1.2em; font-size: 13px; }
th, td { border-bottom: 1px solid #e2e2e2; padding: 3px 9px; text-align: right; white-space: nowrap; }
th { background: #f2f2f2; border-bottom: 1px solid #bbb; }
td:nth-child(-n+2), th:nth-child(-n+2) { text-align: left; }
td.wrap { white-space: normal; text-align: left; }
caption { caption-side: top; text-align: left; font-weight: bold; padding: 4px 0; font-size: 14px; }
.scroll { overflow-x: auto; }
.warn { background: #fff5e6; border-left: 5px solid #e69500; padding: .3em 1.2em; }
.meta { display: grid; grid-template-columns: max-content auto; gap: 2px 1.2em; margin: 0; }
.meta dt { color: #666; }
.meta dd { margin: 0; }
ul.sentences li { margin-bottom: .35em; }
figure { margin: 1em 0 2.2em; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 13px; color: #444; max-width: 800px; }
details { margin: .4em 0; }
summary { cursor: pointer; font-weight: bold; }
pre { background: #f6f6f6; padding: .6em; overflow-x: auto; font-size: 13px; }
nav { font-size: 14px; }
nav a { margin-right: 1em; }
code { background: #f3f3f3; padding: 0 .2em; }
table.claims { width: 100%; table-layout: auto; }
table.claims td, table.claims th { white-space: normal; overflow-wrap: anywhere; vertical-align: top; }
table.claims td:nth-child(1) { min-width: 8em; }
table.claims td:nth-child(4) { min-width: 12em; }
table.claims td:nth-child(3) { text-align: left; }
ol.notes { font-size: 13px; color: #444; margin-top: -.6em; }
</style>
</head>
<body>
{%- macro table(t, wrap_last=false, caption=true) %}
<div class="scroll"><table>
{%- if caption %}
<caption>{{ t.title }}</caption>
{%- endif %}
<thead><tr>{% for h in t.header %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>
{%- for row in t.rows %}
<tr>{% for c in row %}<td{% if wrap_last and loop.last %} class="wrap"{% endif %}>{{ c }}</td>{% endfor %}</tr>
{%- endfor %}
</tbody></table></div>
{%- endmacro %}
<h1>schedlab report: run {{ run.run_id }} “{{ run.name }}”</h1>
{{ claims_html|safe }}
<h2 id="exploratory">{{ exploratory_heading }}</h2>
<p>{{ exploratory_note }}</p>
{%- if primary %}
{{ table(primary) }}
{%- endif %}
{%- if sentences %}
<ul class="sentences">
{%- for g in sentences %}
<li><strong>{{ g.label }}</strong><ul>
{%- for s in g.sentences %}
<li>{{ s }}</li>
{%- endfor %}
</ul></li>
{%- endfor %}
</ul>
{%- else %}
<p>No group has two policies with data to compare.</p>
{%- endif %}
{%- if exploratory.rows %}
<details><summary>Every tested metric ({{ exploratory.rows|length }} comparisons)</summary>
{{ table(exploratory) }}
</details>
{%- endif %}
<nav><p>{% if warnings %}<a href="#warnings">Warnings ({{ warnings|length }})</a>{% endif %}<a href="#exploratory">Exploratory comparisons</a><a href="#figures">Figures</a><a href="#tables">Tables</a><a href="#methods">Methods</a><a href="#environment">Environment</a></p></nav>
{%- if warnings %}
<section class="warn" id="warnings"><h2>Warnings</h2><ul>
{%- for w in warning_kinds %}
<li>{{ w }}</li>
{%- endfor %}
</ul>
{%- if warnings|length > warning_kinds|length %}
<details><summary>every warning ({{ warnings|length }})</summary><ul>
{%- for w in warnings %}
<li>{{ w }}</li>
{%- endfor %}
</ul></details>
{%- endif %}
</section>
{%- endif %}
<dl class="meta">
<dt>started</dt><dd>{{ run.started_at }}</dd>
<dt>finished</dt><dd>{{ run.finished_at or "-" }} ({{ run.status }})</dd>
<dt>trials</dt><dd>{{ stored }} stored of {{ run.trials_planned }} planned, {{ cells }} cells; warm-up trials {{ "included" if include_warmup else "excluded" }}</dd>
<dt>seed</dt><dd>{{ run.seed }} (trial order and the simulations behind power statements)</dd>
<dt>schedlab</dt><dd>{{ run.version }}</dd>
<dt>command</dt><dd><code>{{ run.argv }}</code></dd>
</dl>
<h2 id="figures">Figures</h2>
{%- for p in panels %}
<h3>{{ p.label }}</h3>
{%- for f in p.figures %}
<figure id="fig-{{ f.id }}">
{{ f.svg }}
<figcaption>{{ f.caption }} <a href="plots/{{ f.id }}.png">PNG</a> · <a href="plots/{{ f.id }}.svg">SVG</a></figcaption>
</figure>
{%- endfor %}
{%- else %}
<p>No figures: no cell has data.</p>
{%- endfor %}
<h2 id="tables">Tables</h2>
{%- for t in key_tables %}
{{ table(t) }}
{%- endfor %}
{{ table(cells_table, true) }}
<h3>Summaries per cell and metric</h3>
<p>Median and mean with their 95% CIs, sd, 5th and 95th percentiles, min, max and range, over the trials (per-task metrics: each trial's median over its tasks; n is trials); then, titled as pooled, every task of every trial of the per-task metrics (n is tasks).</p>
{%- for s in summaries %}
<details{% if s.open %} open{% endif %}><summary>{{ s.table.title }}</summary>
{{ table(s.table, caption=false) }}
</details>
{%- endfor %}
{%- if pairs.rows %}
<h3>Tests</h3>
<details><summary>Pairwise tests ({{ pairs.rows|length }} pairs)</summary>
{{ table(pairs) }}
</details>
{%- endif %}
<h2 id="methods">Methods</h2>
<ul>
{%- for n in methods %}
<li>{{ n }}</li>
{%- endfor %}
</ul>
<h2 id="environment">Environment</h2>
{%- if env %}
<div class="scroll"><table>
<caption>Environment record of the run (runs.env_json)</caption>
<tbody>
{%- for kv in env %}
<tr><td>{{ kv[0] }}</td><td class="wrap">{{ kv[1] }}</td></tr>
{%- endfor %}
</tbody></table></div>
{%- else %}
<p>The run has no environment record.</p>
{%- endif %}
<details><summary>Spec as run</summary><pre>{{ run.spec_toml }}</pre></details>
</body>
</html>
"##;

/// The SVG without its XML declaration, for inlining into HTML.
fn inline_svg(svg: &str) -> &str {
    match (svg.trim_start().starts_with("<?xml"), svg.find("?>")) {
        (true, Some(end)) => svg[end + 2..].trim_start(),
        _ => svg,
    }
}

/// Any serialisable value as a template value (minijinja is built without its serde feature).
fn to_value<T: serde::Serialize>(x: T) -> Value {
    fn convert(v: serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::from(()),
            serde_json::Value::Bool(b) => Value::from(b),
            serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Value::from(i),
                (None, Some(f)) => Value::from(f),
                _ => Value::from(n.to_string()),
            },
            serde_json::Value::String(s) => Value::from(s),
            serde_json::Value::Array(a) => {
                Value::from(a.into_iter().map(convert).collect::<Vec<_>>())
            }
            serde_json::Value::Object(m) => Value::from(
                m.into_iter()
                    .map(|(k, v)| (k, convert(v)))
                    .collect::<std::collections::BTreeMap<String, Value>>(),
            ),
        }
    }
    // Serialising plain data structs to JSON cannot fail.
    convert(serde_json::to_value(x).unwrap_or(serde_json::Value::Null))
}

/// The page, with `figs` inline (`svgs[i]` is the SVG of `figs[i]`).
pub fn render(r: &Report, figs: &[Figure], svgs: &[String]) -> Result<String, RenderError> {
    let mut env = Environment::new();
    let template = |what| move |source| RenderError::Template { what, source };
    env.add_template("index.html", TEMPLATE)
        .map_err(template("the HTML report template does not parse"))?;
    let panels: Vec<Value> = r
        .panels
        .iter()
        .enumerate()
        .map(|(pi, p)| {
            let figures: Vec<Value> = figs
                .iter()
                .zip(svgs)
                .filter(|(f, _)| f.panel == pi)
                .map(|(f, svg)| {
                    context! {
                        id => f.id.clone(),
                        caption => f.caption.clone(),
                        svg => Value::from_safe_string(inline_svg(svg).to_string()),
                    }
                })
                .collect();
            context! { label => p.label.clone(), figures => figures }
        })
        .collect();
    let summaries = summary_tables(r);
    // Headline sentences, grouped by the group they are about.
    let sentences: Vec<Value> = r
        .groups
        .iter()
        .enumerate()
        .filter_map(|(gi, g)| {
            let list: Vec<String> = r
                .exploratory
                .iter()
                .filter(|f| f.group == gi && f.metric.headline())
                .map(|f| super::exploratory::sentence(&g.label, f))
                .collect();
            (!list.is_empty())
                .then(|| context! { label => g.label.clone(), sentences => to_value(&list) })
        })
        .collect();
    let key_tables: Vec<_> = (0..r.panels.len())
        .map(|p| tables::key_table(r, p))
        .filter(|t| !t.rows.is_empty())
        .chain(super::sections::latency_table(&r.kernel))
        .chain(super::sections::io_tests_table(&r.iosched))
        .chain(super::sections::groups_table(&r.cgroups))
        .chain(super::quality::tables(&r.quality))
        .collect();
    let ctx = context! {
        run => to_value(&r.run),
        stored => r.cells.iter().map(|c| c.trials_total).sum::<i64>(),
        cells => r.cells.len(),
        include_warmup => r.include_warmup,
        warnings => to_value(super::notes::warnings(r)),
        warning_kinds => to_value(r.warning_kinds.iter().map(super::notes::kind_line).collect::<Vec<_>>()),
        sentences => sentences,
        exploratory => to_value(tables::exploratory_table(r)),
        primary => to_value(tables::primary_table(r)),
        panels => panels,
        key_tables => to_value(&key_tables),
        cells_table => to_value(tables::cells_table(r)),
        summaries => summaries,
        pairs => to_value(tables::pairs_table(r)),
        methods => to_value(super::notes::method_notes(r)),
        env => to_value(env_rows(r.run.env_json.as_deref())),
        claims_html => super::claims::html::render(r.claims.as_ref()),
        exploratory_heading => EXPLORATORY_HEADING,
        exploratory_note => EXPLORATORY_NOTE,
    };
    env.get_template("index.html")
        .and_then(|t| t.render(ctx))
        .map_err(template("cannot render the HTML report"))
}

/// The summary tables over the trial values (the headline metrics' open), then the per-task
/// metrics pooled over every task, closed.
fn summary_tables(r: &Report) -> Vec<Value> {
    Metric::ALL
        .iter()
        .map(|&m| (m, tables::summary_table(r, m), m.headline()))
        .chain(
            Metric::ALL
                .iter()
                .filter(|m| m.per_task())
                .map(|&m| (m, tables::pooled_table(r, m), false)),
        )
        .filter(|(_, t, _)| !t.rows.is_empty())
        .map(|(_, t, open)| context! { table => to_value(&t), open => open })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_xml_declaration_is_dropped_before_inlining() {
        assert_eq!(inline_svg("<?xml version=\"1.0\"?>\n<svg/>"), "<svg/>");
        assert_eq!(inline_svg("<svg/>"), "<svg/>");
    }
}
