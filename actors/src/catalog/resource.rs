//! [`Resource`]: a readable URI with its listed metadata and a reader.

use std::future::Future;
use std::sync::Arc;

use base64::Engine;
use futures::future::FutureExt;
use mcp_protocol::model::content::ResourceContents;
use mcp_protocol::model::resources;
use mcp_protocol::model::result::CacheHints;

use super::body::ResourceBody;
use super::tool::HandlerFuture;
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

type ReadFn = dyn Fn(String, RequestContext) -> HandlerFuture<Vec<ResourceContents>> + Send + Sync;

/// A resource at a fixed URI.
#[derive(Clone)]
pub struct Resource {
    pub(crate) def: resources::Resource,
    pub(crate) reader: Arc<ReadFn>,
    pub(crate) listed: bool,
    pub(crate) scopes: Vec<String>,
    /// The upstream server it forwards to (the gateway's items).
    pub(crate) upstream: Option<std::sync::Arc<str>>,
    pub(crate) cache: Option<CacheHints>,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource").field("def", &self.def).finish()
    }
}

impl Resource {
    /// A resource read by `reader`, which receives the URI.
    pub fn new<F, Fut>(uri: impl Into<String>, name: impl Into<String>, reader: F) -> Self
    where
        F: Fn(String, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, HandlerError>> + 'static,
    {
        Resource {
            def: resources::Resource {
                uri: uri.into(),
                name: name.into(),
                title: None,
                description: None,
                mime_type: None,
                size: None,
                annotations: None,
                meta: None,
            },
            reader: Arc::new(move |uri, ctx| reader(uri, ctx).boxed_local()),
            listed: true,
            scopes: Vec::new(),
            upstream: None,
            cache: None,
        }
    }

    /// A resource whose reader returns just its text (`String`, `&str`) or
    /// bytes (`Vec<u8>`); the URI and MIME type in the contents are the
    /// resource's own.
    ///
    /// ```
    /// use actix_mcp::prelude::*;
    ///
    /// let motd = Resource::reading("app://motd", "motd", "text/plain", |_ctx| async {
    ///     Ok(format!("Welcome! It is {:?}.", std::time::SystemTime::now()))
    /// });
    /// assert_eq!(motd.definition().mime_type.as_deref(), Some("text/plain"));
    /// ```
    pub fn reading<F, Fut, B>(uri: impl Into<String>, name: impl Into<String>, mime_type: &str, reader: F) -> Self
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<B, HandlerError>> + 'static,
        B: ResourceBody + 'static,
    {
        let mime = mime_type.to_owned();
        let mut r = Self::new(uri, name, move |uri, ctx| {
            let mime = mime.clone();
            reader(ctx).map(move |body| Ok(vec![body?.into_contents(uri, Some(mime))]))
        });
        r.def.mime_type = Some(mime_type.to_owned());
        r
    }

    /// A resource with fixed text.
    pub fn text(uri: impl Into<String>, name: impl Into<String>, mime_type: &str, text: impl Into<String>) -> Self {
        let text: Arc<str> = text.into().into();
        let mime = mime_type.to_owned();
        let size = text.len() as u64;
        let mut r = Self::new(uri, name, move |uri, _ctx| {
            let c = ResourceContents::text(uri, mime.clone(), text.to_string());
            async move { Ok(vec![c]) }
        });
        r.def.mime_type = Some(mime_type.to_owned());
        r.def.size = Some(size);
        r
    }

    /// A resource with fixed bytes (served as a base64 blob).
    pub fn blob(uri: impl Into<String>, name: impl Into<String>, mime_type: &str, bytes: &[u8]) -> Self {
        let b64: Arc<str> = base64::engine::general_purpose::STANDARD.encode(bytes).into();
        let mime = mime_type.to_owned();
        let mut r = Self::new(uri, name, move |uri, _ctx| {
            let c = ResourceContents::blob(uri, mime.clone(), b64.to_string());
            async move { Ok(vec![c]) }
        });
        r.def.mime_type = Some(mime_type.to_owned());
        r.def.size = Some(bytes.len() as u64);
        r
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, d: impl Into<String>) -> Self {
        self.def.description = Some(d.into());
        self
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, m: impl Into<String>) -> Self {
        self.def.mime_type = Some(m.into());
        self
    }

    /// Sets the size in bytes.
    #[must_use]
    pub fn with_size(mut self, size: u64) -> Self {
        self.def.size = Some(size);
        self
    }

    /// Sets the annotations shown with the listing (audience, priority, last change).
    #[must_use]
    pub fn with_annotations(mut self, a: mcp_protocol::model::Annotations) -> Self {
        self.def.annotations = Some(a);
        self
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.def.uri
    }

    /// The definition as listed.
    pub fn definition(&self) -> &resources::Resource {
        &self.def
    }
}
