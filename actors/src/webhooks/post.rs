//! One signed POST to a webhook callback, and what became of it: accepted
//! (2xx), refused for good (410, 413), or failed in one of the design's
//! categories. Redirects are never followed; a callback's host goes
//! through the address guard unless its origin is allowed; the answer's
//! body is read only for a verification, and then only up to a cap.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::events::webhook::{self, Secret};
use mcp_protocol::events::CallbackFailure;

use super::guard::{self, GuardedResolver, Refused};
use crate::config::{origin_of, WebhooksConfig};

/// What became of one POST.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Posted {
    /// 2xx: accepted (with the answer's body when it was asked for).
    Accepted(Vec<u8>),
    /// 410 or 413: this body is refused for good; not retried.
    Refused,
    /// Failed; worth another attempt.
    Failed(Failure),
}

/// A failed attempt: its category, and what happened in this server's
/// words (never the callback's answer).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    pub(crate) category: CallbackFailure,
    pub(crate) detail: String,
}

impl Failure {
    /// The post was abandoned: the subscription ended meanwhile.
    pub(crate) fn stopped() -> Self {
        Failure { category: CallbackFailure::ConnectionRefused, detail: "the subscription ended".into() }
    }
}

/// One signed body for one callback.
pub(crate) struct Letter<'a> {
    pub(crate) url: &'a url::Url,
    pub(crate) subscription_id: &'a str,
    /// `webhook-id`: the occurrence's id, or `msg_<type>_<random>`.
    pub(crate) id: &'a str,
    pub(crate) body: &'a [u8],
    pub(crate) secrets: &'a [&'a Secret],
}

/// The HTTP clients of webhook deliveries: one behind the address guard,
/// one for the allowed origins (trusting the private CA bundle, if named).
pub(crate) struct Poster {
    guarded: reqwest::Client,
    allowed_client: reqwest::Client,
    /// The allowed origins: the configuration's, and those allowed since.
    allowed: std::sync::RwLock<HashSet<String>>,
    max_answer: usize,
}

impl std::fmt::Debug for Poster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poster").finish_non_exhaustive()
    }
}

