//! The service's dispatch, generated from the protocol crate's one list of
//! methods ([`mcp_protocol::client_requests!`]): each request goes to the
//! service method the list names for it, all of one shape —
//! `async fn name(&self, params, ctx) -> Result<Answer, HandlerError>`. A
//! method added to the list without its handler does not compile.

use mcp_protocol::request::ClientRequest;
use mcp_protocol::ProtocolError;

use super::{Answer, McpService};
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

macro_rules! dispatch {
    ($(
        $(#[$doc:meta])*
        $variant:ident($params:ty) = $constant:ident $wire:literal, $handler:ident
            $(=> $kind:ident($field:ident $member:literal))?;
    )*) => {
        impl McpService {
            /// Answers one request with its method's handler.
            pub(super) async fn answer(&self, request: ClientRequest, ctx: RequestContext) -> Result<Answer, HandlerError> {
                match request {
                    $( ClientRequest::$variant(p) => self.$handler(p, ctx).await, )*
                    // The enum is open to new methods (`non_exhaustive`), but
                    // this match is generated from the same list as it.
                    #[allow(unreachable_patterns)]
                    other => Err(ProtocolError::MethodNotFound(other.method().to_owned()).into()),
                }
            }
        }
    };
}

mcp_protocol::client_requests!(dispatch);

impl McpService {
    /// `subscriptions/listen` is served by a listener, never by the service.
    pub(super) async fn listen(
        &self,
        _: mcp_protocol::subscription::ListenParams,
        _: RequestContext,
    ) -> Result<Answer, HandlerError> {
        Err(HandlerError::internal("subscriptions/listen is served by a listener"))
    }
}
