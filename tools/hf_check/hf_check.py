#!/usr/bin/env python3
"""Checks abliterate's engine against Hugging Face transformers (issue 13, part 2).

For every supported family it builds a small random-init model with transformers (fp32, fixed
seed), saves it with save_pretrained, runs `abliterate generate`, `baseline` and `residuals` on the
folder and compares, on the very token ids our engine rendered (generate's `prompt_ids`):

  - first-token log-probabilities (baseline.h5 /kl/logprobs) with log_softmax of transformers'
    last logits,
  - hidden states at every depth (residuals.h5 /good/residuals) with transformers'
    `hidden_states` at the last prompt position (index 0 embeddings, index L after the final
    norm: the same convention, docs/outputs.md),
  - 16 greedy tokens (generate's `ids`; a generated eos ends them and is left out) with
    `model.generate(do_sample=False)` (batch 1, no padding), eos stripped the same way.

It also runs on every golden fixture (tests/fixtures/golden/*: transformers against our engine and
against golden.safetensors / golden.json of tools/organism/reference.py) and on an
`abliterate export` folder (made here by a 2-trial `abliterate run` of the first model, or given
with --export-dir): transformers loads the exported folder and is compared with our engine run on
that same folder.

  --reference transformers (default)  the check itself; exit 77 "skipped" if transformers is missing
  --reference ours-torch              dry run: tools/organism/reference.py stands in for
                                      transformers; only the golden fixtures (no model building);
                                      everything else (abliterate runs, h5 reading, comparisons,
                                      table, exit code) is the same code

Backends: `--backend cpu` always; `--backend cuda` (repeatable flag: `--backend cuda` adds it)
also runs our CUDA backend and compares it with transformers in fp32 and in bf16.

Tolerances (see README.md next to this file):
  CPU (fp32) vs transformers fp32: max |d logprob| <= 1e-4; hidden states
    max_depth max|d| / max(1, max|ref at that depth|) <= 1e-4 (absolute below magnitude 1,
    relative above); greedy ids identical, except a divergence at a step whose reference top-1 -
    top-2 logit margin is < 1e-3 (a tie, counted and reported).
  CUDA (bf16) vs transformers fp32: max |d logprob| <= max(0.1, 2 x transformers-bf16's own
    error); hidden relative (as above) <= max(0.05, 2 x transformers-bf16's own); greedy ids
    identical except where the fp32 margin at the first divergence is < max(0.25, 4 x the
    measured max |d logprob|).

Exit status: 0 everything passed, 1 something failed, 2 bad usage or setup, 77 skipped
(transformers not importable and --reference ours-torch not asked for).
"""
import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback

import h5read
from common import FAMILIES, GOLDEN_DIR, ORGANISM_PROMPTS, REPO, CheckError, log
from hf_models import build_random_model, eos_ids, read_json, tensor_bytes
from ours import Abliterate, find_binary, run_ours
from references import HFReference, TorchReference, reference_results

# Tolerances (documented in the module docstring, README.md and docs/hf-equality.md).
CPU_LOGPROB = 1e-4
CPU_HIDDEN_REL = 1e-4
CPU_TIE_MARGIN = 1e-3
CUDA_LOGPROB = 0.1
CUDA_HIDDEN_REL = 0.05
CUDA_TIE_MARGIN = 0.25

# ------------------------------------------------------------------------------------------------
# Comparisons

def strip_eos(ids, eos):
    for k, t in enumerate(ids):
        if t in eos:
            return list(ids[:k])
    return list(ids)


def compare_greedy(ours, ref_ids, ref_margins, eos, tie_margin):
    """ours: ids without eos (generate's); ref_ids: with the eos that stopped them. Returns
    ('equal'|'tie'|'differ', first differing step or None, the reference margin there)."""
    ref = strip_eos(ref_ids, eos)
    if list(ours) == ref:
        return "equal", None, None
    k = 0
    while k < min(len(ours), len(ref)) and ours[k] == ref[k]:
        k += 1
    m = ref_margins[k] if k < len(ref_margins) else float("nan")
    return ("tie" if m < tie_margin else "differ"), k, m


