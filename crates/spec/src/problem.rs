//! A user's mistake in a spec: [`Problem`] ties it to its key (so that it can be positioned
//! in the file), [`SpecError`] is the one-line message shown.

/// A user mistake in a spec or in the flags of `run`; the message names the key and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

/// A mistake in a spec, tied to the key it is about; `plan` reports it as a [`SpecError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Dotted key path with list indices, e.g. `axes.workloads[1].iterations`.
    pub key: String,
    /// What is wrong with the value.
    pub message: String,
    /// What would be accepted instead, when that fits in a short list or range.
    pub accepted: Option<String>,
}

impl Problem {
    /// A problem with `key` and no list of accepted values.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            key: key.into(),
            message: message.into(),
            accepted: None,
        }
    }

    /// The same problem with the accepted values named.
    pub fn accepting(mut self, accepted: impl Into<String>) -> Problem {
        self.accepted = Some(accepted.into());
        self
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.message)?;
        if let Some(a) = &self.accepted {
            write!(f, " (accepted: {a})")?;
        }
        Ok(())
    }
}

impl From<Problem> for SpecError {
    fn from(p: Problem) -> SpecError {
        SpecError(p.to_string())
    }
}

/// The values a string-named enum accepts, as `a, b, c` (taken from its serde names).
pub fn accepted_values<T: serde::de::DeserializeOwned>() -> String {
    let probe = serde::de::value::StrDeserializer::<serde::de::value::Error>::new("\u{0}");
    T::deserialize(probe)
        .err()
        .and_then(|e| super::locate::expected_list(&e.to_string()))
        .map(|list| list.join(", "))
        .unwrap_or_else(|| "see the README".into())
}
