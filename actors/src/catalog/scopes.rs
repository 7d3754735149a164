//! The scopes a catalog's items ask for (`with_scopes`): every one in use
//! (for the protected-resource metadata), and those of the item one request
//! uses.

use mcp_protocol::request::ItemKind;

use super::Catalog;

impl Catalog {
    pub(super) fn note_scopes(&self, scopes: &[String]) {
        if !scopes.is_empty() {
            self.scoped.store(true, std::sync::atomic::Ordering::Release);
        }
    }

    /// Whether any item asks for scopes (`with_scopes`).
    pub fn has_scoped_items(&self) -> bool {
        self.scoped.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Every scope some item asks for (`with_scopes`), for the
    /// protected-resource metadata.
    pub fn scopes_in_use(&self) -> std::collections::BTreeSet<String> {
        let s = self.read();
        let tools = s.tools.values().flat_map(|t| t.scopes.iter());
        let resources = s.resources.values().flat_map(|r| r.scopes.iter());
        let templates = s.templates.values().flat_map(|t| t.scopes.iter());
        let prompts = s.prompts.values().flat_map(|p| p.scopes.iter());
        tools.chain(resources).chain(templates).chain(prompts).cloned().collect()
    }

    /// The scopes of one item (none for a task, whose owner is checked
    /// instead, or for an unknown item, which fails on its own).
    pub fn item_scopes(&self, kind: ItemKind, name: &str) -> Vec<String> {
        match kind {
            ItemKind::Tool => self.tool(name).map(|t| t.scopes.clone()).unwrap_or_default(),
            ItemKind::Prompt => self.prompt(name).map(|p| p.scopes.clone()).unwrap_or_default(),
            ItemKind::Resource => self.read_scopes(name),
            _ => Vec::new(),
        }
    }

    /// The scopes needed to read `uri`: its resource's, or those of the
    /// template matching it.
    pub fn read_scopes(&self, uri: &str) -> Vec<String> {
        let s = self.read();
        match s.resources.get(uri) {
            Some(r) => r.scopes.clone(),
            None => s
                .templates
                .values()
                .find(|t| t.pattern.matches(uri).is_some())
                .map(|t| t.scopes.clone())
                .unwrap_or_default(),
        }
    }
}
