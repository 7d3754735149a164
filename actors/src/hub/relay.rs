//! [`Relay`]: the hub's delivery arm on one thread.
//!
//! A listener runs on the thread (HTTP worker, stdio loop) that served its
//! request. Each such thread has one relay, started with its first listener.
//! For every event the hub sends each relay one [`Fanout`] with the
//! ids of that thread's listeners that want it, and the relay hands the
//! event to each of them in one pass. A thread thus gets one message and one
//! wake-up per event, not one per listener, and the streams it wakes run
//! together: their writes to one HTTP/2 connection go out in one system
//! call, not a few frames at a time.
//!
//! A listener registers here once its subscription is acknowledged, so its
//! stream carries exactly the events routed after its acknowledgement, and
//! unregisters when it stops. Both ends live on one thread: the registry is
//! a thread-local map shared by the relay actor and the listeners, with no
//! locks.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use actix::prelude::*;
use mcp_protocol::subscription::{Event, EventTemplate, ListenerId};

/// A listener as its thread's relay sees it. Implementations never block.
pub trait LocalListener {
    /// One routed event (shared by every listener it goes to, encoded once).
    fn deliver(&self, event: &Event, encoded: &EventTemplate);
    /// Time for a keep-alive on a quiet stream.
    fn keep_alive(&self);
}

/// One event for some of a relay's listeners.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Fanout {
    /// The event.
    pub event: Arc<Event>,
    /// The event encoded once; each listener splices in its subscription id.
    pub encoded: Arc<EventTemplate>,
    /// The listeners of this relay that want it.
    pub targets: Vec<ListenerId>,
    /// When the hub routed the event (for the event-to-outlet metric).
    pub at: std::time::Instant,
}

/// Every listener of the relay writes a keep-alive if its stream is quiet
/// (one timer in the hub serves every stream).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct KeepAlive;

/// Deliveries a relay makes before it lets its thread's other tasks run.
/// Each turn the streams it woke write what they were given: fewer,
/// larger turns put more frames in each write to an HTTP/2 connection
/// (at 512 a turn and 125 connections, a few frames a write).
pub const DELIVERIES_PER_TURN: usize = 4096;

type Registry = Rc<RefCell<HashMap<ListenerId, Rc<dyn LocalListener>>>>;

/// The relay actor of one thread.
pub struct Relay {
    listeners: Registry,
    mailbox: usize,
}

impl Actor for Relay {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(self.mailbox);
    }
}

impl Relay {
    /// Delivers `msg` to at most [`DELIVERIES_PER_TURN`] of its targets,
    /// then lets the thread's other tasks run (the streams just woken write
    /// their frames, so the first clients read while later ones are still
    /// being served) before it goes on with the rest. `wait` holds back the
    /// next event until this one is delivered to every target, so each
    /// listener receives events in order.
    fn deliver(&mut self, mut msg: Fanout, ctx: &mut Context<Self>) {
        crate::telemetry::event_to_outlet(msg.at.elapsed());
        let now = msg.targets.len().min(DELIVERIES_PER_TURN);
        {
            // Listeners register and unregister only in their own handlers,
            // never inside a delivery, so the registry stays borrowed.
            let listeners = self.listeners.borrow();
            for id in msg.targets.drain(..now) {
                // Absent: it stopped after the hub routed the event.
                if let Some(listener) = listeners.get(&id) {
                    listener.deliver(&msg.event, &msg.encoded);
                }
            }
        }
        if !msg.targets.is_empty() {
            ctx.wait(tokio::task::yield_now().into_actor(self).map(move |(), relay, ctx| relay.deliver(msg, ctx)));
        }
    }
}

impl Handler<Fanout> for Relay {
    type Result = ();

    fn handle(&mut self, msg: Fanout, ctx: &mut Self::Context) {
        self.deliver(msg, ctx);
    }
}

impl Handler<KeepAlive> for Relay {
    type Result = ();

    fn handle(&mut self, _: KeepAlive, _ctx: &mut Self::Context) {
        self.listeners.borrow().values().for_each(|l| l.keep_alive());
    }
}

/// How the hub reaches a relay: its mailbox, and an id to group the
/// listeners of one relay by. Every listener holds one (shared: a clone of
/// an `Addr` costs two allocations, of an `Arc` none).
#[derive(Clone)]
pub struct RelayHandle {
    id: u64,
    addr: Arc<Addr<Relay>>,
}

impl RelayHandle {
    /// Unique in this process.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The relay's bounded mailbox.
    pub fn addr(&self) -> &Addr<Relay> {
        &self.addr
    }
}

impl std::fmt::Debug for RelayHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayHandle").field("id", &self.id).finish_non_exhaustive()
    }
}

