//! The test client's wire: request bodies and headers, and reading answers
//! (JSON, or an SSE stream ending with the response).

use actix_web::body::BoxBody;
use actix_web::dev::ServiceResponse;
use actix_web::test::TestRequest;
use mcp_protocol::header::{encode_value, header_form};
use mcp_protocol::ErrorData;
use serde_json::{json, Value};

use super::ClientError;

/// The body of a 2026-07-28 request with this client's `_meta`.
pub(super) fn body(id: &Value, method: &str, mut params: Value, capabilities: &Value) -> Vec<u8> {
    if let Some(p) = params.as_object_mut() {
        let meta = p.entry("_meta").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.insert("io.modelcontextprotocol/protocolVersion".into(), json!("2026-07-28"));
            m.insert(
                "io.modelcontextprotocol/clientInfo".into(),
                json!({"name": "actix-mcp-test", "version": env!("CARGO_PKG_VERSION")}),
            );
            m.insert("io.modelcontextprotocol/clientCapabilities".into(), capabilities.clone());
        }
    }
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap_or_default()
}

/// A POST with the headers the protocol asks for.
pub(super) fn post(
    path: &str,
    method: &str,
    name: Option<&str>,
    extra: &[(String, String)],
    body: &[u8],
) -> actix_http::Request {
    let mut req = TestRequest::post()
        .uri(path)
        .insert_header(("Host", "localhost"))
        .insert_header(("Content-Type", "application/json"))
        .insert_header(("Accept", "application/json, text/event-stream"))
        .insert_header(("MCP-Protocol-Version", "2026-07-28"))
        .insert_header(("Mcp-Method", method));
    if let Some(n) = name {
        req = req.insert_header(("Mcp-Name", encode_value(n)));
    }
    for (k, v) in extra {
        req = req.insert_header((k.as_str(), v.as_str()));
    }
    req.set_payload(body.to_vec()).to_request()
}

/// `(argument, header name)` of each `x-mcp-header` parameter of a schema.
pub(super) fn header_params(schema: &Value) -> Vec<(String, String)> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else { return Vec::new() };
    props
        .iter()
        .filter_map(|(arg, p)| {
            let h = p.get("x-mcp-header")?.as_str()?;
            Some((arg.clone(), format!("Mcp-Param-{h}")))
        })
        .collect()
}

/// The `Mcp-Param-*` headers for `arguments`.
pub(super) fn param_headers(params: &[(String, String)], arguments: &Value) -> Vec<(String, String)> {
    params
        .iter()
        .filter_map(|(arg, header)| {
            let text = header_form(arguments.get(arg)?)?;
            Some((header.clone(), encode_value(&text)))
        })
        .collect()
}

/// The result of the answer to request `id`, with the notifications that
/// came before it on its stream.
pub(super) async fn answer(resp: ServiceResponse<BoxBody>, id: &Value) -> Result<(Value, Vec<Value>), ClientError> {
    let status = resp.status().as_u16();
    let sse = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    let bytes = actix_web::body::to_bytes(resp.into_body())
        .await
        .map_err(|e| ClientError::Protocol(format!("HTTP {status}: unreadable body: {e}")))?;
    let mut notes = Vec::new();
    let messages: Vec<Value> = if sse {
        super::listen::sse_messages(&String::from_utf8_lossy(&bytes))
    } else if bytes.is_empty() {
        Vec::new()
    } else {
        vec![serde_json::from_slice(&bytes).map_err(|e| ClientError::Protocol(format!("HTTP {status}: {e}")))?]
    };
    for m in messages {
        // An error about the request as a whole (refused before it was
        // read) carries a null id.
        let refusal = m.get("error").is_some() && m.get("id").is_none_or(Value::is_null);
        if m.get("id") != Some(id) && !refusal {
            notes.push(m);
            continue;
        }
        if let Some(e) = m.get("error") {
            let error: ErrorData =
                serde_json::from_value(e.clone()).map_err(|e| ClientError::Protocol(format!("bad error: {e}")))?;
            return Err(ClientError::Rpc { status, error });
        }
        return Ok((m.get("result").cloned().unwrap_or(Value::Null), notes));
    }
    Err(ClientError::Protocol(format!("HTTP {status}: no response to request {id}")))
}
