//! The log's tests: bounds, cursors, pages, losses, shared positions.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::*;

fn occurrence(id: u64, data: serde_json::Value) -> Occurrence {
    let Value::Object(data) = data else { unreachable!() };
    Occurrence::new(format!("e{id}"), "t", id, data)
}

fn ids(batch: &Batch) -> Vec<&str> {
    batch.events.iter().map(|e| e.event_id.as_str()).collect()
}

fn all(_: &Occurrence) -> bool {
    true
}

#[test]
fn from_now_returns_nothing_then_what_follows_and_a_quiet_read_keeps_its_place() {
    let mut log = EventLog::new(1, 10, 60_000);
    log.append(occurrence(1, json!({})), 1_000);
    let start = log.read(&ReadRequest { max_age_ms: Some(60_000), ..ReadRequest::new(None) }, 1_000, all);
    assert_eq!((start.events.len(), start.truncated, start.has_more), (0, false, false));
    let pushed = log.append(occurrence(2, json!({})), 2_000);
    let next = log.read(&ReadRequest::new(Some(&start.cursor)), 2_000, all);
    assert_eq!(ids(&next), ["e2"]);
    assert_eq!(next.events[0].cursor, pushed.cursor);
    assert_eq!(next.cursor, log.head());
    let quiet = log.read(&ReadRequest::new(Some(&next.cursor)), 3_000, all);
    assert!(quiet.events.is_empty() && !quiet.truncated);
    assert_eq!(quiet.cursor, next.cursor);
}

#[test]
fn max_events_pages_with_has_more_and_loses_nothing() {
    let mut log = EventLog::new(1, 10, 60_000);
    let start = log.head();
    for id in 1..=5 {
        log.append(occurrence(id, json!({})), 100);
    }
    let mut cursor = start;
    let mut seen = Vec::new();
    loop {
        let batch = log.read(&ReadRequest { max_events: 2, ..ReadRequest::new(Some(&cursor)) }, 100, all);
        assert!(batch.events.len() <= 2);
        seen.extend(batch.events.iter().map(|e| e.event_id.clone()));
        cursor = batch.cursor;
        if !batch.has_more {
            break;
        }
    }
    assert_eq!(seen, ["e1", "e2", "e3", "e4", "e5"]);
}

#[test]
fn a_loss_truncates_the_readers_before_it_only() {
    let mut log = EventLog::new(1, 10, 60_000);
    log.append(occurrence(1, json!({})), 100);
    let before = log.head();
    log.lose(200);
    let after = log.head();
    log.append(occurrence(2, json!({})), 300);
    let crossed = log.read(&ReadRequest::new(Some(&before)), 300, all);
    assert_eq!((ids(&crossed), crossed.truncated), (vec!["e2"], true));
    assert_eq!(crossed.start, after, "it continues from just past the loss");
    let later = log.read(&ReadRequest::new(Some(&after)), 300, all);
    assert_eq!((ids(&later), later.truncated), (vec!["e2"], false));
    // A loss with nothing after it still tells a reader from before it.
    log.lose(400);
    let quiet = log.read(&ReadRequest::new(Some(&later.cursor)), 400, all);
    assert!(quiet.events.is_empty() && quiet.truncated);
    assert_eq!(quiet.start, log.head());
}

#[test]
fn what_the_bounds_dropped_makes_the_batch_truncated() {
    let mut log = EventLog::new(1, 2, 60_000);
    let start = log.head();
    for id in 1..=4 {
        log.append(occurrence(id, json!({})), 100);
    }
    assert_eq!(log.len(), 2);
    let batch = log.read(&ReadRequest::new(Some(&start)), 100, all);
    assert_eq!(ids(&batch), ["e3", "e4"]);
    assert!(batch.truncated);
    // It continues from just before e3: read from there, e3 comes first.
    let resumed = log.read(&ReadRequest::new(Some(&batch.start)), 100, all);
    assert_eq!((ids(&resumed), resumed.truncated), (vec!["e3", "e4"], false));
    assert_eq!(resumed.start, batch.start, "nothing skipped: the start is the cursor given");
    // Retention: an occurrence older than it is dropped by a read too,
    // not only by the next append.
    let aged = log.read(&ReadRequest::new(Some(&start)), 100 + 60_001, all);
    assert!(aged.events.is_empty() && aged.truncated);
    assert_eq!((&aged.cursor, &aged.start), (&log.head(), &log.head()));
    assert!(log.is_empty(), "a read drops what the retention no longer keeps");
}

