//! `completion/complete`: a prompt's or a template's completer.

use mcp_protocol::model::completion::{CompleteParams, Completion, CompletionRef};
use serde_json::{json, Map, Value};

use super::{Answer, McpService};
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

impl McpService {
    pub(super) async fn complete(&self, p: CompleteParams, _: RequestContext) -> Result<Answer, HandlerError> {
        let completion = self.completion(&p)?;
        self.finish(&json!({ "completion": completion }), None).map(Answer::Tree)
    }

    fn completion(&self, p: &CompleteParams) -> Result<Completion, HandlerError> {
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
}
