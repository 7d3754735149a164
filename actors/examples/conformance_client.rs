//! The client as the official conformance suite drives it:
//!
//! ```text
//! conformance client --command "target/debug/examples/conformance_client" --scenario tools_call
//! ```
//!
//! The suite appends the server URL and names the scenario in
//! `MCP_CONFORMANCE_SCENARIO`, the protocol version in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` and any extra facts (JSON) in
//! `MCP_CONFORMANCE_CONTEXT`. Each scenario is what an application would
//! do; the suite checks what went over the wire. Exits non-zero on failure.

use std::time::Duration;

use actix_mcp::client::oauth::{identity_assertion, AuthorizationResponse, ClientSecret, OAuth};
use actix_mcp::client::{Client, ClientError, ClientOptions};
use actix_mcp::protocol::model::mrtr::{CreateMessageResult, ElicitAction, ElicitResult};
use actix_mcp::protocol::ProtocolVersion;
use serde_json::{json, Map, Value};

/// The version the suite runs the scenario at: a legacy one is pinned (the
/// suite's mock speaks only that), a stateless one is discovered.
fn options() -> ClientOptions {
    let o =
        ClientOptions::new("actix-mcp-conformance-client", env!("CARGO_PKG_VERSION")).timeout(Duration::from_secs(20));
    match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok().and_then(|v| ProtocolVersion::parse(&v)) {
        Some(v) if !v.is_stateless() => o.pin(v),
        _ => o,
    }
}

/// Accepts a form with each field's default (SEP-1034).
fn accept_defaults(o: ClientOptions) -> ClientOptions {
    o.on_elicit(|params: Value| async move {
        let props = params["requestedSchema"]["properties"].as_object().cloned().unwrap_or_default();
        let content: Map<String, Value> =
            props.into_iter().filter_map(|(k, s)| Some((k, s.get("default")?.clone()))).collect();
        Ok(ElicitResult { action: ElicitAction::Accept, content: Some(content) })
    })
}

/// Minimal arguments for a tool's required parameters.
fn stub_arguments(schema: &Value) -> Value {
    let props = schema.get("properties").cloned().unwrap_or_default();
    let required = schema.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    let args: Map<String, Value> = required
        .iter()
        .filter_map(Value::as_str)
        .map(|name| {
            let v = match props.get(name).and_then(|p| p.get("type")).and_then(Value::as_str) {
                Some("integer" | "number") => json!(0),
                Some("boolean") => json!(false),
                Some("object") => json!({}),
                Some("array") => json!([]),
                _ => json!("x"),
            };
            (name.to_owned(), v)
        })
        .collect();
    Value::Object(args)
}

/// Where the authorization server sends the user back.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// Plays the user: asks for the authorization URL and reads the redirect
/// it answers with, instead of opening a browser.
async fn follow_authorization(url: String) -> Result<AuthorizationResponse, String> {
    let http =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().map_err(|e| e.to_string())?;
    let resp = http.get(&url).send().await.map_err(|e| e.to_string())?;
    let location = resp.headers().get("location").and_then(|v| v.to_str().ok());
    let location = location.ok_or_else(|| format!("no redirect from {url} (HTTP {})", resp.status()))?;
    AuthorizationResponse::from_redirect(location)
}

/// An authorized session: list the tools and call the first.
async fn authorized_session(url: &str, oauth: OAuth) -> Result<(), ClientError> {
    let client = Client::connect(url, accept_defaults(options()).token_provider(oauth)).await?;
    let tools = client.list_tools().await?;
    if let Some(tool) = tools.first()
        && let Err(e) = client.call_tool(&tool.name, json!({})).await
    {
        eprintln!("{}: {e}", tool.name);
    }
    client.close().await;
    Ok(())
}

fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT").ok().and_then(|c| serde_json::from_str(&c).ok()).unwrap_or_default()
}

