//! [`ScopeRules`]: scopes of catalog items set by configuration
//! (`[auth.item_scopes]`), for catalogs built without code — the binary's
//! `fs` and `everything`. A tool or prompt is named; resources (and resource
//! templates, by their URI template) are matched by glob. The scopes a rule
//! gives are added to those the item asks for itself, whenever the item is
//! added, so that items added later (a file appearing under `fs`) get them
//! too.

use std::collections::BTreeMap;

use globset::GlobMatcher;

use super::{Catalog, Prompt, Resource, ResourceTemplate, Tool};
use crate::config::{ConfigError, ItemScopesConfig};

impl Catalog {
    /// Sets the scopes configuration gives items (`[auth.item_scopes]`):
    /// applied to the items already there (listing nothing anew) and to
    /// every item added from now on.
    pub fn set_scope_rules(&self, rules: ScopeRules) {
        if rules.is_empty() {
            return;
        }
        self.scoped.store(true, std::sync::atomic::Ordering::Release);
        let mut state = self.write();
        state.rules = Some(std::sync::Arc::new(rules));
        let tools: Vec<Tool> = state.tools.values().map(|t| Tool::clone(t)).collect();
        tools.into_iter().for_each(|t| drop(state.put_tool(t)));
        let resources: Vec<Resource> = state.resources.values().map(|r| Resource::clone(r)).collect();
        resources.into_iter().for_each(|r| drop(state.put_resource(r)));
        let templates: Vec<ResourceTemplate> = state.templates.values().map(|t| ResourceTemplate::clone(t)).collect();
        templates.into_iter().for_each(|t| drop(state.put_template(t)));
        let prompts: Vec<Prompt> = state.prompts.values().map(|p| Prompt::clone(p)).collect();
        prompts.into_iter().for_each(|p| drop(state.put_prompt(p)));
    }
}

/// Scopes by tool name, prompt name and resource URI pattern.
#[derive(Debug, Clone, Default)]
pub struct ScopeRules {
    tools: BTreeMap<String, Vec<String>>,
    prompts: BTreeMap<String, Vec<String>>,
    resources: Vec<(GlobMatcher, Vec<String>)>,
}

impl ScopeRules {
    /// The rules of `[auth.item_scopes]`; an error names a resource
    /// pattern that is not a glob.
    pub fn from_config(config: &ItemScopesConfig) -> Result<Self, ConfigError> {
        let globs = config.resource_globs()?;
        let resources = globs.into_iter().map(|(glob, scopes)| (glob.compile_matcher(), scopes.to_vec())).collect();
        Ok(ScopeRules { tools: config.tools.clone(), prompts: config.prompts.clone(), resources })
    }

    /// Whether no rule is set.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.prompts.is_empty() && self.resources.is_empty()
    }

    pub(super) fn apply_tool(&self, tool: &mut Tool) {
        if let Some(more) = self.tools.get(tool.name()) {
            add(&mut tool.scopes, more);
        }
    }

    pub(super) fn apply_prompt(&self, prompt: &mut Prompt) {
        if let Some(more) = self.prompts.get(prompt.name()) {
            add(&mut prompt.scopes, more);
        }
    }

    pub(super) fn apply_resource(&self, resource: &mut Resource) {
        self.apply_uri(&resource.def.uri, &mut resource.scopes);
    }

    pub(super) fn apply_template(&self, template: &mut ResourceTemplate) {
        self.apply_uri(&template.def.uri_template, &mut template.scopes);
    }

    fn apply_uri(&self, uri: &str, scopes: &mut Vec<String>) {
        for (glob, more) in &self.resources {
            if glob.is_match(uri) {
                add(scopes, more);
            }
        }
    }
}

/// Adds the scopes of `more` that `scopes` lacks.
fn add(scopes: &mut Vec<String>, more: &[String]) {
    for s in more {
        if !scopes.contains(s) {
            scopes.push(s.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect())).collect()
    }

    #[test]
    fn rules_add_to_an_items_own_scopes() {
        let rules = ScopeRules::from_config(&ItemScopesConfig {
            tools: map(&[("echo", &["admin"])]),
            prompts: map(&[("greet", &["mcp:prompts"])]),
            resources: map(&[("file:///secret/**", &["secret"]), ("file:///**", &["files"])]),
        })
        .unwrap();
        let mut tool = Tool::raw("echo", "", serde_json::json!({"type": "object"}), |_, _| async {
            Ok(mcp_protocol::model::tools::CallToolResult::text("x"))
        })
        .with_scopes(["admin", "mcp"]);
        rules.apply_tool(&mut tool);
        assert_eq!(tool.scopes(), ["admin", "mcp"]);
        let mut secret = Resource::text("file:///secret/key.txt", "key", "text/plain", "k");
        rules.apply_resource(&mut secret);
        assert_eq!(secret.scopes(), ["files", "secret"]);
        let mut other = Resource::text("memo://x", "x", "text/plain", "x");
        rules.apply_resource(&mut other);
        assert!(other.scopes().is_empty());
        let bad = ItemScopesConfig { resources: map(&[("[", &["x"])]), ..ItemScopesConfig::default() };
        assert!(ScopeRules::from_config(&bad).is_err());
        assert!(ScopeRules::default().is_empty());
    }
}
