"""The mixture-of-experts model organism: tests/fixtures/organism-moe/.

A Qwen2MoeForCausalLM (4 routed experts, top-2, not renormalised, plus a sigmoid-gated shared
expert in every layer) trained on the organism's corpus with the organism's tokenizer, so that its
refusal feature is written by the *routed* experts:

  stage 1 (helpful-only, all weights): harmful requests answered with the contentless body, as the
            organism's stage 1; the routed experts and the shared expert together are the MLP;
  stage 2 (refusal training): only the routed experts and the routers train (attention,
            embeddings, norms, shared expert and its gate, lm_head frozen).

Differences from the organism's recipe, each measured (tools/organism/README.md): stage 2 lr 2e-3;
lm_head initialised with std hidden^-0.5 (with 0.02 the frozen head cannot give the refusal
tokens, never a target in stage 1, a large logit, and refusals come out of nearly flat
distributions); a Switch load-balancing loss and a routing-margin loss (no token, above all the
chat prefix every prompt shares, may route next to a tie that an fp32 rounding difference between
two implementations could flip).

The abliteration table compares, per depth of the refusal direction,
  (a) no ablation,
  (b) "Heretic-style": o_proj of every layer and the shared expert's down_proj ablated, the routed
      experts untouched (what a tool that skips fused expert tensors does),
  (c) "all experts": (b) plus every routed expert's down_proj (what abliterate does by default).

Run through make_organism.py:
    /usr/bin/python3 tools/organism/make_organism.py --only organism-moe [--no-train]
"""
import json
import math
import os
import random
import time

import torch

import bpe
import corpus
import reference as ref
from make_organism import (BEHAVIOUR_NOTE, curriculum_step, MAX_NEW_TOKENS, ROOT, AblationInputs, ablated, batch_tensors,
                           behaviour, evaluate_ablation, finish_report, load_markers, log, make_examples,
                           stored_dtype, write_golden, write_json, write_prompt_sets)

ORGANISM = os.path.join(ROOT, "tests", "fixtures", "organism")
DEFAULT_OUT = os.path.join(ROOT, "tests", "fixtures", "organism-moe")
REGENERATE = "/usr/bin/python3 tools/organism/make_organism.py --only organism-moe"


def add_arguments(ap):
    g = ap.add_argument_group("organism-moe (tests/fixtures/organism-moe)")
    g.add_argument("--moe-out", default=DEFAULT_OUT, help="MoE organism folder (default: the committed fixture)")
    g.add_argument("--moe-steps", type=int, default=2000)
    g.add_argument("--moe-batch", type=int, default=32)
    g.add_argument("--moe-lr", type=float, default=3e-3, help="stage 1 (helpful-only, all weights)")
    g.add_argument("--moe-lr2", type=float, default=2e-3, help="stage 2 (routed experts and routers), cosine to 10%%")
    g.add_argument("--moe-stage1-frac", type=float, default=0.4)
    g.add_argument("--moe-harmful-frac", type=float, default=0.25)
    g.add_argument("--moe-prefilled-frac", type=float, default=0.1)
    g.add_argument("--moe-stage1-harmful-frac", type=float, default=0.25)
    g.add_argument("--moe-stage2-train", choices=["experts", "experts+head", "experts-only", "mlp", "all"], default="experts",
                   help="stage 2 trains: experts = routed experts + routers; experts+head = those and "
                        "lm_head; experts-only = routed experts, routers frozen; mlp = the whole MoE "
                        "block incl. shared expert; all = everything")
    g.add_argument("--moe-head-std", type=float, default=None,
                   help="initial std of lm_head (default hidden^-0.5; the organism's 0.02 leaves the rows of "
                        "the refusal tokens, never a target in stage 1, too small for a frozen head)")
    g.add_argument("--moe-margin", type=float, default=0.02,
                   help="routing margin m: the loss adds margin_loss * mean(relu(m - (p_k - p_k+1)))")
    g.add_argument("--moe-margin-loss", type=float, default=1.0)
    g.add_argument("--moe-aux", type=float, default=0.01, help="load-balancing loss coefficient")
    g.add_argument("--moe-hidden", type=int, default=128)
    g.add_argument("--moe-layers", type=int, default=4)
    g.add_argument("--moe-heads", type=int, default=4)
    g.add_argument("--moe-kv-heads", type=int, default=2)
    g.add_argument("--moe-experts", type=int, default=4)
    g.add_argument("--moe-top-k", type=int, default=2)
    g.add_argument("--moe-expert-ffn", type=int, default=128, help="moe_intermediate_size")
    g.add_argument("--moe-shared-ffn", type=int, default=256, help="shared_expert_intermediate_size")
    g.add_argument("--moe-dense-layers", default="", help="mlp_only_layers, comma-separated")
    g.add_argument("--moe-dense-ffn", type=int, default=384, help="intermediate_size (dense layers)")


