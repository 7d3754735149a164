//! The specification's own examples (copied into `tests/fixtures/spec/`)
//! against the wire model: each example decodes into its type, and what the
//! type encodes back is exactly the example: equal, not a subset. What a type
//! deliberately leaves to others (request `_meta`, read by `RequestMeta`; the
//! result envelope's `resultType` and `serverInfo`) is taken off by name and
//! checked against what does decode it. Errors and requests decode through the
//! JSON-RPC envelope.

use std::path::{Path, PathBuf};

use mcp_protocol::jsonrpc::{self, Incoming};
use mcp_protocol::model::capabilities::{ClientCapabilities, ServerCapabilities};
use mcp_protocol::model::completion::{CompleteParams, Completion};
use mcp_protocol::model::content::{Content, ResourceContents};
use mcp_protocol::model::discover::DiscoverResult;
use mcp_protocol::model::discover::Implementation;
use mcp_protocol::model::logging::LogMessage;
use mcp_protocol::model::progress::ProgressParams;
use mcp_protocol::model::prompts::{GetPromptParams, GetPromptResult};
use mcp_protocol::model::resources::Resource;
use mcp_protocol::model::tools::{CallToolParams, CallToolResult, Tool};
use mcp_protocol::request::{ClientNotification, ClientRequest};
use mcp_protocol::{meta, ErrorData, ProtocolVersion, RequestMeta};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

fn fixtures(kind: &str) -> Vec<(PathBuf, Value)> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tests/fixtures/spec/2026-07-28").join(kind);
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

/// JSON equality where numbers compare by value (`50` and `50.0` are the
/// same JSON number; the model keeps progress as `f64`).
fn same(ours: &Value, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y)),
        (Value::Number(a), Value::Number(b)) => a == b || a.as_f64() == b.as_f64(),
        _ => ours == theirs,
    }
}

/// What surrounds a model type on the wire but is not part of it.
#[derive(Clone, Copy)]
enum Around {
    /// Nothing: the type is the whole example.
    Nothing,
    /// Request params: `_meta` is decoded by [`RequestMeta`], not by the
    /// params type.
    RequestParams,
    /// A result: the server's envelope adds `resultType: "complete"` and
    /// `_meta.serverInfo`.
    Result,
}

/// The request `_meta` as `RequestMeta` understood it, encoded back.
fn request_meta_back(meta: &RequestMeta) -> Value {
    let mut m = Map::new();
    m.insert(meta::PROTOCOL_VERSION_KEY.into(), json!(meta.version.as_str()));
    m.insert(meta::CLIENT_CAPABILITIES_KEY.into(), serde_json::to_value(&*meta.client_capabilities).unwrap());
    if let Some(info) = &meta.client_info {
        m.insert(meta::CLIENT_INFO_KEY.into(), serde_json::to_value(info).unwrap());
    }
    if let Some(level) = meta.log_level {
        m.insert(meta::LOG_LEVEL_KEY.into(), serde_json::to_value(level).unwrap());
    }
    if let Some(token) = &meta.progress_token {
        m.insert(meta::PROGRESS_TOKEN_KEY.into(), token.clone());
    }
    Value::Object(m)
}

