//! `resources/list`, `resources/templates/list` and `resources/read` (a
//! listed resource, a template match, or the catalog's resolver).

use mcp_protocol::model::content::ResourceContents;
use mcp_protocol::model::resources::ReadResourceParams;
use mcp_protocol::request::ListParams;
use mcp_protocol::request_state::Binding;
use mcp_protocol::ProtocolError;
use serde_json::json;

use super::{Answer, McpService};
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;
use crate::catalog::HandlerFuture;

type Reader = Box<dyn Fn() -> HandlerFuture<Vec<ResourceContents>>>;

impl McpService {
    pub(super) async fn list_resources(&self, p: ListParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        let gate = self.gate(&ctx);
        let keep =
            |r: &crate::catalog::Resource| self.visible(&ctx, &r.scopes) && gate.as_ref().is_none_or(|g| g.resource(r));
        let l = self.catalog.list_resources_where(p.cursor.as_deref(), self.page_size, &keep)?;
        self.finish_page("resources", l.page, Some(self.list_hints(&ctx, l.cache))).map(Answer::Tree)
    }

    pub(super) async fn list_templates(&self, p: ListParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        let gate = self.gate(&ctx);
        let keep = |t: &crate::catalog::ResourceTemplate| {
            self.visible(&ctx, &t.scopes) && gate.as_ref().is_none_or(|g| g.template(t))
        };
        let l = self.catalog.list_templates_where(p.cursor.as_deref(), self.page_size, &keep)?;
        self.finish_page("resourceTemplates", l.page, Some(self.list_hints(&ctx, l.cache))).map(Answer::Tree)
    }

    /// Boxed: it waits on the handler, and a request's future is as large
    /// as the largest it could run.
    pub(super) async fn read_resource(
        &self,
        p: ReadResourceParams,
        ctx: RequestContext,
    ) -> Result<Answer, HandlerError> {
        Box::pin(async move {
            let binding = || {
                Binding::new("resources/read", &p.uri, None)
                    .for_subject(ctx.auth().map(crate::facts::identity::Identity::key).as_deref())
            };
            let (reader, cache) = self.reader(&p.uri, &ctx)?;
            let out = self.rounds(&ctx, &binding, p.input_responses, p.request_state.as_deref(), reader).await?;
            let out = out.map(|contents| json!({ "contents": contents }));
            let cache = ctx.cache_hints().or(cache).unwrap_or(self.read_cache);
            self.complete_with(out, Some(cache)).map(Answer::Tree)
        })
        .await
    }

    /// The reader for `uri` and its own caching hints: a listed resource, a
    /// template match, or what the resolver finds.
    fn reader(
        &self,
        uri: &str,
        ctx: &RequestContext,
    ) -> Result<(Reader, Option<mcp_protocol::model::CacheHints>), HandlerError> {
        let (u, c) = (uri.to_owned(), ctx.clone());
        if let Some(r) = self.catalog.resource(uri) {
            let cache = r.cache;
            return Ok((Box::new(move || (r.reader)(u.clone(), c.clone())), cache));
        }
        if let Some((t, vars)) = self.catalog.match_template(uri) {
            let cache = t.cache;
            return Ok((Box::new(move || (t.reader)(u.clone(), vars.clone(), c.clone())), cache));
        }
        match self.catalog.resolve(uri) {
            Some(resolved) => {
                let r = resolved?;
                let cache = r.cache;
                Ok((Box::new(move || (r.reader)(u.clone(), c.clone())), cache))
            }
            None => Err(ProtocolError::ResourceNotFound { uri: uri.to_owned() }.into()),
        }
    }
}
