//! Completion (spec: server/utilities/completion).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What is being completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum CompletionRef {
    /// A prompt argument.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt name.
        name: String,
    },
    /// A resource template variable.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The template.
        uri: String,
    },
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionArgument {
    /// Argument name.
    pub name: String,
    /// The partial value.
    pub value: String,
}

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteParams {
    /// The prompt or template.
    #[serde(rename = "ref")]
    pub reference: CompletionRef,
    /// The argument.
    pub argument: CompletionArgument,
    /// Already-resolved arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
}

/// The `completion` member of the result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// Total available, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more exist than were sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// The spec's cap on values per response.
    pub const MAX_VALUES: usize = 100;

    /// Builds a completion from candidates, capped at 100 with `total`/`hasMore` set.
    pub fn from_candidates(mut values: Vec<String>) -> Self {
        let total = values.len();
        values.truncate(Self::MAX_VALUES);
        Completion { has_more: Some(total > values.len()), total: Some(total as u64), values }
    }
}
