//! The multi round-trip (InputRequiredResult) fixture of the conformance suite.

use mcp_protocol::model::mrtr::{CreateMessageResult, ElicitResult, InputRequest, ListRootsResult};
use mcp_protocol::model::tools::CallToolResult;
use serde_json::{json, Value};

use crate::catalog::{Catalog, CatalogError};

use super::helpers::*;

/// Tools that ask once.
pub(super) fn single_round(c: &Catalog) -> Result<(), CatalogError> {
    c.add_tool(mrtr_tool("test_input_required_result_elicitation", "Asks the user's name, then greets them", |ctx| {
        let answer = ctx.elicit("user_name", "What is your name?", name_schema())?;
        Ok(match answer.string("name") {
            Some(name) => CallToolResult::text(format!("Hello, {name}!")),
            None => CallToolResult::text(format!("No name given ({:?}).", answer.action)),
        })
    }))?;
    c.add_tool(mrtr_tool("test_input_required_result_sampling", "Asks the client's model a question", |ctx| {
        let answer = ctx.sample("sample_request", "What is the capital of France?", 100)?;
        Ok(CallToolResult::text(format!("LLM response: {}", answer.text().unwrap_or("(non-text content)"))))
    }))?;
    c.add_tool(mrtr_tool("test_input_required_result_list_roots", "Asks the client for its roots", |ctx| {
        let roots = ctx.list_roots("roots_request")?;
        Ok(CallToolResult::text(format!("Found {} root(s)", roots.roots.len())))
    }))?;
    c.add_tool(mrtr_tool(
        "test_input_required_result_request_state",
        "Asks for confirmation, carrying requestState",
        |ctx| {
            let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
            let answer = ctx.elicit("confirm", "Proceed?", schema)?;
            let ok = answer.content.as_ref().and_then(|c| c.get("ok")).and_then(Value::as_bool).unwrap_or(false);
            Ok(CallToolResult::text(format!("Confirmed: {ok}")))
        },
    ))?;
    c.add_tool(mrtr_tool(
        "test_input_required_result_multiple_inputs",
        "Asks for a name, a sampled greeting and the roots at once",
        |ctx| {
            let name =
                ctx.ask::<ElicitResult>("user_name", InputRequest::elicit_form("What is your name?", name_schema()))?;
            let greeting = ctx
                .ask::<CreateMessageResult>("greeting", InputRequest::sample_text("Write a one-line greeting.", 50))?;
            let roots = ctx.ask::<ListRootsResult>("client_roots", InputRequest::list_roots())?;
            let (Some(name), Some(greeting), Some(roots)) = (name, greeting, roots) else {
                return Err(ctx.input_required());
            };
            Ok(CallToolResult::text(format!(
                "{} {} ({} root(s))",
                greeting.text().unwrap_or("Hello"),
                name.string("name").unwrap_or("stranger"),
                roots.roots.len()
            )))
        },
    ))?;
    Ok(())
}

/// Tools that ask over several rounds, or with handler state.
pub(super) fn multi_round(c: &Catalog) -> Result<(), CatalogError> {
    c.add_tool(mrtr_tool("test_input_required_result_multi_round", "Asks a name, then a favourite colour", |ctx| {
        let name = ctx.elicit("step1", "What is your name?", name_schema())?;
        let color_schema =
            json!({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]});
        let color = ctx.elicit("step2", "What is your favourite colour?", color_schema)?;
        Ok(CallToolResult::text(format!(
            "{} likes {}",
            name.string("name").unwrap_or("someone"),
            color.string("color").unwrap_or("no colour")
        )))
    }))?;
    c.add_tool(mrtr_tool(
        "test_input_required_result_tampered_state",
        "Carries an integrity-protected requestState (tampering is refused)",
        |ctx| {
            let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
            let answer = ctx.elicit("confirm", "Continue?", schema)?;
            Ok(CallToolResult::text(format!("Continued ({:?})", answer.action)))
        },
    ))?;
    c.add_tool(mrtr_tool(
        "test_input_required_result_capabilities",
        "Asks only for input kinds the client declared",
        |ctx| {
            if ctx.can_elicit() {
                let a = ctx.elicit("user_name", "What is your name?", name_schema())?;
                Ok(CallToolResult::text(format!("Hello, {}!", a.string("name").unwrap_or("stranger"))))
            } else if ctx.can_sample() {
                let a = ctx.sample("sample_request", "Say hello.", 50)?;
                Ok(CallToolResult::text(format!("LLM response: {}", a.text().unwrap_or(""))))
            } else {
                let roots = ctx.list_roots("roots_request")?;
                Ok(CallToolResult::text(format!("Found {} root(s)", roots.roots.len())))
            }
        },
    ))?;
    Ok(())
}
