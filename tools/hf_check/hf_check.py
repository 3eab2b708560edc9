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
import ctypes
import ctypes.util
import glob
import inspect
import json
import math
import os
import shutil
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
GOLDEN_DIR = os.path.join(REPO, "tests", "fixtures", "golden")
ORGANISM_PROMPTS = os.path.join(REPO, "tests", "fixtures", "organism", "prompts")

# One random-init model per supported architecture; the template is that golden fixture's
# config.json (valid HF configs written for these families, tools/organism/golden_models.py).
FAMILIES = [
    ("LlamaForCausalLM", "llama3-rope-scaling"),
    ("MistralForCausalLM", "mistral-window"),
    ("Qwen2ForCausalLM", "qwen2-qkv-bias"),
    ("Qwen3ForCausalLM", "qwen3-qk-norm"),
    ("Gemma2ForCausalLM", "gemma2-softcap"),
    ("Gemma3ForCausalLM", "gemma3-local-global"),
    ("Gemma3ForConditionalGeneration", "gemma3-mm"),
    ("Phi3ForCausalLM", "phi3-longrope"),
    ("MixtralForCausalLM", "mixtral-moe"),
    ("Qwen2MoeForCausalLM", "qwen2-moe-shared"),
    ("Qwen3MoeForCausalLM", "qwen3-moe"),
]
GEMMA = ("Gemma2ForCausalLM", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration")

# Tolerances (documented in the module docstring, README.md and docs/hf-equality.md).
CPU_LOGPROB = 1e-4
CPU_HIDDEN_REL = 1e-4
CPU_TIE_MARGIN = 1e-3
CUDA_LOGPROB = 0.1
CUDA_HIDDEN_REL = 0.05
CUDA_TIE_MARGIN = 0.25


def log(msg):
    print(msg, flush=True)


class CheckError(Exception):
    """A failure of one case that the table reports (the other cases go on)."""


# ------------------------------------------------------------------------------------------------
# HDF5 reading: h5py when importable, else libhdf5 itself through ctypes (the GPU machine's Python
# may lack h5py; the device bundle's env.sh puts Debian's libhdf5 on LD_LIBRARY_PATH).

class H5pyFile:
    def __init__(self, path):
        import h5py
        self.f = h5py.File(path, "r")

    def array(self, name):
        import numpy as np
        return np.asarray(self.f[name][()])

    def strings(self, name):
        return [s for s in self.f[name].asstr()[()]]

    def attr(self, name):
        v = self.f.attrs[name]
        return v.decode() if isinstance(v, bytes) else v

    def close(self):
        self.f.close()


class CtypesH5:
    """The few libhdf5 calls needed to read numeric datasets, string datasets and scalar string
    attributes (HDF5 1.10: hid_t is int64)."""
    lib = None

    @classmethod
    def load(cls):
        if cls.lib is not None:
            return cls.lib
        names = ["libhdf5_openmpi.so.103", "libhdf5_serial.so.103", "libhdf5.so.103",
                 "libhdf5_openmpi.so", "libhdf5_serial.so", "libhdf5.so"]
        found = ctypes.util.find_library("hdf5")
        if found:
            names.append(found)
        for root in ("/tmp/abl-root/usr/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"):
            names += sorted(glob.glob(os.path.join(root, "libhdf5*.so*")))
        errors = []
        for n in names:
            try:
                lib = ctypes.CDLL(n)
                lib.H5open()
                break
            except OSError as e:
                errors.append(str(e))
        else:
            raise CheckError("no h5py and no loadable libhdf5 (" + "; ".join(errors[:3]) + ")")
        hid, herr = ctypes.c_int64, ctypes.c_int
        for fn, res, args in [
            ("H5Fopen", hid, [ctypes.c_char_p, ctypes.c_uint, hid]),
            ("H5Fclose", herr, [hid]),
            ("H5Dopen2", hid, [hid, ctypes.c_char_p, hid]),
            ("H5Dclose", herr, [hid]),
            ("H5Dget_space", hid, [hid]),
            ("H5Dread", herr, [hid, hid, hid, hid, hid, ctypes.c_void_p]),
            ("H5Sget_simple_extent_ndims", ctypes.c_int, [hid]),
            ("H5Sget_simple_extent_dims", ctypes.c_int, [hid, ctypes.c_void_p, ctypes.c_void_p]),
            ("H5Sclose", herr, [hid]),
            ("H5Aopen", hid, [hid, ctypes.c_char_p, hid]),
            ("H5Aread", herr, [hid, hid, ctypes.c_void_p]),
            ("H5Aclose", herr, [hid]),
            ("H5Tcopy", hid, [hid]),
            ("H5Tset_size", herr, [hid, ctypes.c_size_t]),
            ("H5Tset_cset", herr, [hid, ctypes.c_int]),
            ("H5Tclose", herr, [hid]),
        ]:
            f = getattr(lib, fn)
            f.restype, f.argtypes = res, args
        cls.lib = lib
        return lib


class CtypesFile:
    def __init__(self, path):
        self.h5 = CtypesH5.load()
        self.path = path
        self.fid = self.h5.H5Fopen(path.encode(), 0, 0)  # H5F_ACC_RDONLY, H5P_DEFAULT
        if self.fid < 0:
            raise CheckError("%s: H5Fopen failed" % path)

    def _global(self, name):
        return ctypes.c_int64.in_dll(self.h5, name).value

    def _open(self, name):
        d = self.h5.H5Dopen2(self.fid, name.encode(), 0)
        if d < 0:
            raise CheckError("%s: no dataset %s" % (self.path, name))
        s = self.h5.H5Dget_space(d)
        n = self.h5.H5Sget_simple_extent_ndims(s)
        dims = (ctypes.c_uint64 * max(n, 1))()
        self.h5.H5Sget_simple_extent_dims(s, dims, None)
        self.h5.H5Sclose(s)
        return d, tuple(dims[i] for i in range(n))

    def _string_type(self):
        t = self.h5.H5Tcopy(self._global("H5T_C_S1_g"))
        self.h5.H5Tset_size(t, ctypes.c_size_t(-1).value)  # H5T_VARIABLE
        self.h5.H5Tset_cset(t, 1)  # H5T_CSET_UTF8
        return t

    def array(self, name):
        import numpy as np
        d, shape = self._open(name)
        kind = {"/kl/logprobs": ("H5T_NATIVE_FLOAT_g", np.float32)}.get(name)
        if kind is None:
            kind = ("H5T_NATIVE_LLONG_g", np.int64) if name.endswith("n_tokens") else (
                ("H5T_NATIVE_DOUBLE_g", np.float64) if name.endswith("mean") else ("H5T_NATIVE_FLOAT_g", np.float32))
        out = np.empty(shape, dtype=kind[1])
        if self.h5.H5Dread(d, self._global(kind[0]), 0, 0, 0, out.ctypes.data) < 0:
            raise CheckError("%s: H5Dread %s failed" % (self.path, name))
        self.h5.H5Dclose(d)
        return out

    def strings(self, name):
        d, shape = self._open(name)
        buf = (ctypes.c_char_p * shape[0])()
        t = self._string_type()
        if self.h5.H5Dread(d, t, 0, 0, 0, buf) < 0:
            raise CheckError("%s: H5Dread %s failed" % (self.path, name))
        self.h5.H5Tclose(t)
        self.h5.H5Dclose(d)
        return [b.decode() if b is not None else "" for b in buf]

    def attr(self, name):
        a = self.h5.H5Aopen(self.fid, name.encode(), 0)
        if a < 0:
            raise CheckError("%s: no attribute %s" % (self.path, name))
        t = self._string_type()
        p = ctypes.c_char_p()
        if self.h5.H5Aread(a, t, ctypes.byref(p)) < 0:
            raise CheckError("%s: H5Aread %s failed (not a string attribute?)" % (self.path, name))
        self.h5.H5Tclose(t)
        self.h5.H5Aclose(a)
        return (p.value or b"").decode()

    def close(self):
        self.h5.H5Fclose(self.fid)


H5_READER = "auto"


def open_h5(path):
    if H5_READER in ("auto", "h5py"):
        try:
            return H5pyFile(path)
        except ImportError:
            if H5_READER == "h5py":
                raise CheckError("h5py is not importable")
    return CtypesFile(path)


# ------------------------------------------------------------------------------------------------
# Running our binary

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


# ------------------------------------------------------------------------------------------------
# Model folders

def read_json(path):
    with open(path) as f:
        return json.load(f)


def eos_ids(folder):
    """eos ids as our engine and transformers' generate read them: generation_config.json, else
    config.json (top level, else text_config)."""
    for name in ("generation_config.json", "config.json"):
        p = os.path.join(folder, name)
        if os.path.exists(p):
            c = read_json(p)
            e = c.get("eos_token_id")
            if e is None and "text_config" in c:
                e = c["text_config"].get("eos_token_id")
            if e is not None:
                return sorted(set(e if isinstance(e, list) else [e]))
    return []


def checkpoint_dtype(cfg):
    text = cfg.get("text_config", cfg)
    for c in (text, cfg):
        for k in ("torch_dtype", "dtype"):
            if c.get(k):
                return str(c[k]).replace("torch.", "")
    return "float32"


def safetensors_files(folder):
    files = sorted(glob.glob(os.path.join(folder, "*.safetensors")))
    if not files:
        raise CheckError("%s has no .safetensors file" % folder)
    return files


def tensor_bytes(folder):
    """name -> raw bytes of every tensor of a folder (all shards)."""
    import struct
    out = {}
    for path in safetensors_files(folder):
        with open(path, "rb") as f:
            raw = f.read()
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8:8 + n])
        header.pop("__metadata__", None)
        for k, v in header.items():
            a, b = v["data_offsets"]
            out[k] = raw[8 + n + a:8 + n + b]
    return out


