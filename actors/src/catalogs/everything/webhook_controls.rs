//! The conformance scenarios' webhook controls (`events_conformance_*`),
//! acting on the serving server's [`Webhooks`]: allow a callback origin
//! past the address guard (a receiver on loopback; it is still challenged
//! before any delivery), send a subscription a `gap` or end it, and say
//! where one stands. They serve conformance runs, and act only where
//! `events.test_controls` is on: any caller may use them.

use mcp_protocol::events::EventError;
use mcp_protocol::model::tools::CallToolResult;
use serde_json::{json, Map, Value};

use crate::catalog::context::RequestContext;
use crate::catalog::{Catalog, CatalogError, Tool};
use crate::webhooks::{SubscriptionState, Webhooks};

fn string_arg<'a>(args: &'a Map<String, Value>, name: &str) -> &'a str {
    args.get(name).and_then(Value::as_str).unwrap_or_default()
}

fn schema(member: &str) -> Value {
    json!({"type": "object", "properties": {member: {"type": "string"}}, "required": [member]})
}

/// The server's webhooks, when its `events.test_controls` lets these
/// controls act.
fn webhooks(ctx: &RequestContext) -> Result<std::sync::Arc<Webhooks>, CallToolResult> {
    super::events::controls_on(ctx)?;
    ctx.state::<Webhooks>().map_err(|_| CallToolResult::error("this server delivers no webhooks"))
}

/// What a control tells a subscription.
#[derive(Clone, Copy)]
enum Told {
    Gap,
    End,
}

/// A control telling the subscription `{id}` of a gap or its end.
fn tell(c: &Catalog, name: &str, description: &str, told: Told) -> Result<(), CatalogError> {
    c.add_tool(Tool::raw(name, description, schema("id"), move |args, ctx| async move {
        let id = string_arg(&args, "id").to_owned();
        let w = match webhooks(&ctx) {
            Ok(w) => w,
            Err(refused) => return Ok(refused),
        };
        let done = match told {
            Told::Gap => w.gap(&id).await,
            Told::End => {
                w.terminate(&id, EventError::Forbidden("ended by events_conformance_webhook_terminate".into())).await
            }
        };
        Ok(match done {
            true => CallToolResult::text(format!("ok: {id}")),
            false => CallToolResult::error(format!("no webhook subscription {id:?}")),
        })
    }))
}

pub(super) fn controls(c: &Catalog) -> Result<(), CatalogError> {
    c.add_tool(Tool::raw(
        "events_conformance_allow_callback_origin",
        "Lets one https callback origin past the address guard (still challenged before delivery)",
        schema("origin"),
        |args, ctx| async move {
            Ok(match webhooks(&ctx) {
                Ok(w) => match w.allow_origin(string_arg(&args, "origin")) {
                    Ok(origin) => CallToolResult::text(origin),
                    Err(why) => CallToolResult::error(why),
                },
                Err(refused) => refused,
            })
        },
    ))?;
    tell(c, "events_conformance_webhook_gap", "Sends the webhook subscription a gap body", Told::Gap)?;
    tell(c, "events_conformance_webhook_terminate", "Ends the webhook subscription with a terminated body", Told::End)?;
    c.add_tool(Tool::raw(
        "events_conformance_subscription_state",
        "Says whether the webhook subscription is active, suspended or absent",
        schema("id"),
        |args, ctx| async move {
            Ok(match webhooks(&ctx) {
                Ok(w) => CallToolResult::text(match w.state(string_arg(&args, "id")).await {
                    Some(SubscriptionState::Active) => "active",
                    Some(SubscriptionState::Suspended) => "suspended",
                    None => "absent",
                }),
                Err(refused) => refused,
            })
        },
    ))
}
