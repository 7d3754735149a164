//! [`Prompt`]: a named message template with arguments and a handler.

use std::future::Future;
use std::sync::Arc;

use futures::future::FutureExt;
use mcp_protocol::model::prompts::{self, GetPromptResult, PromptArgument};
use serde_json::{Map, Value};

use super::tool::HandlerFuture;
use crate::context::RequestContext;
use crate::error::HandlerError;

/// Completes an argument: `(argument name, partial value, resolved context
/// arguments) -> candidates`. The server caps the answer at 100 values.
pub type Completer = Arc<dyn Fn(&str, &str, &Map<String, Value>) -> Vec<String> + Send + Sync>;

/// The arguments a prompt handler receives (string values).
pub type PromptArgs = std::collections::BTreeMap<String, String>;

type PromptFn = dyn Fn(PromptArgs, RequestContext) -> HandlerFuture<GetPromptResult> + Send + Sync;

/// A prompt.
#[derive(Clone)]
pub struct Prompt {
    pub(crate) def: prompts::Prompt,
    pub(crate) handler: Arc<PromptFn>,
    pub(crate) completer: Option<Completer>,
    pub(crate) listed: bool,
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt").field("def", &self.def).finish()
    }
}

impl Prompt {
    /// A prompt rendered by `handler`. Required arguments are checked before
    /// the handler runs (missing → -32602).
    pub fn new<F, Fut>(name: impl Into<String>, description: impl Into<String>, handler: F) -> Self
    where
        F: Fn(PromptArgs, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, HandlerError>> + 'static,
    {
        Prompt {
            def: prompts::Prompt {
                name: name.into(),
                title: None,
                description: Some(description.into()),
                arguments: Vec::new(),
            },
            handler: Arc::new(move |args, ctx| handler(args, ctx).boxed_local()),
            completer: None,
            listed: true,
        }
    }

    /// Declares an argument.
    #[must_use]
    pub fn with_argument(mut self, name: impl Into<String>, description: impl Into<String>, required: bool) -> Self {
        self.def.arguments.push(PromptArgument {
            name: name.into(),
            description: Some(description.into()),
            required: Some(required),
        });
        self
    }

    /// Sets the display title.
    #[must_use]
    pub fn with_title(mut self, t: impl Into<String>) -> Self {
        self.def.title = Some(t.into());
        self
    }

    /// Completes argument values for `completion/complete` (`ref/prompt`).
    #[must_use]
    pub fn with_completer(mut self, completer: Completer) -> Self {
        self.completer = Some(completer);
        self
    }

    /// Keeps the prompt usable but out of `prompts/list`.
    #[must_use]
    pub fn unlisted(mut self) -> Self {
        self.listed = false;
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The definition as listed.
    pub fn definition(&self) -> &prompts::Prompt {
        &self.def
    }

    /// Checks arguments (strings only; required present) and runs the handler.
    pub fn get(&self, args: Option<Map<String, Value>>, ctx: RequestContext) -> HandlerFuture<GetPromptResult> {
        let mut out = PromptArgs::new();
        for (k, v) in args.unwrap_or_default() {
            match v {
                Value::String(s) => {
                    out.insert(k, s);
                }
                other => {
                    let e = HandlerError::invalid_params(format!("prompt argument {k} must be a string, got {other}"));
                    return futures::future::ready(Err(e)).boxed_local();
                }
            }
        }
        for a in &self.def.arguments {
            if a.required == Some(true) && !out.contains_key(&a.name) {
                let e = HandlerError::invalid_params(format!("prompt {} requires argument {}", self.def.name, a.name));
                return futures::future::ready(Err(e)).boxed_local();
            }
        }
        (self.handler)(out, ctx)
    }
}
