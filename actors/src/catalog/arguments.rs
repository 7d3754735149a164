//! Typed arguments of a tool or prompt, and what a caller is told when they
//! do not fit: which argument is wrong, in words a model can act on
//! (`argument "seconds": expected an integer, got the string "soon"`),
//! never a parser's line and column.

use serde::de::DeserializeOwned;

use mcp_protocol::RawObject;

/// The arguments as `A`, or a sentence saying what is wrong with them.
pub(crate) fn parse<A: DeserializeOwned>(args: &RawObject) -> Result<A, String> {
    // The fast path first; the path-tracking parse only for a refusal.
    args.parse::<A>().map_err(|_| explain::<A>(args.as_str()))
}

/// A prompt's arguments (an object of strings) as `A`, or a sentence
/// saying what is wrong with them.
pub(crate) fn from_value<A: DeserializeOwned>(args: serde_json::Value) -> Result<A, String> {
    serde_path_to_error::deserialize::<_, A>(args).map_err(|e| {
        let path = e.path().to_string();
        sentence(&path, &e.into_inner().to_string())
    })
}

/// Why `text` does not parse as `A`, naming the argument at fault.
fn explain<A: DeserializeOwned>(text: &str) -> String {
    let mut de = serde_json::Deserializer::from_str(text);
    let Err(e) = serde_path_to_error::deserialize::<_, A>(&mut de) else {
        return "the arguments do not fit the tool's input schema".into();
    };
    let path = e.path().to_string();
    sentence(&path, &e.into_inner().to_string())
}

/// The sentence for serde's `message` about the value at `path` (an
/// unknown field's path ends with the field itself: the sentence names the
/// object it is in).
fn sentence(path: &str, message: &str) -> String {
    let what = words(&without_position(message));
    let path = if what.starts_with("there is no argument") {
        path.rsplit_once('.').map_or("", |(parent, _)| parent)
    } else {
        path
    };
    if path.is_empty() || path == "." {
        what
    } else {
        format!("argument \"{path}\": {what}")
    }
}

/// serde_json's message without its ` at line L column C`.
fn without_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// serde's phrasing in plainer words: backticks become quotes, and a
/// missing or unknown field is an argument.
fn words(message: &str) -> String {
    let quoted = message.replace('`', "\"");
    if let Some(name) = quoted.strip_prefix("missing field ") {
        return format!("the required argument {name} is missing");
    }
    if let Some(rest) = quoted.strip_prefix("unknown field ") {
        return match rest.split_once(", expected ") {
            Some((name, expected)) => format!("there is no argument {name} (the arguments are {expected})"),
            None => format!("there is no argument {rest}"),
        };
    }
    let rest = quoted.strip_prefix("invalid type: ").or_else(|| quoted.strip_prefix("invalid value: "));
    if let Some((got, expected)) = rest.and_then(|r| r.split_once(", expected ")) {
        let expected = json_type(expected);
        let hint = match got.strip_prefix("string \"").and_then(|s| s.strip_suffix('"')) {
            Some(text) if expected.contains("number") || expected.contains("integer") => quoted_number(text),
            _ => String::new(),
        };
        return format!("expected {expected}, got {}{hint}", json_value(got));
    }
    quoted
}

/// serde's name of what it expected, as a JSON type (`u64` is "a
/// non-negative integer", `a sequence` "an array", `struct Inner` "an
/// object").
fn json_type(expected: &str) -> String {
    let range = |lo: i128, hi: i128| format!("an integer from {lo} to {hi}");
    match expected {
        "u64" | "u128" | "usize" => "a non-negative integer".into(),
        "i64" | "i128" | "isize" => "an integer".into(),
        "u8" => range(0, u8::MAX.into()),
        "u16" => range(0, u16::MAX.into()),
        "u32" => range(0, u32::MAX.into()),
        "i8" => range(i8::MIN.into(), i8::MAX.into()),
        "i16" => range(i16::MIN.into(), i16::MAX.into()),
        "i32" => range(i32::MIN.into(), i32::MAX.into()),
        "f32" | "f64" => "a number".into(),
        "a borrowed string" => "a string".into(),
        "a character" => "a string of one character".into(),
        "unit" => "null".into(),
        "a sequence" => "an array".into(),
        "a map" => "an object".into(),
        s if s.starts_with("struct ") || s.starts_with("a map") => "an object".into(),
        s if s.starts_with("a tuple") || s.starts_with("tuple") => "an array".into(),
        s => s.into(),
    }
}

/// serde's description of the value it got, in JSON words (`string "x"` is
/// `the string "x"`, `integer "-1"` is `-1`, `unit value` is `null`).
fn json_value(got: &str) -> String {
    let literal = |kind: &str| got.strip_prefix(kind).and_then(|v| v.strip_prefix('"')?.strip_suffix('"'));
    if let Some(v) = literal("integer ").or_else(|| literal("floating point ")).or_else(|| literal("boolean ")) {
        return v.to_owned();
    }
    match got {
        "unit value" => "null".into(),
        "sequence" => "an array".into(),
        "map" => "an object".into(),
        g if g.starts_with("string ") => format!("the {g}"),
        g => g.into(),
    }
}

/// A hint when a number came quoted as a string.
fn quoted_number(text: &str) -> String {
    match text.trim().parse::<f64>() {
        Ok(_) => format!(" (write the number without quotes: {})", text.trim()),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Wait {
        seconds: u64,
        label: Option<String>,
        inner: Option<Inner>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        depth: u32,
    }

    fn why(json: &str) -> String {
        let raw: RawObject = serde_json::from_str(json).unwrap();
        parse::<Wait>(&raw).unwrap_err()
    }

    #[test]
    fn names_the_argument_in_words() {
        assert_eq!(why(r#"{}"#), "the required argument \"seconds\" is missing");
        assert_eq!(
            why(r#"{"seconds": "soon"}"#),
            "argument \"seconds\": expected a non-negative integer, got the string \"soon\""
        );
        assert_eq!(
            why(r#"{"seconds": "42"}"#),
            "argument \"seconds\": expected a non-negative integer, got the string \"42\" \
             (write the number without quotes: 42)"
        );
        assert_eq!(why(r#"{"seconds": null}"#), "argument \"seconds\": expected a non-negative integer, got null");
        assert_eq!(why(r#"{"seconds": 1, "label": ["a"]}"#), "argument \"label\": expected a string, got an array");
        assert_eq!(why(r#"{"seconds": 1, "inner": 7}"#), "argument \"inner\": expected an object, got 7");
        assert_eq!(
            why(r#"{"seconds": 1, "inner": {"depth": 1, "x": 2}}"#),
            "argument \"inner\": there is no argument \"x\" (the arguments are \"depth\")"
        );
        assert_eq!(
            why(r#"{"seconds": 1, "inner": {"depth": -1}}"#),
            "argument \"inner.depth\": expected an integer from 0 to 4294967295, got -1"
        );
        for message in [why("{}"), why(r#"{"seconds": true}"#)] {
            assert!(!message.contains("line") && !message.contains("column") && !message.contains('`'), "{message}");
            assert!(!message.contains("u64"), "{message}");
        }
    }
}
