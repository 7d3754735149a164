#!/usr/bin/env bash
# Profile-guided builds (PGO) of the three servers benches/compare.sh
# compares — actix-mcp, the raw actix-web echo handler (echo-baseline) and
# the rmcp echo server — each trained on its own workload, so that all three
# are built alike:
#
#   bash benches/pgo.sh        # -> target/pgo/{actix-mcp,echo-baseline,rmcp-echo}
#   PGO=1 bash benches/compare.sh
#
# For each server: a build instrumented with -Cprofile-generate, run pinned
# to CPU 0 under wrk on CPU 1 (benches/wrk/call.lua at 16 and 256
# connections; actix-mcp also gets the legacy session call and
# `mcp-load mixed`, so that what it profiles is not only the benchmark's
# call), stopped with SIGINT so that it writes its profile; then the
# profiles merged with the toolchain's llvm-profdata (the rustup component
# llvm-tools, added if missing) and a release build with -Cprofile-use.
# Bounded: about 50 s of load in all. The builds take most of the time (the
# workspace is built three times: instrumented, and once per profile).
#
# The workload is the one you build for: run this script on a machine like
# the one that will serve, or train on your own traffic the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib.sh
. benches/lib.sh
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
HOST=$(rustc -vV | sed -n 's/^host: //p')
PROFDATA="$(rustc --print sysroot)/lib/rustlib/$HOST/bin/llvm-profdata"
[ -x "$PROFDATA" ] || rustup component add llvm-tools
[ -x "$PROFDATA" ] || { echo "llvm-profdata not found at $PROFDATA" >&2; exit 1; }
WORK="target/pgo-build"
OUT="target/pgo"
mkdir -p "$WORK" "$OUT"
WORK="$(cd "$WORK" && pwd)"
PORT=18290
URL="http://127.0.0.1:$PORT/mcp"
# shellcheck source=wrk/run.sh
. benches/wrk/run.sh

# The instrumented builds (each instrumented binary writes into
# $WORK/raw-NAME): ours in $PROFILE, rmcp's in its release profile (the same
# settings as our dist).
generate() { local profile=$1; shift; RUSTFLAGS="-Cprofile-generate=$WORK/unused" cargo build --profile "$profile" -q "$@"; }
# Each on its own features (as `build_release` in benches/lib.sh): built
# together they would unify features, and the server trained would not be
# the one its profile is used on below.
generate "$PROFILE" -p actix-mcp --features full --target-dir "$WORK/gen"
generate "$PROFILE" -p mcp-load --target-dir "$WORK/gen"
generate release --manifest-path benches/rmcp-echo/Cargo.toml --target-dir "$WORK/gen-rmcp"
# The client is the plain optimized build.
cargo build --profile "$PROFILE" -q -p mcp-load

# load LABEL SCRIPT CONNS: 8 s of wrk against $URL; any non-2xx reply fails
# the build (a profile of error paths would mislead the optimizer).
load() {
  local out
  out=$(taskset -c 1 wrk -t1 -c"$3" -d8s -s "$2" "$URL")
  if grep -q "Non-2xx" <<<"$out"; then echo "$out" >&2; echo "non-2xx replies while training" >&2; exit 1; fi
  echo "  $1: $(grep Requests/sec <<<"$out")"
}

# train NAME COMMAND...: runs the instrumented server under its workload,
# stops it, and merges its profile into $WORK/NAME.profdata.
train() {
  local name=$1; shift
  rm -rf "$WORK/raw-$name"; mkdir -p "$WORK/raw-$name"
  LLVM_PROFILE_FILE="$WORK/raw-$name/%p-%m.profraw" ACTIX_MCP_WORKERS=1 taskset -c 0 "$@" 2>/dev/null &
  local pid=$!
  for _ in $(seq 1 100); do curl -s -o /dev/null "$URL" && break; sleep 0.1; done
  for c in 16 256; do
    load "$name @$c" benches/wrk/call.lua "$c"
  done
  if [ "$name" = actix-mcp ]; then
    open_legacy_session "$URL" "$WORK"
    load "legacy @16" benches/wrk/legacy_call.lua 16
    local mixed
    mixed=$(taskset -c 1 target/$PROFILE/mcp-load mixed --url "$URL" --connections 16 --duration 8 | head -n 1)
    grep -q ' errors=0 ' <<<"$mixed" || { echo "mixed failed: $mixed" >&2; exit 1; }
    echo "  mixed: $mixed"
  fi
  kill -INT "$pid"
  wait "$pid" || true
  ls "$WORK/raw-$name"/*.profraw >/dev/null 2>&1 || { echo "$name wrote no profile" >&2; exit 1; }
  "$PROFDATA" merge -o "$WORK/$name.profdata" "$WORK/raw-$name"
}
train actix-mcp "$WORK/gen/$PROFILE/actix-mcp" serve --catalog everything --bind "127.0.0.1:$PORT" --log-level warning
train echo-baseline "$WORK/gen/$PROFILE/echo-baseline" "127.0.0.1:$PORT"
train rmcp-echo "$WORK/gen-rmcp/release/rmcp-echo" "127.0.0.1:$PORT"

# The optimized builds, each with its own profile.
use() { local name=$1 profile=$2; shift 2; RUSTFLAGS="-Cprofile-use=$WORK/$name.profdata" cargo build --profile "$profile" -q "$@"; }
use actix-mcp "$PROFILE" -p actix-mcp --features full --target-dir "$WORK/use-actix-mcp"
use echo-baseline "$PROFILE" -p mcp-load --bin echo-baseline --target-dir "$WORK/use-echo-baseline"
use rmcp-echo release --manifest-path benches/rmcp-echo/Cargo.toml --target-dir "$WORK/use-rmcp-echo"
cp "$WORK/use-actix-mcp/$PROFILE/actix-mcp" "$WORK/use-echo-baseline/$PROFILE/echo-baseline" \
  "$WORK/use-rmcp-echo/release/rmcp-echo" "$OUT/"
echo "profile-guided builds in $OUT: actix-mcp echo-baseline rmcp-echo"
