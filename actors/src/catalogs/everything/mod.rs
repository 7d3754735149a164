//! The "everything" catalog: the fixture the official MCP conformance suite
//! drives (tool, resource and prompt names and replies as the suite expects),
//! plus a few tools for diagnostics (`sleep`, `test_custom_header`) and a
//! skill (the Skills extension), a view (MCP Apps) and event types (the
//! Events extension).

mod apps;
mod client_input;
mod content;
mod events;
mod helpers;
mod input;
mod other;
mod prompts;
mod resources;
mod skills;
mod streaming;
mod tasks;
mod triggers;
#[cfg(feature = "webhooks")]
mod webhook_controls;

pub use events::TestControls;
pub use helpers::{wav_bytes, EchoArgs, SleepArgs, PNG_BASE64};

use crate::catalog::{Catalog, CatalogError};

/// Builds the catalog.
pub fn catalog() -> Catalog {
    let c = Catalog::new();
    add_all(&c).expect("the fixture's names are valid and distinct");
    c
}

fn add_all(c: &Catalog) -> Result<(), CatalogError> {
    content::tools(c)?;
    streaming::tools(c)?;
    streaming::capability_tools(c)?;
    other::tools(c)?;
    other::schema_tool(c)?;
    triggers::triggers(c)?;
    input::single_round(c)?;
    input::multi_round(c)?;
    client_input::sampling_and_roots(c)?;
    client_input::elicitation(c)?;
    resources::resources(c)?;
    prompts::simple(c)?;
    prompts::with_media(c)?;
    skills::skills(c)?;
    apps::views(c)?;
    events::event_types(c)?;
    #[cfg(feature = "webhooks")]
    webhook_controls::controls(c)?;
    tasks::tools(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wav_is_well_formed() {
        let w = wav_bytes();
        assert_eq!(&w[..4], b"RIFF");
        assert_eq!(u32::from_le_bytes(w[4..8].try_into().unwrap()) as usize, w.len() - 8);
        assert_eq!(&w[8..12], b"WAVE");
    }

    #[test]
    fn lists_the_fixture_names() {
        let c = catalog();
        let tools: Vec<String> = c.list_tools(None, 100).unwrap().page.items.into_iter().map(|t| t.name).collect();
        for name in
            ["test_simple_text", "test_tool_with_progress", "test_missing_capability", "json_schema_2020_12_tool"]
        {
            assert!(tools.iter().any(|t| t == name), "{name} not listed");
        }
        assert!(c.resource("test://nonexistent-resource-for-conformance-testing").is_none());
        assert!(c.match_template("test://template/123/data").is_some());
    }
}
