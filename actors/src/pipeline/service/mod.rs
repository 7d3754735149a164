//! [`McpService`]: answers one parsed [`ClientRequest`] from the catalog.
//!
//! This is the part of a request actor's work that knows MCP semantics but
//! no transport: it returns the result object (with `resultType`, caching
//! hints and `_meta.serverInfo`) or a [`HandlerError`]. One file per method
//! family, as each arm of [`McpService::handle`] is one line: `discover`,
//! `tools`, `resources` (with templates), `prompts`, `completion`; `rounds`
//! runs handlers that ask the client for input, in either era; `envelope`
//! finishes results; [`sealer`] owns the `requestState` key; `initialize`
//! answers a legacy client's handshake; `skills` serves the Skills extension.

mod answer;
mod completion;
mod discover;
mod envelope;
mod events;
mod gate;
mod initialize;
mod prompts;
mod resources;
mod rounds;
pub(crate) mod sealer;
mod skills;
mod task_requests;
mod tools;
mod webhooks;

use std::sync::Arc;

use mcp_protocol::meta::SERVER_INFO_KEY;
use mcp_protocol::model::capabilities::{ListChangedCapability, ResourcesCapability, ServerCapabilities};
use mcp_protocol::model::{CacheHints, Implementation};
use mcp_protocol::request::ClientRequest;
use mcp_protocol::subscription::SubscriptionFilter;
use mcp_protocol::ProtocolVersion;
use serde_json::{json, Map, Value};

use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;
use crate::catalog::{Catalog, Tool};
use crate::config::Config;
use sealer::StateSealer;

pub(crate) use answer::Answer;

/// The task service `[tasks]` asks for: in Redis (`tasks.in_redis`), else
/// in memory (also when the Redis URL is unusable, which
/// [`Config::validate`] refuses, with an error logged).
fn task_service(
    config: &Config,
    clock: Arc<dyn crate::facts::clock::Clock>,
    log: &slog::Logger,
) -> crate::tasks::TaskService {
    let t = &config.tasks;
    #[cfg(not(feature = "redis"))]
    let _ = log;
    #[cfg(feature = "redis")]
    if t.in_redis(config.hub.backend) {
        let prefix = &config.hub.redis_channel_prefix;
        let store = crate::tasks::RedisStore::new(config.redis_target(), prefix, t.max_tasks, clock.clone()).map(|s| {
            s.with_share(t.max_tasks_per_subject).with_wait(config.redis.min_replicas, config.redis.wait_timeout_ms)
        });
        match store {
            Ok(store) => return crate::tasks::TaskService::with_store(t, clock, Arc::new(store)),
            Err(e) => slog::error!(log, "tasks kept in memory: the Redis store cannot be used"; "error" => e),
        }
    }
    crate::tasks::TaskService::in_memory(t, clock)
}

/// Stateless request semantics over a shared [`Catalog`].
#[derive(Debug)]
pub(crate) struct McpService {
    catalog: Arc<Catalog>,
    info: Implementation,
    instructions: Option<String>,
    versions: Vec<ProtocolVersion>,
    /// The stateless subset of `versions`, checked on every request.
    stateless: Vec<ProtocolVersion>,
    page_size: usize,
    /// Which items a caller's scopes let it see in lists.
    scopes: crate::auth::ScopePolicy,
    list_cache: CacheHints,
    read_cache: CacheHints,
    result_meta: Value,
    /// `result_meta` and `resultType` as members to append to a tool's result.
    tool_members: answer::ToolMembers,
    sealer: StateSealer,
    max_input_rounds: u32,
    /// `metrics.tool_labels`.
    tool_labels: bool,
    /// The Tasks extension (`tasks.enabled`).
    tasks: Option<Arc<crate::tasks::TaskService>>,
    /// The audit log of calls (`[audit]`).
    audit: Option<Arc<crate::audit::AuditLog>>,
    /// The policy deciding calls and lists (`[policy]`), swapped whole by a
    /// reload (a request keeps the one it started with).
    policy: arc_swap::ArcSwapOption<crate::policy::Policy>,
    /// The quotas counting calls (`[[quotas]]`), likewise.
    quotas: arc_swap::ArcSwapOption<crate::quota::Quotas>,
    /// How long polls and streams are served (`[events]`), and the open streams.
    events: events::EventLimits,
    /// Webhook subscriptions (`[events.webhooks]`).
    #[cfg(feature = "webhooks")]
    webhooks: crate::webhooks::Webhooks,
}

