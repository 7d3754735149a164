//! `tools/list` and `tools/call`. App-only tools (MCP Apps visibility
//! `["app"]`) are for clients that render views: left out of their lists
//! for the others, and refused to them with -32021.

use mcp_protocol::model::tools::CallToolParams;
use mcp_protocol::request::ListParams;
use mcp_protocol::request_state::Binding;

use super::{Answer, McpService};
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;
use crate::catalog::{TaskSupport, Tool};
use std::sync::Arc;

impl McpService {
    pub(super) async fn list_tools(&self, p: ListParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        // App-only tools (MCP Apps) are listed to clients that render views.
        let views = ctx.renders_views();
        let gate = self.gate(&ctx);
        let keep = |t: &crate::catalog::Tool| {
            self.visible(&ctx, &t.scopes) && (views || !t.is_app_only()) && gate.as_ref().is_none_or(|g| g.tool(t))
        };
        let l = self.catalog.list_tools_where(p.cursor.as_deref(), self.page_size, &keep)?;
        self.finish_page("tools", l.page, Some(self.list_hints(&ctx, l.cache))).map(Answer::Tree)
    }

    pub(super) async fn call_tool(&self, p: CallToolParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        let tool = self.catalog.find_tool(&p.name)?;
        self.call_found_tool(tool, p, ctx).await
    }

    /// `tools/call` of `tool`, which the catalog gave for `p.name`.
    pub(super) async fn call_found_tool(
        &self,
        tool: Arc<Tool>,
        p: CallToolParams,
        ctx: RequestContext,
    ) -> Result<Answer, HandlerError> {
        if tool.is_app_only() && !ctx.renders_views() {
            return Err(mcp_protocol::apps::app_only(&p.name).into());
        }
        // Most tools never run as tasks: the client's declaration is read
        // only for one that may.
        let support = tool.task_support();
        let tasks = match support {
            TaskSupport::Forbidden => None,
            _ => self.tasks_for(&ctx),
        };
        match (support, tasks) {
            (TaskSupport::Forbidden, _) | (TaskSupport::Optional, None) => {}
            // Boxed: a task's future is large, and most calls are not tasks.
            (_, Some(tasks)) => {
                return Box::pin(self.call_as_task(tasks.clone(), tool, p, ctx)).await.map(Answer::Tree)
            }
            (TaskSupport::Required, None) => {
                let what = format!("tool {}, which runs only as a task,", p.name);
                return Err(mcp_protocol::tasks::missing_extension(&what).into());
            }
        }
        let args = p.arguments.unwrap_or_default();
        // The state binding is computed only when a round needs it (a
        // requestState came in, or the handler asks): plain calls skip it.
        let binding = || {
            Binding::new("tools/call", &p.name, Some(&args.to_map()))
                .for_subject(ctx.auth().map(crate::facts::identity::Identity::key).as_deref())
        };
        let run = || tool.call(&args, ctx.clone());
        // A finished result is encoded as it is; an `InputRequiredResult` is a tree.
        match self.rounds(&ctx, &binding, p.input_responses, p.request_state.as_deref(), run).await? {
            Ok(result) => Ok(Answer::Tool(result)),
            Err(input_required) => Ok(Answer::Tree(input_required)),
        }
    }
}
