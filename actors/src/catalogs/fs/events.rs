//! The `fs` catalog's event type, `file.changed`: a served file under the
//! root was created, changed or removed (what the watcher sees, through the
//! same jail and rules as the resources). Polled or streamed, with replay
//! from the type's bounded history. A creation's or a change's id names the
//! file and the state observed, so instances watching one directory give
//! it the same id; a removal's is fresh.

use mcp_protocol::events::Delivery;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::catalog::{Catalog, CatalogError, EventSource, EventType};

/// The event type's name.
pub const FILE_CHANGED: &str = "file.changed";

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// It appeared.
    Created,
    /// Its contents changed.
    Changed,
    /// It is gone (or no longer served).
    Removed,
}

/// Which changes to hear of.
#[derive(Deserialize, JsonSchema)]
struct Filter {
    /// Only files under this directory (relative to the root, `/`-separated).
    #[serde(default)]
    under: String,
    /// Only this kind of change.
    change: Option<Change>,
}

/// One change.
#[derive(Serialize, JsonSchema)]
struct FileChange {
    /// What happened.
    change: Change,
    /// The file's resource URI.
    uri: String,
    /// The file's path relative to the root.
    path: String,
}

fn matches(filter: &Filter, data: &Map<String, Value>) -> bool {
    let field = |k: &str| data.get(k).and_then(Value::as_str).unwrap_or_default();
    let under = filter.under.trim_matches('/');
    let inside = under.is_empty() || field("path").strip_prefix(under).is_some_and(|rest| rest.starts_with('/'));
    let kind = filter
        .change
        .is_none_or(|c| serde_json::to_value(c).ok().as_ref().and_then(Value::as_str) == Some(field("change")));
    inside && kind
}

/// Adds `file.changed` to `catalog`.
pub(super) fn add(catalog: &Catalog) -> Result<EventSource, CatalogError> {
    let modes = [Delivery::Poll, Delivery::Push];
    let description = "A served file under the root was created, changed or removed";
    catalog.add_event_type(EventType::matching::<Filter, FileChange>(FILE_CHANGED, description, &modes, matches))
}

/// Emits one change of the file at `path` (root-relative) and `uri`;
/// `observed` identifies the state seen (the watcher's observation; `None`
/// for a removal).
pub(super) fn emit(source: &EventSource, change: Change, uri: &str, path: &str, observed: Option<&str>) {
    let data = FileChange { change, uri: uri.to_owned(), path: path.to_owned() };
    let _ = match observed {
        Some(observed) => source.emit_with_id(format!("{uri}#{observed}"), data),
        None => source.emit(data),
    };
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn data(change: &str, path: &str) -> Map<String, Value> {
        json!({"change": change, "uri": format!("file:///r/{path}"), "path": path}).as_object().unwrap().clone()
    }

    #[test]
    fn under_is_a_directory_and_change_a_kind() {
        let notes = Filter { under: "notes/".into(), change: None };
        assert!(matches(&notes, &data("created", "notes/a.md")));
        assert!(!matches(&notes, &data("created", "notes-old/a.md")), "a directory, not a prefix of a name");
        assert!(!matches(&notes, &data("created", "notes")));
        let removed = Filter { under: String::new(), change: Some(Change::Removed) };
        assert!(matches(&removed, &data("removed", "a")) && !matches(&removed, &data("changed", "a")));
    }
}
