//! The legacy era (2025-11-25, 2025-06-18, 2025-03-26): the `initialize`
//! handshake, version negotiation, the methods that only exist there, and the
//! pure state of one session. The stateless era keeps no session at all;
//! this module is used only for clients that open with `initialize`.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::error::ProtocolError;
use crate::model::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::model::discover::Implementation;
use crate::model::logging::LoggingLevel;
use crate::raw_object::RawObject;
use crate::request::{parse, ClientRequest, ItemKind};
use crate::version::ProtocolVersion;

/// Params of `initialize`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The version the client wants.
    pub protocol_version: String,
    /// What the client can do for the whole session.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
    /// The client's identity.
    pub client_info: Implementation,
}

/// The legacy version to use for a client asking for `requested`: the same
/// if served, else the newest legacy version served; `None` when no legacy
/// version is served.
pub fn negotiate(requested: &str, served: &[ProtocolVersion]) -> Option<ProtocolVersion> {
    let legacy = served.iter().copied().filter(|v| !v.is_stateless());
    match ProtocolVersion::parse(requested).filter(|v| !v.is_stateless() && served.contains(v)) {
        Some(v) => Some(v),
        None => legacy.max_by_key(|v| v.as_str()),
    }
}

/// The result of `initialize`.
pub fn initialize_result(
    version: ProtocolVersion,
    capabilities: &ServerCapabilities,
    info: &Implementation,
    instructions: Option<&str>,
) -> Value {
    let mut m = Map::new();
    m.insert("protocolVersion".into(), json!(version.as_str()));
    m.insert("capabilities".into(), serde_json::to_value(capabilities).unwrap_or_default());
    m.insert("serverInfo".into(), serde_json::to_value(info).unwrap_or_default());
    if let Some(i) = instructions {
        m.insert("instructions".into(), json!(i));
    }
    Value::Object(m)
}

/// Method names of the legacy era's own requests (those it shares with
/// the stateless era are [`crate::request::method`]).
pub mod method {
    /// `initialize`: opens a session.
    pub const INITIALIZE: &str = "initialize";
    /// `ping`.
    pub const PING: &str = "ping";
    /// `logging/setLevel`.
    pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
    /// `resources/subscribe`.
    pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
    /// `resources/unsubscribe`.
    pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
    /// `notifications/initialized`: the client's end of the handshake.
    pub const INITIALIZED: &str = "notifications/initialized";
    /// Every method of the legacy era's own.
    pub const ALL: [&str; 5] = [INITIALIZE, PING, LOGGING_SET_LEVEL, RESOURCES_SUBSCRIBE, RESOURCES_UNSUBSCRIBE];
}

/// The stateless era's requests a legacy session does not serve.
const STATELESS_ONLY: [&str; 7] = [
    crate::request::method::SUBSCRIPTIONS_LISTEN,
    crate::request::method::DISCOVER,
    crate::request::method::EVENTS_LIST,
    crate::request::method::EVENTS_POLL,
    crate::request::method::EVENTS_STREAM,
    crate::request::method::EVENTS_SUBSCRIBE,
    crate::request::method::EVENTS_UNSUBSCRIBE,
];

/// A request of the legacy era.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LegacyRequest {
    /// `initialize` (boxed: it is large, and once per session).
    Initialize(Box<InitializeParams>),
    /// `ping`.
    Ping,
    /// `logging/setLevel`.
    SetLevel(LoggingLevel),
    /// `resources/subscribe`.
    Subscribe(String),
    /// `resources/unsubscribe`.
    Unsubscribe(String),
    /// A request both eras share (tools, resources, prompts, completion).
    Shared(ClientRequest),
}

#[derive(Deserialize)]
struct LevelParams {
    level: LoggingLevel,
}

#[derive(Deserialize)]
struct UriParams {
    uri: String,
}

impl LegacyRequest {
    /// Parses a legacy request; `subscriptions/listen`, `server/discover`
    /// and the Events extension's methods belong to the stateless era and
    /// are not found here.
    pub fn from_parts(method: &str, params: Option<&RawObject>) -> Result<Self, ProtocolError> {
        Ok(match method {
            method::INITIALIZE => LegacyRequest::Initialize(Box::new(parse(method, params)?)),
            method::PING => LegacyRequest::Ping,
            method::LOGGING_SET_LEVEL => LegacyRequest::SetLevel(parse::<LevelParams>(method, params)?.level),
            method::RESOURCES_SUBSCRIBE => LegacyRequest::Subscribe(parse::<UriParams>(method, params)?.uri),
            method::RESOURCES_UNSUBSCRIBE => LegacyRequest::Unsubscribe(parse::<UriParams>(method, params)?.uri),
            other if STATELESS_ONLY.contains(&other) => return Err(ProtocolError::MethodNotFound(other.to_owned())),
            other => LegacyRequest::Shared(ClientRequest::from_parts(other, params)?),
        })
    }
}

