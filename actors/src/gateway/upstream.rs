//! One upstream server, as an actor: it starts the server (stdio) or
//! connects to it (HTTP), learns its era and lists, keeps its items in the
//! catalog while it is up, lists again at each `list_changed`, and when the
//! server is lost — its process ended, or (HTTP) a request could not reach
//! it — closes its streams, takes its items out and starts it again after a
//! backoff that doubles per failure in a row.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::prelude::*;
use futures::StreamExt;
use mcp_protocol::subscription::SubscriptionFilter;
use slog::{debug, info, warn, Logger};

use super::claims::Claims;
use super::flow::Parked;
use super::forward::Link;
use super::homes::Homes;
use super::mirror::{self, Lists, Mirror};
use super::routes::Route;
use super::status::{UpstreamState, UpstreamStatus};
use crate::catalog::Catalog;
use crate::client::{Client, ClientError, Notification};
use crate::config::{GatewayConfig, UpstreamConfig};

/// What every upstream of a gateway shares.
pub(crate) struct Shared {
    /// Where their items are served.
    pub(crate) catalog: Arc<Catalog>,
    /// Their requests waiting for a caller's input.
    pub(crate) parked: Arc<Parked>,
    pub(crate) log: Logger,
    /// Where this upstream's unlisted tools are found.
    pub(crate) route: Arc<Route>,
    /// How its names are served.
    pub(crate) names: super::names::Names,
    /// Which upstream serves which URI.
    pub(crate) claims: Arc<Claims>,
    /// Told why, when an upstream is refused at start-up.
    pub(crate) refused: tokio::sync::watch::Sender<Option<String>>,
    /// The pinned definitions (`gateway.pins`).
    pub(crate) pins: Option<Arc<super::pins::Pins>>,
    /// The threads a stdio connection may open on.
    pub(crate) homes: Arc<Homes>,
    /// Set when the server shuts down: a connection lost then is not
    /// started again (nor reported as a fault).
    pub(crate) closing: Arc<AtomicBool>,
}

/// The actor of one upstream.
pub struct Upstream {
    config: UpstreamConfig,
    gateway: GatewayConfig,
    catalog: Arc<Catalog>,
    parked: Arc<Parked>,
    homes: Arc<Homes>,
    route: Arc<Route>,
    log: Logger,
    status: Arc<Mutex<UpstreamStatus>>,
    /// The server is shutting down (see `Shared::closing`).
    closing: Arc<AtomicBool>,
    mirror: Mirror,
    link: Option<Arc<Link>>,
    /// Counts connections, so that what an old one reports is ignored.
    generation: u64,
    failures: u32,
    /// Told why, when it is refused at start-up.
    refused: tokio::sync::watch::Sender<Option<String>>,
    /// Its first start is under way: a URI conflict found by the listing of
    /// that start is a start-up error; one found later (after a restart, a
    /// change) is logged and the URI left out.
    first_start: bool,
    /// A listing is under way; `dirty`: another change came meanwhile.
    listing: bool,
    dirty: bool,
    /// The URIs this instance's listeners want `resources/updated` for.
    wanted: BTreeSet<String>,
    /// The upstream subscriptions open (`true`) or being opened, one per
    /// URI it serves that is wanted.
    watching: HashMap<String, (SpawnHandle, bool)>,
    /// Its list-changed listen stream, closed when it is lost (an upstream
    /// shutting down waits for its open streams).
    changes: Option<SpawnHandle>,
    /// Updates it announced of resources it does not serve (dropped), and
    /// when one was last logged.
    forged: u64,
    forged_logged: Option<Instant>,
}

