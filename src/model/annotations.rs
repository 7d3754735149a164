//! Annotations (spec: `Annotations`): hints to the client about how to use or
//! show a content block or resource.

use serde::{Deserialize, Serialize};

use super::role::Role;

/// Who a block is meant for, how important it is, and when it last changed.
/// Every field is optional; the client decides what to do with them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// The intended readers: `user`, `assistant` or both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (optional) to 1 (required).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// When the underlying data last changed, ISO 8601 (e.g. `2025-01-12T15:00:58Z`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Annotations {
    /// Annotations naming the intended readers.
    pub fn for_audience(audience: impl IntoIterator<Item = Role>) -> Self {
        Annotations { audience: Some(audience.into_iter().collect()), ..Self::default() }
    }

    /// These annotations with a priority (clamped to 0..=1).
    pub fn with_priority(mut self, priority: f64) -> Self {
        self.priority = Some(priority.clamp(0.0, 1.0));
        self
    }

    /// These annotations with a last-modified time (ISO 8601).
    pub fn with_last_modified(mut self, when: impl Into<String>) -> Self {
        self.last_modified = Some(when.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn encodes_only_what_is_set() {
        let a = Annotations::for_audience([Role::User]).with_priority(1.5);
        assert_eq!(serde_json::to_value(&a).unwrap(), json!({"audience": ["user"], "priority": 1.0}));
        assert_eq!(serde_json::to_value(Annotations::default()).unwrap(), json!({}));
        let back: Annotations =
            serde_json::from_value(json!({"audience": ["assistant"], "lastModified": "2025-05-03T14:30:00Z"})).unwrap();
        assert_eq!(back.last_modified.as_deref(), Some("2025-05-03T14:30:00Z"));
        assert_eq!(back.audience, Some(vec![Role::Assistant]));
    }
}
