//! What the raw handlers (`echo-baseline`, `hop-floor`'s own answers) reply
//! to a `tools/call`: `params.arguments.text` back, in the shape of a
//! `tools/call` result, with none of MCP's validation.

use serde_json::{json, Value};

/// The reply to `request` (a parsed JSON-RPC request), as bytes.
pub fn echo_reply(request: &Value) -> Vec<u8> {
    let text = request["params"]["arguments"]["text"].as_str().unwrap_or_default();
    let reply = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"content": [{"type": "text", "text": text}], "resultType": "complete"}});
    serde_json::to_vec(&reply).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_comes_back_under_the_requests_id() {
        let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}}});
        let reply: Value = serde_json::from_slice(&echo_reply(&request)).unwrap();
        assert_eq!((reply["id"].clone(), reply["result"]["content"][0]["text"].clone()), (json!(7), json!("hi")));
    }
}
