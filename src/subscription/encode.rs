//! The tagging of a listen stream's messages with `_meta.subscriptionId`,
//! and the graceful completion (the response to the listen request).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::jsonrpc::RequestId;

#[derive(Serialize)]
struct SubscriptionMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    subscription_id: &'a RequestId,
}

/// Params (or a result) with `_meta.subscriptionId` first; the id keeps its
/// exact JSON text, so its type and digits survive.
#[derive(Serialize)]
struct Tagged<'a> {
    #[serde(rename = "_meta")]
    meta: SubscriptionMeta<'a>,
    #[serde(flatten)]
    rest: &'a Map<String, Value>,
}

/// A notification whose params carry `_meta.subscriptionId`.
pub fn encode_tagged_notification(method: &str, params: Map<String, Value>, id: &RequestId) -> Vec<u8> {
    let tagged = Tagged { meta: SubscriptionMeta { subscription_id: id }, rest: &params };
    crate::jsonrpc::encode_notification(method, &tagged)
}

/// The graceful completion: the response to the listen request.
pub fn encode_completion(id: &RequestId) -> Vec<u8> {
    let mut rest = Map::new();
    rest.insert("resultType".into(), Value::String("complete".into()));
    crate::jsonrpc::encode_result(id, &Tagged { meta: SubscriptionMeta { subscription_id: id }, rest: &rest })
}
