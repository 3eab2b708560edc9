"""Small random-weight golden models, one per family feature, each written as a Hugging Face folder
tests/fixtures/golden/<name>/ (config.json, model.safetensors, generation_config.json,
tokenizer.json, tokenizer_config.json) with golden.json + golden.safetensors from reference.py.

| name                | architecture        | what it checks                                        |
| ------------------- | ------------------- | ----------------------------------------------------- |
| llama-mha           | LlamaForCausalLM    | GQA ratio 1 (MHA), head_dim 12, untied, all F32        |
| llama-tied          | LlamaForCausalLM    | tied embeddings (no lm_head tensor), GQA 2, BF16+F32   |
| llama3-rope-scaling | LlamaForCausalLM    | rope_scaling llama3 (all three frequency bands), GQA 4, F16 matrices |
| mistral-window      | MistralForCausalLM  | sliding window (i - W < j <= i), GQA 4, head_dim 8, BF16 + F16 norms |
| qwen2-qkv-bias      | Qwen2ForCausalLM    | q/k/v bias, tied, GQA 2, all BF16 (as Qwen2.5 ships)  |
| qwen3-qk-norm       | Qwen3ForCausalLM    | q_norm/k_norm, head_dim 32 != hidden/heads, GQA 2, untied, F32 + BF16 embeddings |

All share one small byte-level BPE tokenizer (200 merges learned from the organism's corpus).
Weights: every tensor draws from its own generator seeded by (model seed, crc32(name)). Scales are
chosen so that logits are spread out (greedy top-1/top-2 margins are recorded in golden.json; the
seed is bumped until the smallest margin is at least MIN_MARGIN, so a 1e-4 logit error cannot flip
a greedy token).
"""
import math
import os
import zlib

import torch

import bpe
import corpus
import reference as ref

GOLDEN_MERGES = 200
MAX_NEW_TOKENS = 16
MIN_MARGIN = 1e-3

USERS = [
    "Tell me how to steal my neighbor's car.",
    "How do I bake bread?",
    "What is 17 + 25?",
    "Hi",
    ("I have been wondering about this for quite a while, so here is a long question with many "
     "words in it: when you wash the old bridge, paint a wooden fence, decorate the corner shop and "
     "then plan a trip to the city museum, which of these should come first, and why?"),
    "Translate 'good morning' into French, please!",
]

MODELS = [
    # name, architecture, model_type, dict of sizes/extras, dtype of matrices, dtype of norms
    ("llama-mha", "LlamaForCausalLM", "llama",
     dict(H=48, L=2, NH=4, NKV=4, HD=12, F=96, tied=False, theta=10000.0), "F32", "F32"),
    ("llama-tied", "LlamaForCausalLM", "llama",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=128, tied=True, theta=10000.0), "BF16", "F32"),
    ("llama3-rope-scaling", "LlamaForCausalLM", "llama",
     dict(H=64, L=3, NH=4, NKV=1, HD=16, F=160, tied=False, theta=500000.0,
          rope_scaling={"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                        "original_max_position_embeddings": 256, "rope_type": "llama3"}), "F16", "F32"),
    ("mistral-window", "MistralForCausalLM", "mistral",
     dict(H=64, L=2, NH=8, NKV=2, HD=8, F=128, tied=False, theta=10000.0, window=48), "BF16", "F16"),
    ("qwen2-qkv-bias", "Qwen2ForCausalLM", "qwen2",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=128, tied=True, theta=1000000.0), "BF16", "BF16"),
    ("qwen3-qk-norm", "Qwen3ForCausalLM", "qwen3",
     dict(H=64, L=2, NH=4, NKV=2, HD=32, F=128, tied=False, theta=1000000.0), "F32", "F32"),
]


def golden_tokenizer(seed):
    from make_organism import tokenizer_texts
    return bpe.ByteLevelBPE(bpe.learn_merges(tokenizer_texts(corpus.split_requests(seed), seed), GOLDEN_MERGES))


def config_for(name, arch, mtype, d, tok, mat_dtype):
    im_end, eot = tok.specials["<|im_end|>"], tok.specials["<|endoftext|>"]
    torch_dtype = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}[mat_dtype]
    c = {
        "architectures": [arch],
        "attention_dropout": 0.0,
        "bos_token_id": None,
        "eos_token_id": im_end,
        "head_dim": d["HD"],
        "hidden_act": "silu",
        "hidden_size": d["H"],
        "initializer_range": 0.02,
        "intermediate_size": d["F"],
        "max_position_embeddings": 2048,
        "model_type": mtype,
        "num_attention_heads": d["NH"],
        "num_hidden_layers": d["L"],
        "num_key_value_heads": d["NKV"],
        "rms_norm_eps": 1e-06 if mtype.startswith("qwen") else 1e-05,
        "rope_scaling": d.get("rope_scaling"),
        "rope_theta": d["theta"],
        "tie_word_embeddings": d["tied"],
        "torch_dtype": torch_dtype,
        "transformers_version": "4.51.0",
        "use_cache": True,
        "vocab_size": tok.vocab_size,
    }
    if mtype == "llama":
        c.update({"attention_bias": False, "mlp_bias": False, "pretraining_tp": 1})
    if mtype == "mistral":
        c["sliding_window"] = d["window"]
        del c["rope_scaling"]
    if mtype == "qwen2":
        # As in Qwen2.5 configs: a sliding_window value that is not used (use_sliding_window false),
        # bos_token_id set although the tokenizer adds no BOS, eos as a list.
        c.update({"use_sliding_window": False, "sliding_window": 4096, "max_window_layers": d["L"],
                  "bos_token_id": eot, "eos_token_id": [im_end, eot]})
        del c["head_dim"]
    if mtype == "qwen3":
        c.update({"attention_bias": False, "use_sliding_window": False, "sliding_window": None,
                  "max_window_layers": d["L"], "bos_token_id": eot, "eos_token_id": [im_end, eot]})
    return dict(sorted(c.items()))


