//! MCP Apps (`io.modelcontextprotocol/ui`): a [`View`] is a `ui://` HTML
//! document a host renders next to a tool's result, and a tool links to one
//! with [`Tool::with_view`], choosing who may call it with
//! [`Tool::with_visibility`].
//!
//! ```
//! use actix_mcp::catalog::{Tool, View};
//! use actix_mcp::protocol::apps::Visibility;
//!
//! let view = View::new("ui://weather/forecast", "Forecast", "<!doctype html><p id=out></p>")
//!     .connect_domains(["https://api.weather.example"])
//!     .prefers_border(true);
//! // The model calls `forecast` and the host shows the view with its result;
//! // the text stays meaningful for clients that render no views.
//! let forecast = Tool::no_args("forecast", "Tomorrow's weather", |_ctx| async { Ok("Sunny, 21 °C") })
//!     .with_view("ui://weather/forecast");
//! // Only the view calls `refresh` (hosts hide it from the model).
//! let refresh = Tool::no_args("refresh", "Reloads the forecast", |_ctx| async { Ok("Sunny, 21 °C") })
//!     .with_view("ui://weather/forecast")
//!     .with_visibility([Visibility::App]);
//! assert!(refresh.is_app_only() && !forecast.is_app_only());
//! assert_eq!(forecast.definition().meta.as_ref().unwrap()["ui/resourceUri"], "ui://weather/forecast");
//! # let _ = view;
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use mcp_protocol::apps::{self, Visibility};
use mcp_protocol::model::content::ResourceContents;
use mcp_protocol::model::CacheHints;
use serde_json::{json, Map, Value};

use super::{Catalog, CatalogError, Resource, Tool};
use crate::catalog::error::HandlerError;

/// A browser permission a view asks the host for (`_meta.ui.permissions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Permission {
    /// The camera.
    Camera,
    /// The microphone.
    Microphone,
    /// The device's location.
    Geolocation,
    /// Writing to the clipboard.
    ClipboardWrite,
}

impl Permission {
    fn key(self) -> &'static str {
        match self {
            Permission::Camera => "camera",
            Permission::Microphone => "microphone",
            Permission::Geolocation => "geolocation",
            Permission::ClipboardWrite => "clipboardWrite",
        }
    }
}

/// Where a view's HTML comes from.
#[derive(Debug, Clone)]
enum Html {
    /// Given (a string, `include_str!`).
    Text(Arc<str>),
    /// Read from a file on each read (edits show at once).
    File(PathBuf),
}

/// A view: a `ui://` resource of MIME type `text/html;profile=mcp-app`
/// whose contents are a whole HTML document, with its `_meta.ui` (CSP
/// domain lists, permissions, a dedicated domain, a border preference).
/// Add it with [`Catalog::add_view`](super::Catalog::add_view) or the
/// builder's `view`.
#[derive(Debug, Clone)]
pub struct View {
    uri: String,
    name: String,
    html: Html,
    ui: Map<String, Value>,
    description: Option<String>,
    listed: bool,
    scopes: Vec<String>,
    cache: Option<CacheHints>,
}

impl View {
    /// A view of `html` (a whole HTML document) at `uri` (`ui://…`).
    pub fn new(uri: impl Into<String>, name: impl Into<String>, html: impl Into<String>) -> Self {
        Self::with_html(uri, name, Html::Text(html.into().into()))
    }

