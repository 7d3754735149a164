//! The threads a stdio upstream's connection lives on: the HTTP workers'.
//!
//! A forwarded call runs on the HTTP worker that took it. When the
//! upstream's pipes are read and written on another thread, each call
//! crosses to that thread and back (two wake-ups of a sleeping thread per
//! call); started on the worker's own arbiter, the child's stdin and stdout
//! are driven by the worker's reactor, so a call from that worker never
//! leaves its thread. With several workers the upstreams are spread over
//! them (calls from the others cross as before); without an HTTP server
//! (the stdio transport, an embedder's own), a connection opens where its
//! upstream actor runs.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use actix_rt::ArbiterHandle;

use super::connect;
use crate::client::{Client, ClientError};
use crate::config::UpstreamConfig;

/// How long an upstream opening at start-up waits for the first worker
/// when workers are expected (they start as the server is first polled).
const FIRST_WORKER: Duration = Duration::from_secs(2);

/// The arbiters of the HTTP workers, as they start.
#[derive(Default)]
pub(crate) struct Homes {
    arbiters: Mutex<Vec<ArbiterHandle>>,
    /// Which one the next connection opens on.
    next: AtomicUsize,
    /// Whether an HTTP server will register its workers.
    expected: AtomicBool,
    arrived: tokio::sync::Notify,
}

impl Homes {
    /// Workers are about to register: an upstream opening before the
    /// first has waits for it (at most [`FIRST_WORKER`]).
    pub(crate) fn expect(&self) {
        self.expected.store(true, Ordering::Release);
    }

    /// The current thread's arbiter (an HTTP worker's) may hold connections.
    pub(crate) fn register_current(&self) {
        let here = actix_rt::Arbiter::current();
        self.arbiters.lock().unwrap_or_else(|p| p.into_inner()).push(here);
        self.arrived.notify_waiters();
    }

    /// Starts or connects to `config`'s upstream: a stdio server on the
    /// next worker's thread, if there is one (a worker that has stopped is
    /// forgotten), else on this thread; an HTTP upstream here.
    pub(crate) async fn open(&self, config: &UpstreamConfig) -> Result<Client, ClientError> {
        if !config.is_stdio() {
            return connect::open(config).await;
        }
        if self.expected.load(Ordering::Acquire) && self.is_empty() {
            let arrived = self.arrived.notified();
            if self.is_empty() {
                let _ = tokio::time::timeout(FIRST_WORKER, arrived).await;
            }
        }
        while let Some(home) = self.pick() {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let c = config.clone();
            let accepted = home.spawn(async move {
                let _ = tx.send(connect::open(&c).await);
            });
            if accepted {
                // The worker stopping before it answers drops the sender: open here.
                if let Ok(opened) = rx.await {
                    return opened;
                }
                break;
            }
            self.forget_stopped();
        }
        connect::open(config).await
    }

    fn is_empty(&self) -> bool {
        self.arbiters.lock().unwrap_or_else(|p| p.into_inner()).is_empty()
    }

    /// The next worker's arbiter, in turn.
    fn pick(&self) -> Option<ArbiterHandle> {
        let arbiters = self.arbiters.lock().unwrap_or_else(|p| p.into_inner());
        if arbiters.is_empty() {
            return None;
        }
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        Some(arbiters[n % arbiters.len()].clone())
    }

