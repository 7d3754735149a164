//! Admission of a `subscriptions/listen` request, the same on every
//! transport: room in the hub, a filter within this server's limits, and
//! with authorization on, the caller's right to read each resource it
//! names. The stream then ends when the caller's credentials expire.

use std::time::Duration;

use mcp_protocol::subscription::SubscriptionFilter;
use mcp_protocol::{ClientRequest, ErrorData};

use super::{Admitted, Intake, Refusal};
use crate::facts::identity::Identity;

/// A listen stream the intake admitted.
#[derive(Debug)]
pub(crate) struct ListenAdmission {
    /// What the stream delivers.
    pub filter: SubscriptionFilter,
    /// When the caller's credentials expire, if they do.
    pub expires_in: Option<Duration>,
    /// The version the request named.
    pub version: mcp_protocol::ProtocolVersion,
}

impl Intake<'_> {
    /// Admits a listen stream, or refuses it: 503 when the hub is at
    /// capacity, -32602 when it asks for more than this server allows (or
    /// for task notifications without the extension), 403 when the caller
    /// may not read a resource it names.
    pub(super) fn admit_listen(&self, admitted: &Admitted) -> Result<ListenAdmission, Refusal> {
        let id = || Some(admitted.id.clone());
        self.occupancy.check().map_err(|full| Refusal::full(id(), ErrorData::internal(full.to_string())))?;
        let filter = self.listen_filter(admitted).map_err(|e| Refusal::of(id(), e))?;
        let mut expires_in = None;
        if let (Some(auth), Some(identity)) = (self.authorizer, admitted.facts.identity.as_deref()) {
            let catalog = self.service.catalog();
            for uri in &filter.resource_subscriptions {
                let scopes = catalog.read_scopes(uri);
                if !scopes.is_empty() {
                    auth.permit(identity, &scopes).map_err(|e| Refusal::auth(id(), e))?;
                }
            }
            expires_in = identity.expires_in();
        }
        Ok(ListenAdmission { filter, expires_in, version: admitted.meta.version })
    }

    /// The filter a listen request is served with: what it asked for, of
    /// what this server can deliver; its error (-32602) when it names more
    /// URIs, or longer ones, than `hub.max_resource_subscriptions` and
    /// `hub.max_uri_bytes` allow.
    fn listen_filter(&self, admitted: &Admitted) -> Result<SubscriptionFilter, ErrorData> {
        let ClientRequest::Listen(p) = &admitted.request else {
            return Ok(SubscriptionFilter::default());
        };
        let profile = admitted.meta.version.profile();
        p.notifications
            .check_limits(self.hub.max_resource_subscriptions, self.hub.max_uri_bytes)
            .map_err(|e| e.to_error_data(profile))?;
        // Task status notifications are for clients that declared the extension.
        if !p.notifications.task_ids.is_empty()
            && self.service.tasks().is_some()
            && !mcp_protocol::tasks::declared(&admitted.meta.client_capabilities)
        {
            return Err(mcp_protocol::tasks::missing_extension("notifications.taskIds").to_error_data(profile));
        }
        // Task events go to their owner's listens only.
        let owner = admitted.facts.identity().map(Identity::key);
        Ok(p.notifications.honored(&self.service.supported_filter()).owned_by(owner))
    }
}
