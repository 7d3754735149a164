//! The catalog: tools, resources, resource templates and prompts a server
//! offers, changeable at runtime. Items are kept ordered by name (URI for
//! resources), which makes listing deterministic and lets cursors resume
//! after a key even when items are added or removed between pages.
//!
//! ```
//! use actix_mcp::catalog::{Catalog, Prompt, Resource};
//! use mcp_protocol::model::prompts::GetPromptResult;
//!
//! let catalog = Catalog::new();
//! catalog.add_resource(Resource::text("memo://hello", "hello", "text/plain", "Hello!")).unwrap();
//! catalog.add_prompt(Prompt::new("greet", "Greets", |_args, _ctx| async {
//!     Ok(GetPromptResult { description: None, messages: vec![] })
//! })).unwrap();
//! assert_eq!(catalog.list_resources(None, 10).unwrap().page.items.len(), 1);
//! ```

mod arguments;
mod batch;
mod body;
mod builders;
mod completing;
pub mod context;
pub mod error;
mod event_reader;
mod event_source;
mod event_types;
mod events;
mod interest;
mod items;
mod listing;
mod names;
mod no_args;
mod outcome;
mod prompt;
mod resolvers;
mod resource;
mod scope_rules;
mod scopes;
mod shared_history;
mod skill;
mod skills;
mod snapshot;
mod state;
mod template;
mod tool;
mod view;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use arc_swap::{ArcSwap, ArcSwapOption};

pub use body::ResourceBody;
pub use completing::Completer;
pub(crate) use event_reader::StreamSlot;
pub(crate) use event_reader::{Reader, Wake};
pub use event_source::{EventSource, WeakEventSource};
#[cfg(feature = "webhooks")]
pub(crate) use event_types::now_ms;
#[cfg(feature = "redis")]
pub(crate) use event_types::Outgoing;
pub use event_types::{
    EventType, DEFAULT_HISTORY, DEFAULT_MAX_BATCH, DEFAULT_MAX_PAYLOAD, DEFAULT_NEXT_POLL, DEFAULT_RETENTION,
};
pub use events::{Origin, Watcher};
pub use interest::Interest;
pub use listing::Listing;
pub use mcp_protocol::header_params::HeaderParam;
use names::{check_name, check_tool, check_uri};
pub use no_args::NoArgs;
pub use outcome::{IntoToolOutcome, Json};
pub use prompt::{Prompt, PromptArgs};
pub use resolvers::{ResourceResolver, ToolResolver};
pub use resource::Resource;
pub use scope_rules::ScopeRules;
pub use skill::{parse_frontmatter, parse_frontmatter_within, Skill, SkillError, SkillFile, SkillFileReader};
pub use template::{ResourceTemplate, TemplateVars, UriPattern};
pub use tool::{HandlerFuture, TaskSupport, Tool};
pub use view::{Permission, View, BRIDGE as VIEW_BRIDGE};

use mcp_protocol::subscription::Event;

/// Why an item was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError(pub String);

impl std::fmt::Display for CatalogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CatalogError {}

