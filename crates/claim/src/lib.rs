//! What a claim says about treatment A against treatment B: the one relation type that the
//! spec crate reads (experiment files, `--claim`) and the analysis crate tests.
//!
//! It sits in a crate of its own, below both, because neither may hold it for the other: the
//! spec may not depend on the analysis (a stage never names a later one), and the analysis
//! may not depend on the spec (pure statistics, nothing that links libc or reads TOML). It
//! depends on nothing but serde. A relation added here fails to compile wherever relations
//! are matched (the spec's symbol and checks, the tests and their power, the report's
//! boundaries) until each handles it.

#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

/// An amount: relative to B (`Relative(0.05)` is "5%") or absolute, in the unit of the values
/// (the metric's report unit: ms for times, counts as counts).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Amount {
    /// A fraction of B, in (0, 1) for margins.
    Relative(f64),
    /// In the unit of the values.
    Absolute(f64),
}

impl Amount {
    /// The number, whichever kind of amount it is.
    pub fn value(self) -> f64 {
        match self {
            Amount::Relative(v) | Amount::Absolute(v) => v,
        }
    }

    /// "5%" for a relative amount, the number for an absolute one.
    pub fn in_words(&self) -> String {
        match self {
            Amount::Relative(r) => format!("{}%", r * 100.0),
            Amount::Absolute(v) => format!("{v}"),
        }
    }
}

/// What a claim says about treatment A against treatment B.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// A is lower than B.
    Lower {
        /// The smallest difference that matters, for power and trials needed.
        smallest_effect: Option<Amount>,
    },
    /// A is higher than B.
    Higher {
        /// The smallest difference that matters, for power and trials needed.
        smallest_effect: Option<Amount>,
    },
    /// A/B is at least `ratio`.
    RatioAtLeast {
        /// The bound R, > 0.
        ratio: f64,
        /// How far above R matters (relative), for power and trials needed.
        smallest_effect: Option<Amount>,
    },
    /// A/B is at most `ratio`.
    RatioAtMost {
        /// The bound R, > 0.
        ratio: f64,
        /// How far below R matters (relative), for power and trials needed.
        smallest_effect: Option<Amount>,
    },
    /// A equals B within `margin` (equivalence).
    Equal {
        /// Relative (ratio within 1 ± m) or absolute (difference within ± m).
        margin: Amount,
    },
}

/// Which verdict words a claim can get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// supported / contradicted.
    Direction,
    /// equivalent / not equivalent.
    Equivalence,
    /// supported / contradicted (the ratio moves toward the target, or away).
    Trend,
}

impl Relation {
    /// Which family of verdict words the relation gets.
    pub fn kind(&self) -> ClaimKind {
        match self {
            Relation::Equal { .. } => ClaimKind::Equivalence,
            Relation::Lower { .. }
            | Relation::Higher { .. }
            | Relation::RatioAtLeast { .. }
            | Relation::RatioAtMost { .. } => ClaimKind::Direction,
        }
    }

    /// The declared smallest effect (none for equivalence, whose power is stated at θ = 1).
    pub fn smallest_effect(&self) -> Option<Amount> {
        match *self {
            Relation::Lower { smallest_effect }
            | Relation::Higher { smallest_effect }
            | Relation::RatioAtLeast {
                smallest_effect, ..
            }
            | Relation::RatioAtMost {
                smallest_effect, ..
            } => smallest_effect,
            Relation::Equal { .. } => None,
        }
    }

    /// The relation in a few words, for tables: "<", ">", "≥ 10x", "≤ 2x", "= ±5%".
    pub fn symbol(&self) -> String {
        match self {
            Relation::Lower { .. } => "<".into(),
            Relation::Higher { .. } => ">".into(),
            Relation::RatioAtLeast { ratio, .. } => format!("≥ {ratio}x"),
            Relation::RatioAtMost { ratio, .. } => format!("≤ {ratio}x"),
            Relation::Equal { margin } => format!("= ±{}", margin.in_words()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_effects_and_symbols_follow_the_relation() {
        let lower = Relation::Lower {
            smallest_effect: Some(Amount::Relative(0.05)),
        };
        let equal = Relation::Equal {
            margin: Amount::Relative(0.1),
        };
        assert_eq!(lower.kind(), ClaimKind::Direction);
        assert_eq!(equal.kind(), ClaimKind::Equivalence);
        assert_eq!(lower.smallest_effect(), Some(Amount::Relative(0.05)));
        assert_eq!(equal.smallest_effect(), None);
        assert_eq!(equal.symbol(), "= ±10%");
        let at_least = Relation::RatioAtLeast {
            ratio: 10.0,
            smallest_effect: None,
        };
        assert_eq!(at_least.symbol(), "≥ 10x");
        assert_eq!(
            Relation::Equal {
                margin: Amount::Absolute(2.5)
            }
            .symbol(),
            "= ±2.5"
        );
    }
}
