//! The optional list cache ([`ClientOptions::cache_lists`]): a list whose
//! every page carried `ttlMs` is kept that long (the shortest page's), and
//! forgotten as soon as its `list_changed` notification arrives.
//!
//! [`ClientOptions::cache_lists`]: super::ClientOptions::cache_lists

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mcp_protocol::model::{CacheHints, CacheScope};
use mcp_protocol::request::method;
use mcp_protocol::subscription::notification;
use serde_json::Value;

/// A page's `ttlMs` and `cacheScope`, when it had them.
pub(crate) type PageHints = (Option<u64>, Option<CacheScope>);

/// Lists by method, each with the instant it expires.
#[derive(Default)]
pub(crate) struct ListCache {
    lists: Mutex<HashMap<String, (Instant, Vec<Value>)>>,
    /// The caching hints of the last listing of each method (kept whether
    /// or not lists are cached).
    hints: Mutex<HashMap<String, CacheHints>>,
}

impl ListCache {
    /// Notes the hints of a listing of `method` from its pages' `ttlMs` and
    /// `cacheScope`: the shortest TTL (a page without one counts as 0) and
    /// the narrowest scope; none when no page had hints.
    pub(crate) fn note_hints(&self, method: &str, pages: &[PageHints]) {
        let mut hints = self.hints.lock().expect("cache lock");
        if pages.iter().all(|(t, s)| t.is_none() && s.is_none()) {
            hints.remove(method);
            return;
        }
        let ttl = pages.iter().map(|(t, _)| t.unwrap_or(0)).min().unwrap_or(0);
        let scope = pages.iter().filter_map(|(_, s)| *s).max().unwrap_or_default();
        hints.insert(method.to_owned(), CacheHints::new(ttl, scope));
    }

    /// The hints of the last listing of `method`.
    pub(crate) fn hints(&self, method: &str) -> Option<CacheHints> {
        self.hints.lock().expect("cache lock").get(method).copied()
    }

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
    pub(crate) fn put(&self, method: &str, pages: &[PageHints], items: &[Value]) {
        let ttl = pages.iter().try_fold(u64::MAX, |min, (t, _)| t.filter(|t| *t > 0).map(|t| min.min(t)));
        if let Some(ttl) = ttl.filter(|_| !pages.is_empty()) {
            let until = Instant::now() + Duration::from_millis(ttl);
            self.lists.lock().expect("cache lock").insert(method.to_owned(), (until, items.to_vec()));
        }
    }

    /// Forgets what a notification says changed.
    pub(crate) fn saw(&self, notification: &str) {
        let methods: &[&str] = match notification {
            notification::TOOLS_LIST_CHANGED => &[method::TOOLS_LIST],
            notification::PROMPTS_LIST_CHANGED => &[method::PROMPTS_LIST],
            notification::RESOURCES_LIST_CHANGED => &[method::RESOURCES_LIST, method::RESOURCES_TEMPLATES_LIST],
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
    fn a_listing_s_hints_are_its_shortest_ttl_and_narrowest_scope() {
        let cache = ListCache::default();
        cache.note_hints(
            method::TOOLS_LIST,
            &[(Some(60_000), Some(CacheScope::Public)), (Some(5_000), Some(CacheScope::Private))],
        );
        assert_eq!(cache.hints(method::TOOLS_LIST), Some(CacheHints::new(5_000, CacheScope::Private)));
        cache.note_hints(method::TOOLS_LIST, &[(Some(60_000), None), (None, None)]);
        assert_eq!(
            cache.hints(method::TOOLS_LIST),
            Some(CacheHints::new(0, CacheScope::Public)),
            "a page without ttlMs counts as 0"
        );
        cache.note_hints(method::TOOLS_LIST, &[(None, None)]);
        assert_eq!(cache.hints(method::TOOLS_LIST), None);
    }

    #[test]
    fn kept_for_the_shortest_page_and_forgotten_on_change() {
        let cache = ListCache::default();
        cache.put(method::TOOLS_LIST, &[(Some(60_000), None), (Some(30_000), None)], &[json!({"name": "a"})]);
        assert_eq!(cache.get(method::TOOLS_LIST).unwrap().len(), 1);
        cache.saw(notification::PROMPTS_LIST_CHANGED);
        assert!(cache.get(method::TOOLS_LIST).is_some());
        cache.saw(notification::TOOLS_LIST_CHANGED);
        assert!(cache.get(method::TOOLS_LIST).is_none());
        cache.put(method::PROMPTS_LIST, &[(Some(60_000), None), (None, None)], &[]);
        assert!(cache.get(method::PROMPTS_LIST).is_none(), "a page without ttlMs is not cached");
        cache.put(method::RESOURCES_LIST, &[(Some(0), None)], &[]);
        assert!(cache.get(method::RESOURCES_LIST).is_none(), "ttlMs 0 means do not cache");
    }
}
