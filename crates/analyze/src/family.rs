//! Verdicts for the confirmatory family: every declared claim in every cell of its scope,
//! adjusted together by Holm's procedure; and exploratory results for everything else.
//!
//! The verdict of claim i, with p_i its family p-value (`ClaimTest::p_family`) and q_i its
//! Holm-adjusted value over the whole family:
//!
//! | verdict | when |
//! |---|---|
//! | `supported` | q_i <= alpha, a direction or trend claim, leaning for the claim |
//! | `contradicted` | q_i <= alpha, a direction or trend claim, leaning against it (significant in the other direction) |
//! | `equivalent` | q_i <= alpha, an equality claim, TOST's p the smaller (θ within the margin) |
//! | `not equivalent` | q_i <= alpha, an equality claim, "outside the margin" the smaller |
//! | `inconclusive` | q_i > alpha |
//!
//! Why the error stays at alpha although two words can be reached per claim: a direction
//! claim's p_i is two-sided (twice the smaller one-sided p), so "supported" and
//! "contradicted" each spend alpha/2 and a claim whose θ sits exactly on its boundary (where
//! both words are wrong) is wrongly decided with probability at most alpha. An equality
//! claim needs no doubling: whatever θ is, one of its two words is right, so only the
//! other can be a false verdict, and each is a level-alpha test where it is false. Holm over
//! these p_i then bounds the probability of any false verdict in the family by alpha
//! (directional errors included: Shaffer 1980 for independent cells; the simulation test
//! below checks a family of 10 claims).
//!
//! Power and trials needed are stated at alpha / m (m = family size), the threshold Holm
//! applies first: Holm's power for any claim is at least that.

use serde::Serialize;

use super::claim_types::{ClaimKind, Leaning};
use super::claims::ClaimTest;
use super::hypothesis::holm;

/// The label of every result outside the declared family.
pub const EXPLORATORY: &str = "exploratory";

/// A claim's verdict in one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Verdict {
    /// Significant for the claim.
    #[serde(rename = "supported")]
    Supported,
    /// Significant in the other direction.
    #[serde(rename = "contradicted")]
    Contradicted,
    /// Significantly within the margin.
    #[serde(rename = "equivalent")]
    Equivalent,
    /// Significantly outside the margin.
    #[serde(rename = "not equivalent")]
    NotEquivalent,
    /// The simultaneous interval lies within ± `smallest_effect` of the claim's boundary:
    /// whatever its p, the effect is too small to matter (`claim_level::negligible`).
    #[serde(rename = "negligible")]
    Negligible,
    /// Neither.
    #[serde(rename = "inconclusive")]
    Inconclusive,
}