impl McpService {
    /// A service for `catalog` configured by `config`, on the system clock
    /// (the server builds its own with [`McpService::with_clock`]).
    #[cfg(test)]
    pub(crate) fn new(catalog: Arc<Catalog>, config: &Config) -> Self {
        Self::with_clock(
            catalog,
            config,
            Arc::new(crate::facts::clock::SystemClock),
            &crate::telemetry::logging::discard(),
        )
    }

    /// A service whose `requestState` expiry reads time from `clock`; `log`
    /// hears, once, that the `requestState` key was generated for this
    /// process when a multi round-trip request first needs it.
    pub(crate) fn with_clock(
        catalog: Arc<Catalog>,
        config: &Config,
        clock: Arc<dyn crate::facts::clock::Clock>,
        log: &slog::Logger,
    ) -> Self {
        let scope = config.cache.scope;
        let info = Implementation::new(config.server.name.clone(), config.server.version.clone());
        let result_meta = json!({ SERVER_INFO_KEY: info });
        let sealer =
            StateSealer::from_config(&config.mrtr).unwrap_or_else(|_| StateSealer::generate(config.mrtr.state_ttl_ms));
        let sealer = sealer.with_clock(clock.clone()).with_logger(log.clone());
        let tasks = config.tasks.enabled.then(|| Arc::new(task_service(config, clock.clone(), log)));
        #[cfg(feature = "webhooks")]
        let webhooks = webhooks::handle(&catalog, config);
        if config.events.test_controls {
            catalog.set_state(crate::catalogs::everything::TestControls);
        }
        McpService {
            sealer,
            max_input_rounds: config.legacy.max_input_rounds.max(1),
            catalog,
            instructions: Some(config.server.instructions.clone()).filter(|s| !s.is_empty()),
            info,
            versions: config.protocol_versions(),
            stateless: config.protocol_versions().into_iter().filter(|v| v.is_stateless()).collect(),
            page_size: config.server.page_size,
            events: events::EventLimits::new(config),
            #[cfg(feature = "webhooks")]
            webhooks,
            scopes: crate::auth::ScopePolicy::new(config.auth.required_scopes.clone(), &config.auth.scope_implies),
            list_cache: CacheHints::new(config.cache.list_ttl_ms, scope),
            read_cache: CacheHints::new(config.cache.read_ttl_ms, scope),
            tool_members: answer::ToolMembers::new(&result_meta),
            result_meta,
            tool_labels: config.metrics.tool_labels,
            tasks,
            audit: None,
            policy: arc_swap::ArcSwapOption::empty(),
            quotas: arc_swap::ArcSwapOption::empty(),
        }
    }

    /// Calls and lists decided by `policy` from now on (`None`: no policy).
    pub(crate) fn set_policy(&self, policy: Option<Arc<crate::policy::Policy>>) {
        self.policy.store(policy);
    }

    /// The policy, when `[policy]` names one.
    pub(crate) fn policy(&self) -> Option<Arc<crate::policy::Policy>> {
        self.policy.load_full()
    }

    /// Calls counted by `quotas` from now on (`None`: no quotas).
    pub(crate) fn set_quotas(&self, quotas: Option<Arc<crate::quota::Quotas>>) {
        self.quotas.store(quotas);
    }

    /// The quotas, when `[[quotas]]` sets any.
    pub(crate) fn quotas(&self) -> Option<Arc<crate::quota::Quotas>> {
        self.quotas.load_full()
    }

    /// This service with its calls recorded in `audit`.
    pub(crate) fn with_audit(mut self, audit: Option<crate::audit::AuditLog>) -> Self {
        self.audit = audit.map(Arc::new);
        self
    }

    /// The audit log of calls, when `[audit]` names one.
    pub(crate) fn audit(&self) -> Option<&Arc<crate::audit::AuditLog>> {
        self.audit.as_ref()
    }

