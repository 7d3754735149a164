//! The stdio line reader over any input and buffer size (every byte is
//! accounted for: in a line, a newline, or an over-long line), and any
//! params as a legacy `initialize`.
#![no_main]

use actix_mcp::transport::stdio::read_line;
use libfuzzer_sys::fuzz_target;
use mcp_protocol::legacy::LegacyRequest;

fuzz_target!(|data: &[u8]| {
    let (max, input) = match data.split_first() {
        Some((m, rest)) => (usize::from(*m % 64) + 1, rest),
        None => return,
    };
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    rt.block_on(async {
        let mut reader = tokio::io::BufReader::with_capacity(max.max(2) / 2 + 1, input);
        let mut buf = Vec::new();
        let mut consumed = 0usize;
        while let Some(line) = read_line(&mut reader, &mut buf, max).await.expect("reading a slice never fails") {
            match line {
                Ok(()) => assert!(buf.len() <= max && !buf.contains(&b'\n')),
                Err(len) => assert!(len > max),
            }
            consumed += 1;
            assert!(consumed <= input.len() + 1);
        }
    });
    if let Ok(params) = serde_json::from_slice::<mcp_protocol::RawObject>(input) {
        let _ = LegacyRequest::from_parts("initialize", Some(&params));
    }
});
