//! Input a server asks of the client — elicitation, sampling, roots —
//! answered by the handlers of [`ClientOptions`], the same way in both
//! eras: inside an `InputRequiredResult` (stateless) or as a server request
//! (a legacy session, or stdio).

use mcp_protocol::client::Answer;
use mcp_protocol::model::JsonObject;
use mcp_protocol::{ErrorCode, ErrorData};
use serde_json::{json, Value};

use super::error::ClientError;
use super::options::{ClientOptions, InputHandler};
use mcp_protocol::legacy::method as legacy;
use mcp_protocol::model::mrtr::method as asks;

/// The answer to one input request `{method, params}`: from `own` (the
/// request's own handler) if given, else the connection's handlers.
pub(crate) async fn answer(
    options: &ClientOptions,
    own: Option<&InputHandler>,
    method: &str,
    params: Value,
) -> Result<Value, ClientError> {
    let missing = || ClientError::Input(format!("no handler for {method}"));
    let failed = |e: String| ClientError::Input(format!("the {method} handler failed: {e}"));
    if let (asks::ELICITATION_CREATE | asks::SAMPLING_CREATE_MESSAGE | asks::ROOTS_LIST, Some(h)) = (method, own) {
        return h(method.to_owned(), params).await.map_err(failed);
    }
    match method {
        asks::ELICITATION_CREATE => {
            let h = options.elicit.as_ref().ok_or_else(missing)?;
            let r = h(params).await.map_err(failed)?;
            Ok(serde_json::to_value(r).unwrap_or_default())
        }
        asks::SAMPLING_CREATE_MESSAGE => {
            let h = options.sample.as_ref().ok_or_else(missing)?;
            let r = h(params).await.map_err(failed)?;
            Ok(serde_json::to_value(r).unwrap_or_default())
        }
        asks::ROOTS_LIST => {
            let h = options.roots.as_ref().ok_or_else(missing)?;
            let roots = h().await.map_err(failed)?;
            Ok(json!({ "roots": roots }))
        }
        legacy::PING => Ok(json!({})),
        other => Err(ClientError::Input(format!("unknown method {other}"))),
    }
}

/// The answers to every request of an `InputRequiredResult`'s
/// `inputRequests`, by key.
pub(crate) async fn answer_all(
    options: &ClientOptions,
    own: Option<&InputHandler>,
    requests: &JsonObject,
) -> Result<JsonObject, ClientError> {
    let mut responses = JsonObject::new();
    for asked in Answer::asked(requests) {
        responses.insert(asked.key, answer(options, own, &asked.method, asked.params).await?);
    }
    Ok(responses)
}

/// The answer to a server's request (a legacy session's elicitation,
/// sampling, roots or ping): its result, or the error to send back.
pub(crate) async fn respond(
    options: &ClientOptions,
    own: Option<&InputHandler>,
    method: &str,
    params: JsonObject,
) -> Result<Value, ErrorData> {
    match answer(options, own, method, params.into()).await {
        Ok(result) => Ok(result),
        Err(ClientError::Input(m)) if m.starts_with("unknown method") || m.starts_with("no handler") => {
            Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method}")))
        }
        Err(e) => Err(ErrorData::internal(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::model::mrtr::{ElicitAction, ElicitResult};

    #[actix_rt::test]
    async fn handlers_answer_and_missing_ones_are_named() {
        let options = ClientOptions::new("c", "1").on_elicit(|p| async move {
            let mut content = JsonObject::new();
            content.insert("name".into(), p["message"].clone());
            Ok(ElicitResult { action: ElicitAction::Accept, content: Some(content) })
        });
        let reqs = json!({"a": {"method": asks::ELICITATION_CREATE, "params": {"message": "hi"}}});
        let out = answer_all(&options, None, reqs.as_object().unwrap()).await.unwrap();
        assert_eq!(out["a"], json!({"action": "accept", "content": {"name": "hi"}}));
        let reqs = json!({"b": {"method": asks::ROOTS_LIST}});
        let err = answer_all(&options, None, reqs.as_object().unwrap()).await.unwrap_err();
        assert!(err.to_string().contains("no handler for roots/list"), "{err}");
        let r = respond(&options, None, asks::SAMPLING_CREATE_MESSAGE, JsonObject::new()).await;
        assert_eq!(r.unwrap_err().code, ErrorCode::METHOD_NOT_FOUND);
        let r = respond(&options, None, legacy::PING, JsonObject::new()).await;
        assert_eq!(r.unwrap(), json!({}));
        // A request's own handler answers before the connection's.
        let own: InputHandler = std::sync::Arc::new(|m, _| Box::pin(async move { Ok(json!({"by": m})) }));
        let r = respond(&options, Some(&own), asks::ELICITATION_CREATE, JsonObject::new()).await;
        assert_eq!(r.unwrap(), json!({"by": asks::ELICITATION_CREATE}));
    }
}
