//! [`ClientRequest`]: every client request parsed once, at the edge, into one
//! variant per method. An unknown or removed method is a value
//! ([`ClientRequest::from_parts`] returns `MethodNotFound`), never a panic path.

use serde::de::{DeserializeOwned, DeserializeSeed, Error as _, IgnoredAny};
use serde::Deserializer;
use serde_json::Value;

use crate::error::ProtocolError;
use crate::meta::MetaKeys;
use crate::model::completion::CompleteParams;
use crate::model::prompts::GetPromptParams;
use crate::model::resources::ReadResourceParams;
use crate::model::tools::CallToolParams;
use crate::params_split::split;
use crate::raw_object::RawObject;
use crate::subscription::ListenParams;
use crate::tasks::{self, TaskIdParams, UpdateTaskParams};

/// Method names of this revision.
pub mod method {
    /// `server/discover`.
    pub const DISCOVER: &str = "server/discover";
    /// `tools/list`.
    pub const TOOLS_LIST: &str = "tools/list";
    /// `tools/call`.
    pub const TOOLS_CALL: &str = "tools/call";
    /// `resources/list`.
    pub const RESOURCES_LIST: &str = "resources/list";
    /// `resources/templates/list`.
    pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
    /// `resources/read`.
    pub const RESOURCES_READ: &str = "resources/read";
    /// `prompts/list`.
    pub const PROMPTS_LIST: &str = "prompts/list";
    /// `prompts/get`.
    pub const PROMPTS_GET: &str = "prompts/get";
    /// `completion/complete`.
    pub const COMPLETION_COMPLETE: &str = "completion/complete";
    /// `subscriptions/listen`.
    pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
    /// `notifications/cancelled` (client → server, stdio).
    pub const CANCELLED: &str = "notifications/cancelled";
}

/// Params of the list methods.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
pub struct ListParams {
    /// The cursor of the page to return.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// One client request of the stateless revision.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientRequest {
    /// `server/discover`.
    Discover,
    /// `tools/list`.
    ListTools(ListParams),
    /// `tools/call`.
    CallTool(CallToolParams),
    /// `resources/list`.
    ListResources(ListParams),
    /// `resources/templates/list`.
    ListResourceTemplates(ListParams),
    /// `resources/read`.
    ReadResource(ReadResourceParams),
    /// `prompts/list`.
    ListPrompts(ListParams),
    /// `prompts/get`.
    GetPrompt(GetPromptParams),
    /// `completion/complete`.
    Complete(CompleteParams),
    /// `subscriptions/listen`: opens a long-lived notification stream.
    Listen(ListenParams),
    /// `tasks/get` (the Tasks extension).
    GetTask(TaskIdParams),
    /// `tasks/update` (the Tasks extension).
    UpdateTask(UpdateTaskParams),
    /// `tasks/cancel` (the Tasks extension).
    CancelTask(TaskIdParams),
}

/// Deserializes a method's params into `T` (absent params read as `{}`;
/// `_meta`, validated apart, is a member no params type declares, so it is
/// skipped); failures are -32602.
pub(crate) fn parse<T: DeserializeOwned>(method: &str, params: Option<&RawObject>) -> Result<T, ProtocolError> {
    let text = params.map_or("{}", RawObject::as_str);
    serde_json::from_str(text).map_err(|e| ProtocolError::InvalidParams(format!("{method}: {e}")))
}

impl ClientRequest {
    /// Parses a method and its params (with `_meta` already validated).
    pub fn from_parts(method: &str, params: Option<&RawObject>) -> Result<Self, ProtocolError> {
        use self::method as m;
        Ok(match method {
            m::DISCOVER => ClientRequest::Discover,
            m::TOOLS_LIST => ClientRequest::ListTools(parse(method, params)?),
            m::TOOLS_CALL => ClientRequest::CallTool(parse(method, params)?),
            m::RESOURCES_LIST => ClientRequest::ListResources(parse(method, params)?),
            m::RESOURCES_TEMPLATES_LIST => ClientRequest::ListResourceTemplates(parse(method, params)?),
            m::RESOURCES_READ => ClientRequest::ReadResource(parse(method, params)?),
            m::PROMPTS_LIST => ClientRequest::ListPrompts(parse(method, params)?),
            m::PROMPTS_GET => ClientRequest::GetPrompt(parse(method, params)?),
            m::COMPLETION_COMPLETE => ClientRequest::Complete(parse(method, params)?),
            m::SUBSCRIPTIONS_LISTEN => ClientRequest::Listen(parse(method, params)?),
            tasks::GET => ClientRequest::GetTask(parse(method, params)?),
            tasks::UPDATE => ClientRequest::UpdateTask(parse(method, params)?),
            tasks::CANCEL => ClientRequest::CancelTask(parse(method, params)?),
            other => return Err(ProtocolError::MethodNotFound(other.to_owned())),
        })
    }

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

