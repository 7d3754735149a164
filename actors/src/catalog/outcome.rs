//! What a tool handler may return: anything [`IntoToolOutcome`] turns into
//! a `tools/call` result (or a protocol error).
//!
//! - `String`, `&'static str` → one text block;
//! - [`Json<T>`] → `structuredContent` (and its JSON text), with the tool's
//!   `outputSchema` derived from `T` by [`Tool::new`](super::Tool::new);
//! - `Content`, `Vec<Content>`, `CallToolResult` → as they are;
//! - `Result<T, E: Display>` (a domain result): `Ok` as above, `Err` a tool
//!   execution error (`isError: true`) the model can read and correct.
//!
//! Handlers return `Result<R, HandlerError>` around these: `Err` there is a
//! protocol error (a JSON-RPC error response), so `?` on a `HandlerError`
//! works and a domain failure is written `Ok(result_of_the_operation)`.

use std::fmt::Display;

use mcp_protocol::model::content::Content;
use mcp_protocol::model::tools::CallToolResult;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::catalog::error::HandlerError;

/// A handler's return value, made into a `tools/call` outcome.
pub trait IntoToolOutcome {
    /// The result, or a protocol error.
    fn into_outcome(self) -> Result<CallToolResult, HandlerError>;

    /// The `outputSchema` this kind of value implies (only [`Json<T>`] has one).
    fn output_schema() -> Option<Value> {
        None
    }
}

/// Structured output: serialized into `structuredContent` (and, for clients
/// that only read text, into a text block), its schema derived from `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

impl IntoToolOutcome for CallToolResult {
    fn into_outcome(self) -> Result<CallToolResult, HandlerError> {
        Ok(self)
    }
}

impl IntoToolOutcome for String {
    fn into_outcome(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolOutcome for &'static str {
    fn into_outcome(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolOutcome for Content {
    fn into_outcome(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::success(vec![self]))
    }
}

impl IntoToolOutcome for Vec<Content> {
    fn into_outcome(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::success(self))
    }
}

impl<T: Serialize + JsonSchema> IntoToolOutcome for Json<T> {
    fn into_outcome(self) -> Result<CallToolResult, HandlerError> {
        let value = serde_json::to_value(&self.0)
            .map_err(|e| HandlerError::internal(format!("could not encode the tool's output: {e}")))?;
        Ok(CallToolResult::structured(value))
    }

    fn output_schema() -> Option<Value> {
        Some(object_schema::<T>())
    }
}

/// A domain result: `Err` is a tool execution error (`isError: true`) with
/// the error's text, which the model can read and correct.
impl<T: IntoToolOutcome, E: Display> IntoToolOutcome for Result<T, E> {
    fn into_outcome(self) -> Result<CallToolResult, HandlerError> {
        match self {
            Ok(t) => t.into_outcome(),
            Err(e) => Ok(CallToolResult::error(e.to_string())),
        }
    }

    fn output_schema() -> Option<Value> {
        T::output_schema()
    }
}

/// The JSON Schema of `T` as an MCP tool wants it: an object schema, no
/// `title`, `$schema` kept.
pub(crate) fn object_schema<T: JsonSchema>() -> Value {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(T)).unwrap_or_else(|_| Value::Object(Default::default()));
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("title");
        obj.entry("type").or_insert_with(|| Value::String("object".into()));
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Serialize, JsonSchema)]
    struct Sum {
        sum: i64,
    }

    #[test]
    fn each_kind_of_return_value_becomes_its_outcome() {
        assert_eq!("hi".into_outcome().unwrap(), CallToolResult::text("hi"));
        assert_eq!(String::from("hi").into_outcome().unwrap(), CallToolResult::text("hi"));
        let out = Json(Sum { sum: 3 }).into_outcome().unwrap();
        assert_eq!(out.structured_content, Some(json!({"sum": 3})));
        assert_eq!(<Json<Sum>>::output_schema().unwrap()["properties"]["sum"]["type"], "integer");
        let failed: Result<String, std::io::Error> = Err(std::io::Error::other("disk full"));
        let out = failed.into_outcome().unwrap();
        assert_eq!((out.is_error, out.content), (Some(true), vec![Content::text("disk full")]));
        assert!(<Result<Json<Sum>, String>>::output_schema().is_some());
        assert!(<Result<String, String>>::output_schema().is_none());
    }
}
