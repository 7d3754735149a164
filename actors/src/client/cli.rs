//! `actix-mcp client`: talks to any MCP server from the command line and
//! prints what it answers — JSON, one document per answer (one line per
//! notification for `listen`), or a readable form on a terminal.

use std::io::IsTerminal;
use std::time::Duration;

use clap::{Args, Subcommand};
use futures::StreamExt;
use serde_json::{json, Value};

use super::{Client, ClientError, ClientOptions, EventStream, EventSubscription, Polled, SubscriptionFilter};

/// Where the server is and how to speak to it.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// The server's Streamable HTTP URL (or `--stdio`).
    #[arg(value_name = "URL", required_unless_present = "stdio")]
    pub url: Option<String>,
    /// Start the server with this command line (`sh -c`) and talk over stdio.
    #[arg(long, value_name = "CMD", conflicts_with = "url")]
    pub stdio: Option<String>,
    /// Speak only this protocol version (default: `server/discover`, else `initialize`).
    #[arg(long, value_name = "VERSION")]
    pub protocol_version: Option<String>,
    /// Bearer token sent over HTTP.
    #[arg(long, value_name = "TOKEN", env = "ACTIX_MCP_CLIENT_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// An HTTP header, `NAME: VALUE` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Time limit of each request (the handshake too), in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    pub timeout_ms: u64,
    /// The largest message read from the server, in bytes (a stdio line, an
    /// HTTP body, one SSE event).
    #[arg(long, value_name = "BYTES", default_value_t = super::DEFAULT_MAX_MESSAGE_BYTES)]
    pub max_message_bytes: usize,
    /// What to ask.
    #[command(subcommand)]
    pub action: ClientAction,
}

/// What the client asks the server.
#[derive(Debug, Clone, Subcommand)]
pub enum ClientAction {
    /// The server's version, identity, capabilities and instructions.
    Discover,
    /// Every tool.
    Tools,
    /// Every resource and resource template.
    Resources,
    /// Every prompt.
    Prompts,
    /// Calls a tool with JSON arguments (default `{}`).
    Call {
        /// The tool.
        name: String,
        /// Its arguments, a JSON object.
        arguments: Option<String>,
    },
    /// Reads a resource.
    Read {
        /// Its URI.
        uri: String,
    },
    /// Gets a prompt with JSON arguments (default `{}`).
    Prompt {
        /// The prompt.
        name: String,
        /// Its arguments, a JSON object.
        arguments: Option<String>,
    },
    /// Prints change notifications as they come, one JSON line each.
    Listen {
        /// Tool list changes.
        #[arg(long)]
        tools: bool,
        /// Prompt list changes.
        #[arg(long)]
        prompts: bool,
        /// Resource list changes.
        #[arg(long)]
        resources: bool,
        /// Updates of this resource (repeatable).
        #[arg(long = "resource", value_name = "URI")]
        resource_subscriptions: Vec<String>,
        /// Event type list changes (the Events extension).
        #[arg(long)]
        events: bool,
        /// Exit after this many notifications.
        #[arg(long, value_name = "N")]
        count: Option<usize>,
    },
    /// The Events extension: event types, polls, streams.
    Events {
        /// What to do.
        #[command(subcommand)]
        action: EventsAction,
    },
}

/// What `client events` does.
#[derive(Debug, Clone, Subcommand)]
pub enum EventsAction {
    /// Every event type.
    List,
    /// One poll of an event type (from now unless `--cursor`).
    Poll {
        /// What to poll and how.
        #[command(flatten)]
        subscription: SubscriptionArgs,
        /// Let the server hold the poll this long for an occurrence (a poll
        /// from a `--cursor`; one from now answers at once).
        #[arg(long, value_name = "MS")]
        wait_ms: Option<u64>,
    },
    /// Polls for ever as the server paces it, one JSON line per occurrence
    /// (and `{"truncated": true, "cursor": …}` where some were skipped).
    Watch {
        /// What to poll and how.
        #[command(flatten)]
        subscription: SubscriptionArgs,
        /// The least wait between polls (the server's `nextPollMs` if longer).
        #[arg(long, value_name = "MS", default_value_t = 1000)]
        floor_ms: u64,
    },
    /// Opens a push stream, one JSON line per notification (the first is
    /// `active`); a subscription the server ends is an error.
    Stream {
        /// What to stream and how.
        #[command(flatten)]
        subscription: SubscriptionArgs,
    },
}

