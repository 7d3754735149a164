//! What a client opts into on a listen stream, and the acknowledgement
//! that tells it what it got.

use serde::{Deserialize, Serialize};
use serde_json::Map;

use crate::error::ProtocolError;

use super::encode::encode_tagged_notification;
use super::event::Event;
use crate::jsonrpc::RequestId;

/// `subscriptions/listen` method name.
pub const LISTEN_METHOD: &str = "subscriptions/listen";
/// The acknowledgement sent first on every listen stream.
pub const ACKNOWLEDGED_METHOD: &str = "notifications/subscriptions/acknowledged";

/// What a client opts into on one listen stream. Omitted fields mean "no".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resources_list_changed: bool,
    /// `notifications/events/list_changed` (the Events extension; honoured
    /// only by a server that declared it with `listChanged: true`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub events_list_changed: bool,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_subscriptions: Vec<String>,
    /// Tasks whose status notifications (`notifications/tasks`) are wanted
    /// (the Tasks extension).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_ids: Vec<String>,
    /// The key of the authenticated caller that opened the stream (never on
    /// the wire: the server sets it). Task events reach only listeners of
    /// their owner: another caller's listen of a task id sees what an
    /// unknown id gets, nothing.
    #[serde(skip)]
    pub owner: Option<String>,
}

impl SubscriptionFilter {
    /// Every list change (tools, prompts, resources), nothing else.
    pub fn every_list_change() -> Self {
        SubscriptionFilter {
            tools_list_changed: true,
            prompts_list_changed: true,
            resources_list_changed: true,
            ..Default::default()
        }
    }

    /// The part of `self` a server supporting `supported` honours.
    pub fn honored(&self, supported: &SubscriptionFilter) -> SubscriptionFilter {
        SubscriptionFilter {
            tools_list_changed: self.tools_list_changed && supported.tools_list_changed,
            prompts_list_changed: self.prompts_list_changed && supported.prompts_list_changed,
            resources_list_changed: self.resources_list_changed && supported.resources_list_changed,
            events_list_changed: self.events_list_changed && supported.events_list_changed,
            resource_subscriptions: if supported.resource_subscriptions.is_empty() {
                Vec::new()
            } else {
                // Each URI once, in the order first given.
                let mut seen = std::collections::HashSet::new();
                self.resource_subscriptions.iter().filter(|u| seen.insert(u.as_str())).cloned().collect()
            },
            task_ids: if supported.task_ids.is_empty() {
                Vec::new()
            } else {
                let mut seen = std::collections::HashSet::new();
                self.task_ids.iter().filter(|t| seen.insert(t.as_str())).cloned().collect()
            },
            owner: self.owner.clone(),
        }
    }

    /// This filter, for the caller with key `owner`.
    #[must_use]
    pub fn owned_by(mut self, owner: Option<String>) -> Self {
        self.owner = owner;
        self
    }

    /// Checks the size of `resourceSubscriptions` against a server's limits:
    /// at most `max_uris` distinct URIs, each at most `max_uri_bytes` long
    /// (-32602 otherwise, naming the limit).
    pub fn check_limits(&self, max_uris: usize, max_uri_bytes: usize) -> Result<(), ProtocolError> {
        if let Some(uri) = self.resource_subscriptions.iter().find(|u| u.len() > max_uri_bytes) {
            return Err(ProtocolError::InvalidParams(format!(
                "notifications.resourceSubscriptions: a URI of {} bytes exceeds the limit of {max_uri_bytes}",
                uri.len()
            )));
        }
        let distinct: std::collections::HashSet<&str> =
            self.resource_subscriptions.iter().map(String::as_str).collect();
        if distinct.len() > max_uris {
            return Err(ProtocolError::InvalidParams(format!(
                "notifications.resourceSubscriptions: {} URIs exceed the limit of {max_uris} per stream",
                distinct.len()
            )));
        }
        let tasks: std::collections::HashSet<&str> = self.task_ids.iter().map(String::as_str).collect();
        if tasks.len() > max_uris || self.task_ids.iter().any(|t| t.len() > max_uri_bytes) {
            return Err(ProtocolError::InvalidParams(format!(
                "notifications.taskIds: at most {max_uris} ids of at most {max_uri_bytes} bytes per stream"
            )));
        }
        Ok(())
    }

    /// Whether the filter asks for nothing.
    pub fn is_empty(&self) -> bool {
        !self.tools_list_changed
            && !self.prompts_list_changed
            && !self.resources_list_changed
            && !self.events_list_changed
            && self.resource_subscriptions.is_empty()
            && self.task_ids.is_empty()
    }

    /// Whether `event` passes the filter.
    pub fn wants(&self, event: &Event) -> bool {
        match event {
            Event::ToolsListChanged => self.tools_list_changed,
            Event::PromptsListChanged => self.prompts_list_changed,
            Event::ResourcesListChanged => self.resources_list_changed,
            Event::EventsListChanged => self.events_list_changed,
            Event::ResourceUpdated { uri } => self.resource_subscriptions.iter().any(|u| u == uri),
            Event::TaskStatus { task_id, owner, .. } => {
                *owner == self.owner && self.task_ids.iter().any(|t| t == task_id)
            }
        }
    }
}

/// Params of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ListenParams {
    /// The opted-in notification types.
    pub notifications: SubscriptionFilter,
}

/// The acknowledgement, first message of every subscription.
pub fn encode_ack(id: &RequestId, honored: &SubscriptionFilter) -> Vec<u8> {
    let mut params = Map::new();
    params.insert("notifications".into(), serde_json::to_value(honored).expect("filters serialize"));
    encode_tagged_notification(ACKNOWLEDGED_METHOD, params, id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uris(list: &[&str]) -> SubscriptionFilter {
        SubscriptionFilter {
            resource_subscriptions: list.iter().map(|u| u.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn honoured_uris_are_distinct_in_first_order() {
        let all = uris(&["*"]);
        assert_eq!(uris(&["a", "b", "a", "c", "b"]).honored(&all), uris(&["a", "b", "c"]));
    }

    #[test]
    fn limits_count_distinct_uris_and_their_length() {
        assert!(uris(&["a", "a", "b"]).check_limits(2, 10).is_ok());
        assert!(uris(&["a", "b", "c"]).check_limits(2, 10).unwrap_err().to_string().contains("limit of 2"));
        assert!(uris(&["abcdef"]).check_limits(5, 5).unwrap_err().to_string().contains("6 bytes"));
    }
}
