//! What the compiler does not keep, read from the sources parsed as Rust (syn): string
//! literals that are SQL, the `#![forbid(unsafe_code)]` of a crate root, the `unsafe` of a
//! test file, the length of files and functions.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::path::{Path, PathBuf};
use syn::visit::{self, Visit};

/// Every .rs file under `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Whether a file holds only tests (`tests.rs`, `*_tests.rs` beside the module they test).
pub fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name == "tests.rs" || name.ends_with("_tests.rs")
}

/// Parses Rust source; panics with the file's name where it is not Rust.
pub fn parse(name: &str, text: &str) -> syn::File {
    syn::parse_file(text).unwrap_or_else(|e| panic!("{name} does not parse as Rust: {e}"))
}

/// Collects string literals with their line: in code, in attributes other than doc comments,
/// and in the tokens of macro calls, where the pieces of a `concat!` count as one string.
#[derive(Default)]
struct Strings {
    found: Vec<(usize, String)>,
}

impl Strings {
    fn literal(&mut self, lit: &proc_macro2::Literal) -> Option<String> {
        let value = match syn::Lit::new(lit.clone()) {
            syn::Lit::Str(s) => s.value(),
            syn::Lit::ByteStr(s) => String::from_utf8_lossy(&s.value()).into_owned(),
            _ => return None,
        };
        self.found.push((lit.span().start().line, value.clone()));
        Some(value)
    }

    /// Walks macro tokens; returns the strings met, in order (what `concat!` would join).
    fn tokens(&mut self, tokens: TokenStream) -> Vec<String> {
        let mut met = Vec::new();
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                // `#[...]` inside a macro: doc comments are prose.
                TokenTree::Punct(p) if p.as_char() == '#' => {
                    if let Some(TokenTree::Group(g)) = trees.get(i + 1) {
                        if g.delimiter() == Delimiter::Bracket {
                            i += 2;
                            continue;
                        }
                    }
                }
                TokenTree::Ident(id) if id == "concat" => {
                    let bang =
                        matches!(trees.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!');
                    if let (true, Some(TokenTree::Group(g))) = (bang, trees.get(i + 2)) {
                        let line = g.span().start().line;
                        let joined = self.tokens(g.stream()).concat();
                        self.found.push((line, joined));
                        i += 3;
                        continue;
                    }
                }
                TokenTree::Literal(lit) => met.extend(self.literal(lit)),
                TokenTree::Group(g) => met.extend(self.tokens(g.stream())),
                _ => {}
            }
            i += 1;
        }
        met
    }
}

impl<'ast> Visit<'ast> for Strings {
    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        if a.path().is_ident("doc") {
            return;
        }
        if let syn::Meta::List(l) = &a.meta {
            self.tokens(l.tokens.clone());
        }
        visit::visit_attribute(self, a);
    }

    fn visit_lit_str(&mut self, s: &'ast syn::LitStr) {
        self.found.push((s.span().start().line, s.value()));
    }

    fn visit_lit_byte_str(&mut self, s: &'ast syn::LitByteStr) {
        let text = String::from_utf8_lossy(&s.value()).into_owned();
        self.found.push((s.span().start().line, text));
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let name = m.path.segments.last().map(|s| s.ident.to_string());
        if name.as_deref() == Some("concat") {
            let line = m.path.segments[0].ident.span().start().line;
            let joined = self.tokens(m.tokens.clone()).concat();
            self.found.push((line, joined));
        } else {
            self.tokens(m.tokens.clone());
        }
    }
}

/// Every string literal of a file (and every `concat!` joined), with its line.
pub fn strings(file: &syn::File) -> Vec<(usize, String)> {
    let mut s = Strings::default();
    s.visit_file(file);
    s.found
}

/// The SQL statements among a file's string literals, as `line: text`.
pub fn sql_in(file: &syn::File) -> Vec<(usize, String)> {
    strings(file)
        .into_iter()
        .filter(|(_, s)| super::sql::is_sql(s))
        .collect()
}

/// Whether a crate root says `#![forbid(unsafe_code)]` (deny could be allowed again below).
pub fn forbids_unsafe(root: &syn::File) -> bool {
    root.attrs.iter().any(|a| {
        matches!(a.style, syn::AttrStyle::Inner(_))
            && a.path().is_ident("forbid")
            && a.parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            )
            .is_ok_and(|lints| lints.iter().any(|p| p.is_ident("unsafe_code")))
    })
}

