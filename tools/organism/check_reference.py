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
     rows are permuted to (0, 2, ..., R-2, 1, 3, ..., R-1) in every head (1e-5);
  8. gpt-oss: a second forward pass written here from models/gpt_oss/modular_gpt_oss.py in another
     style (`GptOssCheck`: config.json read with GptOssConfig's defaults, its own YaRN from
     _compute_yarn_parameters, GptOssRotaryEmbedding's half-width cos/sin with _apply_rotary_emb's
     chunked halves, per-head attention with an explicit sink column and a hand-written
     max-subtracted softmax, GptOssTopKRouter, GptOssExperts.forward's per-expert index_add_ loop
     with _apply_gate) reproduces logits_last, hidden_last and logits_all_0 (1e-4), every golden
     greedy id (no cache) and the recorded clamp counts; and the MoE check (3.) runs with that
     expert loop;
  9. Cohere / Cohere 2: a second forward pass written here from models/cohere/modeling_cohere.py and
     models/cohere2/modular_cohere2.py in another style (`CohereCheck`: config.json read with
     CohereConfig's / Cohere2Config's defaults and layer types, torch's layer_norm without bias for
     CohereLayerNorm, the adjacent-pair RoPE as complex multiplication, per-head attention with an
     explicit mask and a hand-written softmax, the parallel block, logit_scale; with use_qk_norm,
     Command R+'s per-head q_norm / k_norm as torch's layer_norm over head_dim without weight, times
     the (heads, head_dim) weight) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and
     every golden greedy id (no cache); the interleaved RoPE equals the rotate-half one on permuted
     q/k rows (as 6.; the q/k norm weights' columns permuted alike); with use_qk_norm the q/k norm
     weights are (heads, head_dim) with distinct rows, and CohereCheck reproduces golden.json's
     qk_norm_{per_head,mean_subtraction}_effect_prompt4 and qk_norm_effect_prompt4 (1e-3);
 10. Llama without rope_scaling (llama-mha, llama-tied, llama-bias): a second forward pass written
     here from models/llama/modeling_llama.py in another style (`LlamaCheck`: config.json read with
     LlamaConfig's defaults, F.linear with the attention_bias / mlp_bias biases, the rotate-half
     RoPE as complex multiplication of the halves, per-head attention with an explicit mask and a
     hand-written softmax) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and every
     golden greedy id (no cache); with biases it reproduces golden.json's
     {qkv_bias,o_proj_bias,gate_up_bias,down_bias}_effect_prompt4 (1e-3);
 11. Seed-OSS: `SeedOssCheck` (LlamaCheck's layers with SeedOssConfig's defaults and
     SeedOssAttention's two flags: q/k/v_proj bias=attention_bias, o_proj bias=attention_out_bias)
     reproduces logits_last, hidden_last and logits_all_0 (1e-4), every golden greedy id (no cache) and
     golden.json's {qkv_bias,q_bias,k_bias,v_bias}_effect_prompt4 (1e-3); the fixture has no o_proj.bias;
     and with an o_proj.bias added to the weights (std 0.3), the configs attention_out_bias true (with
     attention_bias true, and with it false) give reference.Spec an o bias apart from the q/k/v one
     (o_bias true, qkv_bias as attention_bias), reference.forward agrees with SeedOssCheck on them
     (1e-4), and the o bias changes prompt 4's logits (> 1e-2) in both.

Run: /usr/bin/python3 tools/organism/check_reference.py  (a few seconds; exits 1 on a failure)
"""
import json
import math
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
            # Cohere's per-head q/k LayerNorms (over head_dim): their weight columns move with the rows
            key = pre + "self_attn.%s.weight" % ("q_norm" if proj == "q_proj" else "k_norm")
            if key in q:
                q[key] = q[key][..., torch.tensor(order)]
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
    if spec.expert_naming == "gpt_oss":
        out = GptOssCheck.experts(spec.num_experts, spec.swiglu_alpha, spec.swiglu_limit, p, pre, x,
                                  *GptOssCheck.router(spec.top_k, p, pre, x))
        return out.view(B, T, H)
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


class GptOssCheck:
    """gpt-oss's forward pass again, from models/gpt_oss/modular_gpt_oss.py and
    configuration_gpt_oss.py, sharing nothing with reference.py but the safetensors reader."""

    # GptOssConfig's defaults of the keys read here
    DEFAULTS = dict(num_key_value_heads=8, head_dim=64, sliding_window=128, tie_word_embeddings=False,
                    max_position_embeddings=131072, rms_norm_eps=1e-5, rope_theta=150000.0,
                    rope_scaling={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                  "truncate": False, "original_max_position_embeddings": 4096},
                    num_local_experts=128, num_experts_per_tok=4, attention_bias=True, layer_types=None,
                    swiglu_alpha=1.702, swiglu_limit=7.0)

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        self.c, self.p = c, p
        self.L, self.NH = c["num_hidden_layers"], c["num_attention_heads"]
        self.NKV, self.HD = c["num_key_value_heads"], c["head_dim"]
        self.E, self.k = c["num_local_experts"], c["num_experts_per_tok"]
        self.alpha, self.limit = c["swiglu_alpha"], c["swiglu_limit"]
        types = c["layer_types"] or ["sliding_attention" if bool((i + 1) % 2) else "full_attention"
                                     for i in range(self.L)]
        self.windows = [c["sliding_window"] if t == "sliding_attention" else None for t in types]
        self.inv_freq, self.attention_scaling = self.yarn(c)
        self.clamps = None

    def yarn(self, c):
        # modeling_rope_utils.py _compute_yarn_parameters (find_correction_range with truncate)
        rs, base, dim = c["rope_scaling"], c["rope_theta"], c["head_dim"]
        factor = rs["factor"]
        original = rs.get("original_max_position_embeddings") or c["max_position_embeddings"]
        scaling = rs.get("attention_factor") or (0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0)

        def correction_dim(rot):
            return (dim * math.log(original / (rot * 2 * math.pi))) / (2 * math.log(base))
        low, high = correction_dim(rs.get("beta_fast") or 32), correction_dim(rs.get("beta_slow") or 1)
        if rs.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
        extrapolation_factor = 1 - torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        inv_freq = (1.0 / (factor * pos_freqs)) * (1 - extrapolation_factor) + (1.0 / pos_freqs) * extrapolation_factor
        return inv_freq, scaling

    def rms(self, x, w):  # GptOssRMSNorm.forward
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.c["rms_norm_eps"]))

    @staticmethod
    def router(top_k, p, pre, x):  # GptOssTopKRouter.forward
        logits = torch.nn.functional.linear(x, p[pre + "mlp.router.weight"], p[pre + "mlp.router.bias"])
        top, idx = torch.topk(logits, top_k, dim=-1)
        return idx, torch.nn.functional.softmax(top, dim=1, dtype=top.dtype)

    @staticmethod
    def experts(E, alpha, limit, p, pre, x, router_indices, routing_weights, clamps=None):
        # GptOssExperts.forward: for each expert hit, its tokens (token_idx) and top-k slots (top_k_pos)
        gate_up_proj, gate_up_proj_bias = p[pre + "mlp.experts.gate_up_proj"], p[pre + "mlp.experts.gate_up_proj_bias"]
        down_proj, down_proj_bias = p[pre + "mlp.experts.down_proj"], p[pre + "mlp.experts.down_proj_bias"]
        next_states = torch.zeros_like(x)
        expert_mask = torch.nn.functional.one_hot(router_indices, num_classes=E).permute(2, 1, 0)
        for e in torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero():
            e = int(e[0])
            top_k_pos, token_idx = torch.where(expert_mask[e])
            gate_up = x[token_idx] @ gate_up_proj[e] + gate_up_proj_bias[e]
            # GptOssExperts._apply_gate
            gate, up = gate_up[..., ::2], gate_up[..., 1::2]
            if clamps is not None:
                clamps[0] += int((gate > limit).sum())
                clamps[1] += int((up.abs() > limit).sum())
                clamps[2] += int((up < -limit).sum())
                clamps[3] += gate.numel()
            gate = gate.clamp(min=None, max=limit)
            up = up.clamp(min=-limit, max=limit)
            gated = (up + 1) * (gate * torch.sigmoid(gate * alpha))
            out = gated @ down_proj[e] + down_proj_bias[e]
            next_states.index_add_(0, token_idx, out * routing_weights[token_idx, top_k_pos, None])
        return next_states

    def attention(self, l, h, cos, sin):
        pre, p, HD = "model.layers.%d.self_attn." % l, self.p, self.HD
        T = h.shape[0]
        q = (h @ p[pre + "q_proj.weight"].T + p[pre + "q_proj.bias"]).view(T, self.NH, HD)
        k = (h @ p[pre + "k_proj.weight"].T + p[pre + "k_proj.bias"]).view(T, self.NKV, HD)
        v = (h @ p[pre + "v_proj.weight"].T + p[pre + "v_proj.bias"]).view(T, self.NKV, HD)

        def rotary(x):  # _apply_rotary_emb: halves by torch.chunk, cos/sin of width HD/2
            first, second = torch.chunk(x, 2, dim=-1)
            c, s = cos.unsqueeze(1), sin.unsqueeze(1)
            return torch.cat((first * c - second * s, second * c + first * s), dim=-1)
        q, k = rotary(q), rotary(k)
        i = torch.arange(T).unsqueeze(1)
        j = torch.arange(T).unsqueeze(0)
        allowed = j <= i  # create_causal_mask
        if self.windows[l] is not None:  # create_sliding_window_causal_mask
            allowed = allowed & (j > i - self.windows[l])
        mask = torch.where(allowed, 0.0, torch.finfo(torch.float32).min)
        heads = []
        for hh in range(self.NH):
            kv = hh // (self.NH // self.NKV)  # repeat_kv
            w = (q[:, hh] @ k[:, kv].T) * HD ** -0.5 + mask
            combined = torch.cat((w, p[pre + "sinks"][hh].expand(T, 1)), dim=-1)  # the sink column
            combined = combined - combined.max(dim=-1, keepdim=True).values
            ex = torch.exp(combined)
            probs = ex / ex.sum(dim=-1, keepdim=True)
            heads.append(probs[:, :-1] @ v[:, kv])  # the sink's column dropped
        return torch.cat(heads, dim=-1) @ p[pre + "o_proj.weight"].T + p[pre + "o_proj.bias"]

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p = self.p
        h = p["model.embed_tokens.weight"][torch.tensor(ids)]
        freqs = torch.arange(len(ids)).float().unsqueeze(1) * self.inv_freq.unsqueeze(0)  # emb = freqs
        cos, sin = freqs.cos() * self.attention_scaling, freqs.sin() * self.attention_scaling
        hidden = [h]
        for l in range(self.L):  # GptOssDecoderLayer.forward
            pre = "model.layers.%d." % l
            h = h + self.attention(l, self.rms(h, p[pre + "input_layernorm.weight"]), cos, sin)
            x = self.rms(h, p[pre + "post_attention_layernorm.weight"])
            h = h + self.experts(self.E, self.alpha, self.limit, p, pre, x, *self.router(self.k, p, pre, x),
                                 clamps=self.clamps[l] if self.clamps else None)
            hidden.append(h)
        hidden[-1] = self.rms(h, p["model.norm.weight"])
        head = p["model.embed_tokens.weight"] if self.c["tie_word_embeddings"] else p["lm_head.weight"]
        return hidden[-1] @ head.T, hidden


def check_against_golden(name, label, m, g, st, after_prompts=None):
    """An independent model m (forward(ids) -> logits, hidden states) against the golden outputs: the
    logits at every prompt's last position and at every position of prompt 0, the hidden states at
    every depth (last position), within 1e-4; greedy ids without a cache equal. after_prompts()
    runs between the prompts and the greedy pass."""
    logits_last, hidden_last = [], []
    for i, e in enumerate(g["prompts"]):
        logits, hidden = m.forward(e["input_ids"])
        logits_last.append(logits[-1])
        hidden_last.append(torch.stack([x[-1] for x in hidden]))
        if i == 0:
            d0 = float((logits - st["logits_all_0"]).abs().max())
    if after_prompts:
        after_prompts()
    d1 = float((torch.stack(logits_last) - st["logits_last"]).abs().max())
    d2 = float((torch.stack(hidden_last) - st["hidden_last"]).abs().max())
    check(max(d0, d1, d2) < 1e-4, "%s: %s logits_last, hidden_last, logits_all_0 within 1e-4 "
          "(%.2e, %.2e, %.2e)" % (name, label, d1, d2, d0))
    same = True
    for e in g["prompts"]:
        ids = list(e["input_ids"])
        for want in e["greedy_ids"]:
            same &= int(m.forward(ids)[0][-1].argmax()) == want
            ids.append(want)
    check(same, "%s: %s greedy (no cache) = golden greedy ids" % (name, label))


def check_gpt_oss(name, spec, p, g, st):
    with open(os.path.join(ROOT, name, "config.json")) as f:
        m = GptOssCheck(json.load(f), p)
    m.clamps = [[0, 0, 0, 0] for _ in range(m.L)]
    counts = []

    def take_counts():
        counts.extend(list(x) for x in zip(*m.clamps))
        m.clamps = None
    check_against_golden(name, "GptOssCheck", m, g, st, take_counts)
    want = [g["model"][k] for k in ("clamped_gate", "clamped_up", "clamped_up_low", "clamp_candidates")]
    check(counts == want, "%s: GptOssCheck clamp counts per layer = golden.json's "
          "(gate %s, |up| %s, up < -limit %s of %s)" % ((name,) + tuple(counts)))


def plain_decoder_forward(m, ids, final_norm, logit_scale=1.0):
    """The model loop of CohereCheck and LlamaCheck: RoPE angles over the whole head, the unscaled
    embeddings, m.layer(l, h, angles) per layer, final_norm, then the head (tied or lm_head) times
    logit_scale. ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
    p = m.p
    inv_freq = 1.0 / m.c["rope_theta"] ** (torch.arange(0, m.HD, 2, dtype=torch.float32) / m.HD)
    angles = torch.outer(torch.arange(len(ids), dtype=torch.float32), inv_freq)  # (T, HD/2)
    h = p["model.embed_tokens.weight"][torch.tensor(ids)]
    hidden = [h]
    for l in range(m.L):
        h = m.layer(l, h, angles)
        hidden.append(h)
    hidden[-1] = final_norm(h, p["model.norm.weight"])
    head = p["model.embed_tokens.weight"] if m.c["tie_word_embeddings"] else p["lm_head.weight"]
    return (hidden[-1] @ head.T) * logit_scale, hidden


class CohereCheck:
    """Cohere's and Cohere 2's forward pass again, from models/cohere/modeling_cohere.py,
    configuration_cohere.py, models/cohere2/modular_cohere2.py and configuration_cohere2.py, sharing
    nothing with reference.py but the safetensors reader."""

    # CohereConfig's / Cohere2Config's defaults of the keys read here (transformers 4.x)
    DEFAULTS = dict(num_key_value_heads=None, layer_norm_eps=1e-5, rope_theta=10000.0, logit_scale=0.0625,
                    tie_word_embeddings=True, sliding_window=4096, sliding_window_pattern=4, layer_types=None,
                    use_qk_norm=False)

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"] or self.NH
        self.HD = self.H // self.NH  # Cohere2Config: head_dim = hidden_size // num_attention_heads
        if cfg["architectures"][0] == "Cohere2ForCausalLM":
            types = c["layer_types"] or ["sliding_attention" if (i + 1) % c["sliding_window_pattern"] else
                                         "full_attention" for i in range(self.L)]
            # Cohere2Attention.__init__: sliding_window only on sliding layers; forward rotates only then
            self.windows = [c["sliding_window"] if t == "sliding_attention" else None for t in types]
            self.rotates = [w is not None for w in self.windows]
        else:
            self.windows, self.rotates = [None] * self.L, [True] * self.L
        # CohereAttention.__init__: q_norm / k_norm when config.use_qk_norm (Cohere2Config has no such key)
        self.qk_norm = "layer" if cfg["architectures"][0] == "CohereForCausalLM" and c["use_qk_norm"] else None

    def head_norm(self, x, w):
        # CohereAttention.forward: q_norm(q.view(T, heads, head_dim)), a CohereLayerNorm of hidden_size
        # (heads, head_dim): the statistics over the last dim only, the weight (heads, head_dim) per head.
        # qk_norm "rms": the what-if of golden.json's qk_norm_mean_subtraction_effect_prompt4
        eps = self.c["layer_norm_eps"]
        if self.qk_norm == "rms":
            return w * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), eps=eps) * w

    def norm(self, x, w):  # CohereLayerNorm: mean-subtracted, no bias
        return torch.nn.functional.layer_norm(x, (self.H,), weight=w, bias=None, eps=self.c["layer_norm_eps"])

    def rotary(self, x, angles):
        # CohereRotaryEmbedding (repeat_interleave(freqs, 2)) + rotate_half (pairs x[2i], x[2i+1]) is the
        # pair (x[2i] + i x[2i+1]) times e^(i angle_i): (T, heads, HD) -> the same, as complex numbers
        z = torch.view_as_complex(x.reshape(*x.shape[:-1], self.HD // 2, 2).contiguous())
        return torch.view_as_real(z * torch.polar(torch.ones_like(angles), angles).unsqueeze(1)).flatten(-2)

    def layer(self, l, h, angles):
        pre, p, HD, T = "model.layers.%d." % l, self.p, self.HD, h.shape[0]
        x = self.norm(h, p[pre + "input_layernorm.weight"])
        q = (x @ p[pre + "self_attn.q_proj.weight"].T).view(T, self.NH, HD)
        k = (x @ p[pre + "self_attn.k_proj.weight"].T).view(T, self.NKV, HD)
        v = (x @ p[pre + "self_attn.v_proj.weight"].T).view(T, self.NKV, HD)
        if self.qk_norm:  # before the transpose and RoPE
            q = self.head_norm(q, p[pre + "self_attn.q_norm.weight"])
            k = self.head_norm(k, p[pre + "self_attn.k_norm.weight"])
        if self.rotates[l]:
            q, k = self.rotary(q, angles), self.rotary(k, angles)
        i, j = torch.arange(T).unsqueeze(1), torch.arange(T).unsqueeze(0)
        allowed = j <= i
        if self.windows[l] is not None:
            allowed = allowed & (i - j < self.windows[l])
        heads = []
        for hh in range(self.NH):
            kv = hh * self.NKV // self.NH  # repeat_kv: query head hh reads kv head hh // (NH / NKV)
            s = (q[:, hh] @ k[:, kv].T) / math.sqrt(HD)
            s = s.masked_fill(~allowed, float("-inf"))
            e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
            heads.append((e / e.sum(dim=-1, keepdim=True)) @ v[:, kv])
        attn = torch.cat(heads, dim=-1) @ p[pre + "self_attn.o_proj.weight"].T
        mlp = (torch.nn.functional.silu(x @ p[pre + "mlp.gate_proj.weight"].T) *
               (x @ p[pre + "mlp.up_proj.weight"].T)) @ p[pre + "mlp.down_proj.weight"].T
        return h + attn + mlp  # CohereDecoderLayer.forward: the parallel block

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H))). No embedding scale
        (Cohere2Model.forward); the logits times logit_scale (CohereForCausalLM.forward)."""
        return plain_decoder_forward(self, ids, self.norm, self.c["logit_scale"])


def check_cohere(name, spec, p, g, st):
    with open(os.path.join(ROOT, name, "config.json")) as f:
        cfg = json.load(f)
    m = CohereCheck(cfg, p)
    check_against_golden(name, "CohereCheck", m, g, st)
    sliding = [w is not None for w in m.windows]
    check(m.rotates == spec.layer_use_rope and sliding == spec.layer_sliding,
          "%s: CohereCheck's RoPE / sliding layers = reference.Spec's (%s / %s)" % (name, m.rotates, sliding))
    if m.qk_norm:
        shapes, distinct = [], True
        for l in range(m.L):
            for n, heads in (("q_norm", m.NH), ("k_norm", m.NKV)):
                w = p["model.layers.%d.self_attn.%s.weight" % (l, n)]
                shapes.append(tuple(w.shape) == (heads, m.HD))
                distinct &= all(not bool((w[i] == w[j]).all()) for i in range(heads) for j in range(i))
        check(all(shapes) and distinct, "%s: q_norm / k_norm weights are (heads, head_dim) = (%d, %d) / (%d, %d) "
              "with a different row per head" % (name, m.NH, m.HD, m.NKV, m.HD))
        ids = g["prompts"][4]["input_ids"]
        logits = m.forward(ids)[0]
        head0 = dict(p)
        for key in p:
            if key.endswith(("self_attn.q_norm.weight", "self_attn.k_norm.weight")):
                head0[key] = p[key][0].expand_as(p[key])
        rms, none = CohereCheck(cfg, p), CohereCheck(cfg, p)
        rms.qk_norm, none.qk_norm = "rms", None
        for key, other in (("qk_norm_per_head", CohereCheck(cfg, head0)), ("qk_norm_mean_subtraction", rms),
                           ("qk_norm", none)):
            effect = float((other.forward(ids)[0] - logits).abs().max())
            want = g["model"]["%s_effect_prompt4" % key]
            check(abs(effect - want) < 1e-3, "%s: CohereCheck %s_effect_prompt4 %.4f = golden.json's %.4f" % (
                name, key, effect, want))


class LlamaCheck:
    """LlamaForCausalLM's forward pass again (no rope_scaling), from models/llama/modeling_llama.py and
    configuration_llama.py, sharing nothing with reference.py but the safetensors reader."""

    # LlamaConfig's defaults of the keys read here
    DEFAULTS = dict(num_key_value_heads=None, head_dim=None, rms_norm_eps=1e-6, rope_theta=10000.0,
                    rope_scaling=None, attention_bias=False, mlp_bias=False, tie_word_embeddings=False)

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        rs = c["rope_scaling"]
        if rs and rs.get("rope_type", rs.get("type")) != "default":  # ({"rope_type": "default"}: Seed-OSS's)
            raise ValueError("LlamaCheck has no rope_scaling")
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"] or self.NH
        self.HD = c["head_dim"] or self.H // self.NH
        # LlamaAttention: q/k/v_proj and o_proj all bias=config.attention_bias
        self.qkv_bias = self.o_bias = c["attention_bias"]
        self.mlp_bias = c["mlp_bias"]

    def linear(self, x, name, bias):  # nn.Linear(..., bias=config.attention_bias / config.mlp_bias)
        return torch.nn.functional.linear(x, self.p[name + ".weight"], self.p[name + ".bias"] if bias else None)

    def rms(self, x, w):  # LlamaRMSNorm
        return w * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.c["rms_norm_eps"]))

    def rotary(self, x, angles):
        # LlamaRotaryEmbedding (cat(freqs, freqs)) + rotate_half pairs x[i] with x[i + HD/2]: that pair as
        # the complex number x[i] + i x[i + HD/2], times e^(i angle_i)
        half = self.HD // 2
        z = torch.complex(x[..., :half], x[..., half:]) * torch.polar(torch.ones_like(angles), angles).unsqueeze(1)
        return torch.cat((z.real, z.imag), dim=-1)

    def layer(self, l, h, angles):
        pre, HD, T = "model.layers.%d." % l, self.HD, h.shape[0]
        x = self.rms(h, self.p[pre + "input_layernorm.weight"])
        q = self.linear(x, pre + "self_attn.q_proj", self.qkv_bias).view(T, self.NH, HD)
        k = self.linear(x, pre + "self_attn.k_proj", self.qkv_bias).view(T, self.NKV, HD)
        v = self.linear(x, pre + "self_attn.v_proj", self.qkv_bias).view(T, self.NKV, HD)
        q, k = self.rotary(q, angles), self.rotary(k, angles)
        allowed = torch.ones(T, T, dtype=torch.bool).tril()
        heads = []
        for hh in range(self.NH):
            kv = hh * self.NKV // self.NH  # repeat_kv
            s = ((q[:, hh] @ k[:, kv].T) / math.sqrt(HD)).masked_fill(~allowed, float("-inf"))
            e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
            heads.append((e / e.sum(dim=-1, keepdim=True)) @ v[:, kv])
        h = h + self.linear(torch.cat(heads, dim=-1), pre + "self_attn.o_proj", self.o_bias)
        x = self.rms(h, self.p[pre + "post_attention_layernorm.weight"])
        gate = self.linear(x, pre + "mlp.gate_proj", self.mlp_bias)
        up = self.linear(x, pre + "mlp.up_proj", self.mlp_bias)
        return h + self.linear(torch.nn.functional.silu(gate) * up, pre + "mlp.down_proj", self.mlp_bias)

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        return plain_decoder_forward(self, ids, self.rms)


def check_llama(name, spec, p, g, st):
    with open(os.path.join(ROOT, name, "config.json")) as f:
        cfg = json.load(f)
    m = LlamaCheck(cfg, p)
    check_against_golden(name, "LlamaCheck", m, g, st)
    if not (m.qkv_bias or m.mlp_bias):
        return
    ids = g["prompts"][4]["input_ids"]
    logits = m.forward(ids)[0]
    groups = {"qkv_bias": ("self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias"),
              "o_proj_bias": ("self_attn.o_proj.bias",), "gate_up_bias": ("mlp.gate_proj.bias", "mlp.up_proj.bias"),
              "down_bias": ("mlp.down_proj.bias",)}
    check_zeroed_effects(name, LlamaCheck, cfg, p, g, ids, logits, groups)


def check_zeroed_effects(name, cls, cfg, p, g, ids, logits, groups):
    """golden.json's <key>_effect_prompt4: the largest change of prompt 4's logits (`logits`, from cls(cfg, p))
    when the tensors ending in each group's suffixes are zeroed, recomputed with the check class `cls`."""
    for key, suffixes in groups.items():
        zeroed = {n: (t * 0 if n.endswith(suffixes) else t) for n, t in p.items()}
        effect = float((cls(cfg, zeroed).forward(ids)[0] - logits).abs().max())
        want = g["model"]["%s_effect_prompt4" % key]
        check(abs(effect - want) < 1e-3, "%s: %s %s_effect_prompt4 %.4f = golden.json's %.4f" % (
            name, cls.__name__, key, effect, want))


