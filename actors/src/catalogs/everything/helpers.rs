//! What the fixture's groups share: media, schemas, tool builders.

use base64::Engine;
use mcp_protocol::model::content::Content;
use mcp_protocol::model::prompts::PromptMessage;
use mcp_protocol::model::tools::CallToolResult;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use slog::info;

use crate::catalog::context::RequestContext;
use crate::catalog::Tool;

/// A 1×1 PNG.
pub const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

pub(super) fn png_bytes() -> Vec<u8> {
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

pub(super) fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub(super) fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

pub(super) fn simple(name: &str, description: &str, f: fn() -> CallToolResult) -> Tool {
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
pub(super) struct CancelWitness {
    pub(super) ctx: RequestContext,
    pub(super) done: bool,
}

impl Drop for CancelWitness {
    fn drop(&mut self) {
        if !self.done {
            info!(self.ctx.logger(), "handler observed cancellation"; "cancelled" => self.ctx.is_cancelled());
        }
    }
}

pub(super) fn name_schema() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string", "description": "Your name"}}, "required": ["name"]})
}

pub(super) fn mrtr_tool<F>(name: &str, description: &str, f: F) -> Tool
where
    F: Fn(RequestContext) -> Result<CallToolResult, crate::catalog::error::HandlerError> + Send + Sync + Copy + 'static,
{
    Tool::raw(name, description, no_args(), move |_, ctx| async move { f(ctx) })
}

pub(super) fn string_arg(args: &Map<String, Value>, key: &str, default: &str) -> String {
    args.get(key).and_then(Value::as_str).unwrap_or(default).to_owned()
}

pub(super) fn text_message(text: String) -> PromptMessage {
    PromptMessage::user(Content::text(text))
}
