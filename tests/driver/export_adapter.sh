#!/usr/bin/env bash
# export --format adapter: the organism's trial exported merged (fp32) and as PEFT adapters, for
# row normalization none (exact rank-1 LoRA) and full (exact rank-1 DoRA; and an approximate
# rank-8 LoRA): base + adapter, computed here from the files alone as PEFT computes it, equals the
# merged export within the error the adapter states. Every folder passes `sha256sum -c SHA256SUMS`
# and has a model card; an adapter from 2 ranks is the serial one.
source "$(dirname "$0")/common.sh"

check_folder() {  # SHA256SUMS verifies and lists every file; README.md is a model card
  local dir=$1 library=$2
  (cd "$dir" && sha256sum --quiet -c SHA256SUMS)
  diff <(cd "$dir" && ls | grep -vx SHA256SUMS) <(awk '{print $2}' "$dir/SHA256SUMS")
  head -1 "$dir/README.md" | grep -qx -- "---" || { echo "FAIL: $dir/README.md has no front matter"; exit 1; }
  grep -qx "library_name: $library" "$dir/README.md" || { echo "FAIL: $dir/README.md: not library_name $library"; exit 1; }
  grep -q -- "--trial 1" "$dir/README.md" || { echo "FAIL: $dir/README.md lacks the command line"; exit 1; }
}

compare() {  # base model, adapter folder, merged folder
  "$PY" - "$@" <<'PY'
import json, struct, sys
import numpy as np

def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        raw = data[a:b]
        if t["dtype"] == "F32":
            x = np.frombuffer(raw, dtype="<f4")
        elif t["dtype"] == "BF16":
            x = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif t["dtype"] == "F16":
            x = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        else:
            raise SystemExit(f"unexpected dtype {t['dtype']}")
        out[name] = x.reshape(t["shape"]).astype(np.float64)
    return out

base_dir, adapter_dir, merged_dir = sys.argv[1:4]
base = read_safetensors(f"{base_dir}/model.safetensors")
merged = read_safetensors(f"{merged_dir}/model.safetensors")
adapter = read_safetensors(f"{adapter_dir}/adapter_model.safetensors")
config = json.load(open(f"{adapter_dir}/adapter_config.json"))
report = json.load(open(f"{adapter_dir}/abliterate_adapter.json"))
assert config["peft_type"] == "LORA" and config["task_type"] == "CAUSAL_LM"
assert config["lora_alpha"] == config["r"], "scaling must be 1"
assert config["fan_in_fan_out"] is False and config["bias"] == "none"
scaling = config["lora_alpha"] / config["r"]
prefix = "base_model.model."
modules = sorted({k[len(prefix):].split(".lora_")[0] for k in adapter})
# Every weight the merged export changed has an adapter, and nothing else has one.
changed = sorted(k[:-len(".weight")] for k in merged if not np.array_equal(merged[k], base[k]))
assert modules == changed, f"adapted {modules}\nchanged {changed}"
# PEFT's documented matching (LoraConfig.target_modules, layers_to_transform, layers_pattern) picks
# exactly the adapted modules among the base model's.
import re
def peft_targets(key):
    t = config["target_modules"]
    if isinstance(t, str):
        return re.fullmatch(t, key) is not None
    if key in t:
        return True
    if not any(key.endswith("." + k) for k in t):
        return False
    layers = config.get("layers_to_transform")
    if layers is None:
        return True
    pattern = config.get("layers_pattern")
    found = re.match(rf".*\.{pattern}\.(\d+)\." if pattern else r".*\.[^.]*\.(\d+)\.", key)
    return found is not None and int(found.group(1)) in layers
base_modules = {k[:-len(".weight")] for k in base if k.endswith(".weight")}
targeted = sorted(m for m in base_modules if peft_targets(m))
assert targeted == modules, f"PEFT would adapt {targeted}\nthe adapter has {modules}"
err_sq = delta_sq = worst = 0.0
for m in modules:
    w = base[m + ".weight"]
    eff = w + scaling * adapter[f"{prefix}{m}.lora_B.weight"] @ adapter[f"{prefix}{m}.lora_A.weight"]
    if config["use_dora"]:  # PEFT's DoRA: m / ||W + s BA|| per output row
        mag = adapter[f"{prefix}{m}.lora_magnitude_vector"]
        eff = eff * (mag / np.linalg.norm(eff, axis=1))[:, None]
    target = merged[m + ".weight"]
    err_sq += ((target - eff) ** 2).sum()
    delta_sq += ((target - w) ** 2).sum()
    worst = max(worst, np.abs(target - eff).max())
rel = (err_sq / delta_sq) ** 0.5
stated = report["relative_error"]
print(f"{adapter_dir}: {len(modules)} modules, r={config['r']}, dora={config['use_dora']}: relative error {rel:.3e} "
      f"(stated {stated:.3e}), max abs {worst:.3e} (stated {report['max_abs_error']:.3e})")
# The stated error is computed the same way (in double, from the stored values): it agrees.
assert abs(rel - stated) <= 1e-3 * stated + 1e-12, "base + adapter is not as far from the merged export as stated"
assert abs(worst - report["max_abs_error"]) <= 1e-3 * report["max_abs_error"] + 1e-12
if report["exact"] and report["dtype"] == "F32":  # exact form, f32 factors: float rounding only
    assert rel < 1e-5, "an exact adapter must reproduce the merged export to float rounding"
PY
}

