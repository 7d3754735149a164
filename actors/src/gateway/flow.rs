//! One forwarded request and the input its upstream asks for. The upstream
//! request runs inside its handler's task while the handler waits on it;
//! when the upstream asks for input (a legacy server's `elicitation/create`,
//! `sampling/createMessage` or `roots/list` request, or a stateless
//! server's `InputRequiredResult`), the request waits, the handler asks its
//! own caller through the request context (an `InputRequiredResult` for a
//! stateless caller, a request in a legacy caller's session) and parks the
//! flow here under an id carried in its sealed `requestState` (the request
//! goes on in a task of its own); the caller's retry takes the flow back,
//! gives the upstream its answer, and goes on waiting for the result.
//!
//! A parked flow lives in this process: behind a load balancer the retry
//! must reach the same instance (route by `Mcp-Name`, the tool's name).
//! One nobody comes back for is dropped after `gateway.input_wait_ms` (by
//! a timer started when it is parked, whether or not another flow is
//! parked after it), which cancels its upstream request.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_protocol::meta::INPUT_KEY_KEY;
use mcp_protocol::model::logging::LogMessage;
use mcp_protocol::model::mrtr::InputRequest;
use mcp_protocol::params::Params;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use crate::client::{Client, ClientError, RequestOptions};

/// What a running upstream request reports.
pub(crate) enum Event {
    /// A progress notification.
    Progress(mcp_protocol::model::progress::ProgressParams),
    /// A log message's params.
    Log(LogMessage),
    /// The upstream wants input; its answer goes back on `reply`.
    Input { method: String, params: Value, reply: oneshot::Sender<Result<Value, String>> },
    /// The result, as the upstream wrote it.
    Done(Result<Box<RawValue>, ClientError>),
}

/// Input asked of the caller and not answered yet.
pub(crate) struct Outstanding {
    /// Its key in the caller's `inputRequests`.
    pub(crate) key: String,
    pub(crate) request: InputRequest,
    reply: oneshot::Sender<Result<Value, String>>,
}

impl Outstanding {
    /// Gives the upstream its answer.
    pub(crate) fn answer(self, answer: Value) {
        let _ = self.reply.send(Ok(answer));
    }
}

/// How long, after an input request, others of the same round are waited
/// for (a round's questions are sent together and go to the caller together).
const GATHER: Duration = Duration::from_millis(20);

/// The upstream request's future.
type Request = Pin<Box<dyn Future<Output = Result<Box<RawValue>, ClientError>> + Send>>;

/// Where the upstream request runs: in its handler's own task while the
/// handler waits on it (no task, no wake-up across tasks), in a task of its
/// own once parked (it goes on while nobody waits), or ended.
enum Running {
    /// Polled by [`Flow::next`]; `done` sends its result once it runs alone.
    Inline { request: Request, done: mpsc::Sender<Event> },
    /// Running alone; aborted (so cancelled upstream) when the flow is dropped.
    Alone(tokio::task::JoinHandle<()>),
    /// Ended with this result (taken once the events before it are read).
    Ended(Option<Result<Box<RawValue>, ClientError>>),
}

/// A forwarded request in flight.
pub(crate) struct Flow {
    events: mpsc::Receiver<Event>,
    /// Events read while gathering a round's questions, not handled yet.
    deferred: std::collections::VecDeque<Event>,
    pub(crate) outstanding: Vec<Outstanding>,
    /// How many inputs were asked (keys are `input-N`).
    asked: u32,
    /// The upstream request.
    running: Running,
    /// When it began.
    pub(crate) started: Instant,
}

impl Drop for Flow {
    fn drop(&mut self) {
        if let Running::Alone(task) = &self.running {
            task.abort();
        }
    }
}

impl Flow {
    /// Starts `method` upstream, declaring `caps` (stateless upstreams);
    /// `progress`: the caller asked for progress.
    pub(crate) fn start(
        client: &Client,
        method: &'static str,
        params: Params,
        caps: Option<mcp_protocol::model::ClientCapabilities>,
        timeout: Duration,
        progress: bool,
    ) -> Self {
        // As many events wait as the upstream connection queues messages;
        // past that, progress and log messages (which the callbacks cannot
        // wait to hand on) are dropped, while input requests and the
        // result wait their turn.
        let (tx, events) = mpsc::channel(client.max_queued_messages());
        let (log, input) = (tx.clone(), tx.clone());
        let mut options = RequestOptions::new()
            .timeout(timeout)
            .on_log(move |m| {
                let _ = log.try_send(Event::Log(m));
            })
            .on_input(move |method, params| {
                let input = input.clone();
                async move {
                    let (reply, answer) = oneshot::channel();
                    let asked = input.send(Event::Input { method, params, reply }).await;
                    asked.map_err(|_| "the caller is gone".to_owned())?;
                    answer.await.unwrap_or_else(|_| Err("the caller gave the request up".into()))
                }
            });
        if let Some(caps) = caps {
            options = options.capabilities(caps);
        }
        if progress {
            let p = tx.clone();
            options = options.on_progress(move |n| {
                let _ = p.try_send(Event::Progress(n));
            });
        }
        let client = client.clone();
        let request = Box::pin(async move { client.request_raw(method, params, options).await });
        let running = Running::Inline { request, done: tx };
        Flow::with(events, running)
    }

