#!/usr/bin/env bash
# Soak: two actix-mcp instances sharing a Redis backend, under a bounded mixed
# load (paced calls, listen streams held all along and receiving fan-out,
# listen churn, triggered events) while Redis is restarted every few minutes.
# The instances' RSS, open files and threads are sampled every 10 s; the run
# passes when no request failed, no held stream ended, RSS stays within 10%
# of its plateau after the warm-up, and open files come back to the
# baseline. Writes the samples (CSV) and a plot (SVG) to $SOAK_OUT.
#
#   bash benches/soak.sh                 # 20 minutes
#   SOAK_MIN=3 bash benches/soak.sh      # shorter
#
# Knobs: SOAK_MIN (20), SOAK_REDIS_EVERY_S (240; a third of the run when the
# run is shorter than 12 min), SOAK_RATE (1000 req/s), SOAK_LISTENERS (250 per
# instance), SOAK_OUT (target/soak); BIN (the server, built with every
# feature) and LOAD (the load generator) to run builds made elsewhere (CI
# runs the debug ones its tests built) instead of building both in $PROFILE.
set -euo pipefail
cd "$(dirname "$0")/.."
MIN="${SOAK_MIN:-20}"
SECS=$((MIN * 60))
EVERY="${SOAK_REDIS_EVERY_S:-$(( SECS >= 720 ? 240 : SECS / 3 ))}"
OUT="${SOAK_OUT:-target/soak}"
command -v redis-server >/dev/null || { echo "soak: redis-server is needed" >&2; exit 2; }
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
step() { echo "[$(date +%T)] $*"; }
# shellcheck source=lib.sh
. benches/lib.sh
if [ -z "${BIN:-}" ] || [ -z "${LOAD:-}" ]; then
  step "building ($PROFILE)"
  build_release
fi
BIN="${BIN:-target/$PROFILE/actix-mcp}"
LOAD="${LOAD:-target/$PROFILE/mcp-load}"
needs "$BIN" "$LOAD"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
REDIS_PORT=$(free_port)
PORT_A=$(free_port)
PORT_B=$(free_port)
WORK="$(mktemp -d)"
pids=()
cleanup() {
  kill "${RESTARTER:-}" 2>/dev/null || true
  for p in "${pids[@]}" "$(cat "$WORK/redis.pid" 2>/dev/null)"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

start_redis() {
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
    >"$WORK/redis.log" 2>&1 &
  REDIS_PID=$!
  echo "$REDIS_PID" >"$WORK/redis.pid"
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "soak: redis-server did not start" >&2
  exit 2
}
start_redis

KEY=$(head -c 32 /dev/urandom | base64)
for name in a b; do
  cat >"$WORK/$name.toml" <<TOML
[hub]
backend = "redis"
redis_url = "redis://127.0.0.1:$REDIS_PORT/"
[mrtr]
key = "$KEY"
[log]
level = "warning"
TOML
done
ACTIX_MCP_WORKERS=2 "$BIN" serve --catalog everything --config "$WORK/a.toml" \
  --bind "127.0.0.1:$PORT_A" 2>"$OUT/instance-a.log" &
pids+=($!)
ACTIX_MCP_WORKERS=2 "$BIN" serve --catalog everything --config "$WORK/b.toml" \
  --bind "127.0.0.1:$PORT_B" 2>"$OUT/instance-b.log" &
pids+=($!)
for port in "$PORT_A" "$PORT_B"; do
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
  done
done
sleep 1

: >"$OUT/redis-restarts.txt"
(
  # Redis restarts: stop, stay down 3 s, start again; the times go to the plot.
  t=0
  while :; do
    sleep "$EVERY"
    t=$((t + EVERY))
    [ "$t" -lt "$SECS" ] || break
    kill "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
    echo "$(date +%s%3N)" >>"$OUT/redis-restarts.txt"
    echo "[$(date +%T)] redis stopped (back in 3 s)"
    sleep 3
    start_redis
  done
  wait
) &
RESTARTER=$!

step "soak: $MIN min, instances on :$PORT_A and :$PORT_B (pids ${pids[*]}), Redis on :$REDIS_PORT restarted every ${EVERY}s"
status=0
"$LOAD" soak --url "http://127.0.0.1:$PORT_A/mcp" --url "http://127.0.0.1:$PORT_B/mcp" \
  --pid "${pids[0]}" --pid "${pids[1]}" --duration "$SECS" --rate "${SOAK_RATE:-1000}" \
  --listeners "${SOAK_LISTENERS:-250}" --samples "$OUT/samples.csv" || status=$?
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || { echo "soak: instance $p died" >&2; status=1; }; done
step "report"
python3 benches/soak/report.py "$OUT/samples.csv" --restarts "$OUT/redis-restarts.txt" --svg "$OUT/soak.svg" \
  || status=1
[ "$status" = 0 ] && step "soak passed" || step "soak FAILED"
exit "$status"