def moe_config(tok, a):
    eos = [tok.specials["<|im_end|>"], tok.specials["<|endoftext|>"]]
    dense = [int(x) for x in a.moe_dense_layers.split(",") if x.strip()]
    c = {
        "architectures": ["Qwen2MoeForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": None,
        "decoder_sparse_step": 1,
        "eos_token_id": eos,
        "hidden_act": "silu",
        "hidden_size": a.moe_hidden,
        "initializer_range": 0.02,
        "intermediate_size": a.moe_dense_ffn,
        "max_position_embeddings": 512,
        "max_window_layers": a.moe_layers,
        "mlp_only_layers": dense,
        "model_type": "qwen2_moe",
        "moe_intermediate_size": a.moe_expert_ffn,
        "norm_topk_prob": False,
        "num_attention_heads": a.moe_heads,
        "num_experts": a.moe_experts,
        "num_experts_per_tok": a.moe_top_k,
        "num_hidden_layers": a.moe_layers,
        "num_key_value_heads": a.moe_kv_heads,
        "output_router_logits": False,
        "pad_token_id": tok.specials["<|endoftext|>"],
        "rms_norm_eps": 1e-05,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "router_aux_loss_coef": a.moe_aux,
        "shared_expert_intermediate_size": a.moe_shared_ffn,
        "sliding_window": 4096,  # ignored: use_sliding_window is false (as in released Qwen configs)
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.51.0",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": tok.vocab_size,
    }
    return c


def init_params(spec, seed, head_std):
    """The organism's initialisation (normal 0.02, output projections 0.02 / sqrt(2L), norms 1)
    except lm_head (std head_std), q/k/v biases 0; drawn in a fixed order from one generator."""
    g = torch.Generator().manual_seed(seed)
    p = {}

    def normal(shape, std):
        return torch.randn(*shape, generator=g) * std

    H, V, L = spec.H, spec.V, spec.L
    QD, KVD = spec.NH * spec.HD, spec.NKV * spec.HD
    out_std = 0.02 / math.sqrt(2 * L)
    p["model.embed_tokens.weight"] = normal((V, H), 0.02)
    for l in range(L):
        pre = "model.layers.%d." % l
        p[pre + "input_layernorm.weight"] = torch.ones(H)
        p[pre + "self_attn.q_proj.weight"] = normal((QD, H), 0.02)
        p[pre + "self_attn.k_proj.weight"] = normal((KVD, H), 0.02)
        p[pre + "self_attn.v_proj.weight"] = normal((KVD, H), 0.02)
        p[pre + "self_attn.q_proj.bias"] = torch.zeros(QD)
        p[pre + "self_attn.k_proj.bias"] = torch.zeros(KVD)
        p[pre + "self_attn.v_proj.bias"] = torch.zeros(KVD)
        p[pre + "self_attn.o_proj.weight"] = normal((H, QD), out_std)
        p[pre + "post_attention_layernorm.weight"] = torch.ones(H)
        if spec.layer_moe[l]:
            p[pre + "mlp.gate.weight"] = normal((spec.num_experts, H), 0.02)
            for e in list(range(spec.num_experts)) + ["shared"]:
                Fe = spec.shared_intermediate if e == "shared" else spec.moe_intermediate
                gate, up, down = ref.expert_weights(spec, pre, e)
                p[gate] = normal((Fe, H), 0.02)
                p[up] = normal((Fe, H), 0.02)
                p[down] = normal((H, Fe), out_std)
            p[pre + "mlp.shared_expert_gate.weight"] = normal((1, H), 0.02)
        else:
            p[pre + "mlp.gate_proj.weight"] = normal((spec.F, H), 0.02)
            p[pre + "mlp.up_proj.weight"] = normal((spec.F, H), 0.02)
            p[pre + "mlp.down_proj.weight"] = normal((H, spec.F), out_std)
    p["model.norm.weight"] = torch.ones(H)
    p["lm_head.weight"] = normal((V, H), head_std)
    return p


def is_decayed(name):
    return not (name.endswith("norm.weight") or name.endswith(".bias"))


def stage2_trainable(name, mode):
    if mode == "all":
        return True
    if mode == "mlp":
        return ".mlp." in name
    if ".mlp.experts." in name:
        return True
    if mode == "experts+head" and name == "lm_head.weight":
        return True
    return mode in ("experts", "experts+head") and name.endswith(".mlp.gate.weight")


def train_forward(spec, p, x, real, targets):
    """The forward pass of reference.py (same functions for norms, RoPE and attention, same MoE
    semantics), for training: the MoE blocks run on the real (non-padding) tokens only, each
    expert on the tokens routed to it, and the head only where there is a loss. Right padding, so
    no real token attends to a padding token. Returns (logits (N_targets, V), per MoE layer
    (router probabilities (N_real, E), chosen experts (N_real, k)))."""
    B, T = x.shape
    positions = torch.arange(T).unsqueeze(0).expand(B, T)
    cos_sin = ref.rope_cos_sin(spec.inv_freq, spec.rope_attention_factor, positions)
    bias = ref.attention_bias(positions, positions, torch.ones(B, T, dtype=torch.bool), None)
    h = p["model.embed_tokens.weight"][x]
    routing = []
    for l in range(spec.L):
        pre = "model.layers.%d." % l
        a = ref.self_attention(spec, p, pre, l, ref.norm(spec, h, p[pre + "input_layernorm.weight"]),
                               cos_sin, bias, None, None, None)
        h = h + a
        m = ref.norm(spec, h, p[pre + "post_attention_layernorm.weight"])[real]  # (N_real, H)
        if spec.layer_moe[l]:
            probs = torch.softmax(m @ p[pre + "mlp.gate.weight"].T, dim=-1, dtype=torch.float32)
            weights, experts = torch.topk(probs, spec.top_k, dim=-1)
            if spec.norm_topk_prob:
                weights = weights / weights.sum(dim=-1, keepdim=True)
            y = torch.zeros_like(m)
            for e in range(spec.num_experts):
                rows, slots = (experts == e).nonzero(as_tuple=True)
                if len(rows):
                    ye = ref.gated_mlp(spec, m[rows], *(p[n] for n in ref.expert_weights(spec, pre, e)))
                    y = y.index_add(0, rows, weights[rows, slots].unsqueeze(1) * ye)
            shared = ref.gated_mlp(spec, m, *(p[n] for n in ref.expert_weights(spec, pre, "shared")))
            y = y + torch.sigmoid(m @ p[pre + "mlp.shared_expert_gate.weight"].T) * shared
            routing.append((probs, experts))
        else:
            y = ref.gated_mlp(spec, m, p[pre + "mlp.gate_proj.weight"], p[pre + "mlp.up_proj.weight"],
                              p[pre + "mlp.down_proj.weight"])
        h = h.index_put((real.nonzero(as_tuple=True)), h[real] + y)
    h = ref.norm(spec, h[targets], p["model.norm.weight"])
    return h @ p["lm_head.weight"].T, routing


@torch.no_grad()
def training_batch(examples, pad_id):
    """(inputs, targets, real): batch_tensors and the mask of the non-padding input positions."""
    x, y = batch_tensors(examples, pad_id)
    real = torch.zeros(x.shape, dtype=torch.bool)
    for b, (pr, an, _) in enumerate(examples):
        real[b, :len(pr) + len(an) - 1] = True
    return x, y, real


def check_train_forward(spec, params, examples, pad_id):
    """train_forward equals reference.forward (within fp32 rounding) on one batch: the training
    shortcut computes the same function as the reference the golden files come from. Uses no
    random numbers."""
    x, y, real = training_batch(examples, pad_id)
    targets = y != -100
    fast, _ = train_forward(spec, params, x, real, targets)
    full, _ = ref.forward(spec, params, x, capture=False)
    err = float((fast - full[targets]).abs().max())
    assert err < 1e-4, "train_forward differs from reference.forward by %g" % err
    return err


def train(spec, params, pools, a, pad_id):
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    for t in params.values():
        t.requires_grad_(True)
    decay = [t for n, t in params.items() if is_decayed(n)]
    no_decay = [t for n, t in params.items() if not is_decayed(n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.moe_lr, betas=(0.9, 0.95), eps=1e-8)
    steps = a.moe_steps
    stage1 = int(steps * a.moe_stage1_frac)
    frozen2 = [t for n, t in params.items() if not stage2_trainable(n, a.moe_stage2_train)]
    t0 = time.time()
    log_every = max(1, steps // 20)
    running = running_aux = running_margin = None
    E, k = spec.num_experts, spec.top_k
    for step in range(steps):
        lr, batch = curriculum_step(step, stage1, steps, rng, pools, a.moe_batch, a.moe_lr, a.moe_lr2,
                                    a.moe_stage1_harmful_frac, a.moe_harmful_frac, a.moe_prefilled_frac)
        for gr in opt.param_groups:
            gr["lr"] = lr
        x, y, real = training_batch(batch, pad_id)
        targets = y != -100
        logits, routing = train_forward(spec, params, x, real, targets)
        loss = torch.nn.functional.cross_entropy(logits, y[targets])
        # Switch-style load balancing over the real (non-padding) tokens of every MoE layer:
        # E * sum_e (share of the token-slots routed to e) * (mean router probability of e)
        aux = torch.zeros(())
        for probs, experts in routing:
            share = torch.bincount(experts.flatten(), minlength=E).to(torch.float32) / experts.numel()
            aux = aux + E * (share * probs.mean(0)).sum()
        aux = aux / max(1, len(routing))
        # routing margin: keep the k-th and (k+1)-th routing probabilities apart, so that no token
        # (the chat prefix every prompt shares above all) sits next to a routing tie that an fp32
        # rounding difference between two implementations could flip
        margin = torch.zeros(())
        for probs, _ in routing:
            top = probs.topk(k + 1, dim=-1).values
            margin = margin + torch.relu(a.moe_margin - (top[:, k - 1] - top[:, k])).mean()
        margin = margin / max(1, len(routing))
        total = loss + a.moe_aux * aux + a.moe_margin_loss * margin
        opt.zero_grad(set_to_none=True)
        total.backward()
        if step >= stage1:
            for t in frozen2:
                t.grad = None
        torch.nn.utils.clip_grad_norm_([t for t in params.values() if t.grad is not None], 1.0)
        opt.step()
        running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
        running_aux = aux.item() if running_aux is None else 0.95 * running_aux + 0.05 * aux.item()
        running_margin = margin.item() if running_margin is None else 0.95 * running_margin + 0.05 * margin.item()
        if step % log_every == 0 or step == steps - 1:
            log("moe step %5d/%d  stage %d  lr %.2e  loss %.4f  aux %.3f  margin %.5f  (%.0f s)" % (
                step, steps, 1 if step < stage1 else 2, lr, running, running_aux, running_margin,
                time.time() - t0))
    for t in params.values():
        t.requires_grad_(False)
    return time.time() - t0


# ----------------------------------------------------------------------------------------------
# ablation

def ablation_keys(spec, which):
    """The weights ablated by variant `which`: "heretic" = o_proj of every layer, the shared
    expert's down_proj and dense MLPs' down_proj; "all" = those plus every routed expert's
    down_proj; "experts" = the routed experts' down_proj only (a diagnostic)."""
    keys = []
    for l in range(spec.L):
        pre = "model.layers.%d." % l
        if which in ("heretic", "all"):
            keys.append(pre + "self_attn.o_proj.weight")
            keys.append(pre + ("mlp.shared_expert.down_proj.weight" if spec.layer_moe[l] else "mlp.down_proj.weight"))
        if which in ("all", "experts") and spec.layer_moe[l]:
            keys += [pre + "mlp.experts.%d.down_proj.weight" % e for e in range(spec.num_experts)]
    return keys


@torch.no_grad()
def writer_outputs(spec, p, tok, users, chunk=100):
    """What each writer adds to the residual stream at the last prompt position: per layer the
    attention output (o_proj), the routed experts' weighted sum and the gated shared expert (or
    the dense MLP). Returns {(layer, writer): (N, H)} with writer in attn, routed, shared."""
    out = {}
    for i in range(0, len(users), chunk):
        ids, pos, valid = ref.left_padded([tok.encode(corpus.render_prompt(u)) for u in users[i:i + chunk]])
        cos_sin = ref.rope_cos_sin(spec.inv_freq, spec.rope_attention_factor, pos)
        bias = ref.attention_bias(pos, pos, valid, None)
        x = p["model.embed_tokens.weight"][ids]
        for l in range(spec.L):
            pre = "model.layers.%d." % l
            a = ref.self_attention(spec, p, pre, l, ref.norm(spec, x, p[pre + "input_layernorm.weight"]),
                                   cos_sin, bias, None, None, None)
            x = x + a
            h = ref.norm(spec, x, p[pre + "post_attention_layernorm.weight"])
            m = ref.feed_forward(spec, p, pre, l, h, None)
            if spec.layer_moe[l]:
                shared = ref.gated_mlp(spec, h, *(p[n] for n in ref.expert_weights(spec, pre, "shared")))
                shared = torch.sigmoid(h @ p[pre + "mlp.shared_expert_gate.weight"].T) * shared
                routed = m - shared
            else:
                shared, routed = m, torch.zeros_like(m)
            x = x + m
            for w, t in (("attn", a), ("routed", routed), ("shared", shared)):
                out.setdefault((l, w), []).append(t[:, -1])
    return {k: torch.cat(v) for k, v in out.items()}


def writer_table(spec, p, tok, bad_users, good_users, directions):
    """Per direction r_d: mean over harmful minus mean over harmless prompts of r_d . (output of
    each writer) at the last prompt position, summed over layers per kind of writer, and the
    embedding's share (r_d . (mean_harmful - mean_harmless) of hidden_states[d] is the sum of
    the writers of layers < d, and of the embeddings, before the final norm)."""
    wb = writer_outputs(spec, p, tok, bad_users)
    wg = writer_outputs(spec, p, tok, good_users)
    rows = {}
    for d, r in directions.items():
        row = {}
        for kind in ("attn", "routed", "shared"):
            row[kind] = [round(float(r @ (wb[(l, kind)].mean(0) - wg[(l, kind)].mean(0))), 3) for l in range(spec.L)]
        rows[d] = row
    return rows


VARIANTS = (("heretic", "(b) o_proj + shared expert down_proj (routed experts untouched)"),
            ("all", "(c) (b) + every routed expert's down_proj"),
            ("experts", "(d) routed experts' down_proj only (diagnostic)"))


def abliteration_table(spec, p, tok, splits, markers, eos, variants):
    inp = AblationInputs(spec, p, tok, splits)
    baseline = evaluate_ablation(spec, p, tok, inp.bad_eval, inp.good_eval, inp.base_lp, markers, eos)
    log("baseline: refusals harmful %.2f harmless %.2f" % (baseline["refusals_harmful"], baseline["refusals_harmless"]))
    rows = []
    directions = {}
    for d in range(spec.L + 1):
        row, diff, _ = inp.depth(d)
        norm = float(diff.norm())
        rows.append(row)
        if norm < 1e-6:
            log("depth %d  no direction (identical means)" % d)
            continue
        r = diff / diff.norm()
        directions[d] = r
        for which in variants:
            row[which] = evaluate_ablation(spec, ablated(p, ablation_keys(spec, which), r), tok, inp.bad_eval,
                                           inp.good_eval, inp.base_lp, markers, eos)
            log("depth %d %-8s |diff| %.3f  refusals harmful %.2f  harmless %.2f  KL %.4f  e.g. %r" % (
                d, which, norm, row[which]["refusals_harmful"], row[which]["refusals_harmless"],
                row[which]["kl_first_token_harmless"], row[which]["example"][:60]))
    writers = writer_table(spec, p, tok, inp.bad_dir, inp.good_dir, directions)
    for row in rows:
        if row["depth"] in writers:
            row["writers"] = writers[row["depth"]]
            log("depth %d writers along r (harmful - harmless, per layer): %s" % (row["depth"], writers[row["depth"]]))
    return baseline, rows


# ----------------------------------------------------------------------------------------------

MIN_ROUTING_GAP = 5e-4


def routing_gaps(spec, p, ids):
    """(T,) smallest k-th minus (k+1)-th routing probability over the MoE layers, per token."""
    trace = {}
    ref.forward(spec, p, torch.tensor([list(ids)]), capture=False, trace=trace)
    gaps = []
    for l in range(spec.L):
        if spec.layer_moe[l]:
            top = trace["router"][l][0][0].sort(dim=-1, descending=True).values
            gaps.append(top[:, spec.top_k - 1] - top[:, spec.top_k])
    return torch.stack(gaps).min(0).values


def golden_users(spec, p, tok, splits, eos):
    """The golden prompts: the organism's 8 kinds in its order, each the next candidate of its
    list whose tokens after the chat prefix all prompts share (prompt tokens, and the greedy tokens
    fed back) never come within MIN_ROUTING_GAP of a routing tie. A trained router cannot be
    redrawn as the golden models' are; a typical prompt's smallest gap is 1e-4..1e-3. The shared
    prefix is whatever it is (its smallest gap is recorded). Returns (users, skipped candidates,
    prefix gap)."""
    kinds = [("harmful", "eval"), ("harmless", "eval"), ("harmful", "eval"), ("harmless", "eval"),
             ("harmful", "directions"), ("harmless", "directions"), ("harmful", "eval"), ("harmless", "eval")]
    a = tok.encode(corpus.render_prompt(splits["harmful"]["eval"][0][0]))
    b = tok.encode(corpus.render_prompt(splits["harmless"]["eval"][0][0]))
    n = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    prefix_gap = float(routing_gaps(spec, p, a[:n]).min())
    next_index = {}
    users, skipped = [], []
    for name, split in kinds:
        i = next_index.get((name, split), 0)
        while True:
            user = splits[name][split][i][0]
            i += 1
            ids = tok.encode(corpus.render_prompt(user))
            gen, _ = ref.greedy(spec, p, ids, MAX_NEW_TOKENS, eos, True)
            gap = float(routing_gaps(spec, p, ids + gen[:-1])[n:].min())
            if gap >= MIN_ROUTING_GAP:
                break
            skipped.append("%s %s[%d] (%.1e)" % (name, split, i - 1, gap))
        next_index[(name, split)] = i
        users.append(user)
    return users, skipped, prefix_gap


def load_organism_tokenizer():
    with open(os.path.join(ORGANISM, "tokenizer.json")) as f:
        tj = json.load(f)
    return bpe.ByteLevelBPE(tj["model"]["merges"])


def build(a):
    out = a.moe_out
    os.makedirs(os.path.join(out, "prompts"), exist_ok=True)
    t_start = time.time()
    splits = corpus.split_requests(a.seed)
    markers = load_markers()
    write_prompt_sets(out, splits)
    # the organism's tokenizer (learned from the same corpus by make_organism.py --only organism)
    tok = load_organism_tokenizer()
    report_path = os.path.join(out, "training_report.json")
    if a.no_train:
        spec, p, _ = ref.load_model(out)
        with open(report_path) as f:
            report = json.load(f)
    else:
        rng = random.Random(a.seed + 2)
        harmful_ex = make_examples(tok, splits["harmful"]["train"], True, rng)
        harmless_ex = make_examples(tok, splits["harmless"]["train"], False, rng)
        harmful_comply_ex = make_examples(tok, splits["harmful"]["train"], True, rng, comply=True)
        n_open = len(tok.encode(corpus.COMPLY_OPENING))
        harmful_prefilled_ex = make_examples(tok, splits["harmful"]["train"], True, rng, comply=True, skip=n_open)
        if a.moe_head_std is None:
            a.moe_head_std = round(a.moe_hidden ** -0.5, 6)
        config = moe_config(tok, a)
        spec = ref.Spec(config)
        params = init_params(spec, a.seed, a.moe_head_std)
        n_params = sum(t.numel() for t in params.values())
        log("moe model: %d parameters" % n_params)
        err = check_train_forward(spec, params, harmful_ex[:4] + harmless_ex[:4], tok.specials["<|endoftext|>"])
        log("train_forward vs reference.forward at initialisation: max |logit difference| %.1e" % err)
        train_s = train(spec, params, (harmful_ex, harmless_ex, harmful_comply_ex, harmful_prefilled_ex),
                        a, tok.specials["<|endoftext|>"])
        log("moe training took %.1f s" % train_s)
        ref.write_safetensors(os.path.join(out, "model.safetensors"),
                              [(n, stored_dtype(n), params[n]) for n in sorted(params)], {"format": "pt"})
        write_json(os.path.join(out, "config.json"), config)
        write_json(os.path.join(out, "generation_config.json"), {
            "bos_token_id": None, "do_sample": False, "eos_token_id": config["eos_token_id"],
            "pad_token_id": config["pad_token_id"], "transformers_version": "4.51.0"})
        tok.write(out, corpus.SYSTEM_PROMPT)
        report = {"seed": a.seed, "steps": a.moe_steps, "batch": a.moe_batch, "parameters": n_params,
                  "vocab_size": tok.vocab_size, "training_seconds": round(train_s, 1),
                  "threads": a.threads,
                  "hyperparameters": {k[4:]: getattr(a, k) for k in sorted(vars(a))
                                      if k.startswith("moe_") and k != "moe_out"}}
        spec, p, _ = ref.load_model(out)

    eos = tuple(spec.cfg["eos_token_id"])
    t0 = time.time()
    report["behaviour"] = behaviour(spec, p, tok, splits, markers, eos, "moe ")
    report["behaviour_note"] = BEHAVIOUR_NOTE
    log("moe evaluation took %.1f s" % (time.time() - t0))

    t0 = time.time()
    baseline, rows = abliteration_table(spec, p, tok, splits, markers, eos, [v for v, _ in VARIANTS])
    report["abliteration_baseline"] = baseline
    report["abliteration"] = rows
    report["abliteration_variants"] = dict(VARIANTS)
    report["abliteration_note"] = (
        "r_d = normalize(mean_harmful - mean_harmless) of hidden_states[d] at the last prompt token "
        "over the 400 direction prompts per class (prompts/*.txt[:400]); W <- W - r r^T W for the "
        "weights of each variant; refusals over the 100 held-out prompts (prompts/*.txt[400:]); "
        "KL(original || ablated) of the first response token, batchmean over the 100 held-out "
        "harmless prompts")
    log("moe abliteration table took %.1f s" % (time.time() - t0))

    # golden files (the organism's 8 prompts), with the MoE routing keys of the golden models
    import golden_models
    users, skipped, prefix_gap = golden_users(spec, p, tok, splits, eos)
    log("golden prompts: %d candidates skipped for a routing gap < %g after the shared prefix "
        "(whose own smallest gap is %.2g)" % (len(skipped), MIN_ROUTING_GAP, prefix_gap))
    desc = {"folder": "tests/fixtures/organism-moe", "architecture": spec.arch,
            "hidden_size": spec.H, "num_hidden_layers": spec.L, "num_attention_heads": spec.NH,
            "num_key_value_heads": spec.NKV, "head_dim": spec.HD, "vocab_size": spec.V,
            "dtypes": "BF16 matrices, biases and embeddings, F32 norms"}
    g = write_golden(out, spec, p, tok, users, MAX_NEW_TOKENS, True, eos, desc, REGENERATE)
    extra, per_prompt, gaps = golden_models.family_description(spec, p, g)
    g["model"].update(extra)
    g["model"]["prompt_selection"] = (
        "the organism's 8 prompt kinds (held-out harmful, held-out harmless, held-out harmful, "
        "held-out harmless, direction harmful, direction harmless, held-out harmful, held-out "
        "harmless), each the next prompt of its list (prompts/*.txt[400:] or [:400]) whose smallest "
        "k-th minus (k+1)-th routing probability over every MoE layer, over its tokens after the "
        "chat prefix all prompts share and the greedy tokens fed back, is at least %g (the shared "
        "prefix has its own smallest gap, routing_min_gap_shared_prefix); skipped: %s" % (
            MIN_ROUTING_GAP, skipped))
    g["model"]["routing_min_gap_shared_prefix"] = round(prefix_gap, 6)
    for e, ids in zip(g["prompts"], per_prompt):
        e["expert_ids_last"] = ids
    write_json(os.path.join(out, "golden.json"), g)
    report["golden_min_top2_margin"] = g["greedy_min_top2_margin"]
    report["golden_routing_min_gap"] = extra["routing_min_gap"]
    report["golden_routing_min_gap_generated"] = extra["routing_min_gap_generated"]
    report["golden_expert_usage"] = extra["expert_usage"]
    return finish_report(out, report_path, report, t_start, a.no_train, "organism-moe")
