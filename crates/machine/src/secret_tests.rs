//! Masking of passwords in URLs, arguments and messages, on literal text.

use super::*;

/// A password with every character a pattern tends to miss, and its percent-encoded form.
const RAW: &str = "Sq/K?t@9#z%2Fw";
const ENCODED: &str = "Sq%2FK%3Ft%409%23z%252Fw";

#[test]
fn url_passwords_are_masked_whatever_they_hold() {
    let url = format!("postgres://lab:{ENCODED}@db.example:5432/results?sslmode=disable");
    let shown = mask_url(&url);
    assert_eq!(
        shown,
        "postgres://lab:***@db.example:5432/results?sslmode=disable"
    );
    assert_eq!(
        mask_url("postgres://me:s3cr:et@db.example:5432/lab?x=1"),
        "postgres://me:***@db.example:5432/lab?x=1"
    );
    assert_eq!(mask_url("postgres://me@h/d"), "postgres://me@h/d");
    assert_eq!(mask_url("postgres://h/d"), "postgres://h/d");
    assert_eq!(mask_url("results.db"), "results.db");
    assert_eq!(
        mask_url("mysql://alice:S3cretPW@h/d"),
        "mysql://alice:***@h/d"
    );
    // In the query, as the PostgreSQL client accepts it.
    let shown = mask_url(&format!(
        "postgres://lab@h/d?application_name=x&password={ENCODED}"
    ));
    assert!(
        !shown.contains("Sq") && shown.contains("password=***"),
        "{shown}"
    );
    assert!(shown.contains("application_name=x"), "{shown}");
}

#[test]
fn a_url_two_parsers_could_read_differently_is_hidden_after_its_scheme() {
    // Unencoded: the PostgreSQL client reads the password up to the first @ of the whole
    // URL, WHATWG up to the first / ? or #.
    for url in [
        format!("postgres://lab:{RAW}@h:5432/d"),
        "postgres://lab:pa/ss@h/d".to_string(),
        "postgres://lab:12?x@h/d".to_string(),
        "postgres://lab:1#x@h/d".to_string(),
        "postgres://lab:p@ss@h/d".to_string(),
    ] {
        assert!(ambiguous(&url), "{url}");
        assert_eq!(mask_url(&url), "postgres://***", "{url}");
    }
    assert!(!ambiguous(&format!("postgres://lab:{ENCODED}@h/d")));
    // Unreadable (a bad port) but with a user part: hidden too.
    assert_eq!(mask_url("postgres://u:pw@h:notaport/d"), "postgres://***");
    assert_eq!(
        mask_url("postgres://u@h:notaport/d"),
        "postgres://u@h:notaport/d",
        "no password to hide"
    );
    assert_eq!(mask_url("http://h:notaport/d"), "http://h:notaport/d");
}

#[test]
fn arguments_are_masked_in_every_form_a_command_line_holds_them() {
    let url = format!("postgres://lab:{ENCODED}@h/d");
    assert_eq!(mask_arg(&url), "postgres://lab:***@h/d");
    assert_eq!(
        mask_arg(&format!("--db={url}")),
        "--db=postgres://lab:***@h/d"
    );
    assert_eq!(
        mask_arg("host=h user=lab password=s3cret dbname=d"),
        "host=h user=lab password=***"
    );
    assert_eq!(mask_arg("--trials=3"), "--trials=3");
    assert_eq!(mask_arg("host=h PASSWORD = s3cret"), "host=h password=***");
    assert_eq!(mask_arg("--name=password-test"), "--name=password-test");
    assert_eq!(mask_arg("vm.swappiness=10,60"), "vm.swappiness=10,60");
    let line = format!("/usr/bin/schedlab run --db {url} --db-b=postgres://x:{ENCODED}@h/e");
    let masked = mask_command_line(&line);
    assert_eq!(
        masked,
        "/usr/bin/schedlab run --db postgres://lab:***@h/d --db-b=postgres://x:***@h/e"
    );
    assert_eq!(
        mask_command_line(&masked),
        masked,
        "masking twice changes nothing"
    );
    assert!(!command_line().contains(ENCODED));
}

#[test]
fn messages_are_scrubbed_of_every_form_of_the_passwords_given() {
    let secrets = secrets_in(
        [
            "schedlab",
            "runs",
            "--db=postgres://lab:p@ss@h/d",
            &format!("postgres://lab:{ENCODED}@h/d"),
            "postgres://lab@h/d?password=qu3ry-pw&x=1",
            "host=h password=conninfo-pw",
        ],
        Some("from-PGPASSWORD"),
    );
    for s in [
        ENCODED,
        RAW,
        "p@ss",
        "qu3ry-pw",
        "conninfo-pw",
        "from-PGPASSWORD",
    ] {
        assert!(secrets.iter().any(|x| x == s), "{s} not in {secrets:?}");
    }
    let text =
        format!("unexpected argument 'postgres://lab:{ENCODED}@h/d' ({RAW}), from-PGPASSWORD");
    let clean = scrub(&text, &secrets);
    assert_eq!(
        clean,
        "unexpected argument 'postgres://lab:***@h/d' (***), ***"
    );
    // Too short to scrub without garbling the text: masked at the source instead.
    assert!(secrets_in(["postgres://u:ab@h/d"], None).is_empty());
}

#[test]
fn passwords_in_urls_on_the_command_line_are_found_whatever_their_length() {
    for arg in [
        "postgres://a:p@h/d",
        "--db=postgres://a:pw@h/d",
        "postgresql://a@h/d?password=x",
        "POSTGRES://a:b@c@h/d",
    ] {
        assert!(url_with_password(arg), "{arg}");
    }
    for arg in [
        "postgres://a@h:5432/d",
        "postgres://h/d",
        "results.db",
        "--db=postgres://a@h/d",
        "mysql://a:p@h/d",
    ] {
        assert!(!url_with_password(arg), "{arg}");
    }
}