    /// A view made of an HTML fragment (`body`, its scripts included) in a
    /// whole document titled `title`, with `window.mcpApp` defined before
    /// it: a small script that speaks the view side of the protocol
    /// (`onToolInput`, `onToolResult`, `callTool`, then `connect()`). For
    /// a view of your own bundle, use [`View::new`] with the official
    /// `@modelcontextprotocol/ext-apps` `App` class instead.
    ///
    /// ```
    /// use actix_mcp::catalog::View;
    ///
    /// let view = View::page("ui://hello/view", "Hello", "Hello", r#"
    ///     <p id="out">waiting</p>
    ///     <script>
    ///       mcpApp.onToolResult(r => { out.textContent = mcpApp.textOf(r); });
    ///       mcpApp.connect();
    ///     </script>"#);
    /// assert!(view.into_resource().is_ok());
    /// ```
    pub fn page(uri: impl Into<String>, name: impl Into<String>, title: &str, body: &str) -> Self {
        let html = format!(
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width\">\n<title>{}</title>\n\
             <script>\n{BRIDGE}</script>\n</head>\n<body>\n{body}\n</body>\n</html>\n",
            escape(title)
        );
        Self::new(uri, name, html)
    }

    /// A view whose HTML is the file at `path`, read on each read.
    pub fn from_file(uri: impl Into<String>, name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self::with_html(uri, name, Html::File(path.into()))
    }

    fn with_html(uri: impl Into<String>, name: impl Into<String>, html: Html) -> Self {
        View {
            uri: uri.into(),
            name: name.into(),
            html,
            ui: Map::new(),
            description: None,
            listed: true,
            scopes: Vec::new(),
            cache: None,
        }
    }

    fn csp(mut self, key: &str, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let list: Vec<Value> = origins.into_iter().map(|o| Value::String(o.into())).collect();
        let csp = self.ui.entry("csp").or_insert_with(|| json!({}));
        csp[key] = Value::Array(list);
        self
    }

    /// Origins the view may connect to (CSP `connect-src`); none by default.
    #[must_use]
    pub fn connect_domains(self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.csp("connectDomains", origins)
    }

    /// Origins of scripts, styles, images, fonts and media the view loads.
    #[must_use]
    pub fn resource_domains(self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.csp("resourceDomains", origins)
    }

    /// Origins of frames the view nests.
    #[must_use]
    pub fn frame_domains(self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.csp("frameDomains", origins)
    }

    /// Base URIs the document may set.
    #[must_use]
    pub fn base_uri_domains(self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.csp("baseUriDomains", origins)
    }

    /// Browser permissions the view asks for (hosts may grant them).
    #[must_use]
    pub fn permissions(mut self, permissions: impl IntoIterator<Item = Permission>) -> Self {
        let map: Map<String, Value> = permissions.into_iter().map(|p| (p.key().to_owned(), json!({}))).collect();
        self.ui.insert("permissions".into(), Value::Object(map));
        self
    }

