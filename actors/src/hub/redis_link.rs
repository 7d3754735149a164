//! [`RedisLink`]: where Redis is, for the stores that use it (the hub, tasks,
//! quotas) — one URL, or the master that Redis Sentinel names. A connection
//! is made on first use and kept (the connection manager reconnects by
//! itself to a URL). Under Sentinel, one [`MasterWatch`] per master asks the
//! sentinels every half second which node is the master; when that changes
//! (a failover), every link drops its connection and the next use connects
//! to the promoted node. Work through a link ([`RedisLink::with_connection`])
//! is bounded by its reply timeout; after a timeout or a lost connection,
//! Redis counts as unreachable for a second, and what needs it in that
//! second fails at once instead of waiting.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use futures::future::{BoxFuture, FutureExt};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::config::RedisTarget;

/// How often the sentinels are asked for the master.
const POLL: Duration = Duration::from_millis(500);
/// How long one sentinel may take to answer.
const ASK_TIMEOUT: Duration = Duration::from_millis(500);
/// How long making a connection may take before Redis counts as unreachable.
const CONNECT_WITHIN: Duration = Duration::from_millis(500);
/// After a timeout or a lost connection, Redis counts as unreachable this
/// long: work fails at once, then the next work tries again.
const DOWN_FOR: Duration = Duration::from_secs(1);

/// A lazily made, shared Redis connection.
#[derive(Clone)]
pub(crate) struct RedisLink {
    target: Target,
    config: ConnectionManagerConfig,
    /// The connection, with the master generation it was made for.
    con: Arc<tokio::sync::Mutex<Option<(u64, ConnectionManager)>>>,
    /// Work is given up after this long.
    deadline: Duration,
    /// Since when and why Redis counts as unreachable.
    down: Arc<Mutex<Option<(std::time::Instant, String)>>>,
    /// Work is tried even while Redis counts as unreachable (for work off
    /// the request path, which may wait).
    patient: bool,
}

#[derive(Clone)]
enum Target {
    Url(redis::Client),
    Sentinel(Arc<MasterWatch>),
}

