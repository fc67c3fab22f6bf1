//! Where keys and values are written in a TOML text: the key path a byte offset belongs to, and
//! the offset where a key path such as `axes.workloads[1].iterations` is written. The spans
//! come from `toml_edit`, the parser `toml` itself uses, so they match toml's error spans.

use std::ops::Range;
use toml_edit::{ArrayOfTables, ImDocument, InlineTable, Item, Table, Value};

/// One step of a key path: a table key or a list index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// A key of a table.
    Key(String),
    /// An index into a list.
    Index(usize),
}

/// Splits `axes.workloads[1].iterations` into its steps; text that is not a path gives keys as written.
pub(crate) fn parse_path(path: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !name.is_empty() {
            out.push(Seg::Key(name.to_string()));
        }
        while let Some(r) = rest.strip_prefix('[') {
            let Some(close) = r.find(']') else { break };
            if let Ok(i) = r[..close].parse() {
                out.push(Seg::Index(i));
            }
            rest = &r[close + 1..];
        }
    }
    out
}

/// Writes steps back as `a.b[0].c`; keys that are not bare TOML keys are quoted.
pub(crate) fn render_path(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                let bare = !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if bare {
                    out.push_str(k);
                } else {
                    out.push_str(&format!("{k:?}"));
                }
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// A parsed TOML text with the spans of its keys and values.
pub(crate) struct Spans<'a> {
    doc: ImDocument<&'a str>,
}

/// A value of the document, however it is written: a `[table]`, an inline table, a list,
/// a `[[list.of.tables]]` or a scalar.
#[derive(Clone, Copy)]
enum Node<'a> {
    Table(&'a Table),
    Inline(&'a InlineTable),
    List(&'a toml_edit::Array),
    Tables(&'a ArrayOfTables),
    Scalar,
}

/// A child of a node: its key's span (for a table entry), its own span, and itself.
struct Child<'a> {
    seg: Seg,
    key_span: Option<Range<usize>>,
    span: Option<Range<usize>>,
    node: Node<'a>,
}

fn item_node(item: &Item) -> Node<'_> {
    match item {
        Item::Table(t) => Node::Table(t),
        Item::ArrayOfTables(a) => Node::Tables(a),
        Item::Value(v) => value_node(v),
        Item::None => Node::Scalar,
    }
}

fn value_node(value: &Value) -> Node<'_> {
    match value {
        Value::InlineTable(t) => Node::Inline(t),
        Value::Array(a) => Node::List(a),
        _ => Node::Scalar,
    }
}

/// A table entry as a child.
fn entry<'a>(name: &str, pair: Option<(&'a toml_edit::Key, &'a Item)>) -> Option<Child<'a>> {
    let (key, item) = pair?;
    Some(Child {
        seg: Seg::Key(name.to_string()),
        key_span: key.span(),
        span: item.span(),
        node: item_node(item),
    })
}

impl<'a> Node<'a> {
    /// The entries of a table or the elements of a list, in the order written.
    fn children(self) -> Vec<Child<'a>> {
        let element = |i: usize, span, node| Child {
            seg: Seg::Index(i),
            key_span: None,
            span,
            node,
        };
        match self {
            Node::Table(t) => t
                .iter()
                .filter_map(|(k, _)| entry(k, t.get_key_value(k)))
                .collect(),
            Node::Inline(t) => t
                .iter()
                .filter_map(|(k, _)| entry(k, t.get_key_value(k)))
                .collect(),
            Node::List(a) => a
                .iter()
                .enumerate()
                .map(|(i, v)| element(i, v.span(), value_node(v)))
                .collect(),
            Node::Tables(a) => a
                .iter()
                .enumerate()
                .map(|(i, t)| element(i, t.span(), Node::Table(t)))
                .collect(),
            Node::Scalar => Vec::new(),
        }
    }

    /// The child at `seg`, if written.
    fn child(self, seg: &Seg) -> Option<Child<'a>> {
        self.children().into_iter().find(|c| &c.seg == seg)
    }
}

/// Whether `span` holds `offset` (an empty span holds its own start).
fn holds(span: &Option<Range<usize>>, offset: usize) -> bool {
    span.as_ref().is_some_and(|s| {
        s.start <= offset && (offset < s.end || (s.start == s.end && offset == s.start))
    })
}

/// The best match so far of [`Spans::path_at`]: span length, path depth, path.
type Best = Option<(usize, usize, Vec<Seg>)>;

/// Makes `path` the best match if `span` holds `offset` and is smaller (or as small and the
/// path deeper) than the best so far.
fn offer(span: &Option<Range<usize>>, offset: usize, path: &[Seg], best: &mut Best) {
    if !holds(span, offset) {
        return;
    }
    let len = span.as_ref().map_or(0, |s| s.end - s.start);
    let better = match best {
        Some((l, d, _)) => len < *l || (len == *l && path.len() > *d),
        None => true,
    };
    if better {
        *best = Some((len, path.len(), path.to_vec()));
    }
}

/// Depth-first search below `node` for the smallest span holding `offset`. Every branch is
/// searched: a `[section]`'s span leaves out its `[section.sub]` tables.
fn search(node: Node<'_>, offset: usize, path: &mut Vec<Seg>, best: &mut Best) {
    for child in node.children() {
        path.push(child.seg);
        offer(&child.key_span, offset, path, best);
        offer(&child.span, offset, path, best);
        search(child.node, offset, path, best);
        path.pop();
    }
}

impl<'a> Spans<'a> {
    /// Parses `text`; `None` when it is not valid TOML.
    pub(crate) fn parse(text: &'a str) -> Option<Spans<'a>> {
        ImDocument::parse(text).ok().map(|doc| Spans { doc })
    }

    fn root(&self) -> Node<'_> {
        item_node(self.doc.as_item())
    }

    /// The path of the innermost key or value whose span holds `offset` (a key wins over a
    /// larger value around it); `None` outside every key and value.
    pub(crate) fn path_at(&self, offset: usize) -> Option<Vec<Seg>> {
        let mut best = None;
        search(self.root(), offset, &mut Vec::new(), &mut best);
        best.map(|(_, _, p)| p)
    }

    /// Byte offset where `path` is written: the value for a scalar, the key for a table or
    /// list (the element itself for a list index). A path not written in full gives its
    /// longest written prefix; `None` when not even the first step is written.
    pub(crate) fn offset_of(&self, path: &[Seg]) -> Option<usize> {
        let mut node = self.root();
        let mut found = None;
        for seg in path {
            let Some(child) = node.child(seg) else { break };
            let at = match child.node {
                Node::Scalar => child.span.or(child.key_span),
                _ => child.key_span.or(child.span),
            };
            found = at.map(|s| s.start).or(found);
            node = child.node;
        }
        found
    }
}

#[cfg(test)]
#[path = "spans_tests.rs"]
mod tests;
