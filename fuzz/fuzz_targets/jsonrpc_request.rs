//! One incoming message as the dispatcher sees it: the JSON-RPC envelope,
//! then `_meta` validation against every served version (with and without
//! a version header), then the method and its params.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_protocol::jsonrpc::{decode, Incoming};
use mcp_protocol::meta::VersionHeader;
use mcp_protocol::request::{ClientNotification, ClientRequest};
use mcp_protocol::{ProtocolVersion, RequestMeta};

fuzz_target!(|data: &[u8]| {
    match decode(data) {
        Ok(Incoming::Request(r)) => {
            let _ = RequestMeta::peek_version(r.params.as_ref());
            for header in [VersionHeader::NotApplicable, VersionHeader::Missing, VersionHeader::Present("2026-07-28")] {
                let _ = RequestMeta::validate(r.params.as_ref(), header, ProtocolVersion::ALL);
            }
            if let Ok(request) = ClientRequest::from_parts(&r.method, r.params) {
                let _ = (request.method(), request.name_for_header().map(str::len));
            }
        }
        Ok(Incoming::Notification(n)) => {
            let _ = ClientNotification::from_parts(&n.method, n.params.as_ref());
        }
        _ => {}
    }
});
