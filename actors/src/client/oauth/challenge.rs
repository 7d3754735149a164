//! A `WWW-Authenticate` challenge of the `Bearer` (RFC 6750 §3, RFC 9728
//! §5.1) or `DPoP` (RFC 9449 §7.1) scheme, read into its parameters:
//! `resource_metadata`, `scope`, `error`.

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
    /// Reads the Bearer or DPoP challenge of a header value: a DPoP one
    /// asking for a nonce wins (its retry is what is needed), else the
    /// Bearer one, else the DPoP one; other schemes, and parameters this
    /// client does not use, are skipped.
    pub fn parse(header: &str) -> Self {
        let bearer = Self::of_scheme(header, "bearer");
        let dpop = Self::of_scheme(header, "dpop");
        match (bearer, dpop) {
            (b, Some(mut d)) if d.error.as_deref() == Some("use_dpop_nonce") => {
                d.resource_metadata = d.resource_metadata.or(b.and_then(|b| b.resource_metadata));
                d
            }
            (Some(b), _) => b,
            (None, Some(d)) => d,
            (None, None) => Challenge::default(),
        }
    }

    fn of_scheme(header: &str, scheme: &str) -> Option<Self> {
        let mut out = Challenge::default();
        let start = find_scheme(header, scheme)?;
        let mut rest = &header[start + scheme.len()..];
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
        Some(out)
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
        let c = Challenge::parse(r#"Bearer resource_metadata="https://m", DPoP error="use_dpop_nonce", algs="ES256""#);
        assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(c.resource_metadata.as_deref(), Some("https://m"));
        assert_eq!(Challenge::parse(r#"DPoP algs="ES256", scope="a""#).scope.as_deref(), Some("a"));
    }
}
