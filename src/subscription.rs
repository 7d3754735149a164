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

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::jsonrpc::RequestId;

/// `subscriptions/listen` method name.
pub const LISTEN_METHOD: &str = "subscriptions/listen";
/// The acknowledgement sent first on every listen stream.
pub const ACKNOWLEDGED_METHOD: &str = "notifications/subscriptions/acknowledged";

/// What a client opts into on one listen stream. Omitted fields mean "no".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_subscriptions: Vec<String>,
}

impl SubscriptionFilter {
    /// The part of `self` a server supporting `supported` honours.
    pub fn honored(&self, supported: &SubscriptionFilter) -> SubscriptionFilter {
        SubscriptionFilter {
            tools_list_changed: self.tools_list_changed && supported.tools_list_changed,
            prompts_list_changed: self.prompts_list_changed && supported.prompts_list_changed,
            resources_list_changed: self.resources_list_changed && supported.resources_list_changed,
            resource_subscriptions: if supported.resource_subscriptions.is_empty() {
                Vec::new()
            } else {
                let mut uris = self.resource_subscriptions.clone();
                uris.dedup();
                uris
            },
        }
    }

    /// Whether the filter asks for nothing.
    pub fn is_empty(&self) -> bool {
        *self == SubscriptionFilter::default()
    }

    /// Whether `event` passes the filter.
    pub fn wants(&self, event: &Event) -> bool {
        match event {
            Event::ToolsListChanged => self.tools_list_changed,
            Event::PromptsListChanged => self.prompts_list_changed,
            Event::ResourcesListChanged => self.resources_list_changed,
            Event::ResourceUpdated { uri } => self.resource_subscriptions.iter().any(|u| u == uri),
        }
    }
}

/// Params of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ListenParams {
    /// The opted-in notification types.
    pub notifications: SubscriptionFilter,
}

/// A change a server publishes to its listeners.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// One resource's contents changed.
    ResourceUpdated {
        /// Its URI.
        uri: String,
    },
}

impl Event {
    /// The notification method for this event.
    pub fn method(&self) -> &'static str {
        match self {
            Event::ToolsListChanged => "notifications/tools/list_changed",
            Event::PromptsListChanged => "notifications/prompts/list_changed",
            Event::ResourcesListChanged => "notifications/resources/list_changed",
            Event::ResourceUpdated { .. } => "notifications/resources/updated",
        }
    }

    /// The notification as the legacy era sends it (no subscription tag).
    pub fn encode_untagged(&self) -> Vec<u8> {
        let mut params = Map::new();
        if let Event::ResourceUpdated { uri } = self {
            params.insert("uri".into(), Value::String(uri.clone()));
        }
        crate::jsonrpc::encode_notification(self.method(), &params)
    }

    /// The notification for the stream of subscription `id`.
    pub fn encode_for(&self, id: &RequestId) -> Vec<u8> {
        let mut params = Map::new();
        if let Event::ResourceUpdated { uri } = self {
            params.insert("uri".into(), Value::String(uri.clone()));
        }
        encode_tagged_notification(self.method(), params, id)
    }
}

/// The version of [`WireEvent`] this crate writes.
pub const WIRE_VERSION: u8 = 1;

/// An event as it travels between server instances: compact JSON with a
/// format version and the publishing instance, so an instance can skip its
/// own events (`{"v":1,"o":"<origin>","e":{"kind":"resource_updated","uri":"…"}}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireEvent {
    /// Format version.
    pub v: u8,
    /// The instance that observed the event.
    pub o: String,
    /// The event.
    pub e: Event,
    /// Identifies one observation of an external source shared by several
    /// instances (e.g. a file's modification time and size), so that the
    /// same change seen by each of them is delivered once. Absent: never
    /// coalesced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<String>,
}

impl WireEvent {
    /// Encodes `event` observed by instance `origin`, with its observation key.
    pub fn encode(origin: &str, event: &Event, key: Option<&str>) -> Vec<u8> {
        let w = WireEvent { v: WIRE_VERSION, o: origin.to_owned(), e: event.clone(), k: key.map(str::to_owned) };
        serde_json::to_vec(&w).expect("events serialize")
    }

    /// Decodes bytes from another instance; unknown versions are refused.
    pub fn decode(bytes: &[u8]) -> Result<WireEvent, String> {
        let w: WireEvent = serde_json::from_slice(bytes).map_err(|e| format!("undecodable event: {e}"))?;
        if w.v != WIRE_VERSION {
            return Err(format!("unsupported event version {}", w.v));
        }
        Ok(w)
    }
}

