//! [`Answer`]: a request's result on its way to the encoder. A tool's
//! result stays typed and is written straight into the response with the
//! members every result gets (`resultType`, `_meta.serverInfo`) appended;
//! other results are trees.

use mcp_protocol::jsonrpc::{encode_result, encode_result_with};
use mcp_protocol::model::tools::CallToolResult;
use mcp_protocol::RequestId;
use serde_json::Value;

use super::McpService;

/// A request's result, ready to encode.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// A result built as a tree (complete, or an `InputRequiredResult`).
    Tree(Value),
    /// A tool's result as its handler returned it, not yet finished.
    Tool(CallToolResult),
}

/// The members a finished tool result gets, as JSON text, by era.
#[derive(Debug, Clone)]
pub(super) struct ToolMembers {
    stateless: String,
    legacy: String,
}

impl ToolMembers {
    /// The members for results whose `_meta` is `result_meta`.
    pub(super) fn new(result_meta: &Value) -> Self {
        let meta = serde_json::to_string(result_meta).expect("a value serializes");
        ToolMembers {
            stateless: format!(r#""resultType":"complete","_meta":{meta}"#),
            legacy: format!(r#""_meta":{meta}"#),
        }
    }
}

impl McpService {
    /// The encoded response to request `id`; `legacy`: for a legacy session
    /// (whose results have no `resultType`).
    pub(crate) fn encode_answer(&self, id: &RequestId, answer: &Answer, legacy: bool) -> Vec<u8> {
        match answer {
            Answer::Tree(v) => encode_result(id, v),
            Answer::Tool(r) => {
                let m = &self.tool_members;
                encode_result_with(id, r, if legacy { &m.legacy } else { &m.stateless })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use serde_json::json;

    #[test]
    fn a_tool_result_is_written_as_finish_would_build_it() {
        let service = McpService::new(std::sync::Arc::new(crate::catalog::Catalog::default()), &Config::default());
        let result = CallToolResult { is_error: Some(true), ..CallToolResult::text("hi") };
        let id = RequestId::string("a");
        for legacy in [false, true] {
            let written: Value =
                serde_json::from_slice(&service.encode_answer(&id, &Answer::Tool(result.clone()), legacy)).unwrap();
            let mut built = service.finish(&result, None).unwrap();
            if legacy {
                mcp_protocol::legacy::strip_stateless_fields(&mut built);
            }
            assert_eq!(written, json!({"jsonrpc": "2.0", "id": "a", "result": built}));
        }
    }
}
