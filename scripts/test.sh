#!/usr/bin/env bash
# Sets up a fresh machine and runs every test (the command CI runs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
source scripts/env.sh
cargo test --release --workspace 2>&1
