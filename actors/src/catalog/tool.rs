//! [`Tool`]: a name, a description, a JSON-Schema input and an async handler.

use std::future::Future;
use std::sync::Arc;

use futures::future::{FutureExt, LocalBoxFuture};
use mcp_protocol::model::result::CacheHints;
use mcp_protocol::model::tools::{self, CallToolResult, ToolAnnotations};
use mcp_protocol::RawObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::arguments;
use super::no_args::NoArgs;
use super::outcome::{object_schema, IntoToolOutcome};
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;
use mcp_protocol::header_params::{header_params, HeaderParam};

/// The future a handler returns. Handlers run on the request actor's
/// thread, so the future need not be `Send`.
pub type HandlerFuture<T> = LocalBoxFuture<'static, Result<T, HandlerError>>;

/// A tool's handler behind its argument parsing: it takes the arguments as
/// their JSON text, parsed straight into the tool's own type.
type ToolFn = dyn Fn(&RawObject, RequestContext) -> HandlerFuture<CallToolResult> + Send + Sync;

/// A tool: its listed definition and its handler.
///
/// ```
/// use actix_mcp::catalog::Tool;
/// use mcp_protocol::model::tools::CallToolResult;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Echo { text: String }
///
/// let tool = Tool::new("echo", "Echoes its input", |args: Echo, _ctx| async move {
///     Ok(CallToolResult::text(args.text))
/// });
/// assert_eq!(tool.definition().input_schema["properties"]["text"]["type"], "string");
/// ```
#[derive(Clone)]
pub struct Tool {
    pub(crate) def: tools::Tool,
    pub(crate) handler: Arc<ToolFn>,
    pub(crate) listed: bool,
    pub(crate) scopes: Vec<String>,
    /// The upstream server it forwards to (the gateway's items).
    pub(crate) upstream: Option<std::sync::Arc<str>>,
    pub(crate) cache: Option<CacheHints>,
    pub(crate) header_params: Result<Vec<HeaderParam>, String>,
    pub(crate) task_support: TaskSupport,
}

/// Whether a tool's calls may become tasks (the Tasks extension).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Always answered in the call (default).
    #[default]
    Forbidden,
    /// A task when the client declared the extension and the handler calls
    /// [`RequestContext::begin_task`] or runs past `tasks.task_after_ms`;
    /// else an ordinary result.
    Optional,
    /// Only as a task: a client that did not declare the extension gets
    /// -32021. The task begins at [`RequestContext::begin_task`], or after
    /// `tasks.task_after_ms`; a handler that answers before either still
    /// answers through a task (created already finished).
    Required,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool").field("def", &self.def).field("listed", &self.listed).finish()
    }
}

