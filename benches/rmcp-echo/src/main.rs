//! The official Rust SDK (rmcp 3.11) serving the same `echo` tool as
//! actix-mcp's everything catalog, configured for throughput: stateless
//! (no legacy sessions), JSON replies, no SSE keep-alive. Used by
//! `benches/compare.sh`; not part of the main workspace.
//!
//! `rmcp-echo [ADDR:PORT]` (default `127.0.0.1:8092`), single-threaded.
//!
//! For `benches/scale.sh` it also serves what actix-mcp's scale server
//! does: `sleep` (`ms` milliseconds, then `slept N ms`), `SCALE_TOOLS`
//! generated echo tools `tool_00000`…, `SCALE_RESOURCES` text resources
//! `scale://item/00000`…, and `subscriptions/listen` streams for the
//! notifications it declares.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRoute;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents,
    ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler};
use rmcp::{ErrorData, RoleServer};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoRequest {
    /// The text to send back.
    text: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct SleepRequest {
    /// Milliseconds to sleep.
    ms: u64,
}

/// The generated resources, by URI (shared by every session's handler).
type Items = Arc<BTreeMap<String, String>>;

#[derive(Debug, Clone)]
struct Echo {
    /// Shared: a stateless server makes a handler per request, and a
    /// router copied per request costs in proportion to the tools.
    tool_router: Arc<ToolRouter<Self>>,
    resources: Items,
}

/// A count from the environment variable `name` (0 when unset).
fn count(name: &str) -> usize {
    std::env::var(name).ok().map_or(0, |v| v.parse().expect("a count"))
}

/// The echo and sleep tools plus `tools` generated echo tools.
fn router(tools: usize) -> ToolRouter<Echo> {
    let mut router = Echo::tool_router();
    let schema = router.get("echo").expect("the echo tool").input_schema.clone();
    for i in 0..tools {
        let tool = Tool::new(format!("tool_{i:05}"), "Echoes `text` back (a generated tool)", schema.clone());
        router.add_route(ToolRoute::new_dyn(tool, |ctx| {
            Box::pin(async move {
                let text = ctx.arguments.as_ref().and_then(|a| a.get("text")).and_then(|t| t.as_str());
                let text = text.ok_or_else(|| ErrorData::invalid_params("text is required", None))?;
                Ok(CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(text)])))
            })
        }));
    }
    router
}

#[tool_router]
impl Echo {
    #[tool(description = "Echoes `text` back")]
    fn echo(&self, Parameters(EchoRequest { text }): Parameters<EchoRequest>) -> String {
        text
    }

    #[tool(description = "Sleeps for `ms` milliseconds")]
    async fn sleep(&self, Parameters(SleepRequest { ms }): Parameters<SleepRequest>) -> String {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        format!("slept {ms} ms")
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed().enable_resources();
        ServerConfig::new(capabilities.build())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let all: Vec<Resource> = self.resources.keys().map(|uri| Resource::new(uri, uri)).collect();
        Ok(ListResourcesResult::with_all_items(all))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match self.resources.get(&request.uri) {
            Some(text) => Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into()),
            None => Err(ErrorData::resource_not_found("no such resource", None)),
        }
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8092".into());
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = false;
    config.json_response = true;
    config.sse_keep_alive = None;
    let resources: Items = Arc::new(
        (0..count("SCALE_RESOURCES")).map(|i| (format!("scale://item/{i:05}"), format!("item {i}"))).collect(),
    );
    let tool_router = Arc::new(router(count("SCALE_TOOLS")));
    let make = move || Ok(Echo { tool_router: tool_router.clone(), resources: resources.clone() });
    let service: StreamableHttpService<Echo, LocalSessionManager> =
        StreamableHttpService::new(make, Default::default(), config);
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    // SIGINT ends it normally (its exit handlers run).
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
