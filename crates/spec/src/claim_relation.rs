//! A claim's relation read against the axes: which form it uses (lower/higher with than,
//! equal with margin, ratio with a bound or a trend), its treatments, amounts and the keys
//! of its mistakes (`claims.rs`).

use super::adaptive::percent;
use super::claim_axes::{ClaimAxis, Resolver};
use super::claims::{ClaimAmount, ClaimRelation, ClaimSpec, Relation, Treatment};
use super::Problem;

impl Resolver<'_> {
    /// The claim's A, its Bs and its relation, from whichever form it uses.
    pub(crate) fn relation(
        &self,
        c: &ClaimSpec,
    ) -> Result<(Treatment, Vec<Treatment>, ClaimRelation), Problem> {
        let forms = [
            ("lower", c.lower.is_some()),
            ("higher", c.higher.is_some()),
            ("equal", c.equal.is_some()),
            ("ratio", c.ratio.is_some()),
        ];
        let given: Vec<&str> = forms.iter().filter(|f| f.1).map(|f| f.0).collect();
        match given.as_slice() {
            [] => Err(Problem::new(self.key, "says nothing to test").accepting(
                "lower or higher with than, equal with margin, or ratio with ratio_at_least, ratio_at_most or trend",
            )),
            [_, second, ..] => Err(Problem::new(self.k(second), format!("a claim has one relation, but {} are given", given.join(" and ")))
                .accepting("one of lower, higher, equal, ratio")),
            ["lower"] | ["higher"] => self.direction(c),
            ["equal"] => self.equal(c),
            _ => self.ratio(c),
        }
    }

    fn stray(&self, c: &ClaimSpec, allowed: &[&str]) -> Result<(), Problem> {
        let present = [
            ("than", c.than.is_some()),
            ("margin", c.margin.is_some()),
            ("ratio_at_least", c.ratio_at_least.is_some()),
            ("ratio_at_most", c.ratio_at_most.is_some()),
            ("trend", c.trend.is_some()),
            ("smallest_effect", c.smallest_effect.is_some()),
        ];
        match present.iter().find(|(k, p)| *p && !allowed.contains(k)) {
            Some((k, _)) => Err(
                Problem::new(self.k(k), "does not apply to this kind of claim").accepting(
                    if allowed.is_empty() {
                        "nothing more".to_string()
                    } else {
                        allowed.join(", ")
                    },
                ),
            ),
            None => Ok(()),
        }
    }

    fn direction(
        &self,
        c: &ClaimSpec,
    ) -> Result<(Treatment, Vec<Treatment>, ClaimRelation), Problem> {
        self.stray(c, &["than", "smallest_effect"])?;
        let (word, value) = match (&c.lower, &c.higher) {
            (Some(v), _) => ("lower", v),
            (_, Some(v)) => ("higher", v),
            _ => unreachable!("a direction has lower or higher"),
        };
        let a = self.treatment(value, &self.k(word))?;
        let Some(than) = &c.than else {
            return Err(Problem::new(
                self.k("than"),
                format!("missing: `{word}` needs the treatment(s) it is compared with"),
            )
            .accepting("a treatment such as \"other\", or a list [\"other\", \"rr\"]"));
        };
        let others = match than {
            toml::Value::Array(list) if list.is_empty() => {
                return Err(
                    Problem::new(self.k("than"), "is empty").accepting("at least one treatment")
                )
            }
            toml::Value::Array(list) => list
                .iter()
                .enumerate()
                .map(|(i, v)| self.treatment(v, &self.k(&format!("than[{i}]"))))
                .collect::<Result<Vec<_>, _>>()?,
            one => vec![self.treatment(one, &self.k("than"))?],
        };
        let smallest_effect = self.amount(c.smallest_effect.as_ref(), "smallest_effect")?;
        let relation = if word == "lower" {
            Relation::Lower { smallest_effect }
        } else {
            Relation::Higher { smallest_effect }
        };
        Ok((a, others, ClaimRelation::Pair(relation)))
    }

    fn pair(&self, value: &toml::Value, word: &str) -> Result<(Treatment, Treatment), Problem> {
        match value {
            toml::Value::Array(list) if list.len() == 2 => Ok((
                self.treatment(&list[0], &self.k(&format!("{word}[0]")))?,
                self.treatment(&list[1], &self.k(&format!("{word}[1]")))?,
            )),
            _ => Err(Problem::new(self.k(word), "needs exactly two treatments")
                .accepting("a list of two, e.g. [\"fifo\", \"other\"]")),
        }
    }

    fn equal(&self, c: &ClaimSpec) -> Result<(Treatment, Vec<Treatment>, ClaimRelation), Problem> {
        self.stray(c, &["margin"])?;
        let (a, b) = self.pair(c.equal.as_ref().expect("equal"), "equal")?;
        let margin = self.amount(c.margin.as_ref(), "margin")?.ok_or_else(|| {
            Problem::new(
                self.k("margin"),
                "missing: an equality claim needs a margin",
            )
            .accepting("a percentage such as \"5%\", or a number in the metric's unit")
        })?;
        Ok((a, vec![b], ClaimRelation::Pair(Relation::Equal { margin })))
    }

    fn ratio(&self, c: &ClaimSpec) -> Result<(Treatment, Vec<Treatment>, ClaimRelation), Problem> {
        let (a, b) = self.pair(c.ratio.as_ref().expect("ratio"), "ratio")?;
        let bound = |v: f64, key: &str| {
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(
                    Problem::new(self.k(key), format!("{v} is not a positive ratio"))
                        .accepting("a number above 0, e.g. 10 or 0.5"),
                )
            }
        };
        let relation = match (c.ratio_at_least, c.ratio_at_most, &c.trend) {
            (Some(r), None, None) => {
                self.stray(c, &["ratio_at_least", "smallest_effect"])?;
                ClaimRelation::Pair(Relation::RatioAtLeast {
                    ratio: bound(r, "ratio_at_least")?,
                    smallest_effect: self.relative(c)?,
                })
            }
            (None, Some(r), None) => {
                self.stray(c, &["ratio_at_most", "smallest_effect"])?;
                ClaimRelation::Pair(Relation::RatioAtMost {
                    ratio: bound(r, "ratio_at_most")?,
                    smallest_effect: self.relative(c)?,
                })
            }
            (None, None, Some(t)) => {
                self.stray(c, &["trend"])?;
                let along = self.trend_axis(&t.along, &a)?;
                ClaimRelation::Trend {
                    along,
                    toward: bound(t.toward, "trend.toward")?,
                }
            }
            (None, None, None) => return Err(Problem::new(
                self.k("ratio"),
                "says nothing about the ratio",
            )
            .accepting(
                "ratio_at_least, ratio_at_most or trend = { along = \"tasks\", toward = 1.0 }",
            )),
            _ => {
                return Err(Problem::new(
                    self.k("ratio"),
                    "has more than one of ratio_at_least, ratio_at_most and trend",
                )
                .accepting("one of them"))
            }
        };
        Ok((a, vec![b], relation))
    }

    /// A ratio bound's smallest effect, which must be relative.
    fn relative(&self, c: &ClaimSpec) -> Result<Option<ClaimAmount>, Problem> {
        match self.amount(c.smallest_effect.as_ref(), "smallest_effect")? {
            Some(ClaimAmount::Absolute(_)) => Err(Problem::new(
                self.k("smallest_effect"),
                "a ratio's smallest effect is a share of the bound",
            )
            .accepting("a percentage such as \"10%\"")),
            e => Ok(e),
        }
    }

    fn trend_axis(&self, along: &str, a: &Treatment) -> Result<ClaimAxis, Problem> {
        let key = self.k("trend.along");
        let axis = self
            .axes
            .axis_of_key(along.trim())
            .filter(ClaimAxis::numeric)
            .ok_or_else(|| {
                Problem::new(
                    key.as_str(),
                    format!("'{along}' is not an ordered axis of this experiment"),
                )
                .accepting("tasks, antagonists, slice, or a knob's name")
            })?;
        if a.axes().contains(&axis) {
            return Err(
                Problem::new(key, "is an axis the treatments name").accepting("another axis")
            );
        }
        let levels = self.axes.values(&axis).map_or(0, <[String]>::len);
        if levels < 2 {
            return Err(Problem::new(
                key,
                format!(
                    "the experiment has {levels} value(s) of {along}; a trend needs two or more"
                ),
            )
            .accepting("an axis with several values"));
        }
        Ok(axis)
    }

    /// "5%" (relative) or a positive number (absolute, in the metric's unit).
    fn amount(&self, v: Option<&toml::Value>, word: &str) -> Result<Option<ClaimAmount>, Problem> {
        let key = self.k(word);
        let bad = || {
            Problem::new(key.as_str(), "is not a usable amount")
                .accepting("a percentage in quotes such as \"5%\", or a number above 0 in the metric's unit (ms for times)")
        };
        match v {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(ClaimAmount::Relative(percent(&key, s)?))),
            Some(toml::Value::Integer(n)) if *n > 0 => Ok(Some(ClaimAmount::Absolute(*n as f64))),
            Some(toml::Value::Float(f)) if f.is_finite() && *f > 0.0 => {
                Ok(Some(ClaimAmount::Absolute(*f)))
            }
            Some(_) => Err(bad()),
        }
    }

    /// The key of B number `i` of `c` (for messages about it).
    pub(crate) fn others_key(&self, c: &ClaimSpec, i: usize) -> String {
        match (&c.than, &c.equal, &c.ratio) {
            (Some(toml::Value::Array(_)), _, _) => self.k(&format!("than[{i}]")),
            (Some(_), _, _) => self.k("than"),
            (_, Some(_), _) => self.k("equal[1]"),
            _ => self.k("ratio[1]"),
        }
    }
}
