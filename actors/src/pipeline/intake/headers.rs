//! The `Mcp-*` headers of a transport that has them (HTTP): each must
//! mirror the body — `Mcp-Method` its method, `Mcp-Name` the item it names,
//! `Mcp-Param-*` the called tool's arguments — and a repeated one is a
//! mismatch.

use mcp_protocol::header::{decode_value, matches_body};
use mcp_protocol::request::ClientRequest;
use mcp_protocol::ProtocolError;

use crate::catalog::Catalog;
use crate::facts::head::{Header, Headers, Repeated};

/// A header's value; a repeated one is a mismatch with whatever the body says.
pub(super) fn header<'h>(h: &'h dyn Headers, name: Header<'_>, body: &str) -> Result<Option<&'h [u8]>, ProtocolError> {
    h.get(name).map_err(|Repeated| mismatch(name.name(), Some("<repeated>".into()), body.to_owned()))
}

pub(super) fn mismatch(header: &str, header_value: Option<String>, body_value: String) -> ProtocolError {
    ProtocolError::HeaderMismatch { header: header.into(), header_value, body_value }
}

/// `Mcp-Method` must be present and equal the body's method (case-sensitive).
pub(super) fn check_method_header(h: &dyn Headers, method: &str) -> Result<(), ProtocolError> {
    match header(h, Header::Method, method)?.map(<[u8]>::trim_ascii) {
        Some(v) if v == method.as_bytes() => Ok(()),
        other => Err(mismatch("Mcp-Method", other.map(|v| String::from_utf8_lossy(v).into_owned()), method.to_owned())),
    }
}

/// `Mcp-Name` must mirror `params.name` / `params.uri` where the method has one,
/// and each `Mcp-Param-*` of the called tool must mirror its argument.
pub(super) fn check_name_headers(
    h: &dyn Headers,
    catalog: &Catalog,
    request: &ClientRequest,
) -> Result<(), ProtocolError> {
    if let Some(body) = request.name_for_header() {
        match header(h, Header::Name, body)?.map(decode_value) {
            Some(Ok(v)) if v == body => {}
            Some(Ok(v)) => return Err(mismatch("Mcp-Name", Some(v), body.to_owned())),
            Some(Err(_)) => return Err(mismatch("Mcp-Name", Some("<undecodable>".into()), body.to_owned())),
            None => return Err(mismatch("Mcp-Name", None, body.to_owned())),
        }
    }
    let ClientRequest::CallTool(call) = request else { return Ok(()) };
    let Some(tool) = catalog.tool(&call.name) else { return Ok(()) };
    let params = tool.header_params();
    if params.is_empty() {
        return Ok(());
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
            (Some(Ok(h)), _) => return Err(mismatch(&name, Some(h), shown)),
            (Some(Err(_)), _) => return Err(mismatch(&name, Some("<invalid>".into()), shown)),
            (None, Some(_)) => return Err(mismatch(&name, None, shown)),
        }
    }
    Ok(())
}
