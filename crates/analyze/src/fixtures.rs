//! Test support: the scipy/numpy reference values in `tests/fixtures/stats/reference.json`.

use serde_json::Value;
use std::sync::OnceLock;

/// The parsed reference file (written by `tests/fixtures/stats/make_fixtures.py`).
pub(super) fn reference() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/stats/reference.json"
        );
        let text = std::fs::read_to_string(path).expect("reference.json is readable");
        serde_json::from_str(&text).expect("reference.json is valid JSON")
    })
}

/// The array of numbers `v`.
pub(super) fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("expected an array, got {v}"))
        .iter()
        .map(num)
        .collect()
}

/// The number `v`.
pub(super) fn num(v: &Value) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("expected a number, got {v}"))
}

/// The array `v`'s elements.
pub(super) fn items(v: &Value) -> &Vec<Value> {
    v.as_array()
        .unwrap_or_else(|| panic!("expected an array, got {v}"))
}

/// `actual` within relative tolerance `rel` of `expected` (within `rel` of an expected 0).
pub(super) fn assert_close(actual: f64, expected: f64, rel: f64, what: &str) {
    let diff = (actual - expected).abs();
    let ok = diff <= rel * expected.abs() || (expected == 0.0 && diff <= rel);
    assert!(ok, "{what}: got {actual:e}, reference says {expected:e}");
}
