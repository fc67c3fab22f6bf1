//! A span-carrying tree of any TOML document, to find which key a byte offset belongs to and
//! where a key path such as `axes.workloads[1].iterations` is written.
//!
//! Built with toml's own parser through `toml::Spanned`'s deserializer protocol, so dotted
//! keys, inline tables, `[section]` headers and `[[arrays.of.tables]]` all get their spans.

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

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
        let (name, mut rest) = match part.find('[') {
            Some(i) => part.split_at(i),
            None => (part, ""),
        };
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

/// A parsed TOML document with the byte span of every key and value toml reports.
#[derive(Debug)]
pub(crate) struct Tree {
    root: Node,
}

#[derive(Debug)]
struct Node {
    span: Option<Range<usize>>,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Table(Vec<(Key, Node)>),
    Array(Vec<Node>),
    Scalar,
}

#[derive(Debug)]
struct Key {
    name: String,
    span: Option<Range<usize>>,
}

impl Tree {
    /// Parses `text`; `None` when it is not valid TOML.
    pub(crate) fn parse(text: &str) -> Option<Tree> {
        toml::from_str::<Node>(text).ok().map(|root| Tree { root })
    }

    /// The path of the innermost key or value whose span holds `offset` (a key wins over a
    /// larger value around it); `None` outside every key and value.
    pub(crate) fn path_at(&self, offset: usize) -> Option<Vec<Seg>> {
        let mut best: Option<(usize, usize, Vec<Seg>)> = None;
        let mut path = Vec::new();
        collect(&self.root, offset, &mut path, &mut best);
        best.map(|(_, _, p)| p)
    }

    /// Byte offset where `path` is written: the value for a scalar, the key for a table or
    /// list (the element itself for a list index). A path not written in full gives its
    /// longest written prefix; `None` when not even the first step is written.
    pub(crate) fn offset_of(&self, path: &[Seg]) -> Option<usize> {
        let mut node = &self.root;
        let mut found = None;
        for seg in path {
            match (seg, &node.kind) {
                (Seg::Key(name), Kind::Table(entries)) => {
                    let Some((key, value)) = entries.iter().find(|(k, _)| &k.name == name) else {
                        break;
                    };
                    let at = match value.kind {
                        Kind::Scalar => value.span.as_ref().or(key.span.as_ref()),
                        _ => key.span.as_ref().or(value.span.as_ref()),
                    };
                    found = at.map(|s| s.start).or(found);
                    node = value;
                }
                (Seg::Index(i), Kind::Array(items)) => {
                    let Some(item) = items.get(*i) else { break };
                    found = item.span.as_ref().map(|s| s.start).or(found);
                    node = item;
                }
                _ => break,
            }
        }
        found
    }
}

fn contains(span: &Option<Range<usize>>, offset: usize) -> bool {
    match span {
        Some(s) => s.start <= offset && (offset < s.end || (s.start == s.end && offset == s.start)),
        None => false,
    }
}

/// Makes `path` + `extra` the best match if `span` holds `offset` and is smaller (or as small
/// and deeper) than the best so far.
fn offer(
    span: &Option<Range<usize>>,
    offset: usize,
    path: &[Seg],
    extra: Seg,
    best: &mut Option<(usize, usize, Vec<Seg>)>,
) {
    if !contains(span, offset) {
        return;
    }
    let len = span.as_ref().map_or(0, |s| s.end - s.start);
    let depth = path.len() + 1;
    let better = match best {
        Some((l, d, _)) => len < *l || (len == *l && depth > *d),
        None => true,
    };
    if better {
        let mut p = path.to_vec();
        p.push(extra);
        *best = Some((len, depth, p));
    }
}

/// Depth-first search for the smallest span holding `offset`; ties go to the deeper path.
/// Every branch is searched: a `[section]`'s span leaves out its `[section.sub]` tables.
fn collect(
    node: &Node,
    offset: usize,
    path: &mut Vec<Seg>,
    best: &mut Option<(usize, usize, Vec<Seg>)>,
) {
    match &node.kind {
        Kind::Table(entries) => {
            for (key, value) in entries {
                let seg = Seg::Key(key.name.clone());
                offer(&key.span, offset, path, seg.clone(), best);
                offer(&value.span, offset, path, seg.clone(), best);
                path.push(seg);
                collect(value, offset, path, best);
                path.pop();
            }
        }
        Kind::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                offer(&item.span, offset, path, Seg::Index(i), best);
                path.push(Seg::Index(i));
                collect(item, offset, path, best);
                path.pop();
            }
        }
        Kind::Scalar => {}
    }
}

