//! The `report`, `stats` and `compare` subcommands: read a run's stored rows, compute the
//! report, then write it (HTML, LaTeX, Markdown, CSV, plots) or print it as terminal tables.

use super::error::ReportError;
use super::model::figures::{self, Figure};
use super::model::tables::{self, Table};
use super::model::{self, Metric, Report, ReportInput};
use super::terminal::terminal_table;
use super::{compare, csv_tables, html, latex, markdown, pool};
use schedlab_store::error::Context;
use schedlab_store::{kernel, query, Location, Store};
use std::path::{Path, PathBuf};

/// An output format of `schedlab report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// index.html: self-contained page, plots inline as SVG (PNG copies in plots/).
    Html,
    /// report.tex: booktabs tables, ready to paste.
    Latex,
    /// report.md: summary with findings, key tables and figure links.
    Markdown,
    /// csv/*.csv: every table, full precision.
    Csv,
}

/// Which runs `report` and `stats` read, and which of their trials.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Results database.
    pub db: Location,
    /// Run id (None: the latest run).
    pub run: Option<i64>,
    /// Several runs of one spec, reported together (host and kernel become treatments).
    pub runs: Vec<i64>,
    /// Every run whose spec hash starts with this, reported together.
    pub spec_hash: Option<String>,
    /// Include warm-up trials.
    pub include_warmup: bool,
    /// The policy the others are compared with (None: the first of the policy axis).
    pub baseline: Option<String>,
    /// Leave the trials flagged noisy out.
    pub exclude_noisy: bool,
    /// Claims declared now (`--claim`), after the data: exploratory.
    pub post_hoc: Vec<schedlab_spec::ClaimSpec>,
    /// Verdicts keep the trials flagged disturbed.
    pub include_disturbed: bool,
}

type Result<T, E = ReportError> = std::result::Result<T, E>;

impl Selection {
    /// The chosen runs and everything their report needs.
    fn load(&self) -> Result<(Vec<i64>, ReportInput)> {
        let store = Store::open_read(&self.db)?;
        let ids = pool::chosen_runs(&store, self.run, &self.runs, self.spec_hash.as_deref())?;
        let input = with_baseline(
            pool::load(&store, &ids, self.include_warmup)?,
            self.baseline.as_deref(),
        )?;
        let input = self.with_claims(input)?;
        Ok((ids, with_exclusions(input, self.exclude_noisy)))
    }

    /// `input` with the claims asked for; a `--claim` the run cannot have is a bad selection.
    fn with_claims(&self, mut input: ReportInput) -> Result<ReportInput> {
        input.claims = super::claims::ClaimsRequest {
            post_hoc: self.post_hoc.clone(),
            include_disturbed: self.include_disturbed,
            ..Default::default()
        };
        super::claims::claims_of(&input.run.spec_toml, &input.claims)
            .map_err(ReportError::BadSelection)?;
        Ok(input)
    }
}

/// What `schedlab report` writes.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// The runs and trials reported.
    pub selection: Selection,
    /// Formats to write.
    pub formats: Vec<ReportFormat>,
    /// Output directory; the report goes into `out/RUN/`.
    pub out: PathBuf,
}

/// What `schedlab stats` prints.
#[derive(Debug, Clone)]
pub struct StatsOptions {
    /// The runs and trials summarised.
    pub selection: Selection,
    /// Every column of every table (default: the key columns, within 120 columns).
    pub wide: bool,
}

/// What `schedlab compare` compares.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// Run A, the baseline.
    pub a: i64,
    /// Run B (ratios are B/A).
    pub b: i64,
    /// Database of both runs, or of run A when `db_b` is given.
    pub db: Location,
    /// Database of run B, when it is another one.
    pub db_b: Option<Location>,
    /// Include warm-up trials.
    pub include_warmup: bool,
    /// Compare cells whose work per task differs (refused by default).
    pub allow_different_work: bool,
}

/// Scale of the PNG copies of the figures (2: 1600x960 px, sharp in print).
const PNG_SCALE: f32 = 2.0;

