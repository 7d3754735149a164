//! [`RawObject`]: a JSON object kept as its text, parsed only into the type
//! that finally needs it. A request's `params` and a tool call's
//! `arguments` travel this way: decoding a message does not build a
//! [`serde_json::Value`] tree that a typed parse then walks again.

use std::borrow::Cow;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A JSON object as its exact text (always an object).
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct RawObject(Box<RawValue>);

impl RawObject {
    /// The raw value, if it is an object.
    pub fn from_raw(raw: Box<RawValue>) -> Option<Self> {
        is_object(&raw).then_some(RawObject(raw))
    }

    /// `{}`.
    pub fn empty() -> Self {
        RawObject(RawValue::from_string("{}".to_owned()).expect("{} is JSON"))
    }

    /// The object of a map.
    pub fn from_map(map: &Map<String, Value>) -> Self {
        RawObject(serde_json::value::to_raw_value(map).expect("a map serializes"))
    }

    /// The exact JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// Parses the object into `T`.
    pub fn parse<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(self.0.get())
    }

    /// Parses the object into `T`, which may borrow from it.
    pub fn parse_borrowed<'a, T: Deserialize<'a>>(&'a self) -> serde_json::Result<T> {
        serde_json::from_str(self.0.get())
    }

    /// The object as a map (for code that wants a tree).
    pub fn to_map(&self) -> Map<String, Value> {
        self.parse().unwrap_or_default()
    }
}

impl From<Map<String, Value>> for RawObject {
    fn from(map: Map<String, Value>) -> Self {
        RawObject::from_map(&map)
    }
}

impl Default for RawObject {
    fn default() -> Self {
        RawObject::empty()
    }
}

/// Equal when the objects are (whatever their whitespace or key order).
impl PartialEq for RawObject {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str() || self.to_map() == other.to_map()
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        let kind = json_kind(raw.get());
        RawObject::from_raw(raw).ok_or_else(|| D::Error::custom(format!("must be a JSON object, got {kind}")))
    }
}

/// What kind of JSON value well-formed `text` is, in words ("a string").
fn json_kind(text: &str) -> &'static str {
    match text.trim_start().bytes().next() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// How deep a JSON text may nest (serde_json's limit when it builds a tree).
pub const MAX_DEPTH: usize = 128;

/// Whether well-formed JSON `text` nests deeper than `limit` arrays and
/// objects. Kept text is never turned into a tree on reading, so the limit
/// a tree parse enforces is checked here instead, in one byte scan.
pub fn nests_deeper_than(text: &str, limit: usize) -> bool {
    // Fewer openers than the limit cannot nest deeper: one counting pass
    // (which vectorizes) settles it for almost every message.
    if text.bytes().map(|b| usize::from((b == b'[') | (b == b'{'))).sum::<usize>() <= limit {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in text.as_bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Whether a raw value is an object (its text starts with `{`).
pub fn is_object(raw: &RawValue) -> bool {
    raw.get().trim_start().starts_with('{')
}

/// A raw value's string, if it is a JSON string: borrowed when it has no
/// escapes.
pub fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get().trim();
    if !text.starts_with('"') {
        return None;
    }
    // A raw value is valid JSON: a string without escapes is its inside.
    let inside = text.get(1..text.len() - 1).unwrap_or_default();
    if text.len() >= 2 && !inside.contains('\\') {
        return Some(Cow::Borrowed(inside));
    }
    match serde_json::from_str::<&str>(text) {
        Ok(s) => Some(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(text).ok().map(Cow::Owned),
    }
}

/// For `#[serde(deserialize_with)]`: a member that is present, even as
/// `null`, is `Some` (plain `Option` reads `null` as absent).
pub fn present_raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_objects_and_their_text_is_kept() {
        let raw = RawValue::from_string(r#"{ "a" : [1, 2] }"#.to_owned()).unwrap();
        let o = RawObject::from_raw(raw).unwrap();
        assert_eq!(o.as_str(), r#"{ "a" : [1, 2] }"#);
        assert_eq!(o.to_map()["a"], json!([1, 2]));
        assert!(RawObject::from_raw(RawValue::from_string("[1]".into()).unwrap()).is_none());
        assert!(serde_json::from_str::<RawObject>("3").is_err());
        assert_eq!(
            serde_json::from_str::<RawObject>(r#"{"b":1}"#).unwrap(),
            RawObject::from(json!({"b": 1}).as_object().unwrap().clone())
        );
    }

    #[test]
    fn nesting_is_measured_outside_strings() {
        let deep = format!("{}1{}", "[".repeat(129), "]".repeat(129));
        assert!(nests_deeper_than(&deep, MAX_DEPTH));
        let ok = format!("{}1{}", "[".repeat(128), "]".repeat(128));
        assert!(!nests_deeper_than(&ok, MAX_DEPTH));
        let quoted = format!(r#"{{"a":"{}\"{}"}}"#, "[".repeat(300), "{".repeat(300));
        assert!(!nests_deeper_than(&quoted, MAX_DEPTH));
    }

    #[test]
    fn strings_members_and_presence() {
        let o: RawObject = serde_json::from_str(r#"{"s":"plain","e":"a\"b","n":null,"x":1}"#).unwrap();
        #[derive(Deserialize)]
        struct P<'a> {
            #[serde(borrow)]
            s: &'a RawValue,
            #[serde(borrow)]
            e: &'a RawValue,
            #[serde(borrow)]
            x: &'a RawValue,
            #[serde(default, borrow, deserialize_with = "present_raw")]
            n: Option<&'a RawValue>,
            #[serde(default, borrow, deserialize_with = "present_raw")]
            missing: Option<&'a RawValue>,
        }
        let p = o.parse_borrowed::<P<'_>>().unwrap();
        assert!(matches!(raw_str(p.s), Some(Cow::Borrowed("plain"))));
        assert_eq!(raw_str(p.e).unwrap(), "a\"b");
        assert_eq!(p.n.unwrap().get(), "null");
        assert!(raw_str(p.x).is_none());
        assert!(p.missing.is_none());
        #[derive(Deserialize)]
        struct N<'a> {
            #[serde(default, borrow, deserialize_with = "present_raw")]
            n: Option<&'a RawValue>,
        }
        assert!(o.parse_borrowed::<N<'_>>().unwrap().n.is_some());
        assert!(RawObject::empty().parse_borrowed::<N<'_>>().unwrap().n.is_none());
    }
}
