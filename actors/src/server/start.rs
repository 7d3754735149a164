//! Starting the request actor of an admitted request: on the current
//! arbiter, in a slot of its connection's in-flight cap, or run right here
//! by the transport's own task.

use std::time::Duration;

use actix::Addr;
use tokio::sync::OwnedSemaphorePermit;

use super::McpServer;
use crate::channels::outbound::OutboundTx;
use crate::pipeline::intake::Admitted;
use crate::pipeline::legacy::era::Era;
use crate::pipeline::request::{RequestActor, RequestSpec, StartHere};

impl McpServer {
    /// Starts a request actor for an admitted request on the current
    /// arbiter; its notifications and response go to `outbound`.
    pub fn start_request(&self, admitted: Admitted, era: Era, outbound: OutboundTx) -> Addr<RequestActor> {
        self.start_request_in_slot(admitted, era, outbound, None)
    }

    /// [`McpServer::start_request`], holding `slot` (a place in its
    /// connection's in-flight cap) until the request ends.
    pub fn start_request_in_slot(
        &self,
        admitted: Admitted,
        era: Era,
        outbound: OutboundTx,
        slot: Option<OwnedSemaphorePermit>,
    ) -> Addr<RequestActor> {
        self.start_boxed_in_slot(Box::new(admitted), era, outbound, slot)
    }

    /// [`McpServer::start_request_in_slot`] of a boxed request.
    pub(super) fn start_boxed_in_slot(
        &self,
        admitted: Box<Admitted>,
        era: Era,
        outbound: OutboundTx,
        slot: Option<OwnedSemaphorePermit>,
    ) -> Addr<RequestActor> {
        let spec = self.request_spec(admitted, era, outbound, slot);
        RequestActor::start_with(self.inner.service.clone(), spec, &self.inner.log)
    }

    /// A request actor for an admitted request, started in the task that
    /// polls the returned future ([`RequestActor::start_here`]).
    pub(crate) fn start_request_here(&self, admitted: Box<Admitted>, era: Era, outbound: OutboundTx) -> StartHere {
        RequestActor::new(self.inner.service.clone(), self.request_spec(admitted, era, outbound, None), &self.inner.log)
            .start_here()
    }

    /// What a request actor for `admitted` starts with.
    pub(super) fn request_spec(
        &self,
        admitted: Box<Admitted>,
        era: Era,
        outbound: OutboundTx,
        slot: Option<OwnedSemaphorePermit>,
    ) -> RequestSpec {
        let c = &self.inner.config.request;
        RequestSpec {
            work: admitted,
            outbound,
            timeout: Duration::from_millis(c.timeout_ms),
            slow: Duration::from_millis(self.inner.config.log.slow_ms),
            mailbox: c.mailbox,
            era,
            cancel: self.inner.stopping.child_token(),
            stopping: self.inner.stopping.clone(),
            slot,
        }
    }
}
