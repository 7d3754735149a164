//! What the catalog tells its watchers: each change's event and where it
//! comes from ([`Origin`]), which decides who hears it when several
//! instances share a hub backend.

use mcp_protocol::subscription::Event;

use super::Catalog;

/// A function told of every catalog event and where it comes from (see
/// [`Catalog::watch`]).
pub type Watcher = std::sync::Arc<dyn Fn(&Event, Origin<'_>) + Send + Sync>;

/// Where a catalog event comes from, which decides who hears it when
/// several instances share a hub backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin<'a> {
    /// A change this instance made: the listeners of every instance hear it.
    Made,
    /// A change seen in a source every instance watches (one shared
    /// directory); the key identifies the observation, and the same
    /// observation made by several instances is delivered once.
    Observed(&'a str),
    /// A change in a source of which this instance holds its own copy (a
    /// gateway's upstream, which every instance runs too): only this
    /// instance's listeners hear it, since the others hear it from theirs.
    Mirrored,
}

impl Origin<'_> {
    /// The observation key, for [`Origin::Observed`].
    pub fn key(&self) -> Option<&str> {
        match self {
            Origin::Observed(key) => Some(key),
            _ => None,
        }
    }
}

impl Catalog {
    /// Calls `watcher` with every event from now on (from the thread that
    /// made the change; keep it cheap and non-blocking), and where it comes
    /// from.
    pub fn watch(&self, watcher: impl Fn(&Event, Origin<'_>) + Send + Sync + 'static) {
        let watcher: Watcher = std::sync::Arc::new(watcher);
        self.watchers.rcu(|all| all.iter().cloned().chain([watcher.clone()]).collect::<Vec<_>>());
    }

    pub(super) fn emit(&self, event: Event) {
        self.emit_from(event, Origin::Made);
    }

    pub(super) fn emit_keyed(&self, event: Event, key: Option<&str>) {
        self.emit_from(event, key.map_or(Origin::Made, Origin::Observed));
    }

    pub(super) fn emit_from(&self, event: Event, origin: Origin<'_>) {
        if origin == Origin::Made && self.held_back(&event) {
            return;
        }
        self.publish_batch_so_far();
        for w in self.watchers.load().iter() {
            w(&event, origin);
        }
    }

    /// Publishes `resources/updated` for `uri`, seen in a source this
    /// instance holds its own copy of ([`Origin::Mirrored`]): only this
    /// instance's subscribers are told.
    pub fn notify_resource_updated_mirrored(&self, uri: &str) {
        self.emit_from(Event::ResourceUpdated { uri: uri.to_owned() }, Origin::Mirrored);
    }

    pub(super) fn emit_if(&self, changed: bool, event: Event) {
        if changed {
            self.emit(event);
        }
    }

    /// Publishes `notifications/resources/updated` for `uri` to the
    /// subscriptions that asked for it.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.emit(Event::ResourceUpdated { uri: uri.to_owned() });
    }

    /// Publishes a list-changed event without changing the catalog (for items
    /// whose definitions are computed elsewhere).
    pub fn notify_list_changed(&self, event: Event) {
        self.emit(event);
    }
}