def diff_stats(ours_lp, ours_h, ref):
    import torch
    lp = torch.as_tensor(ours_lp).double()
    h = torch.as_tensor(ours_h).double()
    if lp.shape != ref["logprobs"].shape:
        raise CheckError("log-prob shapes differ: ours %s, reference %s" % (tuple(lp.shape), tuple(ref["logprobs"].shape)))
    if h.shape != ref["hidden"].shape:
        raise CheckError("hidden-state shapes differ: ours %s (prompts, depths, H), reference %s" % (
            tuple(h.shape), tuple(ref["hidden"].shape)))
    d_lp = float((lp - ref["logprobs"]).abs().max())
    dh = (h - ref["hidden"]).abs().amax(dim=(0, 2))           # per depth
    mag = ref["hidden"].abs().amax(dim=(0, 2)).clamp(min=1.0)  # per depth, at least 1
    rel = dh / mag
    worst = int(rel.argmax())
    return {"logprob": d_lp, "hidden_abs": float(dh.max()), "hidden_rel": float(rel.max()),
            "worst_depth": worst, "depths": len(dh),
            "per_depth_abs": [float(v) for v in dh], "per_depth_rel": [float(v) for v in rel]}


def greedy_summary(ours_ids, ref, eos, tie_margin):
    results = [compare_greedy(o, g, m, eos, tie_margin)
               for o, g, m in zip(ours_ids, ref["greedy"], ref["margins"])]
    margins = [x for m in ref["margins"] for x in m]
    return {"equal": sum(r[0] == "equal" for r in results), "ties": sum(r[0] == "tie" for r in results),
            "differ": sum(r[0] == "differ" for r in results), "n": len(results),
            "first_diffs": [(i, r[1], r[2]) for i, r in enumerate(results) if r[0] != "equal"],
            "min_margin": min(margins) if margins else float("nan")}


# ------------------------------------------------------------------------------------------------
# The table

ROWS = []


def add_row(case, arch, backend, reference, stats=None, greedy=None, result="", note=""):
    ROWS.append({"case": case, "architecture": arch, "backend": backend, "reference": reference,
                 "stats": stats, "greedy": greedy, "result": result, "note": note})
    s = stats or {}
    g = greedy or {}
    log("  %-34s %-5s vs %-34s lp %-9s hid %-9s rel %-9s greedy %-6s %s%s" % (
        case, backend, reference, fmt(s.get("logprob")), fmt(s.get("hidden_abs")), fmt(s.get("hidden_rel")),
        greedy_cell(g), result, (" (" + note + ")") if note else ""))


def fmt(v):
    if v is None:
        return "—"
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return "%.2e" % v


def greedy_cell(g):
    if not g:
        return "—"
    s = "%d/%d" % (g["equal"], g["n"])
    if g.get("ties"):
        s += " (+%d tie)" % g["ties"]
    return s


def table_markdown(meta):
    lines = ["| case | architecture | backend | reference | max abs Δ logprob | max abs Δ hidden | "
             "max rel Δ hidden | greedy ids equal | min greedy margin | result |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in ROWS:
        s = r["stats"] or {}
        g = r["greedy"] or {}
        res = r["result"] + ((": " + r["note"].replace("|", "/").replace("\n", " ")) if r["note"] else "")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["case"], r["architecture"], r["backend"], r["reference"], fmt(s.get("logprob")),
            fmt(s.get("hidden_abs")), fmt(s.get("hidden_rel")), greedy_cell(g),
            fmt(g.get("min_margin")) if g else "—", res))
    head = ["Measured %s on %s with %s; abliterate %s; reference %s." % (
        meta["date"], meta["host"], meta["torch"], meta["abliterate"], meta["reference"]), "",
        meta["progress"], "",
        "Tolerances: CPU vs fp32 reference: |Δ logprob| <= %g, hidden max_depth max|Δ| / max(1, max|ref|) "
        "<= %g, greedy identical (a divergence where the reference top-2 margin < %g counts as a tie). "
        "CUDA (bf16) vs fp32 reference: |Δ logprob| <= max(%g, 2 x transformers-bf16's own), hidden rel <= "
        "max(%g, 2 x transformers-bf16's own), greedy identical where the fp32 margin >= max(%g, 4 x |Δ logprob|). "
        "Rows marked info are not judged." % (CPU_LOGPROB, CPU_HIDDEN_REL, CPU_TIE_MARGIN, CUDA_LOGPROB,
                                               CUDA_HIDDEN_REL, CUDA_TIE_MARGIN), ""]
    return "\n".join(head + lines) + "\n"


