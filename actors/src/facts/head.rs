//! [`Head`]: what a transport knows of a request besides its body, in no
//! transport's types — its headers (HTTP; none on stdio), its query and the
//! connection it came on. Authentication ([`Authenticator`](crate::auth::Authenticator))
//! and the intake's header checks read it, so that any transport can carry a
//! caller's credentials and its `Mcp-*` headers.

use std::net::SocketAddr;

/// A header the server reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header<'a> {
    /// `Authorization`.
    Authorization,
    /// `Mcp-Method`.
    Method,
    /// `Mcp-Name`.
    Name,
    /// `MCP-Protocol-Version`.
    ProtocolVersion,
    /// `Mcp-Param-{name}` of a tool argument (the whole header name).
    Param(&'a str),
    /// Any other header, by its name (case does not matter): what an
    /// embedder's authenticator reads, say.
    Named(&'a str),
}

impl Header<'_> {
    /// The header's name as errors show it.
    pub fn name(&self) -> &str {
        match self {
            Header::Authorization => "Authorization",
            Header::Method => "Mcp-Method",
            Header::Name => "Mcp-Name",
            Header::ProtocolVersion => "MCP-Protocol-Version",
            Header::Param(name) | Header::Named(name) => name,
        }
    }
}

/// A header that came more than once: a proxy may read another value than
/// the server, so it is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeated;

/// The headers of a transport that has them.
pub trait Headers {
    /// The raw value of a header, if present once; `Err` if repeated.
    fn get(&self, name: Header<'_>) -> Result<Option<&[u8]>, Repeated>;
}

/// What a transport knows of one request besides its body.
#[derive(Clone, Copy, Default)]
pub struct Head<'a> {
    /// Its headers; `None` where the transport has none (stdio).
    pub headers: Option<&'a dyn Headers>,
    /// The query of its URI, if any (HTTP).
    pub query: Option<&'a str>,
    /// The address of the peer, where the transport has one.
    pub peer: Option<SocketAddr>,
    /// The client's TLS certificate (DER), when the connection presented one.
    pub client_certificate: Option<&'a [u8]>,
}

impl<'a> Head<'a> {
    /// The value of `name`, if present once; `Err` if repeated.
    pub fn header(&self, name: Header<'_>) -> Result<Option<&'a [u8]>, Repeated> {
        match self.headers {
            Some(h) => h.get(name),
            None => Ok(None),
        }
    }
}

impl std::fmt::Debug for Head<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Head")
            .field("headers", &self.headers.is_some())
            .field("query", &self.query)
            .field("peer", &self.peer)
            .field("client_certificate", &self.client_certificate.map(<[u8]>::len))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct One(&'static str, &'static [&'static str]);

    impl Headers for One {
        fn get(&self, name: Header<'_>) -> Result<Option<&[u8]>, Repeated> {
            if name.name() != self.0 {
                return Ok(None);
            }
            match self.1 {
                [] => Ok(None),
                [v] => Ok(Some(v.as_bytes())),
                _ => Err(Repeated),
            }
        }
    }

    #[test]
    fn a_head_reads_its_headers_and_a_transport_without_any_has_none() {
        let auth = One("Authorization", &["Bearer t"]);
        let head = Head { headers: Some(&auth), ..Head::default() };
        assert_eq!(head.header(Header::Authorization), Ok(Some(&b"Bearer t"[..])));
        assert_eq!(head.header(Header::Method), Ok(None));
        let twice = One("Mcp-Name", &["a", "b"]);
        assert_eq!(Head { headers: Some(&twice), ..Head::default() }.header(Header::Name), Err(Repeated));
        assert_eq!(Head::default().header(Header::Authorization), Ok(None));
    }
}
