#!/usr/bin/python3
"""Checks that the python BPE encoder (bpe.py) tokenizes exactly as the C++ tokenizer and, if
available, Hugging Face's `tokenizers` (node binding) do, on every prompt of every golden.json and
on the organism's prompt files (and that the C++ side decodes its ids back to the same text).

    /usr/bin/python3 tools/organism/check_tokenization.py --abliterate build/bin/abliterate \
        [--node-modules build-lead/tokpeer/node_modules]

Exit status 0 when everything agrees.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import bpe  # noqa: E402
import corpus  # noqa: E402

NODE_SCRIPT = r"""
const {Tokenizer} = require('tokenizers');
const fs = require('fs');
(async () => {
  const t = Tokenizer.fromFile(process.argv[2]);
  const texts = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
  const out = [];
  for (const x of texts) {
    const e = await t.encode(x, null, {addSpecialTokens: false});
    out.push(Array.from(e.getIds()));
  }
  fs.writeFileSync(process.argv[4], JSON.stringify(out));
})();
"""


def cpp_ids(binary, folder, texts):
    inp = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    r = subprocess.run([binary, "tokenize", "--model", folder, "--decode", "-q"], input=inp.encode(),
                       stdout=subprocess.PIPE, check=True)
    rows = [json.loads(line) for line in r.stdout.decode().splitlines() if line.strip()]
    return [row["ids"] for row in rows], [row.get("decoded") for row in rows]


def node_ids(node_modules, folder, texts):
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "enc.js")
        with open(script, "w") as f:
            f.write(NODE_SCRIPT)
        src, dst = os.path.join(d, "in.json"), os.path.join(d, "out.json")
        with open(src, "w") as f:
            json.dump(texts, f)
        env = dict(os.environ, NODE_PATH=node_modules)
        subprocess.run(["node", script, os.path.join(folder, "tokenizer.json"), src, dst], env=env, check=True)
        with open(dst) as f:
            return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--abliterate", required=True, help="path of the C++ binary")
    ap.add_argument("--node-modules", default=None, help="node_modules holding the `tokenizers` package")
    a = ap.parse_args()
    folders = [os.path.dirname(p) for p in
               glob.glob(os.path.join(ROOT, "tests", "fixtures", "organism", "golden.json"))
               + sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "golden", "*", "golden.json")))]
    bad = 0
    for folder in folders:
        with open(os.path.join(folder, "tokenizer.json")) as f:
            tok = bpe.ByteLevelBPE(json.load(f)["model"]["merges"])
        with open(os.path.join(folder, "golden.json")) as f:
            golden = json.load(f)
        texts = [p["rendered"] for p in golden["prompts"]]
        expect = [p["input_ids"] for p in golden["prompts"]]
        if folder.endswith("organism"):
            for name in ("harmful", "harmless"):
                with open(os.path.join(folder, "prompts", name + ".txt")) as f:
                    users = [line.rstrip("\n") for line in f if line.strip()]
                texts += [corpus.render_prompt(u) for u in users]
                expect += [tok.encode(corpus.render_prompt(u)) for u in users]
        ours = [tok.encode(t) for t in texts]
        assert ours == expect, folder
        got, decoded = cpp_ids(a.abliterate, folder, texts)
        n_bad = sum(x != y for x, y in zip(got, expect)) + abs(len(got) - len(expect))
        n_dec = sum(d is not None and d != t for d, t in zip(decoded, texts))
        line = "%-55s %4d texts: C++ ids differ on %d, C++ decode differs on %d" % (
            os.path.relpath(folder, ROOT), len(texts), n_bad, n_dec)
        if a.node_modules:
            hf = node_ids(a.node_modules, folder, texts)
            n_hf = sum(x != y for x, y in zip(hf, expect))
            line += ", HF tokenizers differ on %d" % n_hf
            n_bad += n_hf
        print(line)
        bad += n_bad + n_dec
    print("OK" if bad == 0 else "MISMATCHES: %d" % bad)
    sys.exit(0 if bad == 0 else 1)


if __name__ == "__main__":
    main()
