//! Opening a `requestState` token: any input is refused or opens to a
//! payload bound to the request; nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_protocol::request_state::{open, seal, Binding, StateKey, StatePayload};

fuzz_target!(|data: &[u8]| {
    let key = StateKey::new(vec![42u8; 32]).expect("a 32-byte key");
    let binding = Binding::new("tools/call", "fuzz", None);
    let token = String::from_utf8_lossy(data);
    if let Ok(payload) = open(&token, &key, &binding, 1_000) {
        // Only a token sealed with the key opens: it re-seals to itself.
        assert_eq!(open(&seal(&payload, &key), &key, &binding, 1_000).ok(), Some(payload));
    }
    // A payload carrying the input seals and opens back unchanged.
    let mut payload = StatePayload::new(&binding, 60_000, 0, token.chars().take(64).collect());
    payload.responses.insert("k".into(), serde_json::Value::String(token.into_owned()));
    assert_eq!(open(&seal(&payload, &key), &key, &binding, 1_000).ok(), Some(payload));
});
