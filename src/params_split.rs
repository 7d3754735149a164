//! One pass over a request's `params`: the method's own params type, with
//! the `_meta` member read aside into its keys ([`MetaKeys`]). No params
//! type declares `_meta`, so the typed parse never sees it.
//!
//! This is the fast path of admission: it fails on anything unusual (a
//! `_meta` that is not an object, a key given twice, a params type error)
//! and the caller then takes the slow path, which reads `_meta` alone first
//! and reports each error in the order the specification sets.

use std::borrow::Cow;
use std::fmt;

use serde::de::value::{BorrowedStrDeserializer, MapAccessDeserializer, StringDeserializer};
use serde::de::{DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::meta::{MetaKeys, MetaMembers, MetaShape};

/// Reads the params object from `d` into `T`, the keys of its `_meta` into
/// `keys`: from a params text of its own, or in place inside the message.
pub(crate) fn split<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    d: D,
    keys: &mut MetaKeys<'de>,
) -> Result<T, D::Error> {
    d.deserialize_map(SplitVisitor { keys, typed: std::marker::PhantomData::<T> })
}

/// Visits the params object and hands `T` a view of it without `_meta`.
struct SplitVisitor<'k, 'de, T> {
    keys: &'k mut MetaKeys<'de>,
    typed: std::marker::PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for SplitVisitor<'_, 'de, T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a params object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(WithoutMeta { inner: map, keys: self.keys }))
    }
}

/// The params object's members but `_meta`, which goes into `keys`.
struct WithoutMeta<'k, 'de, A> {
    inner: A,
    keys: &'k mut MetaKeys<'de>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for WithoutMeta<'_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.inner.next_key_seed(KeySeed)? else { return Ok(None) };
            if key != "_meta" {
                return match key {
                    Cow::Borrowed(k) => seed.deserialize(BorrowedStrDeserializer::new(k)).map(Some),
                    Cow::Owned(k) => seed.deserialize(StringDeserializer::new(k)).map(Some),
                };
            }
            if self.keys.meta != MetaShape::Absent {
                return Err(serde::de::Error::duplicate_field("_meta"));
            }
            // Read as an object only: a derived struct also accepts an array,
            // which the slow path refuses (`_meta` must be an object).
            let members: MetaMembers<'de> = self.inner.next_value_seed(ObjectOnly(std::marker::PhantomData))?;
            *self.keys = members.into_keys();
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// `T` read from a JSON object and nothing else.
struct ObjectOnly<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for ObjectOnly<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectOnly<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
}

/// A member name, borrowed from the text when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(KeySeed)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tools::CallToolParams;

    /// Parses the params object `text` into `T` and the keys of its `_meta`.
    fn parse_split<'de, T: Deserialize<'de>>(text: &'de str) -> serde_json::Result<(T, MetaKeys<'de>)> {
        let mut de = serde_json::Deserializer::from_str(text);
        let mut keys = MetaKeys::default();
        let value = split(&mut de, &mut keys)?;
        de.end()?;
        Ok((value, keys))
    }

    #[test]
    fn the_typed_params_and_the_meta_keys_in_one_pass() {
        let text = r#"{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{},"other":1},"arguments":{"text":"hi"}}"#;
        let (p, keys) = parse_split::<CallToolParams>(text).unwrap();
        assert_eq!(p.name, "echo");
        assert_eq!(p.arguments.unwrap().as_str(), r#"{"text":"hi"}"#);
        assert_eq!(keys.meta, MetaShape::Object);
        assert_eq!(keys.version_str().as_deref(), Some("2026-07-28"));
        assert_eq!(keys.client_capabilities.unwrap().get(), "{}");
        assert!(keys.client_info.is_none());
    }

    #[test]
    fn anything_unusual_fails_for_the_slow_path() {
        let twice = r#"{"name":"e","_meta":{},"_meta":{}}"#;
        assert!(parse_split::<CallToolParams>(twice).is_err());
        assert!(parse_split::<CallToolParams>(r#"{"name":"e","_meta":3}"#).is_err());
        // An array is not an object, even one whose elements line up with
        // the keys this crate reads.
        assert!(parse_split::<CallToolParams>(r#"{"name":"e","_meta":[]}"#).is_err());
        assert!(parse_split::<CallToolParams>(r#"{"name":"e","_meta":["2026-07-28",null,{}]}"#).is_err());
        assert!(parse_split::<CallToolParams>(r#"{"_meta":{}}"#).is_err());
        let (_, keys) = parse_split::<CallToolParams>(r#"{"name":"e"}"#).unwrap();
        assert_eq!(keys.meta, MetaShape::Absent);
    }
}
