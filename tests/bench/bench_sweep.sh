#!/usr/bin/env bash
# Sweep throughput (`make bench`, section "== sweep throughput"): trials per hour of
# `abliterate sweep` with 1 vs K trials per set of forward passes, each with early exit on and
# off, on the model organism and on a synthetic model. Figures only: nothing here passes or fails.
#
#   tests/bench/bench_sweep.sh BUILD_DIR
#
# Environment: BENCH_THREADS (default: all cores), BENCH_SWEEP_TRIALS (trials per sweep, 64),
# BENCH_SWEEP_K (trials per pass of the batched runs, 8), BENCH_SWEEP_REPEATS (runs of each
# configuration, the fastest is reported; 1). The synthetic model is synthetic:tiny-llama (byte-level
# tokenizer, ChatML, random weights: it hardly ever emits a refusal marker); the next smallest
# preset (qwen2.5-0.5b) takes minutes per configuration on 2 cores.
#
# Each model is set up once in a temporary run folder (baseline, residuals, directions); every
# sweep then runs in a fresh folder holding a copy of those three files, so no sweep resumes
# another. The throughput and token counts come from the sweep's closing log line
#   sweep: N trials in S s (R trials/h; D decode + P prompt tokens) -> ...
# and the refusal counts from `abliterate report --json`. Early exit only stops a response at
# its first refusal marker, so the refusal counts (and the KL divergences) must be the same
# with it on and off; the table says whether they are.
set -euo pipefail
BUILD=$(cd "${1:?usage: tests/bench/bench_sweep.sh BUILD_DIR}" && pwd)
cd "$(dirname "$0")/../.."
BIN=$BUILD/bin/abliterate
THREADS=${BENCH_THREADS:-$(nproc)}
TRIALS=${BENCH_SWEEP_TRIALS:-64}
K=${BENCH_SWEEP_K:-8}
REPEATS=${BENCH_SWEEP_REPEATS:-1}
PY=/usr/bin/python3  # standard library only
export OMP_NUM_THREADS=$THREADS

