//! What a request is served with besides its message: the caller's
//! [`Identity`], its HTTP headers, the [`Extensions`] a middleware attached —
//! gathered by the transport as [`RequestFacts`] — and the [`clock`] the
//! server reads deadlines from.

use std::sync::Arc;

pub mod clock;
pub mod extensions;
pub mod head;
pub mod headers;
pub mod identity;

pub use extensions::Extensions;
pub use head::{Head, Header, Headers, Repeated};
pub use headers::RequestHeaders;
pub use identity::Identity;

/// The transport's facts about one request, carried to its handler.
#[derive(Clone, Debug, Default)]
pub struct RequestFacts {
    /// The HTTP headers (`None` over stdio).
    pub headers: Option<RequestHeaders>,
    /// The caller, when the server's authenticator established it.
    pub identity: Option<Arc<Identity>>,
    /// Values a middleware attached (the caller's identity, a tenant…).
    pub extensions: Extensions,
    /// The W3C trace context of the HTTP headers (`traceparent`,
    /// `tracestate`, `baggage`), when well-formed.
    pub trace: Option<mcp_protocol::trace::TraceContext>,
}

impl RequestFacts {
    /// The caller: the authenticator's identity, else one a middleware
    /// attached as an extension.
    pub fn identity(&self) -> Option<&Identity> {
        self.identity.as_deref().or_else(|| self.extensions.get::<Identity>())
    }
}
