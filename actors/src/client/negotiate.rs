//! Choosing the era: `server/discover` first (retried once at a version the
//! server names), else the `initialize` handshake — or only what the
//! caller pinned.

use std::sync::Arc;

use mcp_protocol::ProtocolVersion;
use serde_json::{json, Map, Value};

use super::connection::{Inner, Spoken};
use super::error::ClientError;
use super::options::{RequestOptions, VersionChoice};
use super::transport::Conduit;
use super::ServerInfo;
use mcp_protocol::legacy::method as legacy;
use mcp_protocol::request::method;

/// The newest legacy version, offered in `initialize`.
const NEWEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

/// Learns the server's era and facts; the connection speaks it afterwards.
pub(crate) async fn negotiate(inner: &Arc<Inner>) -> Result<(), ClientError> {
    match inner.options.version {
        VersionChoice::Pin(v) if !v.is_stateless() => initialize(inner, v).await,
        VersionChoice::Pin(v) => discover(inner, v, true).await,
        VersionChoice::Auto => match discover(inner, ProtocolVersion::V2026_07_28, false).await {
            Ok(()) => Ok(()),
            Err(e @ (ClientError::Auth { .. } | ClientError::Timeout(_))) => Err(e),
            Err(_) => initialize(inner, NEWEST_LEGACY).await,
        },
    }
}

/// `server/discover` at `version`; a refusal naming the versions served
/// is retried once at the first stateless one of them this client speaks
/// (the same one too: the server says it serves it).
async fn discover(inner: &Arc<Inner>, version: ProtocolVersion, pinned: bool) -> Result<(), ClientError> {
    let first = ask_discover(inner, version).await;
    let result = match first {
        Err(ClientError::Protocol { data: Some(ref d), .. }) if !pinned => {
            let named = d.get("supported").and_then(Value::as_array).cloned().unwrap_or_default();
            let other =
                named.iter().filter_map(Value::as_str).filter_map(ProtocolVersion::parse).find(|v| v.is_stateless());
            match other {
                Some(v) => ask_discover(inner, v).await.map(|r| (v, r)),
                None => return Err(first.expect_err("an error")),
            }
        }
        other => other.map(|r| (version, r)),
    };
    let (asked, result) = result?;
    let offered: Vec<String> = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let chosen = if offered.is_empty() || offered.iter().any(|v| v == asked.as_str()) {
        Some(asked)
    } else if pinned {
        None
    } else {
        offered.iter().filter_map(|v| ProtocolVersion::parse(v)).find(|v| v.is_stateless())
    };
    let Some(chosen) = chosen else {
        return Err(ClientError::transport(format!(
            "the server offers {offered:?}, none of which this client speaks statelessly"
        )));
    };
    *inner.server.lock().expect("server lock") = ServerInfo::from_result(&result, chosen.as_str(), true);
    *inner.era.lock().expect("era lock") = Some(Spoken::Stateless(chosen));
    Ok(())
}

async fn ask_discover(inner: &Arc<Inner>, version: ProtocolVersion) -> Result<Value, ClientError> {
    let era = Spoken::Stateless(version);
    inner.round(Some(&era), method::DISCOVER, &mut Map::new(), &RequestOptions::default()).await
}

/// The `initialize` handshake offering `version`; the server's answer
/// must be a legacy version this client speaks.
async fn initialize(inner: &Arc<Inner>, version: ProtocolVersion) -> Result<(), ClientError> {
    let params = json!({
        "protocolVersion": version.as_str(),
        "capabilities": inner.options.capabilities(),
        "clientInfo": inner.options.info,
    });
    let mut params = params.as_object().cloned().unwrap_or_default();
    let result = inner.round(None, legacy::INITIALIZE, &mut params, &RequestOptions::default()).await?;
    let answered = result.get("protocolVersion").and_then(Value::as_str).unwrap_or_default().to_owned();
    let Some(known) = ProtocolVersion::parse(&answered).filter(|v| !v.is_stateless()) else {
        return Err(ClientError::transport(format!(
            "the server answered initialize with version {answered:?}, which this client does not speak"
        )));
    };
    *inner.server.lock().expect("server lock") = ServerInfo::from_result(&result, &answered, false);
    *inner.era.lock().expect("era lock") = Some(Spoken::Legacy(known));
    if let Conduit::Http(h) = &inner.transport {
        h.set_version(&answered);
    }
    inner.send_message(&json!({"jsonrpc": "2.0", "method": legacy::INITIALIZED})).await;
    if let Conduit::Http(h) = &inner.transport {
        h.open_get_stream().await?;
    }
    // Only a server that declares logging is asked (others may refuse the method).
    let logs = inner.server.lock().expect("server lock").capabilities.get("logging").is_some();
    if let Some(level) = inner.options.log_level.filter(|_| logs) {
        let mut params = json!({"level": level}).as_object().cloned().unwrap_or_default();
        let era = inner.era();
        inner.round(era.as_ref(), legacy::LOGGING_SET_LEVEL, &mut params, &RequestOptions::default()).await?;
    }
    Ok(())
}
