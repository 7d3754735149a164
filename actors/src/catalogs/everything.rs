//! The "everything" catalog: the fixture the official MCP conformance suite
//! drives (tool, resource and prompt names and replies as the suite expects),
//! plus a few tools for diagnostics (`sleep`, `test_custom_header`).

use std::time::Duration;

use base64::Engine;
use mcp_protocol::model::capabilities::ClientCapabilities;
use mcp_protocol::model::content::{Content, ResourceContents};
use mcp_protocol::model::logging::LoggingLevel;
use mcp_protocol::model::mrtr::{CreateMessageResult, ElicitResult, InputRequest, ListRootsResult};
use mcp_protocol::model::prompts::{GetPromptResult, PromptMessage};
use mcp_protocol::model::tools::CallToolResult;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use slog::info;

use crate::catalog::{Catalog, Prompt, Resource, ResourceTemplate, Tool};
use crate::context::RequestContext;

/// A 1×1 PNG.
pub const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn png_bytes() -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(PNG_BASE64).expect("valid base64")
}

/// A tiny mono 8 kHz 16-bit WAV of silence (8 samples).
pub fn wav_bytes() -> Vec<u8> {
    let samples = 8u32;
    let data_len = samples * 2;
    let mut w = Vec::with_capacity(44 + data_len as usize);
    w.extend_from_slice(b"RIFF");
    w.extend_from_slice(&(36 + data_len).to_le_bytes());
    w.extend_from_slice(b"WAVEfmt ");
    w.extend_from_slice(&16u32.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes()); // PCM
    w.extend_from_slice(&1u16.to_le_bytes()); // mono
    w.extend_from_slice(&8000u32.to_le_bytes());
    w.extend_from_slice(&16000u32.to_le_bytes());
    w.extend_from_slice(&2u16.to_le_bytes());
    w.extend_from_slice(&16u16.to_le_bytes());
    w.extend_from_slice(b"data");
    w.extend_from_slice(&data_len.to_le_bytes());
    w.resize(44 + data_len as usize, 0);
    w
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn simple(name: &str, description: &str, f: fn() -> CallToolResult) -> Tool {
    Tool::raw(name, description, no_args(), move |_, _| async move { Ok(f()) })
}

/// Arguments of `echo`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// The text to send back.
    pub text: String,
}

/// Arguments of `sleep`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SleepArgs {
    /// How long to sleep, in milliseconds (at most 60000).
    pub ms: u64,
}

/// Logs when dropped before `done`: how the `sleep` tool shows on stderr that
/// its handler observed cancellation.
struct CancelWitness {
    ctx: RequestContext,
    done: bool,
}

impl Drop for CancelWitness {
    fn drop(&mut self) {
        if !self.done {
            info!(self.ctx.logger(), "handler observed cancellation"; "cancelled" => self.ctx.is_cancelled());
        }
    }
}

