//! [`RedisLink`]: a connection to Redis made on first use and kept (the
//! connection manager reconnects by itself), shared by the stores that
//! query Redis (tasks, quotas).

use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, FutureExt};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::OnceCell;

/// A lazily made, shared Redis connection.
#[derive(Clone)]
pub(crate) struct RedisLink {
    client: redis::Client,
    config: ConnectionManagerConfig,
    con: Arc<OnceCell<ConnectionManager>>,
}

impl RedisLink {
    /// A link to `url`: connecting gives up after 500 ms, a reply after
    /// `reply_timeout`, and a failed command is tried `retries` more times.
    pub(crate) fn open(url: &str, reply_timeout: Duration, retries: usize) -> Result<Self, redis::RedisError> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Duration::from_millis(500))
            .set_response_timeout(reply_timeout)
            .set_number_of_retries(retries);
        Ok(RedisLink { client: redis::Client::open(url)?, config, con: Arc::new(OnceCell::new()) })
    }

    /// The client, for connections of another kind (a subscription).
    pub(crate) fn client(&self) -> &redis::Client {
        &self.client
    }

    /// The connection, made now if this is its first use (a failed attempt
    /// is tried again on the next use).
    pub(crate) fn connection(&self) -> BoxFuture<'static, Result<ConnectionManager, redis::RedisError>> {
        let (client, config, con) = (self.client.clone(), self.config.clone(), self.con.clone());
        async move { con.get_or_try_init(|| client.get_connection_manager_with_config(config)).await.cloned() }.boxed()
    }
}
