#!/usr/bin/env bash
# Seeds each fuzz target's corpus (fuzz/corpus/TARGET, gitignored) from the
# specification's examples in tests/fixtures/spec and a few hand-made inputs.
set -euo pipefail
cd "$(dirname "$0")"
spec=../tests/fixtures/spec
mkdir -p corpus/{jsonrpc_request,header_values,request_state,uri_template,stdio_and_initialize}
n=0
for f in $(find "$spec" -name '*.json' | sort); do
  n=$((n + 1))
  # Whole examples, and each as the params of a request with stateless _meta.
  cp "$f" "corpus/jsonrpc_request/spec-$n"
  python3 - "$f" "corpus/jsonrpc_request/req-$n" "corpus/stdio_and_initialize/spec-$n" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}
params = dict(v) if isinstance(v, dict) else {"value": v}
params.setdefault("_meta", meta)
req = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
open(sys.argv[2], "w").write(json.dumps(req))
open(sys.argv[3], "wb").write(bytes([40, 7]) + (json.dumps(v) + "\n" + json.dumps(req) + "\n").encode())
PY
done
printf 'us-west1' >corpus/header_values/plain
printf '=?base64?SGVsbG8sIOS4lueVjA==?=' >corpus/header_values/sentinel
printf '42.0\0\n42' >corpus/header_values/number
printf '9007199254740993\0\n9007199254740993' >corpus/header_values/big
printf 'eyJ2IjoxfQ.AAAA' >corpus/request_state/shape
printf '0a1b2c3d.eyJ2IjoxfQ.AAAA' >corpus/request_state/with-key-id
printf 'test://template/{id}/data\ntest://template/123/data' >corpus/uri_template/spec
printf 'file:///{a}.{ext}\nfile:///readme.md' >corpus/uri_template/two
printf '\x10\x05{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}\n' \
  >corpus/stdio_and_initialize/initialize
echo "seeded $(find corpus -type f | wc -l) inputs from $n spec examples"
