//! What a list shows a caller under a policy: the items the policy permits
//! the caller to call, read or get (one decision for a list and a call).
//! In shadow mode, and without a policy, lists are not filtered.

use std::sync::Arc;

use crate::catalog::context::RequestContext;
use crate::catalog::{Prompt, Resource, ResourceTemplate, Tool};
use crate::config::PolicyMode;
use crate::pipeline::subject::{other_item, template_item, tool_item};
use crate::policy::{Action, Policy, Principal};

use super::McpService;

/// A list's policy check for one caller, prepared once per list.
pub(super) struct Gate {
    policy: Arc<Policy>,
    who: Principal,
}

impl McpService {
    /// The check a list's items pass (`None`: every item passes).
    pub(super) fn gate(&self, ctx: &RequestContext) -> Option<Gate> {
        let policy = self.policy().filter(|p| p.mode() == PolicyMode::Enforce)?;
        let who = policy.principal(ctx.auth());
        Some(Gate { policy, who })
    }
}

impl Gate {
    /// Whether the caller may call `t`.
    pub(super) fn tool(&self, t: &Tool) -> bool {
        self.policy.permits(&self.who, &tool_item(t))
    }

    /// Whether the caller may read `r`.
    pub(super) fn resource(&self, r: &Resource) -> bool {
        self.policy.permits(&self.who, &other_item(Action::ReadResource, &r.def.uri, r.upstream()))
    }

    /// Whether the caller may read through `t` (decided for its URI
    /// template, as each read through it is too).
    pub(super) fn template(&self, t: &ResourceTemplate) -> bool {
        self.policy.permits(&self.who, &template_item(t))
    }

    /// Whether the caller may subscribe to the event type `name`.
    pub(super) fn event(&self, name: &str) -> bool {
        self.policy.permits(&self.who, &other_item(Action::SubscribeEvents, name, None))
    }

    /// Whether the caller may get `p`.
    pub(super) fn prompt(&self, p: &Prompt) -> bool {
        self.policy.permits(&self.who, &other_item(Action::GetPrompt, &p.def.name, p.upstream()))
    }
}