/// Takes off `v` what `around` says is not the type's, checking on the way
/// that each piece taken off is understood exactly by what does decode it.
fn strip(path: &Path, mut v: Value, around: Around, ours: &Value) -> Value {
    let Some(m) = v.as_object_mut() else { return v };
    match around {
        Around::Nothing => {}
        Around::RequestParams => {
            if let Some(meta) = m.remove("_meta") {
                let params = json!({ "_meta": meta }).as_object().cloned().unwrap();
                let raw = mcp_protocol::RawObject::from_map(&params);
                let decoded = RequestMeta::from_params(Some(&raw), None, ProtocolVersion::ALL)
                    .unwrap_or_else(|e| panic!("{}: _meta: {e}", path.display()));
                let back = request_meta_back(&decoded);
                assert!(
                    same(&back, &params["_meta"]),
                    "{}: _meta\nours   {back}\ntheirs {}",
                    path.display(),
                    params["_meta"]
                );
            }
        }
        Around::Result => {
            // Like the envelope, which adds `resultType` only where the type has none.
            if ours.get("resultType").is_none() {
                let t = m.remove("resultType").unwrap_or_else(|| json!("complete"));
                assert_eq!(t, "complete", "{}: only complete results are modelled here", path.display());
            }
            if let Some(meta) = m.remove("_meta") {
                let Value::Object(mut meta) = meta else { panic!("{}: _meta is not an object", path.display()) };
                let info = meta.remove(meta::SERVER_INFO_KEY).expect("a result's _meta carries serverInfo");
                let typed: Implementation = serde_json::from_value(info.clone()).unwrap();
                assert_eq!(serde_json::to_value(typed).unwrap(), info, "{}: serverInfo", path.display());
                assert!(meta.is_empty(), "{}: unmodelled _meta keys {meta:?}", path.display());
            }
        }
    }
    v
}

/// Each example decodes into `T`, and `T` encodes back to exactly the
/// example (less what `around` names, checked separately).
fn check<T: DeserializeOwned + Serialize>(kind: &str, around: Around) {
    for (path, v) in fixtures(kind) {
        let typed: T = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let back = serde_json::to_value(&typed).unwrap();
        let expected = strip(&path, v, around, &back);
        assert!(same(&back, &expected), "{}:\nours   {back}\ntheirs {expected}", path.display());
    }
}

#[test]
fn model_types_match_the_spec_examples() {
    check::<Tool>("Tool", Around::Nothing);
    check::<CallToolResult>("CallToolResult", Around::Result);
    check::<CallToolParams>("CallToolRequestParams", Around::RequestParams);
    check::<GetPromptParams>("GetPromptRequestParams", Around::RequestParams);
    check::<GetPromptResult>("GetPromptResult", Around::Result);
    check::<Content>("TextContent", Around::Nothing);
    check::<Content>("ImageContent", Around::Nothing);
    check::<Content>("AudioContent", Around::Nothing);
    check::<Content>("EmbeddedResource", Around::Nothing);
    check::<Content>("ResourceLink", Around::Nothing);
    check::<ResourceContents>("TextResourceContents", Around::Nothing);
    check::<ResourceContents>("BlobResourceContents", Around::Nothing);
    check::<Resource>("Resource", Around::Nothing);
    check::<ClientCapabilities>("ClientCapabilities", Around::Nothing);
    check::<ServerCapabilities>("ServerCapabilities", Around::Nothing);
    check::<DiscoverResult>("DiscoverResult", Around::Result);
    check::<CompleteParams>("CompleteRequestParams", Around::RequestParams);
    check::<ProgressParams>("ProgressNotificationParams", Around::Nothing);
    check::<LogMessage>("LoggingMessageNotificationParams", Around::Nothing);
    for (path, v) in fixtures("CompleteResult") {
        let c: Completion =
            serde_json::from_value(v["completion"].clone()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let back = serde_json::to_value(c).unwrap();
        assert!(same(&back, &v["completion"]), "{}", path.display());
        let rest = strip(&path, v, Around::Result, &json!({ "completion": back }));
        assert_eq!(
            rest.as_object().map(|m| m.len()),
            Some(1),
            "{}: only completion besides the envelope",
            path.display()
        );
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
            let req = ClientRequest::from_parts(&r.method, r.params.as_ref()).unwrap();
            assert_eq!(req.method(), v["method"]);
        }
    }
    for (path, v) in fixtures("CancelledNotificationParams") {
        let params = v.as_object().map(mcp_protocol::RawObject::from_map);
        let n = ClientNotification::from_parts("notifications/cancelled", params.as_ref()).unwrap();
        assert!(matches!(n, ClientNotification::Cancelled { .. }), "{}", path.display());
    }
}