impl Poster {
    /// The clients `config` describes; an unreadable CA bundle is an error
    /// naming it.
    pub(crate) fn new(config: &WebhooksConfig) -> Result<Self, String> {
        let timeout = Duration::from_millis(config.timeout_ms);
        let base = || {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(timeout)
                .connect_timeout(timeout)
                .https_only(true)
                .no_proxy()
                .user_agent(concat!("actix-mcp/", env!("CARGO_PKG_VERSION"), " (webhooks)"))
        };
        let built = |b: reqwest::ClientBuilder| b.build().map_err(|e| format!("webhook client: {e}"));
        let guarded = built(base().dns_resolver(Arc::new(GuardedResolver)))?;
        let mut allowed_builder = base();
        if !config.allowed_ca_file.is_empty() {
            let file = &config.allowed_ca_file;
            let unreadable = |e: &dyn std::fmt::Display| format!("events.webhooks.allowed_ca_file {file:?}: {e}");
            let pem = std::fs::read(file).map_err(|e| unreadable(&e))?;
            for certificate in reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| unreadable(&e))? {
                allowed_builder = allowed_builder.add_root_certificate(certificate);
            }
        }
        let allowed = config.allow_origins.iter().filter_map(|o| origin_of(o)).collect();
        Ok(Poster {
            guarded,
            allowed_client: built(allowed_builder)?,
            allowed: std::sync::RwLock::new(allowed),
            max_answer: config.max_answer_bytes,
        })
    }

    /// Lets callbacks of `origin` (an `https` origin) past the address guard
    /// from now on; says why not when it is not one.
    pub(crate) fn allow(&self, origin: &str) -> Result<String, String> {
        let Some(normal) = origin_of(origin).filter(|o| o == origin.trim_end_matches('/')) else {
            return Err(format!("{origin:?} is not an https origin (https://host[:port], no path)"));
        };
        self.allowed.write().unwrap_or_else(|p| p.into_inner()).insert(normal.clone());
        Ok(normal)
    }

    /// The client for `url`, or why it may not be posted to: an address
    /// literal that is not public (a name is checked as it resolves).
    fn client_for(&self, url: &url::Url) -> Result<&reqwest::Client, Failure> {
        let allowed = origin_of(url.as_str())
            .is_some_and(|origin| self.allowed.read().unwrap_or_else(|p| p.into_inner()).contains(&origin));
        if allowed {
            return Ok(&self.allowed_client);
        }
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
            _ => None,
        };
        match literal {
            Some(ip) if !guard::is_public(ip) => Err(Failure {
                category: CallbackFailure::ConnectionRefused,
                detail: Refused(ip.to_string()).to_string(),
            }),
            _ => Ok(&self.guarded),
        }
    }

    /// Posts `letter`, signed for this attempt; reads the answer's body (up
    /// to the cap) when `read_answer`.
    pub(crate) async fn post(&self, letter: &Letter<'_>, read_answer: bool) -> Posted {
        let client = match self.client_for(letter.url) {
            Ok(client) => client,
            Err(failure) => return Posted::Failed(failure),
        };
        let timestamp =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs();
        let signature = webhook::sign(letter.secrets, letter.id, timestamp, letter.body);
        let request = client
            .post(letter.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(webhook::ID_HEADER, letter.id)
            .header(webhook::TIMESTAMP_HEADER, timestamp.to_string())
            .header(webhook::SIGNATURE_HEADER, signature)
            .header(webhook::SUBSCRIPTION_ID_HEADER, letter.subscription_id)
            .body(letter.body.to_vec());
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(e) => return Posted::Failed(failure_of(&e)),
        };
        let status = response.status();
        if status == reqwest::StatusCode::GONE || status == reqwest::StatusCode::PAYLOAD_TOO_LARGE {
            return Posted::Refused;
        }
        if !status.is_success() {
            let category = if status.is_server_error() { CallbackFailure::Http5xx } else { CallbackFailure::Http4xx };
            let detail = format!("the callback answered HTTP {}", status.as_u16());
            return Posted::Failed(Failure { category, detail });
        }
        if !read_answer {
            return Posted::Accepted(Vec::new());
        }
        let mut answer = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) if answer.len() + chunk.len() > self.max_answer => {
                    let detail = format!("the callback's answer passed {} bytes", self.max_answer);
                    return Posted::Failed(Failure { category: CallbackFailure::ChallengeFailed, detail });
                }
                Ok(Some(chunk)) => answer.extend_from_slice(&chunk),
                Ok(None) => return Posted::Accepted(answer),
                Err(e) => return Posted::Failed(failure_of(&e)),
            }
        }
    }
}

/// The category of a request that got no answer.
fn failure_of(e: &reqwest::Error) -> Failure {
    let (category, detail) = if chain_has::<Refused>(e) {
        (CallbackFailure::ConnectionRefused, chain_text::<Refused>(e))
    } else if e.is_timeout() {
        (CallbackFailure::Timeout, "the callback did not answer in time".to_owned())
    } else if chain_has::<rustls::Error>(e) {
        (CallbackFailure::TlsError, "the TLS handshake with the callback failed".to_owned())
    } else if e.is_redirect() {
        (CallbackFailure::Http4xx, "the callback redirected (redirects are not followed)".to_owned())
    } else {
        (CallbackFailure::ConnectionRefused, "could not connect to the callback".to_owned())
    };
    Failure { category, detail }
}

/// Whether an error of type `T` is somewhere in `e`'s sources (looking into
/// the I/O errors that wrap one, whose `source` skips it).
fn chain_has<T: std::error::Error + 'static>(e: &(dyn std::error::Error + 'static)) -> bool {
    find::<T>(e).is_some()
}

fn chain_text<T: std::error::Error + 'static>(e: &(dyn std::error::Error + 'static)) -> String {
    find::<T>(e).map(ToString::to_string).unwrap_or_default()
}

fn find<'a, T: std::error::Error + 'static>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a T> {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        if let Some(found) = e.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()).and_then(|inner| {
            let inner: &(dyn std::error::Error + 'static) = inner;
            find::<T>(inner)
        }) {
            return Some(found);
        }
        next = e.source();
    }
    None
}

/// A single-use challenge: 32 random bytes, hex.
pub(crate) fn challenge() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}