/// Reads everything a report of `run_id` needs from the store.
pub fn load_input(store: &Store, run_id: i64, include_warmup: bool) -> Result<ReportInput> {
    let cells = query::cells(store, run_id, include_warmup)
        .with_context(|| format!("cannot read the cells of run {run_id}"))?;
    let groups = schedlab_store::groups::group_rows(store, run_id, include_warmup)
        .with_context(|| format!("cannot read the task groups of run {run_id}"))?;
    Ok(ReportInput {
        run: query::run_info(store, run_id)?,
        cgroups: model::cgroups::build(&groups, &cells),
        cells,
        warnings: query::warnings(store, run_id)?,
        problems: query::problems(store, run_id, include_warmup)?,
        include_warmup,
        kernel: model::kernel::build(
            &kernel::kernel_rows(store, run_id, include_warmup).with_context(|| {
                format!("cannot read the latency histograms and traces of run {run_id}")
            })?,
        ),
        iosched: model::iosched::build(
            &kernel::scheduler_samples(
                store,
                run_id,
                include_warmup,
                &model::iosched::column_names(),
            )
            .with_context(|| format!("cannot read the samples of run {run_id}"))?,
        ),
        baseline: None,
        quality: schedlab_store::quality::trial_quality(store, run_id, include_warmup)
            .with_context(|| format!("cannot read the trials of run {run_id}"))?,
        exclude_noisy: false,
        claims: Default::default(),
    })
}

/// `input` with the trials flagged noisy left out when `exclude` is set.
fn with_exclusions(mut input: ReportInput, exclude: bool) -> ReportInput {
    if exclude {
        model::quality::exclude_noisy(&mut input);
    }
    input
}

/// Sets `input`'s baseline; [`ReportError::BadSelection`] for a policy the run does not have.
fn with_baseline(mut input: ReportInput, baseline: Option<&str>) -> Result<ReportInput> {
    if let Some(b) = baseline {
        model::baseline::check(&input, b).map_err(ReportError::BadSelection)?;
        input.baseline = Some(b.to_string());
    }
    Ok(input)
}

/// `schedlab report`: writes the chosen formats into `OUT/RUN/`.
pub fn report(args: &ReportOptions) -> Result<()> {
    let (ids, input) = args.selection.load()?;
    let report = model::build(&input);
    let dir = args.out.join(pool::dir_name(&ids));
    let written = write_report(&report, &args.formats, &dir)?;
    match ids.as_slice() {
        [one] => println!("report of run {one} in {}:", dir.display()),
        _ => println!(
            "report of runs {} in {}:",
            ids.iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            dir.display()
        ),
    }
    for w in written {
        println!("  {w}");
    }
    Ok(())
}

/// Writes `formats` of `r` into `dir` (created); returns one line per output written.
pub fn write_report(r: &Report, formats: &[ReportFormat], dir: &Path) -> Result<Vec<String>> {
    let has = |f: ReportFormat| formats.contains(&f);
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let write = |name: &str, text: &str| -> Result<()> {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| ReportError::Write { path, source })
    };
    let mut written = Vec::new();
    let figs = if has(ReportFormat::Html) || has(ReportFormat::Markdown) {
        figures::figures(r)
    } else {
        Vec::new()
    };
    let svgs = render_figures(&figs, &dir.join("plots"))?;
    if !figs.is_empty() {
        written.push(format!("plots/ ({} figures, SVG and PNG)", figs.len()));
    }
    if has(ReportFormat::Html) {
        let page =
            html::render(r, &figs, &svgs).map_err(|e| ReportError::Render(format!("{e:#}")))?;
        write("index.html", &page)?;
        written.push("index.html".into());
    }
    if has(ReportFormat::Markdown) {
        write("report.md", &markdown::render(r, &figs))?;
        written.push("report.md".into());
    }
    if has(ReportFormat::Latex) {
        write("report.tex", &latex::render(r))?;
        written.push("report.tex".into());
    }
    if has(ReportFormat::Csv) {
        let csv_dir = dir.join("csv");
        std::fs::create_dir_all(&csv_dir).map_err(|source| ReportError::Write {
            path: csv_dir.clone(),
            source,
        })?;
        let files = csv_tables::tables(r).map_err(|e| ReportError::Render(format!("{e:#}")))?;
        for (name, text) in &files {
            let path = csv_dir.join(name);
            std::fs::write(&path, text).map_err(|source| ReportError::Write { path, source })?;
        }
        written.push(format!("csv/ ({} tables)", files.len()));
    }
    Ok(written)
}