impl RedisLink {
    /// A link to `target`: connecting gives up after 500 ms, a reply after
    /// `reply_timeout` (and work through [`RedisLink::with_connection`]
    /// after that long in all). A connection is tried once: after a failure
    /// the next use makes a new one, rather than the manager retrying with
    /// back-off while the work waits.
    pub(crate) fn open(target: &RedisTarget, reply_timeout: Duration) -> Result<Self, redis::RedisError> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(CONNECT_WITHIN)
            .set_response_timeout(reply_timeout)
            .set_number_of_retries(0);
        let target = match target {
            RedisTarget::Url(url) => Target::Url(redis::Client::open(url.as_str())?),
            RedisTarget::Sentinel { sentinels, master } => Target::Sentinel(MasterWatch::of(sentinels, master)),
        };
        let (con, down) = (Arc::new(tokio::sync::Mutex::new(None)), Arc::new(Mutex::new(None)));
        Ok(RedisLink { target, config, con, deadline: reply_timeout, down, patient: false })
    }

    /// A link to the same place with a connection of its own: for writes
    /// that `WAIT` for replicas, since `WAIT` holds its connection until
    /// the replicas answer and every other command on a shared connection
    /// would queue behind it.
    pub(crate) fn another(&self) -> Self {
        let (con, down) = (Arc::new(tokio::sync::Mutex::new(None)), Arc::new(Mutex::new(None)));
        RedisLink { con, down, ..self.clone() }
    }

    /// This link trying work even while Redis counts as unreachable: for
    /// work that waits on nobody (the hub's publisher), so that the first
    /// event after an outage is not dropped.
    pub(crate) fn patient(mut self) -> Self {
        self.patient = true;
        self
    }

    /// Runs `work` on the connection, within the link's deadline; fails at
    /// once while Redis counts as unreachable. No connection within 500 ms,
    /// or no answer in time, makes it count so for a second; after `work`
    /// failed its connection is dropped (the next use makes a new one); a
    /// success clears it. A connection found broken when `work` wrote to it
    /// (Redis restarted since it was last used: nothing was sent) is
    /// replaced and `work` run once more on the new one.
    pub(crate) fn with_connection<T, F, Fut>(&self, work: F) -> BoxFuture<'static, redis::RedisResult<T>>
    where
        T: Send + 'static,
        F: FnOnce(ConnectionManager) -> Fut + Clone + Send + 'static,
        Fut: std::future::Future<Output = redis::RedisResult<T>> + Send,
    {
        let link = self.clone();
        async move {
            if let Some(why) = link.unreachable().filter(|_| !link.patient) {
                return Err(lost(why));
            }
            // Outer error: no connection (within its own bound); inner: the work's.
            let worker = link.clone();
            let worked = tokio::time::timeout(link.deadline, async move {
                let mut retry = true;
                loop {
                    let con = match tokio::time::timeout(CONNECT_WITHIN, worker.connection()).await {
                        Ok(con) => con?,
                        Err(_) => return Err(lost(format!("no connection within {} ms", CONNECT_WITHIN.as_millis()))),
                    };
                    match work.clone()(con).await {
                        Err(e) if retry && unsent(&e) => {
                            retry = false;
                            *worker.con.lock().await = None;
                        }
                        done => return Ok::<_, redis::RedisError>(done),
                    }
                }
            })
            .await;
            link.settle(worked).await
        }
        .boxed()
    }

    /// What [`RedisLink::with_connection`] answers for `worked`, marking
    /// Redis unreachable (or reachable again) and dropping a connection
    /// that failed.
    async fn settle<T>(
        &self,
        worked: Result<redis::RedisResult<redis::RedisResult<T>>, tokio::time::error::Elapsed>,
    ) -> redis::RedisResult<T> {
        let down =
            |why: String| *self.down.lock().unwrap_or_else(|p| p.into_inner()) = Some((std::time::Instant::now(), why));
        match worked {
            Err(_) => {
                let why = format!("no answer within {} ms", self.deadline.as_millis());
                down(why.clone());
                *self.con.lock().await = None;
                Err(lost(why))
            }
            Ok(Err(e)) => {
                down(e.to_string());
                Err(e)
            }
            Ok(Ok(Err(e))) => {
                // The connection may be the broken one: the next use makes another.
                *self.con.lock().await = None;
                Err(e)
            }
            Ok(Ok(Ok(v))) => {
                *self.down.lock().unwrap_or_else(|p| p.into_inner()) = None;
                Ok(v)
            }
        }
    }

    /// Why Redis counts as unreachable now (it failed less than a second ago).
    fn unreachable(&self) -> Option<String> {
        let down = self.down.lock().unwrap_or_else(|p| p.into_inner());
        down.as_ref().filter(|(at, _)| at.elapsed() < DOWN_FOR).map(|(_, why)| why.clone())
    }

    /// A client for the master now (for connections of another kind: a
    /// subscription).
    pub(crate) fn client(&self) -> BoxFuture<'static, redis::RedisResult<redis::Client>> {
        let target = self.target.clone();
        async move {
            match target {
                Target::Url(client) => Ok(client),
                Target::Sentinel(watch) => redis::Client::open(format!("redis://{}/", watch.master().await?)),
            }
        }
        .boxed()
    }

    /// The connection, made now if this is its first use or the master
    /// changed since (a failed attempt is tried again on the next use).
    pub(crate) fn connection(&self) -> BoxFuture<'static, redis::RedisResult<ConnectionManager>> {
        let (link, con) = (self.clone(), self.con.clone());
        async move {
            let generation = match &link.target {
                Target::Url(_) => 0,
                Target::Sentinel(watch) => watch.generation(),
            };
            let mut held = con.lock().await;
            if let Some((g, c)) = held.as_ref()
                && *g == generation
            {
                return Ok(c.clone());
            }
            let client = link.client().await?;
            let made = client.get_connection_manager_with_config(link.config.clone()).await?;
            *held = Some((generation, made.clone()));
            Ok(made)
        }
        .boxed()
    }
}

/// Writes (of tasks, of sessions) that fewer replicas than
/// `redis.min_replicas` acknowledged in time.
pub(crate) const WAIT_SHORT: &str = "mcp_server_redis_wait_short_total";

/// Waits until `wait`'s replicas hold the writes made so far on `con`; one
/// acknowledged by fewer is counted (the write stands).
pub(crate) async fn replicated(con: &mut ConnectionManager, wait: Option<(u32, u64)>) {
    let Some((replicas, ms)) = wait else { return };
    let acked = redis::cmd("WAIT").arg(replicas).arg(ms).query_async::<i64>(con).await.unwrap_or(0);
    if acked < i64::from(replicas) {
        metrics::counter!(WAIT_SHORT).increment(1);
    }
}

/// Whether `e` is a write to a connection its peer had closed: the
/// command was not sent, so it may be sent again on a new connection.
/// (`RedisError` tells a dropped connection, a broken pipe among others,
/// but does not hand out its `io::Error`: the pipe is told by its text.)
fn unsent(e: &redis::RedisError) -> bool {
    e.is_connection_dropped() && e.to_string().to_ascii_lowercase().contains("broken pipe")
}

