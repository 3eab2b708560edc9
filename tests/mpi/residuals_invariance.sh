#!/usr/bin/env bash
# residuals.h5 written by 4 ranks in 2 virtual nodes (HYBRID_SHARD) equals the 1-rank file:
# same shapes, prompts, token counts and attributes, residuals and means within 1e-6 relative.
# Read back offline with h5py (Debian python3-h5py); exit 77 (skip) when h5py is missing.
# usage: residuals_invariance.sh ABLITERATE MPIEXEC WORK_DIR
set -euo pipefail
BIN=$1 MPIEXEC=$2 WORK=$3
HERE=$(cd "$(dirname "$0")" && pwd)
PROMPTS="$HERE/../fixtures/organism/prompts"
MODEL="$HERE/../fixtures/organism"
PY=/usr/bin/python3
"$PY" -c "import h5py" 2>/dev/null || { echo "SKIPPED: python3-h5py is not installed"; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK"
args=(residuals --model "$MODEL" --good "$PROMPTS/harmless.txt" --bad "$PROMPTS/harmful.txt"
      --good-split "[:120]" --bad-split "[:90]" --batch-tokens 512 --max-seqs 16 --quiet)
"$BIN" "${args[@]}" --out "$WORK/one"
"$MPIEXEC" -np 4 --oversubscribe "$BIN" "${args[@]}" --out "$WORK/four" --sharding HYBRID_SHARD --ranks-per-node 2
"$PY" - "$WORK/one/residuals.h5" "$WORK/four/residuals.h5" <<'PY'
import sys
import h5py
import numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
bad = []
for set_ in ("good", "bad"):
    for name in ("residuals", "mean"):
        x, y = a[f"{set_}/{name}"][()], b[f"{set_}/{name}"][()]
        if x.shape != y.shape:
            bad.append(f"{set_}/{name}: shape {x.shape} vs {y.shape}")
            continue
        rel = float(np.abs(x - y).max() / np.abs(x).max())
        print(f"{set_}/{name} {x.shape}: max relative difference {rel:.2e}")
        if rel > 1e-6:
            bad.append(f"{set_}/{name}: {rel:.2e}")
    for name in ("prompts", "n_tokens"):
        if not np.array_equal(a[f"{set_}/{name}"][()], b[f"{set_}/{name}"][()]):
            bad.append(f"{set_}/{name} differ")
for key in ("schema", "schema_version", "model", "architecture", "chat_template", "winsorize_quantile"):
    if a.attrs[key] != b.attrs[key]:
        bad.append(f"attribute {key}: {a.attrs[key]} vs {b.attrs[key]}")
if b.attrs["world_size"] != 4:
    bad.append("world_size attribute of the 4-rank file is not 4")
print("FAILED: " + "; ".join(bad) if bad else "residuals.h5 from 4 ranks (2 virtual nodes) equals the 1-rank file")
sys.exit(1 if bad else 0)
PY
