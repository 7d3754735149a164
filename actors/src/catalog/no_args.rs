//! [`NoArgs`]: the arguments of a tool that takes none.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};

/// The arguments of a tool without any: deserializes from `{}` (and from an
/// object with keys it ignores, or absent arguments); its schema is an empty
/// object schema. A unit struct would not do: serde reads it from `null`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoArgs;

impl<'de> Deserialize<'de> for NoArgs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| NoArgs)
    }
}

impl JsonSchema for NoArgs {
    fn schema_name() -> Cow<'static, str> {
        "NoArgs".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "object", "properties": {} })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_from_any_object_and_lists_an_empty_object_schema() {
        assert_eq!(serde_json::from_str::<NoArgs>("{}").unwrap(), NoArgs);
        assert_eq!(serde_json::from_str::<NoArgs>(r#"{"ignored": 1}"#).unwrap(), NoArgs);
        let schema = serde_json::to_value(schemars::schema_for!(NoArgs)).unwrap();
        assert_eq!((&schema["type"], &schema["properties"]), (&"object".into(), &serde_json::json!({})));
    }
}