# ------------------------------------------------------------------------------------------------
# One case: a model folder, our engine on each backend against the reference(s)

def judge_cpu(stats, greedy):
    why = []
    if stats["logprob"] > CPU_LOGPROB:
        why.append("logprob %.2e > %g" % (stats["logprob"], CPU_LOGPROB))
    if stats["hidden_rel"] > CPU_HIDDEN_REL:
        why.append("hidden %.2e > %g at depth %d of %d" % (stats["hidden_rel"], CPU_HIDDEN_REL,
                                                           stats["worst_depth"], stats["depths"] - 1))
    if greedy and greedy["differ"]:
        why.append("greedy differs: %s" % ", ".join("prompt %d step %s (margin %.3g)" % d for d in greedy["first_diffs"]))
    return ("pass" if not why else "FAIL"), "; ".join(why)


def run_case(args, abl, case, arch, model, refs_factory, golden=None):
    """refs_factory(dtype) -> reference object or None (bf16 unavailable)."""
    import torch
    texts, prompts_file = args.prompt_texts, args.prompts_file
    eos = eos_ids(model)
    out_root = os.path.join(args.work, "runs", case)
    ours = {}
    for backend in args.backends:
        try:
            ours[backend] = run_ours(abl, model, prompts_file, len(texts), texts, args.max_new_tokens,
                                     backend, os.path.join(out_root, backend))
        except CheckError as e:
            if backend == "cuda" and "--backend cpu" in str(e):
                # a shape the CUDA engine refuses up front (cuda::check_cuda_engine_runs): not a mismatch
                add_row(case, arch, backend, "—", result="info", note="not run: " + str(e).splitlines()[0])
                continue
            add_row(case, arch, backend, "—", result="FAIL", note=str(e).splitlines()[0])
            log(str(e))
    if not ours:
        return
    first = next(iter(ours.values()))
    prompt_ids = first["prompt_ids"]
    for b, o in ours.items():
        if o["prompt_ids"] != prompt_ids:
            add_row(case, arch, b, "—", result="FAIL", note="prompt_ids differ between backends")
    if golden is not None:
        want = [p["input_ids"] for p in golden["json"]["prompts"]]
        if want != prompt_ids:
            add_row(case, arch, "cpu", "golden.json", result="FAIL",
                    note="our rendered prompt ids differ from golden.json's input_ids")
    ref32 = refs_factory("fp32")
    ref_name = ref32.name
    r32 = reference_results(ref32, prompt_ids, args.max_new_tokens, eos)
    notes = list(ref32.notes)
    if r32["cache_disagree"]:
        notes.append("transformers generate (KV cache) and its full forward pick different tokens at %d steps"
                     % r32["cache_disagree"])
    del ref32
    if "cpu" in ours:
        o = ours["cpu"]
        try:
            st = diff_stats(o["logprobs"], o["hidden"], r32)
            gr = greedy_summary(o["ids"], r32, eos, CPU_TIE_MARGIN)
            res, why = judge_cpu(st, gr)
            add_row(case, arch, "cpu", ref_name, st, gr, res, "; ".join([why] + notes if why else notes))
            DETAILS.append({"case": case, "backend": "cpu", "reference": ref_name, "stats": st, "greedy": gr,
                            "ours_ids": o["ids"], "ref_ids": r32["greedy"],
                            "ref_min_margin_per_prompt": [min(m) if m else None for m in r32["margins"]]})
        except CheckError as e:
            add_row(case, arch, "cpu", ref_name, result="FAIL", note=str(e))
    if "cuda" in ours:
        o = ours["cuda"]
        ref16 = refs_factory("bf16")
        floor = None
        if ref16 is not None:
            r16 = reference_results(ref16, prompt_ids, args.max_new_tokens, eos)
            floor = diff_stats(r16["logprobs"].float().numpy(), r16["hidden"].float().numpy(), r32)
            g16 = greedy_summary([strip_eos(g, eos) for g in r16["greedy"]], r32, eos, CUDA_TIE_MARGIN)
            add_row(case, arch, "— (transformers bf16)", ref_name, floor, g16, "info",
                    "transformers' own bf16 error: the noise floor for the CUDA rows")
            st16 = diff_stats(o["logprobs"], o["hidden"], r16)
            add_row(case, arch, "cuda", ref16.name, st16, greedy_summary(o["ids"], r16, eos, CUDA_TIE_MARGIN), "info")
            del ref16
        try:
            st = diff_stats(o["logprobs"], o["hidden"], r32)
            lp_tol = max(CUDA_LOGPROB, 2 * floor["logprob"]) if floor else CUDA_LOGPROB
            h_tol = max(CUDA_HIDDEN_REL, 2 * floor["hidden_rel"]) if floor else CUDA_HIDDEN_REL
            tie = max(CUDA_TIE_MARGIN, 4 * st["logprob"])
            gr = greedy_summary(o["ids"], r32, eos, tie)
            why = []
            if st["logprob"] > lp_tol:
                why.append("logprob %.2e > %.2e" % (st["logprob"], lp_tol))
            if st["hidden_rel"] > h_tol:
                why.append("hidden rel %.2e > %.2e at depth %d" % (st["hidden_rel"], h_tol, st["worst_depth"]))
            if gr["differ"]:
                why.append("greedy differs where the fp32 margin >= %.3g: %s" % (
                    tie, ", ".join("prompt %d step %s (margin %.3g)" % d for d in gr["first_diffs"] if d[2] >= tie)))
            add_row(case, arch, "cuda", ref_name, st, gr, "pass" if not why else "FAIL",
                    "; ".join(why + ["tolerances lp %.2g, hidden rel %.2g, tie margin %.2g" % (lp_tol, h_tol, tie)]))
            DETAILS.append({"case": case, "backend": "cuda", "reference": ref_name, "stats": st, "greedy": gr,
                            "ours_ids": o["ids"], "ref_ids": r32["greedy"]})
        except CheckError as e:
            add_row(case, arch, "cuda", ref_name, result="FAIL", note=str(e))
    if golden is not None:
        # The reference against the golden files of tools/organism/reference.py.
        gj, gs = golden["json"], golden["tensors"]
        try:
            g_lp = torch.log_softmax(gs["logits_last"][1].double(), -1)
            st = diff_stats(g_lp.numpy(), gs["hidden_last"][1].numpy(), r32)
            g_ids = [p["greedy_ids"] for p in gj["prompts"]]
            g_eos = gj.get("eos_token_ids", eos)
            gr = greedy_summary([strip_eos(g, g_eos) for g in g_ids], r32, g_eos, CPU_TIE_MARGIN)
            res, why = judge_cpu(st, gr)
            add_row(case, arch, "golden files", ref_name, st, gr, res, why)
        except CheckError as e:
            add_row(case, arch, "golden files", ref_name, result="FAIL", note=str(e))


