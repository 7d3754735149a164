//! Wire types, one file per chapter of the 2026-07-28 specification.
//!
//! Structs use the spec's camelCase field names; optional fields are skipped
//! when absent so that encoded results validate against the schema.

pub mod annotations;
pub mod capabilities;
pub mod completion;
pub mod content;
pub mod discover;
pub mod logging;
pub mod mrtr;
pub mod progress;
pub mod prompts;
pub mod resources;
pub mod result;
pub mod role;
pub mod tools;

pub use annotations::Annotations;
pub use capabilities::{ClientCapabilities, JsonObject, ServerCapabilities};
pub use content::{Content, ResourceContents};
pub use discover::{DiscoverResult, Implementation};
pub use logging::LoggingLevel;
pub use result::{CacheHints, CacheScope, ResultType};
