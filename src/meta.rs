//! The per-request `_meta` of the stateless revisions, and its validation.
//!
//! Validation runs in the order the specification and the conformance suite
//! require, and stops at the first failure:
//! 1. `_meta` is an object with `protocolVersion` (string) and
//!    `clientCapabilities` (object); `clientInfo` too under `DRAFT-2026-v1` → else `-32602`;
//! 2. on HTTP, the `MCP-Protocol-Version` header equals the `_meta` version → else HeaderMismatch;
//! 3. the version is served → else UnsupportedProtocolVersion with `supported` and `requested`.
//!
//! Nothing is inferred from earlier requests or the connection.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::ProtocolError;
use crate::model::capabilities::ClientCapabilities;
use crate::model::discover::Implementation;
use crate::model::logging::LoggingLevel;
use crate::raw_object::{is_object, present_raw, raw_str, RawObject};
use crate::version::ProtocolVersion;

/// `_meta` key of the protocol version.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client identity.
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the client capabilities.
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the per-request log level.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server identity on results.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key tagging subscription messages.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key of the progress token.
pub const PROGRESS_TOKEN_KEY: &str = "progressToken";
/// `_meta` key, on a legacy server-to-client input request, of the key the
/// handler asked under (its `inputRequests` key in the stateless era), so
/// that a gateway can put the question to a stateless client under it.
pub const INPUT_KEY_KEY: &str = "actix-mcp/inputKey";
/// `_meta` key, on a legacy server-to-client request, of the id of the
/// client request it is part of (a stdio session otherwise says nothing of
/// it). A server that sets it declares the experimental capability of the
/// same name at `initialize`.
pub const RELATED_REQUEST_KEY: &str = "actix-mcp/relatedRequestId";

/// What the transport knows about the version header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionHeader<'a> {
    /// The transport has no headers (stdio).
    NotApplicable,
    /// HTTP, and the header is absent.
    Missing,
    /// HTTP, with this value.
    Present(&'a str),
}

/// The capabilities of a client that declares none (`{}`), shared.
pub fn no_capabilities() -> Arc<ClientCapabilities> {
    static NONE: OnceLock<Arc<ClientCapabilities>> = OnceLock::new();
    NONE.get_or_init(|| Arc::new(ClientCapabilities::default())).clone()
}

/// The validated `_meta` of one request.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta {
    /// The protocol version of this request.
    pub version: ProtocolVersion,
    /// The client identity, if sent.
    pub client_info: Option<Implementation>,
    /// What the client can do for this request (shared: it is large, the
    /// request moves through several owners, and most clients declare `{}`).
    pub client_capabilities: Arc<ClientCapabilities>,
    /// The log level the client opted into; `None`: no log notifications.
    pub log_level: Option<LoggingLevel>,
    /// The progress token, if progress notifications are wanted.
    pub progress_token: Option<Value>,
    /// The W3C trace context in `_meta` (`traceparent`, `tracestate`,
    /// `baggage`), when well-formed; a malformed one is ignored.
    pub trace: Option<crate::trace::TraceContext>,
}

/// The keys of a request's `_meta` this crate reads, each as its raw JSON,
/// found in one pass over `params` and one over `_meta` (not yet checked).
#[derive(Debug, Default, Clone, Copy)]
pub struct MetaKeys<'a> {
    /// What `params._meta` is.
    pub meta: MetaShape,
    /// [`PROTOCOL_VERSION_KEY`].
    pub version: Option<&'a RawValue>,
    /// [`CLIENT_INFO_KEY`].
    pub client_info: Option<&'a RawValue>,
    /// [`CLIENT_CAPABILITIES_KEY`].
    pub client_capabilities: Option<&'a RawValue>,
    /// [`LOG_LEVEL_KEY`].
    pub log_level: Option<&'a RawValue>,
    /// [`PROGRESS_TOKEN_KEY`].
    pub progress_token: Option<&'a RawValue>,
    /// W3C `traceparent`.
    pub traceparent: Option<&'a RawValue>,
    /// W3C `tracestate`.
    pub tracestate: Option<&'a RawValue>,
    /// W3C `baggage`.
    pub baggage: Option<&'a RawValue>,
}