def split_fused_experts(folder, arch, cfg):
    """transformers 5.x holds MoE experts fused (experts.gate_up_proj (E, 2I, H), experts.down_proj
    (E, H, I)) and save_pretrained is expected to write them back per expert, the Hub layout that
    abliterate reads. Should a version save them fused, rewrite them per expert here (the
    round-trip check in build_random_model then proves the rewrite loads as the model we made).
    Returns a note, or None when nothing was fused."""
    import torch
    import reference as ref
    files = safetensors_files(folder)
    if len(files) != 1:
        return None
    st = ref.read_safetensors(files[0])
    fused = [k for k in st if k.endswith((".experts.gate_up_proj", ".experts.down_proj"))]
    if not fused:
        return None
    H = cfg["hidden_size"]
    out = []
    for name, (dt, t) in st.items():
        if name not in fused:
            new = name
            if arch == "MixtralForCausalLM" and ".mlp.gate." in name:
                new = name.replace(".mlp.gate.", ".block_sparse_moe.gate.")
            out.append((new, dt, t))
            continue
        base = name[:-len(".gate_up_proj")] if name.endswith("gate_up_proj") else name[:-len(".down_proj")]
        if arch == "MixtralForCausalLM":
            base = base.replace(".mlp.experts", ".block_sparse_moe.experts")
            names = ("w1", "w3", "w2")
        else:
            names = ("gate_proj", "up_proj", "down_proj")
        for e in range(t.shape[0]):
            w = t[e]
            if name.endswith("gate_up_proj"):
                if w.shape[1] != H:
                    w = w.T  # stored (H, 2I)
                inter = w.shape[0] // 2
                out.append(("%s.%d.%s.weight" % (base, e, names[0]), dt, w[:inter].contiguous()))
                out.append(("%s.%d.%s.weight" % (base, e, names[1]), dt, w[inter:].contiguous()))
            else:
                if w.shape[0] != H:
                    w = w.T  # stored (I, H)
                out.append(("%s.%d.%s.weight" % (base, e, names[2]), dt, w.contiguous()))
    ref.write_safetensors(files[0], out, {"format": "pt"})
    del torch
    return "experts were saved fused (%d tensors); rewritten per expert" % len(fused)