[[ -x $BIN ]] || { echo "bench_sweep: $BIN not found (build the abliterate target first)" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench_sweep.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MANIFEST=$WORK/manifest.tsv
: >"$MANIFEST"

# run LOG CMD...: runs an abliterate phase with its log in LOG; on failure shows the log's end.
run() {
  local log=$1
  shift
  if ! "$@" >"$log.out" 2>"$log"; then
    echo "bench_sweep: failed: $*" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
}

# setup NAME MODEL PROMPT_DIR: baseline, residuals and directions in $WORK/NAME/setup.
setup() {
  local name=$1 model=$2 prompts=$3 dir=$WORK/$1/setup
  mkdir -p "$dir"
  local common=(--model "$model" --good "$prompts/harmless.txt" --bad "$prompts/harmful.txt"
    --out "$dir" --threads "$THREADS")
  run "$dir/baseline.log" "$BIN" baseline "${common[@]}" \
    --kl-split "[400:440]" --eval-split "[400:440]" --max-response-length 32
  run "$dir/residuals.log" "$BIN" residuals "${common[@]}" --no-full-residuals
  run "$dir/directions.log" "$BIN" directions --out "$dir"
}

# sweep NAME MODEL K EARLY_EXIT REP: one sweep in a fresh copy of the setup files.
sweep() {
  local name=$1 model=$2 k=$3 ee=$4 rep=$5
  local dir=$WORK/$name/k$k-ee$ee-r$rep
  mkdir -p "$dir"
  cp "$WORK/$name/setup/"{baseline,residuals,directions}.h5 "$dir/"
  run "$dir/sweep.log" "$BIN" sweep --model "$model" --out "$dir" --search sobol --trials "$TRIALS" \
    --restart --trials-per-batch "$k" --early-exit "$ee" --threads "$THREADS"
  run "$dir/report.log" "$BIN" report --trials "$dir" --json "$dir/report.json"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$k" "$ee" "$rep" "$dir/sweep.log" "$dir/report.json" >>"$MANIFEST"
}

bench_model() {  # NAME MODEL PROMPT_DIR
  local name=$1 model=$2 prompts=$3
  setup "$name" "$model" "$prompts"
  local rep k ee
  for ((rep = 1; rep <= REPEATS; rep++)); do
    for k in 1 "$K"; do
      for ee in true false; do
        sweep "$name" "$model" "$k" "$ee" "$rep"
      done
    done
  done
}

echo "sobol search, $TRIALS trials per sweep, 40 KL + 40 evaluation prompts, responses of at most 32 tokens,"
echo "$THREADS threads, best of $REPEATS run(s); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
bench_model organism tests/fixtures/organism tests/fixtures/organism/prompts
bench_model tiny-llama synthetic:tiny-llama inputs/prompts
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

"$PY" - "$MANIFEST" "$K" <<'PY'
import json, re, sys

LINE = re.compile(r"sweep: (\d+) trials in ([0-9.]+) s \(([0-9.]+) trials/h; (\d+) decode \+ (\d+) prompt tokens\)")
K = int(sys.argv[2])
runs = {}  # (model, k, early_exit) -> list of runs
models = []
for row in open(sys.argv[1]):
    model, k, ee, rep, log, report = row.rstrip("\n").split("\t")
    m = None
    for line in open(log, encoding="utf-8", errors="replace"):
        m = LINE.search(line) or m
    if m is None:
        sys.exit("bench_sweep: no closing 'sweep: ... trials/h' line in " + log)
    trials = json.load(open(report))["trials"]
    trials.sort(key=lambda t: t["trial"])
    r = dict(trials=int(m[1]), secs=float(m[2]), tph=float(m[3]), decode=int(m[4]), prompt=int(m[5]),
             refusals=[t["refusals"] for t in trials], kl=[t["kl"] for t in trials])
    runs.setdefault((model, int(k), ee == "true"), []).append(r)
    if model not in models:
        models.append(model)
best = {key: max(v, key=lambda r: r["tph"]) for key, v in runs.items()}  # the least disturbed run

print()
print("%-12s %3s %10s %7s %8s %11s %14s %14s %10s  %s" % ("model", "K", "early exit", "trials", "time s", "trials/h",
                                                         "decode tokens", "prompt tokens", "refusals", "all runs, s"))
for model in models:
    for k in (1, K):
        for ee in (True, False):
            r = best[(model, k, ee)]
            print("%-12s %3d %10s %7d %8.1f %11.0f %14d %14d %10d  %s" % (model, k, "on" if ee else "off", r["trials"],
                  r["secs"], r["tph"], r["decode"], r["prompt"], sum(r["refusals"]),
                  " ".join("%.1f" % x["secs"] for x in runs[(model, k, ee)])))
print()
for model in models:
    for ee in (True, False):
        print("%-12s K=%d vs K=1 per pass, early exit %-3s: %5.2fx trials/h" % (
            model, K, "on" if ee else "off", best[(model, K, ee)]["tph"] / best[(model, 1, ee)]["tph"]))
    for k in (1, K):
        on, off = best[(model, k, True)], best[(model, k, False)]
        print("%-12s K=%-2d early exit: %5.1f%% of decode steps saved, %5.2fx trials/h" % (
            model, k, 100.0 * (1.0 - on["decode"] / off["decode"]) if off["decode"] else 0.0, on["tph"] / off["tph"]))
print()
for model in models:
    for k in (1, K):
        # every run of the configuration pair, not only the fastest
        ons, offs = runs[(model, k, True)], runs[(model, k, False)]
        same_ref = all(a["refusals"] == b["refusals"] for a in ons for b in offs)
        same_kl = all(a["kl"] == b["kl"] for a in ons for b in offs)
        print("%-12s K=%-2d refusal counts with early exit on and off: %s; KL: %s" % (
            model, k, "identical" if same_ref else "DIFFERENT (%s vs %s)" % (ons[0]["refusals"], offs[0]["refusals"]),
            "identical" if same_kl else "different"))
    same_k = best[(model, 1, False)]["refusals"] == best[(model, K, False)]["refusals"]
    print("%-12s refusal counts with K=1 and K=%d per pass: %s" % (model, K, "identical" if same_k else "different"))
PY
