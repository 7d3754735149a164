//! [`McpService`]: answers one parsed [`ClientRequest`] from the catalog.
//!
//! This is the part of a request actor's work that knows MCP semantics but
//! no transport: it returns the result object (with `resultType`, caching
//! hints and `_meta.serverInfo`) or a [`HandlerError`].

use std::sync::Arc;

use mcp_protocol::meta::SERVER_INFO_KEY;
use mcp_protocol::model::capabilities::{ListChangedCapability, ResourcesCapability, ServerCapabilities};
use mcp_protocol::model::completion::{CompleteParams, Completion, CompletionRef};
use mcp_protocol::model::{CacheHints, CacheScope, DiscoverResult, Implementation, ResultType};
use mcp_protocol::pagination::Page;
use mcp_protocol::request::ClientRequest;
use mcp_protocol::request_state::{self, Binding, StateKey, StatePayload};
use mcp_protocol::subscription::SubscriptionFilter;
use mcp_protocol::{ProtocolError, ProtocolVersion};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::catalog::{Catalog, HandlerFuture};
use crate::config::Config;
use crate::context::RequestContext;
use crate::error::HandlerError;
use mcp_protocol::model::content::ResourceContents;

/// Stateless request semantics over a shared [`Catalog`].
#[derive(Debug)]
pub struct McpService {
    catalog: Arc<Catalog>,
    info: Implementation,
    instructions: Option<String>,
    versions: Vec<ProtocolVersion>,
    /// The stateless subset of `versions`, checked on every request.
    stateless: Vec<ProtocolVersion>,
    page_size: usize,
    list_cache: CacheHints,
    read_cache: CacheHints,
    result_meta: Value,
    state_key: StateKey,
    state_ttl_ms: u64,
    max_input_rounds: u32,
    /// Whether the key was generated at start (single-instance only).
    pub generated_key: bool,
}

impl McpService {
    /// A service for `catalog` configured by `config`.
    pub fn new(catalog: Arc<Catalog>, config: &Config) -> Self {
        let scope = if config.cache.scope == "private" { CacheScope::Private } else { CacheScope::Public };
        let info = Implementation::new(config.server.name.clone(), config.server.version.clone());
        let result_meta = json!({ SERVER_INFO_KEY: info });
        let configured = config.mrtr.decoded_key().ok().flatten();
        let generated_key = configured.is_none();
        let key = configured.unwrap_or_else(|| {
            let mut k = uuid::Uuid::new_v4().as_bytes().to_vec();
            k.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
            k
        });
        McpService {
            state_key: StateKey::new(key).expect("keys are validated to be at least 32 bytes"),
            state_ttl_ms: config.mrtr.state_ttl_ms,
            max_input_rounds: config.legacy.max_input_rounds.max(1),
            generated_key,
            catalog,
            instructions: Some(config.server.instructions.clone()).filter(|s| !s.is_empty()),
            info,
            versions: config.protocol_versions(),
            stateless: config.protocol_versions().into_iter().filter(|v| v.is_stateless()).collect(),
            page_size: config.server.page_size,
            list_cache: CacheHints::new(config.cache.list_ttl_ms, scope),
            read_cache: CacheHints::new(config.cache.read_ttl_ms, scope),
            result_meta,
        }
    }

    /// The catalog served.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The protocol versions served, newest first.
    pub fn versions(&self) -> &[ProtocolVersion] {
        &self.versions
    }

    /// The stateless versions served (those a request may name in `_meta`).
    pub fn stateless_versions(&self) -> &[ProtocolVersion] {
        &self.stateless
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.info
    }

