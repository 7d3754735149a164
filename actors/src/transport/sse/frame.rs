//! The SSE framing: one single-line JSON message per `data:` event, and the
//! keep-alive comment.

use bytes::Bytes;
use mcp_protocol::subscription::EventTemplate;
use mcp_protocol::RequestId;

/// The SSE comment a quiet stream sends now and then.
pub const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// An SSE `data:` event around `len` bytes of single-line JSON that
/// `write` appends, in one allocation.
fn data_event(len: usize, write: impl FnOnce(&mut Vec<u8>)) -> Bytes {
    let mut f = Vec::with_capacity(len + 8);
    f.extend_from_slice(b"data: ");
    write(&mut f);
    f.extend_from_slice(b"\n\n");
    f.into()
}

/// One encoded single-line JSON message as an SSE `data:` event.
pub fn frame(json: &[u8]) -> Bytes {
    debug_assert!(!json.contains(&b'\n'), "messages are single-line JSON");
    data_event(json.len(), |f| f.extend_from_slice(json))
}

/// A routed event for subscription `id` as an SSE `data:` event, encoded
/// straight into its frame (no copy).
pub fn frame_event(event: &EventTemplate, id: &RequestId) -> Bytes {
    data_event(event.encoded_len(id), |f| event.encode_into(id, f))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::subscription::Event;

    #[test]
    fn an_event_framed_directly_equals_its_encoding_framed() {
        let event = Event::ResourceUpdated { uri: "test://watched-resource".into() };
        let template = EventTemplate::new(&event);
        for id in [RequestId::number(12), RequestId::string("listen-1")] {
            let direct = frame_event(&template, &id);
            assert_eq!(direct, frame(&template.encode_for(&id)));
            assert!(direct.starts_with(b"data: {") && direct.ends_with(b"}\n\n"), "{direct:?}");
        }
    }
}
