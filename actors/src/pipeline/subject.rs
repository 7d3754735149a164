//! [`Subject`]: the item a call is about, as the policy and the audit log
//! see it, found once when the request starts; and the policy's
//! [`Verdict`] on the call, which the service enforces and the request's
//! watch records.

use std::sync::Arc;

use mcp_protocol::request::ClientRequest;

use crate::catalog::{Catalog, ResourceTemplate, Tool};
use crate::config::PolicyMode;
use crate::facts::identity::Identity;
use crate::policy::{Action, Item, Policy};

/// A call's item: a tool, a resource, a prompt or an event type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subject {
    pub(crate) action: Action,
    /// The name as the caller gave it; a URI read through a template as
    /// the template reads it, percent-escapes decoded ([`as_read`]).
    pub(crate) name: String,
    /// The upstream serving it (`""`: served here, or not in the catalog).
    pub(crate) upstream: String,
    /// Whether the catalog has it.
    pub(crate) known: bool,
    read_only: bool,
    destructive: bool,
    /// The URI template a read resolves through (`""`: none).
    template: String,
}

/// What the policy says of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Let through (or no policy).
    Allow,
    /// Refused: answered as for an unknown item.
    Deny,
    /// The policy denies it, but in shadow mode: let through, logged.
    ShadowDeny,
}

impl Verdict {
    /// The `decision` label of `mcp_server_policy_decisions_total`.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Deny => "deny",
            Verdict::ShadowDeny => "shadow_deny",
        }
    }
}

impl Subject {
    /// The item of `request` when it is a call the policy decides and the
    /// audit log records (`tools/call`, `resources/read`, `prompts/get`);
    /// `tool`: the tool admission found, if it looked.
    pub(crate) fn of(catalog: &Catalog, request: &ClientRequest, tool: Option<&Arc<Tool>>) -> Option<Subject> {
        let upstream = |u: Option<&str>| u.unwrap_or_default().to_owned();
        Some(match request {
            ClientRequest::CallTool(p) => {
                let found = tool.cloned().or_else(|| catalog.tool(&p.name));
                let item = found.as_deref().map(tool_item);
                Subject {
                    action: Action::CallTool,
                    name: p.name.clone(),
                    upstream: upstream(item.map(|i| i.upstream)),
                    known: item.is_some(),
                    read_only: item.is_some_and(|i| i.read_only),
                    destructive: item.is_some_and(|i| i.destructive),
                    template: String::new(),
                }
            }
            ClientRequest::GetPrompt(p) => {
                let found = catalog.prompt(&p.name);
                Subject {
                    action: Action::GetPrompt,
                    name: p.name.clone(),
                    upstream: upstream(found.as_deref().and_then(|p| p.upstream())),
                    known: found.is_some(),
                    read_only: false,
                    destructive: false,
                    template: String::new(),
                }
            }
            ClientRequest::ReadResource(p) => {
                // As the read resolves: a listed resource first, then the
                // first template that matches (decided as that template too).
                let (served_by, template, name) = match catalog.resource(&p.uri) {
                    Some(r) => (Some(r.upstream().map(str::to_owned)), String::new(), p.uri.clone()),
                    None => match catalog.match_template(&p.uri) {
                        Some((t, _)) => {
                            (Some(t.upstream().map(str::to_owned)), t.uri_template().to_owned(), as_read(&p.uri))
                        }
                        None => (None, String::new(), p.uri.clone()),
                    },
                };
                let known = served_by.is_some();
                Subject {
                    action: Action::ReadResource,
                    name,
                    upstream: upstream(served_by.flatten().as_deref()),
                    known,
                    read_only: false,
                    destructive: false,
                    template,
                }
            }
            ClientRequest::PollEvents(mcp_protocol::events::PollParams { subscription, .. })
            | ClientRequest::StreamEvents(mcp_protocol::events::StreamParams { subscription })
            | ClientRequest::SubscribeEvents(mcp_protocol::events::webhook::SubscribeParams { subscription, .. }) => {
                Self::event(catalog, &subscription.name)
            }
            ClientRequest::UnsubscribeEvents(p) => Self::event(catalog, &p.name),
            _ => return None,
        })
    }