DETAILS = []


# ------------------------------------------------------------------------------------------------
# Export: `abliterate run` (2 trials) on a model, then `export` of trial 0

def make_export(abl, args, model, out):
    run_dir = os.path.join(out, "run")
    exp = os.path.join(out, "export")
    for d in (run_dir, exp):
        if os.path.exists(d):
            shutil.rmtree(d)
    os.makedirs(run_dir)
    good = os.path.join(ORGANISM_PROMPTS, "harmless.txt")
    bad = os.path.join(ORGANISM_PROMPTS, "harmful.txt")
    abl("run", "--model", model, "--good", good, "--bad", bad, "--good-split", "[:16]", "--bad-split", "[:16]",
        "--kl-split", "[400:404]", "--eval-split", "[400:404]", "--max-response-length", 4,
        "--search", "sobol", "--trials", 2, "--response-prefix", "", "--backend", "cpu",
        "--threads", abl.threads, "--quiet", "--out", run_dir)
    abl("export", "--run-dir", run_dir, "--trial", 0, "--out", exp, "--dtype", "f32", "--quiet")
    a, b = tensor_bytes(model), tensor_bytes(exp)
    changed = [k for k in a if k in b and a[k] != b[k]]
    return exp, "trial 0 of a 2-trial Sobol run; %d of %d tensors changed (f32 export)" % (len(changed), len(a))