async fn scenario(name: &str, url: &str) -> Result<(), ClientError> {
    match name {
        "initialize" | "json-schema-ref-no-deref" => {
            let client = Client::connect(url, options()).await?;
            client.list_tools().await?;
            client.close().await;
        }
        "tools_call" => {
            let client = Client::connect(url, options()).await?;
            client.list_tools().await?;
            client.call_tool("add_numbers", json!({"a": 5, "b": 3})).await?;
            client.close().await;
        }
        "http-standard-headers" => {
            let client = Client::connect(url, options()).await?;
            client.list_tools().await?;
            client.call_tool("add_numbers", json!({"a": 5, "b": 3})).await?;
            if let Some(r) = client.list_resources().await?.first() {
                client.read_resource(&r.uri).await?;
            }
            if let Some(p) = client.list_prompts().await?.first() {
                client.get_prompt(&p.name, json!({})).await?;
            }
        }
        "request-metadata" => {
            let o = accept_defaults(options())
                .on_sample(|_| async {
                    Ok(CreateMessageResult {
                        role: "assistant".into(),
                        content: json!({"type": "text", "text": ""}),
                        model: "conformance".into(),
                        stop_reason: None,
                    })
                })
                .on_roots(|| async { Ok(vec![]) });
            let client = Client::connect(url, o).await?;
            client.list_tools().await?;
            client.call_tool("add_numbers", json!({"a": 5, "b": 3})).await?;
        }
        "sse-retry" => {
            let client = Client::connect(url, options()).await?;
            client.list_tools().await?;
            client.call_tool("test_reconnection", json!({})).await?;
            client.close().await;
        }
        "elicitation-sep1034-client-defaults" => {
            let client = Client::connect(url, accept_defaults(options())).await?;
            client.list_tools().await?;
            client.call_tool("test_client_elicitation_defaults", json!({})).await?;
            client.close().await;
        }
        "json-schema-2020-12-preservation" => {
            let client = Client::connect(url, options()).await?;
            let tools = client.list_tools().await?;
            let focal = tools.iter().find(|t| t.name == "json_schema_2020_12_tool");
            let schema = focal.map(|t| t.input_schema.clone()).unwrap_or_default();
            client.call_tool("json_schema_echo", json!({ "schema": schema })).await?;
            client.close().await;
        }
        "http-invalid-tool-headers" => {
            let client = Client::connect(url, options()).await?;
            for tool in client.list_tools().await? {
                if let Err(e) = client.call_tool(&tool.name, stub_arguments(&tool.input_schema)).await {
                    eprintln!("{}: {e}", tool.name);
                }
            }
        }
        "http-custom-headers" => {
            let client = Client::connect(url, options()).await?;
            let listed: Vec<String> = client.list_tools().await?.into_iter().map(|t| t.name).collect();
            for call in context()["toolCalls"].as_array().cloned().unwrap_or_default() {
                let name = call["name"].as_str().unwrap_or_default();
                if !listed.iter().any(|t| t == name) {
                    continue;
                }
                let args = call.get("arguments").cloned().filter(|a| !a.is_null()).unwrap_or_else(|| json!({}));
                if let Err(e) = client.call_tool(name, args).await {
                    eprintln!("{name}: {e}");
                }
            }
        }
        "sep-2322-client-request-state" => {
            let o = options().on_elicit(|_| async {
                let mut content = Map::new();
                content.insert("confirmed".into(), json!(true));
                Ok(ElicitResult { action: ElicitAction::Accept, content: Some(content) })
            });
            let client = Client::connect(url, o).await?;
            client.list_tools().await?;
            for tool in
                ["test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"]
            {
                client.call_tool(tool, json!({})).await?;
            }
        }
        "auth/client-credentials-basic" | "auth/client-credentials-jwt" => {
            let ctx = context();
            let id = ctx["client_id"].as_str().unwrap_or_default();
            let secret = match ctx["private_key_pem"].as_str() {
                Some(pem) => ClientSecret::PrivateKeyJwt {
                    pem: pem.to_owned(),
                    algorithm: ctx["signing_algorithm"].as_str().unwrap_or("ES256").to_owned(),
                },
                None => ClientSecret::Secret(ctx["client_secret"].as_str().unwrap_or_default().to_owned()),
            };
            authorized_session(url, OAuth::client_credentials(url, id, secret)).await?;
        }
        "auth/enterprise-managed-authorization" => {
            let ctx = context();
            let text = |k: &str| ctx[k].as_str().unwrap_or_default().to_owned();
            let idp = identity_assertion(&text("idp_token_endpoint"), &text("idp_client_id"), &text("idp_id_token"));
            let secret = Some(ClientSecret::Secret(text("client_secret")));
            authorized_session(url, OAuth::jwt_bearer(url, &text("client_id"), secret, idp)).await?;
        }
        "auth/wif-jwt-bearer" => {
            let ctx = context();
            let jwt = ctx["valid_jwt"].as_str().unwrap_or_default().to_owned();
            let id = ctx["client_id"].as_str().unwrap_or_default();
            let workload = move |_issuer: String, _resource: String| {
                let jwt = jwt.clone();
                async move { Ok(jwt) }
            };
            authorized_session(url, OAuth::jwt_bearer(url, id, None, workload)).await?;
        }
        auth if auth.starts_with("auth/") => {
            let mut oauth = OAuth::authorization_code(url, "conformance-client", REDIRECT_URI, follow_authorization)
                .client_metadata_url("https://conformance-test.local/client-metadata.json");
            let ctx = context();
            if let Some(id) = ctx["client_id"].as_str() {
                oauth = oauth.pre_registered(id, ctx["client_secret"].as_str());
            }
            authorized_session(url, oauth).await?;
        }
        other => return Err(ClientError::Input(format!("this client has no scenario {other:?}"))),
    }
    Ok(())
}

#[actix_rt::main]
async fn main() -> std::process::ExitCode {
    let name = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: conformance_client URL (with MCP_CONFORMANCE_SCENARIO set)");
        return std::process::ExitCode::from(2);
    };
    match scenario(&name, &url).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
