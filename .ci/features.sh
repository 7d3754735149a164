#!/usr/bin/env bash
# The features of actix-mcp: the library with none of them, with each one
# alone and with all of them is clippy-clean; the lean build's dependency
# tree stays small and free of what the features bring.
set -euo pipefail
cd "$(dirname "$0")/.."

FEATURES=(fs redis oauth client gateway tls metrics otel h2c policy config-file cli)
lint() {
  local started=$SECONDS
  cargo clippy -q -p actix-mcp "$@" -- -D warnings
  printf 'clippy %s: %d s\n' "$*" $((SECONDS - started))
}

lint --no-default-features --lib
for feature in "${FEATURES[@]}"; do
  targets=(--lib)
  # The program needs only `cli`; with it alone it builds too.
  [ "$feature" = cli ] && targets+=(--bins)
  lint --no-default-features --features "$feature" "${targets[@]}"
done
lint --all-features --lib --bins

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
