//! Choosing the era, as a state machine over the server's answers:
//! `server/discover` first (retried once at a version the server names),
//! else the `initialize` handshake — or only what the caller pinned.
//! The driver sends each [`Step::Ask`] and feeds the answer back.

use serde_json::Value;

use super::era::Spoken;
use super::server_info::ServerInfo;
use super::session::Session;
use crate::legacy::method as legacy;
use crate::model::JsonObject;
use crate::request::method;
use crate::{ErrorData, ProtocolVersion};

/// The newest legacy version, offered in `initialize`.
const NEWEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

/// What the driver does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Sends this request in `era` and feeds its answer to
    /// [`Negotiation::answered`].
    Ask {
        /// The era to send it in (`None`: `initialize`, before one).
        era: Option<Spoken>,
        /// `server/discover` or `initialize`.
        method: &'static str,
        /// Its params.
        params: JsonObject,
    },
    /// Chosen: the connection speaks `era` (a legacy one goes on with
    /// `notifications/initialized`).
    Done {
        /// The era.
        era: Spoken,
        /// What the server said about itself.
        server: Box<ServerInfo>,
    },
    /// No era: the server refused (its error), gave no JSON-RPC answer
    /// (`None`: the driver's own error stands), or speaks no version this
    /// client does.
    Failed(Option<Failure>),
}

/// Why a negotiation failed, when the server answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The server's error.
    Refused(ErrorData),
    /// The server's versions, none of which this client speaks (a sentence).
    Unspoken(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Discover { asked: ProtocolVersion, pinned: bool, retried: bool },
    Initialize,
    Over,
}

/// One negotiation.
#[derive(Debug, Clone)]
pub struct Negotiation {
    state: State,
    initialize: JsonObject,
}

impl Negotiation {
    /// A negotiation for `session`, at `pinned` only when given; its first step.
    pub fn new(session: &Session, pinned: Option<ProtocolVersion>) -> (Self, Step) {
        let mut n = Negotiation { state: State::Over, initialize: JsonObject::new() };
        let step = match pinned {
            Some(v) if !v.is_stateless() => n.initialize(session.initialize_params(v)),
            Some(v) => n.discover(v, true, false),
            None => {
                n.initialize = session.initialize_params(NEWEST_LEGACY);
                n.discover(ProtocolVersion::V2026_07_28, false, false)
            }
        };
        (n, step)
    }

    /// A negotiation by discovery with a client of no capabilities (for
    /// examples and tests).
    pub fn auto() -> (Self, Step) {
        let session = Session::new(crate::model::Implementation::new("client", "0"), Default::default(), None);
        Self::new(&session, None)
    }

    fn discover(&mut self, asked: ProtocolVersion, pinned: bool, retried: bool) -> Step {
        self.state = State::Discover { asked, pinned, retried };
        Step::Ask { era: Some(Spoken::Stateless(asked)), method: method::DISCOVER, params: JsonObject::new() }
    }

    fn initialize(&mut self, params: JsonObject) -> Step {
        self.state = State::Initialize;
        Step::Ask { era: None, method: legacy::INITIALIZE, params }
    }

    /// The answer to the last [`Step::Ask`]: its result, the server's
    /// error (`Err(Some)`), or none (`Err(None)`: the request failed
    /// without a JSON-RPC answer).
    pub fn answered(&mut self, answer: Result<Value, Option<ErrorData>>) -> Step {
        match self.state {
            State::Discover { asked, pinned, retried } => self.discovered(asked, pinned, retried, answer),
            State::Initialize => {
                self.state = State::Over;
                match answer {
                    Ok(result) => initialized(&result),
                    Err(e) => Step::Failed(e.map(Failure::Refused)),
                }
            }
            State::Over => Step::Failed(Some(Failure::Unspoken("the negotiation is over".into()))),
        }
    }

