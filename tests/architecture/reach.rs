//! Which top-level modules of a crate name which (paths in `use` items and in code, through
//! `crate::` or `super::`), and what each reaches by way of the others: the report's model
//! may not reach its renderers, neither directly nor round through another module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// For each top-level module of the crate rooted at `root` (its production files), the other
/// top-level modules its files name.
pub fn module_edges(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let src = root.parent().unwrap();
    let files: Vec<(String, syn::File)> = crate::tree::files(root)
        .into_iter()
        .filter(|f| !f.test_only && f.path != root)
        .map(|f| {
            let rel = f.path.strip_prefix(src).unwrap();
            let first = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let module = first.trim_end_matches(".rs").to_string();
            let text = std::fs::read_to_string(&f.path).unwrap();
            (
                module,
                crate::source::parse(&f.path.display().to_string(), &text),
            )
        })
        .collect();
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, file) in &files {
        let out = edges.entry(module.clone()).or_default();
        for other in modules.iter().filter(|o| *o != module) {
            if !crate::source::paths_to_module(file, other).is_empty() {
                out.insert(other.clone());
            }
        }
    }
    edges
}

/// The shortest way from one of `from` to `to` over `edges`, if there is one.
pub fn way(
    edges: &BTreeMap<String, BTreeSet<String>>,
    from: &[&str],
    to: &str,
) -> Option<Vec<String>> {
    let mut came: BTreeMap<String, String> = BTreeMap::new();
    let mut todo: std::collections::VecDeque<String> = from.iter().map(|s| s.to_string()).collect();
    let mut seen: BTreeSet<String> = todo.iter().cloned().collect();
    while let Some(at) = todo.pop_front() {
        if at == to {
            let mut way = vec![at.clone()];
            while let Some(prev) = came.get(way.last().unwrap()) {
                way.push(prev.clone());
            }
            way.reverse();
            return Some(way);
        }
        for next in edges.get(&at).into_iter().flatten() {
            if seen.insert(next.clone()) {
                came.insert(next.clone(), at.clone());
                todo.push_back(next.clone());
            }
        }
    }
    None
}

#[test]
fn a_way_round_is_found_and_named() {
    let mut e: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut edge = |a: &str, b: &str| {
        e.entry(a.into()).or_default().insert(b.into());
    };
    edge("model", "pool");
    edge("pool", "cmd");
    edge("cmd", "render");
    edge("claims", "model");
    edge("render", "model");
    assert_eq!(
        way(&e, &["model", "claims"], "render"),
        Some(vec![
            "model".into(),
            "pool".into(),
            "cmd".into(),
            "render".into()
        ])
    );
    e.get_mut("cmd").unwrap().remove("render");
    assert_eq!(way(&e, &["model", "claims"], "render"), None);
}