/// The struct name and field names `toml::Spanned` asks a deserializer for, learnt once by
/// asking it (so no private names are copied here). `None` if that protocol ever changes.
type Marker = (&'static str, &'static [&'static str]);

fn marker() -> Option<Marker> {
    static MARKER: OnceLock<Option<Marker>> = OnceLock::new();
    *MARKER.get_or_init(|| match toml::Spanned::<String>::deserialize(Recorder) {
        Err(Recorded(Some(m))) if m.1.len() == 3 => Some(m),
        _ => None,
    })
}

/// A deserializer that only records the name and fields of the struct asked for.
struct Recorder;

#[derive(Debug)]
struct Recorded(Option<Marker>);

impl fmt::Display for Recorded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("recording the span protocol")
    }
}

impl std::error::Error for Recorded {}

impl de::Error for Recorded {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Recorded(None)
    }
}

impl<'de> Deserializer<'de> for Recorder {
    type Error = Recorded;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Recorded> {
        Err(Recorded(None))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Recorded> {
        Err(Recorded(Some((name, fields))))
    }

    serde::forward_to_deserialize_any! {
        bool u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 char str string seq bytes byte_buf map
        option unit ignored_any unit_struct tuple_struct tuple identifier newtype_struct enum
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a TOML key")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                Ok(Key {
                    name: s.to_owned(),
                    span: None,
                })
            }
            // The spanned form: start, end and the key itself.
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Key, A::Error> {
                let fields = marker().map_or(&[][..], |m| m.1);
                let (mut start, mut end, mut name) = (None, None, None);
                while let Some(k) = a.next_key::<String>()? {
                    if fields.first() == Some(&k.as_str()) {
                        start = Some(a.next_value::<usize>()?);
                    } else if fields.get(1) == Some(&k.as_str()) {
                        end = Some(a.next_value::<usize>()?);
                    } else {
                        name = Some(a.next_value::<String>()?);
                    }
                }
                let name =
                    name.ok_or_else(|| de::Error::custom("a spanned key without its name"))?;
                Ok(Key {
                    name,
                    span: start.zip(end).map(|(s, e)| s..e),
                })
            }
        }
        match marker() {
            Some((name, fields)) => d.deserialize_struct(name, fields, KeyVisitor),
            None => d.deserialize_any(KeyVisitor),
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match marker() {
            Some((name, fields)) => d.deserialize_struct(name, fields, NodeVisitor),
            None => d.deserialize_any(NodeVisitor),
        }
    }
}

/// The value inside a span: asked for as itself, or it would be wrapped in a span again.
struct Bare;

