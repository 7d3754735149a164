# Sourced by benches/compare.sh, benches/pgo.sh and benches/wrk/ab.sh.
#
# One measured wrk run:
#
#   wrk_measure PID URL CONNS DURATION SCRIPT
#
# runs wrk (one thread, pinned to CPU 1, --latency) with SCRIPT against URL
# for DURATION seconds and prints one line: req/s, p50, p99, the CPU µs the
# server PID spent per request, and wrk's own CPU use in % of its core (the
# generator's headroom). Fails, showing wrk's output, on any non-2xx reply.
#
# A legacy session for benches/wrk/legacy_call.lua:
#
#   open_legacy_session URL DIR
#
# opens a 2025-11-25 session at URL (initialize, notifications/initialized),
# checks one tools/call of echo in it, and exports its id as MCP_SESSION;
# DIR holds the replies. Fails, showing the reply, if any step does.

wrk_cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }

wrk_measure() {
  local pid=$1 url=$2 conns=$3 duration=$4 script=$5
  local dir t0 t1 line
  dir="$(mktemp -d)"
  t0=$(wrk_cpu_ticks "$pid")
  # wrk's CPU: the subshell's children's times (taskset execs wrk).
  (taskset -c 1 wrk -t1 -c"$conns" -d"${duration}s" --latency -s "$script" "$url" >"$dir/wrk.txt"; times >"$dir/times.txt")
  t1=$(wrk_cpu_ticks "$pid")
  if grep -q "Non-2xx" "$dir/wrk.txt"; then
    cat "$dir/wrk.txt" >&2; rm -rf "$dir"; echo "non-2xx replies from $url" >&2; return 1
  fi
  line=$(awk -v t0="$t0" -v t1="$t1" -v k="$(getconf CLK_TCK)" -v d="$duration" '
    FILENAME ~ /times/ && FNR == 2 {split($1,u,"m"); split($2,s,"m"); sub("s","",u[2]); sub("s","",s[2]);
      gen = (u[1]*60+u[2]+s[1]*60+s[2])/d*100}
    FILENAME ~ /wrk/ && /^Requests\/sec/ {rps = $2}
    FILENAME ~ /wrk/ && /requests in/ {n = $1}
    FILENAME ~ /wrk/ && $1 == "50%" {p50 = $2}
    FILENAME ~ /wrk/ && $1 == "99%" {p99 = $2}
    END {printf "%s %s %s %.1f %.0f", rps, p50, p99, (t1-t0)/k*1e6/n, gen}' "$dir/wrk.txt" "$dir/times.txt")
  rm -rf "$dir"
  echo "$line"
}

open_legacy_session() {
  local url=$1 dir=$2
  legacy_post() {
    curl -sS -D "$dir/headers" -o "$dir/body" -X POST "$url" -H 'Content-Type: application/json' \
      -H 'Accept: application/json, text/event-stream' "$@"
  }
  legacy_post -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"compare","version":"1"}}}'
  MCP_SESSION=$(awk 'tolower($1) == "mcp-session-id:" {print $2}' "$dir/headers" | tr -d '\r')
  [ -n "$MCP_SESSION" ] || { echo "initialize opened no session" >&2; cat "$dir/body" >&2; return 1; }
  export MCP_SESSION
  legacy_post -H "Mcp-Session-Id: $MCP_SESSION" -H 'MCP-Protocol-Version: 2025-11-25' \
    -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  legacy_post -H "Mcp-Session-Id: $MCP_SESSION" -H 'MCP-Protocol-Version: 2025-11-25' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}'
  grep -q '"text":"hello"' "$dir/body" || { echo "legacy tools/call failed:" >&2; cat "$dir/body" >&2; return 1; }
}