/// What a request's `params._meta` is.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum MetaShape {
    /// Not there.
    #[default]
    Absent,
    /// An object.
    Object,
    /// Something else (`null` included).
    Other,
}

/// `params` read for `_meta` alone.
#[derive(Deserialize)]
struct ParamsMeta<'a> {
    #[serde(rename = "_meta", default, borrow, deserialize_with = "present_raw")]
    meta: Option<&'a RawValue>,
}

/// `_meta` read for the keys this crate knows; the names are the constants above.
#[derive(Deserialize)]
pub(crate) struct MetaMembers<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default, borrow, deserialize_with = "present_raw")]
    version: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default, borrow, deserialize_with = "present_raw")]
    client_info: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default, borrow, deserialize_with = "present_raw")]
    client_capabilities: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", default, borrow, deserialize_with = "present_raw")]
    log_level: Option<&'a RawValue>,
    #[serde(rename = "progressToken", default, borrow, deserialize_with = "present_raw")]
    progress_token: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present_raw")]
    traceparent: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present_raw")]
    tracestate: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present_raw")]
    baggage: Option<&'a RawValue>,
}

impl<'a> MetaMembers<'a> {
    /// The keys of an object `_meta`.
    pub(crate) fn into_keys(self) -> MetaKeys<'a> {
        let k = self;
        MetaKeys {
            meta: MetaShape::Object,
            version: k.version,
            client_info: k.client_info,
            client_capabilities: k.client_capabilities,
            log_level: k.log_level,
            progress_token: k.progress_token,
            traceparent: k.traceparent,
            tracestate: k.tracestate,
            baggage: k.baggage,
        }
    }
}

impl<'a> MetaKeys<'a> {
    /// The keys of `params._meta`. `Err` when `params` or `_meta` is not
    /// well-formed for reading them (a key given twice, say).
    pub fn of(params: Option<&'a RawObject>) -> Result<Self, ProtocolError> {
        let Some(params) = params else { return Ok(MetaKeys::default()) };
        let meta = params
            .parse_borrowed::<ParamsMeta<'a>>()
            .map_err(|e| ProtocolError::InvalidMeta(format!("params: {e}")))?
            .meta;
        let m = match meta {
            None => return Ok(MetaKeys::default()),
            Some(m) if is_object(m) => m,
            Some(_) => return Ok(MetaKeys { meta: MetaShape::Other, ..MetaKeys::default() }),
        };
        let k = serde_json::from_str::<MetaMembers<'a>>(m.get())
            .map_err(|e| ProtocolError::InvalidMeta(format!("_meta: {e}")))?;
        Ok(k.into_keys())
    }

    /// The protocol version it names, if it names one as a string.
    pub fn version_str(&self) -> Option<Cow<'a, str>> {
        self.version.and_then(raw_str)
    }

    /// The progress token, when it is a string or a number.
    pub fn progress_token(&self) -> Option<Value> {
        let raw = self.progress_token?;
        let value = serde_json::from_str::<Value>(raw.get()).ok()?;
        (value.is_string() || value.is_number()).then_some(value)
    }

    /// The W3C trace context, when well-formed.
    pub fn trace(&self) -> Option<crate::trace::TraceContext> {
        self.traceparent?;
        let text = |r: Option<&'a RawValue>| r.and_then(raw_str);
        let (p, s, b) = (text(self.traceparent), text(self.tracestate), text(self.baggage));
        crate::trace::TraceContext::from_parts(p.as_deref(), s.as_deref(), b.as_deref())
    }
}

impl RequestMeta {
    /// Validates `params._meta` for a transport without headers (stdio).
    pub fn from_params(
        params: Option<&RawObject>,
        header: Option<&str>,
        supported: &[ProtocolVersion],
    ) -> Result<Self, ProtocolError> {
        let header = match header {
            Some(h) => VersionHeader::Present(h),
            None => VersionHeader::NotApplicable,
        };
        Self::validate(params, header, supported)
    }

