//! Webhook subscriptions of the Events extension (`events/subscribe`,
//! `events/unsubscribe`): [`Webhooks`], a server's handle on them, and
//! the actor that holds them — keyed
//! by (principal, callback, event type, arguments), each with the id
//! derived from its key, its granted lifetime and its [`Courier`] — and
//! the verification a callback passes before its first delivery.
//!
//! A subscribe either refreshes the subscription its key names (the new
//! secret, the new lifetime, delivery resumed) or, within the caps, makes
//! one: the callback is challenged (unless it answered for this principal
//! lately), then a courier delivers from the subscription's cursor. A
//! subscription not refreshed before its `refreshBefore` is dropped.

mod courier;
mod guard;
mod post;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use mcp_protocol::events::webhook::{self, Secret, SubscribeParams, Ttl, UnsubscribeParams};
use mcp_protocol::events::{Batch, CallbackFailure, EventError};
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::catalog::Reader;
use crate::config::WebhooksConfig;
use courier::{Command, Courier, Status, Stopped};
use post::{Letter, Posted, Poster};

/// One subscription as the registry holds it.
struct Entry {
    principal: String,
    /// `None`: never expires (not granted by this server today).
    expires: Option<Instant>,
    commands: mpsc::Sender<Command>,
    status: watch::Receiver<Status>,
}

/// The actor holding a server's webhook subscriptions.
pub(crate) struct Subscriptions {
    limits: Arc<WebhooksConfig>,
    poster: Arc<Poster>,
    subscriptions: HashMap<String, Entry>,
    /// (principal, callback) pairs that answered the challenge, until when.
    verified: HashMap<(String, String), Instant>,
}

impl Subscriptions {
    /// A registry delivering as `limits` says; an unreadable CA bundle of
    /// an allowed origin is an error naming it.
    fn new(limits: &WebhooksConfig, poster: Arc<Poster>) -> Self {
        Subscriptions {
            poster,
            limits: Arc::new(limits.clone()),
            subscriptions: HashMap::new(),
            verified: HashMap::new(),
        }
    }

    /// How long a subscription that suggested `ttl` is granted.
    fn grant(&self, ttl: Ttl) -> Duration {
        let l = &self.limits;
        Duration::from_millis(match ttl {
            Ttl::Default => l.default_ttl_ms,
            Ttl::Forever => l.max_ttl_ms,
            Ttl::Ms(ms) => ms.clamp(l.min_ttl_ms, l.max_ttl_ms),
        })
    }

    fn is_verified(&self, principal: &str, url: &str) -> bool {
        let key = (principal.to_owned(), url.to_owned());
        self.verified.get(&key).is_some_and(|until| *until > Instant::now())
    }

    /// Refuses a new subscription past the caps.
    fn room_for(&self, principal: &str) -> Result<(), EventError> {
        let l = &self.limits;
        if self.subscriptions.len() >= l.max_subscriptions {
            return Err(exhausted("webhook_subscriptions", l.max_subscriptions));
        }
        let held = self.subscriptions.values().filter(|e| e.principal == principal).count();
        if held >= l.max_subscriptions_per_caller {
            return Err(exhausted("webhook_subscriptions_per_caller", l.max_subscriptions_per_caller));
        }
        Ok(())
    }

    /// Refreshes subscription `id`: the answer carries the status it had.
    fn refresh(&mut self, id: &str, secret: Secret, ttl: Duration) -> Option<Value> {
        let entry = self.subscriptions.get_mut(id)?;
        let before = entry.status.borrow().clone();
        // The courier may be busy delivering: a full queue of commands
        // means refreshes are already waiting, and this one's secret
        // would only follow them.
        if entry.commands.try_send(Command::Refresh(secret)).is_err() {
            return None;
        }
        let expires = Instant::now() + ttl;
        entry.expires = Some(expires);
        let mut answer = subscribed(id, ttl, before.watermark.as_deref(), false);
        answer["deliveryStatus"] = before.to_json();
        Some(answer)
    }

