//! What the result of a request means: complete, input the server needs
//! first (an `InputRequiredResult`, answered and retried), or a task.

use serde_json::Value;

use crate::model::JsonObject;
use crate::tasks::Task;

/// What a result says.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The result.
    Complete(Value),
    /// The server needs input first: answer each of `requests` (by key)
    /// and send the request again with [`Answer::retry`].
    InputRequired {
        /// The input requests, by key: each `{method, params}`.
        requests: JsonObject,
        /// The `requestState` to send back, if the server gave one.
        state: Option<Value>,
    },
    /// The server made the request a task (`resultType: "task"`).
    Task(Task),
}

/// One input request of an `InputRequiredResult` or an `input_required` task.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// Its key, under which its answer goes back.
    pub key: String,
    /// Its method (`elicitation/create`, `sampling/createMessage`, `roots/list`).
    pub method: String,
    /// Its params (`{}` when absent).
    pub params: Value,
}

impl Answer {
    /// Reads a result; a task of the wrong shape is `Err` naming why.
    pub fn of(mut result: Value) -> Result<Self, String> {
        match result.get("resultType").and_then(Value::as_str) {
            Some("input_required") => {
                let requests = match result.get_mut("inputRequests").map(Value::take) {
                    Some(Value::Object(m)) => m,
                    _ => JsonObject::new(),
                };
                let state = result.get_mut("requestState").map(Value::take);
                Ok(Answer::InputRequired { requests, state })
            }
            Some("task") => serde_json::from_value(result).map(Answer::Task).map_err(|e| e.to_string()),
            _ => Ok(Answer::Complete(result)),
        }
    }

    /// The input requests of `requests`, in order.
    pub fn asked(requests: &JsonObject) -> Vec<Asked> {
        let asked = |(key, req): (&String, &Value)| Asked {
            key: key.clone(),
            method: req.get("method").and_then(Value::as_str).unwrap_or_default().to_owned(),
            params: req.get("params").cloned().unwrap_or_else(|| Value::Object(JsonObject::new())),
        };
        requests.iter().map(asked).collect()
    }

    /// Puts the answers and the server's state on `params` for the retry
    /// (a state the server did not give again is removed).
    pub fn retry(params: &mut JsonObject, responses: JsonObject, state: Option<Value>) {
        params.insert("inputResponses".into(), Value::Object(responses));
        match state {
            Some(state) => params.insert("requestState".into(), state),
            None => params.remove("requestState"),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_are_told_apart_and_retried() {
        assert_eq!(Answer::of(json!({"x": 1})).unwrap(), Answer::Complete(json!({"x": 1})));
        let ir = json!({"resultType": "input_required", "requestState": "s1",
            "inputRequests": {"a": {"method": "roots/list"}}});
        let Answer::InputRequired { requests, state } = Answer::of(ir).unwrap() else { panic!() };
        let asked = Answer::asked(&requests);
        assert_eq!((asked[0].key.as_str(), asked[0].method.as_str()), ("a", "roots/list"));
        assert_eq!(asked[0].params, json!({}));
        let mut params = json!({"name": "t", "requestState": "old"}).as_object().unwrap().clone();
        Answer::retry(&mut params, JsonObject::new(), state);
        assert_eq!(params["requestState"], "s1");
        Answer::retry(&mut params, JsonObject::new(), None);
        assert!(params.get("requestState").is_none());
        assert!(Answer::of(json!({"resultType": "task", "taskId": 5})).is_err());
    }
}