/// One subscription on the command line.
#[derive(Debug, Clone, Args)]
pub struct SubscriptionArgs {
    /// The event type.
    pub name: String,
    /// Its arguments, a JSON object.
    pub arguments: Option<String>,
    /// Where to start (a cursor an earlier answer gave); from now if absent.
    #[arg(long)]
    pub cursor: Option<String>,
    /// Exit after this many occurrences (not `poll`: one poll).
    #[arg(long, value_name = "N")]
    pub count: Option<usize>,
}

impl SubscriptionArgs {
    fn subscription(&self) -> Result<EventSubscription, ClientError> {
        let arguments = json_arg(self.arguments.as_deref()).map_err(ClientError::Input)?;
        Ok(EventSubscription { name: self.name.clone(), arguments, cursor: self.cursor.clone() })
    }
}

impl ClientArgs {
    fn options(&self) -> Result<ClientOptions, String> {
        let mut o = ClientOptions::new("actix-mcp-client", env!("CARGO_PKG_VERSION"))
            .timeout(Duration::from_millis(self.timeout_ms))
            .max_message_bytes(self.max_message_bytes);
        if let Some(v) = &self.protocol_version {
            let parsed =
                mcp_protocol::ProtocolVersion::parse(v).ok_or_else(|| format!("unknown protocol version {v:?}"))?;
            o = o.pin(parsed);
        }
        for h in &self.headers {
            let (k, v) = h.split_once(':').ok_or_else(|| format!("--header {h:?} is not `NAME: VALUE`"))?;
            o = o.header(k.trim(), v.trim());
        }
        if let Some(t) = &self.token {
            o = o.bearer(t.clone());
        }
        Ok(o)
    }
}

fn json_arg(text: Option<&str>) -> Result<serde_json::Map<String, Value>, String> {
    match text {
        None => Ok(serde_json::Map::new()),
        Some(t) => match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(object)) => Ok(object),
            Ok(_) => Err(format!("arguments must be a JSON object: {t}")),
            Err(e) => Err(format!("arguments are not JSON ({e}): {t}")),
        },
    }
}

/// Prints a JSON answer: pretty on a terminal, one line otherwise.
fn print(v: &Value) {
    let text = if std::io::stdout().is_terminal() { serde_json::to_string_pretty(v) } else { serde_json::to_string(v) };
    println!("{}", text.expect("JSON"));
}

/// Runs one client command; the error is a sentence for stderr.
pub fn run(args: ClientArgs) -> Result<(), String> {
    let options = args.options()?;
    actix_rt::System::new().block_on(async move {
        let client = match (&args.stdio, &args.url) {
            (Some(cmd), _) => Client::spawn_shell(cmd, options).await,
            (None, Some(url)) => Client::connect(url, options).await,
            (None, None) => return Err("give a URL or --stdio CMD".to_owned()),
        }
        .map_err(|e| e.to_string())?;
        let outcome = act(&client, &args.action).await;
        client.close().await;
        outcome.map_err(|e| e.to_string())
    })
}

