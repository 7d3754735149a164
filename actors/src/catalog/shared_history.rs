//! An event type's history shared by every instance of a server: once
//! [`EventType::share`] attached it to a shared history (over Redis, by
//! the hub's `redis_history`), what its source emits goes there instead
//! of its own log, and the log mirrors the shared history in its order,
//! at the positions the shared history gave — so that a cursor minted on
//! one instance reads on another, and a stream on one hears what was
//! emitted on another.

// Without the `redis` feature nothing shares a history: the hooks stay unused.
#![cfg_attr(not(feature = "redis"), allow(dead_code))]

use mcp_protocol::events::{EventLog, Occurrence};
use tokio::sync::mpsc;

use super::event_types::{EventType, Outgoing, Relay};
use super::CatalogError;

impl EventType {
    /// From now on, this type's occurrences go to `relay`, and its log is
    /// a mirror of the shared history whose cursors carry `epoch` (what
    /// the log held before is dropped: a cursor of it reads `truncated`).
    /// False when it was shared already.
    pub(crate) fn share(&self, relay: mpsc::Sender<Outgoing>, epoch: u64) -> bool {
        if self.relay.set(Relay(relay)).is_err() {
            return false;
        }
        let mut log = self.log();
        let (capacity, retention_ms) = log.bounds();
        *log = EventLog::shared(epoch, capacity, retention_ms);
        self.ready.send_replace(false);
        true
    }

    /// The shared history was read: readers may start ([`EventType::ready`]).
    pub(crate) fn mirrored(&self) {
        self.ready.send_replace(true);
    }

    /// Waits, at most `within`, until the type's history can be read: at
    /// once unless it is shared and not read yet (a reader starting before
    /// would take what the shared history already held for new). False
    /// when it is still not.
    pub(crate) async fn ready(&self, within: std::time::Duration) -> bool {
        let mut ready = self.ready.subscribe();
        tokio::time::timeout(within, ready.wait_for(|ready| *ready)).await.is_ok_and(|r| r.is_ok())
    }

    /// Mirrors the shared history's entry at `seq` (`None`: a loss),
    /// logged at `at_ms`, and wakes the readers. An entry not after the
    /// newest is ignored (seen already).
    pub(crate) fn mirror(&self, seq: u64, occurrence: Option<Occurrence>, at_ms: u64) {
        {
            let mut log = self.log();
            match occurrence {
                Some(o) => {
                    log.append_at(seq, o, at_ms);
                }
                None => log.lose_at(seq, at_ms),
            }
        }
        self.wake_readers();
    }

    /// Marks a loss in this instance's mirror only (the shared history
    /// could not be written or read for a while).
    pub(crate) fn lose_here(&self) {
        self.log().gap(super::event_types::now_ms());
        self.wake_readers();
    }

    /// Readers from before position `seq` missed something.
    pub(crate) fn forget_before(&self, seq: u64) {
        self.log().forget_before(seq);
    }

    /// Sends `occurrence` to the shared history, when there is one: the
    /// answer `emit` gives (the occurrence, without its cursor; or a
    /// refusal when the queue is full).
    pub(super) fn send_shared(
        &self,
        occurrence: &Occurrence,
        stable: bool,
    ) -> Option<Result<Occurrence, CatalogError>> {
        let Relay(relay) = self.relay.get()?;
        let name = &self.descriptor().name;
        Some(match relay.try_send(Outgoing::Occurrence(Box::new(occurrence.clone()), stable)) {
            Ok(()) => Ok(occurrence.clone()),
            Err(mpsc::error::TrySendError::Full(_)) => {
                Err(CatalogError(format!("the shared history of `{name}` is not keeping up; not emitted")))
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                Err(CatalogError(format!("the shared history of `{name}` is not served any more; not emitted")))
            }
        })
    }

    /// Sends a loss to the shared history, when there is one that takes it.
    pub(super) fn lose_shared(&self) -> bool {
        self.relay.get().is_some_and(|Relay(relay)| relay.try_send(Outgoing::Loss).is_ok())
    }

    /// The most occurrences its history keeps.
    pub(crate) fn capacity(&self) -> usize {
        self.log().bounds().0
    }
}