    /// A dedicated origin for the view's sandbox (its format is the host's).
    #[must_use]
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.ui.insert("domain".into(), Value::String(domain.into()));
        self
    }

    /// Whether the host should draw a border and background around the view.
    #[must_use]
    pub fn prefers_border(mut self, border: bool) -> Self {
        self.ui.insert("prefersBorder".into(), Value::Bool(border));
        self
    }

    /// Sets the description listed with the resource.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Leaves the view out of `resources/list` (hosts find it through the
    /// tools that link to it); it is still read by URI.
    #[must_use]
    pub fn unlisted(mut self) -> Self {
        self.listed = false;
        self
    }

    /// Scopes a caller's token must grant to read the view.
    #[must_use]
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Caching hints of its reads (else the configured `cache.read_ttl_ms`).
    #[must_use]
    pub fn with_cache(mut self, hints: CacheHints) -> Self {
        self.cache = Some(hints);
        self
    }

    /// The view's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The resource serving the view. Refused when the URI is not `ui://`
    /// or the HTML (read now, for a file) is not an HTML document.
    pub fn into_resource(self) -> Result<Resource, CatalogError> {
        let fail = |why: String| CatalogError(format!("view {:?}: {why}", self.uri));
        if !self.uri.starts_with(apps::SCHEME) || self.uri.len() == apps::SCHEME.len() {
            return Err(fail(format!("a view's URI must start with {}", apps::SCHEME)));
        }
        let first = match &self.html {
            Html::Text(t) => t.to_string(),
            Html::File(p) => std::fs::read_to_string(p).map_err(|e| fail(format!("{}: {e}", p.display())))?,
        };
        if !apps::is_html_document(&first) {
            return Err(fail("its contents are not an HTML document (<!doctype html> or <html>)".into()));
        }
        let ui = Value::Object(self.ui.clone());
        let (html, meta) = (self.html.clone(), ui.clone());
        let read = move |uri: String, _ctx| {
            let text = match &html {
                Html::Text(t) => Ok(t.to_string()),
                Html::File(p) => std::fs::read_to_string(p)
                    .map_err(|e| HandlerError::internal(format!("the view's file {}: {e}", p.display()))),
            };
            let meta = meta.clone();
            async move {
                let contents = ResourceContents::text(uri, apps::VIEW_MIME, text?);
                Ok(vec![if meta.as_object().is_some_and(Map::is_empty) {
                    contents
                } else {
                    contents.with_meta(apps::META_KEY, meta)
                }])
            }
        };
        let mut r = Resource::new(self.uri, self.name, read).with_mime_type(apps::VIEW_MIME);
        if let Html::Text(t) = &self.html {
            r = r.with_size(t.len() as u64);
        }
        if !self.ui.is_empty() {
            r = r.with_meta(apps::META_KEY, ui);
        }
        if let Some(d) = self.description {
            r = r.with_description(d);
        }
        if let Some(c) = self.cache {
            r = r.with_cache(c);
        }
        r = r.with_scopes(self.scopes);
        Ok(if self.listed { r } else { r.unlisted() })
    }
}

/// The view side of the protocol that [`View::page`] puts in its documents.
pub const BRIDGE: &str = include_str!("bridge.js");

/// `text` with the HTML special characters escaped.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Whether a resource is a view (by its MIME type).
pub(crate) fn is_view(r: &Resource) -> bool {
    r.def.mime_type.as_deref() == Some(apps::VIEW_MIME)
}

impl Catalog {
    /// Adds an MCP Apps view (a `ui://` resource); the server then declares
    /// the extension. Refused as [`View::into_resource`] refuses, or when a
    /// resource with that URI is already there.
    pub fn add_view(&self, view: View) -> Result<(), CatalogError> {
        self.add_resource(view.into_resource()?)
    }

    /// Whether the server declares the MCP Apps extension: it serves a view.
    pub fn serves_views(&self) -> bool {
        self.read().serves_views
    }

    /// Every tool whose view link leads nowhere: to no resource, or to one
    /// that is not a view (the builder reports them).
    pub fn broken_view_links(&self) -> Vec<String> {
        let s = self.read();
        s.tools
            .values()
            .filter_map(|t| {
                let uri = t.view_uri()?;
                match s.resources.get(uri) {
                    Some(r) if is_view(r) => None,
                    Some(_) => Some(format!("tool {:?} links to {uri:?}, which is not a view", t.name())),
                    None if !uri.starts_with(mcp_protocol::apps::SCHEME) => {
                        Some(format!("tool {:?} links to {uri:?}, which is not a ui:// URI", t.name()))
                    }
                    None => {
                        Some(format!("tool {:?} links to the view {uri:?}, which the catalog does not have", t.name()))
                    }
                }
            })
            .collect()
    }
}

impl Tool {
    /// Links the tool to the view at `uri`: hosts that render views show its
    /// result there (`_meta.ui.resourceUri`, and the older flat
    /// `_meta["ui/resourceUri"]`, which hosts still read). The result's
    /// `content` is what clients without views get, so keep it meaningful.
    /// The builder refuses a link to a view the catalog does not have.
    #[must_use]
    pub fn with_view(mut self, uri: impl Into<String>) -> Self {
        let uri = uri.into();
        let meta = self.def.meta.get_or_insert_with(Default::default);
        let ui = meta.entry(apps::META_KEY).or_insert_with(|| json!({}));
        ui["resourceUri"] = Value::String(uri.clone());
        meta.insert(apps::LEGACY_RESOURCE_URI_KEY.into(), Value::String(uri));
        self
    }

