//! A user's mistake in a spec: [`Problem`] ties it to its key (so that it can be positioned
//! in the file), [`SpecError`] is what the spec stage returns, one line when shown.

use super::locate::Located;
use std::path::PathBuf;

/// A user mistake in a spec or in the flags of `run` (every variant is bad input, exit 2); the
/// message names the key or flag and the fix.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// A mistake placed in spec text: `ORIGIN:LINE:COL: KEY: message (accepted: ...)`.
    #[error("{}", located.render(origin.as_deref()))]
    Located {
        /// Where the text came from (a file's path), when it came from one.
        origin: Option<String>,
        /// The mistake and its place.
        located: Located,
    },
    /// A value that is wrong, by its key (it came from a flag, or there is no text to point
    /// into): `KEY: message (accepted: ...)`.
    #[error("{0}")]
    Invalid(Problem),
    /// A flag's value that cannot be read as what the flag takes.
    #[error("{flag} {value}: {message}")]
    Flag {
        /// The flag, e.g. `--knob`.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What is wrong and what to write instead.
        message: String,
    },
    /// A `--claim` that cannot be read; the message quotes it and lists what is accepted.
    #[error(transparent)]
    Claim(#[from] super::claim_flag::ClaimFlagError),
    /// A `--groups` layout that cannot be read; the message quotes it.
    #[error(transparent)]
    Groups(#[from] super::cgroups::LayoutError),
    /// The spec file cannot be read.
    #[error("cannot read spec {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why it cannot be read.
        source: std::io::Error,
    },
    /// The spec stored with a run does not read as a spec of this version (written by
    /// another one).
    #[error(
        "the spec stored with the run does not read as a spec of schedlab {}: {}; it was probably written by another version: `schedlab show` prints it as stored, and that version of schedlab reads it",
        env!("CARGO_PKG_VERSION"),
        .0.render(None)
    )]
    StoredAsRun(Located),
    /// The spec as run cannot be written as TOML (a number TOML cannot hold).
    #[error(
        "cannot write the spec as TOML to store it with the run: {0}; a seed or size above 9223372036854775807 cannot be stored, give a smaller one"
    )]
    AsRun(#[from] toml::ser::Error),
}

impl SpecError {
    /// A mistake placed in the text read from `origin` (None: text of no file).
    pub fn located(origin: Option<&str>, located: Located) -> SpecError {
        SpecError::Located {
            origin: origin.map(str::to_string),
            located,
        }
    }

    /// The key the mistake is about, when it has one (`axes.tasks`, `settings.work`).
    pub fn key(&self) -> Option<&str> {
        match self {
            SpecError::Located { located, .. } | SpecError::StoredAsRun(located) => {
                located.key.as_deref()
            }
            SpecError::Invalid(p) => Some(&p.key),
            SpecError::Flag { flag, .. } => Some(flag),
            SpecError::Claim(_) => Some("--claim"),
            SpecError::Groups(_) => Some("--groups"),
            SpecError::Read { .. } | SpecError::AsRun(_) => None,
        }
    }
}

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
        SpecError::Invalid(p)
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