impl Upstream {
    /// An upstream that will serve its items into `catalog`; its status is
    /// shared with `status`.
    pub(crate) fn new(
        config: UpstreamConfig,
        gateway: GatewayConfig,
        shared: Shared,
        status: Arc<Mutex<UpstreamStatus>>,
    ) -> Self {
        let mirror = Mirror::new(&config, shared.names, shared.claims.clone(), shared.pins.clone());
        let log = shared.log.new(slog::o!("upstream" => config.name.clone()));
        Upstream {
            config,
            gateway,
            catalog: shared.catalog,
            parked: shared.parked,
            homes: shared.homes,
            route: shared.route,
            log,
            status,
            closing: shared.closing,
            mirror,
            link: None,
            generation: 0,
            failures: 0,
            refused: shared.refused,
            first_start: true,
            listing: false,
            dirty: false,
            wanted: BTreeSet::new(),
            watching: HashMap::new(),
            changes: None,
            forged: 0,
            forged_logged: None,
        }
    }

    /// Opens an upstream subscription for each wanted URI it serves, and
    /// closes those no longer served (after a listing).
    fn rewatch(&mut self, ctx: &mut Context<Self>) {
        if self.link.is_none() {
            return;
        }
        let keep: BTreeSet<String> =
            self.wanted.iter().filter(|u| self.mirror.owns_uri(&self.catalog, u)).cloned().collect();
        self.watching.retain(|uri, (handle, _)| {
            let kept = keep.contains(uri);
            if !kept {
                ctx.cancel_future(*handle);
            }
            kept
        });
        self.count_watching();
        for uri in keep {
            if !self.watching.contains_key(&uri) {
                self.watch(uri, ctx);
            }
        }
    }

    /// Opens the upstream subscription to `uri` (a served URI), unless it is
    /// open or being opened.
    fn watch(&mut self, uri: String, ctx: &mut Context<Self>) {
        let Some(link) = self.link.as_ref() else { return };
        if self.watching.contains_key(&uri) {
            return;
        }
        let generation = self.generation;
        let own = self.mirror.own_uri(&uri).to_owned();
        let filter = SubscriptionFilter { resource_subscriptions: vec![own], ..Default::default() };
        let client = link.client.clone();
        let u = uri.clone();
        let opening = async move { client.listen(filter).await }.into_actor(self).map(move |listen, act, ctx| {
            if generation != act.generation || !act.watching.contains_key(&u) {
                return;
            }
            match listen {
                Ok(listen) => {
                    let end = futures::stream::once({
                        let u = u.clone();
                        async move { Changed::Unwatched(generation, u) }
                    });
                    let updates = listen.map(move |n| Changed::Note(generation, n)).chain(end);
                    let handle = ctx.add_stream(updates);
                    act.watching.insert(u, (handle, true));
                    act.count_watching();
                }
                Err(e) => {
                    debug!(act.log, "upstream subscription refused"; "uri" => &u, "why" => %e);
                }
            }
        });
        let handle = ctx.spawn(opening);
        self.watching.insert(uri, (handle, false));
    }

    fn count_watching(&self) {
        self.status.lock().expect("status lock").subscriptions =
            self.watching.values().filter(|(_, open)| *open).count();
    }

    fn set_state(&self, state: UpstreamState) {
        crate::telemetry::upstream_up(&self.config.name, matches!(state, UpstreamState::Up { .. }));
        let mut s = self.status.lock().expect("status lock");
        s.enter(state);
        s.items = self.mirror.count();
        s.refused = self.mirror.refused().clone();
    }

    fn connect(&mut self, ctx: &mut Context<Self>) {
        self.generation += 1;
        let generation = self.generation;
        self.set_state(UpstreamState::Starting);
        let (config, homes) = (self.config.clone(), self.homes.clone());
        let started = Instant::now();
        let work = async move {
            let client = homes.open(&config).await?;
            let lists = mirror::list(&client).await?;
            // A server without listen streams still serves; it is listed again only when restarted.
            let changes = client.listen(SubscriptionFilter::every_list_change()).await.ok();
            Ok::<_, ClientError>((client, lists, changes))
        };
        ctx.spawn(work.into_actor(self).map(move |outcome, act, ctx| match outcome {
            Ok((client, lists, changes)) => {
                act.status.lock().expect("status lock").connect_time = Some(started.elapsed());
                act.up(client, lists, changes, generation, ctx)
            }
            Err(e) => act.lost(generation, format!("could not be started: {e}"), ctx),
        }));
    }

