"""Self-checks of reference.py on the committed golden models, without transformers:

  1. every golden model: batched greedy decoding with the KV cache and left padding
     (`greedy_batch`, all prompts in one batch) gives the golden greedy ids (up to the first eos,
     where greedy_batch stops), and the padded batch's last-position logits equal `logits_last`
     within 1e-4;
  2. phi3-longrope: the fused qkv_proj / gate_up_proj split into separate q/k/v/gate/up tensors
     and run through the unfused (Llama) code path gives the same logits (1e-5);
  3. MoE models: `moe_block` (all experts on every token, summed per token in top-k order) equals
     a per-expert loop that gathers each expert's tokens and accumulates with index_add_ (as
     transformers' MixtralSparseMoeBlock does; for GLM-4.5 after Glm4MoeMoE.route_tokens_to_experts),
     written independently here, within 1e-6 of max(1, max |y|) on every MoE layer output, and the
     recorded expert_ids_last / routing gaps are reproduced;
  4. gemma3-mm, mistral3-mm: the weights renamed from the legacy language_model.model.* (and
     language_model.lm_head.*) spelling to the transformers >= 4.52 model.language_model.* (and
     lm_head.*) spelling give identical logits;
  5. Gemma: hidden_states[0] is the embedding row times the bf16-rounded sqrt(hidden_size);
  7. Qwen-VL: the multimodal RoPE of text positions (three equal position rows) is the plain RoPE
     exactly, and differs once the rows differ (an image's height/width positions), so the
     equality is not the code doing nothing;
  6. GLM: the interleaved RoPE equals the rotate-half one on q/k weights (and biases) whose rotary
     rows are permuted to (0, 2, ..., R-2, 1, 3, ..., R-1) in every head (1e-5).

Run: /usr/bin/python3 tools/organism/check_reference.py  (a few seconds; exits 1 on a failure)
"""
import json
import os
import sys

import torch

import reference as ref
from golden_models import routing_gap

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "tests", "fixtures", "golden")
failures = []
passes = []


def check(ok, what):
    print("%s  %s" % ("ok  " if ok else "FAIL", what))
    (passes if ok else failures).append(what)


def load(name):
    folder = os.path.join(ROOT, name)
    spec, p, _ = ref.load_model(folder)
    with open(os.path.join(folder, "golden.json")) as f:
        g = json.load(f)
    st = ref.read_safetensors(os.path.join(folder, "golden.safetensors"))
    return spec, p, g, {k: v[1] for k, v in st.items()}


def last_logits(spec, p, prompts):
    ids, pos, valid = ref.left_padded(prompts)
    logits, _ = ref.forward(spec, p, ids, pos, valid, capture=False)
    return logits[:, -1]


def check_cache_path(name, spec, p, g, st):
    prompts = [e["input_ids"] for e in g["prompts"]]
    outs = ref.greedy_batch(spec, p, prompts, g["max_new_tokens"], g["eos_token_ids"])
    same = True
    for e, out in zip(g["prompts"], outs):
        want = e["greedy_ids"] if e["first_eos_index"] is None else e["greedy_ids"][:e["first_eos_index"] + 1]
        same &= out == want
    check(same, "%s: greedy_batch (KV cache, left padding) = golden greedy ids" % name)
    diff = float((last_logits(spec, p, prompts) - st["logits_last"]).abs().max())
    check(diff < 1e-4, "%s: padded batch logits_last within 1e-4 (%.2e)" % (name, diff))


def check_phi3_unfused(name, spec, p, g):
    QD, KVD, F = spec.NH * spec.HD, spec.NKV * spec.HD, spec.F
    q = dict(p)
    for l in range(spec.L):
        pre = "model.layers.%d." % l
        qkv = q.pop(pre + "self_attn.qkv_proj.weight")
        q[pre + "self_attn.q_proj.weight"] = qkv[:QD]
        q[pre + "self_attn.k_proj.weight"] = qkv[QD:QD + KVD]
        q[pre + "self_attn.v_proj.weight"] = qkv[QD + KVD:]
        gu = q.pop(pre + "mlp.gate_up_proj.weight")
        q[pre + "mlp.gate_proj.weight"], q[pre + "mlp.up_proj.weight"] = gu[:F], gu[F:]
    unfused = ref.Spec(spec.cfg)
    unfused.fused_qkv = unfused.fused_gate_up = False
    prompts = [e["input_ids"] for e in g["prompts"]]
    diff = float((last_logits(spec, p, prompts) - last_logits(unfused, q, prompts)).abs().max())
    check(diff < 1e-5, "%s: fused qkv/gate_up = split tensors on the unfused path (%.2e)" % (name, diff))


