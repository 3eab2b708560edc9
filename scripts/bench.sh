#!/usr/bin/env bash
# `make bench`: runs every benchmark program and prints its figures.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
"$BUILD/bin/bench_tokenizer" "$PWD" "$BUILD/tokpeer/node_modules"
