//! A request's params as a client sends them: members it holds as JSON
//! values, and members it passes on as the text they came in — a proxy's
//! caller's tool arguments, which it need not read to forward.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::raw_object::RawObject;

/// The params of one outgoing request: `members`, then the `raw` members
/// (each written as it is, and over a member of the same name). `_meta`
/// is always a member: it is stamped when the request is encoded.
#[derive(Debug, Clone, Default)]
pub struct Params {
    members: Map<String, Value>,
    raw: Vec<(String, RawObject)>,
}

impl Params {
    /// Params of JSON members only.
    pub fn new(members: Map<String, Value>) -> Self {
        Params { members, raw: Vec::new() }
    }

    /// The same, with the object `value` as member `key`, passed on as its
    /// text (it replaces a member `key`; `_meta` is refused: it is stamped).
    pub fn with_raw(mut self, key: impl Into<String>, value: RawObject) -> Self {
        let key = key.into();
        assert_ne!(key, "_meta", "a request's _meta is a JSON member");
        self.members.remove(&key);
        self.raw.retain(|(k, _)| *k != key);
        self.raw.push((key, value));
        self
    }

    /// The JSON members.
    pub fn members(&self) -> &Map<String, Value> {
        &self.members
    }

    /// The JSON members, to change (a retry's `inputResponses` and
    /// `requestState`); a member set here that is also raw is shadowed by it.
    pub fn members_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.members
    }

    /// The members passed on as text.
    pub fn raw(&self) -> &[(String, RawObject)] {
        &self.raw
    }

    /// Member `key` as an object, read from its text when it is raw (only
    /// what needs to look inside, such as a tool's header parameters, pays
    /// for that).
    pub fn object(&self, key: &str) -> Option<Cow<'_, Map<String, Value>>> {
        match self.raw.iter().find(|(k, _)| k == key) {
            Some((_, v)) => Some(Cow::Owned(v.to_map())),
            None => self.members.get(key).and_then(Value::as_object).map(Cow::Borrowed),
        }
    }
}

impl From<Map<String, Value>> for Params {
    fn from(members: Map<String, Value>) -> Self {
        Params::new(members)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::value::RawValue;

    #[test]
    fn a_raw_member_replaces_a_member_and_reads_as_an_object() {
        let members = json!({"name": "echo", "arguments": {"old": 1}}).as_object().cloned().unwrap();
        let args = RawObject::from_raw(RawValue::from_string(r#"{"text": "hi"}"#.into()).unwrap()).unwrap();
        let p = Params::new(members).with_raw("arguments", args);
        assert!(!p.members().contains_key("arguments"));
        assert_eq!(
            p.raw().iter().map(|(k, v)| (k.as_str(), v.as_str())).collect::<Vec<_>>(),
            [("arguments", r#"{"text": "hi"}"#)]
        );
        assert_eq!(Value::Object(p.object("arguments").unwrap().into_owned()), json!({"text": "hi"}));
        assert_eq!(p.object("name"), None);
    }
}
