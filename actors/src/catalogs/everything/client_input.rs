//! Tools the 2025-11-25 suite drives: in a legacy session their questions go
//! to the client as server-to-client requests; statelessly they answer with
//! an `InputRequiredResult`. One implementation serves both eras.

use mcp_protocol::model::tools::CallToolResult;
use serde_json::json;

use crate::catalog::{Catalog, CatalogError, Tool};

use super::helpers::*;

/// Sampling and roots.
pub(super) fn sampling_and_roots(c: &Catalog) -> Result<(), CatalogError> {
    c.add_tool(Tool::raw(
        "test_sampling",
        "Asks the client's model to complete a prompt",
        json!({"type": "object", "properties": {"prompt": {"type": "string", "description": "The prompt"}}, "required": ["prompt"]}),
        |args, ctx| async move {
            let prompt = string_arg(&args, "prompt", "Hello");
            let answer = ctx.sample("sampling", &prompt, 100)?;
            Ok(CallToolResult::text(format!("LLM response: {}", answer.text().unwrap_or("(non-text content)"))))
        },
    ))?;
    c.add_tool(Tool::raw(
        "test_elicitation",
        "Asks the user for input",
        json!({"type": "object", "properties": {"message": {"type": "string", "description": "What to ask"}}, "required": ["message"]}),
        |args, ctx| async move {
            let message = string_arg(&args, "message", "Please provide input");
            let schema = json!({"type": "object", "properties": {
                "username": {"type": "string", "description": "Your username"},
                "email": {"type": "string", "description": "Your email"}
            }, "required": ["username"]});
            let answer = ctx.elicit("elicitation", &message, schema)?;
            Ok(CallToolResult::text(format!(
                "User response: action={}, content={}",
                serde_json::to_value(answer.action).unwrap_or_default().as_str().unwrap_or("?"),
                serde_json::to_string(&answer.content).unwrap_or_default()
            )))
        },
    ))?;
    Ok(())
}

/// Elicitation.
pub(super) fn elicitation(c: &Catalog) -> Result<(), CatalogError> {
    c.add_tool(mrtr_tool(
        "test_elicitation_sep1034_defaults",
        "Elicits a form whose fields have default values (SEP-1034)",
        |ctx| {
            let schema = json!({"type": "object", "properties": {
                "name": {"type": "string", "description": "Name", "default": "John Doe"},
                "age": {"type": "integer", "description": "Age", "default": 30},
                "score": {"type": "number", "description": "Score", "default": 95.5},
                "status": {"type": "string", "description": "Status", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Verified", "default": true}
            }});
            let answer = ctx.elicit("defaults", "Please review the defaults", schema)?;
            Ok(CallToolResult::text(format!(
                "Elicitation completed: action={:?}, content={}",
                answer.action,
                serde_json::to_string(&answer.content).unwrap_or_default()
            )))
        },
    ))?;
    c.add_tool(mrtr_tool(
        "test_elicitation_sep1330_enums",
        "Elicits every enum form of SEP-1330",
        |ctx| {
            let schema = json!({"type": "object", "properties": {
                "untitledSingle": {"type": "string", "description": "Pick one", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "description": "Pick one (titled)", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]},
                "legacyEnum": {"type": "string", "description": "Pick one (legacy)", "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "description": "Pick several", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "description": "Pick several (titled)", "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}
                ]}}
            }});
            let answer = ctx.elicit("enums", "Please choose", schema)?;
            Ok(CallToolResult::text(format!(
                "Elicitation completed: action={:?}, content={}",
                answer.action,
                serde_json::to_string(&answer.content).unwrap_or_default()
            )))
        },
    ))?;
    Ok(())
}