struct Local {
    handle: RelayHandle,
    listeners: Registry,
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

/// This thread's relay, started on the current arbiter with a mailbox of
/// `mailbox` events if there is none yet (or the one there belonged to an
/// actix system that has since stopped).
pub fn local(mailbox: usize) -> RelayHandle {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    LOCAL.with(|local| {
        let mut local = local.borrow_mut();
        if let Some(l) = local.as_ref().filter(|l| l.handle.addr.connected()) {
            return l.handle.clone();
        }
        let listeners = Registry::default();
        let addr = Relay { listeners: listeners.clone(), mailbox: mailbox.max(1) }.start();
        let handle = RelayHandle { id: NEXT.fetch_add(1, Ordering::Relaxed), addr: Arc::new(addr) };
        *local = Some(Local { handle: handle.clone(), listeners });
        handle
    })
}

/// Registers a listener with `relay`, which must be this thread's: from now
/// on, the events the hub routes to `id` reach `listener`. Returns false if
/// `relay` is not this thread's relay (any more), so nothing would arrive.
pub fn register(relay: &RelayHandle, id: ListenerId, listener: Rc<dyn LocalListener>) -> bool {
    LOCAL.with(|local| match local.borrow().as_ref() {
        Some(l) if l.handle.id == relay.id => {
            l.listeners.borrow_mut().insert(id, listener);
            true
        }
        _ => false,
    })
}

/// Unregisters a listener of this thread (no effect if it is absent).
pub fn unregister(id: ListenerId) {
    LOCAL.with(|local| {
        if let Some(l) = local.borrow().as_ref() {
            let mut listeners = l.listeners.borrow_mut();
            listeners.remove(&id);
            // Give the room back after a burst of streams has closed.
            if listeners.capacity() > 64 && listeners.len() <= listeners.capacity() / 4 {
                listeners.shrink_to_fit();
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    struct Counting {
        delivered: Cell<usize>,
        keep_alives: Cell<usize>,
    }

    impl LocalListener for Counting {
        fn deliver(&self, _event: &Event, _encoded: &EventTemplate) {
            self.delivered.set(self.delivered.get() + 1);
        }
        fn keep_alive(&self) {
            self.keep_alives.set(self.keep_alives.get() + 1);
        }
    }

    fn counting() -> Rc<Counting> {
        Rc::new(Counting { delivered: Cell::new(0), keep_alives: Cell::new(0) })
    }

    fn fanout(targets: Vec<ListenerId>) -> Fanout {
        let event = Event::ToolsListChanged;
        Fanout {
            encoded: Arc::new(EventTemplate::new(&event)),
            event: Arc::new(event),
            targets,
            at: std::time::Instant::now(),
        }
    }

    #[actix_rt::test]
    async fn delivers_to_the_targets_registered_on_this_thread_only() {
        let relay = local(16);
        assert_eq!(local(16).id(), relay.id(), "one relay per thread");
        let (a, b, gone) = (ListenerId::new(), ListenerId::new(), ListenerId::new());
        let (la, lb, lgone) = (counting(), counting(), counting());
        assert!(register(&relay, a, la.clone()));
        assert!(register(&relay, b, lb.clone()));
        assert!(register(&relay, gone, lgone.clone()));
        unregister(gone);
        let other = ListenerId::new();
        relay.addr().send(fanout(vec![a, gone, other])).await.unwrap();
        relay.addr().send(KeepAlive).await.unwrap();
        assert_eq!((la.delivered.get(), lb.delivered.get(), lgone.delivered.get()), (1, 0, 0));
        assert_eq!((la.keep_alives.get(), lb.keep_alives.get(), lgone.keep_alives.get()), (1, 1, 0));
        unregister(a);
        unregister(b);
    }

    struct Recording(RefCell<Vec<&'static str>>);

    impl LocalListener for Recording {
        fn deliver(&self, event: &Event, _encoded: &EventTemplate) {
            self.0.borrow_mut().push(event.method());
        }
        fn keep_alive(&self) {}
    }

    #[actix_rt::test]
    async fn events_delivered_over_several_turns_arrive_in_order_everywhere() {
        let relay = local(16);
        let n = DELIVERIES_PER_TURN * 2 + 7;
        let listeners: Vec<_> =
            (0..n).map(|_| (ListenerId::new(), Rc::new(Recording(RefCell::new(Vec::new()))))).collect();
        for (id, l) in &listeners {
            assert!(register(&relay, *id, l.clone()));
        }
        let targets: Vec<_> = listeners.iter().map(|(id, _)| *id).collect();
        let first = Event::ToolsListChanged;
        let second = Event::PromptsListChanged;
        // The second event reaches the targets in the opposite order, so its
        // first turn serves the listeners the first event reaches last.
        let reversed: Vec<_> = targets.iter().rev().copied().collect();
        for (event, targets) in [(first.clone(), targets), (second.clone(), reversed)] {
            let encoded = Arc::new(EventTemplate::new(&event));
            relay.addr().do_send(Fanout { event: Arc::new(event), encoded, targets, at: std::time::Instant::now() });
        }
        // Handled after both events are delivered to every target.
        relay.addr().send(KeepAlive).await.unwrap();
        for (id, l) in &listeners {
            assert_eq!(*l.0.borrow(), vec![first.method(), second.method()]);
            unregister(*id);
        }
    }

    #[test]
    fn a_relay_of_a_stopped_system_is_replaced() {
        let first = actix_rt::System::new().block_on(async { local(4) });
        let second = actix_rt::System::new().block_on(async {
            let relay = local(4);
            let l = counting();
            let id = ListenerId::new();
            assert!(!register(&first, id, l.clone()), "not this thread's relay any more");
            assert!(register(&relay, id, l.clone()));
            relay.addr().send(fanout(vec![id])).await.unwrap();
            assert_eq!(l.delivered.get(), 1, "the new relay delivers");
            relay.id()
        });
        assert_ne!(first.id(), second);
    }
}