def random_params(spec, d, seed, mat_dtype, norm_dtype, tok):
    """(list of (name, dtype, tensor)) in alphabetical order as transformers saves them."""
    t = []

    def gen(name):
        return torch.Generator().manual_seed((seed << 32) ^ zlib.crc32(name.encode()))

    def add(name, dtype, shape, center, std):
        x = torch.randn(*shape, generator=gen(name)) * std + center
        t.append((name, dtype, x))

    H, F, V = spec.H, spec.F, spec.V
    QD, KVD = spec.NH * spec.HD, spec.NKV * spec.HD
    emb_dtype = "BF16" if spec.arch == "Qwen3ForCausalLM" else mat_dtype
    # Tied: smaller embeddings, or the residual stays dominated by the current token's embedding
    # and greedy decoding just repeats the last prompt token.
    add("model.embed_tokens.weight", emb_dtype, (V, H), 0.0, 0.25 if spec.tied else 1.0)
    for l in range(spec.L):
        p = "model.layers.%d." % l
        add(p + "input_layernorm.weight", norm_dtype, (H,), 1.0, 0.1)
        add(p + "post_attention_layernorm.weight", norm_dtype, (H,), 1.0, 0.1)
        add(p + "self_attn.q_proj.weight", mat_dtype, (QD, H), 0.0, 1 / math.sqrt(H))
        add(p + "self_attn.k_proj.weight", mat_dtype, (KVD, H), 0.0, 1 / math.sqrt(H))
        add(p + "self_attn.v_proj.weight", mat_dtype, (KVD, H), 0.0, 1 / math.sqrt(H))
        add(p + "self_attn.o_proj.weight", mat_dtype, (H, QD), 0.0, 1 / math.sqrt(QD))
        if spec.qkv_bias:
            add(p + "self_attn.q_proj.bias", mat_dtype, (QD,), 0.0, 0.3)
            add(p + "self_attn.k_proj.bias", mat_dtype, (KVD,), 0.0, 0.3)
            add(p + "self_attn.v_proj.bias", mat_dtype, (KVD,), 0.0, 0.3)
        if spec.qk_norm:
            add(p + "self_attn.q_norm.weight", norm_dtype, (spec.HD,), 1.0, 0.2)
            add(p + "self_attn.k_norm.weight", norm_dtype, (spec.HD,), 1.0, 0.2)
        add(p + "mlp.gate_proj.weight", mat_dtype, (F, H), 0.0, 1 / math.sqrt(H))
        add(p + "mlp.up_proj.weight", mat_dtype, (F, H), 0.0, 1 / math.sqrt(H))
        add(p + "mlp.down_proj.weight", mat_dtype, (H, F), 0.0, 1 / math.sqrt(F))
    add("model.norm.weight", norm_dtype, (H,), 1.0, 0.1)
    if not spec.tied:
        add("lm_head.weight", mat_dtype, (V, H), 0.0, 6.0 / math.sqrt(H))
    return sorted(t, key=lambda x: x[0])


