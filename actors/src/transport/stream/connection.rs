//! [`StreamConnection`]: the actor behind one connection that carries whole
//! messages in order both ways (stdio's lines, WebSocket text frames). It
//! reads the messages as a stream, routes each through the intake in
//! order, and owns what the connection has open: its in-flight requests,
//! its listen streams, its one writer and, for a legacy client, its
//! session. The end of input (or [`Hangup`] at shutdown) ends every
//! subscription and the session, then gives in-flight requests a bounded
//! time before cancelling them. Its limits are those of `[stdio]`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use mcp_protocol::jsonrpc::{self, Incoming, Request};
use mcp_protocol::{ErrorCode, ErrorData, RequestId};
use slog::{debug, info};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::sink::StreamSink;
use super::Inbound;
use crate::channels::control::{Abort, Cancel, Close, CloseReason};
use crate::channels::outbound::{Outbound, OutboundTx};
use crate::hub::listener::ListenerActor;
use crate::pipeline::intake::{Action, Admitted, Driver, ListenAdmission, Route, SessionRoute};
use crate::pipeline::legacy::era::Era;
use crate::pipeline::legacy::{Session, SessionHandle};
use crate::pipeline::request::RequestActor;
use crate::server::McpServer;
use crate::telemetry::span::NetworkTransport;

/// One connection.
pub struct StreamConnection {
    server: McpServer,
    /// The transport's name: the start line's, and the id of the
    /// connection's legacy session.
    transport: &'static str,
    writer: OutboundTx,
    in_flight: HashMap<RequestId, Addr<RequestActor>>,
    listeners: HashMap<RequestId, Addr<ListenerActor>>,
    /// Finished entries are pruned when the maps reach this size, which
    /// then doubles: pruning costs O(1) per request, amortized.
    prune_at: usize,
    session: Option<SessionHandle>,
    /// `stdio.max_in_flight` places; each running request holds one.
    slots: Arc<Semaphore>,
    hung_up: bool,
}

/// Ends the connection as EOF does (shutdown by signal).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Hangup;

impl StreamConnection {
    /// A connection of the transport named `transport` (`stdio`,
    /// `websocket`, …) that writes through `writer`.
    pub fn new(server: McpServer, transport: &'static str, writer: OutboundTx) -> Self {
        StreamConnection {
            transport,
            writer,
            in_flight: HashMap::new(),
            listeners: HashMap::new(),
            prune_at: 64,
            session: None,
            slots: Arc::new(Semaphore::new(server.config().stdio.max_in_flight)),
            server,
            hung_up: false,
        }
    }

    /// Calls `start` with a place of the in-flight cap: at once when one is
    /// free, else once one is, reading no input meanwhile (back-pressure).
    fn with_slot<F>(&mut self, ctx: &mut Context<Self>, start: F)
    where
        F: FnOnce(&mut Self, OwnedSemaphorePermit, &mut Context<Self>) + 'static,
    {
        match self.slots.clone().try_acquire_owned() {
            Ok(slot) => start(self, slot, ctx),
            Err(_) => {
                let slots = self.slots.clone();
                ctx.wait(async move { slots.acquire_owned().await }.into_actor(self).map(move |slot, act, ctx| {
                    if let Ok(slot) = slot {
                        start(act, slot, ctx);
                    }
                }));
            }
        }
    }

    /// Queues one message for stdout; when the writer is backed up, the
    /// connection reads nothing more until it has room (back-pressure).
    fn write(&mut self, msg: Box<Outbound>, ctx: &mut Context<Self>) {
        if let Err(tokio::sync::mpsc::error::TrySendError::Full(msg)) = self.writer.try_send(msg) {
            let tx = self.writer.clone();
            ctx.wait(async move { drop(tx.send(msg).await) }.into_actor(self));
        }
    }

    fn error(&mut self, id: Option<&RequestId>, e: &ErrorData, ctx: &mut Context<Self>) {
        self.write(Outbound::answer(jsonrpc::encode_error(id, e), Some(e.code.0)), ctx);
    }

