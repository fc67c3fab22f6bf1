//! Secrets kept out of storage and output: the password of a database URL (or of a key=value
//! connection string) is masked wherever a URL or this process's command line is stored or
//! shown, and every message can be scrubbed of the passwords this process was given.
//!
//! URLs are read with the `url` crate (WHATWG rules), not a pattern. The PostgreSQL client
//! reads the user part differently (up to the first `@` of the whole URL, where WHATWG stops at
//! the first `/`, `?` or `#`), so a URL the two could split differently is called ambiguous:
//! the store refuses it ([`ambiguous`]), and masking hides everything after its scheme.

use std::borrow::Cow;
use url::Url;

/// What a password is replaced by.
pub const MASK: &str = "***";

/// Secrets shorter than this are not scrubbed from messages: replacing every `a` or `12` of a
/// text would garble it (masking at the source still hides them).
const MIN_SCRUBBED: usize = 4;

/// Whether `url` (`scheme://...`) could have its user name and password read differently by
/// two parsers: an `@` after the authority (in the path, query or fragment) or more than one
/// `@` in it. A password holding `/`, `?`, `#` or `@` must be percent-encoded.
pub fn ambiguous(url: &str) -> bool {
    let Some(i) = url.find("://") else {
        return false;
    };
    let rest = &url[i + 3..];
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    rest[auth_end..].contains('@') || rest[..auth_end].matches('@').count() > 1
}

/// `text` with the password of its URL masked: the user part's password and any `password`
/// query parameter become `***`. Text that is no URL comes back as it is; a URL that cannot
/// be read unambiguously but may hold a password is shown as `scheme://***`.
pub fn mask_url(text: &str) -> String {
    let Some(i) = text.find("://") else {
        return text.to_string();
    };
    let hidden = || format!("{}://{MASK}", &text[..i]);
    if ambiguous(text) {
        return hidden();
    }
    let Ok(mut url) = Url::parse(text) else {
        // Unreadable: shown only if no reading of it has a password.
        let rest = &text[i + 3..];
        let password = [rest.find('@'), rest.rfind('@')]
            .into_iter()
            .flatten()
            .any(|end| rest[..end].contains(':'));
        return if password || names_password(rest) {
            hidden()
        } else {
            text.to_string()
        };
    };
    if url.password().is_some() && url.set_password(Some(MASK)).is_err() {
        return hidden();
    }
    let secret_param = |k: &str| k.eq_ignore_ascii_case("password");
    if url.query_pairs().any(|(k, _)| secret_param(&k)) {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| {
                let v = if secret_param(&k) { MASK.into() } else { v };
                (k.into_owned(), v.into_owned())
            })
            .collect();
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
    url.to_string()
}

/// Whether `text` may name a password anywhere (a URL parameter, a connection string key).
fn names_password(text: &str) -> bool {
    text.to_ascii_lowercase().contains("password")
}

/// Where the `password` key of a key=value connection string starts in `text` (`password=`
/// or `password = `), if it has one.
fn password_key(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    lower
        .match_indices("password")
        .map(|(i, _)| i)
        .find(|&i| lower[i + "password".len()..].trim_start().starts_with('='))
}

/// One command-line argument with any password masked: a URL, `--flag=URL`, or a key=value
/// connection string (everything from its `password` on is hidden).
pub fn mask_arg(arg: &str) -> String {
    if let (true, Some((flag, value))) = (arg.starts_with('-'), arg.split_once('=')) {
        return format!("{flag}={}", mask_arg(value));
    }
    if arg.contains("://") {
        return mask_url(arg);
    }
    if let Some(at) = password_key(arg) {
        return format!("{}password={MASK}", &arg[..at]);
    }
    arg.to_string()
}

