//! What a request answered: its result at once, or a task the server
//! made of it (the Tasks extension).

use mcp_protocol::tasks::Task;
use serde_json::value::RawValue;
use serde_json::Value;

use super::error::{decode_raw, ClientError};

/// What a call answered: its result at once (`R`: as a JSON tree, or
/// inside the client as the text the server sent), or a task.
#[derive(Debug, Clone, PartialEq)]
pub enum Started<R = Value> {
    /// The result.
    Done(R),
    /// The server made it a task.
    Task(Task),
}

impl Started<Box<RawValue>> {
    /// The result read as `T` (a task as its `CreateTaskResult`), the
    /// answer to `what`.
    pub(crate) fn decode<T: serde::de::DeserializeOwned>(self, what: &str) -> Result<T, ClientError> {
        match self {
            Started::Done(raw) => decode_raw(what, &raw),
            Started::Task(task) => super::error::decode(what, serde_json::to_value(task).unwrap_or_default()),
        }
    }

    /// The result as a JSON tree.
    pub(crate) fn into_tree(self, what: &str) -> Result<Started, ClientError> {
        Ok(match self {
            Started::Done(raw) => Started::Done(decode_raw(what, &raw)?),
            Started::Task(task) => Started::Task(task),
        })
    }
}
