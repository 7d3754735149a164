//! The Tasks extension fixture of the conformance suite (`tasks-*`
//! scenarios): a tool that never becomes a task, one that may, and ones
//! that only run as tasks — ending with a tool error, a protocol error,
//! asking for one input, for two at once, or asking before the task begins.

use std::time::Duration;

use mcp_protocol::model::mrtr::{ElicitResult, InputRequest};
use mcp_protocol::model::tools::CallToolResult;
use mcp_protocol::ErrorData;
use serde_json::{json, Value};

use crate::catalog::error::HandlerError;
use crate::catalog::{Catalog, CatalogError, TaskSupport, Tool};

use super::helpers::*;

fn confirm_schema() -> Value {
    json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]})
}

/// The seven tools the `tasks-*` scenarios call, `about` and `task_echo`.
pub(super) fn tools(c: &Catalog) -> Result<(), CatalogError> {
    // Lists are sorted by name, and `confirm_delete` would otherwise come
    // first; the header-validation scenario calls the first listed tool with
    // no arguments and no extension, which a task-only tool must refuse.
    c.add_tool(Tool::raw("about", "Says what this fixture is", no_args(), |_, _ctx| async move {
        Ok(CallToolResult::text("actix-mcp's everything catalog: the fixture of the MCP conformance suite"))
    }))?;
    let name = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    c.add_tool(Tool::raw("greet", "Greets by name, at once (never a task)", name, |args, _ctx| async move {
        Ok(CallToolResult::text(format!("Hello, {}!", string_arg(&args, "name", "World"))))
    }))?;
    let slow = json!({"type": "object", "properties": {
        "seconds": {"type": "number", "minimum": 0}, "label": {"type": "string"}}});
    c.add_tool(
        Tool::raw(
            "slow_compute",
            "Computes for `seconds`, reporting progress (a task when allowed)",
            slow,
            |args, ctx| async move {
                let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(1.0).clamp(0.0, 3600.0);
                let label = string_arg(&args, "label", "job");
                let steps = (seconds * 10.0).ceil() as u64;
                for step in 0..steps {
                    ctx.progress(step as f64, Some(steps as f64), Some(&format!("{label}: step {step} of {steps}")))
                        .await;
                    ctx.sleep(Duration::from_millis(100)).await?;
                }
                Ok(CallToolResult::text(format!("{label}: computed in {seconds} s")))
            },
        )
        .with_task_support(TaskSupport::Optional),
    )?;
    c.add_tool(
        Tool::raw("failing_job", "Runs for a second, then fails as a tool (isError)", no_args(), |_, ctx| async move {
            ctx.sleep(Duration::from_secs(1)).await?;
            Ok(CallToolResult::error("the job failed: the input could not be processed"))
        })
        .with_task_support(TaskSupport::Required),
    )?;
    c.add_tool(
        Tool::raw(
            "protocol_error_job",
            "Runs briefly, then fails with a JSON-RPC error",
            no_args(),
            |_, ctx| async move {
                ctx.sleep(Duration::from_millis(500)).await?;
                Err(HandlerError::Rpc(ErrorData::internal("the job's backend refused the request")))
            },
        )
        .with_task_support(TaskSupport::Required),
    )?;
    // For the load harness (`mcp-load tasks`): a task that ends at once.
    c.add_tool(
        Tool::raw("task_echo", "Echoes its text through a task", echo_schema(), |args, _ctx| async move {
            Ok(CallToolResult::text(string_arg(&args, "text", "")))
        })
        .with_task_support(TaskSupport::Required),
    )?;
    input_tools(c)
}

fn echo_schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
}

/// The task tools that ask for input.
fn input_tools(c: &Catalog) -> Result<(), CatalogError> {
    let file = json!({"type": "object", "properties": {"filename": {"type": "string"}}});
    c.add_tool(
        Tool::raw(
            "confirm_delete",
            "Asks for confirmation inside the task, then deletes",
            file,
            |args, ctx| async move {
                ctx.begin_task().await;
                let filename = string_arg(&args, "filename", "file.txt");
                let answer = ctx.elicit("confirm", &format!("Delete {filename}?"), confirm_schema())?;
                let yes = answer.content.as_ref().and_then(|c| c.get("confirm")).and_then(Value::as_bool);
                Ok(CallToolResult::text(match yes {
                    Some(true) => format!("Deleted {filename}"),
                    _ => format!("Kept {filename} ({:?})", answer.action),
                }))
            },
        )
        .with_task_support(TaskSupport::Required),
    )?;
    c.add_tool(
        Tool::raw(
            "multi_input",
            "Asks for a name and a confirmation at once, inside the task",
            no_args(),
            |_, ctx| async move {
                ctx.begin_task().await;
                let name = ctx.ask::<ElicitResult>("name", InputRequest::elicit_form("Your name?", name_schema()))?;
                let confirm =
                    ctx.ask::<ElicitResult>("confirm", InputRequest::elicit_form("Proceed?", confirm_schema()))?;
                let (Some(name), Some(confirm)) = (name, confirm) else { return Err(ctx.input_required()) };
                Ok(CallToolResult::text(format!(
                    "{} answered; proceed: {:?}",
                    name.string("name").unwrap_or("someone"),
                    confirm.content.as_ref().and_then(|c| c.get("confirm"))
                )))
            },
        )
        .with_task_support(TaskSupport::Required),
    )?;
    c.add_tool(
        Tool::raw(
            "test_tool_with_task",
            "Asks the user's name (a round of the call), then greets them from a task",
            no_args(),
            |_, ctx| async move {
                let answer = ctx.elicit("user_name", "What is your name?", name_schema())?;
                ctx.begin_task().await;
                ctx.sleep(Duration::from_millis(200)).await?;
                Ok(CallToolResult::text(format!("Hello, {}!", answer.string("name").unwrap_or("stranger"))))
            },
        )
        .with_task_support(TaskSupport::Required),
    )?;
    Ok(())
}
