#![allow(missing_docs)] // criterion_group! generates undocumented items
//! The protocol hot path without a runtime: decode one request line,
//! validate its `_meta`, parse it into a `ClientRequest`, encode a response.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use mcp_protocol::jsonrpc::{self, Incoming};
use mcp_protocol::meta::VersionHeader;
use mcp_protocol::{ClientRequest, ProtocolVersion, RequestMeta};
use serde_json::json;

const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#;

fn hot_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("request");
    g.throughput(Throughput::Elements(1));
    g.bench_function("decode", |b| b.iter(|| jsonrpc::decode(black_box(CALL)).unwrap()));
    g.bench_function("decode+validate+parse+encode", |b| {
        b.iter(|| {
            let Incoming::Request(r) = jsonrpc::decode(black_box(CALL)).unwrap() else { unreachable!() };
            let meta =
                RequestMeta::validate(r.params.as_ref(), VersionHeader::Present("2026-07-28"), ProtocolVersion::ALL)
                    .unwrap();
            let req = ClientRequest::from_parts(&r.method, r.params.as_ref()).unwrap();
            let result = json!({"content": [{"type": "text", "text": "hello world"}], "resultType": "complete"});
            black_box((meta, req.method(), jsonrpc::encode_result(&r.id, &result)))
        })
    });
    g.finish();
}

criterion_group!(benches, hot_path);
criterion_main!(benches);
