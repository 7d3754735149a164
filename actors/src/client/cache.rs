//! The optional list cache ([`ClientOptions::cache_lists`]): a list whose
//! every page carried `ttlMs` is kept that long (the shortest page's), and
//! forgotten as soon as its `list_changed` notification arrives.
//!
//! [`ClientOptions::cache_lists`]: super::ClientOptions::cache_lists

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Lists by method, each with the instant it expires.
#[derive(Default)]
pub(crate) struct ListCache {
    lists: Mutex<HashMap<String, (Instant, Vec<Value>)>>,
}

impl ListCache {
    /// The cached items of `method`, while fresh.
    pub(crate) fn get(&self, method: &str) -> Option<Vec<Value>> {
        let mut lists = self.lists.lock().expect("cache lock");
        match lists.get(method) {
            Some((until, items)) if Instant::now() < *until => Some(items.clone()),
            Some(_) => {
                lists.remove(method);
                None
            }
            None => None,
        }
    }

    /// Keeps `items` for the shortest `ttlMs` of `pages`; nothing when a
    /// page had none (or 0).
    pub(crate) fn put(&self, method: &str, pages: &[Option<u64>], items: &[Value]) {
        let ttl = pages.iter().copied().try_fold(u64::MAX, |min, t| t.filter(|t| *t > 0).map(|t| min.min(t)));
        if let Some(ttl) = ttl.filter(|_| !pages.is_empty()) {
            let until = Instant::now() + Duration::from_millis(ttl);
            self.lists.lock().expect("cache lock").insert(method.to_owned(), (until, items.to_vec()));
        }
    }

    /// Forgets what a notification says changed.
    pub(crate) fn saw(&self, notification: &str) {
        let methods: &[&str] = match notification {
            "notifications/tools/list_changed" => &["tools/list"],
            "notifications/prompts/list_changed" => &["prompts/list"],
            "notifications/resources/list_changed" => &["resources/list", "resources/templates/list"],
            _ => return,
        };
        let mut lists = self.lists.lock().expect("cache lock");
        for m in methods {
            lists.remove(*m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kept_for_the_shortest_page_and_forgotten_on_change() {
        let cache = ListCache::default();
        cache.put("tools/list", &[Some(60_000), Some(30_000)], &[json!({"name": "a"})]);
        assert_eq!(cache.get("tools/list").unwrap().len(), 1);
        cache.saw("notifications/prompts/list_changed");
        assert!(cache.get("tools/list").is_some());
        cache.saw("notifications/tools/list_changed");
        assert!(cache.get("tools/list").is_none());
        cache.put("prompts/list", &[Some(60_000), None], &[]);
        assert!(cache.get("prompts/list").is_none(), "a page without ttlMs is not cached");
        cache.put("resources/list", &[Some(0)], &[]);
        assert!(cache.get("resources/list").is_none(), "ttlMs 0 means do not cache");
    }
}
