#!/usr/bin/env bash
# A sweep split over jobs: three slices (sweep --slice I/3, as three Slurm array tasks would run
# them) merged into one trials.h5 give the trials of one job — same parameters and refusals, KL
# within 1e-6 relative, no trial lost or duplicated; merge refuses a missing or unfinished slice.
source "$(dirname "$0")/common.sh"
args=(sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --search sobol --trials 13 --trials-per-batch 2)
new_run "$WORK/one-job"
"$BIN" "${args[@]}" --out "$WORK/one-job"
new_run "$WORK/sliced"
for i in 0 1 2; do "$BIN" "${args[@]}" --out "$WORK/sliced" --slice "$i/3"; done
ls "$WORK/sliced"
"$BIN" merge --out "$WORK/sliced" --quiet > /dev/null
"$PY" - "$WORK/one-job" "$WORK/sliced" <<'PY'
import json, os, subprocess, sys
def trials(d):
    subprocess.run([os.environ["ABL_BIN"], "report", "--trials", d, "--json", d + "/r.json", "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    return json.load(open(d + "/r.json"))["trials"]
a, b = trials(sys.argv[1]), trials(sys.argv[2])
assert len(a) == len(b) == 13, (len(a), len(b))
for x, y in zip(a, b):
    for k in x:
        if k in ("elapsed_s", "batch"):
            continue
        if k == "kl":
            assert abs(x[k] - y[k]) <= 1e-6 * abs(x[k]) + 1e-9, (x["trial"], x[k], y[k])
        else:
            assert x[k] == y[k], (x["trial"], k, x[k], y[k])
print("ok: 3 slices merged = one job (13 trials)")
PY
# Missing and unfinished slices.
new_run "$WORK/gaps"
"$BIN" "${args[@]}" --out "$WORK/gaps" --slice 0/3
"$BIN" "${args[@]}" --out "$WORK/gaps" --slice 2/3
expect_failure "slice\(s\) 1 of 3 missing" "$BIN" merge --out "$WORK/gaps"
touch "$WORK/gaps/trials.slice-1-of-3.h5.partial"
expect_failure "unfinished slice" "$BIN" merge --out "$WORK/gaps"
expect_failure "--slice needs --search sobol or grid" "$BIN" "${args[@]/sobol/tpe}" --out "$WORK/gaps" --slice 0/3
[ ! -e "$WORK/gaps/trials.h5" ] || { echo "FAIL: a failed merge left trials.h5"; exit 1; }
echo "ok: merge refuses missing and unfinished slices"
