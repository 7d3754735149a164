//! Input from the client, as a handler asks for it: one round of a multi
//! round-trip request (`InputRequiredResult` and a retry), the answers so
//! far, and the handler's own state carried between rounds.

use mcp_protocol::model::mrtr::{CreateMessageResult, ElicitResult, InputRequest, ListRootsResult};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use super::RequestContext;
use crate::catalog::error::HandlerError;

/// One round of a multi round-trip request, as the handler sees it.
#[derive(Debug, Default)]
pub(crate) struct InputRound {
    /// Whether this method may ask for input at all.
    pub(crate) enabled: bool,
    /// Which round this is (1: no state came in).
    pub(crate) number: u32,
    /// Responses: verified ones from earlier rounds, then this request's.
    pub(crate) responses: Map<String, Value>,
    /// Keys the handler asked for and found answered (carried forward).
    pub(crate) answered: Vec<String>,
    /// Requests the handler made that are not answered yet, in order.
    pub(crate) pending: Vec<(String, InputRequest)>,
    /// Handler state that came in with the request.
    pub(crate) state_in: Option<Value>,
    /// Handler state to send out with the next round.
    pub(crate) state_out: Option<Value>,
}

impl InputRound {
    /// The first round of a method that may ask for input, with nothing
    /// carried in.
    fn first() -> Self {
        InputRound { enabled: true, number: 1, ..InputRound::default() }
    }
}

/// Where a request keeps its input round: most requests never begin one,
/// and most rounds that begin are a first try whose handler asks for
/// nothing, so a round is written out (boxed) only once it holds something.
#[derive(Debug, Default)]
pub(crate) enum RoundSlot {
    /// No round begun: this method may not ask for input.
    #[default]
    Closed,
    /// A first round with nothing carried in (round 1, no responses, no state).
    Fresh,
    /// A round holding responses, requests or state.
    Open(Box<InputRound>),
}

impl RoundSlot {
    /// The round, written out if it was not yet.
    fn round_mut(&mut self) -> &mut InputRound {
        let round = match std::mem::take(self) {
            RoundSlot::Open(round) => round,
            RoundSlot::Fresh => Box::new(InputRound::first()),
            RoundSlot::Closed => Box::default(),
        };
        *self = RoundSlot::Open(round);
        match self {
            RoundSlot::Open(round) => round,
            _ => unreachable!("just written"),
        }
    }

    /// The round as it stands, or `None` while it holds nothing.
    fn written(&self) -> Option<&InputRound> {
        match self {
            RoundSlot::Open(round) => Some(round),
            RoundSlot::Closed | RoundSlot::Fresh => None,
        }
    }
}

impl RequestContext {
    fn slot(&self) -> std::sync::MutexGuard<'_, RoundSlot> {
        self.inner.round.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the input round (the service does this once `requestState` verified).
    pub(crate) fn begin_round(&self, number: u32, responses: Map<String, Value>, state_in: Option<Value>) {
        *self.slot() = if number <= 1 && responses.is_empty() && state_in.is_none() {
            RoundSlot::Fresh
        } else {
            RoundSlot::Open(Box::new(InputRound {
                enabled: true,
                number,
                responses,
                state_in,
                ..InputRound::default()
            }))
        };
    }

    /// The answers and handler state of the round so far (a task records
    /// them, so that a resumed run has the answers given before the task).
    pub(crate) fn round_so_far(&self) -> (Map<String, Value>, Option<Value>) {
        let slot = self.slot();
        let Some(round) = slot.written() else { return (Map::new(), None) };
        (round.responses.clone(), round.state_out.clone().or_else(|| round.state_in.clone()))
    }

    /// Takes the round (the service does this to build an `InputRequiredResult`).
    pub(crate) fn take_round(&self) -> InputRound {
        match std::mem::take(&mut *self.slot()) {
            RoundSlot::Open(round) => *round,
            RoundSlot::Fresh => InputRound::first(),
            RoundSlot::Closed => InputRound::default(),
        }
    }

