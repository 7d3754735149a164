#!/usr/bin/env bash
# How cost grows with the work: one curve per dimension, each at four or
# more sizes, actix-mcp and (where it does the same work) rmcp side by side.
#
#   catalog        10 … 100k tools and resources: every page of tools/list,
#                  one tools/call, one resources/read, RSS; and the server's
#                  CPU for a tools/list_changed to LISTENERS listen streams
#   listeners      1k … 100k idle listen streams over HTTP/2: RSS per stream,
#                  time to open them, p99 until every stream has an event,
#                  server CPU per delivery, beside the bare actix-web floor
#   listeners_h1   the same over HTTP/1.1, 1k … 19k streams (open-files limit)
#   subscriptions  1 … 1,024 URIs per listen stream (1,000 streams): server
#                  CPU per event and per delivery
#   inflight       1k … 50k concurrent sleeping tools/calls over HTTP/2: RSS
#                  per call, a fast call's latency beside them
#   sessions       1k … 10k legacy sessions: RSS per session, tools/call in one
#   tasks          1k … 100k live tasks, in memory and in Redis: memory per
#                  task, creation rate, tasks/get latency
#   instances      1 … 4 instances over one Redis: p99 until every stream on
#                  every instance has an event, Redis CPU per event
#
# Servers on CPU 0, mcp-load on CPU 1. Every reply is verified. It writes
# OUT/results.tsv, one SVG per curve and OUT/scale.md (the tables, the
# ratios to rmcp, and a check that no curve grows faster than linearly).
#
#   bash benches/scale.sh                 # the full sizes (about 15 min here)
#   SCALE_QUICK=1 bash benches/scale.sh   # smaller sizes (about 7 min)
#   CURVES="catalog inflight" bash benches/scale.sh
# Bounded: every run has a fixed size and a time limit (`timeout`).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib.sh
. benches/lib.sh
OUT="${OUT:-target/scale}"
CURVES="${CURVES:-catalog listeners listeners_h1 subscriptions inflight sessions tasks instances}"
if [ "${SCALE_QUICK:-0}" = 1 ]; then
  CATALOG="10 100 1000 10000"; LISTENERS_AT="500 1000 2000 5000"; LISTENERS=2000; H1_AT="500 1000 2000 5000"
  SUBS="1 16 256 1024"; SUB_STREAMS=200; INFLIGHT="250 500 1000 2000"
  SESSIONS="100 250 500 1000"; TASKS="250 500 1000 2000"; INSTANCES="1 2 3 4"; INST_STREAMS=400
else
  CATALOG="10 1000 10000 100000"; LISTENERS_AT="1000 10000 50000 100000"; LISTENERS=10000; H1_AT="1000 5000 10000 19000"
  SUBS="1 16 128 1024"; SUB_STREAMS=1000; INFLIGHT="1000 10000 25000 50000"
  SESSIONS="1000 2500 5000 10000"; TASKS="1000 10000 30000 100000"; INSTANCES="1 2 3 4"; INST_STREAMS=3000
fi
streams_fit 19000

echo "building the release binaries (actix-mcp with HTTP/2, mcp-load, rmcp)…"
cargo build --profile "$PROFILE" -q -p actix-mcp --features full --example scale_server
cargo build --profile "$PROFILE" -q -p mcp-load
cargo build --release -q --manifest-path benches/rmcp-echo/Cargo.toml
MCP=target/$PROFILE/examples/scale_server LOAD=target/$PROFILE/mcp-load RMCP=benches/rmcp-echo/target/release/rmcp-echo
mkdir -p "$OUT"
RESULTS="$OUT/results.tsv"; : >"$RESULTS"
CONFIG="$OUT/scale.toml"
PORT=18301 REDIS_PORT=18379
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# The generous limits of these runs (every limit is a setting; its default
# is smaller than some of the sizes here).
cat >"$CONFIG" <<EOF
[http]
h2c = true
workers = 1
max_connections = 30000
[hub]
max_listeners = 200000
[legacy]
max_sessions = 20000
[tasks]
max_tasks = 200000
[request]
timeout_ms = 120000
[log]
level = "warning"
EOF