    /// Forgets the arbiters of stopped workers (which refuse work).
    fn forget_stopped(&self) {
        self.arbiters.lock().unwrap_or_else(|p| p.into_inner()).retain(|a| a.spawn(async {}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing_program() -> UpstreamConfig {
        UpstreamConfig::parse_flag("x=/nonexistent/program").unwrap()
    }

    #[actix_rt::test]
    async fn workers_take_connections_in_turn_and_a_stopped_one_is_forgotten() {
        let homes = Homes::default();
        let stopped = actix_rt::Arbiter::new();
        let gone = stopped.handle();
        gone.stop();
        stopped.join().unwrap();
        let (a, b) = (actix_rt::Arbiter::new(), actix_rt::Arbiter::new());
        homes.arbiters.lock().unwrap().extend([gone, a.handle(), b.handle()]);
        // The stopped one refuses; the connection goes to the next (and fails there: no such program).
        let why = homes.open(&missing_program()).await.err().unwrap().to_string();
        assert!(why.contains("/nonexistent/program"), "{why}");
        assert_eq!(homes.arbiters.lock().unwrap().len(), 2, "the stopped worker is forgotten");
        assert_eq!(homes.next.load(Ordering::Relaxed), 2, "two picks: the stopped worker, then the next");
        a.stop();
        b.stop();
    }

    #[actix_rt::test]
    async fn without_workers_a_connection_opens_here() {
        let homes = Homes::default();
        assert!(homes.open(&missing_program()).await.is_err());
        assert_eq!(homes.next.load(Ordering::Relaxed), 0, "no worker was picked");
    }

    /// The size of the argument a test call carries: far above the bytes a
    /// thread reads and writes besides the child's pipes while a call runs
    /// (its I/O counts, a wake-up).
    const PAYLOAD: usize = 16 * 1024;

    /// A stdio MCP server in `sh`: `server/discover` answered (a stateless
    /// era), any other request answered with a result that holds the
    /// request as it came (so an answer is longer than its request).
    const ECHO_SERVER: &str = r#"while IFS= read -r line; do
  rest=${line#'{"jsonrpc":"2.0","id":'}
  [ "$rest" = "$line" ] && continue
  id=${rest%%,*}
  case $line in
    *'"method":"server/discover"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}}\n' "$id" ;;
    *) printf '{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","request":%s}}\n' "$id" "$line" ;;
  esac
done"#;

    fn echo_server() -> UpstreamConfig {
        let args = vec!["-c".to_owned(), ECHO_SERVER.to_owned()];
        UpstreamConfig { name: "echo".into(), command: "sh".into(), args, ..Default::default() }
    }

    /// The bytes the current thread has read and written so far, each
    /// `read` and `write` counted, pipes included (Linux's per-thread I/O
    /// accounting); `None` on other systems.
    fn thread_io() -> Option<(u64, u64)> {
        if !cfg!(target_os = "linux") {
            return None;
        }
        let text =
            std::fs::read_to_string("/proc/thread-self/io").expect("per-thread I/O counts (/proc/thread-self/io)");
        let count = |name: &str| -> u64 {
            let value = text.lines().find_map(|l| l.strip_prefix(name)).expect(name);
            value.trim().parse().expect(name)
        };
        Some((count("rchar:"), count("wchar:")))
    }

    /// What a call made on a worker's thread saw: the upstream's answer (as
    /// text), and the bytes that thread read and wrote while the call ran.
    struct Called {
        result: Result<String, String>,
        io: Option<(u64, u64)>,
    }

    /// A `tools/call` carrying [`PAYLOAD`] bytes, made through `client` on
    /// `worker`'s thread the way `Link::forward` makes one (a `Flow` polled
    /// by the caller's own task until its result); what it saw comes on the
    /// receiver.
    fn call_on(worker: &ArbiterHandle, client: &Client) -> std::sync::mpsc::Receiver<Called> {
        use crate::gateway::flow::{Event, Flow};
        use mcp_protocol::model::JsonObject;
        use mcp_protocol::params::Params;

        let (tx, rx) = std::sync::mpsc::channel();
        let client = client.clone();
        worker.spawn_fn(move || {
            actix_rt::spawn(async move {
                let before = thread_io();
                let arguments = serde_json::json!({ "text": "x".repeat(PAYLOAD) });
                let params =
                    Params::new(JsonObject::from_iter([("name".into(), "t".into()), ("arguments".into(), arguments)]));
                let mut flow = Flow::start(&client, "tools/call", params, None, Duration::from_secs(20), false);
                let result = loop {
                    match flow.next().await {
                        Some(Event::Done(done)) => {
                            break done.map(|raw| raw.get().to_owned()).map_err(|e| e.to_string())
                        }
                        Some(_) => {}
                        None => break Err("the call ended without its result".to_owned()),
                    }
                };
                let io = before.zip(thread_io()).map(|((r0, w0), (r1, w1))| (r1 - r0, w1 - w0));
                let _ = tx.send(Called { result, io });
            });
        });
        rx
    }

    /// Blocks `worker`'s thread (a task of it waits on a plain channel:
    /// nothing else runs there) until the returned sender is dropped;
    /// returns once it is blocked.
    fn hold(worker: &ArbiterHandle) -> std::sync::mpsc::Sender<()> {
        let (release, released) = std::sync::mpsc::channel::<()>();
        let (held, holding) = std::sync::mpsc::channel::<()>();
        worker.spawn_fn(move || {
            let _ = held.send(());
            let _ = released.recv_timeout(Duration::from_secs(60));
        });
        holding.recv_timeout(Duration::from_secs(10)).expect("the worker's thread is held");
        release
    }

    /// The call was answered (its answer holds the request it sent).
    fn answered(called: &Called) {
        match &called.result {
            Ok(answer) => assert!(answer.contains(&"x".repeat(PAYLOAD)), "the answer holds the request"),
            Err(e) => panic!("the call failed: {e}"),
        }
    }

    /// "A call that arrives on that worker never leaves its thread … a call
    /// taken by another worker crosses to it and back" (gateway guide,
    /// "Threads"). A stdio upstream opens on worker `a` (its turn). A call
    /// made on `a` is answered while every other thread of the system is
    /// blocked — worker `b`, and this test's thread, which opened the
    /// upstream as an upstream actor does — and `a`'s own I/O counts show
    /// that `a` wrote the request into the child's stdin and read the
    /// answer from its stdout: had the pipes been opened, written or read on
    /// another thread, the call would wait for that blocked thread (and
    /// fail here after 20 s), or `a`'s counts would fall short of the
    /// call's size. The other way, the observation is shown to tell: a call
    /// made on `b` while `a` is blocked waits, is answered once `a` runs
    /// again, and `b` read and wrote neither pipe.
    #[actix_rt::test]
    async fn a_call_on_the_upstreams_worker_never_leaves_its_thread_and_one_from_another_crosses() {
        let homes = Homes::default();
        let (a, b) = (actix_rt::Arbiter::new(), actix_rt::Arbiter::new());
        homes.arbiters.lock().unwrap().extend([a.handle(), b.handle()]);
        let client = homes.open(&echo_server()).await.unwrap();
        assert_eq!(homes.next.load(Ordering::Relaxed), 1, "the upstream opened on the first worker, a");

        // On a, with b held and this thread blocked until the answer.
        let b_held = hold(&b.handle());
        let called = call_on(&a.handle(), &client).recv_timeout(Duration::from_secs(20));
        drop(b_held);
        let called = called.expect("a call on the upstream's worker is answered while every other thread is blocked");
        answered(&called);
        if let Some((read, written)) = called.io {
            let least = PAYLOAD as u64;
            assert!(written > least, "a wrote the request to the child's stdin: {written} bytes written");
            assert!(read > least, "a read the answer from the child's stdout: {read} bytes read");
        }

        // On b, with a held: it waits for a, and crosses.
        let a_held = hold(&a.handle());
        let crossing = call_on(&b.handle(), &client);
        let early = crossing.recv_timeout(Duration::from_millis(300));
        drop(a_held);
        assert!(early.is_err(), "a call on another worker waits for the upstream's worker");
        let called = crossing.recv_timeout(Duration::from_secs(20)).expect("it is answered once that worker runs");
        answered(&called);
        if let Some((read, written)) = called.io {
            let least = PAYLOAD as u64;
            assert!(read < least && written < least, "b touched neither pipe: {read} bytes read, {written} written");
        }
        client.close().await;
        a.stop();
        b.stop();
    }

    /// "With one worker (`http.workers = 1`), none does" (gateway guide,
    /// "Threads"): with one worker, every stdio upstream opens on it — two
    /// here, opened from this test's thread as the upstream actors open
    /// theirs — and a call made on it to either is answered while this
    /// thread is blocked, the worker itself writing and reading the child's
    /// pipes (its I/O counts, each over the call's size).
    #[actix_rt::test]
    async fn with_one_worker_no_call_leaves_its_thread() {
        let homes = Homes::default();
        let worker = actix_rt::Arbiter::new();
        homes.arbiters.lock().unwrap().push(worker.handle());
        let first = homes.open(&echo_server()).await.unwrap();
        let second = homes.open(&echo_server()).await.unwrap();
        assert_eq!(homes.next.load(Ordering::Relaxed), 2, "both upstreams opened on the one worker");
        for client in [&first, &second] {
            let called = call_on(&worker.handle(), client).recv_timeout(Duration::from_secs(20));
            let called = called.expect("a call on the one worker is answered while this thread is blocked");
            answered(&called);
            if let Some((read, written)) = called.io {
                let least = PAYLOAD as u64;
                assert!(
                    read > least && written > least,
                    "the worker did the pipes' I/O: {read} read, {written} written"
                );
            }
        }
        first.close().await;
        second.close().await;
        worker.stop();
    }

    #[actix_rt::test]
    async fn an_upstream_opening_before_the_first_worker_waits_for_it() {
        let homes = std::sync::Arc::new(Homes::default());
        homes.expect();
        let worker = actix_rt::Arbiter::new();
        let h = homes.clone();
        // The worker registers a little after the upstream started opening.
        worker.spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            h.register_current();
        });
        assert!(homes.open(&missing_program()).await.is_err());
        assert_eq!(homes.next.load(Ordering::Relaxed), 1, "the connection went to the worker");
        worker.stop();
    }
}
