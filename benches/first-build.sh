#!/usr/bin/env bash
# What the README's first command costs: `cargo run --release` builds the
# `actix-mcp` binary with its default features before it runs it. Built here
# from an empty target directory (crates already downloaded: a download is
# not build time), printing the crates compiled, the CPU time (user + sys,
# every rustc and C compiler included) and the wall time.
#
#   bash benches/first-build.sh                        # the README's command
#   FEATURES=full bash benches/first-build.sh          # every feature
#   PROFILE=dist FEATURES=full bash benches/first-build.sh   # the distribution build
#   LEAN=1 bash benches/first-build.sh                 # an embedder's first build: an actix-web
#                                                      # app on actix-mcp without default features
#                                                      # (the package tests/lean), debug
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE="${PROFILE:-release}"
FEATURES="${FEATURES:-}"
TARGET="$(mktemp -d)"
trap 'rm -rf "$TARGET"' EXIT
if [ -n "${LEAN:-}" ]; then
  what=(build -p actix-mcp-lean)
else
  what=(build --profile "$PROFILE" -p actix-mcp --bin actix-mcp)
  [ -n "$FEATURES" ] && what+=(--features "$FEATURES")
fi
cargo fetch --locked -q
/usr/bin/time -f '%U %S %e' -o "$TARGET/time" \
  env CARGO_TARGET_DIR="$TARGET" CARGO_INCREMENTAL=0 CARGO_TERM_COLOR=never cargo "${what[@]}" --locked 2>"$TARGET/log" \
  || { tail -n 30 "$TARGET/log" >&2; exit 1; }
read -r user sys wall <"$TARGET/time"
crates="$(grep -c '^ *Compiling ' "$TARGET/log")"
awk -v u="$user" -v s="$sys" -v w="$wall" -v c="$crates" -v n="$(nproc)" -v what="cargo ${what[*]}" 'BEGIN {
  printf "%s: %d crates compiled, CPU %.0f s (user %.0f + sys %.0f) = %.1f CPU-minutes, wall %.0f s (%.1f min) on %d cores\n",
    what, c, u + s, u, s, (u + s) / 60, w, w / 60, n }'
