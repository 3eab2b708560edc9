"""Shared by the modules of tools/hf_check: paths, the family list, logging, the per-case error."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
GOLDEN_DIR = os.path.join(REPO, "tests", "fixtures", "golden")
ORGANISM_PROMPTS = os.path.join(REPO, "tests", "fixtures", "organism", "prompts")

# One random-init model per supported architecture; the template is that golden fixture's
# config.json (valid HF configs written for these families, tools/organism/golden_models.py).
# The random-init cases: (architecture, golden fixture whose config.json and tokenizer they take).
FAMILIES = [
    ("LlamaForCausalLM", "llama3-rope-scaling"),
    ("MistralForCausalLM", "mistral-window"),
    ("Qwen2ForCausalLM", "qwen2-qkv-bias"),
    ("Qwen3ForCausalLM", "qwen3-qk-norm"),
    ("Gemma2ForCausalLM", "gemma2-softcap"),
    ("Gemma3ForCausalLM", "gemma3-local-global"),
    ("Gemma3ForConditionalGeneration", "gemma3-mm"),
    ("Mistral3ForConditionalGeneration", "mistral3-mm"),  # Mistral Small 3.1: Pixtral + Mistral
    ("Phi3ForCausalLM", "phi3-longrope-long"),  # past original_max 32: long factors, and the rerun
    ("Phi3ForCausalLM", "phi4-mini-partial-rope"),  # Phi-4-mini: 3/4 of each head rotates, tied
    ("Qwen3ForCausalLM", "qwen3-yarn"),  # YaRN scaling as Qwen's long-context block
    ("GlmForCausalLM", "glm-interleaved-rope"),  # GLM-4-9B-chat-hf: interleaved half-head RoPE, qkv bias
    ("Glm4ForCausalLM", "glm4-interleaved-rope"),  # GLM-4-0414: the same and post norms
    ("SmolLM3ForCausalLM", "smollm3-nope"),  # a NoPE layer among RoPE layers, tied
    ("Qwen2_5_VLForConditionalGeneration", "qwen2.5-vl-legacy"),  # a flat config; text through mrope
    ("Qwen3VLForConditionalGeneration", "qwen3-vl-mm"),  # text_config, interleaved mrope, q/k norm
    ("MixtralForCausalLM", "mixtral-moe"),
    ("Qwen2MoeForCausalLM", "qwen2-moe-shared"),
    ("Qwen3MoeForCausalLM", "qwen3-moe"),
    ("Glm4MoeForCausalLM", "glm4-moe"),
    ("GraniteForCausalLM", "granite-multipliers"),  # Llama with embedding/attention/residual/logits multipliers
    ("GraniteMoeForCausalLM", "granite-moe"),  # stacked experts (input_linear / output_linear), multipliers
    ("GraniteMoeSharedForCausalLM", "granite-moe-shared"),  # the same with an ungated shared_mlp
    ("GptOssForCausalLM", "gpt-oss"),  # sinks, q/k/v/o/router/expert biases, clamped SwiGLU, stacked transposed experts
    ("CohereForCausalLM", "cohere"),  # LayerNorm without bias, parallel block, interleaved RoPE, logit_scale, tied
    ("Cohere2ForCausalLM", "cohere2"),  # the same, sliding layers with RoPE, full layers without (NoPE)
    # (appended: a case's seed is --seed + its index here)
    ("LlamaForCausalLM", "llama-bias"),  # attention_bias (q/k/v/o_proj biases) and mlp_bias (gate/up/down_proj)
    ("CohereForCausalLM", "cohere-qknorm"),  # Command R+: use_qk_norm, per-head q/k LayerNorms (heads, head_dim)
    ("SeedOssForCausalLM", "seed-oss"),  # Seed-OSS-36B: q/k/v biases (attention_bias), none on o_proj (attention_out_bias)
    ("DeepseekV3ForCausalLM", "deepseek-v3-mla"),  # latent attention (q rank, interleaved rope tail, yarn mscale), sigmoid router
    ("DeepseekV3ForCausalLM", "deepseek-v3-qproj"),  # Moonlight's shape: q_proj (no q rank), rotate-half tail, plain rope
    ("Olmo2ForCausalLM", "olmo2"),  # output norms only (no input norms), q/k RMSNorm over all heads, GQA
    ("Olmo2ForCausalLM", "olmo2-bias"),  # the same with q/k/v/o biases, tied, linear rope scaling
    ("Olmo3ForCausalLM", "olmo3"),  # OLMo 2's layers, 3 of 4 sliding with unscaled RoPE, YaRN on the full one
    ("Olmo3ForCausalLM", "olmo3-v5"),  # transformers 5's per-type rope_parameters, sliding base of its own, GQA, tied
    ("DeepseekV2ForCausalLM", "deepseek-v2-lite"),  # V2-Lite: q_proj, adjacent-pair rope, yarn mscale², greedy softmax router
    ("DeepseekV2ForCausalLM", "deepseek-v2-groups"),  # V2/V2.5: q rank, group_limited_greedy (groups by their best), x16
    ("OlmoeForCausalLM", "olmoe"),  # OLMoE: Llama's layers with q/k norms over the whole projections, MoE on every layer
    ("MiniMaxM2ForCausalLM", "minimax-m2"),  # released config: rotary_dim (partial RoPE), sigmoid router + bias, Mixtral experts
    ("MiniMaxM2ForCausalLM", "minimax-m2-v5"),  # transformers 5: partial_rotary_factor in rope_parameters, stacked, tied
    ("Exaone4ForCausalLM", "exaone4"),  # EXAONE 4.0-32B: post-norm, per-head q/k norms, LLLG: sliding with RoPE, full NoPE
    ("Exaone4ForCausalLM", "exaone4-dense"),  # EXAONE 4.0-1.2B: no window, RoPE on every layer, tied, MHA
    ("Ernie4_5_MoeForCausalLM", "ernie4.5-moe"),  # 21B-A3B: interleaved RoPE, softmax p + moe_statics bias, shared experts
    ("Ernie4_5_MoeForCausalLM", "ernie4.5-moe-interval"),  # transformers 5: MoE every 2nd layer up to an end index
    ("Ernie4_5ForCausalLM", "ernie4.5-dense"),  # 0.3B: interleaved RoPE, use_bias on q/k/v/o and the MLP, head_dim 24
    ("Qwen3NextForCausalLM", "qwen3-next"),  # 80B-A3B: Gated DeltaNet + gated attention (1 of 4), (1+w) norms, MoE
    ("Qwen3_5ForConditionalGeneration", "qwen3.5-mm"),  # dense: in_proj_qkv/z/b/a, layer_types listed, mrope, tied
    ("Qwen3_5MoeForConditionalGeneration", "qwen3.5-moe-mm"),  # MoE: stacked experts, always-renormalised top-k, untied
    ("Qwen3VLMoeForConditionalGeneration", "qwen3-vl-moe-mm"),  # as released: fused (E, H, 2F) experts, a dense layer
    ("GemmaForCausalLM", "gemma"),  # Gemma 1: (1+w) norms, bf16 embed scale, hidden_act "gelu" (tanh GeGLU), MQA, tied
    ("Mistral3ForConditionalGeneration", "ministral3-mm"),  # Ministral 3: YaRN, queries x 1 + b ln(1 + pos // M)
    ("Glm4vForConditionalGeneration", "glm4v-mm"),  # GLM-4.1V: GLM-4-0414's layers, adjacent-pair half-head mrope
    ("Glm4vMoeForConditionalGeneration", "glm4v-moe-mm"),  # GLM-4.5V: GLM-4.5's layers, rotate-half mrope, per-expert
    # Phi-3.5-MoE: biased LayerNorms and q/k/v/o/lm_head, mscale LongRoPE, sparsemixer. Needs transformers 4.x: 5.x's
    # port builds RMSNorms without the biases in the layers and its rotary embedding never sets the mscales.
    ("PhimoeForCausalLM", "phimoe"),
    # Llama 4: NoPE every 4th layer (temperature-tuned queries), adjacent-pair llama3 RoPE + L2 q/k norm elsewhere,
    # sigmoid top-k scores on the experts' inputs, fused (E, H, 2F) experts, ungated shared expert, dense / MoE layers
    ("Llama4ForConditionalGeneration", "llama4-mm"),
    # Granite 4.0 without Mamba-2 (granite-4.0-micro): layer_types all attention, RoPE, no experts (shared_mlp is the
    # whole MLP), the multipliers, tied; and with experts + ungated shared_mlp and position_embedding_type null (NoPE)
    ("GraniteMoeHybridForCausalLM", "granite4-micro"),
    ("GraniteMoeHybridForCausalLM", "granite4-moe-nope"),
    # Tencent Hunyuan dense (Hunyuan-0.5B / 1.8B / 4B / 7B-Instruct): Llama's layers, per-head q/k RMSNorms
    # (query_layernorm / key_layernorm) AFTER RoPE, rope_scaling dynamic with alpha: base theta x alpha^(hd / (hd - 2))
    ("HunYuanDenseV1ForCausalLM", "hunyuan-dense"),
    # Granite 4.0-H (granite-4.0-h-micro's shape): Mamba-2 layers (in_proj z / xBC / dt, causal conv1d with bias, the
    # SSD scan with 2 groups of B / C, D skip, gated RMSNorm over the whole intermediate size) around a NoPE attention
    # layer, mamba_chunk_size 8, shared_mlp as the whole MLP, the multipliers, tied
    ("GraniteMoeHybridForCausalLM", "granite4-h"),
    # Granite 4.0-H with experts (granite-4.0-h-tiny / -small's shape): Mamba-2 layers (4 heads of 32, one group of B / C
    # as released, state 32, mamba_chunk_size 16) around a NoPE attention layer, on every layer 4 stacked experts top-2
    # (softmax of the top-2 router logits) plus the ungated shared_mlp, the multipliers, untied
    ("GraniteMoeHybridForCausalLM", "granite4-h-moe"),
    # Liquid AI's LFM2 (LFM2-350M / 700M / 1.2B / 2.6B): gated short-conv layers (in_proj B | C | x, y = C conv(B x),
    # a depthwise causal conv of 3 without bias) beside attention with per-head q/k layernorms before RoPE, the SwiGLU
    # width adjusted from block_ff_dim, the original config keys, LFM2's tensor names, tied
    ("Lfm2ForCausalLM", "lfm2"),
    # Liquid AI's LFM2-MoE (LFM2-8B-A1B): LFM2's conv / attention layers, the first num_dense_layers with a dense SwiGLU
    # of intermediate_size as it stands, the others a sigmoid MoE (top-k of s + expert_bias, s renormalised + 1e-6,
    # x routed_scaling_factor), per-expert feed_forward.experts.{e}.w1 / w3 / w2, tied
    ("Lfm2MoeForCausalLM", "lfm2-moe"),
    # NVIDIA's Nemotron-H (Nemotron-H-8B / 4B, NVIDIA-Nemotron-Nano-9B-v2 / 12B-v2): hybrid_override_pattern "M-M*-",
    # one norm and one mixer per block: Mamba-2 (zamba2's mixer: dt floored at time_step_min, the gated RMSNorm per
    # group of B / C, 2 groups, chunk_size 8), attention without any positional encoding, the ungated relu2 MLP;
    # backbone.* names, untied. NemotronHConfig is given head_dim = attention_head_dim and use_mamba_kernels false
    # (hf_models.config_overrides); A_log / D / dt_bias / conv bias / norms perturbed at init
    ("NemotronHForCausalLM", "nemotron-h"),
    # Nemotron-H with MoE blocks (NVIDIA-Nemotron-3-Nano-30B-A3B's config.json spelling: head_dim, norm_eps, no
    # time_step_limit): pattern "ME*EM-", NemotronHMoE on the "E" layers (DeepSeek-V3's sigmoid router on s +
    # e_score_correction_bias, renormalised, x routed_scaling_factor 2.5; 8 ungated relu2 experts of 32, top-2, plus an
    # ungated shared expert of 48) beside a dense relu2 MLP of 96; transformers 5 holds the experts stacked
    # (mixer.experts.up_proj / down_proj) and saves them per expert; the router's bias buffer perturbed at init
    ("NemotronHForCausalLM", "nemotron-h-moe"),
    # Nemotron-H with LatentMoE blocks (NVIDIA-Nemotron-3-Super: nemotron-h-moe's spelling plus moe_latent_size 24):
    # pattern "MEM*E-", the router and the shared expert (48) on the 64-wide input, the routed relu2 experts (8 of 32,
    # top-2) between mixer.fc1_latent_proj (24, 64) and mixer.fc2_latent_proj (64, 24); the router's bias perturbed
    ("NemotronHForCausalLM", "nemotron-h-latent-moe"),
    # Arcee's AFM-4.5B: Llama's layers with the ungated relu2 MLP (ArceeMLP = NemotronMLP: up_proj / down_proj, no
    # gate_proj), GQA 2, YaRN x4 rope_scaling (both "rope_type" and "type", mscale 1.0), untied
    ("ArceeForCausalLM", "arcee"),
    # rednote-hilab's dots.llm1: Qwen3's attention (per-head q/k norms before RoPE, head_dim != hidden / heads), layers
    # from max_window_layers on sliding (no layer_types), layer 0 a dense SwiGLU, then DeepSeek-V3's MoE (sigmoid router
    # with e_score_correction_bias, 2 groups keep 1, top-2 renormalised x2.5, per-expert tensors, shared_experts); the
    # router's bias buffer perturbed at init
    ("Dots1ForCausalLM", "dots1"),
    # Tencent Hunyuan-A13B (the release's config spelling: attention_head_dim beside head_dim, per-layer moe_topk /
    # moe_intermediate_size / num_shared_expert lists): hunyuan-dense's attention (q/k norms after RoPE, alpha RoPE
    # base), every layer a softmax MoE from the fp32 router mlp.gate.wg (top-k renormalised) over experts of
    # intermediate_size plus an ungated shared_mlp; transformers 5 holds the experts stacked (mlp.experts.gate_up_proj /
    # down_proj) and saves them per expert; tied
    ("HunYuanMoEV1ForCausalLM", "hunyuan-moe"),
    # the Swiss AI Initiative's Apertus-8B-2509 (its config spelling: qk_norm / post_norm / mlp_bias listed and unread,
    # rope_theta an integer, rope_scaling llama3 x8 with "rope_type" and "type"): Llama's layers with norms named
    # attention_layernorm / feedforward_layernorm, per-head q/k norms before RoPE, the ungated MLP down(xIELU(up x))
    # with per-layer mlp.act_fn.alpha_p / alpha_n (1,) and beta / eps (0-d); untied
    ("ApertusForCausalLM", "apertus"),
    # Z.ai's GLM-4.7-Flash in transformers 5's Glm4MoeLiteConfig spelling (dtype, rope_parameters {default, 1e6},
    # mlp_layer_types listed beside the release's unread first_k_dense_replace / num_nextn_predict_layers / topk_method):
    # DeepSeek-V3's latent attention (q rank, interleaved rope tail, v head = q/k head as released) in GLM-4.5's layers,
    # layer 0 dense, then the sigmoid router with e_score_correction_bias, one group, top-4 renormalised x1.8, per-expert
    # tensors plus shared_experts; untied; the router's bias buffer perturbed at init
    ("Glm4MoeLiteForCausalLM", "glm4-moe-lite"),
    # LLaVA's generic wrapper with Pixtral-12B's config.json (LlavaConfig: text_config of model_type mistral with head_dim
    # != hidden / heads, GQA 4, rope_theta 1e9, sliding_window null; a small pixtral vision_config; "full" features):
    # the language model is MistralModel unchanged; the vision tower and projector (with biases) random and never run
    ("LlavaForConditionalGeneration", "llava-mm"),
    # InternVL3-1B-hf's wrapper (InternVLConfig: text_config of model_type qwen2, q/k/v biases, the token ids inside it;
    # a small internvl_vision vision_config, downsample_ratio 0.5): the language model is Qwen2Model unchanged; untied
    ("InternVLForConditionalGeneration", "internvl-mm"),
    # Google's Gemma 4 (docs/gemma4.md) in the flat config spelling modeling_gemma4.py reads (head_dim / global_head_dim /
    # num_global_key_value_heads as text keys): plain-w sandwich norms, layers s s f s s f (window 8) with sliding heads
    # of 16 (default RoPE 1e4) and full heads of 32 (proportional RoPE 0.25 at 1e6), q/k norms and a weightless v norm,
    # score scale 1, layer_scalar, softcap 30, tied. E2B's features (Gemma4ForCausalLM): per-layer embeddings of 8, the
    # last two layers sharing layers 3's and 2's K / V (no k/v tensors), double-wide MLPs there
    ("Gemma4ForCausalLM", "gemma4-e"),
    # 31B's features (Gemma4ForConditionalGeneration: text_config, model.language_model.* beside a small gemma4_vision
    # tower): attention_k_eq_v with one kv head on the full layers (no v_proj), use_bidirectional_attention "vision"
    ("Gemma4ForConditionalGeneration", "gemma4-dense"),
    # 26B-A4B's features: the dense text model plus enable_moe_block, 8 experts of 24 top-2 beside the dense MLP, the
    # router on the un-normed residual (its own norm, router.scale, per_expert_scale), stacked experts.gate_up_proj /
    # down_proj
    ("Gemma4ForCausalLM", "gemma4-moe"),
]
# (Gemma 4's main embedding scale sqrt(64) = 8 is exact in bf16; its per-layer table's bf16(sqrt(8)) is not, and an fp32
# transformers run of gemma4-e uses the unrounded sqrt(8): references.py's hook covers the main embedding only)
GEMMA = ("Gemma2ForCausalLM", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "GemmaForCausalLM",
         "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration")


def log(msg):
    print(msg, flush=True)


class CheckError(Exception):
    """A failure of one case that the table reports (the other cases go on)."""