impl Verdict {
    /// The word, exactly as reports print it.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Supported => "supported",
            Verdict::Contradicted => "contradicted",
            Verdict::Equivalent => "equivalent",
            Verdict::NotEquivalent => "not equivalent",
            Verdict::Negligible => "negligible",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// The word a significant result of this kind and leaning gets.
    pub fn significant(kind: ClaimKind, leaning: Leaning) -> Verdict {
        match (kind, leaning) {
            (ClaimKind::Equivalence, Leaning::Support) => Verdict::Equivalent,
            (ClaimKind::Equivalence, Leaning::Against) => Verdict::NotEquivalent,
            (_, Leaning::Support) => Verdict::Supported,
            (_, Leaning::Against) => Verdict::Contradicted,
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// One member of the family, decided.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FamilyVerdict {
    /// The verdict word.
    pub verdict: Verdict,
    /// Its family p-value before adjustment.
    pub p: f64,
    /// Holm-adjusted over the whole family.
    pub p_adjusted: f64,
}

/// Decide every member of the family (every declared claim in every cell of its scope,
/// in any order) at `alpha`; results in input order. A claim that could not be tested
/// belongs in the family too: pass it as p = 1 via [`untested`].
pub fn decide_family(tests: &[ClaimTest], alpha: f64) -> Vec<FamilyVerdict> {
    let raw: Vec<f64> = tests.iter().map(|t| t.p_family).collect();
    holm(&raw)
        .into_iter()
        .zip(tests)
        .map(|(q, t)| FamilyVerdict {
            verdict: if q <= alpha {
                Verdict::significant(t.kind, t.leaning)
            } else {
                Verdict::Inconclusive
            },
            p: t.p_family,
            p_adjusted: q,
        })
        .collect()
}

/// A placeholder for a family member whose test could not run (e.g. no trials of one
/// side in the cell): p = 1, so it is inconclusive and still counts in Holm's m.
pub fn untested(kind: ClaimKind) -> ClaimTest {
    ClaimTest {
        kind,
        p_support: 1.0,
        p_against: 1.0,
        p_family: 1.0,
        leaning: Leaning::Support,
        pairs: Vec::new(),
        trend: None,
    }
}

/// The alpha at which power and trials needed are stated for a family of `m` members.
pub fn power_alpha(alpha: f64, m: usize) -> f64 {
    alpha / m.max(1) as f64
}

/// A comparison nobody declared: its unadjusted p, no verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Exploratory {
    /// Always [`EXPLORATORY`].
    pub label: &'static str,
    /// The family p-value of the same test, not adjusted for anything.
    pub p_unadjusted: f64,
    /// Which way the data lean.
    pub leaning: Leaning,
    /// `p_unadjusted <= alpha` (a hint for further study, not a verdict).
    pub below_alpha: bool,
}

/// The exploratory reading of a test (e.g. of a pair no claim mentions).
pub fn exploratory(test: &ClaimTest, alpha: f64) -> Exploratory {
    Exploratory {
        label: EXPLORATORY,
        p_unadjusted: test.p_family,
        leaning: test.leaning,
        below_alpha: test.p_family <= alpha,
    }
}

/// The methods text for the claims table: the tests, the family and the verdict rule.
pub fn claims_methods_text(alpha: f64, family_size: usize) -> String {
    format!(
        "Claims are confirmatory: the {family_size} declared claims form one family. Each claim is one hypothesis across its cells, tested on trial values (one per trial) with exact rank tests: with rounds, the Wilcoxon signed-rank test on per-round differences (labels swapped within rounds), stratified over the claim's cells (each cell ranked alone, the strata's exact null distributions convolved; normal beyond that) for a claim read overall, or every cell at once (the largest p) for a claim that must hold in every cell; Mann-Whitney U without rounds; equality by two one-sided tests at the margins (TOST); trends by the signed-rank test on per-round linear contrasts of the log ratio along the axis (a test of location), oriented toward the target. \
The claims are decided by Holm's procedure at alpha = {alpha}; a decided claim's cells are then judged behind it, Holm among them at the claim's level (serial gatekeeping, a closed test), so the chance of any false verdict on a claim or a cell stays at alpha. A direction's p-value is two-sided (twice the smaller one-sided p), so supported and contradicted together keep the error at alpha. \
Several compared treatments must each hold (the largest p). Effects are Hodges-Lehmann ratios (differences when a side has a value <= 0) with the interval that inverts the same test, at the verdict's level (1 - alpha / {family_size} for a claim, that over its cells' first Holm divisor for a cell, twice the alpha for an equality), so no interval excludes the boundary beside an inconclusive verdict; a cell of an undecided claim shows its estimate only. A claim whose interval lies within ± its smallest_effect of the boundary is negligible, whatever its p. \
Power and trials needed are for the test run, at the cell's level, by seeded simulation of a normal shift model with the observed spread. Everything else is exploratory: unadjusted p, no verdict."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_with(kind: ClaimKind, p: f64, leaning: Leaning) -> ClaimTest {
        ClaimTest {
            p_family: p,
            leaning,
            ..untested(kind)
        }
    }

    #[test]
    fn verdict_words_are_exactly_the_issues() {
        let words: Vec<&str> = [
            Verdict::Supported,
            Verdict::Contradicted,
            Verdict::Equivalent,
            Verdict::NotEquivalent,
            Verdict::Inconclusive,
        ]
        .iter()
        .map(|v| v.word())
        .collect();
        assert_eq!(
            words,
            [
                "supported",
                "contradicted",
                "equivalent",
                "not equivalent",
                "inconclusive"
            ]
        );
        let json = serde_json::to_string(&Verdict::NotEquivalent).expect("serializable");
        assert_eq!(json, "\"not equivalent\"");
    }

    #[test]
    fn holm_runs_over_the_whole_family_and_picks_the_word_by_kind_and_leaning() {
        let tests = [
            test_with(ClaimKind::Direction, 0.004, Leaning::Support),
            test_with(ClaimKind::Direction, 0.02, Leaning::Against),
            test_with(ClaimKind::Equivalence, 0.012, Leaning::Support),
            test_with(ClaimKind::Equivalence, 0.5, Leaning::Against),
            untested(ClaimKind::Trend),
        ];
        let v = decide_family(&tests, 0.05);
        // Holm: 0.004*5 = 0.02, 0.012*4 = 0.048, 0.02*3 = 0.06, 0.5*2 = 1, 1.
        let adjusted: Vec<f64> = v.iter().map(|f| f.p_adjusted).collect();
        let want = [0.02, 0.06, 0.048, 1.0, 1.0];
        for (g, w) in adjusted.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{adjusted:?}");
        }
        let words: Vec<Verdict> = v.iter().map(|f| f.verdict).collect();
        assert_eq!(
            words,
            [
                Verdict::Supported,
                Verdict::Inconclusive,
                Verdict::Equivalent,
                Verdict::Inconclusive,
                Verdict::Inconclusive
            ]
        );
        let c = decide_family(&tests[1..2], 0.05);
        assert_eq!(c[0].verdict, Verdict::Contradicted, "alone, 0.02 <= 0.05");
        let n = decide_family(
            &[test_with(ClaimKind::Equivalence, 0.01, Leaning::Against)],
            0.05,
        );
        assert_eq!(n[0].verdict, Verdict::NotEquivalent);
    }

    #[test]
    fn exploratory_results_are_labelled_and_unadjusted() {
        let t = test_with(ClaimKind::Direction, 0.03, Leaning::Support);
        let e = exploratory(&t, 0.05);
        assert_eq!(
            (e.label, e.p_unadjusted, e.below_alpha),
            ("exploratory", 0.03, true)
        );
        assert!(claims_methods_text(0.05, 12).contains("1 - alpha / 12"));
        assert_eq!(power_alpha(0.05, 10), 0.005);
        assert_eq!(power_alpha(0.05, 0), 0.05);
    }
}
