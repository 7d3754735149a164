//! Policies (`[policy]`): which calls each caller may make, written in
//! [Cedar](https://www.cedarpolicy.com) (cargo feature `policy`). One
//! decision serves a list and a call: an item is listed to a caller exactly
//! when the caller may call, read or get it, in both eras and through the
//! gateway, and a denied call is answered as for an unknown item (so a
//! policy cannot be probed). With `mode = "shadow"` nothing is refused:
//! each call the policy would deny is logged at WARN and counted.
//!
//! The principal is `Caller::"<identity key>"` with `issuer`, `subject`,
//! `client_id` (`""` when absent), `scopes` and `anonymous`; with
//! authorization off every caller is `Caller::"anonymous"`. The actions are
//! `Action::"tools/call"`, `Action::"resources/read"`,
//! `Action::"prompts/get"` and `Action::"events/subscribe"` (any
//! subscription to an event type: a poll, a stream); the resources
//! `Tool::"<name as served>"` (with `upstream`, `read_only`,
//! `destructive`), `Resource::"<uri>"` (with `upstream` and `template`),
//! `Prompt::"<name>"` and `Event::"<event type>"` (with `upstream`).
//! [`SCHEMA`] spells them out (`config/policy.cedarschema`); policies are
//! validated against it at start.
//!
//! A resource template is `Resource::"<URI template>"`: its listing is
//! decided for it. A read that resolves through a template (no listed
//! resource has the URI) is decided twice, and let through only when both
//! permit it: as the template (the decision its listing gets), and as the
//! URI, whose entity is a member of the template's (`resource in
//! Resource::"notes://{title}"` holds for both) and whose `template` names
//! it (`""` for a URI read on its own; a template's own is itself). So a
//! `forbid` on a template hides it and refuses every read through it, and
//! nothing is read through a template a caller is not shown.
//!
//! ```text
//! // Everyone may use read-only tools; only the ops team the rest.
//! permit(principal, action == Action::"tools/call", resource) when { resource.read_only };
//! permit(principal, action, resource) when { principal.scopes.contains("ops") };
//! forbid(principal, action == Action::"tools/call", resource) when { resource.upstream == "scratch" && principal.anonymous };
//! // Every note may be read, but one.
//! permit(principal, action == Action::"resources/read", resource in Resource::"notes://{title}");
//! forbid(principal, action == Action::"resources/read", resource == Resource::"notes://secret");
//! ```

#[cfg(feature = "policy")]
mod cedar;

use crate::config::{PolicyConfig, PolicyMode};
use crate::facts::identity::Identity;

/// The built-in schema, as `config/policy.cedarschema` ships it (a test
/// keeps the two equal).
pub const SCHEMA: &str = include_str!("schema.cedarschema");

/// What a policy decides on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Action {
    /// `tools/call` of a `Tool`.
    CallTool,
    /// `resources/read` of a `Resource`.
    ReadResource,
    /// `prompts/get` of a `Prompt`.
    GetPrompt,
    /// Any subscription to an `Event` type (`events/poll`,
    /// `events/stream`); `events/list` shows a type exactly when it is
    /// permitted.
    SubscribeEvents,
}

impl Action {
    /// Every action, in the order the schema lists them.
    pub const ALL: [Action; 4] = [Action::CallTool, Action::ReadResource, Action::GetPrompt, Action::SubscribeEvents];
}

impl Action {
    /// The action's id (`Action::"<this>"`): the method.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::CallTool => "tools/call",
            Action::ReadResource => "resources/read",
            Action::GetPrompt => "prompts/get",
            Action::SubscribeEvents => "events/subscribe",
        }
    }
}