impl Tool {
    /// A tool with typed arguments: the input schema is derived from `A`
    /// (schemars), and arguments that do not deserialize into `A` produce a
    /// tool execution error (`isError: true`) the model can correct.
    ///
    /// The handler returns `Ok` of anything [`IntoToolOutcome`]: text, a
    /// [`Json`](super::Json) value (then the tool's `outputSchema` is derived
    /// from its type), content blocks, a `CallToolResult`, or a `Result` whose
    /// `Err` becomes a tool execution error. `Err(HandlerError)` is a
    /// protocol error. An empty `description` is taken from `A`'s doc comment.
    ///
    /// Arguments that do not fit are answered with a tool execution error
    /// naming the argument and the JSON type it needs (`argument "seconds":
    /// expected a non-negative integer, got the string "soon"`). An optional argument with a default is a field with
    /// `#[serde(default = "…")]`: schemars writes the default into the
    /// input schema, and a call without it gets it.
    ///
    /// ```
    /// use actix_mcp::prelude::*;
    ///
    /// /// Waits a while.
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Wait {
    ///     /// How long to wait, in seconds.
    ///     #[serde(default = "thirty")]
    ///     seconds: u64,
    /// }
    ///
    /// fn thirty() -> u64 {
    ///     30
    /// }
    ///
    /// let wait = Tool::new("wait", "", |w: Wait, _ctx| async move { Ok(format!("waited {} s", w.seconds)) });
    /// let schema = &wait.definition().input_schema;
    /// assert_eq!(schema["properties"]["seconds"]["default"], 30);
    /// assert!(schema.get("required").is_none_or(|r| r.as_array().unwrap().is_empty()));
    /// ```
    pub fn new<A, F, Fut, R>(name: impl Into<String>, description: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + 'static,
        F: Fn(A, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, HandlerError>> + 'static,
        R: IntoToolOutcome + 'static,
    {
        let name = name.into();
        let schema = object_schema::<A>();
        let mut description = description.into();
        if description.is_empty() {
            description = schema.get("description").and_then(Value::as_str).unwrap_or_default().to_owned();
        }
        let tool_name = name.clone();
        let mut tool =
            Self::with_handler(name, description, schema, move |args: &RawObject, ctx| {
                match arguments::parse::<A>(args) {
                    Ok(a) => handler(a, ctx).map(|r| r.and_then(IntoToolOutcome::into_outcome)).boxed_local(),
                    Err(why) => {
                        let message = format!("Invalid arguments for tool {tool_name}: {why}");
                        futures::future::ready(Ok(CallToolResult::error(message))).boxed_local()
                    }
                }
            });
        tool.def.output_schema = R::output_schema();
        tool
    }

    /// A tool that takes no arguments (its input schema is an empty object).
    ///
    /// ```
    /// use actix_mcp::prelude::*;
    ///
    /// let now = Tool::no_args("now", "The server's clock, in seconds", |_ctx| async {
    ///     Ok(format!("{:?}", std::time::SystemTime::now()))
    /// });
    /// assert_eq!(now.definition().input_schema["properties"], serde_json::json!({}));
    /// ```
    pub fn no_args<F, Fut, R>(name: impl Into<String>, description: impl Into<String>, handler: F) -> Self
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, HandlerError>> + 'static,
        R: IntoToolOutcome + 'static,
    {
        Self::new(name, description, move |_: NoArgs, ctx| handler(ctx))
    }

    /// A tool with a hand-written input schema and untyped arguments.
    pub fn raw<F, Fut>(name: impl Into<String>, description: impl Into<String>, input_schema: Value, handler: F) -> Self
    where
        F: Fn(Map<String, Value>, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, HandlerError>> + 'static,
    {
        Self::with_handler(name, description, input_schema, move |args: &RawObject, ctx| {
            handler(args.to_map(), ctx).boxed_local()
        })
    }

    /// A tool whose handler parses the arguments' text itself.
    pub(crate) fn with_handler<F>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(&RawObject, RequestContext) -> HandlerFuture<CallToolResult> + Send + Sync + 'static,
    {
        let header_params = header_params(&input_schema);
        Tool {
            def: tools::Tool {
                name: name.into(),
                title: None,
                description: description.into(),
                input_schema,
                output_schema: None,
                annotations: None,
                meta: None,
            },
            handler: Arc::new(handler),
            listed: true,
            scopes: Vec::new(),
            upstream: None,
            cache: None,
            header_params,
            task_support: TaskSupport::Forbidden,
        }
    }

    /// Lets calls of this tool become tasks (see [`TaskSupport`]).
    #[must_use]
    pub fn with_task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// Whether calls may become tasks.
    pub fn task_support(&self) -> TaskSupport {
        self.task_support
    }

    /// Sets the output schema (for `structuredContent`).
    #[must_use]
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.def.output_schema = Some(schema);
        self
    }

    /// Sets behaviour annotations (`readOnlyHint`, …).
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.def.annotations = Some(annotations);
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The definition as listed.
    pub fn definition(&self) -> &tools::Tool {
        &self.def
    }

    /// The parameters mirrored into `Mcp-Param-*` headers.
    pub fn header_params(&self) -> &[HeaderParam] {
        self.header_params.as_deref().unwrap_or(&[])
    }

    /// Runs the handler.
    pub fn call(&self, args: &RawObject, ctx: RequestContext) -> HandlerFuture<CallToolResult> {
        (self.handler)(args, ctx)
    }
}
