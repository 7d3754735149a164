//! What a legacy session does with one request, decided from its state
//! alone: session methods change the state or are answered at once, shared
//! methods become an admitted request for a request actor. The session actor
//! applies the [`SessionAction`].

use mcp_protocol::jsonrpc::Request;
use mcp_protocol::legacy::{LegacyRequest, SessionState};
use mcp_protocol::meta::{MetaKeys, RequestMeta};
use mcp_protocol::model::logging::LoggingLevel;
use mcp_protocol::{ErrorCode, ErrorData};
use serde_json::{json, Value};

use crate::pipeline::intake::Admitted;

/// How a legacy request is answered.
#[derive(Debug)]
pub(crate) enum Reply {
    /// Answered now.
    Now(Result<Value, ErrorData>),
    /// Runs in a request actor, in the session's era.
    Run(Box<Admitted>),
}

/// What the session must do for one request.
#[derive(Debug)]
pub(crate) enum SessionAction {
    /// Reply without changing anything (decided where the request arrived).
    Reply(Reply),
    /// Change the session's state (its actor does).
    Change(StateChange),
}

/// A change of a session's state, which its actor applies.
#[derive(Debug)]
pub(crate) enum StateChange {
    /// `logging/setLevel`.
    SetLevel(LoggingLevel),
    /// `resources/subscribe` (`true`) or `resources/unsubscribe` (`false`) of a URI.
    Subscribe(String, bool),
}

impl StateChange {
    /// Applies the change to `state`.
    pub(crate) fn apply(self, state: &mut SessionState) {
        match self {
            StateChange::SetLevel(level) => state.log_level = Some(level),
            StateChange::Subscribe(uri, true) => {
                state.subscriptions.insert(uri);
            }
            StateChange::Subscribe(uri, false) => {
                state.subscriptions.remove(&uri);
            }
        }
    }
}

/// Decides what a session in `state` does with `r`.
pub(crate) fn classify(state: &SessionState, r: Request) -> SessionAction {
    let profile = state.version.profile();
    // A `_meta` that cannot be read for its keys carries neither.
    let keys = MetaKeys::of(r.params.as_ref()).unwrap_or_default();
    let (progress_token, trace) = (keys.progress_token(), keys.trace());
    let now = |result| SessionAction::Reply(Reply::Now(result));
    match LegacyRequest::from_parts(&r.method, r.params.as_ref()) {
        Err(e) => now(Err(e.to_error_data(profile))),
        Ok(LegacyRequest::Initialize(_)) => {
            now(Err(ErrorData::new(ErrorCode::INVALID_REQUEST, "The session is already initialized")))
        }
        Ok(LegacyRequest::Ping) => now(Ok(json!({}))),
        Ok(LegacyRequest::SetLevel(level)) => SessionAction::Change(StateChange::SetLevel(level)),
        Ok(LegacyRequest::Subscribe(uri)) => SessionAction::Change(StateChange::Subscribe(uri, true)),
        Ok(LegacyRequest::Unsubscribe(uri)) => SessionAction::Change(StateChange::Subscribe(uri, false)),
        Ok(LegacyRequest::Shared(request)) => {
            // A request may narrow the session's capabilities for itself (a
            // gateway passing on its own caller's), never widen them.
            let declared = keys.client_capabilities.and_then(|raw| serde_json::from_str(raw.get()).ok());
            let meta = RequestMeta {
                version: state.version,
                client_info: Some(state.client_info.clone()),
                client_capabilities: match declared {
                    Some(d) => std::sync::Arc::new(state.client_capabilities.narrowed_to(&d)),
                    None => state.client_capabilities.clone(),
                },
                log_level: state.log_level,
                progress_token,
                trace,
            };
            SessionAction::Reply(Reply::Run(Box::new(Admitted {
                id: r.id,
                meta,
                request,
                facts: Default::default(),
                tool: None,
            })))
        }
        Ok(_) => now(Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {}", r.method)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::legacy::InitializeParams;
    use mcp_protocol::{ProtocolVersion, RequestId};

    fn state() -> SessionState {
        let params: InitializeParams = serde_json::from_value(json!({
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}
        }))
        .unwrap();
        SessionState::new(ProtocolVersion::V2025_11_25, &params)
    }

    fn req(method: &str, params: Value) -> Request {
        Request { id: RequestId::number(1), method: method.into(), params: params.as_object().cloned().map(Into::into) }
    }

    #[test]
    fn session_methods_and_shared_methods() {
        let s = state();
        assert!(matches!(classify(&s, req("ping", json!({}))), SessionAction::Reply(Reply::Now(Ok(_)))));
        assert!(matches!(
            classify(&s, req("logging/setLevel", json!({"level": "info"}))),
            SessionAction::Change(StateChange::SetLevel(_))
        ));
        assert!(matches!(
            classify(&s, req("resources/unsubscribe", json!({"uri": "x://a"}))),
            SessionAction::Change(StateChange::Subscribe(u, false)) if u == "x://a"
        ));
        match classify(&s, req("tools/list", json!({"_meta": {"progressToken": 7}}))) {
            SessionAction::Reply(Reply::Run(a)) => {
                assert_eq!(a.meta.version, ProtocolVersion::V2025_11_25);
                assert_eq!(a.meta.progress_token, Some(json!(7)));
            }
            other => panic!("{other:?}"),
        }
        let again = classify(&s, req("initialize", json!({})));
        // Params that do not parse as initialize's: invalid params.
        assert!(matches!(again, SessionAction::Reply(Reply::Now(Err(e))) if e.code == ErrorCode::INVALID_PARAMS));
        assert!(matches!(
            classify(&s, req("server/discover", json!({}))),
            SessionAction::Reply(Reply::Now(Err(e))) if e.code == ErrorCode::METHOD_NOT_FOUND
        ));
    }
}