fn tools(c: &Catalog) {
    c.add_tool(Tool::new("echo", "Echoes `text` back (the load harness calls it)", |a: EchoArgs, _| async move {
        Ok(CallToolResult::text(a.text))
    }));
    c.add_tool(simple("test_simple_text", "Returns a simple text response", || {
        CallToolResult::text("This is a simple text response for testing.")
    }));
    c.add_tool(simple("test_image_content", "Returns an image (1x1 PNG)", || {
        CallToolResult::success(vec![Content::image(PNG_BASE64, "image/png")])
    }));
    c.add_tool(simple("test_audio_content", "Returns a short WAV clip", || {
        CallToolResult::success(vec![Content::audio(b64(&wav_bytes()), "audio/wav")])
    }));
    c.add_tool(simple("test_embedded_resource", "Returns an embedded resource", || {
        CallToolResult::success(vec![Content::resource(ResourceContents::text(
            "test://embedded-resource",
            "text/plain",
            "This is an embedded resource content.",
        ))])
    }));
    c.add_tool(simple("test_multiple_content_types", "Returns text, an image and a resource", || {
        CallToolResult::success(vec![
            Content::text("Multiple content types test:"),
            Content::image(PNG_BASE64, "image/png"),
            Content::resource(ResourceContents::text(
                "test://mixed-content-resource",
                "application/json",
                r#"{"test":"data","value":123}"#,
            )),
        ])
    }));
    c.add_tool(simple("test_error_handling", "Always fails with a tool execution error", || {
        CallToolResult::error("This tool intentionally returns an error for testing")
    }));
    c.add_tool(Tool::raw(
        "test_tool_with_progress",
        "Reports progress 0, 50, 100 of 100, then returns the progress token",
        no_args(),
        |_, ctx| async move {
            for p in [0.0, 50.0, 100.0] {
                ctx.progress(p, Some(100.0), Some(&format!("{p}% done"))).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let token = ctx.meta().progress_token.clone().map_or("no progress token".to_string(), |t| match t {
                Value::String(s) => s,
                other => other.to_string(),
            });
            Ok(CallToolResult::text(token))
        },
    ));
    c.add_tool(Tool::raw(
        "test_logging_tool",
        "Sends three info log messages when the request sets a log level",
        no_args(),
        |_, ctx| async move {
            for (i, m) in
                ["Tool execution started", "Tool processing data", "Tool execution completed"].iter().enumerate()
            {
                ctx.log(LoggingLevel::Info, Some("test_logging_tool"), json!(m)).await;
                if i < 2 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            Ok(CallToolResult::text("Logging test completed"))
        },
    ));
    c.add_tool(Tool::raw(
        "test_tool_with_logging",
        "Sends three info log messages about 50 ms apart",
        no_args(),
        |_, ctx| async move {
            for m in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
                ctx.log(LoggingLevel::Info, Some("test_tool_with_logging"), json!(m)).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok(CallToolResult::text("Tool with logging completed"))
        },
    ));
    c.add_tool(Tool::raw(
        "test_missing_capability",
        "Requires the client's sampling capability",
        no_args(),
        |_, ctx| async move {
            ctx.require_capabilities(&ClientCapabilities::sampling())?;
            Ok(CallToolResult::text("The client declared the sampling capability for this request."))
        },
    ));
    c.add_tool(Tool::raw(
        "test_streaming_elicitation",
        "Streams a notification, then answers; never sends a server-to-client request",
        no_args(),
        |_, ctx| async move {
            ctx.log(LoggingLevel::Info, Some("test_streaming_elicitation"), json!("working")).await;
            let declared = ctx.client_capabilities().elicitation.is_some();
            Ok(CallToolResult::text(format!(
                "Streaming response complete (elicitation declared: {declared}); input is requested through results, not requests."
            )))
        },
    ));
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
    ));
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
    );
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
    ));
}

/// Adds `name` if absent, removes it if present: a real change of a listed
/// item, which the catalog publishes as a list_changed event.
fn toggle_tool(c: &Catalog, name: &str) -> bool {
    if c.remove_tool(name).is_some() {
        return false;
    }
    c.add_tool(simple(name, "Appears and disappears with test_trigger_tool_change", || {
        CallToolResult::text("dynamic tool")
    }));
    true
}

fn toggle_prompt(c: &Catalog, name: &str) -> bool {
    if c.remove_prompt(name).is_some() {
        return false;
    }
    c.add_prompt(Prompt::new(name, "Appears and disappears with test_trigger_prompt_change", |_, _| async {
        Ok(GetPromptResult { description: None, messages: vec![text_message("dynamic prompt".into())] })
    }));
    true
}

fn triggers(c: &Catalog) {
    c.add_tool(
        Tool::raw(
            "test_trigger_tool_change",
            "Adds or removes test_dynamic_tool, so tools/list_changed reaches subscribers",
            no_args(),
            |_, ctx| async move {
                let added = toggle_tool(ctx.catalog(), "test_dynamic_tool");
                Ok(CallToolResult::text(format!("test_dynamic_tool {}", if added { "added" } else { "removed" })))
            },
        )
        .unlisted(),
    );
    c.add_tool(
        Tool::raw(
            "test_trigger_prompt_change",
            "Adds or removes test_dynamic_prompt, so prompts/list_changed reaches subscribers",
            no_args(),
            |_, ctx| async move {
                let added = toggle_prompt(ctx.catalog(), "test_dynamic_prompt");
                Ok(CallToolResult::text(format!("test_dynamic_prompt {}", if added { "added" } else { "removed" })))
            },
        )
        .unlisted(),
    );
    c.add_tool(
        Tool::raw(
            "test_trigger_resource_update",
            "Publishes notifications/resources/updated for a URI (default test://watched-resource)",
            json!({"type": "object", "properties": {"uri": {"type": "string"}}}),
            |args: Map<String, Value>, ctx| async move {
                let uri = args.get("uri").and_then(Value::as_str).unwrap_or("test://watched-resource").to_owned();
                ctx.catalog().notify_resource_updated(&uri);
                Ok(CallToolResult::text(format!("updated {uri}")))
            },
        )
        .unlisted(),
    );
}

