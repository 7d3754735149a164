//! Reaching an upstream: its process started or its URL connected to, with
//! the credentials of the configuration (environment, files — never a
//! downstream caller's), declaring a set of client capabilities.
//!
//! The connection declares every input capability, so that the upstream
//! may ask; each request names its caller's own in `_meta`.

use std::time::Duration;

use mcp_protocol::model::logging::LoggingLevel;

use crate::client::{Client, ClientError, ClientOptions};
use crate::config::UpstreamConfig;

/// Starts or connects to the upstream. Each call answers its upstream's
/// input itself, from its caller; the handlers here only declare the
/// capabilities, and refuse input asked outside any call.
pub(crate) async fn open(config: &UpstreamConfig) -> Result<Client, ClientError> {
    let outside = |what: &str| format!("{what} is answered only inside a tool call, prompt or read");
    let mut options = ClientOptions::new("actix-mcp-gateway", env!("CARGO_PKG_VERSION"))
        .timeout(Duration::from_millis(config.timeout_ms))
        .max_message_bytes(config.max_message_bytes)
        .max_list(config.max_list_pages, config.max_list_items)
        .log_level(LoggingLevel::Debug)
        .on_elicit(move |_| std::future::ready(Err(outside("elicitation"))))
        .on_sample(move |_| std::future::ready(Err(outside("sampling"))))
        .on_roots(move || std::future::ready(Err(outside("roots/list"))));
    for (k, v) in &config.headers {
        options = options.header(k, v);
    }
    if let Some(token) = bearer(config)? {
        options = options.bearer(token);
    }
    if config.is_stdio() {
        let mut command = tokio::process::Command::new(&config.command);
        command.args(&config.args).envs(&config.env);
        if !config.cwd.is_empty() {
            command.current_dir(&config.cwd);
        }
        Client::spawn(command, options).await
    } else {
        Client::connect(&config.url, options).await
    }
}

fn bearer(config: &UpstreamConfig) -> Result<Option<String>, ClientError> {
    if !config.bearer_env.is_empty() {
        let t = std::env::var(&config.bearer_env)
            .map_err(|_| ClientError::Input(format!("the variable {} (bearer_env) is not set", config.bearer_env)))?;
        return Ok(Some(t));
    }
    if !config.bearer_file.is_empty() {
        let t = std::fs::read_to_string(&config.bearer_file)
            .map_err(|e| ClientError::Input(format!("bearer_file {}: {e}", config.bearer_file)))?;
        return Ok(Some(t.trim().to_owned()));
    }
    Ok(None)
}