/// The lines of a file's `unsafe` keywords: blocks, functions, impls, traits, extern blocks,
/// and those inside macro calls, which syn's tree keeps as unparsed tokens
/// (an unsafe block as an argument of `assert_eq!`), so the tokens are read, not the tree. Comments, doc
/// comments, string literals, `r#unsafe` and names such as `unsafe_code` are not the keyword.
pub fn unsafe_lines(name: &str, text: &str) -> Vec<usize> {
    parse(name, text);
    fn walk(tokens: TokenStream, lines: &mut Vec<usize>) {
        for t in tokens {
            match t {
                TokenTree::Ident(id) if id == "unsafe" => lines.push(id.span().start().line),
                TokenTree::Group(g) => walk(g.stream(), lines),
                _ => {}
            }
        }
    }
    let tokens: TokenStream = text
        .parse()
        .unwrap_or_else(|e| panic!("{name} does not parse as Rust: {e}"));
    let mut lines = Vec::new();
    walk(tokens, &mut lines);
    lines
}

/// Whether `attrs` mark a test: `#[test]` or `#[cfg(test)]`.
pub fn is_test_attr(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
    })
}

/// Functions with their length in lines (signature to closing brace), outside tests.
#[derive(Default)]
struct Functions {
    owner: Vec<String>,
    found: Vec<(String, usize)>,
}

impl Functions {
    fn function(&mut self, name: &syn::Ident, sig_start: usize, block: &syn::Block) {
        let lines = block.brace_token.span.close().start().line + 1 - sig_start;
        let mut path = self.owner.clone();
        path.push(name.to_string());
        self.found.push((path.join("::"), lines));
    }
}

impl<'ast> Visit<'ast> for Functions {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test_attr(&m.attrs) {
            self.owner.push(m.ident.to_string());
            visit::visit_item_mod(self, m);
            self.owner.pop();
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if is_test_attr(&i.attrs) {
            return;
        }
        let ty = match &*i.self_ty {
            syn::Type::Path(p) => p.path.segments.last().unwrap().ident.to_string(),
            _ => "impl".to_string(),
        };
        self.owner.push(ty);
        visit::visit_item_impl(self, i);
        self.owner.pop();
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test_attr(&f.attrs) {
            let start = f.sig.fn_token.span.start().line;
            self.function(&f.sig.ident, start, &f.block);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test_attr(&f.attrs) {
            let start = f.sig.fn_token.span.start().line;
            self.function(&f.sig.ident, start, &f.block);
        }
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let (Some(block), false) = (&f.default, is_test_attr(&f.attrs)) {
            let start = f.sig.fn_token.span.start().line;
            self.function(&f.sig.ident, start, block);
        }
    }
}

/// Every function and method outside tests (`Type::method`, `module::function` for inline
/// modules) with its length in lines; functions nested in a body count as part of it.
pub fn functions(file: &syn::File) -> Vec<(String, usize)> {
    let mut f = Functions::default();
    f.visit_file(file);
    f.found
}

/// Finds the paths (in `use` items, expressions, types, patterns) that name module `target`
/// of the crate: `crate::target`, `super::target`, `super::super::target`, ..., `self::target`
/// is not one (a child). Doc comments and string literals are not paths.
struct CratePaths<'t> {
    target: &'t str,
    found: Vec<(usize, String)>,
}

impl CratePaths<'_> {
    /// Whether the segments, from the first, climb to the crate (`crate`, `super`s) and then
    /// name the target module.
    fn names_target(&self, segments: &[String]) -> bool {
        let climb = segments
            .iter()
            .take_while(|s| *s == "crate" || *s == "super")
            .count();
        climb > 0 && segments.get(climb).is_some_and(|s| s == self.target)
    }

    fn check(&mut self, line: usize, segments: Vec<String>) {
        if self.names_target(&segments) {
            self.found.push((line, segments.join("::")));
        }
    }

    /// Every path a `use` tree spells, with the segments before it.
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let line = n.ident.span().start().line;
                let mut all = prefix.clone();
                all.push(n.ident.to_string());
                self.check(line, all);
            }
            syn::UseTree::Rename(r) => {
                let line = r.ident.span().start().line;
                let mut all = prefix.clone();
                all.push(r.ident.to_string());
                self.check(line, all);
            }
            syn::UseTree::Glob(g) => {
                let line = g.star_token.spans[0].start().line;
                self.check(line, prefix.clone());
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for CratePaths<'_> {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(first) = p.segments.first() {
            self.check(first.ident.span().start().line, segments);
        }
        visit::visit_path(self, p);
    }
}

/// The lines of `file` whose paths name the crate's module `target` (`crate::render`,
/// `super::render`, `super::super::render::plots::Bar`, in `use` items or in code), each
/// with the path.
pub fn paths_to_module(file: &syn::File, target: &str) -> Vec<(usize, String)> {
    let mut v = CratePaths {
        target,
        found: Vec::new(),
    };
    v.visit_file(file);
    v.found
}
