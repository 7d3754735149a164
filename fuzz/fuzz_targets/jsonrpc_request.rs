//! One incoming message as the dispatcher sees it: the JSON-RPC envelope,
//! then `_meta` validation against every served version (with and without
//! a version header), then the method and its params — by the ordered slow
//! path and by the one-pass fast path, which must agree; and the one-pass
//! reading of the whole message, which reads nothing the general way would
//! read otherwise.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_protocol::jsonrpc::{decode, Incoming};
use mcp_protocol::meta::VersionHeader;
use mcp_protocol::request::{ClientNotification, ClientRequest};
use mcp_protocol::{Message, ProtocolVersion, RequestMeta};

fuzz_target!(|data: &[u8]| {
    // The one entry: a request read in one pass, or the general way.
    let one = match mcp_protocol::decode(data, mcp_protocol::Expect::Stateless) {
        Message::Stateless(one, _) => Some(one),
        Message::General(_) => None,
    };
    let decoded = decode(data);
    if one.is_some() && !matches!(decoded, Ok(Incoming::Request(_))) {
        panic!("read in one pass, refused the general way");
    }
    match decoded {
        Ok(Incoming::Request(r)) => {
            let _ = RequestMeta::peek_version(r.params.as_ref());
            for header in [VersionHeader::NotApplicable, VersionHeader::Missing, VersionHeader::Present("2026-07-28")] {
                let _ = RequestMeta::validate(r.params.as_ref(), header, ProtocolVersion::ALL);
            }
            let slow = ClientRequest::from_parts(&r.method, r.params.as_ref());
            if let Ok(request) = &slow {
                let _ = (request.method(), request.name_for_header().map(str::len));
            }
            let fast = r.params.as_ref().and_then(|p| ClientRequest::parse_with_meta(&r.method, p));
            // What the whole message read in one pass gives, the general way
            // gives too: the same id, method, request and `_meta` keys.
            if let Some(one) = &one {
                assert_eq!((one.id.to_string(), one.method), (r.id.to_string(), r.method.as_str()));
                let (request, keys) = fast.as_ref().expect("params read in one pass");
                assert_eq!(&one.request, request);
                assert_eq!(format!("{:?}", one.keys), format!("{keys:?}"));
            }
            // The one-pass reading of params, when it reads at all, agrees
            // with the ordered slow path: the same request and `_meta`.
            if let Some((fast, keys)) = &fast {
                assert_eq!(slow.as_ref(), Ok(fast));
                for header in [VersionHeader::NotApplicable, VersionHeader::Missing, VersionHeader::Present("2026-07-28")] {
                    assert_eq!(
                        RequestMeta::validate_keys(keys, header, ProtocolVersion::ALL),
                        RequestMeta::validate(r.params.as_ref(), header, ProtocolVersion::ALL)
                    );
                }
            }
        }
        Ok(Incoming::Notification(n)) => {
            let _ = ClientNotification::from_parts(&n.method, n.params.as_ref());
        }
        _ => {}
    }
});
