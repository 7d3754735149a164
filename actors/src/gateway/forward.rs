//! Catalog items that forward to an upstream server: a tool call, a prompt,
//! a resource read goes to the upstream under the item's own name there;
//! the call's progress and log messages come back down to the caller, and
//! a caller who gives up (its stream closed, `notifications/cancelled`)
//! cancels the upstream request, and input the upstream asks for is asked
//! of the caller (see [`super::flow`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::{select, Either};
use futures::FutureExt;
use mcp_protocol::error::{ErrorData, ProtocolError};
use mcp_protocol::model::completion::{CompleteParams, Completion, CompletionRef};
use mcp_protocol::model::prompts::{self, GetPromptResult};
use mcp_protocol::model::resources;
use mcp_protocol::model::tools::{self, CallToolResult};
use mcp_protocol::model::{CacheHints, CacheScope, ClientCapabilities, JsonObject, ResourceContents};
use mcp_protocol::params::Params;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::Value;

use super::flow::{Event, Flow, Parked};
use super::status::UpstreamStatus;
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;
use crate::catalog::{Prompt, Resource, ResourceTemplate, TaskSupport, Tool};
use crate::client::{Client, ClientError};
use crate::config::UpstreamConfig;

/// One upstream connection as its forwarding items see it.
pub(crate) struct Link {
    /// The upstream's configuration (its name, its time limit).
    config: Arc<UpstreamConfig>,
    /// The connection (it declared every input capability).
    pub(crate) client: Client,
    /// Requests waiting for their caller's input.
    parked: Arc<Parked>,
    /// Where the upstream's calls are counted for the status page.
    status: Arc<Mutex<UpstreamStatus>>,
}

/// The handler state of a request whose upstream flow is parked.
#[derive(serde::Serialize, serde::Deserialize)]
struct Waiting {
    flow: String,
}

impl Link {
    pub(crate) fn new(
        config: Arc<UpstreamConfig>,
        client: Client,
        parked: Arc<Parked>,
        status: Arc<Mutex<UpstreamStatus>>,
    ) -> Self {
        Link { config, client, parked, status }
    }

    /// Counts a finished upstream request (its metrics and its status row).
    fn timed(&self, method: &'static str, error_type: Option<&'static str>, took: Duration) {
        crate::telemetry::upstream_call(&self.config.name, method, error_type, took);
        let mut s = self.status.lock().unwrap_or_else(|p| p.into_inner());
        s.calls += 1;
        s.errors += u64::from(error_type.is_some());
        s.call_time += took;
    }

    /// Whether the upstream completes arguments (`completions`).
    fn completes(&self) -> bool {
        self.client.server().capabilities.completions.is_some()
    }

    /// The scopes a caller needs for every item of this upstream.
    pub(crate) fn scopes(&self) -> &[String] {
        &self.config.scopes
    }

    /// The capabilities a caller's request declares upstream: the input
    /// ones of its own (the upstream connection declared them all, so that
    /// the upstream may ask; a stateless upstream, and a legacy one that
    /// reads them, sees what this caller can give).
    fn caller_capabilities(ctx: &RequestContext) -> ClientCapabilities {
        let declared = ctx.client_capabilities();
        ClientCapabilities {
            elicitation: declared.elicitation.clone(),
            sampling: declared.sampling.clone(),
            roots: declared.roots.clone(),
            ..Default::default()
        }
    }

