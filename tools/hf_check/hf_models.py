"""Model folders for tools/hf_check: random-init models built with transformers from a golden
fixture's config, their tensors, and loading a folder with transformers."""
import glob
import inspect
import json
import os
import shutil

from common import GOLDEN_DIR, CheckError


def dtype_key():
    """transformers 4.56 renamed torch_dtype to dtype (config key and from_pretrained argument);
    5.x warns on the old name. An older version takes an unknown `dtype` silently (as a config
    attribute), so the version decides, not an exception; one that is not X.Y (the test stub's)
    counts as new."""
    import re
    import transformers
    m = re.match(r"(\d+)\.(\d+)", transformers.__version__)
    return "torch_dtype" if m and (int(m.group(1)), int(m.group(2))) < (4, 56) else "dtype"


def eager(make, **kwargs):
    """make(**kwargs) with eager attention (Gemma 2's softcap needs it) and, where this version has
    MoE backends (5.x: experts_implementation, default grouped_mm), the eager per-expert loop: the
    plain computation. A version or model that refuses experts_implementation gets it without."""
    try:
        return make(attn_implementation="eager", experts_implementation="eager", **kwargs)
    except (TypeError, ValueError):
        return make(attn_implementation="eager", **kwargs)


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


def config_overrides(cfg):
    """Config values handed to transformers with a folder's config.json (building a model from a template, loading a
    folder). Nemotron-H: transformers 5's NemotronHConfig has a head_dim field (default 128) and reads no
    attention_head_dim, the key the releases' config.json files (and the golden fixture) hold: head_dim is set to it
    (the releases' heads are 128 wide, the default; the fixture's are 16); use_mamba_kernels false keeps
    NemotronHMamba2Mixer on torch_forward, whose floor of dt at time_step_min the golden files follow (the kernels'
    path has none, and would be fetched from the Hub)."""
    text = cfg.get("text_config", cfg)
    out = {}
    if cfg["architectures"][0] == "NemotronHForCausalLM":
        out["use_mamba_kernels"] = False
        if "head_dim" not in text and "attention_head_dim" in text:
            out["head_dim"] = text["attention_head_dim"]
    return out


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
    (E, H, I); Nemotron-H's ungated experts.up_proj (E, I, H) / experts.down_proj (E, H, I)) and save_pretrained is
    expected to write them back per expert, the Hub layout.
    abliterate reads both (its unit tests hold the fused one to the per-expert one); should a
    version save them fused, rewrite them per expert here so that the table compares the Hub layout
    (the round-trip check in build_random_model then proves the rewrite loads as the model we made).
    Returns a note, or None when nothing was fused."""
    import torch
    import reference as ref
    if arch in ("GptOssForCausalLM", "Qwen3VLMoeForConditionalGeneration", "Llama4ForConditionalGeneration",
                "Llama4ForCausalLM", "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"):
        # their stacked experts (transposed: gpt-oss, interleaved; Qwen3-VL-MoE, Llama 4) are the Hub layout, and
        # transformers reads no other (Gemma 4's experts.gate_up_proj / experts.down_proj, no per-expert form)
        return None
    files = safetensors_files(folder)
    if len(files) != 1:
        return None
    st = ref.read_safetensors(files[0])
    # (Nemotron-H's NemotronHExperts: up_proj (E, I, H) and down_proj (E, H, I), no gate)
    stacked = (".experts.up_proj",) if arch == "NemotronHForCausalLM" else ()
    fused = [k for k in st if k.endswith((".experts.gate_up_proj", ".experts.down_proj") + stacked)]
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
        if arch == "NemotronHForCausalLM":
            # the release's mixer.experts.{e}.up_proj.weight (I, H) / down_proj.weight (H, I), F.linear's layout
            part = "up_proj" if name.endswith(".up_proj") else "down_proj"
            for e in range(t.shape[0]):
                out.append(("%s.%d.%s.weight" % (name[:-len(part) - 1], e, part), dt, t[e].contiguous()))
            continue
        base = name[:-len(".gate_up_proj")] if name.endswith("gate_up_proj") else name[:-len(".down_proj")]
        if arch == "MixtralForCausalLM":
            base = base.replace(".mlp.experts", ".block_sparse_moe.experts")
            names = ("w1", "w3", "w2")
        elif arch == "Lfm2MoeForCausalLM":
            names = ("w1", "w3", "w2")  # LFM2-8B-A1B's feed_forward.experts.{e}.w1 / w3 / w2
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
        c.pop("torch_dtype", None)
        c[dtype_key()] = "float32"
        c["initializer_range"] = init_range
    if arch == "Gemma3ForConditionalGeneration":
        text["final_logit_softcapping"] = None  # as released Gemma 3 checkpoints
    if arch == "GemmaForCausalLM":
        # the tanh GELU Gemma 1 was trained with, in every version: 4.39-4.47 read hidden_activation, 4.48+
        # hidden_act (the released "gelu" would be the exact one there; docs/families.md, Gemma 1)
        text["hidden_act"] = text["hidden_activation"] = "gelu_pytorch_tanh"
    if arch in ("Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM", "Glm4MoeForCausalLM", "DeepseekV3ForCausalLM",
                "Qwen3NextForCausalLM", "Lfm2MoeForCausalLM", "Dots1ForCausalLM"):
        text["moe_intermediate_size"] = 24  # 2 I != H: a fused (E, 2I, H) layout is unambiguous
    text.update(config_overrides(cfg))  # (Nemotron-H: head_dim from attention_head_dim, no mamba kernels)
    if os.path.exists(folder):
        shutil.rmtree(folder)
    cfg_dir = folder + ".config"
    os.makedirs(cfg_dir, exist_ok=True)
    with open(os.path.join(cfg_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    config = transformers.AutoConfig.from_pretrained(cfg_dir)
    cls = getattr(transformers, arch)
    torch.manual_seed(seed)
    # eager attention and experts, as the reloaded model (load_hf)
    try:
        model = eager(lambda **kw: cls._from_config(config, **kw))
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
            # Mamba-2's D skip: ones at init; Nemotron-H's mixer (.mixer.*) also A_log, log(1..heads) at init (dt_bias and
            # conv1d.bias end in "bias")
            if name.endswith(("bias", ".mamba.D", ".mixer.D", ".mixer.A_log")) or "norm" in name:
                p.add_(0.1 * torch.randn(p.shape, generator=g))
            # Apertus' xIELU: its alphas start at transformers' defaults in every layer; move them apart per layer
            if name.endswith((".act_fn.alpha_p", ".act_fn.alpha_n")):
                p.add_(0.3 * torch.randn(p.shape, generator=g))
            if not torch.isfinite(p).all():
                raise CheckError("the random init left non-finite values in " + name)
        for name, b in model.named_buffers():
            # router biases kept as buffers, zero at init: GLM-4.5's, LFM2-MoE's expert_bias (use_expert_bias)
            if name.endswith(("e_score_correction_bias", ".expert_bias")):
                b.add_(0.1 * torch.randn(b.shape, generator=g))
            if name.endswith(".act_fn.beta"):  # Apertus' xIELU beta (a 0-d buffer, 0.5 at init)
                b.add_(0.1 * torch.randn(b.shape, generator=g))
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
    cfg = read_json(os.path.join(folder, "config.json"))
    cls = getattr(transformers, cfg["architectures"][0])
    # (config_overrides: from_pretrained's keyword arguments that name config attributes set them)
    model = eager(lambda **kw: cls.from_pretrained(folder, **kw), **{dtype_key(): dtype}, **config_overrides(cfg))
    model = model.to(device=device, dtype=dtype).eval()
    bad = [n for n, p in model.named_parameters() if p.dtype != dtype]
    if bad:
        raise CheckError("transformers kept %s in %s" % (bad[0], model.dtype))
    return model
