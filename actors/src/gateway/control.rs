//! The messages that change a running [`Upstream`] from outside: [`Stop`]
//! (the gateway stops, or a reload removed or changed it), [`Repin`] (a
//! reload read the pins again) and [`Wanted`] (a listener wants a URI's
//! updates, or none does any more).

use std::sync::Arc;

use actix::{ActorContext, Handler, Message};

use super::pins::Pins;
use super::upstream::Upstream;

/// Stops an upstream: its items leave at once, its calls in flight finish,
/// then its connection closes.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct Stop;

/// Screens an upstream's items against these pins from now on (it lists
/// again at once).
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct Repin(pub(super) Option<Arc<Pins>>);

/// Some listener of this instance wants `resources/updated` for `uri`
/// (`wanted`), or none does any more.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Wanted {
    pub(crate) uri: String,
    pub(crate) wanted: bool,
}

impl Handler<Wanted> for Upstream {
    type Result = ();

    fn handle(&mut self, Wanted { uri, wanted }: Wanted, ctx: &mut Self::Context) {
        self.want(uri, wanted, ctx);
    }
}

impl Handler<Stop> for Upstream {
    type Result = ();

    fn handle(&mut self, _: Stop, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

impl Handler<Repin> for Upstream {
    type Result = ();

    fn handle(&mut self, Repin(pins): Repin, ctx: &mut Self::Context) {
        self.repin(pins, ctx);
    }
}