    /// The `gen_ai_tool_name` label of a `tools/call` of `name`, when
    /// `metrics.tool_labels` is on: the name if the catalog has the tool,
    /// else `_other` (label values stay bounded by the catalog).
    pub(crate) fn tool_label(&self, name: &str) -> Option<Arc<str>> {
        if !self.tool_labels {
            return None;
        }
        Some(match self.catalog.tool(name) {
            Some(tool) => Arc::from(tool.def.name.as_str()),
            None => Arc::from("_other"),
        })
    }

    /// Whether a list shows the caller an item needing `scopes`: always
    /// without an authenticated caller, else when its token grants them
    /// ("the tools currently available to the requesting client").
    fn visible(&self, ctx: &RequestContext, scopes: &[String]) -> bool {
        match ctx.auth() {
            None => true,
            Some(id) => scopes.iter().all(|s| self.scopes.grants(&id.scopes, s)),
        }
    }

    /// A list page's caching hints: the items' own or the configured ones,
    /// private when the page was chosen for an authenticated caller.
    fn list_hints(&self, ctx: &RequestContext, own: Option<CacheHints>) -> CacheHints {
        let mut hints = own.unwrap_or(self.list_cache);
        if ctx.auth().is_some() {
            hints.cache_scope = mcp_protocol::model::CacheScope::Private;
        }
        hints
    }

    /// The Tasks extension's service (`tasks.enabled`).
    pub(crate) fn tasks(&self) -> Option<&Arc<crate::tasks::TaskService>> {
        self.tasks.as_ref()
    }

    /// The catalog served.
    pub(crate) fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The protocol versions served, newest first.
    pub(crate) fn versions(&self) -> &[ProtocolVersion] {
        &self.versions
    }

    /// The stateless versions served (those a request may name in `_meta`).
    pub(crate) fn stateless_versions(&self) -> &[ProtocolVersion] {
        &self.stateless
    }

    /// The server's identity.
    pub(crate) fn info(&self) -> &Implementation {
        &self.info
    }

    /// The `instructions` of `server/discover` and `initialize`.
    pub(crate) fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// What `server/discover` declares. Every method this service answers is
    /// declared, so clients can rely on discover instead of probing.
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            tools: Some(ListChangedCapability { list_changed: Some(true) }),
            resources: Some(ResourcesCapability { subscribe: Some(true), list_changed: Some(true) }),
            prompts: Some(ListChangedCapability { list_changed: Some(true) }),
            completions: Some(Map::new()),
            logging: Some(Map::new()),
            experimental: None,
            extensions: self.extensions(),
        }
    }

    /// The extensions declared: Tasks (`tasks.enabled`), Skills (the catalog
    /// serves skills, with `directoryRead`), MCP Apps (it serves a view),
    /// Events (it serves an event type; not `listChanged` yet).
    fn extensions(&self) -> Option<Map<String, Value>> {
        let mut out = Map::new();
        if self.tasks.is_some() {
            out.extend([mcp_protocol::tasks::server_capability()]);
        }
        if self.catalog.serves_skills() {
            out.extend([mcp_protocol::skills::server_capability(true)]);
        }
        if self.catalog.serves_views() {
            out.extend([mcp_protocol::apps::server_capability()]);
        }
        if self.catalog.serves_events() {
            out.insert(mcp_protocol::events::EXTENSION.into(), mcp_protocol::events::capability(true));
        }
        Some(out).filter(|m| !m.is_empty())
    }

    /// The notification types `subscriptions/listen` can deliver.
    pub(crate) fn supported_filter(&self) -> SubscriptionFilter {
        SubscriptionFilter {
            resource_subscriptions: vec!["*".into()],
            task_ids: if self.tasks.is_some() { vec!["*".into()] } else { Vec::new() },
            events_list_changed: self.catalog.serves_events(),
            ..SubscriptionFilter::every_list_change()
        }
    }

    /// Answers one request (`tool`: the one a `tools/call` names, when
    /// admission found it already). Legacy-era results lose the fields that
    /// era does not know (`resultType`, `ttlMs`, `cacheScope`).
    pub(crate) async fn handle(
        &self,
        request: ClientRequest,
        tool: Option<Arc<Tool>>,
        ctx: RequestContext,
    ) -> Result<Answer, HandlerError> {
        let legacy = ctx.in_session();
        if ctx.denied() {
            // As for an unknown item, so that a policy cannot be probed.
            return Err(refused_as_unknown(&request));
        }
        let answer = match (request, tool) {
            (ClientRequest::CallTool(p), Some(tool)) => self.call_found_tool(tool, p, ctx).await,
            // Boxed: the dispatch to every other method is twice the size of
            // a tool call's future, and a call held open (a slow tool, a
            // stream) would carry that room for as long as it runs.
            (request, _) => Box::pin(self.answer(request, ctx)).await,
        };
        match answer? {
            Answer::Tree(mut result) if legacy => {
                mcp_protocol::legacy::strip_stateless_fields(&mut result);
                Ok(Answer::Tree(result))
            }
            answer => Ok(answer),
        }
    }
}