/// The item of a decision, as the policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item<'a> {
    /// What is done to it.
    pub action: Action,
    /// Its name as served (a tool or prompt name, a resource URI).
    pub name: &'a str,
    /// The upstream serving it (`""`: served here).
    pub upstream: &'a str,
    /// A tool's `readOnlyHint` (false when absent, and for other items).
    pub read_only: bool,
    /// A tool's `destructiveHint` (false when absent, and for other items).
    pub destructive: bool,
    /// For a read: the URI template it resolves through, or the template's
    /// own for a template (`""`: a URI read on its own, and other items).
    pub template: &'a str,
}

impl<'a> Item<'a> {
    /// The template a read resolves through, as an item of its own (`None`:
    /// not a read through a template, or the template itself).
    pub fn through(&self) -> Option<Item<'a>> {
        let through = self.action == Action::ReadResource && !self.template.is_empty() && self.template != self.name;
        through.then_some(Item { name: self.template, ..*self })
    }
}

/// A loaded and validated policy set.
pub struct Policy {
    mode: PolicyMode,
    #[cfg(feature = "policy")]
    inner: cedar::Cedar,
    /// Decisions made, by caller and item: a decision depends on nothing
    /// else (the entities are built from these alone and the context is
    /// empty), and the policies do not change while loaded. Bounded by
    /// [`MAX_DECISIONS`]; emptied when full.
    #[cfg(feature = "policy")]
    decisions: std::sync::Mutex<foldhash::HashMap<String, bool>>,
    /// SHA-256 of the policies and the schema they were loaded with: a
    /// reload that loads the same keeps what lists show.
    #[cfg(feature = "policy")]
    source: String,
    #[cfg(not(feature = "policy"))]
    never: std::convert::Infallible,
}

/// How many decisions are remembered at most.
pub const MAX_DECISIONS: usize = 10_000;

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy").field("mode", &self.mode).finish_non_exhaustive()
    }
}

/// A caller, prepared once for the decisions of one request or one list:
/// its attributes, and its Cedar entity once a decision needs it.
pub struct Principal {
    #[cfg(feature = "policy")]
    who: Who,
    /// The caller's part of a decision's key.
    #[cfg(feature = "policy")]
    key: String,
    #[cfg(feature = "policy")]
    entity: std::sync::OnceLock<cedar::Principal>,
    #[cfg(not(feature = "policy"))]
    _never: std::convert::Infallible,
}

/// What the policy knows of a caller.
#[cfg(feature = "policy")]
pub(crate) struct Who {
    pub(crate) key: String,
    pub(crate) issuer: String,
    pub(crate) subject: String,
    pub(crate) client_id: String,
    pub(crate) scopes: Vec<String>,
    pub(crate) anonymous: bool,
}

impl Policy {
    /// Loads and validates the policies `config` names (`None` without a
    /// file); an error names the file and what is wrong with it.
    pub fn load(config: &PolicyConfig) -> Result<Option<Policy>, String> {
        if !config.enabled() {
            return Ok(None);
        }
        #[cfg(feature = "policy")]
        {
            let read = |path: &str| std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"));
            let policies = read(&config.file)?;
            let schema = match config.schema.as_str() {
                "" => SCHEMA.to_owned(),
                path => read(path)?,
            };
            let inner = cedar::Cedar::new(&policies, &schema).map_err(|e| format!("{}: {e}", config.file))?;
            let source = mcp_protocol::digest::sha256_hex(format!("{policies}\0{schema}").as_bytes());
            Ok(Some(Policy { mode: config.mode, inner, decisions: Default::default(), source }))
        }
        #[cfg(not(feature = "policy"))]
        Err(crate::config::needs_feature("policy.file", "policy").0)
    }

    /// Policies from text, validated against `schema` (for embedders and tests).
    #[cfg(feature = "policy")]
    #[cfg_attr(docsrs, doc(cfg(feature = "policy")))]
    pub fn from_text(policies: &str, schema: &str, mode: PolicyMode) -> Result<Policy, String> {
        let source = mcp_protocol::digest::sha256_hex(format!("{policies}\0{schema}").as_bytes());
        Ok(Policy { mode, inner: cedar::Cedar::new(policies, schema)?, decisions: Default::default(), source })
    }

