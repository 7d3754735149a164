# Shared by the benchmark scripts that measure a generator's CPU (sourced).

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
