//! Property tests of the sans-IO core against simple models: the
//! subscription table routes exactly as a list of filters would, pages of a
//! changing list never repeat or skip a surviving item, and a sealed
//! `requestState` opens to what was sealed while any altered byte is refused.

use std::collections::{BTreeMap, BTreeSet};

use mcp_protocol::pagination::paginate;
use mcp_protocol::request_state::{open, seal, Binding, StateKey, StatePayload};
use mcp_protocol::subscription::{Event, ListenerId, SubscriptionFilter, SubscriptionTable};
use proptest::prelude::*;
use serde_json::{json, Map};

const URIS: [&str; 4] = ["test://a", "test://b", "test://c", "test://d"];
const TASKS: [&str; 3] = ["task-1", "task-2", "task-3"];
const OWNERS: [Option<&str>; 3] = [None, Some("alice"), Some("bob")];

fn filter() -> impl Strategy<Value = SubscriptionFilter> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(0..URIS.len(), 0..4),
        proptest::collection::vec(0..TASKS.len(), 0..3),
        0..OWNERS.len(),
    )
        .prop_map(|(tools, prompts, resources, events, uris, tasks, owner)| SubscriptionFilter {
            tools_list_changed: tools,
            prompts_list_changed: prompts,
            resources_list_changed: resources,
            events_list_changed: events,
            resource_subscriptions: uris.into_iter().map(|i| URIS[i].to_owned()).collect(),
            task_ids: tasks.into_iter().map(|i| TASKS[i].to_owned()).collect(),
            owner: OWNERS[owner].map(str::to_owned),
        })
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        Just(Event::ToolsListChanged),
        Just(Event::PromptsListChanged),
        Just(Event::ResourcesListChanged),
        Just(Event::EventsListChanged),
        (0..URIS.len()).prop_map(|i| Event::ResourceUpdated { uri: URIS[i].to_owned() }),
        (0..TASKS.len(), 0..OWNERS.len()).prop_map(|(i, o)| Event::TaskStatus {
            task_id: TASKS[i].to_owned(),
            task: "{}".into(),
            owner: OWNERS[o].map(str::to_owned)
        }),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, SubscriptionFilter),
    Remove(u64),
    Route(Event),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..8u64, filter()).prop_map(|(id, f)| Op::Insert(id, f)),
        (0..8u64).prop_map(Op::Remove),
        event().prop_map(Op::Route),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The table against a map of filters: inserting (or replacing),
    /// removing, and routing every event to exactly the listeners whose
    /// filter wants it, each once.
    #[test]
    fn the_subscription_table_routes_like_its_model(ops in proptest::collection::vec(op(), 1..60)) {
        let mut table: SubscriptionTable<u64> = SubscriptionTable::new();
        let mut model: BTreeMap<u64, SubscriptionFilter> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Insert(id, f) => {
                    let replaced = table.insert_with(ListenerId(id), &f, id);
                    prop_assert_eq!(replaced.is_some(), model.insert(id, f).is_some());
                }
                Op::Remove(id) => {
                    prop_assert_eq!(table.remove(ListenerId(id)).is_some(), model.remove(&id).is_some());
                }
                Op::Route(e) => {
                    let mut routed: Vec<u64> = table.route(&e).map(|l| l.0).collect();
                    routed.sort_unstable();
                    let expected: Vec<u64> = model.iter().filter(|(_, f)| f.wants(&e)).map(|(id, _)| *id).collect();
                    prop_assert_eq!(routed, expected, "event {:?}", e);
                }
            }
            prop_assert_eq!(table.len(), model.len());
        }
    }

    /// Paging through a list that changes between pages: no item is listed
    /// twice, items are listed in order, and every item present from the
    /// first page to the last is listed.
    #[test]
    fn pages_of_a_changing_list_never_repeat_or_skip(
        initial in proptest::collection::btree_set("[a-z]{1,3}", 0..40),
        changes in proptest::collection::vec((any::<bool>(), "[a-z]{1,3}"), 0..20),
        page_size in 1usize..7,
    ) {
        let mut items: BTreeSet<String> = initial.clone();
        let mut survivors: BTreeSet<String> = initial;
        let mut seen: Vec<String> = Vec::new();
        let mut cursor: Option<String> = None;
        let mut changes = changes.into_iter();
        loop {
            let sorted: Vec<String> = items.iter().cloned().collect();
            let page = paginate(&sorted, |s| s.as_str(), cursor.as_deref(), page_size).unwrap();
            seen.extend(page.items);
            match page.next_cursor {
                None => break,
                Some(c) => cursor = Some(c),
            }
            // Between two pages, an item comes or goes.
            if let Some((add, name)) = changes.next() {
                if add {
                    items.insert(name);
                } else {
                    items.remove(&name);
                    survivors.remove(&name);
                }
            }
        }
        let mut sorted_seen = seen.clone();
        sorted_seen.sort();
        sorted_seen.dedup();
        prop_assert_eq!(&sorted_seen, &seen, "in order, each once");
        for s in &survivors {
            prop_assert!(seen.contains(s), "{} was present throughout but not listed", s);
        }
    }

    /// A sealed state opens to what was sealed; changing any one byte of the
    /// token makes it refused.
    #[test]
    fn a_sealed_state_opens_and_any_altered_byte_is_refused(
        answer in "[ -~]{0,40}",
        round in 1u32..10,
        index in any::<proptest::sample::Index>(),
        delta in 1u8..=255,
    ) {
        let key = StateKey::new(vec![7u8; 32]).unwrap();
        let args = Map::from_iter([("city".to_owned(), json!("Lyon"))]);
        let binding = Binding::new("tools/call", "weather", Some(&args));
        let mut payload = StatePayload::new(&binding, 60_000, 1_000, "nonce".into());
        payload.round = round;
        payload.responses.insert("q".into(), json!(answer));
        let token = seal(&payload, &key);
        let opened = open(&token, &key, &binding, 2_000).unwrap();
        prop_assert_eq!(&opened, &payload);
        let mut bytes = token.into_bytes();
        let i = index.index(bytes.len());
        bytes[i] = bytes[i].wrapping_add(delta);
        let altered = String::from_utf8_lossy(&bytes).into_owned();
        prop_assert!(open(&altered, &key, &binding, 2_000).is_err(), "byte {} altered", i);
        // Bound to its request: another tool, or other arguments, refuse it.
        let other = Binding::new("tools/call", "other", Some(&args));
        prop_assert!(open(&seal(&payload, &key), &key, &other, 2_000).is_err());
    }
}
