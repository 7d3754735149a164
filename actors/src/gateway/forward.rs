//! Catalog items that forward to an upstream server: a tool call, a prompt,
//! a resource read goes to the upstream under the item's own name there;
//! the call's progress and log messages come back down to the caller, and
//! a caller who gives up (its stream closed, `notifications/cancelled`)
//! cancels the upstream request.

use std::sync::Arc;
use std::time::Duration;

use futures::future::{select, Either};
use mcp_protocol::error::{ErrorCode, ErrorData};
use mcp_protocol::model::logging::LogMessage;
use mcp_protocol::model::progress::ProgressParams;
use mcp_protocol::model::prompts::{self, GetPromptResult};
use mcp_protocol::model::resources;
use mcp_protocol::model::tools::{self, CallToolResult};
use mcp_protocol::model::ResourceContents;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use crate::catalog::error::HandlerError;
use crate::catalog::{Prompt, Resource, ResourceTemplate, Tool};
use crate::client::{Client, ClientError, RequestOptions};
use crate::RequestContext;

/// One upstream connection as its forwarding items see it.
pub(crate) struct Link {
    /// The upstream's configured name, for errors.
    pub(crate) upstream: String,
    pub(crate) client: Client,
    /// Each request's time limit.
    pub(crate) timeout: Duration,
}

/// A message of a call's answer that goes down to the caller.
enum Note {
    Progress(ProgressParams),
    Log(Value),
}

impl Link {
    /// `method` with `params` upstream, its notes passed to `ctx`, given up
    /// when the caller gives up; the result decoded as `T`.
    async fn forward<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        ctx: &RequestContext,
    ) -> Result<T, HandlerError> {
        let (tx, mut notes) = mpsc::unbounded_channel();
        let progress = tx.clone();
        let mut options = RequestOptions::new().timeout(self.timeout).on_log(move |v| {
            let _ = tx.send(Note::Log(v));
        });
        if ctx.meta().progress_token.is_some() {
            options = options.on_progress(move |p| {
                let _ = progress.send(Note::Progress(p));
            });
        }
        let call = self.client.request_with(method, params, options);
        let mut call = std::pin::pin!(call);
        let result = loop {
            let cancelled = std::pin::pin!(ctx.cancellation().cancelled());
            let note = std::pin::pin!(notes.recv());
            match select(call.as_mut(), select(note, cancelled)).await {
                Either::Left((result, _)) => break result,
                Either::Right((Either::Left((Some(note), _)), _)) => pass_down(note, ctx).await,
                // The call's callbacks live as long as the call.
                Either::Right((Either::Left((None, _)), _)) => break call.as_mut().await,
                Either::Right((Either::Right(_), _)) => {
                    return Err(HandlerError::internal(format!("the call to upstream {} was cancelled", self.upstream)))
                }
            }
        };
        let value = result.map_err(|e| self.error(e))?;
        serde_json::from_value(value).map_err(|e| {
            HandlerError::internal(format!("upstream {} answered {method} with a malformed result: {e}", self.upstream))
        })
    }

    /// An upstream's failure as the caller's error: its JSON-RPC errors as
    /// they were, anything else naming the upstream.
    fn error(&self, e: ClientError) -> HandlerError {
        match e {
            ClientError::Protocol { code, message, data } => {
                let code = i32::try_from(code).unwrap_or(ErrorCode::INTERNAL_ERROR.0);
                let mut d = ErrorData::new(ErrorCode(code), message);
                d.data = data;
                HandlerError::Rpc(d)
            }
            other => HandlerError::internal(format!("upstream {}: {other}", self.upstream)),
        }
    }
}

async fn pass_down(note: Note, ctx: &RequestContext) {
    match note {
        Note::Progress(p) => {
            ctx.progress(p.progress, p.total, p.message.as_deref()).await;
        }
        Note::Log(v) => {
            if let Ok(m) = serde_json::from_value::<LogMessage>(v) {
                ctx.log(m.level, m.logger.as_deref(), m.data).await;
            }
        }
    }
}

/// The upstream's tool `def`, served as `served`.
pub(crate) fn tool(link: &Arc<Link>, def: tools::Tool, served: String) -> Tool {
    let (link2, own) = (link.clone(), def.name.clone());
    let mut tool = Tool::raw(served.clone(), def.description.clone(), def.input_schema.clone(), move |args, ctx| {
        let (link, own) = (link2.clone(), own.clone());
        async move {
            let params = json!({ "name": own, "arguments": Value::Object(args) });
            link.forward::<CallToolResult>("tools/call", params, &ctx).await
        }
    });
    tool.def = tools::Tool { name: served, ..def };
    tool
}

/// The upstream's prompt `def`, served as `served`.
pub(crate) fn prompt(link: &Arc<Link>, def: prompts::Prompt, served: String) -> Prompt {
    let (link2, own) = (link.clone(), def.name.clone());
    let mut prompt = Prompt::new(served.clone(), def.description.clone().unwrap_or_default(), move |args, ctx| {
        let (link, own) = (link2.clone(), own.clone());
        async move {
            let arguments: Map<String, Value> = args.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
            let params = json!({ "name": own, "arguments": arguments });
            link.forward::<GetPromptResult>("prompts/get", params, &ctx).await
        }
    });
    prompt.def = prompts::Prompt { name: served, ..def };
    prompt
}

/// Reads `uri` upstream.
async fn read(link: Arc<Link>, uri: String, ctx: RequestContext) -> Result<Vec<ResourceContents>, HandlerError> {
    #[derive(serde::Deserialize)]
    struct Read {
        contents: Vec<ResourceContents>,
    }
    let read: Read = link.forward("resources/read", json!({ "uri": uri }), &ctx).await?;
    Ok(read.contents)
}

/// The upstream's resource `def`, under its own URI.
pub(crate) fn resource(link: &Arc<Link>, def: resources::Resource) -> Resource {
    let link = link.clone();
    let mut resource = Resource::new(def.uri.clone(), def.name.clone(), move |uri, ctx| read(link.clone(), uri, ctx));
    resource.def = def;
    resource
}

/// The upstream's template `def`, under its own URI template; `None` when
/// the template is beyond what this server matches (RFC 6570 level 1).
pub(crate) fn template(link: &Arc<Link>, def: resources::ResourceTemplate) -> Option<ResourceTemplate> {
    let link = link.clone();
    let mut template =
        ResourceTemplate::new(&def.uri_template, def.name.clone(), move |uri, _vars, ctx| read(link.clone(), uri, ctx))
            .ok()?;
    template.def = def;
    Some(template)
}
