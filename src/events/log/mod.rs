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
    /// Its positions are a shared history's ([`shared_position`]).
    shared: bool,
    entries: VecDeque<Entry>,
}

/// How far ahead of a shared log's newest position (in ms of the shared
/// history's clock) a cursor may be and still be taken for one minted by
/// another log that read further: what it will read once it gets there.
pub const SHARED_AHEAD_MS: u64 = 10_000;

/// The position of a shared history's entry `seq` of millisecond `ms`
/// (even; a log's own loss takes the odd one after its newest, so that it
/// never stands where an entry of the shared history will).
pub fn shared_position(ms: u64, seq: u64) -> u64 {
    (ms << 21) | (seq.min((1 << 20) - 1) << 1)
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
        EventLog {
            epoch,
            capacity: capacity.max(1),
            retention_ms,
            head: 0,
            dropped: 0,
            shared: false,
            entries: VecDeque::new(),
        }
    }

    /// An empty log mirroring a shared history: positions from
    /// [`shared_position`], and a cursor up to [`SHARED_AHEAD_MS`] ahead of
    /// the newest read as "nothing yet" (another log read further), not as
    /// a foreign one.
    pub fn shared(epoch: u64, capacity: usize, retention_ms: u64) -> Self {
        EventLog { shared: true, ..Self::new(epoch, capacity, retention_ms) }
    }

    /// Marks a gap here only: a shared log's at the odd position after its
    /// newest (consecutive gaps are one), another's as [`EventLog::lose`].
    pub fn gap(&mut self, now_ms: u64) {
        match self.shared {
            true => self.lose_at(self.head | 1, now_ms),
            false => self.lose(now_ms),
        }
    }

    /// Readers from before position `seq` missed something (what the
    /// shared history held before what this log mirrored).
    pub fn forget_before(&mut self, seq: u64) {
        self.dropped = self.dropped.max(seq.saturating_sub(1));
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
            // Read further by another log of the shared history: nothing
            // yet, and nothing missed.
            Some(after) if self.shared && after >> 21 <= now_ms + SHARED_AHEAD_MS => {
                let at = cursor.to_owned();
                return Batch { events: Vec::new(), cursor: at.clone(), truncated: false, has_more: false, start: at };
            }
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
mod tests;
