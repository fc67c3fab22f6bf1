//! `--claim 'turnaround: fifo < other'`: the simple claims on the command line, read into a
//! [`ClaimSpec`] that is checked like a `[[claims]]` entry.
//!
//! Grammar: `METRIC: A OP B[, C ...]` with OP `<` (lower), `>` (higher) or `=` followed by
//! `within MARGIN` (equal within a margin, "10%" or a number in the metric's unit). A, B, ...
//! are bare axis values (`fifo`, `bfq`) or `AXIS=VALUE` (`slice=0.1ms`, `tasks=10`). The
//! claim's name is its text.

use super::claims::ClaimSpec;

/// What `--claim` accepts, for messages.
pub const CLAIM_FLAG_ACCEPTED: &str = "'METRIC: A < B', 'METRIC: A > B, C' or 'METRIC: A = B within 10%', where A, B are axis values such as fifo or slice=0.1ms";

/// A `--claim` that cannot be read: its text and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--claim '{text}': {fault} (accepted: {CLAIM_FLAG_ACCEPTED})")]
pub struct ClaimFlagError {
    /// The text given.
    pub text: String,
    /// What is wrong with it.
    pub fault: ClaimFlagFault,
}

/// What is wrong with a `--claim` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ClaimFlagFault {
    /// No `METRIC:` prefix.
    #[error("no `METRIC:` before the claim")]
    NoMetric,
    /// The metric is empty or holds a space.
    #[error("the metric is not one word")]
    MetricNotOneWord,
    /// None of `<`, `>`, ` = `.
    #[error("no relation: <, > or =")]
    NoRelation,
    /// Nothing before the relation.
    #[error("no treatment before the relation")]
    NoLeftTreatment,
    /// `=` without `within MARGIN`.
    #[error("an equality needs `within MARGIN`, e.g. within 10%")]
    NoMargin,
    /// A margin that is neither `N%` nor a number.
    #[error("the margin is not a percentage or a number")]
    BadMargin,
    /// An empty item in the list after the relation.
    #[error("an empty treatment after the relation")]
    EmptyTreatment,
    /// `=` with other than one treatment on its right.
    #[error("an equality compares two treatments")]
    EqualityNotTwo,
}

/// Reads one `--claim` text; the error says what is wrong.
pub fn parse_claim_flag(text: &str) -> Result<ClaimSpec, ClaimFlagError> {
    use ClaimFlagFault as F;
    let bad = |fault: ClaimFlagFault| ClaimFlagError {
        text: text.to_string(),
        fault,
    };
    let (metric, rest) = text.split_once(':').ok_or_else(|| bad(F::NoMetric))?;
    let metric = metric.trim();
    if metric.is_empty() || metric.contains(char::is_whitespace) {
        return Err(bad(F::MetricNotOneWord));
    }
    // `=` also joins an axis to its value (slice=0.1ms): as a relation it stands between spaces.
    let at = rest
        .find(['<', '>'])
        .or_else(|| rest.find(" = ").map(|i| i + 1))
        .ok_or_else(|| bad(F::NoRelation))?;
    let op = &rest[at..at + 1];
    let a = treatment(&rest[..at]).ok_or_else(|| bad(F::NoLeftTreatment))?;
    let mut right = rest[at + 1..].trim();
    let mut margin = None;
    if op == "=" {
        let (before, m) = right
            .split_once(" within ")
            .ok_or_else(|| bad(F::NoMargin))?;
        margin = Some(amount(m.trim()).ok_or_else(|| bad(F::BadMargin))?);
        right = before.trim();
    }
    let others: Vec<toml::Value> = right
        .split(',')
        .map(treatment)
        .collect::<Option<_>>()
        .ok_or_else(|| bad(F::EmptyTreatment))?;
    let mut spec = ClaimSpec {
        name: text.trim().to_string(),
        text: String::new(),
        metric: metric.to_string(),
        lower: None,
        higher: None,
        than: None,
        equal: None,
        margin: None,
        ratio: None,
        ratio_at_least: None,
        ratio_at_most: None,
        trend: None,
        scope: None,
        smallest_effect: None,
        reading: None,
    };
    let list = |v: Vec<toml::Value>| match <[toml::Value; 1]>::try_from(v) {
        Ok([one]) => one,
        Err(v) => toml::Value::Array(v),
    };
    match op {
        "<" => (spec.lower, spec.than) = (Some(a), Some(list(others))),
        ">" => (spec.higher, spec.than) = (Some(a), Some(list(others))),
        _ => {
            if others.len() != 1 {
                return Err(bad(F::EqualityNotTwo));
            }
            spec.equal = Some(toml::Value::Array(vec![a, others[0].clone()]));
            spec.margin = margin;
        }
    }
    Ok(spec)
}

