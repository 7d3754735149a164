//! Subscriptions (spec: basic/patterns/subscriptions): the
//! `subscriptions/listen` filter, the events a server publishes, the pure
//! routing table that maps an event to the listeners that opted into it, and
//! the encoders of the messages a listen stream carries (ack, notifications,
//! graceful completion), each tagged with the listen request's id.
//!
//! ```
//! use mcp_protocol::subscription::{Event, ListenerId, SubscriptionFilter, SubscriptionTable};
//!
//! let mut table = SubscriptionTable::new();
//! let a = ListenerId::new();
//! table.insert(a, &SubscriptionFilter { tools_list_changed: true, ..Default::default() });
//! assert_eq!(table.route(&Event::ToolsListChanged).collect::<Vec<_>>(), vec![a]);
//! assert_eq!(table.route(&Event::PromptsListChanged).count(), 0);
//! ```

mod encode;
mod event;
mod filter;
mod table;

pub use encode::{encode_completion, encode_tagged_notification};
pub use event::{notification, Event, EventTemplate, WireEvent, WIRE_VERSION};
pub use filter::{encode_ack, ListenParams, SubscriptionFilter, ACKNOWLEDGED_METHOD, LISTEN_METHOD};
pub use table::{ListenerId, SubscriptionTable};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::RequestId;
    use serde_json::json;
    use serde_json::Value;

    fn filter(v: Value) -> SubscriptionFilter {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn replacing_a_listener_returns_its_old_payload_and_filter_routes() {
        let mut t = SubscriptionTable::new();
        let a = ListenerId::new();
        assert_eq!(t.insert_with(a, &filter(json!({"toolsListChanged": true})), "first"), None);
        assert_eq!(t.insert_with(a, &filter(json!({"promptsListChanged": true})), "second"), Some("first"));
        assert_eq!(t.len(), 1);
        assert_eq!(t.route(&Event::ToolsListChanged).count(), 0, "the old filter no longer routes");
        assert_eq!(t.route(&Event::PromptsListChanged).collect::<Vec<_>>(), vec![a]);
        assert_eq!(t.payload(a), Some(&"second"));
    }

    #[test]
    fn wire_events_round_trip_and_are_versioned() {
        let e = Event::ResourceUpdated { uri: "file:///a".into() };
        let bytes = WireEvent::encode("node-a", &e, None, None);
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            r#"{"v":1,"o":"node-a","e":{"kind":"resource_updated","uri":"file:///a"}}"#
        );
        assert_eq!(WireEvent::decode(&bytes).unwrap().e, e);
        let keyed = WireEvent::decode(&WireEvent::encode("n", &e, Some("17:4"), None)).unwrap();
        assert_eq!(keyed.k.as_deref(), Some("17:4"));
        let trace = crate::trace::TraceContext::from_parts(Some(TRACEPARENT), Some("k=v"), None).unwrap();
        let traced = WireEvent::decode(&WireEvent::encode("n", &e, None, Some(&trace))).unwrap();
        assert_eq!(traced.t.as_ref(), Some(&trace));
        let forged = br#"{"v":1,"o":"x","e":{"kind":"tools_list_changed"},"t":{"traceparent":"00-zz"}}"#;
        assert_eq!(WireEvent::decode(forged).unwrap().t, None, "an invalid trace context is dropped");
        assert!(WireEvent::decode(br#"{"v":2,"o":"x","e":{"kind":"tools_list_changed"}}"#).is_err());
        assert!(WireEvent::decode(b"garbage").is_err());
    }

    #[test]
    fn templates_encode_exactly_like_encode_for() {
        let events = [
            Event::ToolsListChanged,
            Event::PromptsListChanged,
            Event::ResourcesListChanged,
            Event::ResourceUpdated { uri: "file:///a \"quoted\"/ü.txt".into() },
        ];
        let ids = [
            RequestId::number(7),
            RequestId::string("s-1"),
            RequestId::from_json("123456789012345678901234567890").unwrap(),
        ];
        for e in &events {
            let t = EventTemplate::new(e);
            for id in &ids {
                let encoded = t.encode_for(id);
                assert_eq!(String::from_utf8(encoded.clone()).unwrap(), String::from_utf8(e.encode_for(id)).unwrap());
                assert_eq!(t.encoded_len(id), encoded.len());
                let mut framed = b"data: ".to_vec();
                t.encode_into(id, &mut framed);
                assert_eq!(&framed[6..], &encoded[..], "appends after what is there");
            }
        }
    }

    const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn traced_templates_carry_the_trace_context_in_meta() {
        let trace = crate::trace::TraceContext::from_parts(Some(TRACEPARENT), Some("k=v"), Some("a=1")).unwrap();
        let e = Event::ResourceUpdated { uri: "file:///a".into() };
        let id = RequestId::string("s-1");
        let v: serde_json::Value =
            serde_json::from_slice(&EventTemplate::traced(&e, Some(&trace)).encode_for(&id)).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": "s-1",
                          "traceparent": TRACEPARENT, "tracestate": "k=v", "baggage": "a=1"},
                "uri": "file:///a"}})
        );
        assert_eq!(EventTemplate::traced(&e, None), EventTemplate::new(&e));
    }

    #[test]
    fn task_events_splice_the_task_after_the_tag() {
        let e = Event::TaskStatus {
            task_id: "t1".into(),
            task: r#"{"taskId":"t1","status":"working","ttlMs":null}"#.into(),
            owner: None,
        };
        let id = RequestId::string("s");
        let text = String::from_utf8(e.encode_for(&id)).unwrap();
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","method":"notifications/tasks","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"s"},"taskId":"t1","status":"working","ttlMs":null}}"#
        );
        assert_eq!(EventTemplate::new(&e).encode_for(&id), e.encode_for(&id));
        let untagged: serde_json::Value = serde_json::from_slice(&e.encode_untagged()).unwrap();
        assert_eq!(untagged["params"]["status"], "working");
        // Between instances, a task that is not a JSON object is refused.
        let bad = Event::TaskStatus { task_id: "t".into(), task: "[1]".into(), owner: None };
        assert!(WireEvent::decode(&WireEvent::encode("o", &bad, None, None)).is_err());
        assert!(WireEvent::decode(&WireEvent::encode("o", &e, None, None)).is_ok());
        let f = filter(json!({"taskIds": ["t1", "t1", "t2"]}));
        assert!(f.wants(&e));
        assert_eq!(f.honored(&filter(json!({"taskIds": ["*"]}))).task_ids, ["t1", "t2"]);
        assert!(f.honored(&SubscriptionFilter::default()).task_ids.is_empty());
        let mut t = SubscriptionTable::new();
        let l = ListenerId::new();
        t.insert(l, &f);
        assert_eq!(t.route(&e).collect::<Vec<_>>(), vec![l]);
        t.remove(l);
        assert_eq!(t.route(&e).count(), 0);
    }

    #[test]
    fn a_task_event_reaches_only_its_owners_listeners() {
        let alices = Event::TaskStatus { task_id: "t1".into(), task: "{}".into(), owner: Some("alice".into()) };
        let f = filter(json!({"taskIds": ["t1"]}));
        let (alice, bob, anonymous) = (ListenerId::new(), ListenerId::new(), ListenerId::new());
        let mut t = SubscriptionTable::new();
        t.insert(alice, &f.clone().owned_by(Some("alice".into())));
        t.insert(bob, &f.clone().owned_by(Some("bob".into())));
        t.insert(anonymous, &f);
        assert_eq!(t.route(&alices).collect::<Vec<_>>(), vec![alice]);
        assert!(f.clone().owned_by(Some("alice".into())).wants(&alices));
        assert!(!f.clone().owned_by(Some("bob".into())).wants(&alices) && !f.wants(&alices));
        // The owner is never on the wire: the acknowledgement is the same.
        let ack = encode_ack(&RequestId::number(1), &f.clone().owned_by(Some("alice".into())));
        assert_eq!(ack, encode_ack(&RequestId::number(1), &f));
        assert!(SubscriptionFilter::default().owned_by(Some("alice".into())).is_empty(), "an owner asks for nothing");
    }

    #[test]
    fn honored_drops_unsupported_types() {
        let asked =
            filter(json!({"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["a"]}));
        let supported = filter(json!({"toolsListChanged": true}));
        assert_eq!(serde_json::to_value(asked.honored(&supported)).unwrap(), json!({"toolsListChanged": true}));
    }

    #[test]
    fn tags_keep_the_id_type() {
        let n = RequestId::number(7);
        let s = RequestId::string("7");
        use crate::meta::SUBSCRIPTION_ID_KEY;
        let ack: Value = serde_json::from_slice(&encode_ack(&n, &filter(json!({"toolsListChanged": true})))).unwrap();
        assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID_KEY], json!(7));
        assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}));
        let upd: Value = serde_json::from_slice(&Event::ResourceUpdated { uri: "u".into() }.encode_for(&s)).unwrap();
        assert_eq!(upd["params"]["_meta"][SUBSCRIPTION_ID_KEY], json!("7"));
        assert_eq!(upd["params"]["uri"], "u");
        let huge = RequestId::from_json("123456789012345678901234567890").unwrap();
        let text = String::from_utf8(Event::ToolsListChanged.encode_for(&huge)).unwrap();
        assert!(text.contains(r#""io.modelcontextprotocol/subscriptionId":123456789012345678901234567890"#), "{text}");
        assert_eq!(
            String::from_utf8(encode_completion(&n)).unwrap(),
            r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"resultType":"complete"}}"#
        );
    }
}
