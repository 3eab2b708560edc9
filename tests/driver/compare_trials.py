#!/usr/bin/env python3
"""Two run folders hold the same sweep: the same trials (parameters, refusals, batches) and KL within
RTOL relative (results do not depend on the layout or timing that computed them).

usage: compare_trials.py RUN_A RUN_B [N [RTOL]]
  N: the number of trials both must hold; RTOL: default 1e-6 (one baseline, one set of directions);
  whole runs on other layouts recompute the baseline too and agree to about 1e-5.
Needs ABL_BIN (the abliterate binary) for `report --json`.
"""
import json
import os
import subprocess
import sys


def trials(run):
    subprocess.run([os.environ["ABL_BIN"], "report", "--trials", run, "--json", run + "/report.json", "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(run + "/report.json") as f:
        return json.load(f)["trials"]


def main():
    a, b = trials(sys.argv[1]), trials(sys.argv[2])
    rtol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-6
    if len(sys.argv) > 3:
        n = int(sys.argv[3])
        assert len(a) == len(b) == n, f"{len(a)} and {len(b)} trials, expected {n}"
    assert len(a) == len(b), f"{len(a)} and {len(b)} trials"
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
        assert rel <= rtol or abs(x["kl"] - y["kl"]) < 1e-9, (x["trial"], x["kl"], y["kl"])
    print(f"{len(a)} trials equal in {sys.argv[1]} and {sys.argv[2]} (KL max relative difference {worst:.1e})")


if __name__ == "__main__":
    main()
