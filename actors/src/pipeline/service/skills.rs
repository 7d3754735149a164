//! `skills/list`, `skills/get` and `resources/directory/read` (the Skills
//! extension). Each answers `-32601` when the catalog serves no skills (the
//! extension is not declared); the scopes of a skill's files decide who sees it.

use mcp_protocol::request::ListParams;
use mcp_protocol::skills::{GetSkillParams, ReadDirectoryParams};
use serde_json::json;

use super::{offered, Answer, McpService};
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

impl McpService {
    pub(super) async fn list_skills(&self, p: ListParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        offered(self.catalog.serves_skills(), mcp_protocol::request::method::SKILLS_LIST)?;
        let visible = |scopes: &[String]| self.visible(&ctx, scopes);
        let l = self.catalog.list_skills_for(p.cursor.as_deref(), self.page_size, &visible)?;
        self.finish_page("skills", l.page, Some(self.list_hints(&ctx, l.cache))).map(Answer::Tree)
    }

    pub(super) async fn get_skill(&self, p: GetSkillParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        offered(self.catalog.serves_skills(), mcp_protocol::request::method::SKILLS_GET)?;
        let skill = self.catalog.skill(&p.uri).filter(|s| self.visible(&ctx, &s.scopes)).ok_or_else(|| {
            HandlerError::invalid_params(format!("{} does not name a skill this server serves", p.uri))
        })?;
        let hints = self.list_hints(&ctx, None);
        self.finish(&json!({ "skill": skill.entry() }), Some(hints)).map(Answer::Tree)
    }

    pub(super) async fn read_directory(
        &self,
        p: ReadDirectoryParams,
        ctx: RequestContext,
    ) -> Result<Answer, HandlerError> {
        offered(self.catalog.serves_skills(), mcp_protocol::request::method::RESOURCES_DIRECTORY_READ)?;
        let visible = |scopes: &[String]| self.visible(&ctx, scopes);
        let page = self.catalog.read_directory_for(&p.uri, p.cursor.as_deref(), self.page_size, &visible)?;
        self.finish_page("resources", page, Some(self.list_hints(&ctx, None))).map(Answer::Tree)
    }
}