def build_random_model(arch, template, folder, seed, init_range):
    """A random-init transformers model of `arch` in fp32, saved to `folder` with the golden
    template's tokenizer. Returns notes (strings)."""
    import torch
    import transformers
    cfg = read_json(os.path.join(GOLDEN_DIR, template, "config.json"))
    cfg.pop("transformers_version", None)
    cfg.pop("cache_implementation", None)  # "hybrid" (4.4x) is not a cache every version knows
    text = cfg.get("text_config", cfg)
    for c in (cfg, text):
        c.pop("dtype", None)
        c["torch_dtype"] = "float32"
        c["initializer_range"] = init_range
    if arch == "Gemma3ForConditionalGeneration":
        text["final_logit_softcapping"] = None  # as released Gemma 3 checkpoints
    if arch in ("Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM"):
        text["moe_intermediate_size"] = 24  # 2 I != H: a fused (E, 2I, H) layout is unambiguous
    if os.path.exists(folder):
        shutil.rmtree(folder)
    cfg_dir = folder + ".config"
    os.makedirs(cfg_dir, exist_ok=True)
    with open(os.path.join(cfg_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    config = transformers.AutoConfig.from_pretrained(cfg_dir)
    cls = getattr(transformers, arch)
    torch.manual_seed(seed)
    # eager attention, as the reloaded model (Gemma 2's softcap needs it)
    try:
        model = cls._from_config(config, attn_implementation="eager")
    except TypeError:
        config._attn_implementation = "eager"
        model = cls(config)
    model = model.float().eval()
    # Norm weights start at 1 (or 0 with Gemma's 1 + w) and biases at 0: perturb them so that a
    # wrong norm formula or a dropped bias shows.
    with torch.no_grad():
        g = torch.Generator().manual_seed(seed + 1)
        for name, p in model.named_parameters():
            if ".experts." in name or name.endswith((".experts.gate_up_proj", ".experts.down_proj")):
                # fused 3-D expert tensors: do not depend on a version's _init_weights covering them
                p.copy_(init_range * torch.randn(p.shape, generator=g))
            if name.endswith("bias") or "norm" in name:
                p.add_(0.1 * torch.randn(p.shape, generator=g))
            if not torch.isfinite(p).all():
                raise CheckError("the random init left non-finite values in " + name)
    # safetensors (4.x needs safe_serialization=True where it still has the option; 5.x always is)
    if "safe_serialization" in inspect.signature(model.save_pretrained).parameters:
        model.save_pretrained(folder, safe_serialization=True)
    else:
        model.save_pretrained(folder)
    notes = []
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(GOLDEN_DIR, template, name), folder)
    eos = eos_ids(os.path.join(GOLDEN_DIR, template))
    with open(os.path.join(folder, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": None, "do_sample": False,
                   "eos_token_id": eos if len(eos) > 1 else eos[0]}, f, indent=1)
    note = split_fused_experts(folder, arch, text)
    if note:
        notes.append(note)
    # Round trip: the model transformers loads back from the folder is the one we built.
    ids = torch.tensor([[457, 305, 198, 300, 307, 257, 310, 308, 13, 458, 198, 457, 301, 198]])
    back = load_hf(folder, torch.float32, "cpu")
    with torch.no_grad():
        a = model(input_ids=ids).logits
        b = back(input_ids=ids).logits
    d = float((a - b).abs().max())
    if d > 1e-5:
        raise CheckError("save_pretrained/from_pretrained round trip changes the logits by %.3g" % d)
    shutil.rmtree(cfg_dir)
    return notes


def load_hf(folder, dtype, device):
    import transformers
    arch = read_json(os.path.join(folder, "config.json"))["architectures"][0]
    cls = getattr(transformers, arch)
    model = cls.from_pretrained(folder, dtype=dtype, attn_implementation="eager")
    model = model.to(device=device, dtype=dtype).eval()
    bad = [n for n, p in model.named_parameters() if p.dtype != dtype]
    if bad:
        raise CheckError("transformers kept %s in %s" % (bad[0], model.dtype))
    return model


# ------------------------------------------------------------------------------------------------
# References: transformers (the check) and tools/organism/reference.py (the dry path). Each gives,
# per prompt, the last position's logits, the hidden states at every depth there, and greedy ids
# (stopping at eos, eos included) with the top-1 minus top-2 logit margin of every step.

class HFReference:
    def __init__(self, folder, dtype_name, device, as_stored_embed_scale):
        import torch
        self.torch = torch
        dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype_name]
        self.name = "transformers %s (%s)" % (dtype_name, device)
        self.device = device
        self.model = load_hf(folder, dtype, device)
        self.notes = []
        cfg = read_json(os.path.join(folder, "config.json"))
        stored = checkpoint_dtype(cfg)
        if (as_stored_embed_scale and dtype == torch.float32 and cfg["architectures"][0] in GEMMA
                and stored in ("bfloat16", "float16")):
            # Gemma multiplies the embeddings by sqrt(H) in the dtype the model runs in; our engine
            # (and reference.py) use sqrt(H) rounded to the checkpoint's dtype, as transformers does
            # when it runs a bf16 checkpoint as stored. An fp32 run of transformers on a bf16
            # checkpoint uses the unrounded value; scale the embedding output to the rounded one so
            # that everything else is compared in fp32.
            H = cfg.get("text_config", cfg)["hidden_size"]
            exact = float(torch.tensor(H ** 0.5, dtype=torch.float32))
            rounded = float(torch.tensor(H ** 0.5, dtype=torch.float32).to(getattr(torch, stored)))
            ratio = rounded / exact
            self.model.get_input_embeddings().register_forward_hook(lambda m, i, o: o * ratio)
            self.notes.append("Gemma embedding scale as stored (%s): sqrt(%d) = %.6g, not %.6g" % (
                stored, H, rounded, exact))

    def forward_last(self, ids):
        torch = self.torch
        with torch.no_grad():
            out = self.model(input_ids=torch.tensor([ids], device=self.device),
                             output_hidden_states=True, use_cache=False)
        logits = out.logits[0, -1].double().cpu()
        hidden = torch.stack([h[0, -1] for h in out.hidden_states]).double().cpu()
        return logits, hidden

    def greedy(self, ids, max_new, eos):
        torch = self.torch
        x = torch.tensor([ids], device=self.device)
        with torch.no_grad():
            try:
                gen = self.model.generate(input_ids=x, attention_mask=torch.ones_like(x), do_sample=False,
                                          num_beams=1, max_new_tokens=max_new, min_new_tokens=0,
                                          eos_token_id=list(eos) or None,
                                          pad_token_id=(list(eos) or [0])[0])
            except Exception as e:  # keep the run going: greedy by full forward passes instead
                note = "generate() failed (%s: %s); greedy ids from full forward passes" % (
                    type(e).__name__, str(e).splitlines()[0] if str(e) else "")
                if note not in self.notes:
                    self.notes.append(note)
                    log("  " + note)
                gen = x
                for _ in range(max_new):
                    nxt = int(self.model(input_ids=gen, use_cache=False).logits[0, -1].argmax())
                    gen = torch.cat([gen, torch.tensor([[nxt]], device=self.device)], dim=1)
                    if nxt in eos:
                        break
            new = gen[0, len(ids):].tolist()
            # Margins along the generated path from one full forward pass (no cache).
            logits = self.model(input_ids=gen, use_cache=False).logits[0].float().cpu()
        margins, disagree = [], 0
        for k, tok in enumerate(new):
            top = torch.topk(logits[len(ids) - 1 + k], 2)
            margins.append(float(top.values[0] - top.values[1]))
            disagree += int(top.indices[0]) != tok
        return new, margins, disagree


