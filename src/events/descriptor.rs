//! An event type as `events/list` describes it, and its delivery modes.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How occurrences of an event type reach a subscriber.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Delivery {
    /// `events/poll`: the subscriber asks, with a cursor.
    Poll,
    /// `events/stream`: the server pushes on the request's own stream.
    Push,
    /// `events/subscribe`: the server posts each occurrence to a callback.
    Webhook,
}

impl Delivery {
    /// The mode as the wire spells it (`poll`, `push`, `webhook`).
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Poll => "poll",
            Delivery::Push => "push",
            Delivery::Webhook => "webhook",
        }
    }
}

/// One event type, as `events/list` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventDescriptor {
    /// The type's name, unique in the server (`email.received`).
    pub name: String,
    /// What an occurrence means, for a model or a person choosing it.
    pub description: String,
    /// The modes a subscriber may use: not empty, none twice.
    pub delivery: Vec<Delivery>,
    /// JSON Schema (an object) of a subscription's `arguments`.
    pub input_schema: Value,
    /// JSON Schema (an object) of an occurrence's `data`.
    pub payload_schema: Value,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Why a descriptor cannot be served, as a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidDescriptor(pub String);

impl std::fmt::Display for InvalidDescriptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidDescriptor {}

impl EventDescriptor {
    /// Whether subscribers may use `mode`.
    pub fn offers(&self, mode: Delivery) -> bool {
        self.delivery.contains(&mode)
    }

    /// Checks what `events/list` promises of every descriptor: a name and a
    /// description that are not empty, delivery modes that are not empty
    /// and not repeated, both schemas JSON objects describing JSON objects
    /// (their `type`, when given, is `object`).
    pub fn validate(&self) -> Result<(), InvalidDescriptor> {
        let fail = |why: String| Err(InvalidDescriptor(why));
        if self.name.trim().is_empty() {
            return fail("an event type needs a name".into());
        }
        let name = &self.name;
        if self.description.trim().is_empty() {
            return fail(format!("event type `{name}` needs a description"));
        }
        if self.delivery.is_empty() {
            return fail(format!("event type `{name}` offers no delivery mode (poll, push or webhook)"));
        }
        for (i, mode) in self.delivery.iter().enumerate() {
            if self.delivery[..i].contains(mode) {
                return fail(format!("event type `{name}` lists the delivery mode `{}` twice", mode.as_str()));
            }
        }
        for (field, schema) in [("inputSchema", &self.input_schema), ("payloadSchema", &self.payload_schema)] {
            if !schema.is_object() {
                return fail(format!("the {field} of event type `{name}` is not a JSON object"));
            }
            // Arguments and data are JSON objects: a schema of anything else
            // (`null`, a string) admits no subscription or no occurrence.
            if schema.get("type").is_some_and(|t| t != "object") {
                return fail(format!("the {field} of event type `{name}` does not describe a JSON object"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn descriptor() -> EventDescriptor {
        serde_json::from_value(json!({
            "name": "email.received", "description": "A new email", "delivery": ["poll", "push"],
            "inputSchema": {"type": "object"}, "payloadSchema": {"type": "object"}
        }))
        .unwrap()
    }

    #[test]
    fn a_descriptor_reads_and_writes_the_wire_names() {
        let d = descriptor();
        assert!(d.offers(Delivery::Poll) && !d.offers(Delivery::Webhook));
        let back = serde_json::to_value(&d).unwrap();
        assert_eq!(back["delivery"], json!(["poll", "push"]));
        assert_eq!(back["inputSchema"], json!({"type": "object"}));
        assert!(back.get("_meta").is_none());
        assert_eq!(d.validate(), Ok(()));
    }

    #[test]
    fn every_rule_of_a_descriptor_is_checked() {
        type Spoil = fn(&mut EventDescriptor);
        let cases: [(Spoil, &str); 8] = [
            (|d| d.name = " ".into(), "needs a name"),
            (|d| d.description.clear(), "needs a description"),
            (|d| d.delivery.clear(), "offers no delivery mode"),
            (|d| d.delivery = vec![Delivery::Push, Delivery::Push], "`push` twice"),
            (|d| d.input_schema = json!(true), "inputSchema"),
            (|d| d.payload_schema = json!("object"), "payloadSchema"),
            (|d| d.input_schema = json!({"type": "null"}), "inputSchema of event type `email.received` does not"),
            (|d| d.payload_schema = json!({"type": "string"}), "payloadSchema of event type `email.received` does not"),
        ];
        for (spoil, says) in cases {
            let mut d = descriptor();
            spoil(&mut d);
            let why = d.validate().unwrap_err().0;
            assert!(why.contains(says), "{why:?} should say {says:?}");
        }
    }

    #[test]
    fn an_unknown_delivery_mode_does_not_read() {
        let wire = json!({"name": "x", "description": "x", "delivery": ["carrier-pigeon"],
            "inputSchema": {}, "payloadSchema": {}});
        assert!(serde_json::from_value::<EventDescriptor>(wire).is_err());
    }
}
