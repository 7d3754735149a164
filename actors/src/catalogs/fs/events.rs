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
#[serde(deny_unknown_fields)]
struct Filter {
    /// Only files under this directory (relative to the root, `/`-separated;
    /// `.` and empty parts are dropped, `..` and an absolute path refused).
    #[serde(default, deserialize_with = "directory")]
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

/// `under` as a plain relative directory (`a/b`), or why it is not one.
fn directory<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let given = String::deserialize(d)?;
    if given.starts_with('/') {
        return Err(serde::de::Error::custom("a directory relative to the root, not an absolute path"));
    }
    let parts: Vec<&str> = given.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    if parts.contains(&"..") {
        return Err(serde::de::Error::custom("a directory inside the root, without .."));
    }
    Ok(parts.join("/"))
}

fn matches(filter: &Filter, data: &Map<String, Value>) -> bool {
    let field = |k: &str| data.get(k).and_then(Value::as_str).unwrap_or_default();
    let under = filter.under.as_str();
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
        let notes: Filter = serde_json::from_value(json!({"under": "./notes//"})).unwrap();
        assert_eq!(notes.under, "notes");
        for refused in ["/etc", "notes/../..", "..", "x/../y"] {
            assert!(serde_json::from_value::<Filter>(json!({"under": refused})).is_err(), "{refused}");
        }
        assert!(serde_json::from_value::<Filter>(json!({"undr": "notes"})).is_err(), "an unknown argument");
        assert!(matches(&notes, &data("created", "notes/a.md")));
        assert!(!matches(&notes, &data("created", "notes-old/a.md")), "a directory, not a prefix of a name");
        assert!(!matches(&notes, &data("created", "notes")));
        let removed = Filter { under: String::new(), change: Some(Change::Removed) };
        assert!(matches(&removed, &data("removed", "a")) && !matches(&removed, &data("changed", "a")));
    }
}
