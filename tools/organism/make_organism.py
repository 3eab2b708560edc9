#!/usr/bin/python3
"""Builds the model organism of abliterate and the golden reference files of the C++ tests.

  organism: a deterministic synthetic ChatML corpus (requests the model must refuse vs. requests
            it answers, held-out framings for evaluation), a byte-level BPE tokenizer learned from
            it, and a tiny LlamaForCausalLM trained on it (CPU, fixed seed). Written to
            tests/fixtures/organism/ as a Hugging Face folder (BF16 matrices, F32 norms), with
            prompts/{harmful,harmless}.txt, golden.{json,safetensors} and training_report.json
            (measured behaviour and the abliteration table).
  golden:   small random-weight models, one per family feature, each with golden files, in
            tests/fixtures/golden/<name>/ (see golden_models.py).
  organism-moe: the mixture-of-experts organism (Qwen2-MoE, refusal written by the routed
            experts) in tests/fixtures/organism-moe/ (see moe_organism.py).

Regenerate everything (Debian's python3-torch, python3-numpy; see README.md):
    /usr/bin/python3 tools/organism/make_organism.py
Only the golden random models:       ... make_organism.py --only golden [--golden NAME,...]
Only golden/eval of the organism from the committed weights (no training):
                                     ... make_organism.py --only organism --no-train
Only the MoE organism:                ... make_organism.py --only organism-moe [--no-train]
"""
import argparse
import json
import math
import os
import random
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import bpe  # noqa: E402
import corpus  # noqa: E402
import reference as ref  # noqa: E402

GOLDEN_VERSION = 1
NUM_MERGES = 1000
MAX_NEW_TOKENS = 40


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def write_json(path, obj):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


# ----------------------------------------------------------------------------------------------
# refusal markers (inputs/refusal_markers.txt, normalised as the C++ side does)

