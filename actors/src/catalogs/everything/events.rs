//! Event types (the Events extension) covering every delivery mode this
//! server offers, and the diagnostic controls the extension's conformance
//! scenarios call (`events_conformance_*`):
//!
//! - `clock.tick` (poll, push, webhook): ticks once a second on its own;
//!   `every` lets through every n-th tick only;
//! - `limited.tick` (push): ticks too, at most two streams at once;
//! - `signal.fired` (poll, push, webhook): fired by the `fire_event` tool.

use std::num::NonZeroU64;
use std::time::Duration;

use mcp_protocol::events::{Delivery, EventError};
use mcp_protocol::model::tools::CallToolResult;
use mcp_protocol::ErrorData;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::catalog::{Catalog, CatalogError, EventSource, EventType, Tool, WeakEventSource};

/// The type that ticks and is polled or streamed.
const CLOCK: &str = "clock.tick";
/// The type with a cap on its streams.
const LIMITED: &str = "limited.tick";
/// The type a tool call fires.
const SIGNAL: &str = "signal.fired";
/// Every delivery mode.
const ALL_MODES: [Delivery; 3] = [Delivery::Poll, Delivery::Push, Delivery::Webhook];
/// `limited.tick`'s most streams at once.
const LIMITED_STREAMS: usize = 2;

/// Which ticks to hear of.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TickArgs {
    /// Only every n-th tick (1: every one).
    #[serde(default = "one")]
    every: NonZeroU64,
}

fn one() -> NonZeroU64 {
    NonZeroU64::MIN
}

/// One tick.
#[derive(Serialize, JsonSchema)]
struct Tick {
    /// The tick's number, from 1.
    n: u64,
}

/// What `fire_event` fired.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Signal {
    /// The caller's message.
    message: String,
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

fn ticking(name: &str, description: &str, delivery: &[Delivery]) -> EventType {
    EventType::matching::<TickArgs, Tick>(name, description, delivery, |args, data| {
        let n = data.get("n").and_then(Value::as_u64).unwrap_or(0);
        n % args.every.get() == 0
    })
}

pub(super) fn event_types(c: &Catalog) -> Result<(), CatalogError> {
    let clock =
        c.add_event_type(ticking(CLOCK, "Ticks once a second", &ALL_MODES).next_poll(Duration::from_secs(1)))?;
    let limited = c.add_event_type(
        ticking(LIMITED, "Ticks once a second; two streams at most", &[Delivery::Push]).max_streams(LIMITED_STREAMS),
    )?;
    c.add_event_type(
        EventType::new::<NoArgs, Signal>(SIGNAL, "Fired by the fire_event tool", &ALL_MODES)
            .next_poll(Duration::from_secs(1)),
    )?;
    tick_every_second(vec![clock.downgrade(), limited.downgrade()]);
    fire_event(c)?;
    controls(c)
}

/// Emits a tick into each source once a second, on a thread of its own
/// that ends once no source is served any more.
fn tick_every_second(sources: Vec<WeakEventSource>) {
    let ticker = move || {
        for n in 1u64.. {
            std::thread::sleep(Duration::from_secs(1));
            let live: Vec<EventSource> = sources.iter().filter_map(WeakEventSource::upgrade).collect();
            if live.is_empty() {
                return;
            }
            for source in live {
                let _ = source.emit(Tick { n });
            }
        }
    };
    // Without a thread the types are served, quiet.
    let _ = std::thread::Builder::new().name("everything-ticks".into()).spawn(ticker);
}

fn fire_event(c: &Catalog) -> Result<(), CatalogError> {
    c.add_tool(Tool::new("fire_event", "Fires signal.fired with a message", |s: Signal, ctx| async move {
        let source = ctx.catalog().event_source(SIGNAL).ok_or_else(|| CatalogError("signal.fired is gone".into()));
        let fired = source.and_then(|source| source.emit(&s));
        Ok(match fired {
            Ok(occurrence) => CallToolResult::text(format!("fired {}", occurrence.event_id)),
            Err(e) => CallToolResult::error(e.0),
        })
    }))
}

