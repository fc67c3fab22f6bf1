//! The crate graph, read from `cargo metadata`: which schedlab crate may depend on which, and
//! which crate alone may talk to a database.

use serde_json::Value;
use std::path::PathBuf;

/// Every crate of the workspace and the schedlab crates it may depend on. Dependencies point
/// down the pipeline only: sys < procfs, cgroup < core < machine < spec < run, spec < store,
/// store and analyze < report, and the binary on top of all of them; claim (the claims'
/// relation, serde only) below spec and analyze alike, which is all analyze depends on, so it
/// links no libc.
pub const ALLOWED: &[(&str, &[&str])] = &[
    ("schedlab-sys", &[]),
    // Test support (what a test needs from the machine): a dev-dependency of any crate
    // ([`TEST_SUPPORT`]), itself depending on no schedlab crate.
    ("schedlab-testkit", &[]),
    ("schedlab-procfs", &["schedlab-sys"]),
    // CPU cgroups (v1 and v2 behind one interface): beside procfs, below every stage.
    ("schedlab-cgroup", &["schedlab-sys"]),
    ("schedlab-core", &["schedlab-sys", "schedlab-procfs"]),
    // What a claim says about A against B: the one relation type of the spec (which reads
    // claims) and the analysis (which tests them), below both; it depends on no schedlab crate.
    ("schedlab-claim", &[]),
    (
        "schedlab-machine",
        &[
            "schedlab-sys",
            "schedlab-procfs",
            "schedlab-cgroup",
            "schedlab-core",
        ],
    ),
    (
        "schedlab-spec",
        &[
            "schedlab-sys",
            "schedlab-procfs",
            "schedlab-cgroup",
            "schedlab-core",
            "schedlab-claim",
            "schedlab-machine",
        ],
    ),
    (
        "schedlab-run",
        &[
            "schedlab-sys",
            "schedlab-procfs",
            "schedlab-cgroup",
            "schedlab-core",
            "schedlab-claim",
            "schedlab-machine",
            "schedlab-spec",
        ],
    ),
    (
        "schedlab-store",
        &[
            "schedlab-sys",
            "schedlab-procfs",
            "schedlab-cgroup",
            "schedlab-core",
            "schedlab-claim",
            "schedlab-machine",
            "schedlab-spec",
        ],
    ),
    // Statistics, pure functions on numbers: only the claims' relation (serde only), so
    // nothing that links libc.
    ("schedlab-analyze", &["schedlab-claim"]),
    (
        "schedlab-report",
        &[
            "schedlab-sys",
            "schedlab-procfs",
            "schedlab-cgroup",
            "schedlab-core",
            "schedlab-claim",
            "schedlab-machine",
            "schedlab-spec",
            "schedlab-store",
            "schedlab-analyze",
        ],
    ),
    (
        "schedlab",
        &[
            "schedlab-sys",
            "schedlab-procfs",
            "schedlab-cgroup",
            "schedlab-core",
            "schedlab-claim",
            "schedlab-machine",
            "schedlab-spec",
            "schedlab-run",
            "schedlab-store",
            "schedlab-analyze",
            "schedlab-report",
        ],
    ),
];

/// The database clients: only the store may depend on them (the binary's integration tests
/// read what the store wrote with their own clients, as dev-dependencies).
pub const DATABASE_CLIENTS: &[&str] = &["rusqlite", "postgres"];

/// The crate that may depend on a database client.
pub const STORE: &str = "schedlab-store";

/// The crate of test support, which any crate may have as a dev-dependency (and none as
/// another kind): it knows nothing of schedlab's stages.
pub const TEST_SUPPORT: &str = "schedlab-testkit";

/// The crate with the unsafe code.
pub const SYS: &str = "schedlab-sys";

/// One dependency of a package.
#[derive(Debug, Clone)]
pub struct Dep {
    pub name: String,
    /// "normal", "dev" or "build".
    pub kind: String,
}

/// One target of a package that is a crate root of its code (lib, bin, build script).
#[derive(Debug, Clone)]
pub struct Target {
    pub kind: String,
    pub src_path: PathBuf,
}

/// One package of the workspace.
#[derive(Debug, Clone)]
pub struct Package {
    pub name: String,
    pub version: String,
    pub dir: PathBuf,
    pub deps: Vec<Dep>,
    pub targets: Vec<Target>,
}

/// The workspace as `cargo metadata` describes it.
#[derive(Debug)]
pub struct Workspace {
    pub root: PathBuf,
    pub packages: Vec<Package>,
    /// Package ids of the members and of the default members (what `cargo build` builds).
    pub members: Vec<String>,
    pub default_members: Vec<String>,
}

/// Runs the real cargo (the one running this test) on the workspace.
pub fn metadata() -> Workspace {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse(&String::from_utf8(out.stdout).unwrap())
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Reads the JSON of `cargo metadata --format-version 1`.
pub fn parse(json: &str) -> Workspace {
    let v: Value = serde_json::from_str(json).expect("cargo metadata prints JSON");
    let packages = v["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap());
            Package {
                name: p["name"].as_str().unwrap().to_string(),
                version: p["version"].as_str().unwrap().to_string(),
                dir: manifest.parent().unwrap().to_path_buf(),
                deps: p["dependencies"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| Dep {
                        name: d["name"].as_str().unwrap().to_string(),
                        kind: d["kind"].as_str().unwrap_or("normal").to_string(),
                    })
                    .collect(),
                targets: p["targets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|t| {
                        let src = PathBuf::from(t["src_path"].as_str().unwrap());
                        strs(&t["kind"]).into_iter().map(move |kind| Target {
                            kind,
                            src_path: src.clone(),
                        })
                    })
                    .collect(),
            }
        })
        .collect();
    Workspace {
        root: PathBuf::from(v["workspace_root"].as_str().unwrap()),
        packages,
        members: strs(&v["workspace_members"]),
        default_members: strs(&v["workspace_default_members"]),
    }
}

/// Everything wrong with the graph: a crate not in [`ALLOWED`], a schedlab dependency the
/// table does not allow (of any kind: a test of the run crate may not use the store either),
/// a database client outside the store.
pub fn violations(ws: &Workspace) -> Vec<String> {
    let mut wrong = Vec::new();
    for p in &ws.packages {
        let Some((_, allowed)) = ALLOWED.iter().find(|(n, _)| *n == p.name) else {
            wrong.push(format!(
                "crate `{}` is not in tests/architecture/graph.rs's table; add it with the crates it may depend on",
                p.name
            ));
            continue;
        };
        for d in &p.deps {
            if d.name == TEST_SUPPORT {
                if d.kind != "dev" {
                    wrong.push(format!(
                        "{} depends on {} ({}): test support is a dev-dependency only",
                        p.name, d.name, d.kind
                    ));
                }
                continue;
            }
            if d.name.starts_with("schedlab") && !allowed.contains(&d.name.as_str()) {
                wrong.push(format!(
                    "{} depends on {} ({}), against the pipeline's direction",
                    p.name, d.name, d.kind
                ));
            }
            let client = DATABASE_CLIENTS.contains(&d.name.as_str());
            let tests_of_the_binary = p.name == "schedlab" && d.kind == "dev";
            if client && p.name != STORE && !tests_of_the_binary {
                wrong.push(format!(
                    "{} depends on {} ({}): only {STORE} talks to a database",
                    p.name, d.name, d.kind
                ));
            }
        }
    }
    for (name, _) in ALLOWED {
        if !ws.packages.iter().any(|p| p.name == *name) {
            wrong.push(format!(
                "crate `{name}` of the table is not in the workspace"
            ));
        }
    }
    wrong
}
