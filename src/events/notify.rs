//! The notifications of an `events/stream`, each tagged with the stream's
//! request id as `_meta["io.modelcontextprotocol/subscriptionId"]`, and
//! `notifications/events/list_changed`.

use serde_json::{Map, Value};

use super::{EventError, Occurrence};
use crate::error::ErrorData;
use crate::jsonrpc::RequestId;
use crate::subscription::encode_tagged_notification;

/// `notifications/events/list_changed`: the event types changed.
pub const LIST_CHANGED: &str = crate::subscription::notification::EVENTS_LIST_CHANGED;
/// The stream is open and reads from `cursor`.
pub const ACTIVE: &str = "notifications/events/active";
/// One occurrence.
pub const EVENT: &str = "notifications/events/event";
/// Nothing happened; the stream's position.
pub const HEARTBEAT: &str = "notifications/events/heartbeat";
/// Something failed; the stream stays open.
pub const ERROR: &str = "notifications/events/error";
/// The subscription ended; the stream closes.
pub const TERMINATED: &str = "notifications/events/terminated";

/// `active`: the stream reads from `cursor`; `truncated` when it resumed
/// past a gap (sent again after each later gap).
pub fn active(id: &RequestId, cursor: &str, truncated: bool) -> Vec<u8> {
    let mut params = Map::new();
    params.insert("cursor".into(), Value::String(cursor.into()));
    params.insert("truncated".into(), Value::Bool(truncated));
    encode_tagged_notification(ACTIVE, params, id)
}

/// `event`: one occurrence, with its cursor.
pub fn event(id: &RequestId, occurrence: &Occurrence) -> Vec<u8> {
    let Ok(Value::Object(params)) = serde_json::to_value(occurrence) else {
        unreachable!("an occurrence is a JSON object")
    };
    encode_tagged_notification(EVENT, params, id)
}

/// `heartbeat`: the stream's position while nothing happens.
pub fn heartbeat(id: &RequestId, cursor: &str) -> Vec<u8> {
    let mut params = Map::new();
    params.insert("cursor".into(), Value::String(cursor.into()));
    encode_tagged_notification(HEARTBEAT, params, id)
}

/// `error`: a failure the stream survives (an upstream's outage).
pub fn error(id: &RequestId, error: &ErrorData) -> Vec<u8> {
    encode_tagged_notification(ERROR, error_params(error), id)
}

/// `terminated`: the subscription ended for `why`; the stream closes after it.
pub fn terminated(id: &RequestId, why: &EventError) -> Vec<u8> {
    encode_tagged_notification(TERMINATED, error_params(&why.to_error_data()), id)
}

/// The result that ends a stream the server closes (after `terminated`):
/// nothing but `_meta` naming the stream.
pub fn end(id: &RequestId) -> Value {
    let mut meta = Map::new();
    meta.insert(SUBSCRIPTION_ID.into(), serde_json::to_value(id).expect("an id is JSON"));
    let mut result = Map::new();
    result.insert("_meta".into(), Value::Object(meta));
    Value::Object(result)
}

/// The `_meta` key every notification of a stream carries its id under.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

fn error_params(error: &ErrorData) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("error".into(), serde_json::to_value(error).expect("an error is JSON"));
    params
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::events::Delivery;

    fn read(bytes: Vec<u8>) -> Value {
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn every_notification_carries_the_stream_id_with_its_json_type() {
        let numeric = RequestId::number(7);
        let data = json!({"k": 1}).as_object().unwrap().clone();
        let mut occurrence = Occurrence::new("e1", "t", 0, data);
        occurrence.cursor = Some("c1".into());
        let gone = EventError::UnknownEvent("t".into());
        let frames = [
            active(&numeric, "c0", false),
            event(&numeric, &occurrence),
            heartbeat(&numeric, "c1"),
            error(&numeric, &ErrorData::internal("upstream down")),
            terminated(&numeric, &gone),
        ];
        for frame in frames {
            let message = read(frame);
            assert!(message["method"].as_str().unwrap().starts_with("notifications/events/"));
            assert_eq!(message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], json!(7));
        }
        let text = read(heartbeat(&RequestId::string("s"), "c"));
        assert_eq!(text["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], json!("s"));
        assert_eq!(end(&numeric), json!({"_meta": {"io.modelcontextprotocol/subscriptionId": 7}}));
    }

    #[test]
    fn the_fields_are_where_the_design_puts_them() {
        let id = RequestId::number(1);
        assert_eq!(read(active(&id, "c0", true))["params"]["truncated"], json!(true));
        let data = json!({"k": 1}).as_object().unwrap().clone();
        let event = read(event(&id, &Occurrence::new("e1", "t", 0, data)));
        assert_eq!((&event["params"]["eventId"], &event["params"]["data"]["k"]), (&json!("e1"), &json!(1)));
        let why = EventError::UnsupportedDelivery { name: "t".into(), mode: Delivery::Push };
        let ended = read(terminated(&id, &why));
        assert_eq!(ended["params"]["error"]["code"], json!(-32014));
        assert_eq!(ended["params"]["error"]["data"]["feature"], json!("deliveryMode"));
    }
}
