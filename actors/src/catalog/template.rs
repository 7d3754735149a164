//! [`ResourceTemplate`]: resources addressed by an RFC 6570 level-1 URI
//! template such as `test://template/{id}/data` ([`UriPattern`]); the
//! reader is given each variable percent-decoded.

use std::future::Future;
use std::sync::Arc;

use futures::future::FutureExt;
use mcp_protocol::model::content::ResourceContents;
use mcp_protocol::model::resources;
use mcp_protocol::model::result::CacheHints;
pub use mcp_protocol::uri_template::{TemplateVars, UriPattern};

use super::completing::Completing;
use super::tool::HandlerFuture;
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

type TemplateReadFn =
    dyn Fn(String, TemplateVars, RequestContext) -> HandlerFuture<Vec<ResourceContents>> + Send + Sync;

/// A family of resources behind a URI template.
#[derive(Clone)]
pub struct ResourceTemplate {
    pub(crate) def: resources::ResourceTemplate,
    pub(crate) pattern: UriPattern,
    pub(crate) reader: Arc<TemplateReadFn>,
    pub(crate) completer: Option<Completing>,
    pub(crate) cache: Option<CacheHints>,
    pub(crate) scopes: Vec<String>,
    /// The upstream server it forwards to (the gateway's items).
    pub(crate) upstream: Option<std::sync::Arc<str>>,
}

impl std::fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplate").field("def", &self.def).finish()
    }
}

impl ResourceTemplate {
    /// A template whose matching URIs are read by `reader` (URI + variables).
    /// Fails if the template is not level-1 RFC 6570.
    pub fn new<F, Fut>(uri_template: &str, name: impl Into<String>, reader: F) -> Result<Self, String>
    where
        F: Fn(String, TemplateVars, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, HandlerError>> + 'static,
    {
        Ok(ResourceTemplate {
            pattern: UriPattern::parse(uri_template)?,
            def: resources::ResourceTemplate {
                uri_template: uri_template.to_owned(),
                name: name.into(),
                title: None,
                description: None,
                mime_type: None,
                annotations: None,
            },
            reader: Arc::new(move |uri, vars, ctx| reader(uri, vars, ctx).boxed_local()),
            completer: None,
            cache: None,
            scopes: Vec::new(),
            upstream: None,
        })
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, d: impl Into<String>) -> Self {
        self.def.description = Some(d.into());
        self
    }

    /// Sets the annotations shown with the listing (audience, priority, last change).
    #[must_use]
    pub fn with_annotations(mut self, a: mcp_protocol::model::Annotations) -> Self {
        self.def.annotations = Some(a);
        self
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, m: impl Into<String>) -> Self {
        self.def.mime_type = Some(m.into());
        self
    }

    /// The template string.
    pub fn uri_template(&self) -> &str {
        &self.def.uri_template
    }
}
