//! Answering a server's input requests in the test client.

use std::rc::Rc;

use serde_json::{json, Value};

use super::{CallError, Responses};

/// The client's answer to one input request (an elicitation, a sampling
/// request, a roots listing): the result object the client would send.
#[derive(Debug, Clone, PartialEq)]
pub struct InputAnswer(pub Value);

impl InputAnswer {
    /// An elicitation accepted with `content`.
    pub fn accept(content: Value) -> Self {
        InputAnswer(json!({"action": "accept", "content": content}))
    }
    /// An elicitation declined.
    pub fn decline() -> Self {
        InputAnswer(json!({"action": "decline"}))
    }
    /// Any result object (sampling, roots).
    pub fn result(value: Value) -> Self {
        InputAnswer(value)
    }
}

/// `(method, params) -> answer`.
pub(super) type Answerer = Rc<dyn Fn(&str, &Value) -> InputAnswer>;

/// Answers every request of an `InputRequiredResult`.
pub(super) fn answer_all(answer: &Answerer, result: &Value) -> Result<Responses, CallError> {
    let requests = result
        .get("inputRequests")
        .and_then(Value::as_object)
        .ok_or_else(|| CallError::Protocol("an input_required result without inputRequests".into()))?;
    let mut out = Responses::new();
    for (key, request) in requests {
        let method = request.get("method").and_then(Value::as_str).unwrap_or_default();
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        out.insert(key.clone(), answer(method, &params).0);
    }
    Ok(out)
}
