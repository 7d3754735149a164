//! The builder methods catalog items share — a display title, `_meta`
//! entries, the scopes a caller needs, caching hints, completion, leaving
//! an item out of its list — written once, each item taking the ones it has.

/// Implements the shared builder methods named in `{ … }` for an item type
/// whose fields follow the catalog's shape (`def`, `scopes`, `cache`,
/// `listed`, `upstream`). `$what` names the item in the docs; `$list` is its list
/// method; the `cache` part takes the doc of what its hints apply to.
macro_rules! item_builders {
    ($item:ident, $what:literal, $list:literal { $($part:ident $(($doc:literal))?),* $(,)? }) => {
        impl $item {
            $( item_builders!(@$part $what, $list $(, $doc)?); )*
        }
    };
    (@title $what:literal, $list:literal) => {
        /// Sets the display title.
        #[must_use]
        pub fn with_title(mut self, title: impl Into<String>) -> Self {
            self.def.title = Some(title.into());
            self
        }
    };
    (@meta $what:literal, $list:literal) => {
        /// Adds a `_meta` entry to the listed definition (e.g.
        /// `"ui/resourceUri": "ui://…"` to link an MCP Apps resource).
        #[must_use]
        pub fn with_meta(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
            self.def.meta.get_or_insert_with(Default::default).insert(key.into(), value);
            self
        }
    };
    (@scopes $what:literal, $list:literal) => {
        #[doc = concat!("Scopes a caller's token must grant (besides `auth.required_scopes`) to use this ", $what,
            "; without them the request gets 403 with a step-up challenge, and lists leave the ", $what,
            " out. A broader scope configured in `auth.scope_implies` satisfies a narrower one.")]
        #[must_use]
        pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
            self.scopes = scopes.into_iter().map(Into::into).collect();
            self
        }

        /// The scopes set with [`with_scopes`](Self::with_scopes).
        pub fn scopes(&self) -> &[String] {
            &self.scopes
        }
    };
    (@cache $what:literal, $list:literal, $doc:literal) => {
        #[doc = $doc]
        #[must_use]
        pub fn with_cache(mut self, hints: mcp_protocol::model::CacheHints) -> Self {
            self.cache = Some(hints);
            self
        }
    };
    (@completer $what:literal, $list:literal, $doc:literal) => {
        #[doc = $doc]
        #[must_use]
        pub fn with_completer(mut self, completer: super::Completer) -> Self {
            self.completer = Some(super::completing::Completing::Candidates(completer));
            self
        }

        /// Completes with an asynchronous `handler` given the whole request
        /// (instead of a [`Completer`](super::Completer)); its answer is sent
        /// as it is.
        #[must_use]
        pub fn with_completion<F, Fut>(mut self, handler: F) -> Self
        where
            F: Fn(
                    mcp_protocol::model::completion::CompleteParams,
                    crate::catalog::context::RequestContext,
                ) -> Fut
                + Send
                + Sync
                + 'static,
            Fut: std::future::Future<
                    Output = Result<mcp_protocol::model::completion::Completion, crate::catalog::error::HandlerError>,
                > + 'static,
        {
            self.completer = Some(super::completing::Completing::handler(handler));
            self
        }
    };
    (@upstream $what:literal, $list:literal) => {
        #[doc = concat!("Names the upstream server this ", $what, " forwards to (the gateway sets it): the ",
            "`upstream` of its audit records.")]
        #[must_use]
        pub fn with_upstream(mut self, upstream: impl Into<std::sync::Arc<str>>) -> Self {
            self.upstream = Some(upstream.into());
            self
        }

        #[doc = concat!("The upstream server this ", $what, " forwards to, if it does.")]
        pub fn upstream(&self) -> Option<&str> {
            self.upstream.as_deref()
        }
    };
    (@unlisted $what:literal, $list:literal) => {
        #[doc = concat!("Keeps the ", $what, " usable but out of `", $list, "`.")]
        #[must_use]
        pub fn unlisted(mut self) -> Self {
            self.listed = false;
            self
        }
    };
}

item_builders!(Tool, "tool", "tools/list" {
    title, meta, scopes, unlisted, upstream, cache("Caching hints for list pages that contain this tool.")
});
item_builders!(Resource, "resource", "resources/list" {
    title, meta, scopes, unlisted, upstream, cache("Caching hints for `resources/read` of this resource.")
});
item_builders!(ResourceTemplate, "template", "resources/templates/list" {
    scopes, upstream, cache("Caching hints for reads of matching URIs."),
    completer("Completes template variables for `completion/complete` (`ref/resource`).")
});
item_builders!(Prompt, "prompt", "prompts/list" {
    title, scopes, unlisted, upstream, cache("Caching hints for list pages that contain this prompt."),
    completer("Completes argument values for `completion/complete` (`ref/prompt`).")
});

use super::{Prompt, Resource, ResourceTemplate, Tool};