/// Renders every figure to SVG (returned, in order) and writes `ID.svg` and `ID.png` into
/// `plot_dir`, on all CPUs. A PNG that cannot be rendered is a warning: the SVG remains.
fn render_figures(figs: &[Figure], plot_dir: &Path) -> Result<Vec<String>> {
    if figs.is_empty() {
        return Ok(Vec::new());
    }
    std::fs::create_dir_all(plot_dir).map_err(|source| ReportError::Write {
        path: plot_dir.to_path_buf(),
        source,
    })?;
    model::par_map(figs, |f| render_one(f, plot_dir))
        .into_iter()
        .collect()
}

/// One figure: SVG text, written with its PNG copy.
fn render_one(fig: &Figure, plot_dir: &Path) -> Result<String> {
    let svg = fig.svg();
    let svg_path = plot_dir.join(format!("{}.svg", fig.id));
    std::fs::write(&svg_path, &svg).map_err(|source| ReportError::Write {
        path: svg_path.clone(),
        source,
    })?;
    match super::plots::svg_to_png(&svg, PNG_SCALE) {
        Ok(png) => {
            let path = plot_dir.join(format!("{}.png", fig.id));
            std::fs::write(&path, png).map_err(|source| ReportError::Write { path, source })?;
        }
        Err(e) => eprintln!(
            "warning: figure {} has no PNG copy ({e}); its SVG is in {}",
            fig.id,
            svg_path.display()
        ),
    }
    Ok(svg)
}

/// `schedlab stats`: the report's findings and summaries as terminal tables.
pub fn stats(args: &StatsOptions) -> Result<()> {
    let (_, input) = args.selection.load()?;
    print!("{}", render_stats(&model::build(&input), args.wide));
    Ok(())
}

/// The columns of a summary table `stats` shows without `--wide`: group, policy, n, median,
/// its CI, mean, sd, p5, p95.
const SUMMARY_KEY_COLUMNS: [usize; 9] = [0, 1, 2, 3, 4, 5, 7, 8, 9];

/// The columns of the pairwise table without `--wide`: group, metric, pair, Mann-Whitney's
/// Holm-adjusted p, Cliff's delta.
const PAIRS_KEY_COLUMNS: [usize; 5] = [0, 1, 2, 6, 8];

/// Longest reason shown in the trials table without `--wide` (the warnings have it whole).
const REASON_CHARS: usize = 48;

/// The text printed by `schedlab stats`; `wide`: every column, else the key columns, which
/// fit 120 columns for typical runs.
pub fn render_stats(r: &Report, wide: bool) -> String {
    let mut out = format!(
        "run {} \"{}\" ({}), started {}, seed {}\n",
        r.run.run_id, r.run.name, r.run.status, r.run.started_at, r.run.seed
    );
    out += &r
        .claims
        .as_ref()
        .map(super::claims::terminal::render)
        .map(|c| format!("\n{c}"))
        .unwrap_or_default();
    out += &warnings_section(r);
    out += &findings_section(r, wide);
    for t in kernel_tables(r, wide) {
        out += &terminal_table(&t);
        out += "\n";
    }
    out += &terminal_table(&cells_table(r, wide));
    for t in detail_tables(r, wide) {
        out += "\n";
        out += &terminal_table(&t);
    }
    if !wide {
        out += "\n(key columns only; --wide shows every column)\n";
    }
    out += "\nMethods\n";
    for note in &r.methods.notes {
        out += &format!("- {note}\n");
    }
    out
}

/// The warnings shown, with a pointer to the rest; empty without warnings.
fn warnings_section(r: &Report) -> String {
    let (shown, more) = r.warnings_shown();
    if shown.is_empty() {
        return String::new();
    }
    let mut out = "\nWarnings\n".to_string();
    for w in shown {
        out += &format!("- {w}\n");
    }
    if more > 0 {
        out += &format!(
            "- ... and {more} more (`schedlab show {}` lists every stored warning)\n",
            r.run.run_id
        );
    }
    out
}