    /// Asks the client for input under `key` (unique within the request).
    ///
    /// - `Ok(Some(answer))`: the client answered (in this retry or an earlier
    ///   round of the same flow); `T` is the expected result type
    ///   ([`ElicitResult`], [`CreateMessageResult`], [`ListRootsResult`]);
    ///   an answer of the wrong shape is an invalid-params error.
    /// - `Ok(None)`: not answered yet; the request is recorded, and the
    ///   handler should return [`RequestContext::input_required`] once it has
    ///   asked for everything it needs now (several requests go out together).
    /// - `Err`: the client did not declare the capability the request needs
    ///   (MissingRequiredClientCapability), or this method cannot ask for input.
    ///
    /// Handlers are run again on every retry, so what they do before their
    /// last question must be repeatable; [`RequestContext::set_handler_state`]
    /// carries their own state between rounds.
    pub fn ask<T: DeserializeOwned>(&self, key: &str, request: InputRequest) -> Result<Option<T>, HandlerError> {
        self.require_capabilities(&request.required_capabilities())?;
        let mut slot = self.slot();
        // Refused before writing a round out: a closed slot's round could not ask either.
        if matches!(*slot, RoundSlot::Closed) {
            return Err(HandlerError::InputRequired);
        }
        let round = slot.round_mut();
        if !round.enabled {
            return Err(HandlerError::InputRequired);
        }
        match round.responses.get(key).cloned() {
            Some(answer) => {
                let parsed = serde_json::from_value::<T>(answer).map_err(|e| {
                    HandlerError::invalid_params(format!(
                        "inputResponses.{key} is not a valid {} result: {e}",
                        request.method()
                    ))
                })?;
                if !round.answered.iter().any(|k| k == key) {
                    round.answered.push(key.to_owned());
                }
                Ok(Some(parsed))
            }
            None => {
                if !round.pending.iter().any(|(k, _)| k == key) {
                    round.pending.push((key.to_owned(), request));
                }
                Ok(None)
            }
        }
    }

    /// Asks for one input and stops the handler (with `?`) until it is answered.
    pub fn input<T: DeserializeOwned>(&self, key: &str, request: InputRequest) -> Result<T, HandlerError> {
        self.ask(key, request)?.ok_or(HandlerError::InputRequired)
    }

    /// `elicitation/create` with a form: `message` and a flat object schema.
    pub fn elicit(&self, key: &str, message: &str, requested_schema: Value) -> Result<ElicitResult, HandlerError> {
        self.input(key, InputRequest::elicit_form(message, requested_schema))
    }

    /// `sampling/createMessage` with one user text message.
    pub fn sample(&self, key: &str, prompt: &str, max_tokens: u32) -> Result<CreateMessageResult, HandlerError> {
        self.input(key, InputRequest::sample_text(prompt, max_tokens))
    }

    /// `roots/list`.
    pub fn list_roots(&self, key: &str) -> Result<ListRootsResult, HandlerError> {
        self.input(key, InputRequest::list_roots())
    }

    /// The error that sends every pending input request to the client.
    pub fn input_required(&self) -> HandlerError {
        HandlerError::InputRequired
    }

    /// Whether the client declared `elicitation` for this request.
    pub fn can_elicit(&self) -> bool {
        self.client_capabilities().elicitation.is_some()
    }

    /// Whether the client declared `sampling` for this request.
    pub fn can_sample(&self) -> bool {
        self.client_capabilities().sampling.is_some()
    }

    /// Whether the client declared `roots` for this request.
    pub fn can_list_roots(&self) -> bool {
        self.client_capabilities().roots.is_some()
    }

    /// Which round of a multi round-trip flow this is (1 on the first try).
    pub fn input_round(&self) -> u32 {
        self.slot().written().map_or(1, |round| round.number.max(1))
    }

    /// The handler state saved by [`RequestContext::set_handler_state`] in
    /// the previous round (verified, so it is what this server wrote).
    pub fn handler_state<T: DeserializeOwned>(&self) -> Option<T> {
        let slot = self.slot();
        let round = slot.written()?;
        round.state_out.clone().or_else(|| round.state_in.clone()).and_then(|v| serde_json::from_value(v).ok())
    }

    /// Saves handler state into the next round's `requestState`.
    pub fn set_handler_state<T: Serialize>(&self, state: &T) -> Result<(), HandlerError> {
        let v = serde_json::to_value(state).map_err(|e| HandlerError::internal(format!("handler state: {e}")))?;
        self.slot().round_mut().state_out = Some(v);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_is_written_out_only_once_it_holds_something() {
        let mut fresh = RoundSlot::Fresh;
        assert!(fresh.written().is_none(), "a first try holds nothing");
        let round = fresh.round_mut();
        assert!(round.enabled && round.number == 1 && round.responses.is_empty());
        round.answered.push("k".into());
        assert_eq!(fresh.written().map(|r| r.answered.clone()), Some(vec!["k".to_owned()]));

        let mut closed = RoundSlot::Closed;
        assert!(closed.written().is_none());
        let round = closed.round_mut();
        assert!(!round.enabled, "a method without rounds still may not ask once state is written");
        assert_eq!(round.number, 0);
    }
}