def check_glm_interleaved(name, spec, p, g):
    R, HD = spec.R, spec.HD
    order = list(range(0, R, 2)) + list(range(1, R, 2)) + list(range(R, HD))
    q = dict(p)
    for l in range(spec.L):
        pre = "model.layers.%d." % l
        for proj, heads in (("q_proj", spec.NH), ("k_proj", spec.NKV)):
            rows = torch.tensor([h * HD + i for h in range(heads) for i in order])
            for kind in ("weight", "bias"):
                key = pre + "self_attn.%s.%s" % (proj, kind)
                if key in q:
                    q[key] = q[key][rows]
    halves = ref.Spec(spec.cfg)
    halves.rope_interleaved = False
    prompts = [e["input_ids"] for e in g["prompts"]]
    diff = float((last_logits(spec, p, prompts) - last_logits(halves, q, prompts)).abs().max())
    check(diff < 1e-5, "%s: interleaved RoPE = rotate-half RoPE on permuted q/k rows (%.2e)" % (name, diff))


def check_mrope_text(name, spec):
    positions = torch.arange(40).unsqueeze(0)
    plain = ref.rope_cos_sin(*spec.rope["global"], positions)
    mm = ref.mrope_cos_sin(spec, positions)
    same = all(bool((a == b).all()) for a, b in zip(plain, mm))
    check(same, "%s: multimodal RoPE of text positions = plain RoPE" % name)
    # an image token's rows differ (temporal t, height h, width w): the angles must change
    rows = torch.stack([positions, positions * 0 + 3, positions * 0 + 5])
    image = ref.mrope_cos_sin(spec, positions, rows)
    differs = not bool((image[0] == mm[0]).all())
    check(differs, "%s: other height/width position rows give other angles (mrope_section %s)" % (name, spec.mrope_section))


