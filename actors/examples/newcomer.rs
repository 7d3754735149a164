//! What a newcomer writes first: an echo tool, a tool without arguments, a
//! tool that adds tools, a slow tool that stops when cancelled, a resource and
//! a prompt. `cargo run -p actix-mcp --example newcomer -- --stdio` (or `--http ADDR`).
use std::time::Duration;

use actix_mcp::prelude::*;

/// Echoes the text back.
#[derive(Deserialize, JsonSchema)]
pub struct Echo {
    /// What to echo.
    pub text: String,
}

/// Adds a tool that greets, under the given name.
#[derive(Deserialize, JsonSchema)]
pub struct NewTool {
    /// Name of the new tool.
    pub name: String,
}

/// Counts to `to`, a tenth of a second per step, reporting progress.
#[derive(Deserialize, JsonSchema)]
pub struct Count {
    /// How far to count.
    pub to: u32,
}

/// The server, for `main` and the tests.
pub fn server() -> McpServerBuilder {
    McpServer::builder(server_info!())
        .tool(Tool::new("echo", "", |a: Echo, _ctx| async move { Ok(a.text) }))
        .tool(Tool::no_args("hello", "Says hello", |_ctx| async { Ok("Hello!") }))
        .tool(Tool::new("add_tool", "", |a: NewTool, ctx| async move {
            let greeter = Tool::no_args(a.name.clone(), "Greets", |_ctx| async { Ok("Hi from a new tool") });
            Ok(ctx.catalog().add_tool(greeter).map(|()| format!("added {}", a.name)))
        }))
        .tool(Tool::new("count", "", |a: Count, ctx| async move {
            for i in 0..a.to {
                ctx.progress(f64::from(i), Some(f64::from(a.to)), None).await;
                ctx.sleep(Duration::from_millis(100)).await?;
            }
            Ok(format!("counted to {}", a.to))
        }))
        .resource(Resource::reading("memo://today", "today", "text/plain", |_ctx| async {
            Ok(format!("Today is {:?}.", std::time::SystemTime::now()))
        }))
        .prompt(Prompt::typed("summarize", "Asks for a summary", |a: Echo, _ctx| async move {
            Ok(format!("Summarize this in one sentence:\n{}", a.text))
        }))
}

fn main() -> Result<(), BuildError> {
    server().run()
}