/// The headline findings as sentences, then the findings' table (narrow: one per group,
/// with the legend in two lines).
fn findings_section(r: &Report, wide: bool) -> String {
    let mut out = "\nFindings\n".to_string();
    let headline: Vec<&str> = r
        .findings
        .iter()
        .filter(|f| f.metric.headline())
        .map(|f| f.sentence.as_str())
        .collect();
    if headline.is_empty() {
        out += "- No group has two policies with data to compare.\n";
    }
    for s in headline {
        out += &format!("- {s}\n");
    }
    out += "\n";
    if r.findings.is_empty() {
        return out;
    }
    if wide {
        out += &terminal_table(&tables::findings_table(r));
    } else {
        for t in tables::findings_tables_narrow(r) {
            out += &terminal_table(&t);
            out += "\n";
        }
        // The legend in two lines, within 120 columns.
        let legend = tables::VERDICT_LEGEND;
        match legend.find("; too few") {
            Some(i) => out += &format!("{}\n{}\n", &legend[..i + 1], &legend[i + 2..]),
            None => out += &format!("{legend}\n"),
        }
    }
    out + "\n"
}

/// The kernel's tables: wake-up latency, I/O scheduler tests, task groups. Without `wide`:
/// latency without min and p99.9, I/O scheduler tests without their statistics (the
/// p-values stay).
fn kernel_tables(r: &Report, wide: bool) -> Vec<Table> {
    let key = |t: Table, columns: &[usize]| if wide { t } else { t.keep(columns) };
    let latency = model::kernel::latency_table(&r.kernel).map(|t| key(t, &[0, 1, 2, 4, 6, 8]));
    let io = model::iosched::tests_table(&r.iosched).map(|t| key(t, &[0, 1, 2, 4, 6]));
    let groups = model::cgroups::table(&r.cgroups).map(|t| key(t, &[0, 1, 2, 3, 4, 5, 7, 8, 10]));
    latency.into_iter().chain(io).chain(groups).collect()
}

/// The trials per cell; without `wide`, reasons cut to [`REASON_CHARS`].
fn cells_table(r: &Report, wide: bool) -> Table {
    let mut cells = tables::cells_table(r);
    if !wide {
        for row in &mut cells.rows {
            if let Some(reason) = row.last_mut() {
                if reason.chars().count() > REASON_CHARS {
                    *reason = reason.chars().take(REASON_CHARS - 1).collect::<String>() + "…";
                }
            }
        }
    }
    cells
}

/// The workload, quality, summary and pairwise tables, key columns only without `wide`.
fn detail_tables(r: &Report, wide: bool) -> Vec<Table> {
    let mut out: Vec<Table> = model::workload::tables(r)
        .into_iter()
        .map(|t| if wide { t } else { model::workload::narrow(&t) })
        .collect();
    out.extend(model::quality::tables(&r.quality));
    for m in Metric::ALL {
        let t = tables::summary_table(r, m);
        if !t.rows.is_empty() {
            out.push(if wide {
                t
            } else {
                t.keep(&SUMMARY_KEY_COLUMNS)
            });
        }
    }
    let pairs = tables::pairs_table(r);
    if !pairs.rows.is_empty() {
        out.push(if wide {
            pairs
        } else {
            pairs.keep(&PAIRS_KEY_COLUMNS)
        });
    }
    out
}

/// `schedlab compare A B`: the same cells of two runs, B against A.
pub fn compare(args: &CompareOptions) -> Result<()> {
    let store_a = Store::open_read(&args.db)?;
    store_a
        .require_run(args.a)
        .with_context(|| format!("run A ({}), in {}", args.a, args.db.display()))?;
    let input_a = load_input(&store_a, args.a, args.include_warmup)?;
    let db_b: Location = args.db_b.clone().unwrap_or_else(|| args.db.clone());
    let store_b = Store::open_read(&db_b)?;
    store_b
        .require_run(args.b)
        .with_context(|| format!("run B ({}), in {}", args.b, db_b.display()))?;
    let input_b = load_input(&store_b, args.b, args.include_warmup)?;
    let mut c = compare::compare(&input_a, &input_b);
    if !args.allow_different_work {
        if let Some(why) = c.refusal() {
            return Err(ReportError::BadSelection(why));
        }
    }
    if args.db_b.is_some() {
        c.a = format!("{} in {}", c.a, args.db.display());
        c.b = format!("{} in {}", c.b, db_b.display());
    }
    print!("{}", compare::render(&c));
    Ok(())
}
