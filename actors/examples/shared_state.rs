//! Shared state: one value per type, given to the builder once and read by
//! every handler with `ctx.state::<T>()?` (an `Arc`, no cloning in closures).
//! `cargo run -p actix-mcp --example shared_state -- --http 127.0.0.1:8080`.
use std::collections::BTreeMap;
use std::sync::Mutex;

use actix_mcp::prelude::*;

/// The application's state: notes by title.
#[derive(Default)]
pub struct Notes(pub Mutex<BTreeMap<String, String>>);

/// Saves a note.
#[derive(Deserialize, JsonSchema)]
pub struct Save {
    /// Its title.
    pub title: String,
    /// Its text.
    pub text: String,
}

/// Reads a note.
#[derive(Deserialize, JsonSchema)]
pub struct Read {
    /// Its title.
    pub title: String,
}

/// The server, for `main` and the tests.
pub fn server() -> McpServerBuilder {
    McpServer::builder(server_info!())
        .state(Notes::default())
        .tool(Tool::new("save", "", |a: Save, ctx| async move {
            let notes = ctx.state::<Notes>()?;
            let count = {
                let mut map = notes.0.lock().unwrap_or_else(|p| p.into_inner());
                map.insert(a.title, a.text);
                map.len()
            };
            Ok(format!("{count} notes"))
        }))
        .tool(Tool::new("read", "", |a: Read, ctx| async move {
            let notes = ctx.state::<Notes>()?;
            let found = notes.0.lock().unwrap_or_else(|p| p.into_inner()).get(&a.title).cloned();
            // A missing note is a tool execution error the model can read.
            Ok(found.ok_or_else(|| format!("no note titled {:?}", a.title)))
        }))
}

fn main() -> Result<(), BuildError> {
    server().run()
}