    /// Starts the courier of a new subscription whose reader read `first`.
    fn start(&mut self, new: NewSubscription, ctx: &mut Context<Self>) -> Value {
        let NewSubscription { id, principal, url, secret, ttl, reader, first, page } = new;
        let (commands, inbox) = mpsc::channel(8);
        let status = Status { active: true, watermark: Some(first.start.clone()), ..Status::default() };
        let (status_tx, status_rx) = watch::channel(status);
        let answer = subscribed(&id, ttl, Some(&first.start), first.truncated);
        let courier = Courier::new(
            id.clone(),
            url.clone(),
            self.poster.clone(),
            self.limits.clone(),
            secret,
            reader,
            page,
            inbox,
            status_tx,
        );
        let entry = Entry { principal, expires: Some(Instant::now() + ttl), commands, status: status_rx };
        self.subscriptions.insert(id.clone(), entry);
        let me = ctx.address();
        let ended_id = id;
        actix::spawn(async move {
            if courier.run(first).await == Stopped::Terminated {
                me.do_send(Ended(ended_id));
            }
        });
        answer
    }

    fn sweep(&mut self) {
        let now = Instant::now();
        // Dropping an entry drops its commands' sender: its courier stops.
        self.subscriptions.retain(|_, e| e.expires.is_none_or(|at| at > now));
        self.verified.retain(|_, until| *until > now);
    }
}

impl Actor for Subscriptions {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(Duration::from_secs(1), |me, _| me.sweep());
    }
}

fn exhausted(limit: &'static str, max: usize) -> EventError {
    EventError::ResourceExhausted { limit, max: u64::try_from(max).ok() }
}