    /// `method` with `params` upstream (or, on a caller's retry, the flow
    /// its state names), its notifications passed to `ctx`, the input it
    /// asks for asked of the caller, given up when the caller gives up; the
    /// result decoded as `T`.
    async fn forward<T: Answered>(
        &self,
        method: &'static str,
        params: impl Into<Params>,
        ctx: &RequestContext,
    ) -> Result<T, HandlerError> {
        let mut flow = match ctx.handler_state::<Waiting>() {
            Some(w) => self.parked.take(&w.flow).ok_or_else(|| {
                HandlerError::invalid_params(format!(
                    "the call to upstream {} that asked for this input is no longer waiting \
                     (it expired, or another instance holds it)",
                    self.config.name
                ))
            })?,
            None => {
                let caps = Some(Self::caller_capabilities(ctx));
                let progress = ctx.meta().progress_token.is_some();
                let limit = Duration::from_millis(self.config.timeout_ms);
                Flow::start(&self.client, method, params.into(), caps, limit, progress)
            }
        };
        // A call that ends with no outcome (its caller went away) is timed as cancelled.
        let mut timing = Unfinished { link: self, method, started: flow.started, armed: true };
        loop {
            if !flow.outstanding.is_empty() {
                // What the caller answered goes upstream; the rest is asked (again).
                let mut waiting = Vec::new();
                for out in std::mem::take(&mut flow.outstanding) {
                    match ctx.ask::<Value>(&out.key, out.request.clone())? {
                        Some(answer) => out.answer(answer),
                        None => waiting.push(out),
                    }
                }
                if !waiting.is_empty() {
                    flow.outstanding = waiting;
                    // Parked, not finished: timed when a retry ends it.
                    timing.armed = false;
                    ctx.set_handler_state(&Waiting { flow: self.parked.park(flow) })?;
                    return Err(ctx.input_required());
                }
            }
            let next = {
                let cancelled = std::pin::pin!(ctx.cancellation().cancelled());
                match select(std::pin::pin!(flow.next()), cancelled).await {
                    Either::Left((event, _)) => event,
                    Either::Right(_) => {
                        let why = format!("the call to upstream {} was cancelled", self.config.name);
                        return Err(HandlerError::internal(why));
                    }
                }
            };
            match next {
                Some(Event::Progress(p)) => {
                    ctx.progress(p.progress, p.total, p.message.as_deref()).await;
                }
                Some(Event::Log(m)) => {
                    ctx.log(m.level, m.logger.as_deref(), m.data).await;
                }
                Some(Event::Input { method, params, reply }) => {
                    flow.ask(method, params, reply);
                    flow.gather().await;
                }
                Some(Event::Done(Ok(raw))) => {
                    let result = self.decode::<T>(method, &raw);
                    timing.finish(match &result {
                        Ok(r) if r.failed() => Some("tool_error"),
                        Ok(_) => None,
                        Err(_) => Some("malformed"),
                    });
                    return result;
                }
                Some(Event::Done(Err(e))) => {
                    timing.finish(Some(error_type(&e)));
                    return Err(self.error(e));
                }
                None => {
                    timing.finish(Some("transport"));
                    let why = format!("the call to upstream {} ended", self.config.name);
                    return Err(HandlerError::internal(why));
                }
            }
        }
    }

    /// The upstream's result, as it wrote it, read once into what the
    /// caller gets.
    fn decode<T: DeserializeOwned>(&self, method: &str, raw: &RawValue) -> Result<T, HandlerError> {
        serde_json::from_str(raw.get()).map_err(|e| {
            HandlerError::internal(format!(
                "upstream {} answered {method} with a malformed result: {e}",
                self.config.name
            ))
        })
    }

    /// An upstream's failure as the caller's error: a missing capability
    /// or an unknown resource (told by its data, whatever the upstream
    /// era's code) in the caller's era's code, other JSON-RPC errors as they
    /// were, anything else naming the upstream.
    fn error(&self, e: ClientError) -> HandlerError {
        let member = |e: &ErrorData, k: &str| e.data.as_ref().and_then(|d| d.get(k)).cloned();
        match e {
            ClientError::Protocol(e) if member(&e, "requiredCapabilities").is_some() => {
                match serde_json::from_value(member(&e, "requiredCapabilities").unwrap_or_default()) {
                    Ok(required) => {
                        ProtocolError::MissingCapability { required: Box::new(required), message: e.message }.into()
                    }
                    Err(_) => HandlerError::internal(e.message),
                }
            }
            ClientError::Protocol(e)
                if matches!(e.code.0, -32002 | -32602) && member(&e, "uri").is_some_and(|u| u.is_string()) =>
            {
                let uri = member(&e, "uri").and_then(|u| u.as_str().map(str::to_owned)).unwrap_or_default();
                ProtocolError::ResourceNotFound { uri }.into()
            }
            ClientError::Protocol(e) => HandlerError::Rpc(e),
            other => HandlerError::internal(format!("upstream {}: {other}", self.config.name)),
        }
    }
}

/// Times an upstream call that ends without its outcome (the caller gave
/// up, or went away and its handler was dropped, which also cancels the
/// upstream request) as `cancelled`, unless disarmed.
struct Unfinished<'a> {
    link: &'a Link,
    method: &'static str,
    started: std::time::Instant,
    armed: bool,
}

