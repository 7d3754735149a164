//! What the result of a request means: complete, input the server needs
//! first (an `InputRequiredResult`, answered and retried), or a task.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::model::JsonObject;
use crate::tasks::Task;

/// What a result says; the result complete as a JSON tree (`R` =
/// [`Value`], [`Answer::of`]) or as its text ([`Answer::of_raw`], read
/// later into the type its reader wants).
#[derive(Debug, Clone, PartialEq)]
pub enum Answer<R = Value> {
    /// The result.
    Complete(R),
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

/// The one member that tells what a result is.
#[derive(Deserialize)]
struct Kind<'a> {
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<Cow<'a, str>>,
}

impl Answer<Box<RawValue>> {
    /// Reads a result as its text: a complete one stays text (only its
    /// `resultType` is read); the others are read as [`Answer::of`] does.
    pub fn of_raw(raw: Box<RawValue>) -> Result<Self, String> {
        let kind = serde_json::from_str::<Kind<'_>>(raw.get()).ok().and_then(|k| k.result_type);
        if !matches!(kind.as_deref(), Some("input_required" | "task")) {
            return Ok(Answer::Complete(raw));
        }
        let value = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
        Ok(match Answer::of(value)? {
            Answer::InputRequired { requests, state } => Answer::InputRequired { requests, state },
            Answer::Task(task) => Answer::Task(task),
            Answer::Complete(_) => Answer::Complete(raw),
        })
    }
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

    #[test]
    fn a_raw_result_stays_text_unless_it_asks_or_is_a_task() {
        let raw = |t: &str| RawValue::from_string(t.to_owned()).unwrap();
        let text = r#"{"resultType": "complete", "content": []}"#;
        let Answer::Complete(r) = Answer::of_raw(raw(text)).unwrap() else { panic!() };
        assert_eq!(r.get(), text);
        assert!(matches!(Answer::of_raw(raw("[1]")).unwrap(), Answer::Complete(_)));
        assert!(matches!(Answer::of_raw(raw(r#"{"x": {"resultType": "task"}}"#)).unwrap(), Answer::Complete(_)));
        let ir = r#"{"resultType": "input_required", "inputRequests": {"a": {"method": "roots/list"}}}"#;
        let Answer::InputRequired { requests, state: None } = Answer::of_raw(raw(ir)).unwrap() else { panic!() };
        assert!(requests.contains_key("a"));
        // Spelled with an escape, the member is the same member.
        let escaped = r#"{"result\u0054ype": "input_required", "inputRequests": {}}"#;
        assert!(matches!(Answer::of_raw(raw(escaped)).unwrap(), Answer::InputRequired { .. }));
        assert!(Answer::of_raw(raw(r#"{"resultType": "task", "taskId": 5}"#)).is_err());
    }
}