    /// Whether `id` is free for a new request (not in flight, not a listen
    /// stream); answers the error if not.
    fn claim(&mut self, id: &RequestId, ctx: &mut Context<Self>) -> bool {
        if self.in_flight.len() + self.listeners.len() >= self.prune_at {
            self.in_flight.retain(|_, a| a.connected());
            self.listeners.retain(|_, a| a.connected());
            self.prune_at = (2 * (self.in_flight.len() + self.listeners.len())).max(64);
        }
        let busy = |m: Option<bool>| m.unwrap_or(false);
        if busy(self.in_flight.get(id).map(Addr::connected)) || busy(self.listeners.get(id).map(Addr::connected)) {
            let e = ErrorData::new(ErrorCode::INVALID_REQUEST, format!("Request id {id} is already in flight"));
            self.error(Some(id), &e, ctx);
            return false;
        }
        true
    }

    fn message(&mut self, bytes: &[u8], ctx: &mut Context<Self>) {
        let started = Instant::now();
        let intake = self.server.intake();
        if self.session.is_none() {
            match intake.route(&*self, bytes) {
                Route::Act(action) => self.act(action, started, ctx),
                Route::Initialize(r) => self.initialize(r, ctx),
            }
        } else {
            match intake.route_in_session(&*self, bytes) {
                SessionRoute::Act(action) => self.act(action, started, ctx),
                SessionRoute::Session(m) => self.in_session(m, ctx),
            }
        }
    }

    fn act(&mut self, action: Action, started: Instant, ctx: &mut Context<Self>) {
        match action {
            Action::Refuse(r) => {
                self.server.refused(&r, None, NetworkTransport::Pipe, started);
                self.write(Outbound::answer(r.encode(), Some(r.error.code.0)), ctx)
            }
            Action::Run(a) => self.run(*a, ctx),
            Action::Listen(a, admission) => self.listen(*a, admission, ctx),
            Action::Cancel { id, reason } => self.cancel(id, reason),
            Action::Notification(n) => debug!(self.server.logger(), "notification ignored"; "method" => &n.method),
            Action::Unexpected(r) => debug!(self.server.logger(), "unexpected response ignored"; "id" => %r.id),
        }
    }

    fn run(&mut self, a: Admitted, ctx: &mut Context<Self>) {
        if !self.claim(&a.id, ctx) {
            return;
        }
        // An events stream holds no in-flight place (`events.max_streams`
        // bounds them): streams open for hours would starve the calls.
        if matches!(a.request, mcp_protocol::ClientRequest::StreamEvents(_)) {
            let id = a.id.clone();
            let addr = self.server.request_actor(Box::new(a), Era::Stateless, self.writer.clone(), None).start();
            self.in_flight.insert(id, addr);
            return;
        }
        self.with_slot(ctx, move |act, slot, _| {
            let id = a.id.clone();
            let addr = act.server.request_actor(Box::new(a), Era::Stateless, act.writer.clone(), Some(slot)).start();
            act.in_flight.insert(id, addr);
        });
    }

    fn listen(&mut self, a: Admitted, admission: ListenAdmission, ctx: &mut Context<Self>) {
        if !self.claim(&a.id, ctx) {
            return;
        }
        let sink = StreamSink::new(self.writer.clone(), a.id.clone());
        let addr = self.server.start_listen(a.id.clone(), admission, Box::new(sink));
        self.listeners.insert(a.id, addr);
    }

    fn cancel(&mut self, id: RequestId, reason: Option<String>) {
        if let Some(addr) = self.in_flight.remove(&id) {
            let _ = addr.try_send(Cancel { reason });
        } else if let Some(addr) = self.listeners.remove(&id) {
            // Control message: delivered even when the mailbox is full of events.
            addr.do_send(Close { reason: CloseReason::ClientGone });
        } else {
            debug!(self.server.logger(), "cancellation for a request not in flight"; "request" => %id);
        }
    }

