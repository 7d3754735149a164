//! A connection as an actor, for actix applications that pass addresses
//! or `Recipient`s around: [`Call`] is any request, answered with its
//! result. Stopping the actor closes the connection.

use actix::prelude::*;
use serde_json::Value;

use super::error::ClientError;
use super::Client;

/// One request to the server: a method and its params (an object).
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<Value, ClientError>")]
pub struct Call {
    /// The method, e.g. `tools/call`.
    pub method: String,
    /// Its params.
    pub params: Value,
}

impl Call {
    /// A request of `method` with `params`.
    pub fn new(method: impl Into<String>, params: Value) -> Self {
        Call { method: method.into(), params }
    }
}

/// The actor of one connection.
pub struct ClientActor {
    client: Client,
}

impl Actor for ClientActor {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Self::Context) {
        let client = self.client.clone();
        actix::spawn(async move { client.close().await });
    }
}

impl Handler<Call> for ClientActor {
    type Result = ResponseFuture<Result<Value, ClientError>>;

    fn handle(&mut self, call: Call, _: &mut Self::Context) -> Self::Result {
        let client = self.client.clone();
        Box::pin(async move { client.request(&call.method, call.params).await })
    }
}

impl Client {
    /// Starts this connection's actor (on the current arbiter).
    pub fn start(self) -> Addr<ClientActor> {
        ClientActor { client: self }.start()
    }
}