class TorchReference:
    def __init__(self, folder):
        import reference as ref
        self.ref = ref
        self.name = "ours-torch fp32 (reference.py)"
        self.spec, self.p, _ = ref.load_model(folder)
        self.notes = []

    def forward_last(self, ids):
        import torch
        with torch.no_grad():
            logits, hidden = self.ref.forward(self.spec, self.p, torch.tensor([ids]))
        return logits[0, -1].double(), torch.stack([h[0, -1] for h in hidden]).double()

    def greedy(self, ids, max_new, eos):
        out, margins = self.ref.greedy(self.spec, self.p, ids, max_new, eos, stop_at_eos=True)
        return out, margins, 0


def reference_results(refobj, prompt_ids, max_new, eos):
    import torch
    res = {"logprobs": [], "hidden": [], "greedy": [], "margins": [], "cache_disagree": 0}
    for ids in prompt_ids:
        logits, hidden = refobj.forward_last(ids)
        res["logprobs"].append(torch.log_softmax(logits, -1))
        res["hidden"].append(hidden)
        g, m, d = refobj.greedy(ids, max_new, eos)
        res["greedy"].append(g)
        res["margins"].append(m)
        res["cache_disagree"] += d
    res["logprobs"] = torch.stack(res["logprobs"])
    res["hidden"] = torch.stack(res["hidden"])
    return res


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