    fn with(events: mpsc::Receiver<Event>, running: Running) -> Self {
        let (deferred, outstanding, started) = (Default::default(), Vec::new(), Instant::now());
        Flow { events, deferred, outstanding, asked: 0, running, started }
    }

    /// The next event of the upstream request (`None`: it is gone).
    pub(crate) async fn next(&mut self) -> Option<Event> {
        match self.deferred.pop_front() {
            Some(e) => Some(e),
            None => self.recv().await,
        }
    }

    /// The next event not deferred: what the request reports, then its end.
    async fn recv(&mut self) -> Option<Event> {
        if let Running::Inline { request, .. } = &mut self.running {
            tokio::select! {
                biased;
                event = self.events.recv() => return event,
                result = request => self.running = Running::Ended(Some(result)),
            }
        }
        match &mut self.running {
            // What it reported before it ended comes first.
            Running::Ended(result) => match self.events.try_recv() {
                Ok(event) => Some(event),
                Err(_) => result.take().map(Event::Done),
            },
            _ => self.events.recv().await,
        }
    }

    /// Lets the request run alone (it is parked: nobody polls it until
    /// its caller comes back).
    fn run_alone(&mut self) {
        self.running = match std::mem::replace(&mut self.running, Running::Ended(None)) {
            Running::Inline { request, done } => Running::Alone(tokio::spawn(async move {
                let result = request.await;
                let _ = done.send(Event::Done(result)).await;
            })),
            other => other,
        };
    }

    /// After an input request: the others of its round, which arrive
    /// together (other events meanwhile are kept for [`Flow::next`]).
    pub(crate) async fn gather(&mut self) {
        while let Ok(Some(event)) = tokio::time::timeout(GATHER, self.recv()).await {
            match event {
                Event::Input { method, params, reply } => self.ask(method, params, reply),
                other => self.deferred.push_back(other),
            }
        }
    }

    /// Records the upstream's input request as outstanding under the key
    /// its server named (`_meta`), else a fresh one; an unknown method is
    /// refused to the upstream.
    pub(crate) fn ask(&mut self, method: String, mut params: Value, reply: oneshot::Sender<Result<Value, String>>) {
        let named = params
            .get_mut("_meta")
            .and_then(Value::as_object_mut)
            .and_then(|m| m.remove(INPUT_KEY_KEY))
            .and_then(|k| k.as_str().map(str::to_owned));
        if params.get("_meta").and_then(Value::as_object).is_some_and(|m| m.is_empty()) {
            params.as_object_mut().map(|p| p.remove("_meta"));
        }
        match serde_json::from_value::<InputRequest>(json!({ "method": method, "params": params })) {
            Ok(request) => {
                self.asked += 1;
                let key = named.unwrap_or_else(|| format!("input-{}", self.asked));
                self.outstanding.push(Outstanding { key, request, reply });
            }
            Err(e) => {
                let _ = reply.send(Err(format!("{method} cannot be passed to the caller: {e}")));
            }
        }
    }
}

/// Flows waiting for their caller's retry, by id.
pub(crate) struct Parked {
    /// Shared with each parked flow's expiry timer (which holds it weakly).
    flows: Arc<Mutex<HashMap<String, (Instant, Flow)>>>,
    wait: Duration,
}

impl Parked {
    pub(crate) fn new(wait: Duration) -> Self {
        Parked { flows: Arc::new(Mutex::new(HashMap::new())), wait }
    }