#[test]
fn max_age_is_a_floor_that_truncates_and_is_ignored_from_now() {
    let mut log = EventLog::new(1, 10, 600_000);
    let start = log.head();
    log.append(occurrence(1, json!({})), 1_000);
    log.append(occurrence(2, json!({})), 9_000);
    let floor = ReadRequest { max_age_ms: Some(5_000), ..ReadRequest::new(Some(&start)) };
    let batch = log.read(&floor, 10_000, all);
    assert_eq!(ids(&batch), ["e2"]);
    assert!(batch.truncated);
    let from_now = log.read(&ReadRequest { max_age_ms: Some(600_000), ..ReadRequest::new(None) }, 10_000, all);
    assert!(from_now.events.is_empty() && !from_now.truncated);
}

#[test]
fn what_the_age_floor_skips_truncates_only_if_the_subscription_wanted_it() {
    let mut log = EventLog::new(1, 10, 600_000);
    let start = log.head();
    log.append(occurrence(1, json!({"from": "b"})), 1_000);
    log.append(occurrence(2, json!({"from": "a"})), 9_000);
    let floor = ReadRequest { max_age_ms: Some(5_000), ..ReadRequest::new(Some(&start)) };
    let from_a = log.read(&floor, 10_000, |o: &Occurrence| o.data["from"] == "a");
    assert_eq!(ids(&from_a), ["e2"]);
    assert!(!from_a.truncated);
    let from_b = log.read(&floor, 10_000, |o: &Occurrence| o.data["from"] == "b");
    assert!(from_b.events.is_empty() && from_b.truncated);
}

#[test]
fn a_cursor_this_log_did_not_issue_starts_from_now_truncated() {
    let mut log = EventLog::new(1, 10, 60_000);
    log.append(occurrence(1, json!({})), 100);
    let other = EventLog::new(2, 10, 60_000).head();
    let ahead = EventLog { head: 98, ..EventLog::new(1, 10, 60_000) }.head();
    for cursor in [other.as_str(), ahead.as_str(), "not a cursor", "", "ZXYx"] {
        let batch = log.read(&ReadRequest::new(Some(cursor)), 100, all);
        assert!(batch.events.is_empty() && batch.truncated, "{cursor:?}");
        assert_eq!(batch.cursor, log.head());
    }
}

#[test]
fn occurrences_the_subscription_does_not_match_are_passed_over() {
    let mut log = EventLog::new(1, 10, 60_000);
    let start = log.head();
    for (id, from) in [(1, "a"), (2, "b"), (3, "a")] {
        log.append(occurrence(id, json!({"from": from})), 100);
    }
    let from_a = |o: &Occurrence| o.data["from"] == "a";
    let batch = log.read(&ReadRequest::new(Some(&start)), 100, from_a);
    assert_eq!(ids(&batch), ["e1", "e3"]);
    assert!(!batch.truncated);
    let none = log.read(&ReadRequest::new(Some(&start)), 100, |o: &Occurrence| o.data.contains_key("to"));
    assert!(none.events.is_empty());
    assert_eq!(none.cursor, log.head());
}

proptest! {
    /// Read in pages of any size from any point, a reader sees every
    /// occurrence appended after its cursor once, in order, while the
    /// bounds drop nothing.
    #[test]
    fn pages_of_any_size_see_each_occurrence_once(before in 0u64..5, after in 0u64..40, page in 1usize..7) {
        let mut log = EventLog::new(9, 100, 60_000);
        for id in 0..before {
            log.append(occurrence(id, Value::Object(Map::new())), 10);
        }
        let mut cursor = log.head();
        for id in before..before + after {
            log.append(occurrence(id, Value::Object(Map::new())), 10);
        }
        let mut seen = Vec::new();
        for _ in 0..=after {
            let batch = log.read(&ReadRequest { max_events: page, ..ReadRequest::new(Some(&cursor)) }, 10, all);
            prop_assert!(!batch.truncated);
            seen.extend(batch.events.iter().map(|e| e.event_id.clone()));
            cursor = batch.cursor;
            if !batch.has_more { break; }
        }
        let expected: Vec<String> = (before..before + after).map(|id| format!("e{id}")).collect();
        prop_assert_eq!(seen, expected);
    }
}

