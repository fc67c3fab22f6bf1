//! The `report`, `stats` and `compare` subcommands: read a run's stored rows, compute the
//! report ([`crate::model`]), then write it (HTML, LaTeX, Markdown, CSV, plots) or print it as
//! terminal tables ([`crate::render`]).

use super::error::{RenderError, ReportError};
use super::model::figures;
use super::model::plot_data::Figure;
use super::model::{self, Report, ReportInput};
use super::pool;
use super::render::{self, csv_tables, html, latex, markdown};
use schedlab_store::error::Context;
use schedlab_store::{Location, Store};
use schedlab_sys::OutDir;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// An output format of `schedlab report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// index.html: self-contained page, plots inline as SVG (PNG copies in plots/).
    Html,
    /// report.tex: booktabs tables, ready to paste.
    Latex,
    /// report.md: summary with claims, exploratory comparisons, key tables and figure links.
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
    /// Summaries and verdicts keep the trials flagged disturbed.
    pub include_disturbed: bool,
    /// Summaries and verdicts keep the trials flagged slowed.
    pub include_slowed: bool,
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
            include_slowed: self.include_slowed,
            ..Default::default()
        };
        super::claims::claims_of(&input.run, &input.claims).map_err(ReportError::Claims)?;
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
    /// Everything the compact view leaves out (`--all`): every column of every table, the
    /// exploratory comparisons of every tested metric, the pooled per-task tables.
    pub all: bool,
    /// Print the claims as JSON (`render::claims::json`) instead of the tables.
    pub json: bool,
    /// Verdicts that make `stats` report a failure when a declared claim has one.
    pub fail_on: Vec<schedlab_analyze::Verdict>,
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

/// `input` with the trials flagged noisy left out when `exclude` is set.
fn with_exclusions(mut input: ReportInput, exclude: bool) -> ReportInput {
    if exclude {
        model::quality::exclude_noisy(&mut input);
    }
    input
}

/// Sets `input`'s baseline; [`ReportError::UnknownBaseline`] for a policy the run does not have.
fn with_baseline(mut input: ReportInput, baseline: Option<&str>) -> Result<ReportInput> {
    if let Some(b) = baseline {
        model::baseline::check(&input, b).map_err(|accepted| ReportError::UnknownBaseline {
            baseline: b.to_string(),
            run_id: input.run.run_id,
            accepted,
        })?;
        input.baseline = Some(b.to_string());
    }
    Ok(input)
}

/// `schedlab report`: writes the chosen formats into `OUT/RUN/`.
pub fn report(args: &ReportOptions) -> Result<()> {
    let (ids, input) = args.selection.load()?;
    let report = model::report::build(&input);
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
        println!("  {}", schedlab_core::text::printable(&w));
    }
    Ok(())
}

/// The output directory `dir`, opened or created (mode 0755) under held, checked parents; a
/// directory someone else could plant links in is refused ([`ReportError::OutDir`]).
fn out_dir(dir: &Path) -> Result<OutDir> {
    OutDir::create_all(dir, 0o755).map_err(|source| {
        if schedlab_sys::SysError::of(&source).is_some() {
            ReportError::OutDir { source }
        } else {
            ReportError::Write {
                path: dir.to_path_buf(),
                source,
            }
        }
    })
}

/// Writes file `name` of `dir` with `text`: a new file renamed over the name, so a link found
/// there is replaced, never followed.
fn write_file(dir: &OutDir, name: &str, text: &[u8]) -> Result<()> {
    dir.write_file(name, 0o666, |f| f.write_all(text))
        .map_err(|source| ReportError::Write {
            path: dir.path().join(name),
            source,
        })
}

/// Writes `formats` of `r` into `dir` (created); returns one line per output written. Every
/// directory is made and held open, every file written anew and renamed into place
/// (`sys::OutDir`).
pub fn write_report(r: &Report, formats: &[ReportFormat], dir: &Path) -> Result<Vec<String>> {
    let has = |f: ReportFormat| formats.contains(&f);
    let out = out_dir(dir)?;
    let mut written = Vec::new();
    let figs = if has(ReportFormat::Html) || has(ReportFormat::Markdown) {
        figures::figures(r)
    } else {
        Vec::new()
    };
    let svgs = render_figures(&figs, &out)?;
    if !figs.is_empty() {
        written.push(format!("plots/ ({} figures, SVG and PNG)", figs.len()));
    }
    if has(ReportFormat::Html) {
        let page = html::render(r, &figs, &svgs)?;
        write_file(&out, "index.html", page.as_bytes())?;
        written.push("index.html".into());
    }
    if has(ReportFormat::Markdown) {
        write_file(&out, "report.md", markdown::render(r, &figs).as_bytes())?;
        written.push("report.md".into());
    }
    if has(ReportFormat::Latex) {
        write_file(&out, "report.tex", latex::render(r).as_bytes())?;
        written.push("report.tex".into());
    }
    if has(ReportFormat::Csv) {
        let csv_dir = subdir(&out, "csv")?;
        let files = csv_tables::tables(r)?;
        for (name, text) in &files {
            write_file(&csv_dir, name, text.as_bytes())?;
        }
        written.push(format!("csv/ ({} tables)", files.len()));
    }
    Ok(written)
}

