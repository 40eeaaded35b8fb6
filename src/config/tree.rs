//! A TOML document as a tree whose keys and values keep their byte spans, so that any problem
//! (an unknown key in a nested table, a wrong type in a list) names its line. `toml::Value`
//! drops spans, and `toml::Spanned` fails on a table that has none (one only implied by a
//! deeper header, like `[tool]` by `[tool.selfdebug]`), so [`Located`] speaks toml's span
//! protocol itself and accepts a value without a span.

use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

// serde_spanned's protocol, which toml's deserializer answers with a value's span.
const SPANNED: &str = "$__serde_spanned_private_Spanned";
const START: &str = "$__serde_spanned_private_start";
const END: &str = "$__serde_spanned_private_end";
const VALUE: &str = "$__serde_spanned_private_value";
const FIELDS: &[&str] = &[START, END, VALUE];
// toml_datetime's: a date-time is a map with this one key.
const DATETIME: &str = "$__toml_private_datetime";

/// A value and its byte span, when toml knows it.
#[derive(Debug)]
pub struct Located<T> {
    pub span: Option<Range<usize>>,
    pub value: T,
}

impl<T> Located<T> {
    pub fn start(&self) -> Option<usize> {
        self.span.as_ref().map(|s| s.start)
    }
}

/// One TOML value.
#[derive(Debug)]
pub enum Node {
    Bool(bool),
    Int(i64),
    /// No setting takes a float; only its kind is kept.
    Float,
    /// Nor a date or time.
    Datetime,
    Str(String),
    Array(Vec<Located<Node>>),
    /// Keys in file order.
    Table(Vec<(Located<String>, Located<Node>)>),
}

impl Node {
    /// What the value is, for "must be X, not Y" messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Node::Bool(_) => "a boolean",
            Node::Int(_) => "an integer",
            Node::Float => "a float",
            Node::Datetime => "a date-time",
            Node::Str(_) => "a string",
            Node::Array(_) => "an array",
            Node::Table(_) => "a table",
        }
    }

    /// The value under `key` of a table.
    pub fn get(&self, key: &str) -> Option<&Located<Node>> {
        match self {
            Node::Table(entries) => entries.iter().find(|(k, _)| k.value == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Located<Node> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct(SPANNED, FIELDS, NodeVisitor)
    }
}

// The value inside toml's span map.
impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor).map(|n| n.value)
    }
}

impl<'de> Deserialize<'de> for Located<String> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct(SPANNED, FIELDS, KeyVisitor)
    }
}

fn plain<T>(value: T) -> Located<T> {
    Located { span: None, value }
}

/// Reads the rest of toml's span map once its first key (`START`) has been read.
fn spanned_rest<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    mut map: A,
) -> Result<Located<T>, A::Error> {
    let start: usize = map.next_value()?;
    let end = match map.next_key::<String>()? {
        Some(k) if k == END => map.next_value::<usize>()?,
        _ => return Err(de::Error::custom("malformed span")),
    };
    let value = match map.next_key::<String>()? {
        Some(k) if k == VALUE => map.next_value::<T>()?,
        _ => return Err(de::Error::custom("malformed span")),
    };
    Ok(Located {
        span: Some(start..end),
        value,
    })
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Located<Node>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a TOML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(plain(Node::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(plain(Node::Int(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        i64::try_from(v)
            .map(|n| plain(Node::Int(n)))
            .map_err(|_| E::custom("integer out of range"))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(plain(Node::Float))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(plain(Node::Str(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(plain(Node::Str(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Located<Node>>()? {
            items.push(item);
        }
        Ok(plain(Node::Array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        let mut first = true;
        while let Some(key) = map.next_key::<Located<String>>()? {
            if first && key.span.is_none() && key.value == START {
                // Not a table: toml's span map around the real value.
                return spanned_rest(map);
            }
            if first && key.span.is_none() && key.value == DATETIME {
                map.next_value::<de::IgnoredAny>()?;
                return Ok(plain(Node::Datetime));
            }
            first = false;
            let value = map.next_value::<Located<Node>>()?;
            entries.push((key, value));
        }
        Ok(plain(Node::Table(entries)))
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Located<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(plain(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(plain(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        match map.next_key::<String>()? {
            Some(k) if k == START => spanned_rest(map),
            _ => Err(de::Error::custom("malformed span")),
        }
    }
}

/// Parses a whole document.
pub fn parse(text: &str) -> Result<Node, toml::de::Error> {
    let doc: Located<Node> = toml::from_str(text)?;
    Ok(doc.value)
}

/// 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_span_of_nested_keys_and_list_items() {
        let text = "[project]\nname = 'x'\n\n[tool.selfdebug.llm]\nmodel = 'm'\n\n[tool.selfdebug]\nmax-attempts = 3\nselect = [\n  'a',\n  'b',\n]\n";
        let doc = parse(text).unwrap();
        // `tool` is only implied by the headers: it has no span, its contents do.
        let tool = doc.get("tool").unwrap();
        assert!(tool.span.is_none());
        let sd = tool.value.get("selfdebug").unwrap();
        let Node::Table(entries) = &sd.value else {
            panic!("not a table")
        };
        let keys: Vec<(&str, usize)> = entries
            .iter()
            .map(|(k, _)| (k.value.as_str(), line_of(text, k.start().unwrap())))
            .collect();
        assert_eq!(keys, [("llm", 4), ("max-attempts", 8), ("select", 9)]);
        let Node::Array(items) = &sd.value.get("select").unwrap().value else {
            panic!("not an array")
        };
        assert_eq!(line_of(text, items[1].start().unwrap()), 11);
        let Node::Table(llm) = &sd.value.get("llm").unwrap().value else {
            panic!("not a table")
        };
        assert_eq!(line_of(text, llm[0].0.start().unwrap()), 5);
        assert!(matches!(llm[0].1.value, Node::Str(ref m) if m == "m"));
    }
}