wait_port() { # PORT
  for _ in $(seq 1 300); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
  echo "nothing listens on $1" >&2; exit 1
}
# start_mcp PORT [ENV=VALUE…]: the scale server on CPU 0; sets STARTED.
start_mcp() {
  local port=$1; shift
  env "$@" taskset -c 0 "$MCP" --config "$CONFIG" --http "127.0.0.1:$port" 2>>"$OUT/server.log" &
  STARTED=$!; PIDS+=("$STARTED"); wait_port "$port"
}
start_rmcp() { # PORT [ENV=VALUE…]
  local port=$1; shift
  env "$@" taskset -c 0 "$RMCP" "127.0.0.1:$port" 2>>"$OUT/server.log" &
  STARTED=$!; PIDS+=("$STARTED"); wait_port "$port"
}
# start_floor PORT [ARG…]: the bare actix-web SSE floor (echo-baseline
# --fanout, a channel-fed response per stream) on CPU 0; sets STARTED.
start_floor() {
  local port=$1; shift
  taskset -c 0 target/$PROFILE/echo-baseline "127.0.0.1:$port" --fanout "$@" 2>>"$OUT/server.log" &
  STARTED=$!; PIDS+=("$STARTED"); wait_port "$port"
}
load() { timeout 600 taskset -c 1 "$LOAD" "$@"; }
# record CURVE SERVER SIZE FIGURES…
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" | tee -a "$RESULTS"; }
scale_line() { grep '^SCALE ' | sed 's/^SCALE [a-z-]* //'; }
# The figures of a fan-out log: open_s, per_stream_kib, p99_ms, event_ms, and
# per_delivery_us for N deliveries per event.
fanout_figures() { # LOG N
  python3 - "$1" "$2" <<'PY'
import re, sys
log, n = sys.argv[1], int(sys.argv[2])
f = {}
if m := re.search(r"opened \d+ listen streams in ([0-9.]+)s", log): f["open_s"] = m[1]
if m := re.search(r"per-stream=([0-9.]+) KiB", log): f["per_stream_kib"] = m[1]
if m := re.search(r"until every stream has it: .*p99=([0-9.]+)ms", log): f["p99_ms"] = m[1]
# The scheduler's run time (finer than 10 ms ticks for events of a few ms).
if m := re.search(r"run time per event: server ([0-9.]+) ms \(--pid\), this client ([0-9.]+) ms", log):
    f["event_ms"] = m[1]; f["per_delivery_us"] = f"{float(m[1]) * 1000 / n:.3f}"
    f["client_us"] = f"{float(m[2]) * 1000 / n:.3f}"
for m in re.finditer(r"run time per event of (\d+): ([0-9.]+) ms", log): f[f"cpu_{m[1]}"] = m[2]
print(" ".join(f"{k}={v}" for k, v in f.items()))
PY
}

# Events for N streams: enough that the server's CPU per event (read in
# 10 ms ticks) is counted over a second or more.
events_for() { local e=$(( 400000 / $1 )); echo $(( e < 20 ? 20 : e > 200 ? 200 : e )); }

curve_catalog() {
  for n in $CATALOG; do
    local mid; mid=$(printf '%05d' $((n / 2)))
    start_mcp $PORT SCALE_TOOLS="$n" SCALE_RESOURCES="$n"; local pid=$STARTED
    local line; line=$(load catalog --url "http://127.0.0.1:$PORT/mcp" --tool "tool_$mid" --uri "scale://item/$mid" --pid "$pid" | scale_line)
    local log; log=$(load fanout --url "http://127.0.0.1:$PORT/mcp" --streams "$LISTENERS" --events "$(events_for "$LISTENERS")" --event tools \
      --http2 --h2-connections 16 --pid "$pid")
    record catalog actix-mcp "$n" "$line event_ms=$(sed -n 's/.*run time per event: server \([0-9.]*\) ms.*/\1/p' <<<"$log")"
    stop_process "$pid"
    start_rmcp $PORT SCALE_TOOLS="$n" SCALE_RESOURCES="$n"; pid=$STARTED
    record catalog rmcp "$n" "$(load catalog --url "http://127.0.0.1:$PORT/mcp" --tool "tool_$mid" --uri "scale://item/$mid" --pid "$pid" | scale_line)"
    stop_process "$pid"
  done
}