/// Subdirectory `name` of `out`, made if missing and held.
fn subdir(out: &OutDir, name: &str) -> Result<OutDir> {
    out.subdir(name, 0o755).map_err(|source| {
        if schedlab_sys::SysError::of(&source).is_some() {
            ReportError::OutDir { source }
        } else {
            ReportError::Write {
                path: out.path().join(name),
                source,
            }
        }
    })
}

/// Renders every figure to SVG (returned, in order) and writes `ID.svg` and `ID.png` into
/// `plots/` of `out`, on all CPUs. A PNG that cannot be rendered is a warning: the SVG
/// remains.
fn render_figures(figs: &[Figure], out: &OutDir) -> Result<Vec<String>> {
    if figs.is_empty() {
        return Ok(Vec::new());
    }
    let plot_dir = subdir(out, "plots")?;
    model::par_map(figs, |f| render_one(f, &plot_dir))
        .into_iter()
        .collect()
}

/// One figure: SVG text, written with its PNG copy.
fn render_one(fig: &Figure, plot_dir: &OutDir) -> Result<String> {
    let svg = render::plots::svg(fig);
    write_file(plot_dir, &format!("{}.svg", fig.id), svg.as_bytes())?;
    match render::plots::svg_to_png(&svg, PNG_SCALE) {
        Ok(png) => write_file(plot_dir, &format!("{}.png", fig.id), &png)?,
        Err(e) => eprintln!(
            "warning: figure {} has no PNG copy ({e}); its SVG is in {}",
            fig.id,
            plot_dir.path().join(format!("{}.svg", fig.id)).display()
        ),
    }
    Ok(svg)
}

/// `schedlab stats`: the report's exploratory comparisons and summaries as terminal tables.
/// Prints the tables (or the claims as JSON); returns the declared claims whose verdict is
/// one of `fail_on`, as "NAME is VERDICT".
pub fn stats(args: &StatsOptions) -> Result<Vec<String>> {
    let (_, input) = args.selection.load()?;
    let report = model::report::build(&input);
    if args.json {
        let run = &input.run;
        let doc = render::claims::json::document(
            (run.run_id, &run.name, run.uuid.as_deref()),
            report.claims.as_ref(),
        );
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).map_err(RenderError::from)?
        );
    } else {
        // Through the one printable filter: names and labels come from stored rows.
        print!(
            "{}",
            schedlab_core::text::printable(&render::stats::render_stats(&report, args.all))
        );
    }
    Ok(report.claims.as_ref().map_or_else(Vec::new, |o| {
        o.claims
            .iter()
            .filter(|c| c.claim.declared == schedlab_spec::claims::Declared::Before)
            .filter_map(|c| c.overall.verdict.map(|v| (c, v)))
            .filter(|(_, v)| args.fail_on.contains(v))
            .map(|(c, v)| format!("{} is {}", c.claim.name, v.word()))
            .collect()
    }))
}

/// `schedlab compare A B`: the same cells of two runs, B against A.
pub fn compare(args: &CompareOptions) -> Result<()> {
    let store_a = Store::open_read(&args.db)?;
    store_a
        .require_run(args.a)
        .with_context(|| format!("run A ({}), in {}", args.a, args.db.display()))?;
    let input_a = pool::load_input(&store_a, args.a, args.include_warmup)?;
    let db_b: Location = args.db_b.clone().unwrap_or_else(|| args.db.clone());
    let store_b = Store::open_read(&db_b)?;
    store_b
        .require_run(args.b)
        .with_context(|| format!("run B ({}), in {}", args.b, db_b.display()))?;
    let input_b = pool::load_input(&store_b, args.b, args.include_warmup)?;
    let mut c = model::compare::compare(&input_a, &input_b);
    if !args.allow_different_work {
        if let Some(different) = c.refusal() {
            return Err(ReportError::DifferentWork(Box::new(different)));
        }
    }
    if args.db_b.is_some() {
        c.a.db = Some(args.db.clone());
        c.b.db = Some(db_b);
    }
    print!(
        "{}",
        schedlab_core::text::printable(&render::compare::render(&c))
    );
    Ok(())
}
