//! Durations in a spec ("50ms", "1.5s", "2m"): parsed into nanoseconds once, when the spec is
//! checked, with the mistake tied to its key.

use super::{Problem, SpecError};

/// Longest duration a spec may give (one week); longer values are surely typos.
pub const MAX_DURATION_NS: u64 = 7 * 24 * 3600 * 1_000_000_000;

/// What `parse_duration_ns` accepts, for messages.
const DURATION_ACCEPTED: &str =
    "a number with a unit ns, us, ms, s, m or h, e.g. \"50ms\" or \"1.5s\", up to 168h";

/// Parses a duration such as `50ms`, `1.5s`, `200us`, `2m` into nanoseconds; `key` names the setting.
pub fn parse_duration_ns(key: &str, text: &str) -> Result<u64, SpecError> {
    duration_ns(key, text).map_err(SpecError::from)
}

/// [`parse_duration_ns`] with the mistake tied to `key`.
pub(crate) fn duration_ns(key: &str, text: &str) -> Result<u64, Problem> {
    let bad = || {
        Problem::new(key, format!("'{text}' is not a duration"))
            .accepting(DURATION_ACCEPTED.to_string())
    };
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => return Err(bad()),
    };
    let value: f64 = num.parse().map_err(|_| bad())?;
    let ns = value * scale;
    if !ns.is_finite() || ns > MAX_DURATION_NS as f64 {
        return Err(Problem::new(key, format!("'{text}' is too long"))
            .accepting(DURATION_ACCEPTED.to_string()));
    }
    Ok(ns.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration_ns("k", "50ms").unwrap(), 50_000_000);
        assert_eq!(parse_duration_ns("k", "1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration_ns("k", "200us").unwrap(), 200_000);
        assert_eq!(parse_duration_ns("k", "2m").unwrap(), 120_000_000_000);
        let e = parse_duration_ns("settings.work", "50").unwrap_err();
        assert_eq!(e.key(), Some("settings.work"));
        let e = e.to_string();
        assert!(e.contains("settings.work") && e.contains("ms"), "{e}");
        assert!(parse_duration_ns("k", "fast").is_err());
    }
}