def exact_fp32_matmuls(torch):
    """No TF32 in transformers' fp32 runs: torch >= 2.9 has fp32_precision settings (and warns on
    the allow_tf32 flags); older versions have set_float32_matmul_precision and the cudnn flag."""
    if hasattr(torch.backends, "fp32_precision"):
        for backend in (torch.backends, torch.backends.cuda.matmul, torch.backends.cudnn):
            try:
                backend.fp32_precision = "ieee"
            except (AttributeError, RuntimeError, ValueError):
                pass
    else:
        torch.set_float32_matmul_precision("highest")
        torch.backends.cudnn.allow_tf32 = False


def write_outputs(args, meta, progress):
    """The table (--table) and every number (--json) as they stand. Rewritten after every case, so
    that a run stopped part-way (a time limit) keeps the rows it had. Returns the table."""
    meta = dict(meta, progress=progress)
    md = table_markdown(meta)
    outputs = [(args.table, lambda f: f.write(md))] if args.table else []
    outputs.append((args.json or os.path.join(args.work, "hf_check.json"),
                    lambda f: json.dump({"meta": meta, "rows": ROWS, "details": DETAILS}, f, indent=1, default=str)))
    for path, write in outputs:
        with open(path + ".part", "w") as f:  # a reader never sees half a file
            write(f)
        os.replace(path + ".part", path)
    return md


def select_families(option):
    """The (arch, template) cases of --families: all, none, or names each an architecture (all its
    cases) or a case's template. Returns (cases in FAMILIES order, unknown names)."""
    if option in ("all", "none"):
        return (list(FAMILIES) if option == "all" else []), []
    names = [n for n in option.split(",") if n]
    unknown = [n for n in names if not any(n in case for case in FAMILIES)]
    return [case for case in FAMILIES if case[0] in names or case[1] in names], unknown