    /// Validates `params._meta` in the specified order (see the module docs).
    pub fn validate(
        params: Option<&RawObject>,
        header: VersionHeader<'_>,
        supported: &[ProtocolVersion],
    ) -> Result<Self, ProtocolError> {
        Self::validate_keys(&MetaKeys::of(params)?, header, supported)
    }

    /// [`RequestMeta::validate`] of keys already read.
    pub fn validate_keys(
        keys: &MetaKeys<'_>,
        header: VersionHeader<'_>,
        supported: &[ProtocolVersion],
    ) -> Result<Self, ProtocolError> {
        match keys.meta {
            MetaShape::Object => {}
            MetaShape::Other => return Err(ProtocolError::InvalidMeta("_meta must be an object".into())),
            MetaShape::Absent => return Err(ProtocolError::InvalidMeta("params._meta is required".into())),
        }
        let version_str = match keys.version {
            Some(_) => keys
                .version_str()
                .ok_or_else(|| ProtocolError::InvalidMeta(format!("{PROTOCOL_VERSION_KEY} must be a string")))?,
            None => return Err(ProtocolError::InvalidMeta(format!("{PROTOCOL_VERSION_KEY} is required"))),
        };
        let client_capabilities = match keys.client_capabilities {
            Some(v) if v.get() == "{}" => no_capabilities(),
            Some(v) if is_object(v) => Arc::new(ClientCapabilities::deserialize_raw(v)?),
            Some(_) => return Err(ProtocolError::InvalidMeta(format!("{CLIENT_CAPABILITIES_KEY} must be an object"))),
            None => return Err(ProtocolError::InvalidMeta(format!("{CLIENT_CAPABILITIES_KEY} is required"))),
        };
        let client_info = match keys.client_info {
            None => None,
            Some(v) => Some(
                serde_json::from_str::<Implementation>(v.get())
                    .map_err(|e| ProtocolError::InvalidMeta(format!("{CLIENT_INFO_KEY}: {e}")))?,
            ),
        };
        if client_info.is_none() && ProtocolVersion::profile_for(Some(&version_str)).client_info_required {
            return Err(ProtocolError::InvalidMeta(format!("{CLIENT_INFO_KEY} is required in {version_str}")));
        }
        check_version_header(header, &version_str)?;
        let version = ProtocolVersion::parse(&version_str).filter(|v| supported.contains(v)).ok_or_else(|| {
            ProtocolError::UnsupportedVersion {
                requested: version_str.clone().into_owned(),
                supported: supported.iter().map(|v| v.as_str().to_owned()).collect(),
            }
        })?;
        let log_level = match keys.log_level {
            None => None,
            Some(v) => Some(
                serde_json::from_str::<LoggingLevel>(v.get())
                    .map_err(|e| ProtocolError::InvalidMeta(format!("{LOG_LEVEL_KEY}: {e}")))?,
            ),
        };
        let progress_token = match keys.progress_token {
            None => None,
            Some(_) => Some(
                keys.progress_token()
                    .ok_or_else(|| ProtocolError::InvalidMeta("progressToken must be a string or number".into()))?,
            ),
        };
        Ok(RequestMeta { version, client_info, client_capabilities, log_level, progress_token, trace: keys.trace() })
    }

    /// The protocol version string of a request, if it has one, for choosing an
    /// error profile before validation has succeeded.
    pub fn peek_version(params: Option<&RawObject>) -> Option<Cow<'_, str>> {
        MetaKeys::of(params).ok()?.version_str()
    }
}

impl ClientCapabilities {
    fn deserialize_raw(v: &RawValue) -> Result<Self, ProtocolError> {
        serde_json::from_str::<ClientCapabilities>(v.get())
            .map_err(|e| ProtocolError::InvalidMeta(format!("{CLIENT_CAPABILITIES_KEY}: {e}")))
    }
}

