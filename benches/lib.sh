# Shared by the benchmark scripts (sourced): their optimized build, and the
# helpers of those that measure a generator's CPU.

# PROFILE: the cargo profile the scripts build and run — `dist` (fat LTO,
# one codegen unit: the distribution build every figure in benches/README.md
# was measured with) unless set; CI's soak and instruction budget run on
# `release`, the binary its conformance step built. The binaries are in
# target/$PROFILE/.
PROFILE="${PROFILE:-dist}"

# build_release: the server (every feature) and the load generator in
# $PROFILE, each on its own features. Built together, Cargo would unify
# their dependencies' features and make a second server binary, unlike the
# one CI's conformance step builds (and a script run after it would rebuild
# the whole tree).
build_release() {
  build_server
  cargo build --profile "$PROFILE" -q -p mcp-load
}

# build_server: the server alone, as build_release builds it (for the
# scripts that drive it with curl or their own client).
build_server() {
  cargo build --profile "$PROFILE" -q -p actix-mcp --features full
}

# needs PROGRAM…: exits naming the first that is neither on PATH nor an
# executable file.
needs() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "$tool" ] || { echo "needs $tool" >&2; exit 1; }
  done
}

# CPU ticks (user + system) of process $1 so far; HZ ticks make a second.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ="$(getconf CLK_TCK)"

# Raises the open-files limit for $1 streams, or exits saying it is too low.
streams_fit() {
  if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -le $(($1 + 100)) ]; then
    ulimit -n $(($1 + 1000)) 2>/dev/null || {
      echo "the open-files limit ($(ulimit -n)) is too low for $1 streams" >&2; exit 1; }
  fi
}

# stop_process PID: SIGINT, which a script's background job may ignore
# (fanout-floor sets no handler), then SIGTERM after 5 s; waits for it.
stop_process() {
  kill -INT "$1" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# The median of the numbers on stdin (separated by spaces or lines).
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# run_pinned REGEX COMMAND…: runs COMMAND pinned to CPU 1, finds REGEX in
# its output (a group named `errors` must be 0), and prints the regex's
# other named groups in order, then the CPU seconds of COMMAND and its
# waited-for children (getrusage once it has exited).
run_pinned() {
  python3 - "$@" <<'PY'
import re, resource, subprocess, sys
regex, command = sys.argv[1], sys.argv[2:]
out = subprocess.run(["taskset", "-c", "1", *command], capture_output=True, text=True, check=True).stdout
r = resource.getrusage(resource.RUSAGE_CHILDREN)
m = re.search(regex, out)
if not m or m.group("errors") != "0":
    sys.exit("generator failed: " + out)
print(*[v for k, v in m.groupdict().items() if k != "errors"], r.ru_utime + r.ru_stime)
PY
}

# callgrind_start OUT LOG THREADS BIN ARGS…: BIN's `serve` on a free
# port under callgrind (one worker, warnings only; THREADS is callgrind's
# --separate-threads, yes or no), its profile to OUT and its log to LOG;
# sets SERVER (the pid) and URL once it listens, or exits showing the log.
callgrind_start() {
  local out=$1 log=$2 threads=$3 bin=$4
  shift 4
  ACTIX_MCP_WORKERS=1 ACTIX_MCP_LOG_LEVEL=warning valgrind --tool=callgrind --separate-threads="$threads" \
    --callgrind-out-file="$out" "$bin" serve --bind 127.0.0.1:0 "$@" 2>"$log" &
  SERVER=$!
  URL=""
  for _ in $(seq 1 1200); do
    URL="$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$log" | head -n 1)"
    [ -n "$URL" ] && return 0
    sleep 0.1
  done
  echo "the server did not start:" >&2
  cat "$log" >&2
  exit 1
}