/// An error saying Redis is unreachable, and why.
fn lost(why: String) -> redis::RedisError {
    redis::RedisError::from(std::io::Error::new(std::io::ErrorKind::NotConnected, why))
}

/// Which node the sentinels name as a master, asked every [`POLL`].
pub(crate) struct MasterWatch {
    sentinels: Vec<String>,
    name: String,
    /// `HOST:PORT` of the master, once known.
    master: Mutex<Option<String>>,
    /// +1 at each change of master.
    generation: AtomicU64,
    failovers: AtomicU64,
    last_failover: Mutex<Option<SystemTime>>,
    polling: AtomicBool,
}

/// The watches by master: its sentinels and name.
type Watches = HashMap<(Vec<String>, String), Arc<MasterWatch>>;

/// One watch per master, shared by every link to it.
fn watches() -> &'static Mutex<Watches> {
    static WATCHES: OnceLock<Mutex<Watches>> = OnceLock::new();
    WATCHES.get_or_init(Default::default)
}

impl MasterWatch {
    /// The watch of master `name` at `sentinels`.
    fn of(sentinels: &[String], name: &str) -> Arc<MasterWatch> {
        let mut all = watches().lock().unwrap_or_else(|p| p.into_inner());
        let key = (sentinels.to_vec(), name.to_owned());
        all.entry(key)
            .or_insert_with(|| {
                Arc::new(MasterWatch {
                    sentinels: sentinels.to_vec(),
                    name: name.to_owned(),
                    master: Mutex::new(None),
                    generation: AtomicU64::new(0),
                    failovers: AtomicU64::new(0),
                    last_failover: Mutex::new(None),
                    polling: AtomicBool::new(false),
                })
            })
            .clone()
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The master's `HOST:PORT`: the one known, else asked now. The first
    /// call starts the polling.
    async fn master(self: &Arc<Self>) -> redis::RedisResult<String> {
        if !self.polling.swap(true, Ordering::AcqRel) {
            let watch = self.clone();
            tokio::spawn(async move {
                loop {
                    if let Ok(addr) = watch.ask().await {
                        watch.saw(addr);
                    }
                    tokio::time::sleep(POLL).await;
                }
            });
        }
        if let Some(addr) = self.master.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            return Ok(addr);
        }
        let addr = self.ask().await?;
        self.saw(addr.clone());
        Ok(addr)
    }

    /// The sentinels name `addr` as the master: a change is a failover.
    fn saw(&self, addr: String) {
        let mut master = self.master.lock().unwrap_or_else(|p| p.into_inner());
        if master.as_deref() == Some(addr.as_str()) {
            return;
        }
        if master.is_some() {
            self.failovers.fetch_add(1, Ordering::Relaxed);
            *self.last_failover.lock().unwrap_or_else(|p| p.into_inner()) = Some(SystemTime::now());
        }
        *master = Some(addr);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Asks each sentinel in turn for the master's address.
    async fn ask(&self) -> redis::RedisResult<String> {
        let mut last = None;
        for sentinel in &self.sentinels {
            let asked = async {
                let client = redis::Client::open(format!("redis://{sentinel}/"))?;
                let mut con = client.get_multiplexed_async_connection().await?;
                redis::cmd("SENTINEL")
                    .arg("get-master-addr-by-name")
                    .arg(&self.name)
                    .query_async::<Option<(String, u16)>>(&mut con)
                    .await
            };
            match tokio::time::timeout(ASK_TIMEOUT, asked).await {
                Ok(Ok(Some((host, port)))) => return Ok(format!("{host}:{port}")),
                Ok(Ok(None)) => last = Some(format!("sentinel {sentinel} knows no master {:?}", self.name)),
                Ok(Err(e)) => last = Some(format!("sentinel {sentinel}: {e}")),
                Err(_) => last = Some(format!("sentinel {sentinel} did not answer")),
            }
        }
        let why = last.unwrap_or_else(|| "no sentinel".into());
        Err(redis::RedisError::from((redis::ErrorKind::IoError, "no master from the sentinels", why)))
    }
}

/// Where the master of `target` stands, for the status page: `None` for a
/// URL; under Sentinel its address, the failovers seen and when the last was.
pub(crate) fn sentinel_status(target: &RedisTarget) -> Option<serde_json::Value> {
    let RedisTarget::Sentinel { sentinels, master } = target else { return None };
    let watch = MasterWatch::of(sentinels, master);
    let at = watch
        .last_failover
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .map(|t| time::OffsetDateTime::from(t).unix_timestamp());
    Some(serde_json::json!({
        "mode": "sentinel",
        "master_name": master,
        "master": watch.master.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        "failovers": watch.failovers.load(Ordering::Relaxed),
        "last_failover_unix": at,
    }))
}
