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
    if let Some(rest) = quoted.strip_prefix("invalid type: ") {
        if let Some((got, expected)) = rest.split_once(", expected ") {
            return format!("expected {expected}, got {got}");
        }
    }
    quoted
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
        assert_eq!(why(r#"{"seconds": "soon"}"#), "argument \"seconds\": expected u64, got string \"soon\"");
        assert_eq!(
            why(r#"{"seconds": 1, "inner": {"depth": 1, "x": 2}}"#),
            "argument \"inner\": there is no argument \"x\" (the arguments are \"depth\")"
        );
        assert_eq!(
            why(r#"{"seconds": 1, "inner": {"depth": -1}}"#),
            "argument \"inner.depth\": invalid value: integer \"-1\", expected u32"
        );
        for message in [why("{}"), why(r#"{"seconds": true}"#)] {
            assert!(!message.contains("line") && !message.contains("column") && !message.contains('`'), "{message}");
        }
    }
}
