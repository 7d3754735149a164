//! A `WWW-Authenticate: Bearer …` challenge (RFC 6750 §3, RFC 9728 §5.1),
//! read into its parameters: `resource_metadata`, `scope`, `error`.

/// The parameters of a Bearer challenge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// The protected resource metadata URL (RFC 9728).
    pub resource_metadata: Option<String>,
    /// The scopes the resource asks for.
    pub scope: Option<String>,
    /// `invalid_token`, `insufficient_scope`, …
    pub error: Option<String>,
}

impl Challenge {
    /// Reads the Bearer challenge of a header value (other schemes, and
    /// parameters this client does not use, are skipped).
    pub fn parse(header: &str) -> Self {
        let mut out = Challenge::default();
        let Some(start) = find_scheme(header, "bearer") else { return out };
        let mut rest = &header[start + "bearer".len()..];
        loop {
            rest = rest.trim_start_matches([' ', '\t', ',']);
            let Some(eq) = rest.find('=') else { break };
            let name = rest[..eq].trim().to_ascii_lowercase();
            if name.contains(' ') {
                // The next challenge's scheme: this one is over.
                break;
            }
            rest = rest[eq + 1..].trim_start();
            let (value, after) = if let Some(quoted) = rest.strip_prefix('"') {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, n)) = chars.next() {
                                value.push(n);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, &quoted[end..])
            } else {
                let end = rest.find([',', ' ']).unwrap_or(rest.len());
                (rest[..end].to_owned(), &rest[end..])
            };
            match name.as_str() {
                "resource_metadata" => out.resource_metadata = Some(value),
                "scope" => out.scope = Some(value),
                "error" => out.error = Some(value),
                _ => {}
            }
            rest = after;
        }
        out
    }
}

/// Where the `scheme` token starts (case-insensitively, as a whole word).
fn find_scheme(header: &str, scheme: &str) -> Option<usize> {
    let lower = header.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(scheme).map(|i| i + from) {
        let before_ok = i == 0 || matches!(lower.as_bytes()[i - 1], b' ' | b',');
        let after = lower.as_bytes().get(i + scheme.len());
        if before_ok && matches!(after, None | Some(b' ')) {
            return Some(i);
        }
        from = i + scheme.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bearer_parameters_quoted_or_not() {
        let c = Challenge::parse(
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://r.example/.well-known/oauth-protected-resource/mcp""#,
        );
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
        assert_eq!(c.resource_metadata.as_deref(), Some("https://r.example/.well-known/oauth-protected-resource/mcp"));
        let c = Challenge::parse(r#"Basic realm="x", Bearer scope=a,error=invalid_token"#);
        assert_eq!(c.scope.as_deref(), Some("a"));
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(Challenge::parse(r#"Basic realm="x""#), Challenge::default());
        assert_eq!(Challenge::parse("Bearer").scope, None);
        let c = Challenge::parse(r#"Bearer scope="say \"hi\"""#);
        assert_eq!(c.scope.as_deref(), Some(r#"say "hi""#));
    }
}
