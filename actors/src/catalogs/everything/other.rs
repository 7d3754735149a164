//! Tools with headers, a cancellable sleep, a JSON Schema 2020-12 input, and
//! one that panics.

use std::time::Duration;

use mcp_protocol::model::tools::CallToolResult;
use serde_json::{json, Map, Value};

use crate::catalog::{Catalog, CatalogError, Tool};

use super::helpers::*;

pub(super) fn tools(c: &Catalog) -> Result<(), CatalogError> {
    c.add_tool(Tool::raw(
        "panic",
        "Panics: shows that a failing handler is answered with -32603 and the server carries on",
        no_args(),
        |_, _| async move {
            if true {
                panic!("the panic tool panicked, as asked");
            }
            Ok(CallToolResult::text("unreachable"))
        },
    ))?;
    c.add_tool(Tool::raw(
        "test_custom_header",
        "Echoes a region mirrored into the Mcp-Param-Region header",
        json!({"type": "object", "properties": {
            "region": {"type": "string", "description": "Region to run in", "x-mcp-header": "Region"},
            "query": {"type": "string", "description": "Anything"}
        }, "required": ["region"]}),
        |args: Map<String, Value>, _| async move {
            let region = args.get("region").and_then(Value::as_str).unwrap_or("").to_owned();
            Ok(CallToolResult::text(format!("region={region}")))
        },
    ))?;
    c.add_tool(
        Tool::new(
            "sleep",
            "Sleeps for `ms` milliseconds (≤ 60000) reporting progress; cancellable",
            |a: SleepArgs, ctx| async move {
                if a.ms > 60_000 {
                    return Ok(CallToolResult::error("ms must be at most 60000"));
                }
                let mut witness = CancelWitness { ctx: ctx.clone(), done: false };
                let steps = 10u64;
                for i in 0..steps {
                    ctx.progress(i as f64, Some(steps as f64), None).await;
                    tokio::time::sleep(Duration::from_millis(a.ms / steps)).await;
                }
                witness.done = true;
                Ok(CallToolResult::text(format!("slept {} ms", a.ms)))
            },
        )
        .with_title("Sleep"),
    )?;
    Ok(())
}

/// A tool whose input uses JSON Schema 2020-12 features.
pub(super) fn schema_tool(c: &Catalog) -> Result<(), CatalogError> {
    c.add_tool(Tool::raw(
        "json_schema_2020_12_tool",
        "Accepts a contact described with JSON Schema 2020-12 features",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "address",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                    "required": ["street", "city"],
                    "additionalProperties": false
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "additionalProperties": false,
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}, {"not": {"required": ["contactMethod"]}}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {}
        }),
        |args: Map<String, Value>, _| async move {
            let name = args.get("name").and_then(Value::as_str).unwrap_or("(no name)");
            Ok(CallToolResult::text(format!("Received contact for {name}")))
        },
    ))?;
    Ok(())
}
