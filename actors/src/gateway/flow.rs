//! One forwarded request and the input its upstream asks for. The upstream
//! request runs in a task of its own; when the upstream asks for input (a
//! legacy server's `elicitation/create`, `sampling/createMessage` or
//! `roots/list` request, or a stateless server's `InputRequiredResult`),
//! the request waits, the handler asks its own caller through the request
//! context (an `InputRequiredResult` for a stateless caller, a request in a
//! legacy caller's session) and parks the flow here under an id carried in
//! its sealed `requestState`; the caller's retry takes the flow back, gives
//! the upstream its answer, and goes on waiting for the result.
//!
//! A parked flow lives in this process: behind a load balancer the retry
//! must reach the same instance (route by `Mcp-Name`, the tool's name).
//! One nobody comes back for is dropped after `gateway.input_wait_ms`,
//! which cancels its upstream request.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mcp_protocol::meta::INPUT_KEY_KEY;
use mcp_protocol::model::logging::LogMessage;
use mcp_protocol::model::mrtr::InputRequest;
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
    /// The result.
    Done(Result<Value, ClientError>),
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

/// A forwarded request in flight.
pub(crate) struct Flow {
    events: mpsc::Receiver<Event>,
    /// Events read while gathering a round's questions, not handled yet.
    deferred: std::collections::VecDeque<Event>,
    pub(crate) outstanding: Vec<Outstanding>,
    /// How many inputs were asked (keys are `input-N`).
    asked: u32,
    /// The upstream request; aborted (so cancelled upstream) when dropped.
    task: tokio::task::JoinHandle<()>,
    /// When it began.
    pub(crate) started: Instant,
}

impl Drop for Flow {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Flow {
    /// Starts `method` upstream, declaring `caps` (stateless upstreams);
    /// `progress`: the caller asked for progress.
    pub(crate) fn start(
        client: &Client,
        method: &str,
        params: Value,
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
        let (client, method) = (client.clone(), method.to_owned());
        let task = tokio::spawn(async move {
            let result = client.request_with(&method, params, options).await;
            let _ = tx.send(Event::Done(result)).await;
        });
        let started = Instant::now();
        Flow { events, deferred: Default::default(), outstanding: Vec::new(), asked: 0, task, started }
    }

    /// The next event of the upstream request (`None`: it is gone).
    pub(crate) async fn next(&mut self) -> Option<Event> {
        match self.deferred.pop_front() {
            Some(e) => Some(e),
            None => self.events.recv().await,
        }
    }

    /// After an input request: the others of its round, which arrive
    /// together (other events meanwhile are kept for [`Flow::next`]).
    pub(crate) async fn gather(&mut self) {
        while let Ok(Some(event)) = tokio::time::timeout(GATHER, self.events.recv()).await {
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
    flows: Mutex<HashMap<String, (Instant, Flow)>>,
    wait: Duration,
}

impl Parked {
    pub(crate) fn new(wait: Duration) -> Self {
        Parked { flows: Mutex::new(HashMap::new()), wait }
    }

    /// Parks `flow`; its id.
    pub(crate) fn park(&self, flow: Flow) -> String {
        let id = uuid::Uuid::new_v4().to_string();
        let mut flows = self.flows.lock().expect("parked lock");
        let now = Instant::now();
        // Those nobody came back for are dropped (which cancels them upstream).
        flows.retain(|_, (since, _)| now.duration_since(*since) < self.wait);
        flows.insert(id.clone(), (now, flow));
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
            let mut flow = Flow {
                events,
                deferred: Default::default(),
                outstanding: Vec::new(),
                asked: 0,
                task: tokio::spawn(async {}),
                started: Instant::now(),
            };
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

    #[test]
    fn a_parked_flow_is_taken_once_and_expires() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let flow = || Flow {
                events: mpsc::channel(1).1,
                deferred: Default::default(),
                outstanding: Vec::new(),
                asked: 0,
                task: tokio::spawn(async {}),
                started: Instant::now(),
            };
            let parked = Parked::new(Duration::from_secs(60));
            let id = parked.park(flow());
            assert!(parked.take(&id).is_some());
            assert!(parked.take(&id).is_none());
            let short = Parked::new(Duration::ZERO);
            let id = short.park(flow());
            assert!(short.take(&id).is_none());
        });
    }
}
