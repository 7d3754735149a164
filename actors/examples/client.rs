//! A client of any MCP server: connect, list the tools, start listening for
//! changes to the list, call one tool, then print each change.
//!
//!     cargo run --example client -- http://127.0.0.1:8080/mcp echo '{"text": "hi"}'
use actix_mcp::client::{Client, ClientOptions, SubscriptionFilter};
use futures::StreamExt;

#[actix_rt::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| "http://127.0.0.1:8080/mcp".into());
    let tool = args.next().unwrap_or_else(|| "echo".into());
    let arguments: serde_json::Value =
        serde_json::from_str(&args.next().unwrap_or_else(|| r#"{"text": "hello"}"#.into()))?;

    let client = Client::connect(&url, ClientOptions::new("example-client", "1.0")).await?;
    let server = client.server();
    println!("{} speaks {}", server.name().unwrap_or("the server"), server.version);
    for t in client.list_tools().await? {
        println!("tool {}: {}", t.name, t.description);
    }
    let mut changes = client.listen(SubscriptionFilter { tools_list_changed: true, ..Default::default() }).await?;
    let result = client.call_tool(&tool, arguments).await?;
    println!("{tool}: {}", serde_json::to_string(&result.content)?);
    while let Some(change) = changes.next().await {
        println!("changed: {}", change.method);
    }
    Ok(())
}
