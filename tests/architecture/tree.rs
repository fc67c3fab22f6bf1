//! The module tree of a crate, walked from its root through its `mod NAME;` declarations:
//! which files the crate compiles, and which of them only for tests (a `#[cfg(test)]` on the
//! way), so that the checks of production code see every production file whatever its name.

use std::path::{Path, PathBuf};

/// A file of a crate's module tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModFile {
    /// The file.
    pub path: PathBuf,
    /// Compiled only for tests: a `#[cfg(test)]` (or `#[test]`) module lies on the way.
    pub test_only: bool,
}

/// Every file of the module tree rooted at `root` (a crate root: lib.rs, main.rs, a build
/// script, a test target's main file), the root first.
pub fn files(root: &Path) -> Vec<ModFile> {
    let mut out = Vec::new();
    walk(root, true, false, &mut out);
    out
}

/// Adds `file` and the files of its modules; `mod_rs`: its `mod NAME;` resolve beside it (a
/// crate root, a `mod.rs`, a file named by `#[path]`), else in a directory named after it.
fn walk(file: &Path, mod_rs: bool, test_only: bool, out: &mut Vec<ModFile>) {
    if out.iter().any(|f| f.path == file) {
        return;
    }
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: a module of the tree: {e}", file.display()));
    let parsed = crate::source::parse(&file.display().to_string(), &text);
    out.push(ModFile {
        path: file.to_path_buf(),
        test_only,
    });
    let here = file.parent().unwrap().to_path_buf();
    let dir = if mod_rs {
        here.clone()
    } else {
        here.join(file.file_stem().unwrap())
    };
    modules(&parsed.items, &here, &dir, test_only, out);
}

/// The modules declared in `items`: inline ones searched for their own declarations (under
/// `dir/NAME`), file ones walked. `here` is the declaring file's directory (`#[path]`).
fn modules(items: &[syn::Item], here: &Path, dir: &Path, test_only: bool, out: &mut Vec<ModFile>) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        let test_only = test_only || crate::source::is_test_attr(&m.attrs);
        let name = m.ident.to_string();
        let path = path_attr(&m.attrs);
        match (&m.content, path) {
            (Some((_, inner)), p) => {
                let sub = dir.join(p.unwrap_or(name));
                modules(inner, &sub, &sub, test_only, out);
            }
            (None, Some(p)) => walk(&here.join(p), true, test_only, out),
            (None, None) => {
                let flat = dir.join(format!("{name}.rs"));
                if flat.exists() {
                    walk(&flat, false, test_only, out);
                } else {
                    walk(&dir.join(&name).join("mod.rs"), true, test_only, out);
                }
            }
        }
    }
}

/// The value of a `#[path = "..."]` attribute.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

#[test]
fn the_tree_follows_declarations_and_marks_what_tests_alone_compile() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let write = |rel: &str, text: &str| {
        let p = d.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "lib.rs",
        "mod a;\nmod b;\n#[cfg(test)]\nmod tests;\nmod inline { mod deep; }\n",
    );
    // A production module named like a test file, with tests of its own beside it.
    write(
        "a.rs",
        "mod child;\n#[cfg(test)]\n#[path = \"a_tests.rs\"]\nmod tests;\n",
    );
    write("a/child.rs", "fn f() {}\n");
    write("a_tests.rs", "mod helper;\n");
    write("b/mod.rs", "pub mod rank_tests;\n");
    write("b/rank_tests.rs", "fn rank() {}\n");
    write("tests.rs", "fn t() {}\n");
    write("inline/deep.rs", "fn g() {}\n");
    // Declared from a #[path] file, which resolves its modules beside it.
    write("helper.rs", "fn h() {}\n");
    write("unreached.rs", "fn dead() {}\n");
    let got: Vec<(String, bool)> = files(&d.join("lib.rs"))
        .into_iter()
        .map(|f| {
            let rel = f.path.strip_prefix(d).unwrap().display().to_string();
            (rel, f.test_only)
        })
        .collect();
    let want = [
        ("lib.rs", false),
        ("a.rs", false),
        ("a/child.rs", false),
        ("a_tests.rs", true),
        ("helper.rs", true),
        ("b/mod.rs", false),
        ("b/rank_tests.rs", false),
        ("tests.rs", true),
        ("inline/deep.rs", false),
    ];
    let want: Vec<(String, bool)> = want.iter().map(|(p, t)| (p.to_string(), *t)).collect();
    assert_eq!(got, want);
}
