"""References for tools/hf_check: transformers (the check) and tools/organism/reference.py (the dry
path). Each gives, per prompt, the last position's logits, the hidden states at every depth
there, and greedy ids (stopping at eos, eos included) with the top-1 minus top-2 logit margin of
every step."""
import os

from common import GEMMA, log
from hf_models import checkpoint_dtype, load_hf, read_json

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
            # Gemma 4's per-layer table (Gemma4TextScaledWordEmbedding with sqrt(hidden_size_per_layer_input))
            P = cfg.get("text_config", cfg).get("hidden_size_per_layer_input") or 0
            tables = [m for n, m in self.model.named_modules() if n.endswith("embed_tokens_per_layer")]
            if P and tables:
                exact_p = float(torch.tensor(P ** 0.5, dtype=torch.float32))
                rounded_p = float(torch.tensor(P ** 0.5, dtype=torch.float32).to(getattr(torch, stored)))
                ratio_p = rounded_p / exact_p
                tables[0].register_forward_hook(lambda m, i, o: o * ratio_p)
                self.notes.append("Gemma 4 per-layer table scale as stored: sqrt(%d) = %.6g, not %.6g" % (
                    P, rounded_p, exact_p))

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
