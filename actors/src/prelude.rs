//! What a server needs, in one import: `use actix_mcp::prelude::*;`.
//!
//! The builder and its error, the handler API (tools, resources, templates,
//! prompts, skills, views, their return values and context), the content and result types
//! handlers build, and the derive traits for typed arguments
//! (`Deserialize`, `JsonSchema`). Your crate still depends on `serde` (with
//! `derive`) and `schemars` 1 for those derives to expand; use the versions
//! re-exported as `actix_mcp::serde` and `actix_mcp::schemars`.

pub use crate::builder::McpServerBuilder;
pub use crate::catalog::context::RequestContext;
pub use crate::catalog::error::HandlerError;
pub use crate::catalog::{
    Catalog, EventSource, EventType, IntoToolOutcome, Json, NoArgs, Prompt, PromptArgs, Resource, ResourceBody,
    ResourceTemplate, Skill, TaskSupport, TemplateVars, Tool, View, WeakEventSource,
};
pub use crate::config::Config;
pub use crate::facts::identity::Identity;
pub use crate::server::build_error::BuildError;
pub use crate::server::McpServer;
pub use crate::server_info;
pub use crate::transport::http::serve as serve_http;
pub use crate::transport::stdio::serve_std as serve_stdio;
pub use mcp_protocol::apps::Visibility;
pub use mcp_protocol::events::{Delivery, EventError};
pub use mcp_protocol::model::content::{Content, ResourceContents};
pub use mcp_protocol::model::prompts::{GetPromptResult, PromptMessage, Role};
pub use mcp_protocol::model::tools::{CallToolResult, ToolAnnotations};
pub use mcp_protocol::model::Annotations;
pub use mcp_protocol::ErrorData;
pub use schemars::JsonSchema;
pub use serde::{Deserialize, Serialize};
pub use serde_json::json;
