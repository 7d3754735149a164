//! `prompts/list` and `prompts/get`.

use mcp_protocol::model::prompts::GetPromptParams;
use mcp_protocol::request::ListParams;
use mcp_protocol::request_state::Binding;

use super::{Answer, McpService};
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

impl McpService {
    pub(super) async fn list_prompts(&self, p: ListParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        let gate = self.gate(&ctx);
        let keep =
            |p: &crate::catalog::Prompt| self.visible(&ctx, &p.scopes) && gate.as_ref().is_none_or(|g| g.prompt(p));
        let l = self.catalog.list_prompts_where(p.cursor.as_deref(), self.page_size, &keep)?;
        self.finish_page("prompts", l.page, Some(self.list_hints(&ctx, l.cache))).map(Answer::Tree)
    }

    /// Boxed: it waits on the handler (see `read_resource`).
    pub(super) async fn get_prompt(&self, p: GetPromptParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        Box::pin(async move {
            let prompt = self.catalog.prompt(&p.name).ok_or_else(|| HandlerError::unknown_prompt(&p.name))?;
            let args = p.arguments.map(|a| a.to_map());
            let binding = || {
                Binding::new("prompts/get", &p.name, args.as_ref())
                    .for_subject(ctx.auth().map(crate::facts::identity::Identity::key).as_deref())
            };
            let run = || prompt.get(args.clone(), ctx.clone());
            let out = self.rounds(&ctx, &binding, p.input_responses, p.request_state.as_deref(), run).await?;
            self.complete_with(out, None).map(Answer::Tree)
        })
        .await
    }
}
