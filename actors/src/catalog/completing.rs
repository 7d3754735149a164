//! How a prompt's arguments or a template's variables are completed: by a
//! [`Completer`] (synchronous, from the partial value), or by an
//! asynchronous handler given the whole request (a gateway asks the
//! upstream that owns the item).

use std::future::Future;
use std::sync::Arc;

use futures::future::FutureExt;
use mcp_protocol::model::completion::{CompleteParams, Completion};
use serde_json::{Map, Value};

use super::tool::HandlerFuture;
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

/// Completes an argument: `(argument name, partial value, resolved context
/// arguments) -> candidates`. The server caps the answer at 100 values.
pub type Completer = Arc<dyn Fn(&str, &str, &Map<String, Value>) -> Vec<String> + Send + Sync>;

type CompleteFn = dyn Fn(CompleteParams, RequestContext) -> HandlerFuture<Completion> + Send + Sync;

/// A completer of either kind.
#[derive(Clone)]
pub(crate) enum Completing {
    /// Candidates from the argument's name, its partial value and the
    /// resolved context arguments; capped at 100.
    Candidates(Completer),
    /// The completion, from the request.
    Handler(Arc<CompleteFn>),
}

impl Completing {
    /// An asynchronous completer.
    pub(crate) fn handler<F, Fut>(f: F) -> Self
    where
        F: Fn(CompleteParams, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Completion, HandlerError>> + 'static,
    {
        Completing::Handler(Arc::new(move |p, ctx| f(p, ctx).boxed_local()))
    }

    /// Completes `p`.
    pub(crate) async fn complete(&self, p: CompleteParams, ctx: RequestContext) -> Result<Completion, HandlerError> {
        match self {
            Completing::Candidates(c) => {
                let empty = Map::new();
                let context = p.context.as_ref().and_then(|c| c.get("arguments")).and_then(Value::as_object);
                Ok(Completion::from_candidates(c(&p.argument.name, &p.argument.value, context.unwrap_or(&empty))))
            }
            Completing::Handler(f) => f(p, ctx).await,
        }
    }
}
