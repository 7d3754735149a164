//! `prompts/list` and `prompts/get`.

use mcp_protocol::model::prompts::GetPromptParams;
use mcp_protocol::request::ListParams;
use mcp_protocol::request_state::Binding;
use serde_json::Value;

use super::McpService;
use crate::context::RequestContext;
use crate::error::HandlerError;

impl McpService {
    pub(super) fn list_prompts(&self, p: ListParams) -> Result<Value, HandlerError> {
        let l = self.catalog.list_prompts(p.cursor.as_deref(), self.page_size)?;
        self.finish_page("prompts", l.page, Some(l.cache.unwrap_or(self.list_cache)))
    }

    pub(super) async fn get_prompt(&self, p: GetPromptParams, ctx: RequestContext) -> Result<Value, HandlerError> {
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
}
