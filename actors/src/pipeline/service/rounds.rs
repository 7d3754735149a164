//! Handlers that ask the client for input, in either era. Stateless: one
//! run per request; `requestState` is verified before the handler runs and
//! a handler that asks gets an `InputRequiredResult` with a freshly sealed
//! state. Legacy: the questions go to the client as server-to-client
//! requests through the session (a round's questions together), and the
//! handler runs again with the answers, up to `legacy.max_input_rounds` times.

use mcp_protocol::request_state::Binding;
use serde_json::{Map, Value};

use super::McpService;
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;
use crate::catalog::HandlerFuture;

impl McpService {
    /// Runs `run` in the request's era. `Ok(Err(v))` carries an
    /// `InputRequiredResult` (stateless era only).
    pub(super) async fn rounds<T, F>(
        &self,
        ctx: &RequestContext,
        binding: &dyn Fn() -> Binding,
        input_responses: Option<Value>,
        request_state: Option<&str>,
        run: F,
    ) -> Result<Result<T, Value>, HandlerError>
    where
        F: Fn() -> HandlerFuture<T>,
    {
        if !ctx.in_session() {
            self.begin_round(ctx, binding, input_responses, request_state)?;
            match run().await {
                Err(HandlerError::InputRequired) => {
                    crate::telemetry::mrtr("issued");
                    Ok(Err(self.input_required(ctx, binding)?))
                }
                other => {
                    if request_state.is_some() && other.is_ok() {
                        crate::telemetry::mrtr("completed");
                    }
                    other.map(Ok)
                }
            }
        } else {
            // Boxed: a legacy session's rounds wait on the client and their
            // future is large; stateless calls should not carry its size.
            Box::pin(self.legacy_rounds(ctx, run)).await.map(Ok)
        }
    }

    async fn legacy_rounds<T, F>(&self, ctx: &RequestContext, run: F) -> Result<T, HandlerError>
    where
        F: Fn() -> HandlerFuture<T>,
    {
        let mut responses = Map::new();
        let mut state = None;
        for number in 1..=self.max_input_rounds {
            ctx.begin_round(number, responses.clone(), state.clone());
            match run().await {
                Err(HandlerError::InputRequired) => {
                    let round = ctx.take_round();
                    state = round.state_out.or(round.state_in);
                    if round.pending.is_empty() {
                        return Err(HandlerError::internal("the handler asked for input without a request"));
                    }
                    // The round's questions go out together, as they would
                    // in one InputRequiredResult.
                    let asked = round.pending.iter().map(|(key, request)| ctx.request_client(key, request));
                    let answers = futures::future::try_join_all(asked).await?;
                    for ((key, _), answer) in round.pending.into_iter().zip(answers) {
                        responses.insert(key, answer);
                    }
                }
                other => return other,
            }
        }
        Err(HandlerError::internal(format!("the request needed more than {} input rounds", self.max_input_rounds)))
    }

    /// Verifies `requestState` (refused → -32602, before any handler runs),
    /// checks the shape of `inputResponses`, and opens the handler's round.
    pub(super) fn begin_round(
        &self,
        ctx: &RequestContext,
        binding: &dyn Fn() -> Binding,
        input_responses: Option<Value>,
        request_state: Option<&str>,
    ) -> Result<(), HandlerError> {
        let (number, mut responses, state_in) = match request_state {
            Some(token) => {
                let p = self.sealer.open(token, &binding()).inspect_err(|_| crate::telemetry::mrtr("refused"))?;
                (p.round + 1, p.responses, p.state)
            }
            None => (1, Map::new(), None),
        };
        match input_responses {
            None => {}
            // Answers are taken with or without a requestState: the
            // conformance suite retries with inputResponses alone and
            // expects them honoured (extra keys ignored).
            Some(Value::Object(current)) => responses.extend(current),
            Some(_) => {
                return Err(HandlerError::invalid_params(
                    "inputResponses must be an object of responses keyed like inputRequests",
                ))
            }
        }
        ctx.begin_round(number, responses, state_in);
        Ok(())
    }

    /// The `InputRequiredResult` for a handler that asked for input: its
    /// pending requests, and a fresh sealed state carrying the answers it
    /// already used and its own state.
    pub(super) fn input_required(
        &self,
        ctx: &RequestContext,
        binding: &dyn Fn() -> Binding,
    ) -> Result<Value, HandlerError> {
        let round = ctx.take_round();
        let mut payload = self.sealer.payload(&binding());
        payload.round = round.number.max(1);
        payload.responses =
            round.answered.iter().filter_map(|k| round.responses.get(k).map(|v| (k.clone(), v.clone()))).collect();
        payload.state = round.state_out.or(round.state_in);
        let mut m = Map::new();
        m.insert("resultType".into(), Value::String("input_required".into()));
        if !round.pending.is_empty() {
            let requests: Map<String, Value> =
                round.pending.iter().map(|(k, r)| (k.clone(), serde_json::to_value(r).unwrap_or_default())).collect();
            m.insert("inputRequests".into(), Value::Object(requests));
        }
        m.insert("requestState".into(), Value::String(self.sealer.seal(&payload)));
        self.finish(&m, None)
    }
}
