#!/usr/bin/env bash
# The features of actix-mcp: the library with none of them, with each one
# alone and with the default ones (the library and the program) is
# clippy-clean — with all of them, the workspace's own clippy step (the
# tests ask for `full`); the lean build's dependency tree stays small and
# free of what the features bring.
#
#   bash .ci/features.sh          # both parts
#   bash .ci/features.sh lints    # the clippy passes only
#   bash .ci/features.sh lean     # the lean tree and the lean example only
set -euo pipefail
cd "$(dirname "$0")/.."
PART="${1:-all}"
case "$PART" in all | lints | lean) ;; *) echo "usage: $0 [lints|lean]" >&2; exit 2 ;; esac
STARTED=$SECONDS

FEATURES=(fs redis oauth client gateway webhooks tls metrics otel h2c policy config-file cli)
lint() {
  local started=$SECONDS
  cargo clippy -q -p actix-mcp "$@" -- -D warnings
  printf 'clippy %s: %d s\n' "$*" $((SECONDS - started))
}

if [ "$PART" != lean ]; then
  lint --no-default-features --lib
  for feature in "${FEATURES[@]}"; do
    targets=(--lib)
    # The program needs only `cli`; with it alone it builds too.
    [ "$feature" = cli ] && targets+=(--bins)
    lint --no-default-features --features "$feature" "${targets[@]}"
  done
  lint --lib --bins
  printf 'every clippy pass: %d s\n' $((SECONDS - STARTED))
fi
[ "$PART" != lints ] || exit 0

# An embedder's build: at most 160 crates, none of the features' own.
tree="$(cargo tree -p actix-mcp --no-default-features -e normal --prefix none | sed 's/ (\*)//; s/ (proc-macro)//' | sort -u)"
count="$(printf '%s\n' "$tree" | wc -l)"
echo "actix-mcp --no-default-features: $count crates"
[ "$count" -le 160 ] || { echo "the lean build pulls $count crates, more than 160" >&2; exit 1; }
forbidden='^(redis|reqwest|hyper|notify|clap|tikv-jemallocator|jsonwebtoken|metrics-exporter-prometheus|rustls|opentelemetry|cedar-policy|toml) '
if printf '%s\n' "$tree" | grep -E "$forbidden"; then
  echo "the lean build pulls a crate only a feature should bring (above)" >&2
  exit 1
fi

# The lean example as an embedder builds it (the package tests/lean), into
# its own target directory: tests/embed_lean.rs runs it (no test build is lean).
started=$SECONDS
cargo build -q --target-dir "${CARGO_TARGET_DIR:-target}/lean" -p actix-mcp-lean
printf 'the lean example (target/lean): %d s\n' $((SECONDS - started))
