//! The Cedar side of [`super::Policy`]: the policy set validated against
//! the schema, and the entities of one decision.

use std::collections::{HashMap, HashSet};
use std::str::FromStr;

use cedar_policy::{
    Authorizer, Context, Decision, Entities, Entity, EntityId, EntityTypeName, EntityUid, PolicySet, Request,
    RestrictedExpression, Schema, ValidationMode, Validator,
};

use super::{Action, Item, Who};

/// Policies, validated, and what every decision reuses.
pub(super) struct Cedar {
    policies: PolicySet,
    authorizer: Authorizer,
    /// The action ids, made once.
    actions: HashMap<Action, EntityUid>,
    caller: EntityTypeName,
    tool: EntityTypeName,
    resource: EntityTypeName,
    prompt: EntityTypeName,
    event: EntityTypeName,
}

/// The caller's entity and id.
pub(super) struct Principal {
    uid: EntityUid,
    entity: Entity,
}

fn type_name(name: &str) -> EntityTypeName {
    EntityTypeName::from_str(name).expect("a valid entity type name")
}

impl Cedar {
    /// Parses `policies` and validates them against `schema` (strictly: an
    /// unknown attribute, entity type or action is an error).
    pub(super) fn new(policies: &str, schema: &str) -> Result<Cedar, String> {
        let (schema, _warnings) = Schema::from_cedarschema_str(schema).map_err(|e| format!("the schema: {e}"))?;
        let policies = PolicySet::from_str(policies).map_err(|e| format!("not Cedar: {e}"))?;
        let validated = Validator::new(schema).validate(&policies, ValidationMode::Strict);
        if !validated.validation_passed() {
            let errors: Vec<String> = validated.validation_errors().map(|e| e.to_string()).collect();
            return Err(format!("does not match the schema: {}", errors.join("; ")));
        }
        let action = |a: Action| {
            let uid = EntityUid::from_type_name_and_id(type_name("Action"), EntityId::new(a.as_str()));
            (a, uid)
        };
        Ok(Cedar {
            policies,
            authorizer: Authorizer::new(),
            actions: Action::ALL.into_iter().map(action).collect(),
            caller: type_name("Caller"),
            tool: type_name("Tool"),
            resource: type_name("Resource"),
            prompt: type_name("Prompt"),
            event: type_name("Event"),
        })
    }

    /// `Caller::"<key>"` with its attributes.
    pub(super) fn principal(&self, who: &Who) -> Principal {
        let string = |s: &str| RestrictedExpression::new_string(s.to_owned());
        let scopes = who.scopes.iter().map(|s| RestrictedExpression::new_string(s.clone()));
        let attrs = [
            ("issuer", string(&who.issuer)),
            ("subject", string(&who.subject)),
            ("client_id", string(&who.client_id)),
            ("scopes", RestrictedExpression::new_set(scopes)),
            ("anonymous", RestrictedExpression::new_bool(who.anonymous)),
        ];
        let uid = EntityUid::from_type_name_and_id(self.caller.clone(), EntityId::new(&who.key));
        let attrs = attrs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        let entity = Entity::new(uid.clone(), attrs, HashSet::new()).expect("literal attributes evaluate");
        Principal { uid, entity }
    }

    /// The item's entity: a URI read through a template is a member of the
    /// template's entity.
    fn item(&self, item: &Item<'_>) -> Entity {
        let kind = match item.action {
            Action::CallTool => &self.tool,
            Action::ReadResource => &self.resource,
            Action::GetPrompt => &self.prompt,
            Action::SubscribeEvents => &self.event,
        };
        let uid = EntityUid::from_type_name_and_id(kind.clone(), EntityId::new(item.name));
        let mut attrs =
            HashMap::from([("upstream".to_owned(), RestrictedExpression::new_string(item.upstream.to_owned()))]);
        let mut parents = HashSet::new();
        match item.action {
            Action::CallTool => {
                attrs.insert("read_only".to_owned(), RestrictedExpression::new_bool(item.read_only));
                attrs.insert("destructive".to_owned(), RestrictedExpression::new_bool(item.destructive));
            }
            Action::ReadResource => {
                attrs.insert("template".to_owned(), RestrictedExpression::new_string(item.template.to_owned()));
                if let Some(template) = item.through() {
                    parents.insert(EntityUid::from_type_name_and_id(kind.clone(), EntityId::new(template.name)));
                }
            }
            Action::GetPrompt | Action::SubscribeEvents => {}
        }
        Entity::new(uid, attrs, parents).expect("literal attributes evaluate")
    }

