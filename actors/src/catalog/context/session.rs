//! [`SessionPeer`]: the client's end of a legacy (`initialize`) session, as
//! a request's context asks it for input with server-to-client requests. The
//! context owns the trait; the session implements it, so the context needs
//! nothing of the session's machinery.

use std::time::Duration;

use futures::future::BoxFuture;
use mcp_protocol::model::mrtr::InputRequest;
use mcp_protocol::{ErrorData, RequestId};
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::RequestContext;
use crate::catalog::error::HandlerError;

/// The client's answer to a server-to-client request: its `result`, or its
/// `error` object.
pub type ClientAnswer = Result<Value, Value>;

/// The client's end of a legacy session.
pub trait SessionPeer: Send + Sync {
    /// A fresh server-to-client request id and the receiver of its answer.
    fn ask(&self) -> BoxFuture<'_, Result<(RequestId, oneshot::Receiver<ClientAnswer>), ErrorData>>;
    /// Forgets a server-to-client request (its handler stopped waiting).
    fn forget(&self, id: RequestId);
    /// How long a request waits for the client's answer.
    fn input_timeout(&self) -> Duration;
}

impl RequestContext {
    /// Whether the request is served inside a legacy (`initialize`) session,
    /// where input is obtained by server-to-client requests instead of an
    /// `InputRequiredResult`.
    pub fn in_session(&self) -> bool {
        self.inner.session.is_some()
    }

    /// Names this request in a message's `_meta` (`actix-mcp/relatedRequestId`):
    /// in a legacy session, what the server sends as part of a request says
    /// which, since a stdio session otherwise does not.
    pub(super) fn name_request_in(&self, meta: &mut Map<String, Value>) {
        let related = serde_json::to_value(&self.inner.id).unwrap_or(Value::Null);
        meta.insert(mcp_protocol::meta::RELATED_REQUEST_KEY.into(), related);
    }

    /// Legacy era: sends `request` to the client on this request's response
    /// stream and waits for its answer (bounded by `legacy.input_timeout_ms`
    /// and by cancellation).
    /// The request's `_meta` names the handler's `key` for it.
    pub(crate) async fn request_client(&self, key: &str, request: &InputRequest) -> Result<Value, HandlerError> {
        let session = self.inner.session.as_deref().ok_or_else(|| HandlerError::internal("not a legacy session"))?;
        let wire = serde_json::to_value(request).map_err(|e| HandlerError::internal(e.to_string()))?;
        let method = request.method();
        let mut params = wire.get("params").cloned().unwrap_or(Value::Object(Map::new()));
        if let Some(p) = params.as_object_mut() {
            let meta = p.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
            if let Some(m) = meta.as_object_mut() {
                m.insert(mcp_protocol::meta::INPUT_KEY_KEY.into(), Value::String(key.to_owned()));
                self.name_request_in(m);
            }
        }
        let (id, answer) = session.ask().await?;
        if !self.emit(mcp_protocol::jsonrpc::encode_request(&id, method, &params)).await {
            session.forget(id);
            return Err(HandlerError::internal("the request was cancelled"));
        }
        let timeout = session.input_timeout();
        let outcome = tokio::select! {
            _ = self.inner.cancel.cancelled() => None,
            a = tokio::time::timeout(timeout, answer) => Some(a),
        };
        session.forget(id);
        match outcome {
            None => Err(HandlerError::internal("the request was cancelled")),
            Some(Err(_)) => Err(HandlerError::internal(format!(
                "the client did not answer {method} within {} ms",
                timeout.as_millis()
            ))),
            Some(Ok(Err(_))) => Err(HandlerError::internal("the session ended before the client answered")),
            Some(Ok(Ok(Ok(result)))) => Ok(result),
            Some(Ok(Ok(Err(error)))) => Err(HandlerError::Rpc(
                serde_json::from_value(error)
                    .unwrap_or_else(|_| ErrorData::internal(format!("the client refused {method}"))),
            )),
        }
    }
}
