//! Webhook subscriptions of the Events extension (`events/subscribe`,
//! `events/unsubscribe`): [`Webhooks`], a server's handle on them; the
//! actor that holds them, keyed by (principal, callback, event type,
//! arguments), each with the id derived from its key, its granted lifetime
//! and its courier (the task delivering it); and the verification a
//! callback passes before its first delivery.
//!
//! A subscribe either refreshes the subscription its key names (the new
//! secret, the new lifetime, delivery resumed) or, within the caps, makes
//! one: the callback is challenged (unless it answered for this principal
//! lately), then a courier delivers from the subscription's cursor. A
//! subscription not refreshed before its `refreshBefore` is dropped.

mod courier;
mod guard;
mod handle;
mod post;
mod window;

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
pub use handle::{SubscriptionState, Webhooks};
use post::{Letter, Posted, Poster};

/// One subscription as the registry holds it. Dropping it stops its
/// courier at once (a post under way is abandoned), unless it was
/// disarmed to let the courier send `terminated` first.
struct Entry {
    principal: String,
    /// Tells this subscription from an earlier one of the same key.
    generation: u64,
    /// `None`: never expires (not granted by this server today).
    expires: Option<Instant>,
    commands: mpsc::Sender<Command>,
    status: watch::Receiver<Status>,
    stop: Option<tokio_util::sync::CancellationToken>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        if let Some(stop) = &self.stop {
            stop.cancel();
        }
    }
}

/// How many commands wait for a courier at most; a refresh past them is
/// refused (`-32013`) rather than lost.
const COMMANDS: usize = 16;

/// The actor holding a server's webhook subscriptions.
pub(crate) struct Subscriptions {
    limits: Arc<WebhooksConfig>,
    poster: Arc<Poster>,
    subscriptions: HashMap<String, Entry>,
    /// (principal, callback) pairs that answered the challenge, until when
    /// (at most `max_subscriptions` of them).
    verified: HashMap<(String, String), Instant>,
    /// Challenges under way.
    challenging: usize,
    generations: u64,
    /// The bytes of bodies the couriers hold for a later attempt.
    held: Arc<std::sync::atomic::AtomicUsize>,
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
            challenging: 0,
            generations: 0,
            held: Arc::default(),
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

