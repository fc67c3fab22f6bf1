//! What the manifests say beyond the table of schedlab crates: database clients told by what
//! they link (a dependency that reaches libsqlite3-sys or a PostgreSQL protocol crate talks
//! to a database, whatever its name), TOML crates named only by the spec crate, and the graph
//! that docs/ARCHITECTURE.md shows, generated from `cargo metadata` and compared here.

use crate::graph::{self, Workspace, STORE};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The crates whose presence makes a dependency a database client.
pub const DATABASE_LINKS: &[&str] = &["libsqlite3-sys", "postgres-protocol"];

/// The crates that read or write TOML.
pub const TOML: &[&str] = &["toml", "toml_edit", "toml_datetime", "basic-toml"];

/// The one crate that reads TOML (experiment files and the spec as run).
pub const SPEC: &str = "schedlab-spec";

/// The resolved graph: per workspace crate its direct dependencies (name, kinds, whether a
/// workspace crate), and per crate name what it reaches through normal and build edges.
#[derive(Debug, Default, Clone)]
pub struct Resolved {
    pub direct: BTreeMap<String, Vec<(String, Vec<String>, bool)>>,
    pub reaches: BTreeMap<String, BTreeSet<String>>,
}

/// `cargo metadata` with the dependencies resolved.
pub fn resolved() -> Resolved {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let name_of: BTreeMap<&str, &str> = v["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let members: BTreeSet<&str> = v["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    // Edges by kind: (from, to, kinds).
    let mut edges: Vec<(&str, &str, Vec<String>)> = Vec::new();
    for node in v["resolve"]["nodes"].as_array().unwrap() {
        let from = node["id"].as_str().unwrap();
        for d in node["deps"].as_array().unwrap() {
            let kinds = d["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k["kind"].as_str().unwrap_or("normal").to_string())
                .collect();
            edges.push((from, d["pkg"].as_str().unwrap(), kinds));
        }
    }
    let mut r = Resolved::default();
    for (from, to, kinds) in &edges {
        if members.contains(from) {
            r.direct
                .entry(name_of[from].to_string())
                .or_default()
                .push((name_of[to].to_string(), kinds.clone(), members.contains(to)));
        }
    }
    // What each crate links: its normal and build edges, followed.
    let mut links: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to, kinds) in &edges {
        if kinds.iter().any(|k| k != "dev") {
            links.entry(*from).or_default().push(*to);
        }
    }
    for id in name_of.keys() {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut todo = vec![*id];
        while let Some(at) = todo.pop() {
            for to in links.get(at).into_iter().flatten() {
                if seen.insert(*to) {
                    todo.push(*to);
                }
            }
        }
        let names = seen.iter().map(|to| name_of[to].to_string()).collect();
        r.reaches.insert(name_of[id].to_string(), names);
    }
    r
}

/// A database client or a TOML crate reached outside the crate allowed it (the binary's
/// integration tests read what the store wrote with their own clients: its dev edges).
pub fn violations(r: &Resolved) -> Vec<String> {
    let mut wrong = Vec::new();
    for (krate, deps) in &r.direct {
        for (dep, kinds, member) in deps {
            let empty = BTreeSet::new();
            let reach = r.reaches.get(dep).unwrap_or(&empty);
            let hits = |set: &[&str]| -> Vec<String> {
                set.iter()
                    .filter(|c| dep == *c || reach.contains(**c))
                    .map(|c| c.to_string())
                    .collect()
            };
            // The binary's integration tests read what the store wrote with their own clients.
            let allowed = *member
                || krate == STORE
                || (krate == "schedlab" && kinds.iter().all(|k| k == "dev"));
            let db = hits(DATABASE_LINKS);
            if !allowed && !db.is_empty() {
                wrong.push(format!(
                    "{krate} depends on {dep} ({}), which links {}: only {STORE} talks to a database",
                    kinds.join(", "),
                    db.join(", ")
                ));
            }
            // TOML is read by whoever names a TOML crate (another crate's use of one, a test
            // tool's configuration, is not reading experiment files).
            if krate != SPEC && TOML.contains(&dep.as_str()) {
                wrong.push(format!(
                    "{krate} depends on {dep} ({}): only {SPEC} reads TOML",
                    kinds.join(", ")
                ));
            }
        }
    }
    wrong
}

/// The crate graph as docs/ARCHITECTURE.md shows it: each crate of the table and the
/// schedlab crates it depends on (normal and build dependencies, not tests').
pub fn graph_table(ws: &Workspace) -> String {
    let mut out = String::from("| crate | depends on |\n|---|---|\n");
    for (name, _) in graph::ALLOWED {
        let Some(p) = ws.packages.iter().find(|p| p.name == *name) else {
            continue;
        };
        let deps: Vec<&str> = graph::ALLOWED
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| p.deps.iter().any(|d| d.name == *n && d.kind != "dev"))
            .collect();
        let deps = match deps.is_empty() {
            true => "—".to_string(),
            false => deps
                .iter()
                .map(|d| format!("`{d}`"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        out += &format!("| `{name}` | {deps} |\n");
    }
    out
}

/// The markers around the generated graph in docs/ARCHITECTURE.md.
pub const BEGIN: &str = "<!-- crate graph: generated from `cargo metadata` by tests/architecture (deps.rs); do not edit -->\n";
pub const END: &str = "<!-- end of crate graph -->";

#[test]
fn database_clients_and_toml_are_told_by_what_they_link() {
    let r = resolved();
    let wrong = violations(&r);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The check reads the real graph: the store reaches both links, the binary's tests too.
    let store: Vec<&str> = r.direct[STORE].iter().map(|d| d.0.as_str()).collect();
    for link in DATABASE_LINKS {
        assert!(
            store
                .iter()
                .any(|d| r.reaches[*d].contains(*link) || d == link),
            "{link}: {store:?}"
        );
    }
    assert!(r.reaches[SPEC].contains("toml"));
}

#[test]
fn a_client_under_another_name_and_toml_outside_the_spec_are_refused() {
    let mut r = Resolved::default();
    let dep = |n: &str, k: &str, m: bool| (n.to_string(), vec![k.to_string()], m);
    r.direct.insert(
        "schedlab-report".into(),
        vec![dep("sqlx", "normal", false), dep(STORE, "normal", true)],
    );
    r.direct
        .insert("schedlab-analyze".into(), vec![dep("toml", "dev", false)]);
    r.direct
        .insert("schedlab".into(), vec![dep("rusqlite", "dev", false)]);
    r.direct
        .insert(STORE.into(), vec![dep("rusqlite", "normal", false)]);
    r.direct
        .insert(SPEC.into(), vec![dep("toml", "normal", false)]);
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    r.reaches
        .insert("sqlx".into(), set(&["sqlx-sqlite", "libsqlite3-sys"]));
    r.reaches
        .insert("rusqlite".into(), set(&["libsqlite3-sys"]));
    r.reaches
        .insert(STORE.into(), set(&["rusqlite", "libsqlite3-sys"]));
    let wrong = violations(&r);
    assert_eq!(wrong.len(), 2, "{wrong:#?}");
    assert!(wrong[0].starts_with("schedlab-analyze depends on toml (dev): only schedlab-spec"));
    assert!(wrong[1]
        .starts_with("schedlab-report depends on sqlx (normal), which links libsqlite3-sys"));
}

#[test]
fn the_architecture_document_shows_the_crate_graph_cargo_has() {
    let ws = graph::metadata();
    let table = graph_table(&ws);
    let doc = std::fs::read_to_string(ws.root.join("docs/ARCHITECTURE.md")).unwrap();
    let shown = doc
        .split_once(BEGIN)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(shown, _)| shown);
    assert_eq!(
        shown,
        Some(table.as_str()),
        "docs/ARCHITECTURE.md's crate graph is not cargo's; put this between its markers:\n{BEGIN}{table}{END}"
    );
}
