#!/usr/bin/env bash
# What sharing legacy sessions through Redis costs (`legacy.store = "redis"`
# beside `"memory"`, the hub on Redis in both):
#
# 1. `tools/call` in a 2025-11-25 session, measured with wrk as
#    benches/wrk/ab.sh measures it (server on CPU 0, wrk on CPU 1, rounds
#    interleaved, wrk's own CPU printed): A = memory, B = redis.
# 2. The first message of a session on an instance that does not hold it
#    yet (it reads the session from Redis), beside the next ones there:
#    SESSIONS sessions opened on one instance, each then pinged twice on a
#    second instance; the medians and p99 of each.
#
#   bash benches/legacy_store.sh          (ROUNDS=5 DURATION=5 CONNS="16 256" SESSIONS=300)
#
# BIN is the server (default target/$PROFILE/actix-mcp). Needs redis-server,
# wrk, curl and python3. Loopback only; every run is bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/lib.sh
# Without BIN, the server is built here (every feature, $PROFILE).
[ -n "${BIN:-}" ] || build_server
BIN="${BIN:-target/$PROFILE/actix-mcp}"
needs redis-server wrk curl python3 "$BIN"
SESSIONS="${SESSIONS:-300}"
WORK="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT

RPORT=$(( 20000 + RANDOM % 20000 ))
redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
for _ in $(seq 1 100); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && break; sleep 0.05; done 2>/dev/null || sleep 0.5
for store in memory redis; do
  printf '[hub]\nbackend = "redis"\nredis_channel_prefix = "bench-%s"\n[redis]\nurl = "redis://127.0.0.1:%s/"\n[legacy]\nstore = "%s"\n' \
    "$$" "$RPORT" "$store" >"$WORK/$store.toml"
done

echo "== tools/call in a legacy session: A = legacy.store memory, B = redis"
SCRIPT=legacy_call.lua A_ARGS="--config $WORK/memory.toml" B_ARGS="--config $WORK/redis.toml" \
  bash benches/wrk/ab.sh "$BIN" "$BIN" | tee "$WORK/ab.txt"

echo "== the first message of a session on another instance (legacy.store = redis)"
urls=()
for i in 1 2; do
  "$BIN" serve --config "$WORK/redis.toml" --catalog everything --bind 127.0.0.1:0 --log-level warning 2>"$WORK/node$i.log" &
  for _ in $(seq 1 100); do
    url="$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$WORK/node$i.log" | head -n1)"; [ -n "$url" ] && break; sleep 0.05
  done
  [ -n "$url" ] || { cat "$WORK/node$i.log" >&2; exit 1; }
  urls+=("$url")
done
python3 - "${urls[0]}" "${urls[1]}" "$SESSIONS" <<'PY' | tee "$WORK/adopt.txt"
import http.client, json, statistics, sys, time, urllib.parse
a, b, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def conn(url):
    u = urllib.parse.urlparse(url)
    return http.client.HTTPConnection(u.hostname, u.port), u.path
ca, path = conn(a)
cb, _ = conn(b)
H = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
def post(c, body, sid=None):
    h = dict(H)
    if sid:
        h["Mcp-Session-Id"] = sid
    t = time.perf_counter()
    c.request("POST", path, json.dumps(body), h)
    r = c.getresponse()
    data = r.read()
    took = (time.perf_counter() - t) * 1e6
    if r.status != 200:
        sys.exit(f"{r.status}: {data[:300]!r}")
    return r, took
init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}
ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
first, next_ = [], []
for _ in range(n):
    r, _ = post(ca, init)
    sid = r.getheader("Mcp-Session-Id")
    first.append(post(cb, ping, sid)[1])
    next_.append(post(cb, ping, sid)[1])
def p99(v):
    return sorted(v)[int(len(v) * 0.99) - 1]
print(f"first message elsewhere: p50 {statistics.median(first):.0f} us, p99 {p99(first):.0f} us; "
      f"next ones: p50 {statistics.median(next_):.0f} us, p99 {p99(next_):.0f} us ({n} sessions)")
PY

python3 - "$WORK/ab.txt" "$WORK/adopt.txt" <<'PY'
import re, sys
ab, adopt = open(sys.argv[1]).read(), open(sys.argv[2]).read()
parts, med = [], {}
for m in re.finditer(r"^\s*(\d+)\s+([AB])\s+(\d+) \(", ab, re.M):
    med[(m.group(1), m.group(2))] = m.group(3)
for m in re.finditer(r"^\s*(\d+)\s+B/A paired by round, median \(min-max\): req/s (\S+)", ab, re.M):
    c = m.group(1)
    parts.append(f"{c} conns memory {med[(c, 'A')]} req/s, redis {med[(c, 'B')]} ({m.group(2)}x)")
m = re.search(r"first message elsewhere: p50 (\d+) us.*next ones: p50 (\d+) us", adopt)
tail = f"; first message on another instance +{int(m.group(1)) - int(m.group(2))} us at p50" if m else ""
print("legacy-store: " + "; ".join(parts) + tail)
PY
