//! `completion/complete`: a prompt's or a template's completer, for a
//! caller that may see it. A prompt or template the caller's scopes or the
//! policy hide is answered as an unknown one: completion is no way around
//! a list.

use mcp_protocol::model::completion::{CompleteParams, Completion, CompletionRef};
use serde_json::json;

use super::{Answer, McpService};
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

impl McpService {
    pub(super) async fn complete(&self, p: CompleteParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        let gate = self.gate(&ctx);
        let completer = match &p.reference {
            CompletionRef::Prompt { name } => self
                .catalog
                .prompt(name)
                .filter(|t| self.visible(&ctx, &t.scopes) && gate.as_ref().is_none_or(|g| g.prompt(t)))
                .ok_or_else(|| HandlerError::unknown_prompt(name))?
                .completer
                .clone(),
            CompletionRef::Resource { uri } => self
                .catalog
                .template(uri)
                .filter(|t| self.visible(&ctx, &t.scopes) && gate.as_ref().is_none_or(|g| g.template(t)))
                .ok_or_else(|| HandlerError::invalid_params(format!("Unknown resource template: {uri}")))?
                .completer
                .clone(),
            other => return Err(HandlerError::invalid_params(format!("Unknown completion reference {other:?}"))),
        };
        let completion = match completer {
            Some(c) => c.complete(p, ctx).await?,
            None => Completion::from_candidates(Vec::new()),
        };
        self.finish(&json!({ "completion": completion }), None).map(Answer::Tree)
    }
}