# ------------------------------------------------------------------------------------------------

def find_binary(given):
    if given:
        return given
    if os.environ.get("ABL_BIN"):
        return os.environ["ABL_BIN"]
    found = shutil.which("abliterate")
    if found:
        return found
    return os.path.join(REPO, "build", "bin", "abliterate")


def main():
    global H5_READER
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--reference", choices=("transformers", "ours-torch"), default="transformers")
    ap.add_argument("--abliterate", help="the binary (default: $ABL_BIN, `abliterate` on PATH, build/bin/abliterate)")
    ap.add_argument("--backend", action="append", choices=("cpu", "cuda"), default=[],
                    help="cpu always runs; --backend cuda adds our CUDA backend")
    ap.add_argument("--families", default="all",
                    help="comma-separated architectures to build random models of, all, or none "
                         "(transformers only)")
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
    H5_READER = args.h5_reader
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
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

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
    archs = [a for a, _ in FAMILIES]
    families = archs if args.families == "all" else ([] if args.families == "none" else args.families.split(","))
    if any(f not in archs for f in families):
        print("error: --families takes %s" % ", ".join(archs), file=sys.stderr)
        return 2
    if args.reference == "ours-torch" and families and args.families != "all":
        log("note: --reference ours-torch cannot build models; --families ignored")
    if args.reference == "ours-torch":
        families = []

    t0 = time.time()
    log("hf_check: reference %s, backends %s, binary %s, work %s" % (args.reference, ",".join(args.backends), binary, args.work))
    models = []  # (case, arch, folder, golden or None)
    for i, arch in enumerate(families):
        template = dict(FAMILIES)[arch]
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

    for case, arch, folder, g in models:
        log("%s (%s): %s" % (case, arch, folder))
        try:
            run_case(args, abl, case, arch, folder, factory(folder), g)
        except Exception as e:
            add_row(case, arch, "—", "—", result="FAIL", note="%s: %s" % (type(e).__name__, e))
            traceback.print_exc()

    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "host": os.uname().nodename,
            "torch": torch_info, "abliterate": version.stdout.splitlines()[0] if version.stdout else binary,
            "reference": args.reference}
    md = table_markdown(meta)
    print()
    print(md)
    if args.table:
        with open(args.table, "w") as f:
            f.write(md)
    with open(args.json or os.path.join(args.work, "hf_check.json"), "w") as f:
        json.dump({"meta": meta, "rows": ROWS, "details": DETAILS}, f, indent=1, default=str)
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
