//! [`TestClient`]: an in-process client for tests — no sockets, like
//! actix-web's `test::init_service` — that speaks the 2026-07-28 wire to a
//! server through its real HTTP endpoint: discover, lists, calls, reads,
//! prompts, listen streams as async streams of notifications, and
//! multi round-trip input answered by a callback.
//!
//! The client and the server run in an actix system: [`block_on`] runs a
//! test's body in a fresh one, under a plain `#[test]`, with no other
//! dependency. (With `actix-rt` among your dev-dependencies,
//! `#[actix_rt::test] async fn` does the same.)
//!
//! ```
//! use actix_mcp::prelude::*;
//! use actix_mcp::test::{block_on, TestClient};
//!
//! #[test]
//! fn ping_answers_pong() {
//!     block_on(async {
//!         let server = McpServer::builder(server_info!())
//!             .tool(Tool::no_args("ping", "Answers pong", |_ctx| async { Ok("pong") }))
//!             .build()
//!             .unwrap();
//!         let client = TestClient::new(server).await;
//!         let result = client.call("ping", json!({})).await.unwrap();
//!         assert_eq!(result.content, vec![Content::text("pong")]);
//!     });
//! }
//! # // A doctest compiles no `#[test]` function: run the same body here.
//! # block_on(async {
//! #     let server = McpServer::builder(server_info!())
//! #         .tool(Tool::no_args("ping", "Answers pong", |_ctx| async { Ok("pong") }))
//! #         .build()
//! #         .unwrap();
//! #     let client = TestClient::new(server).await;
//! #     let result = client.call("ping", json!({})).await.unwrap();
//! #     assert_eq!(result.content, vec![Content::text("pong")]);
//! # });
//! ```
//!
//! A listen stream waits for its next notification as long as it stays
//! open; [`Notifications::next_within`] gives up after a deadline:
//!
//! ```
//! # use actix_mcp::prelude::*;
//! # use actix_mcp::test::{block_on, TestClient};
//! use std::time::Duration;
//!
//! # block_on(async {
//! # let server = McpServer::builder(server_info!()).tool(Tool::no_args("ping", "", |_ctx| async { Ok("pong") })).build().unwrap();
//! let client = TestClient::new(server).await;
//! let mut changes = client.listen(json!({"toolsListChanged": true})).await.unwrap();
//! // Nothing changes: no notification within 100 ms, and the stream is still open.
//! assert!(changes.next_within(Duration::from_millis(100)).await.is_err());
//! # });
//! ```
//!
//! A server built without [`logger`](crate::builder::McpServerBuilder::logger)
//! logs as `log.*` says, from a thread of its own, on stderr — which the
//! test harness does not capture, so its start-up notes (the listener
//! limit, a per-process `requestState` key) land among the test output.
//! Give a test's server a logger that keeps nothing, or one of your own:
//!
//! ```
//! # use actix_mcp::prelude::*;
//! # use actix_mcp::test::{block_on, TestClient};
//! # block_on(async {
//! let server = McpServer::builder(server_info!())
//!     .logger(actix_mcp::telemetry::logging::discard())
//!     .tool(Tool::no_args("ping", "Answers pong", |_ctx| async { Ok("pong") }))
//!     .build()
//!     .unwrap();
//! let client = TestClient::new(server).await;
//! # assert!(client.call("ping", json!({})).await.is_ok());
//! # });
//! ```

// The module's example shows a test file's `#[test]` function as a reader
// writes it; hidden lines run its body, since a doctest runs no `#[test]`.
#![allow(clippy::test_attr_in_doctest)]

mod exchange;
mod input;
mod listen;
mod tasks;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use actix_web::body::BoxBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::{test as web_test, App};
use futures::future::LocalBoxFuture;
use mcp_protocol::client::Answer;
use mcp_protocol::header_params::{header_params, HeaderParam};
use mcp_protocol::meta::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY};
use mcp_protocol::model::content::ResourceContents;
use mcp_protocol::model::discover::DiscoverResult;
use mcp_protocol::model::prompts::{GetPromptResult, Prompt};
use mcp_protocol::model::resources::{Resource, ResourceTemplate};
use mcp_protocol::model::tools::{CallToolResult, Tool};
use mcp_protocol::outgoing::standard_headers;
use mcp_protocol::ErrorData;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

pub use input::InputAnswer;
pub use listen::{Notifications, TimedOut};

/// The runtime of the test client: actix's, re-exported so that a test
/// needs no dependency of its own on it.
pub use actix_rt as rt;

/// Runs `test` to completion in a fresh actix system (the runtime the server
/// and [`TestClient`] need), from a plain `#[test] fn`.
pub fn block_on<F: std::future::Future>(test: F) -> F::Output {
    actix_rt::System::new().block_on(test)
}

use crate::server::McpServer;

type Call = Rc<dyn Fn(actix_http::Request) -> LocalBoxFuture<'static, ServiceResponse<BoxBody>>>;

