//! `Mcp-*` header values: the Base64 sentinel decoder, encode/decode round
//! trips, and matching a header against a body value (numbers exactly).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_protocol::header::{decode_value, encode_value, matches_body};

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (header, body) = data.split_at(split);
    if let Ok(decoded) = decode_value(header) {
        // Whatever decodes re-encodes to something that decodes the same.
        assert_eq!(decode_value(encode_value(&decoded).as_bytes()).as_deref(), Ok(&*decoded));
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(body.get(1..).unwrap_or_default()) {
            let _ = matches_body(&decoded, &value);
        }
    }
    if let Ok(text) = std::str::from_utf8(header) {
        // Any text survives encoding exactly.
        assert_eq!(decode_value(encode_value(text).as_bytes()).as_deref(), Ok(text));
    }
});
