//! Client options whose handlers answer every kind of input a server may
//! ask for, for the tests of `actix_mcp::client`.

use std::time::Duration;

use actix_mcp::client::ClientOptions;
use actix_mcp::protocol::model::mrtr::{CreateMessageResult, ElicitAction, ElicitResult, Root};
use serde_json::{json, Map, Value};

/// Elicitation accepts with every requested field filled by its type
/// (`"Ada"`, `true`, `1`); sampling answers `"Paris"`; the roots are
/// `file:///work`. 20 s per request.
pub fn answering() -> ClientOptions {
    ClientOptions::new("client-test", "1.0")
        .timeout(Duration::from_secs(20))
        .on_elicit(|params: Value| async move {
            let mut content = Map::new();
            let props = params["requestedSchema"]["properties"].as_object().cloned().unwrap_or_default();
            for (k, schema) in props {
                let v = match schema["type"].as_str() {
                    Some("boolean") => json!(true),
                    Some("number" | "integer") => json!(1),
                    _ => json!("Ada"),
                };
                content.insert(k, v);
            }
            Ok(ElicitResult { action: ElicitAction::Accept, content: Some(content) })
        })
        .on_sample(|_| async {
            Ok(CreateMessageResult {
                role: "assistant".into(),
                content: json!({"type": "text", "text": "Paris"}),
                model: "test-model".into(),
                stop_reason: Some("endTurn".into()),
            })
        })
        .on_roots(|| async { Ok(vec![Root { uri: "file:///work".into(), name: Some("work".into()) }]) })
}