/// Whether command-line argument `arg` (or the value of a `--flag=VALUE`) is a PostgreSQL URL
/// that holds a password: in its user part, for either parser's reading, or as a `password`
/// parameter. Such an argument is visible to every user of the machine (`ps`), so it is
/// refused, whatever its length.
pub fn url_with_password(arg: &str) -> bool {
    let text = match (arg.starts_with('-'), arg.split_once('=')) {
        (true, Some((_, value))) => value,
        _ => arg,
    };
    let lower = text.to_ascii_lowercase();
    if !(lower.starts_with("postgres://") || lower.starts_with("postgresql://")) {
        return false;
    }
    let rest = &text[text.find("://").map_or(0, |i| i + 3)..];
    let in_user_part = [rest.find('@'), rest.rfind('@')]
        .into_iter()
        .flatten()
        .any(|end| rest[..end].contains(':'));
    in_user_part
        || Url::parse(text).is_ok_and(|u| {
            u.password().is_some()
                || u.query_pairs()
                    .any(|(k, _)| k.eq_ignore_ascii_case("password"))
        })
}

/// This process's command line as it is stored and shown: arguments joined by spaces, every
/// password masked. The one place a command line is captured (runs, submits, journals).
pub fn command_line() -> String {
    let args: Vec<String> = std::env::args_os()
        .map(|a| mask_arg(&a.to_string_lossy()))
        .collect();
    args.join(" ")
}

/// A command line stored by an older schedlab, with the passwords it may hold masked.
pub fn mask_command_line(line: &str) -> String {
    let words: Vec<String> = line.split(' ').map(mask_arg).collect();
    words.join(" ")
}

/// The passwords in `texts` (command-line arguments, `SCHEDLAB_DB`) and `pgpassword`, in
/// every form a message could echo: as written, percent-decoded, and for an ambiguous URL
/// each reading of it.
pub fn secrets_in<'a>(
    texts: impl IntoIterator<Item = &'a str>,
    pgpassword: Option<&str>,
) -> Vec<String> {
    let mut out: Vec<String> = pgpassword.into_iter().map(str::to_string).collect();
    for text in texts {
        let text = match (text.starts_with('-'), text.split_once('=')) {
            (true, Some((_, value))) => value,
            _ => text,
        };
        if let Some(i) = text.find("://") {
            let rest = &text[i + 3..];
            // The user part up to the first and up to the last `@`: each parser's reading.
            for end in [rest.find('@'), rest.rfind('@')].into_iter().flatten() {
                if let Some((_, password)) = rest[..end].split_once(':') {
                    out.push(password.to_string());
                }
            }
            if let Ok(url) = Url::parse(text) {
                out.extend(url.password().map(str::to_string));
                out.extend(
                    url.query_pairs()
                        .filter(|(k, _)| k.eq_ignore_ascii_case("password"))
                        .map(|(_, v)| v.into_owned()),
                );
            }
        }
        let lower = text.to_ascii_lowercase();
        let mut from = 0;
        while let Some(at) = lower[from..].find("password=") {
            let start = from + at + "password=".len();
            let value = &text[start..];
            let end = value.find([' ', '&']).unwrap_or(value.len());
            out.push(value[..end].trim_matches('\'').to_string());
            from = start;
        }
    }
    let decoded: Vec<String> = out
        .iter()
        .filter_map(
            |s| match percent_encoding::percent_decode_str(s).decode_utf8_lossy() {
                Cow::Owned(d) => Some(d),
                Cow::Borrowed(_) => None,
            },
        )
        .collect();
    out.extend(decoded);
    out.retain(|s| s.len() >= MIN_SCRUBBED && s != MASK);
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out.dedup();
    out
}

/// The passwords this process was given: in its arguments, `SCHEDLAB_DB` and `PGPASSWORD`.
pub fn process_secrets() -> Vec<String> {
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let db = std::env::var("SCHEDLAB_DB").ok();
    let pg = std::env::var("PGPASSWORD").ok();
    secrets_in(
        args.iter().map(String::as_str).chain(db.as_deref()),
        pg.as_deref(),
    )
}

/// `text` with every one of `secrets` replaced by `***`.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), MASK);
        }
    }
    out
}

#[cfg(test)]
#[path = "secret_tests.rs"]
mod tests;