/// An event encoded once for many subscriptions: every listener only
/// splices its subscription id between two fixed parts, so fan-out to N
/// streams serializes the event once, not N times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventTemplate {
    prefix: Vec<u8>,
    suffix: Vec<u8>,
}

impl EventTemplate {
    /// The template of `event`.
    pub fn new(event: &Event) -> Self {
        let mut prefix = br#"{"jsonrpc":"2.0","method":""#.to_vec();
        prefix.extend_from_slice(event.method().as_bytes());
        prefix.extend_from_slice(br#"","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"#);
        let mut suffix = b"}".to_vec();
        if let Event::ResourceUpdated { uri } = event {
            suffix.extend_from_slice(br#","uri":"#);
            suffix.extend_from_slice(&serde_json::to_vec(uri).expect("strings serialize"));
        }
        suffix.extend_from_slice(b"}}");
        EventTemplate { prefix, suffix }
    }

    /// The notification for subscription `id` (identical to [`Event::encode_for`]).
    pub fn encode_for(&self, id: &RequestId) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len(id));
        self.encode_into(id, &mut out);
        out
    }

    /// The length of [`EventTemplate::encode_for`]`(id)`, so that a
    /// transport can allocate its frame once.
    pub fn encoded_len(&self, id: &RequestId) -> usize {
        self.prefix.len() + id.as_json().len() + self.suffix.len()
    }

    /// Appends the notification for subscription `id` to `out` (a transport
    /// frames it without a second copy).
    pub fn encode_into(&self, id: &RequestId, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.prefix);
        out.extend_from_slice(id.as_json().as_bytes());
        out.extend_from_slice(&self.suffix);
    }
}

/// Identifies one listener inside a server process (a process-wide counter:
/// small, as routing tables hold one per open subscription).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ListenerId(pub u64);

impl ListenerId {
    /// The next id of this process.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        ListenerId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl std::fmt::Display for ListenerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Which listeners want which events: filter kind → listener set, URI →
/// listener set. Pure data: each listener carries a payload `T` (the hub
/// actor keeps its handle there).
#[derive(Debug, Clone)]
pub struct SubscriptionTable<T = ()> {
    tools: HashSet<ListenerId>,
    prompts: HashSet<ListenerId>,
    resources: HashSet<ListenerId>,
    by_uri: HashMap<String, HashSet<ListenerId>>,
    filters: HashMap<ListenerId, (SubscriptionFilter, T)>,
}

impl<T> Default for SubscriptionTable<T> {
    fn default() -> Self {
        SubscriptionTable {
            tools: HashSet::new(),
            prompts: HashSet::new(),
            resources: HashSet::new(),
            by_uri: HashMap::new(),
            filters: HashMap::new(),
        }
    }
}

impl SubscriptionTable<()> {
    /// Adds (or replaces) a listener with its filter.
    pub fn insert(&mut self, id: ListenerId, filter: &SubscriptionFilter) {
        let _ = self.insert_with(id, filter, ());
    }
}

impl<T> SubscriptionTable<T> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a listener with its filter and payload; returns
    /// the payload it replaced.
    pub fn insert_with(&mut self, id: ListenerId, filter: &SubscriptionFilter, payload: T) -> Option<T> {
        let replaced = self.remove(id);
        if filter.tools_list_changed {
            self.tools.insert(id);
        }
        if filter.prompts_list_changed {
            self.prompts.insert(id);
        }
        if filter.resources_list_changed {
            self.resources.insert(id);
        }
        for uri in &filter.resource_subscriptions {
            self.by_uri.entry(uri.clone()).or_default().insert(id);
        }
        self.filters.insert(id, (filter.clone(), payload));
        replaced
    }

    /// Removes a listener; returns its payload if it was present.
    pub fn remove(&mut self, id: ListenerId) -> Option<T> {
        let (filter, payload) = self.filters.remove(&id)?;
        self.tools.remove(&id);
        self.prompts.remove(&id);
        self.resources.remove(&id);
        for uri in &filter.resource_subscriptions {
            if let Some(set) = self.by_uri.get_mut(uri) {
                set.remove(&id);
                if set.is_empty() {
                    self.by_uri.remove(uri);
                }
            }
        }
        Some(payload)
    }

