//! [`ScopePolicy`]: which scopes a request needs and whether a grant
//! satisfies them, honouring a scope hierarchy (a broader scope implies
//! narrower ones, as the authorization spec requires servers to account for).

use std::collections::{BTreeMap, BTreeSet};

/// The scopes every request needs and the hierarchy between scopes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScopePolicy {
    required: Vec<String>,
    /// Each scope with every scope it implies, transitively.
    implied: BTreeMap<String, BTreeSet<String>>,
}

impl ScopePolicy {
    /// A policy needing `required` for every request, where each key of
    /// `implies` grants the scopes listed with it (transitively).
    pub fn new(required: Vec<String>, implies: &BTreeMap<String, Vec<String>>) -> Self {
        let mut implied = BTreeMap::new();
        for root in implies.keys() {
            let mut seen = BTreeSet::new();
            let mut stack = vec![root.as_str()];
            while let Some(s) = stack.pop() {
                for narrower in implies.get(s).into_iter().flatten() {
                    if seen.insert(narrower.clone()) {
                        stack.push(narrower);
                    }
                }
            }
            implied.insert(root.clone(), seen);
        }
        ScopePolicy { required, implied }
    }

    /// The scopes every request needs.
    pub fn required(&self) -> &[String] {
        &self.required
    }

    /// Whether `granted` includes `scope`, directly or through a broader scope.
    pub fn grants(&self, granted: &[String], scope: &str) -> bool {
        granted.iter().any(|g| g == scope || self.implied.get(g).is_some_and(|n| n.contains(scope)))
    }

    /// The scopes an operation needs — the required ones, then `extra` —
    /// when `granted` lacks any of them (`None`: the grant suffices). The
    /// answer names all of them, for a single step-up challenge.
    pub fn insufficient(&self, granted: &[String], extra: &[String]) -> Option<Vec<String>> {
        let all = || self.required.iter().chain(extra);
        if all().all(|s| self.grants(granted, s)) {
            return None;
        }
        let mut needed: Vec<String> = Vec::new();
        for s in all() {
            if !needed.contains(s) {
                needed.push(s.clone());
            }
        }
        Some(needed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn required_extra_and_hierarchy() {
        let mut implies = BTreeMap::new();
        implies.insert("admin".to_string(), strings(&["files"]));
        implies.insert("files".to_string(), strings(&["files:read", "files:write"]));
        let p = ScopePolicy::new(strings(&["mcp"]), &implies);
        assert_eq!(p.insufficient(&strings(&["mcp"]), &[]), None);
        assert_eq!(p.insufficient(&[], &[]), Some(strings(&["mcp"])));
        let write = strings(&["files:write"]);
        assert_eq!(p.insufficient(&strings(&["mcp", "files:read"]), &write), Some(strings(&["mcp", "files:write"])));
        assert_eq!(p.insufficient(&strings(&["mcp", "files"]), &write), None);
        // Transitive: admin → files → files:write.
        assert_eq!(p.insufficient(&strings(&["mcp", "admin"]), &write), None);
        assert!(!p.grants(&strings(&["files:read"]), "files"));
    }
}
