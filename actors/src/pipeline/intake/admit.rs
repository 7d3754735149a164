//! Admission of a request of the stateless era, in the specified order:
//! the version header against `_meta`, `_meta` itself, `Mcp-Method`, the
//! params, `Mcp-Name` and `Mcp-Param-*` (transports without headers skip
//! the header checks). Each refusal is made with the error profile of the
//! version the request names. The `Mcp-*` headers of a transport that has
//! them (HTTP) must mirror the body — `Mcp-Method` its method, `Mcp-Name`
//! the item it names, `Mcp-Param-*` the called tool's arguments — and a
//! repeated one is a mismatch. The tool a checked `tools/call` names is
//! found once, here, and travels with the request to the service.

use mcp_protocol::header::{decode_value, matches_body};
use mcp_protocol::jsonrpc::Request;
use mcp_protocol::meta::{MetaKeys, VersionHeader, PROTOCOL_VERSION_KEY};
use mcp_protocol::request::ClientRequest;
use mcp_protocol::{ErrorProfile, ProtocolError, ProtocolVersion, RequestMeta};

use std::sync::Arc;

use super::{Checks, Refusal};
use crate::catalog::{Catalog, Tool};
use crate::facts::head::{Header, Headers, Repeated};

/// Whether a request claims the stateless era (its `_meta` names a
/// protocol version, valid or not), from its `_meta` keys; when they could
/// not be read (a key given twice, say), the message is read as a tree.
pub(super) fn claims(r: &Request, keys: &Result<MetaKeys<'_>, ProtocolError>) -> bool {
    match keys {
        Ok(k) => k.version.is_some(),
        Err(_) => tree_meta(r).is_some_and(|m| m.contains_key(PROTOCOL_VERSION_KEY)),
    }
}

/// `params._meta` as a map (the slow path of malformed messages).
fn tree_meta(r: &Request) -> Option<serde_json::Map<String, serde_json::Value>> {
    match r.params.as_ref()?.to_map().remove("_meta")? {
        serde_json::Value::Object(m) => Some(m),
        _ => None,
    }
}

/// The error profile for a request that has not been validated yet: the
/// profile of the version it names, or the newest.
fn profile_of(req: &Request) -> ErrorProfile {
    let meta = tree_meta(req);
    ProtocolVersion::profile_for(meta.as_ref().and_then(|m| m.get(PROTOCOL_VERSION_KEY)?.as_str()))
}

/// What admission found.
pub(super) struct Checked {
    /// The validated `_meta`.
    pub meta: RequestMeta,
    /// The parsed request.
    pub request: ClientRequest,
    /// The tool a `tools/call` names, when its headers were checked
    /// against it (HTTP); the service looks it up otherwise.
    pub tool: Option<Arc<Tool>>,
}

/// Admits a stateless request whose `_meta` keys were read (and its params,
/// when they were read in the same pass).
pub(super) fn admit(
    conn: &Checks<'_>,
    request: &Request,
    keys: Result<MetaKeys<'_>, ProtocolError>,
    parsed: Option<ClientRequest>,
) -> Result<Checked, Refusal> {
    let checked = keys.map_err(Refused::Early).and_then(|keys| {
        let parsed = parsed.map_or_else(|| Parsed::Later(request.params.as_ref()), Parsed::Done);
        check(conn, &request.method, &keys, parsed)
    });
    checked.map_err(|refused| match refused {
        Refused::Early(e) => Refusal::new(Some(request.id.clone()), &e, profile_of(request)),
        Refused::Late(e, profile) => Refusal::new(Some(request.id.clone()), &e, profile),
    })
}

/// A request's params: parsed already, or still to parse.
pub(super) enum Parsed<'a> {
    Done(ClientRequest),
    Later(Option<&'a mcp_protocol::RawObject>),
}

/// Why [`check`] refused, and with which error profile.
pub(super) enum Refused {
    /// Before `_meta` was validated: the profile of the version it names.
    Early(ProtocolError),
    /// After: the validated version's profile.
    Late(ProtocolError, ErrorProfile),
}