    /// Who may call the tool (`_meta.ui.visibility`; default: the model
    /// and views). `[Visibility::App]` makes it app-only: callable from this
    /// server's views, left out of `tools/list` for clients that did not
    /// declare the extension, and refused to them with -32021.
    #[must_use]
    pub fn with_visibility(mut self, visibility: impl IntoIterator<Item = Visibility>) -> Self {
        let list: Vec<Visibility> = visibility.into_iter().collect();
        let meta = self.def.meta.get_or_insert_with(Default::default);
        let ui = meta.entry(apps::META_KEY).or_insert_with(|| json!({}));
        ui["visibility"] = serde_json::to_value(list).unwrap_or_default();
        self
    }

    /// The view the tool is linked to.
    pub fn view_uri(&self) -> Option<&str> {
        let meta = self.def.meta.as_ref()?;
        meta.get(apps::META_KEY)
            .and_then(|ui| ui.get("resourceUri"))
            .or_else(|| meta.get(apps::LEGACY_RESOURCE_URI_KEY))
            .and_then(Value::as_str)
    }

    /// Whether only views may call it (its visibility lists `app` alone).
    pub fn is_app_only(&self) -> bool {
        let Some(ui) = self.def.meta.as_ref().and_then(|m| m.get(apps::META_KEY)) else { return false };
        ui.get("visibility").and_then(Value::as_array).is_some_and(|v| v.len() == 1 && v[0] == "app")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HTML: &str = "<!doctype html><title>v</title>";

    #[test]
    fn a_view_carries_its_ui_meta_on_the_listing() {
        let r = View::new("ui://a/b", "b", HTML)
            .connect_domains(["https://api.example"])
            .permissions([Permission::ClipboardWrite])
            .domain("a.example")
            .prefers_border(false)
            .into_resource()
            .unwrap();
        assert!(is_view(&r));
        assert_eq!(r.def.mime_type.as_deref(), Some("text/html;profile=mcp-app"));
        assert_eq!(
            r.def.meta.as_ref().unwrap()["ui"],
            json!({"csp": {"connectDomains": ["https://api.example"]}, "permissions": {"clipboardWrite": {}},
                "domain": "a.example", "prefersBorder": false})
        );
        assert!(!View::new("ui://a/b", "b", HTML).unlisted().into_resource().unwrap().listed);
    }

    #[test]
    fn bad_views_are_refused_naming_them() {
        let e = View::new("https://a/b", "b", HTML).into_resource().unwrap_err();
        assert!(e.0.contains("https://a/b") && e.0.contains("ui://"), "{e}");
        let e = View::new("ui://a/b", "b", "<div>part</div>").into_resource().unwrap_err();
        assert!(e.0.contains("not an HTML document"), "{e}");
        let e = View::from_file("ui://a/c", "c", "/no/such/view.html").into_resource().unwrap_err();
        assert!(e.0.contains("ui://a/c"), "{e}");
    }

    #[test]
    fn tools_link_to_views_with_their_visibility() {
        let t = Tool::no_args("t", "", |_ctx| async { Ok("x") });
        assert!(t.view_uri().is_none() && !t.is_app_only());
        let t = t.with_view("ui://a/b").with_visibility([Visibility::App]);
        assert_eq!(t.view_uri(), Some("ui://a/b"));
        assert!(t.is_app_only());
        let meta = t.definition().meta.as_ref().unwrap();
        assert_eq!(meta["ui"], json!({"resourceUri": "ui://a/b", "visibility": ["app"]}));
        assert_eq!(meta["ui/resourceUri"], "ui://a/b");
        let both =
            Tool::no_args("u", "", |_ctx| async { Ok("x") }).with_visibility([Visibility::Model, Visibility::App]);
        assert!(!both.is_app_only());
    }
}