    /// Whether `who` may do `item.action` to `item`.
    pub(super) fn permits(&self, who: &Principal, item: &Item<'_>) -> bool {
        let entity = self.item(item);
        let (Some(action), resource) = (self.actions.get(&item.action), entity.uid()) else { return false };
        let Ok(request) = Request::new(who.uid.clone(), action.clone(), resource, Context::empty(), None) else {
            return false;
        };
        let Ok(entities) = Entities::from_entities([who.entity.clone(), entity], None) else { return false };
        self.authorizer.is_authorized(&request, &self.policies, &entities).decision() == Decision::Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::identity::Identity;

    fn who(id: Option<&Identity>) -> Who {
        Who::of(id)
    }

    const SCHEMA: &str = super::super::SCHEMA;

    fn tool<'a>(name: &'a str, upstream: &'a str, read_only: bool) -> Item<'a> {
        Item { action: Action::CallTool, name, upstream, read_only, destructive: !read_only, template: "" }
    }

    #[test]
    fn decisions_follow_the_policies() {
        let cedar = Cedar::new(
            r#"
            permit(principal, action == Action::"tools/call", resource) when { resource.read_only };
            permit(principal, action, resource) when { principal.scopes.contains("ops") };
            forbid(principal, action, resource) when { resource.upstream == "scratch" && principal.anonymous };
            permit(principal == Caller::"anonymous", action == Action::"prompts/get", resource == Prompt::"hello");
            "#,
            SCHEMA,
        )
        .unwrap();
        let anonymous = cedar.principal(&who(None));
        let ops = cedar.principal(&who(Some(&Identity::new("ann").with_scopes(["ops"]).with_issuer("https://id"))));
        let reader = cedar.principal(&who(Some(&Identity::new("bob"))));
        assert!(cedar.permits(&anonymous, &tool("ls", "", true)));
        assert!(!cedar.permits(&anonymous, &tool("rm", "", false)));
        assert!(cedar.permits(&ops, &tool("rm", "", false)));
        assert!(!cedar.permits(&reader, &tool("rm", "", false)));
        assert!(!cedar.permits(&anonymous, &tool("ls", "scratch", true)), "forbid wins");
        assert!(cedar.permits(&ops, &tool("ls", "scratch", true)));
        let prompt = |name| Item {
            action: Action::GetPrompt,
            name,
            upstream: "",
            read_only: false,
            destructive: false,
            template: "",
        };
        assert!(cedar.permits(&anonymous, &prompt("hello")) && !cedar.permits(&anonymous, &prompt("other")));
        let read = Item {
            action: Action::ReadResource,
            name: "file:///a",
            upstream: "",
            read_only: false,
            destructive: false,
            template: "",
        };
        assert!(!cedar.permits(&reader, &read) && cedar.permits(&ops, &read));
    }

    #[test]
    fn the_entities_match_the_schema() {
        let (schema, _) = Schema::from_cedarschema_str(SCHEMA).unwrap();
        let cedar = Cedar::new("", SCHEMA).unwrap();
        let who = cedar.principal(&who(Some(&Identity::new("ann").with_scopes(["a"]))));
        let through = Item {
            action: Action::ReadResource,
            name: "x://1",
            upstream: "u",
            read_only: false,
            destructive: false,
            template: "x://{n}",
        };
        let items = Action::ALL.map(|action| Item {
            action,
            name: "x",
            upstream: "u",
            read_only: true,
            destructive: false,
            template: "",
        });
        for item in items.into_iter().chain([through]) {
            let action = item.action;
            let entities = Entities::from_entities([who.entity.clone(), cedar.item(&item)], Some(&schema));
            assert!(entities.is_ok(), "{action:?}: {:?}", entities.err());
            let request = Request::new(
                who.uid.clone(),
                cedar.actions[&action].clone(),
                cedar.item(&item).uid(),
                Context::empty(),
                Some(&schema),
            );
            assert!(request.is_ok(), "{action:?}: {:?}", request.err());
        }
    }

    #[test]
    fn a_policy_naming_what_the_schema_lacks_is_refused() {
        let e = Cedar::new(r#"permit(principal, action, resource) when { resource.owner == "me" };"#, SCHEMA)
            .err()
            .unwrap();
        assert!(e.contains("schema"), "{e}");
        let e = Cedar::new(r#"permit(principal, action == Action::"tools/delete", resource);"#, SCHEMA).err().unwrap();
        assert!(e.contains("schema"), "{e}");
        assert!(Cedar::new("permit(", SCHEMA).err().unwrap().contains("not Cedar"));
    }
}
