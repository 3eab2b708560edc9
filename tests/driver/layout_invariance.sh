#!/usr/bin/env bash
# The same TPE sweep on 1 rank and on 4 ranks in 2 virtual nodes (HYBRID_SHARD: weights sharded
# within each node, trials spread over both): the same trials, the same refusal counts, KL within
# 1e-6 relative.
source "$(dirname "$0")/common.sh"
args=(sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --search tpe --trials 12 --startup-trials 4 --trials-per-batch 4)
new_run "$WORK/one"
new_run "$WORK/four"
"$BIN" "${args[@]}" --out "$WORK/one"
"$MPIEXEC" -np 4 --oversubscribe "$BIN" "${args[@]}" --out "$WORK/four" --sharding HYBRID_SHARD --ranks-per-node 2
"$PY" - "$WORK/one" "$WORK/four" <<'PY'
import json, subprocess, sys, os
def trials(d):
    subprocess.run([os.environ["ABL_BIN"], "report", "--trials", d, "--json", d + "/report.json", "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    return json.load(open(d + "/report.json"))["trials"]
a, b = trials(sys.argv[1]), trials(sys.argv[2])
assert len(a) == len(b) == 12, (len(a), len(b))
worst = 0.0
for x, y in zip(a, b):
    for k in x:
        if k in ("elapsed_s", "kl"):
            continue
        if isinstance(x[k], float):
            assert abs(x[k] - y[k]) <= 1e-9 * max(1.0, abs(x[k])), (x["trial"], k, x[k], y[k])
        else:
            assert x[k] == y[k], (x["trial"], k, x[k], y[k])
    rel = abs(x["kl"] - y["kl"]) / max(abs(x["kl"]), 1e-12)
    worst = max(worst, rel)
    assert rel <= 1e-6 or abs(x["kl"] - y["kl"]) < 1e-9, (x["trial"], x["kl"], y["kl"])
print(f"12 trials identical on 1 and 4 ranks; refusals equal; KL max relative difference {worst:.2e}")
PY
