#!/usr/bin/env python3
"""Throughput of the torch reference forward (tools/organism/reference.py: transformers
semantics, fp32, KV cache) on the same shapes as tests/bench/bench_engine, so `make bench` can
print our CPU backend next to PyTorch on the same machine in the same run.

usage: torch_reference_bench.py MODEL_DIR|CONFIG.json PROMPTS PROMPT_LEN DECODE_BATCH STEPS THREADS
A config.json alone gets random weights of its shapes (speed does not depend on the values)."""
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "organism"))
import reference  # noqa: E402


def random_params(spec, cfg):
    g = torch.Generator().manual_seed(0)
    H, F, V, L = spec.H, cfg["intermediate_size"], spec.V, spec.L
    QD, KVD = spec.NH * spec.HD, spec.NKV * spec.HD

    def rnd(*shape):
        return torch.randn(*shape, generator=g) * 0.02

    p = {"model.embed_tokens.weight": rnd(V, H), "model.norm.weight": torch.ones(H)}
    if not spec.tied:
        p["lm_head.weight"] = rnd(V, H)
    for l in range(L):
        pre = "model.layers.%d." % l
        p[pre + "input_layernorm.weight"] = torch.ones(H)
        p[pre + "post_attention_layernorm.weight"] = torch.ones(H)
        p[pre + "self_attn.q_proj.weight"] = rnd(QD, H)
        p[pre + "self_attn.k_proj.weight"] = rnd(KVD, H)
        p[pre + "self_attn.v_proj.weight"] = rnd(KVD, H)
        p[pre + "self_attn.o_proj.weight"] = rnd(H, QD)
        if spec.qkv_bias:
            for n, d in (("q", QD), ("k", KVD), ("v", KVD)):
                p[pre + "self_attn.%s_proj.bias" % n] = rnd(d)
        if spec.qk_norm:
            p[pre + "self_attn.q_norm.weight"] = torch.ones(spec.HD)
            p[pre + "self_attn.k_norm.weight"] = torch.ones(spec.HD)
        p[pre + "mlp.gate_proj.weight"] = rnd(F, H)
        p[pre + "mlp.up_proj.weight"] = rnd(F, H)
        p[pre + "mlp.down_proj.weight"] = rnd(H, F)
    return p


@torch.no_grad()
def main():
    model, P, n, B, steps, threads = sys.argv[1], *map(int, sys.argv[2:7])
    if threads > 0:
        torch.set_num_threads(threads)
    t0 = time.perf_counter()
    if os.path.isdir(model):
        spec, p, _ = reference.load_model(model)
    else:
        with open(model) as f:
            cfg = json.load(f)
        spec = reference.Spec(cfg)
        p = random_params(spec, cfg)
    load_s = time.perf_counter() - t0
    ids = torch.tensor([[(i * 7919 + 13) % (spec.V - 3) for i in range(n)]])

    best = 1e30
    for _ in range(3):
        t0 = time.perf_counter()
        reference.forward(spec, p, ids.expand(P, n), capture=False)
        best = min(best, time.perf_counter() - t0)
    prefill_tps = P * n / best

    cache = {}
    reference.forward(spec, p, ids.expand(B, n), cache=cache, capture=False)
    pos = torch.full((B, 1), n - 1, dtype=torch.int64)
    t0 = time.perf_counter()
    for s in range(steps):
        pos = pos + 1
        tok = ids[:, s % n].expand(B).unsqueeze(1)
        reference.forward(spec, p, tok, pos, torch.ones(B, 1, dtype=torch.bool), cache=cache, capture=False)
    decode_s = time.perf_counter() - t0
    decode_tps = B * steps / decode_s
    print("%-28s load %6.2f s  prefill %9.1f tokens/s (%d x %d)  decode %8.1f tokens/s (batch %d, %.1f ms/step)  threads %d"
          % ("torch " + os.path.basename(model.rstrip("/")), load_s, prefill_tps, P, n, decode_tps, B,
             decode_s / steps * 1e3, torch.get_num_threads()))
    print(json.dumps({"impl": "torch", "model": model, "prefill_tps": round(prefill_tps, 2),
                      "decode_tps": round(decode_tps, 2)}))


if __name__ == "__main__":
    main()