/// `fifo` as a string, `slice=0.1ms` as a one-key table (a number where it reads as one).
fn treatment(text: &str) -> Option<toml::Value> {
    let t = text.trim();
    if t.is_empty() || t.contains(char::is_whitespace) {
        return None;
    }
    Some(match t.split_once('=') {
        Some((axis, value)) if !axis.is_empty() && !value.is_empty() => {
            let v = value.parse::<i64>().map_or_else(
                |_| toml::Value::String(value.to_string()),
                toml::Value::Integer,
            );
            let mut table = toml::Table::new();
            table.insert(axis.to_string(), v);
            toml::Value::Table(table)
        }
        _ => toml::Value::String(t.to_string()),
    })
}

/// "10%" as text (checked later as a percentage) or a number.
fn amount(text: &str) -> Option<toml::Value> {
    if text.ends_with('%') {
        return Some(toml::Value::String(text.to_string()));
    }
    text.parse::<f64>().ok().map(toml::Value::Float)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_read_into_claim_entries() {
        let c = parse_claim_flag("turnaround: fifo < other").unwrap();
        assert_eq!(c.metric, "turnaround");
        assert_eq!(c.lower, Some(toml::Value::String("fifo".into())));
        assert_eq!(c.than, Some(toml::Value::String("other".into())));
        let c = parse_claim_flag("ivcsw: other > fifo, rr").unwrap();
        assert!(matches!(c.than, Some(toml::Value::Array(ref v)) if v.len() == 2));
        let c = parse_claim_flag("makespan: fifo = rr within 10%").unwrap();
        assert_eq!(c.margin, Some(toml::Value::String("10%".into())));
        let c = parse_claim_flag("makespan: slice=0.1ms < slice=3ms").unwrap();
        let Some(toml::Value::Table(t)) = c.lower else {
            panic!("a table")
        };
        assert_eq!(t["slice"], toml::Value::String("0.1ms".into()));
        let c = parse_claim_flag("makespan: tasks=10 > tasks=4").unwrap();
        let Some(toml::Value::Table(t)) = c.than else {
            panic!("a table")
        };
        assert_eq!(t["tasks"], toml::Value::Integer(4));
    }

    #[test]
    fn malformed_claims_say_what_is_missing() {
        use ClaimFlagFault as F;
        for (text, fault, why) in [
            ("fifo < other", F::NoMetric, "METRIC:"),
            ("turnaround: fifo other", F::NoRelation, "no relation"),
            (
                "turnaround: < other",
                F::NoLeftTreatment,
                "before the relation",
            ),
            ("makespan: fifo = rr", F::NoMargin, "within"),
            ("makespan: fifo = rr within x", F::BadMargin, "margin"),
            (
                "makespan: fifo = rr, other within 5%",
                F::EqualityNotTwo,
                "two treatments",
            ),
            (
                "turnaround: fifo < other,",
                F::EmptyTreatment,
                "empty treatment",
            ),
            ("turn around: fifo < other", F::MetricNotOneWord, "one word"),
        ] {
            let e = parse_claim_flag(text).unwrap_err();
            assert_eq!((e.text.as_str(), e.fault), (text, fault));
            let e = e.to_string();
            assert!(e.starts_with(&format!("--claim '{text}': ")), "{e}");
            assert!(e.contains(why) && e.contains("accepted"), "{text}: {e}");
        }
    }
}
