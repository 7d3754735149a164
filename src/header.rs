//! Header values of the Streamable HTTP transport: the Base64 sentinel
//! (`=?base64?…?=`) used for `Mcp-Name` and `Mcp-Param-*`, and the
//! comparison of a header value with the body value it mirrors.

use base64::Engine;
use serde_json::Value;

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// Why a header value could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderValueError {
    /// The sentinel wrapped something that is not Base64 of UTF-8.
    BadBase64,
    /// The plain value has characters a header may not carry.
    InvalidCharacters,
}

/// Decodes a header value: a sentinel-wrapped value is Base64-decoded, a plain
/// value has its optional whitespace trimmed and must be visible ASCII, space or tab
/// (and is borrowed from `raw`).
pub fn decode_value(raw: &[u8]) -> Result<std::borrow::Cow<'_, str>, HeaderValueError> {
    let text = std::str::from_utf8(raw).map_err(|_| HeaderValueError::InvalidCharacters)?;
    let text = text.trim_matches([' ', '\t']);
    if let Some(inner) = text.strip_prefix(PREFIX).and_then(|t| t.strip_suffix(SUFFIX)) {
        let bytes = base64::engine::general_purpose::STANDARD.decode(inner).map_err(|_| HeaderValueError::BadBase64)?;
        return String::from_utf8(bytes).map(Into::into).map_err(|_| HeaderValueError::BadBase64);
    }
    if text.bytes().all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b)) {
        Ok(text.into())
    } else {
        Err(HeaderValueError::InvalidCharacters)
    }
}

/// Encodes a value for a header, using the sentinel where a plain value is unsafe.
pub fn encode_value(value: &str) -> String {
    let sentinel_like = value.starts_with(PREFIX) && value.ends_with(SUFFIX);
    let padded = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    let printable = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let plain_safe = !value.is_empty() && printable && !padded && !sentinel_like;
    if plain_safe {
        value.to_owned()
    } else {
        format!("{PREFIX}{}{SUFFIX}", base64::engine::general_purpose::STANDARD.encode(value))
    }
}

/// The header form of a primitive JSON value (`None` for null, objects, arrays
/// and non-integer numbers, which are never mirrored).
pub fn header_form(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        Value::Number(n) => n.as_f64().filter(|f| f.fract() == 0.0).map(|f| format!("{}", f as i64)),
        _ => None,
    }
}

/// Whether a decoded header value matches the body value. Numbers compare
/// numerically (`42.0` equals `42`), and integers exactly: large integers
/// are never rounded through `f64` (2^53 + 1 is not 2^53).
pub fn matches_body(header: &str, body: &Value) -> bool {
    match body {
        Value::Number(n) => match n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from)) {
            Some(b) => integer_value(header) == Some(b),
            None => match (header.parse::<f64>(), n.as_f64()) {
                (Ok(h), Some(b)) => h == b,
                _ => false,
            },
        },
        other => header_form(other).as_deref() == Some(header),
    }
}

/// The exact integer a header spells: digits with an optional sign, and an
/// optional fraction of zeros (`42`, `-7`, `42.000`); `None` for anything
/// else (an exponent, a non-zero fraction, too many digits).
fn integer_value(header: &str) -> Option<i128> {
    let (whole, fraction) = header.split_once('.').unwrap_or((header, ""));
    if header.ends_with('.') || !fraction.bytes().all(|b| b == b'0') {
        return None;
    }
    let digits = whole.strip_prefix(['-', '+']).unwrap_or(whole);
    if digits.is_empty() || digits.len() > 38 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    whole.parse::<i128>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_examples_round_trip() {
        for (plain, encoded) in [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ] {
            assert_eq!(encode_value(plain), encoded);
            assert_eq!(decode_value(encoded.as_bytes()).unwrap(), plain);
        }
    }

    #[test]
    fn rejects_bad_values() {
        assert_eq!(decode_value(b"=?base64?!!!?="), Err(HeaderValueError::BadBase64));
        assert_eq!(decode_value(b"a\x01b"), Err(HeaderValueError::InvalidCharacters));
        assert_eq!(decode_value(b"  ok  ").unwrap(), "ok");
    }

    #[test]
    fn numeric_comparison() {
        assert!(matches_body("42", &json!(42)));
        assert!(matches_body("42.0", &json!(42)));
        assert!(!matches_body("43", &json!(42)));
        assert!(matches_body("true", &json!(true)));
        assert!(!matches_body("True", &json!(true)));
        // Exact for integers beyond f64's 53 bits.
        assert!(!matches_body("9007199254740992", &json!(9007199254740993u64)));
        assert!(matches_body("9007199254740993", &json!(9007199254740993u64)));
        assert!(!matches_body("9223372036854775808", &json!(9223372036854776808u64)));
        assert!(matches_body("18446744073709551615", &json!(u64::MAX)));
        assert!(matches_body("-12.00", &json!(-12)));
        assert!(!matches_body("12.5", &json!(12)));
        assert!(!matches_body("1e1", &json!(10)));
        assert!(!matches_body("42.", &json!(42)));
        assert!(matches_body("0.5", &json!(0.5)));
    }
}