    /// A subscription to the event type `name` (a poll, a stream).
    fn event(catalog: &Catalog, name: &str) -> Subject {
        Subject {
            action: Action::SubscribeEvents,
            name: name.to_owned(),
            upstream: String::new(),
            known: catalog.event_type(name).is_some(),
            read_only: false,
            destructive: false,
            template: String::new(),
        }
    }

    /// The item as the policy sees it.
    pub(crate) fn item(&self) -> Item<'_> {
        Item {
            action: self.action,
            name: &self.name,
            upstream: &self.upstream,
            read_only: self.read_only,
            destructive: self.destructive,
            template: &self.template,
        }
    }

    /// What `policy` says of `caller` calling this.
    pub(crate) fn verdict(&self, policy: &Policy, caller: Option<&Identity>) -> Verdict {
        match (policy.permits(&policy.principal(caller), &self.item()), policy.mode()) {
            (true, _) => Verdict::Allow,
            (false, PolicyMode::Shadow) => Verdict::ShadowDeny,
            (false, _) => Verdict::Deny,
        }
    }
}

/// The item of a listed tool.
pub(crate) fn tool_item(t: &Tool) -> Item<'_> {
    let hints = t.def.annotations.as_ref();
    Item {
        action: Action::CallTool,
        name: &t.def.name,
        upstream: t.upstream().unwrap_or_default(),
        read_only: hints.and_then(|a| a.read_only_hint).unwrap_or(false),
        destructive: hints.and_then(|a| a.destructive_hint).unwrap_or(false),
        template: "",
    }
}

/// The item of a listed template: `Resource::"<URI template>"`, the same
/// decision as the template half of a read through it.
pub(crate) fn template_item(t: &ResourceTemplate) -> Item<'_> {
    let uri_template = t.uri_template();
    Item { template: uri_template, ..other_item(Action::ReadResource, uri_template, t.upstream()) }
}

/// The item of a listed resource or prompt.
pub(crate) fn other_item<'a>(action: Action, name: &'a str, upstream: Option<&'a str>) -> Item<'a> {
    Item { action, name, upstream: upstream.unwrap_or_default(), read_only: false, destructive: false, template: "" }
}

/// A URI read through a template, as the template reads it: a template
/// hands its handler each variable percent-decoded
/// ([`UriPattern::matches`](crate::catalog::UriPattern::matches)), so
/// `notes://%73ecret` reads what `notes://secret` reads. The policy decides
/// on this form, so that a rule on `notes://secret` meets every spelling
/// of it. (Not UTF-8 once decoded: no template matches it, left as given.)
fn as_read(uri: &str) -> String {
    percent_encoding::percent_decode_str(uri).decode_utf8().map_or_else(|_| uri.to_owned(), |d| d.into_owned())
}

#[cfg(test)]
mod tests {
    use super::as_read;

    #[test]
    fn a_uri_read_through_a_template_is_decided_decoded_as_the_template_reads_it() {
        assert_eq!(as_read("notes://%73ecret"), "notes://secret");
        assert_eq!(as_read("test://template/%34%32/data"), "test://template/42/data");
        assert_eq!(as_read("test://template/4%32/data"), "test://template/42/data");
        assert_eq!(as_read("a://%7e%2D%2e%5F"), "a://~-._");
        // Every escape, as the template decodes its variables.
        assert_eq!(as_read("a://x%2Fy%20z%C3%A9"), "a://x/y zé");
        assert_eq!(as_read("é://%41"), "é://A");
        // Broken escapes stay as they are; bytes that are not UTF-8 leave it as given.
        assert_eq!(as_read("a://%4"), "a://%4");
        assert_eq!(as_read("a://%zz%"), "a://%zz%");
        assert_eq!(as_read("a://%FF"), "a://%FF");
    }
}