/// The checks of admission, in the specified order: the version header
/// against `_meta`, `_meta` itself, `Mcp-Method`, the params, `Mcp-Name`
/// and `Mcp-Param-*`.
pub(super) fn check(
    conn: &Checks<'_>,
    method: &str,
    keys: &MetaKeys<'_>,
    parsed: Parsed<'_>,
) -> Result<Checked, Refused> {
    let version = keys.version_str();
    let header = match conn.headers.map(|h| header(h, Header::ProtocolVersion, version.as_deref().unwrap_or(""))) {
        None => VersionHeader::NotApplicable,
        Some(Err(e)) => return Err(Refused::Early(e)),
        Some(Ok(None)) => VersionHeader::Missing,
        Some(Ok(Some(v))) => VersionHeader::Present(std::str::from_utf8(v).unwrap_or("")),
    };
    let meta =
        RequestMeta::validate_keys(keys, header, conn.versions).map_err(|e| Refused::Early(legacy_only(e, conn)))?;
    let profile = meta.version.profile();
    let refuse = |e: ProtocolError| Refused::Late(e, profile);
    if let Some(h) = conn.headers {
        check_method_header(h, method).map_err(refuse)?;
    }
    let parsed = match parsed {
        Parsed::Done(parsed) => parsed,
        Parsed::Later(params) => ClientRequest::from_parts(method, params).map_err(refuse)?,
    };
    let tool = match conn.headers {
        Some(h) => check_name_headers(h, conn.catalog, &parsed).map_err(refuse)?,
        None => None,
    };
    Ok(Checked { meta, request: parsed, tool })
}

/// A header's value; a repeated one is a mismatch with whatever the body says.
fn header<'h>(h: &'h dyn Headers, name: Header<'_>, body: &str) -> Result<Option<&'h [u8]>, ProtocolError> {
    h.get(name).map_err(|Repeated| mismatch(name.name(), Some("<repeated>".into()), body.to_owned()))
}

fn mismatch(header: &str, header_value: Option<String>, body_value: String) -> ProtocolError {
    ProtocolError::HeaderMismatch { header: header.into(), header_value, body_value }
}

/// `Mcp-Method` must be present and equal the body's method (case-sensitive).
fn check_method_header(h: &dyn Headers, method: &str) -> Result<(), ProtocolError> {
    match header(h, Header::Method, method)?.map(<[u8]>::trim_ascii) {
        Some(v) if v == method.as_bytes() => Ok(()),
        other => Err(mismatch("Mcp-Method", other.map(|v| String::from_utf8_lossy(v).into_owned()), method.to_owned())),
    }
}

/// `Mcp-Name` must mirror `params.name` / `params.uri` where the method has one,
/// and each `Mcp-Param-*` of the called tool must mirror its argument; the
/// called tool, when the catalog has it.
fn check_name_headers(
    h: &dyn Headers,
    catalog: &Catalog,
    request: &ClientRequest,
) -> Result<Option<Arc<Tool>>, ProtocolError> {
    if let Some(body) = request.name_for_header() {
        match header(h, Header::Name, body)?.map(decode_value) {
            Some(Ok(v)) if v == body => {}
            Some(Ok(v)) => return Err(mismatch("Mcp-Name", Some(v.into_owned()), body.to_owned())),
            Some(Err(_)) => return Err(mismatch("Mcp-Name", Some("<undecodable>".into()), body.to_owned())),
            None => return Err(mismatch("Mcp-Name", None, body.to_owned())),
        }
    }
    let ClientRequest::CallTool(call) = request else { return Ok(None) };
    let Some(tool) = catalog.tool(&call.name) else { return Ok(None) };
    let params = tool.header_params();
    if params.is_empty() {
        return Ok(Some(tool));
    }
    let args = call.arguments.as_ref().map(mcp_protocol::RawObject::to_map).unwrap_or_default();
    for param in params {
        let name = param.header_name();
        let body = param.value_in(&args);
        let absent = || "<absent>".to_string();
        let shown = body.map_or_else(absent, |b| b.to_string());
        match (header(h, Header::Param(&name), &shown)?.map(decode_value), body) {
            (None, None) => {}
            (Some(Ok(h)), Some(b)) if matches_body(&h, b) => {}
            (Some(Ok(h)), _) => return Err(mismatch(&name, Some(h.into_owned()), shown)),
            (Some(Err(_)), _) => return Err(mismatch(&name, Some("<invalid>".into()), shown)),
            (None, Some(_)) => return Err(mismatch(&name, None, shown)),
        }
    }
    Ok(Some(tool))
}

/// A server serving only legacy versions names them when it refuses a
/// stateless request, so the client knows to fall back to `initialize`.
fn legacy_only(e: ProtocolError, conn: &Checks<'_>) -> ProtocolError {
    match e {
        ProtocolError::UnsupportedVersion { requested, supported } if supported.is_empty() => {
            ProtocolError::UnsupportedVersion {
                requested,
                supported: conn.served.iter().map(|v| v.as_str().to_owned()).collect(),
            }
        }
        e => e,
    }
}