    /// Whether `other` decides as this does: the same policies, schema and mode.
    pub fn same_as(&self, other: &Policy) -> bool {
        #[cfg(feature = "policy")]
        {
            self.mode == other.mode && self.source == other.source
        }
        #[cfg(not(feature = "policy"))]
        match (self.never, other.never) {}
    }

    /// `enforce` or `shadow`.
    pub fn mode(&self) -> PolicyMode {
        self.mode
    }

    /// The principal of a caller (`None`: anonymous).
    pub fn principal(&self, caller: Option<&Identity>) -> Principal {
        #[cfg(feature = "policy")]
        {
            let who = Who::of(caller);
            // Every attribute, each field's length first: no two callers share a key.
            let mut key = String::with_capacity(64);
            for part in [&who.key, &who.issuer, &who.subject, &who.client_id].into_iter().chain(&who.scopes) {
                push_sized(&mut key, part);
            }
            key.push(if who.anonymous { 'a' } else { 'n' });
            Principal { who, key, entity: std::sync::OnceLock::new() }
        }
        #[cfg(not(feature = "policy"))]
        {
            let _ = caller;
            match self.never {}
        }
    }

    /// Whether the policies permit `who` to do `item.action` to `item`; a
    /// read through a template only when they permit it as the template too.
    pub fn permits(&self, who: &Principal, item: &Item<'_>) -> bool {
        #[cfg(feature = "policy")]
        {
            item.through().is_none_or(|template| self.decide(who, &template)) && self.decide(who, item)
        }
        #[cfg(not(feature = "policy"))]
        {
            let _ = (who, item);
            match self.never {}
        }
    }

    /// One decision, remembered.
    #[cfg(feature = "policy")]
    fn decide(&self, who: &Principal, item: &Item<'_>) -> bool {
        let size = item.name.len() + item.upstream.len() + item.template.len();
        let mut key = String::with_capacity(who.key.len() + size + 40);
        key.push_str(&who.key);
        key.push_str(item.action.as_str());
        push_sized(&mut key, item.name);
        push_sized(&mut key, item.upstream);
        push_sized(&mut key, item.template);
        key.push(if item.read_only { 'r' } else { '-' });
        key.push(if item.destructive { 'd' } else { '-' });
        let known = self.decisions.lock().unwrap_or_else(|p| p.into_inner()).get(&key).copied();
        if let Some(permitted) = known {
            return permitted;
        }
        let principal = who.entity.get_or_init(|| self.inner.principal(&who.who));
        let permitted = self.inner.permits(principal, item);
        let mut decisions = self.decisions.lock().unwrap_or_else(|p| p.into_inner());
        if decisions.len() >= MAX_DECISIONS {
            decisions.clear();
        }
        decisions.insert(key, permitted);
        permitted
    }
}

#[cfg(feature = "policy")]
impl Who {
    /// What the policy knows of `caller` (`None`: `Caller::"anonymous"`).
    pub(crate) fn of(caller: Option<&Identity>) -> Who {
        match caller {
            None => Who {
                key: Identity::key_of(None),
                issuer: String::new(),
                subject: String::new(),
                client_id: String::new(),
                scopes: Vec::new(),
                anonymous: true,
            },
            Some(id) => Who {
                key: id.key(),
                issuer: id.issuer.clone().unwrap_or_default(),
                subject: id.subject.clone(),
                client_id: id.client_id.clone().unwrap_or_default(),
                scopes: id.scopes.clone(),
                anonymous: false,
            },
        }
    }
}

/// `part` after its length, so that parts cannot run into each other.
#[cfg(feature = "policy")]
fn push_sized(key: &mut String, part: &str) {
    use std::fmt::Write;
    let _ = write!(key, "{}:", part.len());
    key.push_str(part);
}