/// The item a request of either era is about, read from its raw params:
/// that of [`crate::request::item_in`], and the resource of a legacy
/// `resources/subscribe` (to subscribe is to read).
pub fn item_in(method: &str, params: Option<&RawObject>) -> Option<(ItemKind, String)> {
    if method == method::RESOURCES_SUBSCRIBE {
        let uri = params?.to_map().remove("uri")?;
        return uri.as_str().map(|u| (ItemKind::Resource, u.to_owned()));
    }
    crate::request::item_in(method, params)
}

/// What one legacy session remembers: the negotiated version, the client's
/// capabilities and identity, its log level and resource subscriptions.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionState {
    /// The negotiated version.
    pub version: ProtocolVersion,
    /// Capabilities declared at `initialize` (shared with each request's `_meta`).
    pub client_capabilities: std::sync::Arc<ClientCapabilities>,
    /// The client's identity.
    pub client_info: Implementation,
    /// Set by `logging/setLevel`; `None`: no log notifications.
    pub log_level: Option<LoggingLevel>,
    /// URIs subscribed with `resources/subscribe`.
    pub subscriptions: BTreeSet<String>,
}

impl SessionState {
    /// The state right after `initialize`.
    pub fn new(version: ProtocolVersion, params: &InitializeParams) -> Self {
        SessionState {
            version,
            client_capabilities: std::sync::Arc::new(params.capabilities.clone()),
            client_info: params.client_info.clone(),
            log_level: None,
            subscriptions: BTreeSet::new(),
        }
    }
}

/// Removes the fields the legacy era does not know from a result
/// (`resultType`, `ttlMs`, `cacheScope`).
pub fn strip_stateless_fields(result: &mut Value) {
    if let Some(m) = result.as_object_mut() {
        m.remove("resultType");
        m.remove("ttlMs");
        m.remove("cacheScope");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVED: &[ProtocolVersion] = &[
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
    ];

    #[test]
    fn negotiation() {
        assert_eq!(negotiate("2025-06-18", SERVED), Some(ProtocolVersion::V2025_06_18));
        assert_eq!(negotiate("2024-11-05", SERVED), Some(ProtocolVersion::V2025_11_25));
        assert_eq!(negotiate("2026-07-28", SERVED), Some(ProtocolVersion::V2025_11_25));
        assert_eq!(negotiate("2025-06-18", &[ProtocolVersion::V2026_07_28]), None);
    }

    #[test]
    fn parses_legacy_methods() {
        let p = |v: Value| v.as_object().cloned().map(|m| &*Box::leak(Box::new(RawObject::from(m))));
        assert!(matches!(
            LegacyRequest::from_parts(
                "initialize",
                p(
                    json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}})
                )
            ),
            Ok(LegacyRequest::Initialize(_))
        ));
        assert_eq!(LegacyRequest::from_parts("ping", None), Ok(LegacyRequest::Ping));
        assert_eq!(
            LegacyRequest::from_parts("logging/setLevel", p(json!({"level": "debug"}))),
            Ok(LegacyRequest::SetLevel(LoggingLevel::Debug))
        );
        assert_eq!(
            LegacyRequest::from_parts("resources/subscribe", p(json!({"uri": "x://1"}))),
            Ok(LegacyRequest::Subscribe("x://1".into()))
        );
        assert!(LegacyRequest::from_parts("subscriptions/listen", None).is_err());
        for events in ["events/list", "events/poll"] {
            let refused = LegacyRequest::from_parts(events, None).unwrap_err();
            assert!(matches!(refused, ProtocolError::MethodNotFound(_)), "{events}: {refused:?}");
        }
        assert!(matches!(LegacyRequest::from_parts("tools/list", None), Ok(LegacyRequest::Shared(_))));
        assert!(LegacyRequest::from_parts("logging/setLevel", p(json!({"level": "loud"}))).is_err());
    }

    #[test]
    fn strips_stateless_fields() {
        let mut v = json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "public", "tools": []});
        strip_stateless_fields(&mut v);
        assert_eq!(v, json!({"tools": []}));
    }
}
