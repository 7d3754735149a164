//! Several changes, one notification each: [`Catalog::batch`] holds back
//! the events of the changes made inside it and publishes each distinct
//! one once at its end (a re-listed upstream replaces many tools, and its
//! listeners should hear `tools/list_changed` once, not once per tool).

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use mcp_protocol::subscription::Event;

use super::items::State;
use super::{Catalog, Origin};

/// A batch open on a thread.
struct Open {
    /// Its catalog, by address.
    catalog: usize,
    /// The events held back so far.
    events: Vec<Event>,
    /// The batch's copy of the items, once a change was made.
    draft: Option<Arc<State>>,
}

thread_local! {
    /// The batch open on this thread.
    static OPEN: RefCell<Option<Open>> = const { RefCell::new(None) };
}

fn address(catalog: &Catalog) -> usize {
    catalog as *const Catalog as usize
}

/// Whether a batch of `catalog` is open on this thread.
fn open_here(catalog: &Catalog) -> bool {
    // Most reads happen with no batch open anywhere: one atomic load.
    catalog.batching.load(Ordering::Acquire) > 0
        && OPEN.with(|o| o.borrow().as_ref().is_some_and(|open| open.catalog == address(catalog)))
}

/// The items a batch of `catalog` open on this thread is changing (taken
/// out until [`keep_draft`] hands them back): its copy, or the published
/// snapshot when it has made no change yet. `None` outside such a batch.
pub(super) fn take_draft(catalog: &Catalog) -> Option<Arc<State>> {
    if !open_here(catalog) {
        return None;
    }
    OPEN.with(|o| {
        let mut o = o.borrow_mut();
        let open = o.as_mut()?;
        Some(open.draft.take().unwrap_or_else(|| catalog.items.load_full()))
    })
}

/// Hands the batch its changed copy back.
pub(super) fn keep_draft(catalog: &Catalog, state: Arc<State>) {
    OPEN.with(|o| {
        if let Some(open) = o.borrow_mut().as_mut().filter(|open| open.catalog == address(catalog)) {
            open.draft = Some(state);
        }
    })
}

/// Ends the batch on this thread however its changes end (a panic too):
/// publishes its copy, puts back the batch it was nested in, and lets go of
/// the writers' lock.
struct Closing<'a> {
    catalog: &'a Catalog,
    outer: Option<Option<Open>>,
    _lock: std::sync::MutexGuard<'a, ()>,
}

impl Closing<'_> {
    /// The events held back.
    fn close(mut self) -> Vec<Event> {
        self.finish()
    }

    fn finish(&mut self) -> Vec<Event> {
        let Some(outer) = self.outer.take() else { return Vec::new() };
        let open = OPEN.with(|o| o.replace(outer));
        self.catalog.batching.fetch_sub(1, Ordering::AcqRel);
        let Some(open) = open else { return Vec::new() };
        if let Some(draft) = open.draft {
            self.catalog.items.publish(draft);
        }
        open.events
    }
}

impl Drop for Closing<'_> {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Catalog {
    /// Runs `changes` on this catalog, then publishes each distinct event
    /// they caused once. Readers on other threads see the changes together
    /// when the batch ends; changes from other threads wait for its end.
    /// Events keyed by an external observation are published as they come
    /// (with the batch's changes so far made visible first).
    ///
    /// ```
    /// use actix_mcp::catalog::{Catalog, Resource};
    /// use std::sync::{Arc, Mutex};
    ///
    /// let catalog = Catalog::new();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let s = seen.clone();
    /// catalog.watch(move |e, _| s.lock().unwrap().push(e.clone()));
    /// catalog.batch(|c| {
    ///     c.add_resource(Resource::text("memo://1", "one", "text/plain", "1")).unwrap();
    ///     c.add_resource(Resource::text("memo://2", "two", "text/plain", "2")).unwrap();
    /// });
    /// assert_eq!(seen.lock().unwrap().len(), 1);
    /// ```
    pub fn batch<R>(&self, changes: impl FnOnce(&Catalog) -> R) -> R {
        self.batch_from(Origin::Made, changes)
    }

    /// [`Catalog::batch`] for changes mirrored from a source of which this
    /// instance holds its own copy (a gateway's upstream): their events are
    /// published as [`Origin::Mirrored`], to this instance's listeners only.
    pub fn batch_mirrored<R>(&self, changes: impl FnOnce(&Catalog) -> R) -> R {
        self.batch_from(Origin::Mirrored, changes)
    }

    fn batch_from<R>(&self, origin: Origin<'_>, changes: impl FnOnce(&Catalog) -> R) -> R {
        if open_here(self) {
            // A batch inside a batch of the same catalog is part of it.
            return changes(self);
        }
        let lock = self.items.lock();
        self.batching.fetch_add(1, Ordering::AcqRel);
        let open = Open { catalog: address(self), events: Vec::new(), draft: None };
        let outer = OPEN.with(|o| o.replace(Some(open)));
        let closing = Closing { catalog: self, outer: Some(outer), _lock: lock };
        let result = changes(self);
        // Published, and the lock let go, before anyone hears of it.
        let held = closing.close();
        for event in held {
            self.emit_from(event, origin);
        }
        result
    }

    /// The copy of the items a batch of this catalog open on this thread
    /// has made, if any.
    pub(super) fn batch_draft(&self) -> Option<Arc<State>> {
        if !open_here(self) {
            return None;
        }
        OPEN.with(|o| o.borrow().as_ref().and_then(|open| open.draft.clone()))
    }

    /// Publishes the changes a batch of this catalog open on this thread
    /// has made so far, so that an event not held back (an observation's)
    /// is never heard before the change it reports. The published copy is
    /// the readers' from then on, so the batch's next change copies it
    /// again: one copy per such event, which only an observation made
    /// inside a batch pays.
    pub(super) fn publish_batch_so_far(&self) {
        if let Some(draft) = self.batch_draft() {
            self.items.publish(draft);
        }
    }

    /// Holds `event` back if a batch of this catalog is open on this
    /// thread; whether it did.
    pub(super) fn held_back(&self, event: &Event) -> bool {
        if !open_here(self) {
            return false;
        }
        OPEN.with(|o| match &mut *o.borrow_mut() {
            Some(open) if open.catalog == address(self) => {
                if !open.events.contains(event) {
                    open.events.push(event.clone());
                }
                true
            }
            _ => false,
        })
    }
}
