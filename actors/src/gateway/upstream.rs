//! One upstream server, as an actor: it starts the server (stdio) or
//! connects to it (HTTP), learns its era and lists, keeps its items in the
//! catalog while it is up, lists again at each `list_changed`, and when the
//! server is lost takes its items out and starts it again after a backoff
//! that doubles per failure in a row.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::prelude::*;
use futures::StreamExt;
use mcp_protocol::subscription::SubscriptionFilter;
use slog::{debug, info, warn, Logger};

use super::connect;
use super::flow::Parked;
use super::forward::Link;
use super::mirror::{self, Lists, Mirror};
use super::routes::Route;
use crate::catalog::Catalog;
use crate::client::{Client, ClientError, Notification};
use crate::config::{GatewayConfig, UpstreamConfig};

/// Where an upstream stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamState {
    /// Being started or connected to.
    Starting,
    /// Serving, in this protocol version.
    Up {
        /// The version spoken with it.
        version: String,
    },
    /// Lost or never reached; started again after a backoff.
    Down {
        /// Why, as a sentence.
        reason: String,
    },
}

/// What the gateway shows of one upstream (its `/status` row).
#[derive(Debug, Clone)]
pub struct UpstreamStatus {
    /// The configured name.
    pub name: String,
    /// Whether readiness waits for it.
    pub required: bool,
    /// Where it stands.
    pub state: UpstreamState,
    /// How many times it was started again.
    pub restarts: u64,
    /// How many of its items are served.
    pub items: usize,
    /// How long its last connection took to start and list.
    pub connect_time: Option<Duration>,
}

/// What every upstream of a gateway shares.
pub(crate) struct Shared {
    /// Where their items are served.
    pub(crate) catalog: Arc<Catalog>,
    /// Their requests waiting for a caller's input.
    pub(crate) parked: Arc<Parked>,
    pub(crate) log: Logger,
    /// Where this upstream's unlisted tools are found.
    pub(crate) route: Arc<Route>,
}

/// The actor of one upstream.
pub struct Upstream {
    config: UpstreamConfig,
    gateway: GatewayConfig,
    catalog: Arc<Catalog>,
    parked: Arc<Parked>,
    route: Arc<Route>,
    log: Logger,
    status: Arc<Mutex<UpstreamStatus>>,
    mirror: Mirror,
    link: Option<Arc<Link>>,
    /// Counts connections, so that what an old one reports is ignored.
    generation: u64,
    failures: u32,
    /// A listing is under way; `dirty`: another change came meanwhile.
    listing: bool,
    dirty: bool,
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
        let mirror = Mirror::new(&config, &gateway);
        let log = shared.log.new(slog::o!("upstream" => config.name.clone()));
        Upstream {
            config,
            gateway,
            catalog: shared.catalog,
            parked: shared.parked,
            route: shared.route,
            log,
            status,
            mirror,
            link: None,
            generation: 0,
            failures: 0,
            listing: false,
            dirty: false,
        }
    }

    fn set_state(&self, state: UpstreamState) {
        crate::telemetry::upstream_up(&self.config.name, matches!(state, UpstreamState::Up { .. }));
        let mut s = self.status.lock().expect("status lock");
        s.state = state;
        s.items = self.mirror.count();
    }

    fn connect(&mut self, ctx: &mut Context<Self>) {
        self.generation += 1;
        let generation = self.generation;
        self.set_state(UpstreamState::Starting);
        let config = self.config.clone();
        let started = Instant::now();
        let work = async move {
            let client = connect::open(&config).await?;
            let lists = mirror::list(&client).await?;
            let filter = SubscriptionFilter {
                tools_list_changed: true,
                prompts_list_changed: true,
                resources_list_changed: true,
                ..Default::default()
            };
            // A server without listen streams still serves; it is listed again only when restarted.
            let changes = client.listen(filter).await.ok();
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
        let link = Arc::new(Link::new(Arc::new(self.config.clone()), client.clone(), self.parked.clone()));
        self.mirror.sync(&self.catalog, &link, lists, &self.log);
        self.route.set(Some(link.clone()));
        self.link = Some(link);
        self.failures = 0;
        let version = client.server().version;
        info!(self.log, "upstream up"; "version" => &version, "items" => self.mirror.count());
        self.set_state(UpstreamState::Up { version });
        if let Some(changes) = changes {
            let end = futures::stream::once(async move { Changed::End(generation) });
            ctx.add_stream(changes.map(move |n| Changed::Note(generation, n)).chain(end));
        }
        let gone = async move { client.closed().await };
        ctx.spawn(gone.into_actor(self).map(move |why, act, ctx| act.lost(generation, why, ctx)));
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
                    act.mirror.sync(&act.catalog, &link, lists, &act.log);
                    let items = act.mirror.count();
                    act.status.lock().expect("status lock").items = items;
                    if std::mem::take(&mut act.dirty) {
                        act.relist(ctx);
                    }
                }
                Err(e) => act.lost(generation, format!("listing failed: {e}"), ctx),
            }
        }));
    }

    /// The connection of `generation` is lost: its items leave, and it is
    /// started again after the backoff.
    fn lost(&mut self, generation: u64, reason: String, ctx: &mut Context<Self>) {
        if generation != self.generation {
            return;
        }
        self.generation += 1;
        self.route.set(None);
        if let Some(link) = self.link.take() {
            let client = link.client.clone();
            actix::spawn(async move { client.close().await });
        }
        self.mirror.clear(&self.catalog);
        self.failures = self.failures.saturating_add(1);
        let wait = backoff(&self.gateway, self.failures);
        warn!(self.log, "upstream down"; "reason" => &reason, "restart_in_ms" => wait.as_millis() as u64);
        self.set_state(UpstreamState::Down { reason });
        ctx.run_later(wait, |act, ctx| {
            act.status.lock().expect("status lock").restarts += 1;
            crate::telemetry::upstream_restarted(&act.config.name);
            act.connect(ctx);
        });
    }
}

/// The wait before the restart after `failures` failures in a row.
fn backoff(gateway: &GatewayConfig, failures: u32) -> Duration {
    let doubled = gateway.restart_initial_ms.saturating_mul(1u64 << failures.saturating_sub(1).min(20));
    Duration::from_millis(doubled.min(gateway.restart_max_ms))
}

impl Actor for Upstream {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.connect(ctx);
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.route.set(None);
        self.mirror.clear(&self.catalog);
        if let Some(link) = self.link.take() {
            let client = link.client.clone();
            actix::spawn(async move { client.close().await });
        }
    }
}

/// What the listen stream of a connection (its generation) brings.
enum Changed {
    /// A notification.
    Note(u64, Notification),
    /// Its end: the server closed it, or is gone.
    End(u64),
}

impl StreamHandler<Changed> for Upstream {
    fn handle(&mut self, changed: Changed, ctx: &mut Context<Self>) {
        match changed {
            Changed::Note(generation, n) if generation == self.generation && n.method.ends_with("/list_changed") => {
                self.relist(ctx)
            }
            Changed::Note(..) => {}
            Changed::End(generation) => self.lost(generation, "its listen stream ended".into(), ctx),
        }
    }

    /// The actor outlives its streams (the default would stop it).
    fn finished(&mut self, _ctx: &mut Context<Self>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_up_to_its_limit() {
        let g = GatewayConfig { restart_initial_ms: 100, restart_max_ms: 1000, ..Default::default() };
        let waits: Vec<u128> = (1..=6).map(|f| backoff(&g, f).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
    }
}
