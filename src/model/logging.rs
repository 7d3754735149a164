//! Logging (spec: server/utilities/logging): levels and `notifications/message`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Syslog severities, ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug detail.
    Debug,
    /// Informational.
    Info,
    /// Normal but significant.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// System is unusable.
    Emergency,
}

/// Params of `notifications/message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogMessage {
    /// Severity.
    pub level: LoggingLevel,
    /// Optional logger name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON-serializable data.
    pub data: Value,
}

/// The method of a log notification.
pub const LOG_MESSAGE_METHOD: &str = "notifications/message";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered() {
        assert!(LoggingLevel::Debug < LoggingLevel::Info);
        assert!(LoggingLevel::Warning < LoggingLevel::Emergency);
        let l: LoggingLevel = serde_json::from_str("\"notice\"").unwrap();
        assert_eq!(l, LoggingLevel::Notice);
    }
}
