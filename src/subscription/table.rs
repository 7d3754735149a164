//! [`SubscriptionTable`]: which listeners want which events.

use std::collections::{HashMap, HashSet};

use super::event::Event;
use super::filter::SubscriptionFilter;

/// Identifies one listener inside a server process (a process-wide counter:
/// small, as routing tables hold one per open subscription).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ListenerId(pub u64);

impl ListenerId {
    /// The next id of this process.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        ListenerId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl std::fmt::Display for ListenerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Which listeners want which events: filter kind → listener set, URI →
/// listener set. Pure data: each listener carries a payload `T` (the hub
/// actor keeps its handle there).
#[derive(Debug, Clone)]
pub struct SubscriptionTable<T = ()> {
    tools: HashSet<ListenerId>,
    prompts: HashSet<ListenerId>,
    resources: HashSet<ListenerId>,
    events: HashSet<ListenerId>,
    by_uri: HashMap<String, HashSet<ListenerId>>,
    by_task: HashMap<String, HashSet<ListenerId>>,
    filters: HashMap<ListenerId, (SubscriptionFilter, T)>,
}

impl<T> Default for SubscriptionTable<T> {
    fn default() -> Self {
        SubscriptionTable {
            tools: HashSet::new(),
            prompts: HashSet::new(),
            resources: HashSet::new(),
            events: HashSet::new(),
            by_uri: HashMap::new(),
            by_task: HashMap::new(),
            filters: HashMap::new(),
        }
    }
}

impl SubscriptionTable<()> {
    /// Adds (or replaces) a listener with its filter.
    pub fn insert(&mut self, id: ListenerId, filter: &SubscriptionFilter) {
        let _ = self.insert_with(id, filter, ());
    }
}

impl<T> SubscriptionTable<T> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a listener with its filter and payload; returns
    /// the payload it replaced.
    pub fn insert_with(&mut self, id: ListenerId, filter: &SubscriptionFilter, payload: T) -> Option<T> {
        let replaced = self.remove(id);
        if filter.tools_list_changed {
            self.tools.insert(id);
        }
        if filter.prompts_list_changed {
            self.prompts.insert(id);
        }
        if filter.resources_list_changed {
            self.resources.insert(id);
        }
        if filter.events_list_changed {
            self.events.insert(id);
        }
        for uri in &filter.resource_subscriptions {
            self.by_uri.entry(uri.clone()).or_default().insert(id);
        }
        for task in &filter.task_ids {
            self.by_task.entry(task.clone()).or_default().insert(id);
        }
        self.filters.insert(id, (filter.clone(), payload));
        replaced
    }

    /// Removes a listener; returns its payload if it was present.
    pub fn remove(&mut self, id: ListenerId) -> Option<T> {
        self.take(id).map(|(_, payload)| payload)
    }

    /// Removes a listener; returns its filter and payload if it was present.
    pub fn take(&mut self, id: ListenerId) -> Option<(SubscriptionFilter, T)> {
        let (filter, payload) = self.filters.remove(&id)?;
        self.tools.remove(&id);
        self.prompts.remove(&id);
        self.resources.remove(&id);
        self.events.remove(&id);
        for (index, keys) in [(&mut self.by_uri, &filter.resource_subscriptions), (&mut self.by_task, &filter.task_ids)]
        {
            for key in keys {
                if let Some(set) = index.get_mut(key) {
                    set.remove(&id);
                    if set.is_empty() {
                        index.remove(key);
                    }
                }
            }
        }
        Some((filter, payload))
    }

    /// The listeners that want `event` (a task's event: those of its owner
    /// that named it).
    pub fn route<'a>(&'a self, event: &'a Event) -> impl Iterator<Item = ListenerId> + 'a {
        let (set, owner) = match event {
            Event::ToolsListChanged => (Some(&self.tools), None),
            Event::PromptsListChanged => (Some(&self.prompts), None),
            Event::ResourcesListChanged => (Some(&self.resources), None),
            Event::EventsListChanged => (Some(&self.events), None),
            Event::ResourceUpdated { uri } => (self.by_uri.get(uri), None),
            Event::TaskStatus { task_id, owner, .. } => (self.by_task.get(task_id), Some(owner)),
        };
        set.into_iter().flatten().copied().filter(move |id| match owner {
            None => true,
            Some(owner) => self.filters.get(id).is_some_and(|(f, _)| f.owner == *owner),
        })
    }

    /// Whether some listener subscribed to `uri`.
    pub fn wants_uri(&self, uri: &str) -> bool {
        self.by_uri.contains_key(uri)
    }

    /// Every listener.
    pub fn listeners(&self) -> impl Iterator<Item = ListenerId> + '_ {
        self.filters.keys().copied()
    }

    /// The filter of a listener.
    pub fn filter(&self, id: ListenerId) -> Option<&SubscriptionFilter> {
        self.filters.get(&id).map(|(f, _)| f)
    }

    /// The payload of a listener.
    pub fn payload(&self, id: ListenerId) -> Option<&T> {
        self.filters.get(&id).map(|(_, p)| p)
    }

    /// Gives back the room of listeners that left (the maps keep their
    /// largest size otherwise).
    pub fn shrink_to_fit(&mut self) {
        self.tools.shrink_to_fit();
        self.prompts.shrink_to_fit();
        self.resources.shrink_to_fit();
        self.by_uri.shrink_to_fit();
        self.by_task.shrink_to_fit();
        self.filters.shrink_to_fit();
    }

    /// Every listener's payload.
    pub fn payloads(&self) -> impl Iterator<Item = &T> + '_ {
        self.filters.values().map(|(_, p)| p)
    }

    /// How many listeners.
    pub fn len(&self) -> usize {
        self.filters.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn filter(v: Value) -> SubscriptionFilter {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn routes_by_kind_and_uri() {
        let mut t = SubscriptionTable::new();
        let (a, b, c) = (ListenerId::new(), ListenerId::new(), ListenerId::new());
        t.insert(a, &filter(json!({"toolsListChanged": true, "resourceSubscriptions": ["x://1"]})));
        t.insert(b, &filter(json!({"promptsListChanged": true, "resourceSubscriptions": ["x://1", "x://2"]})));
        t.insert(c, &filter(json!({"resourcesListChanged": true})));
        let mut got: Vec<_> = t.route(&Event::ResourceUpdated { uri: "x://1".into() }).collect();
        got.sort();
        let mut want = vec![a, b];
        want.sort();
        assert_eq!(got, want);
        assert_eq!(t.route(&Event::ResourceUpdated { uri: "x://2".into() }).collect::<Vec<_>>(), vec![b]);
        assert_eq!(t.route(&Event::ResourceUpdated { uri: "x://3".into() }).count(), 0);
        assert_eq!(t.route(&Event::ToolsListChanged).collect::<Vec<_>>(), vec![a]);
        assert_eq!(t.route(&Event::ResourcesListChanged).collect::<Vec<_>>(), vec![c]);
        assert!(t.remove(b).is_some());
        assert!(t.remove(b).is_none());
        assert_eq!(t.route(&Event::ResourceUpdated { uri: "x://2".into() }).count(), 0);
        assert_eq!(t.len(), 2);
        assert!(!t.by_uri.contains_key("x://2"), "empty URI sets are dropped");
    }
}
