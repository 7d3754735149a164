//! A bounded history of one event type's occurrences and the cursors that
//! read it.
//!
//! Each occurrence appended gets the next sequence number, or the position
//! a shared history gave it ([`EventLog::append_at`]: increasing, not
//! necessarily consecutive); a cursor is the position just after one
//! (opaque on the wire: Base64 of the log's epoch and the number). The log keeps at most `capacity` occurrences and none
//! older than `retention_ms`. A read from a cursor returns what follows it;
//! whatever was skipped on the way — dropped by the bounds, older than the
//! reader's `maxAgeMs`, or a cursor this log did not issue (another epoch,
//! not a cursor at all) — makes the batch `truncated`, with a fresh cursor,
//! and is never an error.

use std::collections::VecDeque;

use base64::Engine;

use super::Occurrence;

const TAG: &str = "ev1:";

/// The history of one event type.
#[derive(Debug, Clone)]
pub struct EventLog {
    epoch: u64,
    capacity: usize,
    retention_ms: u64,
    /// The newest position (0: nothing yet).
    head: u64,
    /// The newest position the bounds dropped (0: none): a reader before
    /// it missed something.
    dropped: u64,
    entries: VecDeque<Entry>,
}

#[derive(Debug, Clone)]
struct Entry {
    seq: u64,
    at_ms: u64,
    /// `None` marks a loss ([`EventLog::lose`]): a reader that passes it
    /// missed something.
    occurrence: Option<Occurrence>,
}

/// Where and how much to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRequest<'a> {
    /// The position to read after; `None` is from now (nothing is returned).
    pub cursor: Option<&'a str>,
    /// Skip occurrences older than this many milliseconds (ignored from now).
    pub max_age_ms: Option<u64>,
    /// At most this many occurrences.
    pub max_events: usize,
}

impl<'a> ReadRequest<'a> {
    /// Everything after `cursor`, however many.
    pub fn new(cursor: Option<&'a str>) -> Self {
        ReadRequest { cursor, max_age_ms: None, max_events: usize::MAX }
    }
}

/// What a read found.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// The occurrences, oldest first, each with the cursor just after it.
    pub events: Vec<Occurrence>,
    /// The position to read from next: after the last occurrence returned,
    /// or the newest position when everything was read (so it advances
    /// while nothing matches).
    pub cursor: String,
    /// Something between the cursor and what is returned was skipped.
    pub truncated: bool,
    /// More occurrences wait beyond `max_events`: read again at once.
    pub has_more: bool,
    /// The position the batch continues from: the cursor given when nothing
    /// was skipped, else the position just before its first occurrence (the
    /// newest position when it has none). What a stream's
    /// `notifications/events/active` names.
    pub start: String,
}

impl EventLog {
    /// An empty log keeping at most `capacity` occurrences (at least one)
    /// for at most `retention_ms`. `epoch` tells this log's cursors from
    /// another's: give each log (and each run of the program) its own.
    pub fn new(epoch: u64, capacity: usize, retention_ms: u64) -> Self {
        EventLog { epoch, capacity: capacity.max(1), retention_ms, head: 0, dropped: 0, entries: VecDeque::new() }
    }

    /// How many occurrences it keeps at most, and for how long (ms).
    pub fn bounds(&self) -> (usize, u64) {
        (self.capacity, self.retention_ms)
    }

    /// The log's epoch (what tells its cursors from another log's).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Appends an occurrence logged at `now_ms`, drops what the bounds no
    /// longer keep, and returns the occurrence with its cursor (what a
    /// stream pushes).
    pub fn append(&mut self, occurrence: Occurrence, now_ms: u64) -> Occurrence {
        self.push(self.head + 1, occurrence, now_ms)
    }

    /// Appends an occurrence at position `seq`, given by a history shared
    /// with other logs (so that every log of it has the same cursors), at
    /// `now_ms`; `None` for a position not after the newest (a history only
    /// grows: seen already).
    pub fn append_at(&mut self, seq: u64, occurrence: Occurrence, now_ms: u64) -> Option<Occurrence> {
        (seq > self.head).then(|| self.push(seq, occurrence, now_ms))
    }