impl<'de> DeserializeSeed<'de> for Bare {
    type Value = Node;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

fn scalar() -> Node {
    Node {
        span: None,
        kind: Kind::Scalar,
    }
}

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any TOML value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
        Ok(scalar())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
        Ok(scalar())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
        Ok(scalar())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
        Ok(scalar())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Node, E> {
        Ok(scalar())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = a.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Node {
            span: None,
            kind: Kind::Array(items),
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Node, A::Error> {
        let fields = marker().map_or(&[][..], |m| m.1);
        let mut entries = Vec::new();
        while let Some(key) = a.next_key::<Key>()? {
            if entries.is_empty() && fields.first() == Some(&key.name.as_str()) {
                // A span around a value: start, end, then the value.
                let start: usize = a.next_value()?;
                let _ = a.next_key::<Key>()?;
                let end: usize = a.next_value()?;
                let _ = a.next_key::<Key>()?;
                let mut node = a.next_value_seed(Bare)?;
                node.span = Some(start..end);
                return Ok(node);
            }
            let value = a.next_value::<Node>()?;
            entries.push((key, value));
        }
        Ok(Node {
            span: None,
            kind: Kind::Table(entries),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "name = \"x\"\n\
        [axes]\n\
        tasks = [1, 2]\n\
        workloads = [{ kind = \"cpu\", iterations = 0 }]\n\
        [settings]\n\
        trials = 0\n\
        [settings.deadline]\n\
        runtime = \"60ms\"\n\
        [other]\n\
        sub.period = \"1ms\"\n";

    fn at(text: &str, needle: &str) -> usize {
        text.find(needle).expect("needle in text")
    }

    #[test]
    fn paths_split_into_keys_and_indices_and_render_back() {
        let p = parse_path("axes.workloads[1].iterations");
        assert_eq!(
            p,
            vec![
                Seg::Key("axes".into()),
                Seg::Key("workloads".into()),
                Seg::Index(1),
                Seg::Key("iterations".into())
            ]
        );
        assert_eq!(render_path(&p), "axes.workloads[1].iterations");
        assert_eq!(render_path(&[Seg::Key("a b".into())]), "\"a b\"");
    }

    #[test]
    fn the_span_protocol_of_toml_is_learnt() {
        let (name, fields) = marker().expect("toml::Spanned asks for a struct");
        assert!(!name.is_empty());
        assert_eq!(fields.len(), 3);
    }

    #[test]
    fn an_offset_maps_to_the_innermost_key_or_value() {
        let t = Tree::parse(DOC).unwrap();
        let path = |off| t.path_at(off).map(|p| render_path(&p));
        assert_eq!(path(at(DOC, "2]")).as_deref(), Some("axes.tasks[1]"));
        assert_eq!(
            path(at(DOC, "iterations")).as_deref(),
            Some("axes.workloads[0].iterations")
        );
        assert_eq!(
            path(at(DOC, "{ kind")).as_deref(),
            Some("axes.workloads[0]")
        );
        assert_eq!(path(at(DOC, "trials")).as_deref(), Some("settings.trials"));
        assert_eq!(
            path(at(DOC, "\"60ms\"")).as_deref(),
            Some("settings.deadline.runtime")
        );
        assert_eq!(path(DOC.len() + 10), None);
    }

    #[test]
    fn a_path_maps_to_where_it_is_written() {
        let t = Tree::parse(DOC).unwrap();
        let off = |p: &str| t.offset_of(&parse_path(p));
        // Scalars point at their value, lists and tables at their key.
        assert_eq!(
            off("settings.trials"),
            Some(at(DOC, "0\n[settings.deadline"))
        );
        assert_eq!(off("axes.tasks"), Some(at(DOC, "tasks")));
        assert_eq!(off("axes.tasks[1]"), Some(at(DOC, "2]")));
        assert_eq!(off("axes.workloads[0].iterations"), Some(at(DOC, "0 }")));
        // Dotted keys and [section.headers] are both found.
        assert_eq!(off("other.sub.period"), Some(at(DOC, "\"1ms\"")));
        assert_eq!(off("settings.deadline.runtime"), Some(at(DOC, "\"60ms\"")));
        // A key not written falls back to its longest written prefix.
        assert_eq!(off("axes.tasks[7]"), Some(at(DOC, "tasks")));
        assert_eq!(off("axes.kind"), Some(at(DOC, "axes")));
        assert_eq!(off("nothing.here"), None);
    }

    #[test]
    fn arrays_of_tables_get_one_span_per_table() {
        let text =
            "[[axes.workloads]]\nkind = \"io\"\n[[axes.workloads]]\nkind = \"cpu\"\nwork = \"5\"\n";
        let t = Tree::parse(text).unwrap();
        assert_eq!(
            t.offset_of(&parse_path("axes.workloads[1].work")),
            Some(at(text, "\"5\""))
        );
        assert_eq!(
            t.offset_of(&parse_path("axes.workloads[1]")),
            Some(text.rfind("[[").unwrap())
        );
        assert_eq!(
            t.path_at(at(text, "\"5\""))
                .map(|p| render_path(&p))
                .as_deref(),
            Some("axes.workloads[1].work")
        );
    }

    #[test]
    fn invalid_toml_gives_no_tree_and_odd_values_do_not_break_it() {
        assert!(Tree::parse("tasks = [4,").is_none());
        let t = Tree::parse("when = 1979-05-27T07:32:00Z\n\"quoted key\" = 1.5\n").unwrap();
        assert_eq!(t.offset_of(&parse_path("when")), Some(0));
    }
}
