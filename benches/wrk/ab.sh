#!/usr/bin/env bash
# A/B of two actix-mcp binaries on `tools/call` (echo), measured with wrk:
# the server pinned to CPU 0, wrk (one thread) to CPU 1, rounds interleaved
# so that both see the same machine. Prints each round, then medians and
# min–max of req/s, p99 and the server's CPU µs per call, and B/A ratios
# (of the medians, and per round: A and B run back to back in each round).
#
#   bash benches/wrk/ab.sh BIN_A BIN_B   (ROUNDS=5 DURATION=5 CONNS="16 256")
#
# SCRIPT=legacy_call.lua measures `tools/call` in a 2025-11-25 session
# instead (one session per server start, opened before the warm-up).
#
# A_ENV / B_ENV: environment settings (VAR=VALUE …) for each side's server,
# and A_ARGS / B_ARGS: more arguments of its `serve` (`--config FILE`), so
# that one binary can be compared with itself under two configurations;
# MCP_BEARER: a token wrk sends in `Authorization` (both sides). Each run
# also prints wrk's own CPU use, to show the generator was not saturated.
# Loopback only; every run is bounded by DURATION.
set -euo pipefail
A="$1"; B="$2"
ROUNDS="${ROUNDS:-5}"; DURATION="${DURATION:-5}"; CONNS="${CONNS:-16 256}"; SCRIPT="${SCRIPT:-call.lua}"
HERE="$(cd "$(dirname "$0")" && pwd)"
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
OUT="$(mktemp -d)"; trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT

start() { # BIN ENV ARGS -> "PID URL"
  local log="$OUT/server.log"
  # shellcheck disable=SC2086
  env $2 taskset -c 0 "$1" serve --catalog everything --bind 127.0.0.1:0 --log-level warning $3 2>"$log" &
  local pid=$! url=""
  for _ in $(seq 1 100); do
    url="$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$log" | head -n1)"; [ -n "$url" ] && break; sleep 0.05
  done
  [ -n "$url" ] || { cat "$log" >&2; exit 1; }
  echo "$pid $url"
}
# shellcheck source=run.sh
. "$HERE/run.sh"

for c in $CONNS; do
  for r in $(seq 1 "$ROUNDS"); do
    for side in A B; do
      bin=$A; envs="${A_ENV:-}"; args="${A_ARGS:-}"
      [ "$side" = B ] && { bin=$B; envs="${B_ENV:-}"; args="${B_ARGS:-}"; }
      read -r pid url < <(start "$bin" "$envs" "$args")
      if [ "$SCRIPT" = legacy_call.lua ]; then open_legacy_session "$url" "$OUT" || exit 1; fi
      taskset -c 1 wrk -t1 -c"$c" -d1s -s "$HERE/$SCRIPT" "$url" >/dev/null   # warm-up
      read -r rps p50 p99 us gen < <(wrk_measure "$pid" "$url" "$c" "$DURATION" "$HERE/$SCRIPT") || exit 1
      kill -INT "$pid"; wait "$pid" 2>/dev/null || true   # SIGINT: no drain
      echo "conns=$c round=$r side=$side req/s=$rps p99=$p99 cpu_us_per_call=$us wrk_cpu=${gen}%"
      echo "$c $side $rps $p99 $us $r" >>"$OUT/all.txt"
    done
  done
done
python3 - "$OUT/all.txt" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
def ms(v):
    for unit, f in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if v.endswith(unit):
            return float(v[: -len(unit)]) * f
    return float(v)
print("\nconns side  req/s median (min-max)      p99 ms median   CPU us/call median")
med = {}
for c in sorted({r[0] for r in rows}, key=int):
    for side in ("A", "B"):
        sel = [r for r in rows if r[0] == c and r[1] == side]
        rps = [float(r[2]) for r in sel]; p99 = [ms(r[3]) for r in sel]; us = [float(r[4]) for r in sel]
        med[(c, side)] = (st.median(rps), st.median(p99), st.median(us))
        print(f"{c:>5} {side:>4}  {st.median(rps):>9.0f} ({min(rps):.0f}-{max(rps):.0f})  {st.median(p99):>12.2f}  {st.median(us):>12.1f}")
    a, b = med[(c, "A")], med[(c, "B")]
    print(f"{c:>5}  B/A of medians: req/s {b[0]/a[0]:.3f}   p99 {b[1]/a[1]:.3f}   CPU/call {b[2]/a[2]:.3f}")
    # Each round runs A then B back to back: the ratio within a round cancels
    # most of a noisy machine's drift.
    by_round = {}
    for r in rows:
        if r[0] == c:
            by_round.setdefault(r[5], {})[r[1]] = r
    pr = [float(v["B"][2]) / float(v["A"][2]) for v in by_round.values()]
    pu = [float(v["B"][4]) / float(v["A"][4]) for v in by_round.values()]
    print(f"{c:>5}  B/A paired by round, median (min-max): req/s {st.median(pr):.3f} ({min(pr):.3f}-{max(pr):.3f})"
          f"   CPU/call {st.median(pu):.3f} ({min(pu):.3f}-{max(pu):.3f})")
PY