impl Unfinished<'_> {
    /// Times the call as ended with `error_type` (`None`: a success).
    fn finish(&mut self, error_type: Option<&'static str>) {
        self.armed = false;
        self.link.timed(self.method, error_type, self.started.elapsed());
    }
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.link.timed(self.method, Some("cancelled"), self.started.elapsed());
        }
    }
}

/// `error.type` of an upstream request that failed: its JSON-RPC code, or
/// what failed.
fn error_type(e: &ClientError) -> &'static str {
    match e {
        ClientError::Protocol(e) => e.code.label().unwrap_or("protocol"),
        ClientError::Timeout(_) => "timeout",
        ClientError::Cancelled => "cancelled",
        _ => "transport",
    }
}

/// What an upstream's result is read into, and whether it says it failed
/// (a tool's `isError`).
trait Answered: DeserializeOwned {
    fn failed(&self) -> bool {
        false
    }
}

impl Answered for CallToolResult {
    fn failed(&self) -> bool {
        self.is_error == Some(true)
    }
}

impl Answered for GetPromptResult {}

/// An upstream's error about its item `own`, as the caller knows the item:
/// `own` in its message (as a whole name) becomes `served`, so that
/// "Unknown tool: nope" reads "Unknown tool: git__nope".
fn as_served(e: HandlerError, own: &str, served: &str) -> HandlerError {
    match e {
        HandlerError::Rpc(mut d) => {
            d.message = renamed(&d.message, own, served);
            HandlerError::Rpc(d)
        }
        other => other,
    }
}

