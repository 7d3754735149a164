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

/// A call's item: a tool, a resource or a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subject {
    pub(crate) action: Action,
    /// The name as the caller gave it; a URI with its percent-encoded
    /// unreserved characters decoded ([`normalized_uri`]).
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
                let (served_by, template) = match catalog.resource(&p.uri) {
                    Some(r) => (Some(r.upstream().map(str::to_owned)), String::new()),
                    None => match catalog.match_template(&p.uri) {
                        Some((t, _)) => (Some(t.upstream().map(str::to_owned)), t.uri_template().to_owned()),
                        None => (None, String::new()),
                    },
                };
                let known = served_by.is_some();
                Subject {
                    action: Action::ReadResource,
                    name: normalized_uri(&p.uri),
                    upstream: upstream(served_by.flatten().as_deref()),
                    known,
                    read_only: false,
                    destructive: false,
                    template,
                }
            }
            _ => return None,
        })
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

/// `uri` with each percent-encoded unreserved character (`A-Z a-z 0-9 - .
/// _ ~`) decoded, as RFC 3986 (6.2.2.2) says is the same URI: the policy
/// decides on this form, so `notes://%73ecret`, which a template reads as
/// `notes://secret`, meets a rule on `notes://secret`. Other escapes are
/// kept as they are.
pub(crate) fn normalized_uri(uri: &str) -> String {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let decoded = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok())
            .filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
        match decoded {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    // Only ASCII bytes were put in place of escapes: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| uri.to_owned())
}

#[cfg(test)]
mod tests {
    use super::normalized_uri;

    #[test]
    fn escaped_unreserved_characters_are_decoded_and_nothing_else() {
        assert_eq!(normalized_uri("notes://%73ecret"), "notes://secret");
        assert_eq!(normalized_uri("test://template/%34%32/data"), "test://template/42/data");
        assert_eq!(normalized_uri("test://template/4%32/data"), "test://template/42/data");
        assert_eq!(normalized_uri("a://%7e%2D%2e%5F"), "a://~-._");
        // Reserved, non-ASCII and broken escapes stay as they are.
        assert_eq!(normalized_uri("a://x%2Fy%20z%C3%A9"), "a://x%2Fy%20z%C3%A9");
        assert_eq!(normalized_uri("a://%4"), "a://%4");
        assert_eq!(normalized_uri("a://%zz%"), "a://%zz%");
        assert_eq!(normalized_uri("é://%41"), "é://A");
    }
}
