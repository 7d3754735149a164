//! The address guard of webhook callbacks: a callback's host is resolved at
//! each connection, and an address that is not publicly routable
//! (loopback, private, link-local, shared, documentation, multicast,
//! metadata, or an IPv6 form embedding one) is never connected to — unless
//! an operator allowed the callback's origin (`events.webhooks.allow_origins`).
//! The connection goes to the address checked, with the callback's own
//! host name for TLS.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Whether `ip` is an address a callback may resolve to: one routed on the
/// public internet.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let special = a == 0                                  // "this network"
        || a == 10                                        // private
        || a == 127                                       // loopback
        || (a == 100 && (64..128).contains(&b))           // shared (CGNAT)
        || (a == 169 && b == 254)                         // link-local, cloud metadata
        || (a == 172 && (16..32).contains(&b))            // private
        || (a == 192 && b == 0 && c == 0)                 // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2)                 // documentation
        || (a == 192 && b == 88 && c == 99)               // 6to4 relay anycast
        || (a == 192 && b == 168)                         // private
        || (a == 198 && (b == 18 || b == 19))             // benchmarking
        || (a == 198 && b == 51 && c == 100)              // documentation
        || (a == 203 && b == 0 && c == 113)               // documentation
        || a >= 224; // multicast, reserved, broadcast
    !special
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    let special = ip.is_unspecified()
        || ip.is_loopback()
        || (s[0] & 0xfe00) == 0xfc00                      // unique local
        || (s[0] & 0xffc0) == 0xfe80                      // link-local
        || (s[0] & 0xffc0) == 0xfec0                      // site-local (deprecated)
        || (s[0] & 0xff00) == 0xff00                      // multicast
        || (s[0] == 0x2001 && s[1] == 0x0db8)             // documentation
        || (s[0] == 0x2001 && s[1] < 0x0200)              // Teredo, benchmarking, ORCHID and the like
        || (s[0] == 0x0064 && s[1] == 0xff9b && s[2] == 1) // local-use NAT64 (RFC 8215)
        || (s[0] == 0x0100 && s[1..4] == [0, 0, 0])       // discard
        || s[0] == 0; // every other form the registry reserves under ::/8
    !special
}

/// The IPv4 address an IPv6 one carries (mapped, NAT64, 6to4), which is
/// the one reached.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => Some(low(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(low(hi, lo)),
        [0x2002, hi, lo, ..] => Some(low(hi, lo)),
        _ => None,
    }
}

/// Why a callback's address was refused.
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) String);

impl std::fmt::Display for Refused {
    /// One sentence whether the name does not resolve or resolves to
    /// private addresses: a caller learns nothing of a private network's names.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} does not resolve to a publicly routable address", self.0)
    }
}

impl std::error::Error for Refused {}

/// The resolver of every callback that is not allowed past the guard: what
/// a name resolves to, without the addresses that are not public (none
/// left: [`Refused`]).
#[derive(Debug, Default)]
pub(crate) struct GuardedResolver;

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> = match tokio::net::lookup_host((host.as_str(), 0)).await {
                Ok(found) => found.collect(),
                Err(_) => Vec::new(),
            };
            let public: Vec<SocketAddr> = found.into_iter().filter(|a| is_public(a.ip())).collect();
            if public.is_empty() {
                return Err(Box::new(Refused(host)) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_private_link_local_and_their_v6_forms_are_not_public() {
        let refused = [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.2.7",
            "198.18.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "2002:7f00:1::",
            "2001::1",
            "::127.0.0.1",
            "fec0::1",
        ];
        for ip in refused {
            assert!(!is_public(ip.parse().unwrap()), "{ip} must be refused");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(is_public(ip.parse().unwrap()), "{ip} is public");
        }
    }

    #[actix_rt::test]
    async fn a_name_resolving_to_loopback_is_refused_by_the_resolver() {
        use reqwest::dns::Resolve;
        let name: reqwest::dns::Name = "localhost".parse().unwrap();
        let error = match GuardedResolver.resolve(name).await {
            Ok(addrs) => panic!("localhost resolved to {:?}", addrs.collect::<Vec<_>>()),
            Err(e) => e,
        };
        assert!(error.to_string().contains("not resolve to a publicly routable"), "{error}");
        let missing: reqwest::dns::Name = "no-such-host.invalid".parse().unwrap();
        let unknown = GuardedResolver.resolve(missing).await.err().expect("refused");
        assert_eq!(
            unknown.to_string().replace("no-such-host.invalid", "H"),
            error.to_string().replace("localhost", "H"),
            "a name that does not resolve reads as one that resolves privately"
        );
    }
}