    /// The method name.
    pub fn method(&self) -> &'static str {
        use self::method as m;
        match self {
            ClientRequest::Discover => m::DISCOVER,
            ClientRequest::ListTools(_) => m::TOOLS_LIST,
            ClientRequest::CallTool(_) => m::TOOLS_CALL,
            ClientRequest::ListResources(_) => m::RESOURCES_LIST,
            ClientRequest::ListResourceTemplates(_) => m::RESOURCES_TEMPLATES_LIST,
            ClientRequest::ReadResource(_) => m::RESOURCES_READ,
            ClientRequest::ListPrompts(_) => m::PROMPTS_LIST,
            ClientRequest::GetPrompt(_) => m::PROMPTS_GET,
            ClientRequest::Complete(_) => m::COMPLETION_COMPLETE,
            ClientRequest::Listen(_) => m::SUBSCRIPTIONS_LISTEN,
            ClientRequest::GetTask(_) => tasks::GET,
            ClientRequest::UpdateTask(_) => tasks::UPDATE,
            ClientRequest::CancelTask(_) => tasks::CANCEL,
        }
    }

    /// The value the `Mcp-Name` header must mirror, for methods that have one.
    pub fn name_for_header(&self) -> Option<&str> {
        match self {
            ClientRequest::CallTool(p) => Some(&p.name),
            ClientRequest::GetPrompt(p) => Some(&p.name),
            ClientRequest::ReadResource(p) => Some(&p.uri),
            ClientRequest::GetTask(p) | ClientRequest::CancelTask(p) => Some(&p.task_id),
            ClientRequest::UpdateTask(p) => Some(&p.task_id),
            _ => None,
        }
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
/// message ([`crate::one_pass`]). A method this revision does not define,
/// and anything the typed parse refuses, is an error, for the slow path.
pub(crate) struct ParamsSeed<'k, 'm, 'de> {
    /// The request's method.
    pub(crate) method: &'m str,
    /// Where the keys of `_meta` go.
    pub(crate) keys: &'k mut MetaKeys<'de>,
}

impl<'de> DeserializeSeed<'de> for ParamsSeed<'_, '_, 'de> {
    type Value = ClientRequest;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ClientRequest, D::Error> {
        use self::method as m;
        let keys = self.keys;
        match self.method {
            m::DISCOVER => split::<IgnoredAny, D>(d, keys).map(|_| ClientRequest::Discover),
            m::TOOLS_LIST => split(d, keys).map(ClientRequest::ListTools),
            m::TOOLS_CALL => split(d, keys).map(ClientRequest::CallTool),
            m::RESOURCES_LIST => split(d, keys).map(ClientRequest::ListResources),
            m::RESOURCES_TEMPLATES_LIST => split(d, keys).map(ClientRequest::ListResourceTemplates),
            m::RESOURCES_READ => split(d, keys).map(ClientRequest::ReadResource),
            m::PROMPTS_LIST => split(d, keys).map(ClientRequest::ListPrompts),
            m::PROMPTS_GET => split(d, keys).map(ClientRequest::GetPrompt),
            m::COMPLETION_COMPLETE => split(d, keys).map(ClientRequest::Complete),
            m::SUBSCRIPTIONS_LISTEN => split(d, keys).map(ClientRequest::Listen),
            tasks::GET => split(d, keys).map(ClientRequest::GetTask),
            tasks::UPDATE => split(d, keys).map(ClientRequest::UpdateTask),
            tasks::CANCEL => split(d, keys).map(ClientRequest::CancelTask),
            _ => Err(D::Error::custom("not a request of this revision")),
        }
    }
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
        assert!(matches!(
            ClientRequest::from_parts("tools/call", obj(json!({"name": "t", "arguments": [1]}))),
            Err(ProtocolError::InvalidParams(_))
        ));
    }

    #[test]
    fn cancelled_notification() {
        let n = ClientNotification::from_parts("notifications/cancelled", obj(json!({"requestId": "abc"}))).unwrap();
        assert_eq!(n, ClientNotification::Cancelled { request_id: crate::RequestId::string("abc"), reason: None });
    }
}