fn name_schema() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string", "description": "Your name"}}, "required": ["name"]})
}

fn mrtr_tool<F>(name: &str, description: &str, f: F) -> Tool
where
    F: Fn(RequestContext) -> Result<CallToolResult, crate::error::HandlerError> + Send + Sync + Copy + 'static,
{
    Tool::raw(name, description, no_args(), move |_, ctx| async move { f(ctx) })
}

/// The multi round-trip (InputRequiredResult) fixture of the conformance suite.
fn input_required(c: &Catalog) {
    c.add_tool(mrtr_tool("test_input_required_result_elicitation", "Asks the user's name, then greets them", |ctx| {
        let answer = ctx.elicit("user_name", "What is your name?", name_schema())?;
        Ok(match answer.string("name") {
            Some(name) => CallToolResult::text(format!("Hello, {name}!")),
            None => CallToolResult::text(format!("No name given ({:?}).", answer.action)),
        })
    }));
    c.add_tool(mrtr_tool("test_input_required_result_sampling", "Asks the client's model a question", |ctx| {
        let answer = ctx.sample("sample_request", "What is the capital of France?", 100)?;
        Ok(CallToolResult::text(format!("LLM response: {}", answer.text().unwrap_or("(non-text content)"))))
    }));
    c.add_tool(mrtr_tool("test_input_required_result_list_roots", "Asks the client for its roots", |ctx| {
        let roots = ctx.list_roots("roots_request")?;
        Ok(CallToolResult::text(format!("Found {} root(s)", roots.roots.len())))
    }));
    c.add_tool(mrtr_tool(
        "test_input_required_result_request_state",
        "Asks for confirmation, carrying requestState",
        |ctx| {
            let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
            let answer = ctx.elicit("confirm", "Proceed?", schema)?;
            let ok = answer.content.as_ref().and_then(|c| c.get("ok")).and_then(Value::as_bool).unwrap_or(false);
            Ok(CallToolResult::text(format!("Confirmed: {ok}")))
        },
    ));
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
    ));
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
    }));
    c.add_tool(mrtr_tool(
        "test_input_required_result_tampered_state",
        "Carries an integrity-protected requestState (tampering is refused)",
        |ctx| {
            let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
            let answer = ctx.elicit("confirm", "Continue?", schema)?;
            Ok(CallToolResult::text(format!("Continued ({:?})", answer.action)))
        },
    ));
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
    ));
}

fn string_arg(args: &Map<String, Value>, key: &str, default: &str) -> String {
    args.get(key).and_then(Value::as_str).unwrap_or(default).to_owned()
}

/// Tools the 2025-11-25 suite drives: in a legacy session their questions go
/// to the client as server-to-client requests; statelessly they answer with
/// an `InputRequiredResult`. One implementation serves both eras.
fn client_input(c: &Catalog) {
    c.add_tool(Tool::raw(
        "test_sampling",
        "Asks the client's model to complete a prompt",
        json!({"type": "object", "properties": {"prompt": {"type": "string", "description": "The prompt"}}, "required": ["prompt"]}),
        |args, ctx| async move {
            let prompt = string_arg(&args, "prompt", "Hello");
            let answer = ctx.sample("sampling", &prompt, 100)?;
            Ok(CallToolResult::text(format!("LLM response: {}", answer.text().unwrap_or("(non-text content)"))))
        },
    ));
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
    ));
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
    ));
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
    ));
}

fn resources(c: &Catalog) {
    c.add_resource(
        Resource::text(
            "test://static-text",
            "static-text",
            "text/plain",
            "This is the content of the static text resource.",
        )
        .with_description("A static text resource"),
    );
    c.add_resource(
        Resource::blob("test://static-binary", "static-binary", "image/png", &png_bytes())
            .with_description("A 1x1 PNG"),
    );
    c.add_resource(
        Resource::text("test://watched-resource", "watched-resource", "text/plain", "Watched resource content")
            .with_description("A resource for update subscriptions"),
    );
    c.add_resource(Resource::text(
        "test://stateless-static-text",
        "stateless-static-text",
        "text/plain",
        "This resource is served without any session state.",
    ));
    let template = ResourceTemplate::new("test://template/{id}/data", "template-data", |uri, vars, _| async move {
        let id = vars.get("id").cloned().unwrap_or_default();
        let text = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string();
        Ok(vec![ResourceContents::text(uri, "application/json", text)])
    })
    .expect("a valid template")
    .with_description("Data for any id")
    .with_mime_type("application/json")
    .with_completer(std::sync::Arc::new(|arg, value, _| {
        if arg != "id" {
            return Vec::new();
        }
        ["1", "2", "3", "123"].iter().filter(|v| v.starts_with(value)).map(|v| v.to_string()).collect()
    }));
    c.add_template(template);
}

