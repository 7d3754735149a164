//! [`Role`]: who speaks a message, or whom a block is for.

use serde::{Deserialize, Serialize};

/// Who speaks a message (or, in annotations, whom a block is for).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}