/// `text` with each occurrence of `own` that stands as a name of its own
/// (not inside a longer name) replaced by `served`.
fn renamed(text: &str, own: &str, served: &str) -> String {
    let in_name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if own.is_empty() || own == served {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(own) {
        let (before, after) = (&rest[..at], &rest[at + own.len()..]);
        let alone = !before.ends_with(in_name) && !after.starts_with(in_name);
        out.push_str(before);
        out.push_str(if alone { served } else { own });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The upstream's tool `def`, served as `served`.
pub(crate) fn tool(link: &Arc<Link>, def: tools::Tool, served: String) -> Tool {
    let (link2, own, name) = (link.clone(), def.name.clone(), served.clone());
    let mut tool =
        Tool::with_handler(served.clone(), def.description.clone(), def.input_schema.clone(), move |args, ctx| {
            let (link, own, name) = (link2.clone(), own.clone(), name.clone());
            // The caller's arguments go upstream as the text they came in.
            let params = Params::new(JsonObject::from_iter([("name".into(), own.as_str().into())]))
                .with_raw("arguments", args.clone());
            async move {
                let called = link.forward::<CallToolResult>("tools/call", params, &ctx).await;
                called.map_err(|e| as_served(e, &own, &name))
            }
            .boxed_local()
        });
    tool.def = tools::Tool { name: served, ..def };
    let tool = tool.with_upstream(link.config.name.as_str());
    // A long upstream call becomes a task of this server for a caller that
    // declares the Tasks extension (after `tasks.task_after_ms`).
    tool.with_task_support(TaskSupport::Optional)
}

/// The upstream's prompt `def`, served as `served`.
pub(crate) fn prompt(link: &Arc<Link>, def: prompts::Prompt, served: String) -> Prompt {
    let (link2, own, name) = (link.clone(), def.name.clone(), served.clone());
    let own_name = own.clone();
    let mut prompt = Prompt::new(served.clone(), def.description.clone().unwrap_or_default(), move |args, ctx| {
        let (link, own, name) = (link2.clone(), own.clone(), name.clone());
        async move {
            let arguments: JsonObject = args.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
            let params =
                JsonObject::from_iter([("name".into(), own.as_str().into()), ("arguments".into(), arguments.into())]);
            let got = link.forward::<GetPromptResult>("prompts/get", params, &ctx).await;
            got.map_err(|e| as_served(e, &own, &name))
        }
    });
    prompt.def = prompts::Prompt { name: served, ..def };
    let prompt = prompt.with_upstream(link.config.name.as_str());
    match link.completes() {
        true => prompt.with_completion(completer(link, CompletionRef::Prompt { name: own_name })),
        false => prompt,
    }
}

/// Completes upstream, under the item's own reference there.
fn completer(
    link: &Arc<Link>,
    own: CompletionRef,
) -> impl Fn(CompleteParams, RequestContext) -> futures::future::LocalBoxFuture<'static, Result<Completion, HandlerError>>
       + Send
       + Sync
       + 'static
       + use<> {
    let link = link.clone();
    move |p, ctx| {
        let (link, own) = (link.clone(), own.clone());
        Box::pin(async move {
            #[derive(serde::Deserialize)]
            struct Completed {
                completion: Completion,
            }
            impl Answered for Completed {}
            let params = CompleteParams { reference: own, ..p };
            let params = match serde_json::to_value(params) {
                Ok(Value::Object(params)) => params,
                _ => return Err(HandlerError::internal("completion params are not an object")),
            };
            let done: Completed = link.forward("completion/complete", params, &ctx).await?;
            Ok(done.completion)
        })
    }
}

/// Reads `uri` (as served: with the upstream's `uri_prefix`) upstream; the
/// contents come back under served URIs.
async fn read(link: Arc<Link>, uri: String, ctx: RequestContext) -> Result<Vec<ResourceContents>, HandlerError> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Read {
        contents: Vec<ResourceContents>,
        ttl_ms: Option<u64>,
        cache_scope: Option<CacheScope>,
    }
    impl Answered for Read {}
    let prefix = link.config.uri_prefix.as_str();
    let own = uri.strip_prefix(prefix).unwrap_or(&uri);
    let params = JsonObject::from_iter([("uri".into(), own.into())]);
    let mut read: Read = link.forward("resources/read", params, &ctx).await.map_err(|e| match e {
        // -32002 is only ever "resource not found" (2025-11-25 and before),
        // with or without `data.uri`: this read's URI, in the caller's code.
        HandlerError::Rpc(e) if e.code.0 == -32002 => ProtocolError::ResourceNotFound { uri: uri.clone() }.into(),
        other => other,
    })?;
    // The upstream's hints for this read (none: stale at once, as the specification reads their absence).
    ctx.set_cache_hints(CacheHints::new(read.ttl_ms.unwrap_or(0), read.cache_scope.unwrap_or_default()));
    if !prefix.is_empty() {
        for c in &mut read.contents {
            let (ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. }) = c;
            *uri = format!("{prefix}{uri}");
        }
    }
    Ok(read.contents)
}

/// The upstream's resource `def`, served under `served` (its URI, with the
/// upstream's `uri_prefix`).
pub(crate) fn resource(link: &Arc<Link>, def: resources::Resource, served: String) -> Resource {
    let reads = link.clone();
    let mut resource = Resource::new(served.clone(), def.name.clone(), move |uri, ctx| read(reads.clone(), uri, ctx));
    resource.def = resources::Resource { uri: served, ..def };
    resource.with_upstream(link.config.name.as_str())
}

/// The upstream's template `def`, served as `served` (its URI template,
/// with the upstream's `uri_prefix`); `None` when the template is beyond
/// what this server matches (RFC 6570 level 1).
pub(crate) fn template(link: &Arc<Link>, def: resources::ResourceTemplate, served: &str) -> Option<ResourceTemplate> {
    let reads = link.clone();
    let mut template =
        ResourceTemplate::new(served, def.name.clone(), move |uri, _vars, ctx| read(reads.clone(), uri, ctx)).ok()?;
    let own = CompletionRef::Resource { uri: def.uri_template.clone() };
    template.def = resources::ResourceTemplate { uri_template: served.to_owned(), ..def };
    let template = template.with_upstream(link.config.name.as_str());
    match link.completes() {
        true => Some(template.with_completion(completer(link, own))),
        false => Some(template),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::ErrorCode;

    #[test]
    fn an_upstream_error_names_the_item_as_the_caller_called_it() {
        assert_eq!(renamed("Unknown tool: nope", "nope", "git__nope"), "Unknown tool: git__nope");
        assert_eq!(renamed("echo: echoes are echo's", "echo", "a__echo"), "a__echo: echoes are a__echo's");
        assert_eq!(renamed("no echo_x or x.echo", "echo", "a__echo"), "no echo_x or x.echo");
        let e = HandlerError::Rpc(ErrorData::new(ErrorCode::INVALID_PARAMS, "Unknown tool: nope"));
        let HandlerError::Rpc(d) = as_served(e, "nope", "git__nope") else { panic!("an Rpc error") };
        assert_eq!((d.code, d.message.as_str()), (ErrorCode::INVALID_PARAMS, "Unknown tool: git__nope"));
    }
}
