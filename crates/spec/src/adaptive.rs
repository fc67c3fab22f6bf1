//! Adaptive trial counts in a spec: `settings.precision` ("2%") and/or
//! `settings.until_decided`, with `min_trials`, `max_trials`, `max_time` and
//! `precision_metric`, checked into an [`Adaptive`].

use super::durations::duration_ns;
use super::{Problem, Settings};
use schedlab_core::metric::Metric;
pub use schedlab_core::precision::{Adaptive, DEFAULT_MAX_TRIALS};

/// Parses "2%" (or "0.5 %") into a fraction, 0.02; `key` names the setting.
pub(crate) fn percent(key: &str, text: &str) -> Result<f64, Problem> {
    let bad = || {
        Problem::new(key, format!("'{text}' is not a percentage"))
            .accepting("a percentage above 0 and below 100 in quotes, e.g. \"2%\"")
    };
    let number = text.trim().strip_suffix('%').ok_or_else(bad)?;
    let v: f64 = number.trim().parse().map_err(|_| bad())?;
    if !(v > 0.0 && v < 100.0) {
        return Err(bad());
    }
    Ok(v / 100.0)
}

/// The adaptive settings of `s`, checked; None without `precision` or `until_decided`. The
/// other keys need one of them.
pub(crate) fn check_adaptive(s: &Settings) -> Result<Option<Adaptive>, Problem> {
    if s.precision.is_none() && !s.until_decided {
        let stray = [
            ("settings.min_trials", s.min_trials.is_some()),
            ("settings.max_trials", s.max_trials.is_some()),
            ("settings.max_time", s.max_time.is_some()),
            ("settings.precision_metric", s.precision_metric.is_some()),
        ];
        return match stray.into_iter().find(|(_, given)| *given) {
            Some((key, _)) => Err(Problem::new(
                key,
                "only applies to an adaptive run; give settings.precision (--precision) or settings.until_decided (--until-decided) too, or leave it out",
            )),
            None => Ok(None),
        };
    }
    let precision = match &s.precision {
        Some(text) => Some(percent("settings.precision", text)?),
        None => None,
    };
    let min_trials = s.min_trials.unwrap_or(s.trials.max(2));
    if min_trials < 2 {
        return Err(Problem::new(
            "settings.min_trials",
            format!("{min_trials} is too few: a confidence interval needs 2 trials"),
        )
        .accepting("a whole number of 2 or more"));
    }
    let max_trials = s
        .max_trials
        .unwrap_or_else(|| DEFAULT_MAX_TRIALS.max(min_trials));
    if max_trials < min_trials {
        return Err(Problem::new(
            "settings.max_trials",
            format!("{max_trials} is below min_trials ({min_trials})"),
        )
        .accepting(format!("a whole number of {min_trials} or more")));
    }
    let max_time_ns = match &s.max_time {
        Some(t) => match duration_ns("settings.max_time", t)? {
            0 => {
                return Err(Problem::new("settings.max_time", "must be above 0")
                    .accepting("a duration such as \"20m\""))
            }
            ns => Some(ns),
        },
        None => None,
    };
    let key = s.precision_metric.as_deref().unwrap_or("makespan").trim();
    let Some(metric) = Metric::from_key(key) else {
        return Err(Problem::new(
            "settings.precision_metric",
            format!("'{key}' is not a metric"),
        )
        .accepting(Metric::KEYS.join(", ")));
    };
    Ok(Some(Adaptive {
        precision,
        until_decided: s.until_decided,
        min_trials,
        max_trials,
        max_time_ns,
        metric,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(precision: Option<&str>) -> Settings {
        Settings {
            precision: precision.map(String::from),
            ..Settings::default()
        }
    }

    #[test]
    fn percentages_need_their_sign_and_a_range() {
        assert_eq!(percent("k", "2%").unwrap(), 0.02);
        assert_eq!(percent("k", " 0.5 % ").unwrap(), 0.005);
        assert!(percent("k", "2").is_err());
        assert!(percent("k", "0%").is_err());
        assert!(percent("k", "100%").is_err());
        assert!(percent("k", "fast%").is_err());
    }

    #[test]
    fn defaults_come_from_the_trials_and_limits_are_checked() {
        assert_eq!(check_adaptive(&settings(None)).unwrap(), None);
        let a = check_adaptive(&settings(Some("5%"))).unwrap().unwrap();
        assert_eq!((a.min_trials, a.max_trials), (3, DEFAULT_MAX_TRIALS));
        assert_eq!(
            (a.precision, a.metric, a.max_time_ns),
            (Some(0.05), Metric::Makespan, None)
        );
        let mut s = settings(Some("5%"));
        s.min_trials = Some(1);
        assert_eq!(check_adaptive(&s).unwrap_err().key, "settings.min_trials");
        s.min_trials = Some(40);
        let a = check_adaptive(&s).unwrap().unwrap();
        assert_eq!(
            a.max_trials, 40,
            "the default maximum is at least the minimum"
        );
        s.max_trials = Some(10);
        assert_eq!(check_adaptive(&s).unwrap_err().key, "settings.max_trials");
        let mut s = settings(Some("5%"));
        s.precision_metric = Some("speed".into());
        let e = check_adaptive(&s).unwrap_err();
        assert!(e.accepted.unwrap().contains("turnaround"), "{}", e.message);
        s.precision_metric = Some("turnaround".into());
        s.max_time = Some("10m".into());
        let a = check_adaptive(&s).unwrap().unwrap();
        assert_eq!(a.max_time_ns, Some(600_000_000_000));
    }

    #[test]
    fn until_decided_alone_is_adaptive_without_a_precision() {
        let mut s = settings(None);
        s.until_decided = true;
        s.max_trials = Some(12);
        let a = check_adaptive(&s).unwrap().unwrap();
        assert_eq!(
            (a.precision, a.until_decided, a.max_trials),
            (None, true, 12)
        );
    }

    #[test]
    fn adaptive_keys_without_a_precision_are_refused() {
        let mut s = settings(None);
        s.max_trials = Some(10);
        let e = check_adaptive(&s).unwrap_err();
        assert_eq!(e.key, "settings.max_trials");
        assert!(e.message.contains("--precision"), "{}", e.message);
    }
}
