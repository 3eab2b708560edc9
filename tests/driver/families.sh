# Every phase on the other families' golden models (random weights; tests/fixtures/golden): Gemma 3
# and Mistral 3 multimodal, Gemma 2, Phi-3 with LongRoPE (short factors only, and past original_max 32, where
# responses cross over to the long factors and are run again whole), GLM-4, Qwen2.5-VL as released (model.* beside
# visual.*), Qwen2-MoE with a shared expert and a dense layer, and GLM-4.5's MoE (sigmoid router, an MTP
# layer's tensors to copy), Granite-MoE with a shared expert (stacked experts) and gpt-oss (sinks, biases, experts
# stacked transposed), Cohere2 (LayerNorms, parallel blocks, NoPE full layers), Command R+'s per-head q/k
# LayerNorms, Llama with attention and MLP biases, Seed-OSS (q/k/v biases, none on o_proj) and DeepSeek-V3's
# latent attention (o_proj (H, NH*v_head_dim), every expert's down projection and the shared experts') and OLMo 2
# (no input norms, q/k norms over all heads), OLMo 3 (sliding layers with their own RoPE base, GQA, biases) and
# DeepSeek-V2's softmax router (groups scored by their best expert), OLMoE (every layer MoE) and MiniMax-M2
# (partial RoPE, sigmoid router with its correction bias beside the gate, eos from generation_config.json) and
# EXAONE 4 (post-norm layers, per-head q/k norms, sliding layers with RoPE beside a full one without) and
# ERNIE 4.5 (interleaved RoPE; the MoE one's softmax router steered by its correction bias, shared experts;
# the dense one's biases on q/k/v/o and the MLP) and Qwen3-Next / Qwen3.5-MoE (3 of 4 layers a gated delta rule
# whose out_proj is ablated as o_proj, recurrent states across decode steps, gated attention) and Qwen3-VL-MoE
# (the released transposed expert stacks, a dense layer among MoE ones) and Gemma 1 (multi-query attention) and
# GLM-4.5V (GLM-4.5's MoE under a multimodal checkpoint's text_config) and Granite 4.0-H (Mamba-2 layers whose
# out_proj is ablated as o_proj, beside attention layers; with a dense MLP and with experts) and LFM2 (short-conv
# layers whose out_proj is ablated as o_proj; LFM2-MoE's experts behind a biased sigmoid router) and Nemotron-H
# (one block per layer: Mamba-2's out_proj, the NoPE attention's o_proj and the relu² MLP's down_proj ablated, each
# in its own layer; backbone.* names; Nemotron 3's MoE blocks with ungated relu² experts; Nemotron 3 Super's LatentMoE, whose fc2_latent_proj
# is ablated as the routed experts' writer) and Arcee (Llama with an
# ungated relu² MLP) and dots.llm1 (Qwen3's attention, DeepSeek-V3's router, shared experts, sliding layers) and
# Hunyuan-A13B (HunYuan dense's attention, every layer MoE with a shared MLP, the router mlp.gate.wg) and Apertus
# (per-head q/k norms before RoPE, the ungated xIELU MLP with its learned scalars per layer, 0-d tensors kept) and
# GLM-4.7-Flash (DeepSeek-V3's latent attention and router, dense layers from mlp_layer_types, an MTP layer kept) and
# LLaVA (a mistral text model in Pixtral's spelling) and InternVL (qwen2, transformers 5's spelling) beside their
# vision towers and Gemma 4 (31B-like: per-layer head sizes, values = keys, under model.language_model. beside a
# vision tower; E2B-like: per-layer embeddings, KV sharing, double-wide MLPs; 26B-A4B-like: experts beside the dense
# MLP, stacked as experts.*) run
# `abliterate run` end to end (baseline, residuals, directions, a small sweep) on 2 ranks with
# sharded weights, then export a trial whose untouched tensors (the vision tower, fused Phi-3
# tensors, routers) keep their bytes while every o_proj/down projection the trial ablates (every
# expert's in MoE layers) changes. The model organism's prompts serve as prompts.
source "$(dirname "$0")/common.sh"
GOLDEN="$HERE/../fixtures/golden"
for name in gemma3-mm mistral3-mm gemma2-softcap phi3-longrope phi3-longrope-long glm4-interleaved-rope qwen2.5-vl-legacy qwen2-moe-shared glm4-moe granite-moe-shared gpt-oss cohere2 cohere-qknorm llama-bias seed-oss deepseek-v3-mla olmo2 olmo3-v5 deepseek-v2-groups olmoe minimax-m2 exaone4 ernie4.5-moe ernie4.5-dense qwen3-next qwen3.5-moe-mm qwen3-vl-moe-mm gemma glm4v-moe-mm phimoe llama4-mm granite4-micro granite4-moe-nope hunyuan-dense granite4-h granite4-h-moe lfm2 lfm2-moe nemotron-h nemotron-h-moe nemotron-h-latent-moe arcee dots1 hunyuan-moe apertus glm4-moe-lite llava-mm internvl-mm gemma4-dense gemma4-e gemma4-moe; do
  RUN="$WORK/families/$name"
  rm -rf "$RUN" && mkdir -p "$(dirname "$RUN")"
  extra=()  # phi3-longrope-long: no system prompt, so that the prompts (26 to 48 tokens) lie on both sides of 32
  [[ $name == phi3-longrope-long ]] && extra=(--system-prompt "")
  "$MPIEXEC" -np 2 --oversubscribe "$BIN" run --model "$GOLDEN/$name" --threads 1 --quiet --backend cpu "${extra[@]}" \
    --sharding FULL_SHARD "${PROMPT_ARGS[@]}" --good-split "[:40]" --bad-split "[:40]" \
    --kl-split "[400:420]" --eval-split "[400:420]" --max-response-length 12 --trials 10 --startup-trials 8 \
    --out "$RUN"
  "$BIN" export --run-dir "$RUN" --trial 0 --out "$RUN/model" --quiet
  "$PY" - "$GOLDEN/$name" "$RUN/model" "$name" <<'PY'
