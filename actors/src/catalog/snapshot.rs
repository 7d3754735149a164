//! The catalog's items as one snapshot, swapped whole: a request reads the
//! current snapshot without a lock (a pointer load), and a change copies
//! it, edits the copy and publishes it in one swap, so a reader sees every
//! change of a batch at once or none of it.
//!
//! Writers are serialised by one mutex. A change made alone copies the
//! item maps (`Arc`s, not definitions) once; the changes of a
//! [`Catalog::batch`](super::Catalog::batch) share one copy, kept on the
//! batch's thread and published when the batch ends (or before an event
//! that must not wait for it), so loading n items in a batch costs O(n).

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard};

use arc_swap::{ArcSwap, Guard};

use super::batch;
use super::items::State;
use super::Catalog;

/// The published snapshot and the writers' lock.
#[derive(Default)]
pub(super) struct Items {
    current: ArcSwap<State>,
    writer: Mutex<()>,
}

impl Items {
    /// Takes the writers' lock (held by a lone change, or by a batch for its
    /// whole run).
    pub(super) fn lock(&self) -> MutexGuard<'_, ()> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes `state` the snapshot readers see.
    pub(super) fn publish(&self, state: Arc<State>) {
        self.current.store(state);
    }

    /// The published snapshot, as a counted pointer.
    pub(super) fn load_full(&self) -> Arc<State> {
        self.current.load_full()
    }
}

/// What a reader holds: the published snapshot, or on a thread inside a
/// batch of this catalog, the batch's copy (a batch reads its own changes).
pub(super) enum Reading {
    Published(Guard<Arc<State>>),
    Batch(Arc<State>),
}

impl Deref for Reading {
    type Target = State;

    fn deref(&self) -> &State {
        match self {
            Reading::Published(guard) => guard,
            Reading::Batch(state) => state,
        }
    }
}

/// A change being made: a copy of the items that is published when the
/// draft is dropped (a lone change), or handed back to its batch.
pub(super) struct Draft<'a> {
    catalog: &'a Catalog,
    state: Option<Arc<State>>,
    /// The writers' lock, for a lone change; `None` inside a batch, which
    /// holds it.
    lock: Option<MutexGuard<'a, ()>>,
}

impl Deref for Draft<'_> {
    type Target = State;

    fn deref(&self) -> &State {
        self.state.as_deref().expect("a draft holds its state until dropped")
    }
}

impl DerefMut for Draft<'_> {
    fn deref_mut(&mut self) -> &mut State {
        // Copies the maps the first time only: after that the draft is the
        // copy's one owner.
        Arc::make_mut(self.state.as_mut().expect("a draft holds its state until dropped"))
    }
}

impl Drop for Draft<'_> {
    fn drop(&mut self) {
        let Some(state) = self.state.take() else { return };
        if self.lock.is_some() {
            self.catalog.items.publish(state);
        } else {
            batch::keep_draft(self.catalog, state);
        }
    }
}

impl Catalog {
    /// The items as this thread should see them, without a lock.
    pub(super) fn read(&self) -> Reading {
        match self.batch_draft() {
            Some(state) => Reading::Batch(state),
            None => Reading::Published(self.items.current.load()),
        }
    }

    /// A change to the items: published when the returned draft is dropped,
    /// or at the end of the batch open on this thread.
    pub(super) fn write(&self) -> Draft<'_> {
        match batch::take_draft(self) {
            Some(state) => Draft { catalog: self, state: Some(state), lock: None },
            None => {
                let lock = self.items.lock();
                Draft { catalog: self, state: Some(self.items.load_full()), lock: Some(lock) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Resource, Tool};
    use super::*;
    use mcp_protocol::model::tools::CallToolResult;
    use serde_json::json;

    fn tool(name: &str) -> Tool {
        Tool::raw(name, "t", json!({"type": "object"}), |_, _| async { Ok(CallToolResult::text("ok")) })
    }

    #[test]
    fn a_reader_keeps_the_snapshot_it_loaded() {
        let catalog = Catalog::new();
        catalog.add_tool(tool("a")).unwrap();
        let before = catalog.read();
        catalog.add_tool(tool("b")).unwrap();
        assert_eq!(before.tools.len(), 1, "a snapshot does not change under its reader");
        assert_eq!(catalog.read().tools.len(), 2);
    }

    #[test]
    fn a_batch_reads_its_own_changes_and_others_see_them_at_its_end() {
        let catalog = Arc::new(Catalog::new());
        catalog.batch(|c| {
            c.add_resource(Resource::text("memo://1", "one", "text/plain", "1")).unwrap();
            // Inside the batch its changes are seen (a duplicate is refused)…
            assert!(c.add_resource(Resource::text("memo://1", "one", "text/plain", "1")).is_err());
            assert!(c.resource("memo://1").is_some());
            // …and another thread sees none of them until it ends.
            let other = catalog.clone();
            assert!(std::thread::spawn(move || other.resource("memo://1").is_none()).join().unwrap());
        });
        let other = catalog.clone();
        assert!(std::thread::spawn(move || other.resource("memo://1").is_some()).join().unwrap());
    }

    #[test]
    fn a_batch_copies_the_items_once() {
        let catalog = Catalog::new();
        catalog.batch(|c| {
            c.add_tool(tool("a")).unwrap();
            let first = Arc::as_ptr(&c.batch_draft().unwrap());
            c.add_tool(tool("b")).unwrap();
            assert_eq!(Arc::as_ptr(&c.batch_draft().unwrap()), first, "the batch edits its one copy in place");
        });
        assert_eq!(catalog.read().tools.len(), 2);
    }

    #[test]
    fn an_observed_event_inside_a_batch_follows_its_change() {
        let catalog = Arc::new(Catalog::new());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (c2, s) = (catalog.clone(), seen.clone());
        // The watcher looks from another thread, as a listener re-listing would.
        catalog.watch(move |_, _| {
            let c3 = c2.clone();
            let count = std::thread::spawn(move || c3.resource_count()).join().unwrap();
            s.lock().unwrap().push(count);
        });
        catalog.batch(|c| c.add_resource_observed(Resource::text("file:///a", "a", "text/plain", "a"), "k1"));
        assert_eq!(*seen.lock().unwrap(), vec![1], "the event was published after the change was visible");
    }
}