/// `MCP-Protocol-Version` must equal the body's version where the transport
/// has headers.
fn check_version_header(header: VersionHeader<'_>, version: &str) -> Result<(), ProtocolError> {
    let header_value = match header {
        VersionHeader::NotApplicable => return Ok(()),
        VersionHeader::Present(h) if h.trim() == version => return Ok(()),
        VersionHeader::Present(h) => Some(h.to_owned()),
        VersionHeader::Missing => None,
    };
    Err(ProtocolError::HeaderMismatch {
        header: "MCP-Protocol-Version".into(),
        header_value,
        body_value: version.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> RawObject {
        RawObject::from(v.as_object().unwrap().clone())
    }

    fn meta(version: &str) -> Value {
        json!({"_meta": {PROTOCOL_VERSION_KEY: version, CLIENT_CAPABILITIES_KEY: {}}})
    }

    const ALL: &[ProtocolVersion] = ProtocolVersion::ALL;

    #[test]
    fn required_fields_first() {
        let p = params(json!({}));
        assert!(matches!(
            RequestMeta::validate(Some(&p), VersionHeader::Present("x"), ALL),
            Err(ProtocolError::InvalidMeta(_))
        ));
        assert!(matches!(
            RequestMeta::validate(None, VersionHeader::NotApplicable, ALL),
            Err(ProtocolError::InvalidMeta(_))
        ));
        let p = params(json!({"_meta": {CLIENT_CAPABILITIES_KEY: {}}}));
        // missing version is reported before the header comparison
        assert!(matches!(
            RequestMeta::validate(Some(&p), VersionHeader::Present("2026-07-28"), ALL),
            Err(ProtocolError::InvalidMeta(_))
        ));
        let p = params(json!({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}}));
        assert!(matches!(
            RequestMeta::validate(Some(&p), VersionHeader::Present("2026-07-28"), ALL),
            Err(ProtocolError::InvalidMeta(_))
        ));
    }

    #[test]
    fn client_info_optional_in_release_required_in_draft() {
        let p = params(meta("2026-07-28"));
        assert!(RequestMeta::validate(Some(&p), VersionHeader::NotApplicable, ALL).unwrap().client_info.is_none());
        let p = params(meta("DRAFT-2026-v1"));
        assert!(matches!(
            RequestMeta::validate(Some(&p), VersionHeader::NotApplicable, ALL),
            Err(ProtocolError::InvalidMeta(_))
        ));
    }

    #[test]
    fn mismatch_before_unsupported() {
        let p = params(meta("v999.0.0"));
        assert!(matches!(
            RequestMeta::validate(Some(&p), VersionHeader::Present("2026-07-28"), ALL),
            Err(ProtocolError::HeaderMismatch { .. })
        ));
        assert!(matches!(
            RequestMeta::validate(Some(&p), VersionHeader::Missing, ALL),
            Err(ProtocolError::HeaderMismatch { header_value: None, .. })
        ));
        match RequestMeta::validate(Some(&p), VersionHeader::Present("v999.0.0"), ALL) {
            Err(ProtocolError::UnsupportedVersion { requested, supported }) => {
                assert_eq!(requested, "v999.0.0");
                assert_eq!(supported, vec!["2026-07-28", "DRAFT-2026-v1"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_known_but_disabled_version_is_unsupported() {
        let p = params(meta("2026-07-28"));
        assert!(matches!(
            RequestMeta::validate(Some(&p), VersionHeader::NotApplicable, &[ProtocolVersion::Draft2026V1]),
            Err(ProtocolError::UnsupportedVersion { .. })
        ));
    }

    #[test]
    fn reads_log_level_and_progress_token() {
        let p = params(json!({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {"sampling": {}},
            LOG_LEVEL_KEY: "warning", "progressToken": "t1"}}));
        let m = RequestMeta::validate(Some(&p), VersionHeader::NotApplicable, ALL).unwrap();
        assert_eq!(m.log_level, Some(LoggingLevel::Warning));
        assert_eq!(m.progress_token, Some(json!("t1")));
        assert!(m.client_capabilities.sampling.is_some());
        let p = params(
            json!({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}, LOG_LEVEL_KEY: "loud"}}),
        );
        assert!(RequestMeta::validate(Some(&p), VersionHeader::NotApplicable, ALL).is_err());
    }
}
