//! `x-mcp-header` annotations of a tool's input schema: which argument
//! values the client mirrors into `Mcp-Param-{Name}` headers. A server
//! checks a tool's annotations when it is added; a client reads them from
//! `tools/list` (and leaves out a tool whose annotations are invalid).

use serde_json::Value;

/// One annotated parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The header name suffix (`Mcp-Param-{name}`).
    pub name: String,
    /// The chain of `properties` keys from the schema root to the value.
    pub path: Vec<String>,
}

impl HeaderParam {
    /// The full header name.
    pub fn header_name(&self) -> String {
        format!("Mcp-Param-{}", self.name)
    }

    /// The argument value at this parameter's path, if present and not null.
    pub fn value_in<'a>(&self, args: &'a serde_json::Map<String, Value>) -> Option<&'a Value> {
        let (last, parents) = self.path.split_last()?;
        let mut obj = args;
        for key in parents {
            obj = obj.get(key)?.as_object()?;
        }
        obj.get(last).filter(|v| !v.is_null())
    }
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Collects the annotations reachable through `properties` chains and checks
/// the spec's constraints (token syntax, unique case-insensitively, primitive
/// non-`number` types). An annotation anywhere else makes the tool invalid.
pub fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out)?;
    let reachable = out.len();
    if count_annotations(schema) != reachable {
        return Err("x-mcp-header is only allowed on properties reachable through `properties` keys".into());
    }
    let mut seen = std::collections::HashSet::new();
    for p in &out {
        if !seen.insert(p.name.to_ascii_lowercase()) {
            return Err(format!("x-mcp-header {:?} is not unique", p.name));
        }
    }
    Ok(out)
}

fn walk(schema: &Value, path: &mut Vec<String>, out: &mut Vec<HeaderParam>) -> Result<(), String> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, prop) in props {
        path.push(key.clone());
        if let Some(h) = prop.get("x-mcp-header") {
            let name = h.as_str().ok_or("x-mcp-header must be a string")?;
            if name.is_empty() || !name.bytes().all(is_tchar) {
                return Err(format!("x-mcp-header {name:?} is not an HTTP token"));
            }
            match prop.get("type").and_then(Value::as_str) {
                Some("string" | "integer" | "boolean") => {}
                other => return Err(format!("x-mcp-header {name:?} is on a parameter of type {other:?}")),
            }
            out.push(HeaderParam { name: name.to_owned(), path: path.clone() });
        }
        walk(prop, path, out)?;
        path.pop();
    }
    Ok(())
}

fn count_annotations(v: &Value) -> usize {
    match v {
        Value::Object(m) => m.iter().map(|(k, v)| usize::from(k == "x-mcp-header") + count_annotations(v)).sum(),
        Value::Array(a) => a.iter().map(count_annotations).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_nested_annotations() {
        let s = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }});
        let p = header_params(&s).unwrap();
        assert_eq!(p.len(), 2);
        let args = json!({"opts": {"n": 3}}).as_object().unwrap().clone();
        let n = p.iter().find(|p| p.name == "N").unwrap();
        assert_eq!(n.value_in(&args), Some(&json!(3)));
    }

    #[test]
    fn rejects_invalid_annotations() {
        for s in [
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
        ] {
            assert!(header_params(&s).is_err(), "{s}");
        }
    }
}
