//! One exchange of the test client with the app in process: the request
//! (its `_meta` stamp and standard headers are the protocol crate's, as
//! for every client of this project) and reading its answer (JSON, or an
//! SSE stream ending with the response).

use actix_web::body::BoxBody;
use actix_web::dev::ServiceResponse;
use actix_web::test::TestRequest;
use mcp_protocol::outgoing::Stamped;
use mcp_protocol::{ErrorData, ProtocolVersion};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::CallError;

/// The body of a 2026-07-28 request, its `_meta` stamped with this
/// client's entries (`client`: identity and capabilities).
pub(super) fn body(id: &Value, method: &str, params: Value, client: &[(String, Box<RawValue>)]) -> Vec<u8> {
    let params = match &params {
        Value::Object(p) => {
            let version = Some(ProtocolVersion::V2026_07_28.as_str());
            serde_json::to_value(Stamped { version, client, ..Stamped::new(p) }).unwrap_or_default()
        }
        other => other.clone(),
    };
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap_or_default()
}

/// A POST of `body` with the standard headers of its request (`standard`:
/// [`standard_headers`](mcp_protocol::outgoing::standard_headers)).
pub(super) fn post(path: &str, standard: &[(String, String)], body: &[u8]) -> actix_http::Request {
    let mut req = TestRequest::post()
        .uri(path)
        .insert_header(("Host", "localhost"))
        .insert_header(("Content-Type", "application/json"))
        .insert_header(("Accept", "application/json, text/event-stream"))
        .insert_header(("MCP-Protocol-Version", ProtocolVersion::V2026_07_28.as_str()));
    for (k, v) in standard {
        req = req.insert_header((k.as_str(), v.as_str()));
    }
    req.set_payload(body.to_vec()).to_request()
}

/// The result of the answer to request `id`, with the notifications that
/// came before it on its stream.
pub(super) async fn answer(resp: ServiceResponse<BoxBody>, id: &Value) -> Result<(Value, Vec<Value>), CallError> {
    let status = resp.status().as_u16();
    let sse = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    let bytes = actix_web::body::to_bytes(resp.into_body())
        .await
        .map_err(|e| CallError::Protocol(format!("HTTP {status}: unreadable body: {e}")))?;
    let mut notes = Vec::new();
    let messages: Vec<Value> = if sse {
        super::listen::sse_messages(&String::from_utf8_lossy(&bytes))
    } else if bytes.is_empty() {
        Vec::new()
    } else {
        vec![serde_json::from_slice(&bytes).map_err(|e| CallError::Protocol(format!("HTTP {status}: {e}")))?]
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
                serde_json::from_value(e.clone()).map_err(|e| CallError::Protocol(format!("bad error: {e}")))?;
            return Err(CallError::Rpc { status, error });
        }
        return Ok((m.get("result").cloned().unwrap_or(Value::Null), notes));
    }
    Err(CallError::Protocol(format!("HTTP {status}: no response to request {id}")))
}
