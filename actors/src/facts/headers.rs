//! [`RequestHeaders`]: the HTTP headers a request came with, as a handler
//! sees them (stdio requests have none).

/// A request's HTTP headers, names lowercase, values that are valid UTF-8
/// (others are left out). Kept in one buffer: one allocation per request,
/// and the values are checked when read, not when the request comes in.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RequestHeaders {
    /// `name\0value\0` pairs: names lowercase ASCII, values the bytes that
    /// came (one that is not UTF-8 is passed over when read). A `Vec`:
    /// shrinking it to fit would cost a reallocation per request.
    buf: Vec<u8>,
}

impl std::fmt::Debug for RequestHeaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl RequestHeaders {
    /// Headers from `(name, value)` pairs.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Self {
        // Room for a typical request's headers, so the buffer grows rarely.
        let mut buf = Vec::with_capacity(384);
        for (name, value) in pairs {
            // One pass over the name: a NUL excludes it, and HTTP/1.1 and
            // HTTP/2 header names arrive lowercased already.
            let (nul, upper) =
                name.bytes().fold((false, false), |(n, u), b| (n || b == 0, u || b.is_ascii_uppercase()));
            if nul || value.contains(&0) {
                continue;
            }
            if upper {
                buf.extend(name.bytes().map(|b| b.to_ascii_lowercase()));
            } else {
                buf.extend_from_slice(name.as_bytes());
            }
            buf.push(0);
            buf.extend_from_slice(value);
            buf.push(0);
        }
        RequestHeaders { buf }
    }

    /// Headers from pairs whose names are lowercase and whose names and
    /// values hold no NUL (those of a parsed HTTP header map), with room for
    /// `capacity` bytes of names and values.
    pub fn from_lowercase_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>, capacity: usize) -> Self {
        Self::from_header_values(pairs.into_iter().map(|(name, value)| (name, value.as_bytes())), capacity)
    }

    /// Headers from the pairs of a parsed HTTP header map: names lowercase,
    /// names and values without NUL (which a header value cannot hold),
    /// values as they came; with room for `capacity` bytes.
    pub(crate) fn from_header_values<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a [u8])>,
        capacity: usize,
    ) -> Self {
        let mut buf = Vec::with_capacity(capacity);
        for (name, value) in pairs {
            buf.extend_from_slice(name.as_bytes());
            buf.push(0);
            buf.extend_from_slice(value);
            buf.push(0);
        }
        RequestHeaders { buf }
    }

    /// Every `(name, value)` whose value is text, in the order received (a
    /// repeated header once per value).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut parts = self.buf.split(|&b| b == 0);
        std::iter::from_fn(move || loop {
            let name = parts.next().filter(|n| !n.is_empty())?;
            let value = parts.next()?;
            if let (Ok(name), Ok(value)) = (std::str::from_utf8(name), std::str::from_utf8(value)) {
                return Some((name, value));
            }
        })
    }

    /// The first value of header `name` (any case).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_ignore_case_and_skip_values_that_are_not_text() {
        let h = RequestHeaders::from_pairs([
            ("X-Tenant", &b"acme"[..]),
            ("x-binary", &[0xff, 0xfe][..]),
            ("Accept", &b"application/json, text/event-stream"[..]),
            ("x-tenant", &b"second"[..]),
        ]);
        assert_eq!(h.get("x-tenant"), Some("acme"));
        assert_eq!(h.get("ACCEPT"), Some("application/json, text/event-stream"));
        assert_eq!(h.get("x-binary"), None);
        assert_eq!(h.iter().count(), 3);
        // Names are kept lowercase whichever case they came in.
        assert_eq!(h.iter().map(|(n, _)| n).collect::<Vec<_>>(), ["x-tenant", "accept", "x-tenant"]);
        assert_eq!(RequestHeaders::default().iter().count(), 0);
    }
}