    /// Refreshes subscription `id` if there is one: the answer carries the
    /// status it had. A courier with a full queue of commands refuses it
    /// (`-32013`): it is not taken for an absent one.
    fn refresh(&mut self, id: &str, secret: Secret, ttl: Duration) -> Result<Option<Value>, EventError> {
        let Some(entry) = self.subscriptions.get_mut(id) else { return Ok(None) };
        let before = entry.status.borrow().clone();
        match entry.commands.try_send(Command::Refresh(secret)) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => return Err(exhausted("webhook_commands", COMMANDS)),
            // Its courier ended (the subscription is ending): a new one.
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.subscriptions.remove(id);
                return Ok(None);
            }
        }
        entry.expires = Some(Instant::now() + ttl);
        let mut answer = subscribed(id, ttl, before.watermark.as_deref(), false);
        answer["deliveryStatus"] = before.to_json();
        Ok(Some(answer))
    }

    /// Remembers that `principal`'s callback answered, within the bound.
    fn verified_now(&mut self, principal: String, url: String) {
        let now = Instant::now();
        if self.verified.len() >= self.limits.max_subscriptions {
            self.verified.retain(|_, until| *until > now);
        }
        if self.verified.len() < self.limits.max_subscriptions {
            self.verified.insert((principal, url), now + Duration::from_millis(self.limits.verified_ttl_ms));
        }
    }

    /// Starts the courier of a new subscription whose reader read `first`.
    fn start(&mut self, new: NewSubscription, ctx: &mut Context<Self>) -> Value {
        let NewSubscription { id, principal, url, secret, ttl, reader, first, page } = new;
        let (commands, inbox) = mpsc::channel(COMMANDS);
        let status = Status { active: true, watermark: Some(first.start.clone()), ..Status::default() };
        let (status_tx, status_rx) = watch::channel(status);
        let answer = subscribed(&id, ttl, Some(&first.start), first.truncated);
        let stop = tokio_util::sync::CancellationToken::new();
        let courier = Courier::new(courier::Parts {
            id: id.clone(),
            url,
            poster: self.poster.clone(),
            limits: self.limits.clone(),
            secret,
            reader,
            page,
            commands: inbox,
            status: status_tx,
            stop: stop.clone(),
            held: self.held.clone(),
        });
        self.generations += 1;
        let generation = self.generations;
        let expires = Some(Instant::now() + ttl);
        let entry = Entry { principal, generation, expires, commands, status: status_rx, stop: Some(stop) };
        self.subscriptions.insert(id.clone(), entry);
        let me = ctx.address();
        actix::spawn(async move {
            if courier.run(first).await == Stopped::Terminated {
                me.do_send(Ended(id, generation));
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
    /// The params, their `url` as subscriptions are keyed by it.
    pub(crate) params: SubscribeParams,
    /// That URL, parsed ([`Webhooks::callback`]).
    pub(crate) callback: url::Url,
    pub(crate) reader: Reader,
    pub(crate) page: usize,
}

impl Handler<Subscribe> for Subscriptions {
    type Result = ResponseActFuture<Self, Result<Value, EventError>>;

    fn handle(&mut self, msg: Subscribe, _: &mut Context<Self>) -> Self::Result {
        let Subscribe { principal, params, callback: parsed, mut reader, page } = msg;
        let SubscribeParams { subscription, url, secret, ttl } = params;
        let ttl = self.grant(ttl);
        let id = webhook::subscription_id(&principal, &url, &subscription.name, &subscription.arguments);
        match self.refresh(&id, secret.clone(), ttl) {
            Ok(Some(answer)) => return Box::pin(fut::ok(answer)),
            Err(busy) => return Box::pin(fut::err(busy)),
            Ok(None) => {}
        }
        if let Err(full) = self.room_for(&principal) {
            return Box::pin(fut::err(full));
        }
        let must_challenge = !self.is_verified(&principal, &url);
        if must_challenge && self.challenging >= self.limits.max_challenges {
            return Box::pin(fut::err(exhausted("webhook_challenges", self.limits.max_challenges)));
        }
        self.challenging += usize::from(must_challenge);
        let check = must_challenge.then(|| (self.poster.clone(), parsed.clone(), secret.clone()));
        let challenge = async move {
            match check {
                Some((poster, url, secret)) => verify(&poster, &url, &id, &secret).await.map(|()| (id, true)),
                None => Ok((id, false)),
            }
        };
        Box::pin(challenge.into_actor(self).map(move |verified, me, ctx| {
            me.challenging -= usize::from(must_challenge);
            let (id, challenged) = verified?;
            if challenged {
                me.verified_now(principal.clone(), url.clone());
            }
            // Subscribed meanwhile by a request that raced this one.
            if let Some(answer) = me.refresh(&id, secret.clone(), ttl)? {
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

/// A courier that ended its subscription (`terminated` was sent): the
/// subscription of that id and generation (a later one of the same key
/// stays).
#[derive(Message)]
#[rtype(result = "()")]
struct Ended(String, u64);

impl Handler<Ended> for Subscriptions {
    type Result = ();

    fn handle(&mut self, Ended(id, generation): Ended, _: &mut Context<Self>) {
        if self.subscriptions.get(&id).is_some_and(|e| e.generation == generation) {
            self.subscriptions.remove(&id);
        }
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
        if told
            && terminate
            && let Some(mut entry) = self.subscriptions.remove(&msg.0)
        {
            // The key no longer names a subscription from now on; the
            // courier sends `terminated`, then stops.
            entry.stop = None;
        }
        told
    }
}
