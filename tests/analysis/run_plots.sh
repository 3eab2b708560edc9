#!/usr/bin/env bash
# tools/analysis/plot_run.py on run folders: every PNG it announces exists, is a non-empty PNG.
#
#   run_plots.sh RUN_DIR [ABLITERATE_BIN [WORK_DIR]]
#
# 1. RUN_DIR as it is (under ctest: the driver tests' organism run): pareto.png and
#    directions.png, and pca.png unless residuals.h5 holds only the means, which must then be
#    reported as skipped. A RUN_DIR without trials.h5 is noted and not checked here.
# With ABLITERATE_BIN, run folders made here with the binary on the model organism (seconds):
# 2. full residuals (baseline, residuals, directions, a 16-trial sweep): all three PNGs;
# 3. the same with means-only residuals: pca.png skipped with a note, exit status 0;
# 4. only a trials.h5.partial (a sweep still running): pareto.png, and exit status 1 with
#    errors that name the phases writing the missing files.
# Exit status 77 (skipped) when /usr/bin/python3 lacks h5py, numpy or matplotlib.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
PLOT="$ROOT/tools/analysis/plot_run.py"
RUN=${1:?usage: run_plots.sh RUN_DIR [ABLITERATE_BIN [WORK_DIR]]}
BIN=${2:-}
if [ -n "${3:-}" ]; then
  WORK=$3
else
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
fi
export OMP_NUM_THREADS=1

if ! missing=$("$PY" -c "import h5py, numpy, matplotlib" 2>&1); then
  echo "SKIPPED: $PY cannot import h5py, numpy and matplotlib ($(tail -1 <<<"$missing")); install them with ./scripts/install-deps.sh"
  exit 77
fi

fail() {
  echo "FAIL: $*"
  exit 1
}

# Runs plot_run.py on $1 into $2, expecting exit status $3; the output is left in $2.log.
plot() {
  local rc=0
  rm -rf "$2"
  "$PY" "$PLOT" "$1" --out "$2" > "$2.log" 2>&1 || rc=$?
  sed 's/^/  | /' "$2.log"
  [ "$rc" = "$3" ] || fail "plot_run.py $1 exited with $rc, expected $3"
}

# Checks that $1/$2 was announced, exists and is a non-empty PNG.
expect_png() {
  local f="$1/$2"
  grep -qF "wrote $f" "$1.log" || fail "plot_run.py did not report writing $f"
  [ -s "$f" ] || fail "$f is missing or empty"
  [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$f is not a PNG file"
  echo "ok: $f ($(stat -c %s "$f") bytes)"
}

# Checks that pca.png was skipped with a note about means-only residuals.
expect_pca_skipped() {
  [ ! -e "$1/pca.png" ] || fail "$1/pca.png written from means-only residuals"
  grep -q "note: pca.png skipped: .*only the class means" "$1.log" || fail "no note that pca.png was skipped"
  echo "ok: pca.png skipped for means-only residuals"
}

has_full_residuals() {
  "$PY" -c 'import sys, h5py; f = h5py.File(sys.argv[1], "r"); sys.exit(0 if "residuals" in f["good"] else 1)' "$1"
}

mkdir -p "$WORK"
echo "== 1. the run folder $RUN"
if [ -f "$RUN/trials.h5" ] || [ -f "$RUN/trials.h5.partial" ]; then
  plot "$RUN" "$WORK/given" 0
  expect_png "$WORK/given" pareto.png
  expect_png "$WORK/given" directions.png
  if has_full_residuals "$RUN/residuals.h5"; then
    expect_png "$WORK/given" pca.png
  else
    expect_pca_skipped "$WORK/given"
  fi
elif [ -n "$BIN" ]; then
  echo "note: $RUN has no trials.h5 (the test that writes it did not run); checking the run folders made here"
else
  fail "$RUN has no trials.h5 or trials.h5.partial"
fi
[ -n "$BIN" ] || exit 0

MODEL="$ROOT/tests/fixtures/organism"
COMMON=(--model "$MODEL" --threads 1 --quiet)
PROMPTS=(--good "$MODEL/prompts/harmless.txt" --bad "$MODEL/prompts/harmful.txt"
         --good-split "[:60]" --bad-split "[:60]")
EVAL=(--kl-split "[400:440]" --eval-split "[400:440]" --max-response-length 32)

echo "== 2. a run folder with full residuals"
FULL="$WORK/full"
rm -rf "$FULL" && mkdir -p "$FULL"
"$BIN" baseline "${COMMON[@]}" "${PROMPTS[@]}" "${EVAL[@]}" --out "$FULL"
"$BIN" residuals "${COMMON[@]}" "${PROMPTS[@]}" --out "$FULL"
"$BIN" directions --out "$FULL" --quiet
"$BIN" sweep "${COMMON[@]}" "${EVAL[@]}" --out "$FULL" --search tpe --trials 16 --startup-trials 8 \
  --trials-per-batch 8 > /dev/null
has_full_residuals "$FULL/residuals.h5" || fail "$FULL/residuals.h5 has no full residuals"
plot "$FULL" "$FULL/plots" 0
for png in pareto.png directions.png pca.png; do expect_png "$FULL/plots" "$png"; done

echo "== 3. means-only residuals (--no-full-residuals)"
MEANS="$WORK/means"
rm -rf "$MEANS" && mkdir -p "$MEANS"
cp "$FULL/baseline.h5" "$FULL/trials.h5" "$MEANS/"
"$BIN" residuals "${COMMON[@]}" "${PROMPTS[@]}" --out "$MEANS" --no-full-residuals
"$BIN" directions --out "$MEANS" --quiet
plot "$MEANS" "$MEANS/plots" 0
expect_png "$MEANS/plots" pareto.png
expect_png "$MEANS/plots" directions.png
expect_pca_skipped "$MEANS/plots"

echo "== 4. only the trials.h5.partial of an unfinished sweep"
PART="$WORK/partial"
rm -rf "$PART" && mkdir -p "$PART"
cp "$FULL/trials.h5" "$PART/trials.h5.partial"
plot "$PART" "$PART/plots" 1
expect_png "$PART/plots" pareto.png
grep -q "directions.h5 not found: it is written by \`abliterate directions\`" "$PART/plots.log" ||
  fail "the error for the missing directions.h5 does not name its phase"
grep -q "residuals.h5 not found: it is written by \`abliterate residuals\`" "$PART/plots.log" ||
  fail "the error for the missing residuals.h5 does not name its phase"
echo "ok: missing files are errors naming their phase"
echo "PASS"
