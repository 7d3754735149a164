//! [`RequestFacts`]: what the transport knows of a request besides its
//! message — its HTTP headers and the extensions a middleware attached.

use crate::extensions::Extensions;
use crate::request_headers::RequestHeaders;

/// The transport's facts about one request, carried to its handler.
#[derive(Clone, Debug, Default)]
pub struct RequestFacts {
    /// The HTTP headers (`None` over stdio).
    pub headers: Option<RequestHeaders>,
    /// Values a middleware attached (the caller's identity, a tenant…).
    pub extensions: Extensions,
}
