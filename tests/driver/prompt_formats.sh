#!/usr/bin/env bash
# Prompt sets in every format give the run the same prompts: the organism's harmless set as a
# pretty-printed JSON array and its harmful set as CSV (AdvBench's goal,target columns, quoted,
# CRLF) with --bad-column, on 2 ranks, write a baseline.h5 identical to the one from the text
# files (the recorded inputs hash the prompt texts; log-probabilities and responses bit for bit).
# A Parquet file written by arrow-rs (tests/fixtures/prompts) reads in `prompts` and `generate`;
# a wrong column is refused before any work, naming the file, the columns there are and the option;
# so is a split that selects nothing of a small file. Hugging Face dataset folders (a --local-dir
# download and a Hub cache folder, sharded JSON Lines) with splits named as in Heretic's config
# (test[:60]) give the text files' baseline too; a folder of several splits and none named is refused.
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
# As the Hub serves them: data/{split}-NNNNN-of-NNNNN shards, prompts 400-499 as the split "test".
import os
def shards(folder, prompts):
    os.makedirs(f"{folder}/data", exist_ok=True)
    open(f"{folder}/README.md", "w").write("---\nlicense: mit\n---\n")
    parts = {"train-00000-of-00001": prompts[:400], "test-00000-of-00002": prompts[400:430],
             "test-00001-of-00002": prompts[430:500]}
    for name, part in parts.items():
        with open(f"{folder}/data/{name}.jsonl", "w", encoding="utf-8") as f:
            for t in part:
                f.write(json.dumps({"prompt": t}, ensure_ascii=False) + "\n")
shards(f"{out}/harmless_alpaca", good)
# A Hub cache folder: snapshot files are links into blobs/, refs/main names the snapshot.
cache = f"{out}/datasets--org--harmful_behaviors"
shards(f"{cache}/snapshots/4f2e", bad)
os.makedirs(f"{cache}/blobs")
os.makedirs(f"{cache}/refs")
open(f"{cache}/refs/main", "w").write("4f2e")
for name in os.listdir(f"{cache}/snapshots/4f2e/data"):
    path = f"{cache}/snapshots/4f2e/data/{name}"
    os.rename(path, f"{cache}/blobs/{name}.blob")
    os.symlink(f"../../../blobs/{name}.blob", path)
PY
base=(baseline "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}")
"$MPIEXEC" -np 2 --oversubscribe "$BIN" "${base[@]}" "${PROMPT_ARGS[@]}" --out "$RUN/text"
"$MPIEXEC" -np 2 --oversubscribe "$BIN" "${base[@]}" --good "$RUN/harmless.json" --column instruction \
  --bad "$RUN/harmful_behaviors.csv" --bad-column goal --out "$RUN/formats"
"$MPIEXEC" -np 2 --oversubscribe "$BIN" baseline "${MODEL_ARGS[@]}" --max-response-length 32 --column prompt \
  --good "$RUN/harmless_alpaca" --bad "$RUN/datasets--org--harmful_behaviors" \
  --good-split "train[:400]" --bad-split "train[:400]" --kl-split "test[:60]" --eval-split "test[:60]" \
  --out "$RUN/folders"
for other in formats folders; do
"$PY" - "$RUN/text/baseline.h5" "$RUN/$other/baseline.h5" <<'PY'
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
print(f"ok: {sys.argv[2].split('/')[-2]} prompts give the text files' baseline ({len(da)} datasets identical)")
PY
done
"$PY" - "$RUN/folders/run.json" "$RUN/harmless_alpaca" <<'PY'
import hashlib, json, os, sys
record, folder = json.load(open(sys.argv[1])), sys.argv[2]
def find(o):
    if isinstance(o, dict):
        if isinstance(o.get("files"), dict) and "good" in o["files"]:
            return o["files"]
        o = list(o.values())
    for v in o if isinstance(o, list) else []:
        got = find(v)
        if got:
            return got
files = find(record)
names = sorted(f"data/{n}" for n in os.listdir(f"{folder}/data"))
manifest = "".join(f"{hashlib.sha256(open(f'{folder}/{n}', 'rb').read()).hexdigest()}  {n}\n" for n in names)
assert files["good"]["sha256"] == hashlib.sha256(manifest.encode()).hexdigest(), files["good"]
assert files["good"]["data_files"] == 3 and files["bad"]["data_files"] == 3, files
print("ok: run.json records a dataset folder by the SHA-256 of its manifest")
PY
expect_failure "harmless_alpaca is a dataset folder of the splits train \(data/train-00000-of-00001.jsonl\), test \(2 files\) \(shards named data/\{split\}-NNNNN-of-NNNNN\); name one, as in train\[:400\] \(--kl-split '\[400:460\]'\)" \
  "$BIN" baseline "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --good "$RUN/harmless_alpaca" \
  --good-split train --column prompt --out "$RUN/no-split"
echo "ok: a dataset folder of several splits needs a split name"
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
