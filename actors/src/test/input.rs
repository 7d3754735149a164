//! Answering a server's input requests in the test client.

use std::rc::Rc;

use mcp_protocol::client::{Answer, Asked};
use serde_json::{json, Value};

use super::Responses;

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
pub(super) fn answer_all(answer: &Answerer, requests: &Responses) -> Responses {
    let answered = |asked: Asked| (asked.key, answer(&asked.method, &asked.params).0);
    Answer::asked(requests).into_iter().map(answered).collect()
}