/// -32601 for a method of an extension the server does not declare
/// (`served`: whether it does), as if the method did not exist.
fn offered(served: bool, method: &str) -> Result<(), HandlerError> {
    if served {
        Ok(())
    } else {
        Err(mcp_protocol::ProtocolError::MethodNotFound(method.to_owned()).into())
    }
}

/// The error a call of an unknown item gets, for a call the policy denied.
fn refused_as_unknown(request: &ClientRequest) -> HandlerError {
    match request {
        ClientRequest::CallTool(p) => HandlerError::unknown_tool(&p.name),
        ClientRequest::GetPrompt(p) => HandlerError::unknown_prompt(&p.name),
        ClientRequest::ReadResource(p) => mcp_protocol::ProtocolError::ResourceNotFound { uri: p.uri.clone() }.into(),
        ClientRequest::PollEvents(mcp_protocol::events::PollParams { subscription, .. })
        | ClientRequest::StreamEvents(mcp_protocol::events::StreamParams { subscription })
        | ClientRequest::SubscribeEvents(mcp_protocol::events::webhook::SubscribeParams { subscription, .. }) => {
            let unknown = mcp_protocol::events::EventError::UnknownEvent(subscription.name.clone());
            HandlerError::from(unknown.to_error_data())
        }
        ClientRequest::UnsubscribeEvents(p) => {
            let unknown = mcp_protocol::events::EventError::UnknownEvent(p.name.clone());
            HandlerError::from(unknown.to_error_data())
        }
        other => mcp_protocol::ProtocolError::MethodNotFound(other.method().to_owned()).into(),
    }
}

// The dispatch, generated from the protocol crate's one list of methods
// (`mcp_protocol::client_requests!`): each request goes to the service
// method the list names for it, all of one shape —
// `async fn name(&self, params, ctx) -> Result<Answer, HandlerError>`. A
// method added to the list without its handler does not compile.
macro_rules! dispatch {
    ($(
        $(#[$doc:meta])*
        $variant:ident($params:ty) = $constant:ident $wire:literal, $handler:ident
            $(=> $kind:ident($field:ident $member:literal))?;
    )*) => {
        impl McpService {
            /// Answers one request with its method's handler.
            async fn answer(&self, request: ClientRequest, ctx: RequestContext) -> Result<Answer, HandlerError> {
                match request {
                    $( ClientRequest::$variant(p) => self.$handler(p, ctx).await, )*
                    // The enum is open to new methods (`non_exhaustive`), but
                    // this match is generated from the same list as it.
                    #[allow(unreachable_patterns)]
                    other => Err(mcp_protocol::ProtocolError::MethodNotFound(other.method().to_owned()).into()),
                }
            }
        }
    };
}

mcp_protocol::client_requests!(dispatch);

impl McpService {
    /// `subscriptions/listen` is served by a listener, never by the service.
    async fn listen(
        &self,
        _: mcp_protocol::subscription::ListenParams,
        _: RequestContext,
    ) -> Result<Answer, HandlerError> {
        Err(HandlerError::internal("subscriptions/listen is served by a listener"))
    }
}
