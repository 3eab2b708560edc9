"""A stand-in for `transformers`, for tests/driver/hf_check.sh only: it lets hf_check.py's
transformers path (model building, save/load round trip, fused-expert handling, HFReference,
the bf16 rows) run where transformers is not installed. It is NOT a reference: its "models" are
tools/organism/reference.py, and its "random init" is the weights of the golden fixture the case's
config was taken from (tests/fixtures/golden; else the first of the same architecture), so a pass
against it proves the checker's plumbing, nothing about transformers. The table it produces names
the reference `transformers 0-stub`.

Only what hf_check.py calls exists: AutoConfig.from_pretrained, getattr(transformers, ARCH)(config),
.from_pretrained(folder, dtype=, attn_implementation=), save_pretrained, named_parameters, to,
eval, float, get_input_embeddings, __call__(input_ids, output_hidden_states, use_cache) -> .logits,
.hidden_states, and generate(input_ids, max_new_tokens, eos_token_id, ...).
"""
import glob
import json
import os
import types

import torch

import reference as ref

__version__ = "0-stub"

_HERE = os.path.dirname(os.path.abspath(__file__))
_GOLDEN = os.path.normpath(os.path.join(_HERE, "..", "..", "..", "tests", "fixtures", "golden"))


class _Config:
    def __init__(self, d):
        self.d = d

    def to_dict(self):
        return dict(self.d)


class AutoConfig:
    @staticmethod
    def from_pretrained(folder):
        with open(os.path.join(folder, "config.json")) as f:
            return _Config(json.load(f))


# keys that hf_check's build_random_model changes in the template's config.json
_CHANGED_KEYS = ("transformers_version", "cache_implementation", "torch_dtype", "dtype", "initializer_range",
                 "moe_intermediate_size", "final_logit_softcapping")


def _comparable(cfg):
    out = {k: v for k, v in cfg.items() if k not in _CHANGED_KEYS and k != "text_config"}
    if "text_config" in cfg:
        out["text_config"] = _comparable(cfg["text_config"])
    return out


def _golden_for(cfg):
    """The golden fixture whose config.json the case was built from (its FAMILIES template: equal but
    for the keys hf_check changes), else the first fixture of the architecture (several fixtures share
    one: llama-bias, llama-mha, ...)."""
    arch = cfg["architectures"][0]
    first = None
    for folder in sorted(glob.glob(os.path.join(_GOLDEN, "*"))):
        p = os.path.join(folder, "config.json")
        if not os.path.exists(p):
            continue
        with open(p) as f:
            c = json.load(f)
        if c["architectures"][0] != arch:
            continue
        if _comparable(c) == _comparable(cfg):
            return folder
        first = first or folder
    if first is None:
        raise ValueError("no golden fixture of " + arch)
    return first


class _Model(torch.nn.Module):
    def __init__(self, config, folder=None):
        super().__init__()
        cfg = dict(config.d) if config is not None else None
        if folder is None:
            # "Random init": the golden fixture's weights; the config is that fixture's too (so that
            # the shapes agree), stored as float32 like the checker's own.
            folder = _golden_for(cfg)
            with open(os.path.join(folder, "config.json")) as f:
                cfg = json.load(f)
            for c in (cfg, cfg.get("text_config", {})):
                c.pop("torch_dtype", None)
            cfg["torch_dtype"] = "float32"
        spec, params, _ = ref.load_model(folder)
        if cfg is None:
            cfg = spec.cfg
        self.cfg = cfg
        self.names = list(params)
        self.w = torch.nn.ParameterDict({n.replace(".", "__"): torch.nn.Parameter(t, requires_grad=False)
                                         for n, t in params.items()})
        self.spec = ref.Spec(cfg)
        self.embed = torch.nn.Identity()

    @classmethod
    def _from_config(cls, config, attn_implementation=None):
        return cls(config)

    @classmethod
    def from_pretrained(cls, folder, dtype=None, attn_implementation=None):
        m = cls(None, folder)
        return m.to(dtype) if dtype is not None else m

    def _params(self):
        return {n: self.w[n.replace(".", "__")].float() for n in self.names}

    def save_pretrained(self, folder, safe_serialization=True):
        os.makedirs(folder, exist_ok=True)
        ref.write_safetensors(os.path.join(folder, "model.safetensors"),
                              [(n, "F32", self.w[n.replace(".", "__")].float()) for n in self.names],
                              {"format": "pt"})
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(self.cfg, f, indent=1)

    def get_input_embeddings(self):
        return self.embed  # the embedding-scale hook is accepted and never called

    def forward(self, input_ids, output_hidden_states=False, use_cache=None, **_):
        with torch.no_grad():
            logits, hidden = ref.forward(self.spec, self._params(), input_ids.cpu(), capture=output_hidden_states)
        return types.SimpleNamespace(logits=logits, hidden_states=tuple(hidden) if hidden else None)

    def generate(self, input_ids, max_new_tokens, eos_token_id=None, **_):
        ids = input_ids[0].tolist()
        with torch.no_grad():
            out, _m = ref.greedy(self.spec, self._params(), ids, max_new_tokens, eos_token_id or (), stop_at_eos=True)
        return torch.tensor([ids + out])


def __getattr__(name):
    if name.endswith("ForCausalLM") or name.endswith("ForConditionalGeneration"):
        return type(name, (_Model,), {})
    raise AttributeError(name)