for norm in none full; do
  RUN="$WORK/adapter-$norm"
  new_run "$RUN"
  "$BIN" sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --out "$RUN" --search sobol --trials 2 --trials-per-batch 2 \
    --row-normalization "$norm"
  "$BIN" export --run-dir "$RUN" --trial 1 --out "$RUN/merged" --dtype f32 --quiet
  "$BIN" export --run-dir "$RUN" --trial 1 --out "$RUN/adapter" --format adapter --quiet
  check_folder "$RUN/merged" transformers
  check_folder "$RUN/adapter" peft
  compare "$MODEL" "$RUN/adapter" "$RUN/merged"
done

# full as a plain LoRA: approximate, better at a higher rank.
RUN="$WORK/adapter-full"
for r in 2 8; do
  "$BIN" export --run-dir "$RUN" --trial 1 --out "$RUN/lora$r" --format adapter --adapter-rank "$r" --quiet
  check_folder "$RUN/lora$r" peft
  compare "$MODEL" "$RUN/lora$r" "$RUN/merged"
done
# Deterministic: the same factors with another thread count.
OMP_NUM_THREADS=2 "$BIN" export --run-dir "$RUN" --trial 1 --out "$RUN/lora8-t2" --format adapter --adapter-rank 8 --quiet
cmp "$RUN/lora8/adapter_model.safetensors" "$RUN/lora8-t2/adapter_model.safetensors"
"$PY" - "$RUN/lora2" "$RUN/lora8" <<'PY'
import json, sys
e2, e8 = (json.load(open(f"{d}/abliterate_adapter.json"))["relative_error"] for d in sys.argv[1:3])
assert e8 < e2, f"rank 8 ({e8}) is not better than rank 2 ({e2})"
print(f"ok: full-mode LoRA relative error {e2:.3e} at rank 2, {e8:.3e} at rank 8")
PY

# bf16 factors: further from W', by about what the bf16 merged export loses; still as stated.
"$BIN" export --run-dir "$RUN" --trial 1 --out "$RUN/adapter-bf16" --format adapter --dtype bf16 --quiet
compare "$MODEL" "$RUN/adapter-bf16" "$RUN/merged"
expect_failure "adapter-rank applies to --format adapter" "$BIN" export --run-dir "$RUN" --trial 1 --out "$RUN/x" \
  --adapter-rank 4 --quiet
expect_failure "--format must be merged or adapter" "$BIN" export --run-dir "$RUN" --trial 1 --out "$RUN/x" \
  --format lora --quiet
[ ! -e "$RUN/x" ] || { echo "FAIL: a refused export wrote a folder"; exit 1; }

# Two ranks: the same adapter (rank 0 computes it; the other must neither hang nor differ).
"$MPIEXEC" -np 2 --oversubscribe "$BIN" export --run-dir "$RUN" --trial 1 --out "$RUN/adapter2" --format adapter --quiet
diff -r -x README.md -x SHA256SUMS "$RUN/adapter" "$RUN/adapter2"
check_folder "$RUN/adapter2" peft
echo "ok: adapters reproduce the merged exports within their stated error"
