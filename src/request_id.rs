//! [`RequestId`]: a JSON-RPC request id, kept as its exact JSON text — a
//! numeric id stays a number, a string stays a string (its escapes as
//! sent), an integer too large for `i64` is echoed byte for byte.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::ProtocolError;

/// A request id: a JSON string or integer, kept as its exact JSON text.
/// Short ids (the usual ones) are held inline, so that a request's id is
/// copied along its way without an allocation.
#[derive(Debug, Clone)]
pub struct RequestId(Repr);

/// The longest id text held inline.
const INLINE: usize = 22;

#[derive(Debug, Clone)]
enum Repr {
    /// `len` bytes of `text`: valid UTF-8, the id's JSON text.
    Inline { len: u8, text: [u8; INLINE] },
    /// Longer text.
    Heap(Box<RawValue>),
}

impl Serialize for RequestId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Heap(raw) => raw.serialize(s),
            Repr::Inline { .. } => {
                let raw = RawValue::from_string(self.as_json().to_owned()).map_err(serde::ser::Error::custom)?;
                raw.serialize(s)
            }
        }
    }
}

impl RequestId {
    /// Parses an id from its JSON text; only strings and integers are ids.
    pub fn from_json(text: &str) -> Result<Self, ProtocolError> {
        let raw = RawValue::from_string(text.trim().to_owned())
            .map_err(|e| ProtocolError::InvalidRequest(format!("id: {e}")))?;
        Self::from_raw(raw)
    }

    pub(crate) fn from_raw(raw: Box<RawValue>) -> Result<Self, ProtocolError> {
        Self::shape(raw.get())?;
        Ok(if raw.get().len() <= INLINE { Self::of_text(raw.get()) } else { RequestId(Repr::Heap(raw)) })
    }

    /// The id whose JSON text is `text`, as a parser read it.
    pub(crate) fn from_raw_text(text: &str) -> Result<Self, ProtocolError> {
        Self::shape(text)?;
        Ok(Self::of_text(text))
    }

    /// Whether valid JSON `text` is a string or an integer.
    fn shape(text: &str) -> Result<(), ProtocolError> {
        let ok = match text.as_bytes().first() {
            Some(b'"') => true,
            Some(b'-' | b'0'..=b'9') => !text.contains(['.', 'e', 'E']),
            _ => false,
        };
        ok.then_some(()).ok_or_else(|| ProtocolError::InvalidRequest("id must be a string or an integer".into()))
    }

    /// Holds `text`, which is an id's valid JSON text.
    fn of_text(text: &str) -> Self {
        if text.len() <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..text.len()].copy_from_slice(text.as_bytes());
            RequestId(Repr::Inline { len: text.len() as u8, text: buf })
        } else {
            RequestId(Repr::Heap(RawValue::from_string(text.to_owned()).expect("an id's text is valid JSON")))
        }
    }

    /// An integer id.
    pub fn number(n: i64) -> Self {
        Self::of_text(itoa::Buffer::new().format(n))
    }

    /// A string id.
    pub fn string(s: &str) -> Self {
        Self::of_text(&serde_json::to_string(s).expect("a string serializes"))
    }

    /// Builds an id from a JSON value (string or integer).
    pub fn from_value(v: &Value) -> Result<Self, ProtocolError> {
        Self::from_json(&v.to_string())
    }

    /// The exact JSON text of the id.
    pub fn as_json(&self) -> &str {
        match &self.0 {
            Repr::Inline { len, text } => std::str::from_utf8(&text[..usize::from(*len)]).unwrap_or_default(),
            Repr::Heap(raw) => raw.get(),
        }
    }

    /// The id as a JSON value (large integers may lose precision).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.as_json()).unwrap_or(Value::Null)
    }

    /// True for a string id.
    pub fn is_string(&self) -> bool {
        self.as_json().starts_with('"')
    }
}

impl PartialEq for RequestId {
    fn eq(&self, other: &Self) -> bool {
        self.as_json() == other.as_json()
    }
}
impl Eq for RequestId {}
impl std::hash::Hash for RequestId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_json().hash(state)
    }
}
impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_json())
    }
}
impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        RequestId::from_raw(raw).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_and_long_ids_keep_their_text() {
        let long = format!("\"{}\"", "x".repeat(40));
        for text in ["7", "-12", "\"a\\u0041\"", "123456789012345678901234567890", long.as_str()] {
            let id = RequestId::from_json(text).unwrap();
            assert_eq!(id.as_json(), text);
            assert_eq!(serde_json::to_string(&id).unwrap(), text);
            assert_eq!(id.clone(), id);
            let parsed: RequestId = serde_json::from_str(text).unwrap();
            assert_eq!(parsed, id);
        }
        assert_eq!(RequestId::string("srv-1").as_json(), "\"srv-1\"");
        assert_eq!(RequestId::number(-3).to_value(), json!(-3));
        assert!(RequestId::from_json("1.5").is_err() && RequestId::from_json("{}").is_err());
    }
}
