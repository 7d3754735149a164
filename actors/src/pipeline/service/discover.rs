//! `server/discover`.

use mcp_protocol::model::{DiscoverResult, ResultType};
use mcp_protocol::request::NoParams;
use mcp_protocol::ProtocolVersion;
use serde_json::json;

use super::{Answer, McpService};
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

impl McpService {
    pub(super) async fn discover(&self, _: NoParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        let result = DiscoverResult {
            result_type: ResultType::Complete,
            supported_versions: self.versions.iter().map(|v| v.as_str().to_owned()).collect(),
            capabilities: self.capabilities(),
            instructions: self.instructions.clone(),
            cache: self.read_cache,
        };
        let mut out = self.finish(&result, None)?;
        if ctx.protocol_version() == ProtocolVersion::Draft2026V1 {
            // The seed draft carried serverInfo at the top level.
            out.as_object_mut().map(|m| m.insert("serverInfo".into(), json!(self.info)));
        }
        Ok(Answer::Tree(out))
    }
}
