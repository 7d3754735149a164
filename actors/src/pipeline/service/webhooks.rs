//! `events/subscribe` and `events/unsubscribe`: webhook subscriptions, held
//! by the server's [`Webhooks`](crate::webhooks::Webhooks) (started with the first
//! subscribe). Each needs an authenticated caller (`-32012` without one):
//! the principal is part of the subscription's key. A server built without
//! the `webhooks` feature refuses them as a delivery mode it does not offer.

use mcp_protocol::events::webhook::{SubscribeParams, UnsubscribeParams};
use mcp_protocol::events::{Delivery, EventError};
use mcp_protocol::request::method;

use super::{offered, Answer, McpService};
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

fn refused(e: EventError) -> HandlerError {
    HandlerError::from(e.to_error_data())
}

/// The caller a webhook subscription belongs to.
fn principal(ctx: &RequestContext) -> Result<String, HandlerError> {
    match ctx.identity() {
        Some(identity) => Ok(identity.key()),
        None => Err(refused(EventError::Forbidden("webhook subscriptions need an authenticated caller".into()))),
    }
}

/// The server's webhook subscriptions, also shared with the catalog's
/// tools (`ctx.state::<Webhooks>()`) when it serves event types.
#[cfg(feature = "webhooks")]
pub(super) fn handle(catalog: &crate::catalog::Catalog, config: &crate::config::Config) -> crate::webhooks::Webhooks {
    let webhooks = crate::webhooks::Webhooks::new(&config.events.webhooks);
    if catalog.serves_events() {
        catalog.set_state(webhooks.clone());
    }
    webhooks
}

impl McpService {
    pub(super) async fn subscribe_events(
        &self,
        p: SubscribeParams,
        ctx: RequestContext,
    ) -> Result<Answer, HandlerError> {
        offered(self.catalog.serves_events(), method::EVENTS_SUBSCRIBE)?;
        let principal = principal(&ctx)?;
        let event_type = self.served_event_type(&p.subscription.name).await?;
        let reader = crate::catalog::Reader::open(&event_type, &p.subscription, Delivery::Webhook).map_err(refused)?;
        let page = event_type.batch_for(None);
        let answer = self.subscribe_webhook(principal, p, reader, page).await?;
        self.finish(&answer, None).map(Answer::Tree)
    }

    pub(super) async fn unsubscribe_events(
        &self,
        p: UnsubscribeParams,
        ctx: RequestContext,
    ) -> Result<Answer, HandlerError> {
        offered(self.catalog.serves_events(), method::EVENTS_UNSUBSCRIBE)?;
        let principal = principal(&ctx)?;
        if self.catalog.event_type(&p.name).is_none() {
            return Err(refused(EventError::UnknownEvent(p.name)));
        }
        self.unsubscribe_webhook(principal, p).await?;
        self.finish(&serde_json::json!({}), None).map(Answer::Tree)
    }

    #[cfg(feature = "webhooks")]
    async fn subscribe_webhook(
        &self,
        principal: String,
        mut params: SubscribeParams,
        reader: crate::catalog::Reader,
        page: usize,
    ) -> Result<serde_json::Value, HandlerError> {
        let callback = self.webhooks.callback(&params.url).map_err(refused)?;
        params.url = callback.to_string();
        let registry = self.webhooks.registry().map_err(HandlerError::internal)?;
        let subscribe = crate::webhooks::Subscribe { principal, params, callback, reader, page };
        let answer =
            registry.send(subscribe).await.map_err(|_| HandlerError::internal("the webhook registry stopped"))?;
        answer.map_err(refused)
    }

    #[cfg(feature = "webhooks")]
    async fn unsubscribe_webhook(&self, principal: String, mut params: UnsubscribeParams) -> Result<(), HandlerError> {
        params.url = self.webhooks.callback(&params.url).map_err(refused)?.into();
        let registry = self.webhooks.registry().map_err(HandlerError::internal)?;
        let unsubscribe = crate::webhooks::Unsubscribe { principal, params };
        let done =
            registry.send(unsubscribe).await.map_err(|_| HandlerError::internal("the webhook registry stopped"))?;
        done.map_err(refused)
    }

    #[cfg(not(feature = "webhooks"))]
    async fn subscribe_webhook(
        &self,
        _: String,
        params: SubscribeParams,
        _: crate::catalog::Reader,
        _: usize,
    ) -> Result<serde_json::Value, HandlerError> {
        Err(refused(EventError::UnsupportedDelivery { name: params.subscription.name, mode: Delivery::Webhook }))
    }

    #[cfg(not(feature = "webhooks"))]
    async fn unsubscribe_webhook(&self, _: String, params: UnsubscribeParams) -> Result<(), HandlerError> {
        Err(refused(EventError::UnsupportedDelivery { name: params.name, mode: Delivery::Webhook }))
    }
}
