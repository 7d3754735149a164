//! The specification's own examples (copied into `tests/fixtures/spec/`)
//! against the wire model: each example decodes into its type, and what the
//! type encodes back is exactly the example restricted to the modelled fields
//! (nothing is altered or invented). Errors and requests decode through the
//! JSON-RPC envelope.

use std::path::{Path, PathBuf};

use mcp_protocol::jsonrpc::{self, Incoming};
use mcp_protocol::model::capabilities::{ClientCapabilities, ServerCapabilities};
use mcp_protocol::model::completion::{CompleteParams, Completion};
use mcp_protocol::model::content::{Content, ResourceContents};
use mcp_protocol::model::discover::DiscoverResult;
use mcp_protocol::model::logging::LogMessage;
use mcp_protocol::model::progress::ProgressParams;
use mcp_protocol::model::prompts::{GetPromptParams, GetPromptResult};
use mcp_protocol::model::resources::Resource;
use mcp_protocol::model::tools::{CallToolParams, CallToolResult, Tool};
use mcp_protocol::request::{ClientNotification, ClientRequest};
use mcp_protocol::ErrorData;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

fn fixtures(kind: &str) -> Vec<(PathBuf, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spec/2026-07-28").join(kind);
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p, v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!out.is_empty(), "no fixtures for {kind}");
    out
}

/// `ours` must be `theirs` with some keys left out (recursively).
fn is_restriction(ours: &Value, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => a.iter().all(|(k, v)| b.get(k).is_some_and(|w| is_restriction(v, w))),
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| is_restriction(x, y)),
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => ours == theirs,
    }
}

fn check<T: DeserializeOwned + Serialize>(kind: &str) {
    for (path, v) in fixtures(kind) {
        let typed: T = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let back = serde_json::to_value(&typed).unwrap();
        assert!(is_restriction(&back, &v), "{}:\nours   {back}\ntheirs {v}", path.display());
        assert!(back.as_object().is_none_or(|m| !m.is_empty()), "{}: nothing modelled", path.display());
    }
}

#[test]
fn model_types_match_the_spec_examples() {
    check::<Tool>("Tool");
    check::<CallToolResult>("CallToolResult");
    check::<CallToolParams>("CallToolRequestParams");
    check::<GetPromptParams>("GetPromptRequestParams");
    check::<GetPromptResult>("GetPromptResult");
    check::<Content>("TextContent");
    check::<Content>("ImageContent");
    check::<Content>("AudioContent");
    check::<Content>("EmbeddedResource");
    check::<Content>("ResourceLink");
    check::<ResourceContents>("TextResourceContents");
    check::<ResourceContents>("BlobResourceContents");
    check::<Resource>("Resource");
    check::<ClientCapabilities>("ClientCapabilities");
    check::<ServerCapabilities>("ServerCapabilities");
    check::<DiscoverResult>("DiscoverResult");
    check::<CompleteParams>("CompleteRequestParams");
    check::<ProgressParams>("ProgressNotificationParams");
    check::<LogMessage>("LoggingMessageNotificationParams");
    for (path, v) in fixtures("CompleteResult") {
        let c: Completion =
            serde_json::from_value(v["completion"].clone()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(is_restriction(&serde_json::to_value(c).unwrap(), &v["completion"]));
    }
}

#[test]
fn error_examples_decode_exactly() {
    for kind in [
        "HeaderMismatchError",
        "UnsupportedProtocolVersionError",
        "MissingRequiredClientCapabilityError",
        "InvalidParamsError",
        "MethodNotFoundError",
        "ParseError",
        "InternalError",
    ] {
        for (path, v) in fixtures(kind) {
            // Some examples are whole responses, others only the error object.
            let error = if v.get("jsonrpc").is_some() { v["error"].clone() } else { v.clone() };
            let e: ErrorData =
                serde_json::from_value(error.clone()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(serde_json::to_value(&e).unwrap(), error, "{}", path.display());
            if v.get("jsonrpc").is_some() {
                let bytes = serde_json::to_vec(&v).unwrap();
                assert!(matches!(jsonrpc::decode(&bytes), Ok(Incoming::Response(_))), "{}", path.display());
            }
        }
    }
}

#[test]
fn request_examples_parse_into_client_requests() {
    for kind in ["CallToolRequest", "DiscoverRequest", "ListToolsRequest"] {
        for (path, v) in fixtures(kind) {
            let bytes = serde_json::to_vec(&v).unwrap();
            let Ok(Incoming::Request(r)) = jsonrpc::decode(&bytes) else { panic!("{}", path.display()) };
            let meta =
                mcp_protocol::RequestMeta::from_params(r.params.as_ref(), None, mcp_protocol::ProtocolVersion::ALL)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(meta.version, mcp_protocol::ProtocolVersion::V2026_07_28);
            let req = ClientRequest::from_parts(&r.method, r.params).unwrap();
            assert_eq!(req.method(), v["method"]);
        }
    }
    for (path, v) in fixtures("CancelledNotificationParams") {
        let n = ClientNotification::from_parts("notifications/cancelled", v.as_object()).unwrap();
        assert!(matches!(n, ClientNotification::Cancelled { .. }), "{}", path.display());
    }
}