    /// Parks `flow` (its request runs on alone); its id. Unless it is taken
    /// first, it is dropped `wait` later, which cancels it upstream.
    pub(crate) fn park(&self, mut flow: Flow) -> String {
        flow.run_alone();
        let id = uuid::Uuid::new_v4().to_string();
        let mut flows = self.flows.lock().expect("parked lock");
        let now = Instant::now();
        // Those nobody came back for are dropped (which cancels them upstream).
        flows.retain(|_, (since, _)| now.duration_since(*since) < self.wait);
        flows.insert(id.clone(), (now, flow));
        drop(flows);
        // Its own expiry: without it a flow nobody comes back for would wait
        // for the next one parked (or its upstream's `timeout_ms`).
        let (flows, key, wait) = (Arc::downgrade(&self.flows), id.clone(), self.wait);
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            let Some(flows) = flows.upgrade() else { return };
            let expired = flows.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&key);
            // Dropped outside the lock: that aborts its request.
            drop(expired);
        });
        id
    }

    /// Takes the flow parked as `id`, if it is here and not expired.
    pub(crate) fn take(&self, id: &str) -> Option<Flow> {
        let (since, flow) = self.flows.lock().expect("parked lock").remove(id)?;
        (since.elapsed() < self.wait).then_some(flow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_input_method_is_refused_upstream() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let (_tx, events) = mpsc::channel(1);
            let mut flow = Flow::with(events, Running::Ended(None));
            let (reply, answer) = oneshot::channel();
            flow.ask("tools/call".into(), json!({}), reply);
            assert!(flow.outstanding.is_empty());
            assert!(answer.await.unwrap().is_err());
            let (reply, _answer) = oneshot::channel();
            flow.ask("elicitation/create".into(), json!({"message": "name?", "requestedSchema": {}}), reply);
            assert_eq!(flow.outstanding[0].key, "input-1");
            // The key the upstream's handler asked under, when its server names it.
            let (reply, _answer) = oneshot::channel();
            let params = json!({"message": "name?", "requestedSchema": {}, "_meta": {INPUT_KEY_KEY: "user_name"}});
            flow.ask("elicitation/create".into(), params, reply);
            assert_eq!(flow.outstanding[1].key, "user_name");
        });
    }

    /// A request that logs `note`, then waits for `go`, then answers `{}`.
    fn logs_then_answers(note: &'static str, go: oneshot::Receiver<()>) -> Flow {
        let (done, events) = mpsc::channel(4);
        let log = done.clone();
        let request: Request = Box::pin(async move {
            let data = Value::from(note);
            let _ = log.try_send(Event::Log(LogMessage {
                level: mcp_protocol::model::LoggingLevel::Info,
                logger: None,
                data,
            }));
            let _ = go.await;
            Ok(RawValue::from_string("{}".into()).unwrap())
        });
        Flow::with(events, Running::Inline { request, done })
    }

    #[test]
    fn what_a_request_reports_comes_before_its_end_inline_or_alone() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            // Inline: it ran to its end inside `next`; the log still comes first.
            let (go, wait) = oneshot::channel();
            go.send(()).unwrap();
            let mut flow = logs_then_answers("first", wait);
            assert!(matches!(flow.next().await, Some(Event::Log(m)) if m.data == "first"));
            assert!(matches!(flow.next().await, Some(Event::Done(Ok(r))) if r.get() == "{}"));
            assert!(flow.next().await.is_none());
            // Parked: it goes on in a task of its own while nobody polls it.
            let (go, wait) = oneshot::channel();
            let mut flow = logs_then_answers("parked", wait);
            flow.run_alone();
            assert!(matches!(flow.running, Running::Alone(_)));
            go.send(()).unwrap();
            assert!(matches!(flow.next().await, Some(Event::Log(m)) if m.data == "parked"));
            assert!(matches!(flow.next().await, Some(Event::Done(Ok(_)))));
        });
    }

    #[test]
    fn a_parked_flow_is_taken_once_and_expires() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let flow = || Flow::with(mpsc::channel(1).1, Running::Ended(None));
            let parked = Parked::new(Duration::from_secs(60));
            let id = parked.park(flow());
            assert!(parked.take(&id).is_some());
            assert!(parked.take(&id).is_none());
            let short = Parked::new(Duration::ZERO);
            let id = short.park(flow());
            assert!(short.take(&id).is_none());
        });
    }

    /// "A request nobody comes back for is cancelled after
    /// `gateway.input_wait_ms`" (gateway guide, "Per call"): a parked
    /// flow's upstream request is dropped (which sends the upstream its
    /// `notifications/cancelled`) once the wait is over — not before, and
    /// with no other flow parked after it to sweep it out.
    #[test]
    fn a_parked_flow_nobody_comes_back_for_is_cancelled_after_the_wait() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            // A request that never ends on its own; `dropped` says when it was dropped.
            let (held, dropped) = oneshot::channel::<()>();
            let request: Request = Box::pin(async move {
                let _held = held;
                std::future::pending::<Result<Box<RawValue>, ClientError>>().await
            });
            let (done, events) = mpsc::channel(1);
            let wait = Duration::from_millis(200);
            let parked = Parked::new(wait);
            let started = Instant::now();
            let _id = parked.park(Flow::with(events, Running::Inline { request, done }));
            let gone = tokio::time::timeout(Duration::from_secs(10), dropped).await;
            let gone = gone.expect("the parked request was cancelled within 10 s, not left running");
            assert!(gone.is_err(), "the request was dropped, not answered");
            assert!(started.elapsed() >= wait, "cancelled after the wait, not before: {:?}", started.elapsed());
        });
    }
}