curve_listeners() {
  for n in $LISTENERS_AT; do
    local conns=$(( n / 800 > 16 ? n / 800 : 16 ))
    start_mcp $PORT; local pid=$STARTED
    local log; log=$(load fanout --url "http://127.0.0.1:$PORT/mcp" --streams "$n" --events "$(events_for "$n")" \
      --http2 --h2-connections "$conns" --pid "$pid")
    record listeners actix-mcp "$n" "$(fanout_figures "$log" "$n")"
    stop_process "$pid"
    # The floor: a bare actix-web SSE response per stream fed by a channel,
    # over the same HTTP/2 connections (echo-baseline --fanout --h2c).
    start_floor $PORT --h2c; pid=$STARTED
    log=$(load fanout --url "http://127.0.0.1:$PORT/mcp" --streams "$n" --events "$(events_for "$n")" \
      --http2 --h2-connections "$conns" --pid "$pid")
    record listeners "bare actix-web" "$n" "$(fanout_figures "$log" "$n")"
    stop_process "$pid"
    # rmcp: the same streams opened and held (it has no trigger for an
    # event), at most 200 on a connection (hyper's limit of streams).
    start_rmcp $PORT; pid=$STARTED
    log=$(load listen --url "http://127.0.0.1:$PORT/mcp" --streams "$n" --http2 --h2-connections $(( n / 150 + 1 )) \
      --pid "$pid" --hold 1 --settle 0)
    record listeners rmcp "$n" "$(fanout_figures "$log" "$n")"
    stop_process "$pid"
  done
}

# The same over HTTP/1.1 (a connection per stream, up to the open-files
# limit), beside the bare actix-web floor.
curve_listeners_h1() {
  for n in $H1_AT; do
    start_mcp $PORT; local pid=$STARTED
    local log; log=$(load fanout --url "http://127.0.0.1:$PORT/mcp" --streams "$n" --events "$(events_for "$n")" \
      --sources 4 --pid "$pid")
    record listeners_h1 actix-mcp "$n" "$(fanout_figures "$log" "$n")"
    stop_process "$pid"
    start_floor $PORT; pid=$STARTED
    log=$(load fanout --url "http://127.0.0.1:$PORT/mcp" --streams "$n" --events "$(events_for "$n")" \
      --sources 4 --pid "$pid")
    record listeners_h1 "bare actix-web" "$n" "$(fanout_figures "$log" "$n")"
    stop_process "$pid"
  done
}

curve_subscriptions() {
  for k in $SUBS; do
    start_mcp $PORT; local pid=$STARTED
    local log; log=$(load fanout --url "http://127.0.0.1:$PORT/mcp" --streams "$SUB_STREAMS" \
      --subscriptions "$k" --sources 4 --pid "$pid" --events "$(events_for "$SUB_STREAMS")")
    record subscriptions actix-mcp "$k" "$(fanout_figures "$log" "$SUB_STREAMS")"
    stop_process "$pid"
  done
}

curve_inflight() {
  for n in $INFLIGHT; do
    # Long enough that every call still sleeps while the fast ones are timed.
    # At most 150 calls on a connection: hyper (rmcp) takes 200 at a time.
    local conns=$(( n / 150 + 1 )) SLEEP_MS=$(( 8000 + n * 2 / 5 ))
    start_mcp $PORT; local pid=$STARTED
    record inflight actix-mcp "$n" "$(load inflight --url "http://127.0.0.1:$PORT/mcp" --calls "$n" --ms "$SLEEP_MS" \
      --h2-connections "$conns" --pid "$pid" | scale_line)"
    stop_process "$pid"
    start_rmcp $PORT; pid=$STARTED
    record inflight rmcp "$n" "$(load inflight --url "http://127.0.0.1:$PORT/mcp" --calls "$n" --ms "$SLEEP_MS" \
      --h2-connections "$conns" --pid "$pid" | scale_line)"
    stop_process "$pid"
  done
}

