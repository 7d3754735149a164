//! Your own MCP server: a typed tool, a tool without arguments, a resource and a prompt.
use actix_mcp::prelude::*;

/// Adds two numbers.
#[derive(Deserialize, JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

#[derive(Deserialize, JsonSchema)]
struct Topic {
    /// What the haiku is about.
    topic: String,
}

/// The server, for `main` and the tests.
pub fn server() -> McpServerBuilder {
    let now = |_ctx| async { Ok(format!("{:?}", std::time::SystemTime::now())) };
    let haiku = |t: Topic, _ctx| async move { Ok(format!("Write a haiku about {}.", t.topic)) };
    McpServer::builder(server_info!())
        .tool(Tool::new("add", "", |x: Add, _ctx| async move { Ok(format!("{}", x.a + x.b)) }))
        .tool(Tool::no_args("now", "The server's clock", now))
        .resource(Resource::text("memo://motd", "motd", "text/plain", "Be kind."))
        .prompt(Prompt::typed("haiku", "Writes a haiku", haiku))
}

fn main() -> Result<(), BuildError> {
    server().run()
}
