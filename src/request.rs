//! [`ClientRequest`]: every client request parsed once, at the edge, into one
//! variant per method. An unknown or removed method is a value
//! ([`ClientRequest::from_parts`] returns `MethodNotFound`), never a panic path.

use serde::de::{DeserializeOwned, DeserializeSeed, Error as _};
use serde::Deserializer;
use serde_json::Value;

use crate::error::ProtocolError;
use crate::meta::MetaKeys;
use crate::params_split::split;
use crate::raw_object::RawObject;

/// The one list of this revision's client requests: for each, its variant
/// of [`ClientRequest`] with its params type, the name of its constant in
/// [`method`], its wire name, and — for a request about one item — the
/// item's kind and the params field naming it (the Rust field, then the JSON
/// member). Everything per method is generated from it: the constants, the
/// enum, [`ClientRequest::from_parts`], the one-pass reading of params,
/// [`ClientRequest::method`], [`ClientRequest::item`] (so `Mcp-Name` and the
/// scopes of the item) and [`item_in`]; the server's dispatch is generated
/// from it too (`client_requests!(callback)` hands the list to a macro of
/// the caller's). A new method is one line here and its handler.
#[macro_export]
macro_rules! client_requests {
    ($then:ident) => {
        $then! {
            /// `server/discover`.
            Discover($crate::request::NoParams) = DISCOVER "server/discover", discover;
            /// `tools/list`.
            ListTools($crate::request::ListParams) = TOOLS_LIST "tools/list", list_tools;
            /// `tools/call`.
            CallTool($crate::model::tools::CallToolParams) = TOOLS_CALL "tools/call", call_tool => Tool(name "name");
            /// `resources/list`.
            ListResources($crate::request::ListParams) = RESOURCES_LIST "resources/list", list_resources;
            /// `resources/templates/list`.
            ListResourceTemplates($crate::request::ListParams) =
                RESOURCES_TEMPLATES_LIST "resources/templates/list", list_templates;
            /// `resources/read`.
            ReadResource($crate::model::resources::ReadResourceParams) =
                RESOURCES_READ "resources/read", read_resource => Resource(uri "uri");
            /// `prompts/list`.
            ListPrompts($crate::request::ListParams) = PROMPTS_LIST "prompts/list", list_prompts;
            /// `prompts/get`.
            GetPrompt($crate::model::prompts::GetPromptParams) =
                PROMPTS_GET "prompts/get", get_prompt => Prompt(name "name");
            /// `completion/complete`.
            Complete($crate::model::completion::CompleteParams) =
                COMPLETION_COMPLETE "completion/complete", complete;
            /// `resources/directory/read` (the Skills extension): a directory's children.
            ReadDirectory($crate::skills::ReadDirectoryParams) =
                RESOURCES_DIRECTORY_READ "resources/directory/read", read_directory;
            /// `skills/list` (the Skills extension).
            ListSkills($crate::request::ListParams) = SKILLS_LIST "skills/list", list_skills;
            /// `skills/get` (the Skills extension).
            GetSkill($crate::skills::GetSkillParams) = SKILLS_GET "skills/get", get_skill;
            /// `events/list` (the Events extension).
            ListEvents($crate::request::ListParams) = EVENTS_LIST "events/list", list_events;
            /// `events/poll` (the Events extension): one subscription's occurrences after a cursor.
            PollEvents($crate::events::PollParams) = EVENTS_POLL "events/poll", poll_events;
            /// `events/stream` (the Events extension): one subscription's occurrences pushed on the request's own stream.
            StreamEvents($crate::events::StreamParams) = EVENTS_STREAM "events/stream", stream_events;
            /// `events/subscribe` (the Events extension): one subscription delivered to a webhook.
            SubscribeEvents($crate::events::webhook::SubscribeParams) =
                EVENTS_SUBSCRIBE "events/subscribe", subscribe_events;
            /// `events/unsubscribe` (the Events extension): ends a webhook subscription.
            UnsubscribeEvents($crate::events::webhook::UnsubscribeParams) =
                EVENTS_UNSUBSCRIBE "events/unsubscribe", unsubscribe_events;
            /// `subscriptions/listen`: opens a long-lived notification stream.
            Listen($crate::subscription::ListenParams) = SUBSCRIPTIONS_LISTEN "subscriptions/listen", listen;
            /// `tasks/get` (the Tasks extension).
            GetTask($crate::tasks::TaskIdParams) = TASKS_GET "tasks/get", get_task => Task(task_id "taskId");
            /// `tasks/update` (the Tasks extension).
            UpdateTask($crate::tasks::UpdateTaskParams) =
                TASKS_UPDATE "tasks/update", update_task => Task(task_id "taskId");
            /// `tasks/cancel` (the Tasks extension).
            CancelTask($crate::tasks::TaskIdParams) =
                TASKS_CANCEL "tasks/cancel", cancel_task => Task(task_id "taskId");
        }
    };
}

