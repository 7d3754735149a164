//! A slog drain that keeps every record (its level, message and key-value
//! pairs as text), for tests that check what the operator is told.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// One log record.
#[derive(Debug, Clone)]
pub struct Line {
    pub level: slog::Level,
    pub msg: String,
    pub kv: BTreeMap<String, String>,
}

impl Line {
    /// The value of `key`, or "" when absent.
    pub fn get(&self, key: &str) -> &str {
        self.kv.get(key).map(String::as_str).unwrap_or("")
    }
}

/// Every record logged through [`Logs::logger`].
#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<Line>>>);

impl Logs {
    /// A logger into this store.
    pub fn logger(&self) -> slog::Logger {
        slog::Logger::root(slog::Drain::fuse(self.clone()), slog::o!())
    }

    /// The records so far.
    pub fn lines(&self) -> Vec<Line> {
        self.0.lock().unwrap().clone()
    }

    /// The records whose message contains `needle`.
    pub fn with_msg(&self, needle: &str) -> Vec<Line> {
        self.lines().into_iter().filter(|l| l.msg.contains(needle)).collect()
    }

    /// Everything logged, as text (to check that something is never logged).
    pub fn text(&self) -> String {
        self.lines().iter().map(|l| format!("{} {:?}\n", l.msg, l.kv)).collect()
    }
}

struct Collect(BTreeMap<String, String>);

impl slog::Serializer for Collect {
    fn emit_arguments(&mut self, key: slog::Key, val: &std::fmt::Arguments<'_>) -> slog::Result {
        self.0.entry(key.to_string()).or_insert_with(|| val.to_string());
        Ok(())
    }
}

impl slog::Drain for Logs {
    type Ok = ();
    type Err = slog::Never;

    fn log(&self, record: &slog::Record<'_>, values: &slog::OwnedKVList) -> Result<(), slog::Never> {
        let mut kv = Collect(BTreeMap::new());
        slog::KV::serialize(&record.kv(), record, &mut kv).ok();
        slog::KV::serialize(values, record, &mut kv).ok();
        let line = Line { level: record.level(), msg: record.msg().to_string(), kv: kv.0 };
        self.0.lock().unwrap().push(line);
        Ok(())
    }
}
