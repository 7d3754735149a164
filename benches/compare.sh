#!/usr/bin/env bash
# Side-by-side `tools/call` of `echo` on this machine: the raw actix-web echo
# handler (the ceiling), the official Rust SDK (rmcp 3.11, stateless, JSON
# replies; built from benches/rmcp-echo, outside the workspace) and actix-mcp
# (metrics on, authorization off: the defaults).
#
# One generator for all three, and one that is not the bottleneck: wrk (one
# thread, Debian's package) pinned to CPU 1 with benches/wrk/call.lua, the
# servers pinned to CPU 0. Each server first gets a short warm-up with
# `mcp-load call`, which verifies every reply (it must report no error);
# then ROUNDS interleaved rounds per concurrency. For every run it prints
# req/s, p50/p99, the server's CPU µs per call and wrk's own CPU use. The
# summary gives medians and min–max, ratios to the ceiling and to rmcp, and
# the generator's headroom: its CPU during the ceiling's runs, which must be
# well under its core for the ceiling to be the server's and not wrk's.
#
#   bash benches/compare.sh            # ROUNDS=5 DURATION=5 CONNS="16 256"
# Bounded: ROUNDS x 3 servers x |CONNS| x (DURATION + 1) s. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"; DURATION="${DURATION:-5}"; CONNS="${CONNS:-16 256}"
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
cargo build --release -q -p actix-mcp -p mcp-load
cargo build --release -q --manifest-path benches/rmcp-echo/Cargo.toml
OUT="$(mktemp -d)"
BASE_PORT=18190 MCP_PORT=18191 RMCP_PORT=18192
taskset -c 0 target/release/echo-baseline "127.0.0.1:$BASE_PORT" 2>/dev/null &
BASE_PID=$!
ACTIX_MCP_WORKERS=1 taskset -c 0 target/release/actix-mcp serve --catalog everything \
  --bind "127.0.0.1:$MCP_PORT" --log-level warning 2>/dev/null &
MCP_PID=$!
taskset -c 0 benches/rmcp-echo/target/release/rmcp-echo "127.0.0.1:$RMCP_PORT" 2>/dev/null &
RMCP_PID=$!
trap 'kill $BASE_PID $MCP_PID $RMCP_PID 2>/dev/null || true; rm -rf "$OUT"' EXIT
sleep 1
TICK=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
port_of() { case "$1" in baseline) echo $BASE_PORT ;; rmcp) echo $RMCP_PORT ;; *) echo $MCP_PORT ;; esac; }
pid_of() { case "$1" in baseline) echo $BASE_PID ;; rmcp) echo $RMCP_PID ;; *) echo $MCP_PID ;; esac; }
SERVERS="baseline rmcp actix-mcp"

# Verified warm-up: every reply of every server checked by mcp-load.
for name in $SERVERS; do
  line=$(taskset -c 1 target/release/mcp-load call --url "http://127.0.0.1:$(port_of $name)/mcp" \
    --connections 4 --duration 1 | head -n 1)
  grep -q ' errors=0 ' <<<"$line" || { echo "warm-up of $name failed: $line" >&2; exit 1; }
  echo "warm-up $name (every reply verified): $line"
done

for round in $(seq 1 "$ROUNDS"); do
  for c in $CONNS; do
    for name in $SERVERS; do
      port=$(port_of $name); pid=$(pid_of $name)
      url="http://127.0.0.1:$port/mcp"
      t0=$(cpu "$pid")
      # wrk's CPU: the subshell's children's times (taskset execs wrk).
      (taskset -c 1 wrk -t1 -c"$c" -d"${DURATION}s" --latency -s benches/wrk/call.lua "$url" >"$OUT/wrk.txt"; \
        times >"$OUT/times.txt")
      t1=$(cpu "$pid")
      if grep -q "Non-2xx" "$OUT/wrk.txt"; then cat "$OUT/wrk.txt" >&2; echo "$name: non-2xx replies" >&2; exit 1; fi
      gen=$(awk -v d="$DURATION" 'NR==2 {split($1,u,"m"); split($2,s,"m"); sub("s","",u[2]); sub("s","",s[2]);
        printf "%.0f", (u[1]*60+u[2]+s[1]*60+s[2])/d*100}' "$OUT/times.txt")
      rps=$(awk '/^Requests\/sec/ {print $2}' "$OUT/wrk.txt")
      n=$(awk '/requests in/ {print $1}' "$OUT/wrk.txt")
      p50=$(awk '$1=="50%" {print $2}' "$OUT/wrk.txt")
      p99=$(awk '$1=="99%" {print $2}' "$OUT/wrk.txt")
      us=$(awk -v t0="$t0" -v t1="$t1" -v n="$n" -v k="$TICK" 'BEGIN {printf "%.1f", (t1-t0)/k*1e6/n}')
      echo "round $round  $name @$c: req/s=$rps p50=$p50 p99=$p99 server_cpu_us_per_call=$us wrk_cpu=${gen}%"
      echo "$c $name $rps $p50 $p99 $us $gen $round" >>"$OUT/all.txt"
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
print("\nserver     conns  req/s median (min-max)    vs ceiling  vs rmcp  p50 ms  p99 ms  CPU us/call  wrk CPU")
for c in sorted({r[0] for r in rows}, key=int):
    med = {}
    for name in ("baseline", "rmcp", "actix-mcp"):
        sel = [r for r in rows if r[0] == c and r[1] == name]
        rps = [float(r[2]) for r in sel]
        med[name] = (st.median(rps), min(rps), max(rps), st.median([ms(r[3]) for r in sel]),
                     st.median([ms(r[4]) for r in sel]), st.median([float(r[5]) for r in sel]),
                     st.median([float(r[6]) for r in sel]))
    for name, (m, lo, hi, p50, p99, us, gen) in med.items():
        print(f"{name:<10} {c:>5}  {m:>8.0f} ({lo:.0f}-{hi:.0f})  {m/med['baseline'][0]:>9.2f}x {m/med['rmcp'][0]:>7.2f}x"
              f"  {p50:>6.2f}  {p99:>6.2f}  {us:>11.1f}  {gen:>6.0f}%")
    gen = med["baseline"][6]
    print(f"{'':<10} {c:>5}  generator headroom: wrk used {gen:.0f}% of its core during the ceiling's runs"
          f" ({'headroom' if gen < 90 else 'NO HEADROOM: the ceiling is the generator'})")
PY