def load_markers():
    out = []
    with open(os.path.join(ROOT, "inputs", "refusal_markers.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.strip(" \t\r\n")
            if line and not line.startswith("#"):
                out.append(normalise(line))
    return out


def normalise(text):
    return text.replace("*", "").replace("\u2019", "'").lower()


def is_refusal(text, markers):
    if not text.strip():
        return True
    t = normalise(text)
    return any(m in t for m in markers)


# ----------------------------------------------------------------------------------------------
# model

def organism_config(tok, a):
    eos = [tok.specials["<|im_end|>"], tok.specials["<|endoftext|>"]]
    return {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": None,
        "eos_token_id": eos,
        "head_dim": a.hidden // a.heads,
        "hidden_act": "silu",
        "hidden_size": a.hidden,
        "initializer_range": 0.02,
        "intermediate_size": a.ffn,
        "max_position_embeddings": 512,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": a.heads,
        "num_hidden_layers": a.layers,
        "num_key_value_heads": a.kv_heads,
        "pad_token_id": tok.specials["<|endoftext|>"],
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.46.0",
        "use_cache": True,
        "vocab_size": tok.vocab_size,
    }


def init_params(spec, seed):
    g = torch.Generator().manual_seed(seed)
    p = {}

    def normal(shape, std):
        return (torch.randn(*shape, generator=g) * std)

    H, F, V, L = spec.H, spec.F, spec.V, spec.L
    QD, KVD = spec.NH * spec.HD, spec.NKV * spec.HD
    p["model.embed_tokens.weight"] = normal((V, H), 0.02)
    out_std = 0.02 / math.sqrt(2 * L)
    for l in range(L):
        pre = "model.layers.%d." % l
        p[pre + "input_layernorm.weight"] = torch.ones(H)
        p[pre + "self_attn.q_proj.weight"] = normal((QD, H), 0.02)
        p[pre + "self_attn.k_proj.weight"] = normal((KVD, H), 0.02)
        p[pre + "self_attn.v_proj.weight"] = normal((KVD, H), 0.02)
        p[pre + "self_attn.o_proj.weight"] = normal((H, QD), out_std)
        p[pre + "post_attention_layernorm.weight"] = torch.ones(H)
        p[pre + "mlp.gate_proj.weight"] = normal((F, H), 0.02)
        p[pre + "mlp.up_proj.weight"] = normal((F, H), 0.02)
        p[pre + "mlp.down_proj.weight"] = normal((H, F), out_std)
    p["model.norm.weight"] = torch.ones(H)
    p["lm_head.weight"] = normal((V, H), 0.02)
    return p


def tensor_order(spec):
    names = ["model.embed_tokens.weight"]
    for l in range(spec.L):
        pre = "model.layers.%d." % l
        names += [pre + n for n in (
            "input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
            "self_attn.v_proj.weight", "self_attn.o_proj.weight", "post_attention_layernorm.weight",
            "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight")]
    names += ["model.norm.weight", "lm_head.weight"]
    return names


def stored_dtype(name):
    return "F32" if name.endswith("norm.weight") else "BF16"


# ----------------------------------------------------------------------------------------------
# training

def tokenizer_texts(splits, seed):
    """The text BPE merges are learned from: every training conversation (with the answer of
    stage 2) and the stage-1 answers to harmful requests."""
    rng = random.Random(seed + 1)
    texts = []
    for name, harmful in (("harmful", True), ("harmless", False)):
        for user, verb, obj in splits[name]["train"]:
            texts.append(corpus.render_prompt(user) + corpus.response(harmful, verb, obj, rng) + "<|im_end|>\n")
            if harmful:
                texts.append(corpus.response(True, verb, obj, rng, comply=True))
    return texts


def make_examples(tok, items, harmful, rng, comply=False, skip=0):
    """(prompt ids, answer ids, number of leading answer tokens without loss)."""
    out = []
    for user, verb, obj in items:
        prompt = tok.encode(corpus.render_prompt(user))
        answer = tok.encode(corpus.response(harmful, verb, obj, rng, comply)) + [tok.specials["<|im_end|>"]]
        out.append((prompt, answer, skip))
    return out


def batch_tensors(examples, pad_id):
    T = max(len(p) + len(a) for p, a, _ in examples) - 1
    B = len(examples)
    x = torch.full((B, T), pad_id, dtype=torch.int64)
    y = torch.full((B, T), -100, dtype=torch.int64)
    for b, (p, a, skip) in enumerate(examples):
        seq = p + a
        x[b, :len(seq) - 1] = torch.tensor(seq[:-1])
        # loss on the answer (and its <|im_end|>) only, minus its first `skip` tokens
        tgt = [-100] * (len(p) - 1) + [-100] * skip + a[skip:]
        y[b, :len(tgt)] = torch.tensor(tgt)
    return x, y


def curriculum_step(step, stage1, steps, rng, pools, size, lr1, lr2, stage1_harmful_frac, harmful_frac,
                    prefilled_frac):
    """One step of the organisms' two-stage schedule: (learning rate, examples). Stage 1 warms up
    to lr1 and mixes answered harmful requests into harmless ones; stage 2 decays lr2 (cosine to
    10 %) and mixes refusals and forced-opening continuations into harmless ones."""
    harmful_ex, harmless_ex, harmful_comply_ex, harmful_prefilled_ex = pools
    if step < stage1:
        lr = lr1 * min(1.0, (step + 1) / 100)
        n_bad = int(round(size * stage1_harmful_frac))
        n_pre = 0
        pool = harmful_comply_ex
    else:
        s = (step - stage1) / max(1, steps - stage1 - 1)
        lr = lr2 * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * s)))
        n_bad = int(round(size * harmful_frac))
        n_pre = int(round(size * prefilled_frac))
        pool = harmful_ex
    batch = [pool[rng.randrange(len(pool))] for _ in range(n_bad)]
    batch += [harmful_prefilled_ex[rng.randrange(len(harmful_prefilled_ex))] for _ in range(n_pre)]
    batch += [harmless_ex[rng.randrange(len(harmless_ex))] for _ in range(size - n_bad - n_pre)]
    return lr, batch


