//! `schedlab stats --format json`: the claims with their verdicts, effects, intervals, rounds
//! and exclusions, in a shape of its own that stays stable across releases (schema
//! `schedlab.claims/1`; a field is only ever added). Pipelines read this, not the tables.
//!
//! ```json
//! { "schema": "schedlab.claims/1",
//!   "run": { "id": 3, "name": "quick", "uuid": "…" },
//!   "alpha": 0.05, "family_size": 2,
//!   "looks": null | { "taken": 6, "planned": 22, "alpha": 0.0021, "rounds": 14 },
//!   "trials": { "used": 24, "disturbed_left_out": 0, "include_disturbed": false },
//!   "claims": [ { "name": "…", "text": "…", "metric": "turnaround", "relation": "<",
//!       "a": "fifo", "others": ["other"], "declared": "before" | "post_hoc",
//!       "scope": "overall" | "every",
//!       "verdict": "supported" | "contradicted" | "equivalent" | "not equivalent"
//!                  | "negligible" | "inconclusive" | null (post hoc),
//!       "p": 0.0078, "p_adjusted": 0.0156 | null, "test": "…",
//!       "effect": null | { "scale": "ratio" | "difference", "estimate": 0.63,
//!                          "lo": 0.61 | null, "hi": 0.66 | null, "level": 0.975 | null },
//!       "rounds": { "used": 8, "dropped": 0 }, "earliest_round": 7 | null,
//!       "decided_after_rounds": null | 9, "heterogeneity": null | "…",
//!       "cells": [ { "where": "…", "verdict": …, "p": …, "p_adjusted": …, "test": "…",
//!                    "effect": …, "rounds": …, "decided_after_rounds": …,
//!                    "untested": null | "why",
//!                    "trials_needed": null | { "rounds": 14, "more_than": false } } ] } ],
//!   "methods": ["…"] }
//! ```
//!
//! An interval (`lo`, `hi`, `level`) is null where it is not shown: a cell of a claim that is
//! not decided was not judged. Non-finite numbers (an unbounded interval end) are null.

use crate::claims::{CellOutcome, ClaimLevel, ClaimOutcome, ClaimsOutcome};
use schedlab_analyze::{Effect, EffectScale, TrialsNeeded};
use schedlab_spec::claims::Declared;
use serde_json::{json, Value};

/// The schema's name and version.
pub const SCHEMA: &str = "schedlab.claims/1";

fn number(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

fn effect(e: Option<&Effect>, level: Option<f64>) -> Value {
    let Some(e) = e else { return Value::Null };
    let shown = level.is_some();
    let end = |v: f64| if shown { number(v) } else { Value::Null };
    json!({
        "scale": match e.scale { EffectScale::Ratio => "ratio", EffectScale::Difference => "difference" },
        "estimate": number(e.estimate),
        "lo": end(e.lo),
        "hi": end(e.hi),
        "level": level.map_or(Value::Null, number),
    })
}

fn claim_level(c: &ClaimOutcome, o: &ClaimLevel) -> Value {
    json!({
        "name": c.claim.name,
        "text": c.claim.text,
        "metric": c.claim.metric,
        "relation": c.claim.relation.symbol(),
        "a": c.claim.a.label(),
        "others": c.claim.others.iter().map(|t| t.label()).collect::<Vec<_>>(),
        "declared": match c.claim.declared { Declared::Before => "before", Declared::PostHoc => "post_hoc" },
        "scope": c.claim.reading.key(),
        "verdict": o.verdict.map(|v| v.word()),
        "p": number(o.p),
        "p_adjusted": o.p_adjusted.map_or(Value::Null, number),
        "test": o.test,
        "effect": effect(o.effect.as_ref(), Some(o.interval_level)),
        "rounds": { "used": o.rounds, "dropped": o.rounds_dropped },
        "earliest_round": o.earliest_round,
        "decided_after_rounds": o.decided_after,
        "heterogeneity": o.heterogeneity.as_ref().map(super::table::heterogeneity),
        "cells": c.cells.iter().map(cell).collect::<Vec<_>>(),
    })
}

fn cell(c: &CellOutcome) -> Value {
    let needed = c.power.as_ref().and_then(|p| match p.trials_needed {
        Some(TrialsNeeded::PerSide(n)) => Some(json!({ "rounds": n, "more_than": false })),
        Some(TrialsNeeded::MoreThan(n)) => Some(json!({ "rounds": n, "more_than": true })),
        _ => None,
    });
    json!({
        "where": c.label,
        "verdict": c.verdict.map(|v| v.word()),
        "exploratory_p": c.exploratory.map(|e| e.p_unadjusted),
        "p": number(c.p),
        "p_adjusted": c.p_adjusted.map_or(Value::Null, number),
        "test": c.test,
        "effect": effect(c.effect.as_ref(), c.interval_level),
        "rounds": { "used": c.n.0, "dropped": c.rounds_dropped },
        "decided_after_rounds": c.decided_after,
        "untested": c.untested,
        "trials_needed": needed,
    })
}

/// The document for run `(id, name, uuid)` (claims None: the run declares none).
pub fn document(run: (i64, &str, Option<&str>), o: Option<&ClaimsOutcome>) -> Value {
    let (id, name, uuid) = run;
    let head = json!({ "schema": SCHEMA, "run": { "id": id, "name": name, "uuid": uuid } });
    let Some(o) = o else {
        let mut v = head;
        v["claims"] = json!([]);
        return v;
    };
    let mut v = head;
    v["alpha"] = number(o.alpha);
    v["family_size"] = json!(o.family_size);
    v["looks"] = o.looks.map_or(Value::Null, |l| {
        json!({ "taken": l.taken, "planned": l.planned, "alpha": number(l.alpha), "rounds": l.rounds })
    });
    v["trials"] = json!({
        "used": o.trials,
        "disturbed_left_out": o.disturbed_left_out,
        "include_disturbed": o.include_disturbed,
    });
    v["claims"] = Value::Array(
        o.claims
            .iter()
            .map(|c| claim_level(c, &c.overall))
            .collect(),
    );
    v["methods"] = json!(o.methods);
    v
}