    /// What `server/discover` declares. Every method this service answers is
    /// declared, so clients can rely on discover instead of probing.
    pub fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            tools: Some(ListChangedCapability { list_changed: Some(true) }),
            resources: Some(ResourcesCapability { subscribe: Some(true), list_changed: Some(true) }),
            prompts: Some(ListChangedCapability { list_changed: Some(true) }),
            completions: Some(Map::new()),
            logging: Some(Map::new()),
            experimental: None,
            extensions: None,
        }
    }

    /// The notification types `subscriptions/listen` can deliver.
    pub fn supported_filter(&self) -> SubscriptionFilter {
        SubscriptionFilter {
            tools_list_changed: true,
            prompts_list_changed: true,
            resources_list_changed: true,
            resource_subscriptions: vec!["*".into()],
        }
    }

    /// Answers one request. Legacy-era results lose the fields that era does
    /// not know (`resultType`, `ttlMs`, `cacheScope`).
    pub async fn handle(&self, request: ClientRequest, ctx: RequestContext) -> Result<Value, HandlerError> {
        let legacy = !ctx.protocol_version().is_stateless();
        let mut result = self.answer(request, ctx).await?;
        if legacy {
            mcp_protocol::legacy::strip_stateless_fields(&mut result);
        }
        Ok(result)
    }

    async fn answer(&self, request: ClientRequest, ctx: RequestContext) -> Result<Value, HandlerError> {
        match request {
            ClientRequest::Discover => {
                let result = DiscoverResult {
                    result_type: ResultType::Complete,
                    supported_versions: self.versions.iter().map(|v| v.as_str().to_owned()).collect(),
                    capabilities: self.capabilities(),
                    instructions: self.instructions.clone(),
                    cache: self.read_cache,
                };
                let mut out = self.finish(&result, None)?;
                if ctx.protocol_version() == ProtocolVersion::Draft2026V1 {
                    // The seed draft carried serverInfo at the top level.
                    out.as_object_mut().map(|m| m.insert("serverInfo".into(), json!(self.info)));
                }
                Ok(out)
            }
            ClientRequest::ListTools(p) => {
                let l = self.catalog.list_tools(p.cursor.as_deref(), self.page_size)?;
                self.finish_page("tools", l.page, Some(l.cache.unwrap_or(self.list_cache)))
            }
            ClientRequest::ListResources(p) => {
                let l = self.catalog.list_resources(p.cursor.as_deref(), self.page_size)?;
                self.finish_page("resources", l.page, Some(l.cache.unwrap_or(self.list_cache)))
            }
            ClientRequest::ListResourceTemplates(p) => {
                let l = self.catalog.list_templates(p.cursor.as_deref(), self.page_size)?;
                self.finish_page("resourceTemplates", l.page, Some(l.cache.unwrap_or(self.list_cache)))
            }
            ClientRequest::ListPrompts(p) => {
                let l = self.catalog.list_prompts(p.cursor.as_deref(), self.page_size)?;
                self.finish_page("prompts", l.page, Some(l.cache.unwrap_or(self.list_cache)))
            }
            ClientRequest::CallTool(p) => {
                let tool = self
                    .catalog
                    .tool(&p.name)
                    .ok_or_else(|| HandlerError::invalid_params(format!("Unknown tool: {}", p.name)))?;
                // Computed only when a round needs it (a requestState came in, or
                // the handler asks for input): a plain call pays nothing.
                // The state binding is computed only when a round needs it (a
                // requestState came in, or the handler asks): plain calls skip it.
                let args = p.arguments.unwrap_or_default();
                let binding = || Binding::new("tools/call", &p.name, Some(&args));
                let run = || tool.call(args.clone(), ctx.clone());
                let out = self.rounds(&ctx, &binding, p.input_responses, p.request_state.as_deref(), run).await?;
                self.complete_with(out, None)
            }
            ClientRequest::ReadResource(p) => {
                let binding = || Binding::new("resources/read", &p.uri, None);
                type Reader = Box<dyn Fn() -> HandlerFuture<Vec<ResourceContents>>>;
                let (reader, cache): (Reader, _) = if let Some(r) = self.catalog.resource(&p.uri) {
                    let (uri, c, cache) = (p.uri.clone(), ctx.clone(), r.cache);
                    (Box::new(move || (r.reader)(uri.clone(), c.clone())), cache)
                } else if let Some((t, vars)) = self.catalog.match_template(&p.uri) {
                    let (uri, c, cache) = (p.uri.clone(), ctx.clone(), t.cache);
                    (Box::new(move || (t.reader)(uri.clone(), vars.clone(), c.clone())), cache)
                } else if let Some(resolved) = self.catalog.resolve(&p.uri) {
                    let r = resolved?;
                    let (uri, c, cache) = (p.uri.clone(), ctx.clone(), r.cache);
                    (Box::new(move || (r.reader)(uri.clone(), c.clone())), cache)
                } else {
                    return Err(ProtocolError::ResourceNotFound { uri: p.uri }.into());
                };
                let out = self.rounds(&ctx, &binding, p.input_responses, p.request_state.as_deref(), reader).await?;
                let out = out.map(|contents| json!({ "contents": contents }));
                self.complete_with(out, Some(cache.unwrap_or(self.read_cache)))
            }
            ClientRequest::GetPrompt(p) => {
                let prompt = self
                    .catalog
                    .prompt(&p.name)
                    .ok_or_else(|| HandlerError::invalid_params(format!("Unknown prompt: {}", p.name)))?;
                let args = p.arguments;
                let binding = || Binding::new("prompts/get", &p.name, args.as_ref());
                let run = || prompt.get(args.clone(), ctx.clone());
                let out = self.rounds(&ctx, &binding, p.input_responses, p.request_state.as_deref(), run).await?;
                self.complete_with(out, None)
            }
            ClientRequest::Complete(p) => {
                let completion = self.complete(&p)?;
                self.finish(&json!({ "completion": completion }), None)
            }
            ClientRequest::Listen(_) => {
                Err(HandlerError::internal("subscriptions/listen is served by a listener actor, not a request actor"))
            }
            other => Err(ProtocolError::MethodNotFound(other.method().to_owned()).into()),
        }
    }

    /// Runs a handler that may ask for input. Stateless era: one run; when it
    /// asks, `Ok(Err(v))` carries the `InputRequiredResult`. Legacy era: the
    /// questions go to the client as server-to-client requests on this
    /// request's stream, and the handler runs again with the answers, up to
    /// `legacy.max_input_rounds` times.
    async fn rounds<T, F>(
        &self,
        ctx: &RequestContext,
        binding: &dyn Fn() -> Binding,
        input_responses: Option<Value>,
        request_state: Option<&str>,
        run: F,
    ) -> Result<Result<T, Value>, HandlerError>
    where
        F: Fn() -> HandlerFuture<T>,
    {
        if !ctx.is_legacy() {
            self.begin_round(ctx, binding, input_responses, request_state)?;
            return match run().await {
                Err(HandlerError::InputRequired) => Ok(Err(self.input_required(ctx, binding)?)),
                other => other.map(Ok),
            };
        }
        let mut responses = Map::new();
        let mut state = None;
        for number in 1..=self.max_input_rounds {
            ctx.begin_round(number, responses.clone(), state.clone());
            match run().await {
                Err(HandlerError::InputRequired) => {
                    let round = ctx.take_round();
                    state = round.state_out.or(round.state_in);
                    if round.pending.is_empty() {
                        return Err(HandlerError::internal("the handler asked for input without a request"));
                    }
                    for (key, request) in round.pending {
                        let answer = ctx.request_client(&request).await?;
                        responses.insert(key, answer);
                    }
                }
                other => return other.map(Ok),
            }
        }
        Err(HandlerError::internal(format!("the request needed more than {} input rounds", self.max_input_rounds)))
    }

    /// Finishes a result, or passes an `InputRequiredResult` through.
    fn complete_with<T: Serialize>(
        &self,
        out: Result<T, Value>,
        cache: Option<CacheHints>,
    ) -> Result<Value, HandlerError> {
        match out {
            Ok(result) => self.finish(&result, cache),
            Err(input_required) => Ok(input_required),
        }
    }

    /// Verifies `requestState` (refused → -32602, before any handler runs),
    /// checks the shape of `inputResponses`, and opens the handler's round.
    fn begin_round(
        &self,
        ctx: &RequestContext,
        binding: &dyn Fn() -> Binding,
        input_responses: Option<Value>,
        request_state: Option<&str>,
    ) -> Result<(), HandlerError> {
        let (number, mut responses, state_in) = match request_state {
            Some(token) => {
                let p =
                    request_state::open(token, &self.state_key, &binding(), now_ms()).map_err(ProtocolError::from)?;
                (p.round + 1, p.responses, p.state)
            }
            None => (1, Map::new(), None),
        };
        match input_responses {
            None => {}
            Some(Value::Object(current)) => responses.extend(current),
            Some(_) => {
                return Err(HandlerError::invalid_params(
                    "inputResponses must be an object of responses keyed like inputRequests",
                ))
            }
        }
        ctx.begin_round(number, responses, state_in);
        Ok(())
    }

    /// The `InputRequiredResult` for a handler that asked for input: its
    /// pending requests, and a fresh sealed state carrying the answers it
    /// already used and its own state.
    fn input_required(&self, ctx: &RequestContext, binding: &dyn Fn() -> Binding) -> Result<Value, HandlerError> {
        let round = ctx.take_round();
        let mut payload =
            StatePayload::new(&binding(), self.state_ttl_ms, now_ms(), uuid::Uuid::new_v4().simple().to_string());
        payload.round = round.number.max(1);
        payload.responses =
            round.answered.iter().filter_map(|k| round.responses.get(k).map(|v| (k.clone(), v.clone()))).collect();
        payload.state = round.state_out.or(round.state_in);
        let mut m = Map::new();
        m.insert("resultType".into(), Value::String("input_required".into()));
        if !round.pending.is_empty() {
            let requests: Map<String, Value> =
                round.pending.iter().map(|(k, r)| (k.clone(), serde_json::to_value(r).unwrap_or_default())).collect();
            m.insert("inputRequests".into(), Value::Object(requests));
        }
        m.insert("requestState".into(), Value::String(request_state::seal(&payload, &self.state_key)));
        self.finish(&m, None)
    }

    fn complete(&self, p: &CompleteParams) -> Result<Completion, HandlerError> {
        let empty = Map::new();
        let context = p.context.as_ref().and_then(|c| c.get("arguments")).and_then(Value::as_object).unwrap_or(&empty);
        let completer = match &p.reference {
            CompletionRef::Prompt { name } => self
                .catalog
                .prompt(name)
                .ok_or_else(|| HandlerError::invalid_params(format!("Unknown prompt: {name}")))?
                .completer
                .clone(),
            CompletionRef::Resource { uri } => self
                .catalog
                .template(uri)
                .ok_or_else(|| HandlerError::invalid_params(format!("Unknown resource template: {uri}")))?
                .completer
                .clone(),
        };
        let values = completer.map(|c| c(&p.argument.name, &p.argument.value, context)).unwrap_or_default();
        Ok(Completion::from_candidates(values))
    }

    fn finish_page<T: Serialize>(
        &self,
        key: &str,
        page: Page<T>,
        cache: Option<CacheHints>,
    ) -> Result<Value, HandlerError> {
        let mut m = Map::new();
        m.insert(key.to_owned(), serde_json::to_value(page.items).map_err(internal)?);
        if let Some(c) = page.next_cursor {
            m.insert("nextCursor".into(), Value::String(c));
        }
        self.finish(&m, cache)
    }

    /// Adds `resultType`, caching hints and `_meta.serverInfo` to a result.
    fn finish<T: Serialize>(&self, result: &T, cache: Option<CacheHints>) -> Result<Value, HandlerError> {
        let mut value = serde_json::to_value(result).map_err(internal)?;
        let m = value.as_object_mut().ok_or_else(|| HandlerError::internal("result is not an object"))?;
        m.entry("resultType").or_insert_with(|| Value::String("complete".into()));
        if let Some(c) = cache {
            m.insert("ttlMs".into(), json!(c.ttl_ms));
            m.insert("cacheScope".into(), json!(c.cache_scope));
        }
        match m.get_mut("_meta").and_then(Value::as_object_mut) {
            Some(meta) => {
                meta.insert(SERVER_INFO_KEY.into(), self.result_meta[SERVER_INFO_KEY].clone());
            }
            None => {
                m.insert("_meta".into(), self.result_meta.clone());
            }
        }
        Ok(value)
    }
}

/// Milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn internal(e: serde_json::Error) -> HandlerError {
    HandlerError::internal(format!("could not encode the result: {e}"))
}
