//! Admission of one incoming request, shared by the transports: `_meta`
//! validation with the right error profile, then parsing into a
//! [`ClientRequest`]. Transports add their own checks between these steps
//! (HTTP: the `Mcp-Method` and `Mcp-Name` headers).

use mcp_protocol::jsonrpc::{encode_error, Request};
use mcp_protocol::meta::VersionHeader;
use mcp_protocol::request::ClientRequest;
use mcp_protocol::version::ErrorProfile;
use mcp_protocol::{ErrorData, ProtocolError, ProtocolVersion, RequestId, RequestMeta};

/// A request that passed admission.
#[derive(Debug, Clone)]
pub struct Admitted {
    /// The id.
    pub id: RequestId,
    /// The validated `_meta`.
    pub meta: RequestMeta,
    /// The parsed request.
    pub request: ClientRequest,
}

/// A request refused before any handler ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The id to echo (`None` renders `null`).
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorData,
}

impl Refusal {
    /// Renders a protocol error with `profile`'s codes.
    pub fn new(id: Option<RequestId>, error: &ProtocolError, profile: ErrorProfile) -> Self {
        Refusal { id, error: error.to_error_data(profile) }
    }

    /// The encoded error response.
    pub fn encode(&self) -> Vec<u8> {
        encode_error(self.id.as_ref(), &self.error)
    }
}

/// The error profile for a request that has not been validated yet: the
/// profile of the version it names, or the newest.
pub fn profile_of(req: &Request) -> ErrorProfile {
    ProtocolVersion::profile_for(RequestMeta::peek_version(req.params.as_ref()))
}

/// Step 1: validates `_meta` (required fields, version header, supported version).
pub fn validate_meta(
    req: &Request,
    header: VersionHeader<'_>,
    versions: &[ProtocolVersion],
) -> Result<RequestMeta, Refusal> {
    RequestMeta::validate(req.params.as_ref(), header, versions)
        .map_err(|e| Refusal::new(Some(req.id.clone()), &e, profile_of(req)))
}

/// Step 2: parses the method and params.
pub fn parse(req: Request, meta: RequestMeta) -> Result<Admitted, Refusal> {
    match ClientRequest::from_parts(&req.method, req.params) {
        Ok(request) => Ok(Admitted { id: req.id, meta, request }),
        Err(e) => Err(Refusal::new(Some(req.id), &e, meta.version.profile())),
    }
}

/// Both steps, for transports without headers (stdio).
pub fn admit(req: Request, versions: &[ProtocolVersion]) -> Result<Admitted, Refusal> {
    let meta = validate_meta(&req, VersionHeader::NotApplicable, versions)?;
    parse(req, meta)
}