curve_sessions() {
  for n in $SESSIONS; do
    start_mcp $PORT; local pid=$STARTED
    record sessions actix-mcp "$n" "$(load sessions --url "http://127.0.0.1:$PORT/mcp" --sessions "$n" --pid "$pid" | scale_line)"
    stop_process "$pid"
  done
}

start_redis() {
  taskset -c 0 redis-server --port $REDIS_PORT --save '' --appendonly no --loglevel warning >/dev/null &
  REDIS=$!; PIDS+=("$REDIS"); wait_port $REDIS_PORT
}
redis_used_kib() { redis-cli -p $REDIS_PORT info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p' | awk '{print $1 / 1024}'; }

curve_tasks() {
  command -v redis-server >/dev/null || { echo "SKIP tasks in Redis: no redis-server"; }
  for n in $TASKS; do
    start_mcp $PORT; local pid=$STARTED
    record tasks "actix-mcp, memory" "$n" "$(load live-tasks --url "http://127.0.0.1:$PORT/mcp" --tasks "$n" --pid "$pid" | scale_line)"
    stop_process "$pid"
    command -v redis-server >/dev/null || continue
    start_redis
    start_mcp $PORT ACTIX_MCP_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/" ACTIX_MCP_HUB_BACKEND=redis; pid=$STARTED
    local before; before=$(redis_used_kib)
    local line; line=$(load live-tasks --url "http://127.0.0.1:$PORT/mcp" --tasks "$n" | scale_line)
    local after; after=$(redis_used_kib)
    line=$(sed 's/per_task_kib=[0-9.]*//' <<<"$line")
    record tasks "actix-mcp, Redis" "$n" "$line per_task_kib=$(echo "$before $after $n" | awk '{printf "%.2f", ($2 - $1) / $3}')"
    stop_process "$pid"; stop_process "$REDIS"
  done
}

curve_instances() {
  command -v redis-server >/dev/null || { echo "SKIP instances: no redis-server"; return; }
  for n in $INSTANCES; do
    start_redis
    local urls=() pids=() i
    for i in $(seq 0 $((n - 1))); do
      start_mcp $((PORT + i)) ACTIX_MCP_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/" ACTIX_MCP_HUB_BACKEND=redis
      pids+=("$STARTED"); urls+=(--also-url "http://127.0.0.1:$((PORT + i))/mcp")
    done
    local cpus=() p; for p in "${pids[@]:1}"; do cpus+=(--cpu-of "$p"); done
    local log; log=$(load fanout --url "http://127.0.0.1:$PORT/mcp" "${urls[@]:2}" --streams "$INST_STREAMS" \
      --events "$(events_for "$INST_STREAMS")" --sources 4 --pid "${pids[0]}" "${cpus[@]}" --cpu-of "$REDIS")
    local figures; figures=$(fanout_figures "$log" "$INST_STREAMS")
    # Server CPU per event summed over the instances; Redis's apart.
    local total; total=$(python3 - "$figures" "$REDIS" <<'PY'
import sys
f = dict(kv.split("=") for kv in sys.argv[1].split())
redis = f.pop(f"cpu_{sys.argv[2]}", "0")
total = float(f.get("event_ms", 0)) + sum(float(v) for k, v in f.items() if k.startswith("cpu_"))
print(f"p99_ms={f.get('p99_ms')} event_ms={total:.2f} redis_ms={redis}")
PY
)
    record instances actix-mcp "$n" "$total"
    for p in "${pids[@]}"; do stop_process "$p"; done
    stop_process "$REDIS"
  done
}

for c in $CURVES; do
  t0=$(date +%s)
  echo "== $c"
  "curve_$c"
  echo "== $c took $(( $(date +%s) - t0 )) s"
done
python3 benches/scale_plot.py "$RESULTS" "$OUT" | tee "$OUT/scale.md"
echo "tables: $OUT/scale.md; curves: $OUT/*.svg"
