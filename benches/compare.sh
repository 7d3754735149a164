#!/usr/bin/env bash
# Side-by-side `tools/call` throughput of the raw actix-web echo handler (the
# ceiling), the official Rust SDK (rmcp 3.11, stateless, JSON replies; built
# from benches/rmcp-echo, outside the workspace) and actix-mcp's `echo` tool,
# on this machine: servers pinned to CPU 0, load on CPU 1, interleaved
# rounds, medians with the ratios to the ceiling and to rmcp. Every reply is
# verified. Bounded: ROUNDS x 3 servers x 2 concurrency levels x DURATION s.
#
#   bash benches/compare.sh            # ROUNDS=3 DURATION=5
#   ROUNDS=5 DURATION=10 bash benches/compare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-5}"
cargo build --release -q -p actix-mcp -p mcp-load
cargo build --release -q --manifest-path benches/rmcp-echo/Cargo.toml
BASE_PORT=18190
MCP_PORT=18191
RMCP_PORT=18192
taskset -c 0 target/release/echo-baseline "127.0.0.1:$BASE_PORT" 2>/dev/null &
BASE_PID=$!
ACTIX_MCP_WORKERS=1 taskset -c 0 target/release/actix-mcp serve --catalog everything \
  --bind "127.0.0.1:$MCP_PORT" --log-level warning 2>/dev/null &
MCP_PID=$!
taskset -c 0 benches/rmcp-echo/target/release/rmcp-echo "127.0.0.1:$RMCP_PORT" 2>/dev/null &
RMCP_PID=$!
trap 'kill $BASE_PID $MCP_PID $RMCP_PID 2>/dev/null || true' EXIT
sleep 1
declare -A results
declare -A cpu
# CPU time (user+system, µs) a process has used so far.
cpu_us() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) * 1000000 / hz}' "/proc/$1/stat"; }
for round in $(seq 1 "$ROUNDS"); do
  for conns in 16 256; do
    for name in baseline rmcp actix-mcp; do
      case "$name" in baseline) port=$BASE_PORT; pid=$BASE_PID ;; rmcp) port=$RMCP_PORT; pid=$RMCP_PID ;; *) port=$MCP_PORT; pid=$MCP_PID ;; esac
      before=$(cpu_us "$pid")
      line=$(taskset -c 1 target/release/mcp-load call --url "http://127.0.0.1:$port/mcp" \
        --connections "$conns" --duration "$DURATION" | head -n 1)
      after=$(cpu_us "$pid")
      requests=$(sed -n 's/^requests=\([0-9]*\).*/\1/p' <<<"$line")
      cpu["$name,$conns"]+="$(awk -v a="$after" -v b="$before" -v n="$requests" 'BEGIN {printf "%.1f", (a-b)/n}') "
      rps=$(sed -n 's/.*req\/s=\([0-9]*\).*/\1/p' <<<"$line")
      p99=$(sed -n 's/.*p99=\([0-9.]*\)ms.*/\1/p' <<<"$line")
      errors=$(sed -n 's/.* errors=\([0-9]*\).*/\1/p' <<<"$line")
      [ "$errors" = 0 ] || { echo "round $round $name @$conns: errors: $line" >&2; exit 1; }
      results["$name,$conns"]+="$rps:$p99 "
      echo "round $round  $name @$conns: $line"
    done
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo
printf '%-10s %-6s %10s %9s %10s %9s %12s\n' server conns "req/s" "p99 ms" "vs ceiling" "vs rmcp" "CPU µs/req"
for conns in 16 256; do
  base=$(tr ' ' '\n' <<<"${results[baseline,$conns]}" | cut -d: -f1 | median)
  rmcp=$(tr ' ' '\n' <<<"${results[rmcp,$conns]}" | cut -d: -f1 | median)
  for name in baseline rmcp actix-mcp; do
    rps=$(tr ' ' '\n' <<<"${results[$name,$conns]}" | cut -d: -f1 | median)
    p99=$(tr ' ' '\n' <<<"${results[$name,$conns]}" | cut -d: -f2 | median)
    us=$(tr ' ' '\n' <<<"${cpu[$name,$conns]}" | median)
    printf '%-10s %-6s %10s %9s %10s %9s %12s\n' "$name" "$conns" "$rps" "$p99" \
      "$(awk -v a="$rps" -v b="$base" 'BEGIN {printf "%.2fx", a/b}')" \
      "$(awk -v a="$rps" -v b="$rmcp" 'BEGIN {printf "%.2fx", a/b}')" "$us"
  done
done