async fn act(client: &Client, action: &ClientAction) -> Result<(), ClientError> {
    match action {
        ClientAction::Discover => {
            let s = client.discover().await?;
            print(&json!({"protocolVersion": s.version, "stateless": s.stateless, "serverInfo": s.info,
                "capabilities": s.capabilities, "instructions": s.instructions, "supportedVersions": s.supported_versions}));
        }
        ClientAction::Tools => print(&json!({ "tools": to_json(&client.list_tools().await?) })),
        ClientAction::Resources => {
            let resources = client.list_resources().await?;
            let templates = client.list_resource_templates().await.unwrap_or_default();
            print(&json!({ "resources": to_json(&resources), "resourceTemplates": to_json(&templates) }));
        }
        ClientAction::Prompts => print(&json!({ "prompts": to_json(&client.list_prompts().await?) })),
        ClientAction::Call { name, arguments } => {
            let args = json_arg(arguments.as_deref()).map_err(ClientError::Input)?;
            match client.call_tool(name, args).await {
                Ok(r) => print(&to_json(&r)),
                Err(ClientError::Tool(r)) => {
                    print(&to_json(&r));
                    return Err(ClientError::Tool(r));
                }
                Err(e) => return Err(e),
            }
        }
        ClientAction::Read { uri } => print(&json!({ "contents": to_json(&client.read_resource(uri).await?) })),
        ClientAction::Prompt { name, arguments } => {
            let args = json_arg(arguments.as_deref()).map_err(ClientError::Input)?;
            print(&to_json(&client.get_prompt(name, args).await?));
        }
        ClientAction::Listen { tools, prompts, resources, resource_subscriptions, events, count } => {
            let filter = SubscriptionFilter {
                tools_list_changed: *tools,
                prompts_list_changed: *prompts,
                resources_list_changed: *resources,
                events_list_changed: *events,
                resource_subscriptions: resource_subscriptions.clone(),
                ..SubscriptionFilter::default()
            };
            let mut stream = client.listen(filter).await?;
            eprintln!("listening: {}", serde_json::to_string(stream.honored()).expect("JSON"));
            let mut seen = 0;
            while let Some(n) = stream.next().await {
                println!("{}", json!({"method": n.method, "params": n.params}));
                seen += 1;
                if count.is_some_and(|c| seen >= c) {
                    break;
                }
            }
        }
        ClientAction::Events { action } => events(client, action).await?,
    }
    Ok(())
}

async fn events(client: &Client, action: &EventsAction) -> Result<(), ClientError> {
    match action {
        EventsAction::List => print(&json!({ "events": to_json(&client.list_events().await?) })),
        EventsAction::Poll { subscription, wait_ms } => {
            let wait = wait_ms.map(Duration::from_millis);
            print(&to_json(&client.poll_events(&subscription.subscription()?, wait).await?));
        }
        EventsAction::Watch { subscription, floor_ms } => {
            let floor = Duration::from_millis(*floor_ms);
            let mut polled = std::pin::pin!(client.poll_loop(subscription.subscription()?, floor));
            let mut seen = 0;
            while seen < subscription.count.unwrap_or(usize::MAX) {
                match polled.next().await {
                    Some(Ok(Polled::Event(occurrence))) => {
                        println!("{}", to_json(&occurrence));
                        seen += 1;
                    }
                    Some(Ok(Polled::Gap { cursor })) => println!("{}", json!({"truncated": true, "cursor": cursor})),
                    Some(Err(e)) => return Err(e),
                    None => break,
                }
            }
        }
        EventsAction::Stream { subscription } => {
            let mut stream = client.stream_events(&subscription.subscription()?).await?;
            println!("{}", json!({"method": mcp_protocol::events::notify::ACTIVE, "params": stream.active()}));
            let mut seen = 0;
            while seen < subscription.count.unwrap_or(usize::MAX) {
                let Some(n) = stream.next().await else { break };
                println!("{}", json!({"method": n.method, "params": n.params}));
                if EventStream::occurrence(&n).is_some() {
                    seen += 1;
                }
                if EventStream::ends(&n) {
                    let why = n.params["error"]["message"].as_str().unwrap_or("no reason given").to_owned();
                    return Err(ClientError::transport(format!("the server ended the subscription: {why}")));
                }
            }
        }
    }
    Ok(())
}

/// Any serializable answer as JSON.
fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or_default()
}
