//! [`Webhooks`]: a server's handle on its webhook subscriptions, for its
//! handlers and an author's tools; the registry actor starts with its first
//! use, on an arbiter of its own.

use std::sync::Arc;

use actix::prelude::*;
use mcp_protocol::events::EventError;

use super::courier::Command;
use super::post::Poster;
use super::{StateOf, Subscriptions, Tell};
use crate::config::WebhooksConfig;

/// A server's webhook subscriptions, as its handlers (and an author's
/// tools, through [`RequestContext::state`](crate::catalog::context::RequestContext::state))
/// reach them: the registry starts with the first use, on the arbiter of
/// the request that makes it.
#[derive(Debug, Clone)]
pub struct Webhooks(Arc<Registry>);

#[derive(Debug)]
struct Registry {
    config: WebhooksConfig,
    /// The clients (or why they could not be made: an allowed CA bundle
    /// that does not read).
    poster: Result<Arc<Poster>, String>,
    started: std::sync::OnceLock<Addr<Subscriptions>>,
}

/// Where a webhook subscription stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubscriptionState {
    /// Delivering.
    Active,
    /// Suspended after too many failed deliveries, until it is refreshed.
    Suspended,
}

impl Webhooks {
    /// The webhook subscriptions of a server configured by `config`.
    pub(crate) fn new(config: &WebhooksConfig) -> Self {
        let poster = Poster::new(config).map(Arc::new);
        Webhooks(Arc::new(Registry { config: config.clone(), poster, started: std::sync::OnceLock::new() }))
    }

    /// The registry's address; an error says why it cannot start.
    pub(crate) fn registry(&self) -> Result<Addr<Subscriptions>, String> {
        let poster = self.0.poster.clone()?;
        // On an arbiter of its own: deliveries never wait for the request
        // handlers' workers, nor they for deliveries.
        let start = || {
            let config = self.0.config.clone();
            Subscriptions::start_in_arbiter(&actix::Arbiter::new().handle(), move |_| {
                Subscriptions::new(&config, poster)
            })
        };
        Ok(self.0.started.get_or_init(start).clone())
    }

    /// Lets callbacks of `origin` (`https://host[:port]`) past the address
    /// guard from now on, as `events.webhooks.allow_origins` does (they are
    /// still challenged); the origin as it is compared, or why it is not one.
    pub fn allow_origin(&self, origin: &str) -> Result<String, String> {
        self.0.poster.as_ref().map_err(Clone::clone)?.allow(origin)
    }

    /// `url` as subscriptions are keyed by it: parsed, its scheme and host
    /// in lower case, the default port and any fragment left out; `-32602`
    /// when it is not an `https` URL with a host, carries credentials, or
    /// is longer than `max_url_bytes`.
    pub(crate) fn callback(&self, url: &str) -> Result<url::Url, EventError> {
        let max = self.0.config.max_url_bytes;
        if url.len() > max {
            return Err(EventError::InvalidParams(format!("delivery.url is longer than {max} bytes")));
        }
        match url::Url::parse(url) {
            Ok(parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
                Err(EventError::InvalidParams("delivery.url must not carry credentials (user:password@)".into()))
            }
            Ok(mut parsed) if parsed.scheme() == "https" && parsed.host().is_some() => {
                // Never sent: a fragment does not make another callback.
                parsed.set_fragment(None);
                Ok(parsed)
            }
            _ => Err(EventError::InvalidParams("delivery.url is not an https URL with a host".into())),
        }
    }

    /// Where subscription `id` stands; `None` when there is none.
    pub async fn state(&self, id: &str) -> Option<SubscriptionState> {
        self.registry().ok()?.send(StateOf(id.to_owned())).await.ok()?
    }

    /// Tells subscription `id`'s callback of a gap (a `gap` body with the
    /// position delivery continues from); false when there is no such
    /// subscription.
    pub async fn gap(&self, id: &str) -> bool {
        self.tell(id, Command::Gap).await
    }

    /// Ends subscription `id` for `why`: its callback gets a `terminated`
    /// body, and its key names no subscription any more; false when there
    /// is none.
    pub async fn terminate(&self, id: &str, why: EventError) -> bool {
        self.tell(id, Command::Terminate(why)).await
    }

    async fn tell(&self, id: &str, command: Command) -> bool {
        let Ok(registry) = self.registry() else { return false };
        registry.send(Tell(id.to_owned(), command)).await.unwrap_or(false)
    }
}