    /// The listeners that want `event`.
    pub fn route<'a>(&'a self, event: &Event) -> impl Iterator<Item = ListenerId> + 'a {
        let set = match event {
            Event::ToolsListChanged => Some(&self.tools),
            Event::PromptsListChanged => Some(&self.prompts),
            Event::ResourcesListChanged => Some(&self.resources),
            Event::ResourceUpdated { uri } => self.by_uri.get(uri),
        };
        set.into_iter().flatten().copied()
    }

    /// Every listener.
    pub fn listeners(&self) -> impl Iterator<Item = ListenerId> + '_ {
        self.filters.keys().copied()
    }

    /// The filter of a listener.
    pub fn filter(&self, id: ListenerId) -> Option<&SubscriptionFilter> {
        self.filters.get(&id).map(|(f, _)| f)
    }

    /// The payload of a listener.
    pub fn payload(&self, id: ListenerId) -> Option<&T> {
        self.filters.get(&id).map(|(_, p)| p)
    }

    /// Gives back the room of listeners that left (the maps keep their
    /// largest size otherwise).
    pub fn shrink_to_fit(&mut self) {
        self.tools.shrink_to_fit();
        self.prompts.shrink_to_fit();
        self.resources.shrink_to_fit();
        self.by_uri.shrink_to_fit();
        self.filters.shrink_to_fit();
    }

    /// Every listener's payload.
    pub fn payloads(&self) -> impl Iterator<Item = &T> + '_ {
        self.filters.values().map(|(_, p)| p)
    }

    /// How many listeners.
    pub fn len(&self) -> usize {
        self.filters.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }
}

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

/// The acknowledgement, first message of every subscription.
pub fn encode_ack(id: &RequestId, honored: &SubscriptionFilter) -> Vec<u8> {
    let mut params = Map::new();
    params.insert("notifications".into(), serde_json::to_value(honored).expect("filters serialize"));
    encode_tagged_notification(ACKNOWLEDGED_METHOD, params, id)
}

/// The graceful completion: the response to the listen request.
pub fn encode_completion(id: &RequestId) -> Vec<u8> {
    let mut rest = Map::new();
    rest.insert("resultType".into(), Value::String("complete".into()));
    crate::jsonrpc::encode_result(id, &Tagged { meta: SubscriptionMeta { subscription_id: id }, rest: &rest })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn filter(v: Value) -> SubscriptionFilter {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn routes_by_kind_and_uri() {
        let mut t = SubscriptionTable::new();
        let (a, b, c) = (ListenerId::new(), ListenerId::new(), ListenerId::new());
        t.insert(a, &filter(json!({"toolsListChanged": true, "resourceSubscriptions": ["x://1"]})));
        t.insert(b, &filter(json!({"promptsListChanged": true, "resourceSubscriptions": ["x://1", "x://2"]})));
        t.insert(c, &filter(json!({"resourcesListChanged": true})));
        let mut got: Vec<_> = t.route(&Event::ResourceUpdated { uri: "x://1".into() }).collect();
        got.sort();
        let mut want = vec![a, b];
        want.sort();
        assert_eq!(got, want);
        assert_eq!(t.route(&Event::ResourceUpdated { uri: "x://2".into() }).collect::<Vec<_>>(), vec![b]);
        assert_eq!(t.route(&Event::ResourceUpdated { uri: "x://3".into() }).count(), 0);
        assert_eq!(t.route(&Event::ToolsListChanged).collect::<Vec<_>>(), vec![a]);
        assert_eq!(t.route(&Event::ResourcesListChanged).collect::<Vec<_>>(), vec![c]);
        assert!(t.remove(b).is_some());
        assert!(t.remove(b).is_none());
        assert_eq!(t.route(&Event::ResourceUpdated { uri: "x://2".into() }).count(), 0);
        assert_eq!(t.len(), 2);
        assert!(!t.by_uri.contains_key("x://2"), "empty URI sets are dropped");
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
        let bytes = WireEvent::encode("node-a", &e, None);
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            r#"{"v":1,"o":"node-a","e":{"kind":"resource_updated","uri":"file:///a"}}"#
        );
        assert_eq!(WireEvent::decode(&bytes).unwrap().e, e);
        let keyed = WireEvent::decode(&WireEvent::encode("n", &e, Some("17:4"))).unwrap();
        assert_eq!(keyed.k.as_deref(), Some("17:4"));
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
