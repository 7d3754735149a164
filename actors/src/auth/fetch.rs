//! [`Fetcher`]: the few HTTP requests the server makes to its issuers
//! (metadata, key sets, introspection) — JSON, bounded in time and size,
//! no redirects, no pooled connections (workers run on separate runtimes).

use std::time::Duration;

use serde_json::Value;

use super::AuthError;

/// Largest accepted issuer response.
const MAX_BYTES: usize = 1024 * 1024;

/// Makes requests to issuers.
#[derive(Debug, Clone)]
pub(super) struct Fetcher {
    client: reqwest::Client,
}

impl Fetcher {
    /// A fetcher whose requests time out after `timeout`.
    pub(super) fn new(timeout: Duration) -> Self {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .pool_max_idle_per_host(0)
            .user_agent(concat!("actix-mcp/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        Fetcher { client }
    }

    /// GETs a JSON document; `Ok(None)` for 404.
    pub(super) async fn get(&self, url: &str) -> Result<Option<Value>, AuthError> {
        let res = self.client.get(url).header("Accept", "application/json").send().await;
        let res = res.map_err(|e| unavailable(url, &e))?;
        if res.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        json_of(url, res).await.map(Some)
    }

    /// POSTs a form with HTTP Basic credentials and reads a JSON answer.
    pub(super) async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<Value, AuthError> {
        let mut req = self.client.post(url).header("Accept", "application/json").form(form);
        if let Some((user, password)) = basic {
            req = req.basic_auth(user, Some(password));
        }
        let res = req.send().await.map_err(|e| unavailable(url, &e))?;
        json_of(url, res).await
    }
}

async fn json_of(url: &str, res: reqwest::Response) -> Result<Value, AuthError> {
    if !res.status().is_success() {
        return Err(AuthError::Unavailable(format!("{url} answered {}", res.status())));
    }
    if res.content_length().is_some_and(|n| n > MAX_BYTES as u64) {
        return Err(AuthError::Unavailable(format!("{url}: the answer is over {MAX_BYTES} bytes")));
    }
    let mut body = Vec::new();
    let mut res = res;
    while let Some(chunk) = res.chunk().await.map_err(|e| unavailable(url, &e))? {
        if body.len() + chunk.len() > MAX_BYTES {
            return Err(AuthError::Unavailable(format!("{url}: the answer is over {MAX_BYTES} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| AuthError::Unavailable(format!("{url}: not JSON: {e}")))
}

fn unavailable(url: &str, e: &reqwest::Error) -> AuthError {
    // reqwest's own text is generic; its sources say what failed.
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    AuthError::Unavailable(format!("{url}: {text}"))
}