/// What a request is about, when it is about one item: the kind of item,
/// for the scopes it needs and the attributes of its span; its name or URI
/// is the value `Mcp-Name` mirrors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ItemKind {
    /// A tool, by name.
    Tool,
    /// A prompt, by name.
    Prompt,
    /// A resource, by URI.
    Resource,
    /// A task, by id.
    Task,
}

/// Params of the list methods.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
pub struct ListParams {
    /// The cursor of the page to return.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// Params of a method that takes none (any members are ignored).
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
pub struct NoParams {}

/// Deserializes a method's params into `T` (absent params read as `{}`;
/// `_meta`, validated apart, is a member no params type declares, so it is
/// skipped); failures are -32602.
pub(crate) fn parse<T: DeserializeOwned>(method: &str, params: Option<&RawObject>) -> Result<T, ProtocolError> {
    let text = params.map_or("{}", RawObject::as_str);
    serde_json::from_str(text).map_err(|_| ProtocolError::InvalidParams(explain::<T>(method, text)))
}

/// Why `text` is not `T`'s params, naming the member at fault
/// (`tools/call: arguments must be a JSON object, got a string`) without
/// the parser's line and column.
fn explain<T: DeserializeOwned>(method: &str, text: &str) -> String {
    let mut de = serde_json::Deserializer::from_str(text);
    let Err(e) = serde_path_to_error::deserialize::<_, T>(&mut de) else {
        return format!("{method}: the params do not fit the method");
    };
    let path = e.path().to_string();
    let message = e.inner().to_string();
    let message = message.rfind(" at line ").map_or(message.as_str(), |i| &message[..i]).replace('`', "\"");
    match path.as_str() {
        "" | "." => format!("{method}: {message}"),
        _ if message.starts_with("must ") => format!("{method}: {path} {message}"),
        _ => format!("{method}: {path}: {message}"),
    }
}

/// Generates, from [`client_requests!`], everything this crate keeps per
/// method.
macro_rules! define_requests {
    ($(
        $(#[$doc:meta])*
        $variant:ident($params:ty) = $constant:ident $wire:literal, $handler:ident
            $(=> $kind:ident($field:ident $member:literal))?;
    )*) => {
        /// Method names of this revision.
        pub mod method {
            $(
                $(#[$doc])*
                pub const $constant: &str = $wire;
            )*
            /// `notifications/cancelled` (client → server, stdio).
            pub const CANCELLED: &str = "notifications/cancelled";
        }

        /// One client request of the stateless revision.
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum ClientRequest {
            $(
                $(#[$doc])*
                $variant($params),
            )*
        }

        impl ClientRequest {
            /// Every method of this revision, in the list's order.
            pub const METHODS: &'static [&'static str] = &[$($wire),*];

            /// Parses a method and its params (with `_meta` already validated).
            pub fn from_parts(method: &str, params: Option<&RawObject>) -> Result<Self, ProtocolError> {
                match method {
                    $( method::$constant => parse(method, params).map(ClientRequest::$variant), )*
                    other => Err(ProtocolError::MethodNotFound(other.to_owned())),
                }
            }

            /// The method name.
            pub fn method(&self) -> &'static str {
                match self {
                    $( ClientRequest::$variant(_) => method::$constant, )*
                }
            }

            /// The item the request is about, with its name or URI (the value
            /// the `Mcp-Name` header must mirror), for methods about one.
            pub fn item(&self) -> Option<(ItemKind, &str)> {
                match self {
                    $( ClientRequest::$variant(_p) => define_requests!(@item _p $(, $kind, $field)?), )*
                }
            }
        }

        /// The kind of item a request of `method` is about and the params
        /// member that names it (what `Mcp-Name` mirrors), for methods about
        /// one: what a server checks and a client sends.
        pub fn item_member(method: &str) -> Option<(ItemKind, &'static str)> {
            match method {
                $( $(method::$constant => Some((ItemKind::$kind, $member)),)? )*
                _ => None,
            }
        }

        /// The item a request is about, read from its raw params before they
        /// are parsed (a request refused later has none that matters).
        pub fn item_in(method: &str, params: Option<&RawObject>) -> Option<(ItemKind, String)> {
            let (kind, member) = item_member(method)?;
            let map = params?.to_map();
            map.get(member)?.as_str().map(|v| (kind, v.to_owned()))
        }

        impl<'de> DeserializeSeed<'de> for ParamsSeed<'_, '_, 'de> {
            type Value = ClientRequest;

            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ClientRequest, D::Error> {
                let keys = self.keys;
                match self.method {
                    $( method::$constant => split(d, keys).map(ClientRequest::$variant), )*
                    _ => Err(D::Error::custom("not a request of this revision")),
                }
            }
        }
    };
    (@item $p:ident) => { None };
    (@item $p:ident, $kind:ident, $field:ident) => { Some((ItemKind::$kind, $p.$field.as_str())) };
}

client_requests!(define_requests);

impl ClientRequest {
    /// [`ClientRequest::from_parts`] and the keys of `params._meta`, in one
    /// pass over `params` (the `_meta` member read aside). `None` when that pass
    /// fails: then [`MetaKeys::of`] and [`ClientRequest::from_parts`], which
    /// report each error in the order the specification sets.
    pub fn parse_with_meta<'a>(method: &str, params: &'a RawObject) -> Option<(Self, MetaKeys<'a>)> {
        let mut de = serde_json::Deserializer::from_str(params.as_str());
        let mut keys = MetaKeys::default();
        let request = ParamsSeed { method, keys: &mut keys }.deserialize(&mut de).ok()?;
        de.end().ok()?;
        Some((request, keys))
    }

