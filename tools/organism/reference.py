"""Reference forward pass with Hugging Face transformers' semantics, in plain torch (fp32, CPU),
for the decoder families the engine supports, plus a small safetensors reader/writer. The golden
files of the C++ tests are computed with `forward` and `greedy` below, from the weights as read back
from the written safetensors file (every product and sum in fp32, whatever the stored dtype).

Families (config.json `architectures[0]`), each followed line by line from transformers'
modeling code (eager attention); the file and class/function are cited at each feature below:
  LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM,
  GemmaForCausalLM (Gemma 1: Llama's layers with (1 + w) norms, scaled embeddings and GeGLU; no softcaps, no window),
  Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma3ForConditionalGeneration (its language model only),
  Phi3ForCausalLM, MixtralForCausalLM, Qwen2MoeForCausalLM, Qwen3MoeForCausalLM,
  Mistral3ForConditionalGeneration (its language model, a MistralModel, only; or, with a text_config of model_type
  "ministral3" (Ministral 3, transformers 5), a Ministral3Model: Mistral's layers, YaRN from rope_parameters, and each
  query scaled after RoPE by its position, see llama4_attn_scale),
  GlmForCausalLM, Glm4ForCausalLM, SmolLM3ForCausalLM, Qwen2VLForConditionalGeneration, Qwen2_5_VLForConditionalGeneration,
  Qwen3VLForConditionalGeneration (their language models: Qwen2 / Qwen3 decoders with the
  multimodal RoPE, which for text positions is the plain one; see mrope_cos_sin),
  Qwen3VLMoeForConditionalGeneration (Qwen3-VL's language model with Qwen3-MoE's layers: a softmax MoE, top-k always
  renormalised, on the layers mlp_only_layers / decoder_sparse_step leave, its experts fused and transposed as released:
  see qwen3_vl_moe_expert),
  Glm4MoeForCausalLM, GraniteForCausalLM, GraniteMoeForCausalLM, GraniteMoeSharedForCausalLM,
  GraniteMoeHybridForCausalLM (Granite 4.0: Granite's multipliers, attention layers with RoPE on all of them or on
  none (position_embedding_type), Mamba-2 layers (Bamba's mixer: see mamba_mixer) where layer_types says "mamba", the
  whole MLP in shared_mlp, or GraniteMoe's experts plus the ungated shared_mlp; see granite_hybrid_layers),
  Glm4vForConditionalGeneration (GLM-4.1V / GLM-4.6V-Flash: its language model only, GLM-4-0414's layers with the
  multimodal RoPE, which for text positions is the plain one; head_dim always hidden / heads, q/k/v biases always),
  Glm4vMoeForConditionalGeneration (GLM-4.5V / GLM-4.6V: its language model only, GLM-4.5's layers (rotate-half partial
  RoPE, sigmoid router with e_score_correction_bias, ungated shared experts) with the multimodal RoPE; no q/k norms),
  GptOssForCausalLM, CohereForCausalLM, Cohere2ForCausalLM, SeedOssForCausalLM,
  DeepseekV3ForCausalLM (multi-head latent attention, see mla_attention; GLM-4.5's router),
  DeepseekV2ForCausalLM (the same attention with apply_rotary_emb's in-place complex pairs; a softmax router,
  greedy or group_limited_greedy, see deepseek_v2_route),
  Olmo2ForCausalLM (post-norm layers, q/k RMSNorms over the whole projection width),
  Olmo3ForCausalLM (OLMo 2's layers, sliding-window layers with an unscaled RoPE of their own),
  OlmoeForCausalLM (Llama's pre-norm layers with OLMo 2's whole-projection q/k RMSNorms and a softmax MoE on
  every layer, no shared expert),
  MiniMaxM2ForCausalLM (Mixtral's layers with OLMo 2's whole-projection q/k RMSNorms, partial rotate-half RoPE over
  rotary_dim dims of an explicit head_dim, and a sigmoid MoE whose e_score_correction_bias steers the choice only;
  the released per-expert block_sparse_moe.* tensors or transformers 5's stacked mlp.experts.*),
  Exaone4ForCausalLM (OLMo 2's post-norm layers with Qwen3's per-head q/k RMSNorms; with a sliding_window, sliding
  layers with RoPE beside full layers without (NoPE), from layer_types or sliding_window_pattern ("LLLG" or an
  integer); without one, RoPE and full attention on every layer),
  Ernie4_5ForCausalLM (ERNIE-4.5-0.3B: Llama's layers, q/k/v/o and MLP biases with use_bias, head_dim from the config,
  GLM's adjacent-pair RoPE over the whole head), Ernie4_5_MoeForCausalLM (ERNIE-4.5-21B-A3B / 300B-A47B: the same
  attention, a softmax MoE on the layers moe_layer_start_index / _end_index / _interval pick, the top-k of p +
  e_score_correction_bias (mlp.moe_statics), weights p renormalised, an ungated shared expert; see ernie_route),
  Qwen3NextForCausalLM, Qwen3_5ForConditionalGeneration, Qwen3_5MoeForConditionalGeneration (hybrid linear attention:
  Gated DeltaNet layers beside gated full-attention layers, (1 + w) norms; see gated_delta_net; Qwen3-Next and
  Qwen3.5-MoE with Qwen2-MoE's softmax router and sigmoid-gated shared expert on every layer),
  PhimoeForCausalLM (Phi-3.5-MoE, transformers 4.x's models/phimoe/modeling_phimoe.py: nn.LayerNorms with weight and
  bias, q/k/v/o_proj biases with attention_bias, LongRoPE whose cos / sin take rope_scaling's short_mscale /
  long_mscale, the sparsemixer top-2 router in eval mode (see sparsemixer_route), Mixtral's per-expert tensors, an
  lm_head bias with lm_head_bias),
  Llama4ForConditionalGeneration (Llama 4 Scout / Maverick, models/llama4/modeling_llama4.py: its language model only,
  language_model.model.* / language_model.lm_head.weight; NoPE layers from no_rope_layers with temperature-tuned queries,
  rotary layers with apply_rotary_emb's complex pairs, an L2 q/k norm and chunked attention; MoE layers from moe_layers
  with Llama4Router's sigmoid top-k scores on the experts' inputs, the fused Llama4TextExperts and an ungated shared
  expert; see llama4_query_key, llama4_moe),
  HunYuanDenseV1ForCausalLM (Tencent Hunyuan-0.5B / 1.8B / 4B / 7B, models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py:
  Llama's layers with per-head q/k RMSNorms query_layernorm / key_layernorm applied AFTER RoPE, and the "dynamic" RoPE
  with an alpha, whose base is rope_theta x alpha^(head_dim / (head_dim - 2)); see hunyuan_rope),
  Lfm2ForCausalLM (Liquid AI's LFM2-350M / 700M / 1.2B / 2.6B, models/lfm2/modeling_lfm2.py (generated from
  modular_lfm2.py) and configuration_lfm2.py: gated short-convolution layers beside attention layers with per-head q/k
  RMSNorms before RoPE, the SwiGLU width adjusted from block_ff_dim, LFM2's own tensor names; see lfm2_layers,
  lfm2_short_conv),
  Lfm2MoeForCausalLM (Liquid AI's LFM2-8B-A1B, models/lfm2_moe/modular_lfm2_moe.py and configuration_lfm2_moe.py: LFM2's
  conv / attention layers and names; the first num_dense_layers feed_forwards a SwiGLU Lfm2MoeMLP of intermediate_size
  as it stands (no width rule), the others a sparse MoE with a sigmoid router whose expert_bias steers the choice only, the
  top-k weights renormalised (+ 1e-6) and scaled; per-expert feed_forward.experts.{e}.w1 / w3 / w2 as released; see
  lfm2_layers, lfm2_moe_route),
  NemotronHForCausalLM (NVIDIA's Nemotron-H-8B / 4B, NVIDIA-Nemotron-Nano-9B-v2 / 12B-v2,
  models/nemotron_h/modular_nemotron_h.py and configuration_nemotron_h.py, as the 4.48-era releases' config.json spell
  it: blocks of one mixer each behind one RMSNorm, Mamba-2 (zamba2's mixer) / attention without positions / an ungated
  squared-ReLU MLP from hybrid_override_pattern, names under backbone.*; see nemotron_h_layers, nemotron_h_block;
  and the "E" blocks of NVIDIA-Nemotron-3-Nano-30B-A3B, as its config.json spells it: NemotronHMoE, DeepSeek-V3's
  sigmoid router over ungated squared-ReLU experts plus an ungated shared expert, per-expert
  mixer.experts.{e}.up_proj / down_proj as released; see nemotron_h_expert, sigmoid_route; with moe_latent_size,
  NVIDIA-Nemotron-3-Super's LatentMoE: the routed experts between mixer.fc1_latent_proj and mixer.fc2_latent_proj, see
  moe_block),
  ArceeForCausalLM (Arcee's AFM-4.5B, models/arcee/modular_arcee.py: Llama's layers, attention and RoPE (YaRN from
  rope_scaling as any Llama), the MLP NemotronMLP's ungated down_proj(act(up_proj(x))) with hidden_act relu2 and no
  gate_proj; see ungated_mlp),
  Dots1ForCausalLM (rednote-hilab's dots.llm1, models/dots1/modular_dots1.py: Qwen3's attention (per-head q/k RMSNorms
  before RoPE), a sliding window on the layers from max_window_layers on (dots1_layer_sliding), DeepSeek-V3's layers:
  a gated SiLU MLP below first_k_dense_replace, above it the sigmoid router with e_score_correction_bias and expert
  groups over per-expert mlp.experts.{e}.*, plus mlp.shared_experts without a gate; see sigmoid_route),
  HunYuanMoEV1ForCausalLM (Tencent Hunyuan-A13B, models/hunyuan_v1_moe/modular_hunyuan_v1_moe.py: HunYuan-Dense's
  attention and alpha RoPE; every layer a softmax top-k MoE from the fp32 router mlp.gate.wg, the top-k always
  renormalised, experts of intermediate_size (per expert as released, or stacked as transformers 5 holds them) plus an
  ungated mlp.shared_mlp; see hunyuan_moe_keys),
  ApertusForCausalLM (the Swiss AI Initiative's Apertus-8B / 70B, models/apertus/modular_apertus.py: Llama's pre-norm
  layers with their two norms named attention_layernorm / feedforward_layernorm, Qwen3's per-head q/k RMSNorms before
  RoPE, the RoPE from rope_scaling (llama3 as released), and an ungated MLP down_proj(xIELU(up_proj(x))) whose
  activation reads four tensors of its own per layer, mlp.act_fn.alpha_p / alpha_n / beta / eps; see xielu),
  Glm4MoeLiteForCausalLM (Z.ai's GLM-4.7-Flash, transformers 5's models/glm4_moe_lite/modular_glm4_moe_lite.py and
  configuration_glm4_moe_lite.py: DeepSeek-V3's multi-head latent attention (see mla_attention) in GLM-4.5's decoder
  layer, MoE and sigmoid router; the dense / sparse layers from mlp_layer_types (first_k_dense_replace is not read); the
  RoPE from transformers 5's flat rope_parameters; see glm4_moe_lite_layers),
  LlavaForConditionalGeneration, InternVLForConditionalGeneration (models/llava/modeling_llava.py,
  models/internvl/modeling_internvl.py: generic wrappers whose language model is whatever text family
  text_config.model_type names, built by AutoModel.from_config (llama, mistral, qwen2, qwen3, qwen3_moe here; text_config
  without model_type: LlavaConfig's "llama", InternVLConfig's "qwen2"); that family runs unchanged on text_config with its
  own config class's defaults, the weights under language_model.model.* (the released LLaVA / Pixtral checkpoints) or
  model.language_model.* (transformers >= 4.52's save), the vision tower and projector never run; see wrapped_text_family),
  Gemma4ForCausalLM, Gemma4ForConditionalGeneration (Google's Gemma 4, models/gemma4/modeling_gemma4.py and
  configuration_gemma4.py, docs/gemma4.md: the language model only, model.* or model.language_model.*; Gemma4RMSNorm
  sandwich norms with plain w, a head size / kv-head count / RoPE per layer type (the full layers' proportional RoPE:
  part of the rotate-half pairs turning, the rest at frequency 0), q/k norms before RoPE and a weightless v norm, K as
  V on the full layers with attention_k_eq_v, score scale 1, the sliding window, per-layer embeddings, KV sharing
  between layers of a type, double-wide MLPs on the shared layers, a scalar per layer, a MoE beside the dense MLP with
  its own router input norm and per-expert scale, the final soft-cap in both architectures; see gemma4_layers,
  gemma4_decoder_layer).

One forward pass; what differs between families is a flag or a value of `Spec`:
  - RMSNorm: Llama style `w * (x * rsqrt(mean(x^2) + eps))`; Gemma style (norm_offset)
    `(x * rsqrt(mean(x^2) + eps)) * (1 + w)`, both in fp32. Cohere (layer_norm): a LayerNorm
    without bias, `w * ((x - mean(x)) * rsqrt(var(x) + eps))` (biased variance), in fp32, eps
    from layer_norm_eps. PhiMoE: torch's nn.LayerNorm (the same, plus its bias), eps from rms_norm_eps.
  - Decoder layer: Llama order (norm, attention, add, norm, MLP, add) or Gemma's sandwich_norms
    (post_attention_layernorm on the attention output before the add, pre_feedforward_layernorm /
    post_feedforward_layernorm around the MLP); GLM-4's are named post_self_attn_layernorm,
    post_attention_layernorm (the MLP's input) and post_mlp_layernorm. Cohere's parallel_block:
    one norm (input_layernorm), x + attention(h) + MLP(h) with h = input_layernorm(x). OLMo 2:
    sandwich norms without the input ones (no input_layernorm, no pre_feedforward_layernorm): the
    attention and the MLP read the residual itself, post_attention_layernorm and
    post_feedforward_layernorm norm their outputs before each add. EXAONE 4: OLMo 2's layer.
    Apertus: Llama's order, the two norms named attention_layernorm and feedforward_layernorm (layer_norm_names).
  - Embeddings times embed_scale (Gemma 1 / 2 / 3: sqrt(hidden_size) rounded to the checkpoint dtype;
    Granite: embedding_multiplier). Granite also scales the scores by attention_multiplier, each
    branch output by residual_multiplier before its residual add, and divides the logits by
    logits_scaling.
  - q/k/v: separate projections (optional bias, Qwen2 / Qwen2-MoE / GLM; Llama's attention_bias: q/k/v
    and o_proj; Seed-OSS: q/k/v from attention_bias, o_proj from attention_out_bias, either without
    the other) or one fused qkv_proj (Phi-3, rows q then k then v); q_norm/k_norm over head_dim
    before RoPE (Qwen3, Qwen3-MoE, Gemma 3, dots.llm1, Apertus; Cohere's use_qk_norm: CohereLayerNorms with one weight
    row per head, (heads, head_dim)); OLMo 2's q_norm/k_norm: RMSNorms over the whole q_proj / k_proj
    output (heads x head_dim values at once, weights (NH * HD,), (NKV * HD,)), before the split
    into heads; OLMo 2's attention_bias: q/k/v and o_proj biases. OLMoE: the same whole-projection q/k
    RMSNorms (q_norm over hidden_size, k_norm over (hidden_size / heads) x kv heads) in Llama's
    pre-norm layer (clip_qkv must be null). MiniMax-M2: the same whole-projection q/k RMSNorms (q_norm over
    heads x head_dim, k_norm over kv heads x head_dim, head_dim explicit and heads x head_dim != hidden_size)
    in Mixtral's pre-norm layer, no biases. EXAONE 4: Qwen3's q_norm / k_norm over each head's head_dim values
    (weights (head_dim,)), before RoPE, in OLMo 2's post-norm layer, no biases. HunYuan-Dense / -MoE: per-head
    RMSNorms over head_dim (self_attn.query_layernorm / key_layernorm, weights (head_dim,)) AFTER RoPE
    (qk_norm_after_rope).
  - RoPE in the rotate-half layout; inv_freq = 1 / theta^(arange(0, D, 2) / D) in fp32; scaling
    "llama3" (_compute_llama3_parameters), "linear" (inv_freq / factor), "longrope" (short
    factors, cos and sin times attention_factor) and "yarn" (_compute_yarn_parameters: a ramp
    between kept and divided frequencies, cos and sin times attention_factor); per layer either
    the global RoPE or (Gemma 3 sliding layers) a local one with its own theta and no scaling;
    OLMo 3: the sliding layers rotate with the default RoPE (the legacy rope_theta, or
    rope_parameters["sliding_attention"]), only the full-attention layers with the configured scaling
    (legacy rope_scaling, or rope_parameters["full_attention"]).
    Partial rotary (Phi-4-mini, GLM): the first int(head_dim * partial_rotary_factor) dims rotate;
    GLM pairs adjacent dims (interleaved rotate_half); GLM-4.1V too, GLM-4.5V in the rotate-half pairing (as GLM-4.5),
    both through their multimodal RoPE (chunked mrope_section bands over rotary_dim / 2 frequencies, three equal
    position rows for text: the plain RoPE, mrope_cos_sin). MiniMax-M2: the first rotary_dim dims (config.json's
    rotary_dim, or partial_rotary_factor x head_dim) in the rotate-half pairing (i, i + rotary_dim / 2).
    SmolLM3's NoPE layers take no RoPE at all; Granite 4.0 rotates every attention layer with position_embedding_type
    "rope" and none without (granite_hybrid_layers). ERNIE 4.5 (both families) pairs adjacent dims (2i, 2i + 1) over the
    whole head, as Cohere. HunYuan-Dense / -MoE: rope_scaling {"type": "dynamic", "alpha": a} gives the default RoPE
    at base rope_theta x a^(head_dim / (head_dim - 2)) (hunyuan_rope), attention factor 1.
    Cohere / Cohere 2 pair adjacent dims (2i, 2i + 1) over the whole head (frequency i); Cohere 2's
    full-attention layers take no RoPE at all (only its sliding layers rotate). EXAONE 4 alike when
    sliding_window is set (its full layers take none); with sliding_window null every layer rotates.
  - Ministral 3 (query_scale_beta): after RoPE every query (not the keys) is multiplied by 1 + beta ln(1 +
    floor(position / original_max_position_embeddings)), beta = rope_parameters' llama_4_scaling_beta
    (llama4_attn_scale).
  - Llama 4 (llama4_query_key): on the layers no_rope_layers marks 1, the adjacent pairs (x[2i], x[2i + 1]) turned as
    complex numbers by polar(1, position x inv_freq_i) (llama3 scaling from rope_scaling), then q and k each
    L2-normed over head_dim (x rsqrt(mean(x^2) + rms_norm_eps), no weight) when use_qk_norm, and chunked attention
    (attention_chunk_size); on the others (NoPE) no RoPE, no q/k norm, full causal attention and, with
    attn_temperature_tuning, the queries times log1p(floor((position + 1) / floor_scale)) * attn_scale + 1.
  - GQA by repeating each kv head NH / NKV times (head h uses kv head h // (NH / NKV)).
  - DeepSeek-V3's multi-head latent attention (`mla_attention`) in place of q/k/v: q through a
    low-rank q_a_proj / q_a_layernorm / q_b_proj (q_lora_rank null: one q_proj), k and v per head
    from one normed latent (kv_a_proj_with_mqa / kv_a_layernorm / kv_b_proj) plus one rotary key
    part shared by every head, q/k head dim (qk_nope + qk_rope) != v head dim, RoPE on the rope part
    only (interleave reshuffle then rotate_half; rope_interleave false: rotate_half on the stored
    order), scores times qk_head_dim^-0.5 x yarn mscale(factor, mscale_all_dim)^2 (no rope_scaling:
    qk_head_dim^-0.5). DeepSeek-V2: the same, the RoPE on the stored adjacent pairs (2i, 2i + 1) turned in
    place as complex numbers (apply_rotary_emb; its scores equal V3's interleave reshuffle + rotate_half).
    GLM-4.7-Flash (Glm4MoeLiteAttention = DeepseekV3Attention): V3's, its latent norms' eps 1e-6 too (Glm4MoeRMSNorm's
    default), rms_norm_eps (1e-5 as released) only on the layer and final norms.
  - Scores q.k * attn_scale (head_dim^-0.5, Gemma: query_pre_attn_scalar^-0.5), then an optional
    tanh softcap (Gemma 2), then the mask; softmax in fp32. gpt-oss: a learned per-head sink logit
    joins each row of scores as one more column, the max is subtracted, the softmax taken over
    keys + sink and the sink's column dropped (a row sums to < 1); o_proj with a bias.
  - Sliding window per layer (layer_sliding): a query at position i sees keys j with
    i - sliding_window < j <= i, i.e. the last `sliding_window` positions including itself
    (transformers' masking_utils.sliding_window_overlay: kv_idx > q_idx - sliding_window).
    Mistral, Mixtral and Phi-3: every layer when sliding_window is set; Gemma 2: even layers; dots.llm1:
    layer_types, else the layers i >= max_window_layers when sliding_window is set;
    Gemma 3 and Cohere 2: layer_types, else (i + 1) % sliding_window_pattern != 0; OLMo 3:
    layer_types, else (i + 1) % 4 != 0; EXAONE 4: layer_types, else sliding_window_pattern (an integer n:
    (i + 1) % n != 0; a string of L / G: pattern[i % len] == "L" except the last layer), none without
    sliding_window (see exaone4_layer_sliding); Qwen*: refused.
  - MLP: Arcee's ungated down(relu(up(x))^2) (ArceeMLP = NemotronMLP: no gate_proj; ungated_mlp); Apertus's ungated
    down(xIELU(up(x))) (ApertusMLP, no gate_proj), xIELU with the layer's own mlp.act_fn.* parameters (xielu); else
    gated, down(act(gate(x)) * up(x)) with act silu or gelu (tanh approximation, Gemma; Gemma 1's config.json
    says "gelu", which transformers 4.39-4.47 ignore: see Spec), with
    biases on all three projections for Llama's (and Seed-OSS's) mlp_bias;
    Phi-3's and GLM's fused gate_up_proj (first half gate); or a mixture of experts (Mixtral, Qwen2-MoE with
    a sigmoid-gated shared expert, Qwen3-MoE, GLM-4.5 with its sigmoid router and ungated shared
    experts; DeepSeek-V2's softmax router, greedy or group-limited by each group's largest probability,
    weights p x routed_scaling_factor, never renormalised; OLMoE on every layer, softmax top-k as
    Qwen2-MoE's, no shared expert; MiniMax-M2 on every layer: sigmoid scores s, the top-k of s +
    e_score_correction_bias, weights s renormalised over the k, see `minimax_route`; ERNIE 4.5 on the layers its
    moe_layer_* keys pick: softmax p, the top-k of p + e_score_correction_bias, weights p over max(sum, moe_norm_min),
    plus an ungated shared expert, see `ernie_route`; Qwen3-VL-MoE: Qwen3-MoE's router, always renormalised, the
    experts as released, gate_up_proj (E, H, 2F) and down_proj (E, F, H) used as x @ W, see `qwen3_vl_moe_expert`),
    see `moe_block`; gpt-oss's experts
    (`gpt_oss_expert`): biased, stacked transposed gate_up_proj with gate / up interleaved in its
    columns, a clamped SwiGLU
    (up.clamp(-limit, limit) + 1) * g * sigmoid(alpha * g) with g = gate.clamp(max=limit), and a
    biased router whose top-k logits are softmaxed. Llama 4 (`llama4_moe`, on the layers moe_layers lists, dense MLPs
    of intermediate_size_mlp between): the top-k logits, their sigmoids (0 for the others, never renormalised)
    multiplied onto each expert's INPUT, the fused feed_forward.experts.gate_up_proj (E, H, 2F) / down_proj (E, F, H)
    used as x @ W by torch.bmm, summed, plus an ungated shared expert. Granite-MoE: experts stacked in
    block_sparse_moe.input_linear (E, 2F, H; gate rows, then up rows) / output_linear (E, H, F), the softmax of the top-k
    logits; Granite-MoE-Shared and Granite 4.0 with experts add an ungated shared_mlp (fused input_linear (2 Fs, H),
    output_linear (H, Fs), Fs = shared_intermediate_size); Granite 4.0 without experts (num_local_experts 0) runs
    shared_mlp alone as every layer's MLP (intermediate_size unread).
  - Qwen3-Next / Qwen3.5 (layer_linear): on "linear_attention" layers the token mixer is a Gated DeltaNet
    (`gated_delta_net`): projections to q, k, v (Qwen3-Next: one in_proj_qkvz / in_proj_ba interleaved per key head;
    Qwen3.5: in_proj_qkv / in_proj_z / in_proj_b / in_proj_a), a depthwise causal conv1d + SiLU over [q, k, v], q / k
    l2-normed, beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias), the gated delta rule (HF's chunked torch form
    for sequences, its recurrent form for cached one-token steps), a gated RMSNorm (plain w, times silu(z)) per value
    head, out_proj; their full-attention layers take a doubled q_proj (query and output gate per head), (1 + w) q/k
    norms, RoPE on the first int(head_dim * partial_rotary_factor) dims and the sigmoid gate on the output.
  - Granite 4.0-H (layer_mamba): on "mamba" layers the token mixer is a Mamba-2 mixer (`mamba_mixer`, Bamba's
    BambaMixer as modeling_granitemoehybrid.py's GraniteMoeHybridMambaLayer): in_proj split into the gate z, xBC and
    dt; a depthwise causal conv1d (with its bias) + SiLU over xBC, split into x, B, C (n_groups groups of B and C, head
    h reading group h // (heads / groups)); dt = softplus(dt + dt_bias), A = -exp(A_log); the state space recurrence
    S = exp(dt A) S + dt x B^T, y = S C + D x, computed for a sequence by torch_forward's chunked "ssd naive"
    algorithm (`ssd_chunked`, mamba_chunk_size) and for a cached one-token step by its recurrence (`ssd_step`); the
    gated RMSNorm (y silu(z) first, then an RMSNorm over the whole intermediate size, plain w); out_proj. The branch
    joins the residual times residual_multiplier, as an attention output does.
  - LFM2 (layer_conv): Lfm2DecoderLayer's names (operator_norm before the token mixer, ffn_norm before the MLP,
    self_attn.out_proj, self_attn.q_layernorm / k_layernorm per head before RoPE, feed_forward.w1 / w3 / w2, the final
    norm model.embedding_norm); on "conv" layers the token mixer is Lfm2ShortConv (`lfm2_short_conv`): in_proj's rows
    B | C | x, B x through a depthwise causal conv1d of kernel conv_L_cache (no bias, no activation), times C, out_proj;
    the MLP's width from block_ff_dim (else intermediate_size) as Lfm2MLP adjusts it (lfm2_layers). LFM2-MoE: the same
    layers; layers l < num_dense_layers an Lfm2MoeMLP of intermediate_size unadjusted, the others Lfm2MoeSparseMoeBlock
    (feed_forward.gate, the F32 buffer feed_forward.expert_bias, experts feed_forward.experts.{e}.w1 / w3 / w2 of
    moe_intermediate_size): s = sigmoid(logits), the top-k of s + expert_bias, weights s over (their sum + 1e-6)
    with norm_topk_prob, times routed_scaling_factor (`lfm2_moe_route`).
  - Nemotron-H (layer_kinds): NemotronHBlock is x + mixer(norm(x)), one norm (backbone.layers.{i}.norm) and one mixer
    per layer: "M" a Mamba-2 mixer (mamba_mixer under mixer.*, as Granite's but for dt floored at time_step_min and the
    gated RMSNorm taken per group of intermediate_size / n_groups values: Zamba2MambaMixer / Zamba2RMSNormGated), "*"
    attention with no positional encoding at all (JambaAttention: mixer.q/k/v/o_proj, head_dim^-0.5), "-" the MLP
    down_proj(relu(up_proj(x))^2) (NemotronMLP, no gate), "E" NemotronHMoE (moe_block with DeepSeek-V3's sigmoid router
    under mixer.gate, experts down_e(relu(up_e(h))^2) without a gate, plus an ungated shared expert of
    moe_shared_expert_intermediate_size: nemotron_h_expert; with moe_latent_size the routed experts run on
    mixer.fc1_latent_proj(h) and their weighted sum goes through mixer.fc2_latent_proj, the router and the shared expert
    on h itself: moe_block); embeddings backbone.embeddings (unscaled), final norm
    backbone.norm_f, eps layer_norm_epsilon everywhere (nemotron_h_block).
  - Gemma 4 (gemma4_decoder_layer): its own layer, attention (gemma4_attention: per-layer head size and kv heads,
    shared K / V per layer type), per-layer embeddings once per pass (gemma4_per_layer_inputs) and MoE (gemma4_moe);
    each layer's output times its layer_scalar.
  - Final norm; lm_head or the tied embedding matrix; optional final tanh softcap (Gemma 2,
    Gemma3ForCausalLM, both Gemma 4 architectures; never Gemma3ForConditionalGeneration); Cohere multiplies the logits
    by logit_scale.
  - hidden_states: [embeddings (scaled, for Gemma), output of layer 0, ..., output of layer L-2,
    final_norm(output of layer L-1)] (L+1 entries), as transformers returns them (Gemma 4: each layer's output after
    its layer_scalar, the hook on Gemma4TextDecoderLayer).

FP8 checkpoints (config.json quantization_config quant_method "fp8": DeepSeek-V3 / R1, Kimi-K2):
F8_E4M3 weights with block-wise F32 `<name>_scale_inv` are dequantized on load to
round(fp32(code) * scale_inv[block], torch_dtype) (`fp8_dequantize_params`); the forward pass then runs
on those weights like any other (no fp8 activations).
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
_NP = {"F32": np.float32, "F16": np.float16, "BF16": np.int16, "F8_E4M3": np.uint8}
F8 = "F8_E4M3"  # the safetensors dtype name of torch.float8_e4m3fn: one byte per element


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, dtype string, torch tensor). The tensor is converted to the dtype
    (round to nearest even for BF16/F16/F8_E4M3; F8_E4M3 refuses values beyond +-448). Header keys in
    the given order, padded with spaces to a multiple of 8 bytes."""
    header = {"__metadata__": metadata or {"format": "pt"}}
    blobs, offset = [], 0
    for name, dtype, t in tensors:
        if dtype == F8:  # one code byte per element, see fp8_e4m3_encode
            t = t.detach().to(torch.float32).contiguous()
            data = fp8_e4m3_encode(t).tobytes()
        elif dtype == "BF16":
            t = t.detach().to(torch.float32).contiguous().to(_DT[dtype])
            data = t.view(torch.int16).numpy().astype("<i2").tobytes()
        else:
            t = t.detach().to(torch.float32).contiguous().to(_DT[dtype])
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
        if dt == F8:
            out[name] = (dt, fp8_e4m3_decode(arr).reshape(info["shape"]))
            continue
        t = torch.from_numpy(arr.astype(_NP[dt]))
        if dt == "BF16":
            t = t.view(torch.bfloat16)
        out[name] = (dt, t.to(torch.float32).reshape(info["shape"]))
    return out


def round_to(t, dtype):
    """The fp32 value a tensor has after being stored as `dtype`."""
    if dtype == F8:
        return fp8_e4m3_decode(fp8_e4m3_encode(t.detach().to(torch.float32))).reshape(t.shape)
    return t.detach().to(_DT[dtype]).to(torch.float32)


# ----------------------------------------------------------------------------------------------
# FP8 E4M3 (torch.float8_e4m3fn, safetensors "F8_E4M3") and block-wise weight scales
#
# The format (OCP FP8 E4M3, the "fn" variant: finite, no infinities): sign bit, 4 exponent bits
# (bias 7), 3 mantissa bits. Exponent field 0: subnormal m * 2^-9; fields 1-15: (1 + m/8) * 2^(e-7),
# except S.1111.111 (0x7F, 0xFF), the only NaNs; so the largest value is 1.75 * 2^8 = 448 (0x7E).
# Written here from the format's definition because the Debian torch this runs on (1.13) has no
# float8 dtype; fp8_e4m3_encode rounds to nearest, ties to even, as c10's fp8e4m3fn_from_fp32_value
# (torch's .to(torch.float8_e4m3fn)) does below 464 (at and above 464 that one gives 448 up to the
# midpoint 464 and NaN past it; callers here never pass more than 448: DeepSeek's act_quant scales a
# block's largest value to exactly 448, transformers' Fp8Quantize clamps to +-448 first).

FP8_E4M3_MAX = 448.0


def fp8_e4m3_values():
    """The 256 code values as Python floats (exact), NaN for 0x7F and 0xFF."""
    out = []
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e, m = (code >> 3) & 0xF, code & 0x7
        if e == 15 and m == 7:
            out.append(float("nan"))
        elif e == 0:
            out.append(sign * math.ldexp(m, -9))
        else:
            out.append(sign * math.ldexp(8 + m, e - 10))
    return out


_FP8_TABLE = torch.tensor(fp8_e4m3_values(), dtype=torch.float32)
# the 127 finite non-negative values (codes 0x00-0x7E), ascending (float64: exact, and midpoints exact)
_FP8_POSITIVE = np.array(fp8_e4m3_values()[:127], dtype=np.float64)


def fp8_e4m3_decode(codes):
    """uint8 codes (numpy array) -> fp32 torch tensor of their values (exact)."""
    return _FP8_TABLE[torch.from_numpy(np.asarray(codes, dtype=np.uint8).astype(np.int64))]


def fp8_e4m3_encode(x):
    """fp32 torch tensor -> uint8 numpy codes, round to nearest, ties to the even code (the even
    mantissa); -0.0 keeps its sign bit. Refuses NaN and |x| > 448 (not representable)."""
    a = x.detach().to(torch.float32).numpy().astype(np.float64).reshape(-1)
    if np.isnan(a).any() or (np.abs(a) > FP8_E4M3_MAX).any():
        raise ValueError("F8_E4M3: value not representable (NaN or |x| > 448)")
    mag = np.abs(a)
    hi = np.clip(np.searchsorted(_FP8_POSITIVE, mag, side="left"), 0, 126)  # first value >= mag
    lo = np.clip(hi - 1, 0, 126)
    d_lo, d_hi = mag - _FP8_POSITIVE[lo], _FP8_POSITIVE[hi] - mag
    code = np.where(d_hi < d_lo, hi, lo)
    code = np.where((d_hi == d_lo) & (hi % 2 == 0), hi, code)  # a tie goes to the even code
    code = np.where(mag == _FP8_POSITIVE[hi], hi, code)
    code = code | np.where(np.signbit(a), 0x80, 0)
    return code.astype(np.uint8).reshape(tuple(x.shape))


def fp8_block_grid(shape, block):
    """(ceil(out / Bm), ceil(in / Bn)): the weight_scale_inv shape of an (out, in) weight."""
    (rows, cols), (bm, bn) = shape, block
    return (rows + bm - 1) // bm, (cols + bn - 1) // bn


def fp8_block_quantize(w, block):
    """(values, scale_inv) of an (out, in) fp32 weight quantized per Bm x Bn block, the blocks at the
    bottom / right edges cut short: scale = amax(|block|) / 448 (1 for an all-zero block), values =
    e4m3(block / scale) (round to nearest even), scale_inv = scale (fp32) -- DeepSeek-V3's
    inference/kernel.py act_quant_kernel recipe (s = max|x| / 448, y = x / s), applied to weight
    blocks; stored as `<name>` (F8_E4M3) and `<name>_scale_inv` (F32), so that w ~ values * scale_inv.
    values are fp32 holding exactly the e4m3 values."""
    bm, bn = block
    gm, gn = fp8_block_grid(w.shape, block)
    w = w.detach().to(torch.float32)
    values = torch.empty_like(w)
    scale_inv = torch.empty(gm, gn, dtype=torch.float32)
    for i in range(gm):
        for j in range(gn):
            blk = w[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn]
            amax = blk.abs().max()
            scale = amax / FP8_E4M3_MAX if float(amax) > 0 else torch.tensor(1.0)
            scaled = (blk / scale).clamp(-FP8_E4M3_MAX, FP8_E4M3_MAX)  # (amax / scale may round past 448)
            values[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn] = round_to(scaled, F8)
            scale_inv[i, j] = scale
    return values, scale_inv


def fp8_block_dequantize(values, scale_inv, block):
    """fp32(values) * scale_inv[i // Bm, j // Bn] in fp32 (transformers integrations/finegrained_fp8.py
    Fp8Dequantize.convert: quantized.to(float32) times the block's scale; DeepSeek-V3 inference/kernel.py
    weight_dequant_kernel: x.to(float32) * s with s = s_ptr[pid_m * cdiv(N, BLOCK) + pid_n] and the edge
    blocks masked, i.e. cut short). The caller rounds the result to the model dtype."""
    bm, bn = block
    rows, cols = values.shape
    if tuple(scale_inv.shape) != fp8_block_grid(values.shape, block):
        raise ValueError("weight_scale_inv shape %s for a %s weight with blocks %s" % (
            tuple(scale_inv.shape), tuple(values.shape), tuple(block)))
    s = scale_inv.repeat_interleave(bm, dim=0)[:rows].repeat_interleave(bn, dim=1)[:, :cols]
    return values.to(torch.float32) * s


# ----------------------------------------------------------------------------------------------
# configuration

LLAMA_LIKE = ("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM")
GEMMA = ("Gemma2ForCausalLM", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration")
# Gemma 1 (gemma-2b / gemma-7b / gemma-1.1): Llama's pre-norm layer with Gemma's (1 + w) norms, scaled embeddings and
# GeGLU, but none of Gemma 2 / 3's sandwich norms, softcaps, query_pre_attn_scalar or sliding layers: apart from GEMMA
GEMMA1 = "GemmaForCausalLM"
# Qwen3-VL-MoE (Qwen3-VL-30B-A3B / 235B-A22B) as released: Qwen3-VL's multimodal checkpoint with Qwen3-MoE's layers and
# the experts fused and transposed in one tensor per layer (see qwen3_vl_moe_expert)
QWEN3_VL_MOE = "Qwen3VLMoeForConditionalGeneration"
# Ministral 3 (Ministral-3-3B / 8B / 14B-Instruct-2512): a Mistral3ForConditionalGeneration whose text_config has
# model_type "ministral3" (transformers 5's Ministral3Config; its DEFAULTS key is that model_type, not an architecture)
MINISTRAL3 = "ministral3"
GLM4_MOE = "Glm4MoeForCausalLM"
# GLM-4.1V-9B-Thinking / GLM-4.6V-Flash and GLM-4.5V / GLM-4.6V (transformers 4.5x's save: text_config, the language
# model under model.language_model.*, the vision tower under model.visual.*, lm_head.weight): GLM-4-0414's and
# GLM-4.5's layers
GLM4V = "Glm4vForConditionalGeneration"
GLM4V_MOE = "Glm4vMoeForConditionalGeneration"
GLM_V = (GLM4V, GLM4V_MOE)
DEEPSEEK_V3 = "DeepseekV3ForCausalLM"
DEEPSEEK_V2 = "DeepseekV2ForCausalLM"
OLMOE = "OlmoeForCausalLM"
MINIMAX_M2 = "MiniMaxM2ForCausalLM"
ERNIE4_5 = "Ernie4_5ForCausalLM"
ERNIE4_5_MOE = "Ernie4_5_MoeForCausalLM"
ERNIE = (ERNIE4_5, ERNIE4_5_MOE)
# Hybrid linear-attention families (Gated DeltaNet layers beside gated full-attention layers, (1 + w) norms):
# Qwen3-Next (a MoE on every layer), Qwen3.5 (dense) and Qwen3.5-MoE, the latter two as their multimodal
# checkpoints (language model under model.language_model.*, text_config)
QWEN3_NEXT = "Qwen3NextForCausalLM"
QWEN3_5 = "Qwen3_5ForConditionalGeneration"
QWEN3_5_MOE = "Qwen3_5MoeForConditionalGeneration"
HYBRID = (QWEN3_NEXT, QWEN3_5, QWEN3_5_MOE)
# Phi-3.5-MoE (transformers 4.x's models/phimoe/modeling_phimoe.py, PhimoeForCausalLM; microsoft/Phi-3.5-MoE-instruct)
PHIMOE = "PhimoeForCausalLM"
# Llama 4 (meta-llama/Llama-4-Scout-17B-16E / Maverick-17B-128E as released: models/llama4/modeling_llama4.py,
# Llama4ForConditionalGeneration; its language model only, a Llama4ForCausalLM under language_model.*, beside the
# vision_model.* / multi_modal_projector.* the forward pass ignores)
LLAMA4 = "Llama4ForConditionalGeneration"
# Arcee's AFM-4.5B (models/arcee/modular_arcee.py, ArceeForCausalLM): Llama's layers with NemotronMLP's ungated MLP,
# down_proj(act(up_proj(x))) with hidden_act relu2 (no gate_proj)
ARCEE = "ArceeForCausalLM"
# rednote-hilab's dots.llm1 (models/dots1/modular_dots1.py, Dots1ForCausalLM): Qwen3's attention (per-head q/k norms
# before RoPE) with a sliding window on the layers from max_window_layers on, DeepSeek-V3's decoder layer, MoE and
# sigmoid router with its correction bias and expert groups
DOTS1 = "Dots1ForCausalLM"
# Tencent Hunyuan-A13B (models/hunyuan_v1_moe/modular_hunyuan_v1_moe.py, HunYuanMoEV1ForCausalLM): HunYuan-Dense's
# attention and RoPE, every layer a softmax top-k MoE (the router mlp.gate.wg in fp32, the top-k renormalised) plus an
# ungated shared_mlp, all of intermediate_size
HUNYUAN_MOE = "HunYuanMoEV1ForCausalLM"
# the Swiss AI Initiative's Apertus (swiss-ai/Apertus-8B-2509 / 70B-2509: models/apertus/modular_apertus.py,
# ApertusForCausalLM): Llama's layers (norms named attention_layernorm / feedforward_layernorm) with Qwen3's per-head
# q/k norms and an ungated MLP whose xIELU activation has per-layer parameters (see xielu)
APERTUS = "ApertusForCausalLM"
# Z.ai's GLM-4.7-Flash (zai-org/GLM-4.7-Flash: transformers 5's models/glm4_moe_lite/modular_glm4_moe_lite.py,
# Glm4MoeLiteForCausalLM): DeepSeek-V3's multi-head latent attention (Glm4MoeLiteAttention = DeepseekV3Attention) in
# GLM-4.5's decoder layer, MoE (sigmoid router with e_score_correction_bias, ungated shared experts) and RMSNorm; which
# layers are dense from mlp_layer_types (see glm4_moe_lite_layers)
GLM4_MOE_LITE = "Glm4MoeLiteForCausalLM"
# Google's Gemma 4 (google/gemma-4-e2b / -e4b / -31b / -26b-a4b and their -it models; docs/gemma4.md): transformers'
# models/gemma4/modeling_gemma4.py (generated from modular_gemma4.py) and configuration_gemma4.py.
# Gemma4ForCausalLM (config.json of model_type "gemma4_text", weights under model.*: what convert_gemma4_weights.py
# --text_only writes) and Gemma4ForConditionalGeneration (model_type "gemma4", the text numbers in text_config, the
# language model under model.language_model.* beside model.vision_tower.* / model.embed_vision.* (and the E models'
# audio tower), which the forward pass never reads): plain-w sandwich norms, a head size / kv-head count / RoPE per
# layer type (proportional RoPE on the full layers), q/k norms and a weightless v norm, score scale 1, per-layer
# embeddings (PLE), KV sharing, a scalar per layer, and a MoE beside the dense MLP; see gemma4_layers,
# gemma4_decoder_layer
GEMMA4_CAUSAL = "Gemma4ForCausalLM"
GEMMA4_COND = "Gemma4ForConditionalGeneration"
GEMMA4 = (GEMMA4_CAUSAL, GEMMA4_COND)
MOE = ("MixtralForCausalLM", "Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM", GLM4_MOE, DEEPSEEK_V3, DEEPSEEK_V2, OLMOE,
       MINIMAX_M2, ERNIE4_5_MOE, QWEN3_NEXT, QWEN3_5_MOE, QWEN3_VL_MOE, GLM4V_MOE, PHIMOE, LLAMA4, DOTS1, HUNYUAN_MOE,
       GLM4_MOE_LITE)
GLM = ("GlmForCausalLM", "Glm4ForCausalLM")
SMOLLM3 = "SmolLM3ForCausalLM"
GRANITE = "GraniteForCausalLM"
GRANITE_MOE = ("GraniteMoeForCausalLM", "GraniteMoeSharedForCausalLM")
# Granite 4.0 (models/granitemoehybrid/modular_granitemoehybrid.py, GraniteMoeHybridForCausalLM): attention layers
# (granite-4.0-micro / -1b / -350m: every layer) beside the Mamba-2 layers of granite-4.0-h-* (see mamba_mixer)
GRANITE_HYBRID = "GraniteMoeHybridForCausalLM"
# Tencent Hunyuan dense (Hunyuan-0.5B / 1.8B / 4B / 7B-Instruct: models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py,
# HunYuanDenseV1ForCausalLM): Llama's layers, q/k RMSNorms after RoPE, the alpha ("DynamicNTKAlpha") RoPE base
HUNYUAN_DENSE = "HunYuanDenseV1ForCausalLM"
# the two HunYuan V1 families (HUNYUAN_MOE above): the same attention (q/k norms after RoPE) and alpha RoPE
HUNYUAN = (HUNYUAN_DENSE, HUNYUAN_MOE)
# Liquid AI's LFM2 (LFM2-350M / 700M / 1.2B / 2.6B: models/lfm2/modeling_lfm2.py, Lfm2ForCausalLM): gated short
# convolutions beside attention layers (see lfm2_layers, lfm2_short_conv)
LFM2 = "Lfm2ForCausalLM"
# Liquid AI's LFM2-MoE (LFM2-8B-A1B: models/lfm2_moe/modular_lfm2_moe.py, Lfm2MoeForCausalLM): LFM2's layers with a
# sigmoid-routed MoE feed_forward after the first num_dense_layers (see lfm2_layers, lfm2_moe_route)
LFM2_MOE = "Lfm2MoeForCausalLM"
LFM2_FAMILY = (LFM2, LFM2_MOE)
# NVIDIA's Nemotron-H (Nemotron-H-8B / 4B, NVIDIA-Nemotron-Nano-9B-v2 / 12B-v2: models/nemotron_h/modular_nemotron_h.py,
# NemotronHForCausalLM): blocks of one mixer each (Mamba-2, attention without positions, or an ungated squared-ReLU MLP)
# behind one RMSNorm, named backbone.* (see nemotron_h_layers, nemotron_h_block)
NEMOTRON_H = "NemotronHForCausalLM"
GPT_OSS = "GptOssForCausalLM"
COHERE = ("CohereForCausalLM", "Cohere2ForCausalLM")
SEED_OSS = "SeedOssForCausalLM"
OLMO2 = "Olmo2ForCausalLM"
OLMO3 = "Olmo3ForCausalLM"
EXAONE4 = "Exaone4ForCausalLM"
# Multimodal checkpoints whose language model we run: its numbers in text_config, its weights
# under language_model.model.* (released) or model.language_model.* (transformers >= 4.52)
QWEN_VL = ("Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration",
           QWEN3_VL_MOE)
# Generic multimodal wrappers (models/llava/modeling_llava.py LlavaModel.__init__, models/internvl/modeling_internvl.py
# InternVLModel.__init__: `self.language_model = AutoModel.from_config(config.text_config)`): the language model is the
# text family text_config.model_type names, nothing of the wrapper's own (see wrapped_text_family)
LLAVA = "LlavaForConditionalGeneration"
INTERNVL = "InternVLForConditionalGeneration"
WRAPPERS = (LLAVA, INTERNVL)


def arch_applies(applies, spec):
    """Whether a per-family table entry (check_reference.FAMILY_CHECKS, golden_models.FAMILY_DESCRIPTIONS) applies to
    `spec`: `applies` is an architecture name, a tuple of them, or a test of the spec."""
    if callable(applies):
        return bool(applies(spec))
    if isinstance(applies, tuple):
        return spec.arch in applies
    return spec.arch == applies


# text_config.model_type -> the text family a wrapper runs (the text-only families whose forward pass it shares)
WRAPPED_TEXT = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM",
                "qwen3": "Qwen3ForCausalLM", "qwen3_moe": "Qwen3MoeForCausalLM"}
# text_config given without a model_type: models/llava/configuration_llava.py LlavaConfig.__init__ `text_config[
# "model_type"] = text_config.get("model_type", "llama")`; models/internvl/configuration_internvl.py InternVLConfig.
# __init__ the same with "qwen2"
WRAPPER_TEXT_DEFAULT = {LLAVA: "llama", INTERNVL: "qwen2"}
MULTIMODAL = (("Gemma3ForConditionalGeneration", "Mistral3ForConditionalGeneration") + QWEN_VL +
              (QWEN3_5, QWEN3_5_MOE) + GLM_V + (LLAMA4,) + WRAPPERS + (GEMMA4_COND,))
ARCHITECTURES = (LLAMA_LIKE + GEMMA + ("Phi3ForCausalLM",) + MOE + GLM + (SMOLLM3, GRANITE) + GRANITE_MOE +
                 (GRANITE_HYBRID, GPT_OSS,) + COHERE + MULTIMODAL[1:] + (SEED_OSS, OLMO2, OLMO3, EXAONE4, ERNIE4_5, GEMMA1,
                                                                  HUNYUAN_DENSE, LFM2, LFM2_MOE, NEMOTRON_H,
                                                                  ARCEE, APERTUS, GEMMA4_CAUSAL))

# Defaults of the keys this file reads, for the families whose fixtures leave keys out (from each
# config class's __init__; the Llama-like families keep the behaviour this file always had).
_GEMMA3_TEXT_DEFAULTS = dict(  # models/gemma3/configuration_gemma3.py Gemma3TextConfig.__init__
    num_attention_heads=8, num_key_value_heads=4, head_dim=256, hidden_activation="gelu_pytorch_tanh",
    rms_norm_eps=1e-6, rope_theta=1_000_000.0, rope_local_base_freq=10_000.0, rope_scaling=None,
    tie_word_embeddings=True, attention_bias=False, query_pre_attn_scalar=256, sliding_window=4096,
    final_logit_softcapping=None, attn_logit_softcapping=None, sliding_window_pattern=6,
    layer_types=None, use_bidirectional_attention=False)
DEFAULTS = {
    "Gemma2ForCausalLM": dict(  # models/gemma2/configuration_gemma2.py Gemma2Config.__init__
        num_attention_heads=8, num_key_value_heads=4, head_dim=256,
        hidden_activation="gelu_pytorch_tanh", rms_norm_eps=1e-6, rope_theta=10000.0,
        rope_scaling=None, tie_word_embeddings=True, attention_bias=False, query_pre_attn_scalar=256,
        sliding_window=4096, final_logit_softcapping=30.0, attn_logit_softcapping=50.0,
        layer_types=None, use_bidirectional_attention=False),
    "Gemma3ForCausalLM": _GEMMA3_TEXT_DEFAULTS,
    "Gemma3ForConditionalGeneration": _GEMMA3_TEXT_DEFAULTS,  # of its text_config
    # of its text_config: models/mistral/configuration_mistral.py MistralConfig.__init__
    "Mistral3ForConditionalGeneration": dict(
        num_key_value_heads=8, head_dim=None, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=10000.0,
        rope_scaling=None, tie_word_embeddings=False, sliding_window=4096, max_position_embeddings=131072),
    "Phi3ForCausalLM": dict(  # models/phi3/configuration_phi3.py Phi3Config.__init__
        num_key_value_heads=None, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=10000.0,
        rope_scaling=None, tie_word_embeddings=False, max_position_embeddings=4096,
        original_max_position_embeddings=4096, sliding_window=None, partial_rotary_factor=1.0),
    "MixtralForCausalLM": dict(  # models/mixtral/configuration_mixtral.py MixtralConfig.__init__
        num_key_value_heads=8, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=1e6,
        rope_scaling=None, tie_word_embeddings=False, sliding_window=None, num_local_experts=8,
        num_experts_per_tok=2),
    "Qwen2MoeForCausalLM": dict(  # models/qwen2_moe/configuration_qwen2_moe.py Qwen2MoeConfig.__init__
        num_key_value_heads=16, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=10000.0,
        rope_scaling=None, tie_word_embeddings=False, use_sliding_window=False, num_experts=60,
        num_experts_per_tok=4, norm_topk_prob=False, decoder_sparse_step=1, mlp_only_layers=None,
        moe_intermediate_size=1408, shared_expert_intermediate_size=5632),
    "Qwen3MoeForCausalLM": dict(  # models/qwen3_moe/configuration_qwen3_moe.py Qwen3MoeConfig.__init__
        num_key_value_heads=4, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=10000.0,
        rope_scaling=None, tie_word_embeddings=False, attention_bias=False, use_sliding_window=False,
        num_experts=128, num_experts_per_tok=8, norm_topk_prob=False, decoder_sparse_step=1,
        mlp_only_layers=None, moe_intermediate_size=768),
}
# The text_config of a LLaVA / InternVL wrapper (WRAPPERS) takes its own config class's defaults, keyed here by its
# model_type (CONFIG_MAPPING[model_type], as LlavaConfig / InternVLConfig build it): mistral MistralConfig's (above),
# llama models/llama/configuration_llama.py LlamaConfig.__init__ (num_attention_heads 32, num_key_value_heads None ->
# num_attention_heads, head_dim None -> hidden_size // num_attention_heads, rms_norm_eps 1e-6, rope_theta 10000,
# attention_bias / mlp_bias false, max_position_embeddings 2048), qwen2 models/qwen2/configuration_qwen2.py
# Qwen2Config.__init__ (num_attention_heads 32, num_key_value_heads 32, rms_norm_eps 1e-6, rope_theta 10000,
# use_sliding_window false, sliding_window 4096, max_position_embeddings 32768; no head_dim: hidden / heads), qwen3
# models/qwen3/configuration_qwen3.py Qwen3Config.__init__ (num_key_value_heads 32, head_dim 128, otherwise Qwen2's plus
# attention_bias false), qwen3_moe Qwen3MoeConfig's (above); tie_word_embeddings false in all five
DEFAULTS["mistral"] = dict(DEFAULTS["Mistral3ForConditionalGeneration"], num_attention_heads=32)
DEFAULTS["llama"] = dict(
    num_attention_heads=32, num_key_value_heads=None, head_dim=None, hidden_act="silu", rms_norm_eps=1e-6,
    rope_theta=10000.0, rope_scaling=None, tie_word_embeddings=False, attention_bias=False, mlp_bias=False,
    max_position_embeddings=2048)
DEFAULTS["qwen2"] = dict(
    num_attention_heads=32, num_key_value_heads=32, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=10000.0,
    rope_scaling=None, tie_word_embeddings=False, use_sliding_window=False, sliding_window=4096,
    max_position_embeddings=32768)
DEFAULTS["qwen3"] = dict(DEFAULTS["qwen2"], head_dim=128, attention_bias=False)
DEFAULTS["qwen3_moe"] = dict(DEFAULTS["Qwen3MoeForCausalLM"], num_attention_heads=32)
# models/ministral3/configuration_ministral3.py Ministral3Config (transformers 5; a Mistral3ForConditionalGeneration's
# text_config of model_type "ministral3" takes these in place of MistralConfig's): num_key_value_heads 8, head_dim 128
# (None -> hidden_size // num_attention_heads in __post_init__), hidden_act silu, max_position_embeddings 262144,
# rms_norm_eps 1e-5, tie_word_embeddings false, sliding_window None, rope_parameters None -> __post_init__'s YaRN x16
# from 16384 at 1e6 with llama_4_scaling_beta 0.1 (as written there: "type", no "rope_type", and a
# "max_position_embeddings" key that YaRN does not read). No rope_theta / rope_scaling keys (transformers 5 keeps
# the RoPE in rope_parameters: see Spec)
DEFAULTS[MINISTRAL3] = dict(
    num_key_value_heads=8, head_dim=128, hidden_act="silu", rms_norm_eps=1e-5, tie_word_embeddings=False,
    sliding_window=None, max_position_embeddings=262144,
    rope_parameters={"type": "yarn", "rope_theta": 1000000.0, "factor": 16.0, "original_max_position_embeddings": 16384,
                     "max_position_embeddings": 262144, "beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0,
                     "mscale": 1.0, "llama_4_scaling_beta": 0.1})
# models/glm/configuration_glm.py GlmConfig, models/glm4/configuration_glm4.py Glm4Config (the same)
# models/qwen2_5_vl/configuration_qwen2_5_vl.py Qwen2_5_VLTextConfig (Qwen2VLTextConfig alike),
# models/qwen3_vl/configuration_qwen3_vl.py Qwen3VLTextConfig
DEFAULTS["Qwen2VLForConditionalGeneration"] = DEFAULTS["Qwen2_5_VLForConditionalGeneration"] = dict(
    num_key_value_heads=8, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=1e6, rope_scaling=None,
    tie_word_embeddings=False, use_sliding_window=False, max_position_embeddings=32768)
DEFAULTS["Qwen3VLForConditionalGeneration"] = dict(
    num_key_value_heads=32, head_dim=128, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=5e6,
    rope_scaling=None, tie_word_embeddings=False, attention_bias=False, max_position_embeddings=128000)
# models/qwen3_vl_moe/configuration_qwen3_vl_moe.py Qwen3VLMoeTextConfig.__init__ (4.57; 5.x's fields the same numbers,
# rope_theta as rope_parameters' default, norm_topk_prob removed: `norm_topk_prob = AttributeError()`):
# num_key_value_heads 16, head_dim None (-> hidden_size // num_attention_heads), hidden_act silu, rms_norm_eps 1e-6,
# rope_theta 5e6, attention_bias false, max_position_embeddings 128000, decoder_sparse_step 1,
# moe_intermediate_size 1408, num_experts_per_tok 4, num_experts 60, mlp_only_layers None (-> []); tie_word_embeddings:
# Qwen3VLMoeConfig's (top level) false
DEFAULTS[QWEN3_VL_MOE] = dict(
    num_key_value_heads=16, head_dim=None, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=5e6, rope_scaling=None,
    tie_word_embeddings=False, attention_bias=False, max_position_embeddings=128000, decoder_sparse_step=1,
    moe_intermediate_size=1408, num_experts_per_tok=4, num_experts=60, norm_topk_prob=True, mlp_only_layers=None)
# models/gemma/configuration_gemma.py GemmaConfig.__init__ (4.39-4.57; 5.x's fields the same numbers without
# hidden_activation): num_attention_heads 16, num_key_value_heads 16, head_dim 256 (explicit: not hidden_size //
# num_attention_heads, gemma-7b's 16 x 256 != 3072), hidden_act "gelu_pytorch_tanh", hidden_activation None,
# max_position_embeddings 8192, rms_norm_eps 1e-6, tie_word_embeddings true, rope_theta 10000, attention_bias false
DEFAULTS[GEMMA1] = dict(
    num_attention_heads=16, num_key_value_heads=16, head_dim=256, hidden_act="gelu_pytorch_tanh",
    hidden_activation=None, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None, tie_word_embeddings=True,
    attention_bias=False, max_position_embeddings=8192, use_bidirectional_attention=False)
# models/smollm3/configuration_smollm3.py SmolLM3Config
DEFAULTS[SMOLLM3] = dict(
    num_key_value_heads=4, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=2e6, rope_scaling=None,
    tie_word_embeddings=True, attention_bias=False, use_sliding_window=False, sliding_window=None,
    no_rope_layers=None, no_rope_layer_interval=4, layer_types=None, max_position_embeddings=32768)
DEFAULTS["GlmForCausalLM"] = DEFAULTS["Glm4ForCausalLM"] = dict(
    num_key_value_heads=2, head_dim=128, partial_rotary_factor=0.5, hidden_act="silu", rms_norm_eps=1.5625e-07,
    rope_theta=10000.0, rope_scaling=None, tie_word_embeddings=False, attention_bias=True,
    max_position_embeddings=131072)
# models/granite/configuration_granite.py GraniteConfig (LlamaConfig's numbers, four multipliers of 1.0)
DEFAULTS[GRANITE] = dict(
    num_key_value_heads=None, head_dim=None, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=10000.0,
    rope_scaling=None, tie_word_embeddings=False, attention_bias=False, max_position_embeddings=2048,
    embedding_multiplier=1.0, attention_multiplier=1.0, residual_multiplier=1.0, logits_scaling=1.0)
# models/granitemoe/configuration_granitemoe.py GraniteMoeConfig (granitemoeshared's adds shared_intermediate_size)
DEFAULTS["GraniteMoeForCausalLM"] = DEFAULTS["GraniteMoeSharedForCausalLM"] = dict(
    DEFAULTS[GRANITE], num_local_experts=8, num_experts_per_tok=2, shared_intermediate_size=0)
# models/granitemoehybrid/configuration_granitemoehybrid.py GraniteMoeHybridConfig.__init__: GraniteConfig's numbers
# (num_key_value_heads None -> num_attention_heads, hidden_act silu, rms_norm_eps 1e-6, rope_theta 10000,
# tie_word_embeddings false, attention_bias false, max_position_embeddings 2048, the four multipliers 1.0) plus
# num_local_experts 8, num_experts_per_tok 2, shared_intermediate_size 1024, position_embedding_type None (no RoPE),
# layer_types None (`layers_block_type`: every layer "mamba") and the Mamba-2 mixer's mamba_n_heads 128, mamba_n_groups
# 1, mamba_d_state 256, mamba_d_head "auto" (mamba_expand x hidden_size / mamba_n_heads), mamba_d_conv 4, mamba_expand
# 2, mamba_chunk_size 256, mamba_conv_bias true, mamba_proj_bias false
DEFAULTS[GRANITE_HYBRID] = dict(
    DEFAULTS[GRANITE], num_local_experts=8, num_experts_per_tok=2, shared_intermediate_size=1024,
    position_embedding_type=None, layer_types=None, mamba_n_heads=128, mamba_n_groups=1, mamba_d_state=256,
    mamba_d_head="auto", mamba_d_conv=4, mamba_expand=2, mamba_chunk_size=256, mamba_conv_bias=True,
    mamba_proj_bias=False)
# models/hunyuan_v1_dense/configuration_hunyuan_v1_dense.py HunYuanDenseV1Config.__init__ (transformers 4.56):
# num_key_value_heads None -> num_attention_heads, hidden_act silu, max_position_embeddings 2048, rms_norm_eps 1e-5,
# tie_word_embeddings false, rope_theta 10000.0, rope_scaling None (5.x: rope_parameters None; `kwargs.get("rope_theta",
# 10000.0)`), attention_bias false, head_dim None (HunYuanDenseV1Attention's `getattr(config, "head_dim", ...)` then
# takes None: see hunyuan_rope, which refuses it). use_qk_norm is not a HunYuanDenseV1Config argument (a leftover of
# Tencent's remote code, kept as an attribute; transformers never reads it): default here true, as every release has it
DEFAULTS[HUNYUAN_DENSE] = dict(
    num_key_value_heads=None, hidden_act="silu", max_position_embeddings=2048, rms_norm_eps=1e-5,
    tie_word_embeddings=False, rope_theta=10000.0, rope_scaling=None, rope_parameters=None, attention_bias=False,
    head_dim=None, use_qk_norm=True)
# models/hunyuan_v1_moe/configuration_hunyuan_v1_moe.py HunYuanMoEV1Config.__init__ (transformers 4.56 / 4.57; 5.x's
# @strict dataclass fields the same numbers, num_experts typed int, rope_theta inside rope_parameters): the dense
# family's defaults of the shared keys, plus num_experts 1, moe_topk 1 (an int, or a list read at [layer_idx]),
# use_mixed_mlp_moe false and sliding_window None. Not read by transformers at all: use_mixed_mlp_moe (HunYuanMoEV1Moe
# always builds shared_mlp), moe_intermediate_size and num_shared_expert (experts and shared_mlp are HunYuanMoEV1MLP of
# intermediate_size), use_cla, attention_head_dim, use_qk_norm; see hunyuan_moe_keys for how they are held to
# transformers' reading
DEFAULTS[HUNYUAN_MOE] = dict(DEFAULTS[HUNYUAN_DENSE], num_experts=1, moe_topk=1)
# models/lfm2/configuration_lfm2.py Lfm2Config.__init__ (transformers 4.54 - 4.57): vocab_size 65536, hidden_size 2560,
# intermediate_size 12288 (`kwargs.get("block_ff_dim", intermediate_size)`: the original key wins), num_hidden_layers 32,
# num_attention_heads 32, num_key_value_heads 8, max_position_embeddings 128000, norm_eps 1e-5, tie_word_embeddings true
# (`kwargs.get("tie_embedding", ...)` wins), rope_theta 1e6 (`kwargs.get("theta", ...)` wins), conv_bias false,
# conv_L_cache 3, block_multiple_of 256, block_ffn_dim_multiplier 1.0, block_auto_adjust_ff_dim true, full_attn_idxs None
# and layer_types None (every layer "full_attention"); no hidden_act (Lfm2MLP hard-codes SiLU), no rope_scaling, no
# attention / MLP biases (bias=False hard-coded)
DEFAULTS[LFM2] = dict(
    vocab_size=65536, intermediate_size=12288, num_attention_heads=32, num_key_value_heads=8,
    max_position_embeddings=128000, norm_eps=1e-5, tie_word_embeddings=True, rope_theta=1000000.0, rope_scaling=None,
    rope_parameters=None, conv_bias=False, conv_L_cache=3, block_multiple_of=256, block_ffn_dim_multiplier=1.0,
    block_auto_adjust_ff_dim=True, full_attn_idxs=None, layer_types=None)
# models/lfm2_moe/configuration_lfm2_moe.py Lfm2MoeConfig.__init__ (LFM2-8B-A1B's shape): vocab_size 65536, hidden_size
# 2048, intermediate_size 7168 (the dense layers' Lfm2MoeMLP width, used as it stands), moe_intermediate_size 1792,
# num_hidden_layers 32, num_attention_heads 32, num_key_value_heads 8, max_position_embeddings 128000, norm_eps 1e-5,
# tie_word_embeddings true (`kwargs.get("tie_embedding", ...)` wins, as Lfm2Config's), conv_bias false, conv_L_cache 3,
# num_dense_layers 2, num_experts_per_tok 4, num_experts 32, use_expert_bias true, routed_scaling_factor 1.0,
# norm_topk_prob true, layer_types None (not derived from anything: Lfm2MoeDecoderLayer indexes it, see lfm2_layers);
# rope_theta: its default_theta 1e6 (4.57: the rope_theta argument; 5.x: rope_parameters). None of Lfm2Config's original
# keys (block_ff_dim, theta, full_attn_idxs, block_*) is read; no hidden_act (SiLU)
DEFAULTS[LFM2_MOE] = dict(
    vocab_size=65536, intermediate_size=7168, moe_intermediate_size=1792, num_attention_heads=32,
    num_key_value_heads=8, max_position_embeddings=128000, norm_eps=1e-5, tie_word_embeddings=True, rope_theta=1000000.0,
    rope_scaling=None, rope_parameters=None, conv_bias=False, conv_L_cache=3, num_dense_layers=2, num_experts_per_tok=4,
    num_experts=32, use_expert_bias=True, routed_scaling_factor=1.0, norm_topk_prob=True, layer_types=None,
    hidden_act="silu")
# models/glm4_moe/configuration_glm4_moe.py Glm4MoeConfig.__init__ (partial_rotary_factor: its
# kwargs.setdefault; head_dim: Glm4MoeAttention's getattr, hidden_size // num_attention_heads)
DEFAULTS[GLM4_MOE] = dict(
    num_key_value_heads=8, head_dim=None, partial_rotary_factor=0.5, hidden_act="silu", rms_norm_eps=1e-5,
    rope_theta=10000.0, rope_scaling=None, tie_word_embeddings=False, attention_bias=False,
    max_position_embeddings=131072, moe_intermediate_size=1408, num_experts_per_tok=8, n_shared_experts=1,
    n_routed_experts=128, routed_scaling_factor=1.0, n_group=1, topk_group=1, first_k_dense_replace=1,
    norm_topk_prob=True, use_qk_norm=False)
# models/glm4v/configuration_glm4v.py Glm4vTextConfig.__init__ (transformers 4.5x): num_key_value_heads 2, hidden_act
# silu, max_position_embeddings 32768, rms_norm_eps 1e-5, tie_word_embeddings false, rope_theta 10000, rope_scaling
# None. It has no head_dim, attention_bias nor partial_rotary_factor: Glm4vTextAttention.__init__ takes `self.head_dim =
# self.hidden_size // self.num_heads` (a head_dim key is not read: Spec refuses one that differs) and q/k/v_proj
# `bias=True` whatever attention_bias says; partial_rotary_factor reaches the config as a leftover kwarg
# (PretrainedConfig sets it as an attribute), and modeling_rope_utils' _compute_default_rope_parameters reads
# `getattr(config, "partial_rotary_factor", 1.0)`: absent, the whole head (the released configs write 0.5; with
# their mrope_section [8, 12, 12] and 1.0 apply_multimodal_rotary_pos_emb's split would not fit: Spec refuses sections
# that do not add up to rotary_dim / 2)
DEFAULTS[GLM4V] = dict(
    num_key_value_heads=2, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None,
    tie_word_embeddings=False, max_position_embeddings=32768)
# models/glm4v_moe/modular_glm4v_moe.py Glm4vMoeTextConfig.__init__ (transformers 4.56 / 4.57; 5.x's fields the same
# numbers): Glm4MoeConfig's with vocab_size 151424, max_position_embeddings 65536 and attention_bias TRUE;
# partial_rotary_factor 0.5 (a parameter of its __init__; 5.x: `kwargs.setdefault("partial_rotary_factor", 0.5)`);
# num_key_value_heads 8, rms_norm_eps 1e-5, rope_theta 10000, n_routed_experts 128, num_experts_per_tok 8,
# n_shared_experts 1, moe_intermediate_size 1408, routed_scaling_factor 1.0, n_group 1, topk_group 1,
# first_k_dense_replace 1, norm_topk_prob true. No head_dim parameter: Glm4vMoeTextAttention (Glm4Attention) takes
# `getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)` (the released configs list 128:
# 96 heads x 128 = the converter's llm_attn_query_size 12288 != hidden 4096); no use_qk_norm (5.x: `use_qk_norm =
# AttributeError()`) and no multi-token-prediction layer (5.x: `num_mtp_layers = AttributeError()`)
DEFAULTS[GLM4V_MOE] = dict(
    num_key_value_heads=8, head_dim=None, partial_rotary_factor=0.5, hidden_act="silu", rms_norm_eps=1e-5,
    rope_theta=10000.0, rope_scaling=None, tie_word_embeddings=False, attention_bias=True,
    max_position_embeddings=65536, moe_intermediate_size=1408, num_experts_per_tok=8, n_shared_experts=1,
    n_routed_experts=128, routed_scaling_factor=1.0, n_group=1, topk_group=1, first_k_dense_replace=1,
    norm_topk_prob=True)
# models/gpt_oss/configuration_gpt_oss.py GptOssConfig (its fields and __post_init__: layer_types
# None -> even layers slide; rope_parameters None -> this YaRN; the released config.json files spell
# it rope_scaling beside rope_theta). swiglu_alpha / swiglu_limit: the newer config's fields, the
# constants GptOssExperts.__init__ hard-codes (self.alpha = 1.702, self.limit = 7.0) in the
# transformers versions that lack them.
DEFAULTS[GPT_OSS] = dict(
    num_key_value_heads=8, head_dim=64, sliding_window=128, tie_word_embeddings=False, hidden_act="silu",
    max_position_embeddings=131072, rms_norm_eps=1e-5, rope_theta=150000.0,
    rope_scaling={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                  "original_max_position_embeddings": 4096},
    num_local_experts=128, num_experts_per_tok=4, attention_bias=True, layer_types=None,
    swiglu_alpha=1.702, swiglu_limit=7.0)
# models/cohere/configuration_cohere.py CohereConfig.__init__ (transformers 4.x; 5.x's CohereConfig has
# the same numbers except a rope_theta of 500000 (its default_theta) when config.json names none: the
# fixtures always name it). head_dim: CohereAttention (LlamaAttention in 5.x) takes
# getattr(config, "head_dim", hidden_size // num_attention_heads); CohereConfig has no such key.
DEFAULTS[COHERE[0]] = dict(
    num_key_value_heads=None, head_dim=None, hidden_act="silu", layer_norm_eps=1e-5, rope_theta=10000.0,
    rope_scaling=None, tie_word_embeddings=True, attention_bias=False, use_qk_norm=False, logit_scale=0.0625,
    max_position_embeddings=8192)
# models/cohere2/configuration_cohere2.py Cohere2Config.__init__ (4.x; modular_cohere2.py's Cohere2Config
# in 5.x): CohereConfig's numbers without use_qk_norm, plus sliding_window 4096 and
# sliding_window_pattern 4 (5.x: layer_types, built from a sliding_window_pattern kwarg, default 4)
DEFAULTS[COHERE[1]] = dict(
    {k: v for k, v in DEFAULTS[COHERE[0]].items() if k != "use_qk_norm"}, sliding_window=4096,
    sliding_window_pattern=4, layer_types=None)
# models/seed_oss/configuration_seed_oss.py SeedOssConfig: head_dim 128 (not hidden_size //
# num_attention_heads: that only when head_dim is None), attention_bias TRUE (q/k/v_proj),
# attention_out_bias false (o_proj), mlp_bias false; rope_theta 10000 (4.56's __init__ default; 5.x
# leaves it to rope_parameters' default; the released config.json names 1e7, the fixture names its own).
# attention_dropout / residual_dropout (0.1) act only in training: not read.
DEFAULTS[SEED_OSS] = dict(
    num_key_value_heads=8, head_dim=128, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=10000.0,
    rope_scaling=None, tie_word_embeddings=False, attention_bias=True, attention_out_bias=False, mlp_bias=False,
    max_position_embeddings=524288)
# models/deepseek_v3/configuration_deepseek_v3.py DeepseekV3Config.__init__ (4.5x). It sets
# self.head_dim = qk_rope_head_dim (the RoPE / YaRN dim); the q/k head is qk_nope + qk_rope, the v head
# v_head_dim: a head_dim key in config.json is not read here. topk_method / scoring_func /
# moe_layer_freq: keys of DeepSeek's own configs that DeepseekV3Config does not read (HF always runs
# the sigmoid noaux_tc router on every layer from first_k_dense_replace on); other values are refused.
DEFAULTS[DEEPSEEK_V3] = dict(
    num_attention_heads=128, num_key_value_heads=128, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=10000.0,
    rope_scaling=None, rope_interleave=True, tie_word_embeddings=False, attention_bias=False,
    max_position_embeddings=4096, moe_intermediate_size=2048, num_experts_per_tok=8, n_shared_experts=1,
    n_routed_experts=256, routed_scaling_factor=2.5, n_group=8, topk_group=4, first_k_dense_replace=3,
    norm_topk_prob=True, q_lora_rank=1536, kv_lora_rank=512, qk_rope_head_dim=64, v_head_dim=128,
    qk_nope_head_dim=128, topk_method="noaux_tc", scoring_func="sigmoid", moe_layer_freq=1)
# models/deepseek_v2/modular_deepseek_v2.py DeepseekV2Config.__init__ (a LlamaConfig: num_key_value_heads None ->
# num_attention_heads, rope_theta 1e4, max_position_embeddings 2048; it sets self.head_dim = qk_rope_head_dim, so a
# head_dim key in config.json (transformers 5 writes one) is the rotary width, not the q/k head: not read here).
# norm_topk_prob is kept "for backward compatibility" and never read by DeepseekV2Moe; scoring_func and
# moe_layer_freq are keys of DeepSeek's own configuration_deepseek.py (remote code) that transformers does not read
# (it always takes the softmax, and DeepseekV2Moe on every layer from first_k_dense_replace on): other values,
# where DeepSeek's own modeling_deepseek.py would compute something else, are refused (see Spec)
DEFAULTS[DEEPSEEK_V2] = dict(
    num_key_value_heads=None, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
    rope_parameters=None, tie_word_embeddings=False, attention_bias=False, max_position_embeddings=2048,
    first_k_dense_replace=0, kv_lora_rank=512, q_lora_rank=1536, n_group=None, n_routed_experts=64,
    n_shared_experts=2, qk_nope_head_dim=128, qk_rope_head_dim=64, routed_scaling_factor=1.0, topk_group=None,
    topk_method="greedy", norm_topk_prob=False, v_head_dim=128, num_experts_per_tok=None, moe_intermediate_size=1407,
    scoring_func="softmax", moe_layer_freq=1)
# models/olmo2/configuration_olmo2.py Olmo2Config.__init__ (4.47-4.5x; modular_olmo2.py's Olmo2Config(OlmoConfig)
# alike): num_key_value_heads None -> num_attention_heads, rms_norm_eps 1e-5, rope_theta 10000, attention_bias
# false, tie_word_embeddings false, max_position_embeddings 2048. No head_dim key: Olmo2Attention.__init__ takes
# getattr(config, "head_dim", hidden_size // num_attention_heads)
DEFAULTS[OLMO2] = dict(
    num_key_value_heads=None, head_dim=None, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=10000.0,
    rope_scaling=None, tie_word_embeddings=False, attention_bias=False, max_position_embeddings=2048)
# models/olmo3/configuration_olmo3.py Olmo3Config.__init__ (4.57; 5.x's fields alike): num_key_value_heads None ->
# num_attention_heads, rms_norm_eps 1e-5, rope_theta 500000 (5.x: its default_theta, in rope_parameters),
# rope_scaling None, attention_bias false, tie_word_embeddings false, max_position_embeddings 2048, sliding_window
# 4096, layer_types None -> "sliding_attention" if (i + 1) % 4 != 0 else "full_attention" (see Spec). No head_dim key
# (Olmo3Attention = Olmo2Attention: hidden_size // num_attention_heads). rope_parameters: transformers 5's spelling,
# a dict per layer type (see olmo3_rope_parameters)
DEFAULTS[OLMO3] = dict(
    num_key_value_heads=None, head_dim=None, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=500000.0,
    rope_scaling=None, rope_parameters=None, tie_word_embeddings=False, attention_bias=False,
    max_position_embeddings=2048, sliding_window=4096, layer_types=None)
# models/olmoe/configuration_olmoe.py OlmoeConfig.__init__: num_key_value_heads None -> num_attention_heads,
# hidden_act silu, rms_norm_eps 1e-5, rope_theta 10000, rope_scaling None, attention_bias false, clip_qkv None,
# num_experts 64, num_experts_per_tok 8, norm_topk_prob false, tie_word_embeddings false, max_position_embeddings
# 4096. No head_dim key (OlmoeAttention(LlamaAttention): getattr(config, "head_dim", hidden_size // heads))
DEFAULTS[OLMOE] = dict(
    num_key_value_heads=None, head_dim=None, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=10000.0,
    rope_scaling=None, attention_bias=False, clip_qkv=None, num_experts=64, num_experts_per_tok=8,
    norm_topk_prob=False, tie_word_embeddings=False, max_position_embeddings=4096)
# models/minimax_m2/configuration_minimax_m2.py MiniMaxM2Config.__init__: num_key_value_heads 8, head_dim 128 (explicit:
# MiniMax-M2 has 48 heads of 128 with hidden_size 3072), hidden_act silu, rms_norm_eps 1e-6, tie_word_embeddings false,
# num_local_experts 256, num_experts_per_tok 8, max_position_embeddings 196608; rope_theta: its default_theta 5e6.
# rotary_dim: convert_rope_params_to_dict's default head_dim // 2 (see Spec). The keys of MiniMax's own remote-code
# configuration_minimax_m2.py that transformers does not read (it always runs what these defaults say: q/k norms over
# the whole projection, a sigmoid router with the correction bias, no shared expert, softmax attention on every layer)
# take those values when absent; other values are refused (see Spec)
DEFAULTS[MINIMAX_M2] = dict(
    num_key_value_heads=8, head_dim=128, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=5_000_000.0,
    rope_scaling=None, rope_parameters=None, tie_word_embeddings=False, num_local_experts=256, num_experts_per_tok=8,
    max_position_embeddings=196608, rotary_dim=None, partial_rotary_factor=None, use_qk_norm=True,
    qk_norm_type="per_layer", scoring_func="sigmoid", use_routing_bias=True, shared_intermediate_size=0,
    attn_type_list=None)
# models/exaone4/modular_exaone4.py Exaone4Config (5.x fields; 4.54's configuration_exaone4.py Exaone4Config.__init__
# the same numbers): num_key_value_heads 32, hidden_act silu, max_position_embeddings 2048, rms_norm_eps 1e-5,
# tie_word_embeddings false, sliding_window 4096, sliding_window_pattern 4, layer_types None; rope_theta 10000 (4.54's
# __init__ default; 5.x: rope_parameters' default). No head_dim key: Exaone4Attention.__init__ takes getattr(config,
# "head_dim", hidden_size // num_attention_heads). No attention_bias / mlp_bias keys: Exaone4Attention's q/k/v/o_proj
# and Exaone4MLP (Olmo2MLP = LlamaMLP's without bias) are bias-free (a true value is refused, see Spec)
DEFAULTS[EXAONE4] = dict(
    num_key_value_heads=32, head_dim=None, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None,
    rope_parameters=None, tie_word_embeddings=False, max_position_embeddings=2048, sliding_window=4096,
    sliding_window_pattern=4, layer_types=None, attention_bias=False)
# models/ernie4_5/configuration_ernie4_5.py Ernie4_5Config (ERNIE-4.5-0.3B): num_key_value_heads 2 (None ->
# num_attention_heads), hidden_act silu, max_position_embeddings 131072, rms_norm_eps 1e-5, tie_word_embeddings true,
# use_bias false, head_dim 128 (__post_init__: None -> hidden_size // num_attention_heads, as Spec's `or`); rope_theta
# 500000 (4.54's __init__ default; 5.x: default_theta, in rope_parameters)
DEFAULTS[ERNIE4_5] = dict(
    num_attention_heads=16, num_key_value_heads=2, head_dim=128, hidden_act="silu", rms_norm_eps=1e-5,
    rope_theta=500000.0, rope_scaling=None, rope_parameters=None, tie_word_embeddings=True, use_bias=False,
    max_position_embeddings=131072)
# models/ernie4_5_moe/configuration_ernie4_5_moe.py Ernie4_5_MoeConfig.__init__ (ERNIE-4.5-21B-A3B): num_attention_heads
# 20, num_key_value_heads 4, hidden_act silu, max_position_embeddings 131072, rms_norm_eps 1e-5, tie_word_embeddings
# true, use_bias false, rope_theta 500000 (4.54's __init__ default; 5.x: default_theta), moe_intermediate_size 1536,
# moe_k 6, moe_num_experts 64, moe_num_shared_experts 2, moe_layer_start_index 1, moe_layer_end_index -1 (__init__:
# -1 -> num_hidden_layers - 1), moe_layer_interval 1, moe_norm_min 1e-12. No head_dim key: Ernie4_5_MoeAttention(
# LlamaAttention) takes getattr(config, "head_dim", hidden_size // num_attention_heads). The keys of Baidu's own
# configs that transformers does not read (moe_use_aux_free, moe_gate, moe_capacity, use_rmsnorm, ...): see Spec
DEFAULTS[ERNIE4_5_MOE] = dict(
    num_attention_heads=20, num_key_value_heads=4, head_dim=None, hidden_act="silu", rms_norm_eps=1e-5,
    rope_theta=500000.0, rope_scaling=None, rope_parameters=None, tie_word_embeddings=True, use_bias=False,
    max_position_embeddings=131072, moe_intermediate_size=1536, moe_k=6, moe_num_experts=64, moe_num_shared_experts=2,
    moe_layer_start_index=1, moe_layer_end_index=-1, moe_layer_interval=1, moe_norm_min=1e-12, moe_use_aux_free=True,
    moe_gate="topk", use_rmsnorm=True)
# models/qwen3_next/configuration_qwen3_next.py Qwen3NextConfig (5.x fields; 4.57's __init__ the same numbers):
# num_attention_heads 16, num_key_value_heads 2, head_dim 256, hidden_act silu, rms_norm_eps 1e-6, tie_word_embeddings
# false, attention_bias false, linear_conv_kernel_dim 4, linear_key_head_dim / linear_value_head_dim 128,
# linear_num_key_heads 16, linear_num_value_heads 32, decoder_sparse_step 1, moe_intermediate_size 512,
# shared_expert_intermediate_size 512, num_experts_per_tok 10, num_experts 512, norm_topk_prob true, mlp_only_layers
# None -> [], layer_types None -> from full_attention_interval (a kwarg, default 4; see hybrid_layer_types);
# partial_rotary_factor 0.25 (`kwargs.setdefault("partial_rotary_factor", 0.25)  # assign default for BC`); rope_theta
# 10000 (4.57's __init__ default; 5.x: default_theta, in rope_parameters). max_position_embeddings 32768.
DEFAULTS[QWEN3_NEXT] = dict(
    num_attention_heads=16, num_key_value_heads=2, head_dim=256, hidden_act="silu", rms_norm_eps=1e-6,
    rope_theta=10000.0, rope_scaling=None, rope_parameters=None, partial_rotary_factor=0.25, tie_word_embeddings=False,
    attention_bias=False, max_position_embeddings=32768, linear_conv_kernel_dim=4, linear_key_head_dim=128,
    linear_value_head_dim=128, linear_num_key_heads=16, linear_num_value_heads=32, decoder_sparse_step=1,
    moe_intermediate_size=512, shared_expert_intermediate_size=512, num_experts_per_tok=10, num_experts=512,
    norm_topk_prob=True, mlp_only_layers=None, layer_types=None, full_attention_interval=4, attn_output_gate=True)
# models/qwen3_5/modular_qwen3_5.py Qwen3_5TextConfig(Qwen3NextConfig): num_key_value_heads 4, intermediate_size 12288,
# the MoE keys removed (AttributeError: a dense Qwen3_5MLP on every layer); Qwen3_5Config(Qwen3VLConfig):
# tie_word_embeddings false at the top level. models/qwen3_5_moe/modular_qwen3_5_moe.py Qwen3_5MoeTextConfig
# (Qwen3NextConfig): num_experts_per_tok 8, num_experts 256, intermediate_size / decoder_sparse_step / norm_topk_prob /
# mlp_only_layers removed (a Qwen3_5MoeSparseMoeBlock on every layer, its router always renormalising)
DEFAULTS[QWEN3_5] = dict(DEFAULTS[QWEN3_NEXT], num_key_value_heads=4)
DEFAULTS[QWEN3_5_MOE] = dict(DEFAULTS[QWEN3_NEXT], num_experts_per_tok=8, num_experts=256)
for _key in ("decoder_sparse_step", "moe_intermediate_size", "shared_expert_intermediate_size", "num_experts_per_tok",
             "num_experts", "norm_topk_prob", "mlp_only_layers"):
    del DEFAULTS[QWEN3_5][_key]
for _key in ("decoder_sparse_step", "norm_topk_prob", "mlp_only_layers"):
    del DEFAULTS[QWEN3_5_MOE][_key]
# models/phimoe/configuration_phimoe.py PhimoeConfig.__init__ (transformers 4.46-4.57): num_key_value_heads 8 (None ->
# num_attention_heads), hidden_act silu, max_position_embeddings 4096 * 32, rms_norm_eps 1e-5 (the LayerNorms' eps),
# tie_word_embeddings false, rope_theta 1e6, rope_scaling None, sliding_window None, num_experts_per_tok 2,
# num_local_experts 16, router_jitter_noise 0.01, input_jitter_noise 0.0 (training only), attention_bias false,
# lm_head_bias false. No head_dim key: PhimoeAttention.__init__ takes hidden_size // num_attention_heads (see Spec)
DEFAULTS[PHIMOE] = dict(
    num_key_value_heads=8, hidden_act="silu", max_position_embeddings=4096 * 32, rms_norm_eps=1e-5,
    tie_word_embeddings=False, rope_theta=1e6, rope_scaling=None, sliding_window=None, num_experts_per_tok=2,
    num_local_experts=16, router_jitter_noise=0.01, input_jitter_noise=0.0, attention_bias=False, lm_head_bias=False)
# models/llama4/configuration_llama4.py Llama4TextConfig (the text_config of Llama4ForConditionalGeneration; 4.51-4.57's
# __init__ and 5.x's dataclass fields the same numbers): num_attention_heads 40, num_key_value_heads 8, head_dim 128
# (__post_init__: None -> hidden_size // num_attention_heads), hidden_act silu, max_position_embeddings 4096 * 32,
# rms_norm_eps 1e-5, tie_word_embeddings false, intermediate_size 8192 (each expert's and the shared expert's width),
# intermediate_size_mlp 16384 (the dense layers'), num_experts_per_tok 1, num_local_experts 16, moe_layers None
# (__post_init__: range(interleave_moe_layer_step - 1, num_hidden_layers, interleave_moe_layer_step)),
# interleave_moe_layer_step 1, use_qk_norm true, no_rope_layers None (__post_init__: `no_rope_layers if no_rope_layers
# else [int((i + 1) % no_rope_layer_interval != 0) ...]`: 1 = RoPE, 0 = NoPE), no_rope_layer_interval 4,
# attention_chunk_size 8192, layer_types None (__post_init__: "chunked_attention" where no_rope_layers[i] is 1, else
# "full_attention"), attn_temperature_tuning true (the release writes 4: truthy), floor_scale 8192, attn_scale 0.1,
# attention_bias false; rope_theta 500000 (its default_theta; 4.51's __init__ default too), rope_scaling None.
# Llama4Config (the top level): tie_word_embeddings false
DEFAULTS[LLAMA4] = dict(
    num_attention_heads=40, num_key_value_heads=8, head_dim=128, hidden_act="silu", max_position_embeddings=4096 * 32,
    rms_norm_eps=1e-5, tie_word_embeddings=False, intermediate_size=8192, intermediate_size_mlp=16384,
    num_experts_per_tok=1, num_local_experts=16, moe_layers=None, interleave_moe_layer_step=1, use_qk_norm=True,
    no_rope_layers=None, no_rope_layer_interval=4, attention_chunk_size=8192, layer_types=None,
    attn_temperature_tuning=True, floor_scale=8192, attn_scale=0.1, attention_bias=False, rope_theta=500000.0,
    rope_scaling=None, rope_parameters=None)
# models/nemotron_h/configuration_nemotron_h.py NemotronHConfig (the numbers of the fields read here; NVIDIA's remote
# configuration_nemotron_h.py of the 4.48-era releases stores its __init__ arguments under these attribute names, which
# the releases' config.json files hold): num_attention_heads 32, num_key_value_heads 8, attention_bias / mlp_bias / use_bias /
# mamba_proj_bias false, mlp_hidden_act relu2, mamba_hidden_act silu, ssm_state_size 128, mamba_num_heads 128,
# mamba_head_dim 64, n_groups 8, conv_kernel 4, expand 2 (not read by the mixer: its width is mamba_num_heads x
# mamba_head_dim), time_step_min 0.001, time_step_max 0.1 / time_step_floor 1e-4 (dt_bias's init only),
# time_step_limit (0, inf), use_conv_bias true, chunk_size 128, layer_norm_epsilon 1e-5, tie_word_embeddings false;
# the MoE blocks' n_routed_experts 8, n_shared_experts 1, moe_intermediate_size / moe_shared_expert_intermediate_size
# 7688, moe_latent_size None, num_experts_per_tok 2, routed_scaling_factor 1.0, n_group / topk_group 1, norm_topk_prob
# true. No head_dim here: see nemotron_h_layers
DEFAULTS[NEMOTRON_H] = dict(
    num_attention_heads=32, num_key_value_heads=8, attention_bias=False, mlp_bias=False, use_bias=False,
    mamba_proj_bias=False, mlp_hidden_act="relu2", mamba_hidden_act="silu", ssm_state_size=128, mamba_num_heads=128,
    mamba_head_dim=64, n_groups=8, conv_kernel=4, expand=2, time_step_min=0.001, time_step_max=0.1,
    time_step_floor=1e-4, time_step_limit=(0.0, float("inf")), use_conv_bias=True, chunk_size=128,
    layer_norm_epsilon=1e-5, tie_word_embeddings=False, n_routed_experts=8, n_shared_experts=1,
    moe_intermediate_size=7688, moe_shared_expert_intermediate_size=7688, moe_latent_size=None, num_experts_per_tok=2,
    routed_scaling_factor=1.0, n_group=1, topk_group=1, norm_topk_prob=True)
# models/arcee/modular_arcee.py ArceeConfig(LlamaConfig).__init__ (transformers 4.53 - 4.57; 5.x's
# configuration_arcee.py fields the same numbers, rope_theta as rope_parameters' default): num_key_value_heads None ->
# num_attention_heads, hidden_act relu2, max_position_embeddings 4096, rms_norm_eps 1e-5, tie_word_embeddings false,
# rope_theta 10000, rope_scaling None, attention_bias false, mlp_bias false, head_dim None (-> hidden_size //
# num_attention_heads); no pretraining_tp (`del self.pretraining_tp`)
DEFAULTS[ARCEE] = dict(
    num_key_value_heads=None, head_dim=None, hidden_act="relu2", max_position_embeddings=4096, rms_norm_eps=1e-5,
    tie_word_embeddings=False, rope_theta=10000.0, rope_scaling=None, attention_bias=False, mlp_bias=False)
# models/apertus/configuration_apertus.py ApertusConfig.__init__ (transformers 4.56 - 4.57; 5.x's dataclass fields the
# same numbers, the RoPE as rope_parameters): num_key_value_heads None -> num_attention_heads, hidden_act xielu,
# max_position_embeddings 65536, rms_norm_eps 1e-5, tie_word_embeddings false, attention_bias false, rope_theta
# 12000000.0 and rope_scaling {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192,
# "low_freq_factor": 1.0, "high_freq_factor": 4.0} when the keys are absent (5.x: rope_parameters None -> the same dict
# with rope_theta inside it). No head_dim argument: a head_dim key stays an attribute that ApertusAttention's
# getattr(config, "head_dim", hidden_size // num_attention_heads) reads. The release's qk_norm (true), post_norm (false)
# and mlp_bias (false) are keys of Swiss AI's own code that ApertusConfig does not read (the defaults here are the
# readings transformers always takes: q/k norms, pre-norm layers, no MLP biases)
DEFAULTS[APERTUS] = dict(
    num_key_value_heads=None, head_dim=None, hidden_act="xielu", max_position_embeddings=65536, rms_norm_eps=1e-5,
    tie_word_embeddings=False, rope_theta=12000000.0, rope_parameters=None, attention_bias=False, qk_norm=True,
    post_norm=False, rope_scaling={"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192,
                                   "low_freq_factor": 1.0, "high_freq_factor": 4.0})
# models/dots1/configuration_dots1.py Dots1Config.__init__ (transformers 4.53 - 4.57; 5.x's dataclass fields the same
# numbers, rope_theta as rope_parameters' default): num_key_value_heads 32, hidden_act silu, max_position_embeddings
# 2048, rms_norm_eps 1e-6, tie_word_embeddings false, rope_theta 10000, rope_scaling None, attention_bias false,
# moe_intermediate_size 1408, n_shared_experts None and n_routed_experts None (Dots1MoE would fail on them: refused,
# see Spec), n_group 1, topk_group 1, num_experts_per_tok None, first_k_dense_replace 0, norm_topk_prob FALSE (the
# release says true), routed_scaling_factor 1.0, sliding_window 4096, max_window_layers 62, layer_types None (->
# "sliding_attention" where sliding_window is not None and i >= max_window_layers: dots1_layer_sliding). No head_dim
# argument: a head_dim key stays an attribute (PretrainedConfig's leftover kwargs) and Dots1Attention (Qwen3Attention)
# takes getattr(config, "head_dim", hidden_size // num_attention_heads). scoring_func: a key of the release that
# Dots1Config does not read (Dots1TopkRouter always takes the sigmoid; another value is refused, as DeepSeek-V3's)
DEFAULTS[DOTS1] = dict(
    num_key_value_heads=32, head_dim=None, hidden_act="silu", max_position_embeddings=2048, rms_norm_eps=1e-6,
    tie_word_embeddings=False, rope_theta=10000.0, rope_scaling=None, attention_bias=False,
    moe_intermediate_size=1408, n_shared_experts=None, n_routed_experts=None, n_group=1, topk_group=1,
    num_experts_per_tok=None, first_k_dense_replace=0, norm_topk_prob=False, routed_scaling_factor=1.0,
    sliding_window=4096, max_window_layers=62, layer_types=None, scoring_func="sigmoid")
# models/glm4_moe_lite/configuration_glm4_moe_lite.py Glm4MoeLiteConfig (transformers 5's dataclass fields;
# GLM-4.7-Flash's shape): vocab_size 154880, intermediate_size 10240, moe_intermediate_size 1536, num_hidden_layers 47,
# num_attention_heads 20, num_key_value_heads 20, n_shared_experts 1, n_routed_experts 64, routed_scaling_factor 1.8,
# kv_lora_rank 512, q_lora_rank 768, qk_rope_head_dim 64, v_head_dim 256, qk_nope_head_dim 192, n_group 1, topk_group
# 1, num_experts_per_tok 4, norm_topk_prob true, hidden_act silu, max_position_embeddings 202752, rms_norm_eps 1e-5,
# tie_word_embeddings false, rope_parameters None (PreTrainedConfig's standardization: {"rope_theta": a top-level
# rope_theta, else its default_theta 10000, "rope_type": "default"}), rope_interleave true, mlp_layer_types None
# (__post_init__: ["dense"] + ["sparse"] * (num_hidden_layers - 1)), attention_bias false. Its attribute_map reads
# head_dim as qk_rope_head_dim and num_local_experts as n_routed_experts. It has no first_k_dense_replace,
# num_nextn_predict_layers, topk_method, scoring_func nor moe_layer_freq (keys of the release or of DeepSeek's configs,
# left as attributes and never read: Spec's MLA keys and glm4_moe_lite_layers hold them to transformers' reading)
DEFAULTS[GLM4_MOE_LITE] = dict(
    vocab_size=154880, intermediate_size=10240, moe_intermediate_size=1536, num_attention_heads=20,
    num_key_value_heads=20, n_shared_experts=1, n_routed_experts=64, routed_scaling_factor=1.8, kv_lora_rank=512,
    q_lora_rank=768, qk_rope_head_dim=64, v_head_dim=256, qk_nope_head_dim=192, n_group=1, topk_group=1,
    num_experts_per_tok=4, norm_topk_prob=True, hidden_act="silu", max_position_embeddings=202752, rms_norm_eps=1e-5,
    tie_word_embeddings=False, rope_theta=10000.0, rope_scaling=None, rope_parameters=None, rope_interleave=True,
    mlp_layer_types=None, attention_bias=False, head_dim=None, first_k_dense_replace=None, topk_method="noaux_tc",
    scoring_func="sigmoid", moe_layer_freq=1)
# models/gemma4/configuration_gemma4.py Gemma4TextConfig (@008e574's dataclass fields; Gemma4ForConditionalGeneration's
# text_config alike): num_attention_heads 8, num_key_value_heads 4, head_dim 256, hidden_activation gelu_pytorch_tanh,
# max_position_embeddings 131072, rms_norm_eps 1e-6, tie_word_embeddings true (Gemma4Config's top level true too),
# rope_parameters None (__post_init__: {sliding_attention: default at 1e4, full_attention: proportional,
# partial_rotary_factor 0.25, at 1e6}: GEMMA4_DEFAULT_ROPE), attention_bias false, sliding_window 512, layer_types None
# (__post_init__: sliding unless (i + 1) % 6 == 0, the last layer forced to full), final_logit_softcapping None,
# use_bidirectional_attention None, vocab_size_per_layer_input 262144, hidden_size_per_layer_input 256 (a config
# without the key has per-layer embeddings), attention_k_eq_v false, num_kv_shared_layers 0, enable_moe_block false,
# use_double_wide_mlp false, num_experts / top_k_experts / moe_intermediate_size None. global_head_dim and
# num_global_key_value_heads: the flat keys modeling_gemma4.py reads (config.global_head_dim,
# config.num_global_key_value_heads); @008e574's __post_init__ pops them from the kwargs with the defaults 512 and None
# (and turns them into per_layer_config), the older flat Gemma4TextConfig (read from an indexed copy, docs/gemma4.md
# n.v.) held them as fields: the same 512 / None here. per_layer_config: absent (see gemma4_layers)
GEMMA4_DEFAULT_ROPE = {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                       "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                          "rope_theta": 1000000.0}}
DEFAULTS[GEMMA4_CAUSAL] = DEFAULTS[GEMMA4_COND] = dict(
    num_attention_heads=8, num_key_value_heads=4, head_dim=256, hidden_activation="gelu_pytorch_tanh",
    max_position_embeddings=131072, rms_norm_eps=1e-6, tie_word_embeddings=True, rope_parameters=None,
    attention_bias=False, sliding_window=512, layer_types=None, final_logit_softcapping=None,
    use_bidirectional_attention=None, vocab_size_per_layer_input=262144, hidden_size_per_layer_input=256,
    attention_k_eq_v=False, num_kv_shared_layers=0, enable_moe_block=False, use_double_wide_mlp=False,
    num_experts=None, top_k_experts=None, moe_intermediate_size=None, global_head_dim=512,
    num_global_key_value_heads=None, per_layer_config=None)
# DeepseekV3Attention.__init__: q_a_layernorm = DeepseekV3RMSNorm(config.q_lora_rank) and kv_a_layernorm =
# DeepseekV3RMSNorm(self.kv_lora_rank) take DeepseekV3RMSNorm.__init__'s default eps=1e-6, not
# config.rms_norm_eps (which only input_layernorm, post_attention_layernorm and model.norm take)
MLA_LATENT_NORM_EPS = 1e-6


def _getter(arch, c):
    """key -> c[key] when present (an explicit null stays null: absent and null differ, e.g.
    Gemma 2's softcaps), else the family default; a key with neither is an error."""
    defaults = DEFAULTS.get(arch, {})

    def get(key, *fallback):
        if key in c:
            return c[key]
        if key in defaults:
            return defaults[key]
        if fallback:
            return fallback[0]
        raise KeyError("config.json has no %r and %s has no default for it here" % (key, arch))
    return get


def wrapped_text_family(cfg):
    """The text_config model_type of a LLaVA / InternVL wrapper (WRAPPERS), whose language model is that text family
    unchanged: models/llava/configuration_llava.py LlavaConfig.__init__ turns a text_config dict into
    CONFIG_MAPPING[text_config.get("model_type", "llama")] (InternVLConfig: "qwen2"), and LlavaModel.__init__ /
    InternVLModel.__init__ build `AutoModel.from_config(config.text_config)`; LlavaForConditionalGeneration /
    InternVLForConditionalGeneration add only `lm_head = nn.Linear(text_config.hidden_size, text_config.vocab_size,
    bias=False)` (forward: lm_head of the language model's last hidden state, no scale, no softcap). A config without
    text_config would be the wrapper's default LlamaConfig() / Qwen2Config() (a 7B-sized model): refused, as a
    model_type outside WRAPPED_TEXT."""
    arch = cfg["architectures"][0]
    if not isinstance(cfg.get("text_config"), dict):
        raise ValueError("%s: no text_config" % arch)
    kind = cfg["text_config"].get("model_type", WRAPPER_TEXT_DEFAULT[arch])
    if kind not in WRAPPED_TEXT:
        raise ValueError("%s: text_config model_type %r (known: %s)" % (arch, kind, ", ".join(WRAPPED_TEXT)))
    return kind


def embed_scale_for(hidden_size, torch_dtype):
    """Gemma's embedding normalizer: sqrt(hidden_size) in fp32, rounded to the checkpoint dtype
    when that is bfloat16/float16. transformers makes it a tensor of the hidden states' dtype
    (models/gemma2/modeling_gemma2.py Gemma2Model.forward: `normalizer = torch.tensor(hidden_size
    ** 0.5, dtype=hidden_states.dtype)`; models/gemma3/modeling_gemma3.py
    Gemma3TextScaledWordEmbedding.forward: `embed_scale.to(self.weight.dtype)`), i.e. the checkpoint
    dtype when the model is loaded as stored: sqrt(48) = 6.928... becomes 6.9375 in bf16."""
    c = torch.tensor(hidden_size ** 0.5, dtype=torch.float32)
    if torch_dtype in ("bfloat16", "float16"):
        c = c.to(getattr(torch, torch_dtype))
    return float(c)


class Spec:
    """What the forward pass needs from config.json; every family difference is a field here."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.arch = cfg["architectures"][0]
        if self.arch not in ARCHITECTURES:
            raise ValueError("unsupported architecture " + self.arch)
        arch = self.arch
        # Gemma3ForConditionalGeneration and Mistral3ForConditionalGeneration: every text number
        # comes from text_config (its missing keys take Gemma3TextConfig's or MistralConfig's
        # defaults); tie_word_embeddings from text_config, else the top level, else the text
        # config class's default; the dtype from text_config, else the top level.
        # (the released Qwen2-VL/Qwen2.5-VL configs are flat: no text_config, every key at the top)
        c = cfg.get("text_config", cfg) if arch in MULTIMODAL else cfg
        self.text_cfg = c
        # LLaVA / InternVL: from here on `arch` is the text family text_config.model_type names, read with that config
        # class's defaults (self.arch stays the wrapper's; see wrapped_text_family)
        self.text_model_type = wrapped_text_family(cfg) if arch in WRAPPERS else None
        if self.text_model_type:
            arch = WRAPPED_TEXT[self.text_model_type]
        # Ministral 3 (transformers 5, models/mistral3/configuration_mistral3.py Mistral3Config.__post_init__: the
        # text_config dict becomes CONFIG_MAPPING[its model_type]): a text_config of model_type "ministral3" is a
        # Ministral3Config, with defaults of its own, and Mistral3Model.__init__'s AutoModel.from_config builds a
        # Ministral3Model from it (models/ministral3/modeling_ministral3.py): Mistral's layers, the RoPE from
        # rope_parameters and the query scaling (see below and llama4_attn_scale)
        self.ministral3 = arch == "Mistral3ForConditionalGeneration" and c.get("model_type") == MINISTRAL3
        get = _getter(MINISTRAL3 if self.ministral3 else self.text_model_type or arch, c)
        gemma = arch in GEMMA
        gemma1 = arch == GEMMA1
        gemma4 = arch in GEMMA4
        self.H = c["hidden_size"]
        self.L = c["num_hidden_layers"]
        self.NH = get("num_attention_heads")
        self.NKV = get("num_key_value_heads", None) or self.NH
        self.HD = get("head_dim", None) or self.H // self.NH
        if arch == GLM4V:
            # models/glm4v/modeling_glm4v.py Glm4vTextAttention.__init__: `self.head_dim = self.hidden_size //
            # self.num_heads`, whatever config.json says (Glm4vTextConfig has no head_dim): a head_dim key that
            # differs would be ignored by transformers, and is refused here
            if c.get("head_dim") not in (None, self.H // self.NH):
                raise ValueError("GLM-4.1V: head_dim %r != hidden_size // num_attention_heads %d (Glm4vTextAttention "
                                 "ignores the key)" % (c.get("head_dim"), self.H // self.NH))
            self.HD = self.H // self.NH
        if arch == PHIMOE:
            # models/phimoe/modeling_phimoe.py PhimoeAttention.__init__: `self.head_dim = self.hidden_size //
            # self.num_heads` (PhimoeConfig has no head_dim); a head_dim key that differs is refused, as GLM-4.1V's
            if c.get("head_dim") not in (None, self.H // self.NH):
                raise ValueError("PhiMoE: head_dim %r != hidden_size // num_attention_heads %d (PhimoeAttention "
                                 "ignores the key)" % (c.get("head_dim"), self.H // self.NH))
            self.HD = self.H // self.NH
        if arch == NEMOTRON_H:
            # attention_head_dim (the releases' key), else head_dim, else hidden / heads: see nemotron_h_head_dim
            self.HD = nemotron_h_head_dim(c, self.H, self.NH)
        # DeepSeek-V3's multi-head latent attention (models/deepseek_v3/modeling_deepseek_v3.py
        # DeepseekV3Attention.__init__): q_a_proj (q_lora_rank, H), q_a_layernorm, q_b_proj (NH * qk_head_dim,
        # q_lora_rank); kv_a_proj_with_mqa (kv_lora_rank + qk_rope_head_dim, H), kv_a_layernorm, kv_b_proj
        # (NH * (qk_nope_head_dim + v_head_dim), kv_lora_rank); o_proj (H, NH * v_head_dim). q_lora_rank null
        # (DeepSeek-V2-Lite, Moonlight): `if self.q_lora_rank is None: self.q_proj = nn.Linear(hidden_size,
        # num_heads * qk_head_dim, bias=False)` in place of q_a_proj / q_a_layernorm / q_b_proj. HD is the q/k
        # head, qk_head_dim = qk_nope_head_dim + qk_rope_head_dim (DeepseekV3Config.__init__)
        # DeepSeek-V2 (models/deepseek_v2/modular_deepseek_v2.py DeepseekV2Attention.__init__ / forward): the same
        # projections, norms (DeepseekV2RMSNorm(q_lora_rank) / (kv_lora_rank), default eps 1e-6), splits and
        # q_proj path; only the RoPE differs (apply_rotary_emb, see mla_attention)
        # GLM-4.7-Flash (models/glm4_moe_lite/modular_glm4_moe_lite.py `class Glm4MoeLiteAttention(DeepseekV3Attention):
        # pass`): the same attention, its latent norms Glm4MoeLiteRMSNorm(config.q_lora_rank) / (kv_lora_rank) at that
        # class's default eps 1e-6; rope_interleave read as DeepSeek-V3's
        self.mla = arch in (DEEPSEEK_V3, DEEPSEEK_V2, GLM4_MOE_LITE)
        self.mla_rope_pairs = False
        if self.mla:
            self.q_lora_rank, self.kv_lora_rank = get("q_lora_rank"), get("kv_lora_rank")
            self.qk_nope_head_dim, self.qk_rope_head_dim = get("qk_nope_head_dim"), get("qk_rope_head_dim")
            self.v_head_dim = get("v_head_dim")
            self.HD = self.qk_nope_head_dim + self.qk_rope_head_dim
            self.mla_norm_eps = MLA_LATENT_NORM_EPS
            # DeepseekV3Attention.forward: rope_interleave picks apply_rotary_pos_emb_interleave (the
            # reshuffle, then rotate_half) over apply_rotary_pos_emb (rotate_half on the stored order)
            # DeepSeek-V2: apply_rotary_emb (view_as_complex of the adjacent pairs, turned in place); no
            # rope_interleave key (DeepseekV2Config has none)
            self.mla_rope_pairs = arch == DEEPSEEK_V2
            self.mla_rope_interleave = bool(get("rope_interleave")) if arch in (DEEPSEEK_V3, GLM4_MOE_LITE) else False
            if self.NKV != self.NH:
                # kv_b_proj gives one k and v per attention head; repeat_kv with another ratio breaks the shapes
                raise ValueError("DeepSeek-V3: num_key_value_heads must equal num_attention_heads")
            if get("attention_bias"):
                raise ValueError("attention_bias is not used by the fixtures")
            for key, want in ((("topk_method", "noaux_tc"), ("scoring_func", "sigmoid"), ("moe_layer_freq", 1))
                              if arch in (DEEPSEEK_V3, GLM4_MOE_LITE) else
                              (("scoring_func", "softmax"), ("moe_layer_freq", 1))):
                if get(key) != want:
                    raise ValueError("%s: %s %r (the config class ignores it; HF runs %r)" % (
                        "GLM-4.7-Flash" if arch == GLM4_MOE_LITE else "DeepSeek-V" + arch[9], key, get(key), want))
            if arch == DEEPSEEK_V2:
                if get("topk_method") not in ("greedy", "group_limited_greedy"):
                    # DeepseekV2Moe.route_tokens_to_experts (and DeepSeek's MoEGate for V2) know these two
                    raise ValueError("DeepSeek-V2: topk_method %r" % get("topk_method"))
                if get("norm_topk_prob"):
                    # transformers' DeepseekV2Moe never renormalises; DeepSeek's own MoEGate (modeling_deepseek.py
                    # for V2) would (and then skip routed_scaling_factor): the two disagree, and no released
                    # checkpoint sets it
                    raise ValueError("DeepSeek-V2: norm_topk_prob true (transformers ignores it, DeepSeek's code "
                                     "renormalises)")
        if arch == COHERE[1] and self.HD != self.H // self.NH:
            # Cohere2Config sets head_dim = hidden_size // num_attention_heads itself (4.x in __init__,
            # before PretrainedConfig sets the leftover kwargs; 5.x in __post_init__): a config.json
            # value that differs may be taken by one version and overridden by another
            raise ValueError("Cohere2: head_dim must be hidden_size // num_attention_heads")
        # (Qwen3_5MoeTextConfig has no intermediate_size: every layer is a MoE)
        # (LFM2: the MLP's width is computed from block_ff_dim / intermediate_size in lfm2_layers; LFM2-MoE: there too)
        self.F = c.get("intermediate_size") if arch in (QWEN3_5_MOE,) + LFM2_FAMILY else c["intermediate_size"]
        if arch == LLAMA4:
            # models/llama4/modeling_llama4.py Llama4TextDecoderLayer.__init__: the dense layers are
            # `Llama4TextMLP(config, intermediate_size=config.intermediate_size_mlp)`; intermediate_size is the width of
            # every expert (Llama4TextExperts.expert_dim) and of the shared expert (Llama4TextMLP(config)): see below
            self.F = get("intermediate_size_mlp")
        self.V = c["vocab_size"]
        # CohereLayerNorm(eps=config.layer_norm_eps) (models/cohere/modeling_cohere.py)
        # (LFM2: Lfm2RMSNorm(eps=config.norm_eps) everywhere, the q/k layernorms too)
        # (LFM2-MoE: Lfm2MoeRMSNorm(eps=config.norm_eps) alike)
        # (Nemotron-H: every NemotronHRMSNorm, the block norms, norm_f and the mixer's gated norm, takes
        # eps=config.layer_norm_epsilon; rms_norm_eps, which the releases also list, is not read)
        self.eps = (get("layer_norm_eps") if arch in COHERE else get("norm_eps") if arch in LFM2_FAMILY else
                    get("layer_norm_epsilon") if arch == NEMOTRON_H else get("rms_norm_eps"))
        self.theta = get("rope_theta", 10000.0)
        self.rope_scaling = get("rope_scaling", None)
        if arch in (DEEPSEEK_V2, EXAONE4, LLAMA4, APERTUS, GLM4_MOE_LITE) and get("rope_parameters") is not None:
            # transformers 5 writes these configs' RoPE as one flat rope_parameters dict (flat_rope_parameters)
            # (Apertus: ApertusRotaryEmbedding reads rope_parameters["rope_type"] / ["rope_theta"], ROPE_INIT_FUNCTIONS
            # the rest)
            # (GLM-4.7-Flash: Glm4MoeLiteRotaryEmbedding = Glm4MoeRotaryEmbedding, the same two keys, and its
            # compute_default_rope_parameters rope_parameters' partial_rotary_factor: see glm4_moe_lite_rope)
            family = {DEEPSEEK_V2: "DeepSeek-V2", EXAONE4: "EXAONE 4", LLAMA4: "Llama 4", APERTUS: "Apertus",
                      GLM4_MOE_LITE: "GLM-4.7-Flash"}[arch]
            self.theta, self.rope_scaling = flat_rope_parameters(c, get, family)
        if arch == GLM4_MOE_LITE:
            glm4_moe_lite_rope(c, get, self.rope_scaling)
        # Ministral 3: after RoPE every query times 1 + query_scale_beta ln(1 + floor(position / query_scale_period))
        # (llama4_attn_scale); beta 0: none (every other family)
        self.query_scale_beta, self.query_scale_period = 0.0, None
        if self.ministral3:
            # Ministral3Config exists in transformers 5 only: the RoPE is one flat rope_parameters dict
            # (flat_rope_parameters; the release's {"rope_type": "yarn", "type": "yarn", "rope_theta", "factor",
            # "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
            # "llama_4_scaling_beta"}): Ministral3RotaryEmbedding.__init__ reads rope_parameters["rope_type"] and
            # ROPE_INIT_FUNCTIONS the rest (yarn: _compute_yarn_parameters, see yarn_parameters; mscale = mscale_all_dim
            # = 1 gives the attention factor 1). The same dict holds the query scaling's two numbers
            self.theta, self.rope_scaling = flat_rope_parameters(c, get, "Ministral 3")
            self.query_scale_beta, self.query_scale_period = ministral3_query_scale(get("rope_parameters"))
        # (what-ifs only, golden_models.ministral3_what_ifs: the keys scaled too, the scale without its log (1 + beta
        # floor(position / period)), positions counted from 1)
        self.query_scale_keys, self.query_scale_log, self.query_scale_offset = False, True, 0
        if arch in ERNIE:
            # (no scaling: rope_scaling / a rope_type other than default are refused in ernie_rope)
            self.theta = ernie_rope(c, get)
            self.rope_scaling = None
        self.minimax_rotary_dim = None
        if arch == MINIMAX_M2:
            # (no scaling: rope_scaling / a rope_type other than default are refused in minimax_m2_rope)
            self.theta, self.minimax_rotary_dim = minimax_m2_rope(c, get, self.HD)
            self.rope_scaling = None
        self.olmo3_sliding_rope = None
        if arch == OLMO3:
            # the full-attention layers' RoPE is the "global" one (theta, rope_scaling: None when default), the
            # sliding layers' the "local" one (see below)
            full, self.olmo3_sliding_rope = olmo3_rope_parameters(c, get)
            self.theta = full["rope_theta"]
            kind = full.get("rope_type", "default")
            self.rope_scaling = None if kind == "default" else {k: v for k, v in full.items() if k != "rope_theta"}
        self.hybrid_rotary_dim = self.hybrid_mrope = None
        if arch in HYBRID:
            # (no scaling: rope_scaling / a rope_type other than default are refused in hybrid_rope)
            self.theta, self.hybrid_rotary_dim, self.hybrid_mrope = hybrid_rope(c, get, arch, self.HD)
            self.rope_scaling = None
        # HunYuan-Dense (and HunYuan-MoE: models/hunyuan_v1_moe/modeling_hunyuan_v1_moe.py HunYuanMoEV1RotaryEmbedding,
        # 4.56 / 4.57 the same DynamicNTKAlpha branch; 5.x's modular `class HunYuanMoEV1RotaryEmbedding(
        # HunYuanDenseV1RotaryEmbedding): pass`): the default RoPE at base rope_theta x alpha^(head_dim / (head_dim -
        # 2)) (hunyuan_rope); theta stays config.json's rope_theta, rope_base is the base the inverse frequencies take
        # (None: theta itself)
        self.rope_alpha = self.rope_base = None
        if arch in HUNYUAN:
            self.theta, self.rope_alpha, self.rope_base = hunyuan_rope(c, get, self.HD)
            self.rope_scaling = None
        if self.arch in MULTIMODAL:
            self.tied = c.get("tie_word_embeddings", cfg.get("tie_word_embeddings", get("tie_word_embeddings")))
        elif arch in LFM2_FAMILY:
            # Lfm2Config.__init__: `tie_word_embeddings = kwargs.get("tie_embedding", tie_word_embeddings)  # to fit
            # original config keys`: the original key, when present, wins (Lfm2MoeConfig.__init__ the same line)
            self.tied = bool(c.get("tie_embedding", get("tie_word_embeddings")))
        else:
            self.tied = get("tie_word_embeddings", False)
        torch_dtype = c.get("torch_dtype", c.get("dtype", cfg.get("torch_dtype", cfg.get("dtype"))))

        # weight names: "model." everywhere except the multimodal Gemma 3, whose language model
        # sits under "language_model.model." (released checkpoints) or "model.language_model."
        # (transformers >= 4.52 saves): chosen from the weights in `weight_names`.
        self.prefix = None if self.arch in MULTIMODAL else "model."
        if arch in (QWEN3_5, QWEN3_5_MOE, QWEN3_VL_MOE) + GLM_V:
            # Qwen3.5's checkpoints exist in transformers >= 4.57's spelling only: model.language_model.* beside
            # model.visual.* and mtp.*, lm_head.weight at the top (Qwen3_5ForConditionalGeneration, no
            # _checkpoint_conversion_mapping from a legacy language_model.model.*). Qwen3-VL-MoE alike: the releases
            # (saved by transformers 4.57) name model.language_model.*, model.visual.* and lm_head.weight
            # GLM-4.1V / GLM-4.5V alike (convert_glm4v_mgt_weights_to_hf.py / convert_glm4v_moe_mgt_weights_to_hf.py
            # write model.language_model.*, model.visual.* and lm_head.weight; Glm4vForConditionalGeneration's
            # _checkpoint_conversion_mapping is {})
            self.prefix = "model.language_model."

        # attention projections
        # GlmAttention / Glm4Attention.__init__: q/k/v_proj bias=config.attention_bias, o_proj none
        # (Qwen2_5_VLAttention: q/k/v bias=True, o_proj bias=False; Qwen3VLTextAttention: q_norm/k_norm)
        # Glm4MoeAttention.__init__: q/k/v_proj bias=config.attention_bias, o_proj none; q_norm/k_norm
        # when config.use_qk_norm
        # models/llama/modeling_llama.py LlamaAttention.__init__: q/k/v_proj and o_proj all
        # bias=config.attention_bias (LlamaConfig's default false)
        # models/olmo2/modeling_olmo2.py Olmo2Attention.__init__: q/k/v_proj and o_proj all
        # bias=config.attention_bias (Olmo2Config's default false), as LlamaAttention
        # (models/olmoe/modular_olmoe.py OlmoeAttention(LlamaAttention): the same)
        # (models/arcee/modeling_arcee.py ArceeAttention = LlamaAttention's; models/dots1/modular_dots1.py
        # Dots1Attention(Qwen3Attention): q/k/v_proj and o_proj all bias=config.attention_bias, as Llama's. The releases
        # have it false; check_reference adds biases to test the path)
        # (models/apertus/modular_apertus.py ApertusAttention(LlamaAttention): the same four biases from attention_bias)
        llama_bias = (arch in ("LlamaForCausalLM", OLMO2, OLMO3, OLMOE, ARCEE, DOTS1, APERTUS) and
                      bool(get("attention_bias", False)))
        # models/seed_oss/modular_seed_oss.py SeedOssAttention.__init__: q_proj, k_proj, v_proj
        # bias=config.attention_bias (SeedOssConfig's default true), o_proj bias=config.attention_out_bias
        # (default false): two flags, either without the other
        seed_qkv = arch == SEED_OSS and bool(get("attention_bias"))
        # models/ernie4_5/modular_ernie4_5.py Ernie4_5Attention.__init__ (and models/ernie4_5_moe/modular_ernie4_5_moe.py
        # Ernie4_5_MoeAttention.__init__): q/k/v_proj and o_proj all nn.Linear(..., bias=config.use_bias), replacing
        # LlamaAttention's; Ernie4_5MLP.__init__: gate_proj, up_proj, down_proj bias=config.use_bias (Ernie4_5_MoeMLP
        # alike, for the dense MLPs, every expert and the shared experts). Ernie4_5ForCausalLM's lm_head has no bias;
        # Ernie4_5_MoeForCausalLM's takes bias=config.use_bias: use_bias true is refused for the MoE family (no release
        # sets it; see below)
        ernie_bias = arch == ERNIE4_5 and bool(get("use_bias"))
        if arch == ERNIE4_5_MOE and get("use_bias"):
            raise ValueError("ERNIE 4.5 MoE: use_bias true (biases on every projection, the experts and lm_head) is not "
                             "used by the fixtures")
        # models/glm4v/modeling_glm4v.py Glm4vTextAttention.__init__: q_proj, k_proj, v_proj `bias=True` (hard-coded; no
        # attention_bias read), o_proj `bias=False`. models/glm4v_moe: Glm4vMoeTextAttention(Glm4Attention), q/k/v_proj
        # `bias=config.attention_bias` (Glm4vMoeTextConfig's default true), o_proj none
        # models/phimoe/modeling_phimoe.py PhimoeAttention.__init__: q_proj, k_proj, v_proj and o_proj all
        # `bias=self.config.attention_bias` (PhimoeConfig's default false; Phi-3.5-MoE's config.json true).
        # PhimoeAttention.forward (eager): q/k/v_proj, view into heads, apply_rotary_pos_emb, repeat_kv, `torch.matmul(
        # query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)`, + causal_mask, softmax in fp32, times
        # the values, o_proj: self_attention's path with its biases
        phimoe_bias = arch == PHIMOE and bool(get("attention_bias"))
        self.qkv_bias = bool(arch in ("Qwen2ForCausalLM", "Qwen2MoeForCausalLM") + QWEN_VL[:2] or llama_bias or
                             (arch in GLM + (GLM4_MOE, GPT_OSS, GLM4V_MOE) and get("attention_bias")) or seed_qkv or
                             ernie_bias or arch == GLM4V or phimoe_bias)
        # models/gpt_oss/modular_gpt_oss.py GptOssAttention.__init__: q/k/v_proj and o_proj all
        # bias=config.attention_bias; self.sinks, one logit per attention head (eager_attention_forward)
        self.o_bias = ((arch == GPT_OSS and bool(get("attention_bias"))) or llama_bias or
                       (arch == SEED_OSS and bool(get("attention_out_bias"))) or ernie_bias or phimoe_bias)
        # models/phimoe/modeling_phimoe.py PhimoeForCausalLM.__init__: `self.lm_head = nn.Linear(config.hidden_size,
        # config.vocab_size, bias=self.config.lm_head_bias)` (lm_head.bias (V,)); no other family has one here
        self.lm_head_bias = arch == PHIMOE and bool(get("lm_head_bias"))
        self.attn_sinks = arch == GPT_OSS
        # models/llama/modeling_llama.py LlamaMLP.__init__: gate_proj, up_proj and down_proj all
        # bias=config.mlp_bias (LlamaConfig's default false); SeedOssMLP.__init__ alike (SeedOssConfig's
        # default false)
        self.mlp_bias = (arch in ("LlamaForCausalLM", SEED_OSS) and bool(get("mlp_bias", False))) or ernie_bias
        # models/cohere/modeling_cohere.py CohereAttention.__init__: when config.use_qk_norm, q_norm /
        # k_norm are CohereLayerNorm(hidden_size=(num_attention_heads / num_key_value_heads, head_dim),
        # eps=config.layer_norm_eps): mean-subtracted over head_dim, a weight row per head, no bias
        # (Command R+). Cohere2Attention has none (Cohere2Config has no use_qk_norm).
        cohere_qk_norm = arch == COHERE[0] and bool(get("use_qk_norm"))
        # models/exaone4/modular_exaone4.py Exaone4Attention.__init__: q_norm = k_norm = Exaone4RMSNorm(head_dim) (=
        # LlamaRMSNorm, eps rms_norm_eps); forward: `self.q_norm(query_states)` on q_proj(h).view(..., -1, head_dim),
        # i.e. per head over head_dim with one (head_dim,) weight shared by every head, before RoPE (Qwen3's)
        # models/qwen3_next/modular_qwen3_next.py Qwen3NextAttention(Qwen3MoeAttention): q_norm / k_norm over head_dim,
        # Qwen3NextRMSNorm (= Gemma3RMSNorm: (1 + w)) in the generated modeling_qwen3_next.py; Qwen3_5Attention and
        # Qwen3_5MoeAttention are Qwen3NextAttention
        # (models/qwen3_vl_moe/modeling_qwen3_vl_moe.py Qwen3VLMoeTextAttention: Qwen3's q_norm / k_norm over head_dim)
        # (models/dots1/modular_dots1.py Dots1Attention(Qwen3Attention): the same q_norm / k_norm, Dots1RMSNorm(head_dim,
        # eps=config.rms_norm_eps) on q_proj(h).view(..., -1, head_dim) before the transpose and RoPE)
        # (models/apertus/modular_apertus.py ApertusAttention.__init__: `self.q_norm = ApertusRMSNorm(self.head_dim,
        # config.rms_norm_eps)`, k_norm alike (LlamaRMSNorm: one (head_dim,) weight each); forward: q_proj(h).view(
        # hidden_shape).transpose(1, 2), then `query_states = self.q_norm(query_states)` (over each head's head_dim
        # values) and the key alike, then apply_rotary_pos_emb: Qwen3's order, built whatever qk_norm says)
        self.qk_norm = (arch in ("Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "Qwen3VLForConditionalGeneration",
                                 QWEN3_VL_MOE, DOTS1, APERTUS)
                        or arch in GEMMA[1:] or (arch == GLM4_MOE and get("use_qk_norm")) or cohere_qk_norm or
                        arch == EXAONE4 or arch in HYBRID or arch in HUNYUAN or arch in LFM2_FAMILY)
        # models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py HunYuanDenseV1Attention.__init__: `self.query_layernorm =
        # HunYuanDenseV1RMSNorm(self.head_dim, eps=config.rms_norm_eps)`, `self.key_layernorm = ...` (LlamaRMSNorm, one
        # (head_dim,) weight shared by every head), built whatever use_qk_norm says; forward: q_proj(h).view(hidden_shape)
        # .transpose(1, 2), `query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)`, THEN
        # `query_states = self.query_layernorm(query_states)`, `key_states = self.key_layernorm(key_states)`: the norms
        # after RoPE (Qwen3's before it). qk_norm_names: the two weights' names under self_attn.; qk_norm_after_rope False
        # for HunYuan-Dense is a what-if only (golden_models.hunyuan_dense_what_ifs)
        # (models/hunyuan_v1_moe/modular_hunyuan_v1_moe.py HunYuanMoEV1Attention(LlamaAttention): the same two norms,
        # HunYuanMoEV1RMSNorm(self.head_dim, eps=config.rms_norm_eps), applied after apply_rotary_pos_emb in forward, in
        # 4.56 / 4.57's generated modeling_hunyuan_v1_moe.py and in 5.x's modular alike)
        # models/lfm2/modeling_lfm2.py Lfm2Attention.__init__: `self.q_layernorm = Lfm2RMSNorm(self.head_dim,
        # eps=config.norm_eps)`, `self.k_layernorm = ...` (one (head_dim,) weight each); forward: `self.q_layernorm(
        # self.q_proj(hidden_states).view(*hidden_shape))` (per head over head_dim), then the transpose and
        # apply_rotary_pos_emb: Qwen3's order under other names (qk_norm_after_rope True for LFM2: a what-if only)
        # (models/lfm2_moe/modular_lfm2_moe.py: `class Lfm2MoeAttention(Lfm2Attention): pass`, the same)
        self.qk_norm_names = (("query_layernorm", "key_layernorm") if arch in HUNYUAN else
                              ("q_layernorm", "k_layernorm") if arch in LFM2_FAMILY else ("q_norm", "k_norm"))
        self.qk_norm_after_rope = arch in HUNYUAN
        if arch in HUNYUAN and not get("use_qk_norm"):
            # Tencent's remote code (modeling_hunyuan.py) norms q / k only `if self.use_qk_norm`; transformers' port
            # always does: the two disagree on such a config, and every release has use_qk_norm true
            raise ValueError("HunYuan: use_qk_norm %r (transformers always applies query_layernorm / "
                             "key_layernorm; Tencent's remote code would not)" % get("use_qk_norm"))
        # Qwen3NextAttention.__init__: q_proj = nn.Linear(hidden_size, num_attention_heads * head_dim * 2); forward:
        # q_proj(h).view(*input_shape, -1, head_dim * 2) chunked in two per head, the query (then q_norm, RoPE) and the
        # gate; the attention output (B, T, heads * head_dim) times sigmoid(gate) before o_proj. q_gate: that layout;
        # q_gate_applied: the sigmoid product (False: a what-if only, the gate rows still split off)
        self.q_gate = arch in HYBRID
        self.q_gate_applied = True
        self.qk_norm_per_head = cohere_qk_norm  # q_norm.weight (NH, HD), k_norm.weight (NKV, HD)
        # models/olmo2/modeling_olmo2.py Olmo2Attention.__init__: q_norm = Olmo2RMSNorm(num_attention_heads *
        # head_dim), k_norm = Olmo2RMSNorm(num_key_value_heads * head_dim), eps rms_norm_eps; forward:
        # `self.q_norm(self.q_proj(hidden_states))` before `.view(hidden_shape)`: one RMS over all heads
        # (models/olmo3/modular_olmo3.py Olmo3Attention(Olmo2Attention): the same)
        # models/olmoe/modular_olmoe.py OlmoeAttention.__init__: q_norm = OlmoeRMSNorm(config.hidden_size), k_norm =
        # OlmoeRMSNorm((hidden_size // num_attention_heads) * num_key_value_heads), eps rms_norm_eps; forward:
        # `self.q_norm(self.q_proj(hidden_states))`, `self.k_norm(self.k_proj(hidden_states))` before the view into
        # heads, as OLMo 2 (OlmoeRMSNorm is LlamaRMSNorm: in fp32 the same as rms_norm here)
        # models/minimax_m2/modular_minimax_m2.py MiniMaxM2Attention(FlexOlmoAttention): FlexOlmoAttention is
        # Olmo2Attention (q_norm = RMSNorm(num_attention_heads * head_dim), k_norm = RMSNorm(num_key_value_heads *
        # head_dim), eps rms_norm_eps, applied to q_proj(h) / k_proj(h) before the view into heads) with q/k/v/o_proj
        # replaced by bias-free ones of heads * head_dim (head_dim explicit). MiniMax's remote code: the same when
        # use_qk_norm and qk_norm_type "per_layer" (transformers reads neither key; other values are refused below)
        self.qk_norm_full = arch in (OLMO2, OLMO3, OLMOE, MINIMAX_M2)
        if arch == MINIMAX_M2:
            if not get("use_qk_norm") or get("qk_norm_type") != "per_layer":
                raise ValueError("MiniMax-M2: use_qk_norm %r, qk_norm_type %r (transformers always norms the whole "
                                 "q/k projections: use_qk_norm true, per_layer)" % (get("use_qk_norm"),
                                                                                  get("qk_norm_type")))
            types = get("attn_type_list")
            if types is not None and (len(types) != self.L or any(t != 1 for t in types)):
                # MiniMax's attn_type_list: 1 = softmax attention on that layer (0 would be MiniMax-01's lightning
                # attention, which transformers' MiniMaxM2 does not have); the released configs list 1 for every layer
                raise ValueError("MiniMax-M2: attn_type_list %r (every layer must be 1, softmax attention)" % (types,))
        if arch == OLMOE and get("clip_qkv") is not None:
            # OlmoeAttention.forward clamps q, k (after their norms) and v to +-clip_qkv when it is set; the released
            # OLMoE configs have it null
            raise ValueError("OLMoE: clip_qkv %r is not used by the fixtures" % get("clip_qkv"))
        self.qk_norm_rms = False  # (golden_models' what-if only: the q/k norms as RMSNorms)
        # models/phi3/modular_phi3.py Phi3Attention.forward (qkv_proj split q | k | v) and
        # Phi3MLP.forward (gate_up_proj: first intermediate_size rows gate, the rest up)
        self.fused_qkv = self.fused_gate_up = arch == "Phi3ForCausalLM"
        # models/glm4/modeling_glm4.py Glm4MLP.forward (GlmMLP is Phi3MLP): gate, up = chunk(2)
        # models/glm4v/modeling_glm4v.py Glm4vTextMLP.forward: the same fused gate_up_proj (GLM-4.5V's dense layers are
        # Glm4MoeMLP: separate gate_proj / up_proj / down_proj)
        self.fused_gate_up = self.fused_gate_up or arch in GLM or arch == GLM4V
        # models/arcee/modular_arcee.py `class ArceeMLP(NemotronMLP)`: up_proj and down_proj only (bias=mlp_bias), no
        # gate_proj, forward `self.down_proj(self.act_fn(self.up_proj(x)))` (ungated_mlp); every other dense MLP here
        # is gated (Nemotron-H's ungated "-" blocks: nemotron_h_block)
        # models/apertus/modular_apertus.py `class ApertusMLP(NemotronMLP)`: up_proj / down_proj with bias=False
        # (whatever mlp_bias says), no gate_proj, the same forward; act_fn XIELUActivation for hidden_act xielu (xielu)
        self.mlp_gated = arch not in (ARCEE, APERTUS)
        if (arch in ("Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "Qwen3VLForConditionalGeneration", QWEN3_VL_MOE,
                     SMOLLM3, GRANITE, GRANITE_HYBRID, EXAONE4, GEMMA1, LLAMA4, NEMOTRON_H) + HUNYUAN + GRANITE_MOE +
                    COHERE + ERNIE + HYBRID or gemma or gemma4):
            # (HunYuan-Dense / -MoE: HunYuanDenseV1Attention / HunYuanMoEV1Attention (LlamaAttention) take
            # bias=config.attention_bias on q/k/v/o_proj; the releases have it false. HunYuanDenseV1MLP's and
            # HunYuanMoEV1MLP's projections are bias=False whatever mlp_bias says)
            # (Llama 4: Llama4TextAttention's q/k/v/o_proj take bias=config.attention_bias; no release sets it)
            # (Granite 4.0: GraniteMoeHybridAttention's q/k/v/o_proj take bias=config.attention_bias; the releases have
            # it false)
            # (Nemotron-H: transformers' NemotronHAttention builds q/k/v/o_proj with bias=False whatever attention_bias
            # says; the releases have it false)
            # (Gemma 1: GemmaAttention's q/k/v/o_proj take bias=config.attention_bias; every release has it false)
            # (Qwen3-Next / Qwen3.5: q/k/v/o_proj take bias=config.attention_bias; no release sets it)
            # (ERNIE 4.5: the projections take use_bias, not attention_bias; a true attention_bias would be ignored)
            # (EXAONE 4: Exaone4Attention's projections are nn.Linear(..., bias=False) whatever config.json says)
            # (Cohere / Cohere 2: q/k/v_proj and o_proj all take bias=config.attention_bias in
            # CohereAttention / Cohere2Attention; no released checkpoint sets it)
            # (Gemma 4: Gemma4TextAttention's q/k/v/o_proj take bias=config.attention_bias; no release sets it)
            if get("attention_bias", False):
                raise ValueError("attention_bias is not used by the fixtures")
        if c.get("mlp_bias") and not self.mlp_bias:
            raise ValueError("mlp_bias is not used by the fixtures")
        if (gemma or gemma1) and get("use_bidirectional_attention"):
            raise ValueError("use_bidirectional_attention (EmbeddingGemma) is not a decoder")

        # Gemma: (1 + w) norms, sandwich norms, scaled embeddings, GeGLU, query_pre_attn_scalar,
        # softcaps (models/gemma2/modeling_gemma2.py Gemma2RMSNorm, Gemma2DecoderLayer,
        # Gemma2Model, Gemma2MLP, Gemma2Attention, Gemma2ForCausalLM; gemma3 likewise)
        # Qwen3-Next / Qwen3.5: every RMSNorm of the residual stream and q_norm / k_norm is Qwen3NextRMSNorm =
        # Gemma3RMSNorm, (1 + w) (modular_qwen3_next.py `class Qwen3NextRMSNorm(Gemma3RMSNorm)`; _init_weights: zeros,
        # "1 centered as the RMSNorm here does (1 + weight)"); the linear attention's gated norm is not (see
        # gated_delta_net); no embedding scale
        # Gemma 1: models/gemma/modeling_gemma.py GemmaRMSNorm.forward, `output * (1.0 + self.weight.float())` in fp32,
        # then `.type_as(x)`, the same (1 + w) norm (its input_layernorm, post_attention_layernorm and model.norm)
        self.norm_offset = gemma or gemma1 or arch in HYBRID
        # OLMo 2 (models/olmo2/modular_olmo2.py Olmo2DecoderLayer: `del self.input_layernorm`; forward:
        # residual + post_attention_layernorm(self_attn(hidden_states)), then residual +
        # post_feedforward_layernorm(mlp(hidden_states))): Gemma's sandwich without its input norms
        # (models/olmo3/modular_olmo3.py Olmo3DecoderLayer(Olmo2DecoderLayer): the same; models/exaone4/
        # modular_exaone4.py Exaone4DecoderLayer(Olmo2DecoderLayer) and Exaone4MLP(Olmo2MLP): the same)
        self.sandwich_norms = gemma or arch in (OLMO2, OLMO3, EXAONE4)
        # input_layernorm (and, with sandwich norms, pre_feedforward_layernorm)
        self.input_norms = arch not in (OLMO2, OLMO3, EXAONE4)
        # the Llama-order layer's two norms: models/apertus/modular_apertus.py ApertusDecoderLayer.__init__ names them
        # `self.attention_layernorm` (before self_attn) and `self.feedforward_layernorm` (before the MLP); every other
        # family input_layernorm / post_attention_layernorm
        self.layer_norm_names = (("attention_layernorm", "feedforward_layernorm") if arch == APERTUS else
                                 ("input_layernorm", "post_attention_layernorm"))
        # xIELU's alpha_p / alpha_n through softplus (False: the stored values used as they are, a what-if only)
        self.xielu_softplus = True
        # models/glm4/modeling_glm4.py Glm4DecoderLayer: post_self_attn_layernorm on the attention
        # output, post_attention_layernorm before the MLP, post_mlp_layernorm on its output
        # models/glm4v/modeling_glm4v.py Glm4vTextDecoderLayer: the same four norms (GLM-4.5V's
        # Glm4vMoeTextDecoderLayer = Glm4MoeDecoderLayer: input_layernorm and post_attention_layernorm only)
        # (False for Glm4ForCausalLM / GLM-4.1V: a what-if only, golden_models.glm4v_what_ifs)
        self.glm4_norms = arch in ("Glm4ForCausalLM", GLM4V)
        # (Gemma 1: models/gemma/modeling_gemma.py GemmaModel.forward, 4.39-4.57: `normalizer =
        # torch.tensor(self.config.hidden_size**0.5, dtype=hidden_states.dtype)`, `hidden_states * normalizer`; 5.x's
        # GemmaTextScaledWordEmbedding.forward: `* self.embed_scale.to(self.weight.dtype)`: bf16(sqrt(H)) for bf16
        # weights)
        # (Gemma 4: modeling_gemma4.py Gemma4TextScaledWordEmbedding.forward, `* self.embed_scale.to(self.weight.dtype)`
        # with embed_scale = hidden_size**0.5 (Gemma4TextModel.__init__), Gemma 3's)
        self.embed_scale = embed_scale_for(self.H, torch_dtype) if gemma or gemma1 or gemma4 else None
        # Cohere (models/cohere/modeling_cohere.py; Cohere 2 inherits every piece named here, see
        # models/cohere2/modular_cohere2.py): CohereLayerNorm (mean-subtracted, no bias) for
        # input_layernorm and the final norm; CohereDecoderLayer.forward, one norm and the parallel
        # block `residual + hidden_states_attention + hidden_states_mlp`; CohereForCausalLM.forward
        # `logits = lm_head(h) * logit_scale`. No embedding scale: Cohere2Model.forward replaces
        # Gemma2Model.forward's and does not multiply by sqrt(hidden_size).
        self.layer_norm = self.parallel_block = arch in COHERE
        # PhiMoE (models/phimoe/modeling_phimoe.py PhimoeDecoderLayer.__init__ / PhimoeModel.__init__):
        # input_layernorm, post_attention_layernorm and norm are `nn.LayerNorm(config.hidden_size,
        # eps=config.rms_norm_eps, elementwise_affine=True)`: mean-subtracted, biased variance, weight and bias
        # (`<name>.weight`, `<name>.bias`); Llama's sequential layer (PhimoeDecoderLayer.forward). norm_bias False: a
        # what-if only (golden_models)
        self.layer_norm = self.layer_norm or arch == PHIMOE
        self.norm_bias = arch == PHIMOE
        self.logit_scale = float(get("logit_scale")) if arch in COHERE else 1.0
        # (Gemma 4: Gemma4TextMLP / Gemma4TextExperts / the PLE gate all take ACT2FN[config.hidden_activation])
        act = get("hidden_activation") if gemma or gemma4 else get("hidden_act", "silu")
        if gemma1:
            # models/gemma/modeling_gemma.py GemmaMLP.__init__ (transformers 4.39-4.47, PR #29402): `if
            # config.hidden_activation is None: logger.warning_once("`config.hidden_act` is ignored, ...");
            # config.hidden_activation = "gelu_pytorch_tanh"`, then `ACT2FN[config.hidden_activation]`: the released
            # gemma-2b / gemma-7b(-it) config.json files say "hidden_act": "gelu" and have no hidden_activation, and run
            # the tanh-approximated GELU the models were trained with (as Google's gemma_pytorch, vLLM's
            # _get_gemma_act_fn and llama.cpp do). Caveat: from transformers 4.48 on (PR #35235) GemmaMLP is LlamaMLP,
            # `ACT2FN[config.hidden_act]`, so those versions (5.x too) run the exact GELU of "gelu" on these files; the
            # golden files follow the tanh reading (golden_models records the difference, gelu_exact_effect_prompt4)
            act = c.get("hidden_activation") or "gelu_pytorch_tanh"
            if get("rope_scaling") is not None:
                # (GemmaRotaryEmbedding of 4.39-4.47 has no scaling; 4.48+'s LlamaRotaryEmbedding would apply one)
                raise ValueError("Gemma: rope_scaling %r is not used by the fixtures" % (get("rope_scaling"),))
        if arch == LFM2:
            # models/lfm2/modeling_lfm2.py Lfm2MLP.forward: `self.w2(F.silu(self.w1(x)) * self.w3(x))`; Lfm2Config has
            # no hidden_act (a key of that name would not be read)
            act = "silu"
        if arch == LFM2_MOE and act != "silu":
            # the dense Lfm2MoeMLP hard-codes F.silu, but transformers 5's Lfm2MoeExperts (Qwen2MoeExperts) takes
            # `ACT2FN[config.hidden_act]`: a hidden_act key other than silu splits the two readings
            raise ValueError("LFM2-MoE: hidden_act %r (Lfm2MoeMLP runs SiLU, transformers 5's experts would read the "
                             "key)" % (act,))
        if arch in (NEMOTRON_H, ARCEE):
            # models/nemotron_h/modular_nemotron_h.py NemotronHMLP (NemotronMLP): `self.act_fn =
            # ACT2FN[config.mlp_hidden_act]` on up_proj's output, no gate; hidden_act is not read. relu2 is
            # ReLUSquaredActivation, relu(x) squared (see activation)
            # (Arcee: ArceeMLP is NemotronMLP, `ACT2FN[config.hidden_act]`: ArceeConfig's default and AFM's relu2)
            key = "mlp_hidden_act" if arch == NEMOTRON_H else "hidden_act"
            act = get(key)
            if act != "relu2":
                raise ValueError("%s: %s %r (the fixtures use relu2)" % (
                    "Nemotron-H" if arch == NEMOTRON_H else "Arcee", key, act))
        elif arch == APERTUS:
            # models/apertus/modular_apertus.py ApertusMLP.__init__: `if config.hidden_act == "xielu": self.act_fn =
            # ACT2CLS["xielu"](dtype=config.dtype)` (XIELUActivation, parameters mlp.act_fn.*: see xielu); any other
            # hidden_act would be ACT2FN's, ungated, with no parameters: refused, the releases say xielu
            if act != "xielu":
                raise ValueError("Apertus: hidden_act %r (the fixtures use xielu)" % (act,))
            # Swiss AI's keys that ApertusConfig does not read: transformers always norms q / k (ApertusAttention
            # builds q_norm / k_norm whatever qk_norm says) and always runs the pre-norm layer; a config that says
            # otherwise would be read one way by transformers and another by the code it came from
            if get("qk_norm") is not True or get("post_norm") is not False:
                raise ValueError("Apertus: qk_norm %r, post_norm %r (transformers reads neither: it always applies "
                                 "q_norm / k_norm and the pre-norm layer)" % (get("qk_norm"), get("post_norm")))
        elif act not in ("silu", "gelu_pytorch_tanh"):
            raise ValueError("activation %r is not supported" % act)
        self.act = "gelu_tanh" if act == "gelu_pytorch_tanh" else act
        # (Gemma 1: GemmaAttention.__init__, `self.scaling = 1 / math.sqrt(config.head_dim)`; 4.48+: LlamaAttention's
        # head_dim**-0.5; no query_pre_attn_scalar, no softcap)
        self.attn_scale = get("query_pre_attn_scalar") ** -0.5 if gemma else self.HD ** -0.5
        if self.mla and self.rope_scaling is not None:
            # DeepseekV3Attention.__init__: scaling = qk_head_dim ** -0.5, times mscale * mscale with
            # mscale = yarn_get_mscale(rope_scaling["factor"], mscale_all_dim) when mscale_all_dim is set
            # (non-zero), whatever the rope type; yarn_get_mscale = 0.1 * m * ln(factor) + 1 (1 if factor <= 1).
            # DeepseekV2Attention.__init__ the same since transformers PR #47435 (2026-07-20; before it,
            # scaling = qk_head_dim ** -0.5 alone); DeepSeek's own modeling_deepseek.py for V2
            # (DeepseekV2Attention.__init__: `self.softmax_scale = self.softmax_scale * mscale * mscale`) always did
            rs = self.rope_scaling
            mscale_all_dim = rs.get("mscale_all_dim", 0)
            if mscale_all_dim:
                factor = rs["factor"]
                mscale = 1.0 if factor <= 1 else 0.1 * mscale_all_dim * math.log(factor) + 1.0
                self.attn_scale = self.attn_scale * mscale * mscale
        # Granite (models/granite/modular_granite.py): GraniteModel.forward multiplies the embeddings
        # by embedding_multiplier (a Python float: no rounding to the dtype), GraniteAttention's
        # scaling is attention_multiplier, GraniteDecoderLayer.forward adds `hidden_states *
        # residual_multiplier` to the residual, GraniteForCausalLM.forward divides the logits by
        # logits_scaling
        # (Granite 4.0: models/granitemoehybrid/modular_granitemoehybrid.py GraniteMoeHybridModel.forward,
        # `inputs_embeds = inputs_embeds * self.embedding_multiplier`; GraniteMoeHybridAttention (GraniteMoeSharedAttention)
        # `self.scaling = config.attention_multiplier`; GraniteMoeHybridDecoderLayer.forward `residual + hidden_states *
        # self.residual_multiplier` after the attention and after the MLP; GraniteMoeHybridForCausalLM (GraniteMoeShared's
        # forward) `logits = logits / self.config.logits_scaling`)
        self.residual_multiplier, self.logits_scaling = 1.0, 1.0
        if arch in (GRANITE, GRANITE_HYBRID) + GRANITE_MOE:
            self.embed_scale = get("embedding_multiplier")
            self.attn_scale = get("attention_multiplier")
            self.residual_multiplier = get("residual_multiplier")
            self.logits_scaling = get("logits_scaling")
        # Gemma 3 stores attn_logit_softcapping but never applies it: Gemma3Attention.forward does
        # not pass `softcap` to the attention function (models/gemma3/modeling_gemma3.py).
        self.attn_softcap = get("attn_logit_softcapping") if arch == "Gemma2ForCausalLM" else None
        # The final softcap is applied by Gemma2ForCausalLM.forward and Gemma3ForCausalLM.forward,
        # not by Gemma3ForConditionalGeneration.forward (it returns self.lm_head(hidden_states)).
        self.final_softcap = (get("final_logit_softcapping")
                              if arch in ("Gemma2ForCausalLM", "Gemma3ForCausalLM") else None)

        # which layers slide
        self.sliding_window = None
        sliding = [False] * self.L
        if arch in ("MistralForCausalLM", "MixtralForCausalLM", "Phi3ForCausalLM", "Mistral3ForConditionalGeneration",
                    PHIMOE):
            # Mistral/Mixtral attention and models/phi3/modular_phi3.py Phi3Attention.forward
            # (`sliding_window=getattr(self.config, "sliding_window", None)`): every layer.
            # Mistral3ForConditionalGeneration runs a MistralModel on its text_config
            # (models/mistral3/modeling_mistral3.py Mistral3Model.__init__: AutoModel.from_config).
            # PhiMoE: PhimoeModel._prepare_4d_causal_attention_mask_with_cache_position masks keys at or before
            # cache_position - config.sliding_window on every layer (the eager / sdpa mask), i - W < j <= i.
            # (a LLaVA wrapper's mistral text_config: MistralConfig's default 4096 where the key is absent)
            self.sliding_window = c.get("sliding_window") if self.arch == "MistralForCausalLM" else get("sliding_window")
            sliding = [self.sliding_window is not None] * self.L
        elif arch == SMOLLM3 and get("use_sliding_window"):
            raise ValueError("use_sliding_window is not used by the fixtures")
        elif arch.startswith("Qwen") and c.get("use_sliding_window"):
            raise ValueError("use_sliding_window is not used by the fixtures")
        elif arch == EXAONE4:
            # (layer_types, else sliding_window_pattern; none with sliding_window null: see exaone4_layer_sliding)
            self.sliding_window, sliding = exaone4_layer_sliding(c, get, self.L)
        elif arch == DOTS1:
            # (layer_types, else the layers from max_window_layers on when sliding_window is set: dots1_layer_sliding)
            self.sliding_window, sliding = dots1_layer_sliding(c, get, self.L)
        elif gemma or arch in (GPT_OSS, COHERE[1], OLMO3):
            self.sliding_window = get("sliding_window")
            if arch == COHERE[1] and self.sliding_window is None:
                raise ValueError("Cohere2: sliding_window null (no layer would rotate) is not used by the fixtures")
            types = get("layer_types")
            if types is None and arch == GPT_OSS:
                # GptOssConfig.__post_init__: "sliding_attention" if bool((i + 1) % 2) (even layers);
                # GptOssDecoderLayer.attention_type = config.layer_types[layer_idx], and
                # GptOssModel.forward masks it with create_sliding_window_causal_mask
                types = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(self.L)]
            if types is None and arch == OLMO3:
                # models/olmo3/configuration_olmo3.py Olmo3Config.__init__: `"sliding_attention" if (i + 1) % 4 != 0
                # else "full_attention"`; Olmo3Attention.__init__: attention_type = config.layer_types[layer_idx],
                # sliding_window = config.sliding_window on sliding layers only; Olmo3Model.forward masks them with
                # create_sliding_window_causal_mask, the others with create_causal_mask
                types = ["sliding_attention" if (i + 1) % 4 != 0 else "full_attention" for i in range(self.L)]
            if types is None:
                # Gemma 2: even layers (models/gemma2/modeling_gemma2.py Gemma2Attention.__init__:
                # `config.sliding_window if not bool(layer_idx % 2)`); Gemma 3: every layer but
                # each sliding_window_pattern-th (Gemma3TextConfig.__init__, `(i + 1) % pattern`)
                # Cohere 2 alike: Cohere2Config (5.x __post_init__: `bool((i + 1) % sliding_window_pattern)`,
                # pattern default 4; 4.x Cohere2Attention.__init__: `(layer_idx + 1) %
                # config.sliding_window_pattern != 0`)
                pattern = 2 if arch == "Gemma2ForCausalLM" else get("sliding_window_pattern")
                types = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(self.L)]
            if len(types) != self.L or any(t not in ("sliding_attention", "full_attention") for t in types):
                raise ValueError("layer_types must be L entries of sliding_attention/full_attention")
            sliding = [t == "sliding_attention" for t in types]
        self.layer_sliding = sliding
        # Llama 4's chunked attention (see below): the layers that take it and the chunk size; none for every other family
        self.layer_chunked = [False] * self.L
        self.attention_chunk_size = None

        # RoPE: "global" for every layer, except Gemma 3's sliding layers, which use "local":
        # theta = rope_local_base_freq and no scaling (models/gemma3/modular_gemma3.py
        # Gemma3TextModel.__init__ builds rotary_emb_local from a config copy with rope_theta =
        # rope_local_base_freq and rope_scaling {"rope_type": "default"}; Gemma3DecoderLayer.forward
        # picks it for `self.self_attn.is_sliding`)
        # LongRoPE: a sequence of more than long_rope_after tokens rotates with the long factors
        # ("long"; see forward), otherwise with the short ones ("global")
        self.long_rope_after = None
        kind = (self.rope_scaling or {}).get("rope_type", (self.rope_scaling or {}).get("type"))
        # Phi-4-mini rotates the first int(head_dim * partial_rotary_factor) dims of each head
        # (modeling_rope_utils: `dim = int(head_dim * partial_rotary_factor)`; models/phi3
        # apply_rotary_pos_emb: `rotary_dim = cos.shape[-1]`, q_rot / q_pass)
        # GLM: the same with factor 0.5 (GlmConfig/Glm4Config), pairs (2i, 2i+1) (models/glm4/
        # modeling_glm4.py apply_rotary_pos_emb: cos[..., :half].repeat_interleave(2), rotate_half
        # over x[..., 0::2] and x[..., 1::2])
        # Glm4Moe: the same factor 0.5 in the rotate-half pairing (models/glm4_moe/modeling_glm4_moe.py
        # apply_rotary_pos_emb: q_rot = q[..., :rotary_dim], rotate_half)
        # GLM-4.1V / GLM-4.5V: the same, from partial_rotary_factor (see DEFAULTS[GLM4V]: absent, 1.0 for GLM-4.1V, 0.5
        # for GLM-4.5V); Glm4vTextRotaryEmbedding (4.5x: ROPE_INIT_FUNCTIONS["default"], `dim = int(head_dim *
        # partial_rotary_factor)`) and Glm4vMoeTextRotaryEmbedding (5.x: compute_default_rope_parameters, the same dim)
        partial = arch in ("Phi3ForCausalLM", GLM4_MOE) or arch in GLM or arch in GLM_V
        self.R = int(self.HD * get("partial_rotary_factor", 1.0)) if partial else self.HD
        if arch == MINIMAX_M2:
            # MiniMaxM2RotaryEmbedding = Glm4MoeRotaryEmbedding (dim = int(head_dim * partial_rotary_factor)) and
            # glm4_moe's apply_rotary_pos_emb (q_rot = q[..., :rotary_dim], rotate_half, the rest passes)
            self.R = self.minimax_rotary_dim
        if arch in HYBRID:
            # Qwen3NextRotaryEmbedding.compute_default_rope_parameters (Qwen3_5TextRotaryEmbedding's alike): dim =
            # int(head_dim * partial_rotary_factor); models/bamba/modeling_bamba.py apply_rotary_pos_emb (imported by
            # modular_qwen3_next.py): rotary_dim = cos.shape[-1], q_rot = q[..., :rotary_dim] in the rotate-half
            # pairing, q_pass the rest
            self.R = self.hybrid_rotary_dim
        if self.mla:
            # DeepseekV3Config: head_dim = qk_rope_head_dim, so the rotary embedding (and YaRN) is built
            # over qk_rope_head_dim dims; they are the tail of each q head and the k_pe part
            self.R = self.qk_rope_head_dim
        # Cohere / Cohere 2: the whole head, adjacent dims paired (models/cohere/modeling_cohere.py
        # CohereRotaryEmbedding.forward: emb = torch.repeat_interleave(freqs, 2, dim=-1); rotate_half:
        # stack([-x[..., 1::2], x[..., ::2]], dim=-1).flatten(-2)), which is GLM's pairing with R = HD
        # ERNIE 4.5: Ernie4_5RotaryEmbedding = LlamaRotaryEmbedding (cat(freqs, freqs) over head_dim), and
        # models/ernie4_5/modular_ernie4_5.py apply_rotary_pos_emb, "glm rope style (with full dim)": cos[..., :D/2]
        # .repeat_interleave(2), GLM's rotate_half, in float (Ernie4_5_MoE imports the same)
        # GLM-4.1V: models/glm4v/modeling_glm4v.py apply_multimodal_rotary_pos_emb, `cos = cos[..., : cos.shape[-1] //
        # 2].repeat_interleave(2, dim=-1)` (sin alike) and rotate_half_llm (x[..., 0::2], x[..., 1::2] stacked): GLM's
        # adjacent pairs over the first rotary_dim dims. GLM-4.5V does not: models/glm4v_moe's
        # apply_multimodal_rotary_pos_emb (4.56 / 4.57) takes `rotary_dim = cos.shape[-1]` and rotate_half (halves),
        # 5.x's Glm4vMoeTextAttention gpt_neox's apply_rotary_pos_emb (the same): the rotate-half pairs (i, i +
        # rotary_dim / 2), as GLM-4.5
        # Llama 4: apply_rotary_emb turns the adjacent pairs (x[2i], x[2i + 1]) as complex numbers
        # (llama4_apply_rotary_emb; False: the rotate-half pairs (i, i + HD/2), a what-if only)
        self.rope_interleaved = arch in GLM or arch in COHERE or arch in ERNIE or arch == GLM4V or arch == LLAMA4
        # SmolLM3Config.__post_init__: no_rope_layers, else every no_rope_layer_interval-th layer has
        # none; SmolLM3Attention.forward rotates q/k only `if self.use_rope`
        self.layer_use_rope = [True] * self.L
        if arch == SMOLLM3:
            flags = get("no_rope_layers")
            if flags is None:
                every = get("no_rope_layer_interval")
                flags = [int((l + 1) % every != 0) for l in range(self.L)]
            self.layer_use_rope = [bool(flags[l]) for l in range(self.L)]
        if arch == COHERE[1]:
            # models/cohere2/modular_cohere2.py Cohere2Attention.forward: apply_rotary_pos_emb only
            # `if self.sliding_window is not None`, i.e. on sliding layers; full layers take none
            self.layer_use_rope = list(sliding)
        if arch == EXAONE4 and self.sliding_window is not None:
            # models/exaone4/modular_exaone4.py Exaone4Attention.forward: "We use global NoPE for hybrid attention
            # model": apply_rotary_pos_emb only `if self.sliding_window is None or self.is_sliding`. With a
            # sliding_window the full-attention layers take no RoPE (and some layer slides: exaone4_layer_sliding);
            # without one every layer rotates
            self.layer_use_rope = list(sliding)
        # Granite 4.0-H's Mamba-2 layers (mamba_mixer; False for every other family) and, for Granite 4.0, which
        # attention layers rotate (all of them or none) and the mixer's sizes: granite_hybrid_layers
        self.layer_mamba = [False] * self.L
        if arch == GRANITE_HYBRID:
            granite_hybrid_layers(self, c, get)
        # LFM2's short-convolution layers (lfm2_short_conv; False for every other family), the conv's kernel, the MLP's
        # width, the theta key and LFM2's tensor names (o_proj_name, final_norm_name): lfm2_layers
        self.layer_conv = [False] * self.L
        self.o_proj_name, self.final_norm_name = "o_proj", "norm"
        # the attention's module name (its q/k/v/o_proj live under `<layer>.<attn_module>.`) and the embedding's under the
        # prefix: "self_attn" and "embed_tokens" but for Nemotron-H ("mixer", "embeddings": nemotron_h_layers)
        self.attn_module, self.embed_name = "self_attn", "embed_tokens"
        if arch in LFM2_FAMILY:
            lfm2_layers(self, c, get)
        # Nemotron-H's blocks (layer_kinds), names and Mamba-2 sizes: nemotron_h_layers
        if arch == NEMOTRON_H:
            nemotron_h_layers(self, c, get)
        # Llama 4's per-layer attention: see llama4_layers (False / None for every other family)
        self.layer_qk_l2norm = [False] * self.L
        self.layer_temperature = [False] * self.L
        self.temperature_floor_scale = self.temperature_attn_scale = None
        self.temperature_offset = 1.0
        if arch == LLAMA4:
            llama4_layers(self, get, kind)
        # Qwen-VL: the multimodal RoPE's frequency bands (mrope_section), each turned by the
        # temporal, height or width position; chunked (Qwen2-VL, Qwen2.5-VL) or interleaved (Qwen3-VL)
        self.mrope_section, self.mrope_interleaved = None, False
        if arch in QWEN_VL and self.rope_scaling and "mrope_section" in self.rope_scaling:
            self.mrope_section = list(self.rope_scaling["mrope_section"])
            self.mrope_interleaved = arch in ("Qwen3VLForConditionalGeneration", QWEN3_VL_MOE)
            if sum(self.mrope_section) != self.HD // 2:
                raise ValueError("mrope_section must add up to head_dim / 2")
            self.rope_scaling = None  # "mrope" is the default RoPE's frequencies (Qwen2_5_VLConfig.__init__)
        if arch in GLM_V:
            # GLM-4.1V / GLM-4.5V: Glm4vTextAttention.forward (Glm4vMoeTextAttention of 4.56 / 4.57) passes
            # `self.rope_scaling["mrope_section"]` to apply_multimodal_rotary_pos_emb: `mrope_section * 2` splits the
            # rotary_dim values of cos / sin (cat(freqs, freqs)), band j taken from position row j % 3 (chunked, as
            # Qwen2.5-VL's; 5.x's Glm4vMoeTextRotaryEmbedding.recomposition_frequencies the same bands over the
            # rotary_dim / 2 frequencies, then cat(freq, freq)): the sections must add up to rotary_dim / 2 (else the
            # split fails), and a rope_scaling without them fails there (a TypeError). For text the three rows are
            # equal: the plain RoPE (mrope_cos_sin). rope_theta: the top-level key (4.5x's Glm4vTextConfig /
            # Glm4MoeConfig); transformers 4.57's converter also writes one into rope_scaling, which 5.x's
            # rope_parameters would take: refused when the two differ
            rs = self.rope_scaling or {}
            if "mrope_section" not in rs:
                raise ValueError("GLM-V: rope_scaling has no mrope_section (Glm4vTextAttention reads "
                                 "rope_scaling[\"mrope_section\"])")
            if kind not in (None, "default"):
                raise ValueError("GLM-V: rope type %r is not used by the fixtures" % kind)
            if "rope_theta" in rs and float(rs["rope_theta"]) != float(self.theta):
                raise ValueError("GLM-V: rope_scaling's rope_theta %r != rope_theta %r" % (rs["rope_theta"],
                                                                                         self.theta))
            self.mrope_section = list(rs["mrope_section"])
            if len(self.mrope_section) != 3 or sum(self.mrope_section) != self.R // 2:
                raise ValueError("GLM-V: mrope_section %r must be three sections adding up to rotary_dim / 2 = %d" % (
                    self.mrope_section, self.R // 2))
            self.rope_scaling = None
        if self.hybrid_mrope is not None:
            # Qwen3_5TextRotaryEmbedding (Qwen3VLTextRotaryEmbedding's forward): three position rows (t, h, w),
            # apply_interleaved_mrope over the rotary_dim / 2 frequencies (always interleaved), cat(freqs, freqs);
            # text positions give three equal rows: the plain RoPE (mrope_cos_sin)
            self.mrope_section, self.mrope_interleaved = list(self.hybrid_mrope), True
        self.longrope_attention_factor = None
        if arch == PHIMOE and self.rope_scaling is not None:
            # (models/phimoe/modeling_phimoe.py apply_rotary_pos_emb: `(q * cos) + (rotate_half(q) * sin)` over the
            # whole head, rotate_half the halves: rope_cos_sin / self_attention's rotate-half path, R = head_dim)
            # (short, long): (inv_freq, mscale) each; see phimoe_rope
            (inv_freq, factor), long_rope, self.long_rope_after, self.longrope_attention_factor = phimoe_rope(
                c, get, self.R, self.theta, self.rope_scaling)
        elif arch == "Phi3ForCausalLM" and kind in ("longrope", "su"):
            lr = (self.R, self.theta, self.rope_scaling, get("max_position_embeddings"),
                  get("original_max_position_embeddings"))
            inv_freq, factor = longrope_parameters(*lr)
            self.long_rope_after = get("original_max_position_embeddings")
            long_rope = longrope_parameters(*lr, long=True)
        elif kind == "yarn":
            inv_freq, factor = yarn_parameters(self.R, self.theta, self.rope_scaling, get("max_position_embeddings"),
                                               get("original_max_position_embeddings", None))
        elif self.rope_base is not None:
            # HunYuanDenseV1RotaryEmbedding.__init__: `inv_freq = 1.0 / (base ** (torch.arange(0, self.dim,
            # 2).float().to(device) / self.config.head_dim))`, `self.attention_scaling = 1.0` (see hunyuan_rope)
            inv_freq, factor = rope_inv_freq(self.R, self.rope_base, None), 1.0
        else:
            inv_freq, factor = rope_inv_freq(self.R, self.theta, self.rope_scaling), 1.0
        self.inv_freq, self.rope_attention_factor = inv_freq, factor
        self.rope = {"global": (inv_freq, factor)}
        if self.long_rope_after is not None:
            self.rope["long"] = long_rope
        self.layer_rope = ["global"] * self.L
        self.rope_local_theta = None
        if arch in GEMMA[1:]:
            self.rope_local_theta = get("rope_local_base_freq")
            self.rope["local"] = (rope_inv_freq(self.HD, self.rope_local_theta, None), 1.0)
            self.layer_rope = ["local" if s else "global" for s in sliding]
        if arch == OLMO3:
            # "RoPE scaling is not applied to sliding window attention layers" (the OLMo 3 report; OLMo-core #366):
            # transformers 4.57's Olmo3Model (PR #40778) keeps two rotary embeddings, rotary_embs["sliding_attention"]
            # the default RoPE at rope_theta and rotary_embs["full_attention"] with rope_scaling, and
            # Olmo3DecoderLayer takes the one of its attention_type; 5.x the same from rope_parameters[layer_type]
            # (PR #45945 restored it after the RoPE refactor had passed the scaled one to every layer)
            slide = self.olmo3_sliding_rope
            self.rope_local_theta = slide["rope_theta"]
            self.rope["local"] = rope_parameters_for(self.R, slide, get("max_position_embeddings"))
            self.layer_rope = ["local" if s else "global" for s in sliding]

        # mixture of experts (models/mixtral/modular_mixtral.py MixtralSparseMoeBlock,
        # models/qwen2_moe/modular_qwen2_moe.py Qwen2MoeSparseMoeBlock / Qwen2MoeDecoderLayer,
        # models/qwen3_moe/modular_qwen3_moe.py Qwen3MoeSparseMoeBlock)
        self.num_experts = 0
        self.layer_moe = [False] * self.L
        self.router = "softmax"
        # the softmax router's scores (reference.moe_block's default path): "sigmoid" a what-if only
        # (golden_models.hunyuan_moe_what_ifs); the other routers set their own below
        self.router_score = "softmax"
        self.shared_gated = True
        if arch == "MixtralForCausalLM":
            self.num_experts, self.top_k = get("num_local_experts"), get("num_experts_per_tok")
            self.norm_topk_prob = True  # always (MixtralSparseMoeBlock.forward)
            self.moe_intermediate = self.F
            self.shared_intermediate = 0
            self.layer_moe = [True] * self.L
            self.expert_naming = "mixtral"
        elif arch in ("Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM"):
            self.num_experts, self.top_k = get("num_experts"), get("num_experts_per_tok")
            self.norm_topk_prob = bool(get("norm_topk_prob"))
            self.moe_intermediate = get("moe_intermediate_size")
            self.shared_intermediate = get("shared_expert_intermediate_size") if arch == "Qwen2MoeForCausalLM" else 0
            dense = get("mlp_only_layers") or []
            step = get("decoder_sparse_step")
            # Qwen2MoeDecoderLayer.__init__: MoE where layer_idx not in mlp_only_layers and
            # num_experts > 0 and (layer_idx + 1) % decoder_sparse_step == 0
            self.layer_moe = [l not in dense and self.num_experts > 0 and (l + 1) % step == 0
                              for l in range(self.L)]
            self.expert_naming = "qwen"
        elif arch == QWEN3_VL_MOE:
            # models/qwen3_vl_moe/modeling_qwen3_vl_moe.py (transformers 4.57, the version the releases were saved
            # with): Qwen3VLMoeTextDecoderLayer.__init__ (Qwen3MoeDecoderLayer's): Qwen3VLMoeTextSparseMoeBlock where
            # `(layer_idx not in config.mlp_only_layers) and (config.num_experts > 0 and (layer_idx + 1) %
            # config.decoder_sparse_step == 0)`, else Qwen3VLMoeTextMLP(config, intermediate_size=
            # config.intermediate_size) (mlp.gate_proj / up_proj / down_proj). The block: gate = nn.Linear(hidden_size,
            # num_experts, bias=False) (mlp.gate.weight; 5.x's Qwen3VLMoeTextTopKRouter.weight, the same name);
            # routing_weights = softmax(router_logits, dtype=float), torch.topk of num_experts_per_tok, `routing_weights
            # = routing_weights / routing_weights.sum(dim=-1, keepdim=True)` always (5.x: `router_top_value /=
            # router_top_value.sum(...)`), `.to(hidden_states.dtype)`: norm_topk_prob is not read (a false one is
            # refused: a reader of the key would not renormalise); Qwen3VLMoeTextExperts fused and transposed (see
            # qwen3_vl_moe_expert). No shared expert
            if "norm_topk_prob" in c and not c["norm_topk_prob"]:
                raise ValueError("Qwen3-VL-MoE: norm_topk_prob false (Qwen3VLMoeTextSparseMoeBlock always "
                                 "renormalises)")
            self.num_experts, self.top_k = get("num_experts"), get("num_experts_per_tok")
            self.norm_topk_prob = True  # always; False: a what-if only
            self.moe_intermediate = get("moe_intermediate_size")
            self.shared_intermediate = 0
            dense = get("mlp_only_layers") or []
            step = get("decoder_sparse_step")
            self.layer_moe = [l not in dense and self.num_experts > 0 and (l + 1) % step == 0 for l in range(self.L)]
            # "fused_transposed": mlp.experts.gate_up_proj (E, H, 2F) / down_proj (E, F, H), as released; "qwen":
            # per-expert tensors (what tools that split fused experts write); load_model picks it from the weights
            # (qwen3_vl_moe_expert_layout)
            self.expert_naming = "fused_transposed"
            # (what-ifs only, golden_models: the released tensors read as gate / up swapped, gate / up interleaved in
            # the 2F columns, or as transformers 5's (E, 2F, H) / (E, H, F) without the transpose)
            self.fused_reading = "chunk"
        elif arch in (GLM4_MOE, DEEPSEEK_V3, GLM4V_MOE, DOTS1, GLM4_MOE_LITE):
            # models/glm4_moe/modeling_glm4_moe.py: Glm4MoeDecoderLayer.__init__ (MoE from layer
            # first_k_dense_replace on), Glm4MoeMoE (n_routed_experts, shared_experts of
            # moe_intermediate_size * n_shared_experts), Glm4MoeTopkRouter (e_score_correction_bias).
            # DeepSeek-V3 the same, line for line (models/deepseek_v3/modeling_deepseek_v3.py
            # DeepseekV3DecoderLayer.__init__: DeepseekV3MoE when layer_idx >= first_k_dense_replace;
            # DeepseekV3MoE.__init__ / forward: an ungated shared_experts MLP of moe_intermediate_size *
            # n_shared_experts added to the routed sum; DeepseekV3TopkRouter.forward / get_topk_indices)
            # GLM-4.5V the same (models/glm4v_moe/modular_glm4v_moe.py, 4.56 / 4.57: Glm4vMoeTextDecoderLayer(
            # Glm4MoeDecoderLayer), Glm4vMoeTextMoE(Glm4MoeMoE) with `self.experts = nn.ModuleList([
            # Glm4vMoeTextMLP(config, intermediate_size=config.moe_intermediate_size) for _ in
            # range(config.n_routed_experts)])` (per-expert mlp.experts.{e}.gate_proj / up_proj / down_proj, as
            # released), Glm4vMoeTextTopkRouter(Glm4MoeTopkRouter), shared_experts Glm4vMoeTextMLP of
            # moe_intermediate_size * n_shared_experts; 5.x: Glm4vMoeTextExperts = DeepseekV3Experts, the per-expert
            # tensors stacked on load by conversion_mapping's "glm4v_moe": "qwen2_moe")
            # dots.llm1 the same (models/dots1/modular_dots1.py: Dots1DecoderLayer(DeepseekV3DecoderLayer), Dots1MoE(
            # DeepseekV3MoE), Dots1TopkRouter(DeepseekV3TopkRouter), Dots1MLP(DeepseekV3MLP): per-expert
            # mlp.experts.{e}.gate_proj / up_proj / down_proj in 4.53 - 4.57 and the release, the dense layers'
            # mlp.gate_proj / up_proj / down_proj of intermediate_size); see dots1_router_keys for what is refused
            # GLM-4.7-Flash the same (models/glm4_moe_lite/modular_glm4_moe_lite.py: Glm4MoeLiteMoE(Glm4MoeMoE),
            # Glm4MoeLiteTopkRouter(Glm4MoeTopkRouter), Glm4MoeLiteExperts(Glm4MoeExperts): stacked in transformers 5,
            # per expert mlp.experts.{e}.gate_proj / up_proj / down_proj in the release, which 5's conversion_mapping
            # stacks on load), but for which layers are dense: glm4_moe_lite_layers
            if arch == DOTS1:
                dots1_router_keys(get)
            self.num_experts, self.top_k = get("n_routed_experts"), get("num_experts_per_tok")
            self.norm_topk_prob = bool(get("norm_topk_prob"))
            self.moe_intermediate = get("moe_intermediate_size")
            self.shared_intermediate = get("moe_intermediate_size") * get("n_shared_experts")
            self.shared_gated = False
            self.router = "sigmoid"
            # (what-if only, golden_models.glm4v_moe_what_ifs: "softmax", the scores s a softmax over the experts)
            self.router_score = "sigmoid"
            self.n_group, self.topk_group = get("n_group"), get("topk_group")
            self.routed_scaling_factor = get("routed_scaling_factor")
            if arch == GLM4_MOE_LITE:
                self.layer_moe = glm4_moe_lite_layers(c, get, self.L)
            else:
                dense = get("first_k_dense_replace")
                self.layer_moe = [l >= dense for l in range(self.L)]
            self.expert_naming = "qwen"
        elif arch == DEEPSEEK_V2:
            # models/deepseek_v2/modular_deepseek_v2.py DeepseekV2DecoderLayer.__init__: `DeepseekV2Moe(config) if
            # layer_idx >= config.first_k_dense_replace else DeepseekV2MLP(config)`; DeepseekV2Moe: gate (nn.Linear,
            # no bias), routed experts of moe_intermediate_size, shared_experts one DeepseekV2MLP of
            # moe_intermediate_size * n_shared_experts (ungated) added to the routed sum;
            # route_tokens_to_experts: see deepseek_v2_route. norm_topk_prob: never renormalised (a what-if only)
            self.num_experts, self.top_k = get("n_routed_experts"), get("num_experts_per_tok")
            self.norm_topk_prob = False
            self.moe_intermediate = get("moe_intermediate_size")
            if get("n_shared_experts") is None:
                # (DeepseekV2Moe.forward adds self.shared_experts(residuals) unconditionally)
                raise ValueError("DeepSeek-V2: n_shared_experts null is not used by the fixtures")
            self.shared_intermediate = get("moe_intermediate_size") * get("n_shared_experts")
            self.shared_gated = False
            self.router = "deepseek_v2"
            self.topk_method = get("topk_method")
            self.n_group, self.topk_group = get("n_group"), get("topk_group")
            # how group_limited_greedy scores a group: the largest probability in it ("max", V2); "top2_sum" (the
            # sum of the two largest, DeepSeek-V3's rule) is a what-if only
            self.v2_group_score = "max"
            self.routed_scaling_factor = get("routed_scaling_factor")
            dense = get("first_k_dense_replace")
            self.layer_moe = [l >= dense for l in range(self.L)]
            self.expert_naming = "qwen"
            if self.topk_method == "group_limited_greedy":
                E, G, TG = self.num_experts, self.n_group, self.topk_group
                if not G or not TG or E % G or not 0 < TG <= G or TG * (E // G) < self.top_k:
                    raise ValueError("DeepSeek-V2: group_limited_greedy needs n_group dividing n_routed_experts and "
                                     "topk_group groups holding at least num_experts_per_tok experts")
        elif arch == OLMOE:
            # models/olmoe/modular_olmoe.py OlmoeDecoderLayer(LlamaDecoderLayer): mlp = OlmoeSparseMoeBlock on every
            # layer (Llama's input_layernorm / post_attention_layernorm around it); gate = nn.Linear(hidden_size,
            # num_experts, bias=False) (mlp.gate.weight); route_tokens_to_experts: softmax(router_logits.float()),
            # torch.topk of num_experts_per_tok, renormalised over the k only when norm_topk_prob (released: false),
            # .to(hidden dtype); OlmoeExperts: num_experts OlmoeMLP (GemmaMLP: down(act(gate(x)) * up(x))) of
            # intermediate_size, mlp.experts.{e}.gate_proj / up_proj / down_proj; no shared expert
            self.num_experts, self.top_k = get("num_experts"), get("num_experts_per_tok")
            self.norm_topk_prob = bool(get("norm_topk_prob"))
            self.moe_intermediate = self.F
            self.shared_intermediate = 0
            self.layer_moe = [True] * self.L
            self.expert_naming = "qwen"
        elif arch == MINIMAX_M2:
            # models/minimax_m2/modular_minimax_m2.py: MiniMaxM2DecoderLayer = MixtralDecoderLayer (input_layernorm,
            # attention, add; post_attention_layernorm, MoE, add), MiniMaxM2SparseMoeBlock on every layer: gate =
            # MiniMaxM2TopKRouter (MixtralTopKRouter's weight (num_local_experts, hidden_size), no bias), the buffer
            # e_score_correction_bias (num_local_experts,), MiniMaxM2Experts = MixtralExperts (w2(act(w1 x) * w3 x), of
            # intermediate_size); no shared expert. Router: see minimax_route. Weights as released (MiniMax's
            # remote code): block_sparse_moe.gate.weight, block_sparse_moe.e_score_correction_bias,
            # block_sparse_moe.experts.{e}.w1 / w3 / w2 ("mixtral"); as transformers 5 saves them: mlp.gate.weight,
            # mlp.e_score_correction_bias, mlp.experts.gate_up_proj (E, 2F, H) / down_proj (E, H, F) ("stacked"),
            # chosen from the weights by load_model (minimax_m2_expert_layout)
            if get("scoring_func") != "sigmoid" or not get("use_routing_bias") or get("shared_intermediate_size"):
                raise ValueError("MiniMax-M2: scoring_func %r, use_routing_bias %r, shared_intermediate_size %r "
                                 "(transformers always runs the sigmoid router with the correction bias and no "
                                 "shared expert)" % (get("scoring_func"), get("use_routing_bias"),
                                                     get("shared_intermediate_size")))
            self.num_experts, self.top_k = get("num_local_experts"), get("num_experts_per_tok")
            self.norm_topk_prob = True  # always (MiniMaxM2TopKRouter.forward); False: a what-if only
            self.moe_intermediate = self.F
            self.shared_intermediate = 0
            self.layer_moe = [True] * self.L
            self.expert_naming = "mixtral"
            self.router = "minimax"
            # what-ifs only (golden_models): the score function ("softmax" in place of the sigmoid) and the weights
            # taken from s + e_score_correction_bias instead of s
            self.router_score, self.router_weight_bias = "sigmoid", False
        elif arch == ERNIE4_5_MOE:
            # models/ernie4_5_moe/modular_ernie4_5_moe.py Ernie4_5_MoeDecoderLayer.__init__: Ernie4_5_MoeSparseMoeBlock
            # where `((layer_idx + 1) % moe_layer_interval == 0) and layer_idx >= moe_layer_start_index and layer_idx <=
            # moe_layer_end_index` (Ernie4_5_MoeConfig.__init__: end -1 -> num_hidden_layers - 1), else Ernie4_5_MoeMLP
            # (config) of intermediate_size. The block: gate = nn.Linear(hidden_size, moe_num_experts, bias=False,
            # dtype=float32) (mlp.gate.weight; transformers 5: Ernie4_5_MoeTopKRouter.weight, the same name), moe_statics
            # = Ernie4_5_MoeStatics (mlp.moe_statics.e_score_correction_bias, (1, moe_num_experts), float32; both kept
            # in fp32: _keep_in_fp32_modules_strict), experts moe_num_experts Ernie4_5_MoeMLP of moe_intermediate_size
            # (mlp.experts.{e}.gate_proj / up_proj / down_proj; transformers 5 stacks them: not used by the fixtures),
            # shared_experts one Ernie4_5_MoeMLP of moe_intermediate_size * moe_num_shared_experts when that is > 0,
            # ungated, added to the experts' sum (mlp.shared_experts.*). Router: see ernie_route.
            # Refused: the VL models' per-modality lists (moe_num_experts, moe_intermediate_size,
            # moe_layer_start_index as lists / tuples), and the keys of Baidu's own configs that transformers does not
            # read but Baidu's code would act on: moe_use_aux_free false (no correction bias), moe_gate other than
            # "topk", use_rmsnorm false (LayerNorms)
            keys = ("moe_num_experts", "moe_k", "moe_intermediate_size", "moe_num_shared_experts", "moe_layer_start_index",
                    "moe_layer_end_index", "moe_layer_interval")
            for key in keys:
                if isinstance(get(key), bool) or not isinstance(get(key), int):
                    raise ValueError("ERNIE 4.5 MoE: %s %r (an integer; the VL models' per-modality lists are not used "
                                     "by the fixtures)" % (key, get(key)))
            if not get("moe_use_aux_free") or get("moe_gate") != "topk" or not get("use_rmsnorm"):
                raise ValueError("ERNIE 4.5 MoE: moe_use_aux_free %r, moe_gate %r, use_rmsnorm %r (transformers always "
                                 "runs the softmax top-k router with the correction bias and RMSNorms)" % (
                                     get("moe_use_aux_free"), get("moe_gate"), get("use_rmsnorm")))
            if get("moe_num_experts") < 1 or get("moe_num_shared_experts") < 0 or get("moe_layer_interval") < 1:
                raise ValueError("ERNIE 4.5 MoE: moe_num_experts %r, moe_num_shared_experts %r, moe_layer_interval %r" % (
                    get("moe_num_experts"), get("moe_num_shared_experts"), get("moe_layer_interval")))
            self.num_experts, self.top_k = get("moe_num_experts"), get("moe_k")
            self.norm_topk_prob = True  # always (max(sum, moe_norm_min)); False: a what-if only
            self.moe_norm_min = float(get("moe_norm_min"))
            self.moe_intermediate = get("moe_intermediate_size")
            self.shared_intermediate = get("moe_intermediate_size") * get("moe_num_shared_experts")
            self.shared_gated = False
            start, interval = get("moe_layer_start_index"), get("moe_layer_interval")
            end = self.L - 1 if get("moe_layer_end_index") == -1 else get("moe_layer_end_index")
            self.layer_moe = [(l + 1) % interval == 0 and start <= l <= end for l in range(self.L)]
            self.expert_naming = "qwen"
            self.router = "ernie"
            # what-ifs only (golden_models): the score function ("sigmoid" in place of the softmax) and the weights
            # taken from p + e_score_correction_bias instead of p
            self.router_score, self.router_weight_bias = "softmax", False
        elif arch == QWEN3_NEXT:
            # models/qwen3_next/modular_qwen3_next.py Qwen3NextDecoderLayer.__init__: Qwen3NextSparseMoeBlock
            # (= Qwen2MoeSparseMoeBlock) where `layer_idx not in config.mlp_only_layers and config.num_experts > 0 and
            # (layer_idx + 1) % config.decoder_sparse_step == 0`, else Qwen3NextMLP(intermediate_size). The block:
            # Qwen2MoeTopKRouter (mlp.gate (E, H): softmax in fp32, torch.topk, renormalised when norm_topk_prob),
            # experts of moe_intermediate_size (transformers 4.57 / the release: mlp.experts.{e}.gate_proj / up_proj /
            # down_proj; transformers 5's Qwen2MoeExperts = MixtralExperts stacked: mlp.experts.gate_up_proj (E, 2F,
            # H), down_proj (E, H, F); load_model picks the layout from the weights, hybrid_expert_layout), plus
            # sigmoid(mlp.shared_expert_gate(h)) * mlp.shared_expert(h) of shared_expert_intermediate_size
            self.num_experts, self.top_k = get("num_experts"), get("num_experts_per_tok")
            self.norm_topk_prob = bool(get("norm_topk_prob"))
            self.moe_intermediate = get("moe_intermediate_size")
            self.shared_intermediate = get("shared_expert_intermediate_size")
            dense = get("mlp_only_layers") or []
            step = get("decoder_sparse_step")
            self.layer_moe = [l not in dense and self.num_experts > 0 and (l + 1) % step == 0 for l in range(self.L)]
            self.expert_naming = "qwen"
        elif arch == QWEN3_5_MOE:
            # models/qwen3_5_moe/modular_qwen3_5_moe.py Qwen3_5MoeDecoderLayer.__init__: `self.mlp =
            # Qwen3_5MoeSparseMoeBlock(config)` on every layer (= Qwen3NextSparseMoeBlock: Qwen2MoeSparseMoeBlock's
            # forward, shared expert with its sigmoid gate) with Qwen3_5MoeTopKRouter = Qwen3VLMoeTextTopKRouter:
            # softmax in fp32, torch.topk, `router_top_value /= router_top_value.sum(dim=-1, keepdim=True)` always (no
            # norm_topk_prob: Qwen3_5MoeTextConfig removes the key; a false one is refused). Experts stacked
            # (Qwen3_5MoeExperts = Qwen2MoeExperts: mlp.experts.gate_up_proj (E, 2F, H), down_proj (E, H, F)) as
            # transformers 5 saves them, or per expert (hybrid_expert_layout)
            if "norm_topk_prob" in c and not c["norm_topk_prob"]:
                raise ValueError("Qwen3.5-MoE: norm_topk_prob false (Qwen3VLMoeTextTopKRouter always renormalises)")
            self.num_experts, self.top_k = get("num_experts"), get("num_experts_per_tok")
            self.norm_topk_prob = True  # always; False: a what-if only
            self.moe_intermediate = get("moe_intermediate_size")
            self.shared_intermediate = get("shared_expert_intermediate_size")
            self.layer_moe = [True] * self.L
            self.expert_naming = "stacked"
        elif arch in GRANITE_MOE:
            # models/granitemoe/modular_granitemoe.py GraniteMoeMoE: every layer; experts as wide as
            # intermediate_size stacked in input_linear (E, 2F, H; chunk(2): gate, then up) and
            # output_linear (E, H, F); JetMoeTopKGating: softmax of the top-k logits (= the softmax
            # over all E renormalised over the k); models/granitemoeshared GraniteMoeSharedMLP: an
            # ungated shared_mlp of shared_intermediate_size (input_linear chunk(2), output_linear)
            self.num_experts, self.top_k = get("num_local_experts"), get("num_experts_per_tok")
            self.norm_topk_prob = True
            self.moe_intermediate = self.F
            self.shared_intermediate = get("shared_intermediate_size") if arch == GRANITE_MOE[1] else 0
            self.shared_gated = False
            self.layer_moe = [True] * self.L
            self.expert_naming = "granite"
        elif arch == GRANITE_HYBRID:
            # models/granitemoehybrid/modular_granitemoehybrid.py GraniteMoeHybridDecoderLayer.__init__: `self.shared_mlp
            # = GraniteMoeHybridMLP(config)` on every layer, whatever num_local_experts (GraniteMoeSharedMLP of
            # shared_intermediate_size: input_linear (2 x shared_intermediate_size, H), chunk(2): gate then up;
            # output_linear; unlike GraniteMoeSharedDecoderLayer there is no `None if shared_intermediate_size == 0`),
            # `self.block_sparse_moe = GraniteMoeHybridMoE(config) if config.num_local_experts > 0 else None`
            # (GraniteMoeSharedMoE = GraniteMoeMoE: experts of intermediate_size stacked in input_linear (E, 2F, H) /
            # output_linear (E, H, F), GraniteMoeTopKGating's softmax of the top-k logits); forward: `if
            # self.has_experts: moe_hidden_states = self.block_sparse_moe(hidden_states); hidden_states =
            # moe_hidden_states + self.shared_mlp(hidden_states)`, `else: hidden_states = self.shared_mlp(hidden_states)`
            # (feed_forward). With no experts intermediate_size is not read at all
            E, Fs = get("num_local_experts"), get("shared_intermediate_size")
            for key, value, least in (("num_local_experts", E, 0), ("shared_intermediate_size", Fs, 1)):
                if isinstance(value, bool) or not isinstance(value, int) or value < least:
                    raise ValueError("Granite 4.0: %s %r (an integer >= %d: shared_mlp is every layer's MLP, or runs "
                                     "beside the experts)" % (key, value, least))
            self.num_experts = E
            self.top_k = get("num_experts_per_tok")
            self.norm_topk_prob = True  # the softmax of the top-k logits (GraniteMoeTopKGating)
            self.moe_intermediate = self.F
            self.shared_intermediate = Fs
            self.shared_gated = False
            self.layer_moe = [E > 0] * self.L
            self.expert_naming = "granite"
        elif arch == GPT_OSS:
            # models/gpt_oss/modular_gpt_oss.py GptOssMLP (every layer): GptOssTopKRouter (a biased
            # linear router; softmax of the top-k logits) and GptOssExperts (num_local_experts of
            # intermediate_size, stacked, biased, clamped SwiGLU: see gpt_oss_expert)
            self.num_experts, self.top_k = get("num_local_experts"), get("num_experts_per_tok")
            self.norm_topk_prob = True  # the softmax of the top-k logits sums to 1 over the k
            self.moe_intermediate = self.F
            self.shared_intermediate = 0
            self.router = "topk_softmax"
            self.layer_moe = [True] * self.L
            self.expert_naming = "gpt_oss"
            self.swiglu_alpha, self.swiglu_limit = float(get("swiglu_alpha")), float(get("swiglu_limit"))
        elif arch == PHIMOE:
            # models/phimoe/modeling_phimoe.py PhimoeDecoderLayer: block_sparse_moe = PhimoeSparseMoeBlock on every
            # layer: gate = nn.Linear(hidden_size, num_local_experts, bias=False) (block_sparse_moe.gate.weight),
            # experts num_local_experts PhimoeBlockSparseTop2MLP of intermediate_size (w2(act(w1 x) * w3 x):
            # block_sparse_moe.experts.{e}.w1 / w3 / w2, Mixtral's names; PhimoeBlockSparseTop2MLP.forward:
            # `self.w2(self.act_fn(self.w1(hidden_states)) * self.w3(hidden_states))`); routing_weights,
            # selected_experts = sparsemixer(router_logits, jitter_eps=router_jitter_noise, training=False): see
            # sparsemixer_route.
            # sparsemixer raises unless top_k == 2 (`if top_k != 2: raise ValueError("top_k must be equal to 2")`;
            # PhimoeSparseMoeBlock.forward calls it with the default top_k=2 whatever num_experts_per_tok says: another
            # num_experts_per_tok is refused). input_jitter_noise multiplies the inputs in training only
            if get("num_experts_per_tok") != 2:
                raise ValueError("PhiMoE: num_experts_per_tok %r (sparsemixer always routes to 2 experts)" % (
                    get("num_experts_per_tok"),))
            self.num_experts, self.top_k = get("num_local_experts"), 2
            self.norm_topk_prob = False  # (not read: sparsemixer's weights are its two masked softmaxes)
            self.moe_intermediate = self.F
            self.shared_intermediate = 0
            self.layer_moe = [True] * self.L
            self.expert_naming = "mixtral"
            self.router = "sparsemixer"
            self.jitter_eps = float(get("router_jitter_noise"))
            # what-ifs only (golden_models): the threshold's multiple of jitter_eps (2), the masks applied, the second
            # softmax over the scores with the first expert's at -inf (False: over the original scores)
            self.sparsemixer_threshold, self.sparsemixer_masks, self.sparsemixer_second_excludes_first = 2.0, True, True
        elif arch == LLAMA4:
            # models/llama4/modeling_llama4.py Llama4TextDecoderLayer.__init__: `self.is_moe_layer = layer_idx in
            # config.moe_layers`, feed_forward = Llama4TextMoe(config) there, else Llama4TextMLP(config,
            # intermediate_size=config.intermediate_size_mlp) (feed_forward.gate_proj / up_proj / down_proj);
            # Llama4TextConfig.__post_init__: moe_layers, else list(range(interleave_moe_layer_step - 1,
            # num_hidden_layers, interleave_moe_layer_step)). Llama4TextMoe: router = Llama4Router (nn.Linear(hidden_size,
            # num_local_experts, bias=False): feed_forward.router.weight), experts = Llama4TextExperts (fused, used as
            # x @ W: feed_forward.experts.gate_up_proj (E, H, 2 intermediate_size), feed_forward.experts.down_proj (E,
            # intermediate_size, H)), shared_expert = Llama4TextMLP(config) of intermediate_size, ungated
            # (feed_forward.shared_expert.gate_proj / up_proj / down_proj). Router and experts: see llama4_moe
            self.num_experts, self.top_k = get("num_local_experts"), get("num_experts_per_tok")
            self.norm_topk_prob = False  # (sigmoid scores of the top-k logits, never renormalised)
            self.moe_intermediate = get("intermediate_size")
            self.shared_intermediate = get("intermediate_size")
            self.shared_gated = False
            moe = get("moe_layers")
            if moe is None:
                step = get("interleave_moe_layer_step")
                moe = list(range(step - 1, self.L, step))
            if any(isinstance(l, bool) or not isinstance(l, int) or not 0 <= l < self.L for l in moe):
                raise ValueError("Llama 4: moe_layers %r (layer indices in [0, num_hidden_layers))" % (moe,))
            self.layer_moe = [l in moe for l in range(self.L)]
            self.expert_naming = "llama4"
            self.router = "llama4"
            # what-ifs only (golden_models.llama4_what_ifs): "softmax" (the softmax of the top-k logits, renormalised
            # over the k, in place of their sigmoids), and the scores multiplied onto the experts' outputs instead of
            # their inputs
            self.llama4_router_score, self.llama4_scores_on_input = "sigmoid", True
        elif arch == LFM2_MOE:
            # models/lfm2_moe/modular_lfm2_moe.py Lfm2MoeDecoderLayer.__init__: feed_forward = `Lfm2MoeMLP(config,
            # intermediate_size=config.intermediate_size)` when layer_idx < num_dense_layers (feed_forward.w1 / w3 / w2,
            # the width as it stands: see lfm2_layers), else Lfm2MoeSparseMoeBlock: gate = nn.Linear(hidden_size,
            # num_experts, bias=False) (feed_forward.gate.weight), with use_expert_bias the buffer expert_bias
            # (num_experts,) in float32 (feed_forward.expert_bias), experts of moe_intermediate_size (w2(silu(w1 x) *
            # w3 x) each; released per expert as feed_forward.experts.{e}.w1 / w3 / w2, which transformers 5's
            # conversion_mapping "lfm2_moe" stacks into experts.gate_up_proj / down_proj on load); no shared expert.
            # Router: see lfm2_moe_route
            E, dense = get("num_experts"), get("num_dense_layers")
            for key, value, least in (("num_experts", E, 1), ("num_dense_layers", dense, 0),
                                      ("moe_intermediate_size", get("moe_intermediate_size"), 1)):
                if isinstance(value, bool) or not isinstance(value, int) or value < least:
                    raise ValueError("LFM2-MoE: %s %r (an integer >= %d)" % (key, value, least))
            self.num_experts, self.top_k = E, get("num_experts_per_tok")
            self.norm_topk_prob = bool(get("norm_topk_prob"))
            self.moe_intermediate = get("moe_intermediate_size")
            self.shared_intermediate = 0
            self.layer_moe = [l >= dense for l in range(self.L)]
            self.expert_naming = "lfm2"
            self.router = "lfm2"
            self.routed_scaling_factor = float(get("routed_scaling_factor"))
            # use_expert_bias false: no buffer, the top-k of s itself (also golden_models' what-if "router_bias", on the
            # fixture's weights: the stored bias then left unread)
            self.lfm2_expert_bias = bool(get("use_expert_bias"))
            # what-ifs only (golden_models.lfm2_moe_what_ifs): the score function ("softmax" in place of the sigmoid)
            # and the weights taken from s + expert_bias instead of s
            self.router_score, self.router_weight_bias = "sigmoid", False
        elif arch == NEMOTRON_H and "moe" in self.layer_kinds:
            # models/nemotron_h/modular_nemotron_h.py: an "E" block's mixer is NemotronHMoE, a subclass of
            # deepseek_v3's DeepseekV3MoE that keeps its routing (route_tokens_to_experts, with the gate
            # NemotronHTopkRouter = DeepseekV3TopkRouter: the fp32 logits h W^T of mixer.gate.weight (E, H) and the
            # buffer mixer.gate.e_score_correction_bias (E,), kept in fp32 by _keep_in_fp32_modules_strict) and swaps
            # the rest: the experts are NemotronHExperts, n_routed_experts of moe_intermediate_size with up_proj and
            # down_proj only (no gate projection), act mlp_hidden_act; the shared expert is one NemotronHMLP of
            # moe_shared_expert_intermediate_size (ungated, added with weight 1); with moe_latent_size (Nemotron 3
            # Super's LatentMoE; the Nano release has none: null) the routed experts work in a narrower latent space
            # (moe_block: mixer.fc1_latent_proj (latent, H) before them, mixer.fc2_latent_proj (H, latent) after
            # their weighted sum; their up_proj (Fm, latent) / down_proj (latent, Fm)). NVIDIA's remote code of
            # the release computes the same with `experts` a ModuleList (mixer.experts.{e}.up_proj / down_proj, the
            # names in the files; transformers 5 stacks them on load: see nemotron_h_expert). DeepseekV3MoE reads the
            # group keys as DeepSeek-V3 does: sigmoid_route. n_shared_experts is read by neither (the shared width is
            # moe_shared_expert_intermediate_size alone) but other engines size the shared expert with it: a value
            # other than 1 is refused. Refused too: sizes below 1, n_group not dividing n_routed_experts or leaving
            # fewer than 2 experts per group (the group score adds a group's two best), topk_group outside [1,
            # n_group], top-k beyond the experts topk_group groups hold, mlp_bias (the experts' biases)
            E, k, Fm, Fs = (get(key) for key in ("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                                                 "moe_shared_expert_intermediate_size"))
            G, TG = get("n_group"), get("topk_group")
            latent = get("moe_latent_size")
            for key, value in (("n_routed_experts", E), ("num_experts_per_tok", k), ("moe_intermediate_size", Fm),
                               ("moe_shared_expert_intermediate_size", Fs), ("n_group", G), ("topk_group", TG)) + (
                                   (("moe_latent_size", latent),) if latent is not None else ()):
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise ValueError("Nemotron-H: %s %r (a positive integer)" % (key, value))
            if get("n_shared_experts") != 1:
                raise ValueError("Nemotron-H: n_shared_experts %r (transformers adds one shared expert of "
                                 "moe_shared_expert_intermediate_size whatever it says)" % (get("n_shared_experts"),))
            sigmoid_router_groups("Nemotron-H", E, k, G, TG)
            if get("mlp_bias"):
                raise ValueError("Nemotron-H: mlp_bias true (the MLPs' and experts' biases) is not used by the "
                                 "fixtures")
            self.num_experts, self.top_k = E, k
            self.norm_topk_prob = bool(get("norm_topk_prob"))
            self.moe_intermediate, self.shared_intermediate = Fm, Fs
            # the routed experts' width of input / output: moe_latent_size, or None (hidden_size, no projection)
            self.moe_latent = latent
            self.shared_gated = False
            self.router = "sigmoid"
            # (what-if only, golden_models.nemotron_h_moe_what_ifs: "softmax", the scores s a softmax over the experts)
            self.router_score = "sigmoid"
            self.n_group, self.topk_group = G, TG
            self.routed_scaling_factor = float(get("routed_scaling_factor"))
            self.layer_moe = [kk == "moe" for kk in self.layer_kinds]
            self.expert_naming = "nemotron_h"
        elif arch == HUNYUAN_MOE:
            # models/hunyuan_v1_moe/modular_hunyuan_v1_moe.py (4.56 / 4.57's generated modeling_hunyuan_v1_moe.py the
            # same numbers): HunYuanMoEV1DecoderLayer (LlamaDecoderLayer) takes `self.mlp = HunYuanMoEV1Moe(config,
            # layer_idx)` on every layer. HunYuanMoEV1Gate: `self.wg = nn.Linear(hidden_size, num_experts, bias=False,
            # dtype=torch.float32)` (mlp.gate.wg.weight), the hidden states cast to fp32 when wg is fp32; the routing
            # (4.57's forward, 5.x's route_tokens_to_experts): softmax over all experts in fp32, torch.topk of top_k,
            # divided by their sum (no epsilon), cast to the hidden dtype; experts num_experts HunYuanMoEV1MLP
            # (LlamaMLP: down(act(gate x) * up x), no biases) of intermediate_size: per expert
            # mlp.experts.{e}.gate_proj / up_proj / down_proj in 4.56 / 4.57 and the releases, 5.x's
            # HunYuanMoEV1Experts(MixtralExperts) stacked (mlp.experts.gate_up_proj (E, 2F, H), down_proj (E, H, F);
            # conversion_mapping "hunyuan_v1_moe" copies qwen2_moe's stacking rule): both read here (expert_tensors);
            # `final_hidden_states + hidden_states_mlp` with hidden_states_mlp = self.shared_mlp(hidden_states), a
            # HunYuanMoEV1MLP of intermediate_size added without a gate or weight (mlp.shared_mlp.*). The keys
            # transformers leaves unread: hunyuan_moe_keys
            self.num_experts, self.top_k = hunyuan_moe_keys(c, get, self.L, self.F, self.HD)
            self.norm_topk_prob = True  # always; False: a what-if only
            self.moe_intermediate = self.shared_intermediate = self.F
            self.shared_gated = False
            self.layer_moe = [True] * self.L
            self.expert_naming = "hunyuan"
        if arch in QWEN_VL and kind not in (None, "default", "mrope"):
            raise ValueError("rope type %r is not used by the Qwen-VL fixtures" % kind)
        if self.num_experts and not 0 < self.top_k <= self.num_experts:
            raise ValueError("num_experts_per_tok must be in [1, num_experts]")
        # Qwen2MoeSparseMoeBlock's sigmoid gate on the shared expert (False: a what-if only)
        self.shared_gate_applied = True
        # (what-ifs only, golden_models.granite_hybrid_what_ifs: Granite's shared_mlp with its input_linear halves
        # swapped (up rows first), and shared_mlp read at another width from the start of each stored buffer: see
        # expert_tensors)
        self.shared_mlp_swapped, self.shared_mlp_width = False, None
        hybrid_layers(self, c, get)
        gemma4_layers(self, c, get, torch_dtype)


def sigmoid_router_groups(family, E, k, G, TG):
    """Refuses expert groups DeepseekV3TopkRouter.get_topk_indices (sigmoid_choice) cannot run as the fixtures use it:
    n_group not dividing the experts or leaving fewer than 2 per group (a group scores the sum of its two best), topk_group
    outside [1, n_group], or fewer experts in the kept groups than the top-k."""
    if E % G or E // G < 2 or not 1 <= TG <= G or TG * (E // G) < k:
        raise ValueError("%s: n_group %d / topk_group %d for %d experts, top-%d" % (family, G, TG, E, k))


def glm4_moe_lite_layers(c, get, L):
    """Which layers of a GLM-4.7-Flash config (Glm4MoeLiteForCausalLM) are MoE: models/glm4_moe_lite/
    modular_glm4_moe_lite.py Glm4MoeLiteDecoderLayer.__init__ builds `Glm4MoeLiteMoE(config) if
    config.mlp_layer_types[layer_idx] == "sparse" else Glm4MoeLiteMLP(config)` (intermediate_size), and
    Glm4MoeLiteConfig.__post_init__ defaults mlp_layer_types to ["dense"] + ["sparse"] * (num_hidden_layers - 1).
    first_k_dense_replace is no field of Glm4MoeLiteConfig: transformers never reads it, but the release lists it (1) and
    DeepSeek-style loaders (vLLM's, DeepSeek's own code) take the dense layers from it: one that says otherwise than the
    layer types is refused, as is moe_layer_freq other than 1 (Spec's MLA keys). Refused too: mlp_layer_types of
    another length or with entries other than "dense" / "sparse", n_shared_experts below 1 (Glm4MoeLiteMoE always adds
    its shared_experts), and the expert groups sigmoid_router_groups refuses."""
    types = get("mlp_layer_types")
    if types is None:
        types = ["dense"] + ["sparse"] * (L - 1)
    if not isinstance(types, list) or len(types) != L or any(t not in ("dense", "sparse") for t in types):
        raise ValueError("GLM-4.7-Flash: mlp_layer_types %r (num_hidden_layers entries of \"dense\" / \"sparse\")" % (
            types,))
    moe = [t == "sparse" for t in types]
    first = get("first_k_dense_replace")
    if first is not None and moe != [l >= first for l in range(L)]:
        raise ValueError("GLM-4.7-Flash: first_k_dense_replace %r disagrees with the layer types %s (transformers reads "
                         "mlp_layer_types only, DeepSeek-style loaders first_k_dense_replace)" % (first, types))
    E, k, shared = get("n_routed_experts"), get("num_experts_per_tok"), get("n_shared_experts")
    if not isinstance(shared, int) or isinstance(shared, bool) or shared < 1:
        raise ValueError("GLM-4.7-Flash: n_shared_experts %r (Glm4MoeLiteMoE always adds shared_experts of "
                         "moe_intermediate_size x n_shared_experts)" % (shared,))
    sigmoid_router_groups("GLM-4.7-Flash", E, k, get("n_group"), get("topk_group"))
    return moe


def glm4_moe_lite_rope(c, get, scaling):
    """Refuses the RoPE keys of a GLM-4.7-Flash config that the MLA path cannot take as transformers does:
    Glm4MoeLiteRotaryEmbedding.compute_default_rope_parameters rotates int(head_dim x rope_parameters'
    partial_rotary_factor) dims with head_dim = qk_rope_head_dim (the attribute_map), while Glm4MoeLiteAttention splits
    q and k_pe at qk_rope_head_dim: a factor other than 1 (in rope_parameters, or at the top level, which transformers 5
    moves into rope_parameters) would not fit; a head_dim key other than qk_rope_head_dim (the attribute_map would set
    qk_rope_head_dim from it); rope scalings other than default / yarn (scaling: the flat dict, None for default)."""
    factors = [c.get("partial_rotary_factor", 1.0), (get("rope_parameters") or {}).get("partial_rotary_factor", 1.0)]
    if any(f != 1.0 for f in factors):
        raise ValueError("GLM-4.7-Flash: partial_rotary_factor %r (the rotary dims are qk_rope_head_dim)" % (factors,))
    if c.get("head_dim") not in (None, get("qk_rope_head_dim")):
        raise ValueError("GLM-4.7-Flash: head_dim %r != qk_rope_head_dim %r (Glm4MoeLiteConfig's attribute_map reads "
                         "one as the other)" % (c.get("head_dim"), get("qk_rope_head_dim")))
    kind = (scaling or {}).get("rope_type", (scaling or {}).get("type", "default"))
    if kind not in ("default", "yarn"):
        raise ValueError("GLM-4.7-Flash: rope type %r is not used by the fixtures" % (kind,))


def hunyuan_moe_keys(c, get, L, F, HD):
    """(num_experts, top_k) of a HunYuan-MoE config (HunYuanMoEV1ForCausalLM), refusing the spellings where transformers
    and Tencent's remote code (the releases' modeling_hunyuan.py) would build different models, and what the fixtures
    do not use.
    models/hunyuan_v1_moe/modular_hunyuan_v1_moe.py HunYuanMoEV1Moe.__init__ / HunYuanMoEV1Gate.__init__: `num_experts if
    isinstance(config.num_experts, int) else config.num_experts[layer_idx]`, top_k alike from moe_topk (5.x's @strict
    HunYuanMoEV1Config types num_experts int and moe_topk `int | list[int]`): an int, or one entry per layer, all equal
    here (one expert count and one k for every layer).
    Unread by transformers: the experts and shared_mlp are HunYuanMoEV1MLP(config), intermediate_size wide, where the
    remote code sizes the experts by moe_intermediate_size[layer] and the shared MLP by intermediate_size x
    num_shared_expert[layer] (so moe_intermediate_size must equal intermediate_size and num_shared_expert be 1, an int or
    per-layer list, where given); shared_mlp is always built (use_mixed_mlp_moe false, the remote code's switch off,
    is refused); use_cla (the remote code's cross-layer KV sharing, which transformers lacks) must be false;
    attention_head_dim (the remote code's head size) must equal head_dim, which transformers reads (hunyuan_rope
    refuses a missing head_dim)."""
    def one(key, value, least):
        values = value if isinstance(value, list) else [value]
        if (isinstance(value, list) and len(value) != L) or len(set(values)) != 1 or any(
                isinstance(v, bool) or not isinstance(v, int) or v < least for v in values):
            raise ValueError("HunYuan-MoE: %s %r (an integer >= %d, or %d equal ones, one per layer)" % (
                key, value, least, L))
        return values[0]
    E, k = one("num_experts", get("num_experts"), 1), one("moe_topk", get("moe_topk"), 1)
    if "moe_intermediate_size" in c and one("moe_intermediate_size", c["moe_intermediate_size"], 1) != F:
        raise ValueError("HunYuan-MoE: moe_intermediate_size %r != intermediate_size %r (transformers sizes the experts "
                         "by intermediate_size)" % (c["moe_intermediate_size"], F))
    if "num_shared_expert" in c and one("num_shared_expert", c["num_shared_expert"], 1) != 1:
        raise ValueError("HunYuan-MoE: num_shared_expert %r (transformers builds one shared_mlp of "
                         "intermediate_size)" % (c["num_shared_expert"],))
    if "use_mixed_mlp_moe" in c and c["use_mixed_mlp_moe"] is not True:
        raise ValueError("HunYuan-MoE: use_mixed_mlp_moe %r (transformers always adds shared_mlp; the remote code would "
                         "not)" % (c["use_mixed_mlp_moe"],))
    if c.get("use_cla"):
        raise ValueError("HunYuan-MoE: use_cla %r (cross-layer attention is not in transformers)" % (c["use_cla"],))
    if "attention_head_dim" in c and c["attention_head_dim"] != HD:
        raise ValueError("HunYuan-MoE: attention_head_dim %r != head_dim %r" % (c["attention_head_dim"], HD))
    return E, k


def dots1_router_keys(get):
    """Refuses dots.llm1 MoE keys that Dots1MoE / Dots1TopkRouter (DeepseekV3MoE / DeepseekV3TopkRouter) cannot run or
    would read otherwise than another engine: n_routed_experts / num_experts_per_tok / n_shared_experts absent or null
    (Dots1Config's defaults None: the module lists and the shared width `moe_intermediate_size * n_shared_experts` fail
    on them), sizes below 1 (n_shared_experts 0 would build a shared expert of width 0 that adds nothing), expert groups
    sigmoid_router_groups refuses, and scoring_func other than sigmoid (a key of the release that Dots1Config does not
    read: the router always takes the sigmoid)."""
    E, k, Fm, S = (get(key) for key in ("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                                        "n_shared_experts"))
    for key, value in (("n_routed_experts", E), ("num_experts_per_tok", k), ("moe_intermediate_size", Fm),
                       ("n_shared_experts", S), ("n_group", get("n_group")), ("topk_group", get("topk_group"))):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError("dots.llm1: %s %r (a positive integer)" % (key, value))
    sigmoid_router_groups("dots.llm1", E, k, get("n_group"), get("topk_group"))
    if get("scoring_func") != "sigmoid":
        raise ValueError("dots.llm1: scoring_func %r (Dots1Config does not read it; Dots1TopkRouter always takes the "
                         "sigmoid)" % (get("scoring_func"),))


def dots1_layer_sliding(c, get, L):
    """(sliding_window, per layer whether it slides) of a dots.llm1 config. models/dots1/configuration_dots1.py
    Dots1Config.__init__ (4.53 - 4.57; 5.x's __post_init__ the same): layer_types as listed, else `"sliding_attention" if
    self.sliding_window is not None and i >= self.max_window_layers else "full_attention"` (there is no
    use_sliding_window switch, as Qwen2's configs have: a key of that name is not read); Dots1Attention.__init__ takes
    `config.sliding_window if config.layer_types[layer_idx] == "sliding_attention" else None`, and Dots1Model.forward
    masks the sliding layers with create_sliding_window_causal_mask (i - W < j <= i). Refused: layer_types of another
    length or with another type, sliding layers with sliding_window null (the mask would have no window),
    max_window_layers null with a window and no layer_types (the comparison fails), a window below 1."""
    window, types = get("sliding_window"), get("layer_types")
    if types is None:
        first = get("max_window_layers")
        if window is not None and (isinstance(first, bool) or not isinstance(first, int)):
            raise ValueError("dots.llm1: max_window_layers %r with sliding_window %r" % (first, window))
        types = ["sliding_attention" if window is not None and i >= first else "full_attention" for i in range(L)]
    if len(types) != L or any(t not in ("sliding_attention", "full_attention") for t in types):
        raise ValueError("dots.llm1: layer_types must be %d entries of sliding_attention / full_attention" % L)
    sliding = [t == "sliding_attention" for t in types]
    if any(sliding) and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
        raise ValueError("dots.llm1: sliding layers with sliding_window %r" % (window,))
    return (window if any(sliding) else None), sliding


def granite_hybrid_layers(spec, c, get):
    """The layer fields of a Granite 4.0 config (GraniteMoeHybridForCausalLM): spec.layer_types, spec.layer_mamba and
    spec.layer_use_rope (L entries each), and the Mamba-2 mixer's sizes.
    Layers: configuration_granitemoehybrid.py GraniteMoeHybridConfig.layers_block_type, `self.layer_types if
    self.layer_types else ["mamba"] * self.num_hidden_layers` (no layer_types: every layer Mamba-2, as a config without
    the key or with null / [] reads); __init__ raises on a name other than "mamba" / "attention";
    modeling_granitemoehybrid.py GraniteMoeHybridDecoderLayer.__init__ builds `self.mamba =
    GraniteMoeHybridMambaLayer(config, layer_idx)` on "mamba" layers and `self.self_attn` on the others. Refused: another
    name, or a list of another length than num_hidden_layers (transformers would index past it or ignore the rest).
    RoPE: GraniteMoeHybridModel.__init__, `self.rotary_emb = GraniteMoeHybridRotaryEmbedding(config) if
    config.position_embedding_type == "rope" else None`; forward: `position_embeddings = None` unless rotary_emb, passed
    to every layer; GraniteMoeHybridAttention.forward: `if position_embeddings is not None:` apply_rotary_pos_emb
    (rotate-half, over head_dim; Gemma2RotaryEmbedding's default inv_freq at rope_theta); the Mamba-2 layers take no
    positions. So "rope" rotates every attention layer and anything else none: null (GraniteMoeHybridConfig's default)
    or "nope" (how the released granite-4.0-h-* configs spell it); other strings are refused (not used by the fixtures),
    and so is transformers 5's rope_parameters spelling (the fixtures hold rope_theta / rope_scaling).
    Mixer sizes (GraniteMoeHybridConfig.__init__: mamba_intermediate = mamba_expand * hidden_size, "mamba_n_heads must
    divide mamba_expand * hidden_size", mamba_d_head "auto" -> mamba_intermediate // mamba_n_heads, then "The dimensions
    for the Mamba head state do not match the model intermediate_size" unless mamba_d_head * mamba_n_heads ==
    mamba_intermediate: both raised whatever the layers, refused here alike; GraniteMoeHybridMambaLayer.__init__:
    intermediate_size = int(mamba_expand * hidden_size), conv_dim = intermediate_size + 2 * n_groups * d_state,
    in_proj (intermediate_size + conv_dim + n_heads, hidden_size) with bias=mamba_proj_bias, conv1d depthwise of kernel
    mamba_d_conv with bias=mamba_conv_bias, dt_bias / A_log / D (n_heads,), norm (intermediate_size,), out_proj (hidden_size,
    intermediate_size) with bias=mamba_proj_bias; chunk_size = mamba_chunk_size; activation = hidden_act). Refused: a
    size or chunk below 1; with a Mamba-2 layer mamba_proj_bias true (in_proj / out_proj biases: not used by the
    fixtures), n_heads not a multiple of n_groups (torch_forward's repeat_interleave(num_heads // n_groups,
    output_size=num_heads) fails), a hidden_act other than silu (the conv's activation; the fixtures use silu) and a
    time_step_limit key other than [0, inf] (the mixer's (0.0, inf) clamp of dt: hard-coded in transformers 4.56's
    mixer; GraniteMoeHybridConfig has no such key, the newer generated mixer reads `config.time_step_limit`). The
    what-if flags (golden_models only) are set to the model as it is."""
    L, H = spec.L, spec.H
    types = get("layer_types")
    if not types:
        types = ["mamba"] * L
    if len(types) != L or any(t not in ("attention", "mamba") for t in types):
        raise ValueError("Granite 4.0: layer_types must be %d entries of \"attention\" / \"mamba\": %r" % (L, types))
    if "rope_parameters" in c:
        raise ValueError("Granite 4.0: rope_parameters (transformers 5's spelling) is not used by the fixtures")
    kind = get("position_embedding_type")
    if kind not in ("rope", None, "nope"):
        raise ValueError("Granite 4.0: position_embedding_type %r (rope, or null / \"nope\" for none)" % (kind,))
    spec.layer_types = list(types)
    spec.layer_mamba = [t == "mamba" for t in types]
    spec.layer_use_rope = [kind == "rope" and t == "attention" for t in types]
    expand, NH, P = get("mamba_expand"), get("mamba_n_heads"), get("mamba_d_head")
    G, N, K, chunk = get("mamba_n_groups"), get("mamba_d_state"), get("mamba_d_conv"), get("mamba_chunk_size")
    for key, value in (("mamba_expand", expand), ("mamba_n_heads", NH), ("mamba_n_groups", G), ("mamba_d_state", N),
                       ("mamba_d_conv", K), ("mamba_chunk_size", chunk)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError("Granite 4.0: %s %r (a positive integer)" % (key, value))
    I = expand * H
    if I % NH:
        raise ValueError("Granite 4.0: mamba_n_heads %d does not divide mamba_expand x hidden_size %d" % (NH, I))
    if P == "auto":
        P = I // NH
    if isinstance(P, bool) or not isinstance(P, int) or P * NH != I:
        raise ValueError("Granite 4.0: mamba_d_head %r x mamba_n_heads %d != mamba_expand x hidden_size %d" % (P, NH, I))
    spec.mamba_I, spec.mamba_NH, spec.mamba_P, spec.mamba_G, spec.mamba_N = I, NH, P, G, N
    spec.mamba_K, spec.mamba_chunk = K, chunk
    spec.mamba_conv_bias = bool(get("mamba_conv_bias"))
    # the mixer's tensors under `<layer>.mamba.`; dt clamped to time_step_limit's (0, inf): a floor of 0
    spec.mamba_module, spec.mamba_dt_floor = "mamba", 0.0
    if any(spec.layer_mamba):
        if get("mamba_proj_bias"):
            raise ValueError("Granite 4.0: mamba_proj_bias true (in_proj / out_proj biases) is not used by the fixtures")
        if NH % G:
            raise ValueError("Granite 4.0: mamba_n_heads %d not a multiple of mamba_n_groups %d" % (NH, G))
        if get("hidden_act") != "silu":
            raise ValueError("Granite 4.0: hidden_act %r (the Mamba-2 conv's activation; the fixtures use silu)" % (
                get("hidden_act"),))
        limit = c.get("time_step_limit")
        if limit is not None and (len(limit) != 2 or float(limit[0]) != 0.0 or float(limit[1]) != float("inf")):
            raise ValueError("Granite 4.0: time_step_limit %r (the mixer clamps dt to (0, inf))" % (limit,))
    # what-ifs only (golden_models.granite_hybrid_what_ifs): the conv's SiLU, softplus on dt, the gated norm's order
    # ("gate_first": y silu(z) then the RMSNorm, as GraniteMoeHybridRMSNormGated; "norm_first": the RMSNorm then silu(z),
    # Qwen3-Next's) and its span (None: all of intermediate_size; an int: groups of that many values, mamba_ssm's
    # RMSNormGated(group_size=intermediate_size // ngroups)), the head -> group map ("interleave": h // (heads / groups),
    # "tile": h % groups, "first": group 0 for every head), the state reset at every chunk start
    spec.mamba_conv_act = spec.mamba_dt_softplus = True
    spec.mamba_norm_order, spec.mamba_norm_group, spec.mamba_head_group = "gate_first", None, "interleave"
    spec.mamba_reset_chunks = False
    # (check_reference, golden_models: the per-token recurrence for whole sequences too, in place of the chunked form)
    spec.mamba_recurrent = False


NEMOTRON_H_KINDS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
# transformers 5's list spelling (NemotronHConfig.layers_block_type, attribute-mapped from layer_types): the names of the
# modeling code's MIXER_TYPES, and those its configuration's _pattern_to_list writes (remap_legacy_layer_types)
NEMOTRON_H_BLOCK_NAMES = {"mamba": "mamba", "linear_attention": "mamba", "attention": "attention",
                          "full_attention": "attention", "mlp": "mlp", "moe": "moe"}
# NemotronHConfig.__post_init__'s legacy keyword names (mamba_n_groups -> n_groups, ...): the releases' config.json files
# hold the attribute names, so these are refused rather than mapped
NEMOTRON_H_LEGACY_KEYS = ("mamba_n_groups", "mamba_d_conv", "mamba_expand", "mamba_dt_min", "mamba_dt_max",
                          "mamba_dt_limit", "mamba_dt_init_floor", "mamba_conv_bias", "mamba_chunk_size")


def nemotron_h_head_dim(c, H, NH):
    """The attention head width of a Nemotron-H config: attention_head_dim, the key of the released config.json files
    (NVIDIA's remote NemotronHAttention: `self.head_dim = config.attention_head_dim`), else head_dim (transformers 5's
    NemotronHConfig field; its NemotronHAttention takes `getattr(config, "head_dim", hidden_size //
    num_attention_heads)`), else hidden_size // num_attention_heads. Refused: both keys with different values, a width
    below 1. (A caveat for transformers 5, not for this reading: its dataclass gives head_dim a default of 128 when
    config.json has none, so a file with attention_head_dim alone loads there with 128-wide heads, whatever
    attention_head_dim says: right for the releases' 128, not for the fixture's 16; tools/hf_check passes head_dim.)"""
    a, b = c.get("attention_head_dim"), c.get("head_dim")
    if a is not None and b is not None and a != b:
        raise ValueError("Nemotron-H: attention_head_dim %r != head_dim %r" % (a, b))
    hd = a if a is not None else b if b is not None else H // NH
    if isinstance(hd, bool) or not isinstance(hd, int) or hd < 1:
        raise ValueError("Nemotron-H: attention head width %r" % (hd,))
    return hd


def nemotron_h_layers(spec, c, get):
    """The Nemotron-H fields of a Spec (NemotronHForCausalLM), from models/nemotron_h/modular_nemotron_h.py and
    configuration_nemotron_h.py (and NVIDIA's remote code of the 4.48-era releases, which computes the same):
    - spec.layer_kinds: one block type per layer, from hybrid_override_pattern (the releases' key: one character per
      layer, "M" Mamba-2, "*" attention, "-" MLP, "E" MoE; NemotronHConfig._pattern_to_list), else transformers 5's list
      layers_block_type / layer_types (NEMOTRON_H_BLOCK_NAMES). NemotronHBlock.__init__ builds `MIXER_TYPES[block_type]`
      as the block's only mixer. Refused: no pattern and no list (the config class's default is a MoE layout), both
      disagreeing, another length than num_hidden_layers (transformers 5 takes the list's length and only warns), an
      unknown character or name. The "E" blocks (NemotronHMoE) take their settings in Spec's MoE section
      (spec.layer_moe: the "moe" kinds; see nemotron_h_expert);
    - spec.layer_mamba (the "M" blocks, run by mamba_mixer), spec.layer_use_rope (none: NemotronHAttention is
      JambaAttention, which takes no position embeddings; the model has no rotary embedding at all);
    - the names: every tensor under `backbone.` (NemotronHForCausalLM's `backbone` in the released checkpoints;
      transformers 5's conversion_mapping "nemotron_h" renames it to its `model.`), backbone.embeddings.weight,
      backbone.layers.{i}.norm.weight, the mixer's tensors under backbone.layers.{i}.mixer.* (attention q/k/v/o_proj
      too), backbone.norm_f.weight, lm_head.weight (tie_word_embeddings false in the releases);
    - the Mamba-2 mixer (NemotronHMamba2Mixer, which is zamba2's Zamba2MambaMixer with Nemotron-H's config names):
      num_heads = mamba_num_heads, head_dim = mamba_head_dim, intermediate_size = mamba_num_heads x mamba_head_dim
      (NOT expand x hidden_size: expand is not read), n_groups, ssm_state_size, conv_kernel, chunk_size, use_conv_bias,
      in_proj / out_proj bias=use_bias, activation mamba_hidden_act; torch_forward floors dt at time_step_min
      (`torch.clamp(dt, self.time_step_min)`) and does not read time_step_limit, where Bamba's / Granite's mixer clamps
      to time_step_limit (spec.mamba_dt_floor); Zamba2RMSNormGated(intermediate_size, group_size=intermediate_size //
      n_groups, eps=layer_norm_epsilon): y silu(gate) first, then an RMS per group of intermediate_size / n_groups values
      (spec.mamba_norm_group). Refused: a size or chunk below 1, mamba_num_heads not a multiple of n_groups
      (repeat_interleave(num_heads // n_groups, output_size=num_heads) fails), use_bias or mamba_proj_bias true (the
      projections' biases: not used by the fixtures), mamba_hidden_act other than silu, time_step_limit other than [0,
      inf] (the CUDA kernels' path reads it as dt_limit where torch_forward does not: the two would disagree), a
      negative time_step_min, the legacy mamba_* keyword names (NEMOTRON_H_LEGACY_KEYS).
    Not modelled: the CUDA kernels' path (mamba_chunk_scan_combined with dt_softplus and dt_limit, no floor at
    time_step_min): where the floor bites it computes other values than torch_forward, which the golden files follow
    (transformers' path on the CPU and wherever the mamba_ssm / causal_conv1d kernels are not loaded).
    The what-if flags (golden_models only) are set to the model as it is."""
    L = spec.L
    pattern = c.get("hybrid_override_pattern")
    lists = [c[k] for k in ("layers_block_type", "layer_types") if c.get(k) is not None]
    kinds = None
    if pattern is not None:
        if not isinstance(pattern, str) or any(ch not in NEMOTRON_H_KINDS for ch in pattern):
            raise ValueError("Nemotron-H: hybrid_override_pattern %r (characters M, *, -, E)" % (pattern,))
        kinds = [NEMOTRON_H_KINDS[ch] for ch in pattern]
    for lst in lists:
        if not isinstance(lst, list) or any(t not in NEMOTRON_H_BLOCK_NAMES for t in lst):
            raise ValueError("Nemotron-H: layers_block_type %r" % (lst,))
        other = [NEMOTRON_H_BLOCK_NAMES[t] for t in lst]
        if kinds is not None and other != kinds:
            raise ValueError("Nemotron-H: hybrid_override_pattern and layers_block_type disagree: %r, %r" % (
                pattern, lst))
        kinds = other
    if kinds is None:
        raise ValueError("Nemotron-H: no hybrid_override_pattern / layers_block_type")
    if len(kinds) != L:
        raise ValueError("Nemotron-H: %d block types for num_hidden_layers %d" % (len(kinds), L))
    legacy = [k for k in NEMOTRON_H_LEGACY_KEYS if k in c]
    if legacy:
        raise ValueError("Nemotron-H: the legacy keys %s (the releases write n_groups, conv_kernel, ...)" % legacy)
    spec.layer_kinds = kinds
    spec.layer_types = list(kinds)
    spec.layer_mamba = [k == "mamba" for k in kinds]
    spec.layer_use_rope = [False] * L
    spec.prefix, spec.embed_name, spec.final_norm_name, spec.attn_module = "backbone.", "embeddings", "norm_f", "mixer"
    NH, P, G, N = get("mamba_num_heads"), get("mamba_head_dim"), get("n_groups"), get("ssm_state_size")
    K, chunk = get("conv_kernel"), get("chunk_size")
    for key, value in (("mamba_num_heads", NH), ("mamba_head_dim", P), ("n_groups", G), ("ssm_state_size", N),
                       ("conv_kernel", K), ("chunk_size", chunk)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError("Nemotron-H: %s %r (a positive integer)" % (key, value))
    I = NH * P
    spec.mamba_I, spec.mamba_NH, spec.mamba_P, spec.mamba_G, spec.mamba_N = I, NH, P, G, N
    spec.mamba_K, spec.mamba_chunk = K, chunk
    spec.mamba_conv_bias = bool(get("use_conv_bias"))
    floor = get("time_step_min")
    if isinstance(floor, bool) or not isinstance(floor, (int, float)) or floor < 0:
        raise ValueError("Nemotron-H: time_step_min %r" % (floor,))
    spec.mamba_module, spec.mamba_dt_floor = "mixer", float(floor)
    if any(spec.layer_mamba):
        if NH % G:
            raise ValueError("Nemotron-H: mamba_num_heads %d not a multiple of n_groups %d" % (NH, G))
        if get("use_bias") or get("mamba_proj_bias"):
            raise ValueError("Nemotron-H: use_bias / mamba_proj_bias true (in_proj / out_proj biases) is not used by "
                             "the fixtures")
        if get("mamba_hidden_act") != "silu":
            raise ValueError("Nemotron-H: mamba_hidden_act %r (the conv's activation; the fixtures use silu)" % (
                get("mamba_hidden_act"),))
        limit = get("time_step_limit")
        if limit is not None and (len(limit) != 2 or float(limit[0]) != 0.0 or float(limit[1]) != float("inf")):
            raise ValueError("Nemotron-H: time_step_limit %r (torch_forward ignores it, the kernels clamp dt to it)" % (
                limit,))
    # what-ifs only (golden_models.nemotron_h_what_ifs): as granite_hybrid_layers', the gated norm's span set to the
    # groups it has here (None: all of intermediate_size at once, Granite's)
    spec.mamba_conv_act = spec.mamba_dt_softplus = True
    spec.mamba_norm_order, spec.mamba_norm_group, spec.mamba_head_group = "gate_first", I // G, "interleave"
    spec.mamba_reset_chunks = False
    spec.mamba_recurrent = False


def lfm2_ff_dim(c, get):
    """The width of an LFM2 MLP (w1 / w3 rows, w2 columns) as models/lfm2/modeling_lfm2.py Lfm2MLP.__init__ computes it
    from the config: ff = config.intermediate_size (Lfm2Config.__init__ stores `kwargs.get("block_ff_dim",
    intermediate_size)` there: block_ff_dim, the original key, wins over intermediate_size); with
    block_auto_adjust_ff_dim ff = int(2 ff / 3) (a float division, truncated), and then, only when
    block_ffn_dim_multiplier is not None, ff = int(multiplier ff) rounded UP to a multiple of block_multiple_of (the
    rounding sits inside that `if`: a null multiplier leaves int(2 ff / 3) unrounded); without block_auto_adjust_ff_dim
    ff as it is. Refused: a width below 1, a block_multiple_of below 1 where it is used."""
    ff = c["block_ff_dim"] if "block_ff_dim" in c else get("intermediate_size")
    if isinstance(ff, bool) or not isinstance(ff, int) or ff < 1:
        raise ValueError("LFM2: block_ff_dim / intermediate_size %r (a positive integer)" % (ff,))
    if get("block_auto_adjust_ff_dim"):
        ff = int(2 * ff / 3)
        multiplier = get("block_ffn_dim_multiplier")
        if multiplier is not None:
            multiple = get("block_multiple_of")
            if isinstance(multiple, bool) or not isinstance(multiple, int) or multiple < 1:
                raise ValueError("LFM2: block_multiple_of %r (a positive integer)" % (multiple,))
            ff = int(multiplier * ff)
            ff = multiple * ((ff + multiple - 1) // multiple)
    if ff < 1:
        raise ValueError("LFM2: the adjusted MLP width %d is not positive" % ff)
    return ff


def lfm2_layers(spec, c, get):
    """The LFM2-specific fields of a Spec (Lfm2ForCausalLM), from models/lfm2/configuration_lfm2.py and modeling_lfm2.py:
    - spec.layer_types / spec.layer_conv: Lfm2Config.__init__, `self.layer_types = layer_types`, and when that is None
      `full_attn_idxs = full_attn_idxs if full_attn_idxs is not None else list(range(num_hidden_layers))`, then
      `"full_attention" if i in full_attn_idxs else "conv"` per layer (neither key: every layer attention);
      Lfm2DecoderLayer.__init__: `self.is_attention_layer = config.layer_types[layer_idx] == "full_attention"`, self_attn
      then, else `self.conv = Lfm2ShortConv(config, layer_idx)` (so any other name would silently be a conv layer:
      refused here, as a list of another length than num_hidden_layers is). (Lfm2HybridConvCache.__init__ takes
      `layer_types.index("full_attention")`: transformers' generate with a cache fails on a config without an
      attention layer; its forward does not. Not refused: the fixtures have attention layers.)
    - spec.lfm2_K = conv_L_cache (Lfm2ShortConv's kernel, `padding=self.L_cache - 1`, and its cache's length);
      conv_bias true is refused (biases on in_proj, conv and out_proj: no release has them; not used by the fixtures).
    - spec.F: the MLP's width (lfm2_ff_dim).
    - spec.theta: Lfm2Config (4.54 - 4.57) `self.rope_theta = kwargs.get("theta", rope_theta)  # to fit original config
      keys` (5.x: `kwargs.get("theta", kwargs.get("rope_theta", 1000000.0))`): "theta", when present, wins. Refused
      (not used by the fixtures): rope_scaling (Lfm2RotaryEmbedding would read it) and transformers 5's
      rope_parameters spelling.
    - the names: self_attn.out_proj (Lfm2Attention, not o_proj), model.embedding_norm (Lfm2Model's final norm).
    The what-if flags (golden_models.lfm2_what_ifs only) are set to the model as it is: lfm2_conv (False: no conv, y = C
    B x), lfm2_conv_act (True: SiLU on the conv's output), lfm2_chunks (which of B, C, x each third of in_proj's rows is
    read as: ("B", "C", "x") as Lfm2ShortConv's `B, C, x = BCx.chunk(3, dim=-2)`).
    LFM2-MoE (Lfm2MoeForCausalLM; models/lfm2_moe/modular_lfm2_moe.py takes Lfm2Attention, Lfm2ShortConv and
    Lfm2DecoderLayer's forward as they are) differs in the config only: Lfm2MoeConfig stores `self.layer_types =
    layer_types` and nothing else (no full_attn_idxs: a config without layer_types fails in Lfm2MoeDecoderLayer.__init__,
    refused here); the dense layers' width is intermediate_size as it stands (`Lfm2MoeMLP(config,
    intermediate_size=config.intermediate_size)`, whose __init__ has none of Lfm2MLP's adjusting: block_ff_dim and the
    block_* keys are not read); the RoPE base is rope_theta (4.57) or rope_parameters["rope_theta"] (5.x, rope_type
    "default" only; the two must agree where both are given), default 1e6, and the original key "theta", which
    Lfm2MoeConfig does not read but Lfm2Config would, is refused; tie_embedding wins as for LFM2 (Spec.__init__). The
    MoE layers: see Spec's MoE settings and lfm2_moe_route."""
    L = spec.L
    moe = spec.arch == LFM2_MOE
    types = get("layer_types")
    if types is None and moe:
        raise ValueError("LFM2-MoE: no layer_types (Lfm2MoeConfig derives none: Lfm2MoeDecoderLayer.__init__ indexes "
                         "config.layer_types)")
    if types is None:
        idx = get("full_attn_idxs")
        idx = list(range(L)) if idx is None else idx
        if any(isinstance(i, bool) or not isinstance(i, int) for i in idx):
            raise ValueError("LFM2: full_attn_idxs %r (layer indices)" % (idx,))
        types = ["full_attention" if i in idx else "conv" for i in range(L)]
    if len(types) != L or any(t not in ("conv", "full_attention") for t in types):
        raise ValueError("LFM2: layer_types must be %d entries of \"conv\" / \"full_attention\": %r" % (L, types))
    spec.layer_types = list(types)
    spec.layer_conv = [t == "conv" for t in types]
    K = get("conv_L_cache")
    if isinstance(K, bool) or not isinstance(K, int) or K < 1:
        raise ValueError("LFM2: conv_L_cache %r (a positive integer)" % (K,))
    spec.lfm2_K = K
    if get("conv_bias"):
        raise ValueError("LFM2: conv_bias true (biases on conv.in_proj, conv.conv and conv.out_proj) is not used by the "
                         "fixtures")
    if get("rope_scaling") is not None:
        raise ValueError("LFM2: rope_scaling %r is not used by the fixtures" % (get("rope_scaling"),))
    if moe:
        ff = get("intermediate_size")
        if isinstance(ff, bool) or not isinstance(ff, int) or ff < 1:
            raise ValueError("LFM2-MoE: intermediate_size %r (a positive integer)" % (ff,))
        spec.F = ff
        if "theta" in c:
            raise ValueError("LFM2-MoE: \"theta\" (Lfm2MoeConfig does not read LFM2's original key; Lfm2Config would)")
        rp = get("rope_parameters")
        spec.theta = float(get("rope_theta"))
        if rp is not None:
            if rp.get("rope_type", "default") != "default" or "rope_theta" not in rp:
                raise ValueError("LFM2-MoE: rope_parameters %r (a default RoPE with its rope_theta only)" % (rp,))
            if "rope_theta" in c and float(c["rope_theta"]) != float(rp["rope_theta"]):
                raise ValueError("LFM2-MoE: rope_theta %r beside rope_parameters' %r" % (c["rope_theta"],
                                                                                        rp["rope_theta"]))
            spec.theta = float(rp["rope_theta"])
    else:
        spec.F = lfm2_ff_dim(c, get)
        if get("rope_parameters") is not None:
            raise ValueError("LFM2: rope_parameters (transformers 5's spelling) is not used by the fixtures")
        spec.theta = c.get("theta", get("rope_theta"))
    spec.o_proj_name, spec.final_norm_name = "out_proj", "embedding_norm"
    spec.lfm2_conv, spec.lfm2_conv_act, spec.lfm2_chunks = True, False, ("B", "C", "x")


def hybrid_rope(c, get, arch, head_dim):
    """(rope_theta, rotary_dim, mrope_section or None) of a Qwen3-Next / Qwen3.5 / Qwen3.5-MoE (text_)config. The
    released Qwen3-Next config.json (transformers 4.57) has rope_theta, partial_rotary_factor and rope_scaling null at
    the top level; transformers 5 writes rope_parameters {"rope_type": "default", "rope_theta", "partial_rotary_factor"}
    (Qwen3.5's text_config also "mrope_section", "mrope_interleaved"). rotary_dim = int(head_dim *
    partial_rotary_factor) (Qwen3NextRotaryEmbedding / Qwen3_5TextRotaryEmbedding.compute_default_rope_parameters: the
    factor from rope_parameters, which Qwen3NextConfig.__post_init__ fills from the top-level key, default 0.25).
    mrope_section (Qwen3.5 only; Qwen3_5TextRotaryEmbedding, default [11, 11, 10]) must add up to rotary_dim / 2 when
    given; for text positions the multimodal RoPE is the plain one whatever the sections (mrope_cos_sin). Refused:
    rope_scaling or a rope_type other than default, rope_theta / partial_rotary_factor at the top level and in
    rope_parameters with other values, mrope keys on Qwen3-Next (Qwen3NextRotaryEmbedding is Gemma2RotaryEmbedding: one
    position row), mrope_interleaved false (transformers always interleaves; vLLM would read false as the chunked
    layout), an odd rotary_dim or one outside (0, head_dim]."""
    family = "Qwen3-Next" if arch == QWEN3_NEXT else "Qwen3.5"
    rs, rp = get("rope_scaling"), get("rope_parameters")
    if rs is not None and (not isinstance(rs, dict) or rs.get("rope_type", rs.get("type")) != "default"):
        raise ValueError("%s: rope_scaling %r is not used by the fixtures" % (family, rs))
    theta = get("rope_theta")
    factor = get("partial_rotary_factor")
    mrope = None
    if rp is not None:
        if not isinstance(rp, dict) or rp.get("rope_type", rp.get("type", "default")) != "default":
            raise ValueError("%s: rope_parameters %r (only the default RoPE is used by the fixtures)" % (family, rp))
        for key, top in (("rope_theta", theta), ("partial_rotary_factor", factor)):
            if key in c and key in rp and float(c[key]) != float(rp[key]):
                raise ValueError("%s: %s %r beside rope_parameters' %r" % (family, key, c[key], rp[key]))
        theta = rp.get("rope_theta", theta)
        factor = rp.get("partial_rotary_factor", factor)
        if "mrope_section" in rp or "mrope_interleaved" in rp:
            if arch == QWEN3_NEXT:
                raise ValueError("Qwen3-Next: mrope keys in rope_parameters (its RoPE has one position row)")
            if not rp.get("mrope_interleaved", True):
                raise ValueError("Qwen3.5: mrope_interleaved false (Qwen3_5TextRotaryEmbedding always interleaves)")
            mrope = rp.get("mrope_section")
    R = int(head_dim * float(factor))
    if not 0 < R <= head_dim or R % 2:
        raise ValueError("%s: rotary_dim int(%d x %r) = %d" % (family, head_dim, factor, R))
    if mrope is not None and (len(mrope) != 3 or sum(mrope) != R // 2):
        raise ValueError("%s: mrope_section %r must be three sections adding up to rotary_dim / 2 = %d" % (
            family, mrope, R // 2))
    return theta, R, mrope


def hybrid_layer_types(c, get, L):
    """Per layer "linear_attention" / "full_attention" of a Qwen3-Next / Qwen3.5 config: layer_types when listed (the
    Qwen3.5 releases list them beside full_attention_interval), else Qwen3NextConfig.__post_init__'s rule from
    full_attention_interval (the Qwen3-Next release has no layer_types): `"linear_attention" if bool((i + 1) %
    interval_pattern) else "full_attention"`, interval default 4. Refused: other names or another length, and a listed
    layer_types that full_attention_interval (when config.json has it) contradicts (transformers takes the list, a
    reader of the interval would not)."""
    interval = get("full_attention_interval")
    if isinstance(interval, bool) or not isinstance(interval, int) or interval < 1:
        raise ValueError("Qwen3-Next / Qwen3.5: full_attention_interval %r" % (interval,))
    from_interval = ["linear_attention" if (i + 1) % interval else "full_attention" for i in range(L)]
    types = get("layer_types")
    if types is None:
        return from_interval
    if len(types) != L or any(t not in ("linear_attention", "full_attention") for t in types):
        raise ValueError("Qwen3-Next / Qwen3.5: layer_types must be L entries of linear_attention / full_attention: %r"
                         % (types,))
    if "full_attention_interval" in c and list(types) != from_interval:
        raise ValueError("Qwen3-Next / Qwen3.5: layer_types %r disagree with full_attention_interval %d" % (
            types, interval))
    return list(types)


def hybrid_layers(spec, c, get):
    """The linear-attention fields of a Spec (layer_linear: L booleans, False for every family but the hybrid ones).
    Qwen3NextGatedDeltaNet.__init__ (models/qwen3_next/modular_qwen3_next.py; Qwen3_5GatedDeltaNet in
    models/qwen3_5/modular_qwen3_5.py the same but for its projections): num_v_heads = linear_num_value_heads,
    num_k_heads = linear_num_key_heads, head_k_dim = linear_key_head_dim, head_v_dim = linear_value_head_dim,
    conv_kernel_size = linear_conv_kernel_dim, conv_dim = 2 * key_dim + value_dim, activation = hidden_act, norm eps =
    rms_norm_eps. Projections: Qwen3-Next in_proj_qkvz (2 key_dim + 2 value_dim) / in_proj_ba (2 num_v_heads),
    interleaved per key head (linear_proj "qkvz", see gated_delta_net); Qwen3.5 in_proj_qkv / in_proj_z / in_proj_b /
    in_proj_a ("split"). Refused: num_v_heads not a multiple of num_k_heads, hidden_act other than silu (the conv's
    activation; the torch fallbacks hard-code F.silu in some versions), attn_output_gate false (Qwen3NextAttention
    always gates; vLLM reads the key). The what-if flags (golden_models only) are set to the model as it is."""
    spec.layer_linear = [False] * spec.L
    if spec.arch not in HYBRID:
        return
    spec.layer_types = hybrid_layer_types(c, get, spec.L)
    spec.layer_linear = [t == "linear_attention" for t in spec.layer_types]
    spec.lin_NK, spec.lin_NV = get("linear_num_key_heads"), get("linear_num_value_heads")
    spec.lin_DK, spec.lin_DV = get("linear_key_head_dim"), get("linear_value_head_dim")
    spec.lin_K = get("linear_conv_kernel_dim")
    if spec.lin_NV % spec.lin_NK:
        raise ValueError("Qwen3-Next / Qwen3.5: linear_num_value_heads %d not a multiple of linear_num_key_heads %d" % (
            spec.lin_NV, spec.lin_NK))
    if get("hidden_act") != "silu":
        raise ValueError("Qwen3-Next / Qwen3.5: hidden_act %r (the fixtures use silu)" % get("hidden_act"))
    if not get("attn_output_gate"):
        raise ValueError("Qwen3-Next / Qwen3.5: attn_output_gate false (transformers always gates the attention "
                         "output)")
    spec.linear_proj = "qkvz" if spec.arch == QWEN3_NEXT else "split"
    # what-ifs only (golden_models): the causal conv and its SiLU, the silu(z) gate and the gated norm's (1 + w), the
    # q/k l2norm, the decay (g = 0), beta (1), exp(A_log) (A_log itself), the key-head map (repeat_interleave or
    # "tile"), the recurrent state reset at every chunk start, Qwen3-Next's projections read as contiguous blocks
    spec.linear_conv = spec.linear_conv_act = spec.linear_z_gate = spec.linear_l2norm = True
    spec.linear_decay = spec.linear_beta = spec.linear_A_exp = True
    spec.linear_norm_offset = spec.linear_reset_chunks = False
    spec.linear_head_map = "interleave"
    # torch_chunk_gated_delta_rule's chunk_size (its default, as Qwen3NextGatedDeltaNet calls it)
    spec.linear_chunk = 64
    # (check_reference, golden_models: the recurrent rule for whole sequences too, token by token)
    spec.linear_recurrent = False


def gemma4_layers(spec, c, get, torch_dtype):
    """The Gemma 4 fields of a Spec (Gemma4ForCausalLM, and Gemma4ForConditionalGeneration's text_config), set after
    the generic reading, which they override; docs/gemma4.md §1-§2. From transformers' models/gemma4/modeling_gemma4.py
    (the generated file, which reads the flat keys) and configuration_gemma4.py:
      - layer types (Gemma4TextConfig.__post_init__): layer_types, else "sliding_attention" unless (i + 1) % 6 == 0;
        the last layer forced to "full_attention" (HF logs a warning and overwrites it). Sliding layers take
        sliding_window (Gemma4TextAttention.__init__: `config.sliding_window if self.is_sliding else None`; the mask
        create_sliding_window_causal_mask: p - W < j <= p, as Gemma 3's).
      - per-layer attention geometry (Gemma4TextAttention.__init__): `self.head_dim = config.global_head_dim if not
        self.is_sliding and config.global_head_dim else config.head_dim`; `self.use_alternative_attention =
        config.attention_k_eq_v and not self.is_sliding`; `num_key_value_heads = config.num_global_key_value_heads if
        self.use_alternative_attention else config.num_key_value_heads` (k_eq_v with it null fails there: refused);
        v_proj None on those layers (V = the raw k_proj output: gemma4_attention). The later spelling with a
        per_layer_config dict ({layer index: {head_dim, num_key_value_heads}} for the full layers, which
        configuration_gemma4.py @008e574's __post_init__ synthesizes from the flat keys unless config.json holds one,
        in which case it pops and ignores the flat ones) is read too: every full layer the same override, no sliding
        layer one, and flat keys that disagree with it refused (docs/gemma4.md §1).
      - RoPE per layer type (Gemma4TextRotaryEmbedding.__init__, rope_parameters[layer_type]; None -> the __post_init__
        default GEMMA4_DEFAULT_ROPE): "default" through its own compute_default_rope_parameters, θ^(-2i/d) over d =
        `getattr(config, "head_dim", None) or hidden_size // num_attention_heads` (no partial_rotary_factor read: one
        other than 1 refused); "proportional" (modeling_rope_utils._compute_proportional_rope_parameters, called with
        head_dim_key="global_head_dim" for the full type): D = that key `or hidden_size // num_attention_heads`,
        rope_angles = int(partial_rotary_factor * D // 2), inv_freq[i] = θ^(-2i/D) for i < rope_angles, 0 for the
        other D/2 - rope_angles, all over `factor` (default 1); cos / sin = cat(freqs, freqs) over the whole head and
        apply_rotary_pos_emb's rotate-half pairs (i, i + D/2): the zero frequencies pass unturned. A table whose width
        is not the layer type's head size (HF would fail to broadcast) is refused, as other rope types are; a top-level
        rope_theta / rope_scaling is not read (convert_rope_params_to_dict returns the kwargs untouched).
      - KV sharing (Gemma4TextAttention.__init__ / forward): first = num_hidden_layers - num_kv_shared_layers; layers
        l >= first >= 0 are shared (no k_proj / v_proj / k_norm); the unshared layer that stores K, V for its type is
        the last one of that type in layer_types[:first] (store_full_length_kv); a shared layer reads its type's
        (shared_kv_states[layer_type]). Refused: num_kv_shared_layers >= num_hidden_layers (> 0), and a shared layer
        type with no unshared layer of that type (HF's KeyError).
      - MLP width (Gemma4TextMLP.__init__): intermediate_size x 2 where use_double_wide_mlp and `layer_idx >=
        first_kv_shared_layer_idx > 0`.
      - per-layer embeddings (Gemma4TextModel.__init__): hidden_size_per_layer_input P (0 or null: none), the table's
        scale sqrt(P) rounded to the weight dtype (Gemma4TextScaledWordEmbedding, as the token embedding's);
        vocab_size_per_layer_input other than vocab_size refused (HF would index past the table).
      - MoE (enable_moe_block: Gemma4TextRouter / Gemma4TextExperts on every layer beside the dense MLP):
        num_experts, top_k_experts, moe_intermediate_size required.
      - score scale 1.0 (`self.scaling = 1.0`), no attention soft-cap, the final soft-cap
        final_logit_softcapping in both Gemma4ForCausalLM.forward and Gemma4ForConditionalGeneration.forward.
      - use_bidirectional_attention: null or "vision" (text-only input: the causal masks); "all" refused.
    The what-if flags (golden_models.gemma4_what_ifs) are set to the model as it is."""
    # (defaults for every family: the what-ifs' flags are read only on the Gemma 4 path)
    if spec.arch not in GEMMA4:
        return
    L, H, NH, V = spec.L, spec.H, spec.NH, spec.V
    types = get("layer_types")
    if types is None:
        types = ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(L)]
    types = list(types)
    if len(types) != L or any(t not in ("sliding_attention", "full_attention") for t in types):
        raise ValueError("Gemma 4: layer_types must be %d entries of sliding_attention / full_attention" % L)
    # Gemma4TextConfig.__post_init__: "Last layer must use `full_attention` ... Forcing last layer to full_attention"
    types[-1] = "full_attention"
    spec.layer_types = types
    spec.layer_sliding = [t == "sliding_attention" for t in types]
    spec.sliding_window = get("sliding_window")
    W = spec.sliding_window
    if any(spec.layer_sliding) and (isinstance(W, bool) or not isinstance(W, int) or W < 1):
        raise ValueError("Gemma 4: sliding_window %r (a positive integer for the sliding layers)" % (W,))
    bidirectional = get("use_bidirectional_attention")
    if bidirectional not in (None, "vision"):
        # "all": Gemma4TextConfig.__post_init__ sets is_causal False and sliding_window // 2 + 1 (an encoder)
        raise ValueError("Gemma 4: use_bidirectional_attention %r (null or \"vision\": text is causal)" % (
            bidirectional,))
    # the per-type head sizes and kv heads
    HD, NKV = get("head_dim"), get("num_key_value_heads")
    for key, value in (("head_dim", HD), ("num_key_value_heads", NKV)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError("Gemma 4: %s %r (a positive integer)" % (key, value))
    k_eq_v = bool(get("attention_k_eq_v"))
    flat_hd, flat_nkv = get("global_head_dim"), get("num_global_key_value_heads")
    full_hd = flat_hd or HD
    if k_eq_v and flat_nkv is None and get("per_layer_config") is None:
        # modeling_gemma4.py: `config.num_attention_heads // None` fails at init; configuration_gemma4.py @008e574
        # adds no override (the full layers keep num_key_value_heads): the versions disagree
        raise ValueError("Gemma 4: attention_k_eq_v with num_global_key_value_heads null (the transformers versions "
                         "disagree)")
    full_nkv = flat_nkv if k_eq_v else NKV
    plc = get("per_layer_config")
    if plc is not None:
        # configuration_gemma4.py @008e574: {layer index: overrides} for the full layers (JSON keys are strings)
        full = [l for l in range(L) if types[l] == "full_attention"]
        try:
            entries = {int(k): v for k, v in plc.items()}
        except (AttributeError, TypeError, ValueError):
            raise ValueError("Gemma 4: per_layer_config %r (a dict of layer index -> overrides)" % (plc,))
        values = [entries[l] for l in full if l in entries]
        if sorted(entries) != full or any(v != values[0] for v in values) or not isinstance(values[0], dict) or \
                set(values[0]) - {"head_dim", "num_key_value_heads"} or "head_dim" not in values[0]:
            raise ValueError("Gemma 4: per_layer_config must give every full layer (%s) the same head_dim (and "
                             "num_key_value_heads), no sliding layer any: %r" % (full, plc))
        o = values[0]
        if "global_head_dim" in c and c["global_head_dim"] != o["head_dim"] or \
                "num_global_key_value_heads" in c and c["num_global_key_value_heads"] is not None and \
                c["num_global_key_value_heads"] != o.get("num_key_value_heads", NKV):
            # @008e574 pops the flat keys and reads per_layer_config alone; modeling_gemma4.py reads the flat keys
            raise ValueError("Gemma 4: per_layer_config %r disagrees with global_head_dim / "
                             "num_global_key_value_heads" % (o,))
        full_hd, full_nkv = o["head_dim"], o.get("num_key_value_heads", NKV)
    spec.k_eq_v = k_eq_v
    spec.full_head_dim, spec.full_kv_heads = full_hd, full_nkv
    spec.layer_head_dim = [HD if s else full_hd for s in spec.layer_sliding]
    spec.layer_kv_heads = [NKV if s else full_nkv for s in spec.layer_sliding]
    spec.layer_k_eq_v = [k_eq_v and not s for s in spec.layer_sliding]
    for l in range(L):
        if NH % spec.layer_kv_heads[l]:
            raise ValueError("Gemma 4: layer %d's %d kv heads do not divide %d heads" % (
                l, spec.layer_kv_heads[l], NH))
    # RoPE per layer type
    rp = get("rope_parameters") or GEMMA4_DEFAULT_ROPE
    spec.rope_types = {}
    tables = {}
    for t in sorted(set(types)):
        entry = rp.get(t) if isinstance(rp, dict) else None
        if not isinstance(entry, dict) or "rope_theta" not in entry:
            raise ValueError("Gemma 4: rope_parameters has no %s entry with a rope_theta: %r" % (t, rp))
        kind, theta = entry.get("rope_type"), float(entry["rope_theta"])
        dim = full_hd if t == "full_attention" else HD
        if kind == "default":
            # Gemma4TextRotaryEmbedding.compute_default_rope_parameters: `dim = getattr(config, "head_dim", None) or
            # config.hidden_size // config.num_attention_heads`, inv_freq = 1 / base^(arange(0, dim, 2) / dim); no
            # partial_rotary_factor, no factor
            if entry.get("partial_rotary_factor", 1.0) != 1.0 or entry.get("factor", 1.0) != 1.0:
                raise ValueError("Gemma 4: a default rope type with partial_rotary_factor / factor %r (Gemma 4's "
                                 "default RoPE reads neither)" % (entry,))
            width = HD
            inv = rope_inv_freq(width, theta, None)
        elif kind == "proportional":
            # modeling_rope_utils._compute_proportional_rope_parameters (head_dim_key "global_head_dim" for the full
            # type, Gemma4TextRotaryEmbedding.__init__; "head_dim" otherwise)
            width = ((flat_hd if plc is None else full_hd) if t == "full_attention" else HD) or H // NH
            proportion, factor = float(entry.get("partial_rotary_factor", 1.0)), float(entry.get("factor", 1.0))
            inv = gemma4_proportional_inv_freq(width, theta, proportion, factor)
        else:
            raise ValueError("Gemma 4: rope_type %r for %s (default and proportional are used)" % (kind, t))
        if width != dim:
            # the table is sized by another head size than the layer type's: HF's apply_rotary_pos_emb fails
            raise ValueError("Gemma 4: %s's %s RoPE table is %d wide, its head %d" % (t, kind, width, dim))
        spec.rope_types[t] = dict(entry)
        tables[t] = inv
    spec.rope = {"local": (tables["sliding_attention"], 1.0)} if "sliding_attention" in tables else {}
    spec.rope["global"] = (tables["full_attention"], 1.0)
    spec.layer_rope = ["local" if s else "global" for s in spec.layer_sliding]
    spec.theta = float(spec.rope_types["full_attention"]["rope_theta"])
    spec.rope_local_theta = (float(spec.rope_types["sliding_attention"]["rope_theta"])
                             if "sliding_attention" in spec.rope_types else None)
    spec.rope_scaling, spec.R = None, HD
    spec.inv_freq, spec.rope_attention_factor = spec.rope["global"]
    # KV sharing
    N = get("num_kv_shared_layers") or 0
    if isinstance(N, bool) or not isinstance(N, int) or N < 0 or (N and N >= L):
        raise ValueError("Gemma 4: num_kv_shared_layers %r (0 <= N < num_hidden_layers)" % (N,))
    first = L - N
    spec.kv_shared_from = first
    spec.layer_kv_shared = [l >= first for l in range(L)]
    prev = types[:first]
    last = {t: len(prev) - 1 - prev[::-1].index(t) for t in set(prev)}
    spec.layer_kv_store = [not spec.layer_kv_shared[l] and last.get(types[l]) == l for l in range(L)]
    spec.layer_kv_source = [None] * L
    for l in range(first, L):
        if types[l] not in last:
            raise ValueError("Gemma 4: shared layer %d is %s, and no unshared layer of that type stores K, V" % (
                l, types[l]))
        spec.layer_kv_source[l] = last[types[l]]
    # MLP width (Gemma4TextMLP.__init__: `layer_idx >= first_kv_shared_layer_idx > 0`)
    double = bool(get("use_double_wide_mlp"))
    spec.layer_mlp_width = [spec.F * (2 if double and l >= first > 0 else 1) for l in range(L)]
    # per-layer embeddings
    P = get("hidden_size_per_layer_input") or 0
    spec.ple_dim, spec.ple_embed_scale = P, None
    if P:
        if get("vocab_size_per_layer_input") != V:
            raise ValueError("Gemma 4: vocab_size_per_layer_input %r != vocab_size %d" % (
                get("vocab_size_per_layer_input"), V))
        spec.ple_embed_scale = embed_scale_for(P, torch_dtype)
    # MoE beside the dense MLP
    if get("enable_moe_block"):
        E, k, Fm = get("num_experts"), get("top_k_experts"), get("moe_intermediate_size")
        for key, value in (("num_experts", E), ("top_k_experts", k), ("moe_intermediate_size", Fm)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError("Gemma 4: enable_moe_block with %s %r (a positive integer)" % (key, value))
        if k > E:
            raise ValueError("Gemma 4: top_k_experts %d > num_experts %d" % (k, E))
        spec.num_experts, spec.top_k, spec.moe_intermediate = E, k, Fm
        spec.norm_topk_prob = True  # Gemma4TextRouter.forward always renormalises
        spec.shared_intermediate = 0
        spec.layer_moe = [True] * L
        spec.router, spec.expert_naming = "gemma4", "gemma4"
    # scales, caps, norms
    spec.attn_scale = 1.0
    spec.attn_softcap = None
    spec.final_softcap = get("final_logit_softcapping")
    spec.norm_offset, spec.sandwich_norms, spec.qk_norm = False, True, True
    # what-ifs only (golden_models.gemma4_what_ifs, check_reference.Gemma4Check): the score scale ("head_dim":
    # head_dim^-0.5 of the layer), layer_scalar applied, the per-layer embeddings applied (False: the stream without
    # them), KV sharing ("states": HF's; "weights": a shared layer running the source layer's k_proj / v_proj / k_norm
    # on its own input, as the config's docstring "share the same key-value projections" might be read), where V is
    # taken on k_eq_v layers ("raw": HF's k_proj output; "normed": after k_norm; "rotated": after k_norm and RoPE),
    # the v_norm applied, the router's input ("residual": HF's; "pre_ffn": pre_feedforward_layernorm of it), its
    # scale and per_expert_scale applied, the experts' input norm ("pre_ffn_2": HF's; "pre_ffn": the dense MLP's),
    # the dense MLP beside the experts, the experts' gate_up_proj halves swapped
    spec.gemma4_attn_scale = "one"
    spec.layer_scalar_applied = spec.ple_applied = spec.v_norm_applied = True
    spec.kv_share_rule, spec.v_from = "states", "raw"
    spec.router_input, spec.router_scale_applied, spec.router_expert_scale_applied = "residual", True, True
    spec.expert_input, spec.dense_beside_moe, spec.expert_gate_up_swapped = "pre_ffn_2", True, False


def gemma4_proportional_inv_freq(head_dim, theta, proportion, factor=1.0):
    """modeling_rope_utils.py _compute_proportional_rope_parameters (read from indexed copies, docs/gemma4.md RU):
    `rope_angles = int(rope_proportion * head_dim // 2)`, `inv_freq_rotated = 1.0 / (base ** (torch.arange(0, 2 *
    rope_angles, 2, dtype=torch.int64).to(dtype=torch.float) / head_dim))` (the exponent over the whole head),
    `nope_angles = head_dim // 2 - rope_angles` zeros after them, `inv_freq /= factor`: head_dim / 2 entries."""
    angles = int(proportion * head_dim // 2)
    rotated = 1.0 / (theta ** (torch.arange(0, 2 * angles, 2, dtype=torch.int64).to(torch.float32) / head_dim))
    nope = head_dim // 2 - angles
    inv = torch.cat((rotated, torch.zeros(nope, dtype=torch.float32))) if nope > 0 else rotated
    return inv / factor


def hybrid_expert_layout(spec, p):
    """Qwen3-Next's / Qwen3.5-MoE's experts as the weights hold them: per expert (mlp.experts.{e}.gate_proj / up_proj /
    down_proj: the Qwen3-Next release, transformers 4.57) or stacked (mlp.experts.gate_up_proj (E, 2F, H), per expert
    the gate rows then the up rows, and mlp.experts.down_proj (E, H, F): Qwen2MoeExperts as transformers 5 saves it;
    the Qwen3.5-MoE releases); sets spec.expert_naming ("qwen", "stacked"). Both or neither in the file: refused."""
    if not spec.num_experts:
        return
    per_expert = any(".mlp.experts.0.gate_proj.weight" in n for n in p)
    stacked = any(n.endswith(".mlp.experts.gate_up_proj") for n in p)
    if per_expert == stacked:
        raise ValueError("%s: the weights must hold either mlp.experts.{e}.* or mlp.experts.gate_up_proj" % spec.arch)
    spec.expert_naming = "stacked" if stacked else "qwen"


def qwen3_vl_moe_expert_layout(spec, p):
    """Qwen3-VL-MoE's experts as the weights hold them: fused and transposed as released (mlp.experts.gate_up_proj
    (E, H, 2F), mlp.experts.down_proj (E, F, H): Qwen3VLMoeTextExperts of transformers 4.57, and what 5.x writes back
    after conversion_mapping.py's Transpose(1, 2)), or per expert (mlp.experts.{e}.gate_proj / up_proj / down_proj, what
    a tool that splits fused experts writes); sets spec.expert_naming ("fused_transposed", "qwen"). Refused: both or
    neither, and fused tensors of other shapes (transformers 5's in-memory (E, 2F, H) / (E, H, F) saved as such would
    be read transposed by 4.57; its Transpose(1, 2, check_dims=True) would not take them)."""
    if not spec.num_experts:
        return
    per_expert = any(".mlp.experts.0.gate_proj.weight" in n for n in p)
    fused = any(n.endswith(".mlp.experts.gate_up_proj") for n in p)
    if per_expert == fused:
        raise ValueError("Qwen3-VL-MoE: the weights must hold either mlp.experts.{e}.* or mlp.experts.gate_up_proj")
    spec.expert_naming = "fused_transposed" if fused else "qwen"
    if fused:
        E, H, Fm = spec.num_experts, spec.H, spec.moe_intermediate
        for n, t in p.items():
            want = (E, H, 2 * Fm) if n.endswith(".mlp.experts.gate_up_proj") else \
                (E, Fm, H) if n.endswith(".mlp.experts.down_proj") else None
            if want is not None and tuple(t.shape) != want:
                raise ValueError("Qwen3-VL-MoE: %s of shape %s, not %s (num_experts, hidden_size, 2 x "
                                 "moe_intermediate_size) / (num_experts, moe_intermediate_size, hidden_size)" % (
                                     n, tuple(t.shape), want))


def flat_rope_parameters(c, get, family):
    """(rope_theta, rope_scaling: None when default) of a config.json whose RoPE transformers 5 writes as one flat
    rope_parameters dict (rope_type, rope_theta and the scaling keys: LlamaConfig's standardization) in place of
    rope_theta / rope_scaling: DeepseekV2Config, Exaone4Config. Their rotary embeddings (DeepseekV2RotaryEmbedding;
    Exaone4RotaryEmbedding = Gemma2RotaryEmbedding, the standard one) read rope_parameters["rope_type"] and
    ["rope_theta"], ROPE_INIT_FUNCTIONS the rest. Refused (the error names `family`): a top-level rope_theta /
    rope_scaling beside it."""
    if "rope_theta" in c or "rope_scaling" in c:
        raise ValueError("%s: rope_parameters beside a top-level rope_theta / rope_scaling is not used by the "
                         "fixtures" % family)
    rp = dict(get("rope_parameters"))
    theta = rp.pop("rope_theta")
    kind = rp.get("rope_type", rp.get("type", "default"))
    return theta, (None if kind == "default" else rp)


def ministral3_query_scale(rp):
    """(beta, period) of Ministral 3's query scaling from its rope_parameters dict: models/ministral3/
    modeling_ministral3.py Ministral3Attention.forward passes `self.config.rope_parameters.get("llama_4_scaling_beta")`
    and `.get("original_max_position_embeddings")` to _get_llama_4_attn_scale (see llama4_attn_scale). Refused: either
    key missing (transformers would compute `1 + None * ...` or divide by None: a TypeError), beta not a number, the
    period not a positive integer. beta 0: a factor of 1 everywhere."""
    beta, period = rp.get("llama_4_scaling_beta"), rp.get("original_max_position_embeddings")
    if beta is None or period is None:
        raise ValueError("Ministral 3: rope_parameters needs llama_4_scaling_beta and original_max_position_embeddings "
                         "(Ministral3Attention.forward reads both): %r" % (rp,))
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not math.isfinite(beta):
        raise ValueError("Ministral 3: llama_4_scaling_beta %r is not a number" % (beta,))
    if isinstance(period, bool) or not isinstance(period, int) or period <= 0:
        raise ValueError("Ministral 3: original_max_position_embeddings %r is not a positive integer" % (period,))
    return float(beta), period


def ernie_rope(c, get):
    """rope_theta of an Ernie4_5ForCausalLM / Ernie4_5_MoeForCausalLM config.json: the released ones (and transformers
    4.54 - 4.57) have rope_theta at the top level (an integer, 500000, in the released files); transformers 5 writes
    rope_parameters {"rope_type": "default", "rope_theta"} instead (the configs' default_theta 5e5 when it has none).
    Ernie4_5RotaryEmbedding is LlamaRotaryEmbedding: inv_freq over head_dim, no partial rotary. Refused: rope_scaling or a
    rope_type other than default, rope_parameters keys other than rope_type / rope_theta, rope_theta in both places
    with other values."""
    rs, rp = get("rope_scaling"), get("rope_parameters")
    if rs is not None and (not isinstance(rs, dict) or rs.get("rope_type", rs.get("type")) != "default" or
                           set(rs) - {"rope_type", "type"}):
        raise ValueError("ERNIE 4.5: rope_scaling %r is not used by the fixtures" % (rs,))
    theta = get("rope_theta")
    if rp is not None:
        if (not isinstance(rp, dict) or rp.get("rope_type", rp.get("type", "default")) != "default" or
                set(rp) - {"rope_type", "type", "rope_theta"}):
            raise ValueError("ERNIE 4.5: rope_parameters %r (only the default RoPE is used by the fixtures)" % (rp,))
        if "rope_theta" in c and "rope_theta" in rp and float(c["rope_theta"]) != float(rp["rope_theta"]):
            raise ValueError("ERNIE 4.5: rope_theta %r beside rope_parameters' %r" % (c["rope_theta"], rp["rope_theta"]))
        theta = rp.get("rope_theta", theta)
    return theta


def minimax_m2_rope(c, get, head_dim):
    """(rope_theta, rotary_dim) of a MiniMaxM2ForCausalLM config.json. The released one (MiniMax's remote-code spelling)
    has rope_theta and rotary_dim at the top level; transformers 5 writes rope_parameters {"rope_type": "default",
    "rope_theta", "partial_rotary_factor"} and no rotary_dim (models/minimax_m2/configuration_minimax_m2.py
    MiniMaxM2Config.convert_rope_params_to_dict: rope_parameters.setdefault("rope_theta", default_theta 5e6);
    partial_rotary_factor = rotary_dim / head_dim). rotary_dim = config.json's rotary_dim, else partial_rotary_factor
    (top level or in rope_parameters) x head_dim (Glm4MoeRotaryEmbedding: dim = int(head_dim * partial_rotary_factor)),
    else head_dim // 2 (convert_rope_params_to_dict's default for a missing rotary_dim). Note: that version of
    convert_rope_params_to_dict sets partial_rotary_factor from rotary_dim (default head_dim // 2) even when
    rope_parameters already holds one, so it would read a saved factor other than 0.5 without rotary_dim as 0.5; the
    earlier MiniMaxM2Config (kwargs.setdefault("partial_rotary_factor", rotary_dim / head_dim)) and
    Glm4MoeRotaryEmbedding take the saved factor, as here. Refused: rope_scaling or a rope_type other than default,
    rope_theta in both places with other values, two partial_rotary_factor values that differ, a rotary_dim that
    partial_rotary_factor x head_dim contradicts, an odd rotary_dim or one outside (0, head_dim]."""
    rp = get("rope_parameters")
    if get("rope_scaling") is not None:
        raise ValueError("MiniMax-M2: rope_scaling is not used by the fixtures")
    theta = get("rope_theta")
    factors = []
    if rp is not None:
        if not isinstance(rp, dict) or rp.get("rope_type", rp.get("type", "default")) != "default":
            raise ValueError("MiniMax-M2: rope_parameters %r (only the default RoPE is used by the fixtures)" % (rp,))
        if "rope_theta" in c and "rope_theta" in rp and float(c["rope_theta"]) != float(rp["rope_theta"]):
            raise ValueError("MiniMax-M2: rope_theta %r beside rope_parameters' %r" % (c["rope_theta"], rp["rope_theta"]))
        theta = rp.get("rope_theta", theta)
        if rp.get("partial_rotary_factor") is not None:
            factors.append(float(rp["partial_rotary_factor"]))
    if get("partial_rotary_factor") is not None:
        factors.append(float(get("partial_rotary_factor")))
    if len(set(factors)) > 1:
        raise ValueError("MiniMax-M2: partial_rotary_factor %r at the top level and in rope_parameters" % (factors,))
    rotary_dim = get("rotary_dim")
    from_factor = int(head_dim * factors[0]) if factors else None
    if rotary_dim is not None and from_factor is not None and rotary_dim != from_factor:
        raise ValueError("MiniMax-M2: rotary_dim %r but partial_rotary_factor %r x head_dim %d = %d" % (
            rotary_dim, factors[0], head_dim, from_factor))
    R = rotary_dim if rotary_dim is not None else from_factor if from_factor is not None else head_dim // 2
    if not 0 < R <= head_dim or R % 2:
        raise ValueError("MiniMax-M2: rotary_dim %r with head_dim %d" % (R, head_dim))
    return theta, R


def minimax_m2_expert_layout(spec, p):
    """MiniMax-M2's expert tensors as the weights hold them: "mixtral" (the released checkpoints, MiniMax's remote code:
    block_sparse_moe.gate.weight, block_sparse_moe.e_score_correction_bias, block_sparse_moe.experts.{e}.w1 / w3 / w2)
    or "stacked" (transformers 5's MiniMaxM2SparseMoeBlock as save_pretrained writes it: mlp.gate.weight,
    mlp.e_score_correction_bias, mlp.experts.gate_up_proj (E, 2F, H; per expert the w1 rows, then the w3 rows: the
    conversion's MergeModulelist(dim=0) + Concatenate(dim=1)) and mlp.experts.down_proj (E, H, F)); sets
    spec.expert_naming. Both or neither in the file: refused."""
    per_expert = any(".block_sparse_moe." in n for n in p)
    stacked = any(n.endswith(".mlp.experts.gate_up_proj") for n in p)
    if per_expert == stacked:
        raise ValueError("MiniMax-M2: the weights must hold either block_sparse_moe.* or mlp.experts.gate_up_proj")
    spec.expert_naming = "stacked" if stacked else "mixtral"


def olmo3_rope_parameters(c, get):
    """(full_attention, sliding_attention) RoPE parameters of an Olmo3ForCausalLM config, each a dict with
    rope_type and rope_theta (plus the scaling keys). Legacy spelling (transformers 4.57 wrote it; the released
    checkpoints have it): rope_theta and rope_scaling at the top level; models/olmo3/configuration_olmo3.py (5.x)
    convert_rope_params_to_dict turns them into {"sliding_attention": {"rope_type": "default", "rope_theta":
    rope_theta}, "full_attention": {"rope_type": "default", **rope_scaling, "rope_theta": rope_theta}}, as 4.57's
    Olmo3Model built its two rotary embeddings. transformers 5's spelling: rope_parameters with exactly those two
    keys (a flat rope_parameters, or one beside a top-level rope_theta / rope_scaling, is not used by the
    fixtures: refused)."""
    rp = get("rope_parameters")
    if rp is None:
        theta = get("rope_theta")
        rs = dict(get("rope_scaling") or {})
        kind = rs.pop("rope_type", rs.pop("type", "default"))
        return dict(rs, rope_type=kind, rope_theta=theta), {"rope_type": "default", "rope_theta": theta}
    if "rope_theta" in c or "rope_scaling" in c:
        raise ValueError("OLMo 3: rope_parameters beside a top-level rope_theta / rope_scaling is not used by the "
                         "fixtures")
    if not isinstance(rp, dict) or set(rp) != {"full_attention", "sliding_attention"}:
        raise ValueError("OLMo 3: rope_parameters must hold exactly full_attention and sliding_attention: %r" % (rp,))
    out = []
    for key in ("full_attention", "sliding_attention"):
        params = dict(rp[key])
        params.setdefault("rope_type", "default")
        params.setdefault("rope_theta", DEFAULTS[OLMO3]["rope_theta"])
        out.append(params)
    return tuple(out)


def exaone4_layer_sliding(c, get, L):
    """(sliding_window, per layer True where it slides) of an Exaone4ForCausalLM config.
    models/exaone4/modular_exaone4.py: Exaone4Config.__post_init__ (`if sliding_window is None: sliding_window_pattern =
    0`; `if layer_types is None: "sliding_attention" if (i + 1) % sliding_window_pattern != 0 else "full_attention"`);
    Exaone4Attention.__init__ (is_sliding = layer_types[layer_idx] == "sliding_attention"; forward passes
    `sliding_window=self.sliding_window if self.is_sliding else None`); Exaone4Model.forward masks "sliding_attention"
    layers with create_sliding_window_causal_mask, the others with create_causal_mask.
    layer_types listed (EXAONE-4.0-32B's and -1.2B's config.json list them): taken as they are.
    Not listed: an integer sliding_window_pattern n gives (i + 1) % n != 0 (no exception for the last layer); a string
    of "L" (local) and "G" (global), EXAONE-4.0-32B's "LLLG", as Exaone4Config's docstring describes it ("starts from
    layer 0 and repeats ...; the final layer always uses global attention") and as vLLM's / TensorRT-LLM's
    check_is_sliding compute it: layer i slides when i != L - 1 and pattern[i % len(pattern)] == "L" (transformers'
    own __post_init__ would take `(i + 1) % "LLLG"` and fail: the released configs list layer_types beside it).
    sliding_window null: no layer slides (the pattern becomes 0; HF's `(i + 1) % 0` only works with layer_types
    listed, all full_attention, as EXAONE-4.0-1.2B's are).
    Refused: a pattern string with other characters, or neither integer nor string; an integer pattern < 1 or a null
    one without layer_types (with a sliding_window); layer_types of other names or length; sliding_attention layers
    with sliding_window null (no window for them: HF's mask would have none); layer_types beside an explicit
    sliding_window_pattern that gives other layer types (transformers takes layer_types, vLLM's check_is_sliding the
    pattern: the fixtures have them agree); a sliding_window with no sliding layer (transformers' rule gives no layer
    RoPE, vLLM's exaone4.py rotates every layer when none slides)."""
    window = get("sliding_window")
    pattern = get("sliding_window_pattern")
    types = get("layer_types")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
        raise ValueError("EXAONE 4: sliding_window %r" % (window,))
    from_pattern = None
    if window is None:
        from_pattern = [False] * L
    elif isinstance(pattern, str):
        if not pattern or set(pattern) - {"L", "G"}:
            raise ValueError("EXAONE 4: sliding_window_pattern %r (only L and G)" % (pattern,))
        from_pattern = [i != L - 1 and pattern[i % len(pattern)] == "L" for i in range(L)]
    elif isinstance(pattern, int) and not isinstance(pattern, bool) and pattern >= 1:
        from_pattern = [(i + 1) % pattern != 0 for i in range(L)]
    elif pattern is not None and (isinstance(pattern, bool) or not isinstance(pattern, int)):
        raise ValueError("EXAONE 4: sliding_window_pattern %r (an integer or a string of L / G)" % (pattern,))
    if types is None:
        if from_pattern is None:
            raise ValueError("EXAONE 4: sliding_window_pattern %r and no layer_types" % (pattern,))
        types = ["sliding_attention" if x else "full_attention" for x in from_pattern]
    if len(types) != L or any(t not in ("sliding_attention", "full_attention") for t in types):
        raise ValueError("EXAONE 4: layer_types must be L entries of sliding_attention/full_attention: %r" % (types,))
    sliding = [t == "sliding_attention" for t in types]
    if window is None and any(sliding):
        raise ValueError("EXAONE 4: sliding_attention layers with sliding_window null")
    if window is not None and "sliding_window_pattern" in c and from_pattern is not None and from_pattern != sliding:
        raise ValueError("EXAONE 4: layer_types %r disagree with sliding_window_pattern %r" % (types, pattern))
    if window is not None and not any(sliding):
        # transformers would run every layer without RoPE (sliding_window set, no layer sliding), vLLM's exaone4.py
        # every layer with it (apply_rope_all_layers: no sliding_attention in layer_types)
        raise ValueError("EXAONE 4: a sliding_window but no sliding layer (transformers: no RoPE anywhere; vLLM: RoPE "
                         "everywhere)")
    return window, sliding


def llama4_layers(spec, get, kind):
    """The per-layer attention fields of a Llama 4 Spec, from models/llama4/configuration_llama4.py
    Llama4TextConfig.__post_init__ and models/llama4/modeling_llama4.py Llama4TextAttention.__init__ / forward:
      layer_use_rope: `self.use_rope = config.no_rope_layers[layer_idx]` (1: RoPE, 0: NoPE), no_rope_layers as
        config.json lists it when non-empty (`self.no_rope_layers if self.no_rope_layers else default`), else
        `int((layer_idx + 1) % no_rope_layer_interval != 0)`;
      layer_chunked / attention_chunk_size: Llama4TextDecoderLayer.attention_type = config.layer_types[layer_idx], from
        config.json, else `"chunked_attention" if no_rope else "full_attention" for no_rope in no_rope_layers` (the
        rotary layers chunked); Llama4TextModel.forward masks chunked_attention layers with create_chunked_causal_mask
        (chunked_overlay: a query sees only the keys of its own chunk of attention_chunk_size positions, see
        attention_bias) and full_attention layers with create_causal_mask;
      layer_qk_l2norm: `if self.config.use_qk_norm and self.use_rope: self.qk_norm = Llama4TextL2Norm(rms_norm_eps)`,
        applied to q and k after the RoPE (forward: `if hasattr(self, "qk_norm")`);
      layer_temperature, temperature_floor_scale, temperature_attn_scale: forward's `if self.attn_temperature_tuning and
        not self.use_rope` with config.floor_scale and config.attn_scale (llama4_temperature_scales); temperature_offset
        1 (the `cache_position + 1`; 0: a what-if only).
    What-ifs (golden_models.llama4_what_ifs) change these lists after __init__. Refused: a rope type other than
    default / llama3, no_rope_layers with fewer than num_hidden_layers entries or entries other than 0 / 1, layer_types
    that are not L of chunked_attention / full_attention, an attention_chunk_size that is not a positive integer where
    a layer is chunked, a floor_scale that is not positive."""
    if kind not in (None, "default", "llama3"):
        raise ValueError("Llama 4: rope type %r is not used by the fixtures" % (kind,))
    flags = get("no_rope_layers")
    if not flags:
        every = get("no_rope_layer_interval")
        flags = [int((l + 1) % every != 0) for l in range(spec.L)]
    if len(flags) < spec.L or any(isinstance(f, bool) or f not in (0, 1) for f in flags):
        raise ValueError("Llama 4: no_rope_layers %r (at least num_hidden_layers entries of 0 or 1)" % (flags,))
    spec.layer_use_rope = [bool(flags[l]) for l in range(spec.L)]
    types = get("layer_types")
    if types is None:
        types = ["chunked_attention" if flags[l] else "full_attention" for l in range(spec.L)]
    if len(types) != spec.L or any(t not in ("chunked_attention", "full_attention") for t in types):
        raise ValueError("Llama 4: layer_types %r (L entries of chunked_attention / full_attention)" % (types,))
    spec.layer_chunked = [t == "chunked_attention" for t in types]
    chunk = get("attention_chunk_size")
    if any(spec.layer_chunked) and (isinstance(chunk, bool) or not isinstance(chunk, int) or chunk <= 0):
        raise ValueError("Llama 4: attention_chunk_size %r (a positive integer: chunked layers)" % (chunk,))
    spec.attention_chunk_size = chunk
    use_qk_norm = bool(get("use_qk_norm"))
    spec.layer_qk_l2norm = [use_qk_norm and r for r in spec.layer_use_rope]
    tuning = bool(get("attn_temperature_tuning"))  # (the release's 4 is true)
    floor_scale, attn_scale = get("floor_scale"), get("attn_scale")
    if tuning and (isinstance(floor_scale, bool) or not isinstance(floor_scale, (int, float)) or floor_scale <= 0 or
                   isinstance(attn_scale, bool) or not isinstance(attn_scale, (int, float))):
        raise ValueError("Llama 4: floor_scale %r, attn_scale %r (a positive number, a number)" % (floor_scale,
                                                                                                  attn_scale))
    spec.layer_temperature = [tuning and not r for r in spec.layer_use_rope]
    spec.temperature_floor_scale, spec.temperature_attn_scale = floor_scale, attn_scale


def phimoe_rope(c, get, dim, theta, rs):
    """PhiMoE's LongRoPE: ((short inv_freq, short_mscale), (long inv_freq, long_mscale),
    original_max_position_embeddings, the attention factor _compute_longrope_parameters computes, which PhiMoE does not
    use).
    models/phimoe/configuration_phimoe.py PhimoeConfig.__init__ (4.46-4.57): rope_scaling["rope_type"] defaults to its
    "type"; `self.original_max_position_embeddings = self.rope_scaling["original_max_position_embeddings"]`;
    short_mscale and long_mscale must be numbers (a TypeError otherwise). models/phimoe/modeling_phimoe.py
    PhimoeRotaryEmbedding.forward(x, seq_len) with seq_len = cache_position[-1] + 1 (PhimoeModel.forward; the later 4.5x
    modular_phimoe.py's forward(x, position_ids) takes torch.max(position_ids) + 1, the same for one sequence): `mscale
    = self.long_mscale if seq_len > self.config.rope_scaling["original_max_position_embeddings"] else
    self.short_mscale`; `inv_freq, attention_scaling = self.rope_init_fn(self.config, x.device, seq_len)`
    (modeling_rope_utils.py _compute_longrope_parameters: long_factor iff seq_len >
    config.original_max_position_embeddings, else short_factor; inv_freq = 1 / (ext * theta^(2i / dim)),
    longrope_parameters here); `mscale = attention_scaling if mscale is None else mscale`: with rope_scaling set mscale
    is never None, so cos and sin are multiplied by the
    config's short / long mscale, not by the computed attention factor sqrt(1 + ln(max / original) / ln(original)).
    Which factors a sequence takes: forward (the long switch at long_rope_after = original_max_position_embeddings,
    Phi-3's rule). Refused: a rope type other than longrope, an mscale that is not a number, no
    original_max_position_embeddings in rope_scaling (PhimoeRotaryEmbedding.forward reads it there), and a top-level
    original_max_position_embeddings that differs from it (PretrainedConfig.__init__'s kwargs would replace the one
    PhimoeConfig copied from rope_scaling: the factors' switch and the mscale's would disagree)."""
    kind = rs.get("rope_type", rs.get("type"))
    if kind != "longrope":
        raise ValueError("PhiMoE: rope type %r (PhimoeRotaryEmbedding's mscale is LongRoPE's)" % (kind,))
    for key in ("short_mscale", "long_mscale"):
        if isinstance(rs.get(key), bool) or not isinstance(rs.get(key), (int, float)):
            raise ValueError("PhiMoE: rope_scaling's %s must be a number, got %r" % (key, rs.get(key)))
    if "original_max_position_embeddings" not in rs:
        raise ValueError("PhiMoE: rope_scaling has no original_max_position_embeddings (PhimoeRotaryEmbedding.forward "
                         "reads rope_scaling[\"original_max_position_embeddings\"])")
    original = rs["original_max_position_embeddings"]
    if c.get("original_max_position_embeddings", original) != original:
        raise ValueError("PhiMoE: original_max_position_embeddings %r != rope_scaling's %r" % (
            c["original_max_position_embeddings"], original))
    lr = (dim, theta, rs, get("max_position_embeddings"), original)
    short, computed = longrope_parameters(*lr)
    long, _ = longrope_parameters(*lr, long=True)
    return (short, float(rs["short_mscale"])), (long, float(rs["long_mscale"])), original, computed


def hunyuan_rope(c, get, HD):
    """(rope_theta, alpha, base) of a HunYuan-Dense or HunYuan-MoE config (HunYuanDenseV1ForCausalLM,
    HunYuanMoEV1ForCausalLM: models/hunyuan_v1_moe's HunYuanMoEV1RotaryEmbedding is the dense one, 4.56 / 4.57 written
    out again with `config.rope_scaling.get("alpha")` and `self.dim = config.head_dim`, 5.x a subclass); alpha and base
    None without
    rope_scaling (the default RoPE at rope_theta).
    models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py HunYuanDenseV1RotaryEmbedding.__init__ ("Diff from Llama -
    DynamicNTKAlphaRotary"): `if self.rope_type == "dynamic" and self.config.rope_parameters.get("alpha"):` `self.dim =
    config.head_dim`, `base = rope_parameters["rope_theta"] * rope_parameters["alpha"] ** (config.head_dim /
    (config.head_dim - 2))`, `inv_freq = 1.0 / (base ** (torch.arange(0, self.dim, 2).float() / config.head_dim))`,
    `self.attention_scaling = 1.0`; transformers 4.56's the same from config.rope_scaling["alpha"] and
    config.rope_theta (rope_type from rope_scaling's "rope_type", else its "type"). base is a Python float (the
    product in double), raised to the fp32 exponents as rope_inv_freq does with theta. The released configs' other
    rope_scaling keys (factor 1.0, beta_fast, beta_slow, mscale, mscale_all_dim) are not read on that path. The rotary
    embedding's forward (LlamaRotaryEmbedding's, under @dynamic_rope_update) recomputes inv_freq for rope type
    "dynamic" only when max(position_ids) + 1 > max_position_embeddings (_dynamic_frequency_update: then with
    _compute_dynamic_ntk_parameters, not the alpha base): never for sequences within max_position_embeddings, the only
    ones the fixtures run. Refused (not used by the fixtures): a missing / null head_dim (HunYuanDenseV1Attention and the
    rotary embedding read config.head_dim: None fails there), rope_scaling other than {"type" (or "rope_type"):
    "dynamic", "alpha": a > 0, ...}, a "dynamic" rope_scaling without alpha (dynamic NTK by factor), and transformers
    5's rope_parameters spelling (the fixtures hold rope_theta / rope_scaling as the releases do)."""
    if c.get("head_dim") is None:
        raise ValueError("HunYuan: head_dim missing or null (HunYuanDenseV1Attention / HunYuanMoEV1Attention read "
                         "config.head_dim)")
    if get("rope_parameters") is not None:
        raise ValueError("HunYuan: rope_parameters (transformers 5's spelling) is not used by the fixtures")
    theta, rs = get("rope_theta"), get("rope_scaling")
    if rs is None:
        return theta, None, None
    kind = rs.get("rope_type", rs.get("type"))
    alpha = rs.get("alpha")
    if kind != "dynamic" or not alpha or isinstance(alpha, bool) or alpha <= 0:
        raise ValueError("HunYuan: rope_scaling %r (only {\"type\": \"dynamic\", \"alpha\": a > 0} is used by "
                         "the fixtures)" % (rs,))
    return theta, alpha, theta * alpha ** (HD / (HD - 2))


def rope_parameters_for(dim, params, max_positions):
    """(inv_freq, attention_factor) of one RoPE parameter dict (rope_type, rope_theta and the scaling keys):
    default, linear, llama3 (rope_inv_freq) or yarn (yarn_parameters)."""
    kind = params.get("rope_type", params.get("type", "default"))
    if kind == "yarn":
        return yarn_parameters(dim, params["rope_theta"], params, max_positions)
    return rope_inv_freq(dim, params["rope_theta"], None if kind == "default" else params), 1.0


def rope_inv_freq(dim, theta, scaling):
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).to(torch.float32) / dim))
    if not scaling:
        return inv_freq
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind == "default":
        return inv_freq
    if kind == "linear":
        # modeling_rope_utils.py _compute_linear_scaling_rope_parameters: inv_freq /= factor
        return inv_freq / scaling["factor"]
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


def longrope_parameters(dim, theta, scaling, max_positions, original_max_positions, long=False):
    """(inv_freq, attention_factor) of LongRoPE with the short (or, with long=True, the long)
    factors (modeling_rope_utils.py _compute_longrope_parameters): factor =
    max_position_embeddings / original_max_position_embeddings (the top-level key Phi-3 has);
    attention_factor = rope_scaling.attention_factor, else 1 if factor <= 1, else sqrt(1 +
    ln(factor) / ln(original_max_position_embeddings)), the same for both; inv_freq_i = 1 /
    (ext_i * theta^(2i/dim)), ext = short_factor, or long_factor when called with seq_len >
    original_max_position_embeddings. Which applies: see `forward`."""
    short = scaling["long_factor" if long else "short_factor"]
    if len(short) != dim // 2 or len(scaling["long_factor"]) != dim // 2:
        raise ValueError("longrope factor lists must have head_dim / 2 = %d entries" % (dim // 2))
    factor = max_positions / original_max_positions
    attention_factor = scaling.get("attention_factor")
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original_max_positions))
    ext = torch.tensor(short, dtype=torch.float32)
    shape = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
    return 1.0 / (ext * theta ** shape), attention_factor


def yarn_parameters(dim, theta, scaling, max_positions, top_level_original=None):
    """(inv_freq, attention_factor) of YaRN, modeling_rope_utils.py _compute_yarn_parameters as of
    transformers 4.56 / 5.x: factor as given (4.51-4.55 replaced it by max_position_embeddings /
    original_max_position_embeddings; a fixture whose max_position_embeddings is factor times the
    original reads the same in both); original context = the top-level
    original_max_position_embeddings (5.x moves it into the rope parameters), else the rope key,
    else max_position_embeddings; attention_factor given, else get_mscale(factor, mscale) /
    get_mscale(factor, mscale_all_dim) when both are set, else get_mscale(factor) = 0.1 ln(factor)
    + 1; beta_fast / beta_slow `or` 32 / 1; find_correction_range (floored / ceiled when truncate,
    the default; gpt-oss's configs set truncate false, keeping the fractional bounds), clamped to
    [0, dim - 1]; linear_ramp_factor over dim // 2 in fp32; inv_freq = interpolation * (1 -
    extrapolation_factor) + extrapolation * extrapolation_factor."""
    factor = scaling["factor"]
    original = top_level_original or scaling.get("original_max_position_embeddings") or max_positions

    def get_mscale(scale, m=1.0):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    attention_factor = scaling.get("attention_factor")
    if attention_factor is None:
        m, m_all = scaling.get("mscale"), scaling.get("mscale_all_dim")
        if m and m_all:
            attention_factor = float(get_mscale(factor, m) / get_mscale(factor, m_all))
        else:
            attention_factor = get_mscale(factor)
    beta_fast = scaling.get("beta_fast") or 32
    beta_slow = scaling.get("beta_slow") or 1

    def correction_dim(rotations):
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(theta))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if scaling.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    pos_freqs = theta ** (torch.arange(0, dim, 2).to(dtype=torch.float) / dim)
    extrapolation = 1.0 / pos_freqs
    interpolation = 1.0 / (factor * pos_freqs)
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    keep = 1 - ramp
    return interpolation * (1 - keep) + extrapolation * keep, attention_factor


def load_model(folder):
    """(Spec, params: name -> fp32 tensor, dtypes: name -> stored dtype) from an HF folder. An FP8
    checkpoint (config.json quantization_config quant_method "fp8", as DeepSeek-V3 / R1 and Kimi-K2 are
    released) is dequantized as a loader that holds the model in its torch_dtype sees it
    (`fp8_dequantize_params`); dtypes keeps the stored dtypes (F8_E4M3, and F32 for the scales)."""
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    spec = Spec(cfg)
    st = read_safetensors(os.path.join(folder, "model.safetensors"))
    p = {k: v[1] for k, v in st.items()}
    dtypes = {k: v[0] for k, v in st.items()}
    if spec.arch == MINIMAX_M2:
        minimax_m2_expert_layout(spec, p)
    if spec.arch in HYBRID:
        hybrid_expert_layout(spec, p)
    if spec.arch == QWEN3_VL_MOE:
        qwen3_vl_moe_expert_layout(spec, p)
    if (cfg.get("quantization_config") or {}).get("quant_method") == "fp8" and F8 not in dtypes.values():
        raise ValueError("%s: quantization_config fp8 but no F8_E4M3 tensor" % folder)
    return spec, fp8_dequantize_params(cfg, p, dtypes), dtypes


def fp8_dequantize_params(cfg, p, dtypes):
    """Every F8_E4M3 weight W with its sibling W + "_scale_inv" (F32, (ceil(out / Bm), ceil(in / Bn))) ->
    round(fp32(W) * scale_inv[block], model dtype), the scales dropped; other tensors unchanged.
    (Bm, Bn) = quantization_config.weight_block_size; the model dtype is config.json's torch_dtype
    (bfloat16 in the released FP8 checkpoints: transformers' FineGrainedFP8Config(dequantize=True) and
    DeepSeek's fp8_cast_bf16.py, whose weight_dequant writes torch.get_default_dtype() = bfloat16, both
    end with bf16 weights). Not modelled: transformers' FP8Linear without dequantize, which also
    quantizes the activations (activation_scheme "dynamic": act_quant per 1 x Bn group) and runs an fp8
    matmul -- an engine that does that is not expected to match these goldens to 1e-4."""
    fp8 = sorted(n for n, dt in dtypes.items() if dt == F8)
    q = cfg.get("quantization_config") or {}
    if not fp8:  # (the generator also passes the unquantized weights of an FP8 fixture's config)
        return p
    if q.get("quant_method") != "fp8" or q.get("fmt", "e4m3") != "e4m3":
        raise ValueError("F8_E4M3 tensors need quantization_config quant_method fp8, fmt e4m3: %r" % (q,))
    block = q.get("weight_block_size")
    if block is None or len(block) != 2:
        raise ValueError("quantization_config.weight_block_size must be [Bm, Bn]: %r" % (block,))
    target = {"bfloat16": "BF16", "float16": "F16", "float32": "F32"}[cfg.get("torch_dtype", "bfloat16")]
    out = dict(p)
    for name in fp8:
        sname = name + "_scale_inv"
        if not name.endswith(".weight") or sname not in p or dtypes[sname] != "F32" or p[name].dim() != 2:
            raise ValueError("%s: an F8_E4M3 tensor needs a 2-D weight and an F32 %s" % (name, sname))
        out[name] = round_to(fp8_block_dequantize(p[name], out.pop(sname), block), target)
    stray = [n for n in out if n.endswith("_scale_inv")]
    if stray:
        raise ValueError("scale tensors without an F8_E4M3 weight: %s" % ", ".join(stray))
    return out


def weight_names(spec, p):
    """(prefix of the language model's weights, name of the output head)."""
    if spec.prefix is not None:
        return spec.prefix, "lm_head.weight"
    # models/gemma3/modeling_gemma3.py Gemma3ForConditionalGeneration._checkpoint_conversion_mapping
    # (models/mistral3/modeling_mistral3.py Mistral3ForConditionalGeneration's alike):
    # "^language_model.model" -> "model.language_model", "^language_model.lm_head" -> "lm_head"
    if "language_model.model.embed_tokens.weight" in p:
        return "language_model.model.", "language_model.lm_head.weight"
    if "model.language_model.embed_tokens.weight" in p:
        return "model.language_model.", "lm_head.weight"
    # the released Qwen2-VL/Qwen2.5-VL checkpoints: model.* beside visual.* (their
    # _checkpoint_conversion_mapping: "^model" -> "model.language_model")
    if "model.embed_tokens.weight" in p:
        return "model.", "lm_head.weight"
    raise KeyError("no language_model embed_tokens.weight in the weights")


# ----------------------------------------------------------------------------------------------
# forward

def rms_norm(x, w, eps):
    x = x.to(torch.float32)
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rms_norm_offset(x, w, eps):
    # models/gemma2/modeling_gemma2.py Gemma2RMSNorm.forward (Gemma3RMSNorm alike): the weight is
    # stored as w and used as 1 + w, the product taken in fp32
    x = x.to(torch.float32)
    return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)) * (1.0 + w)


def layer_norm(x, w, eps):
    # models/cohere/modeling_cohere.py CohereLayerNorm.forward: in fp32, the mean subtracted, the
    # (biased) variance of the centred values, (x - mean) * rsqrt(variance + eps), then weight * that;
    # no bias
    x = x.to(torch.float32)
    mean = x.mean(-1, keepdim=True)
    variance = (x - mean).pow(2).mean(-1, keepdim=True)
    return w * ((x - mean) * torch.rsqrt(variance + eps))


def norm(spec, x, w, b=None):
    if spec.layer_norm:
        y = layer_norm(x, w, spec.eps)
    else:
        y = rms_norm_offset(x, w, spec.eps) if spec.norm_offset else rms_norm(x, w, spec.eps)
    # (PhiMoE: torch's nn.LayerNorm, weight * normed + bias; with layer_norm False an RMSNorm plus the bias, a what-if)
    return y if b is None else y + b


def norm_bias(spec, p, weight_name):
    """The bias beside a norm's weight (`<name>.bias`: PhiMoE's nn.LayerNorms), None for every other family."""
    return p[weight_name[:-len("weight")] + "bias"] if spec.norm_bias else None


def softcap(x, cap):
    # cap * tanh(x / cap): models/gemma2/modeling_gemma2.py eager_attention_forward (scores) and
    # Gemma2ForCausalLM.forward (logits), computed as there: divide, tanh, multiply
    return torch.tanh(x / cap) * cap


def activation(spec, x):
    # gelu_pytorch_tanh (Gemma's hidden_activation) = gelu with the tanh approximation:
    # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); "gelu": the exact erf form (a what-if only: Gemma 1's
    # config.json hidden_act as transformers >= 4.48 reads it, see Spec)
    if spec.act == "gelu":
        return F.gelu(x)
    if spec.act in ("relu2", "relu"):
        # Nemotron-H's mlp_hidden_act relu2: transformers' ReLUSquaredActivation, `torch.square(relu(x))`; "relu" (the
        # ReLU unsquared) a what-if only
        y = F.relu(x)
        return torch.square(y) if spec.act == "relu2" else y
    return F.gelu(x, approximate="tanh") if spec.act == "gelu_tanh" else F.silu(x)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rotate_half_interleaved(x):
    # models/glm4/modeling_glm4.py rotate_half: stack((-x[..., 1::2], x[..., 0::2]), -1).flatten(-2)
    return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)


def rope_cos_sin(inv_freq, attention_factor, positions):
    """(cos, sin), each (B, 1, T, HD), in fp32. attention_factor multiplies both (the
    *RotaryEmbedding.forward of transformers: `cos = emb.cos() * self.attention_scaling`), so q and
    k each grow by it; 1.0 except for LongRoPE and YaRN."""
    freqs = positions.to(torch.float32).unsqueeze(-1) * inv_freq  # (B, T, HD/2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    if attention_factor != 1.0:
        cos, sin = cos * attention_factor, sin * attention_factor
    return cos.unsqueeze(1), sin.unsqueeze(1)


def mrope_cos_sin(spec, positions, rows=None):
    """(cos, sin) of the Qwen-VL multimodal RoPE for text: position_ids (3, B, T) are the text
    positions three times (models/qwen2_5_vl/modeling_qwen2_5_vl.py Qwen2_5_VLModel.get_rope_index
    without images: `position_ids = attention_mask.cumsum(-1) - 1`, expanded to 3 rows). Qwen2-VL and
    Qwen2.5-VL: cos/sin of every row, then band j of the head (mrope_section * 2) taken from row
    j % 3 (apply_multimodal_rotary_pos_emb); Qwen3-VL: the frequencies of rows 1 and 2 written into
    every third band of row 0 (Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope), then cos/sin.
    rows: (3, B, T) other position rows (an image's), for check_reference."""
    inv_freq, factor = spec.rope["global"]
    pos3 = (positions.unsqueeze(0).expand(3, *positions.shape) if rows is None else rows).to(torch.float32)
    freqs = pos3.unsqueeze(-1) * inv_freq  # (3, B, T, HD/2)
    if spec.mrope_interleaved:
        freqs_t = freqs[0].clone()
        for dim, offset in ((1, 1), (2, 2)):
            idx = slice(offset, spec.mrope_section[dim] * 3, 3)
            freqs_t[..., idx] = freqs[dim, ..., idx]
        emb = torch.cat((freqs_t, freqs_t), dim=-1)
        cos, sin = emb.cos() * factor, emb.sin() * factor
    else:
        emb = torch.cat((freqs, freqs), dim=-1)
        cos3, sin3 = emb.cos() * factor, emb.sin() * factor
        sections = spec.mrope_section * 2
        cos = torch.cat([m[i % 3] for i, m in enumerate(cos3.split(sections, dim=-1))], dim=-1)
        sin = torch.cat([m[i % 3] for i, m in enumerate(sin3.split(sections, dim=-1))], dim=-1)
    return cos.unsqueeze(1), sin.unsqueeze(1)


def llama4_attn_scale(spec, positions):
    """Ministral 3's per-token query factor, (B, 1, T, 1) fp32 for positions (B, T) int64: models/ministral3/
    modeling_ministral3.py _get_llama_4_attn_scale(positions_ids, beta, max_position_embeddings) = `1 + beta *
    torch.log(1 + torch.floor(positions_ids / max_position_embeddings))` with beta = llama_4_scaling_beta and
    max_position_embeddings = rope_parameters' original_max_position_embeddings (the period), computed in fp32 (an
    int64 tensor divided by an int: float32) as written there; Ministral3Attention.forward multiplies the rotated
    queries by it, `.to(query_states.dtype)` (a bf16 run would round it to bf16 first; the goldens are fp32).
    transformers passes cache_position, the absolute position of each token in its sequence: `positions` here (for an
    unpadded sequence the same; in a left-padded batch transformers' cache_position also counts the padding, which
    position_ids do not: greedy_batch keeps each sequence's own positions, as an unpadded run has them).
    What-ifs: query_scale_log False gives 1 + beta floor(p / period), query_scale_offset 1 counts positions from 1."""
    periods = torch.floor((positions + spec.query_scale_offset) / spec.query_scale_period)
    scale = 1 + spec.query_scale_beta * (torch.log(1 + periods) if spec.query_scale_log else periods)
    return scale.unsqueeze(1).unsqueeze(-1)


def attention_bias(positions, k_pos, k_valid, window, chunk=None):
    """(B, 1, T, S) additive mask: 0 where query i may attend key j, fp32 min elsewhere. chunk (Llama 4's chunked
    layers): only the keys of the query's own chunk, masking_utils.chunked_overlay `(kv_idx - left_padding) //
    chunk_size == (q_idx - left_padding) // chunk_size` (positions count from each sequence's first real token: the
    same as the left padding subtracted)."""
    allowed = (k_pos.unsqueeze(1) <= positions.unsqueeze(2)) & k_valid.unsqueeze(1)
    if window is not None:
        allowed = allowed & (k_pos.unsqueeze(1) > positions.unsqueeze(2) - window)
    if chunk is not None:
        allowed = allowed & (torch.div(k_pos.unsqueeze(1), chunk, rounding_mode="floor") ==
                             torch.div(positions.unsqueeze(2), chunk, rounding_mode="floor"))
    bias = torch.zeros(allowed.shape, dtype=torch.float32).masked_fill(~allowed, torch.finfo(torch.float32).min)
    return bias.unsqueeze(1)


def llama4_freqs_cis(inv_freq, attention_factor, positions):
    """Llama 4's rotation, (B, T, HD/2) complex: models/llama4/modeling_llama4.py Llama4TextRotaryEmbedding.forward,
    `freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)` (a product per position and
    frequency, in fp32), `freqs_cis = torch.polar(torch.ones_like(freqs), freqs)`, `freqs_cis = freqs_cis *
    self.attention_scaling` (1 for the default and llama3 RoPE). inv_freq from the rope init function (llama3:
    _compute_llama3_parameters, rope_inv_freq)."""
    freqs = positions.to(torch.float32).unsqueeze(-1) * inv_freq
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    return freqs_cis * attention_factor


def llama4_apply_rotary_emb(spec, xq, xk, freqs_cis):
    """models/llama4/modeling_llama4.py apply_rotary_emb on q (B, T, NH, HD) and k (B, T, NKV, HD) before their
    transpose: `xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))` (the adjacent pairs (x[2i],
    x[2i + 1]) as complex numbers), `torch.view_as_real(xq_ * freqs_cis[:, :, None, :]).flatten(3)`, `.type_as(xq)`
    (k alike). spec.rope_interleaved False (a what-if only): the rotate-half pairs (x[i], x[i + HD/2]) turned instead."""
    def turn(x):
        if spec.rope_interleaved:
            x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
            return torch.view_as_real(x_ * freqs_cis[:, :, None, :]).flatten(3).type_as(x)
        half = x.shape[-1] // 2
        z = torch.complex(x[..., :half].float(), x[..., half:].float()) * freqs_cis[:, :, None, :]
        return torch.cat((z.real, z.imag), dim=-1).type_as(x)
    return turn(xq), turn(xk)


def llama4_l2_norm(x, eps):
    """models/llama4/modeling_llama4.py Llama4TextL2Norm.forward: `self._norm(x.float()).type_as(x)` with `_norm(x) = x *
    torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)` over head_dim, no weight; eps = rms_norm_eps
    (Llama4TextAttention.__init__: Llama4TextL2Norm(config.rms_norm_eps))."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).type_as(x)


def llama4_temperature_scales(spec, positions):
    """Llama 4's query temperature of each token, (B, T, 1, 1) fp32 for positions (B, T): models/llama4/
    modeling_llama4.py Llama4TextAttention.forward, `attn_scales = torch.log1p(torch.floor((cache_position.float() +
    1.0) / self.floor_scale)) * self.attn_scale + 1.0` (4.51-4.5x: `torch.log(torch.floor(...) + 1.0)`, the same for
    these integers), `.view((1, T, 1, 1)).expand((*input_shape, 1, 1))`, multiplied onto the queries of the NoPE layers
    (those without RoPE) when attn_temperature_tuning. cache_position: the absolute position from 0 (for an unpadded
    sequence the position; in a left-padded batch transformers' cache_position also counts the padding, which
    positions here do not: greedy_batch keeps each sequence's own positions, as an unpadded run has them).
    spec.temperature_offset 0 (a what-if only): cache_position in place of cache_position + 1."""
    scales = torch.log1p(torch.floor((positions.float() + spec.temperature_offset) / spec.temperature_floor_scale))
    return (scales * spec.temperature_attn_scale + 1.0).unsqueeze(-1).unsqueeze(-1)


def llama4_query_key(spec, l, q, k, freqs_cis, temperature):
    """Llama4TextAttention.forward between the projections and the transpose, on q (B, T, NH, HD) and k (B, T, NKV,
    HD): `if self.use_rope:` apply_rotary_emb (llama4_apply_rotary_emb); `if hasattr(self, "qk_norm"):` (use_qk_norm and
    use_rope) q and k through Llama4TextL2Norm (llama4_l2_norm); `if self.attn_temperature_tuning and not
    self.use_rope:` `query_states = (query_states * attn_scales).to(query_states.dtype)` (llama4_temperature_scales),
    the keys unscaled. The what-ifs change spec.layer_qk_l2norm / layer_temperature / rope_interleaved."""
    if spec.layer_use_rope[l]:
        q, k = llama4_apply_rotary_emb(spec, q, k, freqs_cis)
    if spec.layer_qk_l2norm[l]:
        q, k = llama4_l2_norm(q, spec.eps), llama4_l2_norm(k, spec.eps)
    if spec.layer_temperature[l]:
        q = (q * temperature).to(q.dtype)
    return q, k


def qkv_projections(spec, p, pre, h):
    a = pre + spec.attn_module + "."  # (self_attn.; Nemotron-H's mixer.)
    if spec.fused_qkv:
        QD, KVD = spec.NH * spec.HD, spec.NKV * spec.HD
        qkv = h @ p[a + "qkv_proj.weight"].T
        return qkv[..., :QD], qkv[..., QD:QD + KVD], qkv[..., QD + KVD:]
    q = h @ p[a + "q_proj.weight"].T
    k = h @ p[a + "k_proj.weight"].T
    v = h @ p[a + "v_proj.weight"].T
    if spec.qkv_bias:
        q = q + p[a + "q_proj.bias"]
        k = k + p[a + "k_proj.bias"]
        v = v + p[a + "v_proj.bias"]
    return q, k, v


def self_attention(spec, p, pre, l, h, cos_sin, bias, cache, new_cache, trace, query_scale=None):
    B, T, _ = h.shape
    NH, NKV, HD = spec.NH, spec.NKV, spec.HD
    q, k, v = qkv_projections(spec, p, pre, h)
    gate = None
    if spec.q_gate:
        # models/qwen3_next/modular_qwen3_next.py Qwen3NextAttention.forward: `query_states, gate =
        # torch.chunk(self.q_proj(hidden_states).view(*input_shape, -1, self.head_dim * 2), 2, dim=-1)`: per head the
        # first head_dim values are the query, the next head_dim the gate; `gate = gate.reshape(*input_shape, -1)`
        qg = q.view(B, T, NH, 2 * HD)
        q, gate = qg[..., :HD].reshape(B, T, NH * HD), qg[..., HD:].reshape(B, T, NH * HD)
    if spec.qk_norm_full:
        # models/olmo2/modeling_olmo2.py Olmo2Attention.forward: q_norm(q_proj(h)), k_norm(k_proj(h)) on the
        # (B, T, heads * head_dim) projections (one mean square over every head), then the view into heads.
        # Olmo2RMSNorm.forward (modeling_olmo2.py as generated from 4.5x on) multiplies by the weight in fp32 and
        # then casts back to the input dtype; LlamaRMSNorm (which earlier modular_olmo2.py versions reused as
        # Olmo2RMSNorm) casts first and multiplies after. In fp32, as here, the two are the same
        q = rms_norm(q, p[pre + "self_attn.q_norm.weight"], spec.eps)
        k = rms_norm(k, p[pre + "self_attn.k_norm.weight"], spec.eps)
    q = q.view(B, T, NH, HD)
    k = k.view(B, T, NKV, HD)
    v = v.view(B, T, NKV, HD)
    if spec.arch == LLAMA4:
        # models/llama4/modeling_llama4.py Llama4TextAttention.forward: RoPE, L2 norm, temperature (llama4_query_key),
        # then the transpose, the cache, eager_attention_forward (repeat_kv, `* scaling` = head_dim**-0.5, the mask
        # added, softmax; Llama 4's does not cast the weights to fp32: the same in fp32), o_proj
        q, k = llama4_query_key(spec, l, q, k, cos_sin, query_scale)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    else:
        q, k, v = _rotate_query_key(spec, p, pre, l, q, k, v, cos_sin, query_scale)
    return _attend(spec, p, pre, l, q, k, v, bias, cache, new_cache, trace, gate, B, T)


def _rotate_query_key(spec, p, pre, l, q, k, v, cos_sin, query_scale):
    """self_attention from the view into heads to the transposed, rotated (and for Ministral 3 scaled) q, k, v of
    every family but Llama 4 (B, heads, T, HD)."""
    qn = (lambda x, w: rms_norm(x, w, spec.eps)) if spec.qk_norm_rms else (lambda x, w: norm(spec, x, w))
    qw, kw = ("%sself_attn.%s.weight" % (pre, n) for n in spec.qk_norm_names)
    if spec.qk_norm and not spec.qk_norm_after_rope:
        # Qwen3Attention / Gemma3Attention.forward: q_norm, k_norm over head_dim before RoPE.
        # CohereAttention.forward alike: q_proj(h).view(*input_shape, -1, head_dim), then q_norm (a
        # CohereLayerNorm: mean and variance over the last dim, head_dim, in fp32), before the
        # transpose and RoPE; its weight (heads, head_dim) broadcasts over (B, T, heads, head_dim),
        # a row per head
        q = qn(q, p[qw])
        k = qn(k, p[kw])
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # (B, heads, T, HD)
    cos, sin = cos_sin
    R = cos.shape[-1]  # the rotary dims: all of HD, or Phi-4-mini's and GLM's part (the rest pass)
    rot = rotate_half
    if spec.rope_interleaved:
        # GLM's apply_rotary_pos_emb: cos/sin = their first half, each value repeated twice (Cohere's
        # CohereRotaryEmbedding builds the same repeat_interleave(freqs, 2) over the whole head)
        cos = cos[..., :R // 2].repeat_interleave(2, dim=-1)
        sin = sin[..., :R // 2].repeat_interleave(2, dim=-1)
        rot = rotate_half_interleaved
    if spec.layer_use_rope[l]:  # (not on SmolLM3's NoPE layers, nor Cohere 2's full layers)
        q = torch.cat((q[..., :R] * cos + rot(q[..., :R]) * sin, q[..., R:]), dim=-1)
        k = torch.cat((k[..., :R] * cos + rot(k[..., :R]) * sin, k[..., R:]), dim=-1)
    if spec.qk_norm and spec.qk_norm_after_rope:
        # models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py HunYuanDenseV1Attention.forward: apply_rotary_pos_emb, then
        # `query_states = self.query_layernorm(query_states)`, `key_states = self.key_layernorm(key_states)` on (B,
        # heads, T, head_dim): HunYuanDenseV1RMSNorm (LlamaRMSNorm) over head_dim, before the cache update (the cache
        # holds the normed keys)
        q = qn(q, p[qw])
        k = qn(k, p[kw])
    if query_scale is not None:
        # models/ministral3/modeling_ministral3.py Ministral3Attention.forward, right after apply_rotary_pos_emb:
        # `query_states = query_states * _get_llama_4_attn_scale(cache_position, ...).to(query_states.dtype)` (B, 1,
        # T, 1) over every head; the keys (and so the KV cache) stay unscaled (query_scale_keys: a what-if only)
        q = q * query_scale
        if spec.query_scale_keys:
            k = k * query_scale
    return q, k, v


def _attend(spec, p, pre, l, q, k, v, bias, cache, new_cache, trace, gate, B, T):
    """self_attention from the rotated q, k, v (B, heads, T, HD) on: the cache, GQA, the scores, the softmax, the
    output gate (Qwen3-Next), o_proj."""
    NH, NKV, HD = spec.NH, spec.NKV, spec.HD
    if cache is not None:
        if l in cache:
            k = torch.cat((cache[l][0], k), dim=2)
            v = torch.cat((cache[l][1], v), dim=2)
        new_cache[l] = (k, v)
    rep = NH // NKV
    kr = k.repeat_interleave(rep, dim=1)
    vr = v.repeat_interleave(rep, dim=1)
    scores = (q @ kr.transpose(2, 3)) * spec.attn_scale
    if trace is not None:
        trace.setdefault("max_abs_score", {})[l] = float(scores.masked_fill(bias < 0, 0).abs().max())
    if spec.attn_softcap is not None:
        # models/gemma2/modeling_gemma2.py eager_attention_forward: after the scaling, before the mask
        scores = softcap(scores, spec.attn_softcap)
    scores = scores + bias
    if spec.attn_sinks:
        attn = sink_softmax(scores, p[pre + "self_attn.sinks"])
    else:
        attn = torch.softmax(scores, dim=-1, dtype=torch.float32)
    o = (attn @ vr).transpose(1, 2).reshape(B, T, NH * HD)
    if gate is not None and spec.q_gate_applied:
        # Qwen3NextAttention.forward: `attn_output = attn_output * torch.sigmoid(gate)` before o_proj
        o = o * torch.sigmoid(gate)
    # (LFM2: Lfm2Attention's `self.out_proj`, spec.o_proj_name; Nemotron-H: mixer.o_proj, spec.attn_module)
    o = o @ p["%s%s.%s.weight" % (pre, spec.attn_module, spec.o_proj_name)].T
    if spec.o_bias:
        # GptOssAttention, LlamaAttention: o_proj bias=attention_bias; SeedOssAttention: bias=attention_out_bias
        o = o + p[pre + "self_attn.o_proj.bias"]
    return o


def l2norm(x, eps=1e-6):
    """models/qwen3_next/modular_qwen3_next.py l2norm ("to align with the l2norm implementation in the FLA library"):
    x * rsqrt(sum(x * x over the last dim) + eps), eps 1e-6."""
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + eps)


def chunk_gated_delta_rule(q, k, v, g, beta, chunk_size=64, initial_state=None, reset_chunks=False):
    """models/qwen3_next/modular_qwen3_next.py torch_chunk_gated_delta_rule (the torch path Qwen3NextGatedDeltaNet and
    Qwen3_5GatedDeltaNet take without flash-linear-attention, for a whole sequence), written out here step by step:
    q, k (B, T, heads, DK) already l2-normed, v (B, T, heads, DV), g (log decay) and beta (B, T, heads). In fp32, heads
    first; T padded with zeros to a multiple of chunk_size; q times DK^-0.5; per chunk the cumulative sum of g, the
    decay matrix exp(g_i - g_j) (lower triangle), the in-chunk solve of (I + strictly lower (beta k k^T * decay)) by the
    row recurrence, value = A (v beta), k_cumdecay = A (k beta exp(g)); then chunk by chunk with the state S (DK, DV):
    v_new = value - k_cumdecay S, out = (q exp(g)) S + (q k^T * decay, lower triangle) v_new,
    S = S exp(g_last) + (k exp(g_last - g))^T v_new. Returns (out (B, T, heads, DV), final S (B, heads, DK, DV)).
    reset_chunks: a what-if only (golden_models): S back to zero at every chunk start."""
    q, k, v, beta, g = (x.transpose(1, 2).contiguous().to(torch.float32) for x in (q, k, v, beta, g))
    B, NV, T, DK = k.shape
    DV = v.shape[-1]
    pad = (chunk_size - T % chunk_size) % chunk_size
    q, k, v = (F.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
    beta, g = F.pad(beta, (0, pad)), F.pad(g, (0, pad))
    n = (T + pad) // chunk_size
    q = q * (1 / (DK ** 0.5))
    v_beta = v * beta.unsqueeze(-1)
    k_beta = k * beta.unsqueeze(-1)
    q, k, v, k_beta, v_beta = (x.reshape(B, NV, n, chunk_size, x.shape[-1]) for x in (q, k, v, k_beta, v_beta))
    g = g.reshape(B, NV, n, chunk_size).cumsum(dim=-1)
    decay = (g.unsqueeze(-1) - g.unsqueeze(-2)).tril().exp().float().tril()
    upper_incl = torch.triu(torch.ones(chunk_size, chunk_size, dtype=torch.bool), diagonal=0)
    a = -((k_beta @ k.transpose(-1, -2)) * decay).masked_fill(upper_incl, 0)
    for i in range(1, chunk_size):
        row = a[..., i, :i].clone()
        sub = a[..., :i, :i].clone()
        a[..., i, :i] = row + (row.unsqueeze(-1) * sub).sum(-2)
    a = a + torch.eye(chunk_size, dtype=a.dtype)
    value = a @ v_beta
    k_cumdecay = a @ (k_beta * g.exp().unsqueeze(-1))
    zero = torch.zeros(B, NV, DK, DV, dtype=torch.float32)
    state = zero if initial_state is None else initial_state.to(torch.float32)
    out = torch.zeros_like(value)
    upper = torch.triu(torch.ones(chunk_size, chunk_size, dtype=torch.bool), diagonal=1)
    for c in range(n):
        if reset_chunks:
            state = zero
        q_c, k_c, v_c = q[:, :, c], k[:, :, c], value[:, :, c]
        inner = (q_c @ k_c.transpose(-1, -2) * decay[:, :, c]).masked_fill(upper, 0)
        v_new = v_c - k_cumdecay[:, :, c] @ state
        out[:, :, c] = (q_c * g[:, :, c, :, None].exp()) @ state + inner @ v_new
        state = (state * g[:, :, c, -1, None, None].exp() +
                 (k_c * (g[:, :, c, -1, None] - g[:, :, c]).exp()[..., None]).transpose(-1, -2) @ v_new)
    out = out.reshape(B, NV, -1, DV)[:, :, :T].transpose(1, 2).contiguous()
    return out, state


def recurrent_gated_delta_rule(q, k, v, g, beta, initial_state=None):
    """models/qwen3_next/modular_qwen3_next.py torch_recurrent_gated_delta_rule (the torch path of a cached one-token
    step), the same arguments as chunk_gated_delta_rule: per token t, in fp32, q times DK^-0.5,
    S = S exp(g_t); kv_mem = k_t^T S; delta = (v_t - kv_mem) beta_t; S = S + k_t delta^T; out_t = q_t^T S.
    Returns (out (B, T, heads, DV), final S)."""
    q, k, v, beta, g = (x.transpose(1, 2).contiguous().to(torch.float32) for x in (q, k, v, beta, g))
    B, NV, T, DK = k.shape
    DV = v.shape[-1]
    q = q * (1 / (DK ** 0.5))
    out = torch.zeros(B, NV, T, DV, dtype=torch.float32)
    state = torch.zeros(B, NV, DK, DV) if initial_state is None else initial_state.to(torch.float32)
    for t in range(T):
        state = state * g[:, :, t].exp().unsqueeze(-1).unsqueeze(-1)
        kv_mem = (state * k[:, :, t].unsqueeze(-1)).sum(dim=-2)
        delta = (v[:, :, t] - kv_mem) * beta[:, :, t].unsqueeze(-1)
        state = state + k[:, :, t].unsqueeze(-1) * delta.unsqueeze(-2)
        out[:, :, t] = (state * q[:, :, t].unsqueeze(-1)).sum(dim=-2)
    return out.transpose(1, 2).contiguous(), state


def linear_projections(spec, p, a, h):
    """(mixed_qkv (B, T, conv_dim) in the conv's channel order [q (NK x DK), k (NK x DK), v (NV x DV)], z (B, T, NV,
    DV), b, a (B, T, NV)) of a linear-attention layer (a = "....linear_attn.").
    Qwen3-Next (models/qwen3_next/modular_qwen3_next.py Qwen3NextGatedDeltaNet.fix_query_key_value_ordering):
    in_proj_qkvz's output viewed (B, T, NK, 2 DK + 2 (NV / NK) DV) and split per key head into q (DK), k (DK), v ((NV /
    NK) DV), z ((NV / NK) DV); in_proj_ba's viewed (B, T, NK, 2 NV / NK) and split into b, a (NV / NK each); v and z
    reshaped to (NV, DV) heads, b and a to NV (value head j = key head j // (NV / NK), slot j % (NV / NK)); forward: q,
    k, v flattened and concatenated. spec.linear_proj "qkvz_blocks" (a what-if only): the same tensors read as
    contiguous [q | k | v | z] and [b | a] blocks, Qwen3.5's order.
    Qwen3.5 (models/qwen3_5/modular_qwen3_5.py Qwen3_5GatedDeltaNet.forward): in_proj_qkv already in the conv's order,
    in_proj_z reshaped to (NV, DV), in_proj_b and in_proj_a one value per value head."""
    B, T, _ = h.shape
    NK, NV, DK, DV = spec.lin_NK, spec.lin_NV, spec.lin_DK, spec.lin_DV
    if spec.linear_proj == "split":
        mixed = h @ p[a + "in_proj_qkv.weight"].T
        z = (h @ p[a + "in_proj_z.weight"].T).reshape(B, T, NV, DV)
        return mixed, z, h @ p[a + "in_proj_b.weight"].T, h @ p[a + "in_proj_a.weight"].T
    qkvz = h @ p[a + "in_proj_qkvz.weight"].T
    ba = h @ p[a + "in_proj_ba.weight"].T
    if spec.linear_proj == "qkvz_blocks":
        q, k, v, z = qkvz.split([NK * DK, NK * DK, NV * DV, NV * DV], dim=-1)
        b, a_ = ba.split([NV, NV], dim=-1)
        return torch.cat((q, k, v), dim=-1), z.reshape(B, T, NV, DV), b, a_
    r = NV // NK
    q, k, v, z = qkvz.view(B, T, NK, 2 * DK + 2 * r * DV).split([DK, DK, r * DV, r * DV], dim=3)
    b, a_ = ba.view(B, T, NK, 2 * r).split([r, r], dim=3)
    mixed = torch.cat((q.reshape(B, T, NK * DK), k.reshape(B, T, NK * DK), v.reshape(B, T, NV * DV)), dim=-1)
    return mixed, z.reshape(B, T, NV, DV), b.reshape(B, T, NV), a_.reshape(B, T, NV)


def gated_delta_net(spec, p, pre, l, h, valid, cache, new_cache, trace):
    """A linear-attention layer, models/qwen3_next/modular_qwen3_next.py Qwen3NextGatedDeltaNet.forward (torch path;
    models/qwen3_5/modular_qwen3_5.py Qwen3_5GatedDeltaNet.forward the same with its own projections), h (B, T, H):
      apply_mask_to_padding_states: padded positions' inputs zeroed (valid (B, T));
      the projections (linear_projections); mixed_qkv through the depthwise causal conv1d (conv1d.weight (conv_dim, 1,
      K), no bias: F.conv1d(padding K - 1)[..., :T], torch_causal_conv1d_fn) and SiLU;
      q, k split into NK heads of DK, v into NV of DV; beta = sigmoid(b); g = -exp(A_log) * softplus(a + dt_bias)
      (fp32); q and k repeat_interleave'd to NV heads (value head j reads key head j // (NV / NK));
      the gated delta rule with use_qk_l2norm_in_kernel (l2norm of q and k, eps 1e-6): chunk_gated_delta_rule for a
      sequence, recurrent_gated_delta_rule for a one-token step on a cached state;
      Qwen3NextRMSNormGated over each head's DV values: x * rsqrt(mean(x^2) + rms_norm_eps) * weight (a plain weight,
      initialised to ones) * silu(z), in fp32;
      out_proj (NV x DV -> H).
    Cache (a dict, as forward's): cache[l] = (conv_state (B, conv_dim, K): the last K conv inputs, zero-padded on the
    left, as HF's `F.pad(mixed_qkv, (K - T, 0))` / torch_causal_conv1d_update keep it; the recurrent state (B, NV, DK,
    DV)). With a cached state a one-token step runs the conv over [conv_state ; x] (torch_causal_conv1d_update) and the
    recurrent rule; a longer step prepends conv_state and takes the chunk rule from the state (the transformers 5 path;
    greedy_batch only steps one token)."""
    a = pre + "linear_attn."
    B, T, _ = h.shape
    NK, NV, DK, DV, K = spec.lin_NK, spec.lin_NV, spec.lin_DK, spec.lin_DV, spec.lin_K
    if valid is not None:
        # models/bamba/modeling_bamba.py apply_mask_to_padding_states: `hidden_states * attention_mask[:, :, None]`
        # (for batches of more than one sequence of more than one token; valid positions are unchanged either way)
        h = h * valid.unsqueeze(-1).to(h.dtype)
    mixed, z, b, a_ = linear_projections(spec, p, a, h)
    x = mixed.transpose(1, 2)  # (B, conv_dim, T)
    C = x.shape[1]
    prev = cache.get(l) if cache is not None else None
    if prev is not None:
        x = torch.cat((prev[0], x), dim=-1)
    if cache is not None:
        conv_state = F.pad(x, (K - x.shape[-1], 0)) if x.shape[-1] < K else x[..., -K:]
    if spec.linear_conv:
        # torch_causal_conv1d_fn: F.conv1d(x, weight, padding=K - 1, groups=conv_dim)[..., :seq_len], then SiLU
        y = F.conv1d(x, p[a + "conv1d.weight"], padding=K - 1, groups=C)[..., :x.shape[-1]]
    else:
        y = x
    y = F.silu(y) if spec.linear_conv_act else y
    y = y[..., -T:].transpose(1, 2)  # (B, T, conv_dim)
    q, k, v = y.split([NK * DK, NK * DK, NV * DV], dim=-1)
    q, k, v = q.reshape(B, T, NK, DK), k.reshape(B, T, NK, DK), v.reshape(B, T, NV, DV)
    beta = torch.sigmoid(b) if spec.linear_beta else torch.ones_like(b)
    A = p[a + "A_log"].float().exp() if spec.linear_A_exp else p[a + "A_log"].float()
    g = -A * F.softplus(a_.float() + p[a + "dt_bias"])
    if not spec.linear_decay:
        g = torch.zeros_like(g)
    if NV // NK > 1:
        if spec.linear_head_map == "interleave":
            q, k = q.repeat_interleave(NV // NK, dim=2), k.repeat_interleave(NV // NK, dim=2)
        else:  # what-if: key head j % NK
            q, k = q.repeat(1, 1, NV // NK, 1), k.repeat(1, 1, NV // NK, 1)
    if spec.linear_l2norm:
        q, k = l2norm(q), l2norm(k)
    if (prev is not None and T == 1) or spec.linear_recurrent:
        core, state = recurrent_gated_delta_rule(q, k, v, g, beta, prev[1] if prev is not None else None)
    else:
        core, state = chunk_gated_delta_rule(q, k, v, g, beta, spec.linear_chunk,
                                             prev[1] if prev is not None else None, spec.linear_reset_chunks)
    if cache is not None:
        new_cache[l] = (conv_state, state)
    if trace is not None:
        trace.setdefault("linear_decay", {})[l] = g.exp()
        trace.setdefault("linear_beta", {})[l] = beta
    # Qwen3NextRMSNormGated.forward: in fp32, x * rsqrt(variance + eps), weight * that, times silu(gate)
    w = p[a + "norm.weight"]
    normed = core * torch.rsqrt(core.pow(2).mean(-1, keepdim=True) + spec.eps)
    normed = normed * ((1.0 + w) if spec.linear_norm_offset else w)
    if spec.linear_z_gate:
        normed = normed * F.silu(z.to(torch.float32))
    return normed.reshape(B, T, NV * DV) @ p[a + "out_proj.weight"].T


def segment_sum(a):
    """The log-decays within a chunk: a (..., l) -> (..., l, l) with [i, j] = a[j + 1] + ... + a[i] for j <= i (0 on
    the diagonal) and -inf above it, so that exp() of it is the causal decay matrix from step j to step i (the role of
    segment_sum in models/granitemoehybrid/modeling_granitemoehybrid.py; here as a difference of cumulative sums)."""
    c = torch.cumsum(a, dim=-1)
    d = c[..., :, None] - c[..., None, :]
    n = a.size(-1)
    return d.masked_fill(~torch.tril(torch.ones(n, n, dtype=torch.bool)), -torch.inf)


def ssd_chunked(x, dt, A, B, C, chunk_size, initial_state=None, reset_chunks=False):
    """The Mamba-2 state space scan of a sequence in chunks, the algorithm of models/granitemoehybrid/
    modeling_granitemoehybrid.py GraniteMoeHybridMambaLayer.torch_forward's "ssd naive implementation" (the path
    without a cached state; Bamba's BambaMixer.torch_forward alike), written here with einsums: x (b, T, heads, P), dt
    (b, T, heads) (after softplus and the clamp), A (heads,) = -exp(A_log), B and C (b, T, heads, N) (already
    repeated from the groups to the heads). In fp32, T padded with zeros to a multiple of chunk_size and split into
    chunks; with a = dt A and its cumulative sums per chunk:
    - within a chunk, y_l = sum_{s <= l} (C_l . B_s) exp(a_{s+1} + ... + a_l) dt_s x_s;
    - each chunk's own end state sum_s exp(a_{s+1} + ... + a_end) dt_s x_s B_s^T, and the states entering the chunks
      by the recurrence over chunks (decay exp(sum of a chunk's a)), from initial_state (zeros when None);
    - plus, for every token, C_l . (the state entering its chunk) exp(a_first + ... + a_l).
    Returns (y (b, T, heads, P) without the D skip, final state (b, heads, P, N)). initial_state: None (zeros, as
    torch_forward starts) or the state to continue from (transformers never passes one to this path: a cached step of
    more than one token is not used by generate); reset_chunks: a what-if only (golden_models): the states entering
    the chunks left out, every chunk starting from zero."""
    b, T, NH, P = x.shape
    x, dt, B, C = x.float(), dt.float(), B.float(), C.float()
    pad = (chunk_size - T % chunk_size) % chunk_size

    def chunks(t):  # (b, T, ...) -> (b, chunks, chunk_size, ...), zero-padded
        t = F.pad(t, (0, 0) * (t.dim() - 2) + (0, pad))
        return t.reshape(b, -1, chunk_size, *t.shape[2:])
    xd = chunks(x * dt[..., None])                       # (b, c, l, h, p)
    a = chunks(A.float() * dt).permute(0, 3, 1, 2)       # (b, h, c, l)
    Bc, Cc = chunks(B), chunks(C)                        # (b, c, l, h, n)
    acum = torch.cumsum(a, dim=-1)
    decay = torch.exp(segment_sum(a))                    # (b, h, c, l, s)
    y = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", Cc, Bc, decay, xd)
    to_end = torch.exp(acum[..., -1:] - acum)            # (b, h, c, l)
    own = torch.einsum("bclhn,bhcl,bclhp->bchpn", Bc, to_end, xd)
    start = torch.zeros_like(own[:, :1]) if initial_state is None else initial_state.float()[:, None]
    across = torch.exp(segment_sum(F.pad(acum[..., -1], (1, 0))))  # (b, h, c + 1, c + 1)
    states = torch.einsum("bhzc,bchpn->bzhpn", across, torch.cat([start, own], dim=1))
    entering, final = states[:, :-1], states[:, -1]
    if not reset_chunks:
        y = y + torch.einsum("bclhn,bchpn,bhcl->bclhp", Cc, entering, torch.exp(acum))
    return y.reshape(b, -1, NH, P)[:, :T], final


def ssd_step(x, dt, A, B, C, initial_state=None):
    """The Mamba-2 recurrence token by token, models/granitemoehybrid/modeling_granitemoehybrid.py
    GraniteMoeHybridMambaLayer.torch_forward's cached path (`use_precomputed_states`: one new token on the state the
    cache holds), the same arguments as ssd_chunked: per token t, in fp32, dA = exp(dt_t A) per head, dBx = dt_t B_t x_t
    (P x N per head), S = S dA + dBx, y_t = S C_t (torch.bmm over the heads). Returns (y (b, T, heads, P) without the D
    skip, final S (b, heads, P, N))."""
    b, T, NH, P = x.shape
    N = B.shape[-1]
    x, dt, B, C = x.float(), dt.float(), B.float(), C.float()
    state = torch.zeros(b, NH, P, N) if initial_state is None else initial_state.float()
    y = torch.zeros(b, T, NH, P)
    for t in range(T):
        dA = torch.exp(dt[:, t, :, None, None] * A[:, None, None].float())  # [bsz, num_heads, head_dim, state_size]
        dB = dt[:, t, :, None, None] * B[:, t, :, None, :]
        dBx = dB * x[:, t, :, :, None]
        state = state * dA + dBx
        y[:, t] = torch.bmm(state.reshape(b * NH, P, N), C[:, t].reshape(b * NH, N, 1)).view(b, NH, P)
    return y, state


def mamba_mixer(spec, p, pre, l, h, valid, cache, new_cache, trace):
    """A Mamba-2 layer of Granite 4.0-H, models/granitemoehybrid/modeling_granitemoehybrid.py
    GraniteMoeHybridMambaLayer.forward -> torch_forward (the path without the CUDA kernels; generated from
    modular_granitemoehybrid.py's `GraniteMoeHybridMambaLayer(BambaMixer)`), h (B, T, H) = input_layernorm's output,
    with I = mamba_expand x hidden_size, NH = mamba_n_heads of P = mamba_d_head, G = mamba_n_groups, N = mamba_d_state,
    K = mamba_d_conv, conv_dim = I + 2 G N:
      apply_mask_to_padding_states: padded positions' inputs zeroed (valid (B, T));
      in_proj (no bias: mamba_proj_bias false), split [I, conv_dim, NH] into gate (z), hidden_states_B_C (xBC), dt;
      xBC through the depthwise causal conv1d (conv1d.weight (conv_dim, 1, K), conv1d.bias with mamba_conv_bias:
      `self.conv1d(xBC.transpose(1, 2))[..., :seq_len]`, padding K - 1) and self.act (SiLU), padded positions zeroed
      again; split [I, G N, G N] into x, B, C;
      A = -exp(A_log) (fp32); dt = softplus(dt + dt_bias), clamped to time_step_limit (0, inf); x viewed (T, NH, P), B
      and C (T, G, N) repeat_interleave'd to NH heads (head h reads group h // (NH / G));
      the scan: ssd_chunked (mamba_chunk_size) for a sequence, ssd_step for a one-token step on a cached state;
      y + D x (`D_residual`, per head);
      GraniteMoeHybridRMSNormGated(y, gate): in fp32, y times silu(gate) FIRST, then y rsqrt(mean(y^2 over all I) +
      rms_norm_eps), then `self.weight *` that (a plain w);
      out_proj (no bias).
    Cache (a dict, as forward's): cache[l] = (conv_state (B, conv_dim, K): the last K conv inputs, zero-padded on the
    left: HybridMambaAttentionDynamicCache.conv_states as torch_forward fills it, `F.pad(xBC^T, (K - T, 0))`, and as its
    cached step rolls it; ssm_state (B, NH, P, N)). A one-token step on a cached state (torch_forward's
    use_precomputed_states) convolves [conv_state ; xBC] (the conv state rolled, times the weight, summed, plus the bias)
    and takes ssd_step; a longer step continues ssd_chunked from the state (greedy_batch only steps one token).
    Nemotron-H (models/nemotron_h/modular_nemotron_h.py NemotronHMamba2Mixer = models/zamba2's Zamba2MambaMixer,
    torch_forward; see nemotron_h_layers) runs the same steps with three differences, each a Spec field: its tensors
    under `mixer.` (spec.mamba_module), dt floored at time_step_min (`torch.clamp(dt, self.time_step_min)`, no upper
    bound, time_step_limit unread: spec.mamba_dt_floor, 0 for Granite), and Zamba2RMSNormGated's RMS taken per group of
    intermediate_size // n_groups values (y silu(gate) first, then each group normalised on its own, eps
    layer_norm_epsilon, times the plain w: spec.mamba_norm_group). trace["mamba_dt_floored"][l]: how many (token, head)
    values of dt the floor raised."""
    m = pre + spec.mamba_module + "."
    B_, T, _ = h.shape
    I, NH, P, G, N, K = spec.mamba_I, spec.mamba_NH, spec.mamba_P, spec.mamba_G, spec.mamba_N, spec.mamba_K
    conv_dim = I + 2 * G * N
    if valid is not None:
        # apply_mask_to_padding_states: `(hidden_states * attention_mask[:, :, None])` (for batches of more than one
        # sequence of more than one token; valid positions are unchanged either way)
        h = h * valid.unsqueeze(-1).to(h.dtype)
    # in_proj: z | xBC | dt (torch_forward's step 1)
    projected_states = h @ p[m + "in_proj.weight"].T
    gate, hidden_states_B_C, dt = projected_states.split([I, conv_dim, NH], dim=-1)
    # the causal conv over xBC (step 2)
    xc = hidden_states_B_C.transpose(1, 2)  # (B, conv_dim, T)
    prev = cache.get(l) if cache is not None else None
    if prev is not None:
        xc = torch.cat((prev[0], xc), dim=-1)
    if cache is not None:
        conv_state = F.pad(xc, (K - xc.shape[-1], 0)) if xc.shape[-1] < K else xc[..., -K:]
    bias = p[m + "conv1d.bias"] if spec.mamba_conv_bias else None
    y = F.conv1d(xc, p[m + "conv1d.weight"], bias, padding=K - 1, groups=conv_dim)[..., :xc.shape[-1]]
    y = F.silu(y) if spec.mamba_conv_act else y
    hidden_states_B_C = y[..., -T:].transpose(1, 2)
    if valid is not None:
        hidden_states_B_C = hidden_states_B_C * valid.unsqueeze(-1).to(h.dtype)
    hidden_states, Bm, Cm = hidden_states_B_C.split([I, G * N, G * N], dim=-1)
    # the scan (step 3)
    A = -torch.exp(p[m + "A_log"].float())
    dt = dt + p[m + "dt_bias"]
    dt = F.softplus(dt) if spec.mamba_dt_softplus else dt
    if trace is not None:
        trace.setdefault("mamba_dt_floored", {})[l] = int((dt < spec.mamba_dt_floor).sum())
    # Granite: time_step_limit's (0, inf); Nemotron-H: the floor time_step_min, no upper bound
    dt = torch.clamp(dt, spec.mamba_dt_floor, float("inf"))
    x = hidden_states.reshape(B_, T, NH, P).float()
    Bm, Cm = Bm.reshape(B_, T, G, N).float(), Cm.reshape(B_, T, G, N).float()
    if spec.mamba_head_group == "interleave":  # B.repeat_interleave(num_heads // n_groups, dim=2)
        Bm, Cm = Bm.repeat_interleave(NH // G, dim=2), Cm.repeat_interleave(NH // G, dim=2)
    elif spec.mamba_head_group == "tile":  # what-if: head h reads group h % G
        Bm, Cm = Bm.repeat(1, 1, NH // G, 1), Cm.repeat(1, 1, NH // G, 1)
    else:  # what-if ("first"): every head reads group 0
        Bm, Cm = Bm[:, :, :1].expand(B_, T, NH, N), Cm[:, :, :1].expand(B_, T, NH, N)
    state0 = prev[1] if prev is not None else None
    if (prev is not None and T == 1) or spec.mamba_recurrent:
        y, state = ssd_step(x, dt, A, Bm, Cm, state0)
    else:
        y, state = ssd_chunked(x, dt, A, Bm, Cm, spec.mamba_chunk, state0, spec.mamba_reset_chunks)
    # D skip connection
    y = y + p[m + "D"].float()[:, None] * x
    y = y.reshape(B_, T, I)
    if cache is not None:
        new_cache[l] = (conv_state, state)
    if trace is not None:
        trace.setdefault("mamba_dt", {})[l] = dt
        trace.setdefault("mamba_decay", {})[l] = torch.exp(dt * A)
    # GraniteMoeHybridRMSNormGated.forward: in fp32, `hidden_states * silu(gate)` first, then `hidden_states *
    # torch.rsqrt(variance + eps)` with the variance over the last dim (all I values), then `self.weight * ...`
    # (Zamba2RMSNormGated.forward, Nemotron-H's: the same with the variance of each group of group_size values)
    w, z = p[m + "norm.weight"], F.silu(gate.to(torch.float32))
    span = spec.mamba_norm_group or I
    if spec.mamba_norm_order == "gate_first":
        y = y * z
    y = y.reshape(B_, T, I // span, span)
    y = (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + spec.eps)).reshape(B_, T, I)
    if spec.mamba_norm_order != "gate_first":  # what-if: the RMSNorm first, then silu(z) (Qwen3-Next's order)
        y = y * z
    # out_proj (step 4)
    return (w * y) @ p[m + "out_proj.weight"].T


def lfm2_short_conv(spec, p, pre, l, h, valid, cache, new_cache, trace):
    """A short-convolution layer of LFM2, models/lfm2/modeling_lfm2.py Lfm2ShortConv.slow_forward (the path without the
    causal_conv1d kernels; cuda_kernels_forward computes the same), h (B, T, H) = operator_norm's output, K =
    conv_L_cache:
      apply_mask_to_padding_states: padded positions' inputs zeroed (valid (B, T); in_proj has no bias, so their B, C
      and x are 0 and the conv reads zeros there, as before the first token);
      BCx = in_proj(x) (3H rows, no bias), transposed to (B, 3H, T), `B, C, x = BCx.chunk(3, dim=-2)`: rows [0, H) B,
      [H, 2H) C, [2H, 3H) x;
      Bx = B * x;
      conv_out = self.conv(Bx)[..., :seqlen]: nn.Conv1d(H, H, kernel_size=K, groups=H, padding=K - 1, bias=conv_bias),
      depthwise and causal (output t reads Bx at t - K + 1 .. t, zeros before the first), no activation;
      y = C * conv_out; out_proj (no bias).
    Cache (a dict, as forward's): cache[l] = conv_state (B, H, K), the last K values of Bx, zero-padded on the left, as
    slow_forward fills Lfm2HybridConvCache.conv_cache[l] after a prompt (`nn.functional.pad(Bx, (self.L_cache -
    Bx.shape[-1], 0))`: a negative pad keeps the last K). A one-token step on a cached state (`cache_position[0] > 0`)
    rolls the state left by one, writes the new Bx last, and takes `torch.sum(conv_state * self.conv.weight[:, 0, :],
    dim=-1)`. (transformers writes the new value at index `cache_position.clamp(0, K - 1)`: the last index once the
    sequence holds at least K - 1 tokens, as every fixture prompt does; after a prompt of fewer than K - 1 tokens its
    slow path would write into the middle of the window and lose a value, unlike causal_conv1d_update and the
    convolution of the whole sequence, which are what this function computes.) A longer step on a cached state (never
    taken by greedy_batch) convolves [conv_state ; Bx] and keeps the last T outputs.
    What-ifs (golden_models.lfm2_what_ifs): lfm2_conv False (conv_out = Bx), lfm2_conv_act (SiLU on conv_out),
    lfm2_chunks (another assignment of the three row blocks to B, C, x)."""
    c_ = pre + "conv."
    B_, T, H = h.shape
    K = spec.lfm2_K
    if valid is not None:
        # apply_mask_to_padding_states: `(hidden_states * attention_mask[:, :, None])` (for batches of more than one
        # sequence of more than one token; valid positions are unchanged either way)
        h = h * valid.unsqueeze(-1).to(h.dtype)
    BCx = (h @ p[c_ + "in_proj.weight"].T).transpose(-1, -2)  # (B, 3H, T)
    blocks = dict(zip(spec.lfm2_chunks, BCx.chunk(3, dim=-2)))
    Bm, Cm, x = blocks["B"], blocks["C"], blocks["x"]
    Bx = Bm * x
    w = p[c_ + "conv.weight"]  # (H, 1, K)
    prev = cache.get(l) if cache is not None else None
    if prev is not None and T == 1:
        # slow_forward's cached step: `conv_state.roll(shifts=-1, dims=-1)`, the new Bx written last,
        # `torch.sum(conv_state * self.conv.weight[:, 0, :], dim=-1)` (no bias: conv_bias false)
        conv_state = prev.roll(shifts=-1, dims=-1)
        conv_state[:, :, -1] = Bx[:, :, 0]
        conv_out = torch.sum(conv_state * w[:, 0, :], dim=-1).unsqueeze(-1)
    else:
        seq = Bx if prev is None else torch.cat((prev, Bx), dim=-1)
        conv_out = F.conv1d(seq, w, None, padding=K - 1, groups=H)[..., :seq.shape[-1]][..., -T:]
        conv_state = F.pad(seq, (K - seq.shape[-1], 0))
    if cache is not None:
        new_cache[l] = conv_state
    if not spec.lfm2_conv:  # what-if: no convolution
        conv_out = Bx
    if spec.lfm2_conv_act:  # what-if: a SiLU after the convolution (as Mamba's conv has)
        conv_out = F.silu(conv_out)
    y = Cm * conv_out
    if trace is not None:
        trace.setdefault("lfm2_conv_out", {})[l] = conv_out
    return y.transpose(-1, -2) @ p[c_ + "out_proj.weight"].T


def lfm2_decoder_layer(spec, p, pre, l, x, cos_sin, bias, cache, new_cache, trace, valid):
    """models/lfm2/modeling_lfm2.py Lfm2DecoderLayer.forward: `residual = hidden_states`; the token mixer on
    `self.operator_norm(hidden_states)` (Lfm2RMSNorm: x rsqrt(mean(x^2) + norm_eps) times a plain w), self_attn
    (Lfm2Attention: q/k/v_proj, q_layernorm / k_layernorm per head, RoPE, eager attention scaled by head_dim^-0.5,
    out_proj) on "full_attention" layers, conv (lfm2_short_conv) on "conv" layers; `hidden_states = hidden_states +
    residual`; `hidden_states = hidden_states + self.feed_forward(self.ffn_norm(hidden_states))` (Lfm2MLP).
    (models/lfm2_moe/modeling_lfm2_moe.py Lfm2MoeDecoderLayer.forward: the same, feed_forward an Lfm2MoeMLP or an
    Lfm2MoeSparseMoeBlock: feed_forward, moe_block)"""
    h = norm(spec, x, p[pre + "operator_norm.weight"])
    if spec.layer_conv[l]:
        a = lfm2_short_conv(spec, p, pre, l, h, valid, cache, new_cache, trace)
    else:
        a = self_attention(spec, p, pre, l, h, cos_sin, bias, cache, new_cache, trace)
    x = a + x
    return x + feed_forward(spec, p, pre, l, norm(spec, x, p[pre + "ffn_norm.weight"]), trace)


def mla_rope_reshuffle(x):
    """models/deepseek_v3/modeling_deepseek_v3.py apply_rotary_pos_emb_interleave: each (…, d) vector
    viewed as d/2 pairs (2i, 2i + 1), transposed and flattened: [x0, x2, …, x(d-2), x1, x3, …, x(d-1)];
    rotate_half then pairs position i with i + d/2, i.e. the stored dims 2i and 2i + 1."""
    d = x.shape[-1]
    return x.unflatten(-1, (d // 2, 2)).transpose(-1, -2).flatten(-2)


def mla_attention(spec, p, pre, l, h, cos_sin, bias, cache, new_cache, trace):
    """DeepSeek-V3's multi-head latent attention, models/deepseek_v3/modeling_deepseek_v3.py
    DeepseekV3Attention.forward (eager), per sequence h (B, T, H):
      q = q_b_proj(q_a_layernorm(q_a_proj(h))) (q_lora_rank null: q_proj(h)) viewed (B, T, NH, nope + rope),
      split nope | rope;
      kv_a_proj_with_mqa(h) split c (kv_lora_rank) | k_rot (rope: one head, shared by every head);
      kv_b_proj(kv_a_layernorm(c)) viewed (B, T, NH, nope + v), split k_nope | v;
      RoPE on q_rot and k_rot only (rope_interleave: apply_rotary_pos_emb_interleave, the reshuffle then
      rotate_half; else apply_rotary_pos_emb), cos / sin times the YaRN attention factor;
      k_rot expanded to every head; Q = [q_nope ; q_rot], K = [k_nope ; k_rot] (qk_head_dim each);
      softmax(Q K^T * scaling + mask) in fp32 (eager_attention_forward), times V (v_head_dim), heads
      concatenated (B, T, NH * v_head_dim), o_proj. No biases (attention_bias is refused).
    DeepSeek-V2 (models/deepseek_v2/modular_deepseek_v2.py DeepseekV2Attention.forward) is the same but for the
    RoPE: apply_rotary_emb turns the stored adjacent pairs in place (spec.mla_rope_pairs; the rotated dims keep
    their order, so the cache holds them so; the scores are those of V3's interleave reshuffle).
    q_a_layernorm / kv_a_layernorm are DeepseekV3RMSNorms with eps 1e-6 (spec.mla_norm_eps). The cache
    holds each layer's K (B, NH, S, qk_head_dim, after RoPE) and V (B, NH, S, v_head_dim), as
    transformers' DynamicCache does (past_key_value.update(key_states, value_states))."""
    B, T, _ = h.shape
    NH, NOPE, ROPE, DV, C = spec.NH, spec.qk_nope_head_dim, spec.R, spec.v_head_dim, spec.kv_lora_rank
    a = pre + "self_attn."
    eps = spec.mla_norm_eps
    if spec.q_lora_rank is None:  # `if self.q_lora_rank is None: q_states = self.q_proj(hidden_states)`
        q = h @ p[a + "q_proj.weight"].T
    else:
        q = rms_norm(h @ p[a + "q_a_proj.weight"].T, p[a + "q_a_layernorm.weight"], eps) @ p[a + "q_b_proj.weight"].T
    q = q.view(B, T, NH, NOPE + ROPE).transpose(1, 2)  # (B, NH, T, qk_head_dim)
    q_pass, q_rot = q[..., :NOPE], q[..., NOPE:]
    compressed = h @ p[a + "kv_a_proj_with_mqa.weight"].T  # (B, T, kv_lora_rank + rope)
    c, k_rot = compressed[..., :C], compressed[..., C:]
    kv = rms_norm(c, p[a + "kv_a_layernorm.weight"], eps) @ p[a + "kv_b_proj.weight"].T
    kv = kv.view(B, T, NH, NOPE + DV).transpose(1, 2)  # (B, NH, T, nope + v)
    k_pass, v = kv[..., :NOPE], kv[..., NOPE:]
    k_rot = k_rot.view(B, 1, T, ROPE)
    cos, sin = cos_sin  # (B, 1, T, ROPE): cat(freqs, freqs) times the attention factor
    if spec.mla_rope_pairs:
        # models/deepseek_v2/modular_deepseek_v2.py apply_rotary_emb: view_as_complex(x.float().reshape(..., -1, 2))
        # (the pairs (2i, 2i + 1) as complex numbers) times freqs_cis = polar(1, pos * inv_freq) * attention_scaling
        # (DeepseekV2RotaryEmbedding.forward), view_as_real(...).flatten(3): each pair turned by angle i in place,
        # the layout kept. Written as GLM's interleaved rotate_half with cos / sin of frequency i on dims 2i, 2i + 1
        cos2 = cos[..., :ROPE // 2].repeat_interleave(2, dim=-1)
        sin2 = sin[..., :ROPE // 2].repeat_interleave(2, dim=-1)
        q_rot = q_rot * cos2 + rotate_half_interleaved(q_rot) * sin2
        k_rot = k_rot * cos2 + rotate_half_interleaved(k_rot) * sin2
    else:
        if spec.mla_rope_interleave:
            q_rot, k_rot = mla_rope_reshuffle(q_rot), mla_rope_reshuffle(k_rot)
        q_rot = q_rot * cos + rotate_half(q_rot) * sin
        k_rot = k_rot * cos + rotate_half(k_rot) * sin
    k_rot = k_rot.expand(B, NH, T, ROPE)
    q = torch.cat((q_pass, q_rot), dim=-1)
    k = torch.cat((k_pass, k_rot), dim=-1)
    if cache is not None:
        if l in cache:
            k = torch.cat((cache[l][0], k), dim=2)
            v = torch.cat((cache[l][1], v), dim=2)
        new_cache[l] = (k, v)
    scores = (q @ k.transpose(2, 3)) * spec.attn_scale
    if trace is not None:
        trace.setdefault("max_abs_score", {})[l] = float(scores.masked_fill(bias < 0, 0).abs().max())
    attn = torch.softmax(scores + bias, dim=-1, dtype=torch.float32)
    o = (attn @ v).transpose(1, 2).reshape(B, T, NH * DV)
    return o @ p[a + "o_proj.weight"].T


def sink_softmax(scores, sinks):
    """models/gpt_oss/modular_gpt_oss.py eager_attention_forward: the head's sink logit joins each row
    of masked scores (B, NH, T, S) as column S; the row max is subtracted; softmax over the S + 1
    columns in fp32; column S (the sink's share) is dropped, so a row of probabilities sums to < 1."""
    B, NH, T, _ = scores.shape
    combined = torch.cat((scores, sinks.view(1, NH, 1, 1).expand(B, NH, T, 1)), dim=-1)
    combined = combined - combined.max(dim=-1, keepdim=True).values
    return torch.softmax(combined, dim=-1, dtype=torch.float32)[..., :-1]


def gated_mlp(spec, h, gate, up, down):
    return (activation(spec, h @ gate.T) * (h @ up.T)) @ down.T


def ungated_mlp(spec, h, up, down):
    """down(act(up h)), no gate: NemotronMLP (Nemotron-H's "-" blocks, its experts and shared expert; Arcee's ArceeMLP)."""
    return activation(spec, h @ up.T) @ down.T


XIELU_PARAMETERS = ("alpha_p", "alpha_n", "beta", "eps")


def xielu(spec, p, act, x):
    """Apertus's activation, activations.py XIELUActivation (ApertusMLP.act_fn for hidden_act "xielu"), on x = up_proj's
    output, from the layer's stored tensors `<act>alpha_p` (1,) and `<act>alpha_n` (1,) (nn.Parameters, kept before the
    softplus: __init__ stores log(expm1(init))) and `<act>beta` () and `<act>eps` () (0-d buffers, register_buffer:
    saved with the weights), act = "model.layers.{i}.mlp.act_fn.". XIELUActivation._xielu_python, the path forward takes
    on the CPU and wherever the optional xielu CUDA package is absent: alpha_p = softplus(alpha_p), alpha_n = beta +
    softplus(alpha_n) (torch's softplus, threshold 20), then torch.where(x > 0, alpha_p * x * x + beta * x,
    (expm1(min(x, eps)) - x) * alpha_n + beta * x). Here in fp32 from the stored values (the module's parameters are
    built in config.dtype, and softplus runs in their dtype). Not modelled: XIELUActivation._xielu_cuda, which passes
    the beta and eps of __init__ (0.5, -1e-6: `_beta_scalar`, `_eps_scalar`), not the stored ones, to the kernel.
    spec.xielu_softplus False (a what-if only): alpha_p / alpha_n used as stored."""
    alpha_p, alpha_n, beta, eps = (p[act + n] for n in XIELU_PARAMETERS)
    if spec.xielu_softplus:
        alpha_p, alpha_n = F.softplus(alpha_p), F.softplus(alpha_n)
    alpha_n = beta + alpha_n
    return torch.where(x > 0, alpha_p * x * x + beta * x, (torch.expm1(torch.minimum(x, eps)) - x) * alpha_n + beta * x)


def router_weight_name(spec, pre):
    if spec.expert_naming == "llama4":
        return pre + "feed_forward.router.weight"  # Llama4TextMoe.router (Llama4Router, an nn.Linear without bias)
    if spec.expert_naming == "granite":
        return pre + "block_sparse_moe.router.layer.weight"  # JetMoeTopKGating.layer
    if spec.expert_naming == "gpt_oss":
        return pre + "mlp.router.weight"  # GptOssMLP.router (GptOssTopKRouter.weight, .bias)
    if spec.expert_naming == "lfm2":
        return pre + "feed_forward.gate.weight"  # Lfm2MoeSparseMoeBlock.gate (nn.Linear, no bias)
    if spec.expert_naming == "nemotron_h":
        return pre + "mixer.gate.weight"  # NemotronHMoE.gate (NemotronHTopkRouter.weight, (E, H))
    if spec.expert_naming == "hunyuan":
        return pre + "mlp.gate.wg.weight"  # HunYuanMoEV1Moe.gate (HunYuanMoEV1Gate.wg, an fp32 nn.Linear without bias)
    if spec.expert_naming == "gemma4":
        return pre + "router.proj.weight"  # Gemma4TextDecoderLayer.router (Gemma4TextRouter.proj, (E, H), no bias)
    return pre + ("block_sparse_moe.gate.weight" if spec.expert_naming == "mixtral" else "mlp.gate.weight")


def correction_bias_name(spec, pre):
    """MiniMax-M2's e_score_correction_bias (F32, (num_local_experts,)): a buffer of MiniMaxM2SparseMoeBlock, beside
    its gate (not in it, as GLM-4.5's mlp.gate.e_score_correction_bias is). ERNIE 4.5's: the parameter of
    Ernie4_5_MoeStatics, mlp.moe_statics.e_score_correction_bias (F32, (1, moe_num_experts)). LFM2-MoE's: the buffer
    expert_bias of Lfm2MoeSparseMoeBlock, feed_forward.expert_bias (F32, (num_experts,)). Nemotron-H's: the buffer of
    its router, mixer.gate.e_score_correction_bias (F32, (n_routed_experts,)), as GLM-4.5's sits in mlp.gate."""
    if spec.expert_naming == "nemotron_h":
        return pre + "mixer.gate.e_score_correction_bias"
    if spec.router == "ernie":
        return pre + "mlp.moe_statics.e_score_correction_bias"
    if spec.router == "lfm2":
        return pre + "feed_forward.expert_bias"
    return pre + ("block_sparse_moe." if spec.expert_naming == "mixtral" else "mlp.") + "e_score_correction_bias"


def router_features(spec, p, pre, x):
    """What the router's matrix multiplies, for router inputs x (N, H): x itself, but for Gemma 4's router
    (models/gemma4/modeling_gemma4.py Gemma4TextRouter.forward: `hidden_states = self.norm(hidden_states)`, a
    Gemma4RMSNorm without weight, then `hidden_states * self.scale * self.scalar_root_size`, router.scale (H,) and
    hidden_size**-0.5, before self.proj; x is the residual, gemma4_moe). router_scale_applied False: a what-if only."""
    if spec.router != "gemma4":
        return x
    z = gemma4_norm(spec, x, None)
    if spec.router_scale_applied:
        z = z * p[pre + "router.scale"]
    return z * spec.H ** -0.5


def router_logits(spec, p, pre, x, weight=None):
    """The router's logits for tokens x (N, H): x.W^T, plus gpt-oss's router bias
    (GptOssTopKRouter.forward: F.linear(hidden_states, self.weight, self.bias)). weight: another
    router matrix in place of the stored one (golden_models.search_routers)."""
    w = p[router_weight_name(spec, pre)] if weight is None else weight
    logits = router_features(spec, p, pre, x) @ w.T
    if spec.expert_naming == "gpt_oss":
        logits = logits + p[pre + "mlp.router.bias"]
    return logits


GPT_OSS_EXPERTS = ("mlp.experts.gate_up_proj", "mlp.experts.gate_up_proj_bias", "mlp.experts.down_proj",
                   "mlp.experts.down_proj_bias")


def gpt_oss_expert(spec, p, pre, e, x, clamps=None):
    """gpt-oss expert e on tokens x (N, H), models/gpt_oss/modular_gpt_oss.py GptOssExperts: the
    stacked weights are transposed (x @ W): gate_up = x @ gate_up_proj[e] (H, 2F) + gate_up_proj_bias[e],
    gate = its even columns, up = its odd columns (GptOssExperts._apply_gate: gate_up[..., ::2],
    gate_up[..., 1::2]); gate.clamp(max=limit), up.clamp(-limit, limit); glu = gate *
    sigmoid(gate * alpha); out = ((up + 1) * glu) @ down_proj[e] (F, H) + down_proj_bias[e].
    clamps: None, or a dict that receives the (N, F) masks "gate" (gate > limit), "up" (|up| > limit)
    and "up_low" (up < -limit)."""
    gu_w, gu_b, down_w, down_b = (p[pre + n] for n in GPT_OSS_EXPERTS)
    gate_up = x @ gu_w[e] + gu_b[e]
    gate, up = gate_up[..., ::2], gate_up[..., 1::2]
    limit = spec.swiglu_limit
    if clamps is not None:
        clamps.update(gate=gate > limit, up=up.abs() > limit, up_low=up < -limit)
    gate = gate.clamp(max=limit)
    up = up.clamp(min=-limit, max=limit)
    glu = gate * torch.sigmoid(gate * spec.swiglu_alpha)
    return ((up + 1) * glu) @ down_w[e] + down_b[e]


def qwen3_vl_moe_expert(spec, p, pre, e, x):
    """Qwen3-VL-MoE's expert e on tokens x (N, H), from the tensors as released. models/qwen3_vl_moe/
    modeling_qwen3_vl_moe.py (transformers 4.57) Qwen3VLMoeTextExperts.__init__: `self.gate_up_proj =
    nn.Parameter(torch.zeros(self.num_experts, self.hidden_size, 2 * self.expert_dim))`, `self.down_proj =
    nn.Parameter(torch.empty((self.num_experts, self.expert_dim, self.hidden_size)))`; forward (the per-expert loop; its
    inference branch takes the same products for every expert at once with torch.bmm): `gate_up = current_state @
    self.gate_up_proj[expert_idx]`, `gate, up = gate_up.chunk(2, dim=-1)` (the first moe_intermediate_size columns the
    gate, the last the up: halves, not interleaved), `gated_output = up * self.act_fn(gate)`, `out = gated_output @
    self.down_proj[expert_idx]`. transformers 5 holds them as (E, 2F, H) / (E, H, F) used as F.linear (Qwen3MoeExperts):
    conversion_mapping.py's "qwen3_vl_moe" entry, `WeightConverter(source_patterns="mlp.experts.gate_up_proj",
    target_patterns="mlp.experts.gate_up_proj", operations=[Transpose(1, 2, check_dims=True)])` (down_proj alike),
    transposes them on load and back on save: the files keep this layout either way. spec.fused_reading (what-ifs only,
    golden_models): "swapped" (the up half first), "interleaved" (gate the even columns, up the odd ones, gpt-oss's
    reading), "untransposed" (the stored bytes taken as transformers 5's (E, 2F, H) / (E, H, F), used as F.linear)."""
    gu, down = p[pre + "mlp.experts.gate_up_proj"], p[pre + "mlp.experts.down_proj"]
    E, H, F2 = gu.shape
    if spec.fused_reading == "untransposed":
        gate, up = (x @ gu.reshape(E, F2, H)[e].T).chunk(2, dim=-1)
        return (up * activation(spec, gate)) @ down.reshape(E, H, F2 // 2)[e].T
    gate_up = x @ gu[e]
    if spec.fused_reading == "interleaved":
        gate, up = gate_up[..., ::2], gate_up[..., 1::2]
    elif spec.fused_reading == "swapped":
        up, gate = gate_up.chunk(2, dim=-1)
    else:
        gate, up = gate_up.chunk(2, dim=-1)
    return (up * activation(spec, gate)) @ down[e]


def llama4_experts(spec, p, f, hidden_states):
    """models/llama4/modeling_llama4.py Llama4TextExperts.forward on hidden_states (E * N, H), the N tokens repeated for
    every expert (each block already times that expert's score): `hidden_states.view(self.gate_up_proj.shape[0], -1,
    self.hidden_size)`, `gate_up = torch.bmm(hidden_states, self.gate_up_proj)` with gate_up_proj (E, H, 2
    intermediate_size) (`feed_forward.experts.gate_up_proj`, used as x @ W), `gate, up = gate_up.chunk(2, dim=-1)` (the
    first intermediate_size columns the gate, the rest the up), `next_states = torch.bmm((up * self.act_fn(gate)),
    self.down_proj)` with down_proj (E, intermediate_size, H), `.view(-1, self.hidden_size)`. f: the layer's
    "...feed_forward." prefix."""
    gate_up_proj, down_proj = p[f + "experts.gate_up_proj"], p[f + "experts.down_proj"]
    hidden_states = hidden_states.view(gate_up_proj.shape[0], -1, spec.H)
    gate_up = torch.bmm(hidden_states, gate_up_proj)
    gate, up = gate_up.chunk(2, dim=-1)
    next_states = torch.bmm((up * activation(spec, gate)), down_proj)
    return next_states.view(-1, spec.H)


def llama4_router(spec, logits):
    """models/llama4/modeling_llama4.py Llama4Router.forward after its nn.Linear: `router_top_value, router_indices =
    torch.topk(router_logits, self.top_k, dim=1)` (the top-k of the LOGITS), `router_scores =
    torch.full_like(router_logits, float("-inf")).scatter_(1, router_indices, router_top_value)`, `router_scores =
    torch.nn.functional.sigmoid(router_scores.float()).to(router_scores.dtype)`: (N, E) scores, sigmoid(logit) for the
    chosen experts, 0 for the others; never renormalised. Returns (scores (N, E), chosen experts (N, k) in top-k order).
    spec.llama4_router_score "softmax" (a what-if only): the softmax of the scattered row (the top-k logits' softmax,
    renormalised over the k; 0 for the others) in place of the sigmoid."""
    router_top_value, router_indices = torch.topk(logits, spec.top_k, dim=1)
    router_scores = torch.full_like(logits, float("-inf")).scatter_(1, router_indices, router_top_value)
    if spec.llama4_router_score == "softmax":
        return torch.softmax(router_scores.float(), dim=1), router_indices
    return torch.sigmoid(router_scores.float()).to(router_scores.dtype), router_indices


def llama4_moe(spec, p, pre, l, h, trace=None):
    """models/llama4/modeling_llama4.py Llama4TextMoe.forward on h (B, T, H): `hidden_states =
    hidden_states.reshape(-1, self.hidden_dim)`; `router_scores, router_logits = self.router(hidden_states)`
    (llama4_router); `routed_in = hidden_states.repeat(router_scores.shape[1], 1)`, `routed_in = routed_in *
    router_scores.transpose(0, 1).reshape(-1, 1)` (each expert's INPUT is the hidden state times its score: 0 for the
    experts not chosen, whose outputs are then exactly 0); `routed_out = self.experts(routed_in)` (llama4_experts);
    `out = self.shared_expert(hidden_states)` (Llama4TextMLP of intermediate_size: down(silu(gate(x)) * up(x)),
    ungated); `out.add_(routed_out.reshape(router_scores.shape[1], -1, routed_out.shape[-1]).sum(dim=0))`. The decoder
    layer takes out (Llama4TextDecoderLayer.forward: `hidden_states, _ = hidden_states` on MoE layers).
    What-ifs (golden_models.llama4_what_ifs): spec.llama4_scores_on_input False (the scores multiplied onto each
    expert's output instead), spec.shared_intermediate 0 (no shared expert), llama4_router's softmax."""
    B, T, H = h.shape
    f = pre + "feed_forward."
    hidden_states = h.reshape(-1, H)
    logits = router_logits(spec, p, pre, hidden_states)  # (Llama4Router's nn.Linear: hidden_states @ weight^T)
    router_scores, chosen = llama4_router(spec, logits)
    E = router_scores.shape[1]
    routed_in = hidden_states.repeat(E, 1)
    if spec.llama4_scores_on_input:
        routed_in = routed_in * router_scores.transpose(0, 1).reshape(-1, 1)
    routed_out = llama4_experts(spec, p, f, routed_in)
    if not spec.llama4_scores_on_input:
        routed_out = routed_out * router_scores.transpose(0, 1).reshape(-1, 1)
    if spec.shared_intermediate:
        out = gated_mlp(spec, hidden_states, *expert_tensors(spec, p, pre, "shared"))
    else:
        out = torch.zeros_like(hidden_states)
    out = out + routed_out.reshape(E, -1, routed_out.shape[-1]).sum(dim=0)
    if trace is not None:
        trace.setdefault("router", {})[l] = (router_scores.view(B, T, -1), chosen.view(B, T, -1))
        trace.setdefault("router_logits", {})[l] = logits
        trace.setdefault("router_input", {})[l] = hidden_states
    return out.view(B, T, H)


def expert_forward(spec, p, pre, e, x, clamps=None):
    """Expert e's output for tokens x (N, H)."""
    if spec.expert_naming == "gpt_oss":
        return gpt_oss_expert(spec, p, pre, e, x, clamps)
    if spec.expert_naming == "fused_transposed":
        return qwen3_vl_moe_expert(spec, p, pre, e, x)
    if spec.expert_naming == "nemotron_h":
        return nemotron_h_expert(spec, p, pre, e, x)
    return gated_mlp(spec, x, *expert_tensors(spec, p, pre, e))


def nemotron_h_expert(spec, p, pre, e, x):
    """Nemotron-H's expert e on tokens x (N, H), or its shared expert (e = "shared"): no gate projection, the output
    down(act(up x)) with act mlp_hidden_act (relu2: relu(.)^2).
    Routed experts: models/nemotron_h/modular_nemotron_h.py NemotronHExperts, parameters up_proj (E, Fm, D) and
    down_proj (E, D, Fm) used as F.linear weights (expert e's rows are the matrices an nn.Linear would hold), D the
    experts' input width: hidden_size, or moe_latent_size (LatentMoE: x is then the latent, moe_block). The
    release (NVIDIA's remote code: a ModuleList of NemotronHMLP) stores them per expert,
    mixer.experts.{e}.up_proj.weight (Fm, D) and mixer.experts.{e}.down_proj.weight (D, Fm); transformers 5's
    conversion_mapping "nemotron_h" stacks them on load (WeightConverter "mixer.experts.*.up_proj.weight" ->
    "mixer.experts.up_proj" with MergeModulelist(dim=0), down_proj alike) and save_pretrained splits them back by
    default. Both spellings are read here: the stacked one when mixer.experts.up_proj is in the weights.
    Shared expert: NemotronHMoE.shared_experts, a NemotronHMLP of moe_shared_expert_intermediate_size,
    mixer.shared_experts.up_proj.weight (Fs, H) / down_proj.weight (H, Fs), run on the block's input h itself."""
    m = pre + "mixer."
    if e == "shared":
        up, down = p[m + "shared_experts.up_proj.weight"], p[m + "shared_experts.down_proj.weight"]
    elif m + "experts.up_proj" in p:
        up, down = p[m + "experts.up_proj"][e], p[m + "experts.down_proj"][e]
    else:
        up, down = p[m + "experts.%d.up_proj.weight" % e], p[m + "experts.%d.down_proj.weight" % e]
    return ungated_mlp(spec, x, up, down)


def expert_tensors(spec, p, pre, e):
    """Expert e's (gate, up, down) weights; e = "shared" for the shared expert. Granite-MoE's are
    slices of the stacked input_linear / output_linear (shared_mlp's of its fused input_linear)."""
    if spec.expert_naming == "granite":
        if e == "shared":
            gate_up, down = p[pre + "shared_mlp.input_linear.weight"], p[pre + "shared_mlp.output_linear.weight"]
            if spec.shared_mlp_width is not None:
                # (what-if only: the width W an engine takes from another key, read from the start of each stored
                # buffer without a shape check: input_linear's first 2W rows, output_linear's first H x W values as (H, W))
                W = spec.shared_mlp_width
                gate_up, down = gate_up[:2 * W], down.reshape(-1)[:down.shape[0] * W].view(down.shape[0], W)
            if spec.shared_mlp_swapped:
                # (what-if only: input_linear's up rows read first)
                half = gate_up.shape[0] // 2
                gate_up = torch.cat((gate_up[half:], gate_up[:half]))
        else:
            gate_up = p[pre + "block_sparse_moe.input_linear.weight"][e]
            down = p[pre + "block_sparse_moe.output_linear.weight"][e]
        half = gate_up.shape[0] // 2
        return gate_up[:half], gate_up[half:], down
    if spec.expert_naming == "llama4":
        # Llama 4 (see llama4_experts, which the forward pass uses): expert e's feed_forward.experts.gate_up_proj[e] (H,
        # 2F) and down_proj[e] (F, H) transposed into nn.Linear's (out, in) layout, the gate the first F columns; the
        # shared expert feed_forward.shared_expert.gate_proj / up_proj / down_proj (Llama4TextMLP)
        f = pre + "feed_forward."
        if e == "shared":
            return tuple(p[f + "shared_expert.%s_proj.weight" % n] for n in ("gate", "up", "down"))
        gate_up, down = p[f + "experts.gate_up_proj"][e], p[f + "experts.down_proj"][e]
        half = gate_up.shape[1] // 2
        return gate_up[:, :half].T, gate_up[:, half:].T, down.T
    if spec.expert_naming == "fused_transposed":
        # Qwen3-VL-MoE as released (see qwen3_vl_moe_expert, which the forward pass uses): expert e's gate_up_proj[e]
        # (H, 2F) and down_proj[e] (F, H) transposed into nn.Linear's (out, in) layout, the gate the first F columns
        # (check_reference's per-expert loop reads them so)
        gate_up, down = p[pre + "mlp.experts.gate_up_proj"][e], p[pre + "mlp.experts.down_proj"][e]
        half = gate_up.shape[1] // 2
        return gate_up[:, :half].T, gate_up[:, half:].T, down.T
    if spec.expert_naming == "hunyuan" and e != "shared" and pre + "mlp.experts.gate_up_proj" in p:
        # HunYuan-MoE as transformers 5 holds (and saves) it: HunYuanMoEV1Experts = MixtralExperts, gate_up_proj (E, 2F,
        # H) with expert e's gate rows first, down_proj (E, H, F), used as F.linear weights; the releases' per-expert
        # tensors otherwise (expert_weights)
        gate_up, down = p[pre + "mlp.experts.gate_up_proj"][e], p[pre + "mlp.experts.down_proj"][e]
        half = gate_up.shape[0] // 2
        return gate_up[:half], gate_up[half:], down
    if spec.expert_naming == "gemma4":
        # models/gemma4/modeling_gemma4.py Gemma4TextExperts: experts.gate_up_proj (E, 2Fm, H) and experts.down_proj
        # (E, H, Fm) (no .weight suffix), used as F.linear weights; forward `gate, up = nn.functional.linear(
        # current_state, self.gate_up_proj[expert_idx]).chunk(2, dim=-1)`: the gate rows first (the up rows first: a
        # what-if only, spec.expert_gate_up_swapped)
        gate_up, down = p[pre + "experts.gate_up_proj"][e], p[pre + "experts.down_proj"][e]
        half = gate_up.shape[0] // 2
        if spec.expert_gate_up_swapped:
            return gate_up[half:], gate_up[:half], down
        return gate_up[:half], gate_up[half:], down
    if spec.expert_naming == "stacked" and e == "shared":
        # (Qwen3-Next / Qwen3.5-MoE in transformers 5's layout: the shared expert stays a Qwen2MoeMLP)
        x = pre + "mlp.shared_expert."
        return p[x + "gate_proj.weight"], p[x + "up_proj.weight"], p[x + "down_proj.weight"]
    if spec.expert_naming == "stacked":
        # transformers 5's MixtralExperts (MiniMaxM2Experts): gate_up_proj (E, 2F, H), down_proj (E, H, F);
        # forward: `gate, up = F.linear(x, self.gate_up_proj[e]).chunk(2, dim=-1)`, act(gate) * up, then
        # F.linear(., self.down_proj[e])
        gate_up, down = p[pre + "mlp.experts.gate_up_proj"][e], p[pre + "mlp.experts.down_proj"][e]
        half = gate_up.shape[0] // 2
        return gate_up[:half], gate_up[half:], down
    return tuple(p[n] for n in expert_weights(spec, pre, e))


def expert_weights(spec, pre, e):
    """Names of expert e's (gate, up, down) weights; e = "shared" for Qwen2-MoE's shared expert
    (GLM-4.5's shared_experts)."""
    if spec.expert_naming in ("stacked", "fused_transposed", "llama4", "gemma4"):
        raise ValueError("stacked experts have no per-expert tensors (expert_tensors slices them)")
    if spec.expert_naming == "mixtral":  # w1 gate, w3 up, w2 down (MixtralBlockSparseTop2MLP)
        x = pre + "block_sparse_moe.experts.%d." % e
        return x + "w1.weight", x + "w3.weight", x + "w2.weight"
    if spec.expert_naming == "lfm2":
        # LFM2-MoE as released (LiquidAI/LFM2-8B-A1B; conversion_mapping.py's "lfm2_moe" entry reads
        # feed_forward.experts.*.w1 / w3 (stacked, then concatenated: gate rows, then up rows) and w2): w1 the gate,
        # w3 the up projection, w2 down, as Lfm2MoeMLP names them
        x = pre + "feed_forward.experts.%d." % e
        return x + "w1.weight", x + "w3.weight", x + "w2.weight"
    # (HunYuan-MoE: HunYuanMoEV1Moe.shared_mlp, a HunYuanMoEV1MLP; its experts mlp.experts.{e}.* as Qwen's)
    shared = ("mlp.shared_mlp." if spec.expert_naming == "hunyuan" else "mlp.shared_expert." if spec.shared_gated else
              "mlp.shared_experts.")
    x = pre + (shared if e == "shared" else "mlp.experts.%d." % e)
    return x + "gate_proj.weight", x + "up_proj.weight", x + "down_proj.weight"


def sigmoid_choice(spec, bias, logits):
    """(s, c, group_scores): the sigmoid scores, the choice values c after the group mask and the
    groups' scores (route_tokens_to_experts, below)."""
    # (router_score "softmax": a what-if only, golden_models.glm4v_moe_what_ifs)
    s = torch.softmax(logits, dim=-1) if spec.router_score == "softmax" else logits.sigmoid()
    c = s + bias
    E, G = spec.num_experts, spec.n_group
    group_scores = c.view(-1, G, E // G).topk(2, dim=-1)[0].sum(dim=-1)
    group_idx = torch.topk(group_scores, k=spec.topk_group, dim=-1, sorted=False)[1]
    group_mask = torch.zeros_like(group_scores)
    group_mask.scatter_(1, group_idx, 1)
    score_mask = group_mask.unsqueeze(-1).expand(-1, G, E // G).reshape(-1, E)
    return s, c.masked_fill(~score_mask.bool(), 0.0), group_scores


def sigmoid_bias_name(spec, pre):
    """The e_score_correction_bias the sigmoid router reads: inside the gate, mlp.gate.e_score_correction_bias (GLM-4.5,
    DeepSeek-V3, GLM-4.5V), or Nemotron-H's mixer.gate.e_score_correction_bias (correction_bias_name)."""
    if spec.expert_naming == "nemotron_h":
        return correction_bias_name(spec, pre)
    return pre + "mlp.gate.e_score_correction_bias"


def sigmoid_route(spec, p, pre, logits):
    """GLM-4.5's router, per token (models/glm4_moe/modeling_glm4_moe.py
    Glm4MoeMoE.route_tokens_to_experts): s = sigmoid(logits); c = s + e_score_correction_bias;
    groups of E / n_group experts scored by the sum of their two largest c, the topk_group best
    kept, the others' c set to 0.0 (masked_fill with 0.0, not -inf); the top_k largest c; weights
    s of those (not c), divided by their sum + 1e-20 when norm_topk_prob, times
    routed_scaling_factor. Returns (c, ids, weights) with ids in descending order of c (c is what
    the choice ranks: the trace's routing values). Nemotron-H's NemotronHMoE runs this same routing
    (it inherits DeepseekV3MoE.route_tokens_to_experts), its bias under mixer.gate (sigmoid_bias_name)."""
    s, c, _ = sigmoid_choice(spec, p[sigmoid_bias_name(spec, pre)], logits)
    experts = torch.topk(c, k=spec.top_k, dim=-1, sorted=True)[1]
    weights = s.gather(1, experts)
    if spec.norm_topk_prob:
        weights = weights / (weights.sum(dim=-1, keepdim=True) + 1e-20)
    return c, experts, weights * spec.routed_scaling_factor


def minimax_choice(spec, bias, logits):
    """(s, c) of MiniMax-M2's router: the scores s = sigmoid(logits) in fp32 (what-if: their softmax) and the values
    the choice ranks, c = s + e_score_correction_bias (minimax_route)."""
    logits = logits.float()
    s = torch.softmax(logits, dim=-1) if spec.router_score == "softmax" else torch.sigmoid(logits)
    return s, s + bias


def minimax_route(spec, p, pre, logits):
    """MiniMax-M2's router, per token (models/minimax_m2/modular_minimax_m2.py MiniMaxM2TopKRouter.forward, given
    MiniMaxM2SparseMoeBlock's e_score_correction_bias): routing_weights s = sigmoid(router_logits.float());
    scores_for_choice c = s + e_score_correction_bias; top_k_index = torch.topk(c, top_k, sorted=False); top_k_weights
    = s.gather(1, top_k_index) (the unbiased scores), divided by their sum (always; no + 1e-20, no
    routed_scaling_factor, no groups). Returns (c, ids, weights) with ids in descending order of c (sorted here: the
    order only changes the order of the experts' sum). What-ifs (golden_models): spec.router_score "softmax",
    spec.router_weight_bias (the weights gathered from c), norm_topk_prob false (not divided)."""
    s, c = minimax_choice(spec, p[correction_bias_name(spec, pre)], logits)
    experts = torch.topk(c, k=spec.top_k, dim=-1, sorted=True)[1]
    weights = (c if spec.router_weight_bias else s).gather(1, experts)
    if spec.norm_topk_prob:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return c, experts, weights


def lfm2_moe_choice(spec, bias, logits):
    """(s, c) of LFM2-MoE's router: the scores s = sigmoid(logits) (what-if: their softmax) and the values the choice
    ranks, c = s + expert_bias (s itself without use_expert_bias, or with `bias` None) (lfm2_moe_route)."""
    s = torch.softmax(logits, dim=-1) if spec.router_score == "softmax" else torch.sigmoid(logits)
    return s, (s + bias if spec.lfm2_expert_bias and bias is not None else s)


def lfm2_moe_route(spec, p, pre, logits):
    """LFM2-MoE's router, per token (models/lfm2_moe/modular_lfm2_moe.py Lfm2MoeSparseMoeBlock.route_tokens_to_experts,
    given the block's gate logits): the scores are s = sigmoid(logits); the k experts are those of the largest s +
    expert_bias when use_expert_bias (the buffer only steers the choice), else of the largest s; each chosen expert's
    weight is its s (never s + bias); with norm_topk_prob the k weights are divided by (their sum + 1e-6) -- 1e-6, not
    DeepSeek-V3's 1e-20 --; every weight is then multiplied by routed_scaling_factor (with or without the division).
    No groups, no shared expert. Returns (c, ids, weights) with ids in descending order of c (torch.topk's order; the
    experts' sum does not depend on it). What-ifs (golden_models.lfm2_moe_what_ifs): spec.router_score "softmax",
    spec.router_weight_bias (the weights gathered from c), norm_topk_prob false, routed_scaling_factor 1."""
    bias = p[correction_bias_name(spec, pre)] if spec.lfm2_expert_bias else None
    s, c = lfm2_moe_choice(spec, bias, logits)
    experts = torch.topk(c, k=spec.top_k, dim=-1, sorted=True)[1]
    weights = (c if spec.router_weight_bias else s).gather(1, experts)
    if spec.norm_topk_prob:
        weights = weights / (weights.sum(dim=-1, keepdim=True) + 1e-6)
    return c, experts, weights * spec.routed_scaling_factor


def ernie_choice(spec, bias, logits):
    """(p, c) of ERNIE 4.5's router: p = softmax(logits) in fp32 (what-if: sigmoid) and the values the choice ranks,
    c = p + e_score_correction_bias (the (1, E) parameter squeezed, Ernie4_5_MoeStatics.forward) (ernie_route)."""
    logits = logits.float()
    p = torch.sigmoid(logits) if spec.router_score == "sigmoid" else torch.softmax(logits, dim=-1, dtype=torch.float32)
    return p, p + bias.reshape(-1)


def ernie_route(spec, p, pre, logits):
    """ERNIE 4.5's router, per token (models/ernie4_5_moe/modular_ernie4_5_moe.py Ernie4_5_MoeSparseMoeBlock.forward;
    transformers 5's Ernie4_5_MoeTopKRouter.forward the same): router_logits = gate(h.float()) (an fp32 nn.Linear, no
    bias); routing_weights = F.softmax(router_logits, dim=1, dtype=float); selected_experts = torch.topk(
    moe_statics(routing_weights), moe_k) with moe_statics(x) = x + e_score_correction_bias.squeeze(); the weights are
    routing_weights gathered at those (the unbiased p), divided by torch.clamp(their sum, min=moe_norm_min) (always).
    Returns (c, ids, weights) with ids in descending order of c = p + bias (torch.topk's default sorted order).
    What-ifs (golden_models): spec.router_score "sigmoid", spec.router_weight_bias (the weights gathered from c),
    norm_topk_prob false (not divided)."""
    probs, c = ernie_choice(spec, p[correction_bias_name(spec, pre)], logits)
    experts = torch.topk(c, k=spec.top_k, dim=-1, sorted=True)[1]
    weights = (c if spec.router_weight_bias else probs).gather(1, experts)
    if spec.norm_topk_prob:
        weights = weights / torch.clamp(weights.sum(dim=-1, keepdim=True), min=spec.moe_norm_min)
    return c, experts, weights


def deepseek_v2_choice(spec, logits):
    """(p, masked p, group scores or None) of DeepSeek-V2's router (deepseek_v2_route)."""
    probs = torch.softmax(logits, dim=-1, dtype=torch.float32)
    if spec.topk_method == "greedy":
        return probs, probs, None
    E, G = spec.num_experts, spec.n_group
    grouped = probs.view(-1, G, E // G)
    if spec.v2_group_score == "max":
        group_scores = grouped.max(dim=-1).values
    else:  # (what-if: DeepSeek-V3's rule, Glm4MoeMoE / DeepseekV3TopkRouter)
        group_scores = grouped.topk(2, dim=-1)[0].sum(dim=-1)
    group_idx = torch.topk(group_scores, k=spec.topk_group, dim=-1, sorted=False)[1]
    group_mask = torch.zeros_like(group_scores)
    group_mask.scatter_(1, group_idx, 1)
    score_mask = group_mask.unsqueeze(-1).expand(-1, G, E // G).reshape(-1, E)
    return probs, probs.masked_fill(~score_mask.bool(), 0.0), group_scores


def deepseek_v2_route(spec, logits):
    """DeepSeek-V2's router, per token (models/deepseek_v2/modular_deepseek_v2.py
    DeepseekV2Moe.route_tokens_to_experts; DeepSeek's own MoEGate.forward in modeling_deepseek.py for V2 alike):
    p = softmax(logits) in fp32 (the logits F.linear(h.float(), gate.weight.float()), no bias); topk_method
    "greedy": the top_k largest p; "group_limited_greedy": groups of E / n_group experts scored by their largest
    p, the topk_group best kept, the others' p set to 0.0 (masked_fill), the top_k largest of that; weights = the
    chosen p times routed_scaling_factor, never renormalised (transformers does not read norm_topk_prob). With
    spec.norm_topk_prob (a what-if only: DeepSeek's MoEGate for V2 with norm_topk_prob true) the weights are
    divided by their sum + 1e-20 and routed_scaling_factor is not applied (its `if ... norm_topk_prob: ... else:
    topk_weight = topk_weight * self.routed_scaling_factor`). Returns (masked p, ids, weights) with ids in
    descending order of p."""
    _, masked, _ = deepseek_v2_choice(spec, logits)
    weights, experts = torch.topk(masked, k=spec.top_k, dim=-1, sorted=True)
    if spec.norm_topk_prob:
        weights = weights / (weights.sum(dim=-1, keepdim=True) + 1e-20)
    else:
        weights = weights * spec.routed_scaling_factor
    return masked, experts, weights


def sparsemixer_ratios(spec, scores):
    """The two masks' tests of models/phimoe/modeling_phimoe.py sparsemixer for router logits `scores` (N, E): (i1, i2:
    (N, 1) the first and second expert, s2: the scores with the first expert's at -inf, r1, r2: (N, E) the ratios
    compared with 2 * jitter_eps, the threshold). First: `mask_logits_threshold, max_ind = scores.max(dim=-1,
    keepdim=True)`, `factor = scores.abs().clamp(min=mask_logits_threshold)`, `mask_logits_threshold =
    ((mask_logits_threshold - scores) / factor) > (2 * jitter_eps)`; selected_experts = max_ind (eval). Second:
    `masked_scores = torch.scatter(scores, -1, selected_experts, float("-inf"))`, `mask_logits_threshold, max_ind =
    masked_scores.max(dim=-1, keepdim=True)`, `factor = scores.abs().clamp(min=mask_logits_threshold)` (the original
    scores: at the first expert the ratio is <= 0, never masked, and its -inf stays), the same comparison with
    `(mask_logits_threshold - scores) / factor`. (Taking s2 in place of the scores in the second test masks exactly the
    same entries: check_reference.py shows the weights bit-identical.)"""
    threshold = spec.sparsemixer_threshold * spec.jitter_eps
    m1, i1 = scores.max(dim=-1, keepdim=True)
    r1 = (m1 - scores) / scores.abs().clamp(min=m1)
    s2 = torch.scatter(scores, -1, i1, float("-inf"))
    m2, i2 = s2.max(dim=-1, keepdim=True)
    r2 = (m2 - scores) / scores.abs().clamp(min=m2)
    return i1, i2, s2, r1, r2, threshold


def sparsemixer_route(spec, logits):
    """Phi-3.5-MoE's router in eval mode, models/phimoe/modeling_phimoe.py sparsemixer(scores, jitter_eps,
    training=False, top_k=2) as transformers 4.46-4.57 have it: the first expert i1 = argmax(scores); its weight w1 =
    softmax(scores.masked_fill(mask1, -inf))[i1], mask1 the scores whose (max - s) / max(|s|, max) exceeds 2 *
    jitter_eps; the second expert i2 = argmax of the scores with i1's at -inf (s2); w2 = softmax(s2.masked_fill(mask2,
    -inf))[i2], mask2 the same test against s2's max (see sparsemixer_ratios). output = w1 * expert_i1(x) + w2 *
    expert_i2(x): the two weights are not renormalised (each is a softmax share over the experts its mask keeps; they
    need not add up to 1). In training it samples (Gumbel) and scales the gradients (MultiplierProcessor): not
    modelled. Returns (logits: the values the choice ranks, ids (N, 2) [i1, i2], weights (N, 2)). What-ifs
    (golden_models): spec.sparsemixer_threshold (the multiple of jitter_eps), sparsemixer_masks False (plain softmaxes
    over all the scores, and over s2), sparsemixer_second_excludes_first False (the second softmax over the original
    scores, i1's kept)."""
    i1, i2, s2, r1, r2, threshold = sparsemixer_ratios(spec, logits)
    second = s2 if spec.sparsemixer_second_excludes_first else logits
    if spec.sparsemixer_masks:
        g1, g2 = logits.masked_fill(r1 > threshold, float("-inf")), second.masked_fill(r2 > threshold, float("-inf"))
    else:
        g1, g2 = logits, second
    w1 = torch.softmax(g1, dim=-1).gather(dim=-1, index=i1)
    w2 = torch.softmax(g2, dim=-1).gather(dim=-1, index=i2)
    return logits, torch.cat((i1, i2), dim=-1), torch.cat((w1, w2), dim=-1)


def sparsemixer_kept(spec, logits):
    """(N, 2) int: how many experts each of sparsemixer's two softmaxes keeps (the first's mask over all E scores; the
    second's over s2, whose first expert is already -inf)."""
    _, _, s2, r1, r2, threshold = sparsemixer_ratios(spec, logits)
    return torch.stack(((r1 <= threshold).sum(-1), ((r2 <= threshold) & (s2 > float("-inf"))).sum(-1)), dim=-1)


def sparsemixer_mask_gap(spec, logits):
    """The smallest |ratio - threshold| over every token, expert and both of sparsemixer's masks (the first expert's
    entry of the second left out): how far each mask decision is from flipping."""
    _, i2, s2, r1, r2, threshold = sparsemixer_ratios(spec, logits)
    d2 = (r2 - threshold).abs().masked_fill(s2 == float("-inf"), float("inf"))
    return float(torch.minimum((r1 - threshold).abs(), d2).min())


def moe_block(spec, p, pre, l, h, trace=None):
    """Sparse MoE MLP, per token h: router logits h.W^T; softmax over all E in fp32; top-k of the
    probabilities (torch.topk: descending, the lower index first on ties); renormalised over the k
    when norm_topk_prob (Mixtral always); y = sum over the k slots, in top-k order, of
    w_j * down_e(act(gate_e(h)) * up_e(h)); Qwen2-MoE adds sigmoid(h.w_sg) * shared_expert(h).
    Routing weights stay fp32 (transformers casts them to the model dtype; in fp32 a no-op).
    Follows models/mixtral/modular_mixtral.py MixtralSparseMoeBlock.forward,
    models/qwen2_moe/modular_qwen2_moe.py Qwen2MoeTopKRouter / Qwen2MoeSparseMoeBlock.forward and
    models/qwen3_moe/modular_qwen3_moe.py Qwen3MoeSparseMoeBlock.forward (which add the experts'
    contributions expert by expert with index_add_: the same sum in another order).
    gpt-oss (models/gpt_oss/modular_gpt_oss.py GptOssMLP.forward): logits h.W^T + b, the top-k
    logits, weights = their softmax (GptOssTopKRouter.forward), experts gpt_oss_expert (biased,
    clamped SwiGLU), summed in top-k order (GptOssExperts.forward: index_add_ expert by expert).
    HunYuan-MoE (models/hunyuan_v1_moe/modular_hunyuan_v1_moe.py HunYuanMoEV1Moe.forward): the softmax path (the
    router mlp.gate.wg, top-k always renormalised), then `final_hidden_states + hidden_states_mlp` with the ungated
    shared_mlp. Nemotron-H with moe_latent_size (LatentMoE): the router on h, the experts on fc1_latent_proj(h), their
    weighted sum through fc2_latent_proj, the shared expert on h."""
    if spec.router == "llama4":
        return llama4_moe(spec, p, pre, l, h, trace)
    if spec.router == "gemma4":
        # (h: the residual; the router, its own input norm and scale, and the experts' input norm: gemma4_moe)
        return gemma4_moe(spec, p, pre, l, h, trace)
    B, T, H = h.shape
    x = h.reshape(B * T, H)
    logits = router_logits(spec, p, pre, x)
    if spec.router == "sigmoid":
        probs, experts, weights = sigmoid_route(spec, p, pre, logits)
    elif spec.router == "minimax":
        # MiniMaxM2SparseMoeBlock.forward: self.gate(hidden_states, self.e_score_correction_bias), then
        # self.experts(hidden_states, top_k_index, top_k_weights) (MixtralExperts: index_add_ expert by expert)
        probs, experts, weights = minimax_route(spec, p, pre, logits)
    elif spec.router == "lfm2":
        # Lfm2MoeSparseMoeBlock.forward: router_logits = self.gate(h), route_tokens_to_experts, then the experts'
        # index_add_ loop (Lfm2MoeExperts); no shared expert
        probs, experts, weights = lfm2_moe_route(spec, p, pre, logits)
    elif spec.router == "ernie":
        # Ernie4_5_MoeSparseMoeBlock.forward: the router above, the experts' index_add_ loop, then
        # `final_hidden_states + shared_output` (shared_experts(hidden_states), ungated)
        probs, experts, weights = ernie_route(spec, p, pre, logits)
    elif spec.router == "deepseek_v2":
        # (DeepseekV2Moe.forward: the experts' sum, then `hidden_states + self.shared_experts(residuals)`)
        probs, experts, weights = deepseek_v2_route(spec, logits)
    elif spec.router == "sparsemixer":
        # models/phimoe/modeling_phimoe.py PhimoeSparseMoeBlock.forward: router_logits = self.gate(hidden_states),
        # sparsemixer(router_logits, jitter_eps=self.router_jitter_noise, training=self.training), then Mixtral's
        # one_hot / index_add_ loop over the experts (each output times routing_weights[top_x, idx])
        probs, experts, weights = sparsemixer_route(spec, logits)
        if trace is not None:
            trace.setdefault("sparsemixer_kept", {})[l] = sparsemixer_kept(spec, logits)
    elif spec.router == "topk_softmax":
        # models/gpt_oss/modular_gpt_oss.py GptOssTopKRouter.forward: torch.topk of the (biased)
        # logits, then the softmax of those k values (in the logits' dtype, fp32 here); the trace's
        # routing values are the softmax over all E (the same order as the logits)
        top, experts = torch.topk(logits, spec.top_k, dim=-1)
        weights = torch.softmax(top, dim=1, dtype=top.dtype)
        probs = torch.softmax(logits, dim=-1, dtype=torch.float32)
    else:
        probs = torch.softmax(logits, dim=-1, dtype=torch.float32)
        if spec.router_score == "sigmoid":  # (a what-if only: golden_models.hunyuan_moe_what_ifs)
            probs = logits.sigmoid()
        weights, experts = torch.topk(probs, spec.top_k, dim=-1)
        if spec.norm_topk_prob:
            weights = weights / weights.sum(dim=-1, keepdim=True)
    if trace is not None:
        trace.setdefault("router", {})[l] = (probs.view(B, T, -1), experts.view(B, T, -1))
        trace.setdefault("router_logits", {})[l] = logits
        trace.setdefault("router_input", {})[l] = x
    clamps = [{} for _ in range(spec.num_experts)] if trace is not None and spec.expert_naming == "gpt_oss" else None
    latent = spec.expert_naming == "nemotron_h" and spec.moe_latent is not None
    # Nemotron-H's LatentMoE (models/nemotron_h/modular_nemotron_h.py NemotronHMoE.forward with moe_latent_size set):
    # the router above has read the block input x at full width; only the routed experts' input is then taken down
    # to the latent width by mixer.fc1_latent_proj (no bias: mlp_bias false), the experts and their weighted sum stay
    # in the latent width, and that sum goes back up to hidden_size through mixer.fc2_latent_proj before the shared
    # expert (which reads x itself, not the latent) is added
    xe = x @ p[pre + "mixer.fc1_latent_proj.weight"].T if latent else x
    outs = torch.stack([expert_forward(spec, p, pre, e, xe, clamps[e] if clamps else None)
                        for e in range(spec.num_experts)], dim=1)  # (B*T, E, H or latent): every expert, every token
    rows = torch.arange(B * T)
    if clamps:
        # how often gpt-oss's SwiGLU clamps bite, over the (token, chosen expert) pairs only
        for kind in ("gate", "up", "up_low"):
            masks = torch.stack([c[kind] for c in clamps], dim=1)  # (B*T, E, F)
            chosen = masks[rows.unsqueeze(1), experts]  # (B*T, k, F)
            trace.setdefault("clamped_" + kind, {})[l] = chosen.view(B, T, spec.top_k, -1)
    y = weights[:, 0:1] * outs[rows, experts[:, 0]]
    for j in range(1, spec.top_k):
        y = y + weights[:, j:j + 1] * outs[rows, experts[:, j]]
    if latent:
        y = y @ p[pre + "mixer.fc2_latent_proj.weight"].T  # (latent -> hidden_size)
    if spec.shared_intermediate:
        if spec.expert_naming == "nemotron_h":
            # NemotronHMoE.forward: `hidden_states + self.shared_experts(residuals)`, an ungated NemotronHMLP
            shared = nemotron_h_expert(spec, p, pre, "shared", x)
        else:
            shared = gated_mlp(spec, x, *expert_tensors(spec, p, pre, "shared"))
        if spec.shared_gated and spec.shared_gate_applied:
            # Qwen2MoeSparseMoeBlock.forward: F.sigmoid(shared_expert_gate(h)) * shared_expert(h), added last
            y = y + torch.sigmoid(x @ p[pre + "mlp.shared_expert_gate.weight"].T) * shared
        else:
            # Glm4MoeMoE.forward: hidden_states + self.shared_experts(residuals)
            y = y + shared
    return y.view(B, T, H)


def feed_forward(spec, p, pre, l, h, trace):
    if spec.layer_moe[l]:
        return moe_block(spec, p, pre, l, h, trace)
    if spec.arch in LFM2_FAMILY:
        # models/lfm2/modeling_lfm2.py Lfm2MLP.forward: `self.w2(F.silu(self.w1(x)) * self.w3(x))`, no biases, of the
        # width lfm2_ff_dim gives (LFM2-MoE's dense layers: Lfm2MoeMLP, the same forward at intermediate_size)
        f = pre + "feed_forward."
        return gated_mlp(spec, h, p[f + "w1.weight"], p[f + "w3.weight"], p[f + "w2.weight"])
    if spec.arch == GRANITE_HYBRID:
        # models/granitemoehybrid/modular_granitemoehybrid.py GraniteMoeHybridDecoderLayer.forward without experts:
        # `hidden_states = self.shared_mlp(hidden_states)`; GraniteMoeSharedMLP.forward: input_linear, `.chunk(2,
        # dim=-1)`, `self.activation(chunked_hidden_states[0]) * chunked_hidden_states[1]`, output_linear (no biases)
        return gated_mlp(spec, h, *expert_tensors(spec, p, pre, "shared"))
    if spec.arch == LLAMA4:
        # models/llama4/modeling_llama4.py Llama4TextMLP(config, intermediate_size=config.intermediate_size_mlp).forward:
        # `self.down_proj(self.activation_fn(self.gate_proj(x)) * self.up_proj(x))`, named feed_forward.*
        f = pre + "feed_forward."
        return gated_mlp(spec, h, p[f + "gate_proj.weight"], p[f + "up_proj.weight"], p[f + "down_proj.weight"])
    if not spec.mlp_gated:
        # models/arcee/modeling_arcee.py ArceeMLP.forward (NemotronMLP's): `self.down_proj(self.act_fn(self.up_proj(x)))`,
        # act_fn = ACT2FN[config.hidden_act] (relu2: relu(x)^2), no gate_proj; mlp_bias false (refused otherwise)
        # (models/apertus/modeling_apertus.py ApertusMLP.forward: the same line, act_fn XIELUActivation with the layer's
        # mlp.act_fn.* tensors: xielu; spec.act "silu" for Apertus is a what-if only)
        up, down = p[pre + "mlp.up_proj.weight"], p[pre + "mlp.down_proj.weight"]
        if spec.act == "xielu":
            a = h @ up.T
            if trace is not None:  # xIELU's input per layer (golden_models counts its branches)
                trace.setdefault("xielu_input", {})[l] = a
            return xielu(spec, p, pre + "mlp.act_fn.", a) @ down.T
        return ungated_mlp(spec, h, up, down)
    if spec.fused_gate_up:
        # models/phi3/modular_phi3.py Phi3MLP.forward (Glm4MLP alike): gate, up = gate_up_proj(h).chunk(2, dim=-1)
        gate, up = (h @ p[pre + "mlp.gate_up_proj.weight"].T).chunk(2, dim=-1)
        return (up * activation(spec, gate)) @ p[pre + "mlp.down_proj.weight"].T
    if spec.mlp_bias:
        # models/llama/modeling_llama.py LlamaMLP.forward: down_proj(act_fn(gate_proj(x)) * up_proj(x)),
        # each an nn.Linear with bias=config.mlp_bias (models/seed_oss/modular_seed_oss.py SeedOssMLP
        # alike; its dropout on the output acts only in training)
        gate = h @ p[pre + "mlp.gate_proj.weight"].T + p[pre + "mlp.gate_proj.bias"]
        up = h @ p[pre + "mlp.up_proj.weight"].T + p[pre + "mlp.up_proj.bias"]
        return (activation(spec, gate) * up) @ p[pre + "mlp.down_proj.weight"].T + p[pre + "mlp.down_proj.bias"]
    return gated_mlp(spec, h, p[pre + "mlp.gate_proj.weight"], p[pre + "mlp.up_proj.weight"],
                     p[pre + "mlp.down_proj.weight"])


def nemotron_h_block(spec, p, pre, l, x, cos_sin, bias, cache, new_cache, trace, valid):
    """One block of Nemotron-H, models/nemotron_h/modular_nemotron_h.py NemotronHBlock.forward: a single mixer behind a
    single norm, x + mixer(norm(x)) with `backbone.layers.{l}.norm.weight` (NemotronHRMSNorm = LlamaRMSNorm: x
    rsqrt(mean(x^2) + layer_norm_epsilon) times a plain w). The mixer by spec.layer_kinds[l]:
      "mamba": NemotronHMamba2Mixer (mamba_mixer, with Nemotron-H's floor and per-group gated norm);
      "attention": NemotronHAttention (JambaAttention): mixer.q_proj / k_proj / v_proj viewed as heads of head_dim,
      repeat_kv, scores times head_dim^-0.5, the causal mask, softmax in fp32, mixer.o_proj; no position embedding of any
      kind (self_attention with layer_use_rope False; True is golden_models' what-if);
      "mlp": NemotronHMLP (nemotron's NemotronMLP), `down_proj(act_fn(up_proj(x)))` with mixer.up_proj (F, H) and
      mixer.down_proj (H, F), no gate projection and no biases (mlp_bias false), act relu2 (activation);
      "moe": NemotronHMoE (moe_block): DeepSeek-V3's sigmoid router (sigmoid_route: mixer.gate.weight, the choice on s +
      mixer.gate.e_score_correction_bias within the best topk_group of n_group groups, the chosen s over their sum +
      1e-20 with norm_topk_prob, times routed_scaling_factor), each chosen expert down_e(relu(up_e h)^2) times its
      weight, plus the shared expert down_s(relu(up_s h)^2) unweighted (nemotron_h_expert); with moe_latent_size
      (LatentMoE) the chosen experts run on fc1 h (mixer.fc1_latent_proj (latent, H)) and their weighted sum is taken
      through mixer.fc2_latent_proj (H, latent) before the shared expert, which reads h, is added.
    No second norm, no second residual add: a Mamba-2 / attention block and its MLP are separate layers."""
    h = norm(spec, x, p[pre + "norm.weight"])
    kind = spec.layer_kinds[l]
    if kind == "mamba":
        y = mamba_mixer(spec, p, pre, l, h, valid, cache, new_cache, trace)
    elif kind == "attention":
        y = self_attention(spec, p, pre, l, h, cos_sin, bias, cache, new_cache, trace)
    elif kind == "moe":
        y = moe_block(spec, p, pre, l, h, trace)
    else:
        m = pre + "mixer."
        y = ungated_mlp(spec, h, p[m + "up_proj.weight"], p[m + "down_proj.weight"])
    return x + y


def gemma4_norm(spec, x, w):
    """models/gemma4/modeling_gemma4.py Gemma4RMSNorm.forward: `normed_output = self._norm(hidden_states.float())`,
    _norm = `hidden_states * torch.pow(hidden_states.pow(2).mean(-1, keepdim=True) + self.eps, -0.5)`, then `*
    self.weight.float()` when with_scale (w None: with_scale=False, no weight: v_norm, the router's norm), `.type_as`
    (fp32 here). The weight is used as stored, w (Gemma 3's is 1 + w); spec.norm_offset (a what-if only): 1 + w."""
    x = x.to(torch.float32)
    y = x * torch.pow(x.pow(2).mean(-1, keepdim=True) + spec.eps, -0.5)
    if w is None:
        return y
    return y * (1.0 + w) if spec.norm_offset else y * w


def gemma4_per_layer_inputs(spec, p, prefix, ids, x):
    """The per-layer inputs (B, T, L, P) of one pass (Gemma4TextModel.forward: `per_layer_inputs =
    self.get_per_layer_inputs(input_ids, inputs_embeds)`, then `self.project_per_layer_inputs(inputs_embeds,
    per_layer_inputs)`, once before the layers), x the scaled token embeddings (B, T, H):
    get_per_layer_inputs: `self.embed_tokens_per_layer(input_ids)` (a Gemma4TextScaledWordEmbedding of (V, L * P) whose
    scale sqrt(P) is cast to the weight dtype: spec.ple_embed_scale), reshaped to (B, T, L, P) (layer-major);
    project_per_layer_inputs: `self.per_layer_model_projection(inputs_embeds) * self.per_layer_model_projection_scale`
    (hidden_size**-0.5, a Python float), reshaped to (B, T, L, P), per_layer_projection_norm (Gemma4RMSNorm over P),
    then `(per_layer_projection + per_layer_inputs) * self.per_layer_input_scale` (2.0**-0.5)."""
    B, T = ids.shape
    L, P = spec.L, spec.ple_dim
    tokens = (p[prefix + "embed_tokens_per_layer.weight"][ids] * spec.ple_embed_scale).reshape(B, T, L, P)
    proj = (x @ p[prefix + "per_layer_model_projection.weight"].T) * spec.H ** -0.5
    proj = gemma4_norm(spec, proj.reshape(B, T, L, P), p[prefix + "per_layer_projection_norm.weight"])
    return (proj + tokens) * 2.0 ** -0.5


def gemma4_rotate(x, cos, sin):
    """apply_rotary_pos_emb (models/gemma4/modeling_gemma4.py): `(x * cos) + (rotate_half(x) * sin)` on (B, heads, T,
    HD) here (HF on (B, T, heads, HD) with unsqueeze_dim=2: the same), cos / sin of the layer type's table over the
    whole head (the proportional table's zero frequencies leave their pairs unturned). A narrower table (a what-if only:
    the proportional RoPE read as a partial rotary dim) turns the first cos.shape[-1] dims and passes the rest."""
    R = cos.shape[-1]
    return torch.cat((x[..., :R] * cos + rotate_half(x[..., :R]) * sin, x[..., R:]), dim=-1)


def gemma4_attention(spec, p, pre, l, h, cos_sin, bias, cache, new_cache, shared_kv, trace):
    """models/gemma4/modeling_gemma4.py Gemma4TextAttention.forward (eager) on h (B, T, H), layer l of
    spec.layer_types[l] with its head size spec.layer_head_dim[l] and kv heads spec.layer_kv_heads[l]:
      query_states = q_proj(h).view(..., -1, head_dim); q_norm (over each head's head_dim, weight (head_dim,));
      apply_rotary_pos_emb; transpose;
      a shared layer (l >= first kv-shared layer): `key_states, value_states = shared_kv_states[self.layer_type]`, the
      K, V its type's storing layer left (rotated, normed, over every cached position), no k/v tensors of its own and
      no cache update;
      else key_states = k_proj(h).view; value_states = v_proj(h).view, or (attention_k_eq_v on a full layer, v_proj
      None) `key_states` itself, the raw k_proj output, taken before k_norm; key_states = k_norm, RoPE, transpose;
      value_states = v_norm (Gemma4RMSNorm with_scale=False: no weight), transpose; `past_key_values.update` (here the
      cache: keys / values of every position so far), and `if self.store_full_length_kv: shared_kv_states[
      self.layer_type] = key_states, value_states` (the full-length K, V after the update);
      eager_attention_forward: repeat_kv (head h reads kv head h // (NH / NKV)), `query @ key^T * scaling` with
      `self.scaling = 1.0`, no softcap, the mask added (sliding layers: the window), softmax in fp32, times the values;
      reshape, o_proj (H, NH * head_dim).
    shared_kv: the pass's shared_kv_states (type -> (K, V)). What-ifs: spec.gemma4_attn_scale "head_dim" (head_dim^-0.5),
    spec.kv_share_rule "weights" (a shared layer computing its K, V from its own input with its storing layer's k_proj
    / v_proj / k_norm, cached as an unshared layer's), spec.v_from ("normed": V after k_norm; "rotated": after k_norm
    and RoPE), spec.v_norm_applied False (V without v_norm)."""
    B, T, _ = h.shape
    a = pre + "self_attn."
    NH, HD, NKV = spec.NH, spec.layer_head_dim[l], spec.layer_kv_heads[l]
    kind = spec.layer_types[l]
    cos, sin = cos_sin
    q = (h @ p[a + "q_proj.weight"].T).view(B, T, NH, HD)
    q = gemma4_rotate(gemma4_norm(spec, q, p[a + "q_norm.weight"]).transpose(1, 2), cos, sin)
    shared = spec.layer_kv_shared[l]
    if shared and spec.kv_share_rule == "states":
        k, v = shared_kv[kind]
    else:
        # (what-if "weights": the storing layer's projections and k_norm on this layer's input)
        src = pre if not shared else pre[:pre.rindex("layers.")] + "layers.%d." % spec.layer_kv_source[l]
        s = src + "self_attn."
        k = (h @ p[s + "k_proj.weight"].T).view(B, T, NKV, HD)
        v = k if spec.layer_k_eq_v[l] else (h @ p[s + "v_proj.weight"].T).view(B, T, NKV, HD)
        k = gemma4_norm(spec, k, p[s + "k_norm.weight"])
        if spec.layer_k_eq_v[l] and spec.v_from == "normed":
            v = k
        k = gemma4_rotate(k.transpose(1, 2), cos, sin)
        if spec.layer_k_eq_v[l] and spec.v_from == "rotated":
            v = k.transpose(1, 2)
        v = (gemma4_norm(spec, v, None) if spec.v_norm_applied else v).transpose(1, 2)
        if cache is not None:
            if l in cache:
                k = torch.cat((cache[l][0], k), dim=2)
                v = torch.cat((cache[l][1], v), dim=2)
            new_cache[l] = (k, v)
        if spec.layer_kv_store[l]:
            shared_kv[kind] = (k, v)
    rep = NH // NKV
    kr, vr = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    scale = HD ** -0.5 if spec.gemma4_attn_scale == "head_dim" else spec.attn_scale
    scores = (q @ kr.transpose(2, 3)) * scale
    if trace is not None:
        trace.setdefault("max_abs_score", {})[l] = float(scores.masked_fill(bias < 0, 0).abs().max())
    attn = torch.softmax(scores + bias, dim=-1, dtype=torch.float32)
    o = (attn @ vr).transpose(1, 2).reshape(B, T, NH * HD)
    return o @ p[a + "o_proj.weight"].T


def gemma4_moe(spec, p, pre, l, r, trace=None):
    """The MoE half of models/gemma4/modeling_gemma4.py Gemma4TextDecoderLayer.forward on the residual r (B, T, H) (the
    stream after the attention's residual add, un-normed: `hidden_states_flat = residual.reshape(-1, ...)`), up to the
    experts' weighted sum (post_feedforward_layernorm_2 is the caller's):
      Gemma4TextRouter.forward: `self.norm(hidden_states)` (Gemma4RMSNorm with_scale=False), `* self.scale *
      self.scalar_root_size` (router.scale (H,), hidden_size**-0.5), `self.proj` (router.proj.weight (E, H)): the
      logits (router_logits); softmax over all E (G4m in the model dtype, the newer modular in fp32: fp32 here);
      torch.topk of top_k_experts; `top_k_weights /= top_k_weights.sum(dim=-1, keepdim=True)`; `top_k_weights *
      self.per_expert_scale[top_k_index]` (router.per_expert_scale (E,), after the renormalisation);
      `hidden_states_2 = self.pre_feedforward_layernorm_2(hidden_states_flat)`; Gemma4TextExperts.forward: per expert
      `gate, up = F.linear(x, self.gate_up_proj[e]).chunk(2, dim=-1)` (experts.gate_up_proj (E, 2Fm, H), the gate rows
      first), `act_fn(gate) * up`, `F.linear(., self.down_proj[e])` (experts.down_proj (E, H, Fm)), times the token's
      weight, summed with index_add_ (here in top-k order: the same sum).
    What-ifs: spec.router_input "pre_ffn" (the router on pre_feedforward_layernorm(r)), router_scale_applied /
    router_expert_scale_applied False, norm_topk_prob False, expert_input "pre_ffn" (the experts on the dense MLP's
    pre_feedforward_layernorm(r)), expert_gate_up_swapped (gate_up_proj's up rows read first)."""
    B, T, H = r.shape
    x = r.reshape(B * T, H)
    xr = x if spec.router_input == "residual" else gemma4_norm(spec, x, p[pre + "pre_feedforward_layernorm.weight"])
    logits = router_logits(spec, p, pre, xr)
    probs = torch.softmax(logits, dim=-1, dtype=torch.float32)
    weights, experts = torch.topk(probs, spec.top_k, dim=-1)
    if spec.norm_topk_prob:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    if spec.router_expert_scale_applied:
        weights = weights * p[pre + "router.per_expert_scale"][experts]
    if trace is not None:
        trace.setdefault("router", {})[l] = (probs.view(B, T, -1), experts.view(B, T, -1))
        trace.setdefault("router_logits", {})[l] = logits
        trace.setdefault("router_input", {})[l] = xr
    norm_name = "pre_feedforward_layernorm_2.weight" if spec.expert_input == "pre_ffn_2" else \
        "pre_feedforward_layernorm.weight"
    xe = gemma4_norm(spec, x, p[pre + norm_name])
    outs = torch.stack([expert_forward(spec, p, pre, e, xe) for e in range(spec.num_experts)], dim=1)  # (B*T, E, H)
    rows = torch.arange(B * T)
    y = weights[:, 0:1] * outs[rows, experts[:, 0]]
    for j in range(1, spec.top_k):
        y = y + weights[:, j:j + 1] * outs[rows, experts[:, j]]
    return y.view(B, T, H)


def gemma4_decoder_layer(spec, p, pre, l, x, cos_sin, bias, cache, new_cache, trace, per_layer_input, shared_kv):
    """models/gemma4/modeling_gemma4.py Gemma4TextDecoderLayer.forward (docs/gemma4.md §2), every norm a Gemma4RMSNorm
    (gemma4_norm, plain w):
      residual = x; h = input_layernorm(x); attention (gemma4_attention); x = residual + post_attention_layernorm(a);
      residual = x; m = mlp(pre_feedforward_layernorm(x)) (Gemma4TextMLP: down(gelu_tanh(gate h) * up h), of
      spec.layer_mlp_width[l]);
      with enable_moe_block: m = post_feedforward_layernorm_1(m) + post_feedforward_layernorm_2(experts' sum) (the
      router and experts on the residual: gemma4_moe, reached through moe_block);
      x = residual + post_feedforward_layernorm(m);
      with per-layer inputs (hidden_size_per_layer_input): residual = x; g = act_fn(per_layer_input_gate(x)) *
      per_layer_input (this layer's (B, T, P) slice); x = residual + post_per_layer_input_norm(per_layer_projection(g));
      `hidden_states *= self.layer_scalar` (layer_scalar (1,), a buffer: the whole stream).
    What-ifs: spec.dense_beside_moe False (the experts alone, post_feedforward_layernorm_1 skipped), spec.ple_applied
    False, spec.layer_scalar_applied False."""
    residual = x
    h = gemma4_norm(spec, x, p[pre + "input_layernorm.weight"])
    a = gemma4_attention(spec, p, pre, l, h, cos_sin, bias, cache, new_cache, shared_kv, trace)
    x = residual + gemma4_norm(spec, a, p[pre + "post_attention_layernorm.weight"])
    residual = x
    h = gemma4_norm(spec, x, p[pre + "pre_feedforward_layernorm.weight"])
    m = None
    if spec.dense_beside_moe or not spec.layer_moe[l]:
        m = gated_mlp(spec, h, p[pre + "mlp.gate_proj.weight"], p[pre + "mlp.up_proj.weight"],
                      p[pre + "mlp.down_proj.weight"])
    if spec.layer_moe[l]:
        y = moe_block(spec, p, pre, l, residual, trace)
        y = gemma4_norm(spec, y, p[pre + "post_feedforward_layernorm_2.weight"])
        m = y if m is None else gemma4_norm(spec, m, p[pre + "post_feedforward_layernorm_1.weight"]) + y
    x = residual + gemma4_norm(spec, m, p[pre + "post_feedforward_layernorm.weight"])
    if spec.ple_dim and spec.ple_applied:
        residual = x
        g = activation(spec, x @ p[pre + "per_layer_input_gate.weight"].T) * per_layer_input
        g = g @ p[pre + "per_layer_projection.weight"].T
        x = residual + gemma4_norm(spec, g, p[pre + "post_per_layer_input_norm.weight"])
    if spec.layer_scalar_applied:
        x = x * p[pre + "layer_scalar"]
    return x


def decoder_layer(spec, p, pre, l, x, cos_sin, bias, cache, new_cache, trace, valid=None, query_scale=None):
    if spec.arch in LFM2_FAMILY:
        return lfm2_decoder_layer(spec, p, pre, l, x, cos_sin, bias, cache, new_cache, trace, valid)
    if spec.arch == NEMOTRON_H:
        return nemotron_h_block(spec, p, pre, l, x, cos_sin, bias, cache, new_cache, trace, valid)
    # (OLMo 2: no input_layernorm, the attention reads the residual x itself)
    # (PhiMoE: models/phimoe/modeling_phimoe.py PhimoeDecoderLayer.forward, Llama's order with nn.LayerNorms)
    # (Apertus: models/apertus/modular_apertus.py ApertusDecoderLayer.forward, Llama's order with attention_layernorm
    # before self_attn and feedforward_layernorm before the MLP: spec.layer_norm_names)
    attn_norm, ffn_norm = (pre + n + ".weight" for n in spec.layer_norm_names)
    h = norm(spec, x, p[attn_norm], norm_bias(spec, p, attn_norm)) if spec.input_norms else x
    if spec.layer_linear[l]:
        # models/qwen3_next/modular_qwen3_next.py Qwen3NextDecoderLayer.forward: the token mixer is self.linear_attn on
        # "linear_attention" layers (self.self_attn on "full_attention" ones), then Llama's order
        a = gated_delta_net(spec, p, pre, l, h, valid, cache, new_cache, trace)
    elif spec.layer_mamba[l]:
        # models/granitemoehybrid/modeling_granitemoehybrid.py GraniteMoeHybridDecoderLayer.forward: `if self.mamba is
        # not None: hidden_states = self.mamba(...)` on "mamba" layers, then `residual + hidden_states *
        # self.residual_multiplier` as after an attention layer
        a = mamba_mixer(spec, p, pre, l, h, valid, cache, new_cache, trace)
    elif spec.mla:
        a = mla_attention(spec, p, pre, l, h, cos_sin, bias, cache, new_cache, trace)
    else:
        a = self_attention(spec, p, pre, l, h, cos_sin, bias, cache, new_cache, trace, query_scale)
    if spec.parallel_block:
        # models/cohere/modeling_cohere.py CohereDecoderLayer.forward (Cohere2DecoderLayer alike): the
        # attention and the MLP both read the one normed h; residual + attention + MLP, in that order
        return x + a + feed_forward(spec, p, pre, l, h, trace)
    if spec.glm4_norms:
        # models/glm4/modeling_glm4.py Glm4DecoderLayer.forward
        x = x + norm(spec, a, p[pre + "post_self_attn_layernorm.weight"])
        h = norm(spec, x, p[pre + "post_attention_layernorm.weight"])
        m = feed_forward(spec, p, pre, l, h, trace)
        return x + norm(spec, m, p[pre + "post_mlp_layernorm.weight"])
    if spec.sandwich_norms:
        # models/gemma2/modeling_gemma2.py Gemma2DecoderLayer.forward (Gemma3DecoderLayer alike);
        # models/olmo2/modular_olmo2.py Olmo2DecoderLayer.forward the same without the input norms:
        # the MLP reads the residual x itself
        x = x + norm(spec, a, p[pre + "post_attention_layernorm.weight"])
        h = norm(spec, x, p[pre + "pre_feedforward_layernorm.weight"]) if spec.input_norms else x
        m = feed_forward(spec, p, pre, l, h, trace)
        if trace is not None:  # the post norms' inputs: their mean squares against the eps
            trace.setdefault("branch_mean_square", {})[l] = torch.cat((a.pow(2).mean(-1), m.pow(2).mean(-1)), -1)
        return x + norm(spec, m, p[pre + "post_feedforward_layernorm.weight"])
    x = x + a * spec.residual_multiplier
    h = norm(spec, x, p[ffn_norm], norm_bias(spec, p, ffn_norm))
    return x + feed_forward(spec, p, pre, l, h, trace) * spec.residual_multiplier


def forward(spec, p, ids, positions=None, key_valid=None, cache=None, capture=True, trace=None):
    """ids: (B, T) int64. positions: (B, T) int64, default arange(T). key_valid: (B, T) bool of
    the *new* tokens (False for padding), default all True. cache: None, or a dict that receives
    (and supplies) per-layer keys/values/positions/validity for incremental decoding. trace: None,
    or a dict that receives per layer the largest |scaled score| ("max_abs_score", before any
    softcap) and, for MoE layers, the routing ("router": (probabilities (B, T, E), chosen experts
    (B, T, k)); "router_logits": the (B*T, E) logits the choice ranks; "router_input": the (B*T, H)
    router input); gpt-oss also "clamped_gate" / "clamped_up" / "clamped_up_low": (B, T, k, F) masks
    of the chosen experts' gate values above swiglu_limit, up values outside [-limit, limit] and up
    values below -limit; with sandwich norms "branch_mean_square": per layer the mean squares over the
    hidden values of the attention and the MLP outputs (B, 2T), the post norms' inputs; Apertus "xielu_input": per
    layer up_proj's output (B, T, F), the xIELU's input.
    Returns (logits (B, T, V), hidden_states list of L+1 tensors (B, T, H) or None)."""
    B, T = ids.shape
    if positions is None:
        positions = torch.arange(T).unsqueeze(0).expand(B, T)
    if key_valid is None:
        key_valid = torch.ones(B, T, dtype=torch.bool)
    rope = {kind: rope_cos_sin(inv_freq, factor, positions) for kind, (inv_freq, factor) in spec.rope.items()}
    if spec.arch == LLAMA4:
        # (Llama4TextModel.forward: `freq_cis = self.rotary_emb(hidden_states, position_ids)`, complex, for every layer)
        rope = {kind: llama4_freqs_cis(inv_freq, factor, positions) for kind, (inv_freq, factor) in spec.rope.items()}
    if spec.mrope_section:
        rope["global"] = mrope_cos_sin(spec, positions)
    if "long" in rope:
        # LongRoPE (modeling_rope_utils.py dynamic_rope_update, longrope_frequency_update): a call
        # whose max(position_ids) + 1 exceeds original_max_position_embeddings rotates with the
        # long factors. transformers decides per call, so for a whole batch; decided per sequence
        # here, which is its answer for a batch of one. Cached keys keep the factors they were
        # made with: greedy_batch runs everything again when a sequence crosses over, as
        # Phi3ForCausalLM.prepare_inputs_for_generation drops the cache on that step.
        use_long = (positions.max(dim=1).values + 1 > spec.long_rope_after).view(B, 1, 1, 1)
        rope["global"] = tuple(torch.where(use_long, lg, sh) for sh, lg in zip(rope["global"], rope.pop("long")))

    if cache is not None and "positions" in cache:
        k_pos = torch.cat((cache["positions"], positions), dim=1)
        k_valid = torch.cat((cache["valid"], key_valid), dim=1)
    else:
        k_pos, k_valid = positions, key_valid
    # mask[b, i, j]: query i of sequence b may attend key j; one for full and one for sliding layers (and Llama 4's
    # chunked ones: Llama4TextModel.forward's causal_mask_mapping, create_causal_mask / create_chunked_causal_mask)
    masks = sorted(set(zip(spec.layer_sliding, spec.layer_chunked)))
    biases = {m: attention_bias(positions, k_pos, k_valid, spec.sliding_window if m[0] else None,
                                spec.attention_chunk_size if m[1] else None) for m in masks}

    # Ministral 3: the query factor of each new token (Ministral3Model.forward passes cache_position to every layer)
    query_scale = llama4_attn_scale(spec, positions) if spec.query_scale_beta else None
    if spec.arch == LLAMA4 and any(spec.layer_temperature):
        # Llama 4: the temperature of each new token (Llama4TextModel.forward passes cache_position to every layer;
        # Llama4TextAttention.forward applies it on its NoPE layers)
        query_scale = llama4_temperature_scales(spec, positions)

    prefix, head_name = weight_names(spec, p)
    # (Nemotron-H: NemotronHModel's `self.embeddings`, spec.embed_name)
    x = p[prefix + spec.embed_name + ".weight"][ids]
    if spec.embed_scale is not None:
        x = x * spec.embed_scale  # see embed_scale_for; hidden_states[0] is the scaled embedding
    hidden = [x] if capture else None
    new_cache = {}
    gemma4 = spec.arch in GEMMA4
    # Gemma 4: the per-layer inputs of the pass (gemma4_per_layer_inputs) and the shared K, V per layer type
    # (Gemma4TextModel.forward: `shared_kv_states = UserDict()`, filled by each type's storing layer)
    ple = gemma4_per_layer_inputs(spec, p, prefix, ids, x) if gemma4 and spec.ple_dim else None
    shared_kv = {}
    for l in range(spec.L):
        if gemma4:
            x = gemma4_decoder_layer(spec, p, prefix + "layers.%d." % l, l, x, rope[spec.layer_rope[l]],
                                     biases[spec.layer_sliding[l], spec.layer_chunked[l]], cache, new_cache, trace,
                                     None if ple is None else ple[:, :, l], shared_kv)
        else:
            x = decoder_layer(spec, p, prefix + "layers.%d." % l, l, x, rope[spec.layer_rope[l]],
                              biases[spec.layer_sliding[l], spec.layer_chunked[l]], cache, new_cache, trace, key_valid,
                              query_scale)
        if capture and l < spec.L - 1:
            hidden.append(x)
    # (PhiMoE: PhimoeModel.forward's `self.norm(hidden_states)`, an nn.LayerNorm with its bias)
    # (LFM2: Lfm2Model.forward's `self.embedding_norm(hidden_states)`, spec.final_norm_name; Nemotron-H's norm_f)
    final_norm = prefix + spec.final_norm_name + ".weight"
    x = norm(spec, x, p[final_norm], norm_bias(spec, p, final_norm))
    if capture:
        hidden.append(x)
    head = p[prefix + spec.embed_name + ".weight"] if spec.tied else p[head_name]
    logits = x @ head.T
    if spec.lm_head_bias:
        logits = logits + p["lm_head.bias"]  # PhimoeForCausalLM: nn.Linear(..., bias=config.lm_head_bias)
    if spec.logits_scaling != 1.0:
        logits = logits / spec.logits_scaling  # GraniteForCausalLM.forward
    if spec.logit_scale != 1.0:
        logits = logits * spec.logit_scale  # CohereForCausalLM.forward: lm_head(h) * self.logit_scale
    if spec.final_softcap is not None:
        logits = softcap(logits, spec.final_softcap)
    if cache is not None:
        cache.update(new_cache)
        cache["positions"], cache["valid"] = k_pos, k_valid
    return logits, hidden


@torch.no_grad()
def greedy(spec, p, prompt_ids, max_new_tokens, eos_ids=(), stop_at_eos=True):
    """Greedy decoding of one prompt by re-running the full sequence every step (no cache): the
    plainest possible reference (and transformers' generate for LongRoPE, whose cache is dropped
    when the sequence crosses over to the long factors). Returns (generated ids, the top-1 minus top-2 logit margin of
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


def left_padded(prompts):
    """Token lists -> (ids (B, T), positions (B, T) counted from each prompt's first real token,
    valid (B, T)), padded on the left."""
    T = max(len(x) for x in prompts)
    ids = torch.zeros(len(prompts), T, dtype=torch.int64)
    valid = torch.zeros(len(prompts), T, dtype=torch.bool)
    for b, x in enumerate(prompts):
        ids[b, T - len(x):] = torch.tensor(x)
        valid[b, T - len(x):] = True
    return ids, (valid.long().cumsum(1) - 1).clamp(min=0), valid


@torch.no_grad()
def greedy_batch(spec, p, prompts, max_new_tokens, eos_ids):
    """Batched greedy decoding with a KV cache and left padding (for evaluation; agrees with
    `greedy`, checked for every golden model by check_reference.py). Positions count from each
    prompt's first real token, so per-layer windows, per-layer RoPE and MoE routing behave as in
    `greedy`; when a LongRoPE sequence grows past original_max_position_embeddings tokens, the
    whole batch is run again from its tokens so far, with the long factors for that sequence (see
    `forward`). Returns the generated ids per prompt (eos included when produced)."""
    B = len(prompts)
    ids, positions, valid = left_padded(prompts)
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
        if spec.long_rope_after is not None and bool((pos == spec.long_rope_after).any()):
            ids, positions, valid = left_padded([x + y for x, y in zip(prompts, out)])
            cache = {}
            logits, _ = forward(spec, p, ids, positions, valid, cache=cache, capture=False)
        else:
            logits, _ = forward(spec, p, nxt.unsqueeze(1), pos.unsqueeze(1),
                                torch.ones(B, 1, dtype=torch.bool), cache=cache, capture=False)
        nxt = logits[:, -1].argmax(-1)
    return out