/// What a server offers. Shared between workers behind an `Arc`; every
/// method takes `&self`. Readers take no lock: the items are one snapshot,
/// replaced whole by each change (or batch of changes), and a lookup copies
/// out an `Arc`.
///
/// Changes to listed items are published as events to the watchers (a
/// server forwards them to its subscription hub): tools → `tools/list_changed`,
/// prompts → `prompts/list_changed`, resources and templates →
/// `resources/list_changed`; [`Catalog::notify_resource_updated`] publishes
/// `resources/updated`.
#[derive(Default)]
pub struct Catalog {
    /// The items: one snapshot, read without a lock.
    items: snapshot::Items,
    /// How many batches of this catalog are open (on any thread).
    batching: AtomicUsize,
    /// Told of every change (events).
    watchers: ArcSwap<Vec<Watcher>>,
    /// Told when a URI gains its first subscriber or loses its last.
    interest: ArcSwap<Vec<Interest>>,
    /// Asked about what the catalog does not hold.
    resolver: ArcSwapOption<ResourceResolver>,
    tool_resolver: ArcSwapOption<ToolResolver>,
    /// The event types (the Events extension), by name.
    event_types: ArcSwap<event_types::EventTypes>,
    /// Shared application state, one value per type.
    states: state::StateMap,
    /// Whether any item ever added asks for scopes: until one does, a
    /// request needs no per-item scope lookup.
    scoped: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.read();
        f.debug_struct("Catalog")
            .field("tools", &s.tools.len())
            .field("resources", &s.resources.len())
            .field("templates", &s.templates.len())
            .field("prompts", &s.prompts.len())
            .finish()
    }
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Self::default()
    }

    /// Shares `value` with every handler, which gets it with
    /// [`RequestContext::state`](crate::RequestContext::state) (one value per
    /// type; setting another replaces it).
    pub fn set_state<S: Send + Sync + 'static>(&self, value: S) {
        self.states.set(value);
    }

    /// Whether the catalog holds no item and no shared state.
    pub fn is_empty(&self) -> bool {
        let s = self.read();
        s.tools.is_empty()
            && s.resources.is_empty()
            && s.templates.is_empty()
            && s.prompts.is_empty()
            && s.skills.is_empty()
            && self.states.is_empty()
    }

    /// The shared value of type `S`, if one was set.
    pub fn state<S: Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        self.states.get()
    }

    /// Publishes `resources/updated` for a change observed in an external
    /// source that other instances may observe too: `key` identifies the
    /// observation (e.g. modification time and size), and the same key seen
    /// by several instances is delivered once.
    pub fn notify_resource_updated_observed(&self, uri: &str, key: &str) {
        self.emit_keyed(Event::ResourceUpdated { uri: uri.to_owned() }, Some(key));
    }

    /// Adds a resource found in an external source (see
    /// [`Catalog::notify_resource_updated_observed`] for `key`).
    pub fn add_resource_observed(&self, resource: Resource, key: &str) {
        self.insert_resource(resource, Some(key));
    }

    fn insert_resource(&self, resource: Resource, key: Option<&str>) -> Option<Arc<Resource>> {
        self.put_resource(resource, key, false).unwrap_or_default()
    }

    /// Adds a resource, or (unless `only_new`) replaces the one with its
    /// URI; the check and the change in one draft.
    fn put_resource(
        &self,
        resource: Resource,
        key: Option<&str>,
        only_new: bool,
    ) -> Result<Option<Arc<Resource>>, CatalogError> {
        let listed = resource.listed;
        let old = {
            let mut state = self.write();
            if only_new && state.resources.contains_key(resource.uri()) {
                return Err(CatalogError(format!(
                    "a resource {:?} is already there (replace_resource replaces it)",
                    resource.uri()
                )));
            }
            self.note_scopes(&resource.scopes);
            state.put_resource(resource)
        };
        if listed || old.as_ref().is_some_and(|r| r.listed) {
            self.emit_keyed(Event::ResourcesListChanged, key);
        }
        Ok(old)
    }

    /// Removes a resource gone from an external source (see
    /// [`Catalog::notify_resource_updated_observed`] for `key`).
    pub fn remove_resource_observed(&self, uri: &str, key: &str) {
        self.delete_resource(uri, Some(key));
    }

    fn delete_resource(&self, uri: &str, key: Option<&str>) -> Option<Arc<Resource>> {
        let old = self.write().resources.remove(uri);
        if old.as_ref().is_some_and(|r| r.listed) {
            self.emit_keyed(Event::ResourcesListChanged, key);
        }
        old
    }

    /// Adds a tool. Refused (and nothing changes) when a tool of that name
    /// is already there (use [`Catalog::replace_tool`] to replace it), or
    /// the tool is invalid: a name that is not 1–128 of `A-Z a-z 0-9 _ - .`
    /// (the specification's rule), or bad `x-mcp-header` annotations.
    pub fn add_tool(&self, tool: Tool) -> Result<(), CatalogError> {
        check_tool(&tool)?;
        let listed = tool.listed;
        {
            let mut state = self.write();
            if state.tools.contains_key(tool.name()) {
                return Err(CatalogError(format!(
                    "a tool named {:?} is already there (replace_tool replaces it)",
                    tool.name()
                )));
            }
            self.note_scopes(&tool.scopes);
            state.put_tool(tool);
        }
        self.emit_if(listed, Event::ToolsListChanged);
        Ok(())
    }

    /// Adds a tool or replaces the one of the same name (returned). Refused
    /// when the tool is invalid (see [`Catalog::add_tool`]).
    pub fn replace_tool(&self, tool: Tool) -> Result<Option<Arc<Tool>>, CatalogError> {
        check_tool(&tool)?;
        let listed = tool.listed;
        self.note_scopes(&tool.scopes);
        let old = self.write().put_tool(tool);
        self.emit_if(listed || old.as_ref().is_some_and(|t| t.listed), Event::ToolsListChanged);
        Ok(old)
    }

    /// Removes a tool.
    pub fn remove_tool(&self, name: &str) -> Option<Arc<Tool>> {
        let old = self.write().tools.remove(name);
        self.emit_if(old.as_ref().is_some_and(|t| t.listed), Event::ToolsListChanged);
        old
    }

    /// Looks up a tool (listed or not), asking the tool resolver for a
    /// name the catalog does not hold (see [`Catalog::set_tool_resolver`]).
    pub fn tool(&self, name: &str) -> Option<Arc<Tool>> {
        self.find_tool(name).ok()
    }

    /// Looks up a tool as [`Catalog::tool`] does; an unknown name is the
    /// error a call of it gets (`-32602 Unknown tool: NAME`, or what the
    /// tool resolver says of it).
    pub fn find_tool(&self, name: &str) -> Result<Arc<Tool>, error::HandlerError> {
        // The read lock is let go before the resolver runs.
        let held = self.read().tools.get(name).cloned();
        match held {
            Some(tool) => Ok(tool),
            None => self.resolve_tool(name).unwrap_or_else(|| Err(error::HandlerError::unknown_tool(name))),
        }
    }

    /// Whether the catalog holds a tool of this name (the tool resolver
    /// is not asked).
    #[cfg(feature = "gateway")]
    pub(crate) fn holds_tool(&self, name: &str) -> bool {
        self.read().tools.contains_key(name)
    }

    /// Whether the catalog holds a prompt of this name.
    #[cfg(feature = "gateway")]
    pub(crate) fn holds_prompt(&self, name: &str) -> bool {
        self.read().prompts.contains_key(name)
    }

    /// Adds a resource. Refused when one with that URI is already there
    /// (use [`Catalog::replace_resource`]) or the URI is empty.
    pub fn add_resource(&self, resource: Resource) -> Result<(), CatalogError> {
        check_uri(resource.uri())?;
        self.put_resource(resource, None, true).map(drop)
    }

    /// Adds a resource or replaces the one with the same URI (returned).
    pub fn replace_resource(&self, resource: Resource) -> Result<Option<Arc<Resource>>, CatalogError> {
        check_uri(resource.uri())?;
        Ok(self.insert_resource(resource, None))
    }

    /// Replaces a resource's definition without publishing a list change (its
    /// URI and listing are unchanged; e.g. only its size changed).
    pub fn replace_resource_quietly(&self, resource: Resource) -> Option<Arc<Resource>> {
        self.note_scopes(&resource.scopes);
        self.write().put_resource(resource)
    }

    /// Removes a resource.
    pub fn remove_resource(&self, uri: &str) -> Option<Arc<Resource>> {
        self.delete_resource(uri, None)
    }

    /// What the catalog offers, in words for a log line (`3 tools, 1
    /// resource, 0 templates, 1 prompt`).
    pub fn summary(&self) -> String {
        let s = self.read();
        let n = |count: usize, one: &str| format!("{count} {one}{}", if count == 1 { "" } else { "s" });
        let mut out = format!(
            "{}, {}, {}, {}",
            n(s.tools.len(), "tool"),
            n(s.resources.len(), "resource"),
            n(s.templates.len(), "template"),
            n(s.prompts.len(), "prompt")
        );
        if !s.skills.is_empty() {
            out.push_str(&format!(", {}", n(s.skills.len(), "skill")));
        }
        out
    }

    /// How many resources there are (listed or not).
    pub fn resource_count(&self) -> usize {
        self.read().resources.len()
    }

    /// `f` of the URIs that start with `prefix` (`file:`), in order: how
    /// many there are, say (`|uris| uris.count()`), or which.
    pub fn resources_under<R>(&self, prefix: &str, f: impl FnOnce(&mut dyn Iterator<Item = &str>) -> R) -> R {
        let s = self.read();
        let bounds = (std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded);
        f(&mut s.resources.range::<str, _>(bounds).map(|(k, _)| k.as_str()).take_while(|k| k.starts_with(prefix)))
    }

    /// Looks up a resource by exact URI.
    pub fn resource(&self, uri: &str) -> Option<Arc<Resource>> {
        self.read().resources.get(uri).cloned()
    }

    /// Adds a resource template. Refused when the same template string is
    /// already there (use [`Catalog::replace_template`]).
    pub fn add_template(&self, template: ResourceTemplate) -> Result<(), CatalogError> {
        {
            let mut state = self.write();
            if state.templates.contains_key(template.uri_template()) {
                return Err(CatalogError(format!(
                    "a template {:?} is already there (replace_template replaces it)",
                    template.uri_template()
                )));
            }
            self.note_scopes(&template.scopes);
            state.put_template(template);
        }
        self.emit(Event::ResourcesListChanged);
        Ok(())
    }

    /// Adds a resource template or replaces the one with the same template
    /// string (returned).
    pub fn replace_template(&self, template: ResourceTemplate) -> Option<Arc<ResourceTemplate>> {
        self.note_scopes(&template.scopes);
        let old = self.write().put_template(template);
        self.emit(Event::ResourcesListChanged);
        old
    }

    /// Removes a resource template.
    pub fn remove_template(&self, uri_template: &str) -> Option<Arc<ResourceTemplate>> {
        let old = self.write().templates.remove(uri_template);
        self.emit_if(old.is_some(), Event::ResourcesListChanged);
        old
    }

    /// Looks up a template by its template string.
    pub fn template(&self, uri_template: &str) -> Option<Arc<ResourceTemplate>> {
        self.read().templates.get(uri_template).cloned()
    }

    /// The first template (in template order) that matches `uri`.
    pub fn match_template(&self, uri: &str) -> Option<(Arc<ResourceTemplate>, TemplateVars)> {
        self.read().templates.values().find_map(|t| t.pattern.matches(uri).map(|v| (t.clone(), v)))
    }

    /// Adds a prompt. Refused when a prompt of that name is already there
    /// (use [`Catalog::replace_prompt`]) or the name is empty.
    pub fn add_prompt(&self, prompt: Prompt) -> Result<(), CatalogError> {
        check_name("prompt", prompt.name())?;
        let listed = prompt.listed;
        {
            let mut state = self.write();
            if state.prompts.contains_key(prompt.name()) {
                return Err(CatalogError(format!(
                    "a prompt named {:?} is already there (replace_prompt replaces it)",
                    prompt.name()
                )));
            }
            self.note_scopes(&prompt.scopes);
            state.put_prompt(prompt);
        }
        self.emit_if(listed, Event::PromptsListChanged);
        Ok(())
    }

    /// Adds a prompt or replaces the one of the same name (returned).
    pub fn replace_prompt(&self, prompt: Prompt) -> Result<Option<Arc<Prompt>>, CatalogError> {
        check_name("prompt", prompt.name())?;
        let listed = prompt.listed;
        self.note_scopes(&prompt.scopes);
        let old = self.write().put_prompt(prompt);
        self.emit_if(listed || old.as_ref().is_some_and(|p| p.listed), Event::PromptsListChanged);
        Ok(old)
    }

    /// Removes a prompt.
    pub fn remove_prompt(&self, name: &str) -> Option<Arc<Prompt>> {
        let old = self.write().prompts.remove(name);
        self.emit_if(old.as_ref().is_some_and(|p| p.listed), Event::PromptsListChanged);
        old
    }

    /// Looks up a prompt.
    pub fn prompt(&self, name: &str) -> Option<Arc<Prompt>> {
        self.read().prompts.get(name).cloned()
    }
}

#[cfg(test)]
mod tests;