    fn up(
        &mut self,
        client: Client,
        lists: Lists,
        changes: Option<crate::client::Listen>,
        generation: u64,
        ctx: &mut Context<Self>,
    ) {
        let config = Arc::new(self.config.clone());
        let link = Arc::new(Link::new(config, client.clone(), self.parked.clone(), self.status.clone()));
        let conflicts = self.mirror.sync(&self.catalog, &link, lists, &self.log);
        let first_start = std::mem::take(&mut self.first_start);
        if !conflicts.is_empty() && first_start {
            // A configuration fault: not served, not started again.
            let why = conflicts.join("; ");
            slog::error!(self.log, "upstream refused"; "why" => &why);
            self.mirror.clear(&self.catalog);
            self.generation += 1;
            actix::spawn(async move { client.close().await });
            self.set_state(UpstreamState::Down { reason: why.clone() });
            self.refused.send_replace(Some(why));
            return;
        }
        self.route.set(Some(link.clone()));
        self.link = Some(link);
        self.failures = 0;
        let version = client.server().version;
        info!(self.log, "upstream up"; "version" => &version, "items" => self.mirror.count());
        self.set_state(UpstreamState::Up { version });
        self.rewatch(ctx);
        if let Some(changes) = changes {
            let end = futures::stream::once(async move { Changed::End(generation) });
            self.changes = Some(ctx.add_stream(changes.map(move |n| Changed::Note(generation, n)).chain(end)));
        }
        let gone = async move { client.closed().await };
        ctx.spawn(gone.into_actor(self).map(move |why, act, ctx| act.lost(generation, why, ctx)));
    }

    /// Lists again, screening against `pins` (a reload read them again).
    pub(super) fn repin(&mut self, pins: Option<Arc<super::pins::Pins>>, ctx: &mut Context<Self>) {
        self.mirror.set_pins(pins);
        self.relist(ctx);
    }

    fn relist(&mut self, ctx: &mut Context<Self>) {
        let Some(link) = self.link.clone() else { return };
        debug!(self.log, "upstream lists changed"; "listing" => self.listing);
        if self.listing {
            self.dirty = true;
            return;
        }
        self.listing = true;
        let generation = self.generation;
        let work = async move { mirror::list(&link.client).await.map(|lists| (link, lists)) };
        ctx.spawn(work.into_actor(self).map(move |outcome, act, ctx| {
            act.listing = false;
            if generation != act.generation {
                return;
            }
            match outcome {
                Ok((link, lists)) => {
                    debug!(act.log, "upstream listed again"; "tools" => lists.tools.len());
                    // A URI another upstream took meanwhile is logged and left out.
                    act.mirror.sync(&act.catalog, &link, lists, &act.log);
                    let mut s = act.status.lock().expect("status lock");
                    s.items = act.mirror.count();
                    s.refused = act.mirror.refused().clone();
                    drop(s);
                    act.rewatch(ctx);
                    if std::mem::take(&mut act.dirty) {
                        act.relist(ctx);
                    }
                }
                Err(e) => act.lost(generation, format!("listing failed: {e}"), ctx),
            }
        }));
    }

    /// The connection of `generation` is lost: its items leave, and it is
    /// started again after the backoff (not when the server is shutting
    /// down: then its connection ends with it).
    fn lost(&mut self, generation: u64, reason: String, ctx: &mut Context<Self>) {
        if generation != self.generation {
            return;
        }
        self.generation += 1;
        self.first_start = false;
        for handle in self.watching.drain().map(|(_, (h, _))| h).chain(self.changes.take()) {
            ctx.cancel_future(handle);
        }
        self.count_watching();
        self.route.set(None);
        if let Some(link) = self.link.take() {
            let client = link.client.clone();
            actix::spawn(async move { client.close().await });
        }
        self.mirror.clear(&self.catalog);
        if self.closing.load(Ordering::Acquire) {
            info!(self.log, "upstream closed: the server is shutting down"; "reason" => &reason);
            return self.set_state(UpstreamState::Down { reason });
        }
        self.failures = self.failures.saturating_add(1);
        let wait = self.gateway.restart_wait(self.failures);
        warn!(self.log, "upstream down"; "reason" => &reason, "restart_in_ms" => wait.as_millis() as u64);
        self.set_state(UpstreamState::Down { reason });
        ctx.run_later(wait, |act, ctx| {
            act.status.lock().expect("status lock").restarts += 1;
            crate::telemetry::upstream_restarted(&act.config.name);
            act.connect(ctx);
        });
    }
}