class SeedOssCheck(LlamaCheck):
    """SeedOssForCausalLM again, from models/seed_oss/modular_seed_oss.py and configuration_seed_oss.py:
    LlamaCheck's layers (SeedOssDecoderLayer / SeedOssModel / SeedOssForCausalLM are Llama's; the dropouts
    act only in training) with SeedOssAttention's two flags and SeedOssConfig's defaults."""

    # SeedOssConfig's defaults of the keys read here (head_dim 128, not hidden_size // heads; q/k/v bias on)
    DEFAULTS = dict(num_key_value_heads=8, head_dim=128, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
                    attention_bias=True, attention_out_bias=False, mlp_bias=False, tie_word_embeddings=False)

    def __init__(self, cfg, p):
        super().__init__(cfg, p)
        # SeedOssAttention.__init__: q/k/v_proj bias=config.attention_bias, o_proj bias=config.attention_out_bias
        self.qkv_bias, self.o_bias = self.c["attention_bias"], self.c["attention_out_bias"]


def check_seed_oss(name, spec, p, g, st):
    with open(os.path.join(ROOT, name, "config.json")) as f:
        cfg = json.load(f)
    m = SeedOssCheck(cfg, p)
    check_against_golden(name, "SeedOssCheck", m, g, st)
    has_o = any(n.endswith("self_attn.o_proj.bias") for n in p)
    check((m.qkv_bias, m.o_bias, spec.qkv_bias, spec.o_bias, has_o) == (True, False, True, False, False),
          "%s: q/k/v_proj biases and no o_proj bias (attention_bias true, attention_out_bias false) in "
          "SeedOssCheck, reference.Spec and the weights" % name)
    ids = g["prompts"][4]["input_ids"]
    logits = m.forward(ids)[0]
    groups = {"qkv_bias": ("self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias"),
              "q_bias": ("self_attn.q_proj.bias",), "k_bias": ("self_attn.k_proj.bias",),
              "v_bias": ("self_attn.v_proj.bias",)}
    check_zeroed_effects(name, SeedOssCheck, cfg, p, g, ids, logits, groups)
    # attention_out_bias true: an o_proj bias of its own, with or without the q/k/v ones
    gen = torch.Generator().manual_seed(0)
    p2 = dict(p)
    for l in range(spec.L):
        p2["model.layers.%d.self_attn.o_proj.bias" % l] = torch.randn(spec.H, generator=gen) * 0.3
    x = torch.tensor([ids])
    for qkv in (True, False):
        with_o, without_o = (dict(cfg, attention_bias=qkv, attention_out_bias=o) for o in (True, False))
        s = ref.Spec(with_o)
        got = ref.forward(s, p2, x, capture=False)[0][0]
        diff = float((got - SeedOssCheck(with_o, p2).forward(ids)[0]).abs().max())
        effect = float((got - ref.forward(ref.Spec(without_o), p2, x, capture=False)[0][0]).abs().max())
        check((s.qkv_bias, s.o_bias) == (qkv, True) and diff < 1e-4 and effect > 1e-2,
              "%s: attention_bias %s, attention_out_bias true: reference.Spec qkv_bias %s, o_bias %s; reference = "
              "SeedOssCheck with an o_proj bias (%.2e); the o bias changes prompt 4's logits by %.4f" % (
                  name, str(qkv).lower(), s.qkv_bias, s.o_bias, diff, effect))


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
            if spec.arch in ref.GLM or spec.arch in ref.COHERE:
                check_glm_interleaved(name, spec, p, g)
            if spec.arch in ref.COHERE:
                check_cohere(name, spec, p, g, st)
            if spec.arch == "LlamaForCausalLM" and not spec.rope_scaling:
                check_llama(name, spec, p, g, st)
            if spec.arch == ref.SEED_OSS:
                check_seed_oss(name, spec, p, g, st)
            if spec.arch in ref.QWEN_VL:
                check_mrope_text(name, spec)
            if spec.arch == ref.GPT_OSS:
                check_gpt_oss(name, spec, p, g, st)
    print("%d passed, %d failed" % (len(passes), len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
