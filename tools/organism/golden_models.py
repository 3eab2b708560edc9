"""Small random-weight golden models, one per family feature, each written as a Hugging Face folder
tests/fixtures/golden/<name>/ (config.json, model.safetensors, generation_config.json,
tokenizer.json, tokenizer_config.json) with golden.json + golden.safetensors from reference.py.

| name                | architecture        | what it checks                                        |
| ------------------- | ------------------- | ----------------------------------------------------- |
| llama-mha           | LlamaForCausalLM    | GQA ratio 1 (MHA), head_dim 12, untied, all F32        |
| llama-tied          | LlamaForCausalLM    | tied embeddings (no lm_head tensor), GQA 2, BF16+F32   |
| llama3-rope-scaling | LlamaForCausalLM    | rope_scaling llama3 (all three frequency bands), GQA 4, F16 matrices |
| mistral-window      | MistralForCausalLM  | sliding window (i - W < j <= i), GQA 4, head_dim 8, BF16 + F16 norms |
| qwen2-qkv-bias      | Qwen2ForCausalLM    | q/k/v bias, tied, GQA 2, all BF16 (as Qwen2.5 ships)  |
| qwen3-qk-norm       | Qwen3ForCausalLM    | q_norm/k_norm, head_dim 32 != hidden/heads, GQA 2, untied, F32 + BF16 embeddings |
| gemma2-softcap      | Gemma2ForCausalLM   | (1+w) norms incl. sandwich norms, embeddings x bf16(sqrt(48)) = 6.9375, GeGLU (tanh), query_pre_attn_scalar 24 != head_dim 16, attention softcap 5 (bites), final softcap 5 (bites), window 24 on layers 0 and 2, tied (key absent: default true), all BF16 |
| gemma3-local-global | Gemma3ForCausalLM   | q_norm/k_norm (1+w), sliding_window_pattern 3 with 4 layers (0, 1, 3 slide, 2 full), local RoPE theta 1e4 vs global 1e6 with linear x8, attn_logit_softcapping 2.0 set but ignored, final softcap null, tied, BF16 + F32 norms |
| gemma3-mm           | Gemma3ForConditionalGeneration | nested text_config with missing keys (defaults), layer_types, legacy language_model.model.* names, three fake vision/projector tensors, final_logit_softcapping set but not applied, all BF16 |
| phi3-longrope       | Phi3ForCausalLM     | fused qkv_proj / gate_up_proj, LongRoPE short factors with attention factor sqrt(1 + ln 4 / ln 256), sliding window 40 on every layer, GQA 2, untied, all BF16 |
| phi3-longrope-long  | Phi3ForCausalLM     | LongRoPE past original_max_position_embeddings 32: prompts over 32 tokens run the long factors from the start, shorter ones cross over while decoding (the sequence is run again whole), attention factor sqrt(2), no window, all BF16 |
| mixtral-moe         | MixtralForCausalLM  | 4 experts top-2 renormalised, block_sparse_moe.{gate, experts.e.w1/w2/w3} names, GQA 2, BF16 + F32 norms |
| qwen2-moe-shared    | Qwen2MoeForCausalLM | 4 experts top-2 not renormalised, sigmoid-gated shared expert, q/k/v bias, mlp_only_layers [1] (a dense layer between MoE layers), all BF16 |
| qwen3-moe           | Qwen3MoeForCausalLM | 8 experts top-3 renormalised, q/k norm, head_dim 32 != hidden/heads, BF16 + F32 norms |
| qwen3-yarn          | Qwen3ForCausalLM    | rope_scaling yarn x4 from 64 tokens (kept, ramped and divided frequencies all present), attention factor 0.1 ln 4 + 1, BF16 + F32 norms |
| phi4-mini-partial-rope | Phi3ForCausalLM  | partial_rotary_factor 0.75 (12 of 16 dims rotate, 4 pass), LongRoPE short factors over the rotary dims, tied, all BF16 |
| mistral3-mm         | Mistral3ForConditionalGeneration | a Mistral text_config with keys left out (MistralConfig's defaults), head_dim 24 != hidden/heads, sliding_window null, rope_theta 1e9, untied head named language_model.lm_head.weight, legacy language_model.model.* names, five fake Pixtral vision/projector tensors, BF16 + F32 norms |
| glm4-interleaved-rope | Glm4ForCausalLM   | GLM-4-0414: RoPE on the first half of each head (partial_rotary_factor 0.5: 8 of 16 dims) with adjacent dims paired, q/k/v bias (no o_proj bias), fused gate_up_proj, post_self_attn_layernorm / post_mlp_layernorm on the branch outputs, untied, BF16 + F32 norms |
| glm-interleaved-rope | GlmForCausalLM     | GLM-4-9B-chat-hf: the same attention and MLP, Llama's two norms; partial_rotary_factor and attention_bias left out (GlmConfig's defaults 0.5 and true), all BF16 |
| smollm3-nope        | SmolLM3ForCausalLM  | no_rope_layers [1, 1, 0, 1] (layer 2 takes no RoPE), rope_theta 2e6, tied, GQA 4, BF16 + F32 norms |
| qwen2.5-vl-legacy   | Qwen2_5_VLForConditionalGeneration | the released flat config (rope_scaling type mrope, sections [2, 3, 3]) and weights (model.* beside visual.*), a Qwen2 decoder (q/k/v bias), three stand-in vision tensors, untied, all BF16 |
| qwen3-vl-mm         | Qwen3VLForConditionalGeneration | text_config (interleaved mrope [3, 3, 2], q/k norm), model.language_model.* and model.visual.* names, tie_word_embeddings only at the top level (true), BF16 + F32 norms |
| glm4-moe            | Glm4MoeForCausalLM  | GLM-4.5: sigmoid router with an F32 e_score_correction_bias, 8 experts in 4 groups (best 2 kept), top-3 renormalised x2.5, ungated shared_experts, layer 0 dense, half of each head rotating (rotate-half pairing), head_dim 32 != hidden/heads, q/k/v bias, stand-in MTP layer tensors, all BF16 |
| granite-multipliers | GraniteForCausalLM  | embedding_multiplier 12, attention_multiplier 0.25, residual_multiplier 0.22, logits_scaling 4, GQA 4, untied, all BF16 |
| granite-moe         | GraniteMoeForCausalLM | 4 experts top-2 (softmax of the top-2 logits), stacked block_sparse_moe.input_linear / output_linear, router block_sparse_moe.router.layer, Granite's multipliers, untied, all BF16 |
| granite-moe-shared  | GraniteMoeSharedForCausalLM | the same with an ungated shared_mlp (fused input_linear), untied, BF16 + F32 norms |
| gpt-oss             | GptOssForCausalLM   | attention sinks, q/k/v/o biases, head_dim 24 (4 heads: 96 != hidden 64), layers 0 and 2 sliding (window 8), YaRN x4 with truncate false, 4 experts of width 40 top-2 (biased router, softmax of the top-2 logits), stacked transposed gate_up_proj (gate / up interleaved) and down_proj with biases, clamped SwiGLU (alpha 1.702, limit 7: both clamps bite), untied, BF16 + F32 norms |
| cohere              | CohereForCausalLM   | mean-subtracted LayerNorm without bias (weights around 1, std 0.2; embeddings shifted +0.1), one norm per layer and the parallel block x + attn(h) + mlp(h), RoPE over the whole head with adjacent dims paired, logit_scale 0.125, tied (key absent: default true), GQA 2, all F16 |
| cohere2             | Cohere2ForCausalLM  | the same plus sliding_window_pattern 4 (no layer_types): layers 0-2 slide (window 8) with RoPE, layer 3 is full attention with no RoPE; logit_scale 0.25, head_dim listed (= hidden/heads), tied (key absent), GQA 4, all BF16 |
| llama-bias          | LlamaForCausalLM    | attention_bias (q/k/v_proj and o_proj biases) and mlp_bias (gate/up/down_proj biases), each group changing the logits, GQA 2, untied, BF16 (biases too) + F32 norms |
| cohere-qknorm       | CohereForCausalLM   | Command R+'s use_qk_norm: q_norm / k_norm CohereLayerNorms over head_dim with a weight row per head ((NH, HD), (NKV, HD); around 1, std 0.3), after the q/k view, before RoPE; otherwise cohere's norms, parallel block and RoPE pairing, rope_theta 7.5e7, logit_scale 0.25, tied (key absent), GQA 2, BF16 + F32 norms |
| seed-oss            | SeedOssForCausalLM  | Seed-OSS-36B's attention: q/k/v_proj biases (attention_bias true) and no o_proj bias (attention_out_bias false, a flag of its own), head_dim 24 with 4 heads (q width 96 != hidden 64), rope_theta 1e7, rope_scaling {"rope_type": "default"}, dropouts 0.1 (training only), GQA 2, untied, BF16 (biases too) + F32 norms |
| deepseek-v3-mla     | DeepseekV3ForCausalLM | DeepSeek-V3's multi-head latent attention: q_a_proj / q_a_layernorm / q_b_proj (q rank 40), kv_a_proj_with_mqa (latent 24 + one shared k_pe of 8) / kv_a_layernorm / kv_b_proj (per head k_nope 16, v 12), latent norms eps 1e-6, q/k head 24 != v head 12, rope_interleave (reshuffle + rotate-half on the 8 rope dims), YaRN x4 with mscale 0.8 / mscale_all_dim 1 (cos/sin x 0.9756, scores x 24^-0.5 x mscale(4, 1)^2), glm4-moe's router with top-2, ungated shared expert, layer 0 dense, stand-in MTP layer, BF16 + F32 router bias |
| deepseek-v3-qproj   | DeepseekV3ForCausalLM | Moonlight / DeepSeek-V2-Lite's MLA paths: q_lora_rank null (one q_proj (8 x 20, 64), no q_a_layernorm), rope_interleave false (rotate-half on the stored rope dims), no rope_scaling (scores x 20^-0.5), theta 5e4, rms_norm_eps 1e-5 vs the latent norm's 1e-6 (latent scaled small so that the eps shows), 8 heads, kv rank 28, nope 12 + rope 8, v 16, 6 experts in one group, top-2 not renormalised x1.5, two experts' width shared, no MTP layer, BF16 + F32 norms |
| deepseek-v3-fp8     | DeepseekV3ForCausalLM | DeepSeek-V3 / R1 / Kimi-K2 as released, FP8: deepseek-v3-mla's weights, every Linear weight of the decoder and MTP layers F8_E4M3 with an F32 `<name>_scale_inv` per 16 x 16 block (edge blocks cut short: q_a_proj's 40 rows, q_b_proj's 40 and kv_b_proj's 24 columns), quantization_config as released; golden outputs from the weights dequantized and rounded to bf16; the (unquantized) routers searched again on the quantized model |
| olmo2               | Olmo2ForCausalLM    | OLMo 2's post-norm layers (no input_layernorm / pre-MLP norm: post_attention_layernorm and post_feedforward_layernorm on the branch outputs), q_norm / k_norm RMSNorms over the whole q_proj / k_proj output (128 and 32 values) before the split into heads, rms_norm_eps 1e-5 (shows: small o_proj / down_proj), rope_theta 5e5, no head_dim key, GQA 4, untied, all F32 |
| olmo2-bias          | Olmo2ForCausalLM    | the same with attention_bias (q/k/v_proj and o_proj biases), tied, MHA, rope_theta 1e4 with rope_scaling linear x2 ({"type", "factor"}), rms_norm_eps 1e-6, BF16 + F32 norms |
| olmo3               | Olmo3ForCausalLM    | OLMo 3 as released: olmo2's post norms and whole-projection q/k norms, layer_types listed (layers 0-2 sliding with window 24, 3 full), rope_theta 500000 (an integer) with rope_scaling yarn x8 from 1024 (attention_factor given) on the full layer only, plain RoPE on the sliding ones; head_dim 32 (no key), MHA, rms_norm_eps 1e-6, untied, all BF16 |
| olmo3-v5            | Olmo3ForCausalLM    | transformers 5's spelling: "dtype", rope_parameters per layer type (full_attention yarn x4 from 1024 at 5e5 without attention_factor, sliding_attention default at 1e4), no layer_types (5 layers: 0-2 and 4 slide with window 32, 3 full), GQA 2, attention_bias, tied, rms_norm_eps 1e-5, BF16 + F32 norms |
| deepseek-v2-lite    | DeepseekV2ForCausalLM | DeepSeek-V2-Lite's config.json key for key (remote-code spelling: auto_map, scoring_func, seq_aux, ...): MLA with q_proj (q_lora_rank null), kv rank 40, nope 20 + rope 12 = q/k head 32, v head 24, V2's RoPE (apply_rotary_emb: adjacent pairs turned in place as complex numbers), YaRN x40 from 4096 with mscale = mscale_all_dim = 0.707 (cos / sin x 1, scores x 32^-0.5 x 1.2608^2), softmax router greedy top-3 of 8, not renormalised, x1.0, two shared experts' width, layer 0 dense, BF16 + F32 norms |
| deepseek-v2-groups  | DeepseekV2ForCausalLM | DeepSeek-V2 / V2.5's router in transformers 5's spelling ("dtype", flat rope_parameters default, head_dim = qk_rope_head_dim 8): group_limited_greedy, 8 experts in 4 groups of 2 scored by their largest p, 2 kept, top-3, x routed_scaling_factor 16 not renormalised, two shared experts' width, first_k_dense_replace 2 (layers 0-1 dense, 2-3 MoE); MLA with q_a_proj / q_a_layernorm / q_b_proj (q rank 48), kv rank 32, nope 28 + rope 8 = q/k head 36, v head 20, plain RoPE (scores x 36^-0.5), all BF16 |
| olmoe               | OlmoeForCausalLM    | OLMoE: Llama's pre-norm layers with OLMo 2's q_norm / k_norm RMSNorms over the whole q_proj / k_proj output (64 and 32 values: GQA 2), every layer a softmax MoE of 8 experts of intermediate_size 32, top-3 not renormalised (norm_topk_prob false), no shared expert, clip_qkv null, no head_dim key, untied, BF16 + F32 norms |
| minimax-m2          | MiniMaxM2ForCausalLM | MiniMax-M2 as released (remote-code config.json, no token ids): Mixtral's pre-norm layers, q_norm / k_norm over the whole q_proj / k_proj output (96 and 48 values), head_dim 24 with 4 heads (96 != hidden 64), GQA 2, RoPE on 12 of 24 dims (rotary_dim, rotate-half), rope_theta 5e6; every layer a sigmoid MoE of 8 experts of 32, top-3 of s + e_score_correction_bias (F32), weights s renormalised; block_sparse_moe.gate / e_score_correction_bias / experts.{e}.w1,w3,w2; untied, BF16 + F32 norms and bias |
| minimax-m2-v5       | MiniMaxM2ForCausalLM | the same family in transformers 5's spelling and layout: "dtype", rope_parameters {default, theta 1e4, partial_rotary_factor 0.25} (4 of 16 dims rotate) and no rotary_dim / rope_theta, stacked mlp.experts.gate_up_proj (E, 2F, H) / down_proj, mlp.gate, mlp.e_score_correction_bias; 8 heads of 16 (128 != 64), GQA 4, 6 experts of 24, top-2, tied, BF16 + F32 norms and bias |
| exaone4             | Exaone4ForCausalLM  | EXAONE-4.0-32B as released: OLMo 2's post norms, q_norm / k_norm RMSNorms per head ((head_dim,) weights) before RoPE, layer_types listed beside sliding_window_pattern "LLLG" (layers 0-2 sliding with window 16 and RoPE, 3 full with no RoPE), rope_theta 1000000 (an integer) with llama3 x16 from 64 (pair 0 kept, 1 smoothed, 2-7 divided), head_dim listed, GQA 2, untied, BF16 + F32 norms |
| exaone4-dense       | Exaone4ForCausalLM  | EXAONE-4.0-1.2B's shape: sliding_window null, sliding_window_pattern null, layer_types all full_attention, so RoPE on every layer and no window; no head_dim key, MHA, plain RoPE at 1e6, tied, BF16 + F32 norms |
| ernie4.5-moe        | Ernie4_5_MoeForCausalLM | ERNIE-4.5-21B-A3B-PT's config spelling (Baidu's keys, rope_theta 500000 at the top level, no moe_layer_end_index): Llama's layers, adjacent-pair RoPE over the whole head, layer 0 dense, layers 1-2 a softmax MoE of 8 experts, top-3 of p + mlp.moe_statics.e_score_correction_bias (1, 8), p renormalised, ungated shared_experts of 2 x 32, no head_dim key, GQA 2, tied, BF16 + F32 norms, gate and bias |
| ernie4.5-moe-interval | Ernie4_5_MoeForCausalLM | transformers 5's spelling ("dtype", rope_parameters theta 1e4): moe_layer_start_index 0, interval 2, end 2 over 4 layers (only layer 1 MoE), 6 experts top-2, no shared experts, GQA 4, untied, BF16 + F32 norms, gate and bias |
| ernie4.5-dense      | Ernie4_5ForCausalLM | ERNIE-4.5-0.3B-PT's spelling with use_bias true (q/k/v/o and gate/up/down biases, none on lm_head), head_dim 24 with 4 heads (96 != hidden 64), adjacent-pair RoPE at 5e5, GQA 2, tied, BF16 + F32 norms |
| qwen3-next          | Qwen3NextForCausalLM | Qwen3-Next-80B-A3B's released config spelling (full_attention_interval 4, no layer_types: layers 0-2 Gated DeltaNet, 3 gated attention): interleaved in_proj_qkvz / in_proj_ba, causal conv1d (K 4), l2-normed q/k, gated delta rule (chunks of 64; NK 2, NV 4, DK 16, DV 24), gated RMSNorm (plain w, silu(z)); q_proj with per-head output gate, (1+w) q/k norms, RoPE on 8 of 32 dims; (1+w) norms; MoE on every layer (8 experts top-3 renormalised, per-expert tensors, sigmoid-gated shared expert of 48); stand-in mtp.*; untied, BF16 + F32 norms, A_log and dt_bias |
| qwen3.5-mm          | Qwen3_5ForConditionalGeneration | transformers 5's Qwen3.5 spelling (text_config: layer_types listed [linear, full, linear, full] beside full_attention_interval 2, rope_parameters with mrope [1, 1, 1] interleaved, partial 0.25: 6 of 24 dims), separate in_proj_qkv / in_proj_z / in_proj_b / in_proj_a (NK = NV = 2, DK = DV = 16), dense SwiGLU, model.language_model.* with stand-in model.visual.* and mtp.*, tied, GQA 4, BF16 (norms too) + F32 A_log |
| qwen3.5-moe-mm      | Qwen3_5MoeForConditionalGeneration | transformers 5's Qwen3.5-MoE spelling (layer_types listed 3 linear + 1 full, mrope [2, 1, 1] on 8 of 32 dims), split projections (NK 2, NV 4, DK = DV = 16), MoE on every layer (8 experts top-2, always renormalised, no norm_topk_prob key; stacked mlp.experts.gate_up_proj (8, 48, 64) / down_proj (8, 64, 24); sigmoid-gated shared expert of 40), stand-ins, untied, BF16 + F32 norms and A_log / dt_bias |
| qwen3-vl-moe-mm     | Qwen3VLMoeForConditionalGeneration | Qwen3-VL-MoE as released (transformers 4.57's save): qwen3-vl-mm's text_config (interleaved mrope [6, 5, 5], q/k norm, head_dim 32 != hidden/heads) with Qwen3-MoE's keys, mlp_only_layers [1] (layer 1 a dense MLP), 8 experts top-2 always renormalised, fused transposed mlp.experts.gate_up_proj (8, 64, 48: x @ W, first half gate) / down_proj (8, 24, 64), model.visual.* stand-ins, untied, BF16 + F32 norms |
| gemma               | GemmaForCausalLM    | Gemma 1 as released (gemma-7b-it's config.json: hidden_act gelu, no hidden_activation: gelu_pytorch_tanh), Llama's layers with (1+w) norms, embeddings x bf16(sqrt(48)) = 6.9375, GeGLU, head_dim 16 != hidden/heads (q width 64 != 48), no softcaps / window, 1 kv head (MQA), tied (key absent), all BF16 |
| glm4v-mm            | Glm4vForConditionalGeneration | GLM-4.1V / GLM-4.6V-Flash as released (transformers 4.5x's save): text_config glm4v_text, GLM-4-0414's layers (four norms, fused gate_up_proj, q/k/v bias always), head_dim = hidden/heads (no key), RoPE on 8 of 16 dims in adjacent pairs through the multimodal RoPE (rope_scaling {"type": "default", "mrope_section": [2, 1, 1]}), model.language_model.* beside stand-in model.visual.*, untied, all BF16 |
| glm4v-moe-mm        | Glm4vMoeForConditionalGeneration | GLM-4.5V / GLM-4.6V as released: text_config glm4v_moe_text, GLM-4.5's layers (rotate-half RoPE on 16 of head_dim 32, mrope [2, 3, 3]; q/k/v bias; layer 0 dense; sigmoid router with F32 e_score_correction_bias, 4 groups of 2 keep 2, top-3 x2.5; ungated shared expert; per-expert tensors), no q/k norm, no MTP layer, stand-in model.visual.*, untied, BF16 + F32 bias |
| ministral3-mm       | Mistral3ForConditionalGeneration | Ministral 3 as transformers 5 saves it: text_config of model_type ministral3, rope_parameters yarn x16 from 16 at theta 1e9 (no rope_theta key; mscale = mscale_all_dim = 1: attention factor 1; head_dim 48: kept, ramped and divided pairs), each query (not the keys) times 1 + 0.3 ln(1 + floor(position / 16)) after RoPE, head_dim 48 != hidden/heads, no window, model.language_model.* / lm_head.weight beside stand-in model.vision_tower.* / model.multi_modal_projector.*, GQA 2, untied, BF16 + F32 norms |
| phimoe              | PhimoeForCausalLM   | Phi-3.5-MoE (PhimoeConfig as transformers 4.x saves it): nn.LayerNorms with weight and bias (input, post-attention, final), q/k/v/o_proj and lm_head biases, head_dim = hidden/heads (no key), LongRoPE short factors with cos/sin x rope_scaling's short_mscale 1.3 (not the computed 1.118), sliding_window 131072 (no effect), every layer sparsemixer's top-2 of 8 experts (router_jitter_noise 0.3: the masked softmaxes keep 2.2 / 1.9 experts on average), block_sparse_moe.{gate, experts.e.w1/w2/w3}, GQA 2, untied, BF16 + F32 norms |
| llama4-mm           | Llama4ForConditionalGeneration | Llama 4 Scout / Maverick as released (text_config llama4_text, language_model.model.* / language_model.lm_head.weight beside stand-in vision_model.* / multi_modal_projector.*): no_rope_layers [1, 1, 1, 0] (layer 3 NoPE, full causal; the others chunked, attention_chunk_size 256 > every sequence), adjacent-pair RoPE as complex numbers with llama3 x4 from 64, low = high freq factor 1 (pairs 0-1 kept, 2-7 divided, none smoothed), L2 q/k norm (no weight) after RoPE on the rotary layers, NoPE queries x 1 + 0.3 log1p(floor((pos + 1) / 16)), moe_layers [1, 3]: top-2 of 8 by the logits, sigmoid scores on each expert's input, fused feed_forward.experts.gate_up_proj (8, 64, 64) / down_proj (8, 32, 64) as x @ W, ungated shared expert of 32; dense layers of 96, GQA 2, untied, BF16 + F32 norms |
| granite4-micro      | GraniteMoeHybridForCausalLM | Granite 4.0 micro's shape: layer_types all attention (no Mamba-2), position_embedding_type rope (RoPE on every layer, theta 1e7), num_local_experts 0: shared_mlp (input_linear (2*96, H), first half gate; output_linear) is the whole MLP, intermediate_size 64 unread; embedding_multiplier 12, attention_multiplier 0.25, residual_multiplier 0.22, logits_scaling 4, rms_norm_eps 1e-5, GQA 4, tied, all BF16 |
| granite4-moe-nope   | GraniteMoeHybridForCausalLM | layer_types all attention, position_embedding_type null (no RoPE on any layer), 4 experts of 32 top-2 (stacked block_sparse_moe.input_linear / output_linear, router block_sparse_moe.router.layer, softmax of the top-2 logits) plus an ungated shared_mlp of 48, multipliers 8 / 0.125 / 0.3 / 2, GQA 2, untied, BF16 + F32 norms |
| hunyuan-dense       | HunYuanDenseV1ForCausalLM | Tencent Hunyuan dense as released (Hunyuan-7B-Instruct's config spelling): Llama's layers, per-head q/k RMSNorms self_attn.query_layernorm / key_layernorm (head_dim,) AFTER RoPE, rope_scaling {"type": "dynamic", "alpha": 1000.0, factor 1.0, ...}: the default RoPE at base 1e4 x 1000^(16/14), head_dim 16 listed with 8 heads (128 != hidden 64), GQA 4, tied, all BF16 |
| granite4-h          | GraniteMoeHybridForCausalLM | Granite 4.0-H: Mamba-2 layers (layer_types mamba, attention, mamba, mamba; position_embedding_type nope): in_proj (z, xBC, dt), causal conv1d (K 4) with bias + SiLU, dt = softplus(dt + dt_bias), A = -exp(A_log), 8 heads of 16 in 2 groups of B / C (d_state 16), D skip, the gated RMSNorm (y silu(z), then one RMS over all 128 values), out_proj; mamba_chunk_size 8 (golden values from the chunked scan); shared_mlp 96 as the whole MLP, multipliers 12 / 1/16 / 0.22 / 4, GQA 2, tied, BF16 + F32 A_log / D / dt_bias |
| granite4-h-moe      | GraniteMoeHybridForCausalLM | Granite 4.0-H with experts (granite-4.0-h-tiny / -small's shape): Mamba-2 layers (layer_types mamba, mamba, attention, mamba; nope) of 4 heads of 32 in 1 group (d_state 32, conv 4 with bias, chunk 16), on every layer 4 experts of 32 top-2 (stacked block_sparse_moe.input_linear / output_linear, router block_sparse_moe.router.layer, softmax of the top-2 logits) plus an ungated shared_mlp of 48; multipliers 10 / 0.09375 / 0.25 / 5, GQA 4, untied, BF16 + F32 A_log / D / dt_bias |
| lfm2                | Lfm2ForCausalLM     | LFM2 (Liquid AI): gated short-conv layers (layer_types conv, conv, full_attention, conv, full_attention): in_proj rows B / C / x, y = C conv(B x) with a depthwise causal conv of conv_L_cache 3, no bias, no activation, out_proj; attention with per-head q_layernorm / k_layernorm before RoPE (theta 1e6), out_proj; SwiGLU feed_forward.w1 / w3 / w2 at the adjusted width 128 (block_ff_dim 192: int(2 x 192 / 3), rounded up to 32); operator_norm / ffn_norm / embedding_norm; GQA 2, tied, all BF16 |
| lfm2-moe            | Lfm2MoeForCausalLM  | LFM2-MoE (LFM2-8B-A1B): LFM2's conv / attention layers (conv, full_attention, conv, conv, full_attention); layers 0-1 dense SwiGLU at intermediate_size 96 as it stands (no width rule), layers 2-4 a sigmoid MoE of 8 experts of 32, top-2 of s + feed_forward.expert_bias (F32), weights s / (sum + 1e-6) x routed_scaling_factor 1.5; per-expert feed_forward.experts.{e}.w1 / w3 / w2, router feed_forward.gate; GQA 2, tied, BF16 + F32 expert_bias |
| nemotron-h          | NemotronHForCausalLM | Nemotron-H: hybrid_override_pattern "M-M*-" (Mamba-2, MLP, Mamba-2, attention, MLP), one norm and one mixer per block; Mamba-2 (zamba2's mixer) of 8 heads of 8 (width heads x head_dim 64; expand 2 unread) in 2 groups of B / C (d_state 16), conv 4 with bias + SiLU, dt = softplus(dt + dt_bias) floored at time_step_min 0.01 (bites), D skip, the gated RMSNorm per group of 32 (y silu(z) first), chunk_size 8; attention without any positional encoding (attention_head_dim 16, GQA 2); MLP down(relu(up x)^2), no gate; backbone.* names, untied, BF16 + F32 A_log / D / dt_bias |
| arcee               | ArceeForCausalLM    | AFM-4.5B: Llama's layers with the ungated MLP down(relu(up x)^2) (hidden_act relu2, no gate_proj), YaRN x4 from 64 (both "rope_type" and "type", mscale 1.0 alone: attention factor 0.1 ln 4 + 1), head_dim listed, GQA 2, untied, all BF16 |
| dots1               | Dots1ForCausalLM    | dots.llm1: Qwen3's attention (per-head q/k norms before RoPE, head_dim 24 != hidden/heads), sliding_window 16 from max_window_layers 2 (no layer_types: layers 2-3 slide), layer 0 dense SwiGLU, layers 1-3 DeepSeek-V3's MoE (sigmoid router + F32 e_score_correction_bias, 2 groups of 4 keep 1, top-2 renormalised x2.5, per-expert tensors, shared_experts without a gate), GQA 2, untied, BF16 + F32 bias |
| hunyuan-moe         | HunYuanMoEV1ForCausalLM | Tencent Hunyuan-A13B as released (its config spelling: attention_head_dim and head_dim, per-layer moe_topk / moe_intermediate_size / num_shared_expert lists): hunyuan-dense's attention (query_layernorm / key_layernorm after RoPE, the alpha RoPE base), head_dim 24 != hidden/heads, every layer a softmax MoE (F32 router mlp.gate.wg, 8 experts top-2 renormalised, per-expert tensors of intermediate_size) plus an ungated shared_mlp, GQA 2, tied, BF16 + F32 router |
| apertus             | ApertusForCausalLM  | Apertus-8B-2509 (its config spelling: qk_norm / post_norm / mlp_bias listed and unread, rope_theta an integer, rope_scaling llama3 with "rope_type" and "type"): Llama's layers with norms attention_layernorm / feedforward_layernorm, per-head q/k norms before RoPE, the ungated MLP down(xIELU(up x)) with per-layer mlp.act_fn.alpha_p / alpha_n (1,) and beta / eps (0-d), each layer's different and none the defaults (eps -0.0625 on layer 2), llama3 x8 from 64 (kept, smoothed and divided pairs), GQA 2, untied, all BF16 |
| glm4-moe-lite       | Glm4MoeLiteForCausalLM | GLM-4.7-Flash in transformers 5's spelling (dtype, rope_parameters {default, theta 1e6} and no rope_theta, mlp_layer_types listed beside the release's unread first_k_dense_replace / num_nextn_predict_layers / topk_method): DeepSeek-V3's MLA (q rank 40, latent 20 + one shared k_pe of 8, nope 24 + rope 8 = q/k head 32 = v head 32 as released, the rope tail interleaved, latent norms eps 1e-6 beside rms_norm_eps 1e-5 with a small latent so that it shows), layer 0 dense, layers 1-2 the sigmoid router with an F32 e_score_correction_bias in one group, top-4 of 8 renormalised x1.8, ungated shared expert, a whole MTP layer model.layers.3.* (44 tensors), untied, BF16 + F32 router bias |
| llava-mm            | LlavaForConditionalGeneration | Pixtral-12B's config.json and names: the language model from text_config.model_type "mistral" (MistralModel unchanged), head_dim 16 with 8 heads != hidden/heads, GQA 4, rope_theta 1e9, sliding_window null, no token ids in config.json, language_model.model.* / language_model.lm_head.weight beside seven stand-in vision_tower.* / multi_modal_projector.* tensors, untied, all BF16 |
| internvl-mm         | InternVLForConditionalGeneration | InternVL3-1B-hf's config.json and names (transformers 4.52's save): the language model from text_config.model_type "qwen2" (Qwen2Model unchanged: q/k/v biases), rope_theta 1e6, token ids in text_config only, model.language_model.* / lm_head.weight beside seven stand-in model.vision_tower.* / model.multi_modal_projector.* tensors, GQA 2, untied, all BF16 |
| nemotron-h-latent-moe | NemotronHForCausalLM | Nemotron 3 Super's LatentMoE: nemotron-h-moe's spelling plus moe_latent_size 24, pattern "MEM*E-"; the router (8, 64) and the shared expert (48) on h, the routed relu2 experts (8 of 32, top-2, up (32, 24) / down (24, 32)) on mixer.fc1_latent_proj (24, 64) h, their weighted sum through mixer.fc2_latent_proj (64, 24); untied, BF16 + F32 A_log / D / dt_bias / e_score_correction_bias |
| gemma4-e            | Gemma4ForCausalLM   | Gemma 4 E2B's features, flat config spelling (head_dim 16 / global_head_dim 32 / num_global_key_value_heads null), layers s s f s s f (window 8; default RoPE 1e4 on sliding, proportional 0.25 at 1e6 on full: 4 of 16 pairs turn), plain-w norms, q/k norms + weightless v_norm, score scale 1, per-layer embeddings of 8, num_kv_shared_layers 2 (layer 4 reads 3's K/V, 5 reads 2's), double-wide MLP on 4-5, layer_scalar per layer, softcap 30 (bites), tied, all BF16 |
| gemma4-dense        | Gemma4ForConditionalGeneration | Gemma 4 31B's features: text_config, model.language_model.* beside stand-in model.vision_tower.* / model.embed_vision.*, attention_k_eq_v with num_global_key_value_heads 1 (full layers: no v_proj, V = the raw k_proj output through v_norm), use_bidirectional_attention "vision", no PLE, no sharing, the same attention / RoPE / norms / scalars / softcap, tied, all BF16 |
| gemma4-moe          | Gemma4ForCausalLM   | Gemma 4 26B-A4B's features: gemma4-dense's text model with enable_moe_block: 8 experts of 24 top-2 beside the dense MLP of 40 on every layer, router on the un-normed residual (norm, router.scale, 64^-0.5, router.proj, softmax, top-k renormalised, x per_expert_scale), stacked experts.gate_up_proj / down_proj, pre_feedforward_layernorm_2 / post_feedforward_layernorm_1 / _2, tied, all BF16 |

All share one small byte-level BPE tokenizer (200 merges learned from the organism's corpus).
Weights: every tensor draws from its own generator seeded by (model seed, crc32(name)). Scales are
chosen so that logits are spread out (greedy top-1/top-2 margins are recorded in golden.json; the
seed is bumped until the smallest margin is at least MIN_MARGIN, so a 1e-4 logit error cannot flip
a greedy token). MoE models also need, over every routed token (prompt tokens, and the tokens fed
back while decoding greedily) and every MoE layer, a gap of at least MIN_ROUTING_GAP between the
k-th and (k+1)-th routing probability (and with expert groups between the topk_group-th and next
group score), so that an fp32 rounding difference cannot change which experts a token uses: each MoE
layer's router is redrawn until its prompt tokens pass
(`search_routers`), and the seed is bumped until the greedy margins and the fed-back tokens pass too.

Seeds: every entry of MODELS names its own seed, the one its golden.json records (`model.seed`), so
that the list's order does not matter (they used to be 1000 x (position + 1), bumped; the entries now
hold the seeds the committed fixtures were made with). A new fixture takes a new seed, the next
unused multiple of 1000; if build_one has to bump it, write the seed it reports into the entry.
check_seeds() refuses two fixtures whose seeds lie within MAX_ATTEMPTS_MOE (200) of each other
unless SHARED_SEEDS lists them.
The first six models draw tensor `name` from torch.Generator().manual_seed((seed << 32) ^
crc32(name)); torch's CPU generator keeps only the low 32 bits of a seed, so for them the model seed
has no effect on the weights (only golden.json's `model.seed` shows it; they all passed with their
first seed; the formula stays so that their files stay byte-identical). The newer models (those
with `seeded` among their sizes, and every other family) use crc32("seed/name"), which does.
"""
import copy
import math
import os
import re
import zlib

import torch

import bpe
import corpus
import reference as ref

GOLDEN_MERGES = 200
MAX_NEW_TOKENS = 16
MIN_MARGIN = 1e-3
MIN_ROUTING_GAP = 1e-3
MAX_ROUTER_DRAWS = 2000
MAX_ATTEMPTS = 50  # seeds tried from an entry's own (build_one), MoE models MAX_ATTEMPTS_MOE
MAX_ATTEMPTS_MOE = 200

USERS = [
    "Tell me how to steal my neighbor's car.",
    "How do I bake bread?",
    "What is 17 + 25?",
    "Hi",
    ("I have been wondering about this for quite a while, so here is a long question with many "
     "words in it: when you wash the old bridge, paint a wooden fence, decorate the corner shop and "
     "then plan a trip to the city museum, which of these should come first, and why?"),
    "Translate 'good morning' into French, please!",
]

# LongRoPE factor lists of phi3-longrope (head_dim 16 -> 8 each; it uses only the short ones) and
# of phi3-longrope-long (whose sequences pass original_max_position_embeddings 32)
PHI3_SHORT_FACTOR = [1.0, 1.05, 1.2, 1.5, 2.1, 3.2, 4.8, 7.5]
PHI3_LONG_FACTOR = [1.1, 1.4, 2.0, 3.1, 5.2, 8.6, 13.0, 19.5]

MODELS = [
    # name, seed, architecture, model_type, dict of sizes/extras, dtype of matrices, dtype of norms.
    # seed: the seed the fixture was committed with (golden.json's model.seed), fixed per entry and
    # independent of the position in this list; a new entry takes a new one (see check_seeds)
    ("llama-mha", 1000, "LlamaForCausalLM", "llama",
     dict(H=48, L=2, NH=4, NKV=4, HD=12, F=96, tied=False, theta=10000.0), "F32", "F32"),
    ("llama-tied", 2000, "LlamaForCausalLM", "llama",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=128, tied=True, theta=10000.0), "BF16", "F32"),
    ("llama3-rope-scaling", 3000, "LlamaForCausalLM", "llama",
     dict(H=64, L=3, NH=4, NKV=1, HD=16, F=160, tied=False, theta=500000.0,
          rope_scaling={"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                        "original_max_position_embeddings": 256, "rope_type": "llama3"}), "F16", "F32"),
    ("mistral-window", 4000, "MistralForCausalLM", "mistral",
     dict(H=64, L=2, NH=8, NKV=2, HD=8, F=128, tied=False, theta=10000.0, window=48), "BF16", "F16"),
    ("qwen2-qkv-bias", 5000, "Qwen2ForCausalLM", "qwen2",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=128, tied=True, theta=1000000.0), "BF16", "BF16"),
    ("qwen3-qk-norm", 6000, "Qwen3ForCausalLM", "qwen3",
     dict(H=64, L=2, NH=4, NKV=2, HD=32, F=128, tied=False, theta=1000000.0), "F32", "F32"),
    # qk_gain scales the q/k projections (so that Gemma 2's attention softcap bites); embed_std the
    # embeddings (Gemma multiplies them by sqrt(H): small, or tied models repeat the current token)
    # and final_norm_center the final norm's w (Gemma's 1 + w: larger, so that logits are spread
    # out and the final softcap bites); router_std the MoE routers' initial draw
    ("gemma2-softcap", 7000, "Gemma2ForCausalLM", "gemma2",
     dict(H=48, L=3, NH=4, NKV=2, HD=16, F=96, tied=True, theta=10000.0, window=24,
          query_pre_attn_scalar=24, attn_softcap=5.0, final_softcap=5.0, qk_gain=2.0,
          embed_std=0.1, final_norm_center=2.0), "BF16", "BF16"),
    ("gemma3-local-global", 8000, "Gemma3ForCausalLM", "gemma3_text",
     dict(H=80, L=4, NH=4, NKV=1, HD=32, F=160, tied=True, theta=1000000.0, window=24,
          pattern=3, local_theta=10000.0, rope_scaling={"factor": 8.0, "rope_type": "linear"},
          query_pre_attn_scalar=32, attn_softcap=2.0, embed_std=0.1, final_norm_center=2.0),
     "BF16", "F32"),
    ("gemma3-mm", 9000, "Gemma3ForConditionalGeneration", "gemma3",
     dict(H=40, L=3, NH=8, NKV=4, HD=8, F=80, tied=True, theta=1000000.0, window=20,
          layer_types=["sliding_attention", "full_attention", "sliding_attention"],
          final_softcap=2.0, qk_norm_center=1.0, embed_std=0.1, final_norm_center=2.0,
          vision_hidden=8), "BF16", "BF16"),
    ("phi3-longrope", 10000, "Phi3ForCausalLM", "phi3",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=96, tied=False, theta=10000.0, window=40,
          max_positions=1024, original_max_positions=256,
          rope_scaling={"long_factor": PHI3_LONG_FACTOR, "short_factor": PHI3_SHORT_FACTOR,
                        "type": "longrope"}), "BF16", "BF16"),
    ("mixtral-moe", 11002, "MixtralForCausalLM", "mixtral",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=64, tied=False, theta=1000000.0, E=4, k=2,
          router_std=0.2), "BF16", "F32"),
    ("qwen2-moe-shared", 12001, "Qwen2MoeForCausalLM", "qwen2_moe",
     dict(H=64, L=3, NH=4, NKV=2, HD=16, F=128, tied=False, theta=1000000.0, E=4, k=2,
          Fm=32, Fs=64, norm_topk=False, mlp_only_layers=[1], router_std=0.2), "BF16", "BF16"),
    ("qwen3-moe", 13077, "Qwen3MoeForCausalLM", "qwen3_moe",
     dict(H=64, L=2, NH=4, NKV=2, HD=32, F=128, tied=False, theta=1000000.0, E=8, k=3,
          Fm=32, norm_topk=True, router_std=0.2), "BF16", "F32"),
    ("phi3-longrope-long", 14000, "Phi3ForCausalLM", "phi3",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=96, tied=False, theta=10000.0, window=None,
          max_positions=1024, original_max_positions=32,
          rope_scaling={"long_factor": PHI3_LONG_FACTOR, "short_factor": PHI3_SHORT_FACTOR,
                        "type": "longrope"}), "BF16", "BF16"),
    # max_position_embeddings = factor x original, so that transformers 4.51-4.55 (which took the
    # factor from their ratio) read it as 4.56+ do; theta 1e4 and head_dim 32 put the ramp at
    # dimension pairs 0..5 of 16
    ("qwen3-yarn", 15000, "Qwen3ForCausalLM", "qwen3",
     dict(H=64, L=2, NH=4, NKV=2, HD=32, F=128, tied=False, theta=10000.0, max_positions=256, seeded=True,
          rope_scaling={"factor": 4.0, "original_max_position_embeddings": 64, "rope_type": "yarn"}),
     "BF16", "F32"),
    # Phi-4-mini's shape: rotates 3/4 of each head (here 12 of 16 dims: the factor lists have 6
    # entries), LongRoPE, tied embeddings (no lm_head tensor)
    ("phi4-mini-partial-rope", 16000, "Phi3ForCausalLM", "phi3",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=96, tied=True, theta=10000.0, window=None,
          max_positions=1024, original_max_positions=256, partial_rotary_factor=0.75,
          rope_scaling={"long_factor": PHI3_LONG_FACTOR[:6], "short_factor": PHI3_SHORT_FACTOR[2:],
                        "type": "longrope"}), "BF16", "BF16"),
    # Mistral Small 3.1/3.2's shape: Mistral3ForConditionalGeneration, a Mistral text model whose
    # head_dim (128) is not hidden/heads (5120/32), no sliding window, rope_theta 1e9, untied
    ("mistral3-mm", 17000, "Mistral3ForConditionalGeneration", "mistral3",
     dict(H=64, L=2, NH=4, NKV=2, HD=24, F=128, tied=False, theta=1e9, vision_hidden=8, seeded=True),
     "BF16", "F32"),
    # GLM-4-0414's shape: half of each head rotates, adjacent dims paired; q/k/v bias; post norms
    ("glm4-interleaved-rope", 18001, "Glm4ForCausalLM", "glm4",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=96, tied=False, theta=10000.0, seeded=True), "BF16", "F32"),
    # GLM-4-9B-chat-hf: GlmForCausalLM, keys left out for GlmConfig's defaults
    ("glm-interleaved-rope", 19000, "GlmForCausalLM", "glm",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=96, tied=False, theta=10000.0, seeded=True), "BF16", "BF16"),
    # SmolLM3: a NoPE layer among RoPE layers (explicit no_rope_layers, as the released config lists them)
    ("smollm3-nope", 20000, "SmolLM3ForCausalLM", "smollm3",
     dict(H=64, L=4, NH=8, NKV=2, HD=8, F=128, tied=True, theta=2000000.0, seeded=True, no_rope_layers=[1, 1, 0, 1],
          embed_std=0.1, branch_gain=2.0), "BF16", "F32"),
    # Qwen2.5-VL as released: a flat config and model.* / visual.* / lm_head.weight names
    ("qwen2.5-vl-legacy", 20000, "Qwen2_5_VLForConditionalGeneration", "qwen2_5_vl",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=128, tied=False, theta=1000000.0, seeded=True, prefix="model.",
          mrope_section=[2, 3, 3], vision_hidden=8), "BF16", "BF16"),
    # Qwen3-VL as transformers >= 4.57 saves it: text_config, model.language_model.* / model.visual.*
    ("qwen3-vl-mm", 21000, "Qwen3VLForConditionalGeneration", "qwen3_vl",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=128, tied=True, theta=5000000.0, seeded=True,
          prefix="model.language_model.", mrope_section=[3, 3, 2], vision_hidden=8, embed_std=0.25),
     "BF16", "F32"),
    # GLM-4.5's shape: sigmoid router with e_score_correction_bias (fp32), groups (here 4 of 2 experts,
    # the best 2 kept: DeepSeek-V3's grouping; GLM-4.5 itself has one group), routed_scaling_factor,
    # an ungated shared expert, layer 0 dense (first_k_dense_replace), half of each head rotating
    # (rotate-half pairing), head_dim 32 != hidden/heads, q/k/v bias, one MTP layer stored after the
    # last (never run; its stand-in tensors are copied by export)
    ("glm4-moe", 23001, "Glm4MoeForCausalLM", "glm4_moe",
     dict(H=64, L=3, NH=4, NKV=2, HD=32, F=128, tied=False, theta=1000000.0, E=8, k=3, Fm=32, n_shared=1,
          n_group=4, topk_group=2, scaling=2.5, norm_topk=True, router_std=0.2, bias_std=0.05, seeded=True),
     "BF16", "BF16"),
    # Granite 3.x's shape: a Llama with embedding_multiplier, attention_multiplier (instead of
    # head_dim^-0.5), residual_multiplier on both branches and logits_scaling (Granite-3.3-8B: 12,
    # 1/128, 0.22, 16); GQA 4, untied
    ("granite-multipliers", 24001, "GraniteForCausalLM", "granite",
     dict(H=64, L=3, NH=8, NKV=2, HD=8, F=128, tied=False, theta=10000000.0, embedding_multiplier=12.0,
          attention_multiplier=0.25, residual_multiplier=0.22, logits_scaling=4.0, embed_std=0.1,
          seeded=True), "BF16", "BF16"),
    # Granite 3.x MoE's shape: every layer MoE, experts stacked in input_linear / output_linear, the
    # softmax of the top-2 logits; with the multipliers; the shared variant adds an ungated shared_mlp
    ("granite-moe", 25005, "GraniteMoeForCausalLM", "granitemoe",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=48, tied=False, theta=10000.0, E=4, k=2, router_std=0.2,
          embedding_multiplier=6.0, attention_multiplier=0.125, residual_multiplier=0.5, logits_scaling=2.0,
          embed_std=0.1, seeded=True), "BF16", "BF16"),
    ("granite-moe-shared", 26000, "GraniteMoeSharedForCausalLM", "granitemoeshared",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=48, tied=False, theta=10000.0, E=4, k=2, Fs=40, router_std=0.2,
          embedding_multiplier=6.0, attention_multiplier=0.125, residual_multiplier=0.5, logits_scaling=2.0,
          seeded=True), "BF16", "F32"),
    # gpt-oss's shape: attention sinks, q/k/v/o biases, head_dim 24 with 4 heads (96 != hidden 64, as
    # gpt-oss's 64 x 64 != 2880), even layers sliding (window 8: every prompt is windowed), YaRN x4
    # from 256 with truncate false (both ramp bounds fractional), a biased router taking the softmax
    # of the top-2 logits, 4 biased experts stacked transposed with gate / up interleaved in
    # gate_up_proj's columns and a clamped SwiGLU (limit 7: the gate_up scales make both clamps bite
    # on the golden prompts); expert width 40, so that no stacked expert tensor is square (2F = 80,
    # F = 40 != H = 64): a transposed read fails on the shapes
    ("gpt-oss", 27001, "GptOssForCausalLM", "gpt_oss",
     dict(H=64, L=3, NH=4, NKV=2, HD=24, F=40, tied=False, theta=150000.0, E=4, k=2, window=8,
          rope_scaling={"beta_fast": 32.0, "beta_slow": 1.0, "factor": 4.0, "original_max_position_embeddings": 256,
                        "rope_type": "yarn", "truncate": False},
          router_std=0.2, router_bias_std=0.5, sink_std=1.0, o_bias_std=0.3, gate_up_gain=3.0,
          gate_up_bias_std=1.0, down_gain=0.3, down_bias_std=0.3, seeded=True), "BF16", "F32"),
    # Command-R / Aya's shape (CohereForCausalLM): mean-subtracted LayerNorms without bias (weights drawn
    # around 1, std norm_std), one norm per layer and the parallel block x + attn(h) + mlp(h), RoPE over
    # the whole head with adjacent dims paired, logits times logit_scale 0.125 (default 0.0625),
    # tie_word_embeddings left out (CohereConfig's default true), all F16 as Command-R ships.
    # embed_mean shifts every embedding row's values off zero, as trained models' residual streams
    # are: the mean that CohereLayerNorm subtracts (and RMSNorm would keep) is then not small
    ("cohere", 28002, "CohereForCausalLM", "cohere",
     dict(H=64, L=3, NH=4, NKV=2, HD=16, F=128, tied=True, theta=10000.0, logit_scale=0.125, embed_std=0.25,
          embed_mean=0.1, norm_std=0.2, seeded=True), "F16", "F16"),
    # Command R7B's shape (Cohere2ForCausalLM): the same plus sliding_window_pattern 4 (no layer_types):
    # layers 0-2 slide (window 8, RoPE), layer 3 is full attention with no RoPE at all; logit_scale 0.25
    # as R7B's; GQA 4; all BF16 as R7B ships
    ("cohere2", 29000, "Cohere2ForCausalLM", "cohere2",
     dict(H=64, L=4, NH=4, NKV=1, HD=16, F=128, tied=True, theta=50000.0, window=8, pattern=4, logit_scale=0.25,
          embed_std=0.25, embed_mean=0.1, norm_std=0.2, seeded=True), "BF16", "BF16"),
    # A Llama with attention_bias (q/k/v_proj and o_proj biases) and mlp_bias (gate/up/down_proj
    # biases), as some Llama-architecture checkpoints ship; the biases' std large enough that zeroing
    # any group changes the logits (recorded in golden.json); GQA 2, untied
    ("llama-bias", 30000, "LlamaForCausalLM", "llama",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=128, tied=False, theta=10000.0, attention_bias=True, mlp_bias=True,
          o_bias_std=0.3, mlp_bias_std=0.3, seeded=True), "BF16", "F32"),
    # Command R+'s shape (CohereForCausalLM with use_qk_norm): q_norm / k_norm CohereLayerNorms over
    # head_dim with a weight row per head ((NH, HD) and (NKV, HD): drawn around 1 with std
    # qk_norm_std, a different row per head), applied after the q/k view, before the transpose and
    # RoPE; otherwise the cohere fixture's norms, parallel block and RoPE pairing; rope_theta 7.5e7 as
    # Command R+'s; tied (key absent); GQA 2; BF16 matrices, F32 norms
    ("cohere-qknorm", 31001, "CohereForCausalLM", "cohere",
     dict(H=64, L=3, NH=4, NKV=2, HD=16, F=128, tied=True, theta=75000000.0, logit_scale=0.25, embed_std=0.25,
          embed_mean=0.1, norm_std=0.2, qk_norm=True, qk_norm_std=0.3, seeded=True), "BF16", "F32"),
    # Seed-OSS-36B's shape (SeedOssForCausalLM): Llama's layers with q/k/v_proj biases (attention_bias,
    # SeedOssConfig's default true) and no o_proj bias (attention_out_bias false: a flag of its own);
    # head_dim 24 with 4 heads (q width 96 != hidden 64, as Seed-OSS-36B's 80 x 128 != 5120), rope_theta
    # 1e7 and rope_scaling {"rope_type": "default"} as released, attention_dropout / residual_dropout 0.1
    # (training only); GQA 2, untied
    ("seed-oss", 32000, "SeedOssForCausalLM", "seed_oss",
     dict(H=64, L=2, NH=4, NKV=2, HD=24, F=128, tied=False, theta=10000000.0, attention_bias=True,
          attention_out_bias=False, seeded=True), "BF16", "F32"),
    # DeepSeek-V3's shape (DeepseekV3ForCausalLM): multi-head latent attention with every width distinct
    # (q_lora_rank 40, kv_lora_rank 24, qk_nope 16 + qk_rope 8 = q/k head 24, v head 12; 4 heads, as many
    # kv heads), rope_interleave, YaRN x4 from 64 with mscale 0.8 / mscale_all_dim 1.0 (the cos / sin
    # factor mscale(4, 0.8) / mscale(4, 1.0) and the score scale 24^-0.5 x mscale(4, 1.0)^2 both != 1;
    # max_position_embeddings = factor x original, see qwen3-yarn), GLM-4.5's router (sigmoid, F32
    # e_score_correction_bias, 4 groups of 2 experts keep 2, top-2 renormalised x2.5), one ungated shared
    # expert, layer 0 dense, the stand-in MTP layer. latent_norm_std: q_a_layernorm / kv_a_layernorm
    # weights around 1 with that spread (setting either to 1 changes prompt 4's logits by > 20, as do the
    # RoPE layout and the score scale: golden.json's *_effect_prompt4). Seed 33000 failed the thresholds
    ("deepseek-v3-mla", 33003, "DeepseekV3ForCausalLM", "deepseek_v3",
     dict(H=64, L=3, NH=4, NKV=4, HD=24, F=128, tied=False, theta=10000.0, E=8, k=2, Fm=32, n_shared=1,
          n_group=4, topk_group=2, scaling=2.5, norm_topk=True, router_std=0.2, bias_std=0.05,
          q_lora_rank=40, kv_lora_rank=24, qk_nope=16, qk_rope=8, v_head_dim=12, max_positions=256,
          rope_scaling={"beta_fast": 32, "beta_slow": 1, "factor": 4.0, "mscale": 0.8, "mscale_all_dim": 1.0,
                        "original_max_position_embeddings": 64, "type": "yarn"},
          latent_norm_std=0.3, seeded=True), "BF16", "BF16"),
    # The other paths of released DeepseekV3ForCausalLM checkpoints (Moonlight-16B-A3B and DeepSeek-V2-Lite's
    # shape): q_lora_rank null (one q_proj (NH x qk_head_dim, H), no q_a_layernorm), rope_interleave false
    # (rotate_half on the stored rope dims), no rope_scaling (scores times qk_head_dim^-0.5 exactly), rope_theta
    # 5e4, rms_norm_eps 1e-5 (the latent norm's stays 1e-6), every width distinct and other than
    # deepseek-v3-mla's (8 heads = kv heads, kv_lora_rank 28, qk_nope 12 + qk_rope 8 = q/k head 20, v head 16:
    # wider than nope, narrower than q/k), 6 routed experts in one group (plain top-2 of the sigmoid + bias
    # scores), norm_topk_prob false, routed_scaling_factor 1.5, two shared experts' width, layer 0 dense, no
    # MTP layer (num_nextn_predict_layers 0), BF16 matrices + F32 norms. latent_scale: kv_a_proj_with_mqa's
    # latent rows scaled so that the latent's mean square is near 1e-5 and kv_a_layernorm's eps shows
    # (golden.json's latent_norm_eps_effect_prompt4; unscaled it would be about 2e-4). Seed 34001 failed the
    # thresholds
    ("deepseek-v3-qproj", 34004, "DeepseekV3ForCausalLM", "deepseek_v3",
     dict(H=64, L=3, NH=8, NKV=8, HD=20, F=96, tied=False, theta=50000.0, E=6, k=2, Fm=24, n_shared=2,
          n_group=1, topk_group=1, scaling=1.5, norm_topk=False, router_std=0.2, bias_std=0.05,
          q_lora_rank=None, kv_lora_rank=28, qk_nope=12, qk_rope=8, v_head_dim=16, max_positions=8192,
          rope_scaling=None, rope_interleave=False, rms_norm_eps=1e-05, mtp_layers=0, latent_norm_std=0.3,
          latent_scale=0.004, seeded=True), "BF16", "F32"),
]



def derived(name, seed, source, **extra):
    """A MODELS entry that takes another entry's architecture, sizes and dtypes and quantizes its weights
    (the source's own seed draws them, routers included, so they equal the source fixture's stored
    tensors: build_one checks that): `weights_from` (source name, source seed) and the extras. The
    routers are not quantized, but the quantized model routes other inputs: they are searched again
    (search_routers) from the source's, redrawn from this entry's own seed where a layer's prompt tokens
    fall under MIN_ROUTING_GAP (golden.json's router_draws: 1 = the source's router kept; model.routers_redrawn
    lists the others). Its seed is bumped, as any MoE entry's, when the greedy margins or the fed-back
    tokens' routing gaps fail; the other weights never change."""
    src = next(m for m in MODELS if m[0] == source)
    return (name, seed) + src[2:4] + (dict(src[4], weights_from=(source, src[1]), **extra),) + src[5:]


# DeepSeek-V3 / R1 and Kimi-K2 as released: FP8. deepseek-v3-mla's weights with every Linear weight of the
# decoder layers and of the MTP layer stored F8_E4M3 plus an F32 `<name>_scale_inv` per 16 x 16 block
# (q_a_proj's 40 rows, q_b_proj's 40 and kv_b_proj's 24 columns: blocks at the edges cut short), config.json's
# quantization_config as released (weight_block_size [16, 16] instead of [128, 128]); embeddings, lm_head,
# norms, the router's weight and e_score_correction_bias stay as they were
MODELS.append(derived("deepseek-v3-fp8", 35000, "deepseek-v3-mla", fp8_block_size=[16, 16]))

MODELS += [
    # OLMo 2's shape (Olmo2ForCausalLM): no input_layernorm and no pre-MLP norm (the attention and the MLP read
    # the residual; post_attention_layernorm and post_feedforward_layernorm norm their outputs before each add),
    # q_norm / k_norm RMSNorms over the whole q_proj / k_proj output (8 x 16 = 128 and 2 x 16 = 32 values)
    # before the split into heads, weights around 1 with std qk_norm_std so that reading them per head differs;
    # head_dim from hidden / heads (no head_dim key, as released); rope_theta 5e5 and rope_scaling null as
    # OLMo-2-1124's; rms_norm_eps 1e-5 (Olmo2Config's default); GQA 4, untied, all F32 as OLMo 2 ships.
    # branch_gain scales o_proj and down_proj (0.1 x fan_in^-0.5): the post norms undo a branch's scale except
    # through the eps, which then shows (golden.json's rms_norm_eps_effect_prompt4: at 1 x fan_in^-0.5, 1e-6 in
    # place of 1e-5 changes prompt 4's logits by only 1.9e-3)
    ("olmo2", 36000, "Olmo2ForCausalLM", "olmo2",
     dict(H=128, L=3, NH=8, NKV=2, HD=16, F=256, tied=False, theta=500000.0, rms_norm_eps=1e-05, norm_std=0.2,
          qk_norm_std=0.3, branch_gain=0.1, seeded=True), "F32", "F32"),
    # OLMo 2 with attention_bias (q/k/v_proj and o_proj biases, Olmo2Config's flag; q/k/v std 0.3), tied embeddings,
    # MHA (4 heads = kv heads), rope_theta 1e4 with rope_scaling {"type": "linear", "factor": 2.0} (the
    # spelling that the first Olmo2Config's own _rope_scaling_validation (configuration_olmo2.py) accepts: exactly
    # the keys type (linear or dynamic: not llama3) and factor (a float > 1); the later rope_config_validation
    # reads type as rope_type), rms_norm_eps 1e-6 (not the default 1e-5); branch_gain 0.03 and an o_proj bias of std
    # 0.01 (o_proj's output is that small), so that the eps shows; BF16 matrices and biases, F32 norms.
    # Tied: embeddings of std 1 (with 0.25, as the pre-norm tied fixtures have them, the unit-RMS normed
    # attention outputs, nearly the same at every position, drown the token in the MLP's input, and greedy
    # decoding repeats one token per prompt from the start) and post_feedforward_layernorm weights around 3 (the
    # MLP outputs then outweigh the embedding in the last hidden state, which would otherwise pick the current
    # token again through the tied head)
    ("olmo2-bias", 37000, "Olmo2ForCausalLM", "olmo2",
     dict(H=64, L=2, NH=4, NKV=4, HD=16, F=128, tied=True, theta=10000.0, rms_norm_eps=1e-06, attention_bias=True,
          o_bias_std=0.01, rope_scaling={"factor": 2.0, "type": "linear"}, norm_std=0.2, qk_norm_std=0.3,
          branch_gain=0.03, embed_std=1.0, post_ff_norm_center=3.0, seeded=True), "BF16", "F32"),
    # OLMo 3 as released (Olmo3ForCausalLM, allenai/Olmo-3-1025-7B's config.json as transformers 4.57 wrote it): OLMo 2's
    # layers (models/olmo3/modular_olmo3.py Olmo3DecoderLayer = Olmo2DecoderLayer, Olmo3Attention = Olmo2Attention) plus
    # a sliding window on the layers that layer_types (listed, as released) calls sliding_attention: L = 4, so that
    # Olmo3Config's own pattern ((i + 1) % 4 != 0) gives the same list, layers 0-2 sliding and 3 full. window 24: five
    # of the six golden prompts (37, 28, 30, 144 and 47 tokens) are longer, and "Hi" (21) grows past it while
    # decoding. RoPE in the legacy spelling: rope_theta 500000 (an integer, as released) and rope_scaling yarn x8 with
    # the released keys (attention_factor 1.2079441541679836, which is also 0.1 ln 8 + 1, beta_fast 32 / beta_slow 1
    # as integers); original_max_position_embeddings 1024 (max_position_embeddings = 8 x 1024 = 8192, see qwen3-yarn)
    # so that at head_dim 32 and theta 5e5 the YaRN bands are all present (pairs 0-1 kept, 2-6 ramped, 7-15 divided
    # by 8, as 0-18 / 19-35 / 36-63 of the released head_dim 128 from 8192); only the full layer (3) takes it, the
    # sliding ones rotate with the plain RoPE at rope_theta (the scaled RoPE on them too: golden.json's
    # yarn_on_sliding_layers_effect_prompt4, the transformers 5 regression that PR #45945 fixed). head_dim 32 from
    # hidden 128 / 4 heads (no head_dim key); MHA, untied, rms_norm_eps 1e-6 as released; all BF16 (norms too), as
    # the released safetensors are. branch_gain 0.03 as olmo2-bias (with eps 1e-6 the post norms' eps shows only
    # when the branch outputs are that small)
    ("olmo3", 38000, "Olmo3ForCausalLM", "olmo3",
     dict(H=128, L=4, NH=4, NKV=4, HD=32, F=256, tied=False, theta=500000, window=24, rms_norm_eps=1e-06,
          rope_scaling={"attention_factor": 1.2079441541679836, "beta_fast": 32, "beta_slow": 1, "factor": 8.0,
                        "original_max_position_embeddings": 1024, "rope_type": "yarn"},
          norm_std=0.2, qk_norm_std=0.3, branch_gain=0.03, seeded=True), "BF16", "BF16"),
    # OLMo 3 in transformers 5's spelling (Olmo3Config as 5.x writes it: "dtype", no top-level rope_theta /
    # rope_scaling but rope_parameters per layer type): full_attention YaRN x4 from 1024 (max_position_embeddings
    # 4096) at theta 5e5 without attention_factor (YaRN's default 0.1 ln 4 + 1 = 1.1386; pair 0 kept, 1-3 ramped, 4-7
    # divided at head_dim 16), sliding_attention the default RoPE at a base of its own, 1e4 (the full layers' 5e5
    # there: golden.json's sliding_rope_theta_effect_prompt4); no layer_types key and L = 5, so that Olmo3Config's
    # default pattern gives layers 0, 1, 2 and 4 sliding and 3 full (a layer after the full one); window 32 (prompts
    # of 37, 144 and 47 tokens are longer, those of 28 and 30 grow past it while decoding); GQA 2 (4 heads, 2 kv
    # heads: q/k norms over 64 and 32 values), attention_bias (q/k/v_proj and o_proj biases), tied embeddings,
    # rms_norm_eps 1e-5 (Olmo3Config's default, listed as 5.x writes every field); BF16 matrices and biases, F32
    # norms. Tied post-norm layers: olmo2-bias's embed_std 1, post_feedforward_layernorm around 3, branch_gain 0.03
    # and o_proj bias std 0.01 (see there), or greedy decoding repeats one token. Seed 39000 met the margins, but
    # its greedy outputs repeated one token (170) from the first step on prompts 0 and 2: 39001 (12 to 15 distinct
    # tokens of 16 on every prompt)
    ("olmo3-v5", 39001, "Olmo3ForCausalLM", "olmo3",
     dict(H=64, L=5, NH=4, NKV=2, HD=16, F=128, tied=True, theta=500000.0, window=32, rms_norm_eps=1e-05,
          attention_bias=True, o_bias_std=0.01, local_theta=10000.0, rope_parameters=True,
          rope_scaling={"beta_fast": 32.0, "beta_slow": 1.0, "factor": 4.0, "original_max_position_embeddings": 1024,
                        "rope_type": "yarn"},
          norm_std=0.2, qk_norm_std=0.3, branch_gain=0.03, embed_std=1.0, post_ff_norm_center=3.0, seeded=True),
     "BF16", "F32"),
    # DeepSeek-V2-Lite's shape (DeepseekV2ForCausalLM; config.json as deepseek-ai/DeepSeek-V2-Lite's, key for key, in
    # the remote-code spelling: see config_for): MLA with q_lora_rank null (one q_proj), every width distinct and
    # other than the V3 fixtures' (4 heads = kv heads, kv_lora_rank 40, qk_nope 20 + qk_rope 12 = q/k head 32 !=
    # hidden / heads 16, v head 24), V2's RoPE (apply_rotary_emb: the stored pairs (2i, 2i + 1) turned in place as
    # complex numbers); rope_scaling as released: YaRN x40 from 4096 (max_position_embeddings 163840 = 40 x 4096),
    # mscale = mscale_all_dim = 0.707, so that cos / sin stay unscaled (mscale(40, 0.707) / mscale(40, 0.707) = 1;
    # YaRN's default 0.1 ln 40 + 1 = 1.369 there: golden.json's yarn_attention_factor_effect_prompt4) while the
    # scores take 32^-0.5 x mscale(40, 0.707)^2 = 32^-0.5 x 1.2608^2 (x 1.5896); rope theta 10000 (an integer, as
    # released); at 12 rope dims pairs 0-1 keep their frequency, 2-4 are ramped, 5 is divided by 40 (the released
    # 64 dims: 0-10, 11-22, 23-31). The router as released: softmax, topk_method greedy (n_group / topk_group 1),
    # norm_topk_prob false, routed_scaling_factor 1.0; 8 experts of 16, top-3 (Lite: 64 of 1408, top-6), two shared
    # experts' width (2 x 16), layer 0 a dense MLP of 128 (first_k_dense_replace 1). router_std 0.2: with a softmax
    # over 8 and top-3 about 2.5 % of the prompt tokens fall within 1e-3 of a tie (2.3 % at 0.15, 5 % at 0.3).
    # latent_norm_std as the V3 fixtures'. BF16 matrices, F32 norms. Seeds 40000-40037 failed the thresholds
    ("deepseek-v2-lite", 40038, "DeepseekV2ForCausalLM", "deepseek_v2",
     dict(H=64, L=3, NH=4, NKV=4, HD=32, F=128, tied=False, theta=10000, E=8, k=3, Fm=16, n_shared=2,
          n_group=1, topk_group=1, topk_method="greedy", scaling=1.0, router_std=0.2,
          q_lora_rank=None, kv_lora_rank=40, qk_nope=20, qk_rope=12, v_head_dim=24, max_positions=163840,
          rope_scaling={"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707, "mscale_all_dim": 0.707,
                        "original_max_position_embeddings": 4096, "type": "yarn"},
          latent_norm_std=0.3, seeded=True), "BF16", "F32"),
    # DeepSeek-V2 / V2.5's router (DeepseekV2ForCausalLM; config.json as transformers 5 writes DeepseekV2Config: see
    # config_for): topk_method group_limited_greedy with 8 experts of 20 in n_group 4 groups of 2, topk_group 2 kept,
    # top-3 (the 236B: 160 in 8, 3 kept, top-6): k > topk_group, or scoring each group by its largest p would always
    # keep the greedy top-k's groups and the limit would change nothing; a group scored by its largest p, where
    # DeepSeek-V3 sums its two best (golden.json's router_group_sum_*: other experts for 13 % of prompt 4's tokens);
    # weights p x routed_scaling_factor 16 as released, not renormalised (the next layer's input norm and the final
    # norm take the scale: the logits stay in the range of the other fixtures'; greedy outputs 14-16 distinct tokens
    # of 16); two shared experts' width (2 x 20). L = 4 with first_k_dense_replace 2 (the released 1 elsewhere: an
    # engine must read it), so layers 0-1 are dense MLPs of 128 and 2-3 MoE. router_std 0.15 (each group's largest p
    # must clear the next group's too: about 3 % of tokens within 1e-3 of a tie at 0.15, 6 % at 0.3) and up to
    # 20000 router draws per layer. MLA: q_lora_rank 48 (q_a_proj / q_a_layernorm / q_b_proj), 4 heads, kv_lora_rank
    # 32, qk_nope 28 + qk_rope 8 = q/k head 36, v head 20 (config.json's head_dim 8 is DeepseekV2Config's
    # qk_rope_head_dim); no rope_scaling: rope_parameters {"rope_type": "default", "rope_theta": 10000.0}, scores
    # times exactly 36^-0.5. All BF16 as released. Seeds 41000-41109 failed the thresholds
    ("deepseek-v2-groups", 41110, "DeepseekV2ForCausalLM", "deepseek_v2",
     dict(H=64, L=4, NH=4, NKV=4, HD=36, F=128, tied=False, theta=10000.0, E=8, k=3, Fm=20, n_shared=2,
          n_group=4, topk_group=2, topk_method="group_limited_greedy", scaling=16.0, router_std=0.15,
          first_k_dense=2, max_router_draws=20000,
          q_lora_rank=48, kv_lora_rank=32, qk_nope=28, qk_rope=8, v_head_dim=20, max_positions=4096,
          rope_scaling=None, rope_parameters=True, latent_norm_std=0.3, seeded=True), "BF16", "BF16"),
    # OLMoE's shape (OlmoeForCausalLM; config.json as allenai/OLMoE-1B-7B-0924's: see config_for). models/olmoe/
    # modular_olmoe.py: OlmoeDecoderLayer = LlamaDecoderLayer (pre-norm: input_layernorm before the attention,
    # post_attention_layernorm before the MoE, as Llama, unlike OLMo 2; OLMo 2's post-norm layout with the same two
    # weights: golden.json's postnorm_effect_prompt4); OlmoeAttention: q_norm / k_norm RMSNorms (eps rms_norm_eps) over
    # the whole q_proj / k_proj output before the view into heads, as OLMo 2's: q_norm over hidden_size (64), k_norm
    # over (hidden / heads) x kv heads (16 x 2 = 32: GQA 2, so that the two widths differ), weights around 1 with std
    # qk_norm_std so that reading them per head differs (qk_norm_per_head_effect_prompt4); clip_qkv null as released
    # (reference.py refuses another value); no head_dim key (hidden / heads); OlmoeSparseMoeBlock on every layer: 8
    # experts of intermediate_size 32 (OLMoE-1B-7B: 64 of 1024), the top 3 of the softmax over the router's logits,
    # norm_topk_prob false as released (renormalised: router_norm_topk_prob_effect_prompt4), no shared expert;
    # rope_theta 1e4, rms_norm_eps 1e-5 (OlmoeConfig's defaults); untied; BF16 matrices, F32 norms (the released
    # safetensors are all BF16). router_std 0.2 as the other softmax routers'. Seed 42000 failed the thresholds
    ("olmoe", 42001, "OlmoeForCausalLM", "olmoe",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=32, tied=False, theta=10000.0, E=8, k=3, norm_topk=False, router_std=0.2,
          qk_norm_std=0.3, seeded=True), "BF16", "F32"),
    # MiniMax-M2 / M2.1 / M2.5's shape (MiniMaxM2ForCausalLM; config.json as MiniMaxAI/MiniMax-M2's, the remote-code
    # spelling, key for key: see config_for). models/minimax_m2/modular_minimax_m2.py: MiniMaxM2DecoderLayer =
    # MixtralDecoderLayer (pre-norm), MiniMaxM2Attention(FlexOlmoAttention): bias-free q/k/v/o_proj of heads x head_dim,
    # q_norm / k_norm RMSNorms over the whole q_proj / k_proj output (4 x 24 = 96 and 2 x 24 = 48 values: head_dim 24
    # explicit, heads x head_dim 96 != hidden 64, as MiniMax-M2's 48 x 128 != 3072) before the view into heads,
    # weights around 1 with std qk_norm_std so that reading them per head differs; partial RoPE in the rotate-half
    # pairing on the first rotary_dim 12 of each head's 24 dims (half, as the released 64 of 128; Glm4MoeRotaryEmbedding
    # / apply_rotary_pos_emb), rope_theta 5000000 (an integer, as released); MiniMaxM2SparseMoeBlock on every layer: 8
    # experts of intermediate_size 32 (MiniMax-M2: 256 of 1536), s = sigmoid(logits), the top 3 of s +
    # e_score_correction_bias (F32, std bias_std: about the spread of s, so that it changes the experts of a good share
    # of the tokens: golden.json's router_changed_tokens_prompt4), weights s renormalised; the released names
    # (block_sparse_moe.gate, block_sparse_moe.e_score_correction_bias, block_sparse_moe.experts.{e}.w1 / w3 / w2);
    # untied; BF16 matrices, F32 norms and bias. router_std 0.25. Seeds 43000-43002 failed the thresholds
    ("minimax-m2", 43003, "MiniMaxM2ForCausalLM", "minimax_m2",
     dict(H=64, L=2, NH=4, NKV=2, HD=24, F=32, tied=False, theta=5000000, rotary_dim=12, E=8, k=3, router_std=0.25,
          bias_std=0.2, qk_norm_std=0.3, seeded=True), "BF16", "F32"),
    # MiniMax-M2 as transformers 5 saves it (MiniMaxM2Config.to_dict and MiniMaxM2SparseMoeBlock's state dict: see
    # config_for): "dtype", no rotary_dim / rope_theta but rope_parameters {"rope_type": "default", "rope_theta":
    # 10000.0, "partial_rotary_factor": 0.25} (4 of each head's 16 dims rotate), the experts stacked
    # (mlp.experts.gate_up_proj (E, 2F, H): per expert the gate rows, then the up rows; mlp.experts.down_proj (E, H, F)),
    # mlp.gate.weight and mlp.e_score_correction_bias; 8 heads of 16 (128 != hidden 64), 2 kv heads (GQA 4: q/k norms
    # over 128 and 32 values), 6 experts of 24, top-2, tie_word_embeddings true (no lm_head tensor); BF16 matrices, F32
    # norms and bias. Tied: embeddings of std 0.1 and o_proj / down projections times branch_gain 2 (smollm3-nope's),
    # so that the branch outputs outweigh the current token's embedding: with the tied fixtures' std 0.25 and gain 1,
    # greedy decoding repeated one token on every prompt (1 to 4 distinct tokens of 16; here 11 to 14)
    ("minimax-m2-v5", 44000, "MiniMaxM2ForCausalLM", "minimax_m2",
     dict(H=64, L=2, NH=8, NKV=2, HD=16, F=24, tied=True, theta=10000.0, partial_rotary_factor=0.25, E=6, k=2,
          router_std=0.25, bias_std=0.2, qk_norm_std=0.3, embed_std=0.1, branch_gain=2.0, rope_parameters=True,
          stacked_experts=True, seeded=True), "BF16", "F32"),
    # EXAONE 4.0-32B's shape (Exaone4ForCausalLM; config.json as LGAI-EXAONE/EXAONE-4.0-32B's, transformers 4.54: see
    # config_for). models/exaone4/modular_exaone4.py: Exaone4DecoderLayer = Olmo2DecoderLayer (post-norm: no input
    # norms, post_attention_layernorm / post_feedforward_layernorm on the branch outputs before each add; Llama's
    # pre-norm layout with the same two weights: golden.json's prenorm_effect_prompt4), Exaone4Attention: bias-free
    # q/k/v/o_proj, q_norm / k_norm RMSNorms over each head's head_dim values with one (head_dim,) weight (Qwen3's;
    # around 1 with std qk_norm_std, so that one norm over the whole projection with the weight repeated per head
    # differs: qk_norm_whole_projection_effect_prompt4), RoPE only on the sliding layers (the full layers NoPE; RoPE on
    # every layer: rope_on_every_layer_effect_prompt4). sliding_window_pattern "LLLG" (a string, as released) beside
    # layer_types listed (as released); L = 4, so that both give layers 0-2 sliding and 3 full. window 16: every golden
    # prompt (21 to 144 tokens) is longer (no window: sliding_window_effect_prompt4). head_dim 16 listed (= hidden /
    # heads), GQA 2. RoPE as released: rope_theta 1000000 (an integer) and rope_scaling llama3 x16 with low / high
    # freq factors 1 / 4, original_max_position_embeddings 64 instead of 8192 (max_position_embeddings 16 x 64 =
    # 1024): the sliding layers see only 16 positions back, and at 8192 only pairs with wavelengths above 2048 would
    # change, whose angles over 15 positions hardly move; at 64 pair 0 (wavelength 6.3) is kept, pair 1 (35.3) smoothed
    # and pairs 2-7 divided by 16 (plain RoPE: rope_scaling_effect_prompt4). rms_norm_eps 1e-5, untied, BF16 matrices,
    # F32 norms. Seed 45000 met the margins, but greedy decoding repeated one token 9 times on "Hi": 45003 (at most 3
    # in a row, 9 to 13 distinct tokens of 16 per prompt)
    ("exaone4", 45003, "Exaone4ForCausalLM", "exaone4",
     dict(H=64, L=4, NH=4, NKV=2, HD=16, F=96, tied=False, theta=1000000, window=16, pattern="LLLG",
          rope_scaling={"factor": 16.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                        "original_max_position_embeddings": 64, "rope_type": "llama3"},
          norm_std=0.2, qk_norm_std=0.3, seeded=True), "BF16", "F32"),
    # EXAONE 4.0-1.2B's shape (config.json as LGAI-EXAONE/EXAONE-4.0-1.2B's: see config_for): sliding_window null,
    # sliding_window_pattern null and layer_types all full_attention, so that no layer slides and every layer rotates
    # (Exaone4Attention: `if self.sliding_window is None or self.is_sliding`; the hybrid model's rule, NoPE on the
    # layers "LLLG" calls global, here the last: nope_as_hybrid_effect_prompt4); OLMo 2's post-norm layers and the
    # per-head q/k norms as exaone4's; no head_dim key (hidden / heads), MHA, rope_theta 1e6, rope_scaling null,
    # tie_word_embeddings true (no lm_head tensor); BF16 matrices, F32 norms. Tied post-norm layers: embed_std 1 and
    # post_feedforward_layernorm weights around 5 (olmo2-bias's idea, see there: the MLP outputs must outweigh the
    # embedding in the last hidden state, or the tied head picks the current token again). With olmo2-bias's 3,
    # greedy decoding repeated one token 7 to 16 times in a row on some prompt with every seed tried (46000-46007); with
    # 5, seeds 46000-46006 met the margins but repeated one token 7 to 15 times on some prompt: 46007 (at most 2 in a
    # row, 14 to 16 distinct tokens of 16)
    ("exaone4-dense", 46007, "Exaone4ForCausalLM", "exaone4",
     dict(H=64, L=3, NH=4, NKV=4, HD=16, F=128, tied=True, theta=1000000.0, window=None, pattern=None,
          rope_scaling=None, norm_std=0.2, qk_norm_std=0.3, embed_std=1.0, post_ff_norm_center=5.0, seeded=True),
     "BF16", "F32"),
    # ERNIE-4.5-21B-A3B's shape (Ernie4_5_MoeForCausalLM; config.json in baidu/ERNIE-4.5-21B-A3B-PT's spelling, with the
    # keys of Baidu's own configs that transformers does not read: see config_for). models/ernie4_5_moe/
    # modular_ernie4_5_moe.py: Ernie4_5_MoeDecoderLayer = Qwen3MoeDecoderLayer's pre-norm layer, Ernie4_5_MoeAttention =
    # LlamaAttention with q/k/v/o biases iff use_bias (false, as released), head_dim hidden / heads (no key), RoPE in
    # GLM's adjacent-pair layout over the whole head (ernie4_5's apply_rotary_pos_emb; rotate-half pairs instead:
    # golden.json's rope_layout_effect_prompt4), rope_theta 500000 (an integer, at the top level, as released);
    # Ernie4_5_MoeSparseMoeBlock on layers 1-2 (moe_layer_start_index 1, interval 1, no moe_layer_end_index: -1 -> the
    # last), layer 0 a dense MLP of intermediate_size 96: mlp.gate (F32, as transformers keeps it), p = softmax of its
    # logits, the top 3 of p + mlp.moe_statics.e_score_correction_bias (F32 (1, 8), std bias_std: about the spread of
    # p, so that it changes the experts of a good share of the tokens: router_changed_tokens_prompt4), weights p
    # renormalised (over max(sum, moe_norm_min)); 8 experts of moe_intermediate_size 32 and mlp.shared_experts of 2 x 32
    # (moe_num_shared_experts 2, ungated); tie_word_embeddings true (no lm_head tensor); BF16 matrices, F32 norms, gate
    # and bias. Tied: embeddings of std 0.1 and o_proj / down projections times branch_gain 2 (minimax-m2-v5's); with
    # the tied fixtures' std 0.25 and gain 1, greedy decoding repeated one token (16 times on two prompts, seed 47019).
    # Seeds 47000-47173 failed the thresholds, or met them (47001, 47010, 47023, 47029, 47075, 47147, 47156) but
    # repeated one token 4 to 15 times in a row on some prompt: 47174 (at most 3 in a row, 8 to 12 distinct tokens of
    # 16)
    ("ernie4.5-moe", 47174, "Ernie4_5_MoeForCausalLM", "ernie4_5_moe",
     dict(H=64, L=3, NH=4, NKV=2, HD=16, F=96, tied=True, theta=500000, E=8, k=3, Fm=32, n_shared=2, moe_start=1,
          router_std=0.2, bias_std=0.05, embed_std=0.1, branch_gain=2.0, seeded=True), "BF16", "F32"),
    # Ernie4_5_MoeForCausalLM as transformers 5 writes Ernie4_5_MoeConfig ("dtype", rope_parameters {"rope_type":
    # "default", "rope_theta": 10000.0} and no rope_theta, moe_layer_end_index as a number): 4 layers with
    # moe_layer_start_index 0, moe_layer_interval 2 and moe_layer_end_index 2, so that only layer 1 is MoE ((l + 1) % 2
    # == 0 also holds for layer 3, past the end index: a dense MLP); moe_num_shared_experts 0 (no shared_experts
    # tensors); 6 experts of 32, top-2; 4 heads, 1 kv head (GQA 4); untied; BF16 matrices, F32 norms, gate and bias.
    # bias_std 0.15: at ernie4.5-moe's 0.05 the bias changed the experts of 5 of prompt 4's 144 tokens (80 at 0.15;
    # at 0.1 seed 48000 repeated one token 11 times in a row; at 0.15 at most 3, 13 to 16 distinct tokens of 16)
    ("ernie4.5-moe-interval", 48000, "Ernie4_5_MoeForCausalLM", "ernie4_5_moe",
     dict(H=64, L=4, NH=4, NKV=1, HD=16, F=96, tied=False, theta=10000.0, E=6, k=2, Fm=32, n_shared=0, moe_start=0,
          moe_interval=2, moe_end=2, router_std=0.2, bias_std=0.15, rope_parameters=True, seeded=True), "BF16", "F32"),
    # ERNIE-4.5-0.3B's shape (Ernie4_5ForCausalLM; config.json in baidu/ERNIE-4.5-0.3B-PT's spelling) with "use_bias":
    # true, so that Ernie4_5Attention's q/k/v/o_proj and Ernie4_5MLP's gate/up/down_proj biases are all there (the
    # release has none; lm_head has no bias either way; each group zeroed: golden.json's *_bias_effect_prompt4);
    # head_dim 24 listed with 4 heads and hidden 64 (q width 96 != hidden; Ernie4_5Config's default would be 128), 2
    # kv heads, the adjacent-pair RoPE over the whole head at rope_theta 500000; tie_word_embeddings true; BF16
    # matrices and biases, F32 norms. Tied: embeddings of std 0.1 and o_proj / down_proj times branch_gain 2
    # (minimax-m2-v5's), every bias of std 0.1: with the q/k/v biases' usual 0.3 (and o_proj / MLP biases of 0.3) greedy
    # decoding ran into one token repeated 16 times (the constant bias vectors pull every position the same way); with
    # 0.1, seeds 49000-49018 met the margins (or were bumped past) but repeated one token 5 to 15 times in a row on
    # some prompt: 49019 (at most 3 in a row, 11 to 15 distinct tokens of 16)
    ("ernie4.5-dense", 49019, "Ernie4_5ForCausalLM", "ernie4_5",
     dict(H=64, L=3, NH=4, NKV=2, HD=24, F=128, tied=True, theta=500000, use_bias=True, qkv_bias_std=0.1,
          o_bias_std=0.1, mlp_bias_std=0.1, embed_std=0.1, branch_gain=2.0, seeded=True), "BF16", "F32"),
    # Qwen3-Next-80B-A3B's shape (Qwen3NextForCausalLM; config.json as the release's, see hybrid_config; the tensors:
    # hybrid_params; the forward pass: reference.gated_delta_net, self_attention's q_gate). full_attention_interval 4
    # and no layer_types: layers 0-2 Gated DeltaNet, layer 3 gated attention (4 heads of 32, 2 kv heads, RoPE on
    # int(32 x 0.25) = 8 dims at rope_theta 1e7, an integer as released); linear attention with 2 key heads of 16 and 4
    # value heads of 24 (each key head read by two value heads: in_proj_qkvz / in_proj_ba interleaved per key head),
    # conv kernel 4; a Qwen2MoeSparseMoeBlock on every layer (decoder_sparse_step 1, mlp_only_layers []:
    # intermediate_size unused): 8 experts of 32, top-3 renormalised (norm_topk_prob), per-expert tensors as released,
    # shared expert of 48 with its sigmoid gate. A = uniform(1, 16) as HF's init (above 1: A_log > 0), dt_bias around -5
    # (HF's init: ones): with dt_bias 1, exp(g) = exp(-A softplus(a + 1)) falls to 1e-17, the chunked form's cumulative
    # decays lose precision in fp32 (3.9e-4 between the chunked and the recurrent logits) and no state outlives a chunk;
    # at -5 the decays span 0.02-0.999 over prompt 4 and the two forms agree to 4e-5 (MAX_LINEAR_FORM_DIFF).
    # route_fed_tokens: four MoE layers over prompt and fed-back tokens (search_routers_fed). Seed 50000 met the
    # margins and gaps but its two forms differed by 6.3e-5: 50001
    ("qwen3-next", 50001, "Qwen3NextForCausalLM", "qwen3_next",
     dict(H=64, L=4, NH=4, NKV=2, HD=32, F=96, tied=False, theta=10000000, partial_rotary_factor=0.25, interval=4,
          NK=2, NV=4, DK=16, DV=24, K=4, E=8, k=3, Fm=32, Fs=48, norm_topk=True, router_std=0.2, route_fed_tokens=True,
          A_range=(1.0, 16.0), dt_bias_mean=-5.0, a_dtype="F32", dt_dtype="F32", seeded=True), "BF16", "F32"),
    # Qwen3.5's dense shape (Qwen3_5ForConditionalGeneration as transformers 5 saves it: text_config with layer_types
    # listed beside full_attention_interval 2, rope_parameters with mrope_section [1, 1, 1] (rotary_dim int(24 x 0.25) =
    # 6: three frequency pairs) and mrope_interleaved, attn_output_gate; model.language_model.*, stand-in
    # model.visual.* and mtp.*): Qwen3_5GatedDeltaNet's separate in_proj_qkv / in_proj_z / in_proj_b / in_proj_a with 2
    # key and 2 value heads of 16, a dense SwiGLU of 128 on every layer, 4 heads of 24 with 1 kv head (GQA 4), tied
    # (embeddings std 0.25: greedy decoding repeats a token at most 3 times), all BF16 (norms too) but A_log (F32).
    # Seed 51000 failed the margins: 51001
    ("qwen3.5-mm", 51001, "Qwen3_5ForConditionalGeneration", "qwen3_5",
     dict(H=64, L=4, NH=4, NKV=1, HD=24, F=128, tied=True, theta=10000000, partial_rotary_factor=0.25, interval=2,
          mrope_section=[1, 1, 1], NK=2, NV=2, DK=16, DV=16, K=4, A_range=(1.0, 16.0), dt_bias_mean=-5.0,
          a_dtype="F32", dt_dtype="BF16", vision_hidden=8, prefix="model.language_model.", seeded=True),
     "BF16", "BF16"),
    # Qwen3.5-MoE's shape (Qwen3_5MoeForConditionalGeneration as transformers 5 saves it: text_config without
    # intermediate_size or norm_topk_prob, layer_types listed beside full_attention_interval 4, mrope_section [2, 1, 1]
    # over rotary_dim 8): Qwen3_5MoeSparseMoeBlock on every layer (Qwen3VLMoeTextTopKRouter: top-2 of 8 always
    # renormalised), experts stacked (mlp.experts.gate_up_proj (8, 2 x 24, 64), down_proj (8, 64, 24)), shared expert of
    # 40 with its sigmoid gate; split projections with 2 key heads and 4 value heads of 16; untied; BF16 matrices, F32
    # norms, A_log and dt_bias
    ("qwen3.5-moe-mm", 52000, "Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe",
     dict(H=64, L=4, NH=4, NKV=2, HD=32, tied=False, theta=10000000, partial_rotary_factor=0.25, interval=4,
          mrope_section=[2, 1, 1], NK=2, NV=4, DK=16, DV=16, K=4, E=8, k=2, Fm=24, Fs=40, router_std=0.2,
          route_fed_tokens=True, A_range=(1.0, 16.0), dt_bias_mean=-5.0, a_dtype="F32", dt_dtype="F32",
          vision_hidden=8, prefix="model.language_model.", stacked_experts=True, seeded=True), "BF16", "F32"),
    # Qwen3-VL-MoE as released (Qwen3VLMoeForConditionalGeneration, Qwen/Qwen3-VL-30B-A3B-Instruct saved by transformers
    # 4.57: see config_for): qwen3-vl-mm's multimodal checkpoint (text_config with the interleaved mrope, here [6, 5, 5]
    # over head_dim 32 != hidden / heads 16; model.language_model.* beside three stand-in model.visual.* tensors) with
    # Qwen3-MoE's layers (q_norm / k_norm, pre-norm): Qwen3VLMoeTextSparseMoeBlock on layers 0 and 2, a dense
    # Qwen3VLMoeTextMLP of 128 on layer 1 (mlp_only_layers [1]); 8 experts of moe_intermediate_size 24 (2 x 24 = 48 and
    # 24 both != hidden 64: no expert tensor is square, a transposed read fails on the shapes), top-2 always
    # renormalised;
    # the experts fused and transposed as released (mlp.experts.gate_up_proj (8, 64, 48) used as x @ W, gate the first
    # 24 columns; down_proj (8, 24, 64)); untied (lm_head.weight); BF16 matrices, F32 norms. route_fed_tokens: two MoE
    # layers over prompt and fed-back tokens (search_routers_fed). Seed 53000 met the margins and gaps but its greedy
    # decoding repeated one token 11 and 8 times in a row (prompts 3 and 1): 53001 (no token twice in a row, 12 to 16
    # distinct tokens of 16)
    ("qwen3-vl-moe-mm", 53001, "Qwen3VLMoeForConditionalGeneration", "qwen3_vl_moe",
     dict(H=64, L=3, NH=4, NKV=2, HD=32, F=128, tied=False, theta=5000000, mrope_section=[6, 5, 5], E=8, k=2, Fm=24,
          mlp_only_layers=[1], router_std=0.2, route_fed_tokens=True, vision_hidden=8, prefix="model.language_model.",
          seeded=True), "BF16", "F32"),
    # Gemma 1 as released (GemmaForCausalLM, google/gemma-7b-it / gemma-2b-it's config.json: see config_for):
    # models/gemma/modeling_gemma.py: Llama's pre-norm layer (input_layernorm, attention, add; post_attention_layernorm,
    # MLP, add) with GemmaRMSNorm's (1 + w) in fp32, the embeddings times bf16(sqrt(48)) = 6.9375 (GemmaModel's
    # normalizer in the hidden dtype), scores times head_dim^-0.5 with head_dim 16 listed (q width 4 x 16 = 64 != hidden
    # 48, as gemma-7b's 16 x 256 != 3072), no softcaps, no window; GeGLU with gelu_pytorch_tanh (config.json's
    # "hidden_act": "gelu" and no hidden_activation: see reference.Spec); 1 kv head (gemma-2b's multi-query attention);
    # tied (no tie_word_embeddings key, no lm_head tensor); all BF16 as released. Tied: with gemma2-softcap's embed_std
    # 0.1 (x 6.9375) and gains of 1 greedy decoding repeated one token from the start (seeds 54000-54011: 1 to 3
    # distinct tokens of 16 on most prompts); embeddings of std 0.03, o_proj / down_proj x branch_gain 2, and
    # gemma2-softcap's q_proj / k_proj x qk_gain 2 (sharper attention: without it runs of 7 to 16 of one token remained)
    # and final norm around 1 + 2. 54000: no token twice in a row, 13 to 16 distinct tokens of 16. (qk_gain 3 with the
    # final norm around 1 + 4 gave a larger smallest margin, 0.0034, but its hidden states came out 4 times as sensitive
    # to summation order: 9e-5 between reference.py and check_reference's GemmaCheck, against 2.2e-5 here)
    ("gemma", 54000, "GemmaForCausalLM", "gemma",
     dict(H=48, L=3, NH=4, NKV=1, HD=16, F=128, tied=True, theta=10000.0, embed_std=0.03, branch_gain=2.0,
          qk_gain=2.0, final_norm_center=2.0, seeded=True), "BF16", "BF16"),
    # Ministral 3 as released (mistralai/Ministral-3-3B / 8B / 14B-Instruct-2512, BF16, as transformers 5 saves them:
    # see config_for): Mistral3ForConditionalGeneration with a text_config of model_type "ministral3";
    # models/ministral3/modeling_ministral3.py: Mistral's layers (Llama's pre-norm layer, GQA 2, no biases, head_dim 48
    # listed: q width 4 x 48 = 192 != hidden 64, no sliding window, rms_norm_eps 1e-5, untied) with YaRN from
    # rope_parameters (theta 1e9 as released, x16, mscale = mscale_all_dim = 1: attention factor 1) and
    # Ministral3Attention's one step more: after RoPE every query (not the keys) times 1 + beta ln(1 + floor(position /
    # original_max_position_embeddings)). The release has beta 0.1 and a period of 16384 tokens; here beta 0.3 and a
    # period of 16, so that every golden prompt crosses it while decoding (the shortest, 21 tokens + 16, reaches period
    # 2; prompt 4, 144 + 16, period 9: factors 1 to 1 + 0.3 ln 10 = 1.69). The period 16 and not 8:
    # max_position_embeddings = factor x original = 16 x 8 = 128 would be shorter than prompt 4 and its 16 generated
    # tokens (160), and the engine refuses a sequence longer than max_position_embeddings. head_dim 48 and not
    # mistral3-mm's 24: at theta 1e9 and an original context of 16, YaRN's ramp ends at pair ceil(48 ln(16 / 2 pi) / (2
    # ln 1e9)) = 2, so pair 0 keeps its frequency, pair 1 is ramped and the rest are divided by 16 (with 24 the ramp
    # ends at pair 1: none ramped), all three bands as in the release's 128-dim heads. Weights in transformers 5's
    # spelling: model.language_model.* and lm_head.weight beside five stand-in model.vision_tower.* /
    # model.multi_modal_projector.* tensors; BF16 matrices, F32 norms. Seed 55000 passed on the first try
    ("ministral3-mm", 55000, "Mistral3ForConditionalGeneration", "mistral3",
     dict(H=64, L=2, NH=4, NKV=2, HD=48, F=128, tied=False, theta=1e9, vision_hidden=8, prefix="model.language_model.",
          text_model_type="ministral3",
          rope_parameters={"beta_fast": 32.0, "beta_slow": 1.0, "factor": 16.0, "llama_4_scaling_beta": 0.3,
                           "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 16,
                           "rope_type": "yarn", "type": "yarn"},
          seeded=True), "BF16", "F32"),
    # GLM-4.1V-9B-Thinking / GLM-4.6V-Flash as released (Glm4vForConditionalGeneration saved by transformers 4.5x: see
    # config_for): models/glm4v/modeling_glm4v.py's language model, GLM-4-0414's layers (Glm4vTextDecoderLayer:
    # input_layernorm, post_self_attn_layernorm on the attention output, post_attention_layernorm as the MLP's input
    # norm, post_mlp_layernorm on its output; Glm4vTextMLP's fused gate_up_proj, first half gate), Glm4vTextAttention's
    # q/k/v biases (bias=True hard-coded) without an o_proj bias, head_dim = hidden_size // num_attention_heads = 16
    # (no head_dim key: the class takes none), partial_rotary_factor 0.5 (the first 8 of 16 dims rotate) in GLM's
    # adjacent pairs through apply_multimodal_rotary_pos_emb, rope_scaling {"type": "default", "mrope_section": [2, 1,
    # 1]} (the release's [8, 12, 12] over 32 frequencies; here 4 = rotary_dim / 2) beside rope_theta 10000, rms_norm_eps
    # 1e-5, attention_bias true (not read); model.language_model.* and lm_head.weight beside three stand-in
    # model.visual.* tensors; untied; all BF16 as released. Seed 56000 passed on the first try (greedy decoding repeats
    # one token at most 8 times in a row, prompt 1; glm4-interleaved-rope's goldens have runs of 9 and 10)
    ("glm4v-mm", 56000, "Glm4vForConditionalGeneration", "glm4v",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=96, tied=False, theta=10000.0, mrope_section=[2, 1, 1], vision_hidden=8,
          prefix="model.language_model.", seeded=True), "BF16", "BF16"),
    # GLM-4.5V / GLM-4.6V as released (Glm4vMoeForConditionalGeneration saved by transformers 4.5x: see config_for):
    # models/glm4v_moe/modular_glm4v_moe.py's language model, GLM-4.5's layers (Glm4MoeDecoderLayer: input_layernorm and
    # post_attention_layernorm only), Glm4vMoeTextAttention (Glm4Attention: q/k/v biases from attention_bias, default
    # and here true, no o_proj bias, no q/k norm) with the rotate-half pairing on the first 16 of head_dim 32 dims
    # (partial_rotary_factor 0.5; head_dim listed, != hidden / heads 16, as GLM-4.5V's 128 != 4096 / 96) through the
    # multimodal RoPE (rope_scaling {"mrope_section": [2, 3, 3], "rope_type": "default"}, the release's [8, 12, 12]
    # scaled to 8 = rotary_dim / 2); layer 0 a dense Glm4MoeMLP of intermediate_size 96 (first_k_dense_replace 1),
    # layers 1-2 Glm4vMoeTextMoE: glm4-moe's router (sigmoid, F32 mlp.gate.e_score_correction_bias, 4 groups of 2
    # experts keep 2 -- the release has n_group 1 --, top-3 renormalised x routed_scaling_factor 2.5), 8 experts of
    # moe_intermediate_size 24 as per-expert mlp.experts.{e}.gate_proj / up_proj / down_proj (as released), an ungated
    # mlp.shared_experts of 24; no num_nextn_predict_layers and no MTP tensors (Glm4vMoeTextConfig has no MTP key:
    # 5.x removes it, `num_mtp_layers = AttributeError()`); model.visual.* stand-ins; untied; BF16 matrices and norms,
    # F32 correction bias. Seed 57000 passed on the first try
    ("glm4v-moe-mm", 57000, "Glm4vMoeForConditionalGeneration", "glm4v_moe",
     dict(H=64, L=3, NH=4, NKV=2, HD=32, F=96, tied=False, theta=10000.0, mrope_section=[2, 3, 3], E=8, k=3, Fm=24,
          n_shared=1, n_group=4, topk_group=2, scaling=2.5, norm_topk=True, router_std=0.2, bias_std=0.05,
          vision_hidden=8, prefix="model.language_model.", seeded=True), "BF16", "BF16"),
    # Phi-3.5-MoE's shape (PhimoeForCausalLM; config.json as transformers 4.x's save_pretrained writes PhimoeConfig,
    # the release's keys: see config_for). models/phimoe/modeling_phimoe.py (4.46-4.57): PhimoeDecoderLayer (Llama's
    # pre-norm order) with nn.LayerNorm(hidden_size, eps=rms_norm_eps) as input_layernorm, post_attention_layernorm and
    # model.norm (weight AND bias: weights around 1 with std norm_std 0.2, biases std norm_bias_std 0.1, so that
    # RMSNorms or dropped biases show), PhimoeAttention (head_dim = hidden / heads, no key; q/k/v/o_proj biases from
    # attention_bias true as released, std 0.3 as llama-bias's; GQA 2; sliding_window 131072 as released: longer than
    # any sequence here, no effect), PhimoeRotaryEmbedding (LongRoPE, phi3-longrope's short factors with
    # max_position_embeddings 1024 / original_max_position_embeddings 256, but cos and sin times rope_scaling's
    # short_mscale 1.3 (= long_mscale; released 1.243163121016122 for both), not the computed sqrt(1 + ln 4 / ln 256) =
    # 1.118; every golden sequence (at most 144 + 16 tokens) stays within 256: the short factors and short_mscale only),
    # PhimoeSparseMoeBlock on every layer (block_sparse_moe.gate (8, 64), 8 experts of intermediate_size 48 as
    # block_sparse_moe.experts.{e}.w1 / w3 / w2, sparsemixer's top-2 in eval mode: reference.sparsemixer_route), lm_head
    # with a bias (lm_head_bias true as released, std lm_head_bias_std 0.1); untied; BF16 matrices and projection /
    # lm_head biases, F32 LayerNorm weights and biases. router_jitter_noise `jitter` 0.3 (released 0.01): sparsemixer
    # keeps the experts whose (max - s) / max(|s|, max) is at most 2 x jitter; with the released 0.01 a random router's
    # softmaxes would keep the chosen expert alone on most tokens (weights 1: no softmax to check); with 0.3 they keep
    # 2.2 (first) and 1.9 (second, of the other 7) on average, 1 to 6 (golden.json's sparsemixer_kept_mean /
    # _histogram; the ratio does not depend on the logits' scale, router_std 0.3 only sets how unequal the kept
    # experts' softmax shares are). Each router is searched until both the 2nd - 3rd logit gap and every mask
    # decision's distance to the threshold are at least MIN_ROUTING_GAP (routing_gap_parts). Seeds 58000-58004 failed
    # the thresholds; 58005 met them but its greedy decoding repeated one token 9 times in a row (prompt 1);
    # 58006-58009 failed: 58010 (no token twice in a row, 10 to 16 distinct tokens of 16)
    ("phimoe", 58010, "PhimoeForCausalLM", "phimoe",
     dict(H=64, L=3, NH=4, NKV=2, HD=16, F=48, tied=False, theta=10000.0, E=8, k=2, jitter=0.3, router_std=0.3,
          window=131072, max_positions=1024, original_max_positions=256, mscale=1.3,
          rope_scaling={"long_factor": PHI3_LONG_FACTOR, "short_factor": PHI3_SHORT_FACTOR, "type": "longrope"},
          norm_std=0.2, norm_bias_std=0.1, o_bias_std=0.3, lm_head_bias_std=0.1, seeded=True), "BF16", "F32"),
    # Llama 4 Scout / Maverick as released (Llama4ForConditionalGeneration saved by transformers 4.51: see config_for):
    # models/llama4/modeling_llama4.py's language model (Llama4ForCausalLM under language_model.*), Llama's pre-norm
    # layers (Llama4TextRMSNorm input_layernorm / post_attention_layernorm, weights around 1 with std norm_std 0.2, and
    # the final norm), Llama4TextAttention (bias-free q/k/v/o_proj, head_dim 16 listed, GQA 2): no_rope_layers [1, 1, 1, 0]
    # (the released pattern: every fourth layer NoPE) so layers 0-2 rotate (apply_rotary_emb: the adjacent pairs as
    # complex numbers) with the L2 q/k norm after RoPE (use_qk_norm; Llama4TextL2Norm, no weight) and chunked attention
    # (attention_chunk_size 256, longer than every golden sequence: the same as causal), layer 3 takes neither RoPE nor
    # the q/k norm but full causal attention and the temperature tuning of its queries, 1 + attn_scale log1p(floor((pos
    # + 1) / floor_scale)): the release's 0.1 and 8192, here 0.3 and 16, so that the factor grows inside every golden
    # sequence (1 to 1 + 0.3 ln 10 = 1.69 at position 159); rope_theta 5e5 with llama3 scaling x4 from an original 64
    # with low_freq_factor = high_freq_factor = 1 as Scout's (no smoothed band: the frequencies whose wavelength exceeds
    # 64 are divided by 4, pairs 2-7 of 8; pairs 0-1 kept), max_position_embeddings 1024; moe_layers [1, 3] listed beside
    # interleave_moe_layer_step 2 (Maverick's interleaving; the step gives the same list), the other layers dense
    # Llama4TextMLP of intermediate_size_mlp 96; the MoE layers Llama4TextMoe: router feed_forward.router.weight (8, 64),
    # the top-2 LOGITS (released: top-1), sigmoid scores multiplied onto each chosen expert's input, 8 experts of
    # intermediate_size 32 fused and transposed as released (feed_forward.experts.gate_up_proj (8, 64, 64), gate the
    # first 32 columns; down_proj (8, 32, 64); used as x @ W), plus the ungated shared expert of 32
    # (feed_forward.shared_expert.*); four stand-in tensors vision_model.* / multi_modal_projector.linear_1.weight;
    # untied (language_model.lm_head.weight); BF16 matrices, F32 norms. router_std 0.2: the choice ranks logits, and
    # search_routers keeps a gap >= MIN_ROUTING_GAP between the 2nd and 3rd logit. Seed 59000 failed the greedy margin
    # (prompt 4: 0.00017; its routers passed on the first draw): 59001 (no token twice in a row, 15 or 16 distinct
    # tokens of 16)
    ("llama4-mm", 59001, "Llama4ForConditionalGeneration", "llama4",
     dict(H=64, L=4, NH=4, NKV=2, HD=16, F=96, Fm=32, E=8, k=2, tied=False, theta=500000.0, max_positions=1024,
          rope_scaling={"factor": 4.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                        "original_max_position_embeddings": 64, "rope_type": "llama3"},
          no_rope_layers=[1, 1, 1, 0], moe_layers=[1, 3], moe_interval=2, chunk=256, floor_scale=16, temp_scale=0.3,
          router_std=0.2, norm_std=0.2, vision_hidden=8, vision_output=16, seeded=True), "BF16", "F32"),
    # Granite 4.0 without Mamba as released (ibm-granite/granite-4.0-micro, -1b, -350m: GraniteMoeHybridForCausalLM,
    # config.json as transformers 4.56 writes GraniteMoeHybridConfig: see config_for):
    # models/granitemoehybrid/modular_granitemoehybrid.py with layer_types all "attention" (no Mamba-2 layer),
    # position_embedding_type "rope" (GraniteMoeHybridModel builds its rotary embedding only then: the default RoPE at
    # rope_theta 1e7, an integer as released, on every layer), num_local_experts 0 (and num_experts_per_tok 0, as
    # released): GraniteMoeHybridDecoderLayer has no block_sparse_moe and each layer's whole MLP is shared_mlp
    # (GraniteMoeSharedMLP of shared_intermediate_size 96: shared_mlp.input_linear (192, 64), the gate rows then the up
    # rows; shared_mlp.output_linear (64, 96)); intermediate_size 64 (the experts' width: not read without experts; the
    # release has 8192 for both, here they differ so that a reader taking the MLP's width from intermediate_size fails
    # on the shapes, and golden.json's shared_mlp_width_intermediate_size_effect_prompt4 records what it would compute
    # without a shape check); Granite's multipliers (embedding_multiplier 12 and residual_multiplier 0.22 as released,
    # attention_multiplier 0.25 in place of head_dim^-0.5 = 0.354, logits_scaling 4); rms_norm_eps 1e-5 as released
    # (GraniteMoeHybridConfig's default 1e-6); GQA 4; tied as released (no lm_head tensor); all BF16 as released.
    # Tied: the current token's embedding reaches the tied head through the residual (12 e_t . e_t against the
    # branches' e_v . b), so the embeddings are drawn tiny (std 0.012, x 12) and the branches large (o_proj and
    # output_linear x branch_gain 4, q/k x qk_gain 2 for sharper attention), and the final norm around 8 spreads the
    # logits (the tied head's rows are as small as the embeddings). With embeddings of std 0.03 to 0.1 (final norm 1 to
    # 3, gains 1 or 2) greedy decoding repeated the prompt's last token ("\n") from the first step on every prompt; with
    # std 0.005 and the final norm around 32 hidden_last reached 98 and its fp32 rounding 1.3e-4 (check_reference).
    # Seeds 60010-60016 failed the margin: 60017 (no run longer than 4, 11 to 15 distinct tokens of 16, |hidden| <= 24)
    ("granite4-micro", 60017, "GraniteMoeHybridForCausalLM", "granitemoehybrid",
     dict(H=64, L=3, NH=8, NKV=2, HD=8, F=64, Fs=96, E=0, k=0, tied=True, theta=10000000,
          position_embedding_type="rope", embedding_multiplier=12.0, attention_multiplier=0.25,
          residual_multiplier=0.22, logits_scaling=4.0, embed_std=0.012, qk_gain=2.0, branch_gain=4.0,
          final_norm_center=8.0, seeded=True), "BF16", "BF16"),
    # Granite 4.0 with experts and no positional embedding, attention-only (granite-4.0-h-tiny / -small's MoE layers and
    # NoPE attention without their Mamba-2 layers): layer_types all "attention", position_embedding_type null
    # (GraniteMoeHybridConfig's default; GraniteMoeHybridModel.rotary_emb is None, no layer rotates: the released H
    # configs spell it "nope", which transformers reads alike), num_local_experts 4 with num_experts_per_tok 2:
    # GraniteMoeHybridMoE (GraniteMoe's experts of intermediate_size 32 stacked in block_sparse_moe.input_linear (4, 64,
    # 64) / output_linear (4, 64, 32), router block_sparse_moe.router.layer (4, 64): the softmax of the top-2 logits) plus
    # shared_mlp of shared_intermediate_size 48 (input_linear (96, 64), output_linear (64, 48)) added without a gate;
    # multipliers embedding 8, attention 0.125 (head_dim^-0.5 = 0.25), residual 0.3, logits_scaling 2; GQA 2, untied,
    # BF16 matrices, F32 norms. No positions: a query sees its causal keys as a bag, and the six prompts share a long
    # chat template and end alike, so q/k x qk_gain 4 (sharp attention: the user's words must tell the prompts apart)
    # and embeddings of std 0.25 (x 8); with std 0.1 and no gain all six prompts' greedy outputs began alike and two
    # alternated two tokens, with std 0.25 and gain 1 to 3 one to four distinct outputs of six. Seeds: 60020 lies
    # within check_seeds' 200 of granite4-micro's (60010, bumped to 60017), so 61020; 61020 and 61021 failed the
    # thresholds: 61022 (six distinct outputs, three distinct first tokens, no token twice in a row)
    ("granite4-moe-nope", 61022, "GraniteMoeHybridForCausalLM", "granitemoehybrid",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=32, Fs=48, E=4, k=2, tied=False, theta=10000.0,
          position_embedding_type=None, embedding_multiplier=8.0, attention_multiplier=0.125,
          residual_multiplier=0.3, logits_scaling=2.0, embed_std=0.25, qk_gain=4.0, router_std=0.2, seeded=True),
     "BF16", "F32"),
    # Tencent Hunyuan dense as released (Hunyuan-0.5B / 1.8B / 4B / 7B-Instruct: HunYuanDenseV1ForCausalLM, config.json
    # as tencent/Hunyuan-7B-Instruct's: see config_for): models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py, Llama's
    # layers (two RMSNorms, SwiGLU without biases) whose attention applies RoPE to q and k FIRST and THEN the per-head
    # RMSNorms self_attn.query_layernorm / key_layernorm ((head_dim,) weights, around 1 with std qk_norm_std so that
    # the order matters: RoPE turns pairs (i, i + 8), and a weight that differs within a pair does not commute with
    # it); rope_scaling {"type": "dynamic", "alpha": 1000.0} as released, so the default RoPE at base 1e4 x
    # 1000^(16/14) = 2.68e7 (HunYuanDenseV1RotaryEmbedding's DynamicNTKAlpha base; head_dim 16 so that the base matters
    # on prompt 4's ~100 positions); head_dim 16 listed with 8 heads (q width 128 != hidden 64, as Hunyuan-0.5B's
    # 16 x 128 != 1024); GQA 4; tied as released; all BF16 as released.
    # Tied: with the default scales (embeddings std 0.25, unit gains, norms around 1) greedy decoding repeated one token
    # from the first step on four of six prompts (the current token's embedding dominates the tied head), so the
    # embeddings are drawn small (std 0.05), o_proj / down_proj large (branch_gain 4), the final norm around 4 and the
    # q/k norm weights around 2 (std 0.3): after the q/k RMSNorms |q| = |k| is fixed by those weights, which alone set
    # how sharp the attention can be (qk_gain would do nothing). With the q/k norms around 1 the seed had to be bumped
    # and two outputs still cycled a few tokens; around 2, seed 62010 passed first (six distinct outputs, distinct first
    # tokens, no token three times in a row, |hidden| <= 19)
    ("hunyuan-dense", 62010, "HunYuanDenseV1ForCausalLM", "hunyuan_v1_dense",
     dict(H=64, L=3, NH=8, NKV=2, HD=16, F=128, tied=True, theta=10000.0,
          rope_scaling={"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0,
                        "mscale_all_dim": 1.0, "type": "dynamic"},
          embed_std=0.05, branch_gain=4.0, final_norm_center=4.0, qk_norm_center=2.0, qk_norm_std=0.3, seeded=True),
     "BF16", "BF16"),
    # Granite 4.0-H (ibm-granite/granite-4.0-h-micro / -tiny / -small: GraniteMoeHybridForCausalLM, config.json as
    # transformers 4.56 writes GraniteMoeHybridConfig: see config_for):
    # models/granitemoehybrid/modeling_granitemoehybrid.py with Mamba-2 layers (GraniteMoeHybridMambaLayer, Bamba's mixer: reference.mamba_mixer) beside one NoPE attention
    # layer, layer_types ["mamba", "attention", "mamba", "mamba"] (the attention layer not first, so that state layers
    # run before and after it), position_embedding_type "nope" as the released H configs spell it (no layer rotates);
    # the mixer of mamba_expand 2 x hidden 64 = intermediate 128 in mamba_n_heads 8 of mamba_d_head 16, mamba_n_groups 2
    # (head h reads group h // 4 of B and C: more than one group, so that the head -> group map and the gated norm's span
    # matter, transformers normalising all 128 values at once where mamba_ssm / vLLM take each group's 64), mamba_d_state
    # 16, mamba_d_conv 4 with mamba_conv_bias true, mamba_proj_bias false (GraniteMoeHybridConfig's defaults),
    # mamba_chunk_size 8 (the default 256 would put every prompt in one chunk: with 8 the golden values, which come from
    # transformers' chunked scan, span many chunks, prompt 4's 144 tokens 18 of them ending on a boundary, the other
    # prompts ending inside one, and check_reference compares them with the per-token recurrence an engine runs);
    # num_local_experts 0: shared_mlp of 96 is the whole MLP (intermediate_size 64 unread), a dense model as
    # granite-4.0-h-micro; Granite's multipliers as granite4-micro's but attention_multiplier 0.0625 (head_dim 16:
    # head_dim^-0.5 would be 0.25, and the two must differ for the attn_scale what-if); GQA 2; tied as granite4-micro;
    # BF16 matrices, norms and conv1d bias, F32 A_log / D / dt_bias.
    # Mixer init: A = uniform(1, 16) (A_log its log, Mamba-2's A_init_range), dt_bias around -4 (std 1) with in_proj's dt
    # rows x 0.5, so that dt = softplus(dt_raw + dt_bias) spans about 0.001 to 0.5 and exp(dt A) 0.03 to 0.996 on prompt
    # 4; D around 1 (std 0.5), conv weights and bias std 0.5, the gated norm's w around 1 (std 0.2); each of
    # granite_hybrid_what_ifs' mixer readings changes prompt 4's logits by 0.8 to 2.5. Tied: embeddings std 0.025 (x 12),
    # branches x branch_gain 4, q/k x 2, final norm around 8 (granite4-micro's 0.012 left every logit within 1 and the
    # smallest greedy margin at 0.0006; 0.04 made two prompts repeat a token); seed 63014 passed first (six distinct
    # outputs, 10 to 15 distinct tokens of 16, |hidden| <= 33, chunked scan = recurrence within 1.5e-6)
    ("granite4-h", 63014, "GraniteMoeHybridForCausalLM", "granitemoehybrid",
     dict(H=64, L=4, NH=4, NKV=2, HD=16, F=64, Fs=96, E=0, k=0, tied=True, theta=10000000,
          layer_types=["mamba", "attention", "mamba", "mamba"], position_embedding_type="nope",
          mamba=dict(chunk_size=8, conv_bias=True, d_conv=4, d_head=16, d_state=16, expand=2, n_groups=2, n_heads=8,
                     proj_bias=False),
          embedding_multiplier=12.0, attention_multiplier=0.0625, residual_multiplier=0.22, logits_scaling=4.0,
          embed_std=0.025, qk_gain=2.0, branch_gain=4.0, final_norm_center=8.0, A_range=(1.0, 16.0),
          dt_bias_mean=-4.0, dt_bias_std=1.0, dt_proj_gain=0.5, conv_std=0.5, conv_bias_std=0.5, D_mean=1.0, D_std=0.5,
          seeded=True), "BF16", "BF16"),
    # Granite 4.0-H with experts (ibm-granite/granite-4.0-h-tiny / -small's shape: GraniteMoeHybridForCausalLM, Mamba-2
    # layers AND GraniteMoeHybridMoE; config.json as transformers 4.56 writes GraniteMoeHybridConfig: see config_for):
    # granite4-h's Mamba-2 layers with granite4-moe-nope's MLP. layer_types ["mamba", "mamba", "attention", "mamba"]
    # (two state layers before the NoPE attention layer, one after), position_embedding_type "nope" as released; the
    # mixer of mamba_expand 2 x hidden 64 = intermediate 128 in mamba_n_heads 4 of mamba_d_head 32 (an integer in
    # config.json, as the released configs write it), mamba_n_groups 1 as released (every head reads the one group of B
    # and C: no group what-ifs, granite4-h has them), mamba_d_state 32, mamba_d_conv 4 with mamba_conv_bias true,
    # mamba_proj_bias false, mamba_chunk_size 16 (prompt 4's 144 tokens span 9 chunks, the other prompts end inside one);
    # every layer GraniteMoeHybridMoE: 4 experts of intermediate_size 32 top-2 (block_sparse_moe.input_linear (4, 64,
    # 64) / output_linear (4, 64, 32), router block_sparse_moe.router.layer (4, 64): the softmax of the top-2 logits)
    # plus the ungated shared_mlp of shared_intermediate_size 48; the what-ifs add num_experts_per_tok read as 1 (top-1)
    # beside no shared_mlp. Granite's multipliers unlike granite4-h's and granite4-moe-nope's (embedding 10, attention
    # 0.09375 in place of head_dim^-0.5 = 0.25, residual 0.25, logits_scaling 5); 4 heads, 1 kv head (GQA 4); untied
    # (lm_head.weight, as granite-4.0-h-tiny / -small ship); BF16 matrices, norms and conv1d bias, F32 A_log / D /
    # dt_bias as granite4-h; its mixer init. NoPE attention and six prompts sharing a long chat template: q/k x qk_gain 4
    # (sharp attention) and embeddings of std 0.05 (x 10) beside unit branches; with std 0.1 and q/k x 2 the greedy
    # outputs of two prompts were equal and all six began alike, with std 0.25 all six were one output of 6 distinct
    # tokens. logits_scaling 5 rather than 3: the same greedy ids, margins x 0.6, and the chunked scan's distance from
    # the recurrence (mamba_chunked_vs_recurrent) 4.8e-6 instead of 8.1e-6, further under MAX_MAMBA_FORM_DIFF. Seeds
    # 64018 to 64081 failed the margin or the routing gaps: 64082 (smallest greedy margin 0.0034, six distinct outputs,
    # two distinct first tokens, no token three times in a row; in every layer each expert chosen by 58 to 88 of prompt
    # 4's 144 tokens, all six pairs used)
    ("granite4-h-moe", 64082, "GraniteMoeHybridForCausalLM", "granitemoehybrid",
     dict(H=64, L=4, NH=4, NKV=1, HD=16, F=32, Fs=48, E=4, k=2, tied=False, theta=10000000,
          layer_types=["mamba", "mamba", "attention", "mamba"], position_embedding_type="nope",
          mamba=dict(chunk_size=16, conv_bias=True, d_conv=4, d_head=32, d_state=32, expand=2, n_groups=1, n_heads=4,
                     proj_bias=False),
          embedding_multiplier=10.0, attention_multiplier=0.09375, residual_multiplier=0.25, logits_scaling=5.0,
          embed_std=0.05, qk_gain=4.0, router_std=0.2, A_range=(1.0, 16.0),
          dt_bias_mean=-4.0, dt_bias_std=1.0, dt_proj_gain=0.5, conv_std=0.5, conv_bias_std=0.5, D_mean=1.0, D_std=0.5,
          seeded=True), "BF16", "BF16"),
    # Liquid AI's LFM2 (Lfm2ForCausalLM, LFM2-350M / 700M / 1.2B / 2.6B; config.json in the releases' spelling, the
    # original LFM2 keys beside transformers' ones: see lfm2_config): models/lfm2/modeling_lfm2.py, gated short
    # convolutions (Lfm2ShortConv: in_proj's rows B | C | x, B x through a depthwise causal conv of conv_L_cache 3 without
    # bias or activation, times C, out_proj) beside attention layers with per-head q_layernorm / k_layernorm before RoPE
    # (rope_theta 1e6), layer_types ["conv", "conv", "full_attention", "conv", "full_attention"] (two conv layers first,
    # as LFM2-1.2B begins, one between the attention layers); Lfm2MLP's width adjusted from block_ff_dim 192 (=
    # intermediate_size): int(2 x 192 / 3) = 128, times block_ffn_dim_multiplier 1.0, rounded up to block_multiple_of 32:
    # 128 (a reader of intermediate_size without the rule would want 192 rows); 4 heads of 16, 2 kv heads (GQA 2);
    # LFM2's names (operator_norm, ffn_norm, conv.*, self_attn.out_proj, feed_forward.w1 / w3 / w2,
    # model.embedding_norm); tied as released; all BF16 (norms too)
    ("lfm2", 65000, "Lfm2ForCausalLM", "lfm2",
     dict(H=64, L=5, NH=4, NKV=2, HD=16, F=192, tied=True, theta=1000000.0,
          layer_types=["conv", "conv", "full_attention", "conv", "full_attention"], conv_L_cache=3,
          auto_adjust_ff_dim=True, ffn_dim_multiplier=1.0, multiple_of=32, seeded=True), "BF16", "BF16"),
    # Liquid AI's LFM2-MoE (Lfm2MoeForCausalLM, LFM2-8B-A1B; config.json as transformers 4.57 writes Lfm2MoeConfig: see
    # lfm2_moe_config): models/lfm2_moe/modular_lfm2_moe.py, LFM2's layers (Lfm2ShortConv with conv_L_cache 3, Lfm2Attention
    # with per-head q_layernorm / k_layernorm before RoPE at rope_theta 1e6, operator_norm / ffn_norm / embedding_norm) in
    # layer_types ["conv", "full_attention", "conv", "conv", "full_attention"] (an attention layer among the dense ones,
    # one among the MoE ones); num_dense_layers 2: layers 0-1 take Lfm2MoeMLP(intermediate_size=config.intermediate_size)
    # of 96 AS IT STANDS (LFM2's rule would make it int(2 x 96 / 3) = 64, rounded up to block_multiple_of), layers 2-4
    # Lfm2MoeSparseMoeBlock: 8 experts of moe_intermediate_size 32, s = sigmoid(h W^T), the top 2 of s +
    # feed_forward.expert_bias (F32 (8,), std bias_std: about the spread of s, so that it changes the experts of a good
    # share of the tokens: golden.json's router_changed_tokens_prompt4), weights s / (their sum + 1e-6) (norm_topk_prob)
    # x routed_scaling_factor 1.5 (not 1, so that the factor shows); the released per-expert names
    # feed_forward.experts.{e}.w1 / w3 / w2 and feed_forward.gate; 4 heads of 16, 2 kv heads (GQA 2); tied as released;
    # BF16 weights (norms too), F32 expert_bias. router_std 0.25 (minimax-m2's). Seeds 66000 to 66005 failed the
    # thresholds (build_one also wants every expert chosen over prompt 4 in every MoE layer): 66006
    ("lfm2-moe", 66006, "Lfm2MoeForCausalLM", "lfm2_moe",
     dict(H=64, L=5, NH=4, NKV=2, HD=16, F=96, Fm=32, E=8, k=2, tied=True, theta=1000000.0,
          layer_types=["conv", "full_attention", "conv", "conv", "full_attention"], conv_L_cache=3, num_dense_layers=2,
          routed_scaling_factor=1.5, router_std=0.25, bias_std=0.2, seeded=True), "BF16", "BF16"),
    # NVIDIA's Nemotron-H (NemotronHForCausalLM: Nemotron-H-8B / 4B, NVIDIA-Nemotron-Nano-9B-v2 / 12B-v2; config.json in
    # nvidia/Nemotron-H-8B-Base-8K's spelling: see nemotron_h_config): models/nemotron_h/modular_nemotron_h.py,
    # NemotronHBlock (one RMSNorm and one mixer per layer, x + mixer(norm(x))), NemotronHMamba2Mixer (zamba2's
    # Zamba2MambaMixer.torch_forward with Zamba2RMSNormGated), NemotronHAttention (JambaAttention: no positions) and
    # NemotronHMLP (NemotronMLP: down(relu(up x)^2), no gate); reference.nemotron_h_layers / nemotron_h_block.
    # hybrid_override_pattern "M-M*-" (a Mamba-2 layer first, MLP layers after it and last, the attention layer between
    # state layers and an MLP, as the releases interleave them; no "E": NemotronHMoE is not covered); the mixer of
    # mamba_num_heads 8 x mamba_head_dim 8 = 64 (expand 2 listed and not read: expand x hidden would be 128),
    # n_groups 2 (head h reads group h // 4, and Zamba2RMSNormGated normalises each group's 32 values on its own:
    # more than one group so that both matter), ssm_state_size 16, conv_kernel 4 with use_conv_bias, chunk_size 8
    # (prompt 4's 144 tokens span 18 chunks, the other prompts end inside one; check_reference compares the chunked
    # scan with the per-token recurrence), time_step_min 0.01: torch_forward floors dt there, so dt_bias is drawn
    # around -3.5 (std 1) with in_proj's dt rows x 0.2: softplus(dt_raw + dt_bias) falls under 0.01 for 373 and 13
    # of prompt 4's 1152 (token, head) values in layers 0 and 2 (golden.json's mamba_dt_floored_prompt4), and dt
    # spans 0.01 to 0.38; A uniform(1, 8), D around 1 (std 0.5), conv weights and bias std 0.5, the gated norm's w
    # around 1 (std 0.2). 4 heads of attention_head_dim 16 (= hidden / heads, so that head_dim's fallback agrees),
    # 2 kv heads (GQA 2); intermediate_size 96; untied (lm_head.weight) as released; BF16 matrices, norms and conv
    # bias, F32 A_log / D / dt_bias as the releases keep them. Each of nemotron_h_what_ifs changes prompt 4's logits
    # by 0.24 (the dt floor) to 11.5 (the D skip). Tuning: dt_bias around -4 (std 1.5) with the dt rows x 0.5 floored
    # 66% of layer 0's values, and with the final norm around 1 (logits up to 27 through the untied head) the chunked
    # scan's distance from the recurrence was 1.3e-5, over MAX_MAMBA_FORM_DIFF: that distance is fp32 rounding carried
    # to the logits and grows with them, so the final norm is drawn around 0.3 (max |logit| 9.8 on prompt 4,
    # distance 4.3e-6) and q/k x qk_gain 2; with A uniform(1, 16) seed 67000's smallest greedy margin was 0.0019,
    # with (1, 8) seed 67000 passed first (smallest margin 0.0115, six distinct outputs, three distinct first tokens,
    # no two outputs sharing more than their first two tokens, |hidden| <= 9)
    ("nemotron-h", 67000, "NemotronHForCausalLM", "nemotron_h",
     dict(H=64, L=5, NH=4, NKV=2, HD=16, F=96, tied=False, pattern="M-M*-",
          mamba=dict(num_heads=8, head_dim=8, n_groups=2, state_size=16, conv_kernel=4, expand=2, chunk_size=8,
                     conv_bias=True, time_step_min=0.01, time_step_max=0.1, time_step_floor=0.0001),
          A_range=(1.0, 8.0), dt_bias_mean=-3.5, dt_bias_std=1.0, dt_proj_gain=0.2, conv_std=0.5, conv_bias_std=0.5,
          D_mean=1.0, D_std=0.5, qk_gain=2.0, final_norm_center=0.3, seeded=True), "BF16", "BF16"),
    # Nemotron-H with MoE blocks (NVIDIA-Nemotron-3-Nano-30B-A3B; config.json in
    # nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16's spelling, transformers 4.55.4: see nemotron_h_moe_config):
    # models/nemotron_h/modular_nemotron_h.py NemotronHMoE (a DeepseekV3MoE: NemotronHTopkRouter =
    # DeepseekV3TopkRouter's fp32 logits, route_tokens_to_experts' sigmoid choice on s + e_score_correction_bias within
    # the best topk_group of n_group groups, s renormalised + 1e-20, x routed_scaling_factor), NemotronHExperts (up_proj
    # / down_proj only, relu2) and the shared NemotronHMLP; reference.nemotron_h_block / nemotron_h_expert. Pattern
    # "ME*EM-": a Mamba-2 layer, MoE, attention, MoE, Mamba-2 and a dense "-" MLP last (intermediate_size 96 beside the
    # experts' 32 and the shared expert's 48, so that an engine cannot take one width for another); 8 experts, top-2,
    # n_group = topk_group = 1 as released, routed_scaling_factor 2.5; e_score_correction_bias F32 std bias_std 0.2
    # (without it prompt 4's tokens take other experts for 51 and 106 of their 144 in layers 1 and 3), router std 0.35
    # (every expert chosen by 5 to 87 of prompt 4's tokens in each MoE layer); the Mamba-2 mixer and attention as
    # nemotron-h's (head_dim 16 under its Nano key, 2 kv heads, n_groups 2, chunk 8, time_step_min 0.01: the floor
    # raises 216 and 272 of prompt 4's 1152 dt values in layers 0 and 4). Untied; BF16 matrices and norms, F32 A_log / D
    # / dt_bias / e_score_correction_bias. Tuning: with router_std 0.25 and nemotron-h's dt_bias_mean -3.5 the floor
    # raised none of layer 4's values; with -3.8 seed 68000 passed at a greedy margin of 0.0014 with two distinct first
    # tokens; with router_std 0.35 and dt_bias_mean -4.0 seeds 68000 and 68001 failed the routing gap over the fed-back
    # tokens (1.8e-4, 9.5e-4) and 68002 passed (smallest greedy margin 0.0095, routing gaps 0.0024 / 0.0022 generated,
    # six distinct outputs, five distinct first tokens, no two outputs sharing more than their first token, max |logit|
    # 8.6, |hidden| <= 19). Each what-if changes prompt 4's logits by 6.66 (plain ReLU) to 11.5 (no D); the router's: no
    # bias 8.94, softmax 10.1, not renormalised 6.70, x 1 7.58, top-1 9.51, no shared expert 7.98
    ("nemotron-h-moe", 68002, "NemotronHForCausalLM", "nemotron_h",
     dict(H=64, L=6, NH=4, NKV=2, HD=16, F=96, tied=False, pattern="ME*EM-",
          mamba=dict(num_heads=8, head_dim=8, n_groups=2, state_size=16, conv_kernel=4, expand=2, chunk_size=8,
                     conv_bias=True, time_step_min=0.01, time_step_max=0.1, time_step_floor=0.0001),
          moe=dict(E=8, Fm=32, k=2, Fs=48, n_group=1, topk_group=1, routed_scaling_factor=2.5),
          router_std=0.35, bias_std=0.2,
          A_range=(1.0, 8.0), dt_bias_mean=-4.0, dt_bias_std=1.0, dt_proj_gain=0.2, conv_std=0.5, conv_bias_std=0.5,
          D_mean=1.0, D_std=0.5, qk_gain=2.0, final_norm_center=0.3, seeded=True), "BF16", "BF16"),
    # Arcee's AFM-4.5B (ArceeForCausalLM; config.json shaped after arcee-ai/AFM-4.5B's: see config_for):
    # models/arcee/modular_arcee.py, Llama's layers (LlamaAttention, LlamaRMSNorm, LlamaDecoderLayer) with ArceeMLP =
    # NemotronMLP, down_proj(relu(up_proj(x))^2): no gate_proj in the file; reference.ungated_mlp. GQA 2 (4 heads of 16,
    # head_dim listed = hidden / heads as AFM's), untied; rope_scaling YaRN x4 from 64 at theta 1e4 (max_position_embeddings
    # 256 = 4 x 64): at head_dim 16 pair 0 kept, 1-2 ramped, 3-7 divided, cos / sin x (0.1 ln 4 + 1); all BF16 as AFM
    # ships. What-ifs (golden.json's *_effect_prompt4): the activation read as SiLU (LlamaConfig's default hidden_act;
    # still ungated: there is no gate_proj to gate with), as a plain ReLU, plain RoPE, YaRN's frequencies without the
    # attention factor
    ("arcee", 69000, "ArceeForCausalLM", "arcee",
     dict(H=64, L=3, NH=4, NKV=2, HD=16, F=128, tied=False, theta=10000.0,
          rope_scaling={"beta_fast": 32.0, "beta_slow": 1.0, "factor": 4.0, "mscale": 1.0,
                        "original_max_position_embeddings": 64, "rope_type": "yarn", "type": "yarn"},
          seeded=True), "BF16", "BF16"),
    # rednote-hilab's dots.llm1 (Dots1ForCausalLM; config.json shaped after dots.llm1.inst's: see config_for):
    # models/dots1/modular_dots1.py, Qwen3's attention (q_norm / k_norm RMSNorms over each head's head_dim before RoPE;
    # head_dim 24 with 4 heads: q width 96 != hidden 64; 2 kv heads) in DeepSeek-V3's decoder layer: layer 0 (<
    # first_k_dense_replace 1) a gated SiLU MLP of intermediate_size 128, layers 1-3 Dots1MoE: Dots1TopkRouter (fp32
    # logits, s = sigmoid, the choice on s + the F32 mlp.gate.e_score_correction_bias (std bias_std) within the best
    # topk_group 1 of n_group 2 groups of 4 experts (a group scores the sum of its two best), top-2, the chosen s / (sum
    # + 1e-20) (norm_topk_prob) x routed_scaling_factor 2.5) over 8 per-expert SwiGLU experts of 32, plus
    # mlp.shared_experts of 1 x 32 (no gate on it); sliding_window 16 with max_window_layers 2 and no layer_types: layers
    # 2-3 slide, 0-1 are full (every golden prompt, 21 to 144 tokens, is longer than the window); untied; BF16 matrices
    # and norms, F32 correction bias. What-ifs: the router's (no correction bias, no group limit, routed_scaling_factor
    # 1, softmax scores, not renormalised, top-1, no shared expert), no window, the window on layers < max_window_layers
    # instead, the q/k norms after RoPE
    ("dots1", 70000, "Dots1ForCausalLM", "dots1",
     dict(H=64, L=4, NH=4, NKV=2, HD=24, F=128, tied=False, theta=10000.0, E=8, k=2, Fm=32, n_shared=1, n_group=2,
          topk_group=1, scaling=2.5, norm_topk=True, router_std=0.2, bias_std=0.1, window=16, max_window_layers=2,
          first_k_dense=1, seeded=True), "BF16", "BF16"),
    # Tencent Hunyuan-A13B (HunYuanMoEV1ForCausalLM; config.json in tencent/Hunyuan-A13B-Instruct's spelling with
    # transformers' model_type: see config_for): models/hunyuan_v1_moe/modular_hunyuan_v1_moe.py, hunyuan-dense's
    # attention (HunYuanMoEV1Attention: q/k RMSNorms self_attn.query_layernorm / key_layernorm (head_dim,) AFTER RoPE,
    # around qk_norm_center with std qk_norm_std as there) and RoPE (rope_scaling {"type": "dynamic", "alpha": 1000.0,
    # ...}: base 1e4 x 1000^(24/22)), head_dim 24 with 4 heads (q width 96 != hidden 64; attention_head_dim listed beside
    # it, as released), 2 kv heads; every layer HunYuanMoEV1Moe: the fp32 router mlp.gate.wg (E, H) stored F32 (the
    # nn.Linear is built with dtype=torch.float32), softmax over 8 experts, top-2 renormalised, experts of
    # intermediate_size 48 (2 x 48 != hidden 64, so that transformers 5's stacked (E, 2I, H) layout is unambiguous) per
    # expert as released, plus mlp.shared_mlp of intermediate_size added without a gate; tied as released
    # (hunyuan-dense's small embeddings, branch gain and final norm for the tied head); BF16 weights and norms, F32
    # router. What-ifs: hunyuan-dense's four (q/k norms before RoPE, none, plain RoPE at rope_theta, base rope_theta x
    # alpha), the sigmoid in place of the softmax, the top-k not renormalised, top-1, no shared_mlp. Seeds 71000 to
    # 71038 failed the thresholds (the margins, the routing gaps over the prompt and fed-back tokens, every expert chosen
    # over prompt 4 in every layer): 71039 (smallest greedy margin 0.0075, routing gaps 0.0010 / 0.0020, six distinct
    # outputs)
    ("hunyuan-moe", 71039, "HunYuanMoEV1ForCausalLM", "hunyuan_v1_moe",
     dict(H=64, L=3, NH=4, NKV=2, HD=24, F=48, E=8, k=2, tied=True, theta=10000.0,
          rope_scaling={"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0,
                        "mscale_all_dim": 1.0, "type": "dynamic"},
          embed_std=0.05, branch_gain=4.0, final_norm_center=4.0, qk_norm_center=2.0, qk_norm_std=0.3, router_std=0.2,
          seeded=True), "BF16", "BF16"),
    # the Swiss AI Initiative's Apertus (ApertusForCausalLM; config.json shaped after swiss-ai/Apertus-8B-2509's: see
    # config_for): models/apertus/modular_apertus.py, Llama's pre-norm layers with the two norms named
    # attention_layernorm / feedforward_layernorm, ApertusAttention = LlamaAttention plus Qwen3's q_norm / k_norm over
    # each head's head_dim BEFORE RoPE, ApertusMLP = NemotronMLP's ungated down_proj(act_fn(up_proj(x))) (no gate_proj,
    # no biases) with act_fn XIELUActivation: per layer `mlp.act_fn.alpha_p` (1,) and `alpha_n` (1,) (stored before the
    # softplus), `beta` () and `eps` () (0-d buffers), all BF16 as released; reference.xielu. `xielu`: per layer the
    # stored (alpha_p, alpha_n, beta, eps), BF16-exact, each layer's different and none transformers' defaults (0.8 /
    # 0.3 after the softplus, beta 0.5): softplus(alpha_p) 0.4287 / 1.1369 / 0.6326, beta + softplus(alpha_n) 0.5764 /
    # 1.4509 / 0.9116, beta 0.375 / 0.625 / 0.4375, eps -1e-6 (bf16 -9.98e-7) on layers 0-1 and -0.0625 on layer 2 (its
    # negative branch flat at expm1(eps) for x in (eps, 0]: 420 of prompt 4's 18432 inputs there). rope_scaling llama3
    # x8 from 64 at theta 10000 (an integer, as the release's 12000000): at head_dim 16 pair 0 kept, 1-2 smoothed, 3-7
    # divided; max_position_embeddings 512 = 8 x 64 (the release's 65536 = 8 x 8192). GQA 2, untied, all BF16. What-ifs
    # (golden.json's *_effect_prompt4): SiLU in place of xIELU (still ungated) 17.3, transformers' default parameters in
    # place of the stored ones 13.4, alpha_p / alpha_n without the softplus 31.4, eps -1e-6 on every layer 0.070, the
    # q/k norms after RoPE 3.12, plain RoPE 7.24; the parameters rounded as bf16 parameters are (softplus and the beta
    # add in bf16, as a model held in bf16 takes them): 0.063 (xielu_bf16_parameters_change_prompt4). Seeds 72000 to
    # 72003 passed the margins but with degenerate greedy outputs (72000: five of six start with eos; 72001: one first
    # token for all six; 72002 / 72003: outputs of one or two tokens repeated): 72004 (smallest greedy margin 0.0087,
    # six distinct outputs, three distinct first tokens, no eos)
    ("apertus", 72004, "ApertusForCausalLM", "apertus",
     dict(H=64, L=3, NH=4, NKV=2, HD=16, F=128, tied=False, theta=10000,
          rope_scaling={"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                        "original_max_position_embeddings": 64, "rope_type": "llama3", "type": "llama3"},
          xielu=((-0.625, -1.5, 0.375, -1e-6), (0.75, 0.25, 0.625, -1e-6), (-0.125, -0.5, 0.4375, -0.0625)),
          seeded=True), "BF16", "BF16"),
    # Z.ai's GLM-4.7-Flash (Glm4MoeLiteForCausalLM; config.json as transformers 5 writes Glm4MoeLiteConfig plus the keys
    # zai-org/GLM-4.7-Flash's lists: see config_for): models/glm4_moe_lite/modular_glm4_moe_lite.py, DeepSeek-V3's
    # multi-head latent attention (Glm4MoeLiteAttention = DeepseekV3Attention: q_a_proj / q_a_layernorm / q_b_proj of
    # q_lora_rank 40, kv_a_proj_with_mqa (latent 20 + one shared k_pe of 8) / kv_a_layernorm / kv_b_proj, per head
    # qk_nope 24 + qk_rope 8 = q/k head 32 = v head 32 as released (192 + 64 = 256 = 256), the rope tail interleaved,
    # scores x 32^-0.5) in GLM-4.5's decoder layer: mlp_layer_types ["dense", "sparse", "sparse"] (Glm4MoeLiteConfig's
    # default, listed) beside the release's first_k_dense_replace 1 (unread by transformers), layer 0 a SwiGLU of 128,
    # layers 1-2 Glm4MoeLiteMoE: the sigmoid router with an F32 e_score_correction_bias (std bias_std) over 8 per-expert
    # SwiGLU experts of 48 in one group (n_group = topk_group = 1, as released), top-4 (as released) renormalised x
    # routed_scaling_factor 1.8, plus mlp.shared_experts of 1 x 48; RoPE from transformers 5's rope_parameters {default,
    # theta 1e6} (no top-level rope_theta); rms_norm_eps 1e-5 against the latent norms' 1e-6 (latent_scale, as
    # deepseek-v3-qproj's, so that the latent norm's eps shows); num_nextn_predict_layers 1 with a whole MTP layer
    # model.layers.3.* as released (mtp_full_layer: embed_tokens, enorm, hnorm, eh_proj, shared_head.norm /
    # .head and a full MoE decoder layer: transformers ignores it, an export copies it); untied; BF16 matrices and
    # norms, F32 correction bias. What-ifs (golden.json's *_effect_prompt4): MLA's (the rope layout, kv_a_layernorm /
    # q_a_layernorm at 1, rms_norm_eps as the latent eps), the router's (no correction bias, routed_scaling_factor 1), no
    # shared expert, RoPE at theta 1e4 (rope_parameters unread). Seeds 73000 and 73001 failed the thresholds (greedy
    # margins / routing gaps): 73002 (smallest greedy margin 0.0190, routing gaps 0.0015 / 0.0010, six distinct outputs,
    # five distinct first tokens, no eos)
    ("glm4-moe-lite", 73002, "Glm4MoeLiteForCausalLM", "glm4_moe_lite",
     dict(H=64, L=3, NH=4, NKV=4, HD=32, F=128, tied=False, theta=1000000.0, E=8, k=4, Fm=48, n_shared=1,
          n_group=1, topk_group=1, scaling=1.8, norm_topk=True, router_std=0.2, bias_std=0.05,
          q_lora_rank=40, kv_lora_rank=20, qk_nope=24, qk_rope=8, v_head_dim=32, max_positions=2048,
          rms_norm_eps=1e-05, latent_norm_std=0.3, latent_scale=0.004, mtp_full_layer=True, seeded=True),
     "BF16", "BF16"),
    # LLaVA's generic wrapper with Pixtral-12B's shape (LlavaForConditionalGeneration; config.json and names as
    # mistral-community/pixtral-12b ships them: see config_for): models/llava/modeling_llava.py runs whatever text family
    # text_config.model_type names, here "mistral": MistralModel unchanged (Llama's pre-norm layers, SwiGLU, no biases)
    # on text_config's numbers, head_dim 16 listed with 8 heads (q width 128 != hidden 64), GQA 4 (the release's 32 / 8),
    # rope_theta 1e9, rms_norm_eps 1e-5, sliding_window null, max_position_embeddings 1024000 as released; weights
    # language_model.model.* and language_model.lm_head.weight (untied) beside seven stand-ins vision_tower.* /
    # multi_modal_projector.linear_1 / linear_2 (with biases, as Pixtral-12B's); all BF16 as released. What-ifs
    # (golden.json's *_effect_prompt4): the RoPE at 10000 (rope_theta not found at the top level), a window of 16
    # where text_config says null
    ("llava-mm", 74000, "LlavaForConditionalGeneration", "llava",
     dict(H=64, L=2, NH=8, NKV=2, HD=16, F=128, tied=False, theta=1e9, max_positions=1024000, vision_hidden=8,
          seeded=True), "BF16", "BF16"),
    # InternVL's wrapper as OpenGVLab/InternVL3-1B-hf ships it (InternVLForConditionalGeneration saved by transformers
    # 4.52: see config_for): models/internvl/modeling_internvl.py runs the text family text_config.model_type names,
    # here "qwen2" (InternVL3-1B / 2B / 8B's Qwen2.5): Qwen2Model unchanged, q/k/v biases, no head_dim key (hidden /
    # heads), rope_theta 1e6, rms_norm_eps 1e-6, use_sliding_window false, the token ids in text_config only; weights
    # model.language_model.* and lm_head.weight (untied, as InternVL3-1B: its 0.9B parameters count a head of its
    # own) beside seven stand-ins model.vision_tower.* / model.multi_modal_projector.* (transformers 4.52's names); GQA
    # 2, all BF16 as released. What-ifs: the RoPE at 10000, no q/k/v biases (the text model read as a Llama)
    ("internvl-mm", 75000, "InternVLForConditionalGeneration", "internvl",
     dict(H=64, L=2, NH=4, NKV=2, HD=16, F=128, tied=False, theta=1000000.0, max_positions=32768,
          vision_hidden=8, prefix="model.language_model.", seeded=True), "BF16", "BF16"),
    # Nemotron-H with LatentMoE blocks (NVIDIA-Nemotron-3-Super; config.json in nemotron-h-moe's NVIDIA-Nemotron-3-Nano
    # spelling plus "moe_latent_size": see nemotron_h_moe_config): models/nemotron_h/modular_nemotron_h.py NemotronHMoE
    # with moe_latent_size set, reference.moe_block: the router reads the block input h (64 wide) as in nemotron-h-moe,
    # mixer.fc1_latent_proj (24, 64) takes h down to the latent, the routed NemotronHExperts (up_proj (32, 24), down_proj
    # (24, 32) per expert, relu2) and their weighted sum stay 24 wide, mixer.fc2_latent_proj (64, 24) takes the sum back
    # to 64, and the shared expert (48 wide, on h itself) is added. Latent 24 != hidden 64 != moe_intermediate_size 32 !=
    # shared 48 != dense 96, so that no width can stand in for another; fc1 std 1 / sqrt(64), fc2 std 1 / sqrt(24), the
    # experts' up_proj 1 / sqrt(24) (the other matrices' fan-in scale). Pattern "MEM*E-": a Mamba-2 layer, MoE, Mamba-2,
    # attention, MoE and a dense "-" MLP last (Super interleaves Mamba-2 and LatentMoE layers with an attention layer
    # now and then); 8 experts, top-2, n_group = topk_group = 1, routed_scaling_factor 2.5; the router, Mamba-2 mixer and
    # attention tuned as nemotron-h-moe's (the floor raises 344 and 284 of prompt 4's 1152 dt values in layers 0 and 2).
    # What-ifs besides nemotron-h-moe's (nemotron_h_latent_what_ifs): fc2_latent_proj at 0 (the routed path left out,
    # the shared expert alone) 8.85, fc1 / fc2 read as each other's transpose 10.3; no shared expert 8.44, no correction
    # bias 10.8. Seeds 76000 to 76002 failed build_one's thresholds; 76003 passed them (smallest greedy margin 0.0041)
    # but check_reference's chunked-scan bound at chunk size 7 (1.0e-5 > 1e-5); 76004 passes both (smallest greedy margin
    # 0.0079, routing gaps 0.0010 / 0.0022 generated, scan distances 7.0e-6 / 7.7e-6 / 6.7e-6 at chunks 8 / 7 / 11, six
    # distinct outputs, four distinct first tokens, no two sharing more than two tokens, max |logit| 5.4, |hidden| <= 12)
    ("nemotron-h-latent-moe", 76004, "NemotronHForCausalLM", "nemotron_h",
     dict(H=64, L=6, NH=4, NKV=2, HD=16, F=96, tied=False, pattern="MEM*E-",
          mamba=dict(num_heads=8, head_dim=8, n_groups=2, state_size=16, conv_kernel=4, expand=2, chunk_size=8,
                     conv_bias=True, time_step_min=0.01, time_step_max=0.1, time_step_floor=0.0001),
          moe=dict(E=8, Fm=32, k=2, Fs=48, n_group=1, topk_group=1, routed_scaling_factor=2.5, latent=24),
          router_std=0.35, bias_std=0.2,
          A_range=(1.0, 8.0), dt_bias_mean=-4.0, dt_bias_std=1.0, dt_proj_gain=0.2, conv_std=0.5, conv_bias_std=0.5,
          D_mean=1.0, D_std=0.5, qk_gain=2.0, final_norm_center=0.3, seeded=True), "BF16", "BF16"),
    # Gemma 4 (docs/gemma4.md §6 step 1), config.json in the flat spelling models/gemma4/modeling_gemma4.py reads
    # (head_dim / global_head_dim / num_global_key_value_heads as keys of the text config, no per_layer_config; see
    # gemma4_config), rope_parameters and layer_types written out, all BF16, tied, softcap 30, window 8 (every golden
    # prompt is longer), rms_norm_eps 1e-6, hidden_activation gelu_pytorch_tanh; six layers sliding, sliding, full,
    # sliding, sliding, full; 4 heads, sliding layers 2 kv heads of 16, full layers heads of 32 with proportional RoPE
    # (int(0.25 x 32 // 2) = 4 of 16 pairs turn at 1e6^(-2i/32)), sliding ones the default RoPE at 1e4. Norm weights are
    # used as w (not 1 + w) and drawn around 1 (std 0.1), layer_scalar in [0.6, 0.9] or [1.1, 1.4] per layer. Tuned so
    # that the models are no more sensitive to an engine's fp32 rounding than the other fixtures (MAX_WEIGHT_NOISE_CHANGE):
    # q_norm / k_norm around 0.3 (std 0.2: with the score scale 1 and normed q / k, around 1 the attention is sharp
    # enough that a 1e-7 change of every weight moves the logits by 1e-3), embed_std 0.1 (tied: with larger embeddings
    # greedy decoding repeats the prompt's last token), the final norm around 10 (the released final norms' means are
    # reported at 6 to 20, n.v.) so that the raw logits reach about 35 and the soft-cap 30 bites.
    # gemma4-e, E2B's features (Gemma4ForCausalLM, model.*): per-layer embeddings of 8 (embed_tokens_per_layer (V, 48),
    # per_layer_input_gate at 0.3 / sqrt(H)), num_kv_shared_layers 2 (layers 4 and 5 have no k_proj / v_proj /
    # k_norm: layer 4 reads layer 3's K, V, layer 5 layer 2's), use_double_wide_mlp (layers 4 and 5 of 192, the others
    # 96), no k_eq_v. Seed 77000 failed MAX_WEIGHT_NOISE_CHANGE; 77001 passes (weight noise 9.5e-5, smallest greedy
    # margin 0.0038, six distinct outputs)
    ("gemma4-e", 77001, "Gemma4ForCausalLM", "gemma4_text",
     dict(H=64, L=6, NH=4, NKV=2, HD=16, full_HD=32, full_NKV=None, F=96, tied=True, theta=1000000.0,
          local_theta=10000.0, partial_rotary_factor=0.25, window=8, final_softcap=30.0,
          layer_types=["sliding_attention", "sliding_attention", "full_attention", "sliding_attention",
                       "sliding_attention", "full_attention"],
          k_eq_v=False, P=8, kv_shared=2, double_wide=True, embed_std=0.1, ple_std=1.0, ple_gate_gain=0.3,
          qk_norm_center=0.3, final_norm_center=10.0, seeded=True), "BF16", "BF16"),
    # gemma4-dense, 31B's features (Gemma4ForConditionalGeneration: text_config, model.language_model.* beside stand-in
    # model.vision_tower.* / model.embed_vision.* tensors): attention_k_eq_v with num_global_key_value_heads 1 (the
    # full layers have no v_proj: V is the raw k_proj output through v_norm; 1 kv head, the sliding layers 2),
    # use_bidirectional_attention "vision" (text-only input: causal), no per-layer embeddings, no KV sharing, MLP 128
    ("gemma4-dense", 78000, "Gemma4ForConditionalGeneration", "gemma4",
     dict(H=64, L=6, NH=4, NKV=2, HD=16, full_HD=32, full_NKV=1, F=128, tied=True, theta=1000000.0,
          local_theta=10000.0, partial_rotary_factor=0.25, window=8, final_softcap=30.0,
          layer_types=["sliding_attention", "sliding_attention", "full_attention", "sliding_attention",
                       "sliding_attention", "full_attention"],
          k_eq_v=True, P=0, kv_shared=0, double_wide=False, bidirectional="vision", vision_hidden=8, embed_std=0.1,
          qk_norm_center=0.3, final_norm_center=10.0, seeded=True), "BF16", "BF16"),
    # gemma4-moe, 26B-A4B's features (Gemma4ForCausalLM, model.*): gemma4-dense's text model (k_eq_v, full layers 1 kv
    # head, no per-layer embeddings, no sharing) with enable_moe_block: on every layer 8 experts of 24 top-2 beside
    # the dense MLP of 40, the router on the un-normed residual (router.proj (8, 64) at std router_std, searched by
    # search_routers; router.scale (64,) and router.per_expert_scale (8,) around 1 with std 0.3), experts.gate_up_proj
    # (8, 48, 64) / experts.down_proj (8, 64, 24), the norms pre_feedforward_layernorm_2 / post_feedforward_layernorm_1
    # / _2. route_fed_tokens: six MoE layers of top-2 of 8 over the prompt and fed-back tokens (search_routers_fed;
    # without it no seed of 79000 to 79199 met the thresholds, the four looked at for their generated-token routing gaps
    # of 1e-4 to 4e-4); with it 79000 passes (routing gaps 0.0015 / 0.0012 generated, 1 to 3 nudge passes per layer,
    # weight noise 9.6e-5)
    ("gemma4-moe", 79000, "Gemma4ForCausalLM", "gemma4_text",
     dict(H=64, L=6, NH=4, NKV=2, HD=16, full_HD=32, full_NKV=1, F=40, tied=True, theta=1000000.0,
          local_theta=10000.0, partial_rotary_factor=0.25, window=8, final_softcap=30.0,
          layer_types=["sliding_attention", "sliding_attention", "full_attention", "sliding_attention",
                       "sliding_attention", "full_attention"],
          k_eq_v=True, P=0, kv_shared=0, double_wide=False, moe=dict(E=8, k=2, Fm=24), router_std=1.5,
          router_scale_std=0.3, route_fed_tokens=True, embed_std=0.1, qk_norm_center=0.3, final_norm_center=10.0,
          seeded=True),
     "BF16", "BF16"),
]

# Seeds that two committed fixtures share: smollm3-nope was inserted before qwen2.5-vl-legacy when
# seeds were 1000 x (position + 1), took the 20000 that qwen2.5-vl-legacy had been made with, and was
# committed that way (qwen2.5-vl-legacy and qwen3-vl-mm keep the 20000 and 21000 of their files).
# Both name their tensors model.*, so the draws of equal names are the same: their q_proj, gate_proj
# and up_proj are equal, and the other common tensors (scaled or of other shapes) are drawn from the
# same streams. Harmless for what they check; kept so that the committed files stay reproducible.
# Do not add to this.
SHARED_SEEDS = {20000: ("qwen2.5-vl-legacy", "smollm3-nope")}


def check_seeds(models=MODELS):
    """Every fixture has its own name and seed, and no other fixture's seed lies within the
    MAX_ATTEMPTS_MOE seeds that build_one may try from it, except the pairs SHARED_SEEDS lists."""
    names = [m[0] for m in models]
    assert len(set(names)) == len(names), "duplicate golden model names"
    by_seed = {}
    for name, seed, *_ in models:
        assert isinstance(seed, int) and seed > 0, "%s: seed %r" % (name, seed)
        by_seed.setdefault(seed, []).append(name)
    for seed, group in by_seed.items():
        assert len(group) == 1 or tuple(sorted(group)) == SHARED_SEEDS.get(seed), \
            "golden models %s share seed %d: give the new one a new seed" % (", ".join(group), seed)
    seeds = sorted(by_seed)
    for lo, hi in zip(seeds, seeds[1:]):
        assert hi - lo >= MAX_ATTEMPTS_MOE, "golden seeds %d (%s) and %d (%s) are within %d: bumping " \
            "one could reach the other" % (lo, ", ".join(by_seed[lo]), hi, ", ".join(by_seed[hi]), MAX_ATTEMPTS_MOE)


check_seeds()


def golden_tokenizer(seed):
    from make_organism import tokenizer_texts
    return bpe.ByteLevelBPE(bpe.learn_merges(tokenizer_texts(corpus.split_requests(seed), seed), GOLDEN_MERGES))


def config_for(name, arch, mtype, d, tok, mat_dtype):
    if mtype not in ("llama", "mistral", "qwen2", "qwen3"):
        return new_family_config(arch, mtype, d, tok, mat_dtype)
    im_end, eot = tok.specials["<|im_end|>"], tok.specials["<|endoftext|>"]
    torch_dtype = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}[mat_dtype]
    c = {
        "architectures": [arch],
        "attention_dropout": 0.0,
        "bos_token_id": None,
        "eos_token_id": im_end,
        "head_dim": d["HD"],
        "hidden_act": "silu",
        "hidden_size": d["H"],
        "initializer_range": 0.02,
        "intermediate_size": d["F"],
        "max_position_embeddings": d.get("max_positions", 2048),
        "model_type": mtype,
        "num_attention_heads": d["NH"],
        "num_hidden_layers": d["L"],
        "num_key_value_heads": d["NKV"],
        "rms_norm_eps": 1e-06 if mtype.startswith("qwen") else 1e-05,
        "rope_scaling": d.get("rope_scaling"),
        "rope_theta": d["theta"],
        "tie_word_embeddings": d["tied"],
        "torch_dtype": torch_dtype,
        "transformers_version": "4.51.0",
        "use_cache": True,
        "vocab_size": tok.vocab_size,
    }
    if mtype == "llama":
        c.update({"attention_bias": d.get("attention_bias", False), "mlp_bias": d.get("mlp_bias", False),
                  "pretraining_tp": 1})
    if mtype == "mistral":
        c["sliding_window"] = d["window"]
        del c["rope_scaling"]
    if mtype == "qwen2":
        # As in Qwen2.5 configs: a sliding_window value that is not used (use_sliding_window false),
        # bos_token_id set although the tokenizer adds no BOS, eos as a list.
        c.update({"use_sliding_window": False, "sliding_window": 4096, "max_window_layers": d["L"],
                  "bos_token_id": eot, "eos_token_id": [im_end, eot]})
        del c["head_dim"]
    if mtype == "qwen3":
        c.update({"attention_bias": False, "use_sliding_window": False, "sliding_window": None,
                  "max_window_layers": d["L"], "bos_token_id": eot, "eos_token_id": [im_end, eot]})
    return dict(sorted(c.items()))


def new_family_config(arch, mtype, d, tok, mat_dtype):
    """config.json of the Gemma 2/3, Phi-3 and MoE golden models, shaped like the released
    checkpoints' files (keys as transformers writes them, sorted)."""
    im_end, eot = tok.specials["<|im_end|>"], tok.specials["<|endoftext|>"]
    torch_dtype = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}[mat_dtype]
    if mtype in ("qwen3_next", "qwen3_5", "qwen3_5_moe"):
        return hybrid_config(arch, mtype, d, tok, torch_dtype)
    if mtype == "lfm2":
        return lfm2_config(arch, mtype, d, tok, torch_dtype)
    if mtype == "lfm2_moe":
        return lfm2_moe_config(arch, mtype, d, tok, torch_dtype)
    if mtype == "nemotron_h" and "moe" in d:
        return nemotron_h_moe_config(arch, mtype, d, tok, torch_dtype)
    if mtype == "nemotron_h":
        return nemotron_h_config(arch, mtype, d, tok, torch_dtype)
    if mtype in ("gemma4", "gemma4_text"):
        return gemma4_config(arch, mtype, d, tok, torch_dtype)
    c = {
        "architectures": [arch],
        "attention_dropout": 0.0,
        "bos_token_id": None,
        "eos_token_id": im_end,
        "hidden_size": d["H"],
        "initializer_range": 0.02,
        "intermediate_size": d["F"],
        "model_type": mtype,
        "num_attention_heads": d["NH"],
        "num_hidden_layers": d["L"],
        "num_key_value_heads": d["NKV"],
        "pad_token_id": eot,
        "torch_dtype": torch_dtype,
        "transformers_version": "4.51.0",
        "use_cache": True,
        "vocab_size": tok.vocab_size,
    }
    if mtype == "gemma2":
        # tie_word_embeddings left out on purpose: Gemma2Config's default is true
        c.update({"attention_bias": False, "attn_logit_softcapping": d["attn_softcap"],
                  "cache_implementation": "hybrid", "final_logit_softcapping": d["final_softcap"],
                  "head_dim": d["HD"], "hidden_act": "gelu_pytorch_tanh",
                  "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 8192,
                  "query_pre_attn_scalar": d["query_pre_attn_scalar"], "rms_norm_eps": 1e-06,
                  "rope_theta": d["theta"], "sliding_window": d["window"],
                  "transformers_version": "4.44.0"})
    elif mtype == "gemma3_text":
        # sliding_window_pattern (transformers 4.50 spelling) and no layer_types; an
        # attn_logit_softcapping that Gemma 3 never applies
        c.update({"attention_bias": False, "attn_logit_softcapping": d["attn_softcap"],
                  "cache_implementation": "hybrid", "final_logit_softcapping": None,
                  "head_dim": d["HD"], "hidden_activation": "gelu_pytorch_tanh",
                  "max_position_embeddings": 32768,
                  "query_pre_attn_scalar": d["query_pre_attn_scalar"], "rms_norm_eps": 1e-06,
                  "rope_local_base_freq": d["local_theta"], "rope_scaling": d["rope_scaling"],
                  "rope_theta": d["theta"], "sliding_window": d["window"],
                  "sliding_window_pattern": d["pattern"], "tie_word_embeddings": True,
                  "transformers_version": "4.50.0"})
    elif mtype == "gemma3":
        # Gemma3ForConditionalGeneration. text_config leaves out (defaults of Gemma3TextConfig):
        # num_key_value_heads 4, rope_theta 1e6, rope_local_base_freq 1e4, rope_scaling null,
        # query_pre_attn_scalar 256, rms_norm_eps 1e-6, hidden_activation gelu_pytorch_tanh,
        # attn_logit_softcapping null, tie_word_embeddings true, attention_bias false,
        # max_position_embeddings 131072; it has layer_types (transformers >= 4.53 spelling) and a
        # final_logit_softcapping that Gemma3ForConditionalGeneration.forward does not apply.
        # eos_token_id only at the top level, as the released configs have it.
        assert d["NKV"] == 4 and d["theta"] == 1e6
        text = {"final_logit_softcapping": d["final_softcap"], "head_dim": d["HD"],
                "hidden_size": d["H"], "intermediate_size": d["F"], "layer_types": d["layer_types"],
                "model_type": "gemma3_text", "num_attention_heads": d["NH"],
                "num_hidden_layers": d["L"], "sliding_window": d["window"],
                "vocab_size": tok.vocab_size}
        vision = {"hidden_size": d["vision_hidden"], "image_size": 4, "intermediate_size": 16,
                  "model_type": "siglip_vision_model", "num_attention_heads": 2,
                  "num_hidden_layers": 1, "patch_size": 2, "vision_use_head": False}
        c = {"architectures": [arch], "eos_token_id": [im_end, eot], "initializer_range": 0.02,
             "mm_tokens_per_image": 4, "model_type": "gemma3", "text_config": text,
             "torch_dtype": torch_dtype, "transformers_version": "4.56.0", "vision_config": vision}
    elif mtype == "mistral3" and d.get("text_model_type") == "ministral3":
        # Ministral 3 (mistralai/Ministral-3-3B / 8B / 14B-Instruct-2512, BF16) as transformers 5 saves
        # Mistral3ForConditionalGeneration (Mistral3Config.to_dict, keys sorted): "dtype" in place of torch_dtype,
        # tie_word_embeddings false at the top level and in text_config; a text_config of model_type "ministral3" (a
        # Ministral3Config) with head_dim listed (!= hidden / heads), rms_norm_eps 1e-5, sliding_window null, use_cache,
        # and the RoPE only in rope_parameters (no rope_theta key): {"rope_type" and "type" "yarn", "rope_theta" 1e9,
        # "factor" 16, "original_max_position_embeddings", "beta_fast" 32, "beta_slow" 1, "mscale" 1, "mscale_all_dim"
        # 1, "llama_4_scaling_beta"} (the release's period 16384 and beta 0.1; here the fixture's: d["rope_parameters"]
        # and d["theta"]),
        # max_position_embeddings = factor x original (as released: 16 x 16384 = 262144); no token ids (the fixture's
        # eos is in generation_config.json); the Pixtral vision_config as transformers 5 writes PixtralVisionConfig
        # (rope_parameters in place of rope_theta), small
        rp = dict(d["rope_parameters"], rope_theta=d["theta"])
        text = {"head_dim": d["HD"], "hidden_act": "silu", "hidden_size": d["H"], "intermediate_size": d["F"],
                "max_position_embeddings": int(rp["factor"] * rp["original_max_position_embeddings"]),
                "model_type": "ministral3", "num_attention_heads": d["NH"], "num_hidden_layers": d["L"],
                "num_key_value_heads": d["NKV"], "rms_norm_eps": 1e-05, "rope_parameters": dict(sorted(rp.items())),
                "sliding_window": None, "tie_word_embeddings": d["tied"], "use_cache": True,
                "vocab_size": tok.vocab_size}
        vision = {"attention_dropout": 0.0, "head_dim": 4, "hidden_act": "gelu", "hidden_size": d["vision_hidden"],
                  "image_size": 8, "initializer_range": 0.02, "intermediate_size": 16, "model_type": "pixtral",
                  "num_attention_heads": 2, "num_channels": 3, "num_hidden_layers": 1, "patch_size": 4,
                  "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}}
        c = {"architectures": [arch], "dtype": torch_dtype, "image_token_index": 10, "model_type": "mistral3",
             "multimodal_projector_bias": False, "projector_hidden_act": "gelu", "spatial_merge_size": 2,
             "text_config": text, "tie_word_embeddings": d["tied"], "transformers_version": "5.0.0",
             "vision_config": vision, "vision_feature_layer": -1}
    elif mtype == "mistral3":
        # Mistral3ForConditionalGeneration as Mistral Small 3.1 ships it: text_config of
        # model_type "mistral" with rms_norm_eps and hidden_act left out (MistralConfig's defaults
        # 1e-6 and silu), a Pixtral vision_config, eos at the top level
        text = {"head_dim": d["HD"], "hidden_size": d["H"], "intermediate_size": d["F"],
                "max_position_embeddings": 2048, "model_type": "mistral", "num_attention_heads": d["NH"],
                "num_hidden_layers": d["L"], "num_key_value_heads": d["NKV"], "rope_theta": d["theta"],
                "sliding_window": None, "tie_word_embeddings": d["tied"], "vocab_size": tok.vocab_size}
        vision = {"head_dim": 4, "hidden_size": d["vision_hidden"], "image_size": 8, "intermediate_size": 16,
                  "model_type": "pixtral", "num_attention_heads": 2, "num_hidden_layers": 1, "patch_size": 4,
                  "rope_theta": 10000.0}
        c = {"architectures": [arch], "bos_token_id": None, "eos_token_id": im_end, "image_token_index": 10,
             "model_type": "mistral3", "multimodal_projector_bias": False, "projector_hidden_act": "gelu",
             "spatial_merge_size": 2, "text_config": text, "torch_dtype": torch_dtype,
             "transformers_version": "4.56.0", "vision_config": vision, "vision_feature_layer": -1}
    elif mtype == "llava":
        # LlavaForConditionalGeneration as mistral-community/pixtral-12b ships it (models/pixtral/
        # convert_pixtral_weights_to_hf.py: LlavaConfig(PixtralVisionConfig, MistralConfig(...), vision_feature_layer -1,
        # image_token_index 10, vision_feature_select_strategy "full", image_seq_length 1), transformers 4.45's save):
        # text_config of model_type "mistral" with head_dim listed (!= hidden / heads), rms_norm_eps 1e-5, rope_theta
        # 1e9, sliding_window null, max_position_embeddings 1024000 and the leftover "is_composition"; no token ids
        # anywhere (generation_config.json has them) and no tie_word_embeddings but the one inside vision_config; a small
        # Pixtral vision_config of the release's keys
        text = {"head_dim": d["HD"], "hidden_act": "silu", "hidden_size": d["H"], "intermediate_size": d["F"],
                "is_composition": True, "max_position_embeddings": d["max_positions"], "model_type": "mistral",
                "num_attention_heads": d["NH"], "num_hidden_layers": d["L"], "num_key_value_heads": d["NKV"],
                "rms_norm_eps": 1e-05, "rope_theta": d["theta"], "sliding_window": None, "vocab_size": tok.vocab_size}
        vision = {"head_dim": 4, "hidden_act": "silu", "hidden_size": d["vision_hidden"], "image_size": 8,
                  "intermediate_size": 16, "is_composition": True, "model_type": "pixtral", "num_attention_heads": 2,
                  "num_hidden_layers": 1, "patch_size": 4, "rope_theta": 10000.0, "tie_word_embeddings": False}
        c = {"architectures": [arch], "image_seq_length": 1, "image_token_index": 10, "model_type": "llava",
             "projector_hidden_act": "gelu", "text_config": text, "torch_dtype": torch_dtype,
             "transformers_version": "4.45.0.dev0", "vision_config": vision, "vision_feature_layer": -1,
             "vision_feature_select_strategy": "full"}
        assert not d["tied"] and d["HD"] != d["H"] // d["NH"]
    elif mtype == "internvl":
        # InternVLForConditionalGeneration as OpenGVLab/InternVL3-1B-hf ships it (models/internvl/
        # convert_internvl_weights_to_hf.py: InternVLConfig(text_config=Qwen2Config(**llm_config), InternVLVisionConfig,
        # image_token_id), transformers 4.52's save): a Qwen2 text_config (config_for's qwen2 keys) with the token ids
        # inside it (bos <|endoftext|>, eos the converter's forced <|im_end|>, an int), sliding_window null beside
        # use_sliding_window false (Qwen2Config nulls it), tie_word_embeddings false, no head_dim; none at the top level;
        # a small internvl_vision vision_config (InternViT-300M's keys); image_token_id 10 (released 151667, the
        # <IMG_CONTEXT> of a tokenizer this fixture's vocabulary lacks)
        text = config_for(None, "Qwen2ForCausalLM", "qwen2", d, tok, mat_dtype)
        del text["transformers_version"]
        text.update({"eos_token_id": im_end, "max_position_embeddings": d["max_positions"], "sliding_window": None})
        vision = {"architectures": ["InternVisionModel"], "attention_bias": True, "attention_dropout": 0.0,
                  "hidden_act": "gelu", "hidden_size": d["vision_hidden"], "image_size": [8, 8],
                  "initializer_factor": 0.1, "initializer_range": 0.02, "intermediate_size": 16,
                  "layer_norm_eps": 1e-06, "layer_scale_init_value": 0.1, "model_type": "internvl_vision",
                  "norm_type": "layer_norm", "num_attention_heads": 2, "num_channels": 3, "num_hidden_layers": 1,
                  "patch_size": [4, 4], "projection_dropout": 0.0, "torch_dtype": torch_dtype,
                  "use_absolute_position_embeddings": True, "use_mask_token": False, "use_mean_pooling": True,
                  "use_qk_norm": False}
        c = {"architectures": [arch], "downsample_ratio": 0.5, "image_seq_length": 256, "image_token_id": 10,
             "model_type": "internvl", "projector_hidden_act": "gelu", "text_config": dict(sorted(text.items())),
             "torch_dtype": torch_dtype, "transformers_version": "4.52.0.dev0", "vision_config": vision,
             "vision_feature_layer": -1, "vision_feature_select_strategy": "default"}
    elif mtype == "phi3":
        c.update({"attention_bias": False, "embd_pdrop": 0.0, "hidden_act": "silu",
                  "max_position_embeddings": d["max_positions"],
                  "original_max_position_embeddings": d["original_max_positions"],
                  "resid_pdrop": 0.0, "rms_norm_eps": 1e-05, "rope_scaling": d["rope_scaling"],
                  "rope_theta": d["theta"], "sliding_window": d["window"],
                  "tie_word_embeddings": d["tied"]})
        if "partial_rotary_factor" in d:
            c["partial_rotary_factor"] = d["partial_rotary_factor"]
    elif mtype == "glm4":
        # as GLM-4-9B-0414's config.json has it
        c.update({"attention_bias": True, "eos_token_id": [im_end, eot], "head_dim": d["HD"], "hidden_act": "silu",
                  "max_position_embeddings": 2048, "partial_rotary_factor": 0.5, "rms_norm_eps": 1e-05,
                  "rope_theta": d["theta"], "tie_word_embeddings": d["tied"], "transformers_version": "4.51.3"})
    elif mtype == "glm4_moe":
        # as GLM-4.5-Air's config.json has it (n_group / topk_group / routed_scaling_factor the fixture's)
        c.update({"attention_bias": True, "eos_token_id": [im_end, eot], "first_k_dense_replace": 1,
                  "head_dim": d["HD"], "hidden_act": "silu", "max_position_embeddings": 2048,
                  "moe_intermediate_size": d["Fm"], "n_group": d["n_group"], "n_routed_experts": d["E"],
                  "n_shared_experts": d["n_shared"], "norm_topk_prob": d["norm_topk"],
                  "num_experts_per_tok": d["k"], "num_nextn_predict_layers": 1, "partial_rotary_factor": 0.5,
                  "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": d["theta"],
                  "routed_scaling_factor": d["scaling"], "tie_word_embeddings": d["tied"],
                  "topk_group": d["topk_group"], "transformers_version": "4.54.0", "use_qk_norm": False})
    elif mtype == "deepseek_v3":
        # as DeepSeek-V3's config.json has it (without auto_map, and without quantization_config except for the
        # FP8 fixture; the sizes, the rope_scaling values and the router settings the fixture's), plus
        # rope_interleave (DeepseekV3Config's default, listed). No head_dim key: DeepseekV3Config derives it (=
        # qk_rope_head_dim). The Moonlight / DeepSeek-V2-Lite-shaped fixture's q_lora_rank null, rope_interleave
        # false, rope_scaling null, rms_norm_eps and num_nextn_predict_layers 0 come from its sizes (d), the
        # others' defaults here
        c.update({"attention_bias": False, "eos_token_id": [im_end, eot], "first_k_dense_replace": 1,
                  "hidden_act": "silu", "kv_lora_rank": d["kv_lora_rank"],
                  "max_position_embeddings": d["max_positions"], "moe_intermediate_size": d["Fm"],
                  "moe_layer_freq": 1, "n_group": d["n_group"], "n_routed_experts": d["E"],
                  "n_shared_experts": d["n_shared"], "norm_topk_prob": d["norm_topk"],
                  "num_experts_per_tok": d["k"], "num_nextn_predict_layers": d.get("mtp_layers", 1),
                  "q_lora_rank": d["q_lora_rank"], "qk_nope_head_dim": d["qk_nope"], "qk_rope_head_dim": d["qk_rope"],
                  "rms_norm_eps": d.get("rms_norm_eps", 1e-06), "rope_interleave": d.get("rope_interleave", True),
                  "rope_scaling": d["rope_scaling"], "rope_theta": d["theta"],
                  "routed_scaling_factor": d["scaling"], "scoring_func": "sigmoid",
                  "tie_word_embeddings": d["tied"], "topk_group": d["topk_group"], "topk_method": "noaux_tc",
                  "transformers_version": "4.54.0", "v_head_dim": d["v_head_dim"]})
        if "fp8_block_size" in d:
            # DeepSeek-V3's quantization_config, key for key (weight_block_size [128, 128] there)
            c["quantization_config"] = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                        "weight_block_size": list(d["fp8_block_size"])}
    elif mtype == "deepseek_v2":
        # deepseek-v2-lite: as deepseek-ai/DeepSeek-V2-Lite's config.json has it, key for key (the remote-code spelling
        # of DeepSeek's configuration_deepseek.py, transformers_version 4.33.1: auto_map (the keys only: no .py files,
        # abliterate never runs remote code), aux_loss_alpha, ep_size, moe_layer_freq, norm_topk_prob false,
        # pretraining_tp, scoring_func softmax, seq_aux, rope_theta 10000 (an integer), rope_scaling {"type": "yarn",
        # ...} as released; no pad_token_id), the sizes and the router's settings the fixture's.
        # deepseek-v2-groups (d["rope_parameters"]): as transformers 5 writes DeepseekV2Config (LlamaConfig's fields
        # plus its own): "dtype", rope_parameters {"rope_theta", "rope_type": "default"} in place of rope_theta /
        # rope_scaling, head_dim = qk_rope_head_dim (DeepseekV2Config.__init__ sets it; the rotary width, not the
        # q/k head), mlp_bias, norm_topk_prob (kept, never read), no pretraining_tp (deleted in __init__), no keys of
        # DeepSeek's own config (auto_map, scoring_func, moe_layer_freq, aux_loss_alpha, seq_aux, ep_size)
        moe = {"attention_bias": False, "first_k_dense_replace": d.get("first_k_dense", 1), "hidden_act": "silu",
               "kv_lora_rank": d["kv_lora_rank"], "max_position_embeddings": d["max_positions"],
               "moe_intermediate_size": d["Fm"], "n_group": d["n_group"], "n_routed_experts": d["E"],
               "n_shared_experts": d["n_shared"], "norm_topk_prob": False, "num_experts_per_tok": d["k"],
               "q_lora_rank": d["q_lora_rank"], "qk_nope_head_dim": d["qk_nope"], "qk_rope_head_dim": d["qk_rope"],
               "rms_norm_eps": 1e-06, "routed_scaling_factor": d["scaling"], "tie_word_embeddings": d["tied"],
               "topk_group": d["topk_group"], "topk_method": d["topk_method"], "v_head_dim": d["v_head_dim"]}
        c.update(moe)
        if d.get("rope_parameters"):
            assert d["rope_scaling"] is None
            c["dtype"] = c.pop("torch_dtype")
            c.update({"head_dim": d["qk_rope"], "mlp_bias": False,
                      "rope_parameters": {"rope_theta": d["theta"], "rope_type": "default"},
                      "transformers_version": "5.0.0"})
        else:
            del c["pad_token_id"]
            c.update({"auto_map": {"AutoConfig": "configuration_deepseek.DeepseekV2Config",
                                   "AutoModel": "modeling_deepseek.DeepseekV2Model",
                                   "AutoModelForCausalLM": "modeling_deepseek.DeepseekV2ForCausalLM"},
                      "aux_loss_alpha": 0.001, "ep_size": 1, "moe_layer_freq": 1, "pretraining_tp": 1,
                      "rope_scaling": d["rope_scaling"], "rope_theta": d["theta"], "scoring_func": "softmax",
                      "seq_aux": True, "transformers_version": "4.33.1"})
    elif mtype == "granite":
        # as granite-3.3-8b-instruct's config.json has it (the multipliers the fixture's)
        c.update({"attention_bias": False, "attention_multiplier": d["attention_multiplier"],
                  "bos_token_id": eot, "embedding_multiplier": d["embedding_multiplier"],
                  "eos_token_id": im_end, "hidden_act": "silu", "logits_scaling": d["logits_scaling"],
                  "max_position_embeddings": 2048, "mlp_bias": False,
                  "residual_multiplier": d["residual_multiplier"], "rms_norm_eps": 1e-05, "rope_scaling": None,
                  "rope_theta": d["theta"], "tie_word_embeddings": d["tied"]})
    elif mtype in ("granitemoe", "granitemoeshared"):
        # as granite-3.1-3b-a800m-instruct's config.json has it (the multipliers the fixture's)
        c.update({"attention_bias": False, "attention_multiplier": d["attention_multiplier"],
                  "bos_token_id": eot, "embedding_multiplier": d["embedding_multiplier"],
                  "eos_token_id": im_end, "hidden_act": "silu", "logits_scaling": d["logits_scaling"],
                  "max_position_embeddings": 2048, "num_experts_per_tok": d["k"],
                  "num_local_experts": d["E"], "output_router_logits": False,
                  "residual_multiplier": d["residual_multiplier"], "rms_norm_eps": 1e-06, "rope_scaling": None,
                  "rope_theta": d["theta"], "router_aux_loss_coef": 0.0, "tie_word_embeddings": d["tied"]})
        if mtype == "granitemoeshared":
            c["shared_intermediate_size"] = d["Fs"]
    elif mtype == "granitemoehybrid":
        # as ibm-granite/granite-4.0-micro's config.json has it (transformers 4.56's GraniteMoeHybridConfig): layer_types
        # listed, position_embedding_type, the Mamba-2 keys (without a Mamba layer at GraniteMoeHybridConfig's defaults
        # as saved: mamba_d_head "auto" written as mamba_expand x hidden_size / mamba_n_heads; the fixture's `mamba`
        # sizes where it has Mamba-2 layers, as granite-4.0-h-micro's config.json lists them), IBM's init_method and
        # normalization_function (not read by transformers), router_aux_loss_coef 0.01 and initializer_range 0.1 as
        # released; the sizes, layer types, multipliers, experts and position_embedding_type the fixture's
        mb = dict(dict(chunk_size=256, conv_bias=True, d_conv=4, d_head=2 * d["H"] // 128, d_state=256, expand=2,
                       n_groups=1, n_heads=128, proj_bias=False), **d.get("mamba", {}))
        c.update({"attention_bias": False, "attention_multiplier": d["attention_multiplier"], "bos_token_id": eot,
                  "embedding_multiplier": d["embedding_multiplier"], "eos_token_id": im_end, "hidden_act": "silu",
                  "init_method": "mup", "initializer_range": 0.1,
                  "layer_types": d.get("layer_types", ["attention"] * d["L"]),
                  "logits_scaling": d["logits_scaling"], "max_position_embeddings": 4096,
                  "normalization_function": "rmsnorm",
                  "num_experts_per_tok": d["k"], "num_local_experts": d["E"], "output_router_logits": False,
                  "position_embedding_type": d["position_embedding_type"],
                  "residual_multiplier": d["residual_multiplier"], "rms_norm_eps": 1e-05, "rope_scaling": None,
                  "rope_theta": d["theta"], "router_aux_loss_coef": 0.01, "shared_intermediate_size": d["Fs"],
                  "tie_word_embeddings": d["tied"], "transformers_version": "4.56.0"})
        c.update({"mamba_" + k: v for k, v in mb.items()})
    elif mtype == "hunyuan_v1_dense":
        # as tencent/Hunyuan-7B-Instruct's config.json has it (HunYuanDenseV1ForCausalLM, model_type hunyuan_v1_dense):
        # head_dim listed, attention_bias / mlp_bias false, rope_theta 10000.0 with rope_scaling {"type": "dynamic",
        # "alpha": 1000.0, ...} (alpha as released; factor 1.0, beta_fast 32, beta_slow 1, mscale 1.0, mscale_all_dim 1.0
        # beside it, not read on the alpha path: reference.hunyuan_rope), use_qk_norm true (not read by transformers,
        # which always norms), eod_token_id and pretraining_tp 1, rms_norm_eps 1e-5, tied as released; the sizes the
        # fixture's, max_position_embeddings 32768 (longer than every golden sequence: the dynamic update never fires)
        c.update({"attention_bias": False, "bos_token_id": eot, "eod_token_id": eot, "eos_token_id": im_end,
                  "head_dim": d["HD"], "hidden_act": "silu", "max_position_embeddings": 32768, "mlp_bias": False,
                  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": dict(sorted(d["rope_scaling"].items())),
                  "rope_theta": d["theta"], "tie_word_embeddings": d["tied"], "transformers_version": "4.56.0",
                  "use_qk_norm": True})
    elif mtype == "hunyuan_v1_moe":
        # as tencent/Hunyuan-A13B-Instruct's config.json has it (HunYuanMoEV1ForCausalLM), with transformers' model_type
        # hunyuan_v1_moe (the release's remote-code "hunyuan" would not load natively): hunyuan-dense's keys (head_dim,
        # attention_bias / mlp_bias false, rope_scaling dynamic with alpha and its unread factor / beta / mscale keys,
        # use_qk_norm, eod_token_id, pretraining_tp, rms_norm_eps 1e-5, tied) plus the release's attention_head_dim (=
        # head_dim: transformers reads head_dim, Tencent's remote code attention_head_dim), num_experts an int (5.x's
        # @strict HunYuanMoEV1Config types it int), moe_topk, moe_intermediate_size (= intermediate_size: transformers
        # sizes the experts by intermediate_size) and num_shared_expert (1) as per-layer lists, use_mixed_mlp_moe true,
        # use_cla false; the sizes the fixture's, max_position_embeddings 32768
        L = d["L"]
        c.update({"attention_bias": False, "attention_head_dim": d["HD"], "bos_token_id": eot, "eod_token_id": eot,
                  "eos_token_id": im_end, "head_dim": d["HD"], "hidden_act": "silu", "max_position_embeddings": 32768,
                  "mlp_bias": False, "moe_intermediate_size": [d["F"]] * L, "moe_topk": [d["k"]] * L,
                  "num_experts": d["E"], "num_shared_expert": [1] * L, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
                  "rope_scaling": dict(sorted(d["rope_scaling"].items())), "rope_theta": d["theta"],
                  "tie_word_embeddings": d["tied"], "transformers_version": "4.56.0", "use_cla": False,
                  "use_mixed_mlp_moe": True, "use_qk_norm": True})
    elif mtype == "gpt_oss":
        # as openai/gpt-oss-20b's config.json has it (experts_per_token and initial_context_length
        # beside their transformers names, swiglu_limit, rope_scaling yarn with truncate false,
        # layer_types listed), without its quantization_config (the weights here are BF16);
        # max_position_embeddings = factor x original_max_position_embeddings as there
        rs = d["rope_scaling"]
        c.update({"attention_bias": True, "experts_per_token": d["k"], "head_dim": d["HD"], "hidden_act": "silu",
                  "initial_context_length": rs["original_max_position_embeddings"],
                  "layer_types": ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(d["L"])],
                  "max_position_embeddings": int(rs["factor"] * rs["original_max_position_embeddings"]),
                  "num_experts_per_tok": d["k"], "num_local_experts": d["E"], "output_router_logits": False,
                  "rms_norm_eps": 1e-05, "rope_scaling": rs, "rope_theta": d["theta"], "router_aux_loss_coef": 0.9,
                  "sliding_window": d["window"], "swiglu_limit": 7.0, "tie_word_embeddings": d["tied"],
                  "transformers_version": "4.55.0"})
    elif mtype in ("cohere", "cohere2"):
        # as transformers 4.4x writes CohereConfig / Cohere2Config (Command-R v01's and Command R7B's
        # config.json hold these keys): layer_norm_eps, logit_scale, use_qk_norm (Cohere only; true in
        # Command R+'s);
        # Cohere 2 with sliding_window, sliding_window_pattern (no layer_types), head_dim (which
        # Cohere2Config derives as hidden / heads) and cache_implementation "hybrid";
        # tie_word_embeddings left out on purpose (both configs' default is true)
        assert d["tied"]
        c.update({"attention_bias": False, "bos_token_id": None, "eos_token_id": im_end, "hidden_act": "silu",
                  "layer_norm_eps": 1e-05, "logit_scale": d["logit_scale"], "max_position_embeddings": 2048,
                  "rope_scaling": None, "rope_theta": d["theta"], "transformers_version": "4.48.0"})
        if mtype == "cohere":
            c["use_qk_norm"] = d.get("qk_norm", False)
        else:
            c.update({"cache_implementation": "hybrid", "head_dim": d["H"] // d["NH"],
                      "sliding_window": d["window"], "sliding_window_pattern": d["pattern"]})
    elif mtype == "glm":
        # partial_rotary_factor and attention_bias left out: GlmConfig's defaults (0.5, true)
        c.update({"eos_token_id": [im_end, eot], "head_dim": d["HD"], "hidden_act": "silu",
                  "max_position_embeddings": 2048, "rms_norm_eps": 1.5625e-07, "rope_theta": d["theta"],
                  "tie_word_embeddings": d["tied"], "transformers_version": "4.46.0"})
    elif mtype == "smollm3":
        # as SmolLM3-3B's config.json: no_rope_layers listed, layer_types, no sliding window
        c.update({"attention_bias": False, "bos_token_id": None, "eos_token_id": im_end, "hidden_act": "silu",
                  "layer_types": ["full_attention"] * d["L"], "max_position_embeddings": 2048, "mlp_bias": False,
                  "no_rope_layer_interval": 4, "no_rope_layers": d["no_rope_layers"], "rms_norm_eps": 1e-06,
                  "rope_scaling": None, "rope_theta": d["theta"], "sliding_window": None,
                  "tie_word_embeddings": d["tied"], "transformers_version": "4.54.0", "use_sliding_window": False})
    elif mtype == "qwen2_5_vl":
        # Qwen2.5-VL-7B-Instruct's config.json: flat, rope_scaling of type mrope, a vision_config
        # (transformers' Qwen2_5_VLVisionConfig keys, small)
        c.update({"bos_token_id": eot, "eos_token_id": im_end, "hidden_act": "silu", "image_token_id": 10,
                  "max_position_embeddings": 2048, "max_window_layers": d["L"], "rms_norm_eps": 1e-06,
                  "rope_scaling": {"mrope_section": d["mrope_section"], "type": "mrope"}, "rope_theta": d["theta"],
                  "sliding_window": 32768, "tie_word_embeddings": d["tied"], "transformers_version": "4.49.0",
                  "use_sliding_window": False, "video_token_id": 11, "vision_end_token_id": 12,
                  "vision_start_token_id": 13,
                  "vision_config": {"depth": 1, "fullatt_block_indexes": [0], "hidden_act": "silu",
                                    "hidden_size": d["vision_hidden"], "in_chans": 3, "intermediate_size": 16,
                                    "model_type": "qwen2_5_vl", "num_heads": 2, "out_hidden_size": d["H"],
                                    "patch_size": 2, "spatial_merge_size": 2, "spatial_patch_size": 2,
                                    "temporal_patch_size": 2, "tokens_per_second": 2, "window_size": 8}})
    elif mtype == "qwen3_vl":
        # Qwen3-VL's config.json: text_config with rope_scaling default + interleaved mrope,
        # tie_word_embeddings only at the top level
        text = {"attention_bias": False, "bos_token_id": eot, "dtype": torch_dtype, "eos_token_id": im_end,
                "head_dim": d["HD"], "hidden_act": "silu", "hidden_size": d["H"], "intermediate_size": d["F"],
                "max_position_embeddings": 2048, "model_type": "qwen3_vl_text", "num_attention_heads": d["NH"],
                "num_hidden_layers": d["L"], "num_key_value_heads": d["NKV"], "rms_norm_eps": 1e-06,
                "rope_scaling": {"mrope_interleaved": True, "mrope_section": d["mrope_section"],
                                 "rope_type": "default"},
                "rope_theta": d["theta"], "vocab_size": tok.vocab_size}
        vision = {"deepstack_visual_indexes": [0], "depth": 1, "hidden_act": "gelu_pytorch_tanh",
                  "hidden_size": d["vision_hidden"], "in_channels": 3, "intermediate_size": 16,
                  "model_type": "qwen3_vl", "num_heads": 2, "num_position_embeddings": 16,
                  "out_hidden_size": d["H"], "patch_size": 2, "spatial_merge_size": 2, "temporal_patch_size": 2}
        c = {"architectures": [arch], "image_token_id": 10, "model_type": "qwen3_vl", "text_config": text,
             "tie_word_embeddings": d["tied"], "transformers_version": "4.57.0", "video_token_id": 11,
             "vision_config": vision, "vision_end_token_id": 12, "vision_start_token_id": 13}
    elif mtype == "qwen3_vl_moe":
        # as Qwen/Qwen3-VL-30B-A3B-Instruct's config.json has it (transformers 4.57's save, keys sorted): qwen3-vl-mm's
        # text_config (rope_scaling {"mrope_interleaved": true, "mrope_section", "rope_type": "default"} beside
        # rope_theta 5000000, an integer as released; "dtype") plus Qwen3-MoE's keys decoder_sparse_step,
        # mlp_only_layers (the release's []: here [1], a dense Qwen3VLMoeTextMLP of intermediate_size between MoE
        # layers), moe_intermediate_size, norm_topk_prob true (not read: Qwen3VLMoeTextSparseMoeBlock always
        # renormalises), num_experts, num_experts_per_tok; tie_word_embeddings false only at the top level; the
        # vision_config of model_type "qwen3_vl_moe" (the release's, small) with deepstack_visual_indexes; bos / eos
        # this tokenizer's <|endoftext|> / <|im_end|> (released: 151643 / 151645, the same tokens)
        text = {"attention_bias": False, "attention_dropout": 0.0, "bos_token_id": eot, "decoder_sparse_step": 1,
                "dtype": torch_dtype, "eos_token_id": im_end, "head_dim": d["HD"], "hidden_act": "silu",
                "hidden_size": d["H"], "initializer_range": 0.02, "intermediate_size": d["F"],
                "max_position_embeddings": 262144, "mlp_only_layers": d["mlp_only_layers"],
                "model_type": "qwen3_vl_moe_text", "moe_intermediate_size": d["Fm"], "norm_topk_prob": True,
                "num_attention_heads": d["NH"], "num_experts": d["E"], "num_experts_per_tok": d["k"],
                "num_hidden_layers": d["L"], "num_key_value_heads": d["NKV"], "rms_norm_eps": 1e-06,
                "rope_scaling": {"mrope_interleaved": True, "mrope_section": d["mrope_section"],
                                 "rope_type": "default"},
                "rope_theta": d["theta"], "use_cache": True, "vocab_size": tok.vocab_size}
        vision = {"deepstack_visual_indexes": [0], "depth": 1, "hidden_act": "gelu_pytorch_tanh",
                  "hidden_size": d["vision_hidden"], "in_channels": 3, "initializer_range": 0.02,
                  "intermediate_size": 16, "model_type": "qwen3_vl_moe", "num_heads": 2, "num_position_embeddings": 16,
                  "out_hidden_size": d["H"], "patch_size": 2, "spatial_merge_size": 2, "temporal_patch_size": 2}
        c = {"architectures": [arch], "image_token_id": 10, "model_type": "qwen3_vl_moe", "text_config": text,
             "tie_word_embeddings": d["tied"], "transformers_version": "4.57.0", "video_token_id": 11,
             "vision_config": vision, "vision_end_token_id": 12, "vision_start_token_id": 13}
    elif mtype in ("glm4v", "glm4v_moe"):
        # glm4v: as THUDM/GLM-4.1V-9B-Thinking's config.json has it (Glm4vConfig.to_dict as transformers 4.5x writes it,
        # keys sorted; convert_glm4v_mgt_weights_to_hf.py's txt_config): the token ids at the top level (image_token_id,
        # image_start / end, video_*) and a text_config of model_type glm4v_text with attention_bias true
        # (Glm4vTextConfig has no such parameter: a leftover kwarg, not read), no head_dim (Glm4vTextAttention: hidden /
        # heads),
        # partial_rotary_factor 0.5 (also a leftover kwarg, read by the rope init's getattr), rope_scaling {"type":
        # "default", "mrope_section"} beside rope_theta, rms_norm_eps 1e-5, eos / pad token ids, image_token_id /
        # video_token_id null, tie_word_embeddings false; a small vision_config of model_type glm4v.
        # glm4v_moe: as zai-org/GLM-4.5V's config.json has it (Glm4vMoeConfig.to_dict, 4.5x; the converter's txt_config
        # plus head_dim): text_config of model_type glm4v_moe_text with Glm4MoeConfig's MoE keys (first_k_dense_replace,
        # moe_intermediate_size, n_group, n_routed_experts, n_shared_experts, norm_topk_prob, num_experts_per_tok,
        # routed_scaling_factor, topk_group), head_dim listed, partial_rotary_factor 0.5, rope_scaling {"mrope_section",
        # "rope_type": "default"}, attention_bias true; no use_qk_norm, no num_nextn_predict_layers (Glm4vMoeTextConfig
        # reads neither); the token ids this tokenizer's (released: eos [151329, 151336, 151338], pad 151329)
        text = {"attention_bias": True, "attention_dropout": 0.0, "eos_token_id": [im_end, eot], "hidden_act": "silu",
                "hidden_size": d["H"], "initializer_range": 0.02, "intermediate_size": d["F"],
                "max_position_embeddings": 2048, "model_type": mtype + "_text", "num_attention_heads": d["NH"],
                "num_hidden_layers": d["L"], "num_key_value_heads": d["NKV"], "pad_token_id": eot,
                "partial_rotary_factor": 0.5, "rms_norm_eps": 1e-05, "rope_theta": d["theta"],
                "tie_word_embeddings": d["tied"], "torch_dtype": torch_dtype, "use_cache": True,
                "vocab_size": tok.vocab_size}
        if mtype == "glm4v":
            assert d["H"] // d["NH"] == d["HD"]
            text.update({"image_token_id": None, "video_token_id": None,
                         "rope_scaling": {"mrope_section": d["mrope_section"], "type": "default"}})
        else:
            text.update({"first_k_dense_replace": 1, "head_dim": d["HD"], "moe_intermediate_size": d["Fm"],
                         "n_group": d["n_group"], "n_routed_experts": d["E"], "n_shared_experts": d["n_shared"],
                         "norm_topk_prob": d["norm_topk"], "num_experts_per_tok": d["k"],
                         "rope_scaling": {"mrope_section": d["mrope_section"], "rope_type": "default"},
                         "routed_scaling_factor": d["scaling"], "topk_group": d["topk_group"]})
        vision = {"attention_bias": False, "depth": 1, "hidden_act": "silu", "hidden_dropout_prob": 0.0,
                  "hidden_size": d["vision_hidden"], "image_size": 8, "initializer_range": 0.02,
                  "intermediate_size": 16, "model_type": mtype, "num_heads": 2, "out_hidden_size": d["H"],
                  "patch_size": 2, "rms_norm_eps": 1e-05, "spatial_merge_size": 2, "temporal_patch_size": 2}
        c = {"architectures": [arch], "image_end_token_id": 13, "image_start_token_id": 12, "image_token_id": 10,
             "model_type": mtype, "text_config": dict(sorted(text.items())), "torch_dtype": torch_dtype,
             "transformers_version": "4.57.1" if mtype == "glm4v" else "4.56.0", "video_end_token_id": 15,
             "video_start_token_id": 14, "video_token_id": 11, "vision_config": vision}
    elif mtype == "gemma":
        # as google/gemma-7b-it's config.json has it (GemmaConfig.to_dict as transformers 4.38.0.dev0 wrote it, keys
        # sorted): "hidden_act": "gelu" and no hidden_activation key (GemmaMLP of 4.39-4.47 then runs
        # gelu_pytorch_tanh: see reference.Spec), head_dim listed (not hidden / heads), rope_scaling null beside
        # rope_theta 10000.0, max_position_embeddings 8192, attention_bias false, no tie_word_embeddings key
        # (GemmaConfig's default true: no lm_head tensor); bos / eos / pad this tokenizer's (released: 2 / 1 / 0),
        # as the gemma2 fixtures have them
        c.update({"attention_bias": False, "head_dim": d["HD"], "hidden_act": "gelu", "max_position_embeddings": 8192,
                  "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": d["theta"],
                  "transformers_version": "4.38.0.dev0"})
    elif mtype == "mixtral":
        c.update({"head_dim": d["HD"], "hidden_act": "silu", "max_position_embeddings": 2048,
                  "num_experts_per_tok": d["k"], "num_local_experts": d["E"],
                  "output_router_logits": False, "rms_norm_eps": 1e-05, "rope_theta": d["theta"],
                  "router_aux_loss_coef": 0.02, "router_jitter_noise": 0.0, "sliding_window": None,
                  "tie_word_embeddings": False})
    elif mtype == "qwen2_moe":
        c.update({"bos_token_id": eot, "decoder_sparse_step": 1, "eos_token_id": [im_end, eot],
                  "hidden_act": "silu", "max_position_embeddings": 2048,
                  "max_window_layers": d["L"], "mlp_only_layers": d["mlp_only_layers"],
                  "moe_intermediate_size": d["Fm"], "norm_topk_prob": d["norm_topk"],
                  "num_experts": d["E"], "num_experts_per_tok": d["k"],
                  "output_router_logits": False, "rms_norm_eps": 1e-06, "rope_theta": d["theta"],
                  "router_aux_loss_coef": 0.001, "shared_expert_intermediate_size": d["Fs"],
                  "sliding_window": 4096, "tie_word_embeddings": False, "use_sliding_window": False})
    elif mtype == "qwen3_moe":
        c.update({"attention_bias": False, "bos_token_id": eot, "decoder_sparse_step": 1,
                  "eos_token_id": [im_end, eot], "head_dim": d["HD"], "hidden_act": "silu",
                  "max_position_embeddings": 2048, "max_window_layers": d["L"],
                  "mlp_only_layers": [], "moe_intermediate_size": d["Fm"],
                  "norm_topk_prob": d["norm_topk"], "num_experts": d["E"],
                  "num_experts_per_tok": d["k"], "output_router_logits": False,
                  "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": d["theta"],
                  "router_aux_loss_coef": 0.001, "sliding_window": None,
                  "tie_word_embeddings": False, "use_sliding_window": False})
    elif mtype == "seed_oss":
        # as Seed-OSS-36B-Instruct's config.json has it: attention_bias and attention_out_bias both listed,
        # mlp_bias false, head_dim listed (SeedOssConfig's default is 128, not hidden / heads),
        # rope_scaling {"rope_type": "default"} beside rope_theta, the dropouts it trains with (0.1; not
        # applied at inference), untied
        c.update({"attention_bias": d["attention_bias"], "attention_dropout": 0.1,
                  "attention_out_bias": d["attention_out_bias"], "head_dim": d["HD"], "hidden_act": "silu",
                  "max_position_embeddings": 2048, "mlp_bias": False, "residual_dropout": 0.1, "rms_norm_eps": 1e-06,
                  "rope_scaling": {"rope_type": "default"}, "rope_theta": d["theta"],
                  "tie_word_embeddings": d["tied"], "transformers_version": "4.56.0"})
    elif mtype == "olmo2":
        # as OLMo-2-1124-7B's config.json has it (Olmo2Config.to_dict as transformers 4.47 writes it; the
        # converter convert_olmo2_weights_to_hf.py write_model passes pad_token_id, bos_token_id None,
        # eos_token_id, tie_word_embeddings, rms_norm_eps, rope_theta): attention_bias, rope_scaling beside
        # rope_theta, no head_dim key (Olmo2Attention: hidden_size // num_attention_heads), max_position_embeddings
        # 4096 as released
        c.update({"attention_bias": d.get("attention_bias", False), "hidden_act": "silu",
                  "max_position_embeddings": 4096, "rms_norm_eps": d["rms_norm_eps"],
                  "rope_scaling": d.get("rope_scaling"), "rope_theta": d["theta"],
                  "tie_word_embeddings": d["tied"], "transformers_version": "4.47.0"})
    elif mtype == "olmo3":
        # olmo3: as allenai/Olmo-3-1025-7B's config.json has it (Olmo3Config.to_dict as transformers 4.57 writes it):
        # attention_bias, layer_types listed, rope_scaling (yarn, with attention_factor) beside rope_theta,
        # sliding_window, no head_dim key, torch_dtype. olmo3-v5 (d["rope_parameters"]): as transformers 5 writes
        # Olmo3Config: "dtype" in place of torch_dtype, rope_parameters {"full_attention": {...the YaRN keys,
        # rope_theta}, "sliding_attention": {"rope_type": "default", "rope_theta": ...}} in place of rope_theta /
        # rope_scaling (configuration_olmo3.py convert_rope_params_to_dict's shape), no layer_types key (Olmo3Config's
        # default pattern). Nested keys sorted, as to_json_string(sort_keys=True) writes them.
        # max_position_embeddings = factor x original_max_position_embeddings, as released
        rs = dict(sorted(d["rope_scaling"].items()))
        c.update({"attention_bias": d.get("attention_bias", False), "hidden_act": "silu",
                  "max_position_embeddings": int(rs["factor"] * rs["original_max_position_embeddings"]),
                  "rms_norm_eps": d["rms_norm_eps"], "sliding_window": d["window"], "tie_word_embeddings": d["tied"]})
        if d.get("rope_parameters"):
            c["dtype"] = c.pop("torch_dtype")
            c.update({"rope_parameters": {
                "full_attention": dict(sorted(dict(rs, rope_theta=d["theta"]).items())),
                "sliding_attention": {"rope_theta": d["local_theta"], "rope_type": "default"}},
                "transformers_version": "5.0.0"})
        else:
            c.update({"layer_types": ["sliding_attention" if (i + 1) % 4 != 0 else "full_attention"
                                      for i in range(d["L"])],
                      "rope_scaling": rs, "rope_theta": d["theta"], "transformers_version": "4.57.0"})
    elif mtype == "olmoe":
        # as allenai/OLMoE-1B-7B-0924's config.json has it (OlmoeConfig.to_dict as transformers 4.43 wrote it):
        # attention_bias, clip_qkv null (OlmoeAttention clamps q / k / v only when it is set), no head_dim key
        # (OlmoeAttention(LlamaAttention): hidden_size // num_attention_heads), intermediate_size the experts' width,
        # max_position_embeddings 4096, norm_topk_prob false, num_experts / num_experts_per_tok,
        # output_router_logits false and router_aux_loss_coef 0.01 (training only), rope_scaling null beside
        # rope_theta, untied; pad_token_id / bos_token_id / eos_token_id this tokenizer's (released: 1, null, 50279)
        c.update({"attention_bias": False, "clip_qkv": None, "hidden_act": "silu", "max_position_embeddings": 4096,
                  "norm_topk_prob": d["norm_topk"], "num_experts": d["E"], "num_experts_per_tok": d["k"],
                  "output_router_logits": False, "rms_norm_eps": 1e-05, "rope_scaling": None,
                  "rope_theta": d["theta"], "router_aux_loss_coef": 0.01, "tie_word_embeddings": d["tied"],
                  "transformers_version": "4.43.0"})
    elif mtype == "minimax_m2" and not d.get("rope_parameters"):
        # as MiniMaxAI/MiniMax-M2's config.json has it (M2.1 and M2.5 the same keys), key for key and in its order
        # (MiniMax's remote-code configuration_minimax_m2.py, transformers_version 4.46.1: attn_type_list (1 =
        # softmax attention, every layer), auto_map (the keys only: no .py files, abliterate never runs remote code),
        # the MTP keys (use_mtp, num_mtp_modules 3, mtp_transformer_layers 1; no MTP tensors in the files),
        # qk_norm_type per_layer, rope_theta 5000000 (an integer), rotary_dim, scoring_func sigmoid,
        # shared_intermediate_size 0, use_qk_norm, use_routing_bias, torch_dtype last); no bos / eos / pad token ids
        # (the released generation_config.json has them: build_one writes the tokenizer's there)
        return {"architectures": [arch], "attn_type_list": [1] * d["L"],
                "auto_map": {"AutoConfig": "configuration_minimax_m2.MiniMaxM2Config",
                             "AutoModelForCausalLM": "modeling_minimax_m2.MiniMaxM2ForCausalLM"},
                "head_dim": d["HD"], "hidden_act": "silu", "hidden_size": d["H"], "intermediate_size": d["F"],
                "max_position_embeddings": 196608, "model_type": mtype, "mtp_transformer_layers": 1,
                "num_attention_heads": d["NH"], "num_experts_per_tok": d["k"], "num_hidden_layers": d["L"],
                "num_key_value_heads": d["NKV"], "num_local_experts": d["E"], "num_mtp_modules": 3,
                "qk_norm_type": "per_layer", "rms_norm_eps": 1e-06, "rope_theta": d["theta"],
                "rotary_dim": d["rotary_dim"], "scoring_func": "sigmoid", "shared_intermediate_size": 0,
                "tie_word_embeddings": d["tied"], "transformers_version": "4.46.1", "use_cache": True,
                "use_mtp": True, "use_qk_norm": True, "use_routing_bias": True, "vocab_size": tok.vocab_size,
                "torch_dtype": torch_dtype}
    elif mtype == "minimax_m2":
        # as transformers 5 writes MiniMaxM2Config (models/minimax_m2/configuration_minimax_m2.py: its fields, sorted):
        # "dtype" in place of torch_dtype, head_dim, num_local_experts, output_router_logits, router_aux_loss_coef
        # 0.001, router_jitter_noise, rope_parameters {"partial_rotary_factor", "rope_theta", "rope_type": "default"}
        # (convert_rope_params_to_dict's: the factor in place of rotary_dim; no top-level rope_theta), none of the
        # remote-code keys (MiniMaxM2Config does not read them); the token ids this tokenizer's
        c["dtype"] = c.pop("torch_dtype")
        c.update({"head_dim": d["HD"], "hidden_act": "silu", "max_position_embeddings": 196608,
                  "num_experts_per_tok": d["k"], "num_local_experts": d["E"], "output_router_logits": False,
                  "rms_norm_eps": 1e-06, "rope_parameters": {"partial_rotary_factor": d["partial_rotary_factor"],
                                                             "rope_theta": d["theta"], "rope_type": "default"},
                  "router_aux_loss_coef": 0.001, "router_jitter_noise": 0.0, "tie_word_embeddings": d["tied"],
                  "transformers_version": "5.0.0"})
    elif mtype == "ernie4_5_moe" and not d.get("rope_parameters"):
        # as baidu/ERNIE-4.5-21B-A3B-PT's config.json has it (transformers 4.54's spelling, Baidu's key order): rope_theta
        # 500000 (an integer) at the top level, use_bias, no head_dim, moe_num_experts / moe_k / moe_intermediate_size /
        # moe_num_shared_experts / moe_layer_start_index / moe_layer_interval (no moe_layer_end_index: -1), and Baidu's
        # own keys that transformers does not read (use_rmsnorm, moe_capacity, moe_gate "topk", moe_use_aux_free;
        # reference.Spec refuses values that would make Baidu's code compute something else); token ids this
        # tokenizer's (released: bos 1, eos 2, pad 0)
        return {"architectures": [arch], "bos_token_id": None, "eos_token_id": im_end, "hidden_act": "silu",
                "hidden_size": d["H"], "intermediate_size": d["F"], "max_position_embeddings": 131072,
                "model_type": mtype, "num_attention_heads": d["NH"], "num_key_value_heads": d["NKV"],
                "num_hidden_layers": d["L"], "pad_token_id": eot, "rms_norm_eps": 1e-05, "use_cache": False,
                "vocab_size": tok.vocab_size, "rope_theta": d["theta"], "use_rmsnorm": True, "use_bias": False,
                "moe_num_experts": d["E"], "moe_num_shared_experts": d["n_shared"],
                "moe_layer_start_index": d["moe_start"], "moe_intermediate_size": d["Fm"], "moe_capacity": [64, 64, 64],
                "moe_gate": "topk", "moe_k": d["k"], "moe_layer_interval": d.get("moe_interval", 1),
                "moe_use_aux_free": True, "tie_word_embeddings": d["tied"], "torch_dtype": torch_dtype,
                "transformers_version": "4.54.0"}
    elif mtype == "ernie4_5_moe":
        # as transformers 5 writes Ernie4_5_MoeConfig (models/ernie4_5_moe/configuration_ernie4_5_moe.py: its fields,
        # sorted): "dtype", rope_parameters {"rope_theta", "rope_type": "default"} and no rope_theta,
        # moe_layer_end_index as a number (__init__ resolves -1), moe_norm_min, output_router_logits,
        # router_aux_loss_coef, use_bias; none of Baidu's own keys; token ids this tokenizer's
        c["dtype"] = c.pop("torch_dtype")
        del c["attention_dropout"]
        c.update({"hidden_act": "silu", "max_position_embeddings": 131072, "moe_intermediate_size": d["Fm"],
                  "moe_k": d["k"], "moe_layer_end_index": d["moe_end"], "moe_layer_interval": d["moe_interval"],
                  "moe_layer_start_index": d["moe_start"], "moe_norm_min": 1e-12, "moe_num_experts": d["E"],
                  "moe_num_shared_experts": d["n_shared"], "output_router_logits": False, "rms_norm_eps": 1e-05,
                  "rope_parameters": {"rope_theta": d["theta"], "rope_type": "default"}, "router_aux_loss_coef": 0.001,
                  "tie_word_embeddings": d["tied"], "transformers_version": "5.0.0", "use_bias": False})
    elif mtype == "ernie4_5":
        # as baidu/ERNIE-4.5-0.3B-PT's config.json has it (Baidu's key order): head_dim listed, rope_theta 500000 (an
        # integer), use_bias (here true: the fixture's point), tie_word_embeddings; token ids this tokenizer's
        # (released: bos 1, eos 2, pad 0)
        return {"architectures": [arch], "bos_token_id": None, "eos_token_id": im_end, "head_dim": d["HD"],
                "hidden_act": "silu", "hidden_size": d["H"], "intermediate_size": d["F"],
                "max_position_embeddings": 131072, "model_type": mtype, "num_attention_heads": d["NH"],
                "num_key_value_heads": d["NKV"], "num_hidden_layers": d["L"], "pad_token_id": eot,
                "rms_norm_eps": 1e-05, "use_cache": False, "vocab_size": tok.vocab_size, "rope_theta": d["theta"],
                "use_bias": d["use_bias"], "tie_word_embeddings": d["tied"], "torch_dtype": torch_dtype,
                "transformers_version": "4.54.0"}
    elif mtype == "exaone4":
        # as LGAI-EXAONE/EXAONE-4.0-32B's config.json has it (Exaone4Config.to_dict as transformers 4.54 writes it, keys
        # sorted): head_dim listed, layer_types listed beside the string sliding_window_pattern "LLLG", rope_scaling
        # (llama3) beside rope_theta (an integer), sliding_window; no attention_bias / mlp_bias keys (Exaone4Config has
        # none), no cache_implementation (4.54's `if "sliding_window" in self.layer_types` never matches). The
        # 1.2B-shaped fixture (d["window"] None): sliding_window null, sliding_window_pattern null, layer_types all
        # full_attention, no head_dim key, rope_scaling null, tied. Token ids this tokenizer's (released: bos 1, eos
        # 361, pad 0)
        if d["window"] is None:
            types = ["full_attention"] * d["L"]
        else:
            pattern = d["pattern"]
            types = ["sliding_attention" if i != d["L"] - 1 and pattern[i % len(pattern)] == "L" else "full_attention"
                     for i in range(d["L"])]
        c.update({"hidden_act": "silu", "layer_types": types,
                  "max_position_embeddings": int(d["rope_scaling"]["factor"] *
                                                 d["rope_scaling"]["original_max_position_embeddings"])
                  if d["rope_scaling"] else 65536,
                  "rms_norm_eps": 1e-05, "rope_scaling": d["rope_scaling"], "rope_theta": d["theta"],
                  "sliding_window": d["window"], "sliding_window_pattern": d["pattern"],
                  "tie_word_embeddings": d["tied"], "transformers_version": "4.54.0"})
        if d["window"] is not None:
            c["head_dim"] = d["HD"]
    elif mtype == "phimoe":
        # as transformers 4.x's save_pretrained writes PhimoeConfig (configuration_phimoe.py, 4.46-4.57; keys sorted)
        # for microsoft/Phi-3.5-MoE-instruct's config.json (which names the remote-code PhiMoEForCausalLM; here
        # transformers' PhimoeForCausalLM): attention_bias true, lm_head_bias true, hidden_act silu,
        # input_jitter_noise 0.01 and router_aux_loss_coef 0.0 as released (training only), num_local_experts /
        # num_experts_per_tok 2, router_jitter_noise (the fixture's: see MODELS), rope_scaling longrope with
        # short_mscale / long_mscale and original_max_position_embeddings (PhimoeConfig.__init__ adds "rope_type" from
        # "type", and copies original_max_position_embeddings to the config: the release lists it at the top level
        # too), rope_theta 1e4 as released (PhimoeConfig's default is 1e6), sliding_window, tie_word_embeddings false,
        # no head_dim key; bos / eos / pad this tokenizer's (released: 1 / 32000 / null)
        rs = dict(d["rope_scaling"], long_mscale=d["mscale"], short_mscale=d["mscale"],
                  original_max_position_embeddings=d["original_max_positions"], rope_type="longrope")
        c.update({"attention_bias": True, "hidden_act": "silu", "input_jitter_noise": 0.01, "lm_head_bias": True,
                  "max_position_embeddings": d["max_positions"], "num_experts_per_tok": d["k"],
                  "num_local_experts": d["E"], "original_max_position_embeddings": d["original_max_positions"],
                  "output_router_logits": False, "rms_norm_eps": 1e-05, "rope_scaling": dict(sorted(rs.items())),
                  "rope_theta": d["theta"], "router_aux_loss_coef": 0.0, "router_jitter_noise": d["jitter"],
                  "sliding_window": d["window"], "tie_word_embeddings": d["tied"], "transformers_version": "4.46.0"})
    elif mtype == "llama4":
        # as meta-llama/Llama-4-Scout-17B-16E(-Instruct)'s config.json has it (Llama4Config.to_dict as transformers 4.51
        # wrote it, keys sorted): boi / eoi / image token indices, tie_word_embeddings false and torch_dtype at the top
        # level; a text_config of model_type llama4_text with attention_chunk_size, attn_scale, attn_temperature_tuning
        # (true; the release writes 4, also true), floor_scale, head_dim, interleave_moe_layer_step, intermediate_size
        # (the experts' and the shared expert's width), intermediate_size_mlp (the dense layers'), moe_layers and
        # no_rope_layers listed, num_experts_per_tok, num_local_experts, rope_scaling llama3 beside rope_theta, use_qk_norm,
        # router_aux_loss_coef / router_jitter_noise / output_router_logits (training only), tie_word_embeddings; the
        # fixture's numbers (see MODELS); bos / eos / pad this tokenizer's (released: 200000, [200001, 200007, 200008],
        # 200018), the image token indices this vocabulary's; a small vision_config of model_type llama4_vision_model
        text = {"attention_bias": False, "attention_chunk_size": d["chunk"], "attention_dropout": 0.0,
                "attn_scale": d["temp_scale"], "attn_temperature_tuning": True, "bos_token_id": eot,
                "eos_token_id": [im_end, eot], "floor_scale": d["floor_scale"], "head_dim": d["HD"],
                "hidden_act": "silu", "hidden_size": d["H"], "initializer_range": 0.02,
                "interleave_moe_layer_step": d["moe_interval"], "intermediate_size": d["Fm"],
                "intermediate_size_mlp": d["F"], "max_position_embeddings": d["max_positions"],
                "model_type": "llama4_text", "moe_layers": d["moe_layers"], "no_rope_layers": d["no_rope_layers"],
                "num_attention_heads": d["NH"], "num_experts_per_tok": d["k"], "num_hidden_layers": d["L"],
                "num_key_value_heads": d["NKV"], "num_local_experts": d["E"], "output_router_logits": False,
                "pad_token_id": eot, "rms_norm_eps": 1e-05, "rope_scaling": dict(sorted(d["rope_scaling"].items())),
                "rope_theta": d["theta"], "router_aux_loss_coef": 0.001, "router_jitter_noise": 0.0,
                "tie_word_embeddings": d["tied"], "torch_dtype": torch_dtype, "use_cache": True, "use_qk_norm": True,
                "vocab_size": tok.vocab_size}
        vision = {"attention_dropout": 0.0, "hidden_act": "gelu", "hidden_size": d["vision_hidden"], "image_size": 8,
                  "initializer_range": 0.02, "intermediate_size": 16, "model_type": "llama4_vision_model",
                  "multi_modal_projector_bias": False, "norm_eps": 1e-05, "num_attention_heads": 2, "num_channels": 3,
                  "num_hidden_layers": 1, "patch_size": 4, "pixel_shuffle_ratio": 0.5, "projector_dropout": 0.0,
                  "projector_input_dim": 16, "projector_output_dim": 16, "rope_theta": 10000,
                  "vision_feature_layer": -1, "vision_feature_select_strategy": "default",
                  "vision_output_dim": d["vision_output"]}
        c = {"architectures": [arch], "boi_token_index": 12, "eoi_token_index": 13, "image_token_index": 10,
             "model_type": "llama4", "text_config": text, "tie_word_embeddings": d["tied"], "torch_dtype": torch_dtype,
             "transformers_version": "4.51.0", "vision_config": vision}
    elif mtype == "arcee":
        # shaped after arcee-ai/AFM-4.5B's config.json (ArceeConfig as transformers 4.53 writes it, keys sorted): head_dim
        # listed (= hidden / heads, as AFM's 128 = 2560 / 20), hidden_act relu2, attention_bias / mlp_bias false, no
        # pretraining_tp (ArceeConfig deletes it), rms_norm_eps 1e-5, untied; rope_scaling YaRN written with both
        # "rope_type" and "type" "yarn", beta_fast 32.0 / beta_slow 1.0 and an mscale 1.0 without mscale_all_dim (so the
        # attention factor is YaRN's default 0.1 ln(factor) + 1, in transformers' _compute_yarn_parameters as in
        # abliterate's parse_yarn), the factor and original_max_position_embeddings the fixture's, max_position_embeddings
        # = factor x original (see qwen3-yarn: 4.51-4.55 took the factor from their ratio); token ids this tokenizer's
        rs = d["rope_scaling"]
        c.update({"attention_bias": False, "head_dim": d["HD"], "hidden_act": "relu2",
                  "max_position_embeddings": int(rs["factor"] * rs["original_max_position_embeddings"]),
                  "mlp_bias": False, "rms_norm_eps": 1e-05, "rope_scaling": dict(sorted(rs.items())),
                  "rope_theta": d["theta"], "tie_word_embeddings": d["tied"], "transformers_version": "4.53.0"})
    elif mtype == "dots1":
        # shaped after rednote-hilab/dots.llm1.inst's config.json (Dots1ForCausalLM, model_type dots1, keys sorted; as
        # far as its keys are known here):
        # first_k_dense_replace, n_routed_experts / num_experts_per_tok / n_shared_experts / moe_intermediate_size,
        # n_group / topk_group, norm_topk_prob true, routed_scaling_factor, scoring_func "sigmoid" (not read by
        # Dots1Config), attention_bias false, rms_norm_eps 1e-5, rope_scaling null, untied; the fixture's sizes, expert
        # groups (2 of 4, the best 1 kept: the release has 1 group), head_dim listed and != hidden / heads (Dots1Config
        # has no such field: Dots1Attention's getattr reads the leftover attribute), and a sliding_window with
        # max_window_layers < num_hidden_layers (the release: no layer slides), no layer_types key (Dots1Config derives
        # them: layers i >= max_window_layers slide); token ids this tokenizer's
        c.update({"attention_bias": False, "first_k_dense_replace": d["first_k_dense"], "head_dim": d["HD"],
                  "hidden_act": "silu", "max_position_embeddings": 32768, "max_window_layers": d["max_window_layers"],
                  "moe_intermediate_size": d["Fm"], "n_group": d["n_group"], "n_routed_experts": d["E"],
                  "n_shared_experts": d["n_shared"], "norm_topk_prob": d["norm_topk"], "num_experts_per_tok": d["k"],
                  "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": d["theta"],
                  "routed_scaling_factor": d["scaling"], "scoring_func": "sigmoid", "sliding_window": d["window"],
                  "tie_word_embeddings": d["tied"], "topk_group": d["topk_group"], "transformers_version": "4.53.0"})
    elif mtype == "apertus":
        # shaped after swiss-ai/Apertus-8B-2509's config.json (ApertusConfig as transformers 4.56 writes it, keys
        # sorted): hidden_act xielu, attention_bias false, rope_theta (an integer there, 12000000) beside rope_scaling
        # llama3 with both "rope_type" and "type", max_position_embeddings = factor x original_max_position_embeddings
        # (65536 = 8 x 8192 there), rms_norm_eps 1e-5, tie_word_embeddings false, torch_dtype bfloat16, no head_dim
        # (ApertusConfig has none: hidden / heads), and Swiss AI's keys that ApertusConfig does not read, qk_norm true,
        # post_norm false, mlp_bias false; the fixture's sizes, theta and original length; token ids this tokenizer's
        # (released: bos 1, eos 2, pad 3)
        rs = d["rope_scaling"]
        c.update({"attention_bias": False, "hidden_act": "xielu",
                  "max_position_embeddings": int(rs["factor"] * rs["original_max_position_embeddings"]),
                  "mlp_bias": False, "post_norm": False, "qk_norm": True, "rms_norm_eps": 1e-05,
                  "rope_scaling": dict(sorted(rs.items())), "rope_theta": d["theta"], "tie_word_embeddings": d["tied"],
                  "transformers_version": "4.56.0"})
    elif mtype == "glm4_moe_lite":
        # as transformers 5 writes Glm4MoeLiteConfig (its dataclass fields, keys sorted: "dtype", pretraining_tp, the
        # flat rope_parameters {"rope_theta", "rope_type": "default"} and no top-level rope_theta / rope_scaling,
        # rope_interleave, mlp_layer_types listed) plus the keys zai-org/GLM-4.7-Flash's config.json lists that
        # Glm4MoeLiteConfig has no field for: first_k_dense_replace 1 (agreeing with mlp_layer_types),
        # num_nextn_predict_layers 1 (the MTP layer model.layers.L.*), topk_method "noaux_tc" (no scoring_func key, as
        # released); no head_dim key (the attribute_map reads it as qk_rope_head_dim); the fixture's sizes, theta
        # (the release's 1000000) and one expert group as released; token ids this tokenizer's
        c["dtype"] = c.pop("torch_dtype")
        c.update({"attention_bias": False, "eos_token_id": [im_end, eot], "first_k_dense_replace": 1,
                  "hidden_act": "silu", "kv_lora_rank": d["kv_lora_rank"],
                  "max_position_embeddings": d["max_positions"],
                  "mlp_layer_types": ["dense"] + ["sparse"] * (d["L"] - 1), "moe_intermediate_size": d["Fm"],
                  "n_group": d["n_group"], "n_routed_experts": d["E"], "n_shared_experts": d["n_shared"],
                  "norm_topk_prob": d["norm_topk"], "num_experts_per_tok": d["k"], "num_nextn_predict_layers": 1,
                  "pretraining_tp": 1, "q_lora_rank": d["q_lora_rank"], "qk_nope_head_dim": d["qk_nope"],
                  "qk_rope_head_dim": d["qk_rope"], "rms_norm_eps": d["rms_norm_eps"], "rope_interleave": True,
                  "rope_parameters": {"rope_theta": d["theta"], "rope_type": "default"},
                  "routed_scaling_factor": d["scaling"], "tie_word_embeddings": d["tied"],
                  "topk_group": d["topk_group"], "topk_method": "noaux_tc", "transformers_version": "5.0.0",
                  "v_head_dim": d["v_head_dim"]})
    else:
        raise ValueError(mtype)
    return dict(sorted(c.items()))


def hybrid_config(arch, mtype, d, tok, torch_dtype):
    """config.json of the hybrid linear-attention fixtures.
    qwen3_next: as Qwen/Qwen3-Next-80B-A3B-Instruct's config.json has it (Qwen3NextConfig as transformers 4.57 wrote it,
    keys sorted): full_attention_interval and no layer_types (Qwen3NextConfig.__post_init__ derives them), rope_theta
    (an integer, 10000000 as released) with partial_rotary_factor and rope_scaling null at the top level,
    decoder_sparse_step 1 and mlp_only_layers [] (a MoE on every layer; intermediate_size unused), norm_topk_prob,
    num_experts / num_experts_per_tok / moe_intermediate_size / shared_expert_intermediate_size, output_router_logits,
    router_aux_loss_coef, use_sliding_window false, torch_dtype, tie_word_embeddings false; bos / eos this tokenizer's
    <|endoftext|> / <|im_end|> (released: 151643 / 151645, the same tokens).
    qwen3_5 / qwen3_5_moe: as transformers 5 writes Qwen3_5Config / Qwen3_5MoeConfig (Qwen3VLConfig's top level:
    architectures, image / video / vision token ids, tie_word_embeddings, text_config, vision_config), the text_config
    with the Qwen3.5 releases' keys: "dtype", layer_types listed beside full_attention_interval, attn_output_gate true,
    rope_parameters {"mrope_interleaved": true, "mrope_section", "partial_rotary_factor", "rope_theta", "rope_type":
    "default"} (no top-level rope_theta), mamba_ssm_dtype, mtp_num_hidden_layers 1, mtp_use_dedicated_embeddings false,
    tie_word_embeddings as at the top level; the dense one intermediate_size, the MoE one num_experts /
    num_experts_per_tok / moe_intermediate_size / shared_expert_intermediate_size / router_aux_loss_coef /
    output_router_logits and no intermediate_size nor norm_topk_prob (Qwen3_5MoeTextConfig removes them); a small
    vision_config stand-in (Qwen3VLVisionConfig's keys; the MoE one with deepstack_visual_indexes [])."""
    im_end, eot = tok.specials["<|im_end|>"], tok.specials["<|endoftext|>"]
    L = d["L"]
    lin = {"linear_conv_kernel_dim": d["K"], "linear_key_head_dim": d["DK"], "linear_num_key_heads": d["NK"],
           "linear_num_value_heads": d["NV"], "linear_value_head_dim": d["DV"]}
    if mtype == "qwen3_next":
        c = {"architectures": [arch], "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": eot,
             "decoder_sparse_step": 1, "eos_token_id": im_end, "full_attention_interval": d["interval"],
             "head_dim": d["HD"], "hidden_act": "silu", "hidden_size": d["H"], "initializer_range": 0.02,
             "intermediate_size": d["F"], "max_position_embeddings": 262144, "mlp_only_layers": [],
             "model_type": mtype, "moe_intermediate_size": d["Fm"], "norm_topk_prob": d["norm_topk"],
             "num_attention_heads": d["NH"], "num_experts": d["E"], "num_experts_per_tok": d["k"],
             "num_hidden_layers": L, "num_key_value_heads": d["NKV"], "output_router_logits": False,
             "partial_rotary_factor": d["partial_rotary_factor"], "rms_norm_eps": 1e-06, "rope_scaling": None,
             "rope_theta": d["theta"], "router_aux_loss_coef": 0.001, "shared_expert_intermediate_size": d["Fs"],
             "tie_word_embeddings": d["tied"], "torch_dtype": torch_dtype, "transformers_version": "4.57.0",
             "use_cache": True, "use_sliding_window": False, "vocab_size": tok.vocab_size}
        c.update(lin)
        return dict(sorted(c.items()))
    types = ["linear_attention" if (i + 1) % d["interval"] else "full_attention" for i in range(L)]
    text = {"attention_bias": False, "attention_dropout": 0.0, "attn_output_gate": True, "bos_token_id": eot,
            "dtype": torch_dtype, "eos_token_id": im_end, "full_attention_interval": d["interval"], "head_dim": d["HD"],
            "hidden_act": "silu", "hidden_size": d["H"], "initializer_range": 0.02, "layer_types": types,
            "mamba_ssm_dtype": "float32", "max_position_embeddings": 262144, "model_type": mtype + "_text",
            "mtp_num_hidden_layers": 1, "mtp_use_dedicated_embeddings": False, "num_attention_heads": d["NH"],
            "num_hidden_layers": L, "num_key_value_heads": d["NKV"], "rms_norm_eps": 1e-06,
            "rope_parameters": {"mrope_interleaved": True, "mrope_section": d["mrope_section"],
                                "partial_rotary_factor": d["partial_rotary_factor"], "rope_theta": d["theta"],
                                "rope_type": "default"},
            "tie_word_embeddings": d["tied"], "use_cache": True, "vocab_size": tok.vocab_size}
    text.update(lin)
    if mtype == "qwen3_5_moe":
        text.update({"moe_intermediate_size": d["Fm"], "num_experts": d["E"], "num_experts_per_tok": d["k"],
                     "output_router_logits": False, "router_aux_loss_coef": 0.001,
                     "shared_expert_intermediate_size": d["Fs"]})
    else:
        text["intermediate_size"] = d["F"]
    vision = {"depth": 1, "hidden_act": "gelu_pytorch_tanh", "hidden_size": d["vision_hidden"], "in_channels": 3,
              "initializer_range": 0.02, "intermediate_size": 16, "model_type": mtype, "num_heads": 2,
              "num_position_embeddings": 16, "out_hidden_size": d["H"], "patch_size": 2, "spatial_merge_size": 2,
              "temporal_patch_size": 2}
    if mtype == "qwen3_5_moe":
        vision["deepstack_visual_indexes"] = []
    return {"architectures": [arch], "image_token_id": 10, "model_type": mtype,
            "text_config": dict(sorted(text.items())), "tie_word_embeddings": d["tied"],
            "transformers_version": "5.2.0", "video_token_id": 11, "vision_config": dict(sorted(vision.items())),
            "vision_end_token_id": 12, "vision_start_token_id": 13}


def lfm2_config(arch, mtype, d, tok, torch_dtype):
    """config.json of an LFM2 fixture (Lfm2ForCausalLM), in the spelling of LiquidAI's LFM2 releases (keys sorted): the
    original LFM2 keys beside transformers' ones -- block_ff_dim beside intermediate_size (Lfm2Config takes block_ff_dim),
    block_auto_adjust_ff_dim, block_ffn_dim_multiplier, block_multiple_of, block_dim and conv_dim (= hidden_size: "block_dim
    and conv_dim are hidden_size", not read), conv_dim_out, num_heads (= num_attention_heads, not read), block_norm_eps
    (not read: norm_eps is), block_mlp_init_scale / block_out_init_scale / block_use_swiglu / block_use_xavier_init /
    conv_use_xavier_init / use_pos_enc (training keys, not read) --, conv_L_cache, conv_bias false, layer_types listed with
    full_attn_idxs null (as the newer releases write them), norm_eps, rope_theta (a float), tie_word_embeddings,
    torch_dtype, max_position_embeddings 128000; no "theta" / "tie_embedding" (the original keys Lfm2Config would let win:
    reference.lfm2_layers; check_reference reads them), no head_dim (hidden / heads); bos / eos / pad this tokenizer's
    <|endoftext|> / <|im_end|> / <|endoftext|> (released: 1 / 7 / 0)."""
    im_end, eot = tok.specials["<|im_end|>"], tok.specials["<|endoftext|>"]
    H = d["H"]
    c = {"architectures": [arch], "block_auto_adjust_ff_dim": d["auto_adjust_ff_dim"], "block_dim": H,
         "block_ff_dim": d["F"], "block_ffn_dim_multiplier": d["ffn_dim_multiplier"], "block_mlp_init_scale": 1.0,
         "block_multiple_of": d["multiple_of"], "block_norm_eps": 1e-05, "block_out_init_scale": 1.0,
         "block_use_swiglu": True, "block_use_xavier_init": True, "bos_token_id": eot, "conv_L_cache": d["conv_L_cache"],
         "conv_bias": False, "conv_dim": H, "conv_dim_out": H, "conv_use_xavier_init": True, "eos_token_id": im_end,
         "full_attn_idxs": None, "hidden_size": H, "initializer_range": 0.02, "intermediate_size": d["F"],
         "layer_types": d["layer_types"], "max_position_embeddings": 128000, "model_type": mtype, "norm_eps": 1e-05,
         "num_attention_heads": d["NH"], "num_heads": d["NH"], "num_hidden_layers": d["L"],
         "num_key_value_heads": d["NKV"], "pad_token_id": eot, "rope_theta": d["theta"],
         "tie_word_embeddings": d["tied"], "torch_dtype": torch_dtype, "transformers_version": "4.54.0",
         "use_cache": True, "use_pos_enc": True, "vocab_size": tok.vocab_size}
    return dict(sorted(c.items()))


def lfm2_moe_config(arch, mtype, d, tok, torch_dtype):
    """config.json of an LFM2-MoE fixture (Lfm2MoeForCausalLM), keys sorted, as transformers 4.57 writes Lfm2MoeConfig
    (LiquidAI/LFM2-8B-A1B's keys): conv_L_cache, conv_bias false, "dtype" (4.56+'s spelling of torch_dtype), hidden_size,
    intermediate_size (the dense layers' width, used as it stands), layer_types listed (Lfm2MoeConfig derives none),
    max_position_embeddings 128000, moe_intermediate_size, norm_eps 1e-5, norm_topk_prob, num_dense_layers, num_experts,
    num_experts_per_tok, rope_theta (a float at the top level: 4.57's argument; transformers 5 would write
    rope_parameters), routed_scaling_factor, tie_word_embeddings, use_expert_bias; none of LFM2's original keys
    (block_*, theta, full_attn_idxs, tie_embedding), no head_dim (hidden / heads), no hidden_act; bos / eos / pad this
    tokenizer's <|endoftext|> / <|im_end|> / <|endoftext|> (released: 1 / 7 / 0)."""
    im_end, eot = tok.specials["<|im_end|>"], tok.specials["<|endoftext|>"]
    c = {"architectures": [arch], "bos_token_id": eot, "conv_L_cache": d["conv_L_cache"], "conv_bias": False,
         "dtype": torch_dtype, "eos_token_id": im_end, "hidden_size": d["H"], "initializer_range": 0.02,
         "intermediate_size": d["F"], "layer_types": d["layer_types"], "max_position_embeddings": 128000,
         "model_type": mtype, "moe_intermediate_size": d["Fm"], "norm_eps": 1e-05, "norm_topk_prob": True,
         "num_attention_heads": d["NH"], "num_dense_layers": d["num_dense_layers"], "num_experts": d["E"],
         "num_experts_per_tok": d["k"], "num_hidden_layers": d["L"], "num_key_value_heads": d["NKV"],
         "pad_token_id": eot, "rope_theta": d["theta"], "routed_scaling_factor": d["routed_scaling_factor"],
         "tie_word_embeddings": d["tied"], "transformers_version": "4.57.1", "use_cache": True, "use_expert_bias": True,
         "vocab_size": tok.vocab_size}
    return dict(sorted(c.items()))


def nemotron_h_config(arch, mtype, d, tok, torch_dtype):
    """config.json of a Nemotron-H fixture (NemotronHForCausalLM), keys sorted, in the spelling of
    nvidia/Nemotron-H-8B-Base-8K's (NVIDIA's remote NemotronHConfig as transformers 4.48 saved it: its __init__
    arguments stored under the attribute names n_groups, conv_kernel, expand, time_step_min / max / floor / limit,
    use_conv_bias, chunk_size): hybrid_override_pattern (one character per layer) beside num_hidden_layers,
    attention_head_dim (the old key; no head_dim), mlp_hidden_act relu2, mamba_hidden_act silu, mamba_num_heads /
    mamba_head_dim (the mixer's width is their product; expand is listed and not read), ssm_state_size, n_groups,
    conv_kernel, use_conv_bias, use_bias / mamba_proj_bias / mlp_bias / attention_bias false, chunk_size,
    time_step_min (the floor torch_forward puts under dt), time_step_max and time_step_floor (dt_bias's init only),
    time_step_limit [0.0, Infinity] (Python's json spelling of inf, as the release has it), layer_norm_epsilon (the
    eps every norm takes) beside an unread rms_norm_eps, residual_in_fp32 false, rescale_prenorm_residual true (init
    only), use_mamba_kernels true, num_logits_to_keep 1, hidden_dropout / attention_dropout 0, sliding_window null,
    max_position_embeddings 8192, tie_word_embeddings false, torch_dtype bfloat16, auto_map naming NVIDIA's remote
    configuration_nemotron_h / modeling_nemotron_h (the keys only: no .py files, abliterate never runs remote code);
    bos / eos / pad this tokenizer's <|endoftext|> / <|im_end|> / <|endoftext|> (released: 1 / 2 / 0)."""
    im_end, eot = tok.specials["<|im_end|>"], tok.specials["<|endoftext|>"]
    m = d["mamba"]
    c = {"architectures": [arch], "attention_bias": False, "attention_dropout": 0.0, "attention_head_dim": d["HD"],
         "auto_map": {"AutoConfig": "configuration_nemotron_h.NemotronHConfig",
                      "AutoModelForCausalLM": "modeling_nemotron_h.NemotronHForCausalLM"},
         "bos_token_id": eot, "chunk_size": m["chunk_size"], "conv_kernel": m["conv_kernel"], "eos_token_id": im_end,
         "expand": m["expand"], "hidden_dropout": 0.0, "hidden_size": d["H"],
         "hybrid_override_pattern": d["pattern"], "initializer_range": 0.02, "intermediate_size": d["F"],
         "layer_norm_epsilon": 1e-05, "mamba_head_dim": m["head_dim"], "mamba_hidden_act": "silu",
         "mamba_num_heads": m["num_heads"], "mamba_proj_bias": False, "max_position_embeddings": 8192,
         "mlp_bias": False, "mlp_hidden_act": "relu2", "model_type": mtype, "n_groups": m["n_groups"],
         "num_attention_heads": d["NH"], "num_hidden_layers": d["L"], "num_key_value_heads": d["NKV"],
         "num_logits_to_keep": 1, "pad_token_id": eot, "rescale_prenorm_residual": True, "residual_in_fp32": False,
         "rms_norm_eps": 1e-05, "sliding_window": None, "ssm_state_size": m["state_size"],
         "tie_word_embeddings": d["tied"], "time_step_floor": m["time_step_floor"],
         "time_step_limit": [0.0, float("inf")], "time_step_max": m["time_step_max"],
         "time_step_min": m["time_step_min"], "torch_dtype": torch_dtype, "transformers_version": "4.48.0.dev0",
         "use_bias": False, "use_cache": True, "use_conv_bias": m["conv_bias"], "use_mamba_kernels": True,
         "vocab_size": tok.vocab_size}
    return dict(sorted(c.items()))


def nemotron_h_moe_config(arch, mtype, d, tok, torch_dtype):
    """config.json of a Nemotron-H fixture with MoE blocks, keys sorted, in the spelling of
    nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16's (NVIDIA's remote NemotronHConfig as transformers 4.55.4 saved it):
    nemotron_h_config's Mamba-2 / attention / MLP keys with these differences: `head_dim` (no attention_head_dim),
    norm_eps beside layer_norm_epsilon (no rms_norm_eps; neither norm_eps nor rope_theta / partial_rotary_factor is
    read: the attention takes no positions), mamba_ssm_cache_dtype float32, no time_step_limit (NemotronHConfig's (0,
    inf) applies), max_position_embeddings 262144, auto_map with AutoModel too, transformers_version 4.55.4; and the MoE
    keys: n_routed_experts, num_experts_per_tok, moe_intermediate_size, moe_shared_expert_intermediate_size,
    n_shared_experts 1, n_group / topk_group (1 / 1 as released), norm_topk_prob true, routed_scaling_factor. No
    moe_latent_size key (the Nano release writes none: NemotronHConfig's null, no latent projection) unless the entry's
    moe dict has `latent`: then `moe_latent_size` (NVIDIA-Nemotron-3-Super's LatentMoE), the rest as Nano's. intermediate_size
    is the dense "-" layers' width (the release has no such layer and lists moe_intermediate_size's value there). bos /
    eos / pad this tokenizer's <|endoftext|> / <|im_end|> / <|endoftext|> (released: 1 / 2 / 0)."""
    im_end, eot = tok.specials["<|im_end|>"], tok.specials["<|endoftext|>"]
    m, e = d["mamba"], d["moe"]
    c = {"architectures": [arch], "attention_bias": False, "attention_dropout": 0.0,
         "auto_map": {"AutoConfig": "configuration_nemotron_h.NemotronHConfig",
                      "AutoModel": "modeling_nemotron_h.NemotronHForCausalLM",
                      "AutoModelForCausalLM": "modeling_nemotron_h.NemotronHForCausalLM"},
         "bos_token_id": eot, "chunk_size": m["chunk_size"], "conv_kernel": m["conv_kernel"], "eos_token_id": im_end,
         "expand": m["expand"], "head_dim": d["HD"], "hidden_dropout": 0.0, "hidden_size": d["H"],
         "hybrid_override_pattern": d["pattern"], "initializer_range": 0.02, "intermediate_size": d["F"],
         "layer_norm_epsilon": 1e-05, "mamba_head_dim": m["head_dim"], "mamba_hidden_act": "silu",
         "mamba_num_heads": m["num_heads"], "mamba_proj_bias": False, "mamba_ssm_cache_dtype": "float32",
         "max_position_embeddings": 262144, "mlp_bias": False, "mlp_hidden_act": "relu2", "model_type": mtype,
         "moe_intermediate_size": e["Fm"], "moe_shared_expert_intermediate_size": e["Fs"], "n_group": e["n_group"],
         "n_groups": m["n_groups"], "n_routed_experts": e["E"], "n_shared_experts": 1, "norm_eps": 1e-05,
         "norm_topk_prob": True, "num_attention_heads": d["NH"], "num_experts_per_tok": e["k"],
         "num_hidden_layers": d["L"], "num_key_value_heads": d["NKV"], "num_logits_to_keep": 1, "pad_token_id": eot,
         "partial_rotary_factor": 1.0, "rescale_prenorm_residual": True, "residual_in_fp32": False,
         "rope_theta": 10000, "routed_scaling_factor": e["routed_scaling_factor"], "sliding_window": None,
         "ssm_state_size": m["state_size"], "tie_word_embeddings": d["tied"],
         "time_step_floor": m["time_step_floor"], "time_step_max": m["time_step_max"],
         "time_step_min": m["time_step_min"], "topk_group": e["topk_group"], "torch_dtype": torch_dtype,
         "transformers_version": "4.55.4", "use_bias": False, "use_cache": True, "use_conv_bias": m["conv_bias"],
         "use_mamba_kernels": True, "vocab_size": tok.vocab_size}
    if "latent" in e:
        c["moe_latent_size"] = e["latent"]
    return dict(sorted(c.items()))


def gemma4_config(arch, mtype, d, tok, torch_dtype):
    """config.json of a Gemma 4 fixture, keys sorted, in the flat spelling models/gemma4/modeling_gemma4.py reads
    (docs/gemma4.md §1: `head_dim`, `global_head_dim` and `num_global_key_value_heads` as keys of the text config, no
    `per_layer_config`) and transformers 5's "dtype": Gemma4TextConfig's fields (attention_bias false,
    attention_dropout 0, attention_k_eq_v, enable_moe_block, final_logit_softcapping, hidden_activation
    gelu_pytorch_tanh, hidden_size_per_layer_input (0: no per-layer embeddings), initializer_range,
    intermediate_size, layer_types listed, max_position_embeddings 131072, num_experts / top_k_experts /
    moe_intermediate_size (null without MoE), num_kv_shared_layers, rms_norm_eps 1e-6, rope_parameters per layer type
    written out (sliding "default" at 1e4, full "proportional" with partial_rotary_factor 0.25 at 1e6: the
    __post_init__ defaults, explicit here), sliding_window, tie_word_embeddings true, use_bidirectional_attention,
    use_cache, use_double_wide_mlp, vocab_size_per_layer_input = vocab_size). Gemma4ForCausalLM (model_type
    "gemma4_text", what convert_gemma4_weights.py --text_only writes): those keys at the top level with architectures,
    dtype, transformers_version and the token ids. Gemma4ForConditionalGeneration (model_type "gemma4"): Gemma4Config's
    top level (architectures, audio_config null as the 31B / 26B-A4B have none, dtype, eos_token_id, initializer_range,
    tie_word_embeddings true, transformers_version) holding the text keys in text_config (model_type "gemma4_text")
    and a small Gemma4VisionConfig vision_config (model_type "gemma4_vision"); the image / audio token ids left to
    Gemma4Config's defaults (never in a text prompt). Token ids: this tokenizer's (eos [<|im_end|>, <|endoftext|>] as
    the IT releases list two, pad <|endoftext|>, bos null: it adds none; released 1 / 106, 0, 2).
    transformers_version "5.14.1": the release that, per third-party notes (docs/gemma4.md, n.v.), writes this flat
    spelling."""
    im_end, eot = tok.specials["<|im_end|>"], tok.specials["<|endoftext|>"]
    moe = d.get("moe")
    rope = {"full_attention": {"partial_rotary_factor": d["partial_rotary_factor"], "rope_theta": d["theta"],
                               "rope_type": "proportional"},
            "sliding_attention": {"rope_theta": d["local_theta"], "rope_type": "default"}}
    text = {"attention_bias": False, "attention_dropout": 0.0, "attention_k_eq_v": d["k_eq_v"], "bos_token_id": None,
            "enable_moe_block": moe is not None, "final_logit_softcapping": d["final_softcap"],
            "global_head_dim": d["full_HD"], "head_dim": d["HD"], "hidden_activation": "gelu_pytorch_tanh",
            "hidden_size": d["H"], "hidden_size_per_layer_input": d["P"], "initializer_range": 0.02,
            "intermediate_size": d["F"], "layer_types": d["layer_types"], "max_position_embeddings": 131072,
            "model_type": "gemma4_text", "moe_intermediate_size": moe["Fm"] if moe else None,
            "num_attention_heads": d["NH"], "num_experts": moe["E"] if moe else None,
            "num_global_key_value_heads": d["full_NKV"], "num_hidden_layers": d["L"],
            "num_key_value_heads": d["NKV"], "num_kv_shared_layers": d["kv_shared"], "pad_token_id": eot,
            "rms_norm_eps": 1e-06, "rope_parameters": rope, "sliding_window": d["window"],
            "tie_word_embeddings": d["tied"], "top_k_experts": moe["k"] if moe else None,
            "use_bidirectional_attention": d.get("bidirectional"), "use_cache": True,
            "use_double_wide_mlp": d["double_wide"], "vocab_size": tok.vocab_size,
            "vocab_size_per_layer_input": tok.vocab_size}
    if arch == ref.GEMMA4_CAUSAL:
        text.update({"architectures": [arch], "dtype": torch_dtype, "eos_token_id": [im_end, eot],
                     "transformers_version": "5.14.1"})
        return dict(sorted(text.items()))
    vh = d["vision_hidden"]
    vision = {"attention_bias": False, "attention_dropout": 0.0, "head_dim": vh // 2,
              "hidden_activation": "gelu_pytorch_tanh", "hidden_size": vh, "initializer_range": 0.02,
              "intermediate_size": 2 * vh, "max_position_embeddings": 131072, "model_type": "gemma4_vision",
              "num_attention_heads": 2, "num_hidden_layers": 1, "num_key_value_heads": 2, "patch_size": 2,
              "pooling_kernel_size": 2, "position_embedding_size": 16, "rms_norm_eps": 1e-06,
              "rope_parameters": {"rope_theta": 100.0, "rope_type": "default"}, "standardize": False,
              "use_clipped_linears": False}
    c = {"architectures": [arch], "audio_config": None, "dtype": torch_dtype, "eos_token_id": [im_end, eot],
         "initializer_range": 0.02, "model_type": "gemma4", "text_config": dict(sorted(text.items())),
         "tie_word_embeddings": d["tied"], "transformers_version": "5.14.1", "vision_config": vision}
    return dict(sorted(c.items()))


def random_params(spec, d, seed, mat_dtype, norm_dtype, tok):
    """(list of (name, dtype, tensor)) in alphabetical order as transformers saves them."""
    t = []

    def gen(name):
        if spec.arch in ref.LLAMA_LIKE and not d.get("seeded"):
            # What the first six models were made with. torch's CPU generator keeps only the low
            # 32 bits of a seed (mt19937), so this is crc32(name) alone and the model seed has no
            # effect on their weights; kept so that their files stay byte-identical.
            return torch.Generator().manual_seed((seed << 32) ^ zlib.crc32(name.encode()))
        return torch.Generator().manual_seed(zlib.crc32(("%d/%s" % (seed, name)).encode()))

    def add(name, dtype, shape, center, std):
        x = torch.randn(*shape, generator=gen(name)) * std + center
        t.append((name, dtype, x))
        return x

    H, F, V = spec.H, spec.F, spec.V
    QD, KVD = spec.NH * spec.HD, spec.NKV * spec.HD
    # Gemma 3 and Mistral 3 multimodal: the legacy spelling; Qwen-VL: the fixture's own
    prefix = spec.prefix or d.get("prefix", "language_model.model.")
    emb_dtype = "BF16" if spec.arch == "Qwen3ForCausalLM" else mat_dtype
    # Gemma norms are stored as w and used as 1 + w
    nc = 0.0 if spec.norm_offset else 1.0
    qk_std = d["qk_gain"] / math.sqrt(H) if "qk_gain" in d else 1 / math.sqrt(H)

    def out_std(fan_in):  # o_proj and down projections
        return d["branch_gain"] / math.sqrt(fan_in) if "branch_gain" in d else 1 / math.sqrt(fan_in)
    if spec.arch in ref.HYBRID:
        hybrid_params(spec, d, add, out_std, mat_dtype, norm_dtype)
        return sorted(t, key=lambda x: x[0])
    if spec.arch in ref.LFM2_FAMILY:
        lfm2_params(spec, d, add, out_std, qk_std, mat_dtype, norm_dtype)
        return sorted(t, key=lambda x: x[0])
    if spec.arch == ref.NEMOTRON_H:
        nemotron_h_params(spec, d, add, out_std, qk_std, mat_dtype, norm_dtype)
        return sorted(t, key=lambda x: x[0])
    if spec.arch in ref.GEMMA4:
        gemma4_params(spec, d, add, out_std, mat_dtype, norm_dtype)
        return sorted(t, key=lambda x: x[0])
    # Tied: smaller embeddings, or the residual stays dominated by the current token's embedding
    # and greedy decoding just repeats the last prompt token.
    add(prefix + "embed_tokens.weight", emb_dtype, (V, H), d.get("embed_mean", 0.0),
        d.get("embed_std", 0.25 if spec.tied else 1.0))
    norm_std = d.get("norm_std", 0.1)
    for l in range(spec.L):
        p = prefix + "layers.%d." % l
        # (Apertus: attention_layernorm / feedforward_layernorm, spec.layer_norm_names)
        if spec.input_norms:  # (OLMo 2's layers have none)
            add(p + spec.layer_norm_names[0] + ".weight", norm_dtype, (H,), nc, norm_std)
        if not spec.parallel_block:  # (Cohere's layers have one norm)
            add(p + spec.layer_norm_names[1] + ".weight", norm_dtype, (H,), nc, norm_std)
        if spec.norm_bias:  # PhiMoE's nn.LayerNorms: a bias beside each weight
            add(p + "input_layernorm.bias", norm_dtype, (H,), 0.0, d["norm_bias_std"])
            add(p + "post_attention_layernorm.bias", norm_dtype, (H,), 0.0, d["norm_bias_std"])
        if spec.sandwich_norms:
            if spec.input_norms:
                add(p + "pre_feedforward_layernorm.weight", norm_dtype, (H,), nc, 0.1)
            # (norm_std, post_ff_norm_center: OLMo 2's; the Gemma entries have neither: 0.1, nc)
            add(p + "post_feedforward_layernorm.weight", norm_dtype, (H,), d.get("post_ff_norm_center", nc), norm_std)
        if spec.glm4_norms:
            add(p + "post_self_attn_layernorm.weight", norm_dtype, (H,), nc, 0.1)
            add(p + "post_mlp_layernorm.weight", norm_dtype, (H,), nc, 0.1)
        if spec.layer_mamba[l]:
            mamba_params(spec, d, p + "mamba.", add, out_std, mat_dtype, norm_dtype)
        elif spec.mla:
            mla_params(spec, d, p + "self_attn.", mat_dtype, norm_dtype, add)
        elif spec.fused_qkv:
            add(p + "self_attn.qkv_proj.weight", mat_dtype, (QD + 2 * KVD, H), 0.0, qk_std)
        else:
            add(p + "self_attn.q_proj.weight", mat_dtype, (QD, H), 0.0, qk_std)
            add(p + "self_attn.k_proj.weight", mat_dtype, (KVD, H), 0.0, qk_std)
            add(p + "self_attn.v_proj.weight", mat_dtype, (KVD, H), 0.0, 1 / math.sqrt(H))
        if not spec.mla and not spec.layer_mamba[l]:
            add(p + "self_attn.o_proj.weight", mat_dtype, (H, QD), 0.0, out_std(QD))
        if spec.qkv_bias:
            add(p + "self_attn.q_proj.bias", mat_dtype, (QD,), 0.0, d.get("qkv_bias_std", 0.3))
            add(p + "self_attn.k_proj.bias", mat_dtype, (KVD,), 0.0, d.get("qkv_bias_std", 0.3))
            add(p + "self_attn.v_proj.bias", mat_dtype, (KVD,), 0.0, d.get("qkv_bias_std", 0.3))
        if spec.o_bias:
            add(p + "self_attn.o_proj.bias", mat_dtype, (H,), 0.0, d["o_bias_std"])
        if spec.attn_sinks:
            # GptOssAttention.sinks (NH,), stored in the matrices' dtype as the released checkpoints do
            add(p + "self_attn.sinks", mat_dtype, (spec.NH,), 0.0, d["sink_std"])
        if spec.qk_norm or spec.qk_norm_full:
            qnc = d.get("qk_norm_center", nc)
            # (Cohere's use_qk_norm: a weight row per head; OLMo 2's: one weight over the whole projection)
            qs, ks = ((spec.NH, spec.HD), (spec.NKV, spec.HD)) if spec.qk_norm_per_head else \
                ((spec.NH * spec.HD,), (spec.NKV * spec.HD,)) if spec.qk_norm_full else ((spec.HD,), (spec.HD,))
            # (HunYuan-Dense: self_attn.query_layernorm / key_layernorm, spec.qk_norm_names)
            qn, kn = spec.qk_norm_names
            add(p + "self_attn.%s.weight" % qn, norm_dtype, qs, qnc, d.get("qk_norm_std", 0.2))
            add(p + "self_attn.%s.weight" % kn, norm_dtype, ks, qnc, d.get("qk_norm_std", 0.2))
        if spec.layer_moe[l]:
            E, Fm = spec.num_experts, spec.moe_intermediate
            # (ERNIE 4.5's gate stays F32: _keep_in_fp32_modules_strict; HunYuan-MoE's HunYuanMoEV1Gate.wg is built
            # with dtype=torch.float32)
            add(ref.router_weight_name(spec, p), "F32" if spec.router == "ernie" or spec.expert_naming == "hunyuan" else
                mat_dtype, (E, H), 0.0, d["router_std"])
            if spec.expert_naming == "granite":
                # stacked as Granite-MoE's checkpoints hold them (GraniteMoeParallelExperts.weight)
                Fs = spec.shared_intermediate
                add(p + "block_sparse_moe.input_linear.weight", mat_dtype, (E, 2 * Fm, H), 0.0, 1 / math.sqrt(H))
                add(p + "block_sparse_moe.output_linear.weight", mat_dtype, (E, H, Fm), 0.0, out_std(Fm))
                if Fs:
                    add(p + "shared_mlp.input_linear.weight", mat_dtype, (2 * Fs, H), 0.0, 1 / math.sqrt(H))
                    add(p + "shared_mlp.output_linear.weight", mat_dtype, (H, Fs), 0.0, out_std(Fs))
                continue
            if spec.expert_naming == "stacked":
                # MiniMax-M2 as transformers 5 saves it (MixtralExperts): gate_up_proj (E, 2F, H), per expert the gate
                # rows then the up rows; down_proj (E, H, F); the correction bias beside the gate
                add(p + "mlp.experts.gate_up_proj", mat_dtype, (E, 2 * Fm, H), 0.0, 1 / math.sqrt(H))
                add(p + "mlp.experts.down_proj", mat_dtype, (E, H, Fm), 0.0, out_std(Fm))
                add(ref.correction_bias_name(spec, p), "F32", (E,), 0.0, d["bias_std"])
                continue
            if spec.expert_naming == "llama4":
                # Llama 4 as released (Llama4TextExperts, used as x @ W): feed_forward.experts.gate_up_proj (E, H, 2F), per
                # expert the F gate columns then the F up columns, feed_forward.experts.down_proj (E, F, H); the ungated
                # shared expert (Llama4TextMLP of intermediate_size) feed_forward.shared_expert.gate_proj / up_proj /
                # down_proj
                f, Fs = p + "feed_forward.", spec.shared_intermediate
                add(f + "experts.gate_up_proj", mat_dtype, (E, H, 2 * Fm), 0.0, 1 / math.sqrt(H))
                add(f + "experts.down_proj", mat_dtype, (E, Fm, H), 0.0, out_std(Fm))
                add(f + "shared_expert.gate_proj.weight", mat_dtype, (Fs, H), 0.0, 1 / math.sqrt(H))
                add(f + "shared_expert.up_proj.weight", mat_dtype, (Fs, H), 0.0, 1 / math.sqrt(H))
                add(f + "shared_expert.down_proj.weight", mat_dtype, (H, Fs), 0.0, out_std(Fs))
                continue
            if spec.expert_naming == "fused_transposed":
                # Qwen3-VL-MoE as released (Qwen3VLMoeTextExperts of transformers 4.57, used as x @ W):
                # mlp.experts.gate_up_proj (E, H, 2F), per expert the F gate columns then the F up columns, and
                # mlp.experts.down_proj (E, F, H); no shared expert
                add(p + "mlp.experts.gate_up_proj", mat_dtype, (E, H, 2 * Fm), 0.0, 1 / math.sqrt(H))
                add(p + "mlp.experts.down_proj", mat_dtype, (E, Fm, H), 0.0, out_std(Fm))
                continue
            if spec.expert_naming == "gpt_oss":
                # GptOssTopKRouter.bias; GptOssExperts' stacked, transposed (x @ W) weights and
                # biases, gate / up interleaved in the 2F columns. gate_up_gain: the gate and up
                # values' std before the bias, large enough that swiglu_limit clamps some of them
                gu, gu_b, dn, dn_b = (p + n for n in ref.GPT_OSS_EXPERTS)
                add(p + "mlp.router.bias", mat_dtype, (E,), 0.0, d["router_bias_std"])
                add(gu, mat_dtype, (E, H, 2 * Fm), 0.0, d["gate_up_gain"] / math.sqrt(H))
                add(gu_b, mat_dtype, (E, 2 * Fm), 0.0, d["gate_up_bias_std"])
                add(dn, mat_dtype, (E, Fm, H), 0.0, d["down_gain"] / math.sqrt(Fm))
                add(dn_b, mat_dtype, (E, H), 0.0, d["down_bias_std"])
                continue
            expert_params(spec, d, p, add, out_std, mat_dtype)
            if spec.router == "minimax":
                # MiniMaxM2SparseMoeBlock's buffer, F32 in the released checkpoints
                add(ref.correction_bias_name(spec, p), "F32", (E,), 0.0, d["bias_std"])
            if spec.router == "ernie":
                # Ernie4_5_MoeStatics.e_score_correction_bias: (1, E), F32 (num_experts_groups 1)
                add(ref.correction_bias_name(spec, p), "F32", (1, E), 0.0, d["bias_std"])
        elif spec.arch == ref.GRANITE_HYBRID:
            # Granite 4.0 without experts: shared_mlp (GraniteMoeSharedMLP of shared_intermediate_size) is the whole MLP
            Fs = spec.shared_intermediate
            add(p + "shared_mlp.input_linear.weight", mat_dtype, (2 * Fs, H), 0.0, 1 / math.sqrt(H))
            add(p + "shared_mlp.output_linear.weight", mat_dtype, (H, Fs), 0.0, out_std(Fs))
        elif spec.arch == ref.LLAMA4:
            # Llama4TextMLP of intermediate_size_mlp, named feed_forward.*
            add(p + "feed_forward.gate_proj.weight", mat_dtype, (F, H), 0.0, 1 / math.sqrt(H))
            add(p + "feed_forward.up_proj.weight", mat_dtype, (F, H), 0.0, 1 / math.sqrt(H))
            add(p + "feed_forward.down_proj.weight", mat_dtype, (H, F), 0.0, out_std(F))
        elif spec.fused_gate_up:
            add(p + "mlp.gate_up_proj.weight", mat_dtype, (2 * F, H), 0.0, 1 / math.sqrt(H))
            add(p + "mlp.down_proj.weight", mat_dtype, (H, F), 0.0, out_std(F))
        else:
            if spec.mlp_gated:  # (Arcee's ArceeMLP and Apertus's ApertusMLP have no gate_proj)
                add(p + "mlp.gate_proj.weight", mat_dtype, (F, H), 0.0, 1 / math.sqrt(H))
            add(p + "mlp.up_proj.weight", mat_dtype, (F, H), 0.0, 1 / math.sqrt(H))
            add(p + "mlp.down_proj.weight", mat_dtype, (H, F), 0.0, out_std(F))
            if spec.act == "xielu":
                # Apertus's XIELUActivation, the entry's values (not drawn): alpha_p and alpha_n nn.Parameters of shape
                # (1,) (`.unsqueeze(0)` in __init__), beta and eps 0-d buffers (`torch.tensor(beta)`), as
                # save_pretrained writes them
                for n, v in zip(ref.XIELU_PARAMETERS, d["xielu"][l]):
                    t.append((p + "mlp.act_fn." + n, norm_dtype, torch.tensor([v] if n.startswith("alpha") else v)))
            if spec.mlp_bias:  # Llama's mlp_bias
                add(p + "mlp.gate_proj.bias", mat_dtype, (F,), 0.0, d["mlp_bias_std"])
                add(p + "mlp.up_proj.bias", mat_dtype, (F,), 0.0, d["mlp_bias_std"])
                add(p + "mlp.down_proj.bias", mat_dtype, (H,), 0.0, d["mlp_bias_std"])
    add(prefix + "norm.weight", norm_dtype, (H,), d.get("final_norm_center", nc), norm_std)
    if spec.norm_bias:
        add(prefix + "norm.bias", norm_dtype, (H,), 0.0, d["norm_bias_std"])
    if not spec.tied:
        # the released multimodal checkpoints name the head language_model.lm_head.weight
        head = "language_model.lm_head.weight" if spec.prefix is None and "prefix" not in d else "lm_head.weight"
        add(head, mat_dtype, (V, H), 0.0, 6.0 / math.sqrt(H))
    if spec.lm_head_bias:  # PhimoeForCausalLM's lm_head = nn.Linear(..., bias=config.lm_head_bias)
        add("lm_head.bias", mat_dtype, (V,), 0.0, d["lm_head_bias_std"])
    if spec.arch == "Gemma3ForConditionalGeneration":
        # Stand-ins for the vision tower and projector: never read by the forward pass, copied
        # byte for byte by an export.
        vh = d["vision_hidden"]
        add("vision_tower.vision_model.embeddings.patch_embedding.weight", mat_dtype, (vh, 3, 2, 2), 0.0, 0.5)
        add("vision_tower.vision_model.post_layernorm.weight", mat_dtype, (vh,), 1.0, 0.1)
        add("multi_modal_projector.mm_input_projection_weight", mat_dtype, (vh, H), 0.0, 0.5)
    if spec.arch == "Mistral3ForConditionalGeneration":
        # Pixtral's tower and Mistral 3's projector, as stand-ins (the forward pass never reads them): at the top level
        # beside language_model.model.* (the released Mistral Small 3.1), under model. beside model.language_model.*
        # (transformers >= 4.52 saves, Ministral 3: Mistral3ForConditionalGeneration._checkpoint_conversion_mapping
        # "^vision_tower" -> "model.vision_tower", "^multi_modal_projector" -> "model.multi_modal_projector")
        vh, m = d["vision_hidden"], "model." if prefix == "model.language_model." else ""
        add(m + "vision_tower.patch_conv.weight", mat_dtype, (vh, 3, 4, 4), 0.0, 0.5)
        add(m + "vision_tower.ln_pre.weight", norm_dtype, (vh,), 1.0, 0.1)
        add(m + "multi_modal_projector.norm.weight", norm_dtype, (vh,), 1.0, 0.1)
        add(m + "multi_modal_projector.patch_merger.merging_layer.weight", mat_dtype, (vh, 4 * vh), 0.0, 0.5)
        add(m + "multi_modal_projector.linear_1.weight", mat_dtype, (H, vh), 0.0, 0.5)
    if spec.arch == ref.LLAVA:
        # Pixtral-12B's tower and LLaVA's projector as released (convert_pixtral_weights_to_hf.py: vision_tower.* and
        # multi_modal_projector.linear_1 / linear_2 with their biases, beside language_model.model.*), as stand-ins: never
        # read by the forward pass, copied byte for byte by an export
        vh = d["vision_hidden"]
        add("vision_tower.patch_conv.weight", mat_dtype, (vh, 3, 4, 4), 0.0, 0.5)
        add("vision_tower.ln_pre.weight", norm_dtype, (vh,), 1.0, 0.1)
        add("vision_tower.transformer.layers.0.attention_norm.weight", norm_dtype, (vh,), 1.0, 0.1)
        add("multi_modal_projector.linear_1.weight", mat_dtype, (H, vh), 0.0, 0.5)
        add("multi_modal_projector.linear_1.bias", mat_dtype, (H,), 0.0, 0.5)
        add("multi_modal_projector.linear_2.weight", mat_dtype, (H, H), 0.0, 0.5)
        add("multi_modal_projector.linear_2.bias", mat_dtype, (H,), 0.0, 0.5)
    if spec.arch == ref.INTERNVL:
        # InternViT and InternVL's projector in transformers >= 4.52's names (convert_internvl_weights_to_hf.py: mlp1.0 /
        # .1 / .3 -> multi_modal_projector.layer_norm / linear_1 / linear_2, the pixel shuffle's 4 x vision_hidden
        # inputs at downsample_ratio 0.5), under model. beside model.language_model.*, as stand-ins
        vh, v = d["vision_hidden"], "model.vision_tower."
        add(v + "embeddings.cls_token", mat_dtype, (1, 1, vh), 0.0, 0.5)
        add(v + "embeddings.patch_embeddings.projection.weight", mat_dtype, (vh, 3, 4, 4), 0.0, 0.5)
        add(v + "encoder.layer.0.layernorm_before.weight", norm_dtype, (vh,), 1.0, 0.1)
        add("model.multi_modal_projector.layer_norm.weight", norm_dtype, (4 * vh,), 1.0, 0.1)
        add("model.multi_modal_projector.layer_norm.bias", norm_dtype, (4 * vh,), 0.0, 0.1)
        add("model.multi_modal_projector.linear_1.weight", mat_dtype, (H, 4 * vh), 0.0, 0.5)
        add("model.multi_modal_projector.linear_2.weight", mat_dtype, (H, H), 0.0, 0.5)
    if spec.arch in ref.QWEN_VL:
        # the vision tower and its merger, as stand-ins: visual.* beside model.* (released Qwen2.5-VL),
        # model.visual.* beside model.language_model.* (transformers >= 4.52)
        vh, v = d["vision_hidden"], "visual." if prefix == "model." else "model.visual."
        add(v + "patch_embed.proj.weight", mat_dtype, (vh, 3, 2, 2, 2), 0.0, 0.5)
        add(v + "merger.ln_q.weight", norm_dtype, (vh,), 1.0, 0.1)
        add(v + "merger.mlp.2.weight", mat_dtype, (H, 4 * vh), 0.0, 0.5)
    if spec.arch in ref.GLM_V:
        # GLM-4.1V / GLM-4.5V's vision tower, as stand-ins under model.visual.* (the converters' names):
        # Glm4vVisionPatchEmbed's Conv3d (temporal_patch_size 2, patch_size 2), Glm4vVisionModel.post_conv_layernorm,
        # Glm4vVisionPatchMerger.proj (out_hidden_size = the text hidden size); never read by the forward pass, copied
        # byte for byte by an export
        vh = d["vision_hidden"]
        add("model.visual.patch_embed.proj.weight", mat_dtype, (vh, 3, 2, 2, 2), 0.0, 0.5)
        add("model.visual.post_conv_layernorm.weight", norm_dtype, (vh,), 1.0, 0.1)
        add("model.visual.merger.proj.weight", mat_dtype, (H, H), 0.0, 0.5)
    if spec.arch == ref.LLAMA4:
        # Llama4ForConditionalGeneration's vision tower and projector, as stand-ins (never read by the forward pass,
        # copied byte for byte by an export): Llama4VisionModel.class_embedding (hidden,), its patch_embedding
        # (Llama4UnfoldConvolution: an nn.Linear of num_channels x patch_size^2 inputs, no bias), layernorm_pre's weight,
        # and Llama4MultiModalProjector.linear_1 (text hidden, vision_output_dim), no bias
        vh = d["vision_hidden"]
        add("vision_model.class_embedding", mat_dtype, (vh,), 0.0, 0.5)
        add("vision_model.patch_embedding.linear.weight", mat_dtype, (vh, 3 * 4 * 4), 0.0, 0.5)
        add("vision_model.layernorm_pre.weight", norm_dtype, (vh,), 1.0, 0.1)
        add("multi_modal_projector.linear_1.weight", mat_dtype, (H, d["vision_output"]), 0.0, 0.5)
    if spec.arch == ref.GLM4_MOE or (spec.arch in (ref.DEEPSEEK_V3, ref.GLM4_MOE_LITE) and
                                     spec.cfg["num_nextn_predict_layers"]):
        # stand-ins for the multi-token-prediction layer stored after the last decoder layer (never run;
        # DeepseekV3Model: _keys_to_ignore_on_load_unexpected model.layers.61.*); none when
        # num_nextn_predict_layers is 0 (Moonlight)
        m = prefix + "layers.%d." % spec.L
        add(m + "eh_proj.weight", mat_dtype, (H, 2 * H), 0.0, 0.5)
        add(m + "enorm.weight", norm_dtype, (H,), 1.0, 0.1)
        add(m + "hnorm.weight", norm_dtype, (H,), 1.0, 0.1)
        add(m + "shared_head.norm.weight", norm_dtype, (H,), 1.0, 0.1)
        if d.get("mtp_full_layer"):
            mtp_layer_params(spec, d, m, add, out_std, mat_dtype, norm_dtype)
    return sorted(t, key=lambda x: x[0])


def gemma4_params(spec, d, add, out_std, mat_dtype, norm_dtype):
    """The tensors of a Gemma 4 fixture, named and shaped as models/gemma4/modeling_gemma4.py's state dict holds them
    (docs/gemma4.md §4) under the prefix (model. for Gemma4ForCausalLM, model.language_model. for
    Gemma4ForConditionalGeneration): embed_tokens (V, H) (std embed_std), with per-layer embeddings
    embed_tokens_per_layer (V, L * P) (std ple_std), per_layer_model_projection (L * P, H), per_layer_projection_norm
    (P,); per layer input_layernorm / post_attention_layernorm / pre_feedforward_layernorm /
    post_feedforward_layernorm (H,), self_attn.q_proj (NH x head, H) and q_norm (head,) with the layer type's head,
    on unshared layers k_proj (kv heads x head, H) and k_norm (head,) and, unless k_eq_v on a full layer, v_proj
    (no v_norm tensor: with_scale=False), o_proj (H, NH x head), mlp.gate_proj / up_proj (width, H) / down_proj (H,
    width) at the layer's width (double on the kv-shared layers with use_double_wide_mlp), layer_scalar (1,) (the
    buffer, 1 + sign(z) (0.1 + 0.3 |tanh z|), z ~ N(0, 1): in [0.6, 0.9] or [1.1, 1.4], never near 1), with per-layer
    embeddings per_layer_input_gate (P, H) (std ple_gate_gain / sqrt(H)), per_layer_projection (H, P) and post_per_layer_input_norm (H,), with the MoE block router.proj (E, H) (std
    router_std; search_routers may redraw it), router.scale (H,) and router.per_expert_scale (E,) (around 1, std
    router_scale_std), experts.gate_up_proj (E, 2 Fm, H) and experts.down_proj (E, H, Fm) (no .weight suffix),
    pre_feedforward_layernorm_2 / post_feedforward_layernorm_1 / post_feedforward_layernorm_2 (H,); the final norm
    (H,) around final_norm_center; tied (no lm_head). Every norm weight is stored as w and used as w (Gemma 3's were 1
    + w around 0): drawn around 1 with std norm_std, the q/k norms qk_norm_std; the final norm's center lets the raw
    logits reach final_logit_softcapping (the released final norms' means are reported at 6 to 20, docs/gemma4.md
    §2.1, n.v.). Gemma4ForConditionalGeneration: stand-ins for the vision tower and its embedder, never read by the
    forward pass and copied byte for byte by an export: model.vision_tower.patch_embedder.input_proj.weight (vh, 3 x
    2 x 2), .position_embedding_table (2, 16, vh), model.vision_tower.encoder.layers.0.input_layernorm.weight (vh,),
    .self_attn.q_proj.linear.weight (vh, vh) (Gemma4ClippableLinear's nested name), and
    model.embed_vision.embedding_projection.weight (H, vh)."""
    H, V, L, NH, P = spec.H, spec.V, spec.L, spec.NH, spec.ple_dim
    prefix = spec.prefix or "model.language_model."
    std_in = 1 / math.sqrt(H)
    norm_std, qk_norm_std = d.get("norm_std", 0.1), d.get("qk_norm_std", 0.2)

    def norm(name, n, center=1.0, std=norm_std):
        add(name, norm_dtype, (n,), center, std)
    add(prefix + "embed_tokens.weight", mat_dtype, (V, H), 0.0, d["embed_std"])
    if P:
        add(prefix + "embed_tokens_per_layer.weight", mat_dtype, (V, L * P), 0.0, d["ple_std"])
        add(prefix + "per_layer_model_projection.weight", mat_dtype, (L * P, H), 0.0, std_in)
        norm(prefix + "per_layer_projection_norm.weight", P)
    for l in range(L):
        p = prefix + "layers.%d." % l
        a = p + "self_attn."
        HD, NKV, Fl = spec.layer_head_dim[l], spec.layer_kv_heads[l], spec.layer_mlp_width[l]
        for n in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                  "post_feedforward_layernorm"):
            norm(p + n + ".weight", H)
        add(a + "q_proj.weight", mat_dtype, (NH * HD, H), 0.0, std_in)
        norm(a + "q_norm.weight", HD, center=d.get("qk_norm_center", 1.0), std=qk_norm_std)
        if not spec.layer_kv_shared[l]:
            add(a + "k_proj.weight", mat_dtype, (NKV * HD, H), 0.0, std_in)
            norm(a + "k_norm.weight", HD, center=d.get("qk_norm_center", 1.0), std=qk_norm_std)
            if not spec.layer_k_eq_v[l]:
                add(a + "v_proj.weight", mat_dtype, (NKV * HD, H), 0.0, std_in)
        add(a + "o_proj.weight", mat_dtype, (H, NH * HD), 0.0, out_std(NH * HD))
        add(p + "mlp.gate_proj.weight", mat_dtype, (Fl, H), 0.0, std_in)
        add(p + "mlp.up_proj.weight", mat_dtype, (Fl, H), 0.0, std_in)
        add(p + "mlp.down_proj.weight", mat_dtype, (H, Fl), 0.0, out_std(Fl))
        s = add(p + "layer_scalar", norm_dtype, (1,), 0.0, 1.0)
        s.copy_(1.0 + torch.sign(s) * (0.1 + 0.3 * torch.tanh(s).abs()))
        if P:
            add(p + "per_layer_input_gate.weight", mat_dtype, (P, H), 0.0, d.get("ple_gate_gain", 1.0) * std_in)
            add(p + "per_layer_projection.weight", mat_dtype, (H, P), 0.0, out_std(P))
            norm(p + "post_per_layer_input_norm.weight", H)
        if spec.layer_moe[l]:
            E, Fm = spec.num_experts, spec.moe_intermediate
            add(p + "router.proj.weight", mat_dtype, (E, H), 0.0, d["router_std"])
            norm(p + "router.scale", H, std=d["router_scale_std"])
            norm(p + "router.per_expert_scale", E, std=d["router_scale_std"])
            add(p + "experts.gate_up_proj", mat_dtype, (E, 2 * Fm, H), 0.0, std_in)
            add(p + "experts.down_proj", mat_dtype, (E, H, Fm), 0.0, out_std(Fm))
            for n in ("pre_feedforward_layernorm_2", "post_feedforward_layernorm_1", "post_feedforward_layernorm_2"):
                norm(p + n + ".weight", H)
    norm(prefix + "norm.weight", H, center=d.get("final_norm_center", 1.0))
    if spec.arch == ref.GEMMA4_COND:
        vh, v = d["vision_hidden"], "model.vision_tower."
        add(v + "patch_embedder.input_proj.weight", mat_dtype, (vh, 3 * 2 * 2), 0.0, 0.5)
        add(v + "patch_embedder.position_embedding_table", mat_dtype, (2, 16, vh), 0.0, 0.5)
        add(v + "encoder.layers.0.input_layernorm.weight", norm_dtype, (vh,), 1.0, 0.1)
        add(v + "encoder.layers.0.self_attn.q_proj.linear.weight", mat_dtype, (vh, vh), 0.0, 0.5)
        add("model.embed_vision.embedding_projection.weight", mat_dtype, (H, vh), 0.0, 0.5)


def expert_params(spec, d, p, add, out_std, mat_dtype):
    """The per-expert tensors of one MoE layer (p = "model.layers.{l}."), the router's weight aside: each routed
    expert's gate / up / down (ref.expert_weights' names, moe_intermediate_size wide), the shared expert's
    (shared_intermediate_size wide), Qwen2-MoE's shared_expert_gate, and the sigmoid router's F32
    mlp.gate.e_score_correction_bias."""
    H, E, Fm = spec.H, spec.num_experts, spec.moe_intermediate
    for e in list(range(E)) + (["shared"] if spec.shared_intermediate else []):
        Fe = spec.shared_intermediate if e == "shared" else Fm
        gate, up, down = ref.expert_weights(spec, p, e)
        add(gate, mat_dtype, (Fe, H), 0.0, 1 / math.sqrt(H))
        add(up, mat_dtype, (Fe, H), 0.0, 1 / math.sqrt(H))
        add(down, mat_dtype, (H, Fe), 0.0, out_std(Fe))
    if spec.shared_intermediate and spec.shared_gated:
        add(p + "mlp.shared_expert_gate.weight", mat_dtype, (1, H), 0.0, 1 / math.sqrt(H))
    if spec.router == "sigmoid":
        # kept in fp32 by transformers (_keep_in_fp32_modules_strict)
        add(p + "mlp.gate.e_score_correction_bias", "F32", (E,), 0.0, d["bias_std"])


def mtp_layer_params(spec, d, m, add, out_std, mat_dtype, norm_dtype):
    """The rest of a multi-token-prediction layer as DeepSeek-V3 / GLM-4.7-Flash release it (m = "model.layers.{L}."),
    beside the four stand-ins random_params adds: its own embed_tokens and shared_head.head (V, H), and a whole MoE
    decoder layer (input_layernorm, post_attention_layernorm, the latent attention, the router, its F32 bias, every
    expert and the shared experts), drawn as the decoder layers' are. Never run: transformers ignores the layer
    (Glm4MoeLitePreTrainedModel._keys_to_ignore_on_load_unexpected model.layers.47.*), an export copies it."""
    H, V = spec.H, spec.V
    add(m + "embed_tokens.weight", mat_dtype, (V, H), 0.0, 1.0)
    add(m + "shared_head.head.weight", mat_dtype, (V, H), 0.0, 6.0 / math.sqrt(H))
    add(m + "input_layernorm.weight", norm_dtype, (H,), 1.0, d.get("norm_std", 0.1))
    add(m + "post_attention_layernorm.weight", norm_dtype, (H,), 1.0, d.get("norm_std", 0.1))
    mla_params(spec, d, m + "self_attn.", mat_dtype, norm_dtype, add)
    add(ref.router_weight_name(spec, m), mat_dtype, (spec.num_experts, H), 0.0, d["router_std"])
    expert_params(spec, d, m, add, out_std, mat_dtype)


def hybrid_params(spec, d, add, out_std, mat_dtype, norm_dtype):
    """The tensors of a Qwen3-Next / Qwen3.5 / Qwen3.5-MoE fixture (random_params' `add`, drawn by name), shaped as
    Qwen3NextForCausalLM / Qwen3_5(Moe)ForConditionalGeneration hold them:
      model.embed_tokens / model.norm (Qwen3-Next) or model.language_model.* (Qwen3.5), lm_head.weight unless tied;
      per layer input_layernorm / post_attention_layernorm ((1 + w) norms: drawn around 0 with std norm_std);
      full-attention layers self_attn.q_proj (2 x heads x head_dim: each head's query rows then its gate rows), k_proj,
      v_proj, o_proj, q_norm / k_norm (head_dim,) ((1 + w), around 0 with std qk_norm_std);
      linear-attention layers linear_attn.in_proj_qkvz (2 NK DK + 2 NV DV, interleaved per key head) and in_proj_ba
      (2 NV) (Qwen3-Next), or in_proj_qkv (2 NK DK + NV DV), in_proj_z (NV DV), in_proj_b / in_proj_a (NV) (Qwen3.5);
      conv1d.weight (conv_dim, 1, K) (std conv_std: the conv mixes K positions with weights of either sign), A_log (NV,)
      = log(uniform(A_range)) and dt_bias (NV,) around dt_bias_mean (std dt_bias_std) in a_dtype / dt_dtype, norm.weight
      (DV,) (plain w: around 1 with std gated_norm_std), out_proj (H, NV DV);
      the MLP: a dense gate/up/down_proj, or mlp.gate (E, H) (router_std; search_routers redraws it), experts per expert
      (mlp.experts.{e}.*) or stacked (mlp.experts.gate_up_proj (E, 2 Fm, H): per expert the gate rows, then the up rows;
      mlp.experts.down_proj (E, H, Fm)), mlp.shared_expert.* and mlp.shared_expert_gate (1, H);
      stand-ins that the forward pass never reads and an export must copy unchanged: the multi-token-prediction module
      (mtp.fc, mtp.norm, mtp.pre_fc_norm_embedding / _hidden, two mtp.layers.0.* tensors: transformers ignores ^mtp.*)
      and, for Qwen3.5, model.visual.* (patch_embed.proj, merger.norm, merger.linear_fc2)."""
    H, V, L = spec.H, spec.V, spec.L
    prefix = spec.prefix
    NK, NV, DK, DV, K = spec.lin_NK, spec.lin_NV, spec.lin_DK, spec.lin_DV, spec.lin_K
    QD, KVD = spec.NH * spec.HD, spec.NKV * spec.HD
    std_in = 1 / math.sqrt(H)
    norm_std = d.get("norm_std", 0.2)
    add(prefix + "embed_tokens.weight", mat_dtype, (V, H), 0.0, d.get("embed_std", 0.25 if spec.tied else 1.0))
    for l in range(L):
        p = prefix + "layers.%d." % l
        add(p + "input_layernorm.weight", norm_dtype, (H,), 0.0, norm_std)
        add(p + "post_attention_layernorm.weight", norm_dtype, (H,), 0.0, norm_std)
        if spec.layer_linear[l]:
            a = p + "linear_attn."
            if spec.linear_proj == "qkvz":
                add(a + "in_proj_qkvz.weight", mat_dtype, (2 * NK * DK + 2 * NV * DV, H), 0.0, std_in)
                add(a + "in_proj_ba.weight", mat_dtype, (2 * NV, H), 0.0, std_in)
            else:
                add(a + "in_proj_qkv.weight", mat_dtype, (2 * NK * DK + NV * DV, H), 0.0, std_in)
                add(a + "in_proj_z.weight", mat_dtype, (NV * DV, H), 0.0, std_in)
                add(a + "in_proj_b.weight", mat_dtype, (NV, H), 0.0, std_in)
                add(a + "in_proj_a.weight", mat_dtype, (NV, H), 0.0, std_in)
            add(a + "conv1d.weight", mat_dtype, (2 * NK * DK + NV * DV, 1, K), 0.0, d.get("conv_std", 0.5))
            lo, hi = d["A_range"]
            # A_log = log(A), A uniform in A_range: the tensor's own standard normal draw u turned uniform in place by
            # the normal CDF, lo + (hi - lo) Phi(u)
            u = add(a + "A_log", d["a_dtype"], (NV,), 0.0, 1.0)
            u.copy_(torch.log(lo + (hi - lo) * 0.5 * (1 + torch.erf(u / math.sqrt(2)))))
            add(a + "dt_bias", d["dt_dtype"], (NV,), d["dt_bias_mean"], d.get("dt_bias_std", 1.0))
            add(a + "norm.weight", norm_dtype, (DV,), 1.0, d.get("gated_norm_std", 0.2))
            add(a + "out_proj.weight", mat_dtype, (H, NV * DV), 0.0, out_std(NV * DV))
        else:
            add(p + "self_attn.q_proj.weight", mat_dtype, (2 * QD, H), 0.0, std_in)
            add(p + "self_attn.k_proj.weight", mat_dtype, (KVD, H), 0.0, std_in)
            add(p + "self_attn.v_proj.weight", mat_dtype, (KVD, H), 0.0, std_in)
            add(p + "self_attn.o_proj.weight", mat_dtype, (H, QD), 0.0, out_std(QD))
            add(p + "self_attn.q_norm.weight", norm_dtype, (spec.HD,), 0.0, d.get("qk_norm_std", 0.3))
            add(p + "self_attn.k_norm.weight", norm_dtype, (spec.HD,), 0.0, d.get("qk_norm_std", 0.3))
        if spec.layer_moe[l]:
            E, Fm, Fs = spec.num_experts, spec.moe_intermediate, spec.shared_intermediate
            add(p + "mlp.gate.weight", mat_dtype, (E, H), 0.0, d["router_std"])
            if spec.expert_naming == "stacked":
                add(p + "mlp.experts.gate_up_proj", mat_dtype, (E, 2 * Fm, H), 0.0, std_in)
                add(p + "mlp.experts.down_proj", mat_dtype, (E, H, Fm), 0.0, out_std(Fm))
            else:
                for e in range(E):
                    x = p + "mlp.experts.%d." % e
                    add(x + "gate_proj.weight", mat_dtype, (Fm, H), 0.0, std_in)
                    add(x + "up_proj.weight", mat_dtype, (Fm, H), 0.0, std_in)
                    add(x + "down_proj.weight", mat_dtype, (H, Fm), 0.0, out_std(Fm))
            add(p + "mlp.shared_expert.gate_proj.weight", mat_dtype, (Fs, H), 0.0, std_in)
            add(p + "mlp.shared_expert.up_proj.weight", mat_dtype, (Fs, H), 0.0, std_in)
            add(p + "mlp.shared_expert.down_proj.weight", mat_dtype, (H, Fs), 0.0, out_std(Fs))
            add(p + "mlp.shared_expert_gate.weight", mat_dtype, (1, H), 0.0, std_in)
        else:
            add(p + "mlp.gate_proj.weight", mat_dtype, (spec.F, H), 0.0, std_in)
            add(p + "mlp.up_proj.weight", mat_dtype, (spec.F, H), 0.0, std_in)
            add(p + "mlp.down_proj.weight", mat_dtype, (H, spec.F), 0.0, out_std(spec.F))
    add(prefix + "norm.weight", norm_dtype, (H,), d.get("final_norm_center", 0.0), norm_std)
    if not spec.tied:
        add("lm_head.weight", mat_dtype, (V, H), 0.0, 6.0 / math.sqrt(H))
    # stand-ins (never read by the forward pass)
    add("mtp.fc.weight", mat_dtype, (H, 2 * H), 0.0, 0.5)
    add("mtp.norm.weight", norm_dtype, (H,), 0.0, 0.1)
    add("mtp.pre_fc_norm_embedding.weight", norm_dtype, (H,), 0.0, 0.1)
    add("mtp.pre_fc_norm_hidden.weight", norm_dtype, (H,), 0.0, 0.1)
    add("mtp.layers.0.input_layernorm.weight", norm_dtype, (H,), 0.0, 0.1)
    add("mtp.layers.0.self_attn.o_proj.weight", mat_dtype, (H, QD), 0.0, 0.5)
    if spec.arch != ref.QWEN3_NEXT:
        vh = d["vision_hidden"]
        add("model.visual.patch_embed.proj.weight", mat_dtype, (vh, 3, 2, 2, 2), 0.0, 0.5)
        add("model.visual.merger.norm.weight", norm_dtype, (vh,), 1.0, 0.1)
        add("model.visual.merger.linear_fc2.weight", mat_dtype, (H, 4 * vh), 0.0, 0.5)


def outer_params(spec, d, add, mat_dtype, norm_dtype, embed, final_norm):
    """The tensors around the layers of an LFM2 or Nemotron-H fixture (random_params' `add`, drawn by name): the
    embedding `embed` (V, H) (std embed_std: default 0.25 tied, 1 untied), the final norm `final_norm` (H,) (plain w:
    around final_norm_center, default 1, with std norm_std, default 0.1) and lm_head.weight (V, H) only untied (std
    6 / sqrt(H), as the other untied fixtures' heads). Returns norm_std, the layers' norms' too."""
    H, V = spec.H, spec.V
    norm_std = d.get("norm_std", 0.1)
    add(embed, mat_dtype, (V, H), 0.0, d.get("embed_std", 0.25 if spec.tied else 1.0))
    add(final_norm, norm_dtype, (H,), d.get("final_norm_center", 1.0), norm_std)
    if not spec.tied:
        add("lm_head.weight", mat_dtype, (V, H), 0.0, 6.0 / math.sqrt(H))
    return norm_std


def lfm2_params(spec, d, add, out_std, qk_std, mat_dtype, norm_dtype):
    """The tensors of an LFM2 fixture (random_params' `add`, drawn by name), named and shaped as Lfm2ForCausalLM holds
    them: model.embed_tokens.weight (V, H); per layer operator_norm.weight / ffn_norm.weight (H,) (plain w: around 1
    with std norm_std); on "conv" layers conv.in_proj.weight (3H, H) (rows B, C, x; std 1 / sqrt(H)),
    conv.conv.weight (H, 1, conv_L_cache) (std conv_std: the conv mixes its positions with weights of either sign) and
    conv.out_proj.weight (H, H) (out_std); on "full_attention" layers self_attn.q_proj / k_proj (qk_std) / v_proj,
    self_attn.q_layernorm.weight / k_layernorm.weight (head_dim,) (around qk_norm_center, std qk_norm_std) and
    self_attn.out_proj.weight (H, heads x head_dim); feed_forward.w1 / w3 (F, H) and w2 (H, F) with F the adjusted
    width (reference.lfm2_ff_dim); model.embedding_norm.weight (H,) (around final_norm_center); lm_head.weight only
    untied. LFM2-MoE: the dense layers' w1 / w3 / w2 at intermediate_size; on its MoE layers in their place
    feed_forward.gate.weight (E, H) (router_std: search_routers may redraw it), feed_forward.expert_bias (E,) in F32
    (std bias_std) and per expert feed_forward.experts.{e}.w1 / w3 (moe_intermediate_size, H), w2 (H,
    moe_intermediate_size)."""
    norm_std = outer_params(spec, d, add, mat_dtype, norm_dtype, "model.embed_tokens.weight",
                            "model.embedding_norm.weight")
    H, F, HD = spec.H, spec.F, spec.HD
    QD, KVD = spec.NH * HD, spec.NKV * HD
    std_in = 1 / math.sqrt(H)
    for l in range(spec.L):
        p = "model.layers.%d." % l
        add(p + "operator_norm.weight", norm_dtype, (H,), 1.0, norm_std)
        add(p + "ffn_norm.weight", norm_dtype, (H,), 1.0, norm_std)
        if spec.layer_conv[l]:
            add(p + "conv.in_proj.weight", mat_dtype, (3 * H, H), 0.0, std_in)
            add(p + "conv.conv.weight", mat_dtype, (H, 1, spec.lfm2_K), 0.0, d.get("conv_std", 0.5))
            add(p + "conv.out_proj.weight", mat_dtype, (H, H), 0.0, out_std(H))
        else:
            add(p + "self_attn.q_proj.weight", mat_dtype, (QD, H), 0.0, qk_std)
            add(p + "self_attn.k_proj.weight", mat_dtype, (KVD, H), 0.0, qk_std)
            add(p + "self_attn.v_proj.weight", mat_dtype, (KVD, H), 0.0, std_in)
            add(p + "self_attn.q_layernorm.weight", norm_dtype, (HD,), d.get("qk_norm_center", 1.0),
                d.get("qk_norm_std", 0.2))
            add(p + "self_attn.k_layernorm.weight", norm_dtype, (HD,), d.get("qk_norm_center", 1.0),
                d.get("qk_norm_std", 0.2))
            add(p + "self_attn.out_proj.weight", mat_dtype, (H, QD), 0.0, out_std(QD))
        if spec.layer_moe[l]:
            E, Fm = spec.num_experts, spec.moe_intermediate
            add(ref.router_weight_name(spec, p), mat_dtype, (E, H), 0.0, d["router_std"])
            # Lfm2MoeSparseMoeBlock's buffer, registered in float32
            add(ref.correction_bias_name(spec, p), "F32", (E,), 0.0, d["bias_std"])
            for e in range(E):
                gate, up, down = ref.expert_weights(spec, p, e)
                add(gate, mat_dtype, (Fm, H), 0.0, std_in)
                add(up, mat_dtype, (Fm, H), 0.0, std_in)
                add(down, mat_dtype, (H, Fm), 0.0, out_std(Fm))
            continue
        add(p + "feed_forward.w1.weight", mat_dtype, (F, H), 0.0, std_in)
        add(p + "feed_forward.w3.weight", mat_dtype, (F, H), 0.0, std_in)
        add(p + "feed_forward.w2.weight", mat_dtype, (H, F), 0.0, out_std(F))


def nemotron_h_params(spec, d, add, out_std, qk_std, mat_dtype, norm_dtype):
    """The tensors of a Nemotron-H fixture (random_params' `add`, drawn by name), named and shaped as the released
    NemotronHForCausalLM checkpoints hold them: backbone.embeddings.weight (V, H) (std embed_std, default 1: untied);
    per layer backbone.layers.{l}.norm.weight (H,) (plain w: around 1 with std norm_std) and the one mixer under
    backbone.layers.{l}.mixer.: on "M" layers mamba_params' tensors (in_proj, conv1d weight and bias, A_log / D /
    dt_bias in F32, norm, out_proj), on "*" layers q_proj / k_proj (qk_std) / v_proj (heads x head_dim, H) and o_proj
    (out_std), on "-" layers up_proj (F, H) (std up_gain / sqrt(H), default 1 / sqrt(H)) and down_proj (H, F) (out_std),
    on "E" layers the router gate.weight (E, H) (router_std: search_routers may redraw it) and its buffer
    gate.e_score_correction_bias (E,) in F32 (std bias_std), per expert experts.{e}.up_proj.weight (Fm, D) (std up_gain
    / sqrt(D)) and experts.{e}.down_proj.weight (D, Fm) (out_std), D = hidden_size or, with moe_latent_size (LatentMoE),
    the latent width, and then fc1_latent_proj.weight (D, H) (std 1 / sqrt(H)) and fc2_latent_proj.weight (H, D)
    (out_std(D)); shared_experts.up_proj.weight (Fs, H) and
    shared_experts.down_proj.weight (H, Fs) (out_std times shared_gain, default 1); backbone.norm_f.weight (H,) (around
    final_norm_center, default 1); lm_head.weight (V, H) (untied: std 6 / sqrt(H), as the other untied fixtures'
    heads)."""
    norm_std = outer_params(spec, d, add, mat_dtype, norm_dtype, "backbone.embeddings.weight", "backbone.norm_f.weight")
    H, F, HD = spec.H, spec.F, spec.HD
    QD, KVD = spec.NH * HD, spec.NKV * HD
    std_in = 1 / math.sqrt(H)
    for l, kind in enumerate(spec.layer_kinds):
        p = "backbone.layers.%d." % l
        add(p + "norm.weight", norm_dtype, (H,), 1.0, norm_std)
        m = p + "mixer."
        if kind == "mamba":
            mamba_params(spec, d, m, add, out_std, mat_dtype, norm_dtype)
        elif kind == "attention":
            add(m + "q_proj.weight", mat_dtype, (QD, H), 0.0, qk_std)
            add(m + "k_proj.weight", mat_dtype, (KVD, H), 0.0, qk_std)
            add(m + "v_proj.weight", mat_dtype, (KVD, H), 0.0, std_in)
            add(m + "o_proj.weight", mat_dtype, (H, QD), 0.0, out_std(QD))
        elif kind == "moe":
            E, Fm, Fs = spec.num_experts, spec.moe_intermediate, spec.shared_intermediate
            add(ref.router_weight_name(spec, p), mat_dtype, (E, H), 0.0, d["router_std"])
            # NemotronHTopkRouter's buffer, kept in float32 (_keep_in_fp32_modules_strict)
            add(ref.correction_bias_name(spec, p), "F32", (E,), 0.0, d["bias_std"])
            D = spec.moe_latent or H  # the routed experts' width (LatentMoE: moe_latent_size)
            if spec.moe_latent:
                # NemotronHMoE's nn.Linear(hidden_size, moe_latent_size) / (moe_latent_size, hidden_size), no bias
                add(m + "fc1_latent_proj.weight", mat_dtype, (D, H), 0.0, std_in)
                add(m + "fc2_latent_proj.weight", mat_dtype, (H, D), 0.0, out_std(D))
            for e in range(E):
                add(m + "experts.%d.up_proj.weight" % e, mat_dtype, (Fm, D), 0.0,
                    d.get("up_gain", 1.0) * (1 / math.sqrt(D)))
                add(m + "experts.%d.down_proj.weight" % e, mat_dtype, (D, Fm), 0.0, out_std(Fm))
            add(m + "shared_experts.up_proj.weight", mat_dtype, (Fs, H), 0.0, d.get("up_gain", 1.0) * std_in)
            add(m + "shared_experts.down_proj.weight", mat_dtype, (H, Fs), 0.0, d.get("shared_gain", 1.0) * out_std(Fs))
        else:
            add(m + "up_proj.weight", mat_dtype, (F, H), 0.0, d.get("up_gain", 1.0) * std_in)
            add(m + "down_proj.weight", mat_dtype, (H, F), 0.0, out_std(F))


def mamba_params(spec, d, m, add, out_std, mat_dtype, norm_dtype):
    """The tensors of one Mamba-2 layer of a Granite 4.0-H fixture (m = "model.layers.{l}.mamba."; random_params' `add`,
    drawn by name), shaped as GraniteMoeHybridMambaLayer holds them (mamba_proj_bias false: no in_proj / out_proj bias),
    and of a Nemotron-H fixture alike (m = "backbone.layers.{l}.mixer.", NemotronHMamba2Mixer's tensors, the same
    shapes; use_bias false):
      in_proj.weight (2 I + 2 G N + NH, H): the rows of the gate z (I), x (I), B (G N), C (G N) and dt (NH), std
      1 / sqrt(H), the dt rows then times dt_proj_gain (so that dt_bias, not the token, sets most of dt's range);
      conv1d.weight (conv_dim, 1, K) (std conv_std: the conv mixes K positions with weights of either sign) and, with
      mamba_conv_bias, conv1d.bias (conv_dim,) (std conv_bias_std), in the matrices' dtype;
      A_log (NH,) = log(uniform(A_range)), dt_bias (NH,) around dt_bias_mean (std dt_bias_std) and D (NH,) around D_mean
      (std D_std), in mamba_param_dtype (F32 as the released checkpoints keep A_log / D / dt_bias);
      norm.weight (I,) (GraniteMoeHybridRMSNormGated's / Zamba2RMSNormGated's plain w: around 1 with std
      gated_norm_std), in the norms' dtype;
      out_proj.weight (H, I) (out_std)."""
    H, I, NH, G, N, K = spec.H, spec.mamba_I, spec.mamba_NH, spec.mamba_G, spec.mamba_N, spec.mamba_K
    conv_dim = I + 2 * G * N
    param_dtype = d.get("mamba_param_dtype", "F32")
    w = add(m + "in_proj.weight", mat_dtype, (I + conv_dim + NH, H), 0.0, 1 / math.sqrt(H))
    w[-NH:] *= d.get("dt_proj_gain", 1.0)
    add(m + "conv1d.weight", mat_dtype, (conv_dim, 1, K), 0.0, d.get("conv_std", 0.5))
    if spec.mamba_conv_bias:
        add(m + "conv1d.bias", mat_dtype, (conv_dim,), 0.0, d.get("conv_bias_std", 0.5))
    lo, hi = d["A_range"]
    # A_log = log(A), A uniform in A_range: the tensor's own standard normal draw u turned uniform in place by the
    # normal CDF, lo + (hi - lo) Phi(u) (as hybrid_params)
    u = add(m + "A_log", param_dtype, (NH,), 0.0, 1.0)
    u.copy_(torch.log(lo + (hi - lo) * 0.5 * (1 + torch.erf(u / math.sqrt(2)))))
    add(m + "dt_bias", param_dtype, (NH,), d["dt_bias_mean"], d.get("dt_bias_std", 1.0))
    add(m + "D", param_dtype, (NH,), d.get("D_mean", 1.0), d.get("D_std", 0.5))
    add(m + "norm.weight", norm_dtype, (I,), 1.0, d.get("gated_norm_std", 0.2))
    add(m + "out_proj.weight", mat_dtype, (H, I), 0.0, out_std(I))


def mla_params(spec, d, a, mat_dtype, norm_dtype, add):
    """DeepSeek-V3's attention tensors of one layer (a = "model.layers.{l}.self_attn."), shaped as
    DeepseekV3Attention.__init__ makes them (no biases: attention_bias false; q_lora_rank null: one
    q_proj (NH * qk_head_dim, H) in place of q_a_proj / q_a_layernorm / q_b_proj). The latent norms'
    weights are drawn around 1 with std d["latent_norm_std"], the matrices with std fan_in^-0.5.
    d["latent_scale"], when set, multiplies kv_a_proj_with_mqa's first kv_lora_rank rows (the latent c,
    not k_pe) after the draw: a latent whose mean square is near kv_a_layernorm's eps (1e-6), so that
    the eps itself (1e-6 vs rms_norm_eps) changes the logits."""
    H, NH, C, QL = spec.H, spec.NH, spec.kv_lora_rank, spec.q_lora_rank
    NOPE, ROPE, DV, QK = spec.qk_nope_head_dim, spec.R, spec.v_head_dim, spec.HD
    if QL is None:
        add(a + "q_proj.weight", mat_dtype, (NH * QK, H), 0.0, 1 / math.sqrt(H))
    else:
        add(a + "q_a_proj.weight", mat_dtype, (QL, H), 0.0, 1 / math.sqrt(H))
        add(a + "q_a_layernorm.weight", norm_dtype, (QL,), 1.0, d["latent_norm_std"])
        add(a + "q_b_proj.weight", mat_dtype, (NH * QK, QL), 0.0, 1 / math.sqrt(QL))
    kv_a = add(a + "kv_a_proj_with_mqa.weight", mat_dtype, (C + ROPE, H), 0.0, 1 / math.sqrt(H))
    if "latent_scale" in d:
        kv_a[:C] *= d["latent_scale"]
    add(a + "kv_a_layernorm.weight", norm_dtype, (C,), 1.0, d["latent_norm_std"])
    add(a + "kv_b_proj.weight", mat_dtype, (NH * (NOPE + DV), C), 0.0, 1 / math.sqrt(C))
    add(a + "o_proj.weight", mat_dtype, (H, NH * DV), 0.0, 1 / math.sqrt(NH * DV))


# The weights DeepSeek-V3's FP8 checkpoints store as F8_E4M3 with a `<name>_scale_inv`: every nn.Linear of the
# decoder layers (attention, dense MLP, each routed expert, the shared experts) and the MTP layer's eh_proj.
# transformers' replace_with_fp8_linear swaps every nn.Linear but lm_head (integrations/finegrained_fp8.py);
# the router (DeepseekV3TopkRouter: a bare weight Parameter and e_score_correction_bias), the embeddings and
# the norms are not nn.Linear and stay unquantized
FP8_LINEARS = ("q_a_proj", "q_b_proj", "q_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj",
               "gate_proj", "up_proj", "down_proj", "eh_proj")


def fp8_linear(name):
    parts = name.split(".")
    return name.startswith("model.layers.") and parts[-1] == "weight" and parts[-2] in FP8_LINEARS


def fp8_quantize_params(params, block):
    """params (name, dtype, tensor) with every fp8_linear weight replaced by its block-quantized e4m3 values
    (dtype F8_E4M3) and a `<name>_scale_inv` (F32), quantized from the values the weight has as stored in
    its own dtype (reference.fp8_block_quantize)."""
    out = []
    for name, dt, t in params:
        if fp8_linear(name):
            values, scale_inv = ref.fp8_block_quantize(ref.round_to(t, dt), block)
            out += [(name, ref.F8, values), (name + "_scale_inv", "F32", scale_inv)]
        else:
            out.append((name, dt, t))
    return sorted(out, key=lambda x: x[0])


def check_source_weights(root, source, params):
    """The regenerated source weights equal the source fixture's model.safetensors, tensor for tensor
    (names, dtypes, values), when that fixture is there."""
    path = os.path.join(root, source, "model.safetensors")
    if not os.path.exists(path):
        print("%-20s NOTE: %s not found; its weights were redrawn from its seed unchecked" % ("", path))
        return
    stored = ref.read_safetensors(path)
    assert sorted(stored) == sorted(n for n, _, _ in params), "%s: other tensor names" % source
    for n, dt, t in params:
        assert stored[n][0] == dt and torch.equal(stored[n][1], ref.round_to(t, dt)), \
            "%s: %s differs from the stored fixture" % (source, n)


def fp8_description(folder, spec, p, base, dtypes, block, source, golden):
    """Extra golden.json model keys of an FP8 checkpoint: the block size, how many weights are F8_E4M3, the
    weight and weight_scale_inv shapes (one tensor per kind), the largest change of a weight by the
    quantization (relative to its block's largest |value|), how much prompt 4's logits differ from the
    unquantized source fixture's with the same routers (`fp8_quantization_effect_prompt4`) and how much
    they would change were the dequantized weights kept as the fp32 products, not rounded to bf16
    (`fp8_bf16_rounding_effect_prompt4`)."""
    fp8 = sorted(n for n, dt in dtypes.items() if dt == ref.F8)
    assert fp8 and all(fp8_linear(n) for n in fp8)
    assert sorted(p) == sorted(base) and all(torch.equal(p[n], base[n]) for n in base if n not in fp8), \
        "a tensor besides the FP8 weights changed"
    shapes, worst = {}, 0.0
    for n in fp8:
        kind = re.sub(r"experts\.\d+\.", "experts.E.", re.sub(r"^model\.layers\.\d+\.", "", n))
        w, s = list(p[n].shape), list(ref.fp8_block_grid(p[n].shape, block))
        shapes.setdefault(kind, {"example": n, "weight": w, "weight_scale_inv": s})
        for i in range(s[0]):
            for j in range(s[1]):
                a = base[n][i * block[0]:(i + 1) * block[0], j * block[1]:(j + 1) * block[1]]
                b = p[n][i * block[0]:(i + 1) * block[0], j * block[1]:(j + 1) * block[1]]
                worst = max(worst, float((a - b).abs().max() / a.abs().max()))
    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    effect = float((ref.forward(spec, p, ids, capture=False)[0] - ref.forward(spec, base, ids, capture=False)[0])
                   .abs().max())
    assert effect > 1e-2, "the FP8 quantization would not change the logits: %g" % effect
    st = ref.read_safetensors(os.path.join(folder, "model.safetensors"))
    unrounded = dict(p)
    for n in fp8:
        unrounded[n] = ref.fp8_block_dequantize(st[n][1], st[n + "_scale_inv"][1], block)
    rounding = float((ref.forward(spec, p, ids, capture=False)[0] - ref.forward(spec, unrounded, ids, capture=False)[0])
                     .abs().max())
    assert rounding > 1e-2, "the bf16 rounding of the dequantized weights would not change the logits: %g" % rounding
    return {"quantization": "fp8 e4m3, weights only, one F32 weight_scale_inv per block, edge blocks cut short",
            "weight_block_size": list(block), "fp8_weights": len(fp8), "weights_from": source,
            "dequantized_dtype": "BF16", "fp8_shapes": shapes,
            "fp8_max_relative_weight_change": round(worst, 6),
            "fp8_quantization_effect_prompt4": round(effect, 4),
            "fp8_bf16_rounding_effect_prompt4": round(rounding, 4)}


def router_name(spec, l):
    pre = (spec.prefix or "language_model.model.") + "layers.%d." % l
    return ref.router_weight_name(spec, pre)


def routing_gap(spec, p, l, logits):
    return min(routing_gap_parts(spec, p, l, logits))


def routing_gap_parts(spec, p, l, logits):
    """(expert gap, group gap): the smallest gap over these router logits between the k-th and (k+1)-th
    value the choice ranks (softmax probabilities, the sigmoid router's masked c, DeepSeek-V2's masked p),
    (MiniMax-M2's s + e_score_correction_bias, ERNIE 4.5's p + e_score_correction_bias, LFM2-MoE's s + expert_bias,
    PhiMoE's sparsemixer and Llama
    4's router: the logits), and for the sigmoid router with groups and DeepSeek-V2's group_limited_greedy the smallest between the
    topk_group-th and next group score (each group's sum of its two best c; its largest p), for sparsemixer the
    smallest distance of a mask's ratio to its threshold (reference.sparsemixer_mask_gap: a mask decision that
    rounding could flip would change a weight by a whole expert's share), else inf.
    routing_gap: the smaller of the two."""
    if spec.router == "sparsemixer":
        values, gap = logits, ref.sparsemixer_mask_gap(spec, logits)
    elif spec.router == "llama4":
        # (Llama4Router: the top-k of the logits themselves)
        values, gap = logits, float("inf")
    elif spec.router == "deepseek_v2":
        _, values, groups = ref.deepseek_v2_choice(spec, logits)
        gap = float("inf")
        if groups is not None:
            g = groups.sort(dim=-1, descending=True).values
            gap = float((g[:, spec.topk_group - 1] - g[:, spec.topk_group]).min())
    elif spec.router == "minimax":
        pre = (spec.prefix or "language_model.model.") + "layers.%d." % l
        _, values = ref.minimax_choice(spec, p[ref.correction_bias_name(spec, pre)], logits)
        gap = float("inf")
    elif spec.router == "ernie":
        pre = (spec.prefix or "language_model.model.") + "layers.%d." % l
        _, values = ref.ernie_choice(spec, p[ref.correction_bias_name(spec, pre)], logits)
        gap = float("inf")
    elif spec.router == "lfm2":
        pre = (spec.prefix or "language_model.model.") + "layers.%d." % l
        bias = p[ref.correction_bias_name(spec, pre)] if spec.lfm2_expert_bias else None
        _, values = ref.lfm2_moe_choice(spec, bias, logits)
        gap = float("inf")
    elif spec.router == "sigmoid":
        bias = p[ref.sigmoid_bias_name(spec, (spec.prefix or "language_model.model.") + "layers.%d." % l)]
        _, values, groups = ref.sigmoid_choice(spec, bias, logits)
        gap = float("inf")
        if spec.n_group > 1:
            g = groups.sort(dim=-1, descending=True).values
            gap = float((g[:, spec.topk_group - 1] - g[:, spec.topk_group]).min())
    else:
        values, gap = torch.softmax(logits, dim=-1, dtype=torch.float32), float("inf")
    top = values.sort(dim=-1, descending=True).values
    return float((top[:, spec.top_k - 1] - top[:, spec.top_k]).min()), gap


def search_routers(spec, d, seed, params, prompts):
    """Random routers give near-ties: over ~300 prompt tokens some token almost always has its k-th
    and (k+1)-th routing probabilities within 1e-3. So each MoE layer's router is redrawn (draw a
    from the generator seeded by crc32("seed/name/a"), draw 0 being random_params' own) until
    the gap over every prompt token of that layer is at least MIN_ROUTING_GAP, layer by layer
    (a layer's router inputs depend on the layers before it only); with groups (the sigmoid router's,
    DeepSeek-V2's group_limited_greedy) the gap between the topk_group-th and next group score too
    (routing_gap_parts). At most MAX_ROUTER_DRAWS draws per layer, or the entry's max_router_draws.
    Returns (params, number of draws per layer, None for dense layers)."""
    tensors = {n: (dt, t) for n, dt, t in params}
    # (an FP8 checkpoint's weights as a loader sees them: reference.fp8_dequantize_params)
    p = ref.fp8_dequantize_params(spec.cfg, {n: ref.round_to(t, dt) for n, (dt, t) in tensors.items()},
                                  {n: dt for n, (dt, _) in tensors.items()})
    draws = [None] * spec.L
    for l in range(spec.L):
        if not spec.layer_moe[l]:
            continue
        inputs = []
        for ids in prompts:
            trace = {}
            ref.forward(spec, p, torch.tensor([ids]), capture=False, trace=trace)
            inputs.append(trace["router_input"][l])
        x = torch.cat(inputs)
        name = router_name(spec, l)
        pre = (spec.prefix or "language_model.model.") + "layers.%d." % l
        dt, w = tensors[name]
        for a in range(d.get("max_router_draws", MAX_ROUTER_DRAWS)):
            if a:
                g = torch.Generator().manual_seed(zlib.crc32(("%d/%s/%d" % (seed, name, a)).encode()))
                w = torch.randn(*w.shape, generator=g) * d["router_std"]
            # (x @ w^T, plus gpt-oss's router bias, which is not redrawn)
            if routing_gap(spec, p, l, ref.router_logits(spec, p, pre, x, ref.round_to(w, dt))) >= MIN_ROUTING_GAP:
                break
        else:
            return None, None
        tensors[name] = (dt, w)
        p[name] = ref.round_to(w, dt)
        draws[l] = a + 1
    return [(n,) + tensors[n] for n in sorted(tensors)], draws


MAX_FED_ROUNDS = 40
MAX_NUDGES = 400


def nudge_router(spec, p, pre, x, w, dt):
    """Router w (E, H, fp32, stored as dt) moved until every token of x (N, H) has its k-th and (k+1)-th softmax
    probability (the rounded weights' logits) at least 1.5 x MIN_ROUTING_GAP apart: per pass, for each token under that,
    the rows of its k-th and (k+1)-th expert are pushed apart along the token, w_i += s x / |x|^2, w_j -= s x / |x|^2, s
    half of the logit difference still missing (the gap of two probabilities p_i > p_j is about p_i (l_i - l_j)), until
    none is left (at most MAX_NUDGES passes). The order of the two stays as drawn. Returns (w, passes) or (None,
    None). Softmax routers only (Qwen2MoeTopKRouter, Qwen3VLMoeTextTopKRouter, and Gemma4TextRouter, whose matrix
    multiplies its normed and scaled input: the push is along that, ref.router_features)."""
    assert spec.router in ("softmax", "gemma4")
    k, target = spec.top_k, 1.5 * MIN_ROUTING_GAP
    w = w.clone()
    for n in range(MAX_NUDGES):
        logits = ref.router_logits(spec, p, pre, x, ref.round_to(w, dt))
        top = torch.softmax(logits, dim=-1, dtype=torch.float32).sort(dim=-1, descending=True)
        bad = (top.values[:, k - 1] - top.values[:, k]) < target
        if not bad.any():
            return w, n
        i, j = top.indices[bad, k - 1], top.indices[bad, k]
        have = logits[bad].gather(1, i[:, None])[:, 0] - logits[bad].gather(1, j[:, None])[:, 0]
        want = 1.5 * target / top.values[bad, k - 1]
        s = (want - have).clamp(min=0) / 2 + 1e-3
        xb = ref.router_features(spec, p, pre, x[bad])
        step = xb / (xb * xb).sum(-1, keepdim=True) * s[:, None]
        w.index_add_(0, i, step)
        w.index_add_(0, j, -step)
    return None, None


def search_routers_fed(spec, d, seed, params, prompts, draws):
    """search_routers, continued over the greedy tokens too (entries with `route_fed_tokens`). Four MoE layers of top-k
    of 8 experts over every prompt token and the ~90 tokens fed back while decoding: a random router keeps
    MIN_ROUTING_GAP over all ~400 tokens of a layer about once in 3000 draws, and a seed whose routers, searched on the
    prompt tokens alone, also pass on the fed-back ones is rarer still (qwen3-next failed all 200 of MAX_ATTEMPTS_MOE
    so). Per round: greedy decoding of every prompt with the routers as they are; over each sequence (prompt + the
    generated tokens fed back, the last one excepted) the first MoE layer whose gap falls under MIN_ROUTING_GAP has its
    router moved by nudge_router over all those tokens; the next round decodes again (the later layers' inputs and the
    generated tokens may change). Returns (params, draws, nudges: per MoE layer how many nudge passes it took in all,
    None for dense layers) once a round finds every layer passing, or (None, None, None) after MAX_FED_ROUNDS rounds or
    when nudge_router gives up."""
    tensors = {n: (dt, t) for n, dt, t in params}
    nudges = [0 if m else None for m in spec.layer_moe]
    for _ in range(MAX_FED_ROUNDS):
        p = {n: ref.round_to(t, dt) for n, (dt, t) in tensors.items()}
        inputs = {l: [] for l in range(spec.L) if spec.layer_moe[l]}
        for ids in prompts:
            gen, _ = ref.greedy(spec, p, ids, MAX_NEW_TOKENS, (), False)
            trace = {}
            ref.forward(spec, p, torch.tensor([list(ids) + gen[:-1]]), capture=False, trace=trace)
            for l in inputs:
                inputs[l].append(trace["router_input"][l])
        bad = None
        for l in sorted(inputs):
            pre = (spec.prefix or "language_model.model.") + "layers.%d." % l
            if routing_gap(spec, p, l, ref.router_logits(spec, p, pre, torch.cat(inputs[l]))) < MIN_ROUTING_GAP:
                bad = l
                break
        if bad is None:
            return [(n,) + tensors[n] for n in sorted(tensors)], draws, nudges
        name = router_name(spec, bad)
        pre = (spec.prefix or "language_model.model.") + "layers.%d." % bad
        dt, w = tensors[name]
        w, n = nudge_router(spec, p, pre, torch.cat(inputs[bad]), w, dt)
        if w is None:
            return None, None, None
        tensors[name] = (dt, w)
        nudges[bad] += n
    return None, None, None


# ----------------------------------------------------------------------------------------------
# what golden.json records beyond the common fields, for the new families

def routing(spec, p, ids, fed=()):
    """Per MoE layer of one sequence (prompt `ids`, then the greedy tokens `fed` back): the
    smallest k-th minus (k+1)-th routing probability over the prompt tokens and over the fed
    tokens, the experts chosen at the last prompt position, and the experts' use over the prompt."""
    trace = {}
    ref.forward(spec, p, torch.tensor([list(ids)]), capture=False, trace=trace)
    out = {}
    full = {}
    if fed:
        ref.forward(spec, p, torch.tensor([list(ids) + list(fed)]), capture=False, trace=full)
    for l in range(spec.L):
        if not spec.layer_moe[l]:
            continue
        experts = trace["router"][l][1][0]
        gap = routing_gap(spec, p, l, trace["router_logits"][l])
        gen_gap = float("inf")
        if fed:
            gen_gap = routing_gap(spec, p, l, full["router_logits"][l][len(ids):])
        out[l] = {"gap": gap, "gen_gap": gen_gap,
                  "last": [int(e) for e in experts[-1]],
                  "usage": torch.bincount(experts.flatten(), minlength=spec.num_experts).tolist()}
    return out


def long_factor_use(n, max_new, after):
    """How a prompt of n tokens meets LongRoPE's long factors while max_new tokens are generated:
    "prefill" (n > after: from the start), "from generated token g" (the sequence grows past
    `after` when generated token g is fed back, and transformers runs it again whole), or
    "never"."""
    if n > after:
        return "prefill"
    if n + max_new - 1 > after:
        return "from generated token %d" % (after - n)
    return "never"


def family_description(spec, p, golden):
    """Extra golden.json model keys (and per prompt expert_ids_last) of a Gemma 2/3, Phi-3 or MoE
    golden model. Returns (model keys, per-prompt keys, routing gaps or None)."""
    desc = {}
    if spec.arch in ref.GEMMA or spec.arch in ("Phi3ForCausalLM", ref.GPT_OSS, ref.COHERE[1], ref.OLMO3, ref.EXAONE4,
                                               ref.PHIMOE, ref.DOTS1):
        desc["layer_sliding"] = spec.layer_sliding
    if spec.arch in ref.GEMMA:
        prefix, _ = ref.weight_names(spec, p)
        desc.update({
            "weight_prefix": prefix,
            "embed_scale": spec.embed_scale,
            "attn_scale": spec.attn_scale,
            "attn_logit_softcapping_applied": spec.attn_softcap,
            "final_logit_softcapping_applied": spec.final_softcap,
            "layer_rope": [{"theta": spec.rope_local_theta, "scaling": None} if k == "local" else
                           {"theta": spec.theta, "scaling": spec.rope_scaling} for k in spec.layer_rope],
        })
        # how hard the caps bite, and that the caps Gemma 3 ignores would change the logits
        ids = golden["prompts"][4]["input_ids"]
        trace = {}
        logits, _ = ref.forward(spec, p, torch.tensor([ids]), capture=False, trace=trace)
        desc["max_abs_attn_score_prompt4"] = round(max(trace["max_abs_score"].values()), 4)
        raw = copy.copy(spec)
        raw.final_softcap = None
        raw_logits, _ = ref.forward(raw, p, torch.tensor([ids]), capture=False)
        desc["max_abs_raw_logit_prompt4"] = round(float(raw_logits.abs().max()), 4)
        cfg = spec.text_cfg
        if spec.arch != "Gemma2ForCausalLM":
            forced = copy.copy(spec)
            forced.attn_softcap = cfg.get("attn_logit_softcapping")
            forced.final_softcap = cfg.get("final_logit_softcapping")
            alt, _ = ref.forward(forced, p, torch.tensor([ids]), capture=False)
            effect = float((alt - logits).abs().max())
            assert effect > 1e-2, "the ignored softcap would not change the logits: %g" % effect
            desc["ignored_softcap_effect_prompt4"] = round(effect, 4)
    if spec.arch == "Phi3ForCausalLM":
        desc["rope_attention_factor"] = spec.rope_attention_factor
        if spec.R != spec.HD:
            desc["rotary_dim"] = spec.R
        after = spec.long_rope_after
        # the last token generated is never fed back: a sequence holds at most prompt + max_new - 1
        longest = max(len(e["input_ids"]) for e in golden["prompts"]) + golden["max_new_tokens"]
        if longest - 1 <= after:
            desc["rope_factors_used"] = "short_factor"
        else:
            desc["rope_factors_used"] = "short_factor and long_factor"
            desc["long_rope_after"] = after
            desc["long_factors_per_prompt"] = [long_factor_use(len(e["input_ids"]), golden["max_new_tokens"], after)
                                               for e in golden["prompts"]]
            kinds = set(x.split(" ")[0] for x in desc["long_factors_per_prompt"])
            assert {"prefill", "from"} <= kinds, "the fixture must cross over in prefill and while decoding"
            short = copy.copy(spec)
            short.rope = {"global": spec.rope["global"]}
            ids = torch.tensor([golden["prompts"][4]["input_ids"]])
            effect = float((ref.forward(spec, p, ids, capture=False)[0] -
                            ref.forward(short, p, ids, capture=False)[0]).abs().max())
            assert effect > 1e-2, "the long factors would not change the logits: %g" % effect
            desc["long_factor_effect_prompt4"] = round(effect, 4)
        desc["longest_sequence"] = longest
    for applies, describe in FAMILY_DESCRIPTIONS:
        if ref.arch_applies(applies, spec):
            desc.update(describe(spec, p, golden))
    if spec.arch == ref.SMOLLM3:
        # the NoPE layers: what prompt 4's logits would be were they rotated too
        rotated = copy.copy(spec)
        rotated.layer_use_rope = [True] * spec.L
        ids = torch.tensor([golden["prompts"][4]["input_ids"]])
        effect = float((ref.forward(spec, p, ids, capture=False)[0] -
                        ref.forward(rotated, p, ids, capture=False)[0]).abs().max())
        assert effect > 1e-2, "the NoPE layers would not change the logits: %g" % effect
        desc.update({"layer_use_rope": spec.layer_use_rope, "nope_effect_prompt4": round(effect, 4)})
    if not spec.num_experts:
        return desc, None, None
    per_prompt, gaps, gen_gaps = [], [], []
    usage = [[0] * spec.num_experts if m else None for m in spec.layer_moe]
    for e in golden["prompts"]:
        r = routing(spec, p, e["input_ids"], e["greedy_ids"][:-1])
        per_prompt.append([r[l]["last"] if l in r else None for l in range(spec.L)])
        for l, x in r.items():
            gaps.append(x["gap"])
            gen_gaps.append(x["gen_gap"])
            usage[l] = [a + b for a, b in zip(usage[l], x["usage"])]
    desc.update({
        "num_experts": spec.num_experts, "experts_per_tok": spec.top_k,
        "norm_topk_prob": spec.norm_topk_prob, "moe_layers": spec.layer_moe,
        "shared_expert": bool(spec.shared_intermediate),
        "routing_min_gap": round(min(gaps), 6), "routing_min_gap_generated": round(min(gen_gaps), 6),
        "expert_usage": usage,
    })
    if spec.router == "sigmoid":
        desc.update(sigmoid_router_description(spec, p, golden))
    if spec.router == "deepseek_v2":
        desc.update(deepseek_v2_router_description(spec, p, golden))
    if spec.arch == ref.GPT_OSS:
        desc.update(gpt_oss_description(spec, p, golden))
    return desc, per_prompt, (min(gaps), min(gen_gaps))


def scaled_rope_description(spec, p, golden):
    """Extra golden.json model keys of a rope with an attention factor (YaRN): the factor, the
    inverse frequencies, and how much prompt 4's logits would change with plain RoPE."""
    plain = copy.copy(spec)
    plain.rope = {"global": (ref.rope_inv_freq(spec.R, spec.theta, None), 1.0)}
    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    effect = float((ref.forward(spec, p, ids, capture=False)[0] -
                    ref.forward(plain, p, ids, capture=False)[0]).abs().max())
    assert effect > 1e-2, "the rope scaling would not change the logits: %g" % effect
    return {"rope_attention_factor": spec.rope_attention_factor,
            "rope_inv_freq": [float(x) for x in spec.inv_freq],
            "rope_scaling_effect_prompt4": round(effect, 4)}


def what_if_effects(family, what_ifs, ids, logits, prefix=""):
    """`<prefix><name>_effect_prompt4` for each what-if (a dict, or (name, (spec, params)) pairs): the largest change
    of prompt 4's logits (`ids`, `logits`) under it, each above 1e-2 — else the fixture could not tell the two
    readings apart."""
    out = {}
    for key, (s2, p2) in (what_ifs.items() if isinstance(what_ifs, dict) else what_ifs):
        effect = float((ref.forward(s2, p2, ids, capture=False)[0] - logits).abs().max())
        assert effect > 1e-2, "%s's %s would not change the logits: %g" % (family, key, effect)
        out["%s%s_effect_prompt4" % (prefix, key)] = round(effect, 4)
    return out


def sigmoid_router_description(spec, p, golden):
    """Extra golden.json model keys of GLM-4.5's router: its settings, and how much prompt 4's logits
    would change without the correction bias, without the group limit (n_group > 1 only), without the
    scaling, and (norm_topk_prob false only) with the top-k weights renormalised."""
    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    logits = ref.forward(spec, p, ids, capture=False)[0]
    out = {"router": "sigmoid", "n_group": spec.n_group, "topk_group": spec.topk_group,
           "routed_scaling_factor": spec.routed_scaling_factor}
    out.update(what_if_effects("the router", sigmoid_router_what_ifs(spec, p), ids, logits, prefix="router_"))
    return out


def sigmoid_router_what_ifs(spec, p):
    """sigmoid_router_description's what-ifs, in its order, as (name, (spec, params)) pairs: `bias` (the choice without
    e_score_correction_bias: zeroed), `group_limit` (n_group = topk_group = 1; only where there are groups, n_group >
    1), `scaling` (routed_scaling_factor 1) and `norm_topk_prob` (the weights renormalised; DeepseekV3Config's default
    true, only where norm_topk_prob is false)."""
    unbiased = {n: (torch.zeros_like(t) if n.endswith("e_score_correction_bias") else t) for n, t in p.items()}
    ungrouped, unscaled, renormed = copy.copy(spec), copy.copy(spec), copy.copy(spec)
    ungrouped.n_group = ungrouped.topk_group = 1
    unscaled.routed_scaling_factor = 1.0
    renormed.norm_topk_prob = True
    return [("bias", (spec, unbiased))] + ([("group_limit", (ungrouped, p))] if spec.n_group > 1 else []) + \
        [("scaling", (unscaled, p))] + ([("norm_topk_prob", (renormed, p))] if not spec.norm_topk_prob else [])


def prompt4_forward(spec, p, golden):
    """Golden prompt 4's ids, the reference forward pass's trace of them and their logits (T, V): what the families'
    descriptions measure their what-ifs against."""
    ids = golden["prompts"][4]["input_ids"]
    trace = {}
    return ids, trace, ref.forward(spec, p, torch.tensor([ids]), capture=False, trace=trace)[0]


def deepseek_v2_router_description(spec, p, golden):
    """Extra golden.json model keys of DeepSeek-V2's router (reference.deepseek_v2_route): its settings; the
    smallest expert and group gaps apart (`routing_min_expert_gap` / `routing_min_group_gap`, each [prompt tokens,
    fed-back tokens]; routing_min_gap is the smaller); and how much prompt 4's logits would change under each
    what-if (`router_<name>_effect_prompt4`): `norm_topk_prob` (the weights renormalised over the k, as DeepSeek's
    own MoEGate for V2 does with norm_topk_prob true: divided by their sum + 1e-20, routed_scaling_factor not
    applied), `scaling` (routed_scaling_factor ignored; only where it is not 1), with group_limited_greedy
    `group_sum` (groups scored by the sum of their two best p, DeepSeek-V3's rule, in place of the largest) and
    `group_limit` (no group limit: topk_method greedy), and for `group_sum` also how many of prompt 4's tokens take
    another expert set per MoE layer, the router inputs held at the golden ones
    (`router_group_sum_changed_tokens_prompt4`, null for dense layers, out of the prompt's length)."""
    ids, trace, logits = prompt4_forward(spec, p, golden)
    renormed, unscaled, group_sum, ungrouped = (copy.copy(spec) for _ in range(4))
    renormed.norm_topk_prob = True
    unscaled.routed_scaling_factor = 1.0
    group_sum.v2_group_score = "top2_sum"
    ungrouped.topk_method = "greedy"
    grouped = spec.topk_method == "group_limited_greedy"
    out = {"router": "deepseek_v2 (softmax, %s)" % spec.topk_method, "topk_method": spec.topk_method,
           "n_group": spec.n_group, "topk_group": spec.topk_group, "group_score": "max" if grouped else None,
           "routed_scaling_factor": spec.routed_scaling_factor}
    expert_gaps, group_gaps = ([], []), ([], [])
    for e in golden["prompts"]:
        full = {}
        ref.forward(spec, p, torch.tensor([e["input_ids"] + e["greedy_ids"][:-1]]), capture=False, trace=full)
        n = len(e["input_ids"])
        for l in range(spec.L):
            if spec.layer_moe[l]:
                for i, part in enumerate((full["router_logits"][l][:n], full["router_logits"][l][n:])):
                    eg, gg = routing_gap_parts(spec, p, l, part)
                    expert_gaps[i].append(eg)
                    group_gaps[i].append(gg)
    out["routing_min_expert_gap"] = [round(min(x), 6) for x in expert_gaps]
    if grouped:
        out["routing_min_group_gap"] = [round(min(x), 6) for x in group_gaps]
        changed = changed_expert_sets(spec, lambda l: tuple(ref.deepseek_v2_route(s, trace["router_logits"][l])[1]
                                                            for s in (spec, group_sum)))
        assert sum(n for n in changed if n is not None) > 0, "scoring the groups by their two best would route no token otherwise"
        out["router_group_sum_changed_tokens_prompt4"] = changed
        out["prompt4_tokens"] = len(ids)
    effects = [("norm_topk_prob", renormed)] + ([("scaling", unscaled)] if spec.routed_scaling_factor != 1 else []) + \
        ([("group_sum", group_sum), ("group_limit", ungrouped)] if grouped else [])
    for key, s2 in effects:
        effect = float((ref.forward(s2, p, torch.tensor([ids]), capture=False)[0] - logits).abs().max())
        assert effect > 1e-2, "DeepSeek-V2's router %s would not change the logits: %g" % (key, effect)
        out["router_%s_effect_prompt4" % key] = round(effect, 4)
    return out


def gpt_oss_description(spec, p, golden):
    """Extra golden.json model keys of gpt-oss: the SwiGLU constants, the YaRN rope, how often the
    clamps bite on the golden prompts' tokens (per layer, over the chosen experts' gate and up values:
    `clamped_gate` gate > limit, `clamped_up` |up| > limit, `clamped_up_low` up < -limit, out of
    `clamp_candidates` values each), and how much prompt 4's logits would change without each feature."""
    limit = spec.swiglu_limit
    out = {"attention_sinks": True, "o_proj_bias": spec.o_bias, "router": "topk_softmax",
           "swiglu_alpha": spec.swiglu_alpha, "swiglu_limit": limit,
           "rope_truncate": bool(spec.rope_scaling.get("truncate", True))}
    out.update(scaled_rope_description(spec, p, golden))
    gate, up, up_low, candidates = ([0] * spec.L for _ in range(4))
    for e in golden["prompts"]:
        trace = {}
        ref.forward(spec, p, torch.tensor([e["input_ids"]]), capture=False, trace=trace)
        for l in range(spec.L):
            gate[l] += int(trace["clamped_gate"][l].sum())
            up[l] += int(trace["clamped_up"][l].sum())
            up_low[l] += int(trace["clamped_up_low"][l].sum())
            candidates[l] += trace["clamped_gate"][l].numel()
    assert sum(gate) > 0 and 0 < sum(up_low) < sum(up), "the clamps must bite on both sides: %s %s %s" % (
        gate, up, up_low)
    out.update({"clamped_gate": gate, "clamped_up": up, "clamped_up_low": up_low, "clamp_candidates": candidates})

    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    logits = ref.forward(spec, p, ids, capture=False)[0]

    def zeroed(suffixes):
        return {n: (torch.zeros_like(t) if n.endswith(suffixes) else t) for n, t in p.items()}

    def effect(s2, p2):
        return round(float((ref.forward(s2, p2, ids, capture=False)[0] - logits).abs().max()), 4)

    no_sinks, unclamped, alpha1, unwindowed, truncated = (copy.copy(spec) for _ in range(5))
    no_sinks.attn_sinks = False
    unclamped.swiglu_limit = float("inf")
    alpha1.swiglu_alpha = 1.0
    unwindowed.layer_sliding = [False] * spec.L
    rs = dict(spec.rope_scaling, truncate=True)
    truncated.rope = {"global": ref.yarn_parameters(spec.R, spec.theta, rs, spec.text_cfg["max_position_embeddings"])}
    # gate / up read as the first and second half of gate_up_proj's columns instead of interleaved
    halves = dict(p)
    for n in p:
        if n.endswith(("mlp.experts.gate_up_proj", "mlp.experts.gate_up_proj_bias")):
            F2 = p[n].shape[-1]
            t = torch.empty_like(p[n])
            t[..., 0::2], t[..., 1::2] = p[n][..., :F2 // 2], p[n][..., F2 // 2:]
            halves[n] = t
    effects = {
        "sinks_removed": (no_sinks, p), "sinks_zero": (spec, zeroed(("self_attn.sinks",))),
        "o_proj_bias": (spec, zeroed(("self_attn.o_proj.bias",))),
        "qkv_bias": (spec, zeroed(("q_proj.bias", "k_proj.bias", "v_proj.bias"))),
        "router_bias": (spec, zeroed(("mlp.router.bias",))),
        "expert_bias": (spec, zeroed(("gate_up_proj_bias", "down_proj_bias"))),
        "clamp": (unclamped, p), "swiglu_alpha": (alpha1, p), "gate_up_layout": (spec, halves),
        "sliding_window": (unwindowed, p), "rope_truncate": (truncated, p),
    }
    for key, (s2, p2) in effects.items():
        out["%s_effect_prompt4" % key] = effect(s2, p2)
        assert out["%s_effect_prompt4" % key] > 1e-2, "gpt-oss's %s would not change the logits: %g" % (
            key, out["%s_effect_prompt4" % key])
    return out


def granite_description(spec, p, golden):
    """Extra golden.json model keys of Granite: the multipliers, and how much prompt 4's logits would
    change with each of them at 1 (the attention's at head_dim^-0.5)."""
    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    logits = ref.forward(spec, p, ids, capture=False)[0]
    out = {"embedding_multiplier": spec.embed_scale, "attention_multiplier": spec.attn_scale,
           "residual_multiplier": spec.residual_multiplier, "logits_scaling": spec.logits_scaling}
    for key, value in (("embed_scale", 1.0), ("attn_scale", spec.HD ** -0.5), ("residual_multiplier", 1.0),
                       ("logits_scaling", 1.0)):
        plain = copy.copy(spec)
        setattr(plain, key, value)
        effect = float((ref.forward(plain, p, ids, capture=False)[0] - logits).abs().max())
        assert effect > 1e-2, "Granite's %s would not change the logits: %g" % (key, effect)
        out["%s_effect_prompt4" % key] = round(effect, 4)
    return out


def granite_hybrid_what_ifs(spec, p):
    """Granite 4.0's what-ifs (beside granite_description's multipliers), name -> (spec, params), each a reading an
    engine could take of the release: `position_embedding_none` (no RoPE: position_embedding_type "rope" read as none;
    with RoPE only), `position_embedding_rope` (RoPE on every attention layer though position_embedding_type is null /
    "nope"; without RoPE only), `shared_mlp` (no shared_mlp beside the experts, GraniteMoe's layer; with experts only),
    `num_experts_per_tok_1` (the top-1 expert alone, its softmax weight 1: num_experts_per_tok read as 1; with experts of
    top-k > 1 beside Mamba-2 layers only, granite4-h-moe: granite4-moe-nope's golden.json predates it),
    `shared_mlp_halves_swapped` (input_linear's up rows read first), `shared_mlp_width_intermediate_size` (shared_mlp's
    width taken from intermediate_size F, read without a shape check from the start of each stored buffer:
    input_linear's first 2F rows, gate F then up F, output_linear's first H x F values as (H, F); with F <
    shared_intermediate_size only). With Mamba-2 layers (granite4-h) also, on those layers: `mamba_conv_bias` (no
    conv1d.bias: mamba_conv_bias read as false), `mamba_conv_activation` (the conv without its SiLU), `mamba_D` (no D
    skip), `mamba_dt_bias` (no dt_bias), `mamba_dt_softplus` (dt = dt_raw + dt_bias without the softplus, still clamped
    at 0 by time_step_limit), `mamba_norm_before_gate` (the gated norm's RMSNorm first, then silu(z): Qwen3-Next's order,
    mamba_ssm's norm_before_gate=True), `mamba_state_reset_per_chunk` (the chunked scan without the inter-chunk states:
    every mamba_chunk_size tokens from a zero state); with more than one group `mamba_norm_per_group` (the RMSNorm over
    each group's intermediate_size / n_groups values, as mamba_ssm's RMSNormGated(group_size=intermediate_size //
    ngroups) and vLLM's Mixer2RMSNormGated take it, where transformers normalises all intermediate_size values at once),
    `mamba_groups_first` (every head reading group 0: n_groups ignored), `mamba_groups_tiled` (head h reading group h %
    n_groups instead of h // (heads / n_groups)); with mamba_n_groups 1 (granite4-h-moe, as released) those three read
    alike and are left out."""
    out = {}
    rope = any(spec.layer_use_rope)
    s2 = copy.copy(spec)
    s2.layer_use_rope = [not rope and not m for m in spec.layer_mamba]
    out["position_embedding_none" if rope else "position_embedding_rope"] = s2
    if spec.num_experts:
        s2 = copy.copy(spec)
        s2.shared_intermediate = 0
        out["shared_mlp"] = s2
    if spec.num_experts and spec.top_k > 1 and any(spec.layer_mamba):
        s2 = copy.copy(spec)
        s2.top_k = 1
        out["num_experts_per_tok_1"] = s2
    s2 = copy.copy(spec)
    s2.shared_mlp_swapped = True
    out["shared_mlp_halves_swapped"] = s2
    assert spec.F < spec.shared_intermediate, "the width what-if reads a prefix of shared_mlp's tensors"
    s2 = copy.copy(spec)
    s2.shared_mlp_width = spec.F
    out["shared_mlp_width_intermediate_size"] = s2
    if any(spec.layer_mamba):
        settings = [("mamba_conv_activation", "mamba_conv_act", False),
                    ("mamba_dt_softplus", "mamba_dt_softplus", False), ("mamba_norm_before_gate", "mamba_norm_order", "norm_first"),
                    ("mamba_state_reset_per_chunk", "mamba_reset_chunks", True)]
        if spec.mamba_G > 1:
            settings += [("mamba_norm_per_group", "mamba_norm_group", spec.mamba_I // spec.mamba_G),
                         ("mamba_groups_first", "mamba_head_group", "first"),
                         ("mamba_groups_tiled", "mamba_head_group", "tile")]
        for key, attr, value in settings:
            s2 = copy.copy(spec)
            setattr(s2, attr, value)
            out[key] = s2
    out = {k: (v, p) for k, v in out.items()}
    if any(spec.layer_mamba):
        for key, suffix in (("mamba_conv_bias", ".mamba.conv1d.bias"), ("mamba_D", ".mamba.D"),
                            ("mamba_dt_bias", ".mamba.dt_bias")):
            out[key] = (spec, {n: (torch.zeros_like(t) if n.endswith(suffix) else t) for n, t in p.items()})
    return out


def granite_hybrid_description(spec, p, golden):
    """Extra golden.json model keys of Granite 4.0 (GraniteMoeHybridForCausalLM): the layer types,
    position_embedding_type and which layers rotate, the RoPE, the MLP (shared_mlp alone, or the experts plus
    shared_mlp) with its tensor layout, with Mamba-2 layers their sizes, tensor layout and rule (granite_mamba_keys),
    and how much prompt 4's logits would change under each of granite_hybrid_what_ifs (`<name>_effect_prompt4`, each >
    1e-2); besides granite_description's multipliers and (with experts) the MoE keys."""
    ids, trace, logits = prompt4_forward(spec, p, golden)
    c, H, Fs, F = spec.cfg, spec.H, spec.shared_intermediate, spec.F
    out = {"layer_types": c["layer_types"], "position_embedding_type": c["position_embedding_type"],
           "layer_use_rope": spec.layer_use_rope, "rope_theta": spec.theta,
           "rope_inv_freq": [float(x) for x in spec.inv_freq] if any(spec.layer_use_rope) else None,
           "rms_norm_eps": spec.eps, "intermediate_size": F, "shared_intermediate_size": Fs,
           "shared_mlp_layout": "shared_mlp.input_linear.weight (%d, %d): gate rows [0, %d), up rows [%d, %d); "
                                "shared_mlp.output_linear.weight (%d, %d); down(silu(gate x) * up x), ungated" % (
                                    2 * Fs, H, Fs, Fs, 2 * Fs, H, Fs)}
    if spec.num_experts:
        E = spec.num_experts
        out.update({"mlp": "block_sparse_moe(h) + shared_mlp(h) (GraniteMoe's experts of intermediate_size, then the "
                           "shared_mlp added without a gate)",
                    "router": "logits = h block_sparse_moe.router.layer.weight^T (%d, %d); the top-%d logits, their "
                              "softmax as the weights" % (E, H, spec.top_k),
                    "expert_layout": "block_sparse_moe.input_linear.weight (%d, %d, %d): per expert gate rows [0, %d), "
                                     "up rows [%d, %d); block_sparse_moe.output_linear.weight (%d, %d, %d)" % (
                                         E, 2 * F, H, F, F, 2 * F, E, H, F)})
    else:
        out["mlp"] = "shared_mlp(h) alone (num_local_experts 0: no block_sparse_moe; intermediate_size not read)"
    if any(spec.layer_mamba):
        out.update(granite_mamba_keys(spec, p, golden, trace))
    out.update(what_if_effects(spec.arch, granite_hybrid_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


def granite_mamba_keys(spec, p, golden, trace):
    """golden.json model keys of Granite 4.0-H's Mamba-2 layers: which layers, the mixer's sizes (config.json's mamba_*
    keys and what they give), in_proj's row layout, the conv, the scan and the gated norm as rules, the per-layer state
    an engine keeps, over prompt 4's tokens per Mamba-2 layer dt and the decay exp(dt A) ([min, median, max]: `trace`,
    ref.forward's), and the largest |logit| difference between the chunked scan (mamba_chunk_size) and the per-token
    recurrence over every prompt (`mamba_chunked_vs_recurrent`; build_one bumps the seed past MAX_MAMBA_FORM_DIFF)."""
    I, NH, P, G, N, K = spec.mamba_I, spec.mamba_NH, spec.mamba_P, spec.mamba_G, spec.mamba_N, spec.mamba_K
    conv_dim = I + 2 * G * N
    ids = golden["prompts"][4]["input_ids"]
    mamba = [l for l in range(spec.L) if spec.layer_mamba[l]]
    form = mamba_form_diff(spec, p, golden)
    spread = spread_of
    return {"layer_mamba": spec.layer_mamba,
            "mamba_n_heads": NH, "mamba_d_head": P, "mamba_n_groups": G, "mamba_d_state": N, "mamba_d_conv": K,
            "mamba_expand": spec.cfg["mamba_expand"], "mamba_intermediate_size": I, "mamba_conv_dim": conv_dim,
            "mamba_chunk_size": spec.mamba_chunk, "mamba_conv_bias": spec.mamba_conv_bias,
            "mamba_in_proj_layout": "mamba.in_proj.weight (%d, %d): rows [0, %d) the gate z, [%d, %d) x, [%d, %d) B (%d "
                                    "groups of %d), [%d, %d) C, [%d, %d) dt (one per head); no bias" % (
                                        I + conv_dim + NH, spec.H, I, I, 2 * I, 2 * I, 2 * I + G * N, G, N,
                                        2 * I + G * N, 2 * I + 2 * G * N, I + conv_dim, I + conv_dim + NH),
            "mamba_conv": "xBC = in_proj rows [%d, %d) (x, B, C: conv_dim %d channels) through the depthwise causal "
                          "mamba.conv1d.weight (%d, 1, %d) over the last %d positions (zeros before the first), plus "
                          "mamba.conv1d.bias (%d), then SiLU" % (I, I + conv_dim, conv_dim, conv_dim, K, K, conv_dim),
            "mamba_rule": "dt = softplus(dt_raw + mamba.dt_bias) clamped to [0, inf); A = -exp(mamba.A_log); head h "
                          "(%d values of x) reads group g = h // %d of B and C (%d values each); S_h (%d x %d) = "
                          "exp(dt_h A_h) S_h + dt_h x_h B_g^T, y_h = S_h C_g + mamba.D[h] x_h; S starts at zero; the golden values "
                          "come from transformers' chunked form (chunks of mamba_chunk_size), which equals the "
                          "recurrence" % (P, NH // G, N, P, N),
            "mamba_gated_norm": "y (all %d values) times silu(z) FIRST, then y rsqrt(mean(y^2 over all %d values) + "
                                "rms_norm_eps), times mamba.norm.weight (plain w) (GraniteMoeHybridRMSNormGated: one "
                                "RMS over the whole intermediate size, not per group); then mamba.out_proj.weight "
                                "(%d, %d), no bias" % (I, I, spec.H, I),
            "mamba_state_per_layer": "conv: the last %d xBC inputs (%d x %d values; transformers' cache keeps %d), ssm: "
                                     "%d x %d x %d values" % (
                K - 1, K - 1, conv_dim, K, NH, P, N),
            "mamba_chunked_vs_recurrent": float("%.3g" % form),
            "prompt4_tokens": len(ids),
            "mamba_dt_prompt4": {str(l): spread(trace["mamba_dt"][l]) for l in mamba},
            "mamba_decay_prompt4": {str(l): spread(trace["mamba_decay"][l]) for l in mamba}}


def mamba_form_diff(spec, p, golden):
    """The largest |logit| difference between the chunked Mamba-2 scan (the golden values: chunk_size / mamba_chunk_size)
    and the per-token recurrence over every golden prompt (golden.json's `mamba_chunked_vs_recurrent`; build_one bumps
    the seed past MAX_MAMBA_FORM_DIFF), once the chunks are known to matter: prompt 4 crosses two chunk boundaries and
    some prompt ends inside a chunk."""
    ids = golden["prompts"][4]["input_ids"]
    lengths = [len(e["input_ids"]) for e in golden["prompts"]]
    assert len(ids) > 2 * spec.mamba_chunk and any(n % spec.mamba_chunk for n in lengths), \
        "prompt 4 must cross two chunk boundaries, and some prompt end inside a chunk"
    recurrent = copy.copy(spec)
    recurrent.mamba_recurrent = True
    return max(float((ref.forward(spec, p, torch.tensor([e["input_ids"]]), capture=False)[0] -
                      ref.forward(recurrent, p, torch.tensor([e["input_ids"]]), capture=False)[0]).abs().max())
               for e in golden["prompts"])


def spread_of(t):
    """[min, median, max] of a tensor, rounded to 6 places (golden.json's per-layer spreads)."""
    return [round(float(t.min()), 6), round(float(t.median()), 6), round(float(t.max()), 6)]


def hunyuan_dense_what_ifs(spec, p):
    """HunYuan-Dense's what-ifs, name -> (spec, params), each a reading an engine could take of the release:
    `qk_norm_before_rope` (query_layernorm / key_layernorm applied before RoPE, Qwen3's order), `qk_norm` (no q/k
    norms: use_qk_norm ignored the other way), `rope_plain_theta` (the default RoPE at rope_theta, the alpha ignored, as
    a reader that takes "dynamic" for dynamic NTK by factor 1.0 would), `rope_alpha_exponent_one` (base rope_theta x
    alpha, without the exponent head_dim / (head_dim - 2))."""
    out = {}
    s2 = copy.copy(spec)
    s2.qk_norm_after_rope = False
    out["qk_norm_before_rope"] = s2
    s2 = copy.copy(spec)
    s2.qk_norm = False
    out["qk_norm"] = s2
    s2 = copy.copy(spec)
    s2.rope = {"global": (ref.rope_inv_freq(spec.R, spec.theta, None), 1.0)}
    out["rope_plain_theta"] = s2
    s2 = copy.copy(spec)
    s2.rope = {"global": (ref.rope_inv_freq(spec.R, spec.theta * spec.rope_alpha, None), 1.0)}
    out["rope_alpha_exponent_one"] = s2
    return {k: (v, p) for k, v in out.items()}


def hunyuan_dense_description(spec, p, golden):
    """Extra golden.json model keys of HunYuan-Dense (HunYuanDenseV1ForCausalLM): the q/k norms (names, shapes,
    placement), the RoPE (rope_scaling as config.json has it, alpha, the base and the inverse frequencies):
    hunyuan_attention_keys, and how much prompt 4's logits would change under each of hunyuan_dense_what_ifs
    (`<name>_effect_prompt4`, each > 1e-2)."""
    ids = golden["prompts"][4]["input_ids"]
    logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    out = hunyuan_attention_keys(spec, golden)
    out.update(what_if_effects(spec.arch, hunyuan_dense_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


def hunyuan_attention_keys(spec, golden):
    """golden.json model keys of the attention and RoPE HunYuan-Dense and HunYuan-MoE share: the q/k norms (names,
    shapes, placement), rope_scaling as config.json has it, alpha, the base and the inverse frequencies, and the longest
    sequence (asserted within max_position_embeddings: the dynamic update never fires)."""
    c, HD = spec.cfg, spec.HD
    longest = max(len(e["input_ids"]) for e in golden["prompts"]) + golden["max_new_tokens"] - 1
    assert longest <= c["max_position_embeddings"], "the dynamic RoPE update would fire"
    attention = "HunYuanMoEV1Attention" if spec.arch == ref.HUNYUAN_MOE else "HunYuanDenseV1Attention"
    return {"qk_norm": "RMSNorm over each head's head_dim values (eps rms_norm_eps), one (head_dim,) weight shared by "
                        "every head, applied to q and k AFTER RoPE (%s.forward)" % attention,
            "qk_norm_weights": ["self_attn.%s.weight" % n for n in spec.qk_norm_names],
            "qk_norm_weight_shapes": [[HD], [HD]], "use_qk_norm_in_config": c.get("use_qk_norm"),
            "rms_norm_eps": spec.eps, "q_width": spec.NH * HD, "rope_theta": spec.theta,
            "rope_scaling_in_config": c["rope_scaling"], "rope_alpha": spec.rope_alpha,
            "rope_rule": "base = rope_theta * alpha ** (head_dim / (head_dim - 2)) (a double), inv_freq_i = 1 / "
                         "base ** (fp32(2i) / head_dim) in fp32, rotate-half pairs (i, i + head_dim / 2), cos / sin "
                         "x 1; rope_scaling's factor / beta / mscale keys unread",
            "rope_base": spec.rope_base, "rope_inv_freq": [float(x) for x in spec.inv_freq],
            "max_position_embeddings": c["max_position_embeddings"], "longest_sequence": longest}


def hunyuan_moe_what_ifs(spec, p):
    """HunYuan-MoE's what-ifs, name -> (spec, params): hunyuan_dense_what_ifs' four of the shared attention and RoPE
    (qk_norm_before_rope, qk_norm, rope_plain_theta, rope_alpha_exponent_one), and of the MoE `router_sigmoid` (the
    scores sigmoid(logits) in place of the softmax, the same top-k then renormalised), `router_unnormalised` (the top-k
    softmax probabilities not divided by their sum, as Qwen2-MoE's norm_topk_prob false), `router_top1` (moe_topk read as
    1: the best expert alone, weight 1) and `shared_mlp` (no shared_mlp: use_mixed_mlp_moe read as Tencent's remote code
    would read false)."""
    out = dict(hunyuan_dense_what_ifs(spec, p))
    sigmoid, unnormed, top1, unshared = (copy.copy(spec) for _ in range(4))
    sigmoid.router_score = "sigmoid"
    unnormed.norm_topk_prob = False
    top1.top_k = 1
    unshared.shared_intermediate = 0
    out.update({"router_sigmoid": (sigmoid, p), "router_unnormalised": (unnormed, p), "router_top1": (top1, p),
                "shared_mlp": (unshared, p)})
    return out


def hunyuan_moe_description(spec, p, golden):
    """Extra golden.json model keys of HunYuan-MoE (HunYuanMoEV1ForCausalLM): hunyuan_attention_keys, the MoE (the keys
    of config.json transformers leaves unread, the rule, the router's and experts' names and dtype), per layer how many
    of prompt 4's tokens choose each expert (`expert_usage_prompt4`: build_one requires every expert chosen in every
    layer), and how much prompt 4's logits would change under each of hunyuan_moe_what_ifs (`<name>_effect_prompt4`,
    each > 1e-2); besides the MoE keys family_description adds."""
    ids, trace, logits = prompt4_forward(spec, p, golden)
    c, H, E, F = spec.cfg, spec.H, spec.num_experts, spec.F
    assert spec.NH * spec.HD != H and 2 * F != H and all(spec.layer_moe) and spec.norm_topk_prob, \
        "HunYuan-MoE's fixture: q width != hidden, 2 x intermediate != hidden, every layer MoE, renormalised"
    pre = "model.layers.0."
    out = hunyuan_attention_keys(spec, golden)
    out.update({
        "attention_head_dim_in_config": c.get("attention_head_dim"), "head_dim_in_config": c.get("head_dim"),
        "num_experts_in_config": c["num_experts"], "moe_topk_in_config": c["moe_topk"], "intermediate_size": F,
        "moe_intermediate_size_in_config": c.get("moe_intermediate_size"),
        "num_shared_expert_in_config": c.get("num_shared_expert"),
        "use_mixed_mlp_moe_in_config": c.get("use_mixed_mlp_moe"), "use_cla_in_config": c.get("use_cla"),
        "moe_rule": "h = post_attention_layernorm(x); logits = h W^T in fp32 with mlp.gate.wg.weight (%d, %d); p = "
                    "softmax(logits) over all %d experts; the top %d of p, weights p / (their sum) (no epsilon); out = "
                    "sum_k weight_k down_e(silu(gate_e h) up_e h) + down_s(silu(gate_s h) up_s h) (mlp.shared_mlp, "
                    "weight 1, no gate of its own); x + out; every layer" % (E, H, E, spec.top_k),
        "router_weight": ref.router_weight_name(spec, pre), "router_dtype": "F32",
        "expert_layout": "per expert: mlp.experts.{e}.gate_proj / up_proj (%d, %d), down_proj (%d, %d); "
                         "mlp.shared_mlp.gate_proj / up_proj (%d, %d), down_proj (%d, %d): all intermediate_size "
                         "wide" % (F, H, H, F, F, H, H, F),
        "expert_usage_prompt4": {str(l): torch.bincount(trace["router"][l][1].flatten(), minlength=E).tolist()
                                 for l in range(spec.L)},
        "prompt4_tokens": len(ids)})
    out.update(what_if_effects("HunYuan-MoE", hunyuan_moe_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


def lfm2_what_ifs(spec, p):
    """LFM2's what-ifs, name -> (spec, params), each a reading an engine could take of the release: `conv` (no causal
    conv: y = C B x), `conv_activation` (a SiLU on the conv's output, as Mamba's and Gated DeltaNet's convs have),
    `chunks_C_B_x` (in_proj's first row block read as C and the second as B: C swapped with B), `chunks_B_x_C` (the
    second block read as x and the third as C: C swapped with x, Mamba's x | B | C order), `mlp_w1_w3_swapped`
    (feed_forward.w3 as the SiLU's input and w1 as the up projection: the MLP at the unadjusted width is not expressible
    with the stored tensors, which hold only the adjusted width's rows), `qk_norm_after_rope` (q_layernorm / k_layernorm
    after RoPE, HunYuan's order), `qk_norm` (no q/k norms), `rope_theta_10000` (RoPE at base 10000, the Llama default,
    instead of rope_theta 1e6)."""
    out = {}
    for key, attr, value in (("conv", "lfm2_conv", False), ("conv_activation", "lfm2_conv_act", True),
                             ("chunks_C_B_x", "lfm2_chunks", ("C", "B", "x")),
                             ("chunks_B_x_C", "lfm2_chunks", ("B", "x", "C"))):
        s2 = copy.copy(spec)
        setattr(s2, attr, value)
        out[key] = (s2, p)
    swapped = dict(p)
    for n in p:
        if n.endswith(".feed_forward.w1.weight"):
            swapped[n], swapped[n[:-len("w1.weight")] + "w3.weight"] = p[n[:-len("w1.weight")] + "w3.weight"], p[n]
    out["mlp_w1_w3_swapped"] = (spec, swapped)
    for key, attr, value in (("qk_norm_after_rope", "qk_norm_after_rope", True), ("qk_norm", "qk_norm", False)):
        s2 = copy.copy(spec)
        setattr(s2, attr, value)
        out[key] = (s2, p)
    s2 = copy.copy(spec)
    s2.rope = {"global": (ref.rope_inv_freq(spec.R, 10000.0, None), 1.0)}
    out["rope_theta_10000"] = (s2, p)
    return out


def lfm2_conv_facts(spec, norm_class):
    """The golden.json keys LFM2 and LFM2-MoE share: the norms, their eps, the short conv's kernel, in_proj layout and
    rule."""
    c, H, K = spec.cfg, spec.H, spec.lfm2_K
    return {"norms": "operator_norm, ffn_norm, the q/k layernorms and model.embedding_norm: x rsqrt(mean(x^2) + "
                     "norm_eps) w (%s, a plain w)" % norm_class,
            "norm_eps": spec.eps, "conv_L_cache": K, "conv_bias": c["conv_bias"],
            "conv_in_proj_layout": "conv.in_proj.weight (%d, %d): rows [0, %d) B, [%d, %d) C, [%d, %d) x "
                                   "(Lfm2ShortConv: `B, C, x = BCx.chunk(3, dim=-2)`)" % (3 * H, H, H, H, 2 * H, 2 * H,
                                                                                        3 * H),
            "conv_rule": "Bx = B * x; conv_out[t] = sum_j conv.conv.weight[c, 0, j] Bx[t - %d + j] over j < %d "
                         "(depthwise, causal, zeros before the first token, no bias, no activation); y = C * conv_out; "
                         "conv.out_proj.weight (%d, %d)" % (K - 1, K, H, H)}


def lfm2_description(spec, p, golden):
    """Extra golden.json model keys of LFM2 (Lfm2ForCausalLM): the layer types, the short conv's kernel, tensor layout
    and rule, the MLP's width and how it comes from the config, the norms and q/k norms, the RoPE, LFM2's tensor names,
    over prompt 4's tokens per conv layer the largest |conv output|, and how much prompt 4's logits would change under
    each of lfm2_what_ifs (`<name>_effect_prompt4`, each > 1e-2)."""
    ids, trace, logits = prompt4_forward(spec, p, golden)
    c, H, K = spec.cfg, spec.H, spec.lfm2_K
    conv = [l for l in range(spec.L) if spec.layer_conv[l]]
    assert spec.F != c["block_ff_dim"], "the adjusted MLP width must differ from block_ff_dim"
    assert K <= min(len(e["input_ids"]) for e in golden["prompts"]) + 1, "a prompt shorter than conv_L_cache - 1"
    out = {"layer_types": spec.layer_types, "layer_conv": spec.layer_conv,
           **lfm2_conv_facts(spec, "Lfm2RMSNorm"),
           "conv_state_per_layer": "the last %d values of B x per channel (%d x %d) feed a one-token step "
                                   "(transformers' Lfm2HybridConvCache.conv_cache holds %d, the oldest rolled out "
                                   "before the step's window is read)" % (K - 1, H, K - 1, K),
           "conv_out_max_abs_prompt4": {str(l): round(float(trace["lfm2_conv_out"][l].abs().max()), 4) for l in conv},
           "block_ff_dim": c["block_ff_dim"], "intermediate_size_in_config": c["intermediate_size"],
           "block_auto_adjust_ff_dim": c["block_auto_adjust_ff_dim"],
           "block_ffn_dim_multiplier": c["block_ffn_dim_multiplier"], "block_multiple_of": c["block_multiple_of"],
           "intermediate_size": spec.F,
           "mlp_width_rule": "ff = block_ff_dim (else intermediate_size); with block_auto_adjust_ff_dim ff = int(2 ff / 3), "
                             "then with block_ffn_dim_multiplier not null ff = int(multiplier ff) rounded up to a "
                             "multiple of block_multiple_of: int(2 x %d / 3) = %d -> %d" % (
                                 c["block_ff_dim"], int(2 * c["block_ff_dim"] / 3), spec.F),
           "mlp": "feed_forward.w2(silu(feed_forward.w1(h)) * feed_forward.w3(h)), w1 / w3 (%d, %d), w2 (%d, %d)" % (
               spec.F, H, H, spec.F),
           "qk_norm": "self_attn.q_layernorm / k_layernorm (head_dim,): RMSNorm over each head's head_dim values (eps "
                      "norm_eps), BEFORE RoPE (Lfm2Attention.forward)",
           "attention": "self_attn.q_proj / k_proj / v_proj, scores x head_dim^-0.5, GQA %d, self_attn.out_proj" % (
               spec.NH // spec.NKV),
           "rope_theta": spec.theta, "rope_inv_freq": [float(x) for x in spec.inv_freq],
           "final_norm": "model.embedding_norm.weight", "prompt4_tokens": len(ids)}
    out.update(what_if_effects(spec.arch, lfm2_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


LFM2_MOE_ROUTER_WHAT_IFS = ("router_bias", "router_bias_in_weights", "router_softmax", "router_unnormalised",
                            "router_scaling")


def lfm2_moe_what_ifs(spec, p):
    """LFM2-MoE's what-ifs, name -> (spec, params), each a reading an engine could take of the release: `router_bias`
    (the top-k of s itself, feed_forward.expert_bias left out of the choice, as use_expert_bias false would run),
    `router_bias_in_weights` (the weights gathered from s + expert_bias instead of s), `router_softmax` (a softmax over
    the logits in place of the sigmoid, the bias, choice, renormalisation and scaling kept), `router_unnormalised` (the
    top-k s not divided by their sum), `router_scaling` (routed_scaling_factor read as 1), `expert_w1_w3_swapped` (each
    expert's w3 as the SiLU's input and w1 as the up projection). Not expressible with the stored tensors, so not
    recorded: the dense layers at LFM2's adjusted width (Lfm2MLP's rule, int(2 x 96 / 3) = 64 rounded up to a multiple
    of block_multiple_of, needs other shapes), and another num_dense_layers (the dense layers have no expert tensors, the
    MoE ones no dense w1 / w3 / w2); the renormalisation's + 1e-6 against DeepSeek-V3's + 1e-20 changes the weights by
    about 1e-6 of themselves, under what a what-if must show."""
    no_bias, in_weights, softmax, unnormed, unscaled = (copy.copy(spec) for _ in range(5))
    no_bias.lfm2_expert_bias = False
    in_weights.router_weight_bias = True
    softmax.router_score = "softmax"
    unnormed.norm_topk_prob = False
    unscaled.routed_scaling_factor = 1.0
    swapped = dict(p)
    for n in p:
        if re.search(r"\.feed_forward\.experts\.\d+\.w1\.weight$", n):
            w3 = n[:-len("w1.weight")] + "w3.weight"
            swapped[n], swapped[w3] = p[w3], p[n]
    return {"router_bias": (no_bias, p), "router_bias_in_weights": (in_weights, p), "router_softmax": (softmax, p),
            "router_unnormalised": (unnormed, p), "router_scaling": (unscaled, p),
            "expert_w1_w3_swapped": (spec, swapped)}


def lfm2_moe_description(spec, p, golden):
    """Extra golden.json model keys of LFM2-MoE (Lfm2MoeForCausalLM): LFM2's layer types, conv, norms, q/k norms and
    RoPE (as lfm2_description records them), the dense layers and their width (intermediate_size as it stands), the MoE
    layers, router and expert layout, per MoE layer how many of prompt 4's tokens choose each expert
    (`expert_usage_prompt4`: build_one requires every expert chosen in every MoE layer), how many of prompt 4's tokens take
    another expert set under each router what-if (`router_changed_tokens_prompt4`, per layer, null for a dense one, the
    router inputs held) and how much prompt 4's logits would change under each of lfm2_moe_what_ifs
    (`<name>_effect_prompt4`, each > 1e-2); besides the MoE keys family_description adds."""
    ids, trace, logits = prompt4_forward(spec, p, golden)
    c, H, K, E = spec.cfg, spec.H, spec.lfm2_K, spec.num_experts
    conv = [l for l in range(spec.L) if spec.layer_conv[l]]
    dense = [l for l in range(spec.L) if not spec.layer_moe[l]]
    moe = [l for l in range(spec.L) if spec.layer_moe[l]]
    assert dense and moe and K <= min(len(e["input_ids"]) for e in golden["prompts"]) + 1
    assert any(spec.layer_conv[l] for l in dense) and not all(spec.layer_conv[l] for l in dense), \
        "the dense layers must hold a conv and an attention layer"
    assert spec.routed_scaling_factor != 1.0 and spec.norm_topk_prob and spec.lfm2_expert_bias
    # (every expert chosen in every MoE layer: build_one bumps the seed otherwise)
    usage = {str(l): torch.bincount(trace["router"][l][1].flatten(), minlength=E).tolist() for l in moe}
    adjusted = int(2 * spec.F / 3)
    out = {"layer_types": spec.layer_types, "layer_conv": spec.layer_conv,
           **lfm2_conv_facts(spec, "Lfm2MoeRMSNorm"),
           "conv_out_max_abs_prompt4": {str(l): round(float(trace["lfm2_conv_out"][l].abs().max()), 4) for l in conv},
           "num_dense_layers": c["num_dense_layers"], "dense_layers": dense, "intermediate_size": spec.F,
           "dense_width_rule": "Lfm2MoeMLP(config, intermediate_size=config.intermediate_size): %d as it stands (no "
                               "block_ff_dim, no adjusting: LFM2's Lfm2MLP rule would start from int(2 x %d / 3) = %d)" % (
                                   spec.F, spec.F, adjusted),
           "dense_mlp": "feed_forward.w2(silu(feed_forward.w1(h)) * feed_forward.w3(h)), w1 / w3 (%d, %d), w2 (%d, %d)" % (
               spec.F, H, H, spec.F),
           "moe_intermediate_size": spec.moe_intermediate,
           "router": "s = sigmoid(h W^T) with feed_forward.gate.weight (%d, %d); the top %d of s + feed_forward.expert_bias "
                     "(F32 (%d,); the choice only); weights the chosen s (unbiased) / (their sum + 1e-6) "
                     "(norm_topk_prob), times routed_scaling_factor %r; no groups, no shared expert" % (
                         E, H, spec.top_k, E, spec.routed_scaling_factor),
           "routed_scaling_factor": spec.routed_scaling_factor, "use_expert_bias": spec.lfm2_expert_bias,
           "renormalisation_epsilon": 1e-6,
           "expert_layout": "per expert (as released): feed_forward.experts.{e}.w1 (gate, (%d, %d)), w3 (up), w2 (down, "
                            "(%d, %d)); expert out = w2(silu(w1 h) * w3 h)" % (spec.moe_intermediate, H, H,
                                                                              spec.moe_intermediate),
           "router_weight": ref.router_weight_name(spec, "model.layers.%d." % moe[0]),
           "expert_bias": ref.correction_bias_name(spec, "model.layers.%d." % moe[0]),
           "expert_usage_prompt4": usage,
           "qk_norm": "self_attn.q_layernorm / k_layernorm (head_dim,): RMSNorm over each head's head_dim values (eps "
                      "norm_eps), BEFORE RoPE (Lfm2MoeAttention.forward)",
           "attention": "self_attn.q_proj / k_proj / v_proj, scores x head_dim^-0.5, GQA %d, self_attn.out_proj" % (
               spec.NH // spec.NKV),
           "rope_theta": spec.theta, "rope_inv_freq": [float(x) for x in spec.inv_freq],
           "final_norm": "model.embedding_norm.weight", "prompt4_tokens": len(ids)}
    what_ifs = lfm2_moe_what_ifs(spec, p)
    changed = router_changed_tokens(spec, p, ids, what_ifs, LFM2_MOE_ROUTER_WHAT_IFS, ref.lfm2_moe_route)
    for key in ("router_bias", "router_softmax"):  # (the other three change the weights only)
        assert all(n > 0 for n in changed[key] if n is not None), "LFM2-MoE's %s would not change the experts: %s" % (
            key, changed[key])
    out["router_changed_tokens_prompt4"] = changed
    out.update(what_if_effects(spec.arch, what_ifs, torch.tensor([ids]), logits))
    return out


def nemotron_h_what_ifs(spec, p):
    """Nemotron-H's what-ifs, name -> (spec, params), each a reading an engine could take of the release:
    `mamba_dt_floor` (dt = softplus(dt_raw + dt_bias) without the floor at time_step_min, clamped at 0: Granite 4.0-H /
    Bamba's clamp to time_step_limit, mamba_ssm's kernels), `mamba_norm_whole` (the gated RMSNorm over all
    intermediate_size values at once, GraniteMoeHybridRMSNormGated's, instead of per group of intermediate_size /
    n_groups), `mamba_norm_before_gate` (that RMSNorm first, then silu(z): norm_before_gate=True), `mamba_groups_first`
    (every head reading group 0 of B and C: n_groups ignored), `mamba_groups_tiled` (head h reading group h % n_groups
    instead of h // (heads / n_groups)), `mamba_conv_activation` (the conv without its SiLU), `mamba_conv_bias` (no
    conv1d.bias: use_conv_bias read as false), `mamba_D` (no D skip), `mamba_dt_bias` (no dt_bias),
    `mamba_state_reset_per_chunk` (the chunked scan without the states entering the chunks: every chunk_size tokens
    from a zero state), `mlp_relu` (the MLP's relu2 read as a plain ReLU), `attention_rope` (a rotate-half RoPE at theta
    1e4 on the attention layers, which take none)."""
    out = {}
    for key, attr, value in (("mamba_dt_floor", "mamba_dt_floor", 0.0), ("mamba_norm_whole", "mamba_norm_group", None),
                             ("mamba_norm_before_gate", "mamba_norm_order", "norm_first"),
                             ("mamba_groups_first", "mamba_head_group", "first"),
                             ("mamba_groups_tiled", "mamba_head_group", "tile"),
                             ("mamba_conv_activation", "mamba_conv_act", False),
                             ("mamba_state_reset_per_chunk", "mamba_reset_chunks", True), ("mlp_relu", "act", "relu")):
        s2 = copy.copy(spec)
        setattr(s2, attr, value)
        out[key] = (s2, p)
    assert spec.theta == 10000.0 and not any(spec.layer_use_rope), "the RoPE what-if rotates at the default theta 1e4"
    rope = copy.copy(spec)
    rope.layer_use_rope = [k == "attention" for k in spec.layer_kinds]
    out["attention_rope"] = (rope, p)
    for key, suffix in (("mamba_conv_bias", ".mixer.conv1d.bias"), ("mamba_D", ".mixer.D"),
                        ("mamba_dt_bias", ".mixer.dt_bias")):
        out[key] = (spec, {n: (torch.zeros_like(t) if n.endswith(suffix) else t) for n, t in p.items()})
    return out


def nemotron_h_description(spec, p, golden):
    """Extra golden.json model keys of Nemotron-H (NemotronHForCausalLM): the pattern and what each layer is, the block,
    the names, the norms' eps, the attention (no positions), the MLP (relu2, no gate), the Mamba-2 mixer's sizes (and the
    expand it does not read), in_proj's row layout, the conv, the scan with its dt floor, the per-group gated norm,
    the state an engine keeps, the chunked scan against the per-token recurrence (`mamba_chunked_vs_recurrent`), over
    prompt 4's tokens per Mamba-2 layer dt, the decay exp(dt A) ([min, median, max]) and how many (token, head) values
    of dt the floor raised (`mamba_dt_floored_prompt4`: [floored, all]; some in every Mamba-2 layer, not all), and how
    much prompt 4's logits would change under each of nemotron_h_what_ifs (`<name>_effect_prompt4`, each > 1e-2)."""
    ids, trace, logits = prompt4_forward(spec, p, golden)
    c, H, F, HD = spec.cfg, spec.H, spec.F, spec.HD
    I, NH, P, G, N, K = spec.mamba_I, spec.mamba_NH, spec.mamba_P, spec.mamba_G, spec.mamba_N, spec.mamba_K
    conv_dim = I + 2 * G * N
    mamba = [l for l in range(spec.L) if spec.layer_mamba[l]]
    floored = {str(l): [trace["mamba_dt_floored"][l], len(ids) * NH] for l in mamba}
    assert all(0 < a < b for a, b in floored.values()), "the dt floor must bite in every Mamba-2 layer, not always"
    assert c["expand"] * H != I and 1 < G < NH, \
        "expand x hidden_size must differ from the mixer's width (it is not read), and more than one group of heads"
    # (the 4.48-era releases list rms_norm_eps and attention_head_dim, NVIDIA-Nemotron-3-Nano's norm_eps and head_dim)
    unread_eps = "norm_eps" if spec.num_experts else "rms_norm_eps"
    head_key = "head_dim_in_config" if spec.num_experts else "attention_head_dim"
    out = {"hybrid_override_pattern": c["hybrid_override_pattern"], "layer_kinds": spec.layer_kinds,
           "layer_mamba": spec.layer_mamba, "layer_use_rope": spec.layer_use_rope,
           "block": "x + mixer(RMSNorm(x) x backbone.layers.{i}.norm.weight): one norm and one mixer per layer "
                    "(NemotronHBlock), no second norm or residual add",
           "names": "backbone.embeddings.weight (no scaling), backbone.layers.{i}.norm.weight, "
                    "backbone.layers.{i}.mixer.*, backbone.norm_f.weight, lm_head.weight (untied)",
           "layer_norm_epsilon": spec.eps, "%s_in_config" % unread_eps: c[unread_eps],
           "norm_eps_rule": "every RMSNorm (the block norms, norm_f, the mixer's gated norm) takes layer_norm_epsilon; "
                            "%s is listed and not read" % unread_eps,
           head_key: HD,
           "attention": "mixer.q_proj (%d, %d) / k_proj (%d, %d) / v_proj (%d, %d) as %d heads of %d (GQA %d), no "
                        "positional encoding at all (no RoPE), scores x head_dim^-0.5 = %g, causal, softmax, "
                        "mixer.o_proj (%d, %d); no biases" % (
                            spec.NH * HD, H, spec.NKV * HD, H, spec.NKV * HD, H, spec.NH, HD, spec.NH // spec.NKV,
                            spec.attn_scale, H, spec.NH * HD),
           "intermediate_size": F,
           "mlp": "mixer.down_proj (%d, %d) (relu(mixer.up_proj (%d, %d) h)^2): mlp_hidden_act relu2, no gate "
                  "projection, no biases" % (H, F, F, H),
           "mamba_num_heads": NH, "mamba_head_dim": P, "n_groups": G, "ssm_state_size": N, "conv_kernel": K,
           "chunk_size": spec.mamba_chunk, "use_conv_bias": spec.mamba_conv_bias, "mamba_intermediate_size": I,
           "mamba_conv_dim": conv_dim, "expand": c["expand"],
           "mamba_width_rule": "intermediate_size = mamba_num_heads x mamba_head_dim = %d (expand x hidden_size = %d "
                               "is not read)" % (I, c["expand"] * H),
           "mamba_in_proj_layout": "mixer.in_proj.weight (%d, %d): rows [0, %d) the gate z, [%d, %d) x, [%d, %d) B (%d "
                                   "groups of %d), [%d, %d) C, [%d, %d) dt (one per head); no bias" % (
                                       I + conv_dim + NH, H, I, I, 2 * I, 2 * I, 2 * I + G * N, G, N, 2 * I + G * N,
                                       2 * I + 2 * G * N, I + conv_dim, I + conv_dim + NH),
           "mamba_conv": "xBC = in_proj rows [%d, %d) (x, B, C: conv_dim %d channels) through the depthwise causal "
                         "mixer.conv1d.weight (%d, 1, %d) over the last %d positions (zeros before the first), plus "
                         "mixer.conv1d.bias (%d), then SiLU" % (I, I + conv_dim, conv_dim, conv_dim, K, K, conv_dim),
           "time_step_min": spec.mamba_dt_floor,
           "mamba_rule": "dt = max(softplus(dt_raw + mixer.dt_bias), time_step_min = %g) (no upper bound; "
                         "time_step_limit not read); A = -exp(mixer.A_log); head h (%d values of x) reads group g = h // "
                         "%d of B and C (%d values each); S_h (%d x %d) = exp(dt_h A_h) S_h + dt_h x_h B_g^T, y_h = S_h "
                         "C_g + mixer.D[h] x_h; S starts at zero; the golden values come from transformers' chunked "
                         "form (chunks of chunk_size), which equals the recurrence" % (
                             spec.mamba_dt_floor, P, NH // G, N, P, N),
           "mamba_gated_norm": "y (all %d values) times silu(z) FIRST, then per group of %d values (intermediate_size / "
                               "n_groups: Zamba2RMSNormGated's group_size) y rsqrt(mean(y^2 over the group) + "
                               "layer_norm_epsilon), times mixer.norm.weight (%d, plain w); then mixer.out_proj.weight "
                               "(%d, %d), no bias" % (I, I // G, I, H, I),
           "mamba_state_per_layer": "conv: the last %d xBC inputs (%d x %d values; transformers' cache keeps %d), ssm: "
                                    "%d x %d x %d values" % (K - 1, K - 1, conv_dim, K, NH, P, N),
           "mamba_chunked_vs_recurrent": float("%.3g" % mamba_form_diff(spec, p, golden)),
           "prompt4_tokens": len(ids),
           "mamba_dt_prompt4": {str(l): spread_of(trace["mamba_dt"][l]) for l in mamba},
           "mamba_decay_prompt4": {str(l): spread_of(trace["mamba_decay"][l]) for l in mamba},
           "mamba_dt_floored_prompt4": floored,
           "final_norm": "backbone.norm_f.weight"}
    what_ifs = nemotron_h_what_ifs(spec, p)
    if spec.num_experts:
        out.update(nemotron_h_moe_keys(spec, p, golden, trace))
        what_ifs.update(nemotron_h_moe_what_ifs(spec, p))
        if spec.moe_latent:
            what_ifs.update(nemotron_h_latent_what_ifs(spec, p))
    out.update(what_if_effects(spec.arch, what_ifs, torch.tensor([ids]), logits))
    return out


NEMOTRON_H_ROUTER_WHAT_IFS = ("router_bias", "router_softmax", "router_top1")


def nemotron_h_moe_what_ifs(spec, p):
    """Nemotron-H's MoE what-ifs (beside sigmoid_router_description's router_bias, the choice without
    e_score_correction_bias, and router_scaling, routed_scaling_factor read as 1), name -> (spec, params), each a
    reading an engine could take of NVIDIA-Nemotron-3-Nano (and of dots.llm1, whose Dots1MoE is DeepseekV3MoE too:
    dots1_what_ifs): `router_softmax` (the scores a softmax over the experts in
    place of the sigmoid; the bias, choice, renormalisation and scaling kept), `router_unnormalised` (the chosen s not
    divided by their sum), `router_top1` (num_experts_per_tok read as 1: the best expert alone, its weight s / (s +
    1e-20) x routed_scaling_factor), `shared_expert` (no shared expert: n_shared_experts or the shared width left
    unread). The group limit is not one: with n_group = topk_group = 1, as released, it keeps every expert."""
    softmax, unnormed, top1, unshared = (copy.copy(spec) for _ in range(4))
    softmax.router_score = "softmax"
    unnormed.norm_topk_prob = False
    top1.top_k = 1
    unshared.shared_intermediate = 0
    return {"router_softmax": (softmax, p), "router_unnormalised": (unnormed, p), "router_top1": (top1, p),
            "shared_expert": (unshared, p)}


def nemotron_h_latent_what_ifs(spec, p):
    """The what-ifs of a Nemotron-H fixture with moe_latent_size (NVIDIA-Nemotron-3-Super's LatentMoE), name -> (spec,
    params), each computed on the fixture's own weights: `latent_routed_path` (mixer.fc2_latent_proj at 0 on every MoE
    layer: the routed experts' latent sum left out, the block the shared expert alone, as an engine that cannot place
    the latent projections and skips the routed path would run it) and `latent_projections_swapped` (fc1_latent_proj
    read as fc2_latent_proj's transpose and fc2 as fc1's: both fit the other's shape, (latent, H) and (H, latent), so a
    loader that mixes the two names up is not stopped by a shape check)."""
    fc1, fc2 = "mixer.fc1_latent_proj.weight", "mixer.fc2_latent_proj.weight"
    dropped = {n: (torch.zeros_like(t) if n.endswith(fc2) else t) for n, t in p.items()}
    swapped = dict(p)
    for n in p:
        if n.endswith(fc1):
            other = n[:-len(fc1)] + fc2
            swapped[n], swapped[other] = p[other].T.contiguous(), p[n].T.contiguous()
    return {"latent_routed_path": (spec, dropped), "latent_projections_swapped": (spec, swapped)}


def nemotron_h_moe_keys(spec, p, golden, trace):
    """The MoE keys of a Nemotron-H fixture with "E" blocks (nemotron_h_description): the router, the experts and the
    shared expert as they are named and shaped, per MoE layer how many of prompt 4's tokens choose each expert
    (`expert_usage_prompt4`: build_one requires every expert chosen in every MoE layer), how many of prompt 4's tokens
    take another expert set under the router what-ifs (`router_changed_tokens_prompt4`: router_bias, the choice on s
    alone; router_softmax; router_top1, every token; per layer, null for the others, the router inputs held) and the
    settings (n_group, topk_group, routed_scaling_factor, the renormalisation's 1e-20, moe_latent_size (null, or
    the LatentMoE's width: then `latent_projections` too), n_shared_experts as listed)."""
    c, H, E = spec.cfg, spec.H, spec.num_experts
    Fm, Fs = spec.moe_intermediate, spec.shared_intermediate
    Dl = spec.moe_latent
    D = Dl or H  # the routed experts' width
    assert Dl is None or Dl not in (H, Fm, Fs, spec.F), "a latent width of its own"
    assert Dl is not None or "moe_latent_size" not in c
    moe = [l for l in range(spec.L) if spec.layer_moe[l]]
    dense = [l for l in range(spec.L) if spec.layer_kinds[l] == "mlp"]
    assert moe and dense and spec.routed_scaling_factor != 1.0 and spec.norm_topk_prob and Fs not in (Fm, spec.F), \
        "MoE and dense MLP layers, routed_scaling_factor != 1, renormalised, a shared width of its own"
    usage = {str(l): torch.bincount(trace["router"][l][1].flatten(), minlength=E).tolist() for l in moe}
    what_ifs = dict(nemotron_h_moe_what_ifs(spec, p))
    what_ifs["router_bias"] = dict(sigmoid_router_what_ifs(spec, p))["bias"]

    def experts(s, q, l):  # (the router inputs held: the model's own over prompt 4)
        pre = "backbone.layers.%d." % l
        return ref.sigmoid_route(s, q, pre, ref.router_logits(s, q, pre, trace["router_input"][l]))[1]
    changed = {key: changed_expert_sets(spec, lambda l: (experts(spec, p, l), experts(*what_ifs[key], l)))
               for key in NEMOTRON_H_ROUTER_WHAT_IFS}
    for key in ("router_bias", "router_softmax"):
        assert all(n > 0 for n in changed[key] if n is not None), "Nemotron-H's %s would not change the experts: %s" % (
            key, changed[key])
    b = moe[0]
    pre = "backbone.layers.%d." % b
    if Dl:
        experts_rule = ("f = mixer.fc1_latent_proj h (%d, %d: hidden %d -> latent %d); out = mixer.fc2_latent_proj "
                        "(%d, %d) (sum_k weight_k down_e(relu(up_e f)^2)) + down_s(relu(up_s h)^2) (the shared "
                        "expert, weight 1, on h itself, not the latent); x + out" % (Dl, H, H, Dl, H, Dl))
    else:
        experts_rule = ("out = sum_k weight_k down_e(relu(up_e h)^2) + down_s(relu(up_s h)^2) (the shared expert, "
                        "weight 1); x + out")
    extra = {} if not Dl else {
        "latent_projections": "mixer.fc1_latent_proj.weight (%d, %d) and mixer.fc2_latent_proj.weight (%d, %d) on "
                              "every MoE layer, no biases (mlp_bias false); the router and the shared expert read h "
                              "(%d wide), only the routed experts work in the latent" % (Dl, H, H, Dl, H)}
    return dict({"dense_mlp_layers": dense,
            "n_routed_experts": E, "num_experts_per_tok": spec.top_k, "moe_intermediate_size": Fm,
            "moe_shared_expert_intermediate_size": Fs, "n_shared_experts_in_config": c["n_shared_experts"],
            "moe_latent_size": c.get("moe_latent_size"), "n_group": spec.n_group, "topk_group": spec.topk_group,
            "routed_scaling_factor": spec.routed_scaling_factor, "renormalisation_epsilon": 1e-20,
            "moe_rule": "h = RMSNorm(x) (the block's norm); logits = h W^T in fp32 with mixer.gate.weight (%d, %d); "
                        "s = sigmoid(logits); the top %d of s + mixer.gate.e_score_correction_bias (F32 (%d,); the "
                        "choice only) within the best topk_group %d of n_group %d groups (a group scores the sum of "
                        "its two best s + bias); weights the chosen s / (their sum + 1e-20) (norm_topk_prob) x "
                        "routed_scaling_factor %r; %s" % (
                            E, H, spec.top_k, E, spec.topk_group, spec.n_group, spec.routed_scaling_factor,
                            experts_rule),
            "expert_layout": "per expert (as released): mixer.experts.{e}.up_proj.weight (%d, %d), "
                             "mixer.experts.{e}.down_proj.weight (%d, %d); no gate projection; transformers 5 holds "
                             "them stacked as mixer.experts.up_proj (%d, %d, %d) / mixer.experts.down_proj "
                             "(%d, %d, %d) (no .weight) and writes them back per expert" % (
                                 Fm, D, D, Fm, E, Fm, D, E, D, Fm),
            "shared_expert_layout": "mixer.shared_experts.up_proj.weight (%d, %d), "
                                    "mixer.shared_experts.down_proj.weight (%d, %d): down(relu(up h)^2), no gate, not "
                                    "weighted" % (Fs, H, H, Fs),
            "router_weight": ref.router_weight_name(spec, pre),
            "correction_bias": ref.correction_bias_name(spec, pre),
            "expert_usage_prompt4": usage,
            "router_changed_tokens_prompt4": changed}, **extra)


def gemma4_what_ifs(spec, p):
    """The what-ifs of a Gemma 4 fixture, name -> (spec, params), each computed on the fixture's own weights:
    `norms_plus_one` (every weighted Gemma4RMSNorm as Gemma 3's (1 + w)), `attn_scale_head_dim` (scores x head^-0.5
    of the layer, not 1), `layer_scalar` (no layer_scalar), `final_softcap` (no final soft-cap), `sliding_window` (no
    window on the sliding layers), `full_rope_partial_dim` (the full layers' proportional RoPE read as a partial rotary
    dim: int(head x partial_rotary_factor) dims turned in the rotate-half pairs of that part at theta^(-2i/that part),
    the rest passed), `full_rope_default` (the full layers' RoPE read as the default over the whole head, every pair
    turning), `v_norm` (V without v_norm); with per-layer embeddings `ple` (none added) and `ple_table_unscaled` (the
    table without its sqrt(P)); with KV sharing `kv_shared_weights` (each shared layer computing its own K, V from its
    input with the storing layer's k_proj / v_proj / k_norm) and `kv_source_first_of_type` (the first unshared layer of
    a type storing, not the last: only where a type has two); with attention_k_eq_v `v_after_k_norm` / `v_after_rope`
    (V taken from the key after k_norm / after k_norm and RoPE, not from the raw k_proj output); with the MoE block
    `router_input_normed` (the router on pre_feedforward_layernorm(residual)), `router_scale` (router.scale at 1),
    `router_per_expert_scale` (per_expert_scale at 1), `experts_input_norm` (the experts on the dense MLP's
    pre_feedforward_layernorm(residual)), `dense_mlp` (no dense MLP beside the experts) and `experts_gate_up_swapped` (gate_up_proj's up rows first)."""
    def changed(**kv):
        s2 = copy.copy(spec)
        for k, v in kv.items():
            setattr(s2, k, v)
        return s2, p
    theta = spec.theta
    full_hd = spec.full_head_dim
    rp = spec.rope_types["full_attention"]
    partial = int(full_hd * rp.get("partial_rotary_factor", 1.0))
    out = {"norms_plus_one": changed(norm_offset=True), "attn_scale_head_dim": changed(gemma4_attn_scale="head_dim"),
           "layer_scalar": changed(layer_scalar_applied=False), "final_softcap": changed(final_softcap=None),
           "sliding_window": changed(sliding_window=None),
           "full_rope_partial_dim": changed(rope=dict(spec.rope, **{"global": (ref.rope_inv_freq(partial, theta, None),
                                                                               1.0)})),
           "full_rope_default": changed(rope=dict(spec.rope, **{"global": (ref.rope_inv_freq(full_hd, theta, None),
                                                                           1.0)})),
           "v_norm": changed(v_norm_applied=False)}
    if spec.ple_dim:
        out["ple"] = changed(ple_applied=False)
        out["ple_table_unscaled"] = changed(ple_embed_scale=1.0)
    if any(spec.layer_kv_shared):
        out["kv_shared_weights"] = changed(kv_share_rule="weights")
        prev = spec.layer_types[:spec.kv_shared_from]
        firsts = {t: prev.index(t) for t in set(prev)}
        if any(prev.count(spec.layer_types[l]) > 1 for l in range(spec.kv_shared_from, spec.L)):
            out["kv_source_first_of_type"] = changed(
                layer_kv_store=[not spec.layer_kv_shared[l] and firsts[spec.layer_types[l]] == l
                                for l in range(spec.L)],
                layer_kv_source=[firsts[spec.layer_types[l]] if spec.layer_kv_shared[l] else None
                                 for l in range(spec.L)])
    if spec.k_eq_v:
        out["v_after_k_norm"] = changed(v_from="normed")
        out["v_after_rope"] = changed(v_from="rotated")
    if spec.num_experts:
        out.update({"router_input_normed": changed(router_input="pre_ffn"),
                    "router_scale": changed(router_scale_applied=False),
                    "router_per_expert_scale": changed(router_expert_scale_applied=False),
                    "experts_input_norm": changed(expert_input="pre_ffn"),
                    "dense_mlp": changed(dense_beside_moe=False),
                    "experts_gate_up_swapped": changed(expert_gate_up_swapped=True)})
    return out


# (the router what-ifs that can change the choice: per_expert_scale and the renormalisation act after the top-k)
GEMMA4_ROUTER_WHAT_IFS = ("router_input_normed", "router_scale")


def gemma4_description(spec, p, golden):
    """Extra golden.json model keys of a Gemma 4 fixture (Gemma4ForCausalLM, Gemma4ForConditionalGeneration): the
    weights' prefix, the layer types and window, each layer's head size / kv heads / k_eq_v / MLP width, the
    attention rule (q/k/v norms, scale 1), the norms (plain w), the embedding scale, the RoPE of each layer type (its
    inverse frequencies, how many pairs turn), the KV sharing (which layers store, which read whose), the per-layer
    embeddings, the layer scalars, the soft-cap and how hard it bites (prompt 4's largest raw |logit|), prompt 4's
    largest |score|, the stand-in tensors of the multimodal checkpoint, with MoE the router and expert layout, per
    layer how many of prompt 4's tokens choose each expert (`expert_usage_prompt4`: every expert in every layer) and
    take another expert set under the router what-ifs (`router_changed_tokens_prompt4`, the router inputs held) and how
    much the logits change with the top-k weights not renormalised (`router_renormalisation_change_prompt4`: not a
    what-if, post_feedforward_layernorm_2 takes that per-token factor out but for its eps), how much prompt 4's logits
    would change under each of gemma4_what_ifs (`<name>_effect_prompt4`, each > 1e-2), and under 1e-7 weight noise
    (`weight_noise_logit_change_prompt4`, weight_noise_change: build_one passes over a seed above
    MAX_WEIGHT_NOISE_CHANGE)."""
    ids, trace, logits = prompt4_forward(spec, p, golden)
    prefix, _ = ref.weight_names(spec, p)
    c, H, L = spec.text_cfg, spec.H, spec.L
    raw = copy.copy(spec)
    raw.final_softcap = None
    raw_max = float(ref.forward(raw, p, torch.tensor([ids]), capture=False)[0].abs().max())
    cap = spec.final_softcap
    assert cap is not None and raw_max > cap, "the final soft-cap must bite: raw |logit| %.1f <= %r" % (raw_max, cap)
    assert all(spec.layer_sliding[l] for l in range(L) if spec.layer_types[l] == "sliding_attention")
    assert min(len(e["input_ids"]) for e in golden["prompts"]) > spec.sliding_window, "every prompt past the window"
    scalars = [float(p[prefix + "layers.%d.layer_scalar" % l]) for l in range(L)]
    assert all(abs(s - 1.0) > 0.05 for s in scalars), "every layer_scalar away from 1"
    norms = [n for n in p if n.startswith(prefix + "layers.") and re.search(r"norm(_\d)?\.weight$", n)]
    norm_mean = float(torch.cat([p[n] for n in norms]).mean())
    sliding_rope, full_rope = spec.rope.get("local"), spec.rope["global"]
    full_rp = spec.rope_types["full_attention"]
    turning = int((full_rope[0] != 0).sum())
    out = {"weight_prefix": prefix, "layer_types": spec.layer_types, "layer_sliding": spec.layer_sliding,
           "layer_head_dim": spec.layer_head_dim, "layer_kv_heads": spec.layer_kv_heads,
           "layer_k_eq_v": spec.layer_k_eq_v, "layer_mlp_width": spec.layer_mlp_width,
           "global_head_dim_in_config": c.get("global_head_dim"),
           "num_global_key_value_heads_in_config": c.get("num_global_key_value_heads"),
           "per_layer_config_in_config": "per_layer_config" in c,
           "use_bidirectional_attention": c.get("use_bidirectional_attention"),
           "attention": "q = q_norm(q_proj(h) per head) then RoPE of the layer type; unshared layers: k0 = k_proj(h) per "
                        "head, v0 = %s; K = RoPE(k_norm(k0)), V = v_norm(v0) (no weight, no RoPE); scores = q K^T x "
                        "1.0 (no head_dim^-0.5, no softcap) + the mask (sliding layers: p - %d < j <= p), softmax, "
                        "o_proj" % ("k0 itself (the raw k_proj output) on the full layers (attention_k_eq_v: no "
                                    "v_proj), v_proj(h) on the sliding ones" if spec.k_eq_v else "v_proj(h)",
                                    spec.sliding_window),
           "attn_scale": spec.attn_scale,
           "norms": "Gemma4RMSNorm: x (mean(x^2) + %g)^-0.5 times w as stored (plain w, not 1 + w), in fp32; v_norm and "
                    "the router's norm without a weight" % spec.eps,
           "norm_weight_mean": round(norm_mean, 4),
           "final_norm_weight_mean": round(float(p[prefix + "norm.weight"].mean()), 4),
           "embed_scale": spec.embed_scale,
           "rope": {"sliding_attention": dict(spec.rope_types.get("sliding_attention", {}),
                                              inv_freq=[float(x) for x in sliding_rope[0]] if sliding_rope else None),
                    "full_attention": dict(full_rp, inv_freq=[float(x) for x in full_rope[0]],
                                           pairs_turning=turning)},
           "rope_rule": "cos / sin = cat(freqs, freqs) over the whole head, rotate-half pairs (i, i + head / 2); full "
                        "layers proportional: int(%g x %d // 2) = %d of %d pairs turn at theta^(-2i / %d), the rest "
                        "have frequency 0 (unturned)" % (
                            full_rp.get("partial_rotary_factor", 1.0), spec.full_head_dim, turning,
                            spec.full_head_dim // 2, spec.full_head_dim),
           "kv_shared_from": spec.kv_shared_from, "layer_kv_shared": spec.layer_kv_shared,
           "layer_kv_store": spec.layer_kv_store, "layer_kv_source": spec.layer_kv_source,
           "layer_scalar": scalars,
           "final_logit_softcapping": cap, "max_abs_raw_logit_prompt4": round(raw_max, 4),
           "max_abs_attn_score_prompt4": round(max(trace["max_abs_score"].values()), 4),
           "hidden_size_per_layer_input": spec.ple_dim}
    if spec.ple_dim:
        P = spec.ple_dim
        out.update({"ple_embed_scale": spec.ple_embed_scale,
                    "ple_rule": "per pass: tok = embed_tokens_per_layer[ids] x bf16(sqrt(%d)) = %g viewed (T, %d, %d); "
                                "ctx = per_layer_projection_norm((x0 per_layer_model_projection^T) x %d^-0.5) viewed "
                                "(T, %d, %d), x0 the scaled embedding; ple = (ctx + tok) x 2^-0.5; layer l after its "
                                "MLP: x = x + post_per_layer_input_norm(per_layer_projection(gelu_tanh("
                                "per_layer_input_gate x) * ple[:, l]))" % (P, spec.ple_embed_scale, L, P, H, L, P)})
    if spec.arch == ref.GEMMA4_COND:
        out["stand_in_tensors"] = sorted(n for n in p if not n.startswith(prefix))
    what_ifs = gemma4_what_ifs(spec, p)
    if spec.num_experts:
        E = spec.num_experts
        moe = [l for l in range(L) if spec.layer_moe[l]]
        usage = {str(l): torch.bincount(trace["router"][l][1].flatten(), minlength=E).tolist() for l in moe}
        pre = prefix + "layers.%d." % moe[0]
        out.update({
            "num_experts": E, "top_k_experts": spec.top_k, "moe_intermediate_size": spec.moe_intermediate,
            "intermediate_size": spec.F,
            "router": "r = the residual after the attention's add (un-normed); z = r (mean(r^2) + eps)^-0.5 x "
                      "router.scale (%d,) x %d^-0.5; logits = z router.proj.weight (%d, %d)^T; p = softmax over all %d "
                      "(fp32); the top %d of p, divided by their sum, then times router.per_expert_scale[e] (%d,)" % (
                          H, H, E, H, E, spec.top_k, E),
            "moe_rule": "m = post_feedforward_layernorm_1(mlp(pre_feedforward_layernorm(r))) + "
                        "post_feedforward_layernorm_2(sum_k w_k down_e(gelu_tanh(gate_e y) * up_e y)), y = "
                        "pre_feedforward_layernorm_2(r); x = r + post_feedforward_layernorm(m)",
            "expert_layout": "experts.gate_up_proj (%d, %d, %d): per expert the %d gate rows, then the %d up rows; "
                             "experts.down_proj (%d, %d, %d); no .weight suffix, no mlp. prefix" % (
                                 E, 2 * spec.moe_intermediate, H, spec.moe_intermediate, spec.moe_intermediate, E, H,
                                 spec.moe_intermediate),
            "router_weight": ref.router_weight_name(spec, pre),
            "expert_usage_prompt4": usage,
            "router_changed_tokens_prompt4": gemma4_router_changed_tokens(spec, trace, what_ifs)})
        # not a what-if: the top-k weights not divided by their sum scale each token's experts' sum by one number,
        # which post_feedforward_layernorm_2 takes out again but for its eps
        unnormalised = copy.copy(spec)
        unnormalised.norm_topk_prob = False
        out["router_renormalisation_change_prompt4"] = float("%.3g" % float(
            (ref.forward(unnormalised, p, torch.tensor([ids]), capture=False)[0] - logits).abs().max()))
    out.update(what_if_effects(spec.arch, what_ifs, torch.tensor([ids]), logits))
    out["weight_noise_logit_change_prompt4"] = float("%.3g" % weight_noise_change(spec, p, ids, logits))
    return out


# Gemma 4's fixtures: the largest change of prompt 4's logits when every weight is multiplied by (1 + 1e-7 N(0, 1))
# (weight_noise_change), a stand-in for an fp32 engine's own rounding: the attention at score scale 1, the per-layer
# embeddings' product and the soft-capped logits near 30 make these models more sensitive than the other fixtures
# (whose changes are 2e-5 to 7e-5), and a seed above this bound is passed over (build_one), so that an engine can meet
# the goldens' 1e-4
MAX_WEIGHT_NOISE_CHANGE = 1e-4


def weight_noise_change(spec, p, ids, logits, draws=3):
    """The largest change of the logits of `ids` (`logits`: the model's own) over `draws` forward passes with every
    floating-point weight multiplied by (1 + 1e-7 x N(0, 1)), draw i from torch.Generator().manual_seed(i)."""
    worst = 0.0
    for i in range(draws):
        g = torch.Generator().manual_seed(i)
        noisy = {n: t * (1 + 1e-7 * torch.randn(t.shape, generator=g)) for n, t in sorted(p.items())}
        changed = ref.forward(spec, noisy, torch.tensor([ids]), capture=False)[0]
        worst = max(worst, float((changed - logits).abs().max()))
    return worst


def gemma4_router_changed_tokens(spec, trace, what_ifs):
    """Per router what-if of GEMMA4_ROUTER_WHAT_IFS, per layer: how many of the traced tokens take another expert set
    under it, each router's input held (the residual of the model as it is, trace["router_input"])."""
    def experts(s, q, l):
        pre = (s.prefix or "model.language_model.") + "layers.%d." % l
        x = trace["router_input"][l]
        if s.router_input != spec.router_input:  # (router_input_normed: the same residual, normed first)
            x = ref.gemma4_norm(s, x, q[pre + "pre_feedforward_layernorm.weight"])
        probs = torch.softmax(ref.router_logits(s, q, pre, x), dim=-1, dtype=torch.float32)
        return torch.topk(probs, s.top_k, dim=-1)[1]
    return {key: changed_expert_sets(spec, lambda l: (experts(spec, spec_p[1], l), experts(*what_ifs[key], l)))
            for key, spec_p in ((k, what_ifs[k]) for k in GEMMA4_ROUTER_WHAT_IFS)}


def arcee_what_ifs(spec, p):
    """Arcee's what-ifs, name -> (spec, params), each a reading an engine could take of AFM-4.5B: `mlp_silu` (hidden_act
    read as SiLU, LlamaConfig's default, the MLP still ungated: the file has no gate_proj to gate with), `mlp_relu`
    (relu2 read as a plain ReLU, without the square), `rope_attention_factor` (YaRN's frequencies with cos / sin left
    unscaled); plain RoPE (rope_scaling ignored) is scaled_rope_description's rope_scaling."""
    silu, relu, unscaled = (copy.copy(spec) for _ in range(3))
    silu.act, relu.act = "silu", "relu"
    unscaled.rope = {"global": (spec.inv_freq, 1.0)}
    return {"mlp_silu": (silu, p), "mlp_relu": (relu, p), "rope_attention_factor": (unscaled, p)}


def arcee_description(spec, p, golden):
    """Extra golden.json model keys of Arcee (ArceeForCausalLM): the MLP (relu2, no gate_proj), the YaRN rope (as
    config.json has it, its bands, attention factor and inverse frequencies: scaled_rope_description, which also gives
    plain RoPE's effect), and how much prompt 4's logits would change under each of arcee_what_ifs
    (`<name>_effect_prompt4`, each > 1e-2)."""
    ids = golden["prompts"][4]["input_ids"]
    logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    c, H, F = spec.cfg, spec.H, spec.F
    kept, ramped, divided = yarn_bands(spec)
    assert kept and ramped and divided, "the YaRN bands must all be present: %d kept, %d ramped, %d divided" % (
        kept, ramped, divided)
    assert not spec.mlp_gated and spec.act == "relu2" and spec.NKV < spec.NH and not spec.tied
    longest = max(len(e["input_ids"]) for e in golden["prompts"]) + golden["max_new_tokens"] - 1
    assert longest <= c["max_position_embeddings"]
    out = {"mlp": "mlp.down_proj (%d, %d) (relu(mlp.up_proj (%d, %d) h)^2): hidden_act relu2 (ArceeMLP = NemotronMLP), "
                  "no gate_proj, no biases" % (H, F, F, H),
           "hidden_act": c["hidden_act"], "intermediate_size": F, "rms_norm_eps": spec.eps, "rope_theta": spec.theta,
           "rope_scaling_in_config": c["rope_scaling"], "yarn_pairs_kept_ramped_divided": [kept, ramped, divided],
           "max_position_embeddings": c["max_position_embeddings"], "longest_sequence": longest}
    out.update(scaled_rope_description(spec, p, golden))
    out.update(what_if_effects("Arcee", arcee_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


DOTS1_ROUTER_WHAT_IFS = ("router_bias", "router_group_limit", "router_softmax", "router_top1")


def dots1_what_ifs(spec, p):
    """dots.llm1's what-ifs beside sigmoid_router_description's (router_bias, router_group_limit, router_scaling), name ->
    (spec, params): nemotron_h_moe_what_ifs' router_softmax, router_unnormalised, router_top1 and shared_expert
    (Dots1MoE is DeepseekV3MoE, as NemotronHMoE's routing is), `sliding_window` (no window on any layer: a reader that
    waits for a use_sliding_window switch, as Qwen2's configs have, or finds no layer_types), `sliding_window_first_layers`
    (the window on the layers below max_window_layers instead of from it on) and `qk_norm_after_rope` (q_norm / k_norm
    applied after the rotation)."""
    out = dict(nemotron_h_moe_what_ifs(spec, p))
    unwindowed, flipped, after = (copy.copy(spec) for _ in range(3))
    unwindowed.layer_sliding = [False] * spec.L
    first = spec.cfg["max_window_layers"]
    flipped.layer_sliding = [l < first for l in range(spec.L)]
    after.qk_norm_after_rope = True
    out.update({"sliding_window": (unwindowed, p), "sliding_window_first_layers": (flipped, p),
                "qk_norm_after_rope": (after, p)})
    return out


def dots1_description(spec, p, golden):
    """Extra golden.json model keys of dots.llm1 (Dots1ForCausalLM): the attention (Qwen3's per-head q/k norms before
    RoPE, head_dim), the layer types (derived from sliding_window / max_window_layers, or listed), the dense and MoE
    layers, the router and expert names, per MoE layer how many of prompt 4's tokens choose each expert
    (`expert_usage_prompt4`: build_one requires every expert chosen in every MoE layer), how many of prompt 4's tokens
    take another expert set under the router what-ifs DOTS1_ROUTER_WHAT_IFS (`router_changed_tokens_prompt4`, per layer,
    null for the dense one, the router inputs held), and how much prompt 4's logits would change under each of
    dots1_what_ifs (`<name>_effect_prompt4`, each > 1e-2); besides the MoE keys and sigmoid_router_description's, which
    family_description adds."""
    ids, trace, logits = prompt4_forward(spec, p, golden)
    c, H, HD = spec.cfg, spec.H, spec.HD
    moe = [l for l in range(spec.L) if spec.layer_moe[l]]
    dense = [l for l in range(spec.L) if not spec.layer_moe[l]]
    lengths = [len(e["input_ids"]) for e in golden["prompts"]]
    assert any(spec.layer_sliding) and not all(spec.layer_sliding) and min(lengths) > spec.sliding_window, \
        "sliding and full layers, every prompt longer than the window"
    assert moe and dense and 1 < spec.n_group and spec.topk_group < spec.n_group and spec.norm_topk_prob and \
        spec.routed_scaling_factor != 1.0 and spec.NH * HD != H, "groups that limit, renormalised, scaled, q width != H"
    router = {"router_" + k: v for k, v in sigmoid_router_what_ifs(spec, p)}
    what_ifs = dots1_what_ifs(spec, p)
    changed = router_changed_tokens(spec, p, ids, dict(what_ifs, **router), DOTS1_ROUTER_WHAT_IFS, ref.sigmoid_route)
    for key in DOTS1_ROUTER_WHAT_IFS:
        assert all(n > 0 for n in changed[key] if n is not None), "dots.llm1's %s would not change the experts: %s" % (
            key, changed[key])
    return dict({
        "layer_types_in_config": c.get("layer_types"), "max_window_layers": c["max_window_layers"],
        "layer_types_rule": "layer_types as listed, else sliding_attention where sliding_window is not null and i >= "
                            "max_window_layers (Dots1Config; no use_sliding_window switch); sliding layers see keys j "
                            "with i - sliding_window < j <= i",
        "qk_norm": "RMSNorm over each head's head_dim values (eps rms_norm_eps), one (head_dim,) weight per projection "
                   "(self_attn.q_norm / k_norm), applied to q and k BEFORE RoPE (Qwen3Attention)",
        "qk_norm_weight_shapes": [[HD], [HD]], "rms_norm_eps": spec.eps, "q_width": spec.NH * HD,
        "head_dim_in_config": c.get("head_dim"), "first_k_dense_replace": c["first_k_dense_replace"],
        "dense_mlp_layers": dense, "intermediate_size": spec.F, "moe_intermediate_size": spec.moe_intermediate,
        "n_shared_experts": c["n_shared_experts"], "shared_intermediate_size": spec.shared_intermediate,
        "scoring_func_in_config": c.get("scoring_func"), "renormalisation_epsilon": 1e-20,
        **deepseek_moe_keys(spec, trace, ids), "router_changed_tokens_prompt4": changed},
        **what_if_effects("dots.llm1", what_ifs, torch.tensor([ids]), logits))


def deepseek_moe_keys(spec, trace, ids):
    """golden.json's keys of a DeepseekV3MoE-style layer (dots.llm1's Dots1MoE, GLM-4.7-Flash's Glm4MoeLiteMoE): the
    rule (the sigmoid router with mlp.gate.e_score_correction_bias, groups, the renormalised and scaled top-k, the
    ungated mlp.shared_experts), the first MoE layer's router and bias names, the per-expert layout, and per MoE layer
    how many of prompt 4's tokens (`ids`, traced in `trace`) choose each expert (`expert_usage_prompt4`: build_one requires
    every expert chosen in every MoE layer)."""
    H, E = spec.H, spec.num_experts
    moe = [l for l in range(spec.L) if spec.layer_moe[l]]
    pre = "model.layers.%d." % moe[0]
    return {
        "moe_rule": "h = post_attention_layernorm(x); logits = h W^T in fp32 with mlp.gate.weight (%d, %d); s = "
                    "sigmoid(logits); c = s + mlp.gate.e_score_correction_bias (F32 (%d,); the choice only); groups "
                    "of %d experts score the sum of their two best c, the best topk_group %d of n_group %d kept, the "
                    "others' c set to 0.0; the top %d of c; weights the chosen s / (their sum + 1e-20) "
                    "(norm_topk_prob) x routed_scaling_factor %r; out = sum_k weight_k down_e(silu(gate_e h) up_e h) + "
                    "down_s(silu(gate_s h) up_s h) (mlp.shared_experts, weight 1, no gate of its own); x + out" % (
                        E, H, E, E // spec.n_group, spec.topk_group, spec.n_group, spec.top_k,
                        spec.routed_scaling_factor),
        "router_weight": ref.router_weight_name(spec, pre), "correction_bias": ref.sigmoid_bias_name(spec, pre),
        "expert_layout": "per expert: mlp.experts.{e}.gate_proj / up_proj (%d, %d), down_proj (%d, %d); "
                         "mlp.shared_experts.gate_proj / up_proj (%d, %d), down_proj (%d, %d)" % (
                             spec.moe_intermediate, H, H, spec.moe_intermediate, spec.shared_intermediate, H, H,
                             spec.shared_intermediate),
        "expert_usage_prompt4": {str(l): torch.bincount(trace["router"][l][1].flatten(), minlength=E).tolist()
                                 for l in moe},
        "prompt4_tokens": len(ids)}


GLM4_MOE_LITE_ROUTER_WHAT_IFS = ("router_bias",)


def glm4_moe_lite_what_ifs(spec, p):
    """GLM-4.7-Flash's what-ifs beside mla_description's and sigmoid_router_description's, name -> (spec, params):
    `shared_expert` (no shared expert: nemotron_h_moe_what_ifs'), `rope_theta_default` (the default RoPE at 10000,
    Glm4MoeLiteConfig's default_theta: what a reader that looks for a top-level rope_theta and finds only
    rope_parameters would take)."""
    default_theta = copy.copy(spec)
    default_theta.rope = {"global": (ref.rope_inv_freq(spec.R, 10000.0, None), 1.0)}
    return {"shared_expert": nemotron_h_moe_what_ifs(spec, p)["shared_expert"], "rope_theta_default": (default_theta, p)}


def glm4_moe_lite_description(spec, p, golden):
    """Extra golden.json model keys of GLM-4.7-Flash (Glm4MoeLiteForCausalLM), besides mla_description's, the MoE keys
    and sigmoid_router_description's (family_description adds those): the layer types (mlp_layer_types as listed beside
    the release's first_k_dense_replace), the RoPE keys, deepseek_moe_keys, the MTP layer's tensors, how many of prompt
    4's tokens take another expert set without the correction bias (`router_changed_tokens_prompt4`, per layer, null for
    the dense one, the router inputs held), and how much prompt 4's logits would change under each of
    glm4_moe_lite_what_ifs (`<name>_effect_prompt4`, each > 1e-2)."""
    ids, trace, logits = prompt4_forward(spec, p, golden)
    c = spec.cfg
    dense = [l for l in range(spec.L) if not spec.layer_moe[l]]
    assert dense and not all(not m for m in spec.layer_moe) and spec.norm_topk_prob and \
        spec.routed_scaling_factor != 1.0 and spec.v_head_dim != spec.qk_nope_head_dim, \
        "dense and MoE layers, renormalised, scaled, v head != nope"
    router = {"router_" + k: v for k, v in sigmoid_router_what_ifs(spec, p)}
    what_ifs = glm4_moe_lite_what_ifs(spec, p)
    changed = router_changed_tokens(spec, p, ids, router, GLM4_MOE_LITE_ROUTER_WHAT_IFS, ref.sigmoid_route)
    for key in GLM4_MOE_LITE_ROUTER_WHAT_IFS:
        assert all(n > 0 for n in changed[key] if n is not None), "GLM-4.7-Flash's %s would not change the experts: " \
            "%s" % (key, changed[key])
    mtp = "model.layers.%d." % spec.L
    mtp_tensors = sorted(n for n in p if n.startswith(mtp))
    return dict({
        "mlp_layer_types_in_config": c.get("mlp_layer_types"), "first_k_dense_replace_in_config":
            c.get("first_k_dense_replace"),
        "moe_layer_rule": "mlp_layer_types[i] == \"sparse\": Glm4MoeLiteMoE, else Glm4MoeLiteMLP of intermediate_size "
                          "(Glm4MoeLiteDecoderLayer; default [\"dense\"] + [\"sparse\"] x (L - 1); "
                          "first_k_dense_replace is not read)",
        "dense_mlp_layers": dense, "intermediate_size": spec.F, "moe_intermediate_size": spec.moe_intermediate,
        "n_shared_experts": c["n_shared_experts"], "shared_intermediate_size": spec.shared_intermediate,
        "topk_method_in_config": c.get("topk_method"), "scoring_func_in_config": c.get("scoring_func"),
        "renormalisation_epsilon": 1e-20, "rms_norm_eps": spec.eps,
        "rope_parameters_in_config": c.get("rope_parameters"), "rope_theta": spec.theta,
        "num_nextn_predict_layers": c.get("num_nextn_predict_layers"), "mtp_layer": mtp + "*",
        "mtp_tensors": len(mtp_tensors), "mtp_tensor_names": mtp_tensors,
        **deepseek_moe_keys(spec, trace, ids), "router_changed_tokens_prompt4": changed},
        **what_if_effects("GLM-4.7-Flash", what_ifs, torch.tensor([ids]), logits))


def xielu_default_parameters(dtype=torch.bfloat16):
    """XIELUActivation.__init__'s parameters (activations.py; alpha_p_init 0.8, alpha_n_init 0.8, beta 0.5, eps -1e-6),
    computed as __init__ computes them in `dtype` (ApertusMLP passes config.dtype: bfloat16 for the release):
    alpha_p = log(expm1(0.8)) and alpha_n = log(expm1(0.8 - 0.5)), each .unsqueeze(0), beta and eps 0-d; as fp32
    tensors, in reference.XIELU_PARAMETERS' order."""
    alpha_p = torch.log(torch.expm1(torch.tensor(0.8, dtype=dtype))).unsqueeze(0)
    alpha_n = torch.log(torch.expm1(torch.tensor(0.8 - 0.5, dtype=dtype))).unsqueeze(0)
    return tuple(x.to(torch.float32) for x in (alpha_p, alpha_n, torch.tensor(0.5, dtype=dtype),
                                                 torch.tensor(-1e-6, dtype=dtype)))


def apertus_what_ifs(spec, p):
    """Apertus's what-ifs, name -> (spec, params), each a reading an engine could take of Apertus-8B: `mlp_silu`
    (hidden_act read as SiLU, Llama's activation, the MLP still ungated: there is no gate_proj),
    `xielu_default_parameters` (XIELUActivation's __init__ values in bfloat16, xielu_default_parameters, in place of
    every layer's stored ones: the mlp.act_fn.* tensors not loaded), `xielu_no_softplus` (alpha_p / alpha_n used as
    stored), `xielu_eps` (eps bf16(-1e-6) on every layer: a kernel's built-in eps, as XIELUActivation._xielu_cuda passes
    __init__'s), `qk_norm_after_rope` (q_norm / k_norm applied after the rotation) and `rope_scaling` (plain RoPE at
    rope_theta: the llama3 scaling ignored)."""
    silu, raw, after, plain = (copy.copy(spec) for _ in range(4))
    silu.act = "silu"
    raw.xielu_softplus = False
    after.qk_norm_after_rope = True
    plain.rope = {"global": (ref.rope_inv_freq(spec.R, spec.theta, None), 1.0)}
    defaults, eps = dict(p), dict(p)
    for l in range(spec.L):
        a = "model.layers.%d.mlp.act_fn." % l
        defaults.update(zip((a + n for n in ref.XIELU_PARAMETERS), xielu_default_parameters()))
        eps[a + "eps"] = xielu_default_parameters()[3]
    return {"mlp_silu": (silu, p), "xielu_default_parameters": (spec, defaults), "xielu_no_softplus": (raw, p),
            "xielu_eps": (spec, eps), "qk_norm_after_rope": (after, p), "rope_scaling": (plain, p)}


def apertus_description(spec, p, golden):
    """Extra golden.json model keys of Apertus (ApertusForCausalLM): the layer's norm names, the q/k norms, the MLP,
    the xIELU parameters per layer (as stored, and as the activation uses them: softplus(alpha_p), beta +
    softplus(alpha_n)), the tensors' shapes, per layer how many of prompt 4's xIELU inputs take each branch (x > 0;
    x <= eps; eps < x <= 0, where expm1 reads eps), the llama3 RoPE (its bands and inverse frequencies), how much bf16
    parameters would move prompt 4's logits (`xielu_bf16_parameters_change_prompt4`), and how much prompt 4's logits
    would change under each of apertus_what_ifs (`<name>_effect_prompt4`, each > 1e-2)."""
    ids, trace, logits = prompt4_forward(spec, p, golden)
    c, H, F, HD = spec.cfg, spec.H, spec.F, spec.HD
    kept, smoothed, divided = llama3_bands(spec)
    assert kept and smoothed and divided, "the llama3 bands must all be present: %d kept, %d smoothed, %d divided" % (
        kept, smoothed, divided)
    assert not spec.mlp_gated and spec.act == "xielu" and spec.qk_norm and not spec.qk_norm_after_rope
    assert spec.NKV < spec.NH and not spec.tied
    longest = max(len(e["input_ids"]) for e in golden["prompts"]) + golden["max_new_tokens"] - 1
    assert longest <= c["max_position_embeddings"]
    stored, used, branches = [], [], []
    for l in range(spec.L):
        a_p, a_n, beta, eps = (p["model.layers.%d.mlp.act_fn.%s" % (l, n)] for n in ref.XIELU_PARAMETERS)
        stored.append([float(a_p[0]), float(a_n[0]), float(beta), float(eps)])
        used.append([float(torch.nn.functional.softplus(a_p)[0]), float(beta + torch.nn.functional.softplus(a_n)[0]),
                     float(beta), float(eps)])
        x = trace["xielu_input"][l]
        branches.append([int((x > 0).sum()), int((x <= eps).sum()), int(((x > eps) & (x <= 0)).sum())])
    defaults = [float(v.flatten()[0]) for v in xielu_default_parameters()]
    assert all(u[:3] != used[0][:3] for u in used[1:]), "each layer's xIELU parameters must differ"
    assert all(s[:3] != defaults[:3] for s in stored), "no layer's xIELU parameters may be transformers' defaults"
    out = {"layer_norm_names": list(spec.layer_norm_names),
           "qk_norm": "RMSNorm over each head's head_dim values (eps rms_norm_eps), one (head_dim,) weight per "
                      "projection (self_attn.q_norm / k_norm), applied to q and k BEFORE RoPE (ApertusAttention)",
           "qk_norm_weight_shapes": [[HD], [HD]], "rms_norm_eps": spec.eps,
           "mlp": "mlp.down_proj (%d, %d) (xIELU(mlp.up_proj (%d, %d) h)): hidden_act xielu (ApertusMLP = NemotronMLP, "
                  "act_fn XIELUActivation), no gate_proj, no biases" % (H, F, F, H),
           "hidden_act": c["hidden_act"], "intermediate_size": F,
           "xielu_rule": "a_p = softplus(alpha_p), a_n = beta + softplus(alpha_n) (torch's softplus, threshold 20), in "
                         "fp32 from the stored values; xIELU(x) = a_p x x + beta x for x > 0, else (expm1(min(x, eps)) "
                         "- x) a_n + beta x (XIELUActivation._xielu_python)",
           "xielu_tensors": "model.layers.{i}.mlp.act_fn.alpha_p (1,), alpha_n (1,) (before the softplus), beta (), "
                            "eps () (0-d), %s" % golden["model"]["dtypes"]["model.layers.0.mlp.act_fn.beta"],
           "xielu_stored_alpha_p_alpha_n_beta_eps": stored,
           "xielu_used_softplus_alpha_p_beta_plus_softplus_alpha_n_beta_eps": used,
           "xielu_default_parameters": defaults,
           "xielu_branches_prompt4": branches,
           "rope_theta": spec.theta, "rope_scaling_in_config": c["rope_scaling"],
           "llama3_pairs_kept_smoothed_divided": [kept, smoothed, divided],
           "rope_inv_freq": [float(x) for x in spec.inv_freq],
           "max_position_embeddings": c["max_position_embeddings"], "longest_sequence": longest}
    # the same parameters as a model held in bfloat16 uses them (softplus taken, and beta added, in the parameters'
    # dtype): a_p = bf16(softplus(alpha_p)), a_n = bf16(beta + bf16(softplus(alpha_n))), fed to the fp32 path as values
    # used without the softplus; not a reading of the file, a measure of what bf16 parameters change
    raw, rounded = copy.copy(spec), dict(p)
    raw.xielu_softplus = False
    bf = torch.bfloat16
    for l in range(spec.L):
        a = "model.layers.%d.mlp.act_fn." % l
        beta = p[a + "beta"].to(bf)
        rounded[a + "alpha_p"] = torch.nn.functional.softplus(p[a + "alpha_p"].to(bf)).float()
        rounded[a + "alpha_n"] = (beta + torch.nn.functional.softplus(p[a + "alpha_n"].to(bf))).float() - beta.float()
    out["xielu_bf16_parameters_change_prompt4"] = round(float(
        (ref.forward(raw, rounded, torch.tensor([ids]), capture=False)[0] - logits).abs().max()), 4)
    out.update(what_if_effects("Apertus", apertus_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


def cohere_description(spec, p, golden):
    """Extra golden.json model keys of Cohere / Cohere 2: the norm, block, RoPE layout and logit scale,
    and how much prompt 4's logits would change were the norms RMSNorms (mean kept: `mean_subtraction`),
    the block sequential (x += attn(norm(x)); x += mlp(norm(x)), the same input_layernorm weight for
    both: `parallel_block`), the RoPE dims paired (i, i + HD/2) (`rope_layout`) and logit_scale
    ignored (`logit_scale`); for Cohere 2 also were the full layers rotated too (`nope`) and the
    window removed (`sliding_window`); with use_qk_norm also were every head's q/k norm weights head
    0's (`qk_norm_per_head`), the q/k norms RMSNorms (`qk_norm_mean_subtraction`) and there no q/k
    norms (`qk_norm`)."""
    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    logits = ref.forward(spec, p, ids, capture=False)[0]
    rms, sequential, halves, unscaled = (copy.copy(spec) for _ in range(4))
    rms.layer_norm = False
    sequential.parallel_block = False
    # the sequential block reads post_attention_layernorm.weight for the MLP's norm: the same weight again
    seq_p = dict(p)
    for l in range(spec.L):
        pre = "model.layers.%d." % l
        seq_p[pre + "post_attention_layernorm.weight"] = p[pre + "input_layernorm.weight"]
    halves.rope_interleaved = False
    unscaled.logit_scale = 1.0
    effects = {"mean_subtraction": (rms, p), "parallel_block": (sequential, seq_p), "rope_layout": (halves, p),
               "logit_scale": (unscaled, p)}
    out = {"norm": "layer_norm (mean subtracted, no bias)", "layer_norm_eps": spec.eps, "parallel_block": True,
           "rope_interleaved": True, "rotary_dim": spec.R, "logit_scale": spec.logit_scale}
    if spec.qk_norm:
        # Command R+'s q/k norms: every head with head 0's weight row (`qk_norm_per_head`), RMSNorms
        # (no mean subtraction, the same weights: `qk_norm_mean_subtraction`), none at all (`qk_norm`)
        head0 = dict(p)
        for l in range(spec.L):
            for n in ("q_norm", "k_norm"):
                w = p["model.layers.%d.self_attn.%s.weight" % (l, n)]
                head0["model.layers.%d.self_attn.%s.weight" % (l, n)] = w[0:1].expand_as(w).clone()
        qk_rms, no_qk = copy.copy(spec), copy.copy(spec)
        qk_rms.qk_norm_rms = True
        no_qk.qk_norm = False
        effects.update({"qk_norm_per_head": (spec, head0), "qk_norm_mean_subtraction": (qk_rms, p),
                        "qk_norm": (no_qk, p)})
        out.update({"qk_norm": "layer_norm over head_dim per head (weights (heads, head_dim), mean subtracted, "
                               "no bias), before RoPE",
                    "qk_norm_weight_shapes": [[spec.NH, spec.HD], [spec.NKV, spec.HD]]})
    if spec.arch == ref.COHERE[1]:
        rotated, unwindowed = copy.copy(spec), copy.copy(spec)
        rotated.layer_use_rope = [True] * spec.L
        unwindowed.layer_sliding = [False] * spec.L
        effects.update({"nope": (rotated, p), "sliding_window": (unwindowed, p)})
        out["layer_use_rope"] = spec.layer_use_rope
    out.update(what_if_effects("Cohere", effects, ids, logits))
    return out


def llama_bias_description(spec, p, golden):
    """Extra golden.json model keys of a Llama with attention_bias / mlp_bias: which biases there are, and
    how much prompt 4's logits would change with the q/k/v biases (`qkv_bias`), the o_proj bias
    (`o_proj_bias`), the gate and up biases (`gate_up_bias`) and the down bias (`down_bias`) zeroed."""
    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    logits = ref.forward(spec, p, ids, capture=False)[0]

    def zeroed(suffixes):
        return {n: (torch.zeros_like(t) if n.endswith(suffixes) else t) for n, t in p.items()}
    out = {"attention_bias": bool(spec.qkv_bias and spec.o_bias), "mlp_bias": bool(spec.mlp_bias)}
    groups = {"qkv_bias": ("self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias"),
              "o_proj_bias": ("self_attn.o_proj.bias",),
              "gate_up_bias": ("mlp.gate_proj.bias", "mlp.up_proj.bias"),
              "down_bias": ("mlp.down_proj.bias",)}
    for key, suffixes in groups.items():
        assert any(n.endswith(suffixes) for n in p), "no %s tensors" % key
        effect = float((ref.forward(spec, zeroed(suffixes), ids, capture=False)[0] - logits).abs().max())
        assert effect > 1e-2, "Llama's %s would not change the logits: %g" % (key, effect)
        out["%s_effect_prompt4" % key] = round(effect, 4)
    return out


def seed_oss_description(spec, p, golden):
    """Extra golden.json model keys of Seed-OSS: which biases its flags give (attention_bias: q/k/v_proj;
    attention_out_bias: o_proj; mlp_bias), and how much prompt 4's logits would change with the q/k/v
    biases zeroed (`qkv_bias`) and with each of them alone zeroed (`q_bias`, `k_bias`, `v_bias`)."""
    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    logits = ref.forward(spec, p, ids, capture=False)[0]

    def zeroed(suffixes):
        return {n: (torch.zeros_like(t) if n.endswith(suffixes) else t) for n, t in p.items()}
    out = {"attention_bias": bool(spec.qkv_bias), "attention_out_bias": bool(spec.o_bias),
           "mlp_bias": bool(spec.mlp_bias)}
    assert spec.qkv_bias and not spec.o_bias and not any(n.endswith("self_attn.o_proj.bias") for n in p)
    groups = {"qkv_bias": ("self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias"),
              "q_bias": ("self_attn.q_proj.bias",), "k_bias": ("self_attn.k_proj.bias",),
              "v_bias": ("self_attn.v_proj.bias",)}
    for key, suffixes in groups.items():
        effect = float((ref.forward(spec, zeroed(suffixes), ids, capture=False)[0] - logits).abs().max())
        assert effect > 1e-2, "Seed-OSS's %s would not change the logits: %g" % (key, effect)
        out["%s_effect_prompt4" % key] = round(effect, 4)
    return out


def mla_description(spec, p, golden):
    """Extra golden.json model keys of DeepSeek-V3's multi-head latent attention: its widths, the latent
    norms' eps, the score scale, the RoPE (YaRN factor on cos / sin, inverse frequencies, interleave), and
    how much prompt 4's logits would change with the other RoPE layout (rotate_half on the stored order
    instead of the interleave reshuffle, or the reshuffle where rope_interleave is false: `rope_layout`)
    and kv_a_layernorm's weights at 1 (`kv_a_layernorm`); with rope_scaling's mscale_all_dim, with the
    scale without mscale(factor, mscale_all_dim)^2 (`mla_mscale`); with rope_scaling, with plain RoPE
    (`rope_scaling`: unscaled frequencies, no cos / sin factor); with q_lora_rank, with q_a_layernorm's
    weights at 1 (`q_a_layernorm`); where rms_norm_eps is not the latent norms' 1e-6, with rms_norm_eps
    as their eps (`latent_norm_eps`). DeepSeek-V2 (apply_rotary_emb's in-place adjacent pairs): `rope_layout`
    is rotate_half on the stored order (the pairs (i, i + R/2)); `rope_layout` (a description) replaces
    `rope_interleave`; with YaRN also `yarn_pairs_kept_ramped_divided` (all three bands asserted present) and,
    where rope_scaling has both mscale and mscale_all_dim, `yarn_attention_factor` (cos / sin times YaRN's
    default 0.1 ln(factor) + 1 in place of mscale(factor, mscale) / mscale(factor, mscale_all_dim))."""
    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    logits = ref.forward(spec, p, ids, capture=False)[0]
    plain_scale, halves, plain_rope, model_eps, yarn_default = (copy.copy(spec) for _ in range(5))
    plain_scale.attn_scale = spec.HD ** -0.5
    if spec.mla_rope_pairs:  # DeepSeek-V2: rotate_half on the stored order, pairs (i, i + R/2)
        halves.mla_rope_pairs = halves.mla_rope_interleave = False
    else:
        halves.mla_rope_interleave = not spec.mla_rope_interleave
    plain_rope.rope = {"global": (ref.rope_inv_freq(spec.R, spec.theta, None), 1.0)}
    model_eps.mla_norm_eps = spec.eps

    def ones(suffix):
        return {n: (torch.ones_like(t) if n.endswith(suffix) else t) for n, t in p.items()}
    out = {"mla": True, "q_lora_rank": spec.q_lora_rank, "kv_lora_rank": spec.kv_lora_rank,
           "qk_nope_head_dim": spec.qk_nope_head_dim, "qk_rope_head_dim": spec.qk_rope_head_dim,
           "qk_head_dim": spec.HD, "v_head_dim": spec.v_head_dim, "latent_norm_eps": spec.mla_norm_eps,
           "attn_scale": spec.attn_scale, "rope_interleave": spec.mla_rope_interleave, "rotary_dim": spec.R,
           "rope_attention_factor": spec.rope_attention_factor,
           "rope_inv_freq": [float(x) for x in spec.inv_freq]}
    rs = spec.rope_scaling or {}
    v2 = spec.arch == ref.DEEPSEEK_V2
    if v2:
        del out["rope_interleave"]  # (DeepseekV2Config has no such key)
        out["rope_layout"] = ("adjacent pairs (2i, 2i + 1) turned in place as complex numbers (apply_rotary_emb: "
                              "view_as_complex, times polar(attention_scaling, position x inv_freq_i))")
        if rs:
            kept, ramped, divided = yarn_bands(spec)
            assert kept and ramped and divided, "the YaRN bands must all be present: %d kept, %d ramped, %d divided" % (
                kept, ramped, divided)
            out["yarn_pairs_kept_ramped_divided"] = [kept, ramped, divided]
            # YaRN's default attention factor (0.1 ln factor + 1: what _compute_yarn_parameters takes without
            # mscale / mscale_all_dim) on cos and sin in place of mscale(factor, mscale) / mscale(factor, mscale_all_dim)
            yarn_default.rope = {"global": (spec.inv_freq, 0.1 * math.log(rs["factor"]) + 1.0)}
    effects = {"mla_mscale": (plain_scale, p) if rs.get("mscale_all_dim") else None,
               "rope_layout": (halves, p), "kv_a_layernorm": (spec, ones("self_attn.kv_a_layernorm.weight")),
               "q_a_layernorm": (spec, ones("self_attn.q_a_layernorm.weight")) if spec.q_lora_rank else None,
               "rope_scaling": (plain_rope, p) if rs else None,
               "latent_norm_eps": (model_eps, p) if spec.eps != spec.mla_norm_eps else None,
               "yarn_attention_factor": (yarn_default, p) if v2 and rs.get("mscale") and rs.get("mscale_all_dim")
               else None}
    out.update(what_if_effects("DeepSeek-V%s" % ("2" if v2 else "3"),
                               {key: what for key, what in effects.items() if what is not None}, ids, logits))
    return out


def qk_norm_rows(spec, p, pre):
    """The what-if of a per-head q/k norm (OLMo 2, 3, OLMoE): the whole-projection q_norm / k_norm weights of
    layer prefix `pre` viewed as one (head_dim) row per head."""
    return {pre + "self_attn.q_norm.weight": p[pre + "self_attn.q_norm.weight"].view(spec.NH, spec.HD),
            pre + "self_attn.k_norm.weight": p[pre + "self_attn.k_norm.weight"].view(spec.NKV, spec.HD)}


def olmo2_what_ifs(spec, p):
    """OLMo 2's what-ifs, name -> (spec, params), each a mistake an engine could make: `qk_norm_per_head` (q_norm /
    k_norm over each head's head_dim values, the weight read as (heads, head_dim) rows, as Qwen3 / Command R+
    norm), `prenorm` (Llama's layout: the same two norm weights before the attention and the MLP instead of after
    them, post_attention_layernorm as input_layernorm and post_feedforward_layernorm as the MLP's input norm),
    `input_norms` (Gemma 2's sandwich: RMSNorms with unit weights added on the attention's and the MLP's inputs,
    the post norms kept), `qk_norm` (no q/k norms), `rms_norm_eps` (1e-6 instead of 1e-5, or 1e-5 instead of any
    other eps, in every norm); with attention_bias also `qkv_bias` and `o_proj_bias` (those biases zeroed); with
    rope_scaling also `rope_scaling` (plain RoPE; OLMo 3: on the full-attention layers, whose RoPE it is)."""
    per_head, prenorm, sandwich, no_qk, other_eps, plain = (copy.copy(spec) for _ in range(6))
    per_head.qk_norm_full, per_head.qk_norm = False, True
    prenorm.sandwich_norms, prenorm.input_norms = False, True
    sandwich.input_norms = True
    no_qk.qk_norm_full = False
    other_eps.eps = 1e-6 if spec.eps == 1e-5 else 1e-5
    # (OLMo 3's sliding layers keep their "local" RoPE)
    plain.rope = dict(spec.rope, **{"global": (ref.rope_inv_freq(spec.R, spec.theta, None), 1.0)})
    per_head_p, prenorm_p, sandwich_p = dict(p), dict(p), dict(p)
    for l in range(spec.L):
        pre = "model.layers.%d." % l
        per_head_p.update(qk_norm_rows(spec, p, pre))
        prenorm_p[pre + "input_layernorm.weight"] = p[pre + "post_attention_layernorm.weight"]
        prenorm_p[pre + "post_attention_layernorm.weight"] = p[pre + "post_feedforward_layernorm.weight"]
        sandwich_p[pre + "input_layernorm.weight"] = torch.ones(spec.H)
        sandwich_p[pre + "pre_feedforward_layernorm.weight"] = torch.ones(spec.H)

    def zeroed(suffixes):
        return {n: (torch.zeros_like(t) if n.endswith(suffixes) else t) for n, t in p.items()}
    out = {"qk_norm_per_head": (per_head, per_head_p), "prenorm": (prenorm, prenorm_p),
           "input_norms": (sandwich, sandwich_p), "qk_norm": (no_qk, p), "rms_norm_eps": (other_eps, p)}
    if spec.qkv_bias:
        out["qkv_bias"] = (spec, zeroed(("self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias")))
    if spec.o_bias:
        out["o_proj_bias"] = (spec, zeroed(("self_attn.o_proj.bias",)))
    if spec.rope_scaling:
        out["rope_scaling"] = (plain, p)
    return out


def olmo3_what_ifs(spec, p):
    """OLMo 3's what-ifs beyond OLMo 2's, name -> (spec, params): `yarn_on_sliding_layers` (the full-attention
    layers' scaled RoPE on every layer: transformers 5 between its RoPE refactor and PR #45945),
    `sliding_window` (no window anywhere), `window_on_every_layer` (the full-attention layers windowed too); when
    the sliding layers' base differs from the full layers' (rope_parameters' sliding_attention rope_theta),
    `sliding_rope_theta` (the sliding layers' default RoPE at the full layers' theta)."""
    everywhere, unwindowed, all_windowed, full_theta = (copy.copy(spec) for _ in range(4))
    everywhere.rope = dict(spec.rope, local=spec.rope["global"])
    unwindowed.layer_sliding = [False] * spec.L
    all_windowed.layer_sliding = [True] * spec.L
    out = {"yarn_on_sliding_layers": (everywhere, p), "sliding_window": (unwindowed, p),
           "window_on_every_layer": (all_windowed, p)}
    if spec.rope_local_theta != spec.theta:
        full_theta.rope = dict(spec.rope, local=(ref.rope_inv_freq(spec.R, spec.theta, None), 1.0))
        out["sliding_rope_theta"] = (full_theta, p)
    return out


def yarn_bands(spec):
    """(kept, ramped, divided) counts of the full-attention RoPE's dimension pairs: inverse frequencies equal to
    the plain ones, strictly between, equal to the plain ones / factor."""
    plain = ref.rope_inv_freq(spec.R, spec.theta, None)
    kept = int(torch.isclose(spec.inv_freq, plain, rtol=1e-6, atol=0.0).sum())
    low = int(torch.isclose(spec.inv_freq, plain / spec.rope_scaling["factor"], rtol=1e-6, atol=0.0).sum())
    return kept, spec.R // 2 - kept - low, low


def olmo3_keys(spec):
    """golden.json model keys of OLMo 3 beside OLMo 2's (the layer_sliding list comes from family_description)."""
    types = spec.text_cfg.get("layer_types")
    kept, ramped, divided = yarn_bands(spec)
    assert kept and ramped and divided, "the YaRN bands must all be present: %d kept, %d ramped, %d divided" % (
        kept, ramped, divided)
    return {"layer_types": "listed" if types else "Olmo3Config's default: sliding_attention if (i + 1) % 4 != 0",
            "rope_spelling": "rope_parameters per layer type (transformers 5)" if "rope_parameters" in spec.text_cfg
            else "rope_theta + rope_scaling (legacy, as released)",
            "layer_rope": [{"theta": spec.rope_local_theta, "scaling": None} if k == "local" else
                           {"theta": spec.theta, "scaling": spec.rope_scaling} for k in spec.layer_rope],
            "rope_attention_factor": spec.rope_attention_factor,
            "rope_inv_freq": [float(x) for x in spec.inv_freq],
            "rope_local_inv_freq": [float(x) for x in spec.rope["local"][0]],
            "yarn_pairs_kept_ramped_divided": [kept, ramped, divided]}


def olmo2_description(spec, p, golden):
    """Extra golden.json model keys of OLMo 2: where the norms are, the q/k norms' width, the eps, the biases, and
    how much prompt 4's logits would change under each of olmo2_what_ifs (`<name>_effect_prompt4`, each > 1e-2);
    `branch_mean_square_prompt4`: the smallest and largest mean square (over the hidden values) of an attention or
    MLP output before its post norm, over prompt 4's tokens and every layer (near rms_norm_eps: the eps shows).
    OLMo 3 also olmo3_keys and olmo3_what_ifs' effects."""
    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    logits = ref.forward(spec, p, ids, capture=False)[0]
    out = {"norm_placement": "post: post_attention_layernorm on the attention output, post_feedforward_layernorm "
                             "on the MLP output, before each residual add; no input_layernorm, no pre-MLP norm",
           "qk_norm": "rms_norm over the whole q_proj / k_proj output (all heads at once), before the split into "
                      "heads and RoPE",
           "qk_norm_weight_shapes": [[spec.NH * spec.HD], [spec.NKV * spec.HD]], "rms_norm_eps": spec.eps,
           "attention_bias": bool(spec.qkv_bias and spec.o_bias)}
    trace = {}
    ref.forward(spec, p, ids, capture=False, trace=trace)
    branch = torch.cat([x.flatten() for x in trace["branch_mean_square"].values()])
    out["branch_mean_square_prompt4"] = [float("%.4g" % float(branch.min())), float("%.4g" % float(branch.max()))]
    what_ifs = olmo2_what_ifs(spec, p)
    if spec.arch == ref.OLMO3:
        out.update(olmo3_keys(spec))
        what_ifs.update(olmo3_what_ifs(spec, p))
    out.update(what_if_effects("OLMo 2/3", what_ifs, ids, logits))
    return out


def olmoe_what_ifs(spec, p):
    """OLMoE's what-ifs, name -> (spec, params), each a mistake an engine could make: `qk_norm_per_head` (q_norm /
    k_norm over each head's head_dim values, the weight read as (heads, head_dim) rows, as Qwen3-MoE norms),
    `qk_norm` (no q/k norms: Llama's attention), `postnorm` (OLMo 2's layout: no norm before the attention and the
    MoE, input_layernorm's weight as post_attention_layernorm on the attention output and post_attention_layernorm's
    as post_feedforward_layernorm on the MoE output, before each add); where norm_topk_prob is false (as released)
    `router_norm_topk_prob` (the top-k weights renormalised over the k)."""
    per_head, no_qk, post, renormed = (copy.copy(spec) for _ in range(4))
    per_head.qk_norm_full, per_head.qk_norm = False, True
    no_qk.qk_norm_full = False
    post.sandwich_norms, post.input_norms = True, False
    renormed.norm_topk_prob = True
    per_head_p, post_p = dict(p), dict(p)
    for l in range(spec.L):
        pre = "model.layers.%d." % l
        per_head_p.update(qk_norm_rows(spec, p, pre))
        post_p[pre + "post_attention_layernorm.weight"] = p[pre + "input_layernorm.weight"]
        post_p[pre + "post_feedforward_layernorm.weight"] = p[pre + "post_attention_layernorm.weight"]
    out = {"qk_norm_per_head": (per_head, per_head_p), "qk_norm": (no_qk, p), "postnorm": (post, post_p)}
    if not spec.norm_topk_prob:
        out["router_norm_topk_prob"] = (renormed, p)
    return out


def olmoe_description(spec, p, golden):
    """Extra golden.json model keys of OLMoE: where the norms are, the q/k norms' width, the eps, clip_qkv, the
    biases, and how much prompt 4's logits would change under each of olmoe_what_ifs (`<name>_effect_prompt4`, each
    > 1e-2); besides the MoE keys family_description adds."""
    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    logits = ref.forward(spec, p, ids, capture=False)[0]
    assert spec.NKV * spec.HD != spec.H, "OLMoE's fixture: k_norm's width must differ from q_norm's"
    out = {"norm_placement": "pre: input_layernorm before the attention, post_attention_layernorm before the MoE "
                             "(Llama's layer)",
           "qk_norm": "rms_norm over the whole q_proj / k_proj output (all heads at once), before the split into "
                      "heads and RoPE",
           "qk_norm_weight_shapes": [[spec.NH * spec.HD], [spec.NKV * spec.HD]], "rms_norm_eps": spec.eps,
           "clip_qkv": spec.text_cfg.get("clip_qkv"), "attention_bias": bool(spec.qkv_bias and spec.o_bias)}
    out.update(what_if_effects("OLMoE", olmoe_what_ifs(spec, p), ids, logits))
    return out


MINIMAX_M2_ROUTER_WHAT_IFS = ("router_bias", "router_bias_in_weights", "router_unnormalised", "router_softmax")


def minimax_m2_what_ifs(spec, p):
    """MiniMax-M2's what-ifs, name -> (spec, params), each a mistake an engine could make: `rope_full_head` (RoPE over
    the whole head_dim, inv_freq over head_dim, instead of the first rotary_dim dims), `qk_norm_per_head` (q_norm /
    k_norm over each head's head_dim values with that head's slice of the weight, as Qwen3-MoE norms), `router_bias`
    (no e_score_correction_bias in the choice: the top-k of s itself), `router_bias_in_weights` (the weights gathered
    from s + e_score_correction_bias instead of s, then renormalised), `router_unnormalised` (the top-k s not divided by
    their sum), `router_softmax` (the softmax over the logits in place of the sigmoid, the bias, choice and
    renormalisation kept)."""
    full, per_head, in_weights, unnormed, softmax = (copy.copy(spec) for _ in range(5))
    full.R = spec.HD
    full.rope = {"global": (ref.rope_inv_freq(spec.HD, spec.theta, None), 1.0)}
    per_head.qk_norm_full, per_head.qk_norm = False, True
    in_weights.router_weight_bias = True
    unnormed.norm_topk_prob = False
    softmax.router_score = "softmax"
    per_head_p = dict(p)
    for l in range(spec.L):
        per_head_p.update(qk_norm_rows(spec, p, "model.layers.%d." % l))
    unbiased = {n: (torch.zeros_like(t) if n.endswith("e_score_correction_bias") else t) for n, t in p.items()}
    return {"rope_full_head": (full, p), "qk_norm_per_head": (per_head, per_head_p), "router_bias": (spec, unbiased),
            "router_bias_in_weights": (in_weights, p), "router_unnormalised": (unnormed, p),
            "router_softmax": (softmax, p)}


def changed_expert_sets(spec, chosen):
    """Per layer (None for a dense one): how many tokens take another expert set under a what-if, `chosen(l)` giving
    layer l's experts (tokens, k) as the model is and under the what-if."""
    counts = []
    for l in range(spec.L):
        if not spec.layer_moe[l]:
            counts.append(None)
            continue
        want, got = (e.sort(dim=-1).values for e in chosen(l))
        counts.append(int((want != got).any(dim=-1).sum()))
    return counts


def router_changed_tokens(spec, p, ids, what_ifs, keys, route):
    """Per router what-if of `keys` (what_ifs: name -> (spec, params)), per layer (null for a dense one): how many of
    the tokens `ids` take another expert set under it, the router inputs held (those of the model as it is); `route`
    (spec, params, layer prefix, router logits) -> (weights, experts): reference.minimax_route, ernie_route."""
    trace = {}
    ref.forward(spec, p, torch.tensor([ids]), capture=False, trace=trace)

    def experts(s, q, l):
        pre = "model.layers.%d." % l
        return route(s, q, pre, ref.router_logits(s, q, pre, trace["router_input"][l]))[1]
    return {key: changed_expert_sets(spec, lambda l: (experts(spec, p, l), experts(*what_ifs[key], l))) for key in keys}


def minimax_m2_description(spec, p, golden):
    """Extra golden.json model keys of MiniMax-M2: where the norms are, the q/k norms' width, the eps, the partial RoPE,
    the router and the expert layout, how many of prompt 4's tokens take other experts under each router what-if
    (`router_changed_tokens_prompt4`, per layer, the router inputs held) and how much prompt 4's logits would change
    under each of minimax_m2_what_ifs (`<name>_effect_prompt4`, each > 1e-2); besides the MoE keys family_description
    adds."""
    ids = golden["prompts"][4]["input_ids"]
    logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    assert spec.NH * spec.HD != spec.H and spec.R < spec.HD, "MiniMax-M2's fixture: q width != hidden, partial RoPE"
    cfg = spec.text_cfg
    out = {"norm_placement": "pre: input_layernorm before the attention, post_attention_layernorm before the MoE "
                             "(Mixtral's layer)",
           "qk_norm": "rms_norm over the whole q_proj / k_proj output (all heads at once), before the split into "
                      "heads and RoPE",
           "qk_norm_weight_shapes": [[spec.NH * spec.HD], [spec.NKV * spec.HD]], "rms_norm_eps": spec.eps,
           "rotary_dim": spec.R,
           "rotary_dim_from": "rotary_dim" if "rotary_dim" in cfg else
           "rope_parameters.partial_rotary_factor x head_dim",
           "rope_theta": spec.theta, "rope_layout": "rotate-half over the first rotary_dim dims: pairs (i, i + "
                                                    "rotary_dim / 2); the rest of the head passes",
           "rope_inv_freq": [float(x) for x in spec.inv_freq],
           "router": "s = sigmoid(h W^T) in fp32; the top-k of s + e_score_correction_bias; weights s (unbiased) / "
                     "their sum; no scaling, no groups, no shared expert",
           "expert_layout": ("stacked: mlp.experts.gate_up_proj (E, 2F, H; per expert gate rows then up rows), "
                             "mlp.experts.down_proj (E, H, F)" if spec.expert_naming == "stacked" else
                             "per expert: block_sparse_moe.experts.{e}.w1 (gate), w3 (up), w2 (down)"),
           "router_weight": ref.router_weight_name(spec, "model.layers.0."),
           "correction_bias": ref.correction_bias_name(spec, "model.layers.0.")}
    what_ifs = minimax_m2_what_ifs(spec, p)
    changed = router_changed_tokens(spec, p, ids, what_ifs, MINIMAX_M2_ROUTER_WHAT_IFS, ref.minimax_route)
    for key in ("router_bias", "router_softmax"):  # (the other two change the weights only)
        assert all(n > 0 for n in changed[key]), "MiniMax-M2's %s would not change the experts: %s" % (key, changed[key])
    assert sum(changed["router_bias"]) >= 0.1 * len(ids) * spec.L, "the correction bias changes too few choices: %s" % (
        changed["router_bias"],)
    out.update({"prompt4_tokens": len(ids), "router_changed_tokens_prompt4": changed})
    out.update(what_if_effects("MiniMax-M2", what_ifs, torch.tensor([ids]), logits))
    return out


def exaone4_what_ifs(spec, p):
    """EXAONE 4's what-ifs, name -> (spec, params), each a mistake an engine could make: `prenorm` (Llama's layout: the
    same two norm weights before the attention and the MLP instead of on their outputs, post_attention_layernorm as
    input_layernorm and post_feedforward_layernorm as the MLP's input norm), `qk_norm_whole_projection` (one RMSNorm
    over the whole q_proj / k_proj output, OLMo 2's, with the (head_dim,) weight repeated for every head); with a
    sliding_window also `rope_on_every_layer` (the full-attention layers rotated too: NoPE ignored) and
    `sliding_window` (no window on the sliding layers); without one `nope_as_hybrid` (the hybrid model's rule applied
    anyway: no RoPE on the layers "LLLG" calls global, every fourth and the last); with rope_scaling also
    `rope_scaling` (plain RoPE: the llama3 scaling ignored)."""
    prenorm, whole, rotated, unwindowed, hybrid, plain = (copy.copy(spec) for _ in range(6))
    prenorm.sandwich_norms, prenorm.input_norms = False, True
    whole.qk_norm, whole.qk_norm_full = False, True
    prenorm_p, whole_p = dict(p), dict(p)
    for l in range(spec.L):
        pre = "model.layers.%d." % l
        prenorm_p[pre + "input_layernorm.weight"] = p[pre + "post_attention_layernorm.weight"]
        prenorm_p[pre + "post_attention_layernorm.weight"] = p[pre + "post_feedforward_layernorm.weight"]
        whole_p[pre + "self_attn.q_norm.weight"] = p[pre + "self_attn.q_norm.weight"].repeat(spec.NH)
        whole_p[pre + "self_attn.k_norm.weight"] = p[pre + "self_attn.k_norm.weight"].repeat(spec.NKV)
    out = {"prenorm": (prenorm, prenorm_p), "qk_norm_whole_projection": (whole, whole_p)}
    if spec.sliding_window is not None:
        rotated.layer_use_rope = [True] * spec.L
        unwindowed.layer_sliding = [False] * spec.L
        out.update({"rope_on_every_layer": (rotated, p), "sliding_window": (unwindowed, p)})
    else:
        hybrid.layer_use_rope = [l != spec.L - 1 and "LLLG"[l % 4] == "L" for l in range(spec.L)]
        out["nope_as_hybrid"] = (hybrid, p)
    if spec.rope_scaling:
        plain.rope = {"global": (ref.rope_inv_freq(spec.R, spec.theta, None), 1.0)}
        out["rope_scaling"] = (plain, p)
    return out


def llama3_bands(spec):
    """(kept, smoothed, divided) counts of the llama3-scaled RoPE's dimension pairs: inverse frequencies equal to the
    plain ones, strictly between, equal to the plain ones / factor."""
    plain = ref.rope_inv_freq(spec.R, spec.theta, None)
    kept = int(torch.isclose(spec.inv_freq, plain, rtol=1e-6, atol=0.0).sum())
    divided = int(torch.isclose(spec.inv_freq, plain / spec.rope_scaling["factor"], rtol=1e-6, atol=0.0).sum())
    return kept, spec.R // 2 - kept - divided, divided


def exaone4_description(spec, p, golden):
    """Extra golden.json model keys of EXAONE 4: where the norms are, the q/k norms' width, the eps, the layer types and
    where they come from, which layers rotate, the RoPE (with llama3 scaling its bands), and how much prompt 4's logits
    would change under each of exaone4_what_ifs (`<name>_effect_prompt4`, each > 1e-2)."""
    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    logits = ref.forward(spec, p, ids, capture=False)[0]
    cfg = spec.text_cfg
    out = {"norm_placement": "post: post_attention_layernorm on the attention output, post_feedforward_layernorm "
                             "on the MLP output, before each residual add; no input_layernorm, no pre-MLP norm",
           "qk_norm": "rms_norm over each head's head_dim values (one (head_dim,) weight for every head), after "
                      "the view into heads, before RoPE",
           "qk_norm_weight_shapes": [[spec.HD], [spec.HD]], "rms_norm_eps": spec.eps,
           "layer_types": "listed" if cfg.get("layer_types") is not None else "from sliding_window_pattern",
           "sliding_window_pattern": cfg.get("sliding_window_pattern"),
           "layer_use_rope": spec.layer_use_rope,
           "rope_rule": "RoPE only where sliding_window is null or the layer slides (full layers of a hybrid model: "
                        "NoPE)",
           "rope_theta": spec.theta, "rope_scaling": spec.rope_scaling,
           "rope_inv_freq": [float(x) for x in spec.inv_freq]}
    if spec.rope_scaling:
        kept, smoothed, divided = llama3_bands(spec)
        assert kept and smoothed and divided, "the llama3 bands must all be present: %d kept, %d smoothed, %d " \
            "divided" % (kept, smoothed, divided)
        out["llama3_pairs_kept_smoothed_divided"] = [kept, smoothed, divided]
    if spec.sliding_window is not None:
        assert any(spec.layer_sliding) and not all(spec.layer_sliding), "EXAONE 4's hybrid fixture: both layer types"
        assert spec.layer_use_rope == spec.layer_sliding
    else:
        assert not any(spec.layer_sliding) and all(spec.layer_use_rope)
    out.update(what_if_effects("EXAONE 4", exaone4_what_ifs(spec, p), ids, logits))
    return out


ERNIE_ROUTER_WHAT_IFS = ("router_bias", "router_bias_in_weights", "router_unnormalised", "router_sigmoid")
ERNIE_BIAS_GROUPS = {"qkv_bias": ("self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias"),
                     "o_proj_bias": ("self_attn.o_proj.bias",),
                     "mlp_bias": ("mlp.gate_proj.bias", "mlp.up_proj.bias", "mlp.down_proj.bias")}


def ernie_what_ifs(spec, p):
    """ERNIE 4.5's what-ifs, name -> (spec, params), each a mistake an engine could make: `rope_layout` (rotate-half RoPE,
    pairs (i, i + head_dim / 2), in place of the adjacent pairs (2i, 2i + 1)); with use_bias (Ernie4_5ForCausalLM) the
    biases zeroed by group, `qkv_bias` (q/k/v_proj), `o_proj_bias`, `mlp_bias` (gate/up/down_proj); with experts
    `router_bias` (no e_score_correction_bias in the choice: the top-k of p itself), `router_bias_in_weights` (the
    weights gathered from p + e_score_correction_bias instead of p, then renormalised), `router_unnormalised` (the top-k
    p not divided by their sum), `router_sigmoid` (sigmoid of the logits in place of their softmax, the bias, choice and
    renormalisation kept), and with shared experts `shared_experts` (their output not added)."""
    halves = copy.copy(spec)
    halves.rope_interleaved = False
    out = {"rope_layout": (halves, p)}

    def zeroed(suffixes):
        return {n: (torch.zeros_like(t) if n.endswith(suffixes) else t) for n, t in p.items()}
    if spec.qkv_bias:
        for key, suffixes in ERNIE_BIAS_GROUPS.items():
            out[key] = (spec, zeroed(suffixes))
    if spec.num_experts:
        in_weights, unnormed, sigmoid, unshared = (copy.copy(spec) for _ in range(4))
        in_weights.router_weight_bias = True
        unnormed.norm_topk_prob = False
        sigmoid.router_score = "sigmoid"
        unshared.shared_intermediate = 0
        out.update({"router_bias": (spec, zeroed(("e_score_correction_bias",))),
                    "router_bias_in_weights": (in_weights, p), "router_unnormalised": (unnormed, p),
                    "router_sigmoid": (sigmoid, p)})
        if spec.shared_intermediate:
            out["shared_experts"] = (unshared, p)
    return out


def ernie_description(spec, p, golden):
    """Extra golden.json model keys of ERNIE 4.5 (both families): the RoPE (layout, theta, inverse frequencies), the
    biases use_bias gives, and with experts the MoE layer rule, the router, the correction bias's name and shape and how
    many of prompt 4's tokens take other experts under each router what-if (`router_changed_tokens_prompt4`, per layer
    null or a count, the router inputs held); and how much prompt 4's logits would change under each of ernie_what_ifs
    (`<name>_effect_prompt4`, each > 1e-2); besides the MoE keys family_description adds."""
    ids = golden["prompts"][4]["input_ids"]
    logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    cfg = spec.text_cfg
    assert spec.rope_interleaved and spec.R == spec.HD
    out = {"rope_layout": "adjacent pairs (2i, 2i + 1) over the whole head_dim turned by frequency i (GLM's "
                          "rotate_half, cos / sin[..., :head_dim / 2].repeat_interleave(2))",
           "rope_theta": spec.theta, "rope_theta_from": "rope_parameters" if cfg.get("rope_parameters") else "rope_theta",
           "rope_inv_freq": [float(x) for x in spec.inv_freq],
           "use_bias": bool(spec.qkv_bias),
           "biases": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
           if spec.qkv_bias else [], "lm_head_bias": False}
    what_ifs = ernie_what_ifs(spec, p)
    if spec.qkv_bias:
        assert spec.o_bias and spec.mlp_bias and spec.arch == ref.ERNIE4_5
    if spec.num_experts:
        start, end = cfg.get("moe_layer_start_index", 1), cfg.get("moe_layer_end_index", -1)
        out.update({
            "moe_layer_rule": "(l + 1) %% moe_layer_interval == 0 and moe_layer_start_index <= l <= moe_layer_end_index "
                              "(-1: the last layer): interval %d, start %d, end %d%s" % (
                                  cfg.get("moe_layer_interval", 1), start, end, " (absent)" if
                                  "moe_layer_end_index" not in cfg else ""),
            "router": "p = softmax(h W^T) in fp32 (mlp.gate, F32); the top-k of p + e_score_correction_bias; weights p "
                      "(unbiased) / max(their sum, moe_norm_min); no scaling, no groups",
            "moe_norm_min": spec.moe_norm_min,
            "router_weight": ref.router_weight_name(spec, "model.layers.%d." % spec.layer_moe.index(True)),
            "correction_bias": ref.correction_bias_name(spec, "model.layers.%d." % spec.layer_moe.index(True)),
            "correction_bias_shape": [1, spec.num_experts],
            "shared_intermediate_size": spec.shared_intermediate})
        changed = router_changed_tokens(spec, p, ids, what_ifs, ERNIE_ROUTER_WHAT_IFS, ref.ernie_route)
        moe = [l for l in range(spec.L) if spec.layer_moe[l]]
        for key in ("router_bias", "router_sigmoid"):  # (the other two change the weights only)
            assert all(changed[key][l] > 0 for l in moe), "ERNIE's %s would not change the experts: %s" % (
                key, changed[key])
        assert sum(changed["router_bias"][l] for l in moe) >= 0.1 * len(ids) * len(moe), \
            "the correction bias changes too few choices: %s" % (changed["router_bias"],)
        out.update({"prompt4_tokens": len(ids), "router_changed_tokens_prompt4": changed})
    out.update(what_if_effects("ERNIE 4.5", what_ifs, torch.tensor([ids]), logits))
    return out


# the hybrid fixtures' bound on |chunked - recurrent| over every prompt's logits (the decays are drawn so that the two
# forms of the gated delta rule agree well inside the C++ tests' 1e-4: with HF's init, A uniform(0, 16) and dt_bias 1,
# exp(g) reaches 1e-17 and the chunked form's cumulative decays lose that much in fp32: 3.9e-4 on qwen3-next)
MAX_LINEAR_FORM_DIFF = 5e-5
# the largest |logit| difference allowed between the chunked Mamba-2 scan and its per-token recurrence over a Granite
# 4.0-H fixture's prompts (golden.json's mamba_chunked_vs_recurrent; build_one bumps the seed past it)
MAX_MAMBA_FORM_DIFF = 1e-5


def hybrid_what_ifs(spec, p):
    """Qwen3-Next / Qwen3.5's what-ifs, name -> (spec, params), each a mistake an engine could make: `conv` (no causal
    conv1d: the SiLU of the projections themselves), `conv_activation` (the conv without its SiLU), `z_gate` (the gated
    norm without its silu(z) factor), `gated_norm_one_plus_w` (the gated norm's plain weight read as 1 + w),
    `attn_output_gate` (the full-attention output not multiplied by sigmoid(gate); the gate rows still split off
    q_proj), `qk_l2norm` (no l2norm of the linear attention's q and k), `norm_plain_w` (every (1 + w) RMSNorm, q_norm /
    k_norm included, read as plain w), `rope_full_head` (RoPE over the whole head_dim instead of the first rotary_dim
    dims), `decay` (g = 0: no decay), `beta` (beta = 1), `A_log_as_A` (g = -A_log softplus(a + dt_bias): A_log not
    exponentiated), `dt_bias` (no dt_bias), `state_reset_per_chunk` (the recurrent state back to zero every 64 tokens,
    the chunked form's chunk boundaries); with more value than key heads `head_map_tiled` (value head j reading key head
    j % NK instead of j // (NV / NK)); Qwen3-Next `qkvz_blocks` (in_proj_qkvz / in_proj_ba read as contiguous
    [q | k | v | z] and [b | a] blocks, Qwen3.5's order, instead of interleaved per key head); with experts
    `router_unnormalised` (the top-k probabilities not renormalised) and `shared_expert_gate` (the shared expert added
    without its sigmoid gate); with stacked experts `gate_up_swapped` (gate_up_proj's halves read as up, then gate)."""
    out = {}
    for key, attr, value in (("conv", "linear_conv", False), ("conv_activation", "linear_conv_act", False),
                             ("z_gate", "linear_z_gate", False), ("gated_norm_one_plus_w", "linear_norm_offset", True),
                             ("attn_output_gate", "q_gate_applied", False), ("qk_l2norm", "linear_l2norm", False),
                             ("norm_plain_w", "norm_offset", False)):
        s2 = copy.copy(spec)
        setattr(s2, attr, value)
        out[key] = (s2, p)
    full = copy.copy(spec)
    full.R = spec.HD
    full.rope = {"global": (ref.rope_inv_freq(spec.HD, spec.theta, None), 1.0)}
    full.mrope_section = None
    out["rope_full_head"] = (full, p)
    for key, attr, value in (("decay", "linear_decay", False), ("beta", "linear_beta", False),
                             ("A_log_as_A", "linear_A_exp", False)):
        s2 = copy.copy(spec)
        setattr(s2, attr, value)
        out[key] = (s2, p)
    out["dt_bias"] = (spec, {n: (torch.zeros_like(t) if n.endswith(".linear_attn.dt_bias") else t)
                             for n, t in p.items()})
    reset = copy.copy(spec)
    reset.linear_reset_chunks = True
    out["state_reset_per_chunk"] = (reset, p)
    if spec.lin_NV > spec.lin_NK:
        tiled = copy.copy(spec)
        tiled.linear_head_map = "tile"
        out["head_map_tiled"] = (tiled, p)
    if spec.linear_proj == "qkvz":
        blocks = copy.copy(spec)
        blocks.linear_proj = "qkvz_blocks"
        out["qkvz_blocks"] = (blocks, p)
    if spec.num_experts:
        unnormed, ungated = copy.copy(spec), copy.copy(spec)
        unnormed.norm_topk_prob = False
        ungated.shared_gate_applied = False
        out["router_unnormalised"] = (unnormed, p)
        out["shared_expert_gate"] = (ungated, p)
        if spec.expert_naming == "stacked":
            swapped = {n: (torch.cat(t.chunk(2, dim=1)[::-1], dim=1) if n.endswith(".mlp.experts.gate_up_proj") else t)
                       for n, t in p.items()}
            out["gate_up_swapped"] = (spec, swapped)
    return out


def hybrid_description(spec, p, golden):
    """Extra golden.json model keys of Qwen3-Next / Qwen3.5 / Qwen3.5-MoE: the layer types and where they come from, the
    norms, the gated attention and its partial RoPE (rotary_dim, theta, inverse frequencies, the mrope sections), the
    linear attention's sizes and tensor layout, over prompt 4's tokens per linear layer the decays exp(g) ([min, median,
    max]) and beta ([min, max]), the largest |logit| difference between the chunked (64) and the recurrent form of the
    gated delta rule over every prompt (`linear_chunked_vs_recurrent`; build_one bumps the seed past
    MAX_LINEAR_FORM_DIFF), the router and
    expert layout with experts, the stand-in tensors, and how much prompt 4's logits would change under each of
    hybrid_what_ifs (`<name>_effect_prompt4`, each > 1e-2); besides the MoE keys family_description adds."""
    ids, trace, logits = prompt4_forward(spec, p, golden)
    cfg = spec.text_cfg
    rp = cfg.get("rope_parameters")
    linear = [l for l in range(spec.L) if spec.layer_linear[l]]
    recurrent = copy.copy(spec)
    recurrent.linear_recurrent = True
    form = max(float((ref.forward(spec, p, torch.tensor([e["input_ids"]]), capture=False)[0] -
                      ref.forward(recurrent, p, torch.tensor([e["input_ids"]]), capture=False)[0]).abs().max())
               for e in golden["prompts"])
    assert len(ids) > 2 * spec.linear_chunk, "prompt 4 must cross two chunk boundaries"
    if spec.linear_proj == "qkvz":
        layout = ("in_proj_qkvz (2 NK DK + 2 NV DV, H) interleaved per key head: [q DK, k DK, v (NV/NK) DV, "
                  "z (NV/NK) DV] x NK; in_proj_ba (2 NV, H): [b NV/NK, a NV/NK] x NK")
    else:
        layout = "in_proj_qkv (2 NK DK + NV DV, H) as [q, k, v]; in_proj_z (NV DV, H); in_proj_b, in_proj_a (NV, H)"
    out = {"layer_types": spec.layer_types,
           "layer_types_from": "layer_types" if "layer_types" in cfg else "full_attention_interval",
           "norms": "input_layernorm, post_attention_layernorm, q_norm / k_norm (head_dim) and the final norm: "
                    "x rsqrt(mean(x^2) + eps) (1 + w) (Qwen3NextRMSNorm = Gemma3RMSNorm); linear_attn.norm: "
                    "x rsqrt(mean(x^2) + eps) w silu(z) over each value head (Qwen3NextRMSNormGated)",
           "rms_norm_eps": spec.eps,
           "attn_output_gate": "q_proj (2 heads head_dim, H): per head head_dim query rows then head_dim gate rows; "
                               "the attention output times sigmoid(gate) before o_proj",
           "rotary_dim": spec.R, "rope_theta": spec.theta,
           "rope_from": "rope_parameters" if rp else "rope_theta, partial_rotary_factor",
           "rope_layout": "rotate-half over the first rotary_dim dims of each head: pairs (i, i + rotary_dim / 2); the "
                          "rest passes",
           "rope_inv_freq": [float(x) for x in spec.inv_freq],
           "mrope_section": spec.mrope_section,
           "linear_num_key_heads": spec.lin_NK, "linear_num_value_heads": spec.lin_NV,
           "linear_key_head_dim": spec.lin_DK, "linear_value_head_dim": spec.lin_DV,
           "linear_conv_kernel_dim": spec.lin_K,
           "linear_conv_dim": 2 * spec.lin_NK * spec.lin_DK + spec.lin_NV * spec.lin_DV,
           "linear_projections": layout,
           "linear_rule": "conv1d (depthwise, causal, no bias) + SiLU over [q, k, v]; q, k l2-normed (eps 1e-6), q x "
                          "DK^-0.5; beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias); value head j reads key "
                          "head j // (NV / NK); S = S exp(g) + k (beta (v - S^T k))^T, out = S^T q",
           "linear_chunk_size": spec.linear_chunk,
           "linear_chunked_vs_recurrent": float("%.3g" % form),
           "prompt4_tokens": len(ids),
           "decay_prompt4": {str(l): [round(float(trace["linear_decay"][l].min()), 6),
                                      round(float(trace["linear_decay"][l].median()), 6),
                                      round(float(trace["linear_decay"][l].max()), 6)] for l in linear},
           "beta_prompt4": {str(l): [round(float(trace["linear_beta"][l].min()), 6),
                                     round(float(trace["linear_beta"][l].max()), 6)] for l in linear},
           "stand_in_tensors": sorted(n for n in p if n.startswith(("mtp.", "model.visual.")))}
    if spec.num_experts:
        out.update({"router": "p = softmax(h W^T) in fp32 over all experts; the top-k p, %s" % (
                        "renormalised over the k" if spec.norm_topk_prob else "not renormalised"),
                    "expert_layout": ("stacked: mlp.experts.gate_up_proj (E, 2F, H; per expert the gate rows, then "
                                      "the up rows), mlp.experts.down_proj (E, H, F)"
                                      if spec.expert_naming == "stacked" else
                                      "per expert: mlp.experts.{e}.gate_proj / up_proj / down_proj"),
                    "shared_expert_intermediate_size": spec.shared_intermediate,
                    "shared_expert_gate": "sigmoid(h mlp.shared_expert_gate.weight^T) times mlp.shared_expert(h)"})
    out.update(what_if_effects(spec.arch, hybrid_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


def qwen3_vl_moe_what_ifs(spec, p):
    """Qwen3-VL-MoE's what-ifs, name -> (spec, params), each a mistake an engine could make with the released tensors:
    `router_unnormalised` (the top-k probabilities not divided by their sum: a reader of norm_topk_prob, or
    Qwen2-MoE's default), `gate_up_swapped` (gate_up_proj's column halves read as up, then gate), `gate_up_interleaved`
    (gate the even columns and up the odd ones, gpt-oss's reading of its own (E, H, 2F) tensor),
    `experts_untransposed` (the stored bytes of gate_up_proj (E, H, 2F) / down_proj (E, F, H) taken as transformers
    5's in-memory (E, 2F, H) / (E, H, F) and used as F.linear: the Transpose(1, 2) of its conversion_mapping.py left
    out)."""
    out = {}
    unnormed = copy.copy(spec)
    unnormed.norm_topk_prob = False
    out["router_unnormalised"] = (unnormed, p)
    for key, reading in (("gate_up_swapped", "swapped"), ("gate_up_interleaved", "interleaved"),
                         ("experts_untransposed", "untransposed")):
        s2 = copy.copy(spec)
        s2.fused_reading = reading
        out[key] = (s2, p)
    return out


def qwen3_vl_moe_description(spec, p, golden):
    """Extra golden.json model keys of Qwen3-VL-MoE: the weight prefix, the multimodal RoPE's sections, the MoE layers
    and where they come from, the router, the expert layout and its shapes, the stand-in tensors, and how much prompt
    4's logits would change under each of qwen3_vl_moe_what_ifs (`<name>_effect_prompt4`, each > 1e-2); besides the MoE
    keys family_description adds."""
    assert spec.expert_naming == "fused_transposed", "the fixture stands for the released (fused, transposed) experts"
    ids = golden["prompts"][4]["input_ids"]
    logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    cfg = spec.text_cfg
    E, H, Fm = spec.num_experts, spec.H, spec.moe_intermediate
    moe = [l for l in range(spec.L) if spec.layer_moe[l]]
    out = {"weight_prefix": spec.prefix, "rope_theta": spec.theta, "mrope_section": spec.mrope_section,
           "mrope_interleaved": spec.mrope_interleaved,
           "rope_inv_freq": [float(x) for x in spec.inv_freq],
           "moe_layer_rule": "MoE where l not in mlp_only_layers %s and (l + 1) %% decoder_sparse_step %d == 0; else a "
                             "dense mlp.gate_proj / up_proj / down_proj of intermediate_size %d" % (
                                 cfg["mlp_only_layers"], cfg["decoder_sparse_step"], spec.F),
           "router": "p = softmax(h mlp.gate.weight^T) in fp32 over all experts; the top-k p, always renormalised over "
                     "the k (norm_topk_prob not read)",
           "expert_layout": "fused and transposed, used as x @ W: mlp.experts.gate_up_proj (E, H, 2F), gate_up = x @ "
                            "gate_up_proj[e], gate = gate_up[:, :F], up = gate_up[:, F:]; mlp.experts.down_proj (E, F, "
                            "H), out = (silu(gate) up) @ down_proj[e]",
           "expert_shapes": {"gate_up_proj": [E, H, 2 * Fm], "down_proj": [E, Fm, H]},
           "router_weight": ref.router_weight_name(spec, spec.prefix + "layers.%d." % moe[0]),
           "stand_in_tensors": sorted(n for n in p if n.startswith("model.visual."))}
    out.update(what_if_effects(spec.arch, qwen3_vl_moe_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


def gemma_what_ifs(spec, p):
    """Gemma 1's what-ifs, name -> (spec, params): `norm_plain_w` (every (1 + w) RMSNorm read as plain w),
    `embed_scale` (the embeddings not multiplied by sqrt(hidden_size)), `activation_silu` (Llama's SwiGLU in place of
    the GeGLU). The ones that change the logits less (gemma_description records them without the 1e-2 floor):
    gemma_soft_what_ifs."""
    plain, unscaled, silu = (copy.copy(spec) for _ in range(3))
    plain.norm_offset = False
    unscaled.embed_scale = None
    silu.act = "silu"
    return {"norm_plain_w": (plain, p), "embed_scale": (unscaled, p), "activation_silu": (silu, p)}


def gemma_soft_what_ifs(spec, p):
    """Gemma 1's readings that differ from the golden files by less, name -> (spec, params): `gelu_exact` (the exact erf
    GELU of config.json's "hidden_act": "gelu", as transformers >= 4.48's GemmaMLP = LlamaMLP reads it, in place of the
    tanh approximation that 4.39-4.47 substitute when hidden_activation is absent), `embed_scale_fp32` (sqrt(H) in
    fp32, 6.9282 for H = 48, not rounded to the bf16 checkpoint's 6.9375: transformers running a bf16 checkpoint in
    fp32)."""
    exact, fp32 = copy.copy(spec), copy.copy(spec)
    exact.act = "gelu"
    fp32.embed_scale = float(torch.tensor(spec.H ** 0.5, dtype=torch.float32))
    return {"gelu_exact": (exact, p), "embed_scale_fp32": (fp32, p)}


def gemma_description(spec, p, golden):
    """Extra golden.json model keys of Gemma 1 (GemmaForCausalLM): the weight prefix, the embedding scale, the score
    scale, the activation and where it comes from, the norms, the head width against hidden / heads, how much prompt
    4's logits would change under each of gemma_what_ifs (`<name>_effect_prompt4`, each > 1e-2) and under each of
    gemma_soft_what_ifs (`<name>_effect_prompt4`, each > 1e-4, the golden tests' logit tolerance), and for those how
    many golden prompts would get other greedy ids (`<name>_greedy_prompts_changed`, no cache, as reference.greedy)."""
    cfg = spec.cfg
    assert spec.NH * spec.HD != spec.H and "hidden_activation" not in cfg and cfg["hidden_act"] == "gelu"
    ids = golden["prompts"][4]["input_ids"]
    logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    prefix, _ = ref.weight_names(spec, p)
    out = {"weight_prefix": prefix, "embed_scale": spec.embed_scale, "attn_scale": spec.attn_scale,
           "hidden_act_in_config": cfg["hidden_act"], "hidden_activation_in_config": None,
           "activation": "gelu_pytorch_tanh (GemmaMLP, transformers 4.39-4.47: hidden_activation absent -> "
                         "gelu_pytorch_tanh, hidden_act ignored; 4.48+ would read hidden_act: "
                         "gelu_exact_effect_prompt4)",
           "norms": "input_layernorm, post_attention_layernorm and the final norm: x rsqrt(mean(x^2) + eps) (1 + w) in "
                    "fp32",
           "layer": "Llama's: x + attn(input_layernorm(x)), then x + mlp(post_attention_layernorm(x)); no sandwich "
                    "norms, no softcaps, no sliding window",
           "q_width": spec.NH * spec.HD,
           "head_dim_note": "head_dim %d listed: q_proj (%d x %d, %d), k_proj / v_proj (%d x %d, %d); hidden / heads "
                            "= %d would not fit these shapes" % (spec.HD, spec.NH, spec.HD, spec.H, spec.NKV, spec.HD,
                                                                  spec.H, spec.H // spec.NH)}
    out.update(what_if_effects("Gemma", gemma_what_ifs(spec, p), torch.tensor([ids]), logits))
    for key, (s2, p2) in gemma_soft_what_ifs(spec, p).items():
        effect = float((ref.forward(s2, p2, torch.tensor([ids]), capture=False)[0] - logits).abs().max())
        assert effect > 1e-4, "Gemma's %s would not change the logits beyond the tests' tolerance: %g" % (key, effect)
        changed = sum(ref.greedy(s2, p2, e["input_ids"], golden["max_new_tokens"], (), False)[0] != e["greedy_ids"]
                      for e in golden["prompts"])
        out.update({key + "_effect_prompt4": float("%.3g" % effect), key + "_greedy_prompts_changed": changed})
    return out


def ministral3_what_ifs(spec, p):
    """Ministral 3's what-ifs, name -> (spec, params), each a reading an engine could take of the release:
    `query_scale` (no query scaling: beta 0, Mistral's attention), `query_scale_keys` (the keys multiplied by their
    position's factor too), `query_scale_no_log` (1 + beta floor(position / period), the log left out),
    `query_scale_position_plus_one` (the factor of position + 1: positions counted from 1, or the sequence length
    taken for the last position), `rope_scaling` (plain RoPE at rope_theta in place of YaRN), `yarn_attention_factor`
    (cos and sin times YaRN's default 0.1 ln(factor) + 1 in place of mscale(factor, mscale) / mscale(factor,
    mscale_all_dim) = 1: the mscale keys ignored)."""
    unscaled, keys, no_log, plus_one, plain, yarn_default = (copy.copy(spec) for _ in range(6))
    unscaled.query_scale_beta = 0.0
    keys.query_scale_keys = True
    no_log.query_scale_log = False
    plus_one.query_scale_offset = 1
    plain.rope = {"global": (ref.rope_inv_freq(spec.R, spec.theta, None), 1.0)}
    yarn_default.rope = {"global": (spec.inv_freq, 0.1 * math.log(spec.rope_scaling["factor"]) + 1.0)}
    return {"query_scale": (unscaled, p), "query_scale_keys": (keys, p), "query_scale_no_log": (no_log, p),
            "query_scale_position_plus_one": (plus_one, p), "rope_scaling": (plain, p),
            "yarn_attention_factor": (yarn_default, p)}


def ministral3_description(spec, p, golden):
    """Extra golden.json model keys of Ministral 3 (a Mistral3ForConditionalGeneration with a text_config of model_type
    ministral3): the weight prefix, the RoPE (rope_parameters as config.json has them, theta, YaRN's attention factor,
    inverse frequencies and bands), the query scaling (beta, period, the rule, the factor at every period start up to
    the longest sequence the goldens run, how far each prompt's sequence reaches), the stand-in tensors, and how much
    prompt 4's logits would change under each of ministral3_what_ifs (`<name>_effect_prompt4`, each > 1e-2)."""
    ids = golden["prompts"][4]["input_ids"]
    logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    prefix, head = ref.weight_names(spec, p)
    period, max_new = spec.query_scale_period, golden["max_new_tokens"]
    kept, ramped, divided = yarn_bands(spec)
    assert kept and ramped and divided, "the YaRN bands must all be present: %d kept, %d ramped, %d divided" % (
        kept, ramped, divided)
    assert spec.rope_attention_factor == 1.0 and spec.query_scale_beta > 0
    # the tokens fed to the model: the prompt, then every generated token but the last (positions up to len + max_new
    # - 2); the period each prompt's last token and the last fed token fall in
    reach = [[(len(e["input_ids"]) - 1) // period, (len(e["input_ids"]) + max_new - 2) // period]
             for e in golden["prompts"]]
    assert all(b > a for a, b in reach) and min(b for _, b in reach) >= 2, "every prompt must cross a period"
    starts = torch.arange(0, (max(b for _, b in reach) + 1) * period, period)
    factors = ref.llama4_attn_scale(spec, starts.unsqueeze(0)).flatten()
    out = {"weight_prefix": prefix, "lm_head": head, "text_model_type": spec.text_cfg["model_type"],
           "rope_parameters": spec.text_cfg["rope_parameters"], "rope_theta": spec.theta,
           "rope_attention_factor": spec.rope_attention_factor, "rope_inv_freq": [float(x) for x in spec.inv_freq],
           "yarn_pairs_kept_ramped_divided": [kept, ramped, divided],
           "query_scale_beta": spec.query_scale_beta, "query_scale_period": period,
           "query_scale_rule": "after RoPE every query (not the keys) times 1 + llama_4_scaling_beta ln(1 + "
                               "floor(position / original_max_position_embeddings)), positions from 0 "
                               "(Ministral3Attention.forward, _get_llama_4_attn_scale); fp32",
           "query_scale_per_period": [[int(x), float(f)] for x, f in zip(starts, factors)],
           "query_scale_periods_reached": reach,
           "q_width": spec.NH * spec.HD,
           "stand_in_tensors": sorted(n for n in p if n.startswith(("model.vision_tower.",
                                                                    "model.multi_modal_projector.")))}
    out.update(what_if_effects("Ministral 3", ministral3_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


def glm_v_full_head(spec):
    """A copy of a GLM-4.1V / GLM-4.5V spec whose RoPE turns the whole head (rotary_dim = head_dim:
    partial_rotary_factor 1, Glm4vTextConfig's reading of an absent key) with the plain RoPE at rope_theta (for text the
    multimodal one is the same; its sections would not fit the wider RoPE)."""
    s2 = copy.copy(spec)
    s2.R, s2.mrope_section = spec.HD, None
    s2.rope = {"global": (ref.rope_inv_freq(spec.HD, spec.theta, None), 1.0)}
    return s2


def glm_v_what_ifs(spec, p):
    """GLM-4.1V's / GLM-4.5V's what-ifs, name -> (spec, params), each a reading an engine could take of the release.
    GLM-4.1V (Glm4vForConditionalGeneration): `rope_rotate_half` (the rotary dims paired (i, i + rotary_dim / 2) as in
    GLM-4.5V / Llama, not (2i, 2i + 1)), `rope_full_head` (RoPE over all of head_dim: partial_rotary_factor 1),
    `qkv_bias` (no q/k/v_proj biases: the config's attention_bias taken as GLM-4's flag when false, or the biases
    dropped), `post_norms` (no post_self_attn_layernorm / post_mlp_layernorm: Llama's two norms,
    post_attention_layernorm as the MLP's input norm). GLM-4.5V (Glm4vMoeForConditionalGeneration):
    `rope_adjacent_pairs` (GLM-4.1V's pairing (2i, 2i + 1) in place of rotate-half), `rope_full_head`, `softmax_router`
    (the scores s a softmax over the experts in place of the sigmoid: Qwen-MoE's router with the correction bias and
    groups kept), `shared_expert` (no mlp.shared_experts added). The router's other what-ifs (correction bias, group limit, scaling) are
    sigmoid_router_description's."""
    if spec.arch == ref.GLM4V:
        halves, unbiased, plain = copy.copy(spec), copy.copy(spec), copy.copy(spec)
        halves.rope_interleaved = False
        unbiased.qkv_bias = False
        plain.glm4_norms = False
        return {"rope_rotate_half": (halves, p), "rope_full_head": (glm_v_full_head(spec), p),
                "qkv_bias": (unbiased, p), "post_norms": (plain, p)}
    pairs, softmax, unshared = copy.copy(spec), copy.copy(spec), copy.copy(spec)
    pairs.rope_interleaved = True
    softmax.router_score = "softmax"
    unshared.shared_intermediate = 0
    return {"rope_adjacent_pairs": (pairs, p), "rope_full_head": (glm_v_full_head(spec), p),
            "softmax_router": (softmax, p), "shared_expert": (unshared, p)}


def glm_v_description(spec, p, golden):
    """Extra golden.json model keys of GLM-4.1V / GLM-4.5V: the weight prefix and head, the text model type, the head
    width and where it comes from, the RoPE (rotary dims, pairing, theta, inverse frequencies, mrope sections as
    config.json has them), the layer's norms, the q/k/v biases, for GLM-4.5V the dense and MoE layers and the expert
    layout, the stand-in tensors, and how much prompt 4's logits would change under each of glm_v_what_ifs
    (`<name>_effect_prompt4`, each > 1e-2); besides the MoE keys family_description adds for GLM-4.5V."""
    ids = golden["prompts"][4]["input_ids"]
    logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    prefix, head = ref.weight_names(spec, p)
    text = spec.text_cfg
    glm4v = spec.arch == ref.GLM4V
    assert spec.R == spec.HD // 2 and sum(spec.mrope_section) == spec.R // 2 and not spec.mrope_interleaved
    assert spec.qkv_bias and not spec.o_bias and not spec.qk_norm and not spec.tied
    out = {"weight_prefix": prefix, "lm_head": head, "text_model_type": text["model_type"],
           "head_dim_rule": ("hidden_size // num_attention_heads (Glm4vTextAttention; no head_dim key)" if glm4v else
                             "head_dim %d listed (Glm4vMoeTextAttention's getattr; hidden / heads = %d)" % (
                                 spec.HD, spec.H // spec.NH)),
           "rotary_dim": spec.R, "rope_theta": spec.theta, "rope_inv_freq": [float(x) for x in spec.inv_freq],
           "rope_pairing": ("adjacent (2i, 2i + 1) over the first rotary_dim dims (rotate_half_llm, cos / sin "
                            "repeat_interleave'd)" if glm4v else
                            "rotate-half (i, i + rotary_dim / 2) over the first rotary_dim dims"),
           "rope_scaling_in_config": text["rope_scaling"], "mrope_section": spec.mrope_section,
           "mrope_text": "three equal position rows: the plain RoPE",
           "qkv_bias": "q_proj / k_proj / v_proj biases, no o_proj bias" + (
               " (bias=True hard-coded; attention_bias not read)" if glm4v else " (attention_bias true)"),
           "norms": ("input_layernorm, post_self_attn_layernorm (attention output), post_attention_layernorm (MLP "
                     "input), post_mlp_layernorm (MLP output)" if glm4v else
                     "input_layernorm, post_attention_layernorm (MLP input)"),
           "stand_in_tensors": sorted(n for n in p if n.startswith("model.visual."))}
    if glm4v:
        out["mlp"] = "fused mlp.gate_up_proj (2F, H), first F rows gate; mlp.down_proj"
    else:
        out.update({"dense_layers": [l for l in range(spec.L) if not spec.layer_moe[l]],
                    "dense_mlp": "mlp.gate_proj / up_proj / down_proj of intermediate_size %d" % spec.F,
                    "expert_layout": "per expert: mlp.experts.{e}.gate_proj / up_proj / down_proj (%d, %d) / (%d, %d) "
                                     "/ (%d, %d); mlp.gate.weight (%d, %d); mlp.gate.e_score_correction_bias (%d,) "
                                     "F32; mlp.shared_experts.gate_proj / up_proj / down_proj of %d" % (
                                         spec.moe_intermediate, spec.H, spec.moe_intermediate, spec.H, spec.H,
                                         spec.moe_intermediate, spec.num_experts, spec.H, spec.num_experts,
                                         spec.shared_intermediate),
                    "mtp_layers": 0})
    out.update(what_if_effects(spec.arch, glm_v_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


def glm_rope_description(spec, p, golden):
    """Extra golden.json model keys of GLM: the rotary dims, and how much prompt 4's logits would
    change were the rotary dims paired (i, i + R/2) as in Llama instead of (2i, 2i + 1)."""
    halves = copy.copy(spec)
    halves.rope_interleaved = False
    ids = torch.tensor([golden["prompts"][4]["input_ids"]])
    effect = float((ref.forward(spec, p, ids, capture=False)[0] -
                    ref.forward(halves, p, ids, capture=False)[0]).abs().max())
    assert effect > 1e-2, "the interleaved pairing would not change the logits: %g" % effect
    return {"rotary_dim": spec.R, "rope_interleaved": True, "rope_layout_effect_prompt4": round(effect, 4)}


PHIMOE_WHAT_IFS = ("rope_attention_factor", "lm_head_bias", "norm_bias", "norm_mean_subtraction", "qkv_bias",
                   "o_proj_bias", "router_mixtral", "router_unmasked", "router_threshold_eps",
                   "router_second_keeps_first")


def phimoe_what_ifs(spec, p):
    """PhiMoE's what-ifs, name -> (spec, params), each a reading an engine could take of the release:
    `rope_attention_factor` (cos and sin times the attention factor _compute_longrope_parameters computes, sqrt(1 +
    ln(max / original) / ln(original)), in place of rope_scaling's short_mscale / long_mscale: Phi-3's rule),
    `lm_head_bias` (no lm_head.bias), `norm_bias` (the three LayerNorms without their biases), `norm_mean_subtraction`
    (RMSNorms with the same weights and biases in place of the LayerNorms), `qkv_bias` / `o_proj_bias` (those biases
    dropped), `router_mixtral` (Mixtral's router: the top 2 of the softmax over all the logits, renormalised),
    `router_unmasked` (sparsemixer without its masks: w1 the softmax over all the logits at the first expert, w2 the
    softmax over the rest at the second), `router_threshold_eps` (the masks' threshold jitter_eps instead of 2 x
    jitter_eps), `router_second_keeps_first` (the second softmax over the original scores, the first expert's kept).
    (The second mask's test taken from the scores with the first expert's at -inf instead of the original scores masks
    the same entries: no what-if; check_reference.py shows it.)"""
    out = {}
    s = copy.copy(spec)
    s.rope = {k: (inv, spec.longrope_attention_factor) for k, (inv, _) in spec.rope.items()}
    out["rope_attention_factor"] = s
    for key, attr, value in (("lm_head_bias", "lm_head_bias", False), ("norm_bias", "norm_bias", False),
                             ("norm_mean_subtraction", "layer_norm", False), ("qkv_bias", "qkv_bias", False),
                             ("o_proj_bias", "o_bias", False), ("router_unmasked", "sparsemixer_masks", False),
                             ("router_threshold_eps", "sparsemixer_threshold", 1.0),
                             ("router_second_keeps_first", "sparsemixer_second_excludes_first", False)):
        s = copy.copy(spec)
        setattr(s, attr, value)
        out[key] = s
    s = copy.copy(spec)
    s.router, s.norm_topk_prob = "softmax", True
    out["router_mixtral"] = s
    assert tuple(sorted(out)) == tuple(sorted(PHIMOE_WHAT_IFS))
    return {k: (out[k], p) for k in PHIMOE_WHAT_IFS}


def phimoe_description(spec, p, golden):
    """Extra golden.json model keys of PhiMoE: the norms, biases and RoPE as read (the config's rope_scaling, the
    mscale used, the computed attention factor not used, inverse frequencies, which factors the golden sequences take),
    the router and its settings, how many experts each of sparsemixer's two softmaxes keeps (mean and histogram over
    every prompt and fed-back token and layer), the expert and mask gaps apart (prompt tokens, fed-back tokens), the
    expert layout, and how much prompt 4's logits would change under each of phimoe_what_ifs (`<name>_effect_prompt4`,
    each > 1e-2)."""
    ids = golden["prompts"][4]["input_ids"]
    logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    after = spec.long_rope_after
    longest = max(len(e["input_ids"]) for e in golden["prompts"]) + golden["max_new_tokens"]
    assert longest - 1 <= after, "a golden sequence would reach the long factors"
    E = spec.num_experts
    hist = [[0] * (E + 1), [0] * (E + 1)]
    expert_gap, mask_gap = [float("inf")] * 2, [float("inf")] * 2
    for e in golden["prompts"]:
        trace, n = {}, len(e["input_ids"])
        ref.forward(spec, p, torch.tensor([e["input_ids"] + e["greedy_ids"][:-1]]), capture=False, trace=trace)
        for l in range(spec.L):
            for i, kept in enumerate(trace["sparsemixer_kept"][l].T):
                for c in kept.tolist():
                    hist[i][c] += 1
            logits_l = trace["router_logits"][l]
            for i, part in enumerate((logits_l[:n], logits_l[n:])):
                top = part.sort(dim=-1, descending=True).values
                expert_gap[i] = min(expert_gap[i], float((top[:, 1] - top[:, 2]).min()))
                mask_gap[i] = min(mask_gap[i], ref.sparsemixer_mask_gap(spec, part))
    mean = [sum(c * k for c, k in enumerate(h)) / sum(h) for h in hist]
    assert min(mean) > 1.5, "sparsemixer's masks keep too few experts: %s" % mean
    rs = spec.rope_scaling
    out = {"norms": "nn.LayerNorm (weight and bias, eps rms_norm_eps) as input_layernorm, post_attention_layernorm "
                    "and model.norm",
           "norm_eps": spec.eps, "attention_bias": "q_proj, k_proj, v_proj and o_proj biases",
           "lm_head_bias": True, "rope_scaling_in_config": rs,
           "rope_attention_factor": spec.rope_attention_factor,
           "rope_long_mscale": spec.rope["long"][1],
           "longrope_computed_attention_factor": spec.longrope_attention_factor,
           "rope_inv_freq": [float(x) for x in spec.inv_freq],
           "rope_factors_used": "short_factor", "long_rope_after": after, "longest_sequence": longest,
           "router": "sparsemixer (eval): w1 = softmax(masked scores)[argmax], w2 = softmax(masked scores with the "
                     "first at -inf)[their argmax], not renormalised",
           "router_jitter_noise": spec.jitter_eps,
           "sparsemixer_threshold": spec.sparsemixer_threshold * spec.jitter_eps,
           "sparsemixer_kept_mean": [round(x, 4) for x in mean],
           "sparsemixer_kept_histogram": [h[1:] for h in hist],
           "routing_min_expert_gap": [round(x, 6) for x in expert_gap],
           "routing_min_mask_gap": [round(x, 6) for x in mask_gap],
           "expert_layout": "per expert: block_sparse_moe.experts.{e}.w1 / w3 (%d, %d), w2 (%d, %d); "
                            "block_sparse_moe.gate.weight (%d, %d)" % (spec.moe_intermediate, spec.H, spec.H,
                                                                       spec.moe_intermediate, E, spec.H)}
    out.update(what_if_effects(spec.arch, phimoe_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


LLAMA4_WHAT_IFS = ("router_scores_on_output", "attn_temperature_tuning", "temperature_cache_position", "qk_l2_norm",
                   "qk_l2_norm_on_nope", "rope_rotate_half", "router_softmax", "rope_scaling", "shared_expert")


def llama4_what_ifs(spec, p):
    """Llama 4's what-ifs, name -> (spec, params), each a reading an engine could take of the release:
    `router_scores_on_output` (each chosen expert's sigmoid score multiplied onto its output, Mixtral's way, instead of
    onto its input: silu makes the two differ), `attn_temperature_tuning` (no temperature tuning of the NoPE layers'
    queries), `temperature_cache_position` (the factor of cache_position instead of cache_position + 1: floor(pos /
    floor_scale), one position later at every step), `qk_l2_norm` (no L2 norm of q and k), `qk_l2_norm_on_nope` (the L2
    norm on the NoPE layers too: use_qk_norm read without use_rope), `rope_rotate_half` (the rotate-half pairs (i, i +
    HD/2) instead of apply_rotary_emb's adjacent (2i, 2i + 1)), `router_softmax` (the top-k logits' softmax, renormalised
    over the k, in place of their sigmoids; still on the experts' inputs), `rope_scaling` (plain RoPE: the llama3
    scaling ignored), `shared_expert` (the shared expert left out)."""
    out = {}
    for key, attr, value in (("router_scores_on_output", "llama4_scores_on_input", False),
                             ("attn_temperature_tuning", "layer_temperature", [False] * spec.L),
                             ("temperature_cache_position", "temperature_offset", 0.0),
                             ("qk_l2_norm", "layer_qk_l2norm", [False] * spec.L),
                             ("qk_l2_norm_on_nope", "layer_qk_l2norm", [True] * spec.L),
                             ("rope_rotate_half", "rope_interleaved", False),
                             ("router_softmax", "llama4_router_score", "softmax"),
                             ("rope_scaling", "rope", {"global": (ref.rope_inv_freq(spec.R, spec.theta, None), 1.0)}),
                             ("shared_expert", "shared_intermediate", 0)):
        s2 = copy.copy(spec)
        setattr(s2, attr, value)
        out[key] = s2
    assert tuple(sorted(out)) == tuple(sorted(LLAMA4_WHAT_IFS))
    return {k: (out[k], p) for k in LLAMA4_WHAT_IFS}


def llama4_temperature_steps(spec, last):
    """[[position, factor]] of Llama 4's query temperature at position 0 and at every position up to `last` where it
    changes (pos + 1 a multiple of floor_scale), from reference.llama4_temperature_scales."""
    positions = torch.arange(last + 1).unsqueeze(0)
    factors = ref.llama4_temperature_scales(spec, positions).flatten()
    steps = [0] + [x for x in range(1, last + 1) if float(factors[x]) != float(factors[x - 1])]
    return [[x, float(factors[x])] for x in steps]


def llama4_description(spec, p, golden):
    """Extra golden.json model keys of Llama 4 (Llama4ForConditionalGeneration's language model): the weight prefix and
    head, the text model type, the layers (RoPE or NoPE, chunked or full attention, the chunk size against the longest
    golden sequence, where the L2 q/k norm and the temperature tuning apply), the RoPE (theta, rope_scaling as
    config.json has it, inverse frequencies, the llama3 bands and which pairs are divided, the pairing), the temperature
    (floor_scale, attn_scale, the rule, its value at every step up to the last position the goldens feed), the MoE and
    dense layers, the router, the expert layout and shapes, the shared expert, the stand-in tensors, and how much
    prompt 4's logits would change under each of llama4_what_ifs (`<name>_effect_prompt4`, each > 1e-2); besides the
    MoE keys family_description adds."""
    ids = golden["prompts"][4]["input_ids"]
    logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    prefix, head = ref.weight_names(spec, p)
    text = spec.text_cfg
    longest = max(len(e["input_ids"]) for e in golden["prompts"]) + golden["max_new_tokens"]
    assert longest <= spec.attention_chunk_size, "a golden sequence would reach a second attention chunk"
    assert any(spec.layer_use_rope) and not all(spec.layer_use_rope), "Llama 4's fixture: RoPE and NoPE layers"
    assert spec.layer_chunked == spec.layer_use_rope and spec.layer_qk_l2norm == spec.layer_use_rope
    assert spec.layer_temperature == [not r for r in spec.layer_use_rope]
    kept, smoothed, divided = llama3_bands(spec)
    plain = ref.rope_inv_freq(spec.R, spec.theta, None)
    divided_pairs = [i for i in range(spec.R // 2) if not torch.isclose(spec.inv_freq[i], plain[i], rtol=1e-6, atol=0.0)]
    assert kept and divided and not smoothed, "llama3 with low = high freq factor: %d kept, %d smoothed, %d divided" % (
        kept, smoothed, divided)
    E, H, Fm = spec.num_experts, spec.H, spec.moe_intermediate
    moe = [l for l in range(spec.L) if spec.layer_moe[l]]
    # the last position fed: every prompt's tokens, then its generated tokens but the last
    last = max(len(e["input_ids"]) for e in golden["prompts"]) + golden["max_new_tokens"] - 2
    out = {"weight_prefix": prefix, "lm_head": head, "text_model_type": text["model_type"],
           "layer_use_rope": spec.layer_use_rope,
           "layer_types": ["chunked_attention" if c else "full_attention" for c in spec.layer_chunked],
           "attention_chunk_size": spec.attention_chunk_size, "longest_sequence": longest,
           "chunked_attention": "a query sees the causal keys of its own chunk of attention_chunk_size positions "
                                "(create_chunked_causal_mask); every golden sequence fits one chunk: causal",
           "qk_norm": "Llama4TextL2Norm: x rsqrt(mean(x^2) + rms_norm_eps) over each q and k head's head_dim values, no "
                      "weight, after RoPE, on the layers with RoPE only (use_qk_norm and use_rope)",
           "layer_qk_l2norm": spec.layer_qk_l2norm, "rms_norm_eps": spec.eps,
           "attn_temperature_tuning": True, "temperature_floor_scale": spec.temperature_floor_scale,
           "temperature_attn_scale": spec.temperature_attn_scale, "layer_temperature": spec.layer_temperature,
           "temperature_rule": "on the NoPE layers, after the projections (no RoPE, no q/k norm there), every query (not "
                               "the keys) times log1p(floor((cache_position + 1) / floor_scale)) * attn_scale + 1, "
                               "cache_position the absolute position from 0; fp32",
           "temperature_per_step": llama4_temperature_steps(spec, last), "temperature_last_position": last,
           "rope_theta": spec.theta, "rope_scaling_in_config": text["rope_scaling"],
           "rope_inv_freq": [float(x) for x in spec.inv_freq],
           "llama3_pairs_kept_smoothed_divided": [kept, smoothed, divided], "llama3_divided_pairs": divided_pairs,
           "rope_pairing": "adjacent (2i, 2i + 1) as complex numbers times polar(1, position x inv_freq_i) "
                           "(apply_rotary_emb), over the whole head",
           "score_scale": spec.attn_scale,
           "moe_layer_rule": "MoE where l in moe_layers %s (listed; interleave_moe_layer_step %d gives the same), else "
                             "a dense feed_forward.gate_proj / up_proj / down_proj of intermediate_size_mlp %d" % (
                                 text["moe_layers"], text["interleave_moe_layer_step"], spec.F),
           "dense_layers": [l for l in range(spec.L) if not spec.layer_moe[l]],
           "router": "logits = h feed_forward.router.weight^T; the top-k LOGITS chosen; score = sigmoid(logit) for "
                     "them, 0 for the others, never renormalised; each chosen expert's input is h x its score",
           "expert_layout": "fused and transposed, used as x @ W: feed_forward.experts.gate_up_proj (E, H, 2F), "
                            "gate_up = x @ gate_up_proj[e], gate = gate_up[:, :F], up = gate_up[:, F:]; "
                            "feed_forward.experts.down_proj (E, F, H), out = (up silu(gate)) @ down_proj[e]; the "
                            "experts' outputs summed, plus the shared expert",
           "expert_shapes": {"gate_up_proj": [E, H, 2 * Fm], "down_proj": [E, Fm, H]},
           "router_weight": ref.router_weight_name(spec, prefix + "layers.%d." % moe[0]),
           "shared_expert_layout": "feed_forward.shared_expert.gate_proj / up_proj / down_proj of intermediate_size %d, "
                            "ungated, added to the experts' sum" % spec.shared_intermediate,
           "stand_in_tensors": sorted(n for n in p if n.startswith(("vision_model.", "multi_modal_projector.")))}
    out.update(what_if_effects(spec.arch, llama4_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


def wrapper_what_ifs(spec, p):
    """A LLaVA / InternVL wrapper's what-ifs, name -> (spec, params), each a reading an engine could take of the wrapper
    that misses what its text_config says: `rope_theta_default` (the RoPE at 10000, the default of a reader that looks
    for rope_theta at the top level, where LlavaConfig / InternVLConfig hold none), and per wrapped family
    `sliding_window` (mistral with sliding_window null: a window of 16 on every layer, as a reader that misses the
    text_config's null might keep one) or `qkv_bias` (qwen2: no q/k/v biases, the text model run as a Llama)."""
    plain = copy.copy(spec)
    plain.rope = {"global": (ref.rope_inv_freq(spec.R, 10000.0, None), 1.0)}
    out = {"rope_theta_default": (plain, p)}
    if spec.text_model_type == "mistral":
        assert spec.sliding_window is None
        window = copy.copy(spec)
        window.sliding_window, window.layer_sliding = 16, [True] * spec.L
        out["sliding_window"] = (window, p)
    if spec.qkv_bias:
        unbiased = copy.copy(spec)
        unbiased.qkv_bias = False
        out["qkv_bias"] = (unbiased, p)
    return out


def wrapper_description(spec, p, golden):
    """Extra golden.json model keys of a LLaVA / InternVL wrapper (reference.WRAPPERS): the text family it runs
    (text_config's model_type and its architecture), where its weights are (prefix, head), the stand-in vision tower /
    projector tensors, the text numbers the what-ifs turn on, and how much prompt 4's logits would change under each of
    wrapper_what_ifs (`<name>_effect_prompt4`, each > 1e-2)."""
    ids, _, logits = prompt4_forward(spec, p, golden)
    prefix, head = ref.weight_names(spec, p)
    stand_ins = sorted(n for n in p if not n.startswith(prefix) and n != head)
    assert stand_ins and all(n.startswith(("vision_tower.", "multi_modal_projector.", "model.vision_tower.",
                                           "model.multi_modal_projector.")) for n in stand_ins)
    out = {"text_model_type": spec.text_model_type, "text_architecture": ref.WRAPPED_TEXT[spec.text_model_type],
           "weight_prefix": prefix, "lm_head": head, "stand_in_tensors": stand_ins, "rope_theta": spec.theta,
           "qkv_bias": spec.qkv_bias, "q_width": spec.NH * spec.HD}
    out.update(what_if_effects(spec.arch, wrapper_what_ifs(spec, p), torch.tensor([ids]), logits))
    return out


# The families' own descriptions, merged into golden.json in this order, each where `applies` holds
# (ref.arch_applies: an architecture, a tuple of them, or a test of the spec).
FAMILY_DESCRIPTIONS = (
    (ref.GLM, glm_rope_description), ((ref.GRANITE, ref.GRANITE_HYBRID) + ref.GRANITE_MOE, granite_description),
    (ref.GRANITE_HYBRID, granite_hybrid_description), (ref.COHERE, cohere_description),
    (ref.SEED_OSS, seed_oss_description), (lambda s: s.mla, mla_description),
    ((ref.OLMO2, ref.OLMO3), olmo2_description), (ref.OLMOE, olmoe_description),
    (ref.MINIMAX_M2, minimax_m2_description), (ref.EXAONE4, exaone4_description), (ref.ERNIE, ernie_description),
    (ref.HYBRID, hybrid_description), (ref.QWEN3_VL_MOE, qwen3_vl_moe_description), (ref.GEMMA1, gemma_description),
    (lambda s: s.ministral3, ministral3_description), (ref.GLM_V, glm_v_description),
    (ref.PHIMOE, phimoe_description), (ref.LLAMA4, llama4_description),
    (ref.HUNYUAN_DENSE, hunyuan_dense_description), (ref.HUNYUAN_MOE, hunyuan_moe_description),
    (ref.LFM2, lfm2_description), (ref.LFM2_MOE, lfm2_moe_description), (ref.NEMOTRON_H, nemotron_h_description),
    (ref.ARCEE, arcee_description), (ref.DOTS1, dots1_description), (ref.APERTUS, apertus_description),
    (ref.GLM4_MOE_LITE, glm4_moe_lite_description), (ref.WRAPPERS, wrapper_description),
    (ref.GEMMA4, gemma4_description),
)


def build_one(root, name, arch, mtype, d, mat_dtype, norm_dtype, tok, first_seed):
    """Writes tests/fixtures/golden/<name>/ (under root) from the entry's seed, bumped until the
    margins (and for MoE models the routing gaps) pass; returns golden.json's contents."""
    from make_organism import write_golden, write_json
    folder = os.path.join(root, name)
    os.makedirs(folder, exist_ok=True)
    cfg = config_for(name, arch, mtype, d, tok, mat_dtype)
    spec = ref.Spec(cfg)
    if d.get("stacked_experts"):  # (load_model reads the layout from the file: ref.minimax_m2_expert_layout)
        spec.expert_naming = "stacked"
    assert spec.HD == d["HD"] and spec.NKV == d["NKV"] and spec.tied == d["tied"]
    write_json(os.path.join(folder, "config.json"), cfg)
    # (Qwen3-VL keeps its token ids in text_config only; MiniMax-M2's released config.json has none: its
    # generation_config.json does, here the tokenizer's <|im_end|>)
    ids = cfg if "eos_token_id" in cfg or "text_config" not in cfg else cfg["text_config"]
    eos_id = ids.get("eos_token_id", tok.specials["<|im_end|>"])
    eos = eos_id if isinstance(eos_id, list) else [eos_id]
    write_json(os.path.join(folder, "generation_config.json"), {
        "bos_token_id": ids.get("bos_token_id"), "do_sample": False, "eos_token_id": eos_id,
        "transformers_version": cfg["transformers_version"]})
    tok.write(folder, corpus.SYSTEM_PROMPT)
    lengths = [len(tok.encode(corpus.render_prompt(u))) for u in USERS]
    prompts = [tok.encode(corpus.render_prompt(u)) for u in USERS]
    # a derived entry (see `derived`) draws the source's weights with the source's seed, quantizes them and
    # searches the (unquantized) routers again on the quantized model, from the source's routers, redrawing
    # from its own seed's stream
    source = d.get("weights_from")
    attempts = MAX_ATTEMPTS_MOE if spec.num_experts else 1 if source else MAX_ATTEMPTS
    for attempt in range(attempts):
        seed = first_seed + attempt
        weight_seed = source[1] if source else seed
        params = random_params(spec, d, weight_seed, mat_dtype, norm_dtype, tok)
        if spec.num_experts:
            params, draws = search_routers(spec, d, weight_seed, params, prompts)
            if params is None:
                continue
            nudges = None
            if d.get("route_fed_tokens"):
                params, draws, nudges = search_routers_fed(spec, d, weight_seed, params, prompts, draws)
                if params is None:
                    continue
        if source:
            check_source_weights(root, source[0], params)
            source_params = params
            params = fp8_quantize_params(params, d["fp8_block_size"])
            if spec.num_experts:
                params, draws = search_routers(spec, d, seed, params, prompts)
                if params is None:
                    continue
            # the source's weights with this fixture's routers: what the quantization alone changes
            final = {n: t for n, _, t in params}
            base = {n: ref.round_to(final[n] if n.endswith(".mlp.gate.weight") else t, dt)
                    for n, dt, t in source_params}
            routers_redrawn = [l for l in range(spec.L) if spec.layer_moe[l] and draws[l] > 1] if spec.num_experts else []
        ref.write_safetensors(os.path.join(folder, "model.safetensors"), params, {"format": "pt"})
        spec2, p, dtypes = ref.load_model(folder)
        desc = {"folder": "tests/fixtures/golden/" + name, "architecture": arch, "seed": seed,
                "hidden_size": spec2.H, "num_hidden_layers": spec2.L, "num_attention_heads": spec2.NH,
                "num_key_value_heads": spec2.NKV, "head_dim": spec2.HD, "vocab_size": spec2.V,
                "tie_word_embeddings": spec2.tied, "sliding_window": spec2.sliding_window,
                "dtypes": dict(sorted({k: v for k, v in dtypes.items()}.items())),
                "prompt_lengths": lengths}
        if source:
            desc["weights_seed"] = weight_seed
            desc["routers_redrawn"] = routers_redrawn
        g = write_golden(folder, spec2, p, tok, USERS, MAX_NEW_TOKENS, False, eos, desc,
                         "/usr/bin/python3 tools/organism/make_organism.py --only golden")
        ok = g["greedy_min_top2_margin"] >= MIN_MARGIN
        gaps = None
        if ok and arch in ref.LLAMA_LIKE and spec2.rope_attention_factor != 1.0:
            g["model"].update(scaled_rope_description(spec2, p, g))
            write_json(os.path.join(folder, "golden.json"), g)
        if ok and arch == "LlamaForCausalLM" and (spec2.qkv_bias or spec2.mlp_bias):
            g["model"].update(llama_bias_description(spec2, p, g))
            write_json(os.path.join(folder, "golden.json"), g)
        if ok and arch not in ref.LLAMA_LIKE:
            extra, per_prompt, gaps = family_description(spec2, p, g)
            ok = gaps is None or min(gaps) >= MIN_ROUTING_GAP
            if arch in ref.HYBRID:  # (see MAX_LINEAR_FORM_DIFF)
                ok = ok and extra["linear_chunked_vs_recurrent"] <= MAX_LINEAR_FORM_DIFF
            if "mamba_chunked_vs_recurrent" in extra:  # (see MAX_MAMBA_FORM_DIFF)
                ok = ok and extra["mamba_chunked_vs_recurrent"] <= MAX_MAMBA_FORM_DIFF
            if "expert_usage_prompt4" in extra:  # (LFM2-MoE: every expert chosen over prompt 4 in every MoE layer)
                ok = ok and all(min(u) > 0 for u in extra["expert_usage_prompt4"].values())
            if "weight_noise_logit_change_prompt4" in extra:  # (Gemma 4: see MAX_WEIGHT_NOISE_CHANGE)
                ok = ok and extra["weight_noise_logit_change_prompt4"] <= MAX_WEIGHT_NOISE_CHANGE
            if ok:
                if spec.num_experts:
                    extra["router_draws"] = draws
                    if nudges is not None:
                        extra["router_nudges"] = nudges
                g["model"].update(extra)
                if per_prompt is not None:
                    for e, ids in zip(g["prompts"], per_prompt):
                        e["expert_ids_last"] = ids
                write_json(os.path.join(folder, "golden.json"), g)
        if ok and source:
            g["model"].update(fp8_description(folder, spec2, p, base, dtypes, d["fp8_block_size"], source[0], g))
            write_json(os.path.join(folder, "golden.json"), g)
        if ok:
            break
    else:
        raise RuntimeError("%s: no seed met the margin / routing-gap thresholds%s" % (
            name, " (the weights are %s's: no other seed to try)" % source[0] if source else ""))
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    print("%-20s seed %d  prompt tokens %s  min top-2 margin %.4f%s  %d bytes" % (
        name, seed, lengths, g["greedy_min_top2_margin"],
        "  routing gap %.4f (generated %.4f)" % gaps if gaps else "", size))
    if seed != first_seed:
        print("%-20s NOTE: seed %d failed the thresholds, %d passed: write %d into its MODELS entry" % (
            name, first_seed, seed, seed))
    return g


def build_all(a):
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "tests", "fixtures", "golden")
    torch.set_num_threads(a.threads)
    tok = golden_tokenizer(a.seed)
    only = set(a.golden.split(",")) if getattr(a, "golden", None) else None
    unknown = sorted((only or set()) - {m[0] for m in MODELS})
    if unknown:
        raise SystemExit("--golden: no golden model named %s" % ", ".join(unknown))
    for name, seed, arch, mtype, d, md, nd in MODELS:
        if only is None or name in only:  # each entry's own seed: neither its position nor the selection matter
            build_one(root, name, arch, mtype, d, md, nd, tok, seed)
    with open(os.path.join(root, "README.md"), "w", encoding="utf-8", newline="\n") as f:
        f.write(README)


README = """# Golden random-weight models

Written by `tools/organism/make_organism.py --only golden` (see tools/organism/README.md); do not
edit by hand. One folder per family feature, each a valid Hugging Face model folder plus
`golden.json` / `golden.safetensors` computed by the torch reference `tools/organism/reference.py`
(transformers semantics, fp32, from the weights as stored):

| folder | architecture | checks |
| --- | --- | --- |
| llama-mha | LlamaForCausalLM | GQA ratio 1 (MHA), head_dim 12, untied, all F32 |
| llama-tied | LlamaForCausalLM | tied embeddings (no lm_head tensor), GQA ratio 2, BF16 matrices, F32 norms |
| llama3-rope-scaling | LlamaForCausalLM | rope_scaling llama3 (high, medium and low frequency bands all present), GQA ratio 4, F16 matrices |
| mistral-window | MistralForCausalLM | sliding_window 48 (query i sees keys i-48 < j <= i), GQA ratio 4, head_dim 8, BF16 matrices, F16 norms |
| qwen2-qkv-bias | Qwen2ForCausalLM | q/k/v bias, tied, GQA ratio 2, all BF16; use_sliding_window false (sliding_window ignored) |
| qwen3-qk-norm | Qwen3ForCausalLM | q_norm/k_norm, head_dim 32 != hidden/heads, GQA ratio 2, F32 with BF16 embeddings |
| gemma2-softcap | Gemma2ForCausalLM | (1+w) RMSNorm incl. post_attention / pre_feedforward / post_feedforward norms; embeddings times bf16(sqrt(48)) = 6.9375; GeGLU (gelu tanh); score scale query_pre_attn_scalar^-0.5 = 24^-0.5 (head_dim 16); attention softcap 5 before the mask (scores reach 16); final logit softcap 5 (raw logits reach 9.7); sliding_window 24 on layers 0 and 2; tied, tie_word_embeddings absent (default true); all BF16 |
| gemma3-local-global | Gemma3ForCausalLM | q_norm/k_norm with (1+w) before RoPE; sliding_window_pattern 3 (no layer_types): layers 0, 1, 3 slide (window 24, RoPE theta 1e4, no scaling), layer 2 is global (theta 1e6, linear x8); attn_logit_softcapping 2.0 present but not applied; final_logit_softcapping null; embeddings times bf16(sqrt(80)) = 8.9375; GQA ratio 4, head_dim 32; BF16 matrices, F32 norms |
| gemma3-mm | Gemma3ForConditionalGeneration | text_config nested, with keys left out so that Gemma3TextConfig's defaults apply (num_key_value_heads 4, rope_theta 1e6, rope_local_base_freq 1e4, query_pre_attn_scalar 256, rms_norm_eps 1e-6, hidden_activation, tie_word_embeddings true); layer_types [sliding, full, sliding]; final_logit_softcapping 2.0 present but not applied by this class; weights named language_model.model.*; three stand-in vision/projector tensors (vision_tower.vision_model.embeddings.patch_embedding.weight, vision_tower.vision_model.post_layernorm.weight, multi_modal_projector.mm_input_projection_weight) that the forward pass ignores and an export must copy unchanged; embeddings times bf16(sqrt(40)) = 6.3125; all BF16 |
| phi3-longrope | Phi3ForCausalLM | fused qkv_proj (rows q, k, v) and gate_up_proj (first half gate); LongRoPE short factors, attention factor sqrt(1 + ln 4 / ln 256) = 1.1180 on cos and sin (max_position_embeddings 1024 / original_max_position_embeddings 256); sliding_window 40 on every layer; GQA ratio 2, untied, all BF16 |
| phi3-longrope-long | Phi3ForCausalLM | LongRoPE beyond original_max_position_embeddings 32 (max_position_embeddings 1024, attention factor sqrt(1 + ln 32 / ln 32) = sqrt 2): prompts of more than 32 tokens rotate with the long factors from the first pass; shorter ones cross over while decoding, where the whole sequence is run again with the long factors (transformers' Phi3ForCausalLM drops its cache on that step); greedy ids from the no-cache reference, which is what transformers' generate gives; no sliding window; GQA ratio 2, untied, all BF16 |
| mixtral-moe | MixtralForCausalLM | 4 experts, top-2, always renormalised; block_sparse_moe.gate / experts.{e}.w1 (gate), w3 (up), w2 (down); GQA ratio 2, untied, BF16 matrices, F32 norms |
| qwen2-moe-shared | Qwen2MoeForCausalLM | 4 experts (moe_intermediate_size 32), top-2, not renormalised; shared expert (64) with sigmoid gate; q/k/v bias; mlp_only_layers [1]: layer 1 is a dense MLP (intermediate_size 128); all BF16 |
| qwen3-moe | Qwen3MoeForCausalLM | 8 experts, top-3, renormalised; q_norm/k_norm; head_dim 32 != hidden/heads; BF16 matrices, F32 norms |
| phi4-mini-partial-rope | Phi3ForCausalLM | Phi-4-mini's partial rotary embedding: partial_rotary_factor 0.75, so the first 12 of each head's 16 dims rotate in pairs (i, i + 6) with theta^(2i/12) frequencies and the last 4 pass unchanged; LongRoPE short factors (6 per list) with attention factor sqrt(1 + ln 4 / ln 256) = 1.1180; tie_word_embeddings true (no lm_head tensor); GQA ratio 2, all BF16 |
| qwen3-yarn | Qwen3ForCausalLM | rope_scaling yarn, factor 4 from original_max_position_embeddings 64 (max_position_embeddings 256): with theta 1e4 and head_dim 32 the first dimension pair keeps its frequency, pairs 1 to 4 are ramped, the rest divided by 4; cos and sin times 0.1 ln 4 + 1 = 1.1386; q_norm/k_norm, GQA ratio 2, untied, BF16 matrices, F32 norms |
| mistral3-mm | Mistral3ForConditionalGeneration | Mistral Small 3.1's shape: a Mistral text model in text_config (rms_norm_eps and hidden_act left out: MistralConfig's defaults 1e-6 and silu), head_dim 24 != hidden/heads 16, sliding_window null, rope_theta 1e9, untied head named language_model.lm_head.weight, weights named language_model.model.*; five stand-in Pixtral vision tower and projector tensors that the forward pass ignores and an export must copy unchanged; GQA ratio 2, BF16 matrices, F32 norms |
| glm4-interleaved-rope | Glm4ForCausalLM | GLM-4-0414's shape: partial_rotary_factor 0.5, so the first 8 of each head's 16 dims rotate in adjacent pairs (2i, 2i + 1) with theta^(2i/8) frequencies and the last 8 pass; q/k/v biases, no o_proj bias; fused gate_up_proj (first half gate); post_self_attn_layernorm on the attention output and post_mlp_layernorm on the MLP output before each residual add, post_attention_layernorm as the MLP's input norm; GQA ratio 2, untied, BF16 matrices, F32 norms |
| glm-interleaved-rope | GlmForCausalLM | GLM-4-9B-chat-hf's shape: the same attention and fused MLP with Llama's two norms; partial_rotary_factor and attention_bias left out of config.json, so GlmConfig's defaults (0.5, true) apply; GQA ratio 2, untied, all BF16 |
| smollm3-nope | SmolLM3ForCausalLM | SmolLM3's NoPE layers: no_rope_layers [1, 1, 0, 1] listed as the released config lists them, so layer 2's queries and keys take no rotary embedding; rope_theta 2e6; tie_word_embeddings true (no lm_head tensor); GQA ratio 4, head_dim 8; BF16 matrices, F32 norms |
| qwen2.5-vl-legacy | Qwen2_5_VLForConditionalGeneration | Qwen2.5-VL as released: a flat config.json (no text_config) with rope_scaling {"type": "mrope", "mrope_section": [2, 3, 3]} (the reference computes the multimodal RoPE from three equal position rows, as transformers does for text), a Qwen2 decoder with q/k/v bias, weights named model.* with lm_head.weight and three stand-in vision tensors visual.* that the forward pass ignores and an export must copy unchanged; GQA ratio 2, untied, all BF16 |
| qwen3-vl-mm | Qwen3VLForConditionalGeneration | Qwen3-VL as transformers >= 4.57 saves it: text_config with rope_scaling {"rope_type": "default", "mrope_interleaved": true, "mrope_section": [3, 3, 2]}, q_norm/k_norm, weights named model.language_model.* beside three stand-in model.visual.* tensors; tie_word_embeddings true only at the top level (no lm_head tensor); GQA ratio 2, BF16 matrices, F32 norms |
| glm4-moe | Glm4MoeForCausalLM | GLM-4.5's MoE: layer 0 a dense MLP (first_k_dense_replace 1), layers 1-2 MoE; the router scores s = sigmoid(h·W), ranks c = s + mlp.gate.e_score_correction_bias (F32), keeps the best 2 of 4 groups of 2 experts (by the sum of each group's two best c; the others' c become 0.0), takes the top 3 c and weights them by s / (sum + 1e-20) x routed_scaling_factor 2.5; plus mlp.shared_experts (one expert's width, no gate); attention: partial_rotary_factor 0.5 in the rotate-half pairing (first 16 of 32 dims rotate), head_dim 32 with hidden 64 and 4 heads, q/k/v bias, no o_proj bias; num_nextn_predict_layers 1 with four stand-in model.layers.3.* MTP tensors that the forward pass ignores and an export must copy unchanged; GQA ratio 2, untied, BF16 matrices and norms |
| granite-multipliers | GraniteForCausalLM | Granite 3.x's multipliers on a Llama: embeddings times embedding_multiplier 12 (a Python float, not rounded to the dtype), attention scores times attention_multiplier 0.25 instead of head_dim^-0.5, each branch output times residual_multiplier 0.22 before its residual add, logits divided by logits_scaling 4; rope_theta 1e7, GQA ratio 4, head_dim 8, untied, all BF16 |
| granite-moe | GraniteMoeForCausalLM | Granite 3.x MoE: every layer MoE with 4 experts of intermediate_size 48 stacked as the released checkpoints hold them (block_sparse_moe.input_linear (E, 2F, H), first half gate; output_linear (E, H, F)), the router block_sparse_moe.router.layer takes the softmax of the top-2 logits; embedding_multiplier 6, attention_multiplier 0.125, residual_multiplier 0.5, logits_scaling 2; untied, all BF16 |
| granite-moe-shared | GraniteMoeSharedForCausalLM | the same plus shared_mlp (input_linear (2*40, H), first half gate; output_linear), added to the experts' sum without a gate; untied, BF16 matrices, F32 norms |
| gpt-oss | GptOssForCausalLM | gpt-oss as its BF16 checkpoints hold it (no MXFP4): self_attn.sinks, one logit per head, joins each row of masked scaled scores as one more column, the max is subtracted, the softmax taken over keys + sink and the sink's column dropped (rows sum to < 1); q/k/v_proj and o_proj biases; head_dim 24 with 4 heads (q width 96 != hidden 64); layer_types [sliding, full, sliding] listed, sliding_window 8 (query i sees keys i-8 < j <= i; every prompt is longer); rope_scaling yarn, factor 4 from original_max_position_embeddings 256 (max_position_embeddings 1024), rope_theta 150000, truncate false: the ramp bounds 0.243 and 3.733 are used as they are, not floored / ceiled (pair 0 kept, pairs 1-3 ramped, the rest divided by 4), cos and sin times 0.1 ln 4 + 1 = 1.1386; every layer MoE: logits = h·mlp.router.weightᵀ + mlp.router.bias, the top 2 of 4 weighted by the softmax of their logits; mlp.experts.gate_up_proj (E, H, 2F) = (4, 64, 80) used as h @ W, gate = the even columns, up = the odd columns, plus gate_up_proj_bias (E, 2F) split alike; down_proj (E, F, H) = (4, 40, 64) used as x @ W, plus down_proj_bias (E, H); expert output down((clamp(up, -7, 7) + 1) · g · sigmoid(1.702 g)) with g = min(gate, 7) (swiglu_limit 7.0 in config.json, swiglu_alpha left out: 1.702), both clamps biting on the golden prompts; untied; BF16 matrices, biases, router and sinks, F32 norms |
| cohere | CohereForCausalLM | Command-R / Aya's shape: input_layernorm and model.norm are CohereLayerNorms, w · (x − mean(x)) · rsqrt(var(x) + eps) without bias, layer_norm_eps 1e-5 (weights drawn around 1 with std 0.2; the embeddings are shifted by +0.1 so that the subtracted mean matters: RMSNorms in their place change prompt 4's logits by up to 1.26); no post_attention_layernorm: each layer is x + self_attn(h) + mlp(h) with h = input_layernorm(x) (a sequential block with the same norm twice: 1.38); RoPE over all 16 dims of each head with adjacent dims (2i, 2i + 1) paired, frequency theta^(-2i/16), rope_theta 1e4 (pairs (i, i + 8) instead: 0.75); logits = h · embed_tokensᵀ × logit_scale 0.125 (not scaled: 7.21); tie_word_embeddings absent (CohereConfig's default true: no lm_head tensor); use_qk_norm false; GQA ratio 2; all F16 |
| cohere2 | Cohere2ForCausalLM | Command R7B's shape: the same norms, parallel block and RoPE pairing, plus sliding_window_pattern 4 with no layer_types: layers 0-2 are sliding_attention (window 8: query i sees keys i-8 < j <= i; every prompt is longer) and rotate, layer 3 is full causal attention with no RoPE at all (rotating it too changes prompt 4's logits by 0.27; no window anywhere: 2.22); head_dim 16 listed (Cohere2Config derives hidden / heads); rope_theta 5e4; logit_scale 0.25 (not scaled: 7.63; RMSNorms: 2.49; sequential block: 2.70; pairs (i, i + 8): 1.53); tie_word_embeddings absent (default true); GQA ratio 4; all BF16 |
| llama-bias | LlamaForCausalLM | attention_bias true: q_proj, k_proj, v_proj and o_proj all with biases (self_attn.{q,k,v,o}_proj.bias), o_proj's added after the attention's output projection; mlp_bias true: gate_proj, up_proj and down_proj with biases (mlp.{gate,up,down}_proj.bias): (silu(h·W_gᵀ + b_g) · (h·W_uᵀ + b_u))·W_dᵀ + b_d; biases drawn with std 0.3 (q/k/v, o_proj, MLP), so that zeroing each group changes prompt 4's logits: q/k/v 13.0, o_proj 10.6, gate/up 8.57, down 9.90; rope_theta 1e4; GQA ratio 2, head_dim 16, untied; BF16 matrices and biases, F32 norms |
| cohere-qknorm | CohereForCausalLM | Command R+'s shape: use_qk_norm true, so self_attn.q_norm.weight (4, 16) and self_attn.k_norm.weight (2, 16) — a weight row per head — are CohereLayerNorms over head_dim only (mean and biased variance of each head's 16 values, eps layer_norm_eps 1e-5, no bias), applied to q_proj(h) / k_proj(h) viewed as (tokens, heads, head_dim), before RoPE; weights drawn around 1 with std 0.3 (every head with head 0's row changes prompt 4's logits by 0.65; RMSNorms as q/k norms: 0.54; no q/k norm: 0.76); otherwise cohere's LayerNorms (RMSNorms everywhere: 2.20), parallel block (sequential: 2.66), adjacent-pair RoPE (pairs (i, i + 8): 1.13), rope_theta 7.5e7 as Command R+'s; logit_scale 0.25 (not scaled: 7.14); tie_word_embeddings absent (default true); GQA ratio 2; BF16 matrices, F32 norms (q/k norms too) |
| seed-oss | SeedOssForCausalLM | Seed-OSS-36B's shape: Llama's layers (two RMSNorms, rotate-half RoPE, SwiGLU) with attention_bias true — q_proj, k_proj and v_proj with biases (self_attn.{q,k,v}_proj.bias) — and attention_out_bias false — no self_attn.o_proj.bias: SeedOssAttention takes o_proj's bias from a flag of its own (SeedOssConfig's defaults: true and false); biases drawn with std 0.3, so that zeroing them changes prompt 4's logits by 13.8 (q alone 4.53, k alone 1.94, v alone 11.3); mlp_bias false; head_dim 24 listed, with 4 heads (q width 96 != hidden 64; SeedOssConfig's default head_dim is 128, not hidden / heads); rope_theta 1e7 and rope_scaling {"rope_type": "default"} as Seed-OSS-36B's config.json has them; attention_dropout and residual_dropout 0.1 (training only); GQA ratio 2, untied; BF16 matrices and biases, F32 norms |
| deepseek-v3-mla | DeepseekV3ForCausalLM | DeepSeek-V3's multi-head latent attention: q = q_b_proj(q_a_layernorm(q_a_proj(h))) (q_lora_rank 40) viewed as 4 heads of qk_nope_head_dim 16 then qk_rope_head_dim 8 (q/k head 24); kv_a_proj_with_mqa(h) (32, 64) gives the latent c (kv_lora_rank 24) then k_pe (8: one rotary key shared by every head); kv_b_proj(kv_a_layernorm(c)) (112, 24) gives per head k_nope (16) then v (12: v head != q/k head), o_proj (64, 4 x 12); num_key_value_heads 4 = heads; q_a_layernorm and kv_a_layernorm are RMSNorms with eps 1e-6 (DeepseekV3RMSNorm's default, not rms_norm_eps, here also 1e-6), weights around 1 with std 0.3 (either at 1 changes prompt 4's logits by 27.3 / 22.9); RoPE only on the rope dims (q's last 8, k_pe), rope_interleave true: the 8 dims reshuffled to (0, 2, 4, 6, 1, 3, 5, 7), then rotate-half, the scores of rotating the stored pairs (2i, 2i + 1) in place (rotate-half on the stored order instead: 26.3); rope_scaling {"type": "yarn"}, factor 4 from original_max_position_embeddings 64 (max_position_embeddings 256), theta 1e4 over the 8 rope dims: pair 0 kept, pair 1 ramped, pairs 2-3 divided by 4; cos and sin times mscale(4, 0.8) / mscale(4, 1.0) = 0.9756 (mscale(f, m) = 0.1 m ln f + 1); scores times 24^-0.5 x mscale(4, 1.0)^2 = 0.264642 (without the mscale^2: 18.2; plain RoPE: 23.6); glm4-moe's router (sigmoid, F32 mlp.gate.e_score_correction_bias, 4 groups of 2 experts keep 2) with the top 2 renormalised x routed_scaling_factor 2.5, an ungated mlp.shared_experts of moe_intermediate_size 32, layer 0 a dense MLP of 128 (first_k_dense_replace 1); topk_method noaux_tc, scoring_func sigmoid, moe_layer_freq 1 listed (keys transformers does not read); num_nextn_predict_layers 1 with four stand-in model.layers.3.* MTP tensors that the forward pass ignores and an export must copy unchanged; no head_dim key; attention_bias false; untied; BF16 matrices and norms |
| deepseek-v3-qproj | DeepseekV3ForCausalLM | the MLA paths of Moonlight-16B-A3B / DeepSeek-V2-Lite-shaped configs: q_lora_rank null, so q = q_proj(h) with one self_attn.q_proj.weight (160, 64) (no q_a_proj / q_a_layernorm / q_b_proj) viewed as 8 heads of qk_nope_head_dim 12 then qk_rope_head_dim 8 (q/k head 20); kv_a_proj_with_mqa(h) (36, 64) gives the latent c (kv_lora_rank 28) then k_pe (8, shared by every head); kv_b_proj(kv_a_layernorm(c)) (224, 28) gives per head k_nope (12) then v (16: wider than k_nope, narrower than the q/k head), o_proj (64, 8 x 16); num_key_value_heads 8 = heads; rope_interleave false: apply_rotary_pos_emb, rotate-half pairs (i, i + 4) on the stored order of the 8 rope dims (the interleave reshuffle instead: 16.6); rope_scaling null: plain RoPE, theta 5e4, scores times exactly 20^-0.5 = 0.223607, cos / sin unscaled; rms_norm_eps 1e-5 for the layer norms while kv_a_layernorm keeps DeepseekV3RMSNorm's eps 1e-6: kv_a_proj_with_mqa's latent rows are scaled by 0.004 after the draw, so that the latent's mean square (7e-6 to 3e-5 on prompt 4) is near the eps and rms_norm_eps in its place changes prompt 4's logits by 17.9 (unscaled, about 2e-4); kv_a_layernorm's weights around 1 with std 0.3 (at 1: 17.2); the sigmoid router with an F32 mlp.gate.e_score_correction_bias, n_group 1 / topk_group 1 (a plain top-2 of the 6 experts' sigmoid + bias scores), norm_topk_prob false (the weights s not renormalised: renormalised, 14.6) x routed_scaling_factor 1.5, an ungated mlp.shared_experts of n_shared_experts 2 x moe_intermediate_size 24 = 48, layer 0 a dense MLP of 96 (first_k_dense_replace 1); num_nextn_predict_layers 0 (no MTP tensors); no head_dim key; attention_bias false; untied; BF16 matrices, F32 norms |
| deepseek-v3-fp8 | DeepseekV3ForCausalLM | DeepSeek-V3 / R1 and Kimi-K2 as released, in FP8: deepseek-v3-mla's config plus `"quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [16, 16]}` ([128, 128] in the released ones) and deepseek-v3-mla's stored weights with every Linear weight of the decoder layers (q_a_proj, q_b_proj, kv_a_proj_with_mqa, kv_b_proj, o_proj, the dense MLP's gate/up/down_proj, every expert's and the shared experts') and of the MTP layer (model.layers.3.eh_proj) quantized: the weight stored as F8_E4M3 (float8_e4m3fn, one byte per element: sign, 4 exponent bits with bias 7, 3 mantissa bits, no infinities, NaN only at 0x7F / 0xFF, largest 448) beside an F32 `<name>_scale_inv` of shape (ceil(out / 16), ceil(in / 16)), one scale per 16 x 16 block, the blocks at the bottom / right edges cut short (q_a_proj (40, 64): scales (3, 4), rows 32-39 in the last block row; q_b_proj (96, 40): (6, 3); kv_b_proj (112, 24): (7, 2); o_proj (64, 48): (4, 3)); per block scale = amax(abs(block)) / 448 and code = e4m3(block / scale) rounded to nearest even (every block's largest code is 448); not quantized: embed_tokens, lm_head, every norm, the router mlp.gate.weight and mlp.gate.e_score_correction_bias (73 F8_E4M3 weights, 73 scales, 22 other tensors); a loader's weight is bf16(fp32(code) x scale_inv[i // 16, j // 16]) (the fp32 products kept instead: prompt 4's logits change by up to 0.247), and the golden outputs are computed from those (the weights change by up to 3.8 % of their block's largest value; against deepseek-v3-mla's weights with the same routers prompt 4's logits change by up to 20.1); the routers are not quantized but were searched again on the quantized model (deepseek-v3-mla's fell under the routing-gap threshold there): layers 1 and 2 redrawn (draws 4 and 8); otherwise deepseek-v3-mla's checks (RoPE, YaRN, latent norms, router); BF16 norms |
| olmo2 | Olmo2ForCausalLM | OLMo 2's shape: no input_layernorm and no pre-MLP norm — the attention and the MLP read the residual x itself, and each output is normed before its add: x + post_attention_layernorm(self_attn(x)), then x + post_feedforward_layernorm(mlp(x)) (the same weights as pre-norms, Llama's layout, change prompt 4's logits by 33.2; unit-weight input norms added, Gemma 2's sandwich: 4.77); self_attn.q_norm.weight (128,) and k_norm.weight (32,) are RMSNorms over the whole q_proj / k_proj output — all 8 query heads' (2 kv heads') values at once, eps rms_norm_eps — before the split into heads of 16 and RoPE (per head, each head's 16 values with its slice of the weight: 7.12; no q/k norm: 18.0), weights drawn around 1 with std 0.3; rms_norm_eps 1e-5 (Olmo2Config's default) in every norm, o_proj and down_proj drawn small (0.1 x fan_in^-0.5: the branch outputs' mean squares on prompt 4 go down to 3.1e-4, 31 times the eps; a post norm leaves the eps as the only effect of its input's size), so that 1e-6 in its place changes the logits by 0.189 (with o_proj / down_proj at fan_in^-0.5: 1.9e-3); config.json as OLMo-2-1124's has it (no head_dim: hidden 128 / 8 heads; rope_scaling null; max_position_embeddings 4096), rope_theta 5e5; GQA ratio 4, untied; all F32 as OLMo 2 ships |
| olmo2-bias | Olmo2ForCausalLM | OLMo 2 with attention_bias true: q_proj, k_proj, v_proj and o_proj with biases (self_attn.{q,k,v,o}_proj.bias; zeroing q/k/v's changes prompt 4's logits by 27.1, o_proj's by 35.9), the q/k biases added before q_norm / k_norm; tie_word_embeddings true (no lm_head tensor); MHA (4 heads = kv heads, q/k norms over 64 values: per head 13.9); rope_theta 1e4 with rope_scaling {"type": "linear", "factor": 2.0} (inv_freq / 2; linear and dynamic, with exactly the keys type and factor, are all that the first Olmo2Config's validation accepts; plain RoPE: 24.3); rms_norm_eps 1e-6 listed (1e-5, the default, in its place: 0.832); otherwise olmo2's post norms (pre-norm layout: 69.0; sandwich: 9.00); embeddings std 1 and post_feedforward_layernorm weights around 3 (so that a tied head does not lock greedy decoding on one token); BF16 matrices and biases, F32 norms |
| olmo3 | Olmo3ForCausalLM | OLMo 3 as released (Olmo-3-1025-7B's config.json as transformers 4.57 wrote it): OLMo 2's layers — no input norms, post_attention_layernorm and post_feedforward_layernorm on the attention and MLP outputs before each add (the same weights as pre-norms change prompt 4's logits by 31.5; unit-weight input norms added: 5.98), q_norm / k_norm RMSNorms over the whole q_proj / k_proj output (128 values each) before the split into heads (per head: 8.12; none: 20.5) — plus a sliding window on the layers that layer_types lists as sliding_attention: [sliding, sliding, sliding, full] (Olmo3Config's own pattern, (i + 1) % 4 != 0), sliding_window 24 (query i sees keys i-24 < j <= i; five prompts are longer, "Hi" grows past it while decoding), layer 3 full causal attention (no window anywhere: 28.9; the window on layer 3 too: 11.7); RoPE in the legacy spelling: rope_theta 500000 (an integer, as released) and rope_scaling {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 1024, "attention_factor": 1.2079441541679836, "beta_fast": 32, "beta_slow": 1} (max_position_embeddings 8192) on the full-attention layer only: at head_dim 32 pairs 0-1 keep their frequency, 2-6 are ramped, 7-15 divided by 8, cos and sin times 1.2079 (plain RoPE there: 6.50); the sliding layers rotate with the plain RoPE at 500000, attention factor 1 (the YaRN RoPE on them too, as transformers 5 did until PR #45945: 14.6); rms_norm_eps 1e-6 (1e-5: 1.36; o_proj / down_proj drawn small so that it shows); MHA (4 heads of 32: no head_dim key), attention_bias false, untied; all BF16, norms too, as released |
| olmo3-v5 | Olmo3ForCausalLM | OLMo 3 as transformers 5 writes Olmo3Config: "dtype" in place of torch_dtype, no rope_theta / rope_scaling but `"rope_parameters": {"full_attention": {"rope_type": "yarn", "rope_theta": 500000.0, "factor": 4.0, "original_max_position_embeddings": 1024, "beta_fast": 32.0, "beta_slow": 1.0}, "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}`: the full layer's YaRN without attention_factor (0.1 ln 4 + 1 = 1.1386; at head_dim 16 pair 0 kept, 1-3 ramped, 4-7 divided by 4; plain RoPE there: 2.98; max_position_embeddings 4096), the sliding layers' default RoPE at a base of its own, 1e4 (at the full layers' 5e5: 37.2; the full layers' YaRN RoPE on every layer: 40.8); no layer_types key and 5 layers: Olmo3Config's default pattern makes layers 0, 1, 2 and 4 sliding (window 32: three prompts are longer, two grow past it while decoding) and layer 3 full (no window: 31.6; the window on every layer: 7.49); GQA 2 (q/k norms over 64 and 32 values; per head: 13.8; none: 31.2); attention_bias true: q/k/v_proj and o_proj biases (zeroing q/k/v's: 34.7; o_proj's: 41.0); tie_word_embeddings true (no lm_head tensor); rms_norm_eps 1e-5 listed (1e-6: 1.97); otherwise olmo3's layers (pre-norm layout: 65.8; sandwich: 22.3); embeddings std 1 and post_feedforward_layernorm weights around 3, as olmo2-bias; BF16 matrices and biases, F32 norms |
| deepseek-v2-lite | DeepseekV2ForCausalLM | DeepSeek-V2-Lite's shape, config.json as deepseek-ai/DeepSeek-V2-Lite's key for key in the remote-code spelling (transformers_version 4.33.1, auto_map naming configuration_deepseek / modeling_deepseek — no .py files: never run —, aux_loss_alpha, ep_size, moe_layer_freq 1, scoring_func softmax, seq_aux, pretraining_tp, norm_topk_prob false, rope_theta 10000 as an integer, rope_scaling {"type": "yarn", ...}, no pad_token_id); DeepseekV2Attention: q_lora_rank null, so q = q_proj(h) with one self_attn.q_proj.weight (128, 64) viewed as 4 heads of qk_nope_head_dim 20 then qk_rope_head_dim 12 (q/k head 32 != hidden / heads 16); kv_a_proj_with_mqa (52, 64) gives the latent c (kv_lora_rank 40) then k_pe (12, shared by every head); kv_b_proj(kv_a_layernorm(c)) (176, 40) gives per head k_nope (20) then v (24), o_proj (64, 4 x 24); kv_a_layernorm eps 1e-6, weights around 1 with std 0.3 (at 1: 11.9); RoPE as apply_rotary_emb: the 12 rope dims of q and k_pe viewed as 6 complex numbers (x[2i], x[2i + 1]) and multiplied in place by polar(1, position x inv_freq_i) x attention_scaling — no reshuffle (rotate_half on the stored order, pairs (i, i + 6), instead: 16.5; DeepSeek-V3's interleave reshuffle + rotate_half gives the same scores); rope_scaling {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, "mscale": 0.707, "mscale_all_dim": 0.707, "beta_fast": 32, "beta_slow": 1} (max_position_embeddings 163840) over the 12 rope dims at theta 1e4: pairs 0-1 kept, 2-4 ramped, 5 divided by 40 (plain RoPE: 5.08); cos / sin times mscale(40, 0.707) / mscale(40, 0.707) = 1 (YaRN's default 0.1 ln 40 + 1 = 1.369 instead: 15.5); scores times 32^-0.5 x mscale(40, 0.707)^2 = 0.281009 (mscale(f, m) = 0.1 m ln f + 1 = 1.2608; without the mscale^2: 9.76); DeepseekV2Moe from layer 1 (first_k_dense_replace 1; layer 0 a dense MLP of 128): router mlp.gate.weight (8, 64), no bias, p = softmax(h·Wᵀ) in fp32, topk_method greedy (n_group / topk_group 1 unread): the top 3 p, weights p x routed_scaling_factor 1.0, not renormalised (renormalised: 5.04); mlp.experts.{e}.{gate,up,down}_proj of moe_intermediate_size 16 and an ungated mlp.shared_experts of n_shared_experts 2 x 16 = 32; untied; BF16 matrices, F32 norms |
| deepseek-v2-groups | DeepseekV2ForCausalLM | DeepSeek-V2 / V2.5's router, config.json as transformers 5 writes DeepseekV2Config ("dtype", `"rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}` and no rope_theta / rope_scaling, "head_dim": 8 — DeepseekV2Config's head_dim is qk_rope_head_dim, not the q/k head 36 —, mlp_bias, pad_token_id, no pretraining_tp nor DeepSeek's own keys); topk_method group_limited_greedy: p = softmax(h·Wᵀ) over 8 experts in n_group 4 groups of 2, each group scored by its largest p (not DeepSeek-V3's sum of its two best: 26.7, other experts for 19 and 18 of prompt 4's 144 tokens in layers 2 and 3), the topk_group 2 best kept and the others' p set to 0, the top 3 of those (k > topk_group: no group limit at all, greedy top-3: 23.4), weights p x routed_scaling_factor 16 (x 1: 28.8), not renormalised (DeepSeek's MoEGate with norm_topk_prob true, p / (Σp + 1e-20) and no x 16: 27.5); mlp.shared_experts of 2 x 20 = 40, experts of 20; first_k_dense_replace 2: layers 0-1 dense MLPs of 128, layers 2-3 MoE; MLA with q_lora_rank 48 (q_a_proj (48, 64), q_a_layernorm, q_b_proj (144, 48): at 1: 31.1), kv_lora_rank 32 (kv_a_layernorm at 1: 29.5), qk_nope 28 + qk_rope 8 = q/k head 36, v head 20, 4 heads; V2's in-place complex-pair RoPE (rotate_half pairs (i, i + 4) instead: 27.3); no rope scaling: scores times exactly 36^-0.5; untied; all BF16 |
| olmoe | OlmoeForCausalLM | OLMoE-1B-7B's shape, config.json as allenai/OLMoE-1B-7B-0924's (OlmoeConfig's keys as transformers 4.43 wrote them: clip_qkv null, norm_topk_prob false, num_experts / num_experts_per_tok, output_router_logits false, router_aux_loss_coef 0.01, rope_scaling null beside rope_theta 1e4, no head_dim key); OlmoeDecoderLayer = LlamaDecoderLayer: input_layernorm before the attention and post_attention_layernorm before the MoE, each added back to the residual (OLMo 2's post-norm layout instead, the same two weights on the attention and MoE outputs and nothing on their inputs, changes prompt 4's logits by 25.9); OlmoeAttention: q = q_norm(q_proj(h)), k = k_norm(k_proj(h)), RMSNorms (eps rms_norm_eps 1e-5) over the whole projection — self_attn.q_norm.weight (64,) = hidden_size, self_attn.k_norm.weight (32,) = (hidden / heads) x kv heads (4 heads of 16, 2 kv heads) — before the view into heads and the rotate-half RoPE (per head, each head's 16 values with its slice of the weight: 5.11; no q/k norms: 9.70), weights around 1 with std 0.3; clip_qkv null (q / k / v not clamped); OlmoeSparseMoeBlock on every layer: router mlp.gate.weight (8, 64), no bias, p = softmax(h·Wᵀ) in fp32, the top 3 p as the weights, not renormalised (norm_topk_prob false as released; renormalised: 5.38), mlp.experts.{e}.{gate,up,down}_proj of intermediate_size 32, no shared expert; untied; BF16 matrices, F32 norms |
| minimax-m2 | MiniMaxM2ForCausalLM | MiniMax-M2 / M2.1 / M2.5's shape, config.json as MiniMaxAI/MiniMax-M2's key for key and in its order (MiniMax's remote-code spelling, transformers_version 4.46.1: attn_type_list [1, 1], auto_map naming configuration_minimax_m2 / modeling_minimax_m2 — no .py files: never run —, use_mtp / num_mtp_modules 3 / mtp_transformer_layers 1 with no MTP tensors, qk_norm_type per_layer, use_qk_norm, rotary_dim, rope_theta 5000000 as an integer, scoring_func sigmoid, use_routing_bias, shared_intermediate_size 0, torch_dtype last; no bos / eos / pad token ids: generation_config.json has the eos); MiniMaxM2DecoderLayer = MixtralDecoderLayer (pre-norm, rms_norm_eps 1e-6); MiniMaxM2Attention: bias-free q/k/v/o_proj of 4 heads x head_dim 24 (q width 96 != hidden 64), 2 kv heads, q = q_norm(q_proj(h)), k = k_norm(k_proj(h)) with self_attn.q_norm.weight (96,) and k_norm.weight (48,) over the whole projection before the view into heads (per head, each head's 24 values with its slice of the weight: 6.50), weights around 1 with std 0.3; RoPE on the first rotary_dim 12 of each head's 24 dims, rotate-half pairs (i, i + 6), inv_freq 1 / 5e6^(2i/12), the other 12 dims unrotated (over the whole head: 12.6); MiniMaxM2SparseMoeBlock on every layer: s = sigmoid(h·Wᵀ) in fp32 with block_sparse_moe.gate.weight (8, 64), the top 3 of s + block_sparse_moe.e_score_correction_bias (F32 (8,), std 0.2), weights the unbiased s of those divided by their sum (no bias in the choice: other experts for 79 and 99 of prompt 4's 144 tokens in layers 0 and 1, 10.4; s + bias as the weights too: 7.42; not renormalised: 15.5; a softmax in place of the sigmoid, the bias kept: other experts for 77 and 98 tokens, 13.9), experts block_sparse_moe.experts.{e}.w1 (gate), w3 (up), w2 (down) of intermediate_size 32, no shared expert; untied; BF16 matrices, F32 norms and e_score_correction_bias |
| minimax-m2-v5 | MiniMaxM2ForCausalLM | MiniMax-M2 as transformers 5 saves it: config.json MiniMaxM2Config's fields ("dtype" in place of torch_dtype, num_local_experts, output_router_logits, router_aux_loss_coef, router_jitter_noise, token ids; none of the remote-code keys) with `"rope_parameters": {"partial_rotary_factor": 0.25, "rope_theta": 10000.0, "rope_type": "default"}` and no rotary_dim nor top-level rope_theta: 0.25 x head_dim 16 = 4 dims rotate, pairs (i, i + 2), the other 12 pass (over the whole head: 4.87); the weights as MiniMaxM2SparseMoeBlock's state dict: mlp.gate.weight (6, 64), mlp.e_score_correction_bias (F32 (6,)), mlp.experts.gate_up_proj (6, 48, 64) — per expert the 24 gate rows, then the 24 up rows — and mlp.experts.down_proj (6, 64, 24); 8 heads of 16 (q width 128 != hidden 64) and 2 kv heads (GQA 4: q_norm (128,), k_norm (32,); per head: 3.83); top-2 of s + bias, s renormalised (no bias in the choice: other experts for 42 and 47 of prompt 4's 144 tokens, 3.48; s + bias as the weights: 1.92; not renormalised: 2.56; softmax: other experts for 47 and 49 tokens, 3.98); tie_word_embeddings true (no lm_head tensor; embeddings std 0.1, o_proj / down_proj x 2, so that greedy decoding does not repeat one token); BF16 matrices, F32 norms and e_score_correction_bias |
| exaone4 | Exaone4ForCausalLM | EXAONE-4.0-32B's config.json spelling (transformers 4.54): OLMo 2's post-norm layers — no input_layernorm, post_attention_layernorm on the attention output and post_feedforward_layernorm on the MLP output before each residual add (Llama's pre-norm order with the same two weights changes prompt 4's logits by 27.9) — and bias-free q/k/v/o_proj; self_attn.q_norm.weight / k_norm.weight (16,): RMSNorms over each head's head_dim values after the view into heads, one weight for every head, before RoPE (one RMSNorm over the whole projection with the weight repeated per head: 6.96); `"sliding_window_pattern": "LLLG"` (a string) beside layer_types listed [sliding, sliding, sliding, full] (both give layers 0-2 sliding, 3 full); sliding layers attend to a window of 16 (query i sees keys i-16 < j <= i; every prompt is longer; no window: 28.1) and rotate; the full layer takes no RoPE at all (NoPE: Exaone4Attention rotates only `if self.sliding_window is None or self.is_sliding`; rotated too: 3.09); rope_theta 1000000 (an integer, as released) with rope_scaling llama3, factor 16, low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings 64 (released: 8192; max_position_embeddings 1024): pair 0 (wavelength 6.3) keeps its frequency, pair 1 (35.3) is smoothed, pairs 2-7 are divided by 16 (plain RoPE: 11.2); head_dim 16 listed; GQA ratio 2; rms_norm_eps 1e-5; untied; BF16 matrices, F32 norms |
| exaone4-dense | Exaone4ForCausalLM | EXAONE-4.0-1.2B's shape: `"sliding_window": null`, `"sliding_window_pattern": null` and layer_types all full_attention, so no layer slides and every layer rotates (the hybrid model's rule, no RoPE on the layers "LLLG" calls global — here the last — changes prompt 4's logits by 3.86); the same post-norm layers (pre-norm order: 43.2) and per-head q/k norms (over the whole projection: 31.5); no head_dim key (hidden / heads = 16), MHA, rope_theta 1e6, rope_scaling null; tie_word_embeddings true (no lm_head tensor; embeddings std 1 and post_feedforward_layernorm weights around 5, so that greedy decoding does not repeat one token); BF16 matrices, F32 norms |
| ernie4.5-moe | Ernie4_5_MoeForCausalLM | ERNIE-4.5-21B-A3B-PT's config.json spelling (transformers 4.54; `"rope_theta": 500000` an integer at the top level, use_bias false, moe_num_experts / moe_k / moe_intermediate_size / moe_num_shared_experts / moe_layer_start_index / moe_layer_interval, no moe_layer_end_index (-1: the last layer), and Baidu's own keys transformers does not read: use_rmsnorm true, moe_capacity [64, 64, 64], moe_gate "topk", moe_use_aux_free true); Llama's pre-norm layers, bias-free q/k/v/o_proj, no head_dim key (hidden / heads = 16), GQA 2; RoPE over the whole head with adjacent dims (2i, 2i + 1) paired, frequency 500000^(-2i/16) (ernie4_5's apply_rotary_pos_emb: cos[..., :8].repeat_interleave(2), GLM's rotate_half; rotate-half pairs (i, i + 8) instead changes prompt 4's logits by 3.60); layer 0 a dense MLP of intermediate_size 96, layers 1-2 Ernie4_5_MoeSparseMoeBlock (moe_layer_start_index 1): router mlp.gate.weight (8, 64) F32, p = softmax(h·Wᵀ) in fp32, the top 3 of p + mlp.moe_statics.e_score_correction_bias (F32 (1, 8), std 0.05), weights the unbiased p of those over max(their sum, moe_norm_min 1e-12) (no bias in the choice: other experts for 54 and 115 of prompt 4's 144 tokens in layers 1 and 2, 0.648; p + bias as the weights: 0.689; not renormalised: 0.684; a sigmoid in place of the softmax, the bias kept: other experts for 36 and 73 tokens, 1.49); mlp.experts.{e}.{gate,up,down}_proj of moe_intermediate_size 32 and mlp.shared_experts.{gate,up,down}_proj of 2 x 32 = 64 (moe_num_shared_experts 2), ungated, added to the experts' sum (left out: 2.63); tie_word_embeddings true (no lm_head tensor; embeddings std 0.1, o_proj / down_proj x 2, so that greedy decoding does not repeat one token); BF16 matrices, F32 norms, mlp.gate and e_score_correction_bias |
| ernie4.5-moe-interval | Ernie4_5_MoeForCausalLM | Ernie4_5_MoeConfig as transformers 5 writes it ("dtype", `"rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}` and no rope_theta, moe_layer_end_index written out, moe_norm_min, output_router_logits, router_aux_loss_coef; none of Baidu's keys): 4 layers with moe_layer_start_index 0, moe_layer_interval 2 and moe_layer_end_index 2, so only layer 1 is MoE — (l + 1) % 2 == 0 holds for layer 3 too, but it lies past the end index: a dense MLP of 96 (mlp.gate_proj / up_proj / down_proj; the rule without the end index would want expert tensors there); router mlp.gate (6, 64) F32, top-2 of p + e_score_correction_bias (F32 (1, 6), std 0.15), p renormalised (no bias in the choice: other experts for 80 of prompt 4's 144 tokens, 9.04; p + bias as the weights: 5.48; not renormalised: 5.82; sigmoid: other experts for 32 tokens, 10.2); 6 experts of 32, moe_num_shared_experts 0 (no shared_experts tensors); adjacent-pair RoPE at theta 1e4 (rotate-half: 14.3); 4 heads, 1 kv head (GQA 4); untied; BF16 matrices, F32 norms, mlp.gate and e_score_correction_bias |
| ernie4.5-dense | Ernie4_5ForCausalLM | ERNIE-4.5-0.3B-PT's config.json spelling (model_type ernie4_5, head_dim listed, `"rope_theta": 500000` an integer) with `"use_bias": true`: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj and down_proj all with biases (Ernie4_5Attention / Ernie4_5MLP take bias=use_bias; zeroing q/k/v's changes prompt 4's logits by 3.11, o_proj's by 2.20, the MLP's by 1.475), lm_head none (tied here: no lm_head tensor); head_dim 24 with 4 heads (q width 96 != hidden 64; Ernie4_5Config's default would be 128), 2 kv heads; adjacent-pair RoPE over all 24 dims (rotate-half: 3.80); Llama's pre-norm layers; embeddings std 0.1, o_proj / down_proj x 2 and every bias std 0.1 (so that greedy decoding does not repeat one token); BF16 matrices and biases, F32 norms |
| qwen3-next | Qwen3NextForCausalLM | Qwen3-Next-80B-A3B's config.json spelling (transformers 4.57: `"full_attention_interval": 4` and no layer_types, so layers 0-2 are Gated DeltaNet (linear attention) and layer 3 gated full attention; rope_theta 10000000 and partial_rotary_factor 0.25 at the top level, rope_scaling null, torch_dtype); every RMSNorm of the residual stream, the final norm and q_norm / k_norm are Qwen3NextRMSNorm, x rsqrt(mean(x²) + eps) (1 + w) (read as plain w: 25.8); linear layers: in_proj_qkvz (2 key heads of 16, 4 value heads of 24) and in_proj_ba interleaved per key head, [q 16, k 16, v 2 x 24, z 2 x 24] and [b 2, a 2] (read as contiguous [q, k, v, z] blocks: 28.5), a depthwise causal conv1d of kernel 4 over [q, k, v] with SiLU (no conv: 29.1; no SiLU: 27.6), q and k l2-normed (not: 27.3) and repeated to the value heads by repeat_interleave (value head j reads key head j // 2; tiled: 26.7), beta = sigmoid(b) (1: 20.4), g = -exp(A_log) softplus(a + dt_bias) (A_log (F32) = log uniform(1, 16); dt_bias (F32) around -5: decays exp(g) 0.018 to 0.999 over prompt 4; no decay: 24.5; A_log for A: 19.0; no dt_bias: 28.4), the gated delta rule (HF's torch_chunk_gated_delta_rule, chunks of 64; prompt 4's 144 tokens cross two chunk boundaries: state reset at each: 20.7; the recurrent form differs by 4.0e-5 over every prompt's logits), Qwen3NextRMSNormGated over each value head: x rsqrt(mean(x²) + eps) w silu(z) with a plain w around 1 (1 + w: 25.3; no silu(z): 30.6), out_proj; full layer: q_proj (4 heads x 2 x 32: per head 32 query rows, then 32 gate rows), q_norm / k_norm (32,), RoPE on the first 8 of 32 dims (over all 32: 3.82), GQA 2, the output times sigmoid(gate) before o_proj (no gate: 6.62); Qwen2MoeSparseMoeBlock on every layer: mlp.gate (8, 64), softmax, top-3 renormalised (norm_topk_prob; not: 9.15), mlp.experts.{e}.gate/up/down_proj of 32 (per expert, as released), mlp.shared_expert of 48 times sigmoid(mlp.shared_expert_gate) (ungated: 23.1); stand-in mtp.* tensors; untied; BF16 matrices, F32 norms |
| qwen3.5-mm | Qwen3_5ForConditionalGeneration | Qwen3.5 as transformers 5 saves it ("dtype", transformers_version 5.2.0): text_config (model_type qwen3_5_text) with layer_types listed [linear, full, linear, full] beside `"full_attention_interval": 2`, attn_output_gate true, `"rope_parameters": {"mrope_interleaved": true, "mrope_section": [1, 1, 1], "partial_rotary_factor": 0.25, "rope_theta": 10000000, "rope_type": "default"}` (6 of 24 dims rotate; text positions: the plain RoPE), mtp_num_hidden_layers, mamba_ssm_dtype; Qwen3_5GatedDeltaNet's separate in_proj_qkv ([q, k, v]), in_proj_z, in_proj_b, in_proj_a (2 key and 2 value heads of 16); the same conv, rule, norms and gated attention as qwen3-next (no conv: 12.0; no SiLU: 13.7; no silu(z): 12.9; gated norm 1 + w: 10.1; no output gate: 9.31; no l2norm: 12.3; plain-w norms: 9.23; RoPE over the whole head: 3.78; no decay: 9.66; beta 1: 9.84; A_log for A: 9.35; no dt_bias: 13.6; state reset per chunk: 12.1); a dense SwiGLU of 128 on every layer; weights model.language_model.* beside stand-in model.visual.* and mtp.* tensors; tie_word_embeddings true at the top level and in text_config (no lm_head tensor); 4 heads, 1 kv head (GQA 4); all BF16 (norms too) but A_log (F32) |
| qwen3.5-moe-mm | Qwen3_5MoeForConditionalGeneration | Qwen3.5-MoE as transformers 5 saves it: text_config (qwen3_5_moe_text) with layer_types listed (layers 0-2 linear, 3 full) beside full_attention_interval 4, no intermediate_size and no norm_topk_prob (Qwen3_5MoeTextConfig removes both), rope_parameters with mrope_section [2, 1, 1] (8 of 32 dims); split projections with 2 key heads and 4 value heads of 16 (value head j reads key head j // 2; tiled: 33.4); Qwen3_5MoeSparseMoeBlock on every layer: mlp.gate (8, 64), softmax, top-2 always renormalised (Qwen3VLMoeTextTopKRouter; not: 18.7), experts stacked as mlp.experts.gate_up_proj (8, 48, 64: per expert 24 gate rows, then 24 up rows; halves swapped: 24.9) and mlp.experts.down_proj (8, 64, 24), mlp.shared_expert of 40 times sigmoid(mlp.shared_expert_gate) (ungated: 25.3); the other what-ifs as qwen3-next's (no conv 28.9, no SiLU 30.3, no silu(z) 35.4, gated norm 1 + w 26.3, no output gate 5.61, no l2norm 32.4, plain-w norms 25.6, RoPE over the whole head 7.70, no decay 29.4, beta 1 27.3, A_log for A 24.4, no dt_bias 31.8, state reset per chunk 26.1); stand-in model.visual.* and mtp.*; untied (lm_head.weight); 4 heads, 2 kv heads; BF16 matrices, F32 norms, A_log and dt_bias |
| qwen3-vl-moe-mm | Qwen3VLMoeForConditionalGeneration | Qwen3-VL-MoE as released (Qwen3-VL-30B-A3B's config.json, transformers 4.57): text_config (qwen3_vl_moe_text) with rope_scaling {"mrope_interleaved": true, "mrope_section": [6, 5, 5], "rope_type": "default"} beside rope_theta 5000000 (an integer; text positions: the plain RoPE), head_dim 32 != hidden / heads 16, q_norm/k_norm (head_dim,), decoder_sparse_step 1 and mlp_only_layers [1]: layers 0 and 2 Qwen3VLMoeTextSparseMoeBlock, layer 1 a dense mlp.gate_proj / up_proj / down_proj of intermediate_size 128; norm_topk_prob true (not read); mlp.gate (8, 64), softmax in fp32, top-2 always renormalised (not: 7.68); the experts fused and transposed as released, mlp.experts.gate_up_proj (8, 64, 48) used as x @ W: gate = its first 24 columns, up = the last 24 (halves swapped: 19.0; gate / up interleaved in the columns: 23.8), and mlp.experts.down_proj (8, 24, 64) used as x @ W (the stored bytes read as transformers 5's (E, 2F, H) / (E, H, F) without its Transpose(1, 2): 23.4); moe_intermediate_size 24, so that no expert tensor is square; weights model.language_model.* beside three stand-in model.visual.* tensors; tie_word_embeddings false only at the top level (lm_head.weight); GQA ratio 2, BF16 matrices, F32 norms |
| gemma | GemmaForCausalLM | Gemma 1 as released (gemma-7b-it's config.json: "hidden_act": "gelu" and no hidden_activation, so GemmaMLP (transformers 4.39-4.47) runs gelu_pytorch_tanh; the exact GELU, as transformers >= 4.48 reads hidden_act: 0.0022, no greedy id changed); Llama's pre-norm layers with (1+w) RMSNorms in fp32 (plain w: 3.87); embeddings times bf16(sqrt(48)) = 6.9375 (none: 2.13; the fp32 6.9282: 0.0046, no greedy id changed); GeGLU (SwiGLU: 1.57); scores times head_dim^-0.5 with head_dim 16 listed (q width 4 x 16 = 64 != hidden 48: hidden / heads = 12 would not fit the tensors); no softcaps, no sliding window; 1 kv head (multi-query, as gemma-2b); tie_word_embeddings absent (GemmaConfig's default true: no lm_head tensor); all BF16 |
| ministral3-mm | Mistral3ForConditionalGeneration | Ministral 3 as transformers 5 saves it (Ministral-3-3B / 8B / 14B-Instruct-2512: "dtype", transformers_version 5.0.0, tie_word_embeddings false at the top level and in text_config): text_config of model_type "ministral3" (Ministral3Config) with the RoPE only in `"rope_parameters": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 16.0, "llama_4_scaling_beta": 0.3, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 16, "rope_theta": 1000000000.0, "rope_type": "yarn", "type": "yarn"}` (released: beta 0.1, original 16384; no rope_theta key), max_position_embeddings 256 = 16 x 16; Mistral's layers (pre-norm, SwiGLU, no biases, rms_norm_eps 1e-5, sliding_window null) with YaRN x16 over head_dim 48 (pair 0 kept, pair 1 ramped, 22 pairs divided by 16; mscale = mscale_all_dim = 1: cos and sin unscaled; plain RoPE: 11.6; YaRN's default 0.1 ln 16 + 1 = 1.277 on cos and sin: 9.21) and Ministral3Attention's query scaling: after RoPE every query (not the keys) times 1 + 0.3 ln(1 + floor(position / 16)), positions from 0 (1 below 16, 1.2079 from 16, 1.3296 from 32, ... 1.6908 from 144; every prompt crosses a period boundary while decoding, prompt 4 reaches period 9; no scaling: 9.43; the keys scaled too: 9.04; 1 + 0.3 floor(position / 16) without the log: 12.7; the factor of position + 1: 1.41); head_dim 48 listed (q width 4 x 48 = 192 != hidden 64), GQA 2; weights model.language_model.* and lm_head.weight (untied) beside five stand-in model.vision_tower.* / model.multi_modal_projector.* tensors (transformers 5's names) that the forward pass ignores and an export must copy unchanged; BF16 matrices, F32 norms |
| glm4v-mm | Glm4vForConditionalGeneration | GLM-4.1V-9B-Thinking / GLM-4.6V-Flash as released (transformers 4.5x's save, transformers_version 4.57.1): the token ids at the top level, text_config of model_type glm4v_text with `"rope_scaling": {"mrope_section": [2, 1, 1], "type": "default"}` beside rope_theta 10000 (released: [8, 12, 12]), partial_rotary_factor 0.5, attention_bias true (not read: Glm4vTextAttention's q/k/v_proj always have biases), no head_dim key (Glm4vTextAttention takes hidden_size // num_attention_heads = 16, whatever config.json says), rms_norm_eps 1e-5, eos / pad ids; GLM-4-0414's layers: input_layernorm, post_self_attn_layernorm on the attention output and post_mlp_layernorm on the MLP output before each residual add, post_attention_layernorm as the MLP's input norm (Llama's two norms instead: 14.6); q/k/v_proj biases, no o_proj bias (no q/k/v biases: 27.1); fused mlp.gate_up_proj (192, 64), first half gate; RoPE on the first 8 of each head's 16 dims (rotary_dim = int(16 x 0.5); the whole head: 9.86) in adjacent pairs (2i, 2i + 1) with theta^(-2i/8) (pairs (i, i + 4) instead: 12.2), through the multimodal RoPE: its three position rows are equal for text, so the sections change nothing there; weights model.language_model.* and lm_head.weight (untied) beside three stand-in model.visual.* tensors that the forward pass ignores and an export must copy unchanged; GQA ratio 2; all BF16 as released |
| glm4v-moe-mm | Glm4vMoeForConditionalGeneration | GLM-4.5V / GLM-4.6V as released (transformers_version 4.56.0): text_config of model_type glm4v_moe_text with `"rope_scaling": {"mrope_section": [2, 3, 3], "rope_type": "default"}` beside rope_theta 10000 (released: [8, 12, 12]), partial_rotary_factor 0.5, head_dim 32 listed (!= hidden / heads 16, as GLM-4.5V's 128 != 4096 / 96), attention_bias true, no use_qk_norm and no num_nextn_predict_layers (Glm4vMoeTextConfig reads neither: no q/k norms, no MTP tensors); GLM-4.5's layers (input_layernorm, post_attention_layernorm), q/k/v_proj biases without an o_proj bias, RoPE on the first 16 of 32 dims in the rotate-half pairing (i, i + 8) (adjacent pairs instead: 17.3; the whole head: 15.7); layer 0 a dense mlp.gate_proj / up_proj / down_proj of 96 (first_k_dense_replace 1), layers 1-2 MoE: the router scores s = sigmoid(h·W) (mlp.gate.weight (8, 64); a softmax instead: 24.8), ranks c = s + mlp.gate.e_score_correction_bias (F32; without it: 16.2), keeps the best 2 of 4 groups of 2 experts by the sum of each group's two best c (the others' c become 0.0; no group limit: 18.8), takes the top 3 c and weights them by s / (sum + 1e-20) x routed_scaling_factor 2.5 (x 1: 14.9); 8 experts of moe_intermediate_size 24 as per-expert mlp.experts.{e}.gate_proj / up_proj / down_proj, plus mlp.shared_experts (24, ungated; without it: 19.5); weights model.language_model.* and lm_head.weight beside three stand-in model.visual.* tensors; GQA ratio 2; BF16 matrices and norms, F32 correction bias |
| phimoe | PhimoeForCausalLM | Phi-3.5-MoE as transformers 4.x's save_pretrained writes PhimoeConfig (transformers_version 4.46.0; no head_dim key, attention_bias and lm_head_bias true, `"rope_scaling": {"long_factor": [...], "long_mscale": 1.3, "original_max_position_embeddings": 256, "rope_type": "longrope", "short_factor": [...], "short_mscale": 1.3, "type": "longrope"}` (released: mscale 1.243163121016122 for both) with original_max_position_embeddings 256 also at the top level, max_position_embeddings 1024, sliding_window 131072 as released (longer than every sequence: no effect), router_jitter_noise 0.3 (released 0.01), input_jitter_noise 0.01 (training only)): input_layernorm, post_attention_layernorm and model.norm are nn.LayerNorms with weight and bias, w · (x − mean(x)) · rsqrt(var(x) + eps) + b with eps rms_norm_eps 1e-5 (weights around 1 with std 0.2, biases std 0.1: without the biases prompt 4's logits change by 22.0, RMSNorms with the same weights and biases by 16.7); q_proj, k_proj, v_proj and o_proj with biases (without: 26.3 and 20.9); head_dim 16 = hidden / heads; LongRoPE (rotate-half) with the short factors, as every golden sequence (at most 144 + 16 tokens) stays within 256, and cos and sin times short_mscale 1.3, not the attention factor _compute_longrope_parameters computes, sqrt(1 + ln 4 / ln 256) = 1.1180 (that instead: 15.0); every layer a PhimoeSparseMoeBlock of 8 experts of intermediate_size 48 (block_sparse_moe.gate (8, 64), block_sparse_moe.experts.{e}.w1 (gate) / w3 (up) / w2 (down), no biases) routed by sparsemixer in eval mode: expert 1 = argmax of the logits s, weighted by softmax(s masked to -inf where (max − s) / max(|s|, max) > 2 × 0.3)[expert 1]; expert 2 = argmax of s with expert 1's at −inf, weighted by the softmax of those scores masked alike against their max (the test on the original scores)[expert 2]; the two weights not renormalised (the softmaxes keep 2.20 and 1.91 experts on average, 1 to 6; Mixtral's renormalised softmax top-2 instead: 16.9; no masks: 16.9; threshold 0.3 instead of 0.6: 12.6; the second softmax keeping expert 1: 17.0); lm_head with a bias (std 0.1; without: 0.30); GQA 2, untied; BF16 matrices and projection / lm_head biases, F32 LayerNorm weights and biases |
| llama4-mm | Llama4ForConditionalGeneration | Llama 4 Scout / Maverick as released (Llama4Config as transformers 4.51 wrote it: boi / eoi / image token indices, tie_word_embeddings false and torch_dtype bfloat16 at the top level, a small llama4_vision_model vision_config): text_config of model_type llama4_text with `"no_rope_layers": [1, 1, 1, 0]` listed, so layers 0-2 rotate and layer 3 is NoPE; rope_theta 500000 with `"rope_scaling": {"factor": 4.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 64, "rope_type": "llama3"}` (low = high freq factor as Scout's: no smoothed band, the wavelengths over 64 — pairs 2-7 of head_dim 16's 8 — divided by 4, pairs 0-1 kept; plain RoPE instead: 16.8176), max_position_embeddings 1024; the RoPE of apply_rotary_emb, the adjacent pairs (x[2i], x[2i + 1]) as complex numbers times polar(1, position · inv_freq_i) (the rotate-half pairs (i, i + 8) instead: 18.4619); use_qk_norm: on the rotary layers q and k then Llama4TextL2Norm'd, x · rsqrt(mean(x²) + rms_norm_eps 1e-5) over each head's 16 values, no weight (none: 21.061; on the NoPE layer too: 11.5055); the rotary layers chunked_attention with attention_chunk_size 256 (longer than every golden sequence, prompt + generated at most 160: the same as causal), layer 3 full causal attention; attn_temperature_tuning true with floor_scale 16 and attn_scale 0.3 (released 8192 and 0.1): layer 3's queries (not the keys) times log1p(floor((position + 1) / 16)) · 0.3 + 1, positions from 0 (1 up to position 14, 1.2079 from 15, ..., 1.6908 from 143; none: 8.9256; floor(position / 16) instead: 0.5905); head_dim 16 listed, 4 heads, GQA 2, scores × head_dim^-0.5, bias-free projections; moe_layers [1, 3] listed beside interleave_moe_layer_step 2: layers 0 and 2 a dense feed_forward.gate_proj / up_proj / down_proj of intermediate_size_mlp 96, layers 1 and 3 Llama4TextMoe: logits = h · feed_forward.router.weightᵀ (8, 64), the top-2 logits (num_experts_per_tok 2; released 1) and their sigmoids as scores, 0 for the other 6, never renormalised (the softmax of the top-2 logits instead: 17.488); each chosen expert's input is h × its score (on the output instead: 11.4903); 8 experts of intermediate_size 32 fused and transposed as released, feed_forward.experts.gate_up_proj (8, 64, 64) used as x @ W (gate the first 32 columns, up the last 32), feed_forward.experts.down_proj (8, 32, 64), out = (up · silu(gate)) @ down_proj[e], summed, plus the ungated shared expert feed_forward.shared_expert.gate_proj / up_proj / down_proj of 32 (left out: 24.3708); weights language_model.model.* and language_model.lm_head.weight (untied) beside four stand-ins (vision_model.class_embedding, vision_model.patch_embedding.linear.weight, vision_model.layernorm_pre.weight, multi_modal_projector.linear_1.weight (64, 16)) that the forward pass ignores and an export must copy unchanged; norm weights around 1 with std 0.2; BF16 matrices, F32 norms |
| granite4-micro | GraniteMoeHybridForCausalLM | Granite 4.0 without Mamba as ibm-granite/granite-4.0-micro's config.json has it (transformers 4.56: `"layer_types"` listing "attention" for all 3 layers, `"position_embedding_type": "rope"`, the mamba_* keys at GraniteMoeHybridConfig's defaults though no layer is Mamba-2, init_method / normalization_function, `"num_local_experts": 0` and `"num_experts_per_tok": 0`, `"rope_theta": 10000000` an integer, rms_norm_eps 1e-5): RoPE (rotate-half, theta 1e7) on every layer (none: prompt 4's logits change by 1.09); no block_sparse_moe, each layer's whole MLP is shared_mlp: `shared_mlp.input_linear.weight` (192, 64) — gate rows [0, 96), up rows [96, 192) — and `shared_mlp.output_linear.weight` (64, 96), down(silu(gate·h) · up·h) (halves swapped: 0.98); shared_intermediate_size 96 != intermediate_size 64, which is not read without experts (shared_mlp read at intermediate_size's width from the start of its buffers: 1.23); embeddings times embedding_multiplier 12 (none: 0.86), scores times attention_multiplier 0.25 instead of head_dim^-0.5 = 0.354 (0.67), each branch times residual_multiplier 0.22 before its add (none: 0.79), logits / logits_scaling 4 (none: 2.50); head_dim 8 (no key), GQA 4; tied (no lm_head tensor); all BF16 |
| granite4-moe-nope | GraniteMoeHybridForCausalLM | Granite 4.0 with experts and no positional embedding, attention-only: layer_types all "attention", `"position_embedding_type": null` (GraniteMoeHybridConfig's default: no rotary embedding, no layer rotates; the released granite-4.0-h-* configs say "nope", read alike; RoPE on every layer: 3.28); every layer GraniteMoeHybridMoE + shared_mlp: 4 experts of intermediate_size 32 stacked as `block_sparse_moe.input_linear.weight` (4, 64, 64) (per expert gate rows [0, 32), up rows [32, 64)) and `block_sparse_moe.output_linear.weight` (4, 64, 32), the router `block_sparse_moe.router.layer.weight` (4, 64) takes the softmax of the top-2 logits, plus `shared_mlp.input_linear.weight` (96, 64) / `shared_mlp.output_linear.weight` (64, 48) (shared_intermediate_size 48) added without a gate (left out: 2.25; halves swapped: 1.78; read at intermediate_size's width: 2.86); embedding_multiplier 8 (14.5), attention_multiplier 0.125 instead of 0.25 (0.64), residual_multiplier 0.3 (6.28), logits_scaling 2 (12.7); head_dim 16, GQA 2, untied, BF16 matrices, F32 norms |
| hunyuan-dense | HunYuanDenseV1ForCausalLM | Tencent Hunyuan dense (Hunyuan-0.5B / 1.8B / 4B / 7B-Instruct) as tencent/Hunyuan-7B-Instruct's config.json has it (model_type hunyuan_v1_dense, transformers_version 4.56.0: head_dim listed, attention_bias / mlp_bias false, `"rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"}` beside rope_theta 10000.0, use_qk_norm true, eod_token_id, pretraining_tp 1, rms_norm_eps 1e-5, tie_word_embeddings true, max_position_embeddings 32768): Llama's layers (input_layernorm, post_attention_layernorm, SwiGLU mlp.gate_proj / up_proj / down_proj, no biases); in the attention q and k are rotated FIRST and THEN normed per head: `self_attn.query_layernorm.weight` (16) and `self_attn.key_layernorm.weight` (16), RMSNorms over each head's head_dim values with eps rms_norm_eps, one weight shared by every head (weights around 2, std 0.3; the norms before RoPE, Qwen3's order, instead: prompt 4's logits change by 5.27; no q/k norms: 8.48); scores × head_dim^-0.5; the RoPE (rotate-half) at base rope_theta × alpha^(head_dim / (head_dim − 2)) = 1e4 × 1000^(16/14) = 26826957.95 (HunYuanDenseV1RotaryEmbedding's DynamicNTKAlpha base, attention factor 1; rope_scaling's factor / beta / mscale keys unread; the dynamic update never fires within max_position_embeddings; plain RoPE at rope_theta instead: 8.40; base rope_theta × alpha without the exponent: 7.48); head_dim 16 with 8 heads (q width 128 != hidden 64), 2 kv heads (GQA 4); tied (no lm_head tensor); all BF16 |
| granite4-h | GraniteMoeHybridForCausalLM | Granite 4.0-H with Mamba-2 layers, config.json in the spelling of ibm-granite/granite-4.0-h-micro's (transformers 4.56: `"layer_types"` ["mamba", "attention", "mamba", "mamba"], `"position_embedding_type": "nope"`, the mamba_* keys: mamba_n_heads 8, mamba_d_head 16, mamba_expand 2 (intermediate 128), mamba_n_groups 2, mamba_d_state 16, mamba_d_conv 4, mamba_conv_bias true, mamba_proj_bias false, mamba_chunk_size 8; `"num_local_experts": 0`, rms_norm_eps 1e-5): on the Mamba-2 layers (GraniteMoeHybridMambaLayer, Bamba's mixer) `mamba.in_proj.weight` (328, 64) gives the gate z (rows [0, 128)), xBC ([128, 320): x 128, B 2 x 16, C 2 x 16) and dt ([320, 328), one per head); xBC through the depthwise causal `mamba.conv1d.weight` (192, 1, 4) plus `mamba.conv1d.bias` (192) (no bias: prompt 4's logits change by 1.92), then SiLU (none: 1.82); dt = softplus(dt + `mamba.dt_bias`) (no dt_bias: 1.88; no softplus, dt + dt_bias clamped at 0: 1.01), A = -exp(`mamba.A_log`); head h (16 values of x) reads group h // 4 of B and C (every head group 0: 1.10; group h % 2: 0.84); S = exp(dt A) S + dt x B^T, y = S C + `mamba.D` x (no D: 2.46), the golden values from transformers' chunked scan over chunks of 8 (a state reset at every chunk start: 0.94), equal to the per-token recurrence within 1.5e-6; `mamba.norm.weight` (128): y silu(z) first, then one RMSNorm over all 128 values, times w (the RMSNorm before the gate: 1.66; per group of 64, as mamba_ssm / vLLM normalise: 1.75); `mamba.out_proj.weight` (64, 128); the branch times residual_multiplier as an attention branch. The attention layer (1) takes no RoPE (RoPE there: 0.65); shared_mlp 96 is each layer's whole MLP (halves swapped: 1.62; read at intermediate_size's width: 2.15); embedding_multiplier 12 (none: 1.21), attention_multiplier 0.0625 = 1/head_dim instead of head_dim^-0.5 = 0.25 (1.31), residual_multiplier 0.22 (1.07), logits_scaling 4 (6.35); head_dim 16 (no key), GQA 2; tied (no lm_head tensor); BF16 matrices, norms and conv bias, F32 A_log / D / dt_bias |
| granite4-h-moe | GraniteMoeHybridForCausalLM | Granite 4.0-H with Mamba-2 layers and experts, config.json in the spelling of ibm-granite/granite-4.0-h-tiny / -small's (transformers 4.56: `"layer_types"` ["mamba", "mamba", "attention", "mamba"], `"position_embedding_type": "nope"`, the mamba_* keys: mamba_n_heads 4, mamba_d_head 32, mamba_expand 2 (intermediate 128), mamba_n_groups 1 as released, mamba_d_state 32, mamba_d_conv 4, mamba_conv_bias true, mamba_proj_bias false, mamba_chunk_size 16; `"num_local_experts": 4`, `"num_experts_per_tok": 2`, rms_norm_eps 1e-5): granite4-h's Mamba-2 layers (GraniteMoeHybridMambaLayer) with `mamba.in_proj.weight` (324, 64) — z rows [0, 128), xBC [128, 320) (x 128, B 32, C 32), dt [320, 324) — the causal `mamba.conv1d.weight` (192, 1, 4) plus `mamba.conv1d.bias` (192) (no bias: prompt 4's logits change by 3.80), SiLU (none: 5.92), dt = softplus(dt + `mamba.dt_bias`) (no dt_bias: 4.44; no softplus: 3.59), every head of 32 values reading the one group of B and C (state 32), y = S C + `mamba.D` x (no D: 5.16), the golden values from transformers' chunked scan over chunks of 16 (prompt 4's 144 tokens: 9 chunks; a state reset at every chunk start: 1.89), equal to the per-token recurrence within 4.8e-6; `mamba.norm.weight` (128): y silu(z) first, then one RMSNorm over all 128 values (the RMSNorm before the gate: 3.82; with one group the per-group norm is the same), `mamba.out_proj.weight` (64, 128); the attention layer (2) takes no RoPE (RoPE there: 2.63); on every layer GraniteMoeHybridMoE plus shared_mlp: 4 experts of intermediate_size 32 stacked as `block_sparse_moe.input_linear.weight` (4, 64, 64) (per expert gate rows [0, 32), up rows [32, 64)) and `block_sparse_moe.output_linear.weight` (4, 64, 32), the router `block_sparse_moe.router.layer.weight` (4, 64) takes the softmax of the top-2 logits (every expert chosen by 58 to 88 of prompt 4's 144 tokens in every layer; the top-1 expert alone, weight 1: 3.22), plus `shared_mlp.input_linear.weight` (96, 64) / `shared_mlp.output_linear.weight` (64, 48) added without a gate (left out: 3.55; halves swapped: 2.68; read at intermediate_size's width: 4.50); embedding_multiplier 10 (none: 6.62), attention_multiplier 0.09375 instead of head_dim^-0.5 = 0.25 (0.97), residual_multiplier 0.25 (5.46), logits_scaling 5 (23.7); head_dim 16 (no key), 1 kv head (GQA 4); untied (lm_head.weight); BF16 matrices, norms and conv bias, F32 A_log / D / dt_bias |
| lfm2 | Lfm2ForCausalLM | Liquid AI's LFM2 (LFM2-350M / 700M / 1.2B / 2.6B) with config.json in the releases' spelling (transformers 4.54: the original LFM2 keys `"block_ff_dim": 192` beside `"intermediate_size": 192`, block_auto_adjust_ff_dim true, block_ffn_dim_multiplier 1.0, block_multiple_of 32, block_dim / conv_dim / conv_dim_out 64, num_heads 4, block_norm_eps and the training keys, none of them read but block_ff_dim and the three MLP keys; `"layer_types"` ["conv", "conv", "full_attention", "conv", "full_attention"] with `"full_attn_idxs": null`, conv_L_cache 3, conv_bias false, norm_eps 1e-5, rope_theta 1000000.0, tie_word_embeddings true; no head_dim, theta or tie_embedding key): on the conv layers (Lfm2ShortConv) `conv.in_proj.weight` (192, 64) gives B (rows [0, 64)), C ([64, 128)) and x ([128, 192)) (`B, C, x = BCx.chunk(3)`; C swapped with B: prompt 4's logits change by 13.0; C swapped with x, Mamba's x | B | C: 11.7), B x through the depthwise causal `conv.conv.weight` (64, 1, 3) without bias or activation (no conv, y = C B x: 12.4; a SiLU after it: 12.0), times C, `conv.out_proj.weight` (64, 64); the cache a one-token step reads is the last 2 values of B x per channel; the attention layers (2, 4): q/k/v_proj, `self_attn.q_layernorm` / `k_layernorm` (16,) RMSNorms over each head BEFORE RoPE (after it, HunYuan's order: 0.627; none: 1.74), rotate-half RoPE at rope_theta 1e6 (at 1e4: 2.06), scores x 16^-0.5, GQA 2, `self_attn.out_proj`; every layer `operator_norm` before the mixer and `ffn_norm` before Lfm2MLP, `feed_forward.w2(silu(w1 h) * w3 h)` at Lfm2MLP's adjusted width int(2 x 192 / 3) = 128, x 1.0, rounded up to a multiple of 32: 128 (w1 / w3 (128, 64), w2 (64, 128); w1 and w3 swapped: 8.90); the final norm `model.embedding_norm`; no embedding scale; Lfm2RMSNorm x rsqrt(mean(x²) + 1e-5) w with a plain w; tied (no lm_head tensor); all BF16 (norms too) |
| lfm2-moe | Lfm2MoeForCausalLM | Liquid AI's LFM2-MoE (LFM2-8B-A1B) with config.json as transformers 4.57 writes Lfm2MoeConfig ("dtype", `"rope_theta": 1000000.0` at the top level, `"layer_types"` ["conv", "full_attention", "conv", "conv", "full_attention"] listed — Lfm2MoeConfig derives none, full_attn_idxs is not read —, `"num_dense_layers": 2`, intermediate_size 96, moe_intermediate_size 32, num_experts 8, num_experts_per_tok 2, use_expert_bias true, norm_topk_prob true, `"routed_scaling_factor": 1.5`, conv_L_cache 3, conv_bias false, norm_eps 1e-5, tie_word_embeddings true; none of LFM2's original keys — block_*, theta, tie_embedding, full_attn_idxs —, no head_dim, no hidden_act): LFM2's layers — Lfm2ShortConv on layers 0, 2, 3 (`conv.in_proj.weight` (192, 64) rows B, C, x, B x through the depthwise causal `conv.conv.weight` (64, 1, 3), times C, `conv.out_proj`), Lfm2Attention on 1 and 4 (q/k/v_proj, per-head `self_attn.q_layernorm` / `k_layernorm` (16,) before the rotate-half RoPE at 1e6, GQA 2, `self_attn.out_proj`), `operator_norm` / `ffn_norm`, the final `model.embedding_norm` —; layers 0-1 (a conv and an attention layer) take Lfm2MoeMLP at intermediate_size 96 as it stands (`feed_forward.w1` / `w3` (96, 64), `w2` (64, 96); Lfm2MLP's rule would start from int(2 x 96 / 3) = 64); layers 2-4 Lfm2MoeSparseMoeBlock: s = sigmoid(h·Wᵀ) with `feed_forward.gate.weight` (8, 64), the top 2 of s + `feed_forward.expert_bias` (F32 (8,), std 0.2; the choice only — the top 2 of s alone, as use_expert_bias false runs: other experts for 74, 90 and 90 of prompt 4's 144 tokens in layers 2-4, prompt 4's logits change by 8.81), weights the chosen s (s + bias as the weights: 2.71) divided by (their sum + 1e-6) (not divided: 6.99), times routed_scaling_factor 1.5 (x 1: 3.90); a softmax in place of the sigmoid, the bias kept: other experts for 61, 66 and 67 tokens, 7.63; experts `feed_forward.experts.{e}.w1` (gate, (32, 64)), `w3` (up), `w2` (down, (64, 32)) as released (w1 and w3 swapped: 6.15), no shared expert; every expert chosen by some of prompt 4's tokens in every MoE layer; tied (no lm_head tensor); BF16 weights (norms too), F32 expert_bias |
| nemotron-h | NemotronHForCausalLM | NVIDIA's Nemotron-H (Nemotron-H-8B / 4B, NVIDIA-Nemotron-Nano-9B-v2 / 12B-v2) with config.json in nvidia/Nemotron-H-8B-Base-8K's spelling (transformers 4.48's remote NemotronHConfig: `"hybrid_override_pattern": "M-M*-"` beside num_hidden_layers 5, `"attention_head_dim": 16` and no head_dim, mlp_hidden_act relu2, mamba_hidden_act silu, mamba_num_heads 8, mamba_head_dim 8, n_groups 2, ssm_state_size 16, conv_kernel 4, use_conv_bias true, use_bias / mamba_proj_bias / mlp_bias / attention_bias false, expand 2, chunk_size 8, time_step_min 0.01, time_step_max 0.1, time_step_floor 1e-4, `"time_step_limit": [0.0, Infinity]`, layer_norm_epsilon 1e-5 beside rms_norm_eps 1e-5, residual_in_fp32 false, rescale_prenorm_residual true, use_mamba_kernels true, auto_map, tie_word_embeddings false): every layer one block, x + mixer(RMSNorm(x) `backbone.layers.{i}.norm.weight`), the mixer by the pattern's character — "M" (layers 0, 2) a Mamba-2 mixer (NemotronHMamba2Mixer = zamba2's Zamba2MambaMixer, torch_forward): `mixer.in_proj.weight` (200, 64) gives the gate z (rows [0, 64)), xBC ([64, 192): x 64, B 2 x 16, C 2 x 16) and dt ([192, 200), one per head); xBC through the depthwise causal `mixer.conv1d.weight` (128, 1, 4) plus `mixer.conv1d.bias` (128) (no bias: prompt 4's logits change by 7.78), then SiLU (none: 7.11); dt = softplus(dt + `mixer.dt_bias`) (no dt_bias: 6.56) FLOORED at time_step_min 0.01 (it raises 373 and 13 of the 1152 (token, head) values of prompt 4 in layers 0 and 2; clamped at 0 instead, as Granite 4.0-H / Bamba's mixer and mamba_ssm's kernels take it: 0.240), time_step_limit not read; A = -exp(`mixer.A_log`); the width is mamba_num_heads x mamba_head_dim = 64, not expand x hidden_size = 128; head h (8 values of x) reads group h // 4 of B and C (every head group 0: 5.84; group h % 2: 4.74); S = exp(dt A) S + dt x B^T, y = S C + `mixer.D` x (no D: 11.5), the golden values from transformers' chunked scan over chunks of 8 (a state reset at every chunk start: 2.79), equal to the per-token recurrence within 4.3e-6; Zamba2RMSNormGated with `mixer.norm.weight` (64): y silu(z) first, then an RMSNorm per group of 32 values (intermediate_size / n_groups; over all 64 at once, as GraniteMoeHybridRMSNormGated: 4.20; the RMSNorm before the gate: 5.69); `mixer.out_proj.weight` (64, 64) — "*" (layer 3) attention with no positional encoding at all (`mixer.q_proj` / `k_proj` / `v_proj` / `o_proj`, 4 heads of 16, GQA 2, scores x 16^-0.5; a rotate-half RoPE at theta 1e4: 4.51) — "-" (layers 1, 4) the ungated MLP `mixer.down_proj` (64, 96) (relu(`mixer.up_proj` (96, 64) h)^2) (a plain ReLU: 7.24); embeddings `backbone.embeddings.weight` unscaled, final norm `backbone.norm_f.weight`, every norm eps layer_norm_epsilon (rms_norm_eps not read), `lm_head.weight` untied; BF16 matrices, norms and conv bias, F32 A_log / D / dt_bias |
| nemotron-h-moe | NemotronHForCausalLM | Nemotron-H with MoE blocks (NVIDIA-Nemotron-3-Nano-30B-A3B) with config.json in nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16's spelling (transformers 4.55.4's remote NemotronHConfig: `"hybrid_override_pattern": "ME*EM-"`, `"head_dim": 16` and no attention_head_dim, norm_eps beside layer_norm_epsilon and no rms_norm_eps, no time_step_limit, rope_theta / partial_rotary_factor / mamba_ssm_cache_dtype listed and unread, `"n_routed_experts": 8`, `"num_experts_per_tok": 2`, `"moe_intermediate_size": 32`, `"moe_shared_expert_intermediate_size": 48`, n_shared_experts 1, n_group 1, topk_group 1, norm_topk_prob true, `"routed_scaling_factor": 2.5`, no moe_latent_size key, intermediate_size 96 for the dense layer, auto_map with AutoModel): nemotron-h's Mamba-2 (layers 0, 4; the floor at time_step_min 0.01 raises 216 and 272 of prompt 4's 1152 dt values), attention (layer 2, no positions, 4 heads of 16, GQA 2) and ungated relu² MLP (layer 5, `mixer.up_proj` (96, 64)); on layers 1 and 3 NemotronHMoE: logits = h `mixer.gate.weight` (8, 64)ᵀ in fp32, s = sigmoid, the top 2 of s + `mixer.gate.e_score_correction_bias` (F32 (8,), the choice only: without it other experts for 51 and 106 of prompt 4's 144 tokens, its logits change by 8.94) in the one group, weights the chosen s / (their sum + 1e-20) (not divided: 6.70) x 2.5 (x 1: 7.58); a softmax in place of the sigmoid: other experts for 69 and 87 tokens, 10.1; top-1: 9.51; experts `mixer.experts.{e}.up_proj.weight` (32, 64) / `down_proj.weight` (64, 32) per expert as released, down(relu(up h)²), no gate; plus the shared expert `mixer.shared_experts.up_proj` (48, 64) / `down_proj` (64, 48) unweighted (left out: 7.98); every expert chosen by prompt 4's tokens in both MoE layers; a plain ReLU for relu² everywhere: 6.66; untied (lm_head.weight); BF16 matrices and norms, F32 A_log / D / dt_bias / e_score_correction_bias |
| arcee | ArceeForCausalLM | Arcee's AFM-4.5B with config.json shaped after arcee-ai/AFM-4.5B's (ArceeConfig as transformers 4.53 writes it: model_type arcee, `"hidden_act": "relu2"`, head_dim 16 listed (= hidden / heads), attention_bias / mlp_bias false, no pretraining_tp, rms_norm_eps 1e-5, `"rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 4.0, "mscale": 1.0, "original_max_position_embeddings": 64, "rope_type": "yarn", "type": "yarn"}` beside rope_theta 10000.0, max_position_embeddings 256 = 4 x 64, tie_word_embeddings false): Llama's layers (input_layernorm, q/k/v/o_proj without biases, 4 heads of 16, 2 kv heads (GQA 2), scores x 16^-0.5, post_attention_layernorm) with ArceeMLP = NemotronMLP: `mlp.down_proj` (64, 128) (relu(`mlp.up_proj` (128, 64) h)²), no mlp.gate_proj in the file (the activation read as SiLU, still ungated: 19.1; a plain ReLU without the square: 21.5); the rotate-half RoPE with YaRN x4 from 64 (pair 0 of head_dim 16's 8 kept, 1-2 ramped, 3-7 divided by 4; plain RoPE at rope_theta instead: 8.85), cos / sin x 0.1 ln 4 + 1 = 1.1386 (YaRN's default: mscale without mscale_all_dim; the frequencies without the factor: 3.45); untied (lm_head.weight); all BF16 |
| dots1 | Dots1ForCausalLM | rednote-hilab's dots.llm1 with config.json shaped after dots.llm1.inst's (Dots1ForCausalLM, model_type dots1, transformers 4.53: first_k_dense_replace 1, `"n_routed_experts": 8`, `"num_experts_per_tok": 2`, `"n_shared_experts": 1`, `"moe_intermediate_size": 32`, `"n_group": 2`, `"topk_group": 1`, norm_topk_prob true, `"routed_scaling_factor": 2.5`, `"scoring_func": "sigmoid"` (not read by Dots1Config), head_dim 24 listed (Dots1Config has no such field: Dots1Attention's getattr reads it), `"sliding_window": 16`, `"max_window_layers": 2` and no layer_types, attention_bias false, rms_norm_eps 1e-5, rope_theta 10000.0, rope_scaling null, untied): Qwen3's attention, 4 heads of 24 (q width 96 != hidden 64), 2 kv heads, `self_attn.q_norm` / `k_norm` (24) RMSNorms over each head BEFORE RoPE (after it: 25.2), scores x 24^-0.5; Dots1Config derives the layer types: layers 2-3 (i >= max_window_layers) slide, i - 16 < j <= i, layers 0-1 full (no window: 20.3; the window on layers 0-1 instead: 31.6), every golden prompt (21 to 144 tokens) longer than the window; layer 0 a dense `mlp.gate_proj` / `up_proj` / `down_proj` SwiGLU of 128, layers 1-3 Dots1MoE (DeepseekV3MoE): logits = h `mlp.gate.weight` (8, 64)ᵀ in fp32, s = sigmoid (a softmax: 28.1), the choice on s + `mlp.gate.e_score_correction_bias` (F32 (8,); without it: 28.6) within the better of 2 groups of 4 experts (a group scores the sum of its two best; no group limit: 25.7), top-2 (top-1: 30.2), weights the chosen s / (their sum + 1e-20) (not divided: 20.1) x 2.5 (x 1: 21.3); 8 experts `mlp.experts.{e}.gate_proj` / `up_proj` (32, 64) / `down_proj` (64, 32) per expert, plus `mlp.shared_experts.*` of 1 x 32 with no gate of its own (left out: 25.3); every expert chosen by prompt 4's tokens in each MoE layer; untied (lm_head.weight); BF16 matrices and norms, F32 e_score_correction_bias |
| hunyuan-moe | HunYuanMoEV1ForCausalLM | Tencent Hunyuan-A13B with config.json in tencent/Hunyuan-A13B-Instruct's spelling and transformers' model_type hunyuan_v1_moe (transformers_version 4.56.0: `"attention_head_dim": 24` beside `"head_dim": 24` (transformers reads head_dim, Tencent's remote code attention_head_dim), `"num_experts": 8` an int, per-layer lists `"moe_topk": [2, 2, 2]`, `"moe_intermediate_size": [48, 48, 48]` (= intermediate_size, which transformers sizes the experts by) and `"num_shared_expert": [1, 1, 1]`, use_mixed_mlp_moe true, use_cla false, use_qk_norm true, eod_token_id, pretraining_tp 1, rms_norm_eps 1e-5, attention_bias / mlp_bias false, `"rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"}` beside rope_theta 10000.0, max_position_embeddings 32768, tie_word_embeddings true): hunyuan-dense's attention — q and k rotated FIRST and THEN normed per head by `self_attn.query_layernorm` / `key_layernorm` (24) (before RoPE instead: prompt 4's logits change by 7.25; no q/k norms: 9.42), scores × 24^-0.5, the rotate-half RoPE at base 1e4 × 1000^(24/22) = 18738174.23 (plain RoPE at rope_theta: 8.91; base rope_theta × alpha: 8.18), 4 heads of 24 (q width 96 != hidden 64), 2 kv heads (GQA 2) —; every layer HunYuanMoEV1Moe: logits = h `mlp.gate.wg.weight` (8, 64; F32)ᵀ in fp32, the softmax over the 8 experts (a sigmoid instead: 4.70), top-2 (top-1: 6.61), weights divided by their sum without an epsilon (not divided: 5.65); 8 experts `mlp.experts.{e}.gate_proj` / `up_proj` (48, 64) / `down_proj` (64, 48) per expert as released (transformers 5's stacked mlp.experts.gate_up_proj (8, 96, 64) / down_proj read alike), plus `mlp.shared_mlp.*` of intermediate_size 48 added without a gate or weight (left out: 9.00); every expert chosen by prompt 4's tokens in each layer; tied (no lm_head.weight); BF16 weights and norms, F32 router |
| apertus | ApertusForCausalLM | the Swiss AI Initiative's Apertus with config.json shaped after swiss-ai/Apertus-8B-2509's (ApertusConfig as transformers 4.56 writes it: model_type apertus, `"hidden_act": "xielu"`, no head_dim (hidden / heads = 16), attention_bias false, `"qk_norm": true`, `"post_norm": false` and `"mlp_bias": false` listed as released (Swiss AI's keys: ApertusConfig reads none of them), rms_norm_eps 1e-5, `"rope_theta": 10000` an integer (the release's 12000000), `"rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 64, "rope_type": "llama3", "type": "llama3"}`, max_position_embeddings 512 = 8 x 64, tie_word_embeddings false): Llama's pre-norm layers with the norms named `attention_layernorm` (before self_attn) and `feedforward_layernorm` (before the MLP); ApertusAttention: q/k/v/o_proj without biases, 4 heads of 16, 2 kv heads (GQA 2), `self_attn.q_norm` / `k_norm` (16) RMSNorms over each head BEFORE RoPE (after it: prompt 4's logits change by 3.12), scores x 16^-0.5; the rotate-half RoPE with llama3 x8 from 64 at theta 1e4 (pair 0 kept, 1-2 smoothed, 3-7 divided by 8; plain RoPE at rope_theta: 7.24); ApertusMLP: `mlp.down_proj` (64, 128) (xIELU(`mlp.up_proj` (128, 64) h)), no gate_proj, no biases (SiLU in place of xIELU, still ungated: 17.3); xIELU(x) = a_p x x + beta x for x > 0, else (expm1(min(x, eps)) - x) a_n + beta x, with a_p = softplus(alpha_p) and a_n = beta + softplus(alpha_n) (torch's softplus) from the layer's own `mlp.act_fn.alpha_p` (1,), `mlp.act_fn.alpha_n` (1,) (stored before the softplus), `mlp.act_fn.beta` () and `mlp.act_fn.eps` () (0-d tensors, header shape []), all BF16 as released: stored (alpha_p, alpha_n, beta, eps) (-0.625, -1.5, 0.375, bf16(-1e-6)), (0.75, 0.25, 0.625, bf16(-1e-6)), (-0.125, -0.5, 0.4375, -0.0625), i.e. a_p 0.4287 / 1.1369 / 0.6326 and a_n 0.5764 / 1.4509 / 0.9116 on layers 0 / 1 / 2 (XIELUActivation's default parameters, a_p 0.8, a_n 0.8, beta 0.5, in their place: 13.4; alpha_p / alpha_n without the softplus: 31.4; eps -1e-6 on layer 2 too, where 420 of prompt 4's 18432 xIELU inputs lie in (eps, 0]: 0.070); computed in fp32 from the stored values (softplus and the beta add rounded to bf16, as parameters held in bf16 would: 0.063); untied (lm_head.weight); all BF16 |
| glm4-moe-lite | Glm4MoeLiteForCausalLM | Z.ai's GLM-4.7-Flash with config.json as transformers 5 writes Glm4MoeLiteConfig (`"dtype": "bfloat16"`, transformers_version 5.0.0, pretraining_tp, `"rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"}` and no top-level rope_theta / rope_scaling, `"rope_interleave": true`, `"mlp_layer_types": ["dense", "sparse", "sparse"]` listed, no head_dim key: the attribute_map reads one as qk_rope_head_dim) plus the keys zai-org/GLM-4.7-Flash lists that Glm4MoeLiteConfig has no field for: `"first_k_dense_replace": 1` (agreeing with mlp_layer_types; transformers reads only those), `"num_nextn_predict_layers": 1`, `"topk_method": "noaux_tc"` (no scoring_func); Glm4MoeLiteAttention = DeepseekV3Attention: q = q_b_proj(q_a_layernorm(q_a_proj(h))) (q_lora_rank 40) viewed as 4 heads of qk_nope_head_dim 24 then qk_rope_head_dim 8, kv_a_proj_with_mqa(h) (28, 64) gives the latent c (kv_lora_rank 20) then one shared k_pe (8), kv_b_proj(kv_a_layernorm(c)) (224, 20) gives per head k_nope (24) then v (32), o_proj (64, 4 x 32): q/k head 32 = v head 32 != nope 24, as the release's 192 + 64 = 256 = 256; num_key_value_heads 4 = heads; the latent norms at eps 1e-6 (Glm4MoeRMSNorm's default) beside rms_norm_eps 1e-5 on the layer and final norms, kv_a_proj_with_mqa's latent rows scaled by 0.004 so that the latent's eps shows (rms_norm_eps as its eps: prompt 4's logits change by 9.57), latent norm weights around 1 with std 0.3 (either at 1: 11.6 / 11.9); RoPE over the 8 rope dims at theta 1e6, rope_interleave: reshuffled to (0, 2, 4, 6, 1, 3, 5, 7), then rotate-half (rotate-half on the stored order: 11.0; the default theta 1e4 of a reader that misses rope_parameters: 9.38), scores x 32^-0.5; layer 0 a dense SwiGLU of 128, layers 1-2 Glm4MoeLiteMoE: s = sigmoid(h W^T) (mlp.gate.weight (8, 64)), the top 4 of s + mlp.gate.e_score_correction_bias (F32, std 0.05; without it: 37 and 33 of prompt 4's 144 tokens take other experts, 7.30) in one group (n_group = topk_group = 1, as released), the chosen s / (sum + 1e-20) x routed_scaling_factor 1.8 (x1: 8.40), per-expert mlp.experts.{e}.gate_proj / up_proj / down_proj of 48 (every expert chosen over prompt 4 in both layers), plus mlp.shared_experts of 1 x 48 without a gate (none: 16.4); the multi-token-prediction layer stored whole as released, model.layers.3.* (embed_tokens, enorm, hnorm, eh_proj, shared_head.norm / .head and a full MoE decoder layer: 44 tensors, 172,932 values) that the forward pass ignores and an export must copy unchanged; untied; BF16 matrices and norms, F32 correction bias |
| llava-mm | LlavaForConditionalGeneration | LLaVA's generic wrapper as mistral-community/pixtral-12b ships it (LlavaConfig as models/pixtral/convert_pixtral_weights_to_hf.py builds it, transformers_version 4.45.0.dev0: image_seq_length 1, image_token_index 10, projector_hidden_act gelu, vision_feature_layer -1, `"vision_feature_select_strategy": "full"`, torch_dtype bfloat16, a small pixtral vision_config holding the file's only `"tie_word_embeddings": false`; no token ids in config.json: generation_config.json has the eos, the tokenizer's im_end): the language model is the text family text_config.model_type names, `"mistral"` (LlavaModel's AutoModel.from_config: MistralModel unchanged, Llama's pre-norm layers, SwiGLU, no biases), on text_config's numbers (`"head_dim": 16` with 8 heads: q width 128 != hidden 64, 2 kv heads (GQA 4, the release's 32 / 8), rms_norm_eps 1e-5, `"rope_theta": 1000000000.0`, `"sliding_window": null`, max_position_embeddings 1024000, the leftover `"is_composition": true`; no tie_word_embeddings: MistralConfig's false); weights language_model.model.* and language_model.lm_head.weight (untied) beside seven stand-ins (vision_tower.patch_conv.weight, vision_tower.ln_pre.weight, vision_tower.transformer.layers.0.attention_norm.weight, multi_modal_projector.linear_1 / linear_2 weight and bias) that the forward pass ignores and an export must copy unchanged; what-ifs: the RoPE at 10000 (rope_theta looked for at the top level: 7.61), a window of 16 on every layer where text_config says null (15.8); text_config without model_type is LlavaConfig's llama (the same logits: Mistral without a window); all BF16 |
| internvl-mm | InternVLForConditionalGeneration | InternVL's wrapper as OpenGVLab/InternVL3-1B-hf ships it (InternVLConfig as models/internvl/convert_internvl_weights_to_hf.py builds it, transformers_version 4.52.0.dev0: downsample_ratio 0.5, image_seq_length 256, image_token_id 10 (released 151667), projector_hidden_act gelu, vision_feature_layer -1, `"vision_feature_select_strategy": "default"`, a small internvl_vision vision_config; no token ids and no tie_word_embeddings at the top level): the language model is the text family text_config.model_type names, `"qwen2"` (InternVLModel's AutoModel.from_config: Qwen2Model unchanged, q/k/v biases, no o_proj bias), on text_config's numbers (architectures [Qwen2ForCausalLM], bos_token_id (the tokenizer's endoftext) and eos_token_id (its im_end, an int: the converter's forced eos) inside it, no head_dim (hidden / heads = 16), 4 heads, 2 kv heads, rms_norm_eps 1e-6, rope_theta 1e6, `"use_sliding_window": false` beside `"sliding_window": null`, `"tie_word_embeddings": false`); weights model.language_model.* and lm_head.weight (untied) beside seven stand-ins (model.vision_tower.embeddings.cls_token / patch_embeddings.projection.weight / encoder.layer.0.layernorm_before.weight, model.multi_modal_projector.layer_norm weight and bias, linear_1 / linear_2 weights) that the forward pass ignores and an export must copy unchanged; what-ifs: the RoPE at 10000 (10.0), no q/k/v biases (the text model read as a Llama: 17.3); text_config without model_type is InternVLConfig's qwen2; all BF16 |
| nemotron-h-latent-moe | NemotronHForCausalLM | Nemotron-H with LatentMoE blocks (NVIDIA-Nemotron-3-Super) with config.json in nemotron-h-moe's NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 spelling plus `"moe_latent_size": 24` (`"hybrid_override_pattern": "MEM*E-"`, `"head_dim": 16`, n_routed_experts 8, num_experts_per_tok 2, moe_intermediate_size 32, moe_shared_expert_intermediate_size 48, intermediate_size 96 for the dense layer, n_shared_experts 1, n_group 1, topk_group 1, norm_topk_prob true, routed_scaling_factor 2.5; the latent 24 differs from hidden 64 and from every other width): nemotron-h-moe's Mamba-2 (layers 0, 2; the floor at time_step_min 0.01 raises 344 and 284 of prompt 4's 1152 dt values), attention (layer 3, no positions, 4 heads of 16, GQA 2) and ungated relu² MLP (layer 5, `mixer.up_proj` (96, 64)); on layers 1 and 4 NemotronHMoE with moe_latent_size: the router reads the block input h at full width, logits = h `mixer.gate.weight` (8, 64)ᵀ in fp32, s = sigmoid, the top 2 of s + `mixer.gate.e_score_correction_bias` (F32 (8,); without it other experts for 109 and 79 of prompt 4's 144 tokens, its logits change by 10.8), weights the chosen s / (their sum + 1e-20) (not divided: 6.13) x 2.5 (x 1: 6.75); f = `mixer.fc1_latent_proj.weight` (24, 64) h; the chosen experts `mixer.experts.{e}.up_proj.weight` (32, 24) / `down_proj.weight` (24, 32) per expert as released, down(relu(up f)²), their weighted sum (24 wide) through `mixer.fc2_latent_proj.weight` (64, 24) back to 64, plus the shared expert `mixer.shared_experts.up_proj` (48, 64) / `down_proj` (64, 48) on h itself, not the latent (left out: 8.44); no biases (mlp_bias false); fc2_latent_proj at 0, the routed path left out: 8.85; fc1_latent_proj and fc2_latent_proj each read as the other's transpose (both shapes fit): 10.3; a softmax in place of the sigmoid: 10.2; top-1: 8.27; every expert chosen by prompt 4's tokens in both MoE layers; untied (lm_head.weight); BF16 matrices and norms, F32 A_log / D / dt_bias / e_score_correction_bias |
| gemma4-e | Gemma4ForCausalLM | Google's Gemma 4 with E2B's features (models/gemma4/modeling_gemma4.py; docs/gemma4.md) and config.json in the flat spelling that file reads, model_type "gemma4_text" as convert_gemma4_weights.py --text_only writes it (`"head_dim": 16`, `"global_head_dim": 32`, `"num_global_key_value_heads": null` as keys of their own, no `per_layer_config`; "dtype" bfloat16, transformers_version 5.14.1; rope_parameters written out: `sliding_attention` {default, 1e4}, `full_attention` {proportional, partial_rotary_factor 0.25, 1e6}; layer_types sliding, sliding, full, sliding, sliding, full; sliding_window 8 (every golden prompt is longer: without the window 38.0); rms_norm_eps 1e-6, hidden_activation gelu_pytorch_tanh, final_logit_softcapping 30 (prompt 4's raw logits reach 37.0: without the cap 11.7), tied, eos [im_end, endoftext]): embeddings x sqrt(64) = 8 (bf16-exact); per layer Gemma4RMSNorm sandwich norms x (mean(x²) + 1e-6)^-0.5 times w as stored, plain w around 1 (read as (1 + w): 41.7); 4 heads, sliding layers 2 kv heads of 16, full layers 2 kv heads of 32 (`self_attn.q_proj` (128, 64), `o_proj` (64, 128)); q_norm / k_norm per head before RoPE (weights around 0.3, so that the attention at score scale 1 is no sharper than the other fixtures': scores x 1.0, not head^-0.5: 26.1), v_norm without weight (left out: 18.2); sliding layers the default RoPE over 16 dims at 1e4, full layers the proportional one: int(0.25 x 32 // 2) = 4 of the 16 rotate-half pairs (i, i + 16) turn at 1e6^(-2i/32), the other 12 have frequency 0 (read as a partial rotary dim of 8: 9.20; as the default over the whole head: 5.44); num_kv_shared_layers 2: layers 4 and 5 have no k_proj / v_proj / k_norm, layer 4 (sliding) attends over layer 3's K / V (the last sliding layer before 4), layer 5 (full) over layer 2's, each with its own q_proj / q_norm / RoPE / mask (their K / V recomputed from their own input with the source's projections: 23.2; the first sliding layer as the source: 25.4); use_double_wide_mlp: the MLPs of layers 4 and 5 are 192 wide, the others 96; per-layer embeddings of 8: `embed_tokens_per_layer` (459, 48) x bf16(sqrt(8)) = 2.828125, `per_layer_model_projection` (48, 64) x 64^-0.5 then `per_layer_projection_norm` (8), their sum x 2^-0.5, per layer x += post_per_layer_input_norm(per_layer_projection (64, 8) (gelu_tanh(per_layer_input_gate (8, 64) x) * ple_l)) after the MLP (none: 34.4; the table unscaled: 26.7); `layer_scalar` (1,) per layer 1.227, 0.859, 0.633, 0.875, 1.25, 1.266 (none: 17.1); 1e-7 weight noise moves prompt 4's logits by 9.5e-5 (<= 1e-4, seed 77000 was above); all BF16 (layer_scalar too) |
| gemma4-dense | Gemma4ForConditionalGeneration | Gemma 4 with 31B's features in Gemma4Config's spelling: model_type "gemma4", text_config "gemma4_text" with gemma4-e's keys and values but `"attention_k_eq_v": true`, `"num_global_key_value_heads": 1`, `"hidden_size_per_layer_input": 0`, `"num_kv_shared_layers": 0`, `"use_double_wide_mlp": false`, `"use_bidirectional_attention": "vision"` (text-only prompts: the causal masks), intermediate_size 128; a small gemma4_vision vision_config, audio_config null, tie_word_embeddings true, eos at the top level; the language model under model.language_model.* beside five stand-ins (`model.vision_tower.patch_embedder.input_proj.weight` / `.position_embedding_table`, `model.vision_tower.encoder.layers.0.input_layernorm.weight` / `.self_attn.q_proj.linear.weight`, `model.embed_vision.embedding_projection.weight`) that the forward pass ignores and an export must copy unchanged; the full layers (2, 5) have one kv head of 32 and no v_proj: V is the raw k_proj output (before k_norm) through v_norm, K = RoPE(k_norm(k_proj h)) (V after k_norm: 13.0; after k_norm and RoPE: 19.5); the sliding layers 2 kv heads of 16 with v_proj; the soft-cap applied by Gemma4ForConditionalGeneration.forward (Gemma 3's was not; raw logits 33.6, without it 9.38); score scale 1 (head^-0.5: 16.6), plain-w norms ((1 + w): 40.8), proportional RoPE on the full layers (partial dim: 11.8; default: 3.35), window 8 (none: 31.8), layer_scalar 0.887, 0.602, 0.813, 1.336, 1.188, 1.336 (none: 17.2), v_norm (none: 10.5); weight noise 4.2e-5; all BF16 |
| gemma4-moe | Gemma4ForCausalLM | Gemma 4 with 26B-A4B's features: gemma4-dense's text model (k_eq_v, full layers 1 kv head, no per-layer embeddings, no sharing) as Gemma4ForCausalLM with `"enable_moe_block": true`, `"num_experts": 8`, `"top_k_experts": 2`, `"moe_intermediate_size": 24`, intermediate_size 40 (the dense MLP beside the experts); on every layer: r = the residual after the attention's add (un-normed), m = post_feedforward_layernorm_1(mlp(pre_feedforward_layernorm(r))) + post_feedforward_layernorm_2(experts), x = r + post_feedforward_layernorm(m); the router z = rms(r) (no weight) x `router.scale` (64,) x 64^-0.5, logits z `router.proj.weight` (8, 64)ᵀ, softmax over 8 in fp32, top-2, divided by their sum, x `router.per_expert_scale` (8,) (router.scale and per_expert_scale around 1, std 0.3; at 1: 18.9 / 9.85; the router on pre_feedforward_layernorm(r): 15.0; those two move 9 to 61 of prompt 4's 144 tokens per layer to other experts); the experts on pre_feedforward_layernorm_2(r): `experts.gate_up_proj` (8, 48, 64) (gate rows first; swapped: 27.1), `experts.down_proj` (8, 64, 24), gelu_tanh (on the dense MLP's input: 14.7; no dense MLP: 31.0); the renormalisation only changes the logits by 5e-4 (post_feedforward_layernorm_2 takes a per-token factor out but for its eps); routers searched and nudged over the prompt and fed-back tokens (routing gaps 0.0015 / 0.0012 generated), every expert chosen by prompt 4 in every layer; weight noise 9.6e-5; all BF16 |

Greedy outputs run exactly 16 tokens and do not stop at eos (`stop_at_eos: false` in golden.json).
Prompt 4 is long (more than 48 tokens rendered) so that the Mistral, Gemma, Phi-3, OLMo 3 and EXAONE 4 windows cut
in during prefill.

Extra golden.json keys of the newer families: `model.layer_sliding` (L booleans), for Gemma
`model.embed_scale`, `attn_scale`, `attn_logit_softcapping_applied`,
`final_logit_softcapping_applied` (null when not applied), `layer_rope` (per layer `{theta,
scaling}`), `weight_prefix`, `max_abs_attn_score_prompt4` (largest scaled score before any cap),
`max_abs_raw_logit_prompt4` (largest logit before the final cap), for Gemma 3
`ignored_softcap_effect_prompt4` (largest logit change if the cap it ignores were applied); for
Phi-3 `model.rope_attention_factor`, `rope_factors_used`, `longest_sequence` (prompt + max_new_tokens), and when
the long factors are used `long_rope_after`, `long_factors_per_prompt` ("prefill", "from generated
token g" or "never") and `long_factor_effect_prompt4` (largest logit change were the short factors
kept); for YaRN (qwen3-yarn) `model.rope_attention_factor`, `rope_inv_freq` and
`rope_scaling_effect_prompt4` (largest logit change were plain RoPE used); for GLM `model.rotary_dim`,
`rope_interleaved` and `rope_layout_effect_prompt4` (largest logit change were the rotary dims
paired (i, i + R/2) instead of (2i, 2i + 1)); for SmolLM3 `model.layer_use_rope` and
`nope_effect_prompt4` (largest logit change were the NoPE layers rotated too); for MoE `model.num_experts`,
`experts_per_tok`, `norm_topk_prob`, `moe_layers` (L booleans), `shared_expert`,
`routing_min_gap` (smallest k-th minus (k+1)-th routing probability over every prompt token and
MoE layer; for the sigmoid router of the value the choice ranks, and of the kept and the next group's
score), `routing_min_gap_generated` (the same over the tokens fed back while decoding), for the
sigmoid router (glm4-moe) `router`, `n_group`, `topk_group`, `routed_scaling_factor` and
`router_{bias,group_limit,scaling}_effect_prompt4` (largest logit change without each), for
Granite `model.embedding_multiplier`, `attention_multiplier`, `residual_multiplier`, `logits_scaling`
and `{embed_scale,attn_scale,residual_multiplier,logits_scaling}_effect_prompt4` (largest logit
change with each at its plain value), for gpt-oss `model.attention_sinks`, `o_proj_bias`, `router`
("topk_softmax"), `swiglu_alpha`, `swiglu_limit`, `rope_truncate`, `rope_attention_factor`,
`rope_inv_freq`, per layer `clamped_gate`, `clamped_up`, `clamped_up_low` and `clamp_candidates`
(over every prompt token's chosen experts: how many gate values exceed swiglu_limit, how many up
values fall outside [-limit, limit], how many below -limit, out of how many values of each) and
`{sinks_removed,sinks_zero,o_proj_bias,qkv_bias,router_bias,expert_bias,clamp,swiglu_alpha,gate_up_layout,sliding_window,rope_truncate,rope_scaling}_effect_prompt4`
(largest logit change with the sink column left out, the sinks at 0, each bias at 0, no clamp,
alpha 1, gate and up read as the first and second half of gate_up_proj, no window, the YaRN ramp
bounds floored / ceiled, plain RoPE),
`expert_usage` (per layer null or E counts of (token, slot) assignments over all prompt tokens),
`router_draws`, and per prompt `expert_ids_last` (per layer null or the k expert ids chosen at the
last prompt position, in top-k order); for Cohere `model.norm`, `layer_norm_eps`, `parallel_block`,
`rope_interleaved`, `rotary_dim`, `logit_scale` and
`{mean_subtraction,parallel_block,rope_layout,logit_scale}_effect_prompt4` (largest logit change with
RMSNorms in place of the LayerNorms, a sequential block x += attn(norm(x)); x += mlp(norm(x)) with the
same input_layernorm weight, the rotary dims paired (i, i + HD/2), logit_scale 1), for Cohere 2 also
`layer_use_rope`, `nope_effect_prompt4` (the full layers rotated too) and
`sliding_window_effect_prompt4` (no window), for Cohere with use_qk_norm also `qk_norm`,
`qk_norm_weight_shapes` and `{qk_norm_per_head,qk_norm_mean_subtraction,qk_norm}_effect_prompt4` (every
head with head 0's q/k norm weight row, RMSNorms as q/k norms, no q/k norms; `mean_subtraction` makes
the q/k norms RMSNorms too); for Llama with biases `attention_bias`, `mlp_bias` and
`{qkv_bias,o_proj_bias,gate_up_bias,down_bias}_effect_prompt4` (largest logit change with the q/k/v
biases, the o_proj bias, the gate and up biases, the down bias zeroed); for Seed-OSS `attention_bias`,
`attention_out_bias`, `mlp_bias` (the biases its flags give: q/k/v_proj, o_proj, the MLP's) and
`{qkv_bias,q_bias,k_bias,v_bias}_effect_prompt4` (largest logit change with the q/k/v biases, or the
q, k or v bias alone, zeroed); for DeepSeek-V3 (multi-head latent attention; `model.head_dim` is the
q/k head, qk_nope_head_dim + qk_rope_head_dim) `model.mla` (true), `q_lora_rank`, `kv_lora_rank`,
`qk_nope_head_dim`, `qk_rope_head_dim`, `qk_head_dim`, `v_head_dim`, `latent_norm_eps` (the eps of
q_a_layernorm and kv_a_layernorm), `attn_scale` (the score scale, qk_head_dim^-0.5 x mscale^2),
`rope_interleave`, `rotary_dim`, `rope_attention_factor` (on cos and sin), `rope_inv_freq` and
`{mla_mscale,rope_layout,kv_a_layernorm,q_a_layernorm,rope_scaling,latent_norm_eps}_effect_prompt4`
(largest logit change with the score scale qk_head_dim^-0.5 (only with rope_scaling's mscale_all_dim),
the other RoPE layout (rotate-half on the stored order instead of the interleave reshuffle, or the
reshuffle where rope_interleave is false), kv_a_layernorm's or q_a_layernorm's (only with a
q_lora_rank) weights at 1, plain RoPE (only with rope_scaling), rms_norm_eps as the latent norms' eps
(only where it is not 1e-6)), besides the MoE and sigmoid router keys; the sigmoid router's
`router_group_limit_effect_prompt4` only with n_group > 1, and `router_norm_topk_prob_effect_prompt4`
(the top-k weights renormalised) only where norm_topk_prob is false; for an FP8 checkpoint
(deepseek-v3-fp8) also `weights_from` (the fixture whose stored weights it quantizes), `weights_seed`
(that fixture's seed, which drew them), `routers_redrawn` (the MoE layers whose router was redrawn on the
quantized model; `router_draws` 1 = the source's kept), `quantization`, `weight_block_size`, `fp8_weights`
(how many F8_E4M3 weights), `dequantized_dtype` (BF16: the dtype the dequantized weights are rounded to),
`fp8_shapes` (per kind of weight one example name, the weight's and its weight_scale_inv's shapes),
`fp8_max_relative_weight_change` (the largest |dequantized - source| over the source block's largest
|value|), `fp8_quantization_effect_prompt4` (largest logit change against the source's weights with the
same routers) and `fp8_bf16_rounding_effect_prompt4` (largest logit change were the dequantized weights kept
as fp32 products); for OLMo 2 `model.norm_placement`, `qk_norm`, `qk_norm_weight_shapes`, `rms_norm_eps`,
`attention_bias`, `branch_mean_square_prompt4` (the smallest and largest mean square of an attention or MLP output
before its post norm, over prompt 4's tokens and every layer) and
`{qk_norm_per_head,prenorm,input_norms,qk_norm,rms_norm_eps}_effect_prompt4` (largest logit change with the q/k
norms taken per head over head_dim (the weight's slice per head), the two norms moved before the attention and the
MLP (Llama's layout), unit-weight input norms added (Gemma 2's sandwich), no q/k norms, rms_norm_eps 1e-6 in place
of 1e-5 (1e-5 in place of any other)), with attention_bias also `{qkv_bias,o_proj_bias}_effect_prompt4` (those
biases zeroed), with rope_scaling also `rope_scaling_effect_prompt4` (plain RoPE); for OLMo 3 the same (its
`rope_scaling_effect_prompt4`: plain RoPE on the full-attention layers) plus `layer_types` ("listed" or the default
pattern), `rope_spelling` (legacy rope_theta + rope_scaling, or rope_parameters per layer type), `layer_rope` (per
layer `{theta, scaling}`), `rope_attention_factor` and `rope_inv_freq` (the full-attention layers' RoPE),
`rope_local_inv_freq` (the sliding layers'), `yarn_pairs_kept_ramped_divided` (how many dimension pairs of the
full layers' YaRN keep, ramp and divide their frequency) and
`{yarn_on_sliding_layers,sliding_window,window_on_every_layer,sliding_rope_theta}_effect_prompt4` (largest logit
change with the full layers' scaled RoPE on every layer, no window anywhere, the window on every layer, the sliding
layers' default RoPE at the full layers' theta (only where their bases differ)); for DeepSeek-V2 the DeepSeek-V3 MLA keys
with `rope_layout` (a description of apply_rotary_emb's in-place complex pairs) in place of `rope_interleave` (their
`rope_layout_effect_prompt4`: rotate_half on the stored order), with YaRN also `yarn_pairs_kept_ramped_divided` and
`yarn_attention_factor_effect_prompt4` (cos and sin times YaRN's default 0.1 ln(factor) + 1 instead of
mscale(factor, mscale) / mscale(factor, mscale_all_dim); only with both mscale keys), besides the MoE keys and `router`,
`topk_method`, `n_group`, `topk_group`, `group_score` ("max" with group_limited_greedy, else null),
`routed_scaling_factor`, `routing_min_expert_gap` ([prompt tokens, fed-back tokens]: the smallest k-th minus (k+1)-th
masked p), with group_limited_greedy `routing_min_group_gap` (the same for the topk_group-th minus next group score),
`router_group_sum_changed_tokens_prompt4` (per layer null or how many of prompt 4's `prompt4_tokens` tokens take another
expert set with the groups scored by the sum of their two best, the router inputs held) and
`router_{norm_topk_prob,scaling,group_sum,group_limit}_effect_prompt4` (largest logit change with the weights
renormalised over the k as DeepSeek's own MoEGate does with norm_topk_prob true (p / (sum + 1e-20), routed_scaling_factor
not applied), routed_scaling_factor 1 (only where it is not 1), the groups scored by the sum of their two best p, no group
limit (topk_method greedy); the last two only with group_limited_greedy); for OLMoE `model.norm_placement`, `qk_norm`,
`qk_norm_weight_shapes`, `rms_norm_eps`, `clip_qkv`, `attention_bias` and
`{qk_norm_per_head,qk_norm,postnorm,router_norm_topk_prob}_effect_prompt4` (largest logit change with the q/k norms
taken per head over head_dim (the weight's slice per head), no q/k norms, OLMo 2's post-norm layout (input_layernorm's
weight on the attention output and post_attention_layernorm's on the MoE output, before each add, nothing on their
inputs), the top-k weights renormalised (only where norm_topk_prob is false)), besides the MoE keys; for MiniMax-M2
`model.norm_placement`, `qk_norm`, `qk_norm_weight_shapes`, `rms_norm_eps`, `rotary_dim`, `rotary_dim_from` (config.json's
rotary_dim, or rope_parameters' partial_rotary_factor x head_dim), `rope_theta`, `rope_layout`, `rope_inv_freq`, `router`,
`expert_layout`, `router_weight` and `correction_bias` (layer 0's tensor names), `prompt4_tokens`,
`router_changed_tokens_prompt4` (per router what-if, per layer: how many of prompt 4's tokens take another expert set,
the router inputs held) and
`{rope_full_head,qk_norm_per_head,router_bias,router_bias_in_weights,router_unnormalised,router_softmax}_effect_prompt4`
(largest logit change with RoPE over the whole head, the q/k norms taken per head over head_dim (the weight's slice per
head), the experts chosen by s alone (no e_score_correction_bias), the weights taken from s + e_score_correction_bias,
the weights not divided by their sum, the softmax over the logits in place of the sigmoid), besides the MoE keys; for
EXAONE 4 `model.norm_placement`, `qk_norm`, `qk_norm_weight_shapes`, `rms_norm_eps`, `layer_types` ("listed" or
"from sliding_window_pattern"), `sliding_window_pattern` (config.json's), `layer_use_rope` (L booleans), `rope_rule`,
`rope_theta`, `rope_scaling`, `rope_inv_freq`, with llama3 scaling `llama3_pairs_kept_smoothed_divided` (how many
dimension pairs keep, smooth and divide their frequency) and
`{prenorm,qk_norm_whole_projection,rope_on_every_layer,sliding_window,nope_as_hybrid,rope_scaling}_effect_prompt4`
(largest logit change with the two norms before the attention and the MLP (Llama's layout), one q/k RMSNorm over the
whole projection with the weight repeated per head, the full layers rotated too (with a sliding_window), no window
(with one), no RoPE on the layers "LLLG" calls global (without a sliding_window), plain RoPE (with rope_scaling)); for
ERNIE 4.5 (both families) `model.rope_layout`, `rope_theta`, `rope_theta_from` ("rope_theta" or "rope_parameters"),
`rope_inv_freq`, `use_bias`, `biases` (the projections with a bias), `lm_head_bias`, for the MoE family also
`moe_layer_rule`, `router`, `moe_norm_min`, `router_weight` and `correction_bias` (the first MoE layer's tensor names),
`correction_bias_shape`, `shared_intermediate_size`, `prompt4_tokens` and `router_changed_tokens_prompt4` (per router
what-if, per layer null or how many of prompt 4's tokens take another expert set, the router inputs held), and
`{rope_layout,qkv_bias,o_proj_bias,mlp_bias,router_bias,router_bias_in_weights,router_unnormalised,router_sigmoid,shared_experts}_effect_prompt4`
(largest logit change with rotate-half RoPE pairs (i, i + head_dim / 2), the q/k/v, o_proj or gate/up/down biases
zeroed (with use_bias), the experts chosen by p alone (no e_score_correction_bias), the weights taken from p +
e_score_correction_bias, the weights not divided by their sum, the sigmoid of the logits in place of their softmax, the
shared experts left out (with moe_num_shared_experts > 0)), besides the MoE keys; for Qwen3-Next / Qwen3.5 / Qwen3.5-MoE
`model.layer_types`, `layer_types_from` ("layer_types" or "full_attention_interval"), `norms`, `rms_norm_eps`,
`attn_output_gate`, `rotary_dim`, `rope_theta`, `rope_from`, `rope_layout`, `rope_inv_freq`, `mrope_section`,
`linear_num_key_heads`, `linear_num_value_heads`, `linear_key_head_dim`, `linear_value_head_dim`,
`linear_conv_kernel_dim`, `linear_conv_dim`, `linear_projections`, `linear_rule`, `linear_chunk_size`,
`linear_chunked_vs_recurrent` (the largest logit difference, over every position of every prompt, between the chunked
gated delta rule the goldens are computed with and its recurrent form), `prompt4_tokens`, `decay_prompt4` (per linear
layer [min, median, max] of exp(g) over prompt 4's tokens and value heads), `beta_prompt4` ([min, max]),
`stand_in_tensors` (the mtp.* and model.visual.* names), with experts `router`, `expert_layout`,
`shared_expert_intermediate_size`, `shared_expert_gate`, `router_nudges` (per MoE layer, the passes that moved its
router off near-ties over the prompt and fed-back tokens: golden_models.search_routers_fed) and
`{conv,conv_activation,z_gate,gated_norm_one_plus_w,attn_output_gate,qk_l2norm,norm_plain_w,rope_full_head,decay,beta,A_log_as_A,dt_bias,state_reset_per_chunk,head_map_tiled,qkvz_blocks,router_unnormalised,shared_expert_gate,gate_up_swapped}_effect_prompt4`
(largest logit change with no causal conv (the SiLU of the projections), the conv without its SiLU, no silu(z) in the
gated norm, the gated norm's weight as 1 + w, no sigmoid output gate on the full layers, no l2norm of q / k, every
(1 + w) norm as plain w, RoPE over the whole head, g = 0, beta = 1, A_log in place of exp(A_log), no dt_bias, the
recurrent state reset every 64 tokens, value head j reading key head j % NK (with NV > NK), Qwen3-Next's in_proj_qkvz /
in_proj_ba read as contiguous blocks, the top-k not renormalised, the shared expert ungated, stacked gate_up_proj's
halves swapped; each where it applies), besides the MoE keys; for Qwen3-VL-MoE `model.weight_prefix`, `rope_theta`,
`mrope_section`, `mrope_interleaved`, `rope_inv_freq`, `moe_layer_rule`, `router`, `expert_layout`, `expert_shapes`,
`router_weight`, `stand_in_tensors`, `router_nudges` and
`{router_unnormalised,gate_up_swapped,gate_up_interleaved,experts_untransposed}_effect_prompt4` (largest logit change
with the top-k not renormalised, gate_up_proj's column halves swapped, gate and up read from its even and odd columns,
the stored bytes of gate_up_proj / down_proj read as transformers 5's (E, 2F, H) / (E, H, F) and used as F.linear),
besides the MoE keys; for Gemma 1 `model.weight_prefix`, `embed_scale`, `attn_scale`, `hidden_act_in_config`,
`hidden_activation_in_config`, `activation`, `norms`, `layer`, `q_width`, `head_dim_note`,
`{norm_plain_w,embed_scale,activation_silu}_effect_prompt4` (largest logit change with plain-w norms, no embedding
scale, SwiGLU) and `{gelu_exact,embed_scale_fp32}_effect_prompt4` with
`{gelu_exact,embed_scale_fp32}_greedy_prompts_changed` (the exact GELU of config.json's hidden_act, sqrt(hidden_size)
not rounded to bf16: smaller changes, each above the tests' 1e-4; and on how many golden prompts they change the greedy
ids); for Ministral 3 `model.weight_prefix`, `lm_head`, `text_model_type`, `rope_parameters` (as config.json has them),
`rope_theta`, `rope_attention_factor`, `rope_inv_freq`, `yarn_pairs_kept_ramped_divided`, `query_scale_beta`,
`query_scale_period`, `query_scale_rule`, `query_scale_per_period` ([position, factor] at every period start up to the
longest sequence the goldens feed), `query_scale_periods_reached` (per prompt, the period of its last token and of the
last token fed back), `q_width`, `stand_in_tensors` and
`{query_scale,query_scale_keys,query_scale_no_log,query_scale_position_plus_one,rope_scaling,yarn_attention_factor}_effect_prompt4`
(largest logit change with no query scaling, the keys scaled too, 1 + beta floor(position / period) without the log, the
factor of position + 1, plain RoPE at rope_theta, cos and sin times YaRN's default 0.1 ln(factor) + 1); for GLM-4.1V
and GLM-4.5V `model.weight_prefix`, `lm_head`, `text_model_type`, `head_dim_rule`, `rotary_dim`, `rope_theta`,
`rope_inv_freq`, `rope_pairing`, `rope_scaling_in_config`, `mrope_section`, `mrope_text`, `qkv_bias`, `norms`,
`stand_in_tensors`, for GLM-4.1V `mlp` and `{rope_rotate_half,rope_full_head,qkv_bias,post_norms}_effect_prompt4`
(largest logit change with the rotary dims paired (i, i + R/2), RoPE over the whole head, no q/k/v biases, no post
norms), for GLM-4.5V `dense_layers`, `dense_mlp`, `expert_layout`, `mtp_layers` and
`{rope_adjacent_pairs,rope_full_head,softmax_router,shared_expert}_effect_prompt4` (largest logit change with the
rotary dims paired (2i, 2i + 1), RoPE over the whole head, the router's scores a softmax, no shared expert), besides the
MoE and sigmoid-router keys; for PhiMoE `model.norms`, `norm_eps`, `attention_bias`, `lm_head_bias`,
`rope_scaling_in_config`, `rope_attention_factor` (short_mscale: the factor on cos and sin), `rope_long_mscale`,
`longrope_computed_attention_factor` (the one _compute_longrope_parameters computes, not used), `rope_inv_freq`,
`rope_factors_used`, `long_rope_after`, `longest_sequence`, `router`, `router_jitter_noise`, `sparsemixer_threshold`
(2 x router_jitter_noise), `sparsemixer_kept_mean` and `sparsemixer_kept_histogram` ([first softmax, second softmax]:
the mean number of experts its mask keeps, and how many times it keeps 1, 2, ..., E, over every prompt and fed-back
token and layer), `routing_min_expert_gap` and `routing_min_mask_gap` ([prompt tokens, fed-back tokens]: the smallest
2nd minus 3rd logit, and the smallest |(max - s) / max(|s|, max) - threshold| over both masks' tests; `routing_min_gap`
is the smaller), `expert_layout` and
`{rope_attention_factor,lm_head_bias,norm_bias,norm_mean_subtraction,qkv_bias,o_proj_bias,router_mixtral,router_unmasked,router_threshold_eps,router_second_keeps_first}_effect_prompt4`
(largest logit change with cos and sin times the computed attention factor instead of the mscale, no lm_head bias, no
LayerNorm biases, RMSNorms (with the weights and biases) in place of the LayerNorms, no q/k/v biases, no o_proj bias,
Mixtral's router (the softmax's top 2 renormalised), sparsemixer without its masks, the masks' threshold jitter instead
of 2 x jitter, the second softmax over the original scores (expert 1 kept)), besides the MoE keys; for Llama 4
`model.weight_prefix`, `lm_head`, `text_model_type`, `layer_use_rope`, `layer_types` (chunked_attention /
full_attention per layer), `attention_chunk_size`, `longest_sequence` (asserted within one chunk), `chunked_attention`,
`qk_norm`, `layer_qk_l2norm`, `rms_norm_eps`, `attn_temperature_tuning`, `temperature_floor_scale`,
`temperature_attn_scale` (config.json's floor_scale and attn_scale), `layer_temperature`, `temperature_rule`,
`temperature_per_step` ([position, factor] at position 0 and wherever the factor changes, up to
`temperature_last_position`, the last position the goldens feed), `rope_theta`, `rope_scaling_in_config`,
`rope_inv_freq`, `llama3_pairs_kept_smoothed_divided`, `llama3_divided_pairs`, `rope_pairing`, `score_scale`,
`moe_layer_rule`, `dense_layers`, `router`, `expert_layout`, `expert_shapes`, `router_weight`, `shared_expert_layout`,
`stand_in_tensors` and
`{router_scores_on_output,attn_temperature_tuning,temperature_cache_position,qk_l2_norm,qk_l2_norm_on_nope,rope_rotate_half,router_softmax,rope_scaling,shared_expert}_effect_prompt4`
(largest logit change with each chosen expert's score on its output instead of its input, no temperature tuning, the
temperature of cache_position instead of cache_position + 1, no L2 q/k norm, the L2 norm on the NoPE layer too, the
rotate-half pairs (i, i + HD/2), the softmax of the top-k logits in place of their sigmoids, plain RoPE, no shared
expert), besides the MoE keys (`routing_min_gap`: the k-th minus (k+1)-th logit); for Granite 4.0 (GraniteMoeHybrid)
Granite's multiplier keys and `{embed_scale,attn_scale,residual_multiplier,logits_scaling}_effect_prompt4`
as above, and `model.layer_types`, `position_embedding_type` (as config.json has it), `layer_use_rope`, `rope_theta`,
`rope_inv_freq` (null without RoPE), `rms_norm_eps`, `intermediate_size`, `shared_intermediate_size`, `shared_mlp_layout`,
`mlp`, with experts `router` and `expert_layout`, and
`{position_embedding_none,position_embedding_rope,shared_mlp,shared_mlp_halves_swapped,shared_mlp_width_intermediate_size}_effect_prompt4`
(largest logit change with no RoPE though position_embedding_type is "rope", RoPE on every attention layer though it is
null or "nope", no
shared_mlp beside the experts, shared_mlp's input_linear halves swapped (up rows first), shared_mlp read at
intermediate_size's width from the start of its stored buffers (input_linear's first 2F rows, output_linear's first H x F
values as (H, F)); each where it applies), besides the MoE keys with experts; with experts of top-k > 1 beside Mamba-2
layers (granite4-h-moe) also `num_experts_per_tok_1_effect_prompt4` (largest logit change with the top-1 expert alone,
its weight 1); with Mamba-2 layers (Granite 4.0-H) also `model.layer_mamba`, `mamba_n_heads`, `mamba_d_head`, `mamba_n_groups`, `mamba_d_state`, `mamba_d_conv`, `mamba_expand`,
`mamba_intermediate_size`, `mamba_conv_dim`, `mamba_chunk_size`, `mamba_conv_bias`, `mamba_in_proj_layout`, `mamba_conv`,
`mamba_rule`, `mamba_gated_norm`, `mamba_state_per_layer`, `mamba_chunked_vs_recurrent` (the largest logit difference
between the chunked scan the golden values come from and the per-token recurrence, over every prompt; at most 1e-5),
`prompt4_tokens`, `mamba_dt_prompt4` / `mamba_decay_prompt4` (per Mamba-2 layer [min, median, max] of dt and of exp(dt A)
over prompt 4's tokens) and
`{mamba_conv_bias,mamba_conv_activation,mamba_D,mamba_dt_bias,mamba_dt_softplus,mamba_norm_before_gate,mamba_norm_per_group,mamba_groups_first,mamba_groups_tiled,mamba_state_reset_per_chunk}_effect_prompt4`
(largest logit change with no conv1d bias, the conv without its SiLU, no D skip, no dt_bias, dt without its softplus
(clamped at 0), the gated norm's RMSNorm before silu(z), that RMSNorm per group of intermediate_size / n_groups values,
every head reading group 0, head h reading group h % n_groups, the scan's state reset at every chunk start; the three
group readings only with mamba_n_groups > 1); for HunYuan-Dense `model.qk_norm`,
`qk_norm_weights`, `qk_norm_weight_shapes`, `use_qk_norm_in_config`, `rms_norm_eps`, `q_width`, `rope_theta`,
`rope_scaling_in_config`, `rope_alpha`, `rope_rule`, `rope_base` (rope_theta x alpha^(head_dim / (head_dim - 2)), a
double), `rope_inv_freq`, `max_position_embeddings`, `longest_sequence` (asserted within max_position_embeddings: the
dynamic update never fires) and `{qk_norm_before_rope,qk_norm,rope_plain_theta,rope_alpha_exponent_one}_effect_prompt4`
(largest logit change with the q/k norms before RoPE (Qwen3's order), no q/k norms, the default RoPE at rope_theta (the
alpha ignored), the base rope_theta x alpha without the exponent); for LFM2 `model.layer_types`, `layer_conv`, `norms`,
`norm_eps`, `conv_L_cache`, `conv_bias`, `conv_in_proj_layout`, `conv_rule`, `conv_state_per_layer`,
`conv_out_max_abs_prompt4` (per conv layer), `block_ff_dim`, `intermediate_size_in_config`, `block_auto_adjust_ff_dim`,
`block_ffn_dim_multiplier`, `block_multiple_of`, `intermediate_size` (the adjusted width the MLP tensors have),
`mlp_width_rule`, `mlp`, `qk_norm`, `attention`, `rope_theta`, `rope_inv_freq`, `final_norm`, `prompt4_tokens` and
`{conv,conv_activation,chunks_C_B_x,chunks_B_x_C,mlp_w1_w3_swapped,qk_norm_after_rope,qk_norm,rope_theta_10000}_effect_prompt4`
(largest logit change with no conv (y = C B x), a SiLU after the conv, in_proj's first two row blocks read as C then B,
its last two read as x then C, feed_forward.w1 and w3 swapped, the q/k layernorms after RoPE, no q/k layernorms, RoPE at
base 10000); for LFM2-MoE LFM2's `model.layer_types`, `layer_conv`, `norms`, `norm_eps`, `conv_L_cache`, `conv_bias`,
`conv_in_proj_layout`, `conv_rule`, `conv_out_max_abs_prompt4`, `qk_norm`, `attention`, `rope_theta`, `rope_inv_freq`,
`final_norm`, `prompt4_tokens`, and `num_dense_layers`, `dense_layers`, `intermediate_size` (the dense layers' width, as
it stands), `dense_width_rule`, `dense_mlp`, `moe_intermediate_size`, `router`, `routed_scaling_factor`,
`use_expert_bias`, `renormalisation_epsilon` (1e-6), `expert_layout`, `router_weight`, `expert_bias` (the tensor names of
the first MoE layer), `expert_usage_prompt4` (per MoE layer how many of prompt 4's tokens choose each expert),
`router_changed_tokens_prompt4` (per router what-if and layer, null for a dense one, how many of prompt 4's tokens take
another expert set, the router inputs held) and
`{router_bias,router_bias_in_weights,router_softmax,router_unnormalised,router_scaling,expert_w1_w3_swapped}_effect_prompt4`
(largest logit change with the top-k of s alone, the weights gathered from s + expert_bias, a softmax in place of the
sigmoid, the weights not renormalised, routed_scaling_factor 1, each expert's w1 and w3 swapped); for Nemotron-H
`model.hybrid_override_pattern`, `layer_kinds` (per layer mamba / attention / mlp), `layer_mamba`, `layer_use_rope`,
`block`, `names`, `layer_norm_epsilon`, `rms_norm_eps_in_config` (listed, not read), `norm_eps_rule`,
`attention_head_dim`, `attention`, `intermediate_size`, `mlp`, `mamba_num_heads`, `mamba_head_dim`, `n_groups`,
`ssm_state_size`, `conv_kernel`, `chunk_size`, `use_conv_bias`, `mamba_intermediate_size` (heads x head_dim),
`mamba_conv_dim`, `expand` and `mamba_width_rule` (expand is not read), `mamba_in_proj_layout`, `mamba_conv`,
`time_step_min`, `mamba_rule`, `mamba_gated_norm`, `mamba_state_per_layer`, `mamba_chunked_vs_recurrent` (as Granite
4.0-H's; at most 1e-5), `prompt4_tokens`, `mamba_dt_prompt4` / `mamba_decay_prompt4` (per Mamba-2 layer [min, median,
max] over prompt 4's tokens), `mamba_dt_floored_prompt4` (per Mamba-2 layer [how many (token, head) values of dt the
floor time_step_min raised, how many there are]), `final_norm` and
`{mamba_dt_floor,mamba_norm_whole,mamba_norm_before_gate,mamba_groups_first,mamba_groups_tiled,mamba_conv_activation,mamba_state_reset_per_chunk,mlp_relu,attention_rope,mamba_conv_bias,mamba_D,mamba_dt_bias}_effect_prompt4`
(largest logit change with dt clamped at 0 instead of floored at time_step_min, the gated RMSNorm over all
intermediate_size values at once, that RMSNorm before silu(z), every head reading group 0, head h reading group h %
n_groups, the conv without its SiLU, the scan's state reset at every chunk start, the MLP's relu2 as a plain ReLU, a
rotate-half RoPE at theta 1e4 on the attention layer, no conv1d bias, no D skip, no dt_bias); with MoE blocks
(nemotron-h-moe, NVIDIA-Nemotron-3-Nano's spelling) `norm_eps_in_config` and `head_dim_in_config` in place of
`rms_norm_eps_in_config` and `attention_head_dim`, and `dense_mlp_layers`, `n_routed_experts`, `num_experts_per_tok`,
`moe_intermediate_size`, `moe_shared_expert_intermediate_size`, `n_shared_experts_in_config` (not read),
`moe_latent_size` (null: no latent projection; nemotron-h-latent-moe, NVIDIA-Nemotron-3-Super's LatentMoE, its
width), `n_group`, `topk_group`, `routed_scaling_factor`,
`renormalisation_epsilon` (1e-20), `moe_rule`, `expert_layout`, `shared_expert_layout`, `router_weight`,
`correction_bias` (the tensor names of the first MoE layer), `expert_usage_prompt4`, `router_changed_tokens_prompt4`
(for router_bias, router_softmax and router_top1), the sigmoid router's `router`, `router_bias_effect_prompt4` and
`router_scaling_effect_prompt4`, and `{router_softmax,router_unnormalised,router_top1,shared_expert}_effect_prompt4`
(largest logit change with a softmax in place of the sigmoid, the chosen s not renormalised, the best expert alone,
no shared expert); with a latent width also `latent_projections` (mixer.fc1_latent_proj / fc2_latent_proj's shapes)
and `{latent_routed_path,latent_projections_swapped}_effect_prompt4` (largest logit change with fc2_latent_proj at 0,
the routed experts left out and the shared expert alone; fc1_latent_proj and fc2_latent_proj each read as the other's
transpose); for Arcee `mlp`, `hidden_act`, `intermediate_size`, `rms_norm_eps`, `rope_theta`, `rope_scaling_in_config`,
`yarn_pairs_kept_ramped_divided`, `max_position_embeddings`, `longest_sequence`, `rope_attention_factor`, `rope_inv_freq`,
`rope_scaling_effect_prompt4` (plain RoPE at rope_theta) and `{mlp_silu,mlp_relu,rope_attention_factor}_effect_prompt4`
(largest logit change with the activation read as SiLU (the MLP still ungated), as a plain ReLU, YaRN's frequencies with
cos / sin unscaled); for dots.llm1 `layer_sliding`, `layer_types_in_config` (null: derived), `max_window_layers`,
`layer_types_rule`, `qk_norm`, `qk_norm_weight_shapes`, `rms_norm_eps`, `q_width`, `head_dim_in_config`,
`first_k_dense_replace`, `dense_mlp_layers`, `intermediate_size`, `moe_intermediate_size`, `n_shared_experts`,
`shared_intermediate_size`, `scoring_func_in_config`, `renormalisation_epsilon`, `moe_rule`, `router_weight`,
`correction_bias`, `expert_layout`, `expert_usage_prompt4`, `prompt4_tokens`, `router_changed_tokens_prompt4` (for
router_bias, router_group_limit, router_softmax and router_top1), the MoE keys, the sigmoid router's `router`,
`n_group`, `topk_group`, `routed_scaling_factor` and `router_{bias,group_limit,scaling}_effect_prompt4`, and
`{router_softmax,router_unnormalised,router_top1,shared_expert,sliding_window,sliding_window_first_layers,qk_norm_after_rope}_effect_prompt4`
(largest logit change with a softmax in place of the sigmoid, the chosen s not renormalised, the best expert alone, no
shared expert, no window, the window on the layers below max_window_layers instead, the q/k norms after RoPE); for
HunYuan-MoE HunYuan-Dense's `model.qk_norm`, `qk_norm_weights`, `qk_norm_weight_shapes`, `use_qk_norm_in_config`,
`rms_norm_eps`, `q_width`, `rope_theta`, `rope_scaling_in_config`, `rope_alpha`, `rope_rule`, `rope_base`,
`rope_inv_freq`, `max_position_embeddings`, `longest_sequence`, and `attention_head_dim_in_config`,
`head_dim_in_config`, `num_experts_in_config`, `moe_topk_in_config`, `intermediate_size` (the experts' and shared_mlp's
width), `moe_intermediate_size_in_config`, `num_shared_expert_in_config`, `use_mixed_mlp_moe_in_config`,
`use_cla_in_config`, `moe_rule`, `router_weight`, `router_dtype`, `expert_layout`, `expert_usage_prompt4`,
`prompt4_tokens`, the MoE keys and
`{qk_norm_before_rope,qk_norm,rope_plain_theta,rope_alpha_exponent_one,router_sigmoid,router_unnormalised,router_top1,shared_mlp}_effect_prompt4`
(largest logit change with HunYuan-Dense's four, the sigmoid of the router logits in place of their softmax, the top-k
probabilities not renormalised, the best expert alone, no shared_mlp); for Apertus `layer_norm_names`, `qk_norm`,
`qk_norm_weight_shapes`, `rms_norm_eps`, `mlp`, `hidden_act`, `intermediate_size`, `xielu_rule`, `xielu_tensors`,
`xielu_stored_alpha_p_alpha_n_beta_eps` (per layer, as stored),
`xielu_used_softplus_alpha_p_beta_plus_softplus_alpha_n_beta_eps` (per layer, as the activation uses them),
`xielu_default_parameters` (XIELUActivation's __init__ values in bfloat16), `xielu_branches_prompt4` (per layer how
many of prompt 4's xIELU inputs have x > 0, x <= eps, eps < x <= 0), `rope_theta`, `rope_scaling_in_config`,
`llama3_pairs_kept_smoothed_divided`, `rope_inv_freq`, `max_position_embeddings`, `longest_sequence`,
`xielu_bf16_parameters_change_prompt4` (largest logit change with softplus and the beta add rounded
as bfloat16 parameters round them: not a what-if, a measure) and
`{mlp_silu,xielu_default_parameters,xielu_no_softplus,xielu_eps,qk_norm_after_rope,rope_scaling}_effect_prompt4`
(largest logit change with SiLU in place of xIELU, the MLP still ungated; XIELUActivation's default parameters in place
of the stored ones; alpha_p / alpha_n without the softplus; eps -1e-6 on every layer; the q/k norms after RoPE; plain
RoPE at rope_theta); for GLM-4.7-Flash the DeepSeek-V3 MLA keys (its `rope_layout`, `kv_a_layernorm`, `q_a_layernorm`
and `latent_norm_eps` effects), the MoE keys, the sigmoid router's `router`, `n_group`, `topk_group`,
`routed_scaling_factor` and `router_{bias,scaling}_effect_prompt4`, and `mlp_layer_types_in_config`,
`first_k_dense_replace_in_config` (listed, not read), `moe_layer_rule`, `dense_mlp_layers`, `intermediate_size`,
`moe_intermediate_size`, `n_shared_experts`, `shared_intermediate_size`, `topk_method_in_config`,
`scoring_func_in_config`, `renormalisation_epsilon`, `rms_norm_eps`, `rope_parameters_in_config`, `rope_theta`, `num_nextn_predict_layers`,
`mtp_layer`, `mtp_tensors`, `mtp_tensor_names` (the MTP layer's tensors, never read), `moe_rule`, `router_weight`,
`correction_bias`, `expert_layout`, `expert_usage_prompt4`, `prompt4_tokens`, `router_changed_tokens_prompt4` (for
router_bias) and `{shared_expert,rope_theta_default}_effect_prompt4` (largest logit change with no shared expert, with
the default RoPE at theta 1e4); for the LLaVA / InternVL wrappers `text_model_type` (text_config's model_type),
`text_architecture` (the text family it runs), `weight_prefix`, `lm_head`, `stand_in_tensors` (never read), `rope_theta`,
`qkv_bias`, `q_width` and `{rope_theta_default,sliding_window,qkv_bias}_effect_prompt4` (largest logit change with the
RoPE at theta 1e4, with a window of 16 on every layer (the mistral text model), without the q/k/v biases (the qwen2
one)); for Gemma 4 (Gemma4ForCausalLM, Gemma4ForConditionalGeneration) `weight_prefix`, `layer_types`,
`layer_sliding`, `layer_head_dim`, `layer_kv_heads`, `layer_k_eq_v`, `layer_mlp_width`, `global_head_dim_in_config`,
`num_global_key_value_heads_in_config`, `per_layer_config_in_config`, `use_bidirectional_attention`, `attention`,
`attn_scale` (1.0), `norms`, `norm_weight_mean` (the layer norms'), `final_norm_weight_mean`, `embed_scale`, `rope` (per
layer type the rope_parameters entry and its inverse frequencies; full_attention's `pairs_turning`), `rope_rule`,
`kv_shared_from`, `layer_kv_shared`, `layer_kv_store` (the layer that stores its type's K / V), `layer_kv_source` (the
layer a shared layer reads, else null), `layer_scalar`, `final_logit_softcapping`, `max_abs_raw_logit_prompt4`,
`max_abs_attn_score_prompt4`, `hidden_size_per_layer_input` and with per-layer embeddings `ple_embed_scale` and
`ple_rule`, `stand_in_tensors` (the multimodal checkpoint's, never read), `weight_noise_logit_change_prompt4` (the
largest change of prompt 4's logits with every weight times 1 + 1e-7 N(0, 1), three draws: at most 1e-4), and
`{norms_plus_one,attn_scale_head_dim,layer_scalar,final_softcap,sliding_window,full_rope_partial_dim,full_rope_default,v_norm}_effect_prompt4`
(largest logit change with (1 + w) norms, the scores x head^-0.5, no layer_scalar, no soft-cap, no window, the full
layers' proportional RoPE read as a partial rotary dim, as the default RoPE over the whole head, no v_norm), with
per-layer embeddings `{ple,ple_table_unscaled}_effect_prompt4` (none, the table without its sqrt(P)), with KV sharing
`{kv_shared_weights,kv_source_first_of_type}_effect_prompt4` (the shared layers computing K / V from their own input
with the source's projections; the first layer of a type as the source), with k_eq_v
`{v_after_k_norm,v_after_rope}_effect_prompt4` (V taken after k_norm, after k_norm and RoPE), and with the MoE block
the MoE keys, `num_experts`, `top_k_experts`, `moe_intermediate_size`, `intermediate_size`, `router`, `moe_rule`,
`expert_layout`, `router_weight`, `expert_usage_prompt4`, `router_changed_tokens_prompt4` (for router_input_normed and
router_scale), `router_renormalisation_change_prompt4` (not a what-if: the top-k weights not renormalised; small,
post_feedforward_layernorm_2 takes the factor out) and
`{router_input_normed,router_scale,router_per_expert_scale,experts_input_norm,dense_mlp,experts_gate_up_swapped}_effect_prompt4`
(largest logit change with the router on pre_feedforward_layernorm(residual), router.scale at 1, per_expert_scale at
1, the experts on the dense MLP's normed input, no dense MLP, gate_up_proj's halves swapped).
"""