import json, struct, sys

def tensors(folder):
    raw = open(folder + "/model.safetensors", "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    return {k: raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]] for k, v in header.items()}

src, out, name = tensors(sys.argv[1]), tensors(sys.argv[2]), sys.argv[3]
assert src.keys() == out.keys(), f"{name}: the export's tensors differ: {sorted(src.keys() ^ out.keys())}"
changed = sorted(k for k in src if src[k] != out[k])
ablatable = ("o_proj.weight", "out_proj.weight", "down_proj.weight", ".w2.weight", "output_linear.weight",
             "mlp.experts.down_proj", "feed_forward.experts.down_proj", "fc2_latent_proj.weight",
             ".experts.down_proj")
wrong = [k for k in changed if not k.endswith(ablatable)]
assert not wrong, f"{name}: tensors that are never ablated changed: {wrong}"
assert changed, f"{name}: trial 0 changed nothing"
experts = [k for k in changed if ".experts." in k or ".block_sparse_moe.output_linear." in k]
print(f"{name}: {len(changed)} of {len(src)} tensors ablated ({len(experts)} routed experts), the rest bit-identical")
if name == "nemotron-h-latent-moe":  # the experts write the latent: fc2_latent_proj is ablated in their place
    assert not experts, f"{name}: latent expert matrices changed: {experts}"
    assert any(k.endswith("fc2_latent_proj.weight") for k in changed), f"{name}: no fc2_latent_proj ablated"
if name.startswith("qwen2-moe"):
    assert experts, f"{name}: no routed expert was ablated"
    layers = {k.split(".")[2] for k in experts}
    for layer in layers:  # every expert of an ablated MoE layer
        n = sum(1 for k in experts if k.split(".")[2] == layer)
        assert n == 4, f"{name}: layer {layer}: {n} of 4 experts ablated"
PY
done