impl Upstream {
    /// The upstream announced a change of its resource `own` (its URI
    /// there): passed on if it serves that URI here — one of its resources,
    /// or a match of one of its templates — else dropped, counted and
    /// logged (an upstream may not speak for the local catalog's resources
    /// or another upstream's).
    fn updated(&mut self, own: &str) {
        let uri = self.mirror.served_uri(own);
        if self.mirror.owns_uri(&self.catalog, &uri) {
            // Every instance runs its own copy of this upstream: its listeners hear it from theirs.
            self.catalog.notify_resource_updated_mirrored(&uri);
            return;
        }
        crate::telemetry::upstream_forged(&self.config.name);
        self.forged += 1;
        // The first of a burst, then at most one line a second.
        let now = Instant::now();
        if self.forged_logged.is_none_or(|at| now.duration_since(at) >= Duration::from_secs(1)) {
            self.forged_logged = Some(now);
            warn!(self.log, "upstream announced a resource it does not serve; dropped";
                "uri" => &uri, "dropped_so_far" => self.forged);
        }
    }
}

impl Actor for Upstream {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.connect(ctx);
    }

    /// Its items leave at once; its connection closes once the calls in
    /// flight through it are over (each holds the link through its tool),
    /// or after the upstream's `timeout_ms`.
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.route.set(None);
        self.mirror.clear(&self.catalog);
        if let Some(link) = self.link.take() {
            let until = Instant::now() + Duration::from_millis(self.config.timeout_ms);
            actix::spawn(async move {
                while Arc::strong_count(&link) > 1 && Instant::now() < until {
                    actix_rt::time::sleep(Duration::from_millis(20)).await;
                }
                link.client.close().await
            });
        }
    }
}

/// What the listen streams of a connection (its generation) bring.
enum Changed {
    /// A notification.
    Note(u64, Notification),
    /// The end of its list-changed stream: the server closed it, or is gone.
    End(u64),
    /// The end of its subscription to a URI.
    Unwatched(u64, String),
}

impl StreamHandler<Changed> for Upstream {
    fn handle(&mut self, changed: Changed, ctx: &mut Context<Self>) {
        match changed {
            Changed::Note(generation, n) if generation == self.generation => {
                if n.method.ends_with("/list_changed") {
                    self.relist(ctx)
                } else if n.method == "notifications/resources/updated"
                    && let Some(uri) = n.params.get("uri").and_then(serde_json::Value::as_str)
                {
                    self.updated(uri);
                }
            }
            Changed::Note(..) => {}
            Changed::End(generation) => self.lost(generation, "its listen stream ended".into(), ctx),
            Changed::Unwatched(generation, uri) if generation == self.generation => {
                debug!(self.log, "upstream subscription ended"; "uri" => &uri);
                self.watching.remove(&uri);
                self.count_watching();
            }
            Changed::Unwatched(..) => {}
        }
    }

    /// The actor outlives its streams (the default would stop it).
    fn finished(&mut self, _ctx: &mut Context<Self>) {}
}

impl Upstream {
    /// Some listener of this instance wants `resources/updated` for `uri`
    /// (`wanted`), or none does any more: only `uri`'s subscription is
    /// opened (if this upstream serves it) or closed.
    pub(super) fn want(&mut self, uri: String, wanted: bool, ctx: &mut Context<Self>) {
        if wanted {
            self.wanted.insert(uri.clone());
            if self.mirror.owns_uri(&self.catalog, &uri) {
                self.watch(uri, ctx);
            }
        } else {
            self.wanted.remove(&uri);
            if let Some((handle, _)) = self.watching.remove(&uri) {
                ctx.cancel_future(handle);
                self.count_watching();
            }
        }
    }
}
