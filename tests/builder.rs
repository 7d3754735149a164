//! The builder's promises: a clear `Err` naming the key for every invalid
//! setting or item (never a panic), `serverInfo` from the embedding crate,
//! and what a middleware attaches reaching the handler.

use actix_mcp::facts::extensions::Extensions;
use actix_mcp::prelude::*;
use actix_mcp::test::TestClient;
use actix_web::{test as web_test, App, HttpMessage};

fn config_with(edit: impl FnOnce(&mut Config)) -> Config {
    let mut c = Config::default();
    edit(&mut c);
    c
}

#[actix_rt::test]
async fn invalid_settings_are_errors_that_name_the_key() {
    let cases: Vec<(Config, &str)> = vec![
        (config_with(|c| c.mrtr.key = "not base64!".into()), "mrtr.key"),
        (config_with(|c| c.mrtr.key = "c2hvcnQ=".into()), "mrtr.key"),
        (config_with(|c| c.http.bind = "nowhere".into()), "http.bind"),
        (config_with(|c| c.http.path = "mcp".into()), "http.path"),
        (config_with(|c| c.log.level = "loud".into()), "log.level"),
        (config_with(|c| c.hub.redis_url = "http://x".into()), "hub.redis_url"),
    ];
    for (config, key) in cases {
        let redis = key == "hub.redis_url";
        let config = if redis {
            Config {
                hub: actix_mcp::config::HubConfig { backend: actix_mcp::config::HubBackend::Redis, ..config.hub },
                ..config
            }
        } else {
            config
        };
        let e = McpServer::builder(server_info!()).config(config).build().unwrap_err();
        assert!(matches!(e, BuildError::Config(_)), "{key}: {e}");
        assert!(e.to_string().contains(key), "{key}: {e}");
    }
}

#[actix_rt::test]
async fn refused_items_are_reported_together() {
    let tool = |name: &str| Tool::no_args(name.to_owned(), "d", |_ctx| async { Ok("x") });
    let e = McpServer::builder(server_info!())
        .tool(tool("ok"))
        .tool(tool(""))
        .tool(tool("ok"))
        .resource(Resource::text("", "empty", "text/plain", "x"))
        .build()
        .unwrap_err();
    let BuildError::Catalog(problems) = &e else { panic!("{e}") };
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[1].contains("already there"), "{problems:?}");
}

#[test]
fn building_outside_an_actix_system_is_an_error_not_a_panic() {
    let e = McpServer::builder(server_info!()).build().unwrap_err();
    assert!(matches!(e, BuildError::NoSystem), "{e}");
    let e = McpServer::new(
        std::sync::Arc::new(Catalog::new()),
        Config::default(),
        actix_mcp::telemetry::logging::discard(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("actix system"), "{e}");
}

#[actix_rt::test]
async fn running_inside_a_system_is_an_error_not_a_deadlock() {
    let e = McpServer::builder(server_info!()).run_http("127.0.0.1:0").unwrap_err();
    assert!(matches!(e, BuildError::InSystem), "{e}");
}

#[actix_rt::test]
async fn server_info_names_the_embedding_crate() {
    let client = TestClient::new(McpServer::builder(server_info!()).build().unwrap()).await;
    let r = client.request("server/discover", json!({})).await.unwrap();
    let info = &r["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(
        (info["name"].as_str(), info["version"].as_str()),
        (Some(env!("CARGO_PKG_NAME")), Some(env!("CARGO_PKG_VERSION")))
    );
    let named = config_with(|c| c.server.name = "configured".into());
    let client = TestClient::new(McpServer::builder(server_info!()).config(named).build().unwrap()).await;
    let r = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "configured", "the configuration wins");
}

/// A tenant, as an application's middleware would find it.
#[derive(Debug)]
struct Tenant(&'static str);

#[actix_rt::test]
async fn a_middleware_attaches_the_caller_and_the_handler_sees_it() {
    let whoami = Tool::no_args("whoami", "d", |ctx| async move {
        let who = ctx.identity().map_or("anonymous".to_owned(), |i| format!("{} {:?}", i.subject, i.scopes));
        let tenant = ctx.extension::<Tenant>().map_or("-", |t| t.0);
        let agent = ctx.headers().and_then(|h| h.get("user-agent")).unwrap_or("-").to_owned();
        Ok(format!("{who} / {tenant} / {agent}"))
    });
    let server = McpServer::builder(server_info!()).tool(whoami).build().unwrap();
    let app = web_test::init_service(
        App::new()
            .wrap_fn(|req, srv| {
                let mut id = Identity::new("user-7");
                id.scopes = vec!["mcp".into()];
                req.extensions_mut().insert(Extensions::new().with(id).with(Tenant("acme")));
                actix_web::dev::Service::call(srv, req)
            })
            .configure(actix_mcp::transport::http::configure(server)),
    )
    .await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}});
    let req = web_test::TestRequest::post()
        .uri("/mcp")
        .insert_header(("Host", "localhost"))
        .insert_header(("Content-Type", "application/json"))
        .insert_header(("Accept", "application/json, text/event-stream"))
        .insert_header(("MCP-Protocol-Version", "2026-07-28"))
        .insert_header(("Mcp-Method", "tools/call"))
        .insert_header(("Mcp-Name", "whoami"))
        .insert_header(("User-Agent", "probe/1"))
        .set_json(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "whoami", "arguments": {}, "_meta": meta}}))
        .to_request();
    let body: serde_json::Value = web_test::call_and_read_body_json(&app, req).await;
    assert_eq!(body["result"]["content"][0]["text"], "user-7 [\"mcp\"] / acme / probe/1", "{body}");
}