fn text_message(text: String) -> PromptMessage {
    PromptMessage::user(Content::text(text))
}

fn prompts(c: &Catalog) {
    c.add_prompt(Prompt::new("test_simple_prompt", "A prompt without arguments", |_, _| async {
        Ok(GetPromptResult {
            description: None,
            messages: vec![text_message("This is a simple prompt for testing.".into())],
        })
    }));
    c.add_prompt(
        Prompt::new("test_prompt_with_arguments", "A prompt with two required arguments", |args, _| async move {
            let a1 = args.get("arg1").cloned().unwrap_or_default();
            let a2 = args.get("arg2").cloned().unwrap_or_default();
            Ok(GetPromptResult {
                description: None,
                messages: vec![text_message(format!("Prompt with arguments: arg1='{a1}', arg2='{a2}'"))],
            })
        })
        .with_argument("arg1", "First test argument", true)
        .with_argument("arg2", "Second test argument", true)
        .with_completer(std::sync::Arc::new(|arg, value, _| {
            let options: &[&str] = match arg {
                "arg1" => &["test", "testing", "tested", "value1"],
                "arg2" => &["alpha", "beta", "gamma"],
                _ => &[],
            };
            options.iter().filter(|o| o.starts_with(value)).map(|o| o.to_string()).collect()
        })),
    );
    c.add_prompt(
        Prompt::new("test_prompt_with_embedded_resource", "A prompt embedding a resource", |args, _| async move {
            let uri = args.get("resourceUri").cloned().unwrap_or_default();
            Ok(GetPromptResult {
                description: None,
                messages: vec![
                    PromptMessage::user(Content::resource(ResourceContents::text(
                        uri,
                        "text/plain",
                        "Embedded resource content for testing.",
                    ))),
                    text_message("Please process the embedded resource above.".into()),
                ],
            })
        })
        .with_argument("resourceUri", "URI of the resource to embed", true),
    );
    c.add_prompt(Prompt::new(
        "test_input_required_result_prompt",
        "Asks the user for context before rendering",
        |_, ctx| async move {
            let schema =
                json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]});
            let answer = ctx.elicit("user_context", "What context should the prompt use?", schema)?;
            let context = answer.string("context").unwrap_or("(none)").to_owned();
            Ok(GetPromptResult { description: None, messages: vec![text_message(format!("Context: {context}"))] })
        },
    ));
    c.add_prompt(Prompt::new("test_prompt_with_image", "A prompt with an image", |_, _| async {
        Ok(GetPromptResult {
            description: None,
            messages: vec![
                PromptMessage::user(Content::image(PNG_BASE64, "image/png")),
                text_message("Please analyze the image above.".into()),
            ],
        })
    }));
}

/// Builds the catalog.
pub fn catalog() -> Catalog {
    let c = Catalog::new();
    tools(&c);
    triggers(&c);
    input_required(&c);
    client_input(&c);
    resources(&c);
    prompts(&c);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wav_is_well_formed() {
        let w = wav_bytes();
        assert_eq!(&w[..4], b"RIFF");
        assert_eq!(u32::from_le_bytes(w[4..8].try_into().unwrap()) as usize, w.len() - 8);
        assert_eq!(&w[8..12], b"WAVE");
    }

    #[test]
    fn lists_the_fixture_names() {
        let c = catalog();
        let tools: Vec<String> = c.list_tools(None, 100).unwrap().page.items.into_iter().map(|t| t.name).collect();
        for name in
            ["test_simple_text", "test_tool_with_progress", "test_missing_capability", "json_schema_2020_12_tool"]
        {
            assert!(tools.iter().any(|t| t == name), "{name} not listed");
        }
        assert!(c.resource("test://nonexistent-resource-for-conformance-testing").is_none());
        assert!(c.match_template("test://template/123/data").is_some());
    }
}