def moe_per_expert(spec, p, pre, l, h):
    """The MoE MLP as transformers' MixtralSparseMoeBlock loops: for each expert, the tokens that
    chose it, weighted, accumulated into the output with index_add_."""
    B, T, H = h.shape
    x = h.reshape(-1, H)
    w = p[ref.router_weight_name(spec, pre)]
    if spec.router == "sigmoid":
        # Glm4MoeMoE.route_tokens_to_experts as written there (topk unsorted), then its experts' loop
        E, G = spec.num_experts, spec.n_group
        s = torch.sigmoid(x @ w.T)
        c = s + p[pre + "mlp.gate.e_score_correction_bias"]
        groups = c.view(-1, G, E // G).topk(2, dim=-1)[0].sum(dim=-1)
        kept = torch.zeros_like(groups).scatter_(1, torch.topk(groups, k=spec.topk_group, dim=-1, sorted=False)[1], 1)
        mask = kept.unsqueeze(-1).expand(-1, G, E // G).reshape(-1, E)
        chosen = torch.topk(c.masked_fill(~mask.bool(), 0.0), k=spec.top_k, dim=-1, sorted=False)[1]
        top = s.gather(1, chosen)
        if spec.norm_topk_prob:
            top = top / (top.sum(dim=-1, keepdim=True) + 1e-20)
        top = top * spec.routed_scaling_factor
    else:
        probs = torch.nn.functional.softmax(x @ w.T, dim=1, dtype=torch.float)
        top, chosen = torch.topk(probs, spec.top_k, dim=-1)
        if spec.norm_topk_prob:
            top /= top.sum(dim=-1, keepdim=True)
    out = torch.zeros_like(x)
    mask = torch.nn.functional.one_hot(chosen, num_classes=spec.num_experts).permute(2, 1, 0)
    for e in range(spec.num_experts):
        slot, tok = torch.where(mask[e])
        gate, up, down = ref.expert_tensors(spec, p, pre, e)
        xe = x[tok]
        ye = (torch.nn.functional.silu(xe @ gate.T) * (xe @ up.T)) @ down.T
        out.index_add_(0, tok, ye * top[tok, slot, None])
    if spec.shared_intermediate:
        gate, up, down = ref.expert_tensors(spec, p, pre, "shared")
        shared = (torch.nn.functional.silu(x @ gate.T) * (x @ up.T)) @ down.T
        out += torch.sigmoid(x @ p[pre + "mlp.shared_expert_gate.weight"].T) * shared if spec.shared_gated else shared
    return out.view(B, T, H)


def check_moe(name, spec, p, g):
    worst = [0.0]
    original = ref.moe_block

    def both(spec_, p_, pre, l, h, trace=None):
        y = original(spec_, p_, pre, l, h, trace)
        # relative to the output's scale: the sums' rounding grows with it (Granite's small residual
        # multiplier and GLM-4.5's routed_scaling_factor make the MoE outputs large)
        scale = max(1.0, float(y.abs().max()))
        worst[0] = max(worst[0], float((y - moe_per_expert(spec_, p_, pre, l, h)).abs().max()) / scale)
        return y

    ref.moe_block = both
    try:
        for e in g["prompts"]:
            ref.forward(spec, p, torch.tensor([e["input_ids"] + e["greedy_ids"]]), capture=False)
    finally:
        ref.moe_block = original
    check(worst[0] <= 1e-6, "%s: MoE per-token top-k sum = per-expert index_add loop (%.2e of max(1, max |y|))" % (
        name, worst[0]))
    ok, gap = True, float("inf")
    for e in g["prompts"]:
        trace = {}
        ref.forward(spec, p, torch.tensor([e["input_ids"]]), capture=False, trace=trace)
        for l in range(spec.L):
            if spec.layer_moe[l]:
                chosen = trace["router"][l][1][0]
                ok &= [int(i) for i in chosen[-1]] == e["expert_ids_last"][l]
                gap = min(gap, routing_gap(spec, p, l, trace["router_logits"][l]))
            else:
                ok &= e["expert_ids_last"][l] is None
    check(ok, "%s: expert_ids_last reproduced" % name)
    check(abs(gap - g["model"]["routing_min_gap"]) < 1e-6, "%s: routing_min_gap reproduced (%.6f)" % (name, gap))


def check_gemma(name, spec, p, g, st):
    prefix, _ = ref.weight_names(spec, p)
    ids = g["prompts"][0]["input_ids"]
    scale = float(torch.tensor(spec.H ** 0.5).to(torch.bfloat16))
    want = p[prefix + "embed_tokens.weight"][ids[-1]] * scale
    check(bool((st["hidden_last"][0, 0] == want).all()) and spec.embed_scale == scale,
          "%s: hidden_states[0] = embedding * bf16(sqrt(%d)) = %g" % (name, spec.H, scale))


def check_multimodal_spellings(name, spec, p, g):
    prefix, head = ref.weight_names(spec, p)
    renamed = {}
    for k, v in p.items():
        if k.startswith(prefix):
            k = "model.language_model." + k[len(prefix):]
        elif k == head:
            k = "lm_head.weight"
        renamed[k] = v
    prompts = [e["input_ids"] for e in g["prompts"]]
    same = bool((last_logits(spec, p, prompts) == last_logits(spec, renamed, prompts)).all())
    check(same, "%s: model.language_model.* spelling = the spelling it was saved in (%s*)" % (name, prefix))


def main():
    torch.set_num_threads(1)
    names = sorted(n for n in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, n)))
    with torch.no_grad():
        for name in names:
            spec, p, g, st = load(name)
            check_cache_path(name, spec, p, g, st)
            if spec.arch == "Phi3ForCausalLM":
                check_phi3_unfused(name, spec, p, g)
            if spec.num_experts:
                check_moe(name, spec, p, g)
            if spec.arch in ref.GEMMA:
                check_gemma(name, spec, p, g, st)
            if spec.arch in ref.MULTIMODAL:
                check_multimodal_spellings(name, spec, p, g)
            if spec.arch in ref.GLM:
                check_glm_interleaved(name, spec, p, g)
            if spec.arch in ref.QWEN_VL:
                check_mrope_text(name, spec)
    print("%d passed, %d failed" % (len(passes), len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
