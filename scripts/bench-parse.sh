#!/usr/bin/env bash
# Parser throughput: builds in release and runs benches/parse.rs, which reports MB/s of
# `parse_module` over (a) every tests/corpus/*.ptx file, parsed file by file, and (b) one
# generated PTX module of at least 50 MB. Not a timed test: numbers depend on the machine.
#
# Needs in Cargo.toml:
#   [[bench]]
#   name = "parse"
#   harness = false
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if grep -q '^name = "parse"' Cargo.toml; then
    cargo bench --bench parse "$@"
else
    # Without the [[bench]] entry the default harness ignores `main`; run it through its test.
    cargo test --release --bench parse -- --nocapture --test-threads=1 "$@"
fi
