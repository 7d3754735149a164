//! [`Prompt`]: a named message template with arguments and a handler.

use std::future::Future;
use std::sync::Arc;

use futures::future::FutureExt;
use mcp_protocol::model::prompts::{self, GetPromptResult, PromptArgument};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::completing::Completing;
use super::outcome::object_schema;
use super::tool::HandlerFuture;
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

/// The arguments a prompt handler receives (string values).
pub type PromptArgs = std::collections::BTreeMap<String, String>;

type PromptFn = dyn Fn(PromptArgs, RequestContext) -> HandlerFuture<GetPromptResult> + Send + Sync;

/// A prompt.
#[derive(Clone)]
pub struct Prompt {
    pub(crate) def: prompts::Prompt,
    pub(crate) handler: Arc<PromptFn>,
    pub(crate) completer: Option<Completing>,
    pub(crate) cache: Option<mcp_protocol::model::CacheHints>,
    pub(crate) listed: bool,
    pub(crate) scopes: Vec<String>,
    /// The upstream server it forwards to (the gateway's items).
    pub(crate) upstream: Option<std::sync::Arc<str>>,
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
            cache: None,
            listed: true,
            scopes: Vec::new(),
            upstream: None,
        }
    }

    /// A prompt whose arguments are the fields of `A` (strings, or
    /// `Option<String>` for optional ones), declared from its schema with
    /// their doc comments; the handler gets them typed and returns anything
    /// that is `Into<GetPromptResult>` (a `String` is one user message).
    ///
    /// ```
    /// use actix_mcp::prelude::*;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Review {
    ///     /// The code to review.
    ///     code: String,
    ///     /// What to focus on.
    ///     focus: Option<String>,
    /// }
    ///
    /// let p = Prompt::typed("review", "Reviews code", |a: Review, _ctx| async move {
    ///     Ok(format!("Review this, focusing on {}:\n{}", a.focus.as_deref().unwrap_or("anything"), a.code))
    /// });
    /// let args = &p.definition().arguments;
    /// assert_eq!((args[0].name.as_str(), args[0].required), ("code", Some(true)));
    /// assert_eq!((args[1].name.as_str(), args[1].required), ("focus", Some(false)));
    /// ```
    pub fn typed<A, F, Fut, R>(name: impl Into<String>, description: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + 'static,
        F: Fn(A, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, HandlerError>> + 'static,
        R: Into<GetPromptResult> + 'static,
    {
        let schema = object_schema::<A>();
        let required: Vec<&str> =
            schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let arguments = schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, prop)| PromptArgument {
                name: name.clone(),
                description: prop.get("description").and_then(Value::as_str).map(str::to_owned),
                required: Some(required.contains(&name.as_str())),
            })
            .collect();
        let mut prompt = Self::new(name, description, move |args: PromptArgs, ctx| {
            let args = Value::Object(args.into_iter().map(|(k, v)| (k, Value::String(v))).collect());
            match super::arguments::from_value::<A>(args) {
                Ok(a) => handler(a, ctx).map(|r| r.map(Into::into)).boxed_local(),
                Err(why) => {
                    futures::future::ready(Err(HandlerError::invalid_params(format!("prompt arguments: {why}"))))
                        .boxed_local()
                }
            }
        });
        prompt.def.arguments = arguments;
        prompt
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