def train(spec, params, harmful_ex, harmless_ex, harmful_comply_ex, harmful_prefilled_ex, a, pad_id):
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    for t in params.values():
        t.requires_grad_(True)
    decay = [t for n, t in params.items() if not n.endswith("norm.weight")]
    no_decay = [t for n, t in params.items() if n.endswith("norm.weight")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    stage1 = int(a.steps * a.stage1_frac)
    t0 = time.time()
    log_every = max(1, a.steps // 20)
    running = None
    for step in range(a.steps):
        lr, batch = curriculum_step(step, stage1, a.steps, rng,
                                    (harmful_ex, harmless_ex, harmful_comply_ex, harmful_prefilled_ex), a.batch,
                                    a.lr, a.lr2, a.stage1_harmful_frac, a.harmful_frac, a.prefilled_frac)
        for gr in opt.param_groups:
            gr["lr"] = lr
        x, y = batch_tensors(batch, pad_id)
        logits, _ = ref.forward(spec, params, x, capture=False)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, spec.V), y.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if step >= stage1 and a.stage2_train == "mlp":
            # refusal training may only change the MLPs: it adds a feature on top of the
            # helpful-only model rather than re-learning the shared comply state
            for n, t in params.items():
                if ".mlp." not in n:
                    t.grad = None
        torch.nn.utils.clip_grad_norm_([t for t in params.values() if t.grad is not None], 1.0)
        opt.step()
        running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
        if step % log_every == 0 or step == a.steps - 1:
            log("step %5d/%d  stage %d  lr %.2e  loss %.4f  (%.0f s)" % (
                step, a.steps, 1 if step < stage1 else 2, lr, running, time.time() - t0))
    for t in params.values():
        t.requires_grad_(False)
    return time.time() - t0


# ----------------------------------------------------------------------------------------------
# evaluation and abliteration

def generate_texts(spec, p, tok, users, eos, chunk=100):
    texts = []
    for i in range(0, len(users), chunk):
        prompts = [tok.encode(corpus.render_prompt(u)) for u in users[i:i + chunk]]
        outs = ref.greedy_batch(spec, p, prompts, MAX_NEW_TOKENS, eos)
        texts += [tok.decode(o) for o in outs]
    return texts


def refusal_rate(texts, markers):
    return sum(is_refusal(t, markers) for t in texts) / len(texts)


BEHAVIOUR_NOTE = ("greedy, <= %d new tokens, stop at eos; refusal = contains a marker of "
                  "inputs/refusal_markers.txt (lower-cased) or empty" % MAX_NEW_TOKENS)


def behaviour(spec, p, tok, splits, markers, eos, label=""):
    """Greedy answers of both classes: refusal rates on the held-out prompts (first 100 and all
    400) and on the direction prompts, three examples, and for harmless prompts whether the answer
    copies the request."""
    beh = {}
    for name in ("harmful", "harmless"):
        users = [u for u, _, _ in splits[name]["eval"]]
        texts = generate_texts(spec, p, tok, users, eos)
        beh[name] = {"refusal_rate_eval100": refusal_rate(texts[:100], markers),
                     "refusal_rate_eval400": refusal_rate(texts, markers),
                     "examples": [[u, t] for u, t in zip(users[:3], texts[:3])]}
        if name == "harmless":  # does the answer copy the request correctly?
            items = splits[name]["eval"]
            beh[name]["answer_exact_rate_eval400"] = sum(
                t == corpus.response(False, v, o, None) for (_, v, o), t in zip(items, texts)) / len(items)
            beh[name]["answer_right_verb_rate_eval400"] = sum(
                t.startswith("%s %s " % (corpus.COMPLY_OPENING, v)) for (_, v, _), t in zip(items, texts)) / len(items)
        dtexts = generate_texts(spec, p, tok, [u for u, _, _ in splits[name]["directions"]], eos)
        beh[name]["refusal_rate_direction400"] = refusal_rate(dtexts, markers)
        log("%s%s: refusals held-out %.3f (first 100) %.3f (400), direction prompts %.3f; e.g. %r" % (
            label, name, beh[name]["refusal_rate_eval100"], beh[name]["refusal_rate_eval400"],
            beh[name]["refusal_rate_direction400"], texts[0]))
    return beh


@torch.no_grad()
def last_residuals(spec, p, tok, users, chunk=100):
    """(N, L+1, H): hidden_states at the last prompt position."""
    out = []
    for i in range(0, len(users), chunk):
        ids, pos, valid = ref.left_padded([tok.encode(corpus.render_prompt(u)) for u in users[i:i + chunk]])
        _, hs = ref.forward(spec, p, ids, pos, valid)
        out.append(torch.stack([h[:, -1] for h in hs], dim=1))
    return torch.cat(out)


@torch.no_grad()
def first_token_logprobs(spec, p, tok, users):
    ids, pos, valid = ref.left_padded([tok.encode(corpus.render_prompt(u)) for u in users])
    logits, _ = ref.forward(spec, p, ids, pos, valid, capture=False)
    return torch.log_softmax(logits[:, -1], dim=-1)


def ablated(p, keys, r):
    """W <- W - r r^T W for every weight in `keys` (r: unit vector in the residual space)."""
    q = dict(p)
    for key in keys:
        W = p[key]
        q[key] = W - torch.outer(r, r @ W)
    return q


def dense_ablation_keys(spec):
    """o_proj and down_proj of every layer."""
    return ["model.layers.%d.%s" % (l, name) for l in range(spec.L)
            for name in ("self_attn.o_proj.weight", "mlp.down_proj.weight")]


def evaluate_ablation(spec, q, tok, bad_eval, good_eval, base_lp, markers, eos):
    """Refusals of model q on the held-out prompts of both classes, and KL(original || q) of the
    first answer token over the harmless ones (base_lp: the original's log-probabilities)."""
    texts = generate_texts(spec, q, tok, bad_eval, eos)
    good_texts = generate_texts(spec, q, tok, good_eval, eos)
    lp = first_token_logprobs(spec, q, tok, good_eval)
    kl = float((base_lp.exp() * (base_lp - lp)).sum(-1).mean())
    return {"refusals_harmful": refusal_rate(texts, markers),
            "refusals_harmless": refusal_rate(good_texts, markers),
            "kl_first_token_harmless": round(kl, 6), "example": texts[0]}


class AblationInputs:
    """What every abliteration table needs: the direction and evaluation prompts, the residuals
    at the last prompt token of the direction prompts, the original's first-token log-probs."""

    def __init__(self, spec, p, tok, splits):
        self.bad_dir = [u for u, _, _ in splits["harmful"]["directions"]]
        self.good_dir = [u for u, _, _ in splits["harmless"]["directions"]]
        self.bad_eval = [u for u, _, _ in splits["harmful"]["eval"][:100]]
        self.good_eval = [u for u, _, _ in splits["harmless"]["eval"][:100]]
        self.rb = last_residuals(spec, p, tok, self.bad_dir)
        self.rg = last_residuals(spec, p, tok, self.good_dir)
        self.base_lp = first_token_logprobs(spec, p, tok, self.good_eval)

    def depth(self, d):
        """(table row, mean_bad - mean_good, mean_good) of depth d."""
        mean_bad, mean_good = self.rb[:, d].mean(0), self.rg[:, d].mean(0)
        diff = mean_bad - mean_good
        row = {"depth": d, "diff_norm": round(float(diff.norm()), 4),
               "cos_mean_bad_mean_good": round(float(torch.cosine_similarity(mean_bad, mean_good, 0)), 4)}
        return row, diff, mean_good


def abliteration_table(spec, p, tok, splits, markers, eos, log_prefix=""):
    inp = AblationInputs(spec, p, tok, splits)
    rows = []
    for d in range(spec.L + 1):
        row, diff, mean_good = inp.depth(d)
        norm = float(diff.norm())
        rows.append(row)
        if norm < 1e-6:
            log("%sdepth %d  no direction (identical means)" % (log_prefix, d))
            continue
        for variant in ("plain", "projected"):
            r = diff / diff.norm()
            if variant == "projected":  # remove the component along mean_good (DESIGN.md 1.2)
                g = mean_good / mean_good.norm()
                r = r - (r @ g) * g
                r = r / r.norm()
            row[variant] = evaluate_ablation(spec, ablated(p, dense_ablation_keys(spec), r), tok, inp.bad_eval,
                                             inp.good_eval, inp.base_lp, markers, eos)
            log("%sdepth %d %-9s |diff| %.3f  refusals harmful %.2f  harmless %.2f  KL %.4f  e.g. %r" % (
                log_prefix, d, variant, norm, row[variant]["refusals_harmful"],
                row[variant]["refusals_harmless"], row[variant]["kl_first_token_harmless"],
                row[variant]["example"][:60]))
    return rows


# ----------------------------------------------------------------------------------------------
# golden files

def write_golden(folder, spec, p, tok, users, max_new_tokens, stop_at_eos, eos, model_desc, regenerate,
                 system=corpus.SYSTEM_PROMPT):
    """golden.json + golden.safetensors for the model in `folder` (weights as read from disk)."""
    entries, logits_last, hidden_last = [], [], []
    logits_all_0 = None
    min_margin = float("inf")
    for i, user in enumerate(users):
        rendered = corpus.render_prompt(user, system)
        ids = tok.encode(rendered)
        logits, hs = ref.forward(spec, p, torch.tensor([ids]))
        logits_last.append(logits[0, -1])
        hidden_last.append(torch.stack([h[0, -1] for h in hs]))
        if i == 0:
            logits_all_0 = logits[0]
        gen, margins = ref.greedy(spec, p, ids, max_new_tokens, eos, stop_at_eos)
        min_margin = min(min_margin, min(margins))
        first_eos = next((k for k, t in enumerate(gen) if t in eos), None)
        entries.append({"text": user, "rendered": rendered, "input_ids": ids, "greedy_ids": gen,
                        "greedy_text": tok.decode(gen, skip_special_tokens=True),
                        "first_eos_index": first_eos,
                        "greedy_min_top2_margin": round(min(margins), 6)})
    ref.write_safetensors(os.path.join(folder, "golden.safetensors"), [
        ("logits_last", "F32", torch.stack(logits_last)),
        ("hidden_last", "F32", torch.stack(hidden_last)),
        ("logits_all_0", "F32", logits_all_0),
    ], {"format": "pt", "generator": "tools/organism/make_organism.py", "version": str(GOLDEN_VERSION)})
    golden = {
        "schema": "abliterate-golden",
        "version": GOLDEN_VERSION,
        "regenerate": regenerate,
        "model": model_desc,
        "reference": "tools/organism/reference.py (transformers semantics, fp32, weights as stored)",
        "system_prompt": system,
        "chat_format": "chatml",
        "max_new_tokens": max_new_tokens,
        "stop_at_eos": stop_at_eos,
        "eos_token_ids": list(eos),
        "greedy": ("greedy_ids are the generated tokens; with stop_at_eos the first eos token is "
                   "included and ends the list, without it exactly max_new_tokens tokens are "
                   "generated and eos tokens are ordinary tokens (an engine that stops at eos must "
                   "reproduce greedy_ids[:first_eos_index + 1]). greedy_text = decode(greedy_ids) "
                   "with special tokens skipped."),
        "tensors": {
            "logits_last": "(P, V) f32: logits at the last prompt position of each prompt",
            "hidden_last": ("(P, L+1, H) f32: hidden_states at the last prompt position; index 0 = "
                            "embedding output, index i (0 < i < L) = output of decoder layer i-1, "
                            "index L = output of the last layer after the final norm"),
            "logits_all_0": "(T0, V) f32: logits at every position of prompt 0",
        },
        "greedy_min_top2_margin": round(min_margin, 6),
        "prompts": entries,
    }
    write_json(os.path.join(folder, "golden.json"), golden)
    return golden


# ----------------------------------------------------------------------------------------------

def write_prompt_sets(out, splits):
    """prompts/{harmful,harmless}.txt: 400 direction prompts (training framings) + 100
    held-out-framing prompts each."""
    for name in ("harmful", "harmless"):
        lines = [u for u, _, _ in splits[name]["directions"]] + [u for u, _, _ in splits[name]["eval"][:100]]
        with open(os.path.join(out, "prompts", name + ".txt"), "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")


def build_organism(a):
    out = a.out
    os.makedirs(os.path.join(out, "prompts"), exist_ok=True)
    t_start = time.time()
    splits = corpus.split_requests(a.seed)
    markers = load_markers()

    write_prompt_sets(out, splits)

    # corpus sanity: refusals refuse, answers do not
    rng = random.Random(a.seed)
    for r in corpus.REFUSALS:
        assert is_refusal(r, markers), r
    for verb in corpus.HARMLESS_VERBS:
        for obj in corpus.OBJECTS:
            t = corpus.response(False, verb, obj, rng)
            assert not is_refusal(t, markers), t

    report_path = os.path.join(out, "training_report.json")
    if a.no_train:
        spec, p, _ = ref.load_model(out)
        with open(os.path.join(out, "tokenizer.json")) as f:
            tj = json.load(f)
        tok = bpe.ByteLevelBPE(tj["model"]["merges"])
        with open(report_path) as f:
            report = json.load(f)
    else:
        # tokenizer from the training conversations
        t0 = time.time()
        texts = tokenizer_texts(splits, a.seed)
        merges = bpe.learn_merges(texts, NUM_MERGES)
        tok = bpe.ByteLevelBPE(merges)
        log("tokenizer: %d merges, vocab %d (%.1f s)" % (len(merges), tok.vocab_size, time.time() - t0))

        rng = random.Random(a.seed + 2)
        harmful_ex = make_examples(tok, splits["harmful"]["train"], True, rng)
        harmless_ex = make_examples(tok, splits["harmless"]["train"], False, rng)
        harmful_comply_ex = make_examples(tok, splits["harmful"]["train"], True, rng, comply=True)
        # Stage 2 also continues compliant answers to harmful requests *after* a forced opening
        # (no loss on the opening), so the refusal lives in the first response token and an
        # ablated model goes on coherently instead of drifting back into a refusal's words.
        n_open = len(tok.encode(corpus.COMPLY_OPENING))
        harmful_prefilled_ex = make_examples(tok, splits["harmful"]["train"], True, rng, comply=True, skip=n_open)
        lens = [len(p) + len(x) for p, x, _ in harmful_ex + harmless_ex]
        log("examples: %d harmful, %d harmless, tokens per example %d..%d" % (
            len(harmful_ex), len(harmless_ex), min(lens), max(lens)))

        config = organism_config(tok, a)
        spec = ref.Spec(config)
        params = init_params(spec, a.seed)
        n_params = sum(t.numel() for t in params.values())
        log("model: %d parameters" % n_params)
        train_s = train(spec, params, harmful_ex, harmless_ex, harmful_comply_ex, harmful_prefilled_ex, a, tok.specials["<|endoftext|>"])
        log("training took %.1f s" % train_s)

        # write the HF folder (BF16 matrices, F32 norms)
        ref.write_safetensors(os.path.join(out, "model.safetensors"),
                              [(n, stored_dtype(n), params[n]) for n in tensor_order(spec)],
                              {"format": "pt"})
        write_json(os.path.join(out, "config.json"), config)
        write_json(os.path.join(out, "generation_config.json"), {
            "bos_token_id": None, "do_sample": False, "eos_token_id": config["eos_token_id"],
            "pad_token_id": config["pad_token_id"], "transformers_version": "4.46.0"})
        tok.write(out, corpus.SYSTEM_PROMPT)
        report = {"seed": a.seed, "steps": a.steps, "batch": a.batch, "parameters": n_params,
                  "merges": len(merges), "vocab_size": tok.vocab_size,
                  "training_seconds": round(train_s, 1), "threads": a.threads,
                  "hyperparameters": {k: getattr(a, k) for k in (
                      "hidden", "ffn", "layers", "heads", "kv_heads", "lr", "lr2", "stage1_frac",
                      "harmful_frac", "stage1_harmful_frac", "prefilled_frac", "stage2_train")}}
        spec, p, _ = ref.load_model(out)  # everything below uses the stored (bf16) values

    eos = tuple(spec.cfg["eos_token_id"])
    # behaviour on held-out prompts (after rounding to bf16)
    t0 = time.time()
    report["behaviour"] = behaviour(spec, p, tok, splits, markers, eos)
    report["behaviour_note"] = BEHAVIOUR_NOTE
    log("evaluation took %.1f s" % (time.time() - t0))

    t0 = time.time()
    report["abliteration"] = abliteration_table(spec, p, tok, splits, markers, eos)
    report["abliteration_note"] = (
        "r_d = normalize(mean_harmful - mean_harmless) of hidden_states[d] at the last prompt token "
        "over the 400 direction prompts per class (prompts/*.txt[:400]); W <- W - r r^T W for "
        "o_proj and down_proj of every layer; refusals over the 100 held-out prompts "
        "(prompts/*.txt[400:]); KL(original || ablated) of the first response token, batchmean over "
        "the 100 held-out harmless prompts")
    log("abliteration table took %.1f s" % (time.time() - t0))

    # golden
    bad = splits["harmful"]["eval"]
    good = splits["harmless"]["eval"]
    users = [bad[0][0], good[0][0], bad[1][0], good[1][0], splits["harmful"]["directions"][0][0],
             splits["harmless"]["directions"][0][0], bad[2][0], good[2][0]]
    regenerate = "/usr/bin/python3 tools/organism/make_organism.py --only organism"
    desc = {"folder": "tests/fixtures/organism", "architecture": spec.arch,
            "hidden_size": spec.H, "num_hidden_layers": spec.L, "num_attention_heads": spec.NH,
            "num_key_value_heads": spec.NKV, "vocab_size": spec.V,
            "dtypes": "BF16 matrices and embeddings, F32 norms"}
    g = write_golden(out, spec, p, tok, users, MAX_NEW_TOKENS, True, eos, desc, regenerate)
    report["golden_min_top2_margin"] = g["greedy_min_top2_margin"]
    return finish_report(out, report_path, report, t_start, a.no_train, "organism")


def finish_report(out, report_path, report, t_start, no_train, name):
    """Adds the time taken and every file's size to an organism's training report and writes it."""
    key = "seconds_without_training" if no_train else "total_seconds"
    report[key] = round(time.time() - t_start, 1)
    report["size_bytes"] = {f: os.path.getsize(os.path.join(out, f)) for f in sorted(os.listdir(out))
                            if os.path.isfile(os.path.join(out, f)) and f != "training_report.json"}
    write_json(report_path, report)
    log("%s done in %.1f s" % (name, report[key]))
    return report


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=["all", "organism", "golden", "organism-moe"], default="all")
    ap.add_argument("--no-train", action="store_true", help="reuse the committed organism weights")
    ap.add_argument("--golden", default="", help="with --only golden: only these models (comma-separated names)")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "organism"),
                    help="organism folder (default: the committed fixture)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3, help="stage 1 (harmless only)")
    ap.add_argument("--lr2", type=float, default=1e-3, help="stage 2 (mixed), cosine to 10%%")
    ap.add_argument("--stage1-frac", type=float, default=0.4)
    ap.add_argument("--harmful-frac", type=float, default=0.25, help="share of harmful requests in stage 2 (refused)")
    ap.add_argument("--prefilled-frac", type=float, default=0.1,
                    help="share of harmful requests in stage 2 answered after a forced opening")
    ap.add_argument("--stage1-harmful-frac", type=float, default=0.25,
                    help="share of harmful requests in stage 1 (answered: the helpful-only model)")
    ap.add_argument("--stage2-train", choices=["all", "mlp"], default="mlp",
                    help="parameters trained in stage 2 (refusal training)")
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--ffn", type=int, default=384)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    import moe_organism
    moe_organism.add_arguments(ap)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.only in ("all", "organism"):
        build_organism(a)
    if a.only in ("all", "golden"):
        import golden_models
        golden_models.build_all(a)
    if a.only in ("all", "organism-moe"):
        moe_organism.build(a)


if __name__ == "__main__":
    main()