    fn push(&mut self, seq: u64, mut occurrence: Occurrence, now_ms: u64) -> Occurrence {
        self.head = seq;
        occurrence.cursor = Some(self.cursor_at(seq));
        self.entries.push_back(Entry { seq, at_ms: now_ms, occurrence: Some(occurrence.clone()) });
        self.evict(now_ms);
        occurrence
    }

    /// Records, at `now_ms`, that occurrences were lost here (an upstream
    /// that dropped some, an outage): every reader whose cursor is before
    /// this point gets its next batch `truncated`, and one from after it
    /// does not. The loss takes a position of its own, as an occurrence
    /// would.
    pub fn lose(&mut self, now_ms: u64) {
        self.lose_at(self.head + 1, now_ms);
    }

    /// Records a loss at position `seq` of a shared history (ignored when
    /// not after the newest position).
    pub fn lose_at(&mut self, seq: u64, now_ms: u64) {
        if seq <= self.head {
            return;
        }
        self.head = seq;
        self.entries.push_back(Entry { seq, at_ms: now_ms, occurrence: None });
        self.evict(now_ms);
    }

    /// Drops what the bounds no longer keep at `now_ms`.
    fn evict(&mut self, now_ms: u64) {
        let oldest_kept = now_ms.saturating_sub(self.retention_ms);
        while self.entries.len() > self.capacity || self.entries.front().is_some_and(|e| e.at_ms < oldest_kept) {
            if let Some(gone) = self.entries.pop_front() {
                self.dropped = self.dropped.max(gone.seq);
            }
        }
    }

    /// The newest position: reading from it returns only what comes later.
    pub fn head(&self) -> String {
        self.cursor_at(self.head)
    }

    /// How many occurrences the log holds now.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the log holds no occurrence.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The occurrences after `request.cursor` for which `matches` holds (a
    /// subscription's arguments), at `now_ms` (what the retention no longer
    /// keeps at that time is dropped first). An occurrence the `maxAgeMs`
    /// floor skips makes the batch truncated only if it matches.
    pub fn read(&mut self, request: &ReadRequest<'_>, now_ms: u64, matches: impl Fn(&Occurrence) -> bool) -> Batch {
        self.evict(now_ms);
        let head = self.head;
        let empty = |truncated| Batch {
            events: Vec::new(),
            cursor: self.head(),
            truncated,
            has_more: false,
            start: self.head(),
        };
        let Some(cursor) = request.cursor else {
            return empty(false);
        };
        let after = match self.decode(cursor) {
            Some(after) if after <= head => after,
            // Not a position of this log: what the reader missed is unknown.
            _ => return empty(true),
        };
        let mut truncated = after < self.dropped;
        let floor = request.max_age_ms.map_or(0, |age| now_ms.saturating_sub(age));
        let first = self.entries.partition_point(|e| e.seq <= after);
        let (mut events, mut position, mut has_more) = (Vec::new(), head, false);
        for entry in self.entries.iter().skip(first) {
            let Some(occurrence) = &entry.occurrence else {
                // A loss: what follows is read, and the batch says a gap.
                truncated = true;
                continue;
            };
            if entry.at_ms < floor {
                truncated |= matches(occurrence);
            } else if matches(occurrence) {
                if events.len() == request.max_events {
                    has_more = true;
                    break;
                }
                events.push(occurrence.clone());
                position = entry.seq;
            }
        }
        if !has_more {
            position = head;
        }
        let start = match events.first().and_then(|e| e.cursor.as_deref()).and_then(|c| self.decode(c)) {
            _ if !truncated => self.cursor_at(after),
            Some(first) => self.cursor_at(first - 1),
            None => self.head(),
        };
        Batch { events, cursor: self.cursor_at(position), truncated, has_more, start }
    }

    fn cursor_at(&self, seq: u64) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{TAG}{}:{seq}", self.epoch))
    }

    /// The sequence number a cursor of this log stands after; `None` for
    /// anything else.
    fn decode(&self, cursor: &str) -> Option<u64> {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(cursor).ok()?;
        let text = std::str::from_utf8(&bytes).ok()?;
        let (epoch, seq) = text.strip_prefix(TAG)?.split_once(':')?;
        (epoch.parse::<u64>().ok()? == self.epoch).then_some(())?;
        seq.parse().ok()
    }
}

#[cfg(test)]
mod tests {
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
}