#[test]
fn a_shared_log_reads_a_cursor_from_further_on_as_nothing_yet_and_merges_its_own_gaps() {
    let now = 1_000_000;
    let (mut behind, mut ahead) = (EventLog::shared(3, 10, 60_000), EventLog::shared(3, 10, 60_000));
    let (p1, p2) = (shared_position(now, 0), shared_position(now, 1));
    behind.append_at(p1, occurrence(1, json!({})), now).unwrap();
    for (p, n) in [(p1, 1), (p2, 2)] {
        ahead.append_at(p, occurrence(n, json!({})), now).unwrap();
    }
    let further = ahead.head();
    let quiet = behind.read(&ReadRequest::new(Some(&further)), now, all);
    assert_eq!((quiet.events.len(), quiet.truncated, &quiet.cursor), (0, false, &further), "nothing yet");
    behind.append_at(p2, occurrence(2, json!({})), now).unwrap();
    behind.append_at(shared_position(now, 2), occurrence(3, json!({})), now).unwrap();
    assert_eq!(ids(&behind.read(&ReadRequest::new(Some(&further)), now, all)), ["e3"]);
    let far = behind.cursor_at(shared_position(now + SHARED_AHEAD_MS + 1, 0));
    assert!(behind.read(&ReadRequest::new(Some(&far)), now, all).truncated, "too far ahead: foreign");
    // Its own gaps take odd positions, one for several, never an entry's.
    let before_gap = behind.head();
    behind.gap(now);
    behind.gap(now);
    assert_eq!(behind.entries.len(), 4, "two gaps in a row are one");
    assert!(behind.append_at(shared_position(now, 3), occurrence(4, json!({})), now).is_some());
    let after_gap = behind.read(&ReadRequest::new(Some(&before_gap)), now, all);
    assert_eq!((ids(&after_gap), after_gap.truncated), (vec!["e4"], true));
    behind.forget_before(shared_position(now, 3));
    assert!(behind.read(&ReadRequest::new(Some(&behind.cursor_at(p1))), now, all).truncated);
    // A local log still refuses a cursor ahead of it.
    let mut local = EventLog::new(3, 10, 60_000);
    local.append(occurrence(1, json!({})), now);
    assert!(local.read(&ReadRequest::new(Some(&local.cursor_at(5))), now, all).truncated);
}

#[test]
fn positions_given_by_a_shared_history_may_skip_and_cursors_agree_across_logs() {
    let (mut a, mut b) = (EventLog::new(9, 10, 60_000), EventLog::new(9, 10, 60_000));
    for log in [&mut a, &mut b] {
        log.append_at(1_000, occurrence(1, json!({})), 1).unwrap();
        log.lose_at(1_005, 2);
        log.append_at(2_000, occurrence(2, json!({})), 3).unwrap();
    }
    assert!(a.append_at(1_500, occurrence(3, json!({})), 4).is_none(), "a history only grows");
    let start = a.read(&ReadRequest::new(None), 5, all);
    assert_eq!(start.cursor, b.head(), "the same position, the same cursor");
    let first = a.read(&ReadRequest::new(Some(&a.cursor_at(1_000))), 5, all);
    assert_eq!(ids(&first), ["e2"]);
    assert!(first.truncated, "the loss between them");
    let from_b = b.read(&ReadRequest::new(Some(&a.cursor_at(1_005))), 5, all);
    assert_eq!((ids(&from_b), from_b.truncated), (vec!["e2"], false), "a cursor of one log reads in the other");
    // The bounds drop the oldest: a reader from before them is truncated.
    let mut small = EventLog::new(9, 2, 60_000);
    [10u64, 20, 30].into_iter().enumerate().for_each(|(i, seq)| {
        small.append_at(seq, occurrence(i as u64, json!({})), 1);
    });
    assert!(small.read(&ReadRequest::new(Some(&small.cursor_at(5))), 2, all).truncated);
    let kept = small.read(&ReadRequest::new(Some(&small.cursor_at(10))), 2, all);
    assert_eq!((ids(&kept), kept.truncated), (vec!["e1", "e2"], false));
}