/// Why a test client call failed.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// The server answered a JSON-RPC error (with the HTTP status).
    Rpc {
        /// The HTTP status of the answer.
        status: u16,
        /// The error.
        error: ErrorData,
    },
    /// The answer was not what the protocol allows (the message says how).
    Protocol(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Rpc { status, error } => write!(f, "HTTP {status}: {} ({})", error.message, error.code.0),
            CallError::Protocol(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CallError {}

impl CallError {
    /// The JSON-RPC error code, if the server answered one.
    pub fn code(&self) -> Option<i32> {
        match self {
            CallError::Rpc { error, .. } => Some(error.code.0),
            CallError::Protocol(_) => None,
        }
    }
}

/// An in-process MCP client of one server (see the [module](self)).
pub struct TestClient {
    call: Call,
    path: String,
    capabilities: Value,
    answer: Option<input::Answerer>,
    next_id: RefCell<i64>,
    /// `Mcp-Param-*` headers of each tool, learned from `tools/list`.
    header_params: RefCell<Option<ToolHeaders>>,
    notifications: RefCell<Vec<Value>>,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient").field("path", &self.path).field("capabilities", &self.capabilities).finish()
    }
}

impl TestClient {
    /// A client of `server`'s HTTP endpoint, served in process.
    pub async fn new(server: McpServer) -> Self {
        let path = server.config().http.path.clone();
        let app = web_test::init_service(App::new().configure(crate::transport::http::configure(server))).await;
        let app = Rc::new(app);
        let call: Call = Rc::new(move |req| {
            let app = app.clone();
            Box::pin(async move {
                match app.call(req).await {
                    Ok(resp) => resp.map_into_boxed_body(),
                    Err(e) => panic!("the endpoint failed outside the protocol: {e}"),
                }
            })
        });
        TestClient {
            call,
            path,
            capabilities: json!({}),
            answer: None,
            next_id: RefCell::new(0),
            header_params: RefCell::new(None),
            notifications: RefCell::new(Vec::new()),
        }
    }

    /// This client answering the server's input requests (elicitation,
    /// sampling, roots) with `answer`, and declaring those capabilities.
    pub fn answering(mut self, answer: impl Fn(&str, &Value) -> InputAnswer + 'static) -> Self {
        let answers = json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}});
        self.declare(answers);
        self.answer = Some(Rc::new(answer));
        self
    }

    /// This client declaring the Tasks extension: a call the server makes
    /// a task (`resultType: "task"`) is followed to its end by
    /// [`call`](TestClient::call) — `tasks/get` at the task's interval, its
    /// questions answered by the [`answering`](TestClient::answering)
    /// callback through `tasks/update` — and its result returned.
    pub fn with_tasks(mut self) -> Self {
        self.declare(json!({"extensions": {mcp_protocol::tasks::EXTENSION: {}}}));
        self
    }

    /// Adds `capabilities` to those declared (objects merged one level deep).
    fn declare(&mut self, capabilities: Value) {
        let Value::Object(add) = capabilities else { return };
        let Value::Object(caps) = &mut self.capabilities else { return };
        for (key, value) in add {
            match (caps.get_mut(&key), value) {
                (Some(Value::Object(have)), Value::Object(more)) => have.extend(more),
                (_, value) => drop(caps.insert(key, value)),
            }
        }
    }

    /// This client declaring `capabilities` (`clientCapabilities`).
    pub fn with_capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Notifications (progress, log messages) that came on the streams of
    /// earlier requests, taken.
    pub fn take_notifications(&self) -> Vec<Value> {
        std::mem::take(&mut *self.notifications.borrow_mut())
    }

    /// `server/discover`.
    pub async fn discover(&self) -> Result<DiscoverResult, CallError> {
        self.typed("server/discover", json!({})).await
    }

    /// `tools/list`, every page.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, CallError> {
        let tools: Vec<Tool> = self.all_pages("tools/list", "tools").await?;
        // A schema whose annotations break the spec's rules gets no headers
        // (the server refuses to list such a tool; a foreign one may not).
        let params = tools.iter().map(|t| (t.name.clone(), header_params(&t.input_schema).unwrap_or_default()));
        let params = params.collect();
        *self.header_params.borrow_mut() = Some(params);
        Ok(tools)
    }

    /// `resources/list`, every page.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, CallError> {
        self.all_pages("resources/list", "resources").await
    }

    /// `resources/templates/list`, every page.
    pub async fn list_templates(&self) -> Result<Vec<ResourceTemplate>, CallError> {
        self.all_pages("resources/templates/list", "resourceTemplates").await
    }

    /// `prompts/list`, every page.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, CallError> {
        self.all_pages("prompts/list", "prompts").await
    }

    /// `tools/call` of `name` with `arguments`, input rounds answered by the
    /// callback given to [`TestClient::answering`]; a call the server makes
    /// a task is followed to its end (see [`TestClient::with_tasks`]).
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, CallError> {
        if self.header_params.borrow().is_none() {
            self.list_tools().await?;
        }
        let tool_params = self.header_params.borrow().as_ref().and_then(|m| m.get(name)).cloned().unwrap_or_default();
        let params = json!({"name": name, "arguments": arguments});
        let result = self.rounds("tools/call", params, &tool_params).await?;
        decode(self.finished(result).await?)
    }

    /// `resources/read` of `uri`.
    pub async fn read(&self, uri: &str) -> Result<Vec<ResourceContents>, CallError> {
        let result = self.rounds("resources/read", json!({"uri": uri}), &[]).await?;
        decode(result.get("contents").cloned().unwrap_or(Value::Null))
    }

    /// `prompts/get` of `name` with string `arguments`.
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<GetPromptResult, CallError> {
        let result = self.rounds("prompts/get", json!({"name": name, "arguments": arguments}), &[]).await?;
        decode(result)
    }

    /// `subscriptions/listen` with `notifications` (e.g.
    /// `{"toolsListChanged": true}`): the acknowledgement is checked, then
    /// the stream yields each notification.
    pub async fn listen(&self, notifications: Value) -> Result<Notifications, CallError> {
        let id = self.id();
        let (method, params) = ("subscriptions/listen", json!({"notifications": notifications}));
        let standard = standard_headers(method, &Map::new(), &[]);
        let body = exchange::body(&id, method, params, &self.client_meta());
        let resp = (self.call)(exchange::post(&self.path, &standard, &body)).await;
        Notifications::open(resp).await
    }

    /// Any request, with the headers the protocol asks for (`Mcp-Name`
    /// from the item the params name), its input rounds answered; the
    /// result object as the server sent it (a task is not followed).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, CallError> {
        self.rounds(method, params, &[]).await
    }

    /// The `_meta` entries of this client: its identity and capabilities.
    fn client_meta(&self) -> Vec<(String, Box<serde_json::value::RawValue>)> {
        let info = json!({"name": "actix-mcp-test", "version": env!("CARGO_PKG_VERSION")});
        let raw = |v: &Value| serde_json::value::to_raw_value(v).expect("a JSON value serializes");
        vec![(CLIENT_INFO_KEY.into(), raw(&info)), (CLIENT_CAPABILITIES_KEY.into(), raw(&self.capabilities))]
    }

    fn id(&self) -> Value {
        let mut n = self.next_id.borrow_mut();
        *n += 1;
        json!(*n)
    }

    async fn typed<T: DeserializeOwned>(&self, method: &str, params: Value) -> Result<T, CallError> {
        decode(self.rounds(method, params, &[]).await?)
    }

    async fn all_pages<T: DeserializeOwned>(&self, method: &str, key: &str) -> Result<Vec<T>, CallError> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..10_000 {
            let params = cursor.as_ref().map_or_else(|| json!({}), |c| json!({"cursor": c}));
            let page = self.rounds(method, params, &[]).await?;
            out.extend(decode::<Vec<T>>(page.get(key).cloned().unwrap_or(Value::Null))?);
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) => cursor = Some(c.to_owned()),
                None => return Ok(out),
            }
        }
        Err(CallError::Protocol(format!("{method}: more than 10,000 pages")))
    }

    /// Sends a request, answering `input_required` results (at most 16 rounds).
    async fn rounds(&self, method: &str, mut params: Value, tool_params: &[HeaderParam]) -> Result<Value, CallError> {
        let client = self.client_meta();
        for _ in 0..16 {
            let id = self.id();
            let standard = standard_headers(method, params.as_object().unwrap_or(&Map::new()), tool_params);
            let body = exchange::body(&id, method, params.clone(), &client);
            let resp = (self.call)(exchange::post(&self.path, &standard, &body)).await;
            let (result, notes) = exchange::answer(resp, &id).await?;
            self.notifications.borrow_mut().extend(notes);
            // A task is the test's to follow, as it was sent.
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(result);
            }
            let Ok(Answer::InputRequired { requests, state }) = Answer::of(result) else {
                return Err(CallError::Protocol(format!("{method}: a malformed input_required result")));
            };
            if requests.is_empty() {
                return Err(CallError::Protocol(format!("{method}: an input_required result without inputRequests")));
            }
            let Some(answer) = &self.answer else {
                return Err(CallError::Protocol(format!("{method}: the server asked for input; use answering()")));
            };
            let responses = input::answer_all(answer, &requests);
            let p = params.as_object_mut().ok_or_else(|| CallError::Protocol("params are not an object".into()))?;
            Answer::retry(p, responses, state);
        }
        Err(CallError::Protocol(format!("{method}: more than 16 input rounds")))
    }
}

fn decode<T: DeserializeOwned>(v: Value) -> Result<T, CallError> {
    serde_json::from_value(v).map_err(|e| CallError::Protocol(format!("unexpected result shape: {e}")))
}

/// The `x-mcp-header` parameters of each tool, by name.
type ToolHeaders = HashMap<String, Vec<HeaderParam>>;

/// A map of `inputResponses`.
type Responses = Map<String, Value>;
