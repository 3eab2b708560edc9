"""Reference forward pass with Hugging Face transformers' semantics, in plain torch (fp32, CPU),
for LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM and Qwen3ForCausalLM; plus a small
safetensors reader/writer. The golden files of the C++ tests are computed with `forward` and
`greedy` below, from the weights as read back from the written safetensors file.

What is implemented, following transformers' modeling_llama / _mistral / _qwen2 / _qwen3 (eager
attention):
  - RMSNorm: x * rsqrt(mean(x^2) + eps) * weight, in fp32.
  - RoPE in the rotate-half layout; inv_freq = 1 / theta^(arange(0, D, 2) / D) computed in fp32;
    rope_scaling type "llama3" with the HF formula (_compute_llama3_parameters); the angle is
    position * inv_freq in fp32, cos/sin of cat(freqs, freqs).
  - GQA by repeating each kv head NH / NKV times (head h uses kv head h // (NH / NKV)).
  - Causal softmax attention with scale head_dim^-0.5, softmax in fp32.
  - Sliding window (Mistral when config.sliding_window is not null; Qwen2/3 only with
    use_sliding_window, refused here): a query at position i sees keys j with
    i - sliding_window < j <= i, i.e. the last `sliding_window` positions including itself
    (transformers' masking_utils.sliding_window_overlay: kv_idx > q_idx - sliding_window).
  - Qwen2: bias on q/k/v (not o). Qwen3: RMSNorm over head_dim on every q and k head (q_norm,
    k_norm) before RoPE; head_dim from config may differ from hidden / heads.
  - SwiGLU MLP: down(silu(gate(x)) * up(x)); final norm; lm_head or tied embeddings.
  - hidden_states: [embeddings, output of layer 0, ..., output of layer L-2, final_norm(output of
    layer L-1)] (L+1 entries), as transformers returns them.
"""
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

# ----------------------------------------------------------------------------------------------
# safetensors

_DT = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
_NP = {"F32": np.float32, "F16": np.float16, "BF16": np.int16}


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, dtype string, torch tensor). The tensor is converted to the dtype
    (round to nearest even for BF16/F16). Header keys in the given order, padded with spaces to
    a multiple of 8 bytes."""
    header = {"__metadata__": metadata or {"format": "pt"}}
    blobs, offset = [], 0
    for name, dtype, t in tensors:
        t = t.detach().to(torch.float32).contiguous().to(_DT[dtype])
        if dtype == "BF16":
            data = t.view(torch.int16).numpy().astype("<i2").tobytes()
        else:
            data = t.numpy().astype(np.dtype(_NP[dtype]).newbyteorder("<")).tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def read_safetensors(path):
    """name -> (dtype string, fp32 tensor holding exactly the stored values)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        buf = raw[base + a:base + b]
        dt = info["dtype"]
        arr = np.frombuffer(buf, dtype=np.dtype(_NP[dt]).newbyteorder("<")).copy()
        t = torch.from_numpy(arr.astype(_NP[dt]))
        if dt == "BF16":
            t = t.view(torch.bfloat16)
        out[name] = (dt, t.to(torch.float32).reshape(info["shape"]))
    return out


def round_to(t, dtype):
    """The fp32 value a tensor has after being stored as `dtype`."""
    return t.detach().to(_DT[dtype]).to(torch.float32)


# ----------------------------------------------------------------------------------------------
# configuration

