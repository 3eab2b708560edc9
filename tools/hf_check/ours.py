"""Running our binary for tools/hf_check: the abliterate commands of one case, and finding it."""
import json
import os
import shutil
import subprocess
import time

from common import REPO, CheckError
from h5read import open_h5

class Abliterate:
    def __init__(self, path, threads, logdir):
        self.path, self.threads, self.logdir = path, threads, logdir
        self.n = 0
        self.backend_arg = {}  # --test-cuda-as-cpu: the "cuda" rows run --backend cpu

    def __call__(self, *args):
        cmd = [self.path] + [str(a) for a in args]
        self.n += 1
        logfile = os.path.join(self.logdir, "cmd-%03d.log" % self.n)
        t0 = time.time()
        with open(logfile, "w") as lf:
            lf.write(" ".join(cmd) + "\n")
            lf.flush()
            r = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            with open(logfile) as lf:
                tail = lf.read()[-1500:]
            last = ([l for l in tail.splitlines() if l.strip()] or [""])[-1].strip()
            raise CheckError("abliterate %s failed (status %d, %.1fs): %s [log %s]\n%s" % (
                args[0], r.returncode, time.time() - t0, last, logfile, tail))
        return logfile


def run_ours(abl, model, prompts_file, n_prompts, texts, max_new, backend, out):
    """Runs generate, baseline and residuals on one model folder with one backend and returns what
    the comparison needs, after checking the three commands rendered the prompts alike."""
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    engine = ["--backend", abl.backend_arg.get(backend, backend), "--threads", abl.threads, "--quiet"]
    split = "[0:%d]" % n_prompts
    gen = os.path.join(out, "generate.jsonl")
    abl("generate", "--model", model, "--prompts", prompts_file, "--max-new-tokens", max_new,
        "--output", gen, *engine)
    # --response-prefix "": generate renders without a prefix, so the driver phases must too
    # (their default would detect one from the model's own responses).
    abl("baseline", "--model", model, "--good", prompts_file, "--bad", prompts_file,
        "--kl-prompts", prompts_file, "--kl-split", split, "--eval-prompts", prompts_file,
        "--eval-split", "[0:1]", "--max-response-length", 1, "--response-prefix", "",
        "--out", out, *engine)
    abl("residuals", "--model", model, "--good", prompts_file, "--bad", prompts_file,
        "--good-split", split, "--bad-split", split, "--response-prefix", "", "--out", out, *engine)
    rows = [json.loads(line) for line in open(gen)]
    if len(rows) != n_prompts:
        raise CheckError("generate wrote %d lines for %d prompts" % (len(rows), n_prompts))
    b = open_h5(os.path.join(out, "baseline.h5"))
    r = open_h5(os.path.join(out, "residuals.h5"))
    try:
        logprobs = b.array("/kl/logprobs")
        hidden = r.array("/good/residuals")
        n_tokens = r.array("/good/n_tokens")
        # The same prompts, rendered the same way: the texts, no response prefix, one template,
        # and (residuals stores the token counts) the same lengths as generate's prompt_ids.
        problems = []
        if b.strings("/kl/prompts") != texts or r.strings("/good/prompts") != texts:
            problems.append("the h5 files' prompts differ from the prompt file")
        if [row["prompt"] for row in rows] != texts:
            problems.append("generate's prompts differ from the prompt file")
        for f, what in ((b, "baseline.h5"), (r, "residuals.h5")):
            if f.attr("response_prefix") != "":
                problems.append("%s has response_prefix %r" % (what, f.attr("response_prefix")))
        if b.attr("chat_template") != r.attr("chat_template"):
            problems.append("chat_template: baseline.h5 %r, residuals.h5 %r" % (
                b.attr("chat_template"), r.attr("chat_template")))
        lens = [len(row["prompt_ids"]) for row in rows]
        if list(n_tokens) != lens:
            problems.append("residuals.h5 n_tokens %s != generate's prompt lengths %s" % (list(n_tokens), lens))
        if problems:
            raise CheckError("rendering differs between generate, baseline and residuals: " + "; ".join(problems))
        template = b.attr("chat_template")
    finally:
        b.close()
        r.close()
    return {"prompt_ids": [row["prompt_ids"] for row in rows], "ids": [row["ids"] for row in rows],
            "logprobs": logprobs, "hidden": hidden, "chat_template": template}


def find_binary(given):
    if given:
        return given
    if os.environ.get("ABL_BIN"):
        return os.environ["ABL_BIN"]
    found = shutil.which("abliterate")
    if found:
        return found
    return os.path.join(REPO, "build", "bin", "abliterate")
