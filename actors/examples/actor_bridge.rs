//! Your own actors and the subscription hub: an `Auditor` actor subscribes to
//! hub events with a filter (as a listen stream would, bounded by its
//! mailbox) and keeps a log of them; a `Janitor` actor publishes a change
//! through the server's notifier, which reaches every listener — streams and
//! actors alike. `cargo run -p actix-mcp --example actor_bridge`.
use std::time::Duration;

use actix::prelude::*;
use actix_mcp::hub::bridge::HubEvent;
use actix_mcp::hub::Publish;
use actix_mcp::prelude::*;
use actix_mcp::protocol::subscription::{Event, SubscriptionFilter};

/// Keeps a log of the hub events it hears.
#[derive(Default)]
pub struct Auditor {
    /// What it heard, in order.
    pub heard: Vec<String>,
}

impl Actor for Auditor {
    type Context = Context<Self>;
}

impl Handler<HubEvent> for Auditor {
    type Result = ();
    fn handle(&mut self, event: HubEvent, _: &mut Context<Self>) {
        let line = match event {
            HubEvent::Event(Event::ResourceUpdated { uri }) => format!("updated {uri}"),
            HubEvent::Event(e) => format!("{e:?}"),
            HubEvent::Ended(why) => format!("ended: {why}"),
            // `HubEvent` may gain variants.
            other => format!("{other:?}"),
        };
        println!("auditor: {line}");
        self.heard.push(line);
    }
}

/// What the auditor has heard so far.
#[derive(Message)]
#[rtype(result = "Vec<String>")]
pub struct Heard;

impl Handler<Heard> for Auditor {
    type Result = Vec<String>;
    fn handle(&mut self, _: Heard, _: &mut Context<Self>) -> Vec<String> {
        self.heard.clone()
    }
}

/// Publishes that `uri` changed, through the server's notifier.
pub struct Janitor {
    /// The hub's publishing end.
    pub notifier: Recipient<Publish>,
    /// The resource it keeps tidy.
    pub uri: String,
}

impl Actor for Janitor {
    type Context = Context<Self>;
    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(Duration::from_secs(2), |act, _| {
            act.notifier.do_send(Publish::local(Event::ResourceUpdated { uri: act.uri.clone() }));
        });
    }
}

/// The server, for `main` and the tests.
pub fn server() -> McpServerBuilder {
    McpServer::builder(server_info!()).resource(Resource::text("memo://board", "board", "text/plain", "Tidy."))
}

/// The filter the auditor subscribes with.
pub fn audit_filter() -> SubscriptionFilter {
    SubscriptionFilter {
        tools_list_changed: true,
        resource_subscriptions: vec!["memo://board".into()],
        ..Default::default()
    }
}

#[actix_web::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = server().build()?;
    let auditor = Auditor::default().start();
    let _subscription = server.subscribe(audit_filter(), auditor.recipient()).await?;
    Janitor { notifier: server.notifier(), uri: "memo://board".into() }.start();
    serve_http(server).await?;
    Ok(())
}