    /// The value the `Mcp-Name` header must mirror, for methods that have one.
    pub fn name_for_header(&self) -> Option<&str> {
        self.item().map(|(_, name)| name)
    }
}

/// A client notification.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientNotification {
    /// `notifications/cancelled`: stop work on `request_id`.
    Cancelled {
        /// The id of the request to cancel.
        request_id: crate::RequestId,
        /// Why.
        reason: Option<String>,
    },
    /// Any other notification (ignored by a stateless server).
    Other(String),
}

impl ClientNotification {
    /// Parses a notification.
    pub fn from_parts(method: &str, params: Option<&RawObject>) -> Result<Self, ProtocolError> {
        if method != self::method::CANCELLED {
            return Ok(ClientNotification::Other(method.to_owned()));
        }
        let params =
            params.ok_or_else(|| ProtocolError::InvalidParams("notifications/cancelled needs params".into()))?.to_map();
        let id = params
            .get("requestId")
            .ok_or_else(|| ProtocolError::InvalidParams("notifications/cancelled needs requestId".into()))?;
        Ok(ClientNotification::Cancelled {
            request_id: crate::RequestId::from_value(id)?,
            reason: params.get("reason").and_then(Value::as_str).map(str::to_owned),
        })
    }
}

/// Reads a method's params into its [`ClientRequest`] and the keys of their
/// `_meta` into `keys`, in one pass: the table behind
/// [`ClientRequest::parse_with_meta`] and the one-pass reading of a whole
/// message ([`crate::decode`]). A method this revision does not define,
/// and anything the typed parse refuses, is an error, for the slow path.
pub(crate) struct ParamsSeed<'k, 'm, 'de> {
    /// The request's method.
    pub(crate) method: &'m str,
    /// Where the keys of `_meta` go.
    pub(crate) keys: &'k mut MetaKeys<'de>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The params object of `v`, for the life of the test.
    fn obj(v: Value) -> Option<&'static RawObject> {
        v.as_object().cloned().map(|m| &*Box::leak(Box::new(RawObject::from(m))))
    }

    #[test]
    fn parses_each_method() {
        let r = ClientRequest::from_parts("tools/call", obj(json!({"name": "t", "_meta": {}}))).unwrap();
        assert_eq!(r.method(), "tools/call");
        assert_eq!(r.name_for_header(), Some("t"));
        let r = ClientRequest::from_parts("resources/read", obj(json!({"uri": "test://x"}))).unwrap();
        assert_eq!(r.name_for_header(), Some("test://x"));
        let r = ClientRequest::from_parts("tools/list", None).unwrap();
        assert_eq!(r, ClientRequest::ListTools(ListParams::default()));
        let r = ClientRequest::from_parts(
            "completion/complete",
            obj(json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "v"}})),
        )
        .unwrap();
        assert_eq!(r.method(), "completion/complete");
        let r = ClientRequest::from_parts(
            "subscriptions/listen",
            obj(json!({"notifications": {"toolsListChanged": true}})),
        )
        .unwrap();
        assert!(matches!(r, ClientRequest::Listen(ref p) if p.notifications.tools_list_changed));
        assert!(ClientRequest::from_parts("subscriptions/listen", obj(json!({}))).is_err());
    }

    #[test]
    fn every_method_of_the_list_round_trips() {
        let params = obj(json!({"name": "n", "uri": "u://x", "taskId": "t", "notifications": {},
            "ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "v"},
            "inputResponses": {},
            "delivery": {"url": "https://h.example/", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}));
        for m in ClientRequest::METHODS {
            let r = ClientRequest::from_parts(m, params).unwrap_or_else(|e| panic!("{m}: {e}"));
            assert_eq!(r.method(), *m);
            let (one_pass, _) = ClientRequest::parse_with_meta(m, params.unwrap()).expect(m);
            assert_eq!(one_pass, r, "{m}");
            let raw = item_in(m, params);
            assert_eq!(raw.as_ref().map(|(k, v)| (*k, v.as_str())), r.item(), "{m}");
        }
        assert_eq!(item_in("tools/call", params), Some((ItemKind::Tool, "n".to_owned())));
        assert_eq!(item_in("resources/read", params), Some((ItemKind::Resource, "u://x".to_owned())));
        assert_eq!(item_in("tools/list", params), None);
    }

    #[test]
    fn removed_and_unknown_methods_are_not_found() {
        for m in ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "x/y"] {
            assert!(matches!(ClientRequest::from_parts(m, None), Err(ProtocolError::MethodNotFound(_))), "{m}");
        }
    }

    #[test]
    fn malformed_params_are_invalid() {
        assert!(matches!(
            ClientRequest::from_parts("tools/call", obj(json!({"name": 5}))),
            Err(ProtocolError::InvalidParams(_))
        ));
        assert!(matches!(ClientRequest::from_parts("tools/call", None), Err(ProtocolError::InvalidParams(_))));
        let said = |params: Value| match ClientRequest::from_parts("tools/call", obj(params)) {
            Err(ProtocolError::InvalidParams(m)) => m,
            other => panic!("invalid params, not {other:?}"),
        };
        assert_eq!(
            said(json!({"name": "t", "arguments": [1]})),
            "tools/call: arguments must be a JSON object, got an array"
        );
        assert_eq!(
            said(json!({"name": "t", "arguments": "x"})),
            "tools/call: arguments must be a JSON object, got a string"
        );
        assert_eq!(said(json!({"name": 5})), "tools/call: name: invalid type: integer \"5\", expected a string");
    }

    #[test]
    fn cancelled_notification() {
        let n = ClientNotification::from_parts("notifications/cancelled", obj(json!({"requestId": "abc"}))).unwrap();
        assert_eq!(n, ClientNotification::Cancelled { request_id: crate::RequestId::string("abc"), reason: None });
    }
}
