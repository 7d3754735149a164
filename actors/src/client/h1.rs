//! Plain-HTTP/1.1 connections the client holds itself, for `http://`
//! endpoints reached without a proxy (a sidecar, a server in the same
//! cluster, loopback): a request borrows an idle connection or opens one,
//! and the connection goes back to the pool when its response body has
//! been read to the end. A body dropped before its end (a cancelled call,
//! a closed stream) takes its connection with it, as HTTP/1.1 requires.
//!
//! This is the per-call path the client spends most of its time in; a
//! general HTTP client (TLS, proxies, HTTP/2) serves every other URL.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use reqwest::header::{HeaderValue, HOST};

/// Idle connections kept per endpoint; more are closed when they free up.
const MAX_IDLE: usize = 256;
/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The idle connections to one `host:port`.
pub(crate) struct Pool {
    /// Where to connect.
    authority: String,
    /// The `Host` header of every request.
    host: HeaderValue,
    idle: Mutex<Vec<SendRequest<Full<Bytes>>>>,
}

impl Pool {
    /// A pool for `url` when it is plain HTTP and no proxy variable is set
    /// (those URLs go through the general client, which honours them).
    pub(crate) fn for_url(url: &url::Url) -> Option<Arc<Pool>> {
        const PROXY_VARS: [&str; 4] = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"];
        let proxied = PROXY_VARS.iter().any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
        Self::unless_proxied(url, proxied)
    }

    fn unless_proxied(url: &url::Url, proxied: bool) -> Option<Arc<Pool>> {
        if url.scheme() != "http" || proxied {
            return None;
        }
        let host = url.host_str()?;
        let port = url.port_or_known_default()?;
        let authority = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_owned(),
        };
        Some(Arc::new(Pool {
            authority: format!("{host}:{port}"),
            host: HeaderValue::from_str(&authority).ok()?,
            idle: Mutex::new(Vec::new()),
        }))
    }

    /// Sends `req` (origin-form URI) on an idle connection or a new one. A
    /// request an idle connection could not take (it had just closed) goes
    /// on a new one; one that was sent is never sent twice.
    pub(crate) async fn send(
        self: &Arc<Self>,
        mut req: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<PooledBody>, String> {
        req.headers_mut().insert(HOST, self.host.clone());
        loop {
            let (mut sender, reused) = match self.take() {
                Some(s) => (s, true),
                None => (self.open().await?, false),
            };
            if let Err(e) = sender.ready().await {
                if reused {
                    continue;
                }
                return Err(e.to_string());
            }
            match sender.try_send_request(req).await {
                Ok(resp) => {
                    let pool = self.clone();
                    return Ok(resp.map(|body| PooledBody { body, back: Some((pool, sender)) }));
                }
                Err(mut e) => match e.take_message() {
                    Some(unsent) if reused => req = unsent,
                    _ => return Err(e.into_error().to_string()),
                },
            }
        }
    }

    fn take(&self) -> Option<SendRequest<Full<Bytes>>> {
        let mut idle = self.idle.lock().expect("pool lock");
        while let Some(s) = idle.pop() {
            if !s.is_closed() {
                return Some(s);
            }
        }
        None
    }

    fn put(&self, sender: SendRequest<Full<Bytes>>) {
        let mut idle = self.idle.lock().expect("pool lock");
        if idle.len() < MAX_IDLE && !sender.is_closed() {
            idle.push(sender);
        }
    }

    async fn open(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        let connect = tokio::net::TcpStream::connect(self.authority.as_str());
        let stream = tokio::time::timeout(CONNECT_TIMEOUT, connect)
            .await
            .map_err(|_| format!("connecting to {} took over {CONNECT_TIMEOUT:?}", self.authority))?
            .map_err(|e| format!("connecting to {}: {e}", self.authority))?;
        let _ = stream.set_nodelay(true);
        let (sender, conn) = http1::handshake(TokioIo::new(stream)).await.map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    }
}

/// A response body that gives its connection back to the pool once read
/// to the end.
pub(crate) struct PooledBody {
    body: Incoming,
    back: Option<(Arc<Pool>, SendRequest<Full<Bytes>>)>,
}

impl Body for PooledBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(None) = polled
            && let Some((pool, sender)) = self.back.take()
        {
            pool.put(sender);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use http_body_util::BodyExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A server answering every request on a connection with `body`
    /// (closing after the first answer when `close`); counts connections.
    async fn server(body: &'static str, close: bool) -> (url::Url, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = url::Url::parse(&format!("http://{}/mcp", listener.local_addr().unwrap())).unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    while let Ok(n) = s.read(&mut buf).await {
                        if n == 0 {
                            return;
                        }
                        let extra = if close { "Connection: close\r\n" } else { "" };
                        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n{extra}\r\n", body.len());
                        if s.write_all(format!("{head}{body}").as_bytes()).await.is_err() || close {
                            return;
                        }
                    }
                });
            }
        });
        (url, accepted)
    }

    fn request() -> http::Request<Full<Bytes>> {
        http::Request::post("/mcp").body(Full::new(Bytes::from_static(b"{}"))).unwrap()
    }

    #[tokio::test]
    async fn a_connection_is_reused_once_its_body_is_read_and_not_before() {
        let (url, accepted) = server("0123456789", false).await;
        let pool = Pool::unless_proxied(&url, false).expect("a plain http URL");
        for _ in 0..3 {
            let body = pool.send(request()).await.unwrap().into_body().collect().await.unwrap().to_bytes();
            assert_eq!(&body[..], b"0123456789");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "read to the end, the connection serves the next request");
        drop(pool.send(request()).await.unwrap());
        let body = pool.send(request()).await.unwrap().into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"0123456789");
        assert_eq!(accepted.load(Ordering::SeqCst), 2, "a body given up takes its connection with it");
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_is_replaced() {
        let (url, accepted) = server("ok", true).await;
        let pool = Pool::unless_proxied(&url, false).unwrap();
        for _ in 0..3 {
            let body = pool.send(request()).await.unwrap().into_body().collect().await.unwrap().to_bytes();
            assert_eq!(&body[..], b"ok");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn only_plain_http_without_a_proxy_uses_own_connections() {
        let url = |u: &str| url::Url::parse(u).unwrap();
        assert!(Pool::unless_proxied(&url("https://example.com/mcp"), false).is_none());
        assert!(Pool::unless_proxied(&url("http://example.com/mcp"), true).is_none());
        assert!(Pool::unless_proxied(&url("http://example.com/mcp"), false).is_some());
    }
}
