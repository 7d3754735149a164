//! `events/list` and `events/poll` (the Events extension). Each answers
//! `-32601` when the catalog serves no event type (the extension is not
//! declared); on the legacy era they are not found at all.

use mcp_protocol::events::{EventError, PollParams};
use mcp_protocol::pagination::paginate;
use mcp_protocol::request::ListParams;
use serde_json::json;

use super::{offered, Answer, McpService};
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

impl McpService {
    pub(super) async fn list_events(&self, p: ListParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        offered(self.catalog.serves_events(), mcp_protocol::request::method::EVENTS_LIST)?;
        let types = self.catalog.event_descriptors();
        let page = paginate(&types, |d| d.name.as_str(), p.cursor.as_deref(), self.page_size)?;
        self.finish_page("events", page, Some(self.list_hints(&ctx, None))).map(Answer::Tree)
    }

    /// Answers at once with what the history holds after the cursor (the
    /// design lets a poll answer early; it holds no request open).
    pub(super) async fn poll_events(&self, p: PollParams, _ctx: RequestContext) -> Result<Answer, HandlerError> {
        offered(self.catalog.serves_events(), mcp_protocol::request::method::EVENTS_POLL)?;
        let name = &p.subscription.name;
        let refused = |e: EventError| HandlerError::from(e.to_error_data());
        let event_type =
            self.catalog.event_type(name).ok_or_else(|| refused(EventError::UnknownEvent(name.clone())))?;
        let batch = event_type.poll(&p).map_err(refused)?;
        let result = json!({
            "events": batch.events,
            "cursor": batch.cursor,
            "truncated": batch.truncated,
            "hasMore": batch.has_more,
            "nextPollMs": event_type.next_poll_ms(),
        });
        self.finish(&result, None).map(Answer::Tree)
    }
}