/// A subscribe's answer.
fn subscribed(id: &str, ttl: Duration, cursor: Option<&str>, truncated: bool) -> Value {
    let refresh_before = crate::catalog::now_ms().saturating_add(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
    json!({
        "id": id,
        "refreshBefore": mcp_protocol::tasks::iso8601(refresh_before),
        "cursor": cursor,
        "truncated": truncated,
    })
}

/// A subscription about to start: its reader has read its first batch.
struct NewSubscription {
    id: String,
    principal: String,
    url: url::Url,
    secret: Secret,
    ttl: Duration,
    reader: Reader,
    first: Batch,
    page: usize,
}

/// `events/subscribe` from `principal`, whose reader of the event type
/// (opened by the subscription, its arguments checked) is `reader`.
#[derive(Message)]
#[rtype(result = "Result<Value, EventError>")]
pub(crate) struct Subscribe {
    pub(crate) principal: String,
    pub(crate) params: SubscribeParams,
    pub(crate) reader: Reader,
    pub(crate) page: usize,
}

impl Handler<Subscribe> for Subscriptions {
    type Result = ResponseActFuture<Self, Result<Value, EventError>>;

    fn handle(&mut self, msg: Subscribe, _: &mut Context<Self>) -> Self::Result {
        let Subscribe { principal, params, mut reader, page } = msg;
        let SubscribeParams { subscription, url, secret, ttl } = params;
        let ttl = self.grant(ttl);
        let parsed = match url::Url::parse(&url) {
            Ok(parsed) if parsed.host().is_some() => parsed,
            _ => return Box::pin(fut::err(EventError::InvalidParams("delivery.url is not a URL with a host".into()))),
        };
        let id = webhook::subscription_id(&principal, &url, &subscription.name, &subscription.arguments);
        if let Some(answer) = self.refresh(&id, secret.clone(), ttl) {
            return Box::pin(fut::ok(answer));
        }
        if let Err(full) = self.room_for(&principal) {
            return Box::pin(fut::err(full));
        }
        let check =
            (!self.is_verified(&principal, &url)).then(|| (self.poster.clone(), parsed.clone(), secret.clone()));
        let challenge = async move {
            match check {
                Some((poster, url, secret)) => verify(&poster, &url, &id, &secret).await.map(|()| (id, true)),
                None => Ok((id, false)),
            }
        };
        Box::pin(challenge.into_actor(self).map(move |verified, me, ctx| {
            let (id, challenged) = verified?;
            if challenged {
                let until = Instant::now() + Duration::from_millis(me.limits.verified_ttl_ms);
                me.verified.insert((principal.clone(), url.clone()), until);
            }
            // Subscribed meanwhile by a request that raced this one.
            if let Some(answer) = me.refresh(&id, secret.clone(), ttl) {
                return Ok(answer);
            }
            me.room_for(&principal)?;
            let first = reader.read(page);
            let new = NewSubscription { id, principal, url: parsed, secret, ttl, reader, first, page };
            Ok(me.start(new, ctx))
        }))
    }
}

/// Challenges the callback: a signed `verification` body, answered 2xx
/// with `{"challenge": <the same>}`.
async fn verify(poster: &Poster, url: &url::Url, subscription_id: &str, secret: &Secret) -> Result<(), EventError> {
    let challenge = post::challenge();
    let body = webhook::verification_body(&challenge).to_string();
    let id = format!("msg_verification_{}", uuid::Uuid::new_v4().simple());
    let letter = Letter { url, subscription_id, id: &id, body: body.as_bytes(), secrets: &[secret] };
    let failed = |reason, detail: &str| Err(EventError::CallbackEndpoint { reason, detail: detail.to_owned() });
    match poster.post(&letter, true).await {
        Posted::Accepted(answer) if webhook::echoes_challenge(&answer, &challenge) => Ok(()),
        Posted::Accepted(_) => failed(CallbackFailure::ChallengeFailed, "the callback did not echo the challenge"),
        Posted::Refused => failed(CallbackFailure::Http4xx, "the callback refused the challenge"),
        Posted::Failed(f) => failed(f.category, &f.detail),
    }
}

/// `events/unsubscribe` from `principal`.
#[derive(Message)]
#[rtype(result = "Result<(), EventError>")]
pub(crate) struct Unsubscribe {
    pub(crate) principal: String,
    pub(crate) params: UnsubscribeParams,
}

impl Handler<Unsubscribe> for Subscriptions {
    type Result = Result<(), EventError>;

    fn handle(&mut self, msg: Unsubscribe, _: &mut Context<Self>) -> Self::Result {
        let UnsubscribeParams { name, arguments, url } = msg.params;
        let id = webhook::subscription_id(&msg.principal, &url, &name, &arguments);
        match self.subscriptions.remove(&id) {
            Some(_) => Ok(()),
            None => Err(EventError::UnknownSubscription(id)),
        }
    }
}

/// A courier that ended its subscription (`terminated` was sent).
#[derive(Message)]
#[rtype(result = "()")]
struct Ended(String);

impl Handler<Ended> for Subscriptions {
    type Result = ();

    fn handle(&mut self, msg: Ended, _: &mut Context<Self>) {
        self.subscriptions.remove(&msg.0);
    }
}

/// Where subscription `id` stands.
#[derive(Message)]
#[rtype(result = "Option<SubscriptionState>")]
struct StateOf(String);

impl Handler<StateOf> for Subscriptions {
    type Result = Option<SubscriptionState>;

    fn handle(&mut self, msg: StateOf, _: &mut Context<Self>) -> Option<SubscriptionState> {
        let entry = self.subscriptions.get(&msg.0)?;
        Some(if entry.status.borrow().active { SubscriptionState::Active } else { SubscriptionState::Suspended })
    }
}

/// Tells subscription `id`'s courier `command`; false when there is no
/// such subscription (or its courier is too busy to hear it).
#[derive(Message)]
#[rtype(result = "bool")]
struct Tell(String, Command);

impl Handler<Tell> for Subscriptions {
    type Result = bool;

    fn handle(&mut self, msg: Tell, _: &mut Context<Self>) -> bool {
        let Some(entry) = self.subscriptions.get(&msg.0) else {
            return false;
        };
        let terminate = matches!(msg.1, Command::Terminate(_));
        let told = entry.commands.try_send(msg.1).is_ok();
        if told && terminate {
            // The key no longer names a subscription from now on; the
            // courier sends `terminated` and stops.
            self.subscriptions.remove(&msg.0);
        }
        told
    }
}

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
        Ok(self.0.started.get_or_init(|| Subscriptions::new(&self.0.config, poster).start()).clone())
    }

    /// Lets callbacks of `origin` (`https://host[:port]`) past the address
    /// guard from now on, as `events.webhooks.allow_origins` does (they are
    /// still challenged); the origin as it is compared, or why it is not one.
    pub fn allow_origin(&self, origin: &str) -> Result<String, String> {
        self.0.poster.as_ref().map_err(Clone::clone)?.allow(origin)
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