#[cfg(test)]
mod tests {
    #[cfg(feature = "policy")]
    #[test]
    fn decisions_are_remembered_per_caller_and_item_and_bounded() {
        use super::*;
        let text =
            r#"permit(principal, action == Action::"tools/call", resource) when { principal.scopes.contains("a") };"#;
        let policy = Policy::from_text(text, SCHEMA, PolicyMode::Enforce).unwrap();
        let item = Item {
            action: Action::CallTool,
            name: "t",
            upstream: "",
            read_only: false,
            destructive: false,
            template: "",
        };
        let with = policy.principal(Some(&Identity::new("x").with_scopes(["a"])));
        let without = policy.principal(Some(&Identity::new("x")));
        for _ in 0..2 {
            assert!(policy.permits(&with, &item), "the same caller and item, the same decision");
            assert!(!policy.permits(&without, &item), "another scope set is another caller");
        }
        for i in 0..MAX_DECISIONS + 10 {
            let name = format!("t{i}");
            assert!(policy.permits(&with, &Item { name: &name, ..item }));
        }
        assert!(policy.decisions.lock().unwrap().len() <= MAX_DECISIONS);
    }

    #[cfg(feature = "policy")]
    #[test]
    fn a_read_through_a_template_is_permitted_only_as_the_template_too() {
        use super::*;
        let read = |name, template| Item {
            action: Action::ReadResource,
            name,
            upstream: "",
            read_only: false,
            destructive: false,
            template,
        };
        let (template, public, secret) = ("notes://{title}", "notes://public", "notes://secret");
        let forbid_template = r#"
            permit(principal, action, resource);
            forbid(principal, action == Action::"resources/read", resource == Resource::"notes://{title}");
        "#;
        let policy = Policy::from_text(forbid_template, SCHEMA, PolicyMode::Enforce).unwrap();
        let who = policy.principal(None);
        assert!(!policy.permits(&who, &read(template, template)), "the template is not listed");
        assert!(!policy.permits(&who, &read(public, template)), "nor read through");
        assert!(policy.permits(&who, &read(public, "")), "the same URI as a resource of its own is another item");
        let all_but_one = r#"
            permit(principal, action == Action::"resources/read", resource in Resource::"notes://{title}");
            forbid(principal, action == Action::"resources/read", resource == Resource::"notes://secret");
        "#;
        let policy = Policy::from_text(all_but_one, SCHEMA, PolicyMode::Enforce).unwrap();
        let who = policy.principal(None);
        assert!(policy.permits(&who, &read(template, template)) && policy.permits(&who, &read(public, template)));
        assert!(!policy.permits(&who, &read(secret, template)), "a forbid on one URI refuses just that URI");
        assert!(!policy.permits(&who, &read("other://x", "other://{x}")), "another template is not a member");
        // A permit on the URI alone does not open a template the caller is not shown.
        let one_uri = r#"
            permit(principal, action == Action::"resources/read", resource == Resource::"notes://public");
        "#;
        let policy = Policy::from_text(one_uri, SCHEMA, PolicyMode::Enforce).unwrap();
        let who = policy.principal(None);
        assert!(!policy.permits(&who, &read(public, template)) && policy.permits(&who, &read(public, "")));
        let by_attribute = r#"
            permit(principal, action, resource is Resource) when { resource.template == "notes://{title}" };
        "#;
        let policy = Policy::from_text(by_attribute, SCHEMA, PolicyMode::Enforce).unwrap();
        let who = policy.principal(None);
        assert!(policy.permits(&who, &read(template, template)) && policy.permits(&who, &read(public, template)));
        assert!(!policy.permits(&who, &read(public, "")));
    }

    #[test]
    fn the_built_in_schema_is_the_shipped_file() {
        let shipped = include_str!("../../../config/policy.cedarschema");
        assert_eq!(super::SCHEMA, shipped, "config/policy.cedarschema and actors/src/policy/schema.cedarschema differ");
    }
}
