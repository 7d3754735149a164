//! Progress (spec: basic/patterns/progress): `notifications/progress`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The method of a progress notification.
pub const PROGRESS_METHOD: &str = "notifications/progress";

/// Params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    /// The token from the request's `_meta.progressToken` (string or number).
    pub progress_token: Value,
    /// Progress so far; increases with each notification.
    pub progress: f64,
    /// Total, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// Optional human-readable message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