    /// A legacy client's `initialize`: a session for this connection, its
    /// notification stream on stdout, then the result.
    fn initialize(&mut self, r: Request, ctx: &mut Context<Self>) {
        let (state, result) = match self.server.service().initialize(&r) {
            Ok(ok) => ok,
            Err(e) => return self.error(Some(&r.id), &e, ctx),
        };
        let log = self.server.logger().new(slog::o!("session" => self.transport));
        let input_timeout = Duration::from_millis(self.server.config().legacy.input_timeout_ms);
        let version = state.version;
        let session = Session::new(self.transport.into(), state, None, log);
        let handle = SessionHandle::start(session, self.transport, version, input_timeout);
        self.session = Some(handle.clone());
        let (server, sink) =
            (self.server.clone(), StreamSink::new(self.writer.clone(), RequestId::string(self.transport)));
        let answer = Outbound::answer(jsonrpc::encode_result(&r.id, &result), None);
        // `wait`: nothing else is read until the stream routes.
        ctx.wait(
            async move { server.start_session_stream(&handle, Box::new(sink)).await }
                .into_actor(self)
                .map(move |_, act, ctx| act.write(answer, ctx)),
        );
    }

    fn in_session(&mut self, message: Incoming, ctx: &mut Context<Self>) {
        let Some(session) = self.session.clone() else { return };
        match message {
            Incoming::Request(r) => {
                if !self.claim(&r.id, ctx) {
                    return;
                }
                self.with_slot(ctx, move |act, slot, ctx| {
                    let (server, writer, id) = (act.server.clone(), act.writer.clone(), r.id.clone());
                    let served = async move {
                        server.session_request(&session, r, Default::default(), writer, Some(slot)).await
                    };
                    // `wait`: a subscribe is routed before the next line is read.
                    ctx.wait(served.into_actor(act).map(move |started, act, _| {
                        if let Some(addr) = started {
                            act.in_flight.insert(id, addr);
                        }
                    }));
                });
            }
            Incoming::Response(r) => {
                ctx.spawn(async move { session.answer(r).await }.into_actor(self).map(|_, _, _| ()));
            }
            _ => session.touch(),
        }
    }

    /// EOF or shutdown: every subscription and the session end; in-flight
    /// requests get `stdio.drain_ms`, then the rest answer -32603 "server
    /// shutting down", and the actor stops (dropping its writer handle, so
    /// the writer finishes once they have).
    fn hang_up(&mut self, ctx: &mut Context<Self>) {
        if std::mem::replace(&mut self.hung_up, true) {
            return;
        }
        if let Some(s) = self.session.take() {
            s.end();
        }
        for (_, addr) in self.listeners.drain() {
            addr.do_send(Close { reason: CloseReason::ClientGone });
        }
        let deadline = Instant::now() + Duration::from_millis(self.server.config().stdio.drain_ms);
        ctx.run_interval(Duration::from_millis(5), move |act, ctx| {
            act.in_flight.retain(|_, addr| addr.connected());
            if act.in_flight.is_empty() || Instant::now() >= deadline {
                // Those still running answer an error and stop.
                for (_, addr) in act.in_flight.drain() {
                    addr.do_send(Abort);
                }
                info!(act.server.logger(), "stdin closed; stopping");
                ctx.stop();
            }
        });
    }
}

/// A stream carries no headers and, so far, no caller: its messages are
/// admitted on their own.
impl Driver for StreamConnection {}

impl Actor for StreamConnection {
    type Context = Context<Self>;

    fn started(&mut self, _ctx: &mut Self::Context) {
        let service = self.server.service();
        info!(self.server.logger(), "serving on a message stream"; "transport" => self.transport, "server" => &service.info().name,
            "serves" => service.catalog().summary(), "version" => env!("CARGO_PKG_VERSION"));
    }
}

impl StreamHandler<Inbound> for StreamConnection {
    fn handle(&mut self, line: Inbound, ctx: &mut Self::Context) {
        if self.hung_up {
            return;
        }
        match line {
            Inbound::TooLong(len) => {
                let max = self.server.config().stdio.max_line_bytes;
                let e = ErrorData::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("Message of {len} bytes exceeds the limit of {max} bytes"),
                );
                self.error(None, &e, ctx);
            }
            Inbound::Message(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => {}
            Inbound::Message(bytes) => self.message(&bytes, ctx),
        }
    }

    fn finished(&mut self, ctx: &mut Self::Context) {
        self.hang_up(ctx);
    }
}

impl Handler<Hangup> for StreamConnection {
    type Result = ();

    fn handle(&mut self, _: Hangup, ctx: &mut Self::Context) {
        self.hang_up(ctx);
    }
}