    fn discovered(
        &mut self,
        asked: ProtocolVersion,
        pinned: bool,
        retried: bool,
        answer: Result<Value, Option<ErrorData>>,
    ) -> Step {
        let failed = match answer {
            Ok(result) => match chosen(&result, asked, pinned) {
                Ok(v) => {
                    self.state = State::Over;
                    return Step::Done {
                        era: Spoken::Stateless(v),
                        server: Box::new(ServerInfo::from_discover(&result, v.as_str())),
                    };
                }
                Err(why) => Some(Failure::Unspoken(why)),
            },
            Err(Some(e)) => {
                // A refusal naming the versions served is retried once at
                // the first stateless one of them (the same one too: the
                // server says it serves it).
                let named = e.data.as_ref().and_then(|d| d.get("supported")).and_then(Value::as_array);
                let other = named.into_iter().flatten().filter_map(Value::as_str).filter_map(ProtocolVersion::parse);
                match other.into_iter().find(|v| v.is_stateless()) {
                    Some(v) if !pinned && !retried => return self.discover(v, false, true),
                    _ => Some(Failure::Refused(e)),
                }
            }
            Err(None) => None,
        };
        if pinned {
            self.state = State::Over;
            return Step::Failed(failed);
        }
        let params = std::mem::take(&mut self.initialize);
        self.initialize(params)
    }
}

/// The version chosen from a discover result: the one asked when listed
/// (or nothing listed), else — unless pinned — the first stateless one listed.
fn chosen(result: &Value, asked: ProtocolVersion, pinned: bool) -> Result<ProtocolVersion, String> {
    let offered: Vec<&str> = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if offered.is_empty() || offered.contains(&asked.as_str()) {
        return Ok(asked);
    }
    let other = offered.iter().filter_map(|v| ProtocolVersion::parse(v)).find(|v| v.is_stateless());
    match other.filter(|_| !pinned) {
        Some(v) => Ok(v),
        None => Err(format!("the server offers {offered:?}, none of which this client speaks statelessly")),
    }
}

/// The era of an `initialize` answer: a legacy version this client speaks.
fn initialized(result: &Value) -> Step {
    let answered = result.get("protocolVersion").and_then(Value::as_str).unwrap_or_default();
    match ProtocolVersion::parse(answered).filter(|v| !v.is_stateless()) {
        Some(v) => {
            Step::Done { era: Spoken::Legacy(v), server: Box::new(ServerInfo::from_initialize(result, answered)) }
        }
        None => Step::Failed(Some(Failure::Unspoken(format!(
            "the server answered initialize with version {answered:?}, which this client does not speak"
        )))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;
    use serde_json::json;

    fn method_of(step: &Step) -> &'static str {
        match step {
            Step::Ask { method, .. } => method,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_legacy_server_is_met_by_initialize() {
        let (mut n, first) = Negotiation::auto();
        assert_eq!(method_of(&first), method::DISCOVER);
        let next = n.answered(Err(Some(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "no"))));
        let Step::Ask { era: None, method, params } = next else { panic!() };
        assert_eq!((method, params["protocolVersion"].as_str()), (legacy::INITIALIZE, Some("2025-11-25")));
        let done = n.answered(Ok(json!({"protocolVersion": "2025-06-18", "capabilities": {}})));
        assert!(matches!(done, Step::Done { era: Spoken::Legacy(ProtocolVersion::V2025_06_18), .. }), "{done:?}");
    }

    #[test]
    fn a_refusal_naming_versions_is_retried_once() {
        let (mut n, _) = Negotiation::auto();
        let refusal = ErrorData::new(ErrorCode(-32022), "v").with_data(json!({"supported": ["DRAFT-2026-v1"]}));
        let again = n.answered(Err(Some(refusal.clone())));
        assert!(
            matches!(again, Step::Ask { era: Some(Spoken::Stateless(ProtocolVersion::Draft2026V1)), .. }),
            "{again:?}"
        );
        // A second refusal falls back to initialize.
        assert_eq!(method_of(&n.answered(Err(Some(refusal)))), legacy::INITIALIZE);
    }

    #[test]
    fn a_pin_is_kept() {
        let session = Session::new(crate::model::Implementation::new("c", "1"), Default::default(), None);
        let (mut n, _) = Negotiation::new(&session, Some(ProtocolVersion::V2026_07_28));
        let step = n.answered(Ok(json!({"supportedVersions": ["DRAFT-2026-v1"]})));
        assert!(matches!(step, Step::Failed(Some(Failure::Unspoken(_)))), "{step:?}");
        let (mut n, _) = Negotiation::new(&session, Some(ProtocolVersion::V2026_07_28));
        assert_eq!(n.answered(Err(None)), Step::Failed(None));
        let (_, first) = Negotiation::new(&session, Some(ProtocolVersion::V2025_03_26));
        assert_eq!(method_of(&first), legacy::INITIALIZE);
    }
}
