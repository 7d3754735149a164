#!/usr/bin/env bash
# Builds every fuzz target and runs each for SECONDS_EACH (20) seconds from its seeded
# corpus, two at a time (one a core), failing on the first target that finds
# a crash. What `cargo fuzz build -s none -O` and `cargo fuzz run` do, without
# installing cargo-fuzz: its flags for a stable toolchain without a sanitizer
# (coverage-guided; every assert and debug assertion of the targets and the
# code they drive still holds), given to a plain `cargo build`. With cargo-fuzz
# installed, `cargo fuzz run -s none -O -a TARGET corpus/TARGET` is the same.
# A crash is written to fuzz/artifacts/TARGET/.
#
#   bash fuzz/run.sh              # every target, 20 s each
#   SECONDS_EACH=60 bash fuzz/run.sh jsonrpc_request
set -euo pipefail
cd "$(dirname "$0")"
EACH="${SECONDS_EACH:-20}"
TARGETS=("$@")
[ "${#TARGETS[@]}" -gt 0 ] || TARGETS=(jsonrpc_request header_values request_state uri_template stdio_and_initialize)
TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"
bash seed.sh
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing \
-Cllvm-args=-simplifycfg-branch-fold-threshold=0 -Cllvm-args=-sanitizer-coverage-stack-depth \
-Cdebug-assertions -Ccodegen-units=1" \
  cargo build -q --locked --release --config 'profile.release.debug="line-tables-only"' --target "$TRIPLE" --bins
mkdir -p logs
run() {
  local target=$1 log="logs/$1.log"
  mkdir -p "artifacts/$target"
  if ! "target/$TRIPLE/release/$target" "corpus/$target" -max_total_time="$EACH" -print_final_stats=1 \
      -artifact_prefix="artifacts/$target/" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz target $target failed (log: fuzz/$log, the input in fuzz/artifacts/$target/)" >&2
    return 1
  fi
  echo "$target: $(awk '/^stat::number_of_executed_units/ {print $2}' "$log") executions in $EACH s, no failure"
}
status=0
for ((i = 0; i < ${#TARGETS[@]}; i += 2)); do
  pids=()
  for t in "${TARGETS[@]:i:2}"; do run "$t" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  [ "$status" -eq 0 ] || exit 1
done
