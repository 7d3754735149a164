//! The catalog's items by key, and how an item comes in: with the scopes
//! configuration gives it ([`ScopeRules`]) added to its own.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Prompt, Resource, ResourceTemplate, ScopeRules, Skill, Tool};

/// Items are shared (`Arc`): a lookup copies a pointer, never a definition,
/// and a copy of the whole (a change's draft) copies pointers only.
#[derive(Default, Clone)]
pub(super) struct State {
    pub(super) tools: BTreeMap<String, Arc<Tool>>,
    pub(super) resources: BTreeMap<String, Arc<Resource>>,
    pub(super) templates: BTreeMap<String, Arc<ResourceTemplate>>,
    pub(super) prompts: BTreeMap<String, Arc<Prompt>>,
    /// Skills by the URI of their `SKILL.md`; their files are in `resources`.
    pub(super) skills: BTreeMap<String, Arc<Skill>>,
    /// Whether the Skills extension is declared (a skill was added, or the
    /// catalog serves a skills directory).
    pub(super) serves_skills: bool,
    /// Whether a view was ever added (the MCP Apps extension is declared).
    pub(super) serves_views: bool,
    /// Scopes set by configuration, added to each item as it comes in.
    pub(super) rules: Option<Arc<ScopeRules>>,
}

impl State {
    pub(super) fn put_tool(&mut self, mut tool: Tool) -> Option<Arc<Tool>> {
        if let Some(rules) = &self.rules {
            rules.apply_tool(&mut tool);
        }
        self.tools.insert(tool.name().to_owned(), Arc::new(tool))
    }

    pub(super) fn put_resource(&mut self, mut resource: Resource) -> Option<Arc<Resource>> {
        if let Some(rules) = &self.rules {
            rules.apply_resource(&mut resource);
        }
        self.serves_views |= super::view::is_view(&resource);
        self.resources.insert(resource.uri().to_owned(), Arc::new(resource))
    }

    pub(super) fn put_template(&mut self, mut template: ResourceTemplate) -> Option<Arc<ResourceTemplate>> {
        if let Some(rules) = &self.rules {
            rules.apply_template(&mut template);
        }
        self.templates.insert(template.uri_template().to_owned(), Arc::new(template))
    }

    pub(super) fn put_prompt(&mut self, mut prompt: Prompt) -> Option<Arc<Prompt>> {
        if let Some(rules) = &self.rules {
            rules.apply_prompt(&mut prompt);
        }
        self.prompts.insert(prompt.name().to_owned(), Arc::new(prompt))
    }
}
