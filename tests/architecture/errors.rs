//! Errors are types (issue 28): no production code returns or holds a `Result<_, String>`,
//! and no library crate depends on anyhow (only the binary, which shows any error and takes
//! its exit code from the error's type, uses it).
//!
//! Scope: every crate of the workspace but those in [`PENDING`] (none: crates/report, the
//! last, got typed errors and left anyhow in issue 28).

use super::graph::{Package, Workspace};
use super::{read, relative, workspace};
use syn::visit::{self, Visit};

/// Crates not yet held to these checks (see the module's doc).
const PENDING: &[&str] = &[];

/// The one package that may depend on anyhow: the binary.
const BINARY: &str = "schedlab";

/// The lines of `Result<_, String>` (any spelling that ends in `Result` with `String` as its
/// error type) and of `type Err = String` / `type Error = String`, outside `#[cfg(test)]`
/// modules and `#[test]` functions.
#[derive(Default)]
struct StringErrors {
    lines: Vec<usize>,
}

fn is_string(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "String" && s.arguments.is_none()))
}

impl<'ast> Visit<'ast> for StringErrors {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !super::source::is_test_attr(&m.attrs) {
            visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !super::source::is_test_attr(&f.attrs) {
            visit::visit_item_fn(self, f);
        }
    }

    fn visit_path_segment(&mut self, s: &'ast syn::PathSegment) {
        if let (true, syn::PathArguments::AngleBracketed(a)) = (s.ident == "Result", &s.arguments) {
            let types: Vec<&syn::Type> = a
                .args
                .iter()
                .filter_map(|g| match g {
                    syn::GenericArgument::Type(t) => Some(t),
                    _ => None,
                })
                .collect();
            if types.len() == 2 && is_string(types[1]) {
                self.lines.push(s.ident.span().start().line);
            }
        }
        visit::visit_path_segment(self, s);
    }

    fn visit_impl_item_type(&mut self, t: &'ast syn::ImplItemType) {
        if (t.ident == "Err" || t.ident == "Error") && is_string(&t.ty) {
            self.lines.push(t.ident.span().start().line);
        }
        visit::visit_impl_item_type(self, t);
    }
}

/// The lines of `file` where production code has a string error.
fn string_error_lines(file: &syn::File) -> Vec<usize> {
    let mut v = StringErrors::default();
    v.visit_file(file);
    v.lines
}

/// Whether `p` is held to the checks (not [`PENDING`]).
fn checked(p: &Package) -> bool {
    !PENDING.contains(&p.name.as_str())
}

/// Every library crate outside [`PENDING`] that depends on anyhow (of any kind).
fn anyhow_in_libraries(ws: &Workspace) -> Vec<String> {
    ws.packages
        .iter()
        .filter(|p| p.name != BINARY && checked(p))
        .flat_map(|p| {
            p.deps
                .iter()
                .filter(|d| d.name == "anyhow")
                .map(move |d| format!("{} depends on anyhow ({})", p.name, d.kind))
        })
        .collect()
}

#[test]
fn no_production_code_returns_a_string_error() {
    let ws = workspace();
    for name in PENDING {
        assert!(
            ws.packages.iter().any(|p| p.name == *name),
            "{name} is not in the workspace: take it out of PENDING"
        );
    }
    let mut wrong = Vec::new();
    for p in ws.packages.iter().filter(|p| checked(p)) {
        // Production files by the module tree (a `#[cfg(test)]` on the way makes a test's).
        for f in super::production_files(p) {
            let (_, file) = read(&f);
            for line in string_error_lines(&file) {
                wrong.push(format!("{}:{line}", relative(&ws, &f)));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "Result<_, String> outside tests (crates other than {PENDING:?}); give the error a type with what it is about (an enum of the crate's error):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_string_error_check_reads_types_outside_tests() {
    let lines = |text: &str| string_error_lines(&super::source::parse("t.rs", text));
    assert_eq!(lines("fn f() -> Result<(), String> { Ok(()) }\n"), [1]);
    assert_eq!(
        lines("fn f() -> std::result::Result<Vec<u8>,\n    String> { g() }\n"),
        [1]
    );
    assert_eq!(lines("struct S {\n    r: Result<u8, String>,\n}\n"), [2]);
    assert_eq!(
        lines("fn f() { let v = x.iter().collect::<Result<Vec<_>, String>>(); }\n"),
        [1]
    );
    assert_eq!(
        lines("impl std::str::FromStr for X {\n    type Err = String;\n    fn from_str(s: &str) -> Result<X, Self::Err> { g(s) }\n}\n"),
        [2]
    );
    for fine in [
        "fn f() -> io::Result<String> { g() }\n",
        "fn f() -> Result<String, E> { g() }\n",
        "type Result<T, E = RunError> = std::result::Result<T, E>;\n",
        "// fn f() -> Result<(), String>\nfn g() {}\n",
        "fn f() { let _ = \"Result<(), String>\"; }\n",
        "#[cfg(test)]\nmod tests {\n    fn f() -> Result<(), String> { Ok(()) }\n}\n",
        "#[test]\nfn t() -> Result<(), String> { Ok(()) }\n",
    ] {
        assert_eq!(lines(fine), Vec::<usize>::new(), "{fine}");
    }
}

#[test]
fn no_library_crate_depends_on_anyhow() {
    let wrong = anyhow_in_libraries(&workspace());
    assert!(
        wrong.is_empty(),
        "library crates return their own error types (only the binary, {BINARY}, uses anyhow; {PENDING:?} for now):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_anyhow_check_sees_a_library_that_adds_it() {
    let ws = workspace();
    let mut bad = ws.packages.clone();
    for p in &mut bad {
        if p.name == "schedlab-core" || p.name == "schedlab-spec" {
            p.deps.push(super::graph::Dep {
                name: "anyhow".into(),
                kind: if p.name == "schedlab-core" {
                    "normal"
                } else {
                    "dev"
                }
                .into(),
            });
        }
    }
    let mut wrong = anyhow_in_libraries(&Workspace {
        packages: bad,
        root: ws.root.clone(),
        members: vec![],
        default_members: vec![],
    });
    wrong.sort();
    assert_eq!(
        wrong,
        [
            "schedlab-core depends on anyhow (normal)",
            "schedlab-spec depends on anyhow (dev)"
        ]
    );
}