def check_all(args, abl, families, golden, factory, save):
    """Builds the random-init models, adds the golden fixtures and the export, and checks each;
    save(progress) rewrites the table after every model and case."""
    models = []  # (case, arch, folder, golden or None)
    for i, (arch, template) in enumerate(families):
        case = "random-" + template
        folder = os.path.join(args.work, "models", case)
        log("building %s (%s template)" % (arch, template))
        try:
            for n in build_random_model(arch, template, folder, args.seed + i, args.init_range):
                log("  note: " + n)
            models.append((case, arch, folder, None))
        except Exception as e:  # one family failing must not stop the others
            add_row(case, arch, "—", "transformers", result="FAIL",
                    note="building the model: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
            traceback.print_exc()
        save("Incomplete: building the models, %d of %d done; no case checked yet." % (i + 1, len(families)))
    import reference as ref
    for name in golden:
        folder = os.path.join(GOLDEN_DIR, name)
        arch = read_json(os.path.join(folder, "config.json"))["architectures"][0]
        g = {"json": read_json(os.path.join(folder, "golden.json")),
             "tensors": ref.read_safetensors(os.path.join(folder, "golden.safetensors"))}
        models.append(("golden-" + name, arch, folder, g))

    if args.export_dir:
        models.append(("export", read_json(os.path.join(args.export_dir, "config.json"))["architectures"][0],
                       os.path.abspath(args.export_dir), None))
    elif args.export == "auto" and models:
        case, arch, folder, _ = models[0]
        try:
            exp, note = make_export(abl, args, folder, os.path.join(args.work, "export-" + case))
            log("export: " + note)
            models.append(("export-of-" + case, arch, exp, None))
        except Exception as e:
            add_row("export-of-" + case, arch, "cpu", "—", result="FAIL", note="making the export: %s" % e)

    for k, (case, arch, folder, g) in enumerate(models):
        log("%s (%s): %s" % (case, arch, folder))
        try:
            run_case(args, abl, case, arch, folder, factory(folder), g)
        except Exception as e:
            add_row(case, arch, "—", "—", result="FAIL", note="%s: %s" % (type(e).__name__, e))
            traceback.print_exc()
        save("Incomplete: %d of %d cases checked (%s next)." % (
            k + 1, len(models), models[k + 1][0] if k + 1 < len(models) else "the summary"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--reference", choices=("transformers", "ours-torch"), default="transformers")
    ap.add_argument("--abliterate", help="the binary (default: $ABL_BIN, `abliterate` on PATH, build/bin/abliterate)")
    ap.add_argument("--backend", action="append", choices=("cpu", "cuda"), default=[],
                    help="cpu always runs; --backend cuda adds our CUDA backend")
    ap.add_argument("--families", default="all",
                    help="random-init models to build: comma-separated architectures (every case of one) or "
                         "case templates (phi4-mini-partial-rope), all, or none (transformers only)")
    ap.add_argument("--golden", default="all", help="comma-separated golden fixture names, all, or none")
    ap.add_argument("--export", choices=("auto", "none"), default="auto",
                    help="auto: export trial 0 of a 2-trial run of the first model and check it")
    ap.add_argument("--export-dir", help="check this existing export folder instead of making one")
    ap.add_argument("--work", default=None, help="work folder (default: /tmp/hf_check-<pid>)")
    ap.add_argument("--table", help="write the Markdown table here too")
    ap.add_argument("--json", help="write every number (per depth, per prompt) here")
    ap.add_argument("--threads", default="0", help="--threads of abliterate (0 = automatic)")
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--init-range", type=float, default=0.15,
                    help="initializer_range of the random models (0.02 gives near-flat logits)")
    ap.add_argument("--hf-device", default=None,
                    help="device of transformers in bf16 (default: cuda when available); fp32 runs on the CPU")
    ap.add_argument("--fp32-embed-scale", action="store_true",
                    help="do not round Gemma's embedding scale to a bf16 checkpoint's dtype in the "
                         "transformers fp32 run (see README.md)")
    ap.add_argument("--h5-reader", choices=("auto", "h5py", "ctypes"), default="auto")
    # Tests of the plumbing only (tests/driver/hf_check.sh): the CUDA comparison code runs on rows
    # that our CPU backend produced.
    ap.add_argument("--test-cuda-as-cpu", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    h5read.READER = args.h5_reader
    # Started by the machine's Python with the machine's library path (scripts/device-check.sh),
    # the abliterate commands need the device bundle's (env.sh): our children get it.
    if os.environ.get("ABL_LD_LIBRARY_PATH"):
        os.environ["LD_LIBRARY_PATH"] = os.environ["ABL_LD_LIBRARY_PATH"]
    # A time limit's SIGTERM (scripts/device-check.sh) ends the run as SystemExit, which the table
    # notes above the rows it kept (see the end of main). `timeout` signals the process and then
    # its group: the second must not cut that last write short.
    def stop(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, stop)
    args.backends = ["cpu"] + [b for b in dict.fromkeys(args.backend) if b != "cpu"]
    sys.path.insert(0, os.path.join(REPO, "tools", "organism"))

    try:
        import torch
    except ImportError:
        print("skipped: torch not importable")
        return 77
    if args.reference == "transformers":
        # local folders only: never wait for the Hub (the GPU machines have no network)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import transformers
        except ImportError:
            print("skipped: transformers not importable")
            return 77
        torch_info = "torch %s, transformers %s" % (torch.__version__, transformers.__version__)
    else:
        torch_info = "torch %s" % torch.__version__
    exact_fp32_matmuls(torch)

    binary = find_binary(args.abliterate)
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        print("error: abliterate binary %s not found (--abliterate PATH)" % binary, file=sys.stderr)
        return 2
    version = subprocess.run([binary, "--version"], capture_output=True, text=True)
    if version.returncode != 0:
        print("error: %s --version failed: %s" % (binary, version.stderr.strip()), file=sys.stderr)
        return 2
    if "cuda" in args.backends and not any(l.strip().startswith("CUDA devices:") and "none" not in l
                                           for l in version.stdout.splitlines()):
        log("warning: --backend cuda, but the binary reports: " +
            "; ".join(l.strip() for l in version.stdout.splitlines() if "CUDA" in l))
    args.work = os.path.abspath(args.work or "/tmp/hf_check-%d" % os.getpid())
    os.makedirs(os.path.join(args.work, "logs"), exist_ok=True)
    abl = Abliterate(binary, args.threads, os.path.join(args.work, "logs"))
    if args.test_cuda_as_cpu:
        abl.backend_arg["cuda"] = "cpu"
        log("note: --test-cuda-as-cpu: the rows named cuda are our CPU backend (a test of the checker)")
    bf16_device = args.hf_device or ("cuda" if torch.cuda.is_available() else "cpu")

    # The prompts: the golden fixtures' six (one longer than every sliding window).
    gj0 = read_json(os.path.join(GOLDEN_DIR, "llama-mha", "golden.json"))
    args.prompt_texts = [p["text"] for p in gj0["prompts"]]
    assert all("\n" not in t for t in args.prompt_texts)
    args.prompts_file = os.path.join(args.work, "prompts.txt")
    with open(args.prompts_file, "w") as f:
        f.write("".join(t + "\n" for t in args.prompt_texts))

    def factory(folder):
        def make(dtype):
            if args.reference == "ours-torch":
                return TorchReference(folder) if dtype == "fp32" else None
            if dtype == "fp32":
                return HFReference(folder, "fp32", "cpu", not args.fp32_embed_scale)
            return HFReference(folder, "bf16", bf16_device, False)
        return make

    all_golden = sorted(d for d in os.listdir(GOLDEN_DIR) if os.path.isdir(os.path.join(GOLDEN_DIR, d)))
    golden = all_golden if args.golden == "all" else ([] if args.golden == "none" else args.golden.split(","))
    unknown = [g for g in golden if g not in all_golden]
    if unknown:
        print("error: no golden fixture %s (have: %s)" % (unknown, ", ".join(all_golden)), file=sys.stderr)
        return 2
    families, unknown = select_families(args.families)
    if unknown:
        print("error: --families takes architectures or case templates, all or none; not %s (have: %s)" % (
            ", ".join(unknown), ", ".join(sorted({a for a, _ in FAMILIES} | {t for _, t in FAMILIES}))), file=sys.stderr)
        return 2
    if args.reference == "ours-torch" and families and args.families != "all":
        log("note: --reference ours-torch cannot build models; --families ignored")
    if args.reference == "ours-torch":
        families = []

    t0 = time.time()
    log("hf_check: reference %s, backends %s, binary %s, work %s" % (args.reference, ",".join(args.backends), binary, args.work))
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "host": os.uname().nodename,
            "torch": torch_info, "abliterate": version.stdout.splitlines()[0] if version.stdout else binary,
            "reference": args.reference}

    def save(progress):
        return write_outputs(args, meta, progress)

    save("Incomplete: nothing checked yet.")
    try:
        check_all(args, abl, families, golden, factory, save)
    except BaseException as e:  # a time limit's SIGTERM, ^C or a bug: say so above the rows there are
        why = ("signal %d" % (e.code - 128) if isinstance(e, SystemExit) and isinstance(e.code, int) and e.code > 128
               else type(e).__name__)
        save("Stopped (%s): only the rows below were checked." % why)
        raise
    md = save("Complete.")
    print()
    print(md)
    failed = [r for r in ROWS if r["result"] not in ("pass", "info")]
    judged = [r for r in ROWS if r["result"] == "pass"]
    log("hf_check: %d passed, %d failed, %d info rows, %.0f s; details in %s" % (
        len(judged), len(failed), len(ROWS) - len(judged) - len(failed), time.time() - t0, args.work))
    if not judged and not failed:
        log("hf_check: nothing was compared")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
