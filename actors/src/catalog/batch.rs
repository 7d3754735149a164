//! Several changes, one notification each: [`Catalog::batch`] holds back
//! the events of the changes made inside it and publishes each distinct
//! one once at its end (a re-listed upstream replaces many tools, and its
//! listeners should hear `tools/list_changed` once, not once per tool).

use std::cell::RefCell;

use mcp_protocol::subscription::Event;

use super::{Catalog, Origin};

thread_local! {
    /// The batch open on this thread: its catalog (by address) and the
    /// events held back so far.
    static OPEN: RefCell<Option<(usize, Vec<Event>)>> = const { RefCell::new(None) };
}

impl Catalog {
    /// Runs `changes` on this catalog, then publishes each distinct event
    /// they caused once. Events keyed by an external observation and
    /// changes made on other threads meanwhile are published as usual.
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
        let me = self as *const Catalog as usize;
        let outer = OPEN.with(|o| o.replace(Some((me, Vec::new()))));
        let result = changes(self);
        let held = OPEN.with(|o| o.replace(outer)).map(|(_, events)| events).unwrap_or_default();
        for event in held {
            self.emit_from(event, origin);
        }
        result
    }

    /// Holds `event` back if a batch of this catalog is open on this
    /// thread; whether it did.
    pub(super) fn held_back(&self, event: &Event) -> bool {
        let me = self as *const Catalog as usize;
        OPEN.with(|o| match &mut *o.borrow_mut() {
            Some((catalog, events)) if *catalog == me => {
                if !events.contains(event) {
                    events.push(event.clone());
                }
                true
            }
            _ => false,
        })
    }
}