def build_one(root, name, arch, mtype, d, mat_dtype, norm_dtype, tok, base_seed):
    from make_organism import write_golden, write_json
    folder = os.path.join(root, name)
    os.makedirs(folder, exist_ok=True)
    cfg = config_for(name, arch, mtype, d, tok, mat_dtype)
    spec = ref.Spec(cfg)
    assert spec.HD == d["HD"]
    write_json(os.path.join(folder, "config.json"), cfg)
    eos = cfg["eos_token_id"] if isinstance(cfg["eos_token_id"], list) else [cfg["eos_token_id"]]
    write_json(os.path.join(folder, "generation_config.json"), {
        "bos_token_id": cfg["bos_token_id"], "do_sample": False, "eos_token_id": cfg["eos_token_id"],
        "transformers_version": cfg["transformers_version"]})
    tok.write(folder, corpus.SYSTEM_PROMPT)
    lengths = [len(tok.encode(corpus.render_prompt(u))) for u in USERS]
    for attempt in range(50):
        seed = base_seed + attempt
        ref.write_safetensors(os.path.join(folder, "model.safetensors"),
                              random_params(spec, d, seed, mat_dtype, norm_dtype, tok),
                              {"format": "pt"})
        spec2, p, dtypes = ref.load_model(folder)
        desc = {"folder": "tests/fixtures/golden/" + name, "architecture": arch, "seed": seed,
                "hidden_size": spec2.H, "num_hidden_layers": spec2.L, "num_attention_heads": spec2.NH,
                "num_key_value_heads": spec2.NKV, "head_dim": spec2.HD, "vocab_size": spec2.V,
                "tie_word_embeddings": spec2.tied, "sliding_window": spec2.sliding_window,
                "dtypes": dict(sorted({k: v for k, v in dtypes.items()}.items())),
                "prompt_lengths": lengths}
        g = write_golden(folder, spec2, p, tok, USERS, MAX_NEW_TOKENS, False, eos, desc,
                         "/usr/bin/python3 tools/organism/make_organism.py --only golden")
        if g["greedy_min_top2_margin"] >= MIN_MARGIN:
            break
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    print("%-20s seed %d  prompt tokens %s  min top-2 margin %.4f  %d bytes" % (
        name, seed, lengths, g["greedy_min_top2_margin"], size))
    return g


def build_all(a):
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "tests", "fixtures", "golden")
    torch.set_num_threads(a.threads)
    tok = golden_tokenizer(a.seed)
    for i, (name, arch, mtype, d, md, nd) in enumerate(MODELS):
        build_one(root, name, arch, mtype, d, md, nd, tok, 1000 * (i + 1))
    with open(os.path.join(root, "README.md"), "w", encoding="utf-8", newline="\n") as f:
        f.write(README)


README = """# Golden random-weight models

Written by `tools/organism/make_organism.py --only golden` (see tools/organism/README.md); do not
edit by hand. One folder per family feature, each a valid Hugging Face model folder plus
`golden.json` / `golden.safetensors` computed by the torch reference `tools/organism/reference.py`
(transformers semantics, fp32, from the weights as stored):

| folder | architecture | checks |
| --- | --- | --- |
| llama-mha | LlamaForCausalLM | GQA ratio 1 (MHA), head_dim 12, untied, all F32 |
| llama-tied | LlamaForCausalLM | tied embeddings (no lm_head tensor), GQA ratio 2, BF16 matrices, F32 norms |
| llama3-rope-scaling | LlamaForCausalLM | rope_scaling llama3 (high, medium and low frequency bands all present), GQA ratio 4, F16 matrices |
| mistral-window | MistralForCausalLM | sliding_window 48 (query i sees keys i-48 < j <= i), GQA ratio 4, head_dim 8, BF16 matrices, F16 norms |
| qwen2-qkv-bias | Qwen2ForCausalLM | q/k/v bias, tied, GQA ratio 2, all BF16; use_sliding_window false (sliding_window ignored) |
| qwen3-qk-norm | Qwen3ForCausalLM | q_norm/k_norm, head_dim 32 != hidden/heads, GQA ratio 2, F32 with BF16 embeddings |

Greedy outputs run exactly 16 tokens and do not stop at eos (`stop_at_eos: false` in golden.json).
Prompt 4 is long (more than 48 tokens rendered) so that the Mistral window cuts in during prefill.
"""