class Spec:
    """What the forward pass needs from config.json."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.arch = cfg["architectures"][0]
        if self.arch not in ("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM",
                             "Qwen3ForCausalLM"):
            raise ValueError("unsupported architecture " + self.arch)
        self.H = cfg["hidden_size"]
        self.L = cfg["num_hidden_layers"]
        self.NH = cfg["num_attention_heads"]
        self.NKV = cfg.get("num_key_value_heads") or self.NH
        self.HD = cfg.get("head_dim") or self.H // self.NH
        self.F = cfg["intermediate_size"]
        self.V = cfg["vocab_size"]
        self.eps = cfg["rms_norm_eps"]
        self.theta = cfg.get("rope_theta", 10000.0)
        self.rope_scaling = cfg.get("rope_scaling")
        self.tied = cfg.get("tie_word_embeddings", False)
        self.qkv_bias = self.arch == "Qwen2ForCausalLM"
        self.qk_norm = self.arch == "Qwen3ForCausalLM"
        if self.arch in ("LlamaForCausalLM", "Qwen3ForCausalLM") and cfg.get("attention_bias"):
            raise ValueError("attention_bias is not used by the fixtures")
        if cfg.get("mlp_bias"):
            raise ValueError("mlp_bias is not used by the fixtures")
        self.sliding_window = None
        if self.arch == "MistralForCausalLM":
            self.sliding_window = cfg.get("sliding_window")
        elif self.arch in ("Qwen2ForCausalLM", "Qwen3ForCausalLM") and cfg.get("use_sliding_window"):
            raise ValueError("use_sliding_window is not used by the fixtures")
        self.inv_freq = rope_inv_freq(self.HD, self.theta, self.rope_scaling)


def rope_inv_freq(dim, theta, scaling):
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).to(torch.float32) / dim))
    if not scaling:
        return inv_freq
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind == "default":
        return inv_freq
    if kind != "llama3":
        raise ValueError("rope_scaling type %r is not supported" % kind)
    factor = scaling["factor"]
    low = scaling["low_freq_factor"]
    high = scaling["high_freq_factor"]
    old_len = scaling["original_max_position_embeddings"]
    low_wavelen = old_len / low
    high_wavelen = old_len / high
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_len / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, scaled)


def load_model(folder):
    """(Spec, params: name -> fp32 tensor, dtypes: name -> stored dtype) from an HF folder."""
    with open(os.path.join(folder, "config.json")) as f:
        spec = Spec(json.load(f))
    st = read_safetensors(os.path.join(folder, "model.safetensors"))
    return spec, {k: v[1] for k, v in st.items()}, {k: v[0] for k, v in st.items()}


# ----------------------------------------------------------------------------------------------
# forward

def rms_norm(x, w, eps):
    x = x.to(torch.float32)
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def forward(spec, p, ids, positions=None, key_valid=None, cache=None, capture=True):
    """ids: (B, T) int64. positions: (B, T) int64, default arange(T). key_valid: (B, T) bool of
    the *new* tokens (False for padding), default all True. cache: None, or a dict that receives
    (and supplies) per-layer keys/values/positions/validity for incremental decoding.
    Returns (logits (B, T, V), hidden_states list of L+1 tensors (B, T, H) or None)."""
    B, T = ids.shape
    NH, NKV, HD = spec.NH, spec.NKV, spec.HD
    if positions is None:
        positions = torch.arange(T).unsqueeze(0).expand(B, T)
    if key_valid is None:
        key_valid = torch.ones(B, T, dtype=torch.bool)
    freqs = positions.to(torch.float32).unsqueeze(-1) * spec.inv_freq  # (B, T, HD/2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().unsqueeze(1), emb.sin().unsqueeze(1)  # (B, 1, T, HD)

    if cache is not None and "positions" in cache:
        k_pos = torch.cat((cache["positions"], positions), dim=1)
        k_valid = torch.cat((cache["valid"], key_valid), dim=1)
    else:
        k_pos, k_valid = positions, key_valid
    # mask[b, i, j]: query i of sequence b may attend key j
    allowed = (k_pos.unsqueeze(1) <= positions.unsqueeze(2)) & k_valid.unsqueeze(1)
    if spec.sliding_window is not None:
        allowed = allowed & (k_pos.unsqueeze(1) > positions.unsqueeze(2) - spec.sliding_window)
    bias = torch.zeros(allowed.shape, dtype=torch.float32).masked_fill(~allowed, torch.finfo(torch.float32).min)
    bias = bias.unsqueeze(1)  # (B, 1, T, S)

    x = p["model.embed_tokens.weight"][ids]
    hidden = [x] if capture else None
    new_cache = {}
    for l in range(spec.L):
        pre = "model.layers.%d." % l
        h = rms_norm(x, p[pre + "input_layernorm.weight"], spec.eps)
        q = h @ p[pre + "self_attn.q_proj.weight"].T
        k = h @ p[pre + "self_attn.k_proj.weight"].T
        v = h @ p[pre + "self_attn.v_proj.weight"].T
        if spec.qkv_bias:
            q = q + p[pre + "self_attn.q_proj.bias"]
            k = k + p[pre + "self_attn.k_proj.bias"]
            v = v + p[pre + "self_attn.v_proj.bias"]
        q = q.view(B, T, NH, HD)
        k = k.view(B, T, NKV, HD)
        v = v.view(B, T, NKV, HD)
        if spec.qk_norm:
            q = rms_norm(q, p[pre + "self_attn.q_norm.weight"], spec.eps)
            k = rms_norm(k, p[pre + "self_attn.k_norm.weight"], spec.eps)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # (B, heads, T, HD)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if cache is not None:
            if l in cache:
                k = torch.cat((cache[l][0], k), dim=2)
                v = torch.cat((cache[l][1], v), dim=2)
            new_cache[l] = (k, v)
        rep = NH // NKV
        kr = k.repeat_interleave(rep, dim=1)
        vr = v.repeat_interleave(rep, dim=1)
        scores = (q @ kr.transpose(2, 3)) * (HD ** -0.5) + bias
        attn = torch.softmax(scores, dim=-1, dtype=torch.float32)
        o = (attn @ vr).transpose(1, 2).reshape(B, T, NH * HD)
        o = o @ p[pre + "self_attn.o_proj.weight"].T
        x = x + o
        h = rms_norm(x, p[pre + "post_attention_layernorm.weight"], spec.eps)
        m = F.silu(h @ p[pre + "mlp.gate_proj.weight"].T) * (h @ p[pre + "mlp.up_proj.weight"].T)
        m = m @ p[pre + "mlp.down_proj.weight"].T
        x = x + m
        if capture and l < spec.L - 1:
            hidden.append(x)
    x = rms_norm(x, p["model.norm.weight"], spec.eps)
    if capture:
        hidden.append(x)
    head = p["model.embed_tokens.weight"] if spec.tied else p["lm_head.weight"]
    logits = x @ head.T
    if cache is not None:
        cache.update(new_cache)
        cache["positions"], cache["valid"] = k_pos, k_valid
    return logits, hidden


@torch.no_grad()
def greedy(spec, p, prompt_ids, max_new_tokens, eos_ids=(), stop_at_eos=True):
    """Greedy decoding of one prompt by re-running the full sequence every step (no cache): the
    plainest possible reference. Returns (generated ids, the top-1 minus top-2 logit margin of
    each step)."""
    ids = list(prompt_ids)
    out, margins = [], []
    for _ in range(max_new_tokens):
        logits, _ = forward(spec, p, torch.tensor([ids]), capture=False)
        last = logits[0, -1]
        top = torch.topk(last, 2)
        nxt = int(top.indices[0])
        margins.append(float(top.values[0] - top.values[1]))
        out.append(nxt)
        ids.append(nxt)
        if stop_at_eos and nxt in eos_ids:
            break
    return out, margins


@torch.no_grad()
def greedy_batch(spec, p, prompts, max_new_tokens, eos_ids):
    """Batched greedy decoding with a KV cache and left padding (for evaluation; agrees with
    `greedy`). Returns the generated ids per prompt (eos included when produced)."""
    B = len(prompts)
    T = max(len(x) for x in prompts)
    ids = torch.zeros(B, T, dtype=torch.int64)
    valid = torch.zeros(B, T, dtype=torch.bool)
    for b, x in enumerate(prompts):
        ids[b, T - len(x):] = torch.tensor(x)
        valid[b, T - len(x):] = True
    positions = (valid.long().cumsum(1) - 1).clamp(min=0)
    cache = {}
    logits, _ = forward(spec, p, ids, positions, valid, cache=cache, capture=False)
    nxt = logits[:, -1].argmax(-1)
    out = [[] for _ in range(B)]
    done = [False] * B
    pos = positions[:, -1]
    for step in range(max_new_tokens):
        for b in range(B):
            if not done[b]:
                out[b].append(int(nxt[b]))
                if int(nxt[b]) in eos_ids:
                    done[b] = True
        if all(done) or step == max_new_tokens - 1:
            break
        pos = pos + 1
        logits, _ = forward(spec, p, nxt.unsqueeze(1), pos.unsqueeze(1),
                            torch.ones(B, 1, dtype=torch.bool), cache=cache, capture=False)
        nxt = logits[:, -1].argmax(-1)
    return out