/// The conformance scenarios' controls: each acts on the type `name`.
fn controls(c: &Catalog) -> Result<(), CatalogError> {
    control(
        c,
        "events_conformance_yield_error",
        "Every stream of the type receives notifications/events/error",
        |s| {
            let error = ErrorData::new(mcp_protocol::ErrorCode::INTERNAL_ERROR, "UpstreamError");
            s.fail(error.with_data(json!({"reason": "events_conformance_yield_error"})));
        },
    )?;
    control(
        c,
        "events_conformance_yield_gap",
        "Occurrences of the type are lost: streams resend active (truncated)",
        |s| {
            s.lose();
        },
    )?;
    control(c, "events_conformance_terminate", "Ends every subscription of the type open now", |s| {
        s.terminate(EventError::Forbidden("ended by events_conformance_terminate".into()));
    })?;
    let quota = json!({"name": LIMITED, "max": LIMITED_STREAMS}).to_string();
    c.add_tool(Tool::raw(
        "events_conformance_quota",
        "Names the event type with a cap on its streams, and the cap",
        json!({"type": "object", "properties": {}}),
        move |_, _| {
            let quota = quota.clone();
            async move { Ok(CallToolResult::text(quota)) }
        },
    ))
}

/// In a catalog's shared state when the server lets the
/// `events_conformance_*` controls act (`events.test_controls`).
#[derive(Debug, Clone, Copy)]
pub struct TestControls;

/// Whether the controls act; the answer that says they do not.
pub(super) fn controls_on(ctx: &crate::catalog::context::RequestContext) -> Result<(), CallToolResult> {
    match ctx.state::<TestControls>() {
        Ok(_) => Ok(()),
        Err(_) => Err(CallToolResult::error("the events_conformance controls are off (events.test_controls = false)")),
    }
}

fn control(c: &Catalog, name: &str, description: &str, act: fn(&EventSource)) -> Result<(), CatalogError> {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string", "enum": [CLOCK, LIMITED, SIGNAL]}},
        "required": ["name"],
    });
    c.add_tool(Tool::raw(name, description, schema, move |args: Map<String, Value>, ctx| async move {
        if let Err(off) = controls_on(&ctx) {
            return Ok(off);
        }
        let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
        Ok(match ctx.catalog().event_source(name) {
            Some(source) => {
                act(&source);
                CallToolResult::text(format!("ok: {name}"))
            }
            None => CallToolResult::error(format!("no event type named {name:?}")),
        })
    }))
}

#[cfg(test)]
mod tests {
    use mcp_protocol::events::Subscription;

    use super::*;
    use crate::catalog::Reader;

    #[test]
    fn every_lets_through_every_nth_tick_and_zero_or_an_unknown_argument_is_refused() {
        let c = Catalog::new();
        let source = c.add_event_type(ticking(CLOCK, "Ticks", &[Delivery::Poll])).unwrap();
        let clock = c.event_type(CLOCK).unwrap();
        let subscription = |arguments: Value| Subscription {
            name: CLOCK.into(),
            arguments: arguments.as_object().unwrap().clone(),
            cursor: None,
            max_age_ms: None,
        };
        let mut every_third = Reader::open(&clock, &subscription(json!({"every": 3})), Delivery::Poll).unwrap();
        assert!(every_third.read(100).events.is_empty(), "from now");
        for n in 1..=7 {
            source.emit(Tick { n }).unwrap();
        }
        let ticks: Vec<_> = every_third.read(100).events.iter().map(|o| o.data["n"].clone()).collect();
        assert_eq!(ticks, [json!(3), json!(6)]);
        for refused in [json!({"every": 0}), json!({"evry": 2})] {
            let e = Reader::open(&clock, &subscription(refused.clone()), Delivery::Poll).err().expect("refused");
            assert_eq!(e.code().0, -32602, "{refused}");
        }
    }
}
