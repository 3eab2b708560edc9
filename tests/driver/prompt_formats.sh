#!/usr/bin/env bash
# Prompt sets in every format give the run the same prompts: the organism's harmless set as a
# pretty-printed JSON array and its harmful set as CSV (AdvBench's goal,target columns, quoted,
# CRLF) with --bad-column, on 2 ranks, write a baseline.h5 identical to the one from the text
# files (the recorded inputs hash the prompt texts; log-probabilities and responses bit for bit).
# A Parquet file written by arrow-rs (tests/fixtures/prompts) reads in `prompts` and `generate`;
# a wrong column is refused before any work, naming the file, the columns there are and the option;
# so is a split that selects nothing of a small file.
source "$(dirname "$0")/common.sh"
RUN="$WORK/prompt-formats"
rm -rf "$RUN"
mkdir -p "$RUN"
"$PY" - "$PROMPTS" "$RUN" <<'PY'
import csv, json, sys
src, out = sys.argv[1], sys.argv[2]
good = [l.rstrip("\n") for l in open(f"{src}/harmless.txt", encoding="utf-8") if l.strip()]
bad = [l.rstrip("\n") for l in open(f"{src}/harmful.txt", encoding="utf-8") if l.strip()]
json.dump([{"id": i, "instruction": t} for i, t in enumerate(good)], open(f"{out}/harmless.json", "w"), indent=2,
          ensure_ascii=False)
with open(f"{out}/harmful_behaviors.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n")
    w.writerow(["goal", "target"])
    for t in bad:
        w.writerow([t, f'Sure, here is "{t[:20]}", as asked'])
print(f"wrote {len(good)} harmless (JSON array) and {len(bad)} harmful (CSV) prompts")
PY
base=(baseline "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}")
"$MPIEXEC" -np 2 --oversubscribe "$BIN" "${base[@]}" "${PROMPT_ARGS[@]}" --out "$RUN/text"
"$MPIEXEC" -np 2 --oversubscribe "$BIN" "${base[@]}" --good "$RUN/harmless.json" --column instruction \
  --bad "$RUN/harmful_behaviors.csv" --bad-column goal --out "$RUN/formats"
"$PY" - "$RUN/text/baseline.h5" "$RUN/formats/baseline.h5" <<'PY'
import json, sys
import h5py, numpy as np
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
ia, ib = json.loads(a.attrs["inputs"]), json.loads(b.attrs["inputs"])
assert ia["kl_prompts"] == ib["kl_prompts"] and ia["eval_prompts"] == ib["eval_prompts"], (ia, ib)
def datasets(f):
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out
da, db = datasets(a), datasets(b)
assert da.keys() == db.keys(), (sorted(da), sorted(db))
for name in da:
    assert np.array_equal(da[name], db[name]), name
print(f"ok: JSON array + CSV prompts give the text files' baseline ({len(da)} datasets identical)")
PY
PARQUET="$HERE/../fixtures/prompts/dict-v1-snappy.parquet"
"$BIN" prompts --model "$MODEL" --prompts "$PARQUET" --split "[200:]" > "$RUN/prompts.txt"
grep -q "40 prompts" "$RUN/prompts.txt" || { cat "$RUN/prompts.txt"; echo "FAIL: prompts read no Parquet file"; exit 1; }
"$BIN" generate "${MODEL_ARGS[@]}" --prompts "$PARQUET" --split "[:3]" --max-new-tokens 4 -o "$RUN/gen.jsonl"
[ "$(wc -l < "$RUN/gen.jsonl")" = 3 ] || { echo "FAIL: generate on Parquet prompts"; exit 1; }
echo "ok: prompts and generate read Parquet"
expect_failure "harmful_behaviors.csv:1: no column 'text' in the header \(columns: goal, target\); name the prompt column with --bad-column" \
  "$BIN" baseline "${MODEL_ARGS[@]}" --bad "$RUN/harmful_behaviors.csv" --out "$RUN/bad-column"
expect_failure "dict-v1-snappy.parquet: no column 'prompt' \(columns: id, text\); name the prompt column with --kl-column" \
  "$BIN" baseline "${MODEL_ARGS[@]}" --kl-prompts "$PARQUET" --kl-column prompt --out "$RUN/bad-column"
[ ! -e "$RUN/bad-column/baseline.h5" ] || { echo "FAIL: a refused run wrote baseline.h5"; exit 1; }
echo "ok: a wrong column is refused before any work"
# A file smaller than the default splits assume (500 prompts: [:400] directions, [400:500] held out).
head -n 50 "$PROMPTS/harmless.txt" > "$RUN/fifty.txt"
expect_failure "fifty.txt: --kl-split \[400:500\] selects none of its 50 prompts; choose a slice of them \(e.g. --kl-split '\[-10:\]'\) or another --kl-prompts file" \
  "$BIN" baseline "${MODEL_ARGS[@]}" --good "$RUN/fifty.txt" --out "$RUN/small"
[ ! -e "$RUN/small/baseline.h5" ] || { echo "FAIL: a refused run wrote baseline.h5"; exit 1; }
echo "ok: a split beyond a small file is refused naming the option"
