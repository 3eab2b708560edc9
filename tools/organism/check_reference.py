"""Self-checks of reference.py on the committed golden models, without transformers:

  1. every golden model: batched greedy decoding with the KV cache and left padding
     (`greedy_batch`, all prompts in one batch) gives the golden greedy ids (up to the first eos,
     where greedy_batch stops), and the padded batch's last-position logits equal `logits_last`
     within 1e-4;
  2. phi3-longrope: the fused qkv_proj / gate_up_proj split into separate q/k/v/gate/up tensors
     and run through the unfused (Llama) code path gives the same logits (1e-5);
  3. MoE models: `moe_block` (all experts on every token, summed per token in top-k order) equals
     a per-expert loop that gathers each expert's tokens and accumulates with index_add_ (as
     transformers' MixtralSparseMoeBlock does; for GLM-4.5 after Glm4MoeMoE.route_tokens_to_experts, for
     DeepSeek-V2 after DeepseekV2Moe.route_tokens_to_experts, for ERNIE 4.5 after Ernie4_5_MoeSparseMoeBlock's router;
     Qwen3-VL-MoE's fused (E, H, 2F) / (E, F, H) experts sliced and transposed into per-expert matrices),
     written independently here, within 1e-6 of max(1, max |y|) on every MoE layer output, and the
     recorded expert_ids_last / routing gaps are reproduced;
  4. gemma3-mm, mistral3-mm, llava-mm: the weights renamed from the legacy language_model.model.* (and
     language_model.lm_head.*) spelling to the transformers >= 4.52 model.language_model.* (and
     lm_head.*) spelling give identical logits;
  5. Gemma (Gemma 1 too): hidden_states[0] is the embedding row times the bf16-rounded sqrt(hidden_size);
  7. Qwen-VL: the multimodal RoPE of text positions (three equal position rows) is the plain RoPE
     exactly, and differs once the rows differ (an image's height/width positions), so the
     equality is not the code doing nothing;
  6. GLM (Cohere, ERNIE 4.5 alike): the interleaved RoPE equals the rotate-half one on q/k weights (and biases) whose
     rotary rows are permuted to (0, 2, ..., R-2, 1, 3, ..., R-1) in every head (1e-5; 1e-6 of the largest |logit|
     where that is over 10);
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
 12. DeepSeek-V3 (multi-head latent attention): a second forward pass written here from
     models/deepseek_v3/modeling_deepseek_v3.py in another style (`DeepseekV3Check`: config.json read
     with DeepseekV3Config's defaults, its own YaRN and score scale, q from q_proj (q_lora_rank null) or
     q_a_proj / q_a_layernorm / q_b_proj, per-head attention with k_nope / v from kv_b_proj's rows, the
     RoPE as complex multiplication of the stored adjacent pairs in place (DeepSeek-V2's
     apply_rotary_emb), or of the pairs (i, i + R/2) with rope_interleave false, DeepseekV3TopkRouter and
     DeepseekV3MoE.moe's index_add_ loop) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and
     every golden greedy id (no cache) of each DeepseekV3ForCausalLM fixture (deepseek-v3-mla,
     deepseek-v3-qproj); on every prompt, layer and head the absorbed form (q_lat = W_UK^T q_nope, MQA
     over the latent rows [c ; k_pe] with value c, o = W_UV o_lat) equals the naive per-head k/v within
     1e-5 of max(1, max |o|), and the rotary part of the scores from HF's rotate_half form
     (apply_rotary_pos_emb_interleave's reshuffle + rotate_half, or apply_rotary_pos_emb) equals the
     complex pairs' within 1e-5 of max(1, max |score|); reference.Spec's score scale, cos/sin factor,
     inverse frequencies, latent-norm eps, rope_interleave and q_lora_rank equal DeepseekV3Check's (and
     golden.json's); with mscale_all_dim both YaRN factors differ from 1, without rope_scaling the scale
     is exactly qk_head_dim^-0.5 and cos/sin unscaled; golden.json has exactly the what-ifs the config
     calls for and DeepseekV3Check reproduces its {mla_mscale,rope_layout,kv_a_layernorm,latent_norm_eps,
     router_norm_topk_prob}_effect_prompt4 (1e-3). (1. checks the KV cache, which holds each head's
     rotated k (qk_head_dim) and v (v_head_dim); 3. the router and experts.)
 13. FP8 checkpoints (deepseek-v3-fp8: config.json quantization_config quant_method fp8), on a code path of
     their own (`Fp8Check`: its own safetensors reader, e4m3 decoding from the bit fields, a loop over the
     Bm x Bn blocks, its own bf16 round-to-nearest-even on the fp32 bits): the F8_E4M3 tensors are
     exactly every Linear weight of the decoder and MTP layers (not embed_tokens, lm_head, norms, the
     router weight or e_score_correction_bias), each with an F32 `<name>_scale_inv` of shape
     (ceil(out / Bm), ceil(in / Bn)) and no other scale tensors, some weights' edge blocks cut short, the
     MTP layer's eh_proj among them, no NaN code, every block's largest |code| 448; its dequantized weights
     equal reference.load_model's bit for bit; the quantization is the stated recipe applied to
     deepseek-v3-mla's stored weights (scale_inv = fp32(amax / 448) exactly, codes = the nearest e4m3 value
     of w / scale, ties to the even code, by a brute-force search over the 256 codes), every other tensor
     is deepseek-v3-mla's but the routers of golden.json's routers_redrawn layers; DeepseekV3Check (12.)
     runs on these weights, and on deepseek-v3-mla's weights with this fixture's routers reproduces
     golden.json's fp8_quantization_effect_prompt4 (1e-3, > 1e-2), and on the fp32 products (not rounded to
     bf16) its fp8_bf16_rounding_effect_prompt4 (1e-3, > 1e-2); tests/fixtures/fp8/e4m3_table.json
     equals the bit-field decoding of all 256 codes (NaN as null) and the format's known values.
 14. OLMo 2: a second forward pass written here from models/olmo2/modular_olmo2.py / modeling_olmo2.py in
     another style (`Olmo2Check`: config.json read with Olmo2Config's defaults, LlamaCheck's F.linear and
     complex-number RoPE with linear rope_scaling applied to the positions (as OLMo's older
     OlmoLinearScalingRotaryEmbedding did) instead of the frequencies, q_norm / k_norm over the whole q_proj /
     k_proj output, the post-norm layer, per-head attention with an explicit mask and a hand-written softmax)
     reproduces logits_last, hidden_last and logits_all_0 (1e-4) and every golden greedy id (no cache) of each
     Olmo2ForCausalLM fixture (olmo2, olmo2-bias); the weights hold q_norm / k_norm of (NH * HD,) / (NKV * HD,),
     the two post norms and no input norms, config.json no head_dim, and reference.Spec reads it so; golden.json
     has exactly the what-ifs the config calls for and Olmo2Check reproduces each
     {qk_norm_per_head,prenorm,input_norms,qk_norm,rms_norm_eps,rope_scaling,qkv_bias,o_proj_bias}_effect_prompt4
     (1e-3), each over 1e-2.
 15. OLMo 3: a second forward pass written here from models/olmo3/modular_olmo3.py / modeling_olmo3.py and
     configuration_olmo3.py (`Olmo3Check`: Olmo2Check's layers, norms and complex-number RoPE, plus what OLMo 3 adds,
     read from config.json on its own: the layer types from layer_types or Olmo3Config's default pattern
     ((i + 1) % 4 != 0: sliding), the window on the sliding layers only (an explicit i - W < j <= i mask), and a
     RoPE per layer type, from the legacy rope_theta / rope_scaling (sliding: the default RoPE at rope_theta; full:
     rope_scaling, as convert_rope_params_to_dict and 4.57's two rotary embeddings have it) or from transformers
     5's rope_parameters[layer_type], with its own YaRN (_compute_yarn_parameters, the attention factor applied to
     q and k as the length of the complex rotation)) reproduces logits_last, hidden_last and logits_all_0 (1e-4)
     and every golden greedy id (no cache) of each Olmo3ForCausalLM fixture (olmo3, olmo3-v5); the weights hold
     OLMo 2's q/k norms and post norms only, config.json has no head_dim; reference.Spec's sliding layers, window,
     per-layer RoPE (inverse frequencies within 1e-7 relative, attention factors) equal Olmo3Check's; the full
     layers' YaRN has kept, ramped and divided pairs, the sliding layers' RoPE is unscaled; some golden prompt is
     longer than the window; golden.json has exactly the what-ifs the config calls for and Olmo3Check reproduces
     OLMo 2's (as 14.) and {yarn_on_sliding_layers,sliding_window,window_on_every_layer,sliding_rope_theta}
     _effect_prompt4 (the full layers' scaled RoPE on every layer, no window, the window on every layer, the
     sliding layers at the full layers' base; 1e-3), each over 1e-2.
 16. DeepSeek-V2: a second forward pass (`DeepseekV2Check`, sharing nothing with reference.py or DeepseekV3Check but
     the safetensors reader) written from models/deepseek_v2/modular_deepseek_v2.py (DeepseekV2Config's defaults;
     DeepseekV2Attention.forward batched over the heads with torch.split and apply_rotary_emb as written there:
     view_as_complex of the adjacent pairs times freqs_cis = polar(1, pos * inv_freq) * attention_scaling) and from
     DeepSeek's own modeling_deepseek.py for V2 (its YaRN: yarn_find_correction_range / yarn_linear_ramp_mask /
     yarn_get_mscale, cos/sin times mscale(factor, mscale) / mscale(factor, mscale_all_dim), softmax_scale times
     mscale(factor, mscale_all_dim)^2; MoEGate.forward's softmax router, greedy or group_limited_greedy with each
     group's max, `if norm_topk_prob: renormalised else: x routed_scaling_factor`; DeepseekV2MoE.moe_infer's
     sort-by-expert loop plus the shared experts), config.json's RoPE read from rope_theta / rope_scaling or from
     transformers 5's flat rope_parameters, reproduces logits_last, hidden_last and logits_all_0 (1e-4) and every
     golden greedy id (no cache) of each DeepseekV2ForCausalLM fixture (deepseek-v2-lite, deepseek-v2-groups); the
     rotary part of every head's scores equals DeepSeek-V3's apply_rotary_pos_emb_interleave form (reshuffle +
     rotate_half) within 1e-5 of max(1, max |score|); the weights have V3's names without e_score_correction_bias
     or MTP tensors and dense MLPs before first_k_dense_replace; reference.Spec's score scale, cos/sin factor,
     inverse frequencies (1e-7 relative), latent-norm eps, RoPE layout, q_lora_rank and router settings equal
     DeepseekV2Check's and golden.json's; with mscale_all_dim the scale differs from qk_head_dim^-0.5 and the YaRN
     bands (kept, ramped, divided) are golden.json's, without rope scaling the scale is exactly qk_head_dim^-0.5;
     DeepseekV2Check's own router gives golden.json's routing_min_expert_gap (and with groups routing_min_group_gap)
     over the prompt and the fed-back tokens, all >= 1e-3, and (with groups) the recorded count of prompt 4's
     tokens routed elsewhere when groups are scored by their two best; golden.json has exactly the what-ifs the
     config calls for and DeepseekV2Check reproduces each {mla_mscale,rope_layout,kv_a_layernorm,q_a_layernorm,
     rope_scaling,yarn_attention_factor,latent_norm_eps,router_norm_topk_prob,router_scaling,router_group_sum,
     router_group_limit}_effect_prompt4 (1e-3), each over 1e-2. (1. checks the KV cache; 3. the router and experts
     against transformers' route_tokens_to_experts and an index_add_ loop.)
 17. OLMoE: a second forward pass written here from models/olmoe/modular_olmoe.py and configuration_olmoe.py
     (`OlmoeCheck`: config.json read with OlmoeConfig's defaults, LlamaCheck's F.linear, RMSNorm and complex-number
     RoPE, its own pre-norm layer (LlamaDecoderLayer), OlmoeAttention's q_norm / k_norm over the whole q_proj / k_proj
     output before the view into heads (clip_qkv's clamp when set), per-head attention with an explicit mask and a
     hand-written softmax, and OlmoeSparseMoeBlock's router (softmax of the logits in fp32, torch.topk, renormalised
     only with norm_topk_prob) with the experts summed as one dense (tokens, experts) weight matrix times every
     expert's output) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and every golden greedy id (no
     cache); the weights are exactly q_norm (hidden_size,), k_norm ((hidden / heads) x kv heads,) of another width,
     input_layernorm / post_attention_layernorm, mlp.gate (E, H) and E experts of intermediate_size per layer (no
     shared expert), config.json has no head_dim, clip_qkv null and norm_topk_prob false, and reference.Spec and
     golden.json read them so; reference.Spec refuses a non-null clip_qkv; OlmoeCheck's own router gives golden.json's
     routing_min_gap and routing_min_gap_generated (>= 1e-3) and expert_ids_last; golden.json has exactly the
     what-ifs the config calls for and OlmoeCheck reproduces each {qk_norm_per_head,qk_norm,postnorm,
     router_norm_topk_prob}_effect_prompt4 (1e-3), each over 1e-2. (3. checks the MoE block against an index_add_
     loop.)
 18. MiniMax-M2: a second forward pass written here from models/minimax_m2/modular_minimax_m2.py and
     configuration_minimax_m2.py (`MiniMaxM2Check`: config.json read on its own in either spelling (the released
     rotary_dim / rope_theta, or transformers 5's rope_parameters with partial_rotary_factor) with MiniMaxM2Config's
     defaults, the expert layout from the weights' names, LlamaCheck's F.linear and RMSNorm, Olmo2Check's whole-projection
     q/k norm, its own partial RoPE (the pairs (i, i + R/2) of the first rotary_dim dims as complex numbers, the rest
     passed), MiniMaxM2TopKRouter (sigmoid, topk of s + e_score_correction_bias unsorted, s gathered and divided by its
     sum) and transformers 5's MixtralExperts.forward loop over stacked gate_up_proj / down_proj (the released w1 / w3 /
     w2 stacked here as the checkpoint conversion does)) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and
     every golden greedy id (no cache) of each MiniMaxM2ForCausalLM fixture (minimax-m2, minimax-m2-v5); the files hold
     exactly MiniMax-M2's tensors in one layout (q_norm (NH * HD,), k_norm (NKV * HD,), NH * HD != hidden), BF16
     matrices and F32 norms / e_score_correction_bias; config.json is in the spelling the fixture stands for, and
     reference.Spec and golden.json read its rotary_dim, theta, inverse frequencies, norms, router and layout as
     MiniMaxM2Check does; reference.Spec refuses use_qk_norm false, another qk_norm_type, scoring_func or
     attn_type_list, use_routing_bias false, a shared expert, and rotary_dim / partial_rotary_factor values that
     disagree (an agreeing pair is taken; neither gives head_dim // 2 in both); the weights in the other expert layout
     and config.json in the other spelling give the same logits (reference.forward exactly; MiniMaxM2Check 1e-4);
     MiniMaxM2Check's own router gives golden.json's routing gaps (prompt and fed back, >= 1e-3), expert_ids_last and
     the recorded counts of prompt 4's tokens that take other experts under each router what-if; golden.json has
     exactly the what-ifs of golden_models.minimax_m2_what_ifs and MiniMaxM2Check reproduces each
     {rope_full_head,qk_norm_per_head,router_bias,router_bias_in_weights,router_unnormalised,router_softmax}
     _effect_prompt4 (1e-3), each over 1e-2. (3. checks the MoE block against an index_add_ loop.)
 19. EXAONE 4: a second forward pass written here from models/exaone4/modular_exaone4.py and modeling_rope_utils.py's
     _compute_llama3_parameters (`Exaone4Check`: config.json read with Exaone4Config's defaults, the layer types from
     layer_types, else __post_init__'s integer rule or the string pattern's (pattern[i % len] == "L", the last layer
     global), the llama3 frequencies per pair in Python floats, LlamaCheck's RMSNorm and complex-number RoPE, the q/k
     RMSNorm per head over head_dim with the one (head_dim,) weight, RoPE only where sliding_window is null or the layer
     slides, an explicit i - j < W mask on sliding layers, Olmo2DecoderLayer's post-norm layer, per-head attention with
     a hand-written softmax) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and every golden greedy id (no
     cache) of each Exaone4ForCausalLM fixture (exaone4, exaone4-dense); the files hold exactly EXAONE 4's tensors (q/k
     norms (head_dim,), the two post norms, no input norm, no biases, lm_head only when untied), BF16 matrices and F32
     norms; config.json is in the spelling the fixture stands for (the 32B's "LLLG" beside layer_types, head_dim,
     llama3; the 1.2B's null sliding_window / sliding_window_pattern, full layer_types, no head_dim, tied), and
     reference.Spec and golden.json read its layer types, window, RoPE layers, inverse frequencies (1e-6 relative) and
     norms as Exaone4Check does; the llama3 bands (kept, smoothed, divided) are all present and golden.json's, every
     golden prompt is longer than the window; the same model with layer_types left out (the pattern alone; the 32B
     also with the integer pattern 4) and in transformers 5's flat rope_parameters gives the same logits
     (reference.forward exactly, Exaone4Check 1e-4); reference.Spec refuses a pattern with other letters, other layer
     type names, attention_bias / mlp_bias, rope_parameters beside rope_theta, layer_types that contradict an explicit
     pattern, a pattern 0 without layer_types, a sliding_window with no sliding layer and sliding layers without a
     sliding_window; golden.json has exactly the what-ifs the config calls for and Exaone4Check reproduces each
     {prenorm,qk_norm_whole_projection,rope_on_every_layer,sliding_window,nope_as_hybrid,rope_scaling}_effect_prompt4
     (1e-3), each over 1e-2.
 20. ERNIE 4.5: a second forward pass written here from models/ernie4_5/modular_ernie4_5.py, configuration_ernie4_5.py,
     models/ernie4_5_moe/modular_ernie4_5_moe.py and configuration_ernie4_5_moe.py (`ErnieCheck`: config.json read with
     Ernie4_5Config's / Ernie4_5_MoeConfig's defaults, rope_theta from the top level or transformers 5's rope_parameters,
     head_dim from the config or hidden / heads, the MoE layers by Ernie4_5_MoeDecoderLayer's rule with the end index
     -1 -> L - 1, LlamaCheck's F.linear (q/k/v/o and MLP biases with use_bias) and RMSNorm, the adjacent-pair RoPE as
     torch.view_as_complex of the stored pairs, per-head attention with a hand-written softmax, and
     Ernie4_5_MoeSparseMoeBlock.forward as written there: softmax of the fp32 gate's logits, topk of p +
     e_score_correction_bias.squeeze(), p gathered and divided by clamp(sum, min=moe_norm_min), the one_hot / index_add_
     expert loop, the ungated shared experts added) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and
     every golden greedy id (no cache) of each ERNIE fixture (ernie4.5-moe, ernie4.5-moe-interval, ernie4.5-dense); the
     files hold exactly ERNIE 4.5's tensors (per-expert mlp.experts.{e}.*, mlp.gate (E, H) and
     mlp.moe_statics.e_score_correction_bias (1, E) in F32, mlp.shared_experts.* when moe_num_shared_experts > 0, dense
     mlp.* on the other layers, q/k/v/o and MLP biases with use_bias, lm_head only when untied), BF16 matrices and F32
     norms; config.json is in the spelling the fixture stands for (ERNIE-4.5-21B-A3B-PT's with Baidu's own keys and no
     moe_layer_end_index, transformers 5's rope_parameters with the end index written out, ERNIE-4.5-0.3B-PT's with
     head_dim listed), and reference.Spec and golden.json read its head_dim, theta, inverse frequencies, biases, MoE
     layers and router as ErnieCheck does; reference.Spec refuses rope_scaling, a rope_type other than default,
     attention_bias, rope_theta beside other rope_parameters, and for the MoE family use_bias, the VL models' lists,
     moe_use_aux_free false, another moe_gate and use_rmsnorm false; config.json in the other spelling gives the same
     logits (reference.forward exactly, ErnieCheck 1e-4); where moe_layer_end_index cuts the rule short, the file holds
     dense MLPs on the layers the rule without it would add; ErnieCheck's own router gives golden.json's routing gaps
     (prompt and fed back, >= 1e-3), expert_ids_last and the recorded counts of prompt 4's tokens that take other experts
     under each router what-if; golden.json has exactly the what-ifs of golden_models.ernie_what_ifs and ErnieCheck
     reproduces each {rope_layout,qkv_bias,o_proj_bias,mlp_bias,router_bias,router_bias_in_weights,router_unnormalised,
     router_sigmoid,shared_experts}_effect_prompt4 (1e-3), each over 1e-2. (3. checks the MoE block against an
     index_add_ loop, 6. the RoPE pairing.)
 21. Qwen3-Next / Qwen3.5 / Qwen3.5-MoE (hybrid linear attention): a second forward pass written here from
     models/qwen3_next/modular_qwen3_next.py, configuration_qwen3_next.py, models/qwen3_5/modular_qwen3_5.py and
     models/qwen3_5_moe/modular_qwen3_5_moe.py (`HybridCheck`: config.json and text_config read on its own, every token
     fed one at a time through a decoding state as a cached decode does: per linear-attention layer the last K - 1
     conv inputs with the conv as an explicit sum over that window and the state S updated per value head by the
     recurrent gated delta rule (torch_recurrent_gated_delta_rule's form), per full-attention layer a KV cache of
     rotated keys with per-head attention and a hand-written softmax; Qwen3-Next's in_proj_qkvz / in_proj_ba split by a
     loop over the key heads, the (1 + w) norms, the gated RMSNorm, its own softmax router and expert loop)
     reproduces logits_last, hidden_last and logits_all_0 (1e-4), computed by reference.py with the chunked rule, and
     greedy decoding continued from its state after each prompt, one token at a time, gives every golden greedy id; the
     files hold exactly the family's tensors (linear_attn.* on the linear layers, self_attn.* with the doubled q_proj
     on the full ones, per-expert or stacked experts, the shared expert and its gate) plus the mtp.* (and for Qwen3.5
     model.visual.*) stand-ins, A_log in F32; config.json is in the spelling it stands for (Qwen3-Next's release:
     full_attention_interval and no layer_types, rope_theta / partial_rotary_factor at the top; Qwen3.5: text_config,
     layer_types beside full_attention_interval, rope_parameters with the mrope keys, attn_output_gate), and
     reference.Spec and golden.json read its layer types, rotary_dim, theta, inverse frequencies, MoE layers and expert
     layout as HybridCheck does; reference.Spec refuses attn_output_gate false, layer_types that full_attention_interval
     contradicts, rope scaling, another hidden_act, attention_bias, an odd rotary_dim, and for Qwen3.5
     mrope_interleaved false and mrope sections not adding up to rotary_dim / 2, for Qwen3.5-MoE norm_topk_prob false;
     config.json in the other spelling (transformers 5's rope_parameters and listed layer_types for Qwen3-Next; the
     RoPE keys at the top of text_config and no layer_types for Qwen3.5) gives the same logits exactly, and so do the
     experts in the other layout (per expert <-> stacked; HybridCheck 1e-4); HybridCheck's own router gives
     golden.json's routing gaps (prompt and fed back, >= 1e-3) and expert_ids_last; golden.json has exactly the
     what-ifs of golden_models.hybrid_what_ifs that apply and HybridCheck reproduces each *_effect_prompt4 (1e-3), each
     over 1e-2; reference.py's recurrent form over whole prompts matches its chunked one within 5e-5 (golden.json's
     linear_chunked_vs_recurrent); and reference.py's chunked (64) and recurrent gated delta rule both match a float64
     per-token loop written here on random inputs from a nonzero initial state over three chunks (2e-6). (1. checks
     the cached path of reference.py itself: the prompts prefilled with the chunked rule into conv / recurrent states,
     then one-token steps with the recurrent rule, left padding zeroing the padded inputs as
     apply_mask_to_padding_states does; 3. the MoE block against an index_add_ loop; 7. the multimodal RoPE.)
 22. Gemma 1 (gemma): a second forward pass written here from models/gemma/modeling_gemma.py and configuration_gemma.py
     (`GemmaCheck`: LlamaCheck's F.linear and complex-number RoPE; GemmaModel's normalizer sqrt(hidden_size) as a tensor
     of the checkpoint dtype, GemmaRMSNorm's (1 + w), Llama's layer order, per-head attention at head_dim^-0.5 with a
     hand-written softmax, GemmaMLP's activation as GemmaMLP.__init__ of 4.39-4.47 picks it (hidden_activation, else
     gelu_pytorch_tanh) with the tanh formula written out, the tied head) reproduces logits_last, hidden_last and
     logits_all_0 (1e-4) and every golden greedy id (no cache); the file holds exactly Gemma 1's tensors (Llama's names,
     q width heads x head_dim != hidden, no lm_head, no sandwich or q/k norms), all BF16; config.json is in
     gemma-7b-it's spelling (hidden_act "gelu" and no hidden_activation, head_dim listed, no tie_word_embeddings key,
     rope_scaling null) and reference.Spec / golden.json read it as GemmaCheck does (gelu_pytorch_tanh, (1 + w), embed
     scale bf16(sqrt(H)), head_dim^-0.5, tied, no softcap or window); gemma-1.1's spelling (hidden_activation
     gelu_pytorch_tanh listed) gives the same logits; reference.Spec refuses hidden_activation gelu, attention_bias,
     rope_scaling and use_bidirectional_attention; golden.json has exactly the what-ifs of golden_models.gemma_what_ifs
     and gemma_soft_what_ifs and GemmaCheck reproduces each (norm_plain_w, embed_scale, activation_silu within 1e-3 and
     over 1e-2; gelu_exact and embed_scale_fp32 within 1 % and over 1e-4, with the recorded count of prompts whose
     greedy ids they change).
 23. Qwen3-VL-MoE (qwen3-vl-moe-mm): a second forward pass written here from
     models/qwen3_vl_moe/modeling_qwen3_vl_moe.py and configuration_qwen3_vl_moe.py as transformers 4.57 has them
     (`Qwen3VLMoeCheck`: text_config read with Qwen3VLMoeTextConfig's defaults, three equal position rows through
     apply_interleaved_mrope, the q/k norms over head_dim, per-head attention with a hand-written softmax, the MoE
     layers by Qwen3VLMoeTextDecoderLayer's rule,
     Qwen3VLMoeTextSparseMoeBlock's router into dense routing weights, and Qwen3VLMoeTextExperts.forward's inference
     branch: torch.bmm of the tokens repeated per expert with the released gate_up_proj (E, H, 2F), chunk(2), torch.bmm
     with down_proj (E, F, H), weighted and summed over the experts) reproduces logits_last, hidden_last and
     logits_all_0 (1e-4) and every golden greedy id (no cache); the experts as transformers 5 runs them (Transpose(1,
     2) to (E, 2F, H) / (E, H, F), F.linear per expert) and, through reference.forward, the per-expert layout
     (mlp.experts.{e}.gate_proj = gate_up_proj[e][:, :F]^T, ...) give the same logits (1e-6 of the largest |logit|, at
     least 1e-5); the file holds exactly the family's tensors (MoE layers: mlp.gate (E, H), experts.gate_up_proj (E, H,
     2F), experts.down_proj (E, F, H); the dense layer's mlp.gate_proj / up_proj / down_proj; lm_head) plus three
     model.visual.* stand-ins, BF16 matrices and F32 norms; config.json is in the release's spelling and reference.Spec
     / golden.json read its MoE layers, expert layout, mrope, theta and router as Qwen3VLMoeCheck does;
     Qwen3VLMoeCheck's own router gives golden.json's routing gaps (prompt and fed back, >= 1e-3) and expert_ids_last;
     golden.json has exactly the what-ifs of golden_models.qwen3_vl_moe_what_ifs and Qwen3VLMoeCheck reproduces each
     (the top-k not renormalised, gate_up_proj's halves swapped, gate / up interleaved in its columns, the stored bytes
     read as transformers 5's (E, 2F, H) / (E, H, F) without the transpose; 1e-3, each over 1e-2); reference.Spec /
     load_model refuse norm_topk_prob false, attention_bias, mrope sections not adding up to head_dim / 2, fused
     experts saved as (E, 2F, H) / (E, H, F), and both expert layouts at once.
 24. Ministral 3 (ministral3-mm: Mistral3ForConditionalGeneration with a text_config of model_type "ministral3"): a
     second forward pass written here from models/ministral3/modeling_ministral3.py, configuration_ministral3.py and
     modeling_rope_utils.py's _compute_yarn_parameters (transformers 5) (`Ministral3Check`: text_config read with
     Ministral3Config's defaults, YaRN's frequencies and attention factor computed per pair in Python floats, the
     rotation of the pairs (i, i + HD/2) as complex numbers, then every query times _get_llama_4_attn_scale computed per
     position in Python (1 + beta log(1 + position // period)), the keys not, per-head attention with a hand-written
     softmax, Mistral's layer) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and every golden greedy id
     (no cache); the file holds exactly Mistral's tensors under model.language_model.* and lm_head.weight (q width
     heads x head_dim != hidden), BF16 matrices and F32 norms, beside the stand-ins under model.vision_tower.* /
     model.multi_modal_projector.*; config.json is in transformers 5's spelling (the RoPE only in rope_parameters, with
     rope_type and type yarn, llama_4_scaling_beta and original_max_position_embeddings; max_position_embeddings =
     factor x original; "dtype") and reference.Spec / golden.json read its beta, period, theta, YaRN frequencies (1e-6
     relative; kept, ramped and divided pairs all present) and attention factor (1) as Ministral3Check does; its query
     factor at every period start equals golden.json's query_scale_per_period (1e-6) and every prompt's sequence
     crosses a period boundary; golden.json has exactly the what-ifs of golden_models.ministral3_what_ifs and
     Ministral3Check reproduces each (no query scaling, the keys scaled too, no log, the factor of position + 1, plain
     RoPE, YaRN's default attention factor; 1e-3, each over 1e-2); reference.Spec refuses rope_theta or rope_scaling
     beside rope_parameters, a missing llama_4_scaling_beta and a period that is not a positive integer. (1. checks the
     KV cache, which holds the unscaled keys, with each new query scaled by its own position.)
 25. GLM-4.1V and GLM-4.5V (glm4v-mm: Glm4vForConditionalGeneration; glm4v-moe-mm: Glm4vMoeForConditionalGeneration;
     both as released with transformers 4.5x's save): a second forward pass written here from models/glm4v/
     modeling_glm4v.py, configuration_glm4v.py and models/glm4v_moe/modular_glm4v_moe.py (4.56 / 4.57) with
     models/glm4_moe's Glm4MoeTopkRouter / Glm4MoeMoE (`GlmVCheck`: text_config read with Glm4vTextConfig's /
     Glm4vMoeTextConfig's defaults, head_dim = hidden / heads for GLM-4.1V, rotary_dim = int(head_dim x
     partial_rotary_factor), three equal position rows with each frequency's angle taken from its mrope_section band's
     row, GLM-4.1V's adjacent pairs or GLM-4.5V's halves rotated as complex numbers, per-head attention with a
     hand-written softmax, GLM-4-0414's four norms and fused gate_up_proj, or GLM-4.5's two norms, dense first layer and
     the sigmoid router with correction bias and groups (masked_fill 0.0, topk unsorted) over Glm4MoeMoE.moe's one_hot /
     index_add_ loop plus the ungated shared experts) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and
     every golden greedy id (no cache); the files hold exactly the family's tensors under model.language_model.* and
     lm_head.weight (GLM-4.1V: four norms, q/k/v biases, fused gate_up_proj; GLM-4.5V: per-expert mlp.experts.{e}.*,
     mlp.gate, mlp.gate.e_score_correction_bias (F32), mlp.shared_experts.*, the dense layer's gate/up/down_proj), no
     MTP layer, three model.visual.* stand-ins, all BF16 but the correction bias; config.json is in the releases'
     spelling (glm4v_text without head_dim and rope_scaling {"mrope_section", "type": "default"}; glm4v_moe_text with
     head_dim != hidden / heads and rope_scaling {"mrope_section", "rope_type": "default"}; partial_rotary_factor 0.5,
     attention_bias true, no use_qk_norm / num_nextn_predict_layers) and reference.Spec / golden.json read it as
     GlmVCheck does; GlmVCheck's angles of text positions are the plain RoPE's, and for an image's (t, h, w) rows
     reference.mrope_cos_sin takes each frequency from its band's row as GlmVCheck does (1e-5); GlmVCheck's own router
     gives golden.json's routing gaps (experts and groups, prompt and fed back, >= 1e-3) and expert_ids_last;
     golden.json has exactly the what-ifs of golden_models.glm_v_what_ifs (and the sigmoid router's) and GlmVCheck
     reproduces each (1e-3, each over 1e-2); reference.Spec refuses mrope sections not adding up to rotary_dim / 2, rope_scaling without
     them or null, a linear rope_scaling, a rope_theta in rope_scaling that differs, and for GLM-4.1V a head_dim key !=
     hidden / heads and an absent partial_rotary_factor (1.0: the sections no longer fit). (6. checks GLM-4.1V's
     interleaved RoPE against rotate-half on permuted rows; 7. its multimodal RoPE of text positions.)
 26. PhiMoE (phimoe: PhimoeForCausalLM, Phi-3.5-MoE): a second forward pass written here from transformers 4.x's
     models/phimoe/modeling_phimoe.py and configuration_phimoe.py (`PhimoeCheck`: config.json read with PhimoeConfig's
     defaults, head_dim = hidden / heads, torch's layer_norm with weight and bias for the three nn.LayerNorms,
     F.linear with the q/k/v/o biases, _compute_longrope_parameters' factors picked by the sequence length against
     original_max_position_embeddings and PhimoeRotaryEmbedding.forward's short / long mscale on cos and sin, the
     rotate-half pairs turned as complex numbers of that length, per-head attention with an explicit causal and
     sliding-window mask and a hand-written softmax, sparsemixer as written there (eval mode: max, clamp, the two
     masked softmaxes, scatter of -inf, gather) and PhimoeSparseMoeBlock.forward's one_hot / index_add_ expert loop,
     the lm_head bias) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and every golden greedy id (no
     cache), and on a sequence longer than original_max_position_embeddings (the long factors and long_mscale, which
     no golden sequence reaches) agrees with reference.forward (1e-4); the file holds exactly PhiMoE's tensors
     (LayerNorm weights and biases in F32, q/k/v/o weights and biases, block_sparse_moe.gate and per-expert w1 / w3 /
     w2, lm_head.weight and lm_head.bias; BF16 but the norms); config.json is in the spelling transformers 4.x's
     save_pretrained writes for PhimoeConfig (no head_dim, attention_bias / lm_head_bias true, rope_scaling longrope
     with short_mscale = long_mscale != the computed attention factor, rope_type and original_max_position_embeddings
     beside type, the latter also at the top level; num_experts_per_tok 2, router_jitter_noise, sliding_window longer
     than every sequence) and reference.Spec / golden.json read its norms, biases, LongRoPE (inverse frequencies, both
     mscales, the computed factor, the switch point) and router as PhimoeCheck does, every golden sequence staying
     within original_max_position_embeddings; PhimoeCheck's own sparsemixer gives golden.json's expert and mask gaps
     (prompt and fed back, >= 1e-3), the kept-expert histograms and expert_ids_last; the second mask's test taken from
     the scores with the first expert's at -inf instead of the original scores gives bit-identical weights and experts
     on every router input and on random logits (so no what-if of it); golden.json has exactly the what-ifs of
     golden_models.phimoe_what_ifs and PhimoeCheck reproduces each (1e-3, each over 1e-2); reference.Spec refuses
     num_experts_per_tok != 2, a head_dim key != hidden / heads, a rope type other than longrope, a missing or
     non-numeric mscale, rope_scaling without original_max_position_embeddings and a top-level one that differs.
     (1. checks the KV cache; 3. the MoE block against an index_add_ loop with PhimoeCheck's sparsemixer.)
 27. Llama 4 (llama4-mm: Llama4ForConditionalGeneration, Scout / Maverick as released): a second forward pass written
     here from models/llama4/modeling_llama4.py and configuration_llama4.py (`Llama4Check`: text_config read with
     Llama4TextConfig's defaults and __post_init__'s rules for no_rope_layers, moe_layers and layer_types; the llama3
     inverse frequencies pair by pair in Python floats; the adjacent pairs rotated in real arithmetic on the rotary
     layers, then Llama4TextL2Norm written out; the NoPE layers' query temperature per position in Python; per-head
     attention with an explicit causal and same-chunk mask and a hand-written softmax; Llama4TextMLP on the dense layers;
     Llama4Router's top-k logits and sigmoids with every expert looped over on its scored input, plus the ungated shared
     expert) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and every golden greedy id (no cache), and on a
     sequence past attention_chunk_size (which no golden sequence reaches) agrees with reference.forward (1e-4), the
     chunking changing the positions past the first chunk only; the file holds exactly Llama 4's tensors under
     language_model.model.* and language_model.lm_head.weight (feed_forward.router, the fused experts.gate_up_proj (E,
     H, 2F) / experts.down_proj (E, F, H) and shared_expert.* on the MoE layers, feed_forward.gate/up/down_proj of
     intermediate_size_mlp on the dense ones), BF16 matrices and F32 norms, beside the vision_model.* /
     multi_modal_projector.linear_1.weight stand-ins; config.json is in the released spelling (no_rope_layers and
     moe_layers listed beside interleave_moe_layer_step, rope_scaling llama3 with low_freq_factor = high_freq_factor,
     attention_chunk_size past every golden sequence, use_qk_norm, attn_temperature_tuning) and reference.Spec /
     golden.json read its layers, chunking, q/k norm and temperature layers, MoE layers and names as Llama4Check does;
     the llama3 frequencies of transformers' torch.where form (whose smooth factor divides by zero where low = high) are
     finite and equal Llama4Check's pair-by-pair reading (1e-6) and reference.Spec's (exactly), with no smoothed pair;
     Llama4Check's query temperature at every step equals golden.json's temperature_per_step; its own router gives
     golden.json's routing gaps (the k-th minus (k+1)-th logit, prompt and fed back, >= 1e-3) and expert_ids_last;
     golden.json has exactly the what-ifs of golden_models.llama4_what_ifs and Llama4Check reproduces each (1e-3, each
     over 1e-2); reference.Spec refuses a rope type other than default / llama3, a short or non-0/1 no_rope_layers, an
     unknown layer type, an attention_chunk_size of 0 or null, attention_bias, a moe_layers index past the last layer
     and floor_scale 0, and derives the same layers from no_rope_layer_interval / interleave_moe_layer_step when the
     lists are left out (or no_rope_layers is empty); transformers 5's flat rope_parameters give the same frequencies
     (beside rope_theta / rope_scaling: refused). (1. checks the KV cache, which holds the unscaled keys, with each
     new NoPE-layer query scaled by its own position; 3. the MoE block against an index_add_ loop over the scored
     inputs; 6. the adjacent-pair RoPE against rotate-half on permuted q/k rows.)
 28. Granite 4.0 (granite4-micro, granite4-moe-nope: GraniteMoeHybridForCausalLM with layer_types all "attention";
     granite4-h: Mamba-2 layers beside a NoPE attention layer; granite4-h-moe: Mamba-2 layers with experts plus
     shared_mlp on every layer, granite-4.0-h-tiny / -small's shape): a second forward pass written here from
     models/granitemoehybrid/modeling_granitemoehybrid.py and configuration_granitemoehybrid.py (`GraniteHybridCheck`:
     GraniteMoeHybridConfig's defaults and layers_block_type, the rotary embedding only with position_embedding_type
     "rope" (the rotate-half pairs as complex numbers), scores times attention_multiplier per head with an explicit mask
     and a hand-written softmax, on "mamba" layers GraniteMoeHybridMambaLayer run token by token as torch_forward's
     cached path runs a decoding step (the conv state rolled and summed against the kernel plus the bias, SiLU, dt =
     softplus(dt + dt_bias) clamped at 0, the state times exp(dt A) plus dt B x, y = state C by torch.bmm plus D x, the
     gated RMSNorm with silu(gate) first over the whole intermediate size, out_proj), the branches times
     residual_multiplier, shared_mlp as the whole MLP without experts, else GraniteMoeHybridTopKGating and
     GraniteMoeHybridMoE.forward as written there (tokens sorted by expert, the stacked experts split per expert,
     index_add) plus the ungated shared_mlp, the embeddings times embedding_multiplier, the logits over logits_scaling)
     reproduces logits_last, hidden_last and logits_all_0 (1e-4) and every golden greedy id (no cache); the file holds
     exactly GraniteMoeHybrid's tensors (self_attn.* on attention layers, mamba.in_proj / conv1d (+ bias) / dt_bias /
     A_log / D / norm / out_proj on Mamba-2 layers, F32 A_log / D / dt_bias, shared_mlp on every layer,
     block_sparse_moe.* only with experts, lm_head only untied); config.json is in GraniteMoeHybridConfig's saved
     spelling (mamba_* keys with d_head x n_heads = expand x hidden, no head_dim, intermediate_size !=
     shared_intermediate_size, attention_multiplier != head_dim^-0.5; with Mamba-2 layers a chunk size that prompt 4
     crosses twice and some prompt ends inside of, 1 < n_groups < n_heads without experts and n_groups 1 with experts
     (as released), the conv bias, no projection biases);
     reference.Spec and golden.json read the layers, the mixer's sizes, RoPE, MLP, multipliers and eps as
     GraniteHybridCheck does; position_embedding_type null, absent and "nope" all give no RoPE (null / "nope": the NoPE
     fixtures' logits exactly); no layer_types (absent, null or []) reads every layer as Mamba-2 and a listed "mamba"
     that layer; with Mamba-2 layers reference.py's chunked scan (torch_forward's ssd naive form, the golden values)
     equals its per-token recurrence within 1e-5 of the logits over the prompts plus their greedy ids at
     mamba_chunk_size and at two chunk sizes dividing none of the lengths, golden.json's mamba_chunked_vs_recurrent is
     reproduced, and after prompt 4 the chunked scan leaves the recurrence's ssm and conv states (1e-5); without experts
     intermediate_size is not read; with experts GraniteHybridCheck's router gives golden.json's expert_ids_last and
     routing gaps; golden.json has exactly the what-ifs of golden_models.granite_description and
     granite_hybrid_what_ifs (with experts beside Mamba-2 layers also num_experts_per_tok read as 1) and
     GraniteHybridCheck reproduces each (1e-3, each over 1e-2); reference.Spec refuses a
     short layer_types, an unknown layer type, another position_embedding_type, attention_bias, shared_intermediate_size
     0, a negative num_local_experts, transformers 5's rope_parameters, mamba_d_head x mamba_n_heads != mamba_expand x
     hidden_size, mamba_n_heads not dividing mamba_expand x hidden_size, a mamba_chunk_size of 0 and, with a Mamba-2
     layer, mamba_proj_bias true, mamba_n_heads not a multiple of mamba_n_groups, a hidden_act other than silu and a
     time_step_limit other than [0, inf]; mamba_d_head "auto" reads as mamba_expand x hidden_size / mamba_n_heads. Once
     for all such fixtures: reference's chunked (8) and per-token scans against a float64 per-token loop on random
     inputs from a nonzero state (1e-6 of the largest value). (1. checks the KV cache, with the Mamba-2 layers' conv and
     ssm states; 3. the MoE block.)
 29. HunYuan-Dense (hunyuan-dense: HunYuanDenseV1ForCausalLM): a second forward pass written here from
     models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py and configuration_hunyuan_v1_dense.py (`HunYuanDenseCheck`:
     HunYuanDenseV1Config's defaults, HunYuanDenseV1RotaryEmbedding's DynamicNTKAlpha base rope_theta x
     alpha^(head_dim / (head_dim - 2)) computed here, the rotate-half pairs as complex numbers, then
     HunYuanDenseV1Attention's query_layernorm / key_layernorm per head after the rotation, per-head attention with an
     explicit mask and a hand-written softmax, LlamaMLP) reproduces logits_last, hidden_last and logits_all_0 (1e-4)
     and every golden greedy id (no cache); the file holds exactly HunYuanDenseV1's tensors (query_layernorm /
     key_layernorm (head_dim,) per layer, no q_norm / k_norm, no biases, no lm_head: tied), all BF16; config.json is in
     Hunyuan-7B-Instruct's spelling (head_dim listed and != hidden / heads, rope_scaling type dynamic with alpha and the
     unread factor / beta / mscale keys, use_qk_norm, eod_token_id, pretraining_tp); reference.Spec and golden.json read
     the q/k norms (names, placement), the base and the inverse frequencies as HunYuanDenseCheck does; "rope_type" in
     place of "type" and rope_scaling without its unread keys give the same frequencies, rope_scaling null the plain
     ones; golden.json has exactly the what-ifs of golden_models.hunyuan_dense_what_ifs and HunYuanDenseCheck reproduces
     each (1e-3, each over 1e-2); reference.Spec refuses a missing or null head_dim, use_qk_norm false, a linear or an
     alpha-less dynamic rope_scaling, transformers 5's rope_parameters, attention_bias and mlp_bias. (1. checks the KV
     cache, which holds the normed keys.)
 30. LFM2 (lfm2: Lfm2ForCausalLM): a second forward pass written here from models/lfm2/modeling_lfm2.py and
     configuration_lfm2.py (`Lfm2Check`: Lfm2Config's defaults and original-key readings (block_ff_dim over
     intermediate_size, theta over rope_theta, tie_embedding over tie_word_embeddings, layer_types else full_attn_idxs),
     Lfm2MLP.__init__'s width rule written with math.ceil, operator_norm / ffn_norm / embedding_norm, Lfm2Attention's
     q_layernorm / k_layernorm before the rotate-half RoPE turned as complex numbers, per-head attention with an explicit
     mask and a hand-written softmax, out_proj; Lfm2ShortConv with in_proj chunked into B, C, x, the causal depthwise
     conv over B x as a sum over its taps, y = C conv_out, out_proj; Lfm2MLP) reproduces logits_last, hidden_last and
     logits_all_0 (1e-4) and every golden greedy id (no cache); run as transformers' generate runs the conv (each prompt
     in one call, every generated token on Lfm2ShortConv.slow_forward's cached path: the conv state rolled, the new B x
     written at cache_position clamped to conv_L_cache - 1, summed against the kernel) it gives the golden greedy ids
     again, its logits within 1e-4 of reference.forward's over the whole sequences; reference's cached one-token step
     after prompt 4 equals the whole sequence run again (1e-5), each conv layer caching (1, H, conv_L_cache); the file
     holds exactly Lfm2's tensors (operator_norm / ffn_norm, conv.in_proj (3H, H) / conv.conv (H, 1, K) / conv.out_proj
     on conv layers, self_attn.q/k/v_proj, q_layernorm / k_layernorm (head_dim,) and out_proj on attention layers,
     feed_forward.w1 / w3 / w2 at the adjusted width, model.embedding_norm, no lm_head: tied), all BF16; config.json is
     in the LFM2 releases' spelling (block_ff_dim = intermediate_size != the adjusted width, block_dim / conv_dim /
     conv_dim_out / num_heads / block_norm_eps, layer_types listed with full_attn_idxs null, no head_dim / theta /
     tie_embedding); reference.Spec and golden.json read the layer types, conv_L_cache, the width, norm_eps, the q/k
     norms, rope_theta and its inverse frequencies, LFM2's names and the tied head as Lfm2Check does, and reference.Spec
     reads full_attn_idxs without layer_types, neither key (every layer attention), "theta", tie_embedding, a changed
     intermediate_size beside block_ff_dim, intermediate_size alone and five width settings (a null multiplier: no
     rounding) as Lfm2Check does; golden.json has exactly the what-ifs of golden_models.lfm2_what_ifs and Lfm2Check
     reproduces each (1e-3, each over 1e-2); reference.Spec refuses conv_bias true, an unknown layer type, a short
     layer_types, conv_L_cache 0, rope_scaling, transformers 5's rope_parameters and block_multiple_of 0. (1. checks the
     KV cache with the conv layers' states.)
     LFM2-MoE (lfm2-moe: Lfm2MoeForCausalLM): a second forward pass from models/lfm2_moe/modular_lfm2_moe.py and
     configuration_lfm2_moe.py (`Lfm2MoeCheck`: Lfm2MoeConfig's defaults and readings (layer_types as listed, the RoPE
     base from rope_parameters else rope_theta, tie_embedding; no block_ff_dim, theta or full_attn_idxs), Lfm2Check's
     conv, attention, norms and layer; Lfm2MoeDecoderLayer's feed_forward: Lfm2MoeMLP of intermediate_size as it stands
     on layers < num_dense_layers, else Lfm2MoeSparseMoeBlock with route_tokens_to_experts as written there (sigmoid, the
     top-k of s + expert_bias, s gathered, / (sum + 1e-6), x routed_scaling_factor) and Lfm2MoeExperts' one_hot /
     index_add_ loop over the per-expert w1 / w3 / w2 stacked as conversion_mapping's "lfm2_moe" entry stacks them)
     reproduces logits_last, hidden_last and logits_all_0 (1e-4), every golden greedy id without a cache and on the
     cached conv path, as for LFM2; the file holds exactly the released per-expert tensors (feed_forward.gate,
     feed_forward.expert_bias F32, feed_forward.experts.{e}.w1 / w3 / w2, the dense layers' feed_forward.w1 / w3 / w2),
     BF16 but the bias; config.json is as transformers 4.57 writes Lfm2MoeConfig ("dtype", top-level rope_theta,
     layer_types listed, dense layers over a conv and an attention layer, routed_scaling_factor != 1, none of LFM2's
     original keys); reference.Spec and golden.json read the layers, widths, router settings and RoPE as Lfm2MoeCheck
     does, and reference.Spec reads rope_parameters, a missing rope key, tie_embedding, an unread block_ff_dim,
     num_dense_layers and use_expert_bias false (= the router_bias what-if) as Lfm2MoeCheck does; Lfm2MoeCheck's router
     reproduces the routing gaps, expert_ids_last, prompt 4's expert usage (every expert chosen in each MoE layer) and
     the tokens each router what-if reroutes; golden.json has exactly the what-ifs of golden_models.lfm2_moe_what_ifs and
     Lfm2MoeCheck reproduces each (1e-3, each over 1e-2); reference.Spec refuses conv_bias true, a missing layer_types,
     an unknown layer type, "theta", rope_scaling, a non-default or disagreeing rope_parameters, hidden_act gelu,
     num_experts 0, num_experts_per_tok > num_experts and conv_L_cache 0. (3. checks the MoE block against the
     per-expert loop.)
 31. Nemotron-H (nemotron-h: NemotronHForCausalLM): a second forward pass written here from
     models/nemotron_h/modular_nemotron_h.py, models/zamba2/modular_zamba2.py and configuration_nemotron_h.py
     (`NemotronHCheck`: NemotronHConfig's numbers for absent keys, the blocks from hybrid_override_pattern's characters,
     attention_head_dim; NemotronHBlock's x + mixer(norm(x)), NemotronHRMSNorm with layer_norm_epsilon, JambaAttention
     without any rotation, per head with an explicit mask and a hand-written softmax, NemotronHMLP's relu(up)^2 through
     down_proj, and NemotronHMamba2Mixer run token by token as torch_forward's cached path runs a decoding step: the conv
     state rolled and summed against the kernel plus the bias, SiLU, dt = softplus(dt + dt_bias) clamped below at
     time_step_min, B / C expanded from the groups to the heads, the state times exp(dt A) plus dt B x, y = state @ C by
     torch.bmm plus D x, Zamba2RMSNormGated per group with silu(gate) first, out_proj) reproduces logits_last,
     hidden_last and logits_all_0 (1e-4) and every golden greedy id (no cache); the file holds exactly the released
     tensors (backbone.embeddings, per layer norm and mixer.*, backbone.norm_f, lm_head), BF16 but F32 A_log / D /
     dt_bias; config.json is in nvidia/Nemotron-H-8B-Base-8K's spelling (hybrid_override_pattern, attention_head_dim and
     no head_dim, mamba_num_heads x mamba_head_dim != expand x hidden, 1 < n_groups < heads, a chunk size prompt 4
     crosses twice and some prompt ends inside of, time_step_limit [0, Infinity], the time_step_* keys, auto_map, no
     legacy mamba_* keys); reference.Spec and golden.json read the blocks, the names, the eps, relu2 and the mixer (sizes,
     floor, per-group norm) as NemotronHCheck does; the floor raises some and not all of prompt 4's dt values in every
     Mamba-2 layer, NemotronHCheck's counts equal golden.json's; the chunked scan equals the per-token recurrence as for
     Granite 4.0-H (28.); expand, rms_norm_eps, time_step_max / floor and the other init-only keys are not read (the
     same logits_last) while layer_norm_epsilon is; transformers 5's layers_block_type (either naming) with head_dim
     reads as the pattern with attention_head_dim; golden.json has exactly the what-ifs of
     golden_models.nemotron_h_what_ifs and NemotronHCheck reproduces each (1e-3, each over 1e-2); reference.Spec refuses
     an "E" block with moe_latent_size 0, a pattern of another length or with an unknown character,
     no pattern, a disagreeing layers_block_type, mlp_hidden_act other than relu2, mamba_hidden_act other than silu,
     use_bias / mamba_proj_bias / mlp_bias / attention_bias true, a time_step_limit other than [0, inf], heads not a
     multiple of n_groups, chunk_size 0, head_dim disagreeing with attention_head_dim, the legacy mamba_* keys and a
     negative time_step_min. (1. checks the KV cache with the Mamba-2 layers' conv and ssm states.)
     Nemotron-H with MoE blocks (nemotron-h-moe: NVIDIA-Nemotron-3-Nano-30B-A3B's "E" layers): NemotronHCheck runs the
     "E" blocks too, from modular_nemotron_h.py NemotronHMoE and deepseek_v3's DeepseekV3MoE.route_tokens_to_experts
     (the fp32 gate logits, sigmoid, the choice on s + e_score_correction_bias within the best topk_group groups by
     scatter_ / masked_fill 0.0, topk unsorted, s gathered / (sum + 1e-20) x routed_scaling_factor), the per-expert
     up_proj / down_proj stacked as conversion_mapping's "nemotron_h" MergeModulelist stacks them and NemotronHExperts'
     one_hot / index_add_ loop over the experts hit (relu2, no gate), plus the shared NemotronHMLP; head_dim read where
     attention_head_dim is absent. It reproduces logits_last, hidden_last, logits_all_0 (1e-4) and every golden greedy
     id; the file holds exactly the released tensors (mixer.gate.weight, the F32 mixer.gate.e_score_correction_bias,
     mixer.experts.{e}.up_proj / down_proj per expert, mixer.shared_experts.up_proj / down_proj beside nemotron-h's
     kinds), BF16 but F32 A_log / D / dt_bias / e_score_correction_bias; config.json is in
     NVIDIA-Nemotron-3-Nano-30B-A3B-BF16's spelling (head_dim, norm_eps and no rms_norm_eps, no time_step_limit, no
     moe_latent_size, the MoE keys with n_group = topk_group = 1, routed_scaling_factor != 1, three distinct MLP widths,
     transformers 4.55.4, auto_map with AutoModel); reference.Spec and golden.json read the blocks and the MoE settings
     and names as NemotronHCheck does; the floor's counts, the chunked scan against the recurrence as for nemotron-h;
     NemotronHCheck's router gives prompt 4's expert usage (every expert chosen in each MoE layer), expert_ids_last and
     the tokens each router what-if reroutes, as golden.json has them; the experts stacked as transformers 5 holds them
     (mixer.experts.up_proj / down_proj) give reference.py the same logits_last; the unread keys (norm_eps, rope_theta,
     partial_rotary_factor, mamba_ssm_cache_dtype, an explicit moe_latent_size null, ...) change nothing while
     layer_norm_epsilon does; transformers 5's layers_block_type with "moe" reads as the pattern; golden.json has
     exactly nemotron-h's what-ifs plus router_bias, router_scaling (golden_models.sigmoid_router_description) and
     golden_models.nemotron_h_moe_what_ifs (router_softmax, router_unnormalised, router_top1, shared_expert), and
     NemotronHCheck reproduces each (1e-3, each over 1e-2); reference.Spec refuses moe_latent_size 0 or true,
     n_shared_experts other than 1, n_group not dividing the experts or leaving one per group, topk_group > n_group,
     top-k beyond the experts, zero widths, mlp_bias, mlp_hidden_act silu, head_dim disagreeing with an
     attention_head_dim and a time_step_limit other than [0, inf]. (3. checks the MoE block against NemotronHCheck's
     per-expert loop.)
     Nemotron-H with LatentMoE blocks (nemotron-h-latent-moe: NVIDIA-Nemotron-3-Super's moe_latent_size in the Nano
     spelling): the same checks, NemotronHCheck's NemotronHMoE routing on the block input, running the experts' loop on
     mixer.fc1_latent_proj's output, their sum through mixer.fc2_latent_proj, the shared expert on the un-projected
     input; the file holds fc1_latent_proj (latent, H) / fc2_latent_proj (H, latent) and the experts latent wide;
     config.json lists moe_latent_size, a width of its own (not hidden, moe_intermediate_size, the shared or the dense
     width); reference.Spec and golden.json read it; read as null the experts do not fit (a shape error); golden.json
     has also the what-ifs latent_routed_path (fc2_latent_proj at 0) and latent_projections_swapped (fc1 / fc2 each
     read as the other's transpose) and NemotronHCheck reproduces them with those weights.

 32. Arcee (arcee: ArceeForCausalLM, AFM-4.5B): a second forward pass written here from models/arcee/modular_arcee.py and
     configuration_arcee.py (`ArceeCheck`: ArceeConfig's defaults, LlamaCheck's layers with ArceeMLP (NemotronMLP:
     down_proj(relu(up_proj(x))^2), no gate_proj), YaRN from rope_scaling as _compute_yarn_parameters computes it
     (GptOssCheck.yarn), the attention factor on the rotated q and k) reproduces logits_last, hidden_last and logits_all_0
     (1e-4) and every golden greedy id (no cache); the file holds exactly Llama's tensors without mlp.gate_proj, all
     BF16; config.json is in ArceeConfig's spelling (hidden_act relu2, head_dim listed, rope_scaling yarn with both
     "rope_type" and "type", mscale 1.0 without mscale_all_dim, max_position_embeddings = factor x original, no
     pretraining_tp); reference.Spec and golden.json read relu2, the missing gate, the YaRN frequencies (kept, ramped and
     divided pairs all present) and attention factor as ArceeCheck does, and rope_scaling with only one of the type keys
     or without mscale alike; golden.json has exactly the what-ifs rope_scaling, mlp_silu, mlp_relu and
     rope_attention_factor and ArceeCheck reproduces each (1e-3, each over 1e-2); with attention_bias true and q/k/v/o
     biases added reference.py equals ArceeCheck (check_added_attention_biases); reference.Spec refuses hidden_act silu
     and mlp_bias true.
 33. dots.llm1 (dots1: Dots1ForCausalLM): a second forward pass written here from models/dots1/modular_dots1.py (the
     generated modeling_dots1.py) and configuration_dots1.py (`Dots1Check`: Dots1Config's defaults and layer types
     (layer_types, else sliding from max_window_layers on when sliding_window is set), Qwen3Attention's q_norm / k_norm
     per head before the rotate-half RoPE turned as complex numbers, the window as an explicit mask, DeepseekV3MLP on the
     dense layers, Dots1MoE: Dots1TopkRouter (deepseek_v3_route, shared with the DeepSeek-V3, Nemotron-H and MoE checks)
     and Dots1MoE.moe's one_hot / where / index_add_ loop over the per-expert tensors plus the (gateless)
     shared_experts) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and every golden greedy id (no cache);
     the file holds exactly Dots1's tensors (q_norm / k_norm (head_dim,), the dense layer's mlp.*, the router, its F32
     e_score_correction_bias, mlp.experts.{e}.* and mlp.shared_experts.*), BF16 but the bias; config.json is in
     Dots1Config's spelling (no layer_types, max_window_layers inside the layers, a window shorter than every golden
     prompt, head_dim != hidden / heads, groups that limit, renormalised, routed_scaling_factor != 1, scoring_func
     sigmoid); reference.Spec and golden.json read the sliding layers, q/k norms, dense / MoE layers and router as
     Dots1Check does, and reference.Spec reads layer_types listed, use_sliding_window false (not read), sliding_window
     null, max_window_layers 0 and a layer_types that disagrees with max_window_layers as Dots1Check does; Dots1Check's
     router reproduces the routing gaps (experts and groups, prompt and fed-back tokens), expert_ids_last, prompt 4's
     expert usage (every expert chosen in each MoE layer) and the tokens each router what-if reroutes; golden.json has
     exactly the what-ifs router_{bias,group_limit,scaling,softmax,unnormalised,top1}, shared_expert, sliding_window,
     sliding_window_first_layers and qk_norm_after_rope and Dots1Check reproduces each (1e-3, each over 1e-2); with
     attention_bias true and q/k/v/o biases added reference.py equals Dots1Check; reference.Spec refuses
     n_shared_experts null, no n_routed_experts, scoring_func softmax, n_group not dividing the experts, topk_group >
     n_group, top-k beyond the kept groups, layer_types of another length, sliding layers with sliding_window null and
     max_window_layers null. (1. checks the KV cache with the window, 3. the MoE block against the per-expert loop.)
 34. HunYuan-MoE (hunyuan-moe: HunYuanMoEV1ForCausalLM, Hunyuan-A13B): a second forward pass written here from
     models/hunyuan_v1_moe/modular_hunyuan_v1_moe.py (the generated modeling_hunyuan_v1_moe.py of 4.56 / 4.57) and
     configuration_hunyuan_v1_moe.py (`HunYuanMoeCheck`: HunYuanMoEV1Config's defaults, HunYuanDenseCheck's attention
     (q/k norms after the rotation) and DynamicNTKAlpha base, HunYuanMoEV1Gate's fp32 F.linear of mlp.gate.wg, the
     softmax in fp32, torch.topk and the division by the sum, the one_hot / where / index_add_ loop over the per-expert
     tensors (or stacked_experts_forward over transformers 5's stacked ones), plus the ungated mlp.shared_mlp)
     reproduces logits_last, hidden_last and logits_all_0 (1e-4) and every golden greedy id (no cache); the file holds
     exactly HunYuanMoEV1's tensors (the router F32, the rest BF16, tied); config.json is in Hunyuan-A13B-Instruct's
     spelling (attention_head_dim = head_dim != hidden / heads, num_experts an int, per-layer moe_topk,
     moe_intermediate_size = intermediate_size and num_shared_expert 1, use_mixed_mlp_moe true, use_cla false, the
     dynamic alpha rope_scaling with its unread keys); reference.Spec and golden.json read the q/k norms, RoPE, router
     and widths as HunYuanMoeCheck does, and moe_topk as an int, num_experts as a list, moe_intermediate_size /
     num_shared_expert as ints, "rope_type" and the config without Tencent's unread keys alike (same logits); the
     experts stacked as transformers 5 holds them give reference.py and HunYuanMoeCheck the same logits;
     HunYuanMoeCheck's router reproduces the routing gaps (prompt and fed-back tokens), expert_ids_last and prompt 4's
     expert usage (every expert chosen in each layer); golden.json has exactly the what-ifs qk_norm_before_rope,
     qk_norm, rope_plain_theta, rope_alpha_exponent_one, router_sigmoid, router_unnormalised, router_top1 and shared_mlp
     and HunYuanMoeCheck reproduces each (1e-3, each over 1e-2); reference.Spec refuses use_mixed_mlp_moe false, use_cla
     true, num_shared_expert other than 1, moe_intermediate_size != intermediate_size, moe_topk / num_experts lists that
     differ per layer or have another length, moe_topk > num_experts, attention_head_dim != head_dim, no head_dim,
     use_qk_norm false, an alpha-less dynamic rope_scaling, rope_parameters, attention_bias and mlp_bias. (1. checks the
     KV cache, 3. the MoE block against the per-expert loop.)
 35. Apertus (apertus: ApertusForCausalLM, Apertus-8B-2509): a second forward pass written here from
     models/apertus/modular_apertus.py (the generated modeling_apertus.py of 4.56 / 4.57), configuration_apertus.py and
     activations.py's XIELUActivation (`ApertusCheck`: ApertusConfig's defaults, the llama3 frequencies per pair
     (Exaone4Check's), Dots1Check's attention (per-head q/k norms before the rotation) without a window, the layer's
     attention_layernorm / feedforward_layernorm, ApertusMLP with _xielu_python's where / expm1 / min and the softplus
     written out) reproduces logits_last, hidden_last and logits_all_0 (1e-4) and every golden greedy id (no cache); the
     file holds exactly Apertus's tensors (no gate_proj; mlp.act_fn.alpha_p / alpha_n (1,), beta / eps 0-d, the raw
     header's shapes [1] and []), all BF16; config.json is in Apertus-8B-2509's spelling (hidden_act xielu, no head_dim,
     qk_norm / post_norm / mlp_bias listed, rope_theta an integer, rope_scaling llama3 with both type keys,
     max_position_embeddings = factor x original); reference.Spec and golden.json read the norm names, q/k norms, the
     ungated xIELU, the llama3 bands (all present) and each layer's xIELU parameters (stored and after the softplus) as
     ApertusCheck does; every layer's parameters differ from the others' and from the defaults; prompt 4's xIELU inputs
     fall on each branch as golden.json records (some in layer 2's (eps, 0]); one rope key, transformers 5's
     rope_parameters with "dtype", and the config without Swiss AI's unread keys read alike (reference and
     ApertusCheck), and without rope_theta / rope_scaling both take ApertusConfig's llama3 default; golden.json has
     exactly the what-ifs mlp_silu, xielu_default_parameters, xielu_no_softplus, xielu_eps, qk_norm_after_rope and
     rope_scaling and ApertusCheck reproduces each (1e-3, each over 1e-2), and xielu_bf16_parameters_change_prompt4;
     with attention_bias true and q/k/v/o biases added reference.py equals ApertusCheck; reference.Spec refuses
     hidden_act silu / relu2, mlp_bias true, qk_norm false, post_norm true and rope_parameters beside rope_theta.
     (1. checks the KV cache.)
 36. GLM-4.7-Flash (glm4-moe-lite: Glm4MoeLiteForCausalLM): 12. again with `Glm4MoeLiteCheck`, DeepseekV3Check on
     Glm4MoeLiteConfig's defaults (transformers 5's models/glm4_moe_lite/modular_glm4_moe_lite.py and
     configuration_glm4_moe_lite.py) reading the RoPE from rope_parameters (a legacy rope_theta / rope_scaling taken
     into it, else theta 10000) and the dense / MoE layers from mlp_layer_types (default ["dense"] + ["sparse"] x (L -
     1); first_k_dense_replace not read): the goldens (1e-4), every greedy id (no cache), the absorbed MLA form, the
     rotary scores, the score scale / frequencies / latent eps and the what-ifs 12. knows; the file holds exactly the
     release's tensors (per expert, F32 e_score_correction_bias, the MTP layer model.layers.L.* whole = golden.json's
     mtp_tensor_names), BF16 but the biases; config.json is in transformers 5's spelling (dtype, rope_parameters
     {default, 1e6} and no rope_theta, mlp_layer_types listed) with the release's unread keys (first_k_dense_replace 1,
     num_nextn_predict_layers 1, topk_method noaux_tc), one expert group, x1.8, v head = q/k head != nope;
     reference.Spec and golden.json read the layers, RoPE, router and widths as Glm4MoeLiteCheck does, and six other
     spellings (the legacy top-level rope_theta with rope_scaling null and partial_rotary_factor 1.0, no mlp_layer_types,
     no first_k_dense_replace, no num_nextn_predict_layers / topk_method, partial_rotary_factor 1.0 in rope_parameters,
     head_dim = qk_rope_head_dim) alike with the same logits, and no RoPE key at all as theta 10000; Glm4MoeLiteCheck's
     router reproduces the routing gaps (prompt and fed-back tokens), expert_ids_last, prompt 4's expert usage (every
     expert chosen in each MoE layer) and the tokens the correction bias moves; golden.json has exactly the what-ifs
     rope_layout, kv_a_layernorm, q_a_layernorm, latent_norm_eps, router_bias, router_scaling, shared_expert and
     rope_theta_default and Glm4MoeLiteCheck reproduces each (1e-3, each over 1e-2); reference.Spec refuses a
     first_k_dense_replace that disagrees with mlp_layer_types, mlp_layer_types of another length or kind,
     n_shared_experts 0, topk_method greedy, scoring_func softmax, partial_rotary_factor 0.5, head_dim !=
     qk_rope_head_dim, rope_parameters beside rope_theta, rope_type llama3, n_group 3, num_key_value_heads != heads and
     attention_bias true. (1. checks the KV cache, 3. the MoE block against the per-expert loop.)
 37. LLaVA / InternVL wrappers (llava-mm: LlavaForConditionalGeneration with Pixtral-12B's mistral text_config;
     internvl-mm: InternVLForConditionalGeneration with InternVL3-1B-hf's qwen2 one): a second forward pass written here
     from models/llava and models/internvl's configuration / modeling files and the wrapped family's config class
     (`WrapperCheck`: the text family from text_config's model_type, absent LlavaConfig's llama / InternVLConfig's qwen2,
     with LlamaConfig's / MistralConfig's / Qwen2Config's defaults; the weights found under language_model.model.* /
     language_model.lm_head.weight or model.language_model.* / lm_head.weight and renamed for LlamaCheck's layers, with
     Qwen2's q/k/v biases (no o_proj bias) and Mistral's window as an explicit mask) reproduces logits_last, hidden_last
     and logits_all_0 (1e-4) and every golden greedy id (no cache); the file holds exactly the text family's tensors under
     the release's prefix and head (Pixtral-12B's legacy language_model.model.* / language_model.lm_head.weight,
     InternVL3-1B-hf's model.language_model.* / lm_head.weight) beside golden.json's stand-ins, some under the vision
     tower's and some under the projector's name in the same spelling (top-level vision_tower.* /
     multi_modal_projector.*, or under model.), all BF16; config.json is in the release's spelling (Pixtral-12B: text_config
     mistral with head_dim != hidden / heads, sliding_window null, is_composition, no token ids or tie_word_embeddings
     but vision_config's; InternVL3-1B-hf: text_config qwen2 holding the token ids and tie_word_embeddings false, no
     head_dim, use_sliding_window false, nothing of them at the top level); reference.Spec and golden.json read the
     wrapped family (theta, head_dim, kv heads, eps, window, q/k/v biases, untied, prefix and head) as WrapperCheck does;
     text_config without model_type (the wrapper's default family), the weights in the other spelling and (LLaVA) no
     sliding_window key (MistralConfig's 4096) give the same logits; golden.json has exactly the what-ifs
     rope_theta_default and sliding_window (mistral) or qkv_bias (qwen2) and WrapperCheck reproduces each (1e-3, each
     over 1e-2); reference.Spec refuses a text_config of another model_type (gemma3_text) and no text_config. (1. checks
     the KV cache, 4. the transformers >= 4.52 spelling.)
 38. Gemma 4 (gemma4-e, gemma4-moe: Gemma4ForCausalLM; gemma4-dense: Gemma4ForConditionalGeneration): a second
     forward pass written here from models/gemma4/modeling_gemma4.py, configuration_gemma4.py and
     _compute_proportional_rope_parameters in another style (`Gemma4Check`: config.json read on its own, the flat
     head_dim / global_head_dim / num_global_key_value_heads or a per_layer_config, Gemma4TextAttention.__init__'s
     per-layer geometry, KV-sharing flags and Gemma4TextMLP's width as written there, the RoPE frequencies in Python
     floats per layer type turned as complex pairs, per-head attention with an explicit causal / sliding mask at score
     scale 1 and a hand-written softmax, shared K / V keyed by layer type, the per-layer embeddings, layer_scalar,
     Gemma4TextRouter and Gemma4TextExperts' one_hot / index_add_ loop) reproduces logits_last, hidden_last and
     logits_all_0 (1e-4) and every golden greedy id (no cache); the files hold exactly the state dict's tensors (no
     k/v tensors on the shared layers, no v_proj on the k_eq_v layers, each layer's head size and MLP width; the
     multimodal checkpoint's five stand-ins), all BF16; config.json is in the flat spelling; reference.Spec and
     golden.json read the layer types, head sizes, kv heads, k_eq_v, KV sources, MLP widths, RoPE tables, scales,
     soft-cap and layer scalars as Gemma4Check does; the layer scalars are at least 0.1 from 1, the raw logits pass the
     soft-cap, every prompt the window; configuration_gemma4.py @008e574's per_layer_config (with and without equal
     flat keys), rope_parameters left out, a last layer written sliding, an unread top-level rope_theta /
     rope_scaling, and stray k/v tensors on the shared layers give the same logits (reference and Gemma4Check);
     golden.json has exactly the what-ifs the config calls for and Gemma4Check reproduces each (1e-3, each over
     1e-2); with experts the routing gaps over the prompt and fed-back tokens, expert_ids_last, prompt 4's expert
     usage and the tokens the router what-ifs move, and the renormalisation's small effect; the 1e-7 weight-noise
     change golden.json records, at most golden_models.MAX_WEIGHT_NOISE_CHANGE; reference.Spec refuses
     use_bidirectional_attention "all", attention_bias, num_kv_shared_layers >= num_hidden_layers or leaving a shared
     type without a storing layer, rope types other than default / proportional or a table of another width, a
     default RoPE with a partial_rotary_factor, a missing rope_parameters entry, a per_layer_config that disagrees or
     names a sliding layer, global_head_dim null where hidden / heads != head_dim, and per fixture
     vocab_size_per_layer_input != vocab_size, k_eq_v without num_global_key_value_heads, MoE without num_experts or
     with top_k_experts > num_experts. (1. checks the KV cache with shared layers reading their source's cached K / V,
     3. the MoE per-expert loop, 5. the embedding scale.)

Run: /usr/bin/python3 tools/organism/check_reference.py [FIXTURE ...]  (a few seconds; all golden fixtures, or
only the named ones; exits 1 on a failure)
"""
import copy
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

import reference as ref
from golden_models import routing_gap

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "tests", "fixtures", "golden")
failures = []
passes = []


def fixture_config(name):
    """The golden fixture's config.json."""
    with open(os.path.join(ROOT, name, "config.json")) as f:
        return json.load(f)


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
    prefix, _ = ref.weight_names(spec, p)  # ("model." but GLM-4.1V's model.language_model.)
    for l in range(spec.L):
        pre = prefix + "layers.%d." % l
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
    want = last_logits(spec, p, prompts)
    diff = float((want - last_logits(halves, q, prompts)).abs().max())
    # 1e-5 while the logits stay within 10, relative beyond (1.01e-5 at ernie4.5-moe-interval's largest logit, 21.1:
    # its untied head spreads them; GLM's 8.6e-6 at 22.8)
    bound = 1e-6 * max(10.0, float(want.abs().max()))
    check(diff < bound, "%s: interleaved RoPE = rotate-half RoPE on permuted q/k rows (%.2e, bound %.1e)" % (
        name, diff, bound))


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
    if spec.expert_naming == "nemotron_h":
        # NemotronHMoE as NemotronHCheck writes it (route, the stacked experts' index_add_ loop, the shared expert)
        return NemotronHCheck(spec.cfg, p).moe(l, x).view(B, T, H)
    if spec.expert_naming == "gemma4":
        # Gemma 4's router and experts as Gemma4Check writes them (h: the residual; the experts' weighted sum before
        # post_feedforward_layernorm_2, as reference.gemma4_moe returns it)
        return Gemma4Check(spec.cfg, p).moe(l, x).view(B, T, H)
    w = p[ref.router_weight_name(spec, pre)]
    if spec.expert_naming == "gpt_oss":
        out = GptOssCheck.experts(spec.num_experts, spec.swiglu_alpha, spec.swiglu_limit, p, pre, x,
                                  *GptOssCheck.router(spec.top_k, p, pre, x))
        return out.view(B, T, H)
    if spec.router == "llama4":
        # Llama4TextMoe as a per-expert loop: Llama4Router's top-k of the logits and their sigmoids, each chosen expert
        # run on its tokens' hidden states times their scores (routed_in) and accumulated with index_add_, plus the
        # ungated shared expert
        top, chosen = torch.topk(x @ w.T, spec.top_k, dim=-1)
        scores = torch.sigmoid(top)
        out = torch.zeros_like(x)
        mask = torch.nn.functional.one_hot(chosen, num_classes=spec.num_experts).permute(2, 1, 0)
        for e in range(spec.num_experts):
            slot, tok = torch.where(mask[e])
            gate, up, down = ref.expert_tensors(spec, p, pre, e)
            xe = x[tok] * scores[tok, slot, None]
            out.index_add_(0, tok, (torch.nn.functional.silu(xe @ gate.T) * (xe @ up.T)) @ down.T)
        gate, up, down = ref.expert_tensors(spec, p, pre, "shared")
        return (out + (torch.nn.functional.silu(x @ gate.T) * (x @ up.T)) @ down.T).view(B, T, H)
    if spec.router == "sparsemixer":
        # PhimoeSparseMoeBlock.forward: sparsemixer(router_logits, jitter_eps, training=False) as written there
        top, chosen, _ = PhimoeCheck.sparsemixer(x @ w.T, spec.jitter_eps)
    elif spec.router == "sigmoid":
        # Glm4MoeMoE.route_tokens_to_experts as written there (deepseek_v3_route), then its experts' loop
        chosen, top = deepseek_v3_route(x @ w.T, p[pre + "mlp.gate.e_score_correction_bias"], spec.n_group,
                                        spec.topk_group, spec.top_k, spec.norm_topk_prob, spec.routed_scaling_factor)[:2]
    elif spec.router == "minimax":
        # MiniMaxM2TopKRouter.forward as written there (sigmoid of the fp32 logits, plus the block's
        # e_score_correction_bias for the choice only, topk unsorted, the unbiased scores gathered and divided by their sum)
        s_ = torch.sigmoid((x @ w.T).float())
        chosen = torch.topk(s_ + p[ref.correction_bias_name(spec, pre)], k=spec.top_k, dim=-1, sorted=False)[1]
        top = s_.gather(1, chosen)
        top = top / top.sum(dim=-1, keepdim=True)
    elif spec.router == "lfm2":
        # Lfm2MoeSparseMoeBlock.route_tokens_to_experts as written there (sigmoid, topk of s + expert_bias, s gathered,
        # divided by its sum + 1e-6 with norm_topk_prob, times routed_scaling_factor; topk of s without the bias)
        s_ = torch.sigmoid(x @ w.T)
        if spec.lfm2_expert_bias:
            chosen = torch.topk(s_ + p[pre + "feed_forward.expert_bias"], k=spec.top_k, dim=-1)[1]
            top = torch.gather(s_, dim=1, index=chosen)
        else:
            top, chosen = torch.topk(s_, k=spec.top_k, dim=-1)
        if spec.norm_topk_prob:
            top = top / (top.sum(dim=-1, keepdim=True) + 1e-6)
        top = top * spec.routed_scaling_factor
    elif spec.router == "ernie":
        # Ernie4_5_MoeSparseMoeBlock.forward as written there (softmax of the fp32 logits, topk of moe_statics(p) = p +
        # e_score_correction_bias.squeeze(), p gathered and divided by clamp(sum, min=moe_norm_min))
        routing = torch.nn.functional.softmax(torch.nn.functional.linear(x.float(), w), dim=1, dtype=torch.float)
        _, chosen = torch.topk(routing + p[pre + "mlp.moe_statics.e_score_correction_bias"].squeeze(), spec.top_k, dim=-1)
        top = torch.gather(routing, dim=-1, index=chosen)
        top = top / torch.clamp(top.sum(dim=-1, keepdim=True), min=spec.moe_norm_min)
    elif spec.router == "deepseek_v2":
        # DeepseekV2Moe.route_tokens_to_experts as written there (softmax in fp32, topk unsorted, the group mask by
        # scatter_, masked_fill 0.0), weights times routed_scaling_factor (norm_topk_prob: DeepSeek's MoEGate)
        probs = torch.nn.functional.linear(x.float(), w.float()).softmax(dim=-1, dtype=torch.float32)
        if spec.topk_method == "group_limited_greedy":
            G = spec.n_group
            group_scores = probs.view(x.shape[0], G, -1).max(dim=-1).values
            if spec.v2_group_score != "max":
                group_scores = probs.view(x.shape[0], G, -1).topk(2, dim=-1)[0].sum(dim=-1)
            mask = torch.zeros_like(group_scores).scatter_(
                1, torch.topk(group_scores, k=spec.topk_group, dim=-1, sorted=False)[1], 1)
            mask = mask.unsqueeze(-1).expand(x.shape[0], G, spec.num_experts // G).reshape(x.shape[0], -1)
            probs = probs.masked_fill(~mask.bool(), 0.0)
        top, chosen = torch.topk(probs, k=spec.top_k, dim=-1, sorted=False)
        top = top / (top.sum(dim=-1, keepdim=True) + 1e-20) if spec.norm_topk_prob else top * spec.routed_scaling_factor
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


def deepseek_v3_route(logits, bias, G, TG, k, renorm, scaling, score="sigmoid"):
    """DeepseekV3TopkRouter.forward / get_topk_indices as written there (and DeepseekV3MoE.route_tokens_to_experts, which
    GLM-4.5's Glm4MoeMoE, Nemotron-H's NemotronHMoE and dots.llm1's Dots1MoE keep) on the fp32 logits (T, E): scores =
    sigmoid (what-if: softmax), choice values scores + bias (None: without it), each of the G groups scored by the sum
    of its two best, the TG best groups kept by scatter_, the others' values set to 0.0 by masked_fill, topk unsorted;
    the scores gathered, over (sum + 1e-20) when renorm, times scaling. Returns (chosen (T, k), weights (T, k), the
    masked choice values (T, E), the group scores (T, G))."""
    E = logits.shape[-1]
    scores = torch.softmax(logits, dim=-1) if score == "softmax" else logits.sigmoid()
    choice = scores if bias is None else scores + bias.unsqueeze(0)
    group_scores = choice.view(-1, G, E // G).topk(2, dim=-1)[0].sum(dim=-1)
    kept = torch.zeros_like(group_scores).scatter_(1, torch.topk(group_scores, k=TG, dim=-1, sorted=False)[1], 1)
    choice = choice.masked_fill(~kept.unsqueeze(-1).expand(-1, G, E // G).reshape(-1, E).bool(), 0.0)
    chosen = torch.topk(choice, k=k, dim=-1, sorted=False)[1]
    weights = scores.gather(1, chosen)
    if renorm:
        weights = weights / (weights.sum(dim=-1, keepdim=True) + 1e-20)
    return chosen, weights * scaling, choice, group_scores


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


def stacked_experts_forward(x, ids, weights, gate_up, down, E):
    """The experts' loop over stacked tensors (transformers 5's MoE experts, as MiniMaxM2Experts / Qwen2MoeExperts
    run it): per chosen expert, its tokens through silu(gate) * up (gate_up (E, 2F, H): gate rows first), down
    (E, H, F), weighted and added at their tokens."""
    out = torch.zeros_like(x)
    mask = torch.nn.functional.one_hot(ids, num_classes=E).permute(2, 1, 0)  # (E, k, T)
    for e in torch.nonzero(mask.sum(dim=(1, 2)) > 0).flatten().tolist():
        slot, tok = torch.where(mask[e])
        g, u = torch.nn.functional.linear(x[tok], gate_up[e]).chunk(2, dim=-1)
        y = torch.nn.functional.linear(torch.nn.functional.silu(g) * u, down[e])
        out.index_add_(0, tok, y * weights[tok, slot, None])
    return out


def spec_refuses(cfg, change=None, drop=()):
    """Whether reference.Spec refuses config.json `cfg` with the top-level keys `change` set and `drop` removed."""
    c2 = json.loads(json.dumps(cfg))
    c2.update(change or {})
    for key in drop:
        del c2[key]
    try:
        ref.Spec(c2)
    except ValueError:
        return True
    return False


def check_what_if_effects(name, label, model, settings, make, ids):
    """golden.json's *_effect_prompt4 (the largest change of prompt 4's logits under one what-if) are exactly
    the keys of `settings` (key -> (attribute, value)), and each is reproduced within 1e-3 by a check model
    that make() builds with that one attribute set, each over 1e-2."""
    keys = sorted(k[:-len("_effect_prompt4")] for k in model if k.endswith("_effect_prompt4"))
    check(keys == sorted(settings), "%s: golden.json has exactly the what-ifs %s" % (name, ", ".join(sorted(settings))))
    base = make().forward(ids)[0]
    worst, lows = 0.0, []
    for key in keys:
        m2 = make()
        setattr(m2, *settings[key])
        effect = float((m2.forward(ids)[0] - base).abs().max())
        worst = max(worst, abs(effect - model[key + "_effect_prompt4"]))
        lows.append(effect)
    check(worst < 1e-3 and min(lows, default=1.0) > 1e-2, "%s: %s reproduces each of the %d *_effect_prompt4 (%s; "
          "worst %.1e), each over 1e-2" % (name, label, len(keys), ", ".join(
              "%s %.4g" % (k, model[k + "_effect_prompt4"]) for k in keys), worst))


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



def check_refusals(name, cases, what="reference.Spec refuses"):
    """One check over cases {description: refused?}: every case refused, the accepted ones named."""
    wrong = [k for k, ok in cases.items() if not ok]
    check(not wrong, "%s: %s %s%s" % (name, what, ", ".join(cases), " (accepted: %s)" % wrong if wrong else ""))


def kth_margin(scores, k):
    """Per row of scores (T, n): the k-th largest minus the (k+1)-th, the margin by which a top-k choice stands."""
    top = scores.sort(dim=-1, descending=True).values
    return top[:, k - 1] - top[:, k]


def replay_routing(m, g, calls, route, ordered=True):
    """Every golden prompt followed by its greedy tokens (but the last) through m, with m.<calls> collecting its router
    calls (each a tuple whose first item is the layer); route(call, n) gives for one call the experts chosen at the
    prompt's last position n - 1 and the margin (T,) of each token's choice. Returns the smallest margin over the
    prompt tokens and over the tokens fed back, and whether every last position chose golden.json's expert_ids_last
    (in its order, or as a set when not ordered)."""
    gaps, last_ok = [float("inf")] * 2, True
    for e in g["prompts"]:
        setattr(m, calls, [])
        m.forward(e["input_ids"] + e["greedy_ids"][:-1])
        n = len(e["input_ids"])
        for call in getattr(m, calls):
            last, margins = route(call, n)
            want = e["expert_ids_last"][call[0]]
            last_ok &= last == want if ordered else sorted(last) == sorted(want)
            gaps = [min(gaps[0], float(margins[:n].min())), min(gaps[1], float(margins[n:].min()))]
    setattr(m, calls, None)
    return gaps, last_ok

def open_check(name, cls, p, g, st):
    """A family check's opening: the fixture's config.json and the check model `cls` built from it on the weights p,
    whose logits, hidden states and greedy ids are compared with golden.json first (check_against_golden)."""
    cfg = fixture_config(name)
    m = cls(cfg, p)
    check_against_golden(name, cls.__name__, m, g, st)
    return cfg, m


def check_gpt_oss(name, spec, p, g, st):
    m = GptOssCheck(fixture_config(name), p)
    m.clamps = [[0, 0, 0, 0] for _ in range(m.L)]
    counts = []

    def take_counts():
        counts.extend(list(x) for x in zip(*m.clamps))
        m.clamps = None
    check_against_golden(name, "GptOssCheck", m, g, st, take_counts)
    want = [g["model"][k] for k in ("clamped_gate", "clamped_up", "clamped_up_low", "clamp_candidates")]
    check(counts == want, "%s: GptOssCheck clamp counts per layer = golden.json's "
          "(gate %s, |up| %s, up < -limit %s of %s)" % ((name,) + tuple(counts)))


def plain_decoder_forward(m, ids, final_norm, logit_scale=1.0, inv_freq=None, position_divisor=1.0):
    """The model loop of CohereCheck, LlamaCheck, Olmo2Check, OlmoeCheck and Exaone4Check: RoPE angles
    (position / position_divisor) x inv_freq (by default the default RoPE over the whole head at
    rope_theta), the unscaled embeddings, m.layer(l, h, angles) per layer, final_norm, then the head (tied
    or lm_head) times logit_scale. ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
    p = m.p
    if inv_freq is None:
        inv_freq = 1.0 / m.c["rope_theta"] ** (torch.arange(0, m.HD, 2, dtype=torch.float32) / m.HD)
    positions = torch.arange(len(ids), dtype=torch.float32) / position_divisor
    angles = torch.outer(positions, inv_freq)  # (T, HD/2)
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
    cfg, m = open_check(name, CohereCheck, p, g, st)
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

    def allowed(self, T):  # the causal mask: query i sees keys j <= i
        return torch.ones(T, T, dtype=torch.bool).tril()

    def layer(self, l, h, angles):
        pre, HD, T = "model.layers.%d." % l, self.HD, h.shape[0]
        x = self.rms(h, self.p[pre + "input_layernorm.weight"])
        q = self.linear(x, pre + "self_attn.q_proj", self.qkv_bias).view(T, self.NH, HD)
        k = self.linear(x, pre + "self_attn.k_proj", self.qkv_bias).view(T, self.NKV, HD)
        v = self.linear(x, pre + "self_attn.v_proj", self.qkv_bias).view(T, self.NKV, HD)
        q, k = self.rotary(q, angles), self.rotary(k, angles)
        allowed = self.allowed(T)
        heads = []
        for hh in range(self.NH):
            kv = hh * self.NKV // self.NH  # repeat_kv
            s = ((q[:, hh] @ k[:, kv].T) / math.sqrt(HD)).masked_fill(~allowed, float("-inf"))
            e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
            heads.append((e / e.sum(dim=-1, keepdim=True)) @ v[:, kv])
        h = h + self.linear(torch.cat(heads, dim=-1), pre + "self_attn.o_proj", self.o_bias)
        return h + self.mlp(pre, self.rms(h, self.p[pre + "post_attention_layernorm.weight"]))

    def mlp(self, pre, x):  # LlamaMLP.forward: down_proj(act_fn(gate_proj(x)) * up_proj(x)), act_fn SiLU
        gate = self.linear(x, pre + "mlp.gate_proj", self.mlp_bias)
        up = self.linear(x, pre + "mlp.up_proj", self.mlp_bias)
        return self.linear(torch.nn.functional.silu(gate) * up, pre + "mlp.down_proj", self.mlp_bias)

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        return plain_decoder_forward(self, ids, self.rms)


def check_llama(name, spec, p, g, st):
    cfg, m = open_check(name, LlamaCheck, p, g, st)
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
    cfg, m = open_check(name, SeedOssCheck, p, g, st)
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


def attend_heads(q, k, v, allowed):
    """q (T, NH, HD), k and v (T, NKV, HD), allowed (T, T) -> (T, NH * HD): eager attention per head with
    repeat_kv, scores x HD^-0.5, a hand-written softmax (the OLMo checks)."""
    NH, NKV, HD = q.shape[1], k.shape[1], q.shape[2]
    heads = []
    for hh in range(NH):
        kv = hh // (NH // NKV)  # repeat_kv
        s = ((q[:, hh] @ k[:, kv].T) * HD ** -0.5).masked_fill(~allowed, float("-inf"))
        e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
        heads.append((e / e.sum(dim=-1, keepdim=True)) @ v[:, kv])
    return torch.cat(heads, dim=-1)


class Olmo2Check(LlamaCheck):
    """Olmo2ForCausalLM's forward pass again, from models/olmo2/modular_olmo2.py, modeling_olmo2.py and
    configuration_olmo2.py, sharing nothing with reference.py but the safetensors reader (LlamaCheck's F.linear,
    RMSNorm and complex-number RoPE and the plain_decoder_forward loop; its own layer): Olmo2DecoderLayer.forward (no
    input norm, residual + post_attention_layernorm(self_attn(x)), residual + post_feedforward_layernorm(mlp(x))),
    Olmo2Attention.forward (q_norm / k_norm over the whole projection before the view into heads), q/k/v/o biases
    from attention_bias, linear rope_scaling as models/olmo/modeling_olmo.py's OlmoLinearScalingRotaryEmbedding
    (transformers 4.40-4.44) computed it, the positions divided by the factor (modeling_rope_utils'
    _compute_linear_scaling_rope_parameters, which Olmo2RotaryEmbedding uses, divides inv_freq instead: the same
    angles, exactly so for a power-of-two factor), per-head attention with an explicit mask and a hand-written
    softmax.
    What-ifs: `qk_mode` ("full", "per_head": each head's head_dim values with the weight's slice for that head,
    None: no q/k norms), `layout` ("post", "pre": Llama's pre-norm layout with post_attention_layernorm as
    the input norm and post_feedforward_layernorm as the MLP's input norm, "sandwich": unit-weight input norms
    added before both branches, the post norms kept)."""

    # Olmo2Config's defaults of the keys read here
    DEFAULTS = dict(num_key_value_heads=None, rms_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None,
                    attention_bias=False, tie_word_embeddings=False)

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"] or self.NH
        self.HD = c.get("head_dim") or self.H // self.NH  # Olmo2Attention: getattr(config, "head_dim", H // NH)
        self.qkv_bias = self.o_bias = c["attention_bias"]  # Olmo2Attention: q/k/v/o_proj bias=attention_bias
        self.mlp_bias = False  # Olmo2MLP: no biases
        rs = c["rope_scaling"]
        kind = rs and rs.get("rope_type", rs.get("type"))
        if kind not in (None, "default", "linear"):
            raise ValueError("Olmo2Check: rope_scaling %r" % kind)
        self.position_divisor = float(rs["factor"]) if kind == "linear" else 1.0
        self.qk_mode, self.layout = "full", "post"

    def qk(self, x, w):
        """(T, heads * head_dim) -> the normed projection, still flat."""
        if self.qk_mode == "full":  # Olmo2RMSNorm(num_heads * head_dim) on q_proj(h) before .view(hidden_shape)
            return self.rms(x, w)
        if self.qk_mode == "per_head":
            heads = w.numel() // self.HD
            return self.rms(x.view(-1, heads, self.HD), w.view(heads, self.HD)).reshape(x.shape)
        return x

    def attention(self, l, x, angles):
        pre, HD, T = "model.layers.%d.self_attn." % l, self.HD, x.shape[0]
        q = self.qk(self.linear(x, pre + "q_proj", self.qkv_bias), self.p[pre + "q_norm.weight"])
        k = self.qk(self.linear(x, pre + "k_proj", self.qkv_bias), self.p[pre + "k_norm.weight"])
        v = self.linear(x, pre + "v_proj", self.qkv_bias).view(T, self.NKV, HD)
        q, k = self.rotary(q.view(T, self.NH, HD), angles), self.rotary(k.view(T, self.NKV, HD), angles)
        allowed = torch.ones(T, T, dtype=torch.bool).tril()
        return self.linear(attend_heads(q, k, v, allowed), pre + "o_proj", self.o_bias)

    def mlp(self, l, x):
        pre = "model.layers.%d.mlp." % l
        gate, up = self.linear(x, pre + "gate_proj", False), self.linear(x, pre + "up_proj", False)
        return self.linear(torch.nn.functional.silu(gate) * up, pre + "down_proj", False)

    def layer(self, l, h, angles):
        w = lambda n: self.p["model.layers.%d.%s.weight" % (l, n)]  # noqa: E731
        if self.layout == "pre":  # Llama's order, the same two weights
            h = h + self.attention(l, self.rms(h, w("post_attention_layernorm")), angles)
            return h + self.mlp(l, self.rms(h, w("post_feedforward_layernorm")))
        ones = torch.ones(self.H)
        inp = (lambda x: self.rms(x, ones)) if self.layout == "sandwich" else (lambda x: x)
        h = h + self.rms(self.attention(l, inp(h), angles), w("post_attention_layernorm"))
        return h + self.rms(self.mlp(l, inp(h)), w("post_feedforward_layernorm"))

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        return plain_decoder_forward(self, ids, self.rms, position_divisor=self.position_divisor)


def check_olmo_layout(name, spec, p, cfg, m):
    """OLMo 2 and 3: q_norm / k_norm weights over the whole projections, the two post norms and no input norms
    in the files, no head_dim key, and reference.Spec reading them so."""
    layers = ["model.layers.%d." % l for l in range(m.L)]
    shapes = all(tuple(p[x + "self_attn.q_norm.weight"].shape) == (m.NH * m.HD,) and
                 tuple(p[x + "self_attn.k_norm.weight"].shape) == (m.NKV * m.HD,) for x in layers)
    norms = all(x + n + ".weight" in p for x in layers
                for n in ("post_attention_layernorm", "post_feedforward_layernorm"))
    no_input = not any(n.endswith(("input_layernorm.weight", "pre_feedforward_layernorm.weight")) for n in p)
    flags = (spec.qk_norm_full, spec.qk_norm, spec.input_norms, spec.sandwich_norms) == (True, False, False, True)
    check(shapes and norms and no_input and flags and "head_dim" not in cfg,
          "%s: q_norm / k_norm weights (%d,) / (%d,) (whole projections), post_attention / post_feedforward norms and "
          "no input_layernorm / pre_feedforward_layernorm, no head_dim key; reference.Spec qk_norm_full, no input "
          "norms" % (name, m.NH * m.HD, m.NKV * m.HD))


def check_olmo_what_ifs(name, cls, cfg, p, g, m, ids, logits, others):
    """OLMo 2 and 3: golden.json records exactly the what-ifs of `others` (and the zeroed biases when the model
    has them), and each moves prompt 4's logits as recorded."""
    want_keys = set(others) | ({"qkv_bias", "o_proj_bias"} if m.qkv_bias else set())
    have_keys = set(k[:-len("_effect_prompt4")] for k in g["model"] if k.endswith("_effect_prompt4"))
    check(have_keys == want_keys, "%s: golden.json's what-ifs are %s" % (name, ", ".join(sorted(want_keys))))
    for key, other in others.items():
        effect = float((other.forward(ids)[0] - logits).abs().max())
        want = g["model"]["%s_effect_prompt4" % key]
        check(abs(effect - want) < 1e-3 and effect > 1e-2, "%s: %s %s_effect_prompt4 %.4f = golden.json's "
              "%.4f (> 1e-2)" % (name, cls.__name__, key, effect, want))
    if m.qkv_bias:
        check_zeroed_effects(name, cls, cfg, p, g, ids, logits, {
            "qkv_bias": ("self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias"),
            "o_proj_bias": ("self_attn.o_proj.bias",)})


def check_olmo2(name, spec, p, g, st):
    cfg, m = open_check(name, Olmo2Check, p, g, st)
    check_olmo_layout(name, spec, p, cfg, m)
    ids = g["prompts"][4]["input_ids"]
    logits = m.forward(ids)[0]
    per_head, prenorm, sandwich, no_qk = (Olmo2Check(cfg, p) for _ in range(4))
    per_head.qk_mode, no_qk.qk_mode = "per_head", None
    prenorm.layout, sandwich.layout = "pre", "sandwich"
    eps = Olmo2Check(dict(cfg, rms_norm_eps=1e-6 if m.c["rms_norm_eps"] == 1e-5 else 1e-5), p)
    others = {"qk_norm_per_head": per_head, "prenorm": prenorm, "input_norms": sandwich, "qk_norm": no_qk,
              "rms_norm_eps": eps}
    if m.c["rope_scaling"]:
        others["rope_scaling"] = Olmo2Check(dict(cfg, rope_scaling=None), p)
    check_olmo_what_ifs(name, Olmo2Check, cfg, p, g, m, ids, logits, others)


class Olmo3Check(Olmo2Check):
    """Olmo3ForCausalLM's forward pass again, from models/olmo3/modular_olmo3.py, modeling_olmo3.py and
    configuration_olmo3.py, sharing nothing with reference.py but the safetensors reader: Olmo2Check's layers
    (Olmo3DecoderLayer = Olmo2DecoderLayer; Olmo3Attention = Olmo2Attention plus its attention_type), and what OLMo 3
    adds, read from config.json here: `types` (layer_types, else Olmo3Config.__init__'s `"sliding_attention" if
    (i + 1) % 4 != 0 else "full_attention"`), `windows` (Olmo3Attention.__init__: sliding_window on sliding layers,
    None on full ones; Olmo3Model.forward: create_sliding_window_causal_mask, i - W < j <= i, or
    create_causal_mask), `rope` (per layer type a dict of rope_type, rope_theta and the scaling keys: transformers
    5's rope_parameters[layer_type], or from the legacy spelling sliding = the default RoPE at rope_theta and
    full = rope_scaling at rope_theta: configuration_olmo3.py convert_rope_params_to_dict, and 4.57's
    Olmo3Model.rotary_embs) and `rope_types` (which of them each layer takes: its own type). YaRN computed here
    (_compute_yarn_parameters with truncate); the attention factor multiplies cos and sin, i.e. q and k: here the
    length of the complex rotation. What-ifs: Olmo2Check's, and the lists / dicts above changed after __init__."""

    # Olmo3Config's defaults of the keys read here (4.57; rope_theta 500000 also 5.x's default_theta)
    DEFAULTS = dict(num_key_value_heads=None, rms_norm_eps=1e-5, rope_theta=500000.0, rope_scaling=None,
                    rope_parameters=None, attention_bias=False, tie_word_embeddings=False, sliding_window=4096,
                    layer_types=None, max_position_embeddings=2048)

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"] or self.NH
        self.HD = c.get("head_dim") or self.H // self.NH
        self.qkv_bias = self.o_bias = c["attention_bias"]
        self.mlp_bias = False
        self.qk_mode, self.layout = "full", "post"
        self.types = c["layer_types"] or ["sliding_attention" if (i + 1) % 4 != 0 else "full_attention"
                                          for i in range(self.L)]
        self.windows = [c["sliding_window"] if t == "sliding_attention" else None for t in self.types]
        if c["rope_parameters"] is not None:
            self.rope = {t: dict(c["rope_parameters"][t]) for t in ("sliding_attention", "full_attention")}
        else:
            legacy = {("rope_type" if k == "type" else k): v for k, v in (c["rope_scaling"] or {}).items()}
            self.rope = {"sliding_attention": {"rope_type": "default", "rope_theta": c["rope_theta"]},
                         "full_attention": dict({"rope_type": "default"}, **legacy, rope_theta=c["rope_theta"])}
        self.rope_types = list(self.types)

    def rope_table(self, params):
        """(inv_freq (HD/2,), attention factor) of one layer type's RoPE."""
        base, dim = params["rope_theta"], self.HD
        pos_freqs = base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)
        kind = params.get("rope_type", "default")
        if kind == "default":
            return 1.0 / pos_freqs, 1.0
        if kind != "yarn":
            raise ValueError("Olmo3Check: rope_type %r" % kind)
        factor = params["factor"]
        original = params.get("original_max_position_embeddings") or self.c["max_position_embeddings"]
        scale = params.get("attention_factor")
        if scale is None:
            scale = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
        # find_correction_dim / find_correction_range (truncate: floor / ceil), clamped to [0, dim - 1]
        bound = [dim * math.log(original / (rot * 2 * math.pi)) / (2 * math.log(base))
                 for rot in (params.get("beta_fast") or 32, params.get("beta_slow") or 1)]
        low, high = max(math.floor(bound[0]), 0), min(math.ceil(bound[1]), dim - 1)
        if low == high:
            high += 0.001
        ramp = ((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
        extrapolation_factor = 1 - ramp
        inv = (1.0 / (factor * pos_freqs)) * (1 - extrapolation_factor) + (1.0 / pos_freqs) * extrapolation_factor
        return inv, scale

    def rotary(self, x, table):
        # LlamaCheck's complex rotation of the pairs (i, i + HD/2), by the angles of this layer's RoPE, of length
        # attention_scaling (cos * s, sin * s)
        angles, scale = table
        half = self.HD // 2
        z = torch.complex(x[..., :half], x[..., half:]) * torch.polar(torch.full_like(angles, scale), angles).unsqueeze(1)
        return torch.cat((z.real, z.imag), dim=-1)

    def attention(self, l, x, table):
        pre, HD, T = "model.layers.%d.self_attn." % l, self.HD, x.shape[0]
        q = self.qk(self.linear(x, pre + "q_proj", self.qkv_bias), self.p[pre + "q_norm.weight"])
        k = self.qk(self.linear(x, pre + "k_proj", self.qkv_bias), self.p[pre + "k_norm.weight"])
        v = self.linear(x, pre + "v_proj", self.qkv_bias).view(T, self.NKV, HD)
        q, k = self.rotary(q.view(T, self.NH, HD), table), self.rotary(k.view(T, self.NKV, HD), table)
        i, j = torch.arange(T).unsqueeze(1), torch.arange(T).unsqueeze(0)
        allowed = j <= i
        if self.windows[l] is not None:
            allowed = allowed & (j > i - self.windows[l])
        return self.linear(attend_heads(q, k, v, allowed), pre + "o_proj", self.o_bias)

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p = self.p
        positions = torch.arange(len(ids), dtype=torch.float32)
        tables = {}
        for t, params in self.rope.items():
            inv, scale = self.rope_table(params)
            tables[t] = (torch.outer(positions, inv), scale)
        h = p["model.embed_tokens.weight"][torch.tensor(ids)]
        hidden = [h]
        for l in range(self.L):
            h = self.layer(l, h, tables[self.rope_types[l]])
            hidden.append(h)
        hidden[-1] = self.rms(h, p["model.norm.weight"])
        head = p["model.embed_tokens.weight"] if self.c["tie_word_embeddings"] else p["lm_head.weight"]
        return hidden[-1] @ head.T, hidden


def check_olmo3(name, spec, p, g, st):
    cfg, m = open_check(name, Olmo3Check, p, g, st)
    check_olmo_layout(name, spec, p, cfg, m)
    sliding = [w is not None for w in m.windows]
    window = next(w for w in m.windows if w is not None)
    check(sliding == spec.layer_sliding and window == spec.sliding_window and any(sliding) and not all(sliding),
          "%s: Olmo3Check's sliding layers %s (window %d, layer_types %s) = reference.Spec's" % (
              name, sliding, window, "listed" if cfg.get("layer_types") else "Olmo3Config's default pattern"))
    # reference.Spec's RoPE per layer: the sliding layers' "local", the full layers' "global", each equal to
    # Olmo3Check's table of that layer type
    same = True
    for l in range(m.L):
        inv, scale = m.rope_table(m.rope[m.rope_types[l]])
        r_inv, r_scale = spec.rope[spec.layer_rope[l]]
        same &= bool(((r_inv - inv).abs() <= 1e-7 * inv.abs()).all()) and abs(r_scale - scale) < 1e-12
    full_inv, full_scale = m.rope_table(m.rope["full_attention"])
    slide_inv, slide_scale = m.rope_table(m.rope["sliding_attention"])
    plain = 1.0 / m.rope["full_attention"]["rope_theta"] ** (torch.arange(0, m.HD, 2).float() / m.HD)
    factor = m.rope["full_attention"].get("factor", 1.0)
    kept = int(torch.isclose(full_inv, plain, rtol=1e-6, atol=0.0).sum())
    divided = int(torch.isclose(full_inv, plain / factor, rtol=1e-6, atol=0.0).sum())
    ramped = m.HD // 2 - kept - divided
    check(same and kept and ramped > 0 and divided and full_scale > 1.0 and slide_scale == 1.0 and
          g["model"]["yarn_pairs_kept_ramped_divided"] == [kept, ramped, divided],
          "%s: reference.Spec's RoPE per layer = Olmo3Check's; full layers YaRN x%g (%d pairs kept, %d ramped, %d "
          "divided; cos/sin x %.4f), sliding layers the default RoPE at theta %g" % (
              name, factor, kept, ramped, divided, full_scale, m.rope["sliding_attention"]["rope_theta"]))
    lengths = [len(e["input_ids"]) for e in g["prompts"]]
    check(sum(n > window for n in lengths) >= 2, "%s: golden prompts longer than the window %d: %d of %s" % (
        name, window, sum(n > window for n in lengths), lengths))
    ids = g["prompts"][4]["input_ids"]
    logits = m.forward(ids)[0]
    per_head, prenorm, sandwich, no_qk = (Olmo3Check(cfg, p) for _ in range(4))
    per_head.qk_mode, no_qk.qk_mode = "per_head", None
    prenorm.layout, sandwich.layout = "pre", "sandwich"
    eps = Olmo3Check(dict(cfg, rms_norm_eps=1e-6 if m.c["rms_norm_eps"] == 1e-5 else 1e-5), p)
    others = {"qk_norm_per_head": per_head, "prenorm": prenorm, "input_norms": sandwich, "qk_norm": no_qk,
              "rms_norm_eps": eps}
    if m.rope["full_attention"].get("rope_type", "default") != "default":
        plain_full = Olmo3Check(cfg, p)
        plain_full.rope["full_attention"] = {"rope_type": "default",
                                             "rope_theta": m.rope["full_attention"]["rope_theta"]}
        others["rope_scaling"] = plain_full
    everywhere, unwindowed, all_windowed = (Olmo3Check(cfg, p) for _ in range(3))
    everywhere.rope_types = ["full_attention"] * m.L
    unwindowed.windows = [None] * m.L
    all_windowed.windows = [window] * m.L
    others.update({"yarn_on_sliding_layers": everywhere, "sliding_window": unwindowed,
                   "window_on_every_layer": all_windowed})
    if m.rope["sliding_attention"]["rope_theta"] != m.rope["full_attention"]["rope_theta"]:
        full_theta = Olmo3Check(cfg, p)
        full_theta.rope["sliding_attention"] = {"rope_type": "default",
                                                "rope_theta": m.rope["full_attention"]["rope_theta"]}
        others["sliding_rope_theta"] = full_theta
    check_olmo_what_ifs(name, Olmo3Check, cfg, p, g, m, ids, logits, others)


class DeepseekV3Check:
    """DeepseekV3ForCausalLM's forward pass again, from models/deepseek_v3/modeling_deepseek_v3.py and
    configuration_deepseek_v3.py (4.5x), sharing nothing with reference.py but the safetensors reader, in
    another style: per-head attention with k_nope / v taken per head from kv_b_proj's rows, an explicit mask
    and a hand-written softmax; q from q_proj when q_lora_rank is null; the RoPE as a complex
    multiplication of the stored adjacent pairs (2i, 2i + 1) in place (DeepSeek-V2's apply_rotary_emb:
    view_as_complex times freqs_cis) instead of apply_rotary_pos_emb_interleave's reshuffle + rotate_half
    (the two differ only in the order of the rotated dims, the same for q and k, so the scores agree), or
    with rope_interleave false of the pairs (i, i + R/2) instead of apply_rotary_pos_emb's rotate_half; its
    own YaRN (_compute_yarn_parameters) and score scale (DeepseekV3Attention.__init__); DeepseekV3TopkRouter
    and DeepseekV3MoE.moe's per-expert index_add_ loop.
    What-ifs: `scaling` (the score scale), `interleave` (the other RoPE layout), `LATENT_EPS` (the latent
    norms' eps), `use_bias` (False: the router's choice on s alone), `routed_scaling` (routed_scaling_factor read as
    another value), `shared` (False: no shared experts), `inv_freq` (other inverse frequencies). `sparse`: per layer
    whether it is a DeepseekV3MoE (layer_idx >= first_k_dense_replace). `router_inputs`: None, or a list that receives
    (layer, x) per MoE call. Checks it can run alongside (None = off, else a list the worst difference is written to):
    `absorbed` (per layer and head, the absorbed form: q_lat = W_UK^T q_nope, MQA over the latent rows
    [c ; k_pe] with value c, o = W_UV o_lat, against the naive output, relative to max(1, max |o|)),
    `rope_scores` (the rotary part of the scores from HF's rotate_half form (apply_rotary_pos_emb_interleave's
    reshuffle + rotate_half, or apply_rotary_pos_emb) against the complex pairs', relative to
    max(1, max |score|))."""

    # DeepseekV3Config's defaults of the keys read here
    DEFAULTS = dict(num_key_value_heads=128, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
                    rope_interleave=True, tie_word_embeddings=False, max_position_embeddings=4096,
                    moe_intermediate_size=2048, num_experts_per_tok=8, n_shared_experts=1, n_routed_experts=256,
                    routed_scaling_factor=2.5, n_group=8, topk_group=4, first_k_dense_replace=3,
                    norm_topk_prob=True, q_lora_rank=1536, kv_lora_rank=512, qk_rope_head_dim=64,
                    v_head_dim=128, qk_nope_head_dim=128)
    LATENT_EPS = 1e-6  # DeepseekV3RMSNorm(config.q_lora_rank) / (self.kv_lora_rank): the default eps=1e-6

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NOPE, self.ROPE, self.DV = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
        self.C = c["kv_lora_rank"]
        self.QK = self.NOPE + self.ROPE  # qk_head_dim
        self.E, self.k = c["n_routed_experts"], c["num_experts_per_tok"]
        self.scaling = self.QK ** -0.5
        rs = c["rope_scaling"]
        if rs is not None and rs.get("mscale_all_dim", 0):
            m = self.get_mscale(rs["factor"], rs["mscale_all_dim"])
            self.scaling = self.scaling * m * m
        kind = None if rs is None else rs.get("rope_type", rs.get("type"))
        if kind == "yarn":
            self.inv_freq, self.attention_scaling = self.yarn(c)
        elif kind in (None, "default"):
            self.inv_freq = 1.0 / c["rope_theta"] ** (torch.arange(0, self.ROPE, 2).float() / self.ROPE)
            self.attention_scaling = 1.0
        else:
            raise ValueError("DeepseekV3Check: rope type %r" % kind)
        self.interleave = c["rope_interleave"]
        self.absorbed = self.rope_scores = None
        self.sparse = [l >= c["first_k_dense_replace"] for l in range(self.L)]
        self.use_bias, self.routed_scaling, self.shared = True, c["routed_scaling_factor"], True
        self.router_inputs = None

    @staticmethod
    def get_mscale(scale, mscale=1.0):  # yarn_get_mscale (and _compute_yarn_parameters' get_mscale)
        return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

    def yarn(self, c):
        # modeling_rope_utils.py _compute_yarn_parameters over dim = config.head_dim = qk_rope_head_dim
        rs, base, dim = c["rope_scaling"], c["rope_theta"], self.ROPE
        factor = rs["factor"]
        original = rs.get("original_max_position_embeddings") or c["max_position_embeddings"]
        scaling = rs.get("attention_factor")
        if scaling is None:
            if rs.get("mscale") and rs.get("mscale_all_dim"):
                scaling = self.get_mscale(factor, rs["mscale"]) / self.get_mscale(factor, rs["mscale_all_dim"])
            else:
                scaling = self.get_mscale(factor)
        lo_rot, hi_rot = rs.get("beta_fast") or 32, rs.get("beta_slow") or 1
        bounds = [dim * math.log(original / (r * 2 * math.pi)) / (2 * math.log(base)) for r in (lo_rot, hi_rot)]
        if rs.get("truncate", True):
            bounds = [math.floor(bounds[0]), math.ceil(bounds[1])]
        low, high = max(bounds[0], 0), min(bounds[1], dim - 1)
        if low == high:
            high += 0.001
        pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
        keep = 1 - ((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
        return (1.0 / (factor * pos_freqs)) * (1 - keep) + (1.0 / pos_freqs) * keep, scaling

    @staticmethod
    def rms(x, w, eps):  # DeepseekV3RMSNorm.forward
        return w * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def rotary(self, x, angles):
        """x (T, R) -> rotated, times the attention factor. interleave: the pairs (2i, 2i + 1) as complex
        numbers turned in place; else the pairs (i, i + R/2) (rotate_half on the stored order)."""
        turn = torch.polar(torch.full_like(angles, self.attention_scaling), angles)  # (T, R/2)
        if self.interleave:
            z = torch.view_as_complex(x.reshape(x.shape[0], -1, 2).contiguous()) * turn
            return torch.view_as_real(z).flatten(-2)
        half = self.ROPE // 2
        z = torch.complex(x[:, :half], x[:, half:]) * turn
        return torch.cat((z.real, z.imag), dim=-1)

    def hf_rotary(self, x, angles):
        # apply_rotary_pos_emb_interleave on one (T, R) block: view (R/2, 2), transpose, reshape (with
        # rope_interleave false, apply_rotary_pos_emb: not); then x * cos + rotate_half(x) * sin with
        # cos / sin = cat(freqs, freqs) times the attention factor
        if self.interleave:
            x = x.view(x.shape[0], -1, 2).transpose(1, 2).reshape(x.shape[0], -1)
        emb = torch.cat((angles, angles), dim=-1)
        half = self.ROPE // 2
        rot = torch.cat((-x[:, half:], x[:, :half]), dim=-1)
        return x * (emb.cos() * self.attention_scaling) + rot * (emb.sin() * self.attention_scaling)

    @staticmethod
    def softmax_rows(s):
        e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
        return e / e.sum(dim=-1, keepdim=True)

    def attention(self, l, x, angles):
        a, p, T = "model.layers.%d.self_attn." % l, self.p, x.shape[0]
        eps = self.LATENT_EPS
        if self.c["q_lora_rank"] is None:  # DeepseekV3Attention: self.q_proj(hidden_states)
            q = x @ p[a + "q_proj.weight"].T
        else:
            q = self.rms(x @ p[a + "q_a_proj.weight"].T, p[a + "q_a_layernorm.weight"], eps) @ \
                p[a + "q_b_proj.weight"].T
        q = q.view(T, self.NH, self.QK)
        compressed = x @ p[a + "kv_a_proj_with_mqa.weight"].T
        c = self.rms(compressed[:, :self.C], p[a + "kv_a_layernorm.weight"], eps)  # the normed latent (T, C)
        k_pe_raw = compressed[:, self.C:]
        k_pe = self.rotary(k_pe_raw, angles)  # (T, R): one rotary key for every head
        w_kv = p[a + "kv_b_proj.weight"].view(self.NH, self.NOPE + self.DV, self.C)
        allowed = torch.ones(T, T, dtype=torch.bool).tril()
        outs = []
        for hh in range(self.NH):
            w_uk, w_uv = w_kv[hh, :self.NOPE], w_kv[hh, self.NOPE:]  # (nope, C), (v, C)
            q_nope, q_pe_raw = q[:, hh, :self.NOPE], q[:, hh, self.NOPE:]
            q_pe = self.rotary(q_pe_raw, angles)
            k_nope, v = c @ w_uk.T, c @ w_uv.T
            s = (q_nope @ k_nope.T + q_pe @ k_pe.T) * self.scaling
            o = self.softmax_rows(s.masked_fill(~allowed, float("-inf"))) @ v
            if self.absorbed is not None:
                q_lat = q_nope @ w_uk  # W_UK^T q_nope per row: (T, C)
                key = torch.cat((c, k_pe), dim=-1)  # the latent cache row [c ; k_pe]: one kv head (MQA)
                s_lat = (torch.cat((q_lat, q_pe), dim=-1) @ key.T) * self.scaling
                o_lat = self.softmax_rows(s_lat.masked_fill(~allowed, float("-inf"))) @ key[:, :self.C]
                o_abs = o_lat @ w_uv.T  # W_UV o_lat
                self.absorbed[0] = max(self.absorbed[0], float((o_abs - o).abs().max()) / max(1.0, float(o.abs().max())))
            if self.rope_scores is not None:
                hf = self.hf_rotary(q_pe_raw, angles) @ self.hf_rotary(k_pe_raw, angles).T
                pairs = q_pe @ k_pe.T
                self.rope_scores[0] = max(self.rope_scores[0],
                                          float((hf - pairs).abs().max()) / max(1.0, float(pairs.abs().max())))
            outs.append(o)
        return torch.cat(outs, dim=-1) @ p[a + "o_proj.weight"].T

    @staticmethod
    def mlp(x, p, pre):  # DeepseekV3MLP.forward
        return (torch.nn.functional.silu(x @ p[pre + "gate_proj.weight"].T) * (x @ p[pre + "up_proj.weight"].T)) @ \
            p[pre + "down_proj.weight"].T

    def route(self, l, x):
        """DeepseekV3TopkRouter.forward / get_topk_indices (deepseek_v3_route) on x (T, H): (chosen, weights, masked
        choice values, group scores)."""
        pre, p, c = "model.layers.%d.mlp.gate." % l, self.p, self.c
        bias = p[pre + "e_score_correction_bias"] if self.use_bias else None
        return deepseek_v3_route(torch.nn.functional.linear(x, p[pre + "weight"]), bias, c["n_group"], c["topk_group"],
                                 self.k, c["norm_topk_prob"], self.routed_scaling)

    def moe(self, l, x):
        if self.router_inputs is not None:
            self.router_inputs.append((l, x))
        pre, p = "model.layers.%d.mlp." % l, self.p
        idx, weights = self.route(l, x)[:2]
        # DeepseekV3MoE.moe: one_hot(...).permute(2, 0, 1), per expert its (token, slot) pairs, index_add_
        out = torch.zeros_like(x)
        mask = torch.nn.functional.one_hot(idx, num_classes=self.E).permute(2, 0, 1)
        for e in range(self.E):
            tok, slot = torch.where(mask[e])
            if tok.numel():
                out.index_add_(0, tok, self.mlp(x[tok], p, pre + "experts.%d." % e) * weights[tok, slot].unsqueeze(-1))
        return out + self.mlp(x, p, pre + "shared_experts.") if self.shared else out  # DeepseekV3MoE.forward

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p, eps = self.p, self.c["rms_norm_eps"]
        h = p["model.embed_tokens.weight"][torch.tensor(ids)]
        angles = torch.outer(torch.arange(len(ids), dtype=torch.float32), self.inv_freq)  # (T, R/2)
        hidden = [h]
        for l in range(self.L):  # DeepseekV3DecoderLayer.forward
            pre = "model.layers.%d." % l
            h = h + self.attention(l, self.rms(h, p[pre + "input_layernorm.weight"], eps), angles)
            x = self.rms(h, p[pre + "post_attention_layernorm.weight"], eps)
            h = h + (self.moe(l, x) if self.sparse[l] else self.mlp(x, p, pre + "mlp."))
            hidden.append(h)
        hidden[-1] = self.rms(h, p["model.norm.weight"], eps)
        head = p["model.embed_tokens.weight"] if self.c["tie_word_embeddings"] else p["lm_head.weight"]
        return hidden[-1] @ head.T, hidden


def check_deepseek_v3(name, spec, p, g, st, cls=None):
    """12. on a DeepseekV3ForCausalLM fixture with DeepseekV3Check, or on another MLA family's with its check model `cls`
    (a DeepseekV3Check: GLM-4.7-Flash's Glm4MoeLiteCheck)."""
    cls = cls or DeepseekV3Check
    label = cls.__name__
    cfg = fixture_config(name)
    m = cls(cfg, p)
    m.absorbed, m.rope_scores = [0.0], [0.0]
    worst = {}

    def take_worst():
        worst.update(absorbed=m.absorbed[0], rope=m.rope_scores[0])
        m.absorbed = m.rope_scores = None
    check_against_golden(name, label, m, g, st, take_worst)
    check(worst["absorbed"] <= 1e-5, "%s: absorbed MLA (q_lat = W_UK^T q_nope, MQA over [c ; k_pe], o = W_UV o_lat) "
          "= naive per-head k/v on every prompt, layer and head (%.2e of max(1, max |o|))" % (name, worst["absorbed"]))
    if m.interleave:
        hf_form, pairs = "apply_rotary_pos_emb_interleave (reshuffle + rotate_half)", "in-place adjacent-pair"
    else:
        hf_form, pairs = "apply_rotary_pos_emb (rotate_half on the stored order)", "(i, i + R/2) pair"
    check(worst["rope"] <= 1e-5, "%s: rotary scores of %s = %s complex rotation (%.2e of max(1, max |score|))" % (
        name, hf_form, pairs, worst["rope"]))
    model = g["model"]
    same = (abs(spec.attn_scale - m.scaling) < 1e-12 and abs(spec.rope_attention_factor - m.attention_scaling) < 1e-12
            and bool((spec.inv_freq - m.inv_freq).abs().max() < 1e-12) and spec.mla_norm_eps == m.LATENT_EPS
            and abs(model["attn_scale"] - m.scaling) < 1e-12 and model["latent_norm_eps"] == m.LATENT_EPS
            and spec.mla_rope_interleave == m.interleave == model["rope_interleave"]
            and spec.q_lora_rank == m.c["q_lora_rank"] == model["q_lora_rank"])
    check(same, "%s: score scale %.6f (= %d^-0.5 x %.6f), cos/sin factor %.6f, inverse frequencies, latent norm eps "
          "%g, rope_interleave %s and q_lora_rank %s: reference.Spec = golden.json = %s" % (
              name, m.scaling, m.QK, m.scaling / m.QK ** -0.5, m.attention_scaling, m.LATENT_EPS,
              str(m.interleave).lower(), m.c["q_lora_rank"], label))
    rs = m.c["rope_scaling"] or {}
    if rs.get("mscale_all_dim"):
        check(m.scaling != m.QK ** -0.5 and m.attention_scaling != 1.0,
              "%s: both YaRN factors differ from 1 (scale x %.4f, cos/sin x %.4f)" % (
                  name, m.scaling / m.QK ** -0.5, m.attention_scaling))
    elif not rs:
        check(m.scaling == m.QK ** -0.5 and m.attention_scaling == 1.0,
              "%s: no rope_scaling: scores times exactly %d^-0.5, cos/sin unscaled" % (name, m.QK))
    # golden.json's what-ifs, recomputed here; which of them golden.json has follows from the config
    ids = g["prompts"][4]["input_ids"]
    logits = m.forward(ids)[0]
    plain, halves, model_eps = cls(cfg, p), cls(cfg, p), cls(cfg, p)
    plain.scaling = plain.QK ** -0.5
    halves.interleave = not m.interleave
    model_eps.LATENT_EPS = m.c["rms_norm_eps"]
    ones = cls(cfg, {n: (torch.ones_like(t) if n.endswith("self_attn.kv_a_layernorm.weight") else t)
                     for n, t in p.items()})
    whatifs = [("mla_mscale", plain, bool(rs.get("mscale_all_dim"))), ("rope_layout", halves, True),
               ("kv_a_layernorm", ones, True), ("latent_norm_eps", model_eps, m.c["rms_norm_eps"] != m.LATENT_EPS),
               ("router_norm_topk_prob", cls(dict(cfg, norm_topk_prob=True), p), not m.c["norm_topk_prob"])]
    for key, other, expected in whatifs:
        key = "%s_effect_prompt4" % key
        check((key in model) == expected, "%s: golden.json %s %s" % (name, "has" if expected else "has no", key))
        if key in model:
            effect = float((other.forward(ids)[0] - logits).abs().max())
            check(abs(effect - model[key]) < 1e-3, "%s: %s %s %.4f = golden.json's %.4f" % (
                name, label, key, effect, model[key]))


class DeepseekV2Check:
    """DeepseekV2ForCausalLM's forward pass again, sharing nothing with reference.py (nor DeepseekV3Check) but the
    safetensors reader, from models/deepseek_v2/modular_deepseek_v2.py (DeepseekV2Config, DeepseekV2Attention.forward
    and apply_rotary_emb, batched over the heads as there; DeepseekV2RotaryEmbedding.forward's freqs_cis) and
    DeepSeek's own modeling_deepseek.py for V2 (the remote code the released checkpoints name in auto_map): its YaRN
    (yarn_find_correction_range, yarn_linear_ramp_mask, yarn_get_mscale, DeepseekV2YarnRotaryEmbedding), its score
    scale (DeepseekV2Attention.__init__'s softmax_scale x mscale(factor, mscale_all_dim)^2), MoEGate.forward's
    router and DeepseekV2MoE.moe_infer's sort-by-expert loop. config.json read with DeepseekV2Config's defaults, the
    RoPE from rope_theta / rope_scaling ("type" or "rope_type") or from transformers 5's flat rope_parameters.
    What-ifs (attributes): `scaling` (the score scale), `pairs` ("adjacent": apply_rotary_emb; "halves": the pairs
    (i, i + R/2)), `inv_freq` / `attention_scaling` (the RoPE), `group_rule` ("max"; "top2_sum": DeepSeek-V3's),
    `topk_method`, `norm` (MoEGate with norm_topk_prob true: renormalised, routed_scaling_factor not applied),
    `routed_scaling_factor`, `LATENT_EPS`. `rope_scores` (None, or a list the worst relative difference is written
    to): the rotary part of every head's scores from DeepSeek-V3's apply_rotary_pos_emb_interleave form (reshuffle,
    then rotate_half with cat(freqs, freqs)) against apply_rotary_emb's. `router_logits`: None, or a list that
    receives (layer, the (T, E) router logits) of every MoE layer call."""

    # DeepseekV2Config.__init__'s defaults of the keys read here (LlamaConfig's for num_key_value_heads, rope_theta,
    # max_position_embeddings, tie_word_embeddings)
    DEFAULTS = dict(num_key_value_heads=None, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
                    rope_parameters=None, tie_word_embeddings=False, max_position_embeddings=2048,
                    first_k_dense_replace=0, kv_lora_rank=512, q_lora_rank=1536, n_group=None, n_routed_experts=64,
                    n_shared_experts=2, qk_nope_head_dim=128, qk_rope_head_dim=64, routed_scaling_factor=1.0,
                    topk_group=None, topk_method="greedy", v_head_dim=128, num_experts_per_tok=None,
                    moe_intermediate_size=1407)
    LATENT_EPS = 1e-6  # DeepseekV2RMSNorm(config.q_lora_rank) / (config.kv_lora_rank): the default eps=1e-6

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NOPE, self.ROPE, self.DV = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
        self.C, self.QK = c["kv_lora_rank"], c["qk_nope_head_dim"] + c["qk_rope_head_dim"]
        self.E, self.k = c["n_routed_experts"], c["num_experts_per_tok"]
        if c["rope_parameters"] is not None:  # transformers 5: {"rope_type", "rope_theta", ...the scaling keys}
            rope = dict(c["rope_parameters"])
            self.theta = rope.pop("rope_theta")
            self.rope = None if rope.get("rope_type", "default") == "default" else rope
        else:
            self.theta, self.rope = c["rope_theta"], c["rope_scaling"]
        kind = None if self.rope is None else self.rope.get("type", self.rope.get("rope_type"))
        self.scaling = self.QK ** -0.5
        plain = 1.0 / (self.theta ** (torch.arange(0, self.ROPE, 2, dtype=torch.float32) / self.ROPE))
        if kind is None or kind == "default":
            self.inv_freq, self.attention_scaling = plain, 1.0
        elif kind == "yarn":
            self.inv_freq, self.attention_scaling = self.yarn(self.rope, plain)
            mscale_all_dim = self.rope.get("mscale_all_dim", 0)
            if mscale_all_dim:
                m = self.yarn_get_mscale(self.rope["factor"], mscale_all_dim)
                self.scaling = self.scaling * m * m
        else:
            raise ValueError("DeepseekV2Check: rope type %r" % kind)
        self.pairs = "adjacent"
        self.group_rule, self.topk_method = "max", c["topk_method"]
        self.norm, self.routed_scaling_factor = False, c["routed_scaling_factor"]
        self.rope_scores = self.router_logits = None

    @staticmethod
    def yarn_get_mscale(scale=1, mscale=1):  # modeling_deepseek.py yarn_get_mscale
        return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

    def yarn(self, rs, plain):
        """DeepseekV2YarnRotaryEmbedding._set_cos_sin_cache (modeling_deepseek.py): freq_extra / freq_inter, the
        correction range floored / ceiled and clamped, inv_freq_mask = 1 - ramp, the cos / sin factor
        mscale(factor, mscale) / mscale(factor, mscale_all_dim) (its defaults: original 4096, beta_fast 32,
        beta_slow 1, mscale 1, mscale_all_dim 0)."""
        dim, base, factor = self.ROPE, self.theta, rs["factor"]
        original = rs.get("original_max_position_embeddings", 4096)

        def correction_dim(rotations):  # yarn_find_correction_dim
            return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))
        low = max(math.floor(correction_dim(rs.get("beta_fast", 32))), 0)
        high = min(math.ceil(correction_dim(rs.get("beta_slow", 1))), dim - 1)
        if low == high:  # yarn_linear_ramp_mask
            high += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        mask = 1.0 - ramp
        freq_extra = plain
        freq_inter = 1.0 / (factor * base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        scale = self.yarn_get_mscale(factor, rs.get("mscale", 1)) / self.yarn_get_mscale(factor, rs.get("mscale_all_dim", 0))
        return freq_inter * (1 - mask) + freq_extra * mask, float(scale)

    @staticmethod
    def rms(x, w, eps):  # DeepseekV2RMSNorm.forward
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def apply_rotary_emb(self, xq, xk, freqs_cis):
        """apply_rotary_emb as written there, on xq (NH, T, R) and xk (1, T, R); freqs_cis (T, R/2) complex. With
        pairs "halves": the pairs (i, i + R/2) instead (the what-if)."""
        if self.pairs == "halves":
            half = self.ROPE // 2

            def turn(x):
                z = torch.complex(x[..., :half].float(), x[..., half:].float()) * freqs_cis
                return torch.cat((z.real, z.imag), dim=-1)
            return turn(xq), turn(xk)
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(-2).type_as(xq)
        xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(-2).type_as(xk)
        return xq_out, xk_out

    def v3_form(self, x, positions):
        # DeepSeek-V3's apply_rotary_pos_emb_interleave on (…, T, R): view (R/2, 2), transpose, reshape; then
        # x * cos + rotate_half(x) * sin with cos / sin = cat(freqs, freqs) times the attention factor
        x = x.unflatten(-1, (self.ROPE // 2, 2)).transpose(-1, -2).flatten(-2)
        freqs = torch.outer(positions, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        half = self.ROPE // 2
        rot = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * (emb.cos() * self.attention_scaling) + rot * (emb.sin() * self.attention_scaling)

    def attention(self, l, x, freqs_cis, positions):
        """DeepseekV2Attention.forward, one sequence x (T, H), eager: split / view as there, causal mask."""
        a, p, T, eps = "model.layers.%d.self_attn." % l, self.p, x.shape[0], self.LATENT_EPS
        if self.c["q_lora_rank"] is None:
            q = F.linear(x, p[a + "q_proj.weight"])
        else:
            q = F.linear(self.rms(F.linear(x, p[a + "q_a_proj.weight"]), p[a + "q_a_layernorm.weight"], eps),
                         p[a + "q_b_proj.weight"])
        q = q.view(T, -1, self.QK).transpose(0, 1)  # (NH, T, qk_head_dim)
        q_nope, q_pe = torch.split(q, [self.NOPE, self.ROPE], dim=-1)
        compressed_kv = F.linear(x, p[a + "kv_a_proj_with_mqa.weight"])
        k_nope, k_pe = torch.split(compressed_kv, [self.C, self.ROPE], dim=-1)
        k_nope = F.linear(self.rms(k_nope, p[a + "kv_a_layernorm.weight"], eps), p[a + "kv_b_proj.weight"])
        k_nope = k_nope.view(T, -1, self.NOPE + self.DV).transpose(0, 1)
        k_nope, value_states = torch.split(k_nope, [self.NOPE, self.DV], dim=-1)
        k_pe = k_pe.view(1, T, self.ROPE)
        q_pe_raw, k_pe_raw = q_pe, k_pe
        q_pe, k_pe = self.apply_rotary_emb(q_pe, k_pe, freqs_cis)
        if self.rope_scores is not None:
            ours = q_pe @ k_pe.transpose(-1, -2)
            v3 = self.v3_form(q_pe_raw, positions) @ self.v3_form(k_pe_raw, positions).transpose(-1, -2)
            self.rope_scores[0] = max(self.rope_scores[0],
                                      float((v3 - ours).abs().max()) / max(1.0, float(ours.abs().max())))
        k_pe = k_pe.expand(*k_nope.shape[:-1], -1)
        query_states = torch.cat((q_nope, q_pe), dim=-1)
        key_states = torch.cat((k_nope, k_pe), dim=-1)
        mask = torch.full((T, T), float("-inf")).triu(1)
        w = torch.softmax(query_states @ key_states.transpose(-1, -2) * self.scaling + mask, dim=-1, dtype=torch.float32)
        out = (w @ value_states).transpose(0, 1).reshape(T, -1)
        return F.linear(out, p[a + "o_proj.weight"])

    @staticmethod
    def mlp(x, p, pre):  # DeepseekV2MLP.forward
        return F.linear(F.silu(F.linear(x, p[pre + "gate_proj.weight"])) * F.linear(x, p[pre + "up_proj.weight"]),
                        p[pre + "down_proj.weight"])

    def gate(self, logits):
        """MoEGate.forward of DeepSeek's modeling_deepseek.py for V2 from the softmax on (scoring_func softmax):
        topk_method greedy / group_limited_greedy (group_scores = the group's max; the what-if `group_rule`
        top2_sum: the sum of its two best); `if self.top_k > 1 and self.norm_topk_prob:` renormalised, `else:`
        times routed_scaling_factor. Returns (topk_idx, topk_weight, masked scores, group scores or None)."""
        scores = logits.softmax(dim=-1, dtype=torch.float32)
        group_scores = None
        if self.topk_method == "greedy":
            tmp_scores = scores
        elif self.topk_method == "group_limited_greedy":
            n, G = scores.shape[0], self.c["n_group"]
            grouped = scores.view(n, G, -1)
            group_scores = grouped.max(dim=-1).values if self.group_rule == "max" else \
                grouped.topk(2, dim=-1)[0].sum(dim=-1)
            group_idx = torch.topk(group_scores, k=self.c["topk_group"], dim=-1, sorted=False)[1]
            group_mask = torch.zeros_like(group_scores)
            group_mask.scatter_(1, group_idx, 1)
            score_mask = group_mask.unsqueeze(-1).expand(n, G, self.E // G).reshape(n, -1)
            tmp_scores = scores.masked_fill(~score_mask.bool(), 0.0)
        else:
            raise ValueError("DeepseekV2Check: topk_method %r" % self.topk_method)
        topk_weight, topk_idx = torch.topk(tmp_scores, k=self.k, dim=-1, sorted=False)
        if self.k > 1 and self.norm:
            topk_weight = topk_weight / (topk_weight.sum(dim=-1, keepdim=True) + 1e-20)
        else:
            topk_weight = topk_weight * self.routed_scaling_factor
        return topk_idx, topk_weight, tmp_scores, group_scores

    def moe(self, l, x):
        """DeepseekV2MoE.forward (inference): MoEGate on F.linear(x.float(), gate.weight.float()), moe_infer (the
        (token, slot) pairs sorted by expert, each expert once over its tokens, written back in place and summed
        per token with the weights), plus the shared experts."""
        pre, p = "model.layers.%d.mlp." % l, self.p
        logits = F.linear(x.type(torch.float32), p[pre + "gate.weight"].type(torch.float32), None)
        if self.router_logits is not None:
            self.router_logits.append((l, logits))
        topk_ids, topk_weight, _, _ = self.gate(logits)
        cnts = topk_ids.new_zeros((topk_ids.shape[0], self.E))
        cnts.scatter_(1, topk_ids, 1)
        tokens_per_expert = cnts.sum(dim=0)
        idxs = topk_ids.view(-1).argsort()
        sorted_tokens = x[idxs // topk_ids.shape[1]]
        outputs, start = [], 0
        for i, num_tokens in enumerate(tokens_per_expert.tolist()):
            if num_tokens == 0:
                continue
            outputs.append(self.mlp(sorted_tokens[start:start + num_tokens], p, pre + "experts.%d." % i))
            start += num_tokens
        outs = torch.cat(outputs, dim=0)
        new_x = torch.empty_like(outs)
        new_x[idxs] = outs
        y = new_x.view(*topk_ids.shape, -1).mul_(topk_weight.unsqueeze(dim=-1)).sum(dim=1)
        return y + self.mlp(x, p, pre + "shared_experts.")

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p, eps = self.p, self.c["rms_norm_eps"]
        positions = torch.arange(len(ids), dtype=torch.float32)
        freqs = torch.outer(positions, self.inv_freq)  # DeepseekV2RotaryEmbedding.forward
        freqs_cis = torch.polar(torch.ones_like(freqs), freqs) * self.attention_scaling
        h = p["model.embed_tokens.weight"][torch.tensor(ids)]
        hidden = [h]
        for l in range(self.L):  # DeepseekV2DecoderLayer (LlamaDecoderLayer.forward)
            pre = "model.layers.%d." % l
            h = h + self.attention(l, self.rms(h, p[pre + "input_layernorm.weight"], eps), freqs_cis, positions)
            x = self.rms(h, p[pre + "post_attention_layernorm.weight"], eps)
            h = h + (self.mlp(x, p, pre + "mlp.") if l < self.c["first_k_dense_replace"] else self.moe(l, x))
            hidden.append(h)
        hidden[-1] = self.rms(h, p["model.norm.weight"], eps)
        head = p["model.embed_tokens.weight"] if self.c["tie_word_embeddings"] else p["lm_head.weight"]
        return hidden[-1] @ head.T, hidden


def check_deepseek_v2(name, spec, p, g, st):
    cfg = fixture_config(name)
    m = DeepseekV2Check(cfg, p)
    m.rope_scores = [0.0]
    worst = {}

    def take_worst():
        worst["rope"] = m.rope_scores[0]
        m.rope_scores = None
    check_against_golden(name, "DeepseekV2Check", m, g, st, take_worst)
    check(worst["rope"] <= 1e-5, "%s: rotary scores of apply_rotary_emb (adjacent pairs turned in place as complex "
          "numbers) = DeepSeek-V3's apply_rotary_pos_emb_interleave (reshuffle + rotate_half) (%.2e of max(1, max "
          "|score|))" % (name, worst["rope"]))
    model = g["model"]
    rs = m.rope or {}
    # the weights: V3's names, no e_score_correction_bias, no MTP layer; dense layers before first_k_dense_replace
    dense = m.c["first_k_dense_replace"]
    names_ok = not any(n.endswith("e_score_correction_bias") for n in p) and \
        not any(n.startswith("model.layers.%d." % m.L) for n in p) and "rope_interleave" not in cfg
    for l in range(m.L):
        pre = "model.layers.%d.mlp." % l
        if l < dense:
            names_ok &= pre + "gate_proj.weight" in p and pre + "gate.weight" not in p
        else:
            Fs = m.c["moe_intermediate_size"] * m.c["n_shared_experts"]
            names_ok &= (tuple(p[pre + "gate.weight"].shape) == (m.E, m.H) and
                         tuple(p[pre + "shared_experts.gate_proj.weight"].shape) == (Fs, m.H) and
                         all(pre + "experts.%d.down_proj.weight" % e in p for e in range(m.E)))
    check(names_ok and spec.layer_moe == [l >= dense for l in range(m.L)] and spec.router == "deepseek_v2",
          "%s: mlp.gate.weight (%d, %d) without e_score_correction_bias, mlp.experts.{e}.*, mlp.shared_experts.* of "
          "%d, dense layers %s (first_k_dense_replace %d), no MTP tensors; reference.Spec reads them so" % (
              name, m.E, m.H, m.c["moe_intermediate_size"] * m.c["n_shared_experts"], list(range(dense)), dense))
    same = (abs(spec.attn_scale - m.scaling) < 1e-12 and abs(model["attn_scale"] - m.scaling) < 1e-12 and
            abs(spec.rope_attention_factor - m.attention_scaling) < 1e-12 and
            model["rope_attention_factor"] == spec.rope_attention_factor and
            bool(((spec.inv_freq - m.inv_freq).abs() <= 1e-7 * m.inv_freq).all()) and
            spec.mla_norm_eps == m.LATENT_EPS == model["latent_norm_eps"] and spec.mla_rope_pairs and
            not spec.mla_rope_interleave and spec.q_lora_rank == m.c["q_lora_rank"] == model["q_lora_rank"] and
            spec.HD == m.QK == model["qk_head_dim"] and spec.R == m.ROPE)
    check(same, "%s: score scale %.6f (= %d^-0.5 x %.6f), cos/sin factor %.6f, inverse frequencies, latent norm eps %g, "
          "in-place pair RoPE and q_lora_rank %s: reference.Spec = golden.json = DeepseekV2Check (config.json's RoPE "
          "from %s)" % (name, m.scaling, m.QK, m.scaling / m.QK ** -0.5, m.attention_scaling, m.LATENT_EPS,
                        m.c["q_lora_rank"], "rope_parameters" if cfg.get("rope_parameters") else "rope_theta / rope_scaling"))
    if rs.get("mscale_all_dim"):
        check(m.scaling > m.QK ** -0.5 * 1.01,
              "%s: scores times %d^-0.5 x mscale(%g, %g)^2 = x %.4f; cos/sin x %.4f" % (
                  name, m.QK, rs["factor"], rs["mscale_all_dim"], m.scaling / m.QK ** -0.5, m.attention_scaling))
        plain = 1.0 / (m.theta ** (torch.arange(0, m.ROPE, 2, dtype=torch.float32) / m.ROPE))
        kept = int(torch.isclose(m.inv_freq, plain, rtol=1e-6, atol=0.0).sum())
        divided = int(torch.isclose(m.inv_freq, plain / rs["factor"], rtol=1e-6, atol=0.0).sum())
        ramped = m.ROPE // 2 - kept - divided
        check(kept and ramped > 0 and divided and model["yarn_pairs_kept_ramped_divided"] == [kept, ramped, divided],
              "%s: YaRN x%g from %d: %d pairs kept, %d ramped, %d divided (golden.json's)" % (
                  name, rs["factor"], rs.get("original_max_position_embeddings", 4096), kept, ramped, divided))
    elif not rs:
        check(m.scaling == m.QK ** -0.5 and m.attention_scaling == 1.0,
              "%s: no rope scaling: scores times exactly %d^-0.5, cos/sin unscaled" % (name, m.QK))
    router = (spec.top_k == m.k and spec.num_experts == m.E and spec.topk_method == m.topk_method ==
              model["topk_method"] and spec.routed_scaling_factor == m.routed_scaling_factor ==
              model["routed_scaling_factor"] and not spec.norm_topk_prob and model["norm_topk_prob"] is False)
    grouped = m.topk_method == "group_limited_greedy"
    if grouped:
        router &= spec.n_group == m.c["n_group"] == model["n_group"] and spec.topk_group == m.c["topk_group"] == \
            model["topk_group"] and m.k > m.c["topk_group"]
    check(router, "%s: router %s, top-%d of %d%s, x routed_scaling_factor %g, not renormalised: reference.Spec = "
          "golden.json = DeepseekV2Check" % (name, m.topk_method, m.k, m.E, ", %d groups keep %d (k > topk_group)" % (
              m.c["n_group"], m.c["topk_group"]) if grouped else "", m.routed_scaling_factor))
    # the routing gaps again, from DeepseekV2Check's router: the k-th minus (k+1)-th masked score and (grouped) the
    # topk_group-th minus next group score, over the prompt tokens and the tokens fed back while decoding
    gaps = {"expert": [float("inf")] * 2, "group": [float("inf")] * 2}
    for e in g["prompts"]:
        m.router_logits = []
        m.forward(e["input_ids"] + e["greedy_ids"][:-1])
        n = len(e["input_ids"])
        for _, logits in m.router_logits:
            for i, part in enumerate((logits[:n], logits[n:])):
                _, _, masked, groups = m.gate(part)
                top = masked.sort(dim=-1, descending=True).values
                gaps["expert"][i] = min(gaps["expert"][i], float((top[:, m.k - 1] - top[:, m.k]).min()))
                if groups is not None:
                    gs = groups.sort(dim=-1, descending=True).values
                    tg = m.c["topk_group"]
                    gaps["group"][i] = min(gaps["group"][i], float((gs[:, tg - 1] - gs[:, tg]).min()))
    m.router_logits = None
    ok = all(abs(a - b) < 1e-6 for a, b in zip(gaps["expert"], model["routing_min_expert_gap"]))
    ok &= min(gaps["expert"]) >= 1e-3
    what = "expert gaps %.6f / %.6f" % tuple(gaps["expert"])
    if grouped:
        ok &= all(abs(a - b) < 1e-6 for a, b in zip(gaps["group"], model["routing_min_group_gap"]))
        ok &= min(gaps["group"]) >= 1e-3
        what += ", group gaps %.6f / %.6f" % tuple(gaps["group"])
    else:
        ok &= "routing_min_group_gap" not in model
    check(ok, "%s: DeepseekV2Check's routing gaps (prompt / fed back) = golden.json's, all >= 1e-3: %s" % (name, what))
    ids = g["prompts"][4]["input_ids"]
    m.router_logits = []
    logits = m.forward(ids)[0]
    recorded = m.router_logits
    m.router_logits = None
    others = {}
    if rs.get("mscale_all_dim"):
        others["mla_mscale"] = DeepseekV2Check(cfg, p)
        others["mla_mscale"].scaling = m.QK ** -0.5
    others["rope_layout"] = DeepseekV2Check(cfg, p)
    others["rope_layout"].pairs = "halves"
    others["kv_a_layernorm"] = DeepseekV2Check(cfg, {n: (torch.ones_like(t) if n.endswith("kv_a_layernorm.weight")
                                                         else t) for n, t in p.items()})
    if m.c["q_lora_rank"] is not None:
        others["q_a_layernorm"] = DeepseekV2Check(cfg, {n: (torch.ones_like(t) if n.endswith("q_a_layernorm.weight")
                                                            else t) for n, t in p.items()})
    if rs:
        others["rope_scaling"] = DeepseekV2Check(cfg, p)
        others["rope_scaling"].inv_freq = 1.0 / (m.theta ** (torch.arange(0, m.ROPE, 2, dtype=torch.float32) / m.ROPE))
        others["rope_scaling"].attention_scaling = 1.0
        if rs.get("mscale") and rs.get("mscale_all_dim"):
            others["yarn_attention_factor"] = DeepseekV2Check(cfg, p)
            others["yarn_attention_factor"].attention_scaling = m.yarn_get_mscale(rs["factor"])
    if m.c["rms_norm_eps"] != m.LATENT_EPS:
        others["latent_norm_eps"] = DeepseekV2Check(cfg, p)
        others["latent_norm_eps"].LATENT_EPS = m.c["rms_norm_eps"]
    others["router_norm_topk_prob"] = DeepseekV2Check(cfg, p)
    others["router_norm_topk_prob"].norm = True
    if m.routed_scaling_factor != 1:
        others["router_scaling"] = DeepseekV2Check(cfg, p)
        others["router_scaling"].routed_scaling_factor = 1.0
    if grouped:
        others["router_group_sum"] = DeepseekV2Check(cfg, p)
        others["router_group_sum"].group_rule = "top2_sum"
        others["router_group_limit"] = DeepseekV2Check(cfg, p)
        others["router_group_limit"].topk_method = "greedy"
        # which of prompt 4's tokens take other experts with the groups scored by their two best, the router
        # inputs held at DeepseekV2Check's own
        changed = [None] * m.L
        for l, lg in recorded:
            a = m.gate(lg)[0].sort(dim=-1).values
            b = others["router_group_sum"].gate(lg)[0].sort(dim=-1).values
            changed[l] = int((a != b).any(dim=-1).sum())
        check(changed == model["router_group_sum_changed_tokens_prompt4"] and sum(x or 0 for x in changed) > 0,
              "%s: groups scored by their two best (DeepSeek-V3's rule) route %s of prompt 4's %d tokens to other "
              "experts per layer (golden.json's)" % (name, changed, len(ids)))
    want_keys = set(others)
    have_keys = set(k[:-len("_effect_prompt4")] for k in model if k.endswith("_effect_prompt4"))
    check(have_keys == want_keys, "%s: golden.json's what-ifs are %s" % (name, ", ".join(sorted(want_keys))))
    for key, other in others.items():
        effect = float((other.forward(ids)[0] - logits).abs().max())
        want = model.get("%s_effect_prompt4" % key, float("nan"))
        check(abs(effect - want) < 1e-3 and effect > 1e-2, "%s: DeepseekV2Check %s_effect_prompt4 %.4f = golden.json's "
              "%.4f (> 1e-2)" % (name, key, effect, want))


class OlmoeCheck(LlamaCheck):
    """OlmoeForCausalLM's forward pass again, from models/olmoe/modular_olmoe.py and configuration_olmoe.py, sharing
    nothing with reference.py but the safetensors reader (LlamaCheck's F.linear, RMSNorm, complex-number RoPE and
    the plain_decoder_forward loop; its own layer, attention and MoE): OlmoeDecoderLayer = LlamaDecoderLayer (pre-norm:
    input_layernorm before the attention, post_attention_layernorm before the MoE), OlmoeAttention.forward (q =
    q_norm(q_proj(h)), k = k_norm(k_proj(h)) over the whole projection before the view into heads; q_norm of
    hidden_size values, k_norm of (hidden_size // heads) * kv heads; clip_qkv, when set, clamps q, k (after their
    norms) and v; q/k/v/o biases from attention_bias), OlmoeSparseMoeBlock on every layer (gate = F.linear without
    bias; softmax(router_logits.float()); torch.topk of num_experts_per_tok; renormalised over the k only with
    norm_topk_prob), the experts summed here as one dense (tokens, experts) weight matrix (zero off the chosen k)
    times every expert's OlmoeMLP output, per-head attention with an explicit mask and a hand-written softmax.
    What-ifs: `qk_mode` ("full", "per_head": each head's head_dim values with the weight's slice for that head,
    None: no q/k norms), `layout` ("pre", "post": OLMo 2's layer, no norm on the branch inputs, input_layernorm's
    weight on the attention output and post_attention_layernorm's on the MoE output before each add);
    norm_topk_prob from the config. `router_logits`: None, or a list that receives (layer, logits) per MoE call."""

    # OlmoeConfig's defaults of the keys read here
    DEFAULTS = dict(num_key_value_heads=None, rms_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None,
                    attention_bias=False, clip_qkv=None, num_experts=64, num_experts_per_tok=8, norm_topk_prob=False,
                    tie_word_embeddings=False, hidden_act="silu")

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        if c["rope_scaling"] or c["hidden_act"] != "silu":
            raise ValueError("OlmoeCheck: rope_scaling %r, hidden_act %r" % (c["rope_scaling"], c["hidden_act"]))
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"] or self.NH
        self.HD = self.H // self.NH  # LlamaAttention: getattr(config, "head_dim", hidden_size // heads); none listed
        if c.get("head_dim") is not None:
            raise ValueError("OlmoeCheck: OLMoE configs have no head_dim")
        self.qkv_bias = self.o_bias = c["attention_bias"]
        self.E, self.k, self.norm_topk_prob = c["num_experts"], c["num_experts_per_tok"], c["norm_topk_prob"]
        self.clip = c["clip_qkv"]
        self.qk_mode, self.layout = "full", "pre"
        self.router_logits = None

    # OlmoeRMSNorm(hidden_size) / (head_dim * kv heads) over the whole projection: OLMo 2's q/k norm
    qk = Olmo2Check.qk

    def attention(self, l, x, angles):
        pre, HD, T = "model.layers.%d.self_attn." % l, self.HD, x.shape[0]
        q = self.qk(self.linear(x, pre + "q_proj", self.qkv_bias), self.p[pre + "q_norm.weight"])
        k = self.qk(self.linear(x, pre + "k_proj", self.qkv_bias), self.p[pre + "k_norm.weight"])
        v = self.linear(x, pre + "v_proj", self.qkv_bias)
        if self.clip is not None:  # `if self.config.clip_qkv is not None:` clamp_ q, k, v
            q, k, v = (t.clamp(-self.clip, self.clip) for t in (q, k, v))
        q, k = self.rotary(q.view(T, self.NH, HD), angles), self.rotary(k.view(T, self.NKV, HD), angles)
        v = v.view(T, self.NKV, HD)
        allowed = torch.ones(T, T, dtype=torch.bool).tril()
        return self.linear(attend_heads(q, k, v, allowed), pre + "o_proj", self.o_bias)

    def route(self, logits):
        """OlmoeSparseMoeBlock.route_tokens_to_experts: (top-k ids, their weights, the softmax over all experts)."""
        probs = torch.nn.functional.softmax(logits.float(), dim=-1)
        weights, ids = torch.topk(probs, self.k, dim=-1)
        if self.norm_topk_prob:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        return ids, weights, probs

    def moe(self, l, x):
        pre = "model.layers.%d.mlp." % l
        logits = self.linear(x, pre + "gate", False)  # nn.Linear(hidden_size, num_experts, bias=False)
        if self.router_logits is not None:
            self.router_logits.append((l, logits))
        ids, weights, _ = self.route(logits)
        dense = torch.zeros(x.shape[0], self.E).scatter(1, ids, weights)  # (tokens, experts), k non-zero per row
        y = torch.zeros_like(x)
        for e in range(self.E):  # OlmoeMLP (GemmaMLP): down_proj(act_fn(gate_proj(x)) * up_proj(x))
            ex = pre + "experts.%d." % e
            out = self.linear(torch.nn.functional.silu(self.linear(x, ex + "gate_proj", False)) *
                              self.linear(x, ex + "up_proj", False), ex + "down_proj", False)
            y = y + dense[:, e:e + 1] * out
        return y

    def layer(self, l, h, angles):
        w = lambda n: self.p["model.layers.%d.%s.weight" % (l, n)]  # noqa: E731
        if self.layout == "post":  # OLMo 2's order, the same two weights after the branches
            h = h + self.rms(self.attention(l, h, angles), w("input_layernorm"))
            return h + self.rms(self.moe(l, h), w("post_attention_layernorm"))
        h = h + self.attention(l, self.rms(h, w("input_layernorm")), angles)
        return h + self.moe(l, self.rms(h, w("post_attention_layernorm")))

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        return plain_decoder_forward(self, ids, self.rms)


def check_olmoe(name, spec, p, g, st):
    cfg = fixture_config(name)
    m = OlmoeCheck(cfg, p)
    model = g["model"]
    check_against_golden(name, "OlmoeCheck", m, g, st)
    # the files: q_norm (H,) and k_norm (NKV * HD,) of other widths, Llama's two norms, the router and E experts of
    # intermediate_size per layer and nothing else; config.json's released keys; reference.Spec reading them so
    layers = ["model.layers.%d." % l for l in range(m.L)]
    F_ = cfg["intermediate_size"]
    want = {"model.embed_tokens.weight", "model.norm.weight"} | (set() if m.c["tie_word_embeddings"] else
                                                                 {"lm_head.weight"})
    for x in layers:
        want |= {x + n + ".weight" for n in ("input_layernorm", "post_attention_layernorm", "mlp.gate")}
        want |= {x + "self_attn.%s.weight" % n for n in ("q_proj", "k_proj", "v_proj", "o_proj", "q_norm", "k_norm")}
        want |= {x + "mlp.experts.%d.%s.weight" % (e, n) for e in range(m.E) for n in ("gate_proj", "up_proj",
                                                                                         "down_proj")}
    shapes = all(tuple(p[x + "self_attn.q_norm.weight"].shape) == (m.H,) and
                 tuple(p[x + "self_attn.k_norm.weight"].shape) == (m.NKV * m.HD,) and
                 tuple(p[x + "mlp.gate.weight"].shape) == (m.E, m.H) and
                 all(tuple(p[x + "mlp.experts.%d.gate_proj.weight" % e].shape) == (F_, m.H) and
                     tuple(p[x + "mlp.experts.%d.down_proj.weight" % e].shape) == (m.H, F_) for e in range(m.E))
                 for x in layers)
    keys = ("head_dim" not in cfg and cfg.get("clip_qkv", "absent") is None and cfg["norm_topk_prob"] is False and
            cfg["output_router_logits"] is False and "router_aux_loss_coef" in cfg and m.NKV * m.HD != m.H)
    flags = ((spec.qk_norm_full, spec.qk_norm, spec.input_norms, spec.sandwich_norms, spec.shared_intermediate,
              spec.num_experts, spec.top_k, spec.norm_topk_prob, spec.moe_intermediate, spec.layer_moe, spec.HD) ==
             (True, False, True, False, 0, m.E, m.k, m.norm_topk_prob, F_, [True] * m.L, m.HD))
    flags &= (model["num_experts"], model["experts_per_tok"], model["norm_topk_prob"], model["shared_expert"],
              model["qk_norm_weight_shapes"]) == (m.E, m.k, m.norm_topk_prob, False, [[m.H], [m.NKV * m.HD]])
    check(set(p) == want and shapes and keys and flags,
          "%s: q_norm (%d,) / k_norm (%d,) over the whole projections, input_layernorm / post_attention_layernorm, "
          "router mlp.gate (%d, %d) and %d experts of %d on every layer, no other tensors; no head_dim key, clip_qkv "
          "null, norm_topk_prob false; reference.Spec and golden.json read it so" % (
              name, m.H, m.NKV * m.HD, m.E, m.H, m.E, F_))
    try:
        ref.Spec(dict(cfg, clip_qkv=8.0))
        refused = False
    except ValueError:
        refused = True
    check(refused, "%s: reference.Spec refuses a non-null clip_qkv (not used by the fixtures)" % name)
    # the routing again, from OlmoeCheck's router: the k-th minus (k+1)-th softmax probability over the prompt tokens
    # and the tokens fed back while decoding, and the experts chosen at each prompt's last position
    gaps, last_ok = replay_routing(m, g, "router_logits", lambda call, n: (
        [int(i) for i in m.route(call[1][n - 1:n])[0][0]], kth_margin(m.route(call[1])[2], m.k)))
    want_gaps = [model["routing_min_gap"], model["routing_min_gap_generated"]]
    check(all(abs(a - b) < 1e-6 for a, b in zip(gaps, want_gaps)) and min(gaps) >= 1e-3 and last_ok,
          "%s: OlmoeCheck's routing gaps (prompt %.6f / fed back %.6f) = golden.json's, >= 1e-3; expert_ids_last "
          "reproduced" % (name, gaps[0], gaps[1]))
    ids = g["prompts"][4]["input_ids"]
    logits = m.forward(ids)[0]
    per_head, no_qk, post = (OlmoeCheck(cfg, p) for _ in range(3))
    per_head.qk_mode, no_qk.qk_mode, post.layout = "per_head", None, "post"
    others = {"qk_norm_per_head": per_head, "qk_norm": no_qk, "postnorm": post}
    if not m.norm_topk_prob:
        others["router_norm_topk_prob"] = OlmoeCheck(dict(cfg, norm_topk_prob=True), p)
    want_keys = set(others)
    have_keys = set(k[:-len("_effect_prompt4")] for k in model if k.endswith("_effect_prompt4"))
    check(have_keys == want_keys, "%s: golden.json's what-ifs are %s" % (name, ", ".join(sorted(want_keys))))
    for key, other in others.items():
        effect = float((other.forward(ids)[0] - logits).abs().max())
        want = model.get("%s_effect_prompt4" % key, float("nan"))
        check(abs(effect - want) < 1e-3 and effect > 1e-2, "%s: OlmoeCheck %s_effect_prompt4 %.4f = golden.json's "
              "%.4f (> 1e-2)" % (name, key, effect, want))


class MiniMaxM2Check(LlamaCheck):
    """MiniMaxM2ForCausalLM's forward pass again, from models/minimax_m2/modular_minimax_m2.py and
    configuration_minimax_m2.py (and MiniMax's released config.json spelling), sharing nothing with reference.py but the
    safetensors reader (LlamaCheck's F.linear and RMSNorm, Olmo2Check's whole-projection q/k norm and attend_heads; its
    own config reading, partial RoPE, layer, router and experts): MiniMaxM2DecoderLayer = MixtralDecoderLayer (pre-norm),
    MiniMaxM2Attention(FlexOlmoAttention) (q = q_norm(q_proj(h)), k = k_norm(k_proj(h)) over heads x head_dim before
    the view into heads, head_dim explicit, no biases), MiniMaxM2RotaryEmbedding = Glm4MoeRotaryEmbedding over
    rotary_dim dims with glm4_moe's apply_rotary_pos_emb (the pairs (i, i + rotary_dim / 2) of the first rotary_dim dims
    turned here as complex numbers, the rest passed), MiniMaxM2TopKRouter (sigmoid(logits.float()), topk of s +
    e_score_correction_bias with sorted=False, s gathered and divided by its sum) and transformers 5's MixtralExperts
    .forward (one_hot mask, the experts hit, F.linear(x, gate_up_proj[e]).chunk(2), act(gate) * up, down_proj[e],
    times the weight, index_add_), the released per-expert w1 / w3 / w2 stacked here as the checkpoint conversion does
    (per expert [w1 rows; w3 rows]).
    config.json read on its own: MiniMaxM2Config's defaults, rope_theta from rope_parameters or the top level (default
    5e6), rotary_dim from rotary_dim, else partial_rotary_factor (rope_parameters, else the top level) x head_dim, else
    head_dim // 2. The expert layout from the weights' names.
    What-ifs: `R` (the rotary dims; head_dim: RoPE over the whole head), `qk_mode` ("full", "per_head"), `bias_in_choice`,
    `bias_in_weights`, `renormalise`, `score` ("sigmoid", "softmax"). `router_calls`: None, or a list that receives
    (layer, router input, logits) per MoE call."""

    # MiniMaxM2Config's defaults of the keys read here (rope_theta: its default_theta)
    DEFAULTS = dict(num_key_value_heads=8, head_dim=128, hidden_act="silu", rms_norm_eps=1e-6, tie_word_embeddings=False,
                    num_local_experts=256, num_experts_per_tok=8, rope_parameters=None, rope_theta=5e6, rotary_dim=None,
                    partial_rotary_factor=None, rope_scaling=None)

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        if c["hidden_act"] != "silu" or c["rope_scaling"]:
            raise ValueError("MiniMaxM2Check: hidden_act %r, rope_scaling %r" % (c["hidden_act"], c["rope_scaling"]))
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV, self.HD = c["num_key_value_heads"], c["head_dim"]
        rp = c["rope_parameters"] or {}
        self.theta = float(rp.get("rope_theta", c["rope_theta"]))
        factor = rp.get("partial_rotary_factor", c["partial_rotary_factor"])
        self.R = (c["rotary_dim"] if c["rotary_dim"] is not None else
                  int(self.HD * factor) if factor is not None else self.HD // 2)
        self.E, self.k = c["num_local_experts"], c["num_experts_per_tok"]
        self.stacked = any(n.endswith("mlp.experts.gate_up_proj") for n in p)
        self.qkv_bias = self.o_bias = False
        self.qk_mode, self.bias_in_choice, self.bias_in_weights = "full", True, False
        self.renormalise, self.score = True, "sigmoid"
        self.router_calls = None

    qk = Olmo2Check.qk

    def rotary(self, x, angles):
        """x (T, heads, head_dim): the first R dims' pairs (i, i + R/2) as complex numbers times e^(i angle_i)."""
        half = self.R // 2
        z = torch.complex(x[..., :half], x[..., half:self.R]) * torch.polar(torch.ones_like(angles), angles).unsqueeze(1)
        return torch.cat((z.real, z.imag, x[..., self.R:]), dim=-1)

    def attention(self, l, x, angles):
        pre, HD, T = "model.layers.%d.self_attn." % l, self.HD, x.shape[0]
        q = self.qk(self.linear(x, pre + "q_proj", False), self.p[pre + "q_norm.weight"])
        k = self.qk(self.linear(x, pre + "k_proj", False), self.p[pre + "k_norm.weight"])
        v = self.linear(x, pre + "v_proj", False).view(T, self.NKV, HD)
        q, k = self.rotary(q.view(T, self.NH, HD), angles), self.rotary(k.view(T, self.NKV, HD), angles)
        allowed = torch.ones(T, T, dtype=torch.bool).tril()
        return self.linear(attend_heads(q, k, v, allowed), pre + "o_proj", False)

    def router_tensors(self, l):
        """(gate weight (E, H), e_score_correction_bias (E,)) of layer l."""
        pre = "model.layers.%d.%s" % (l, "mlp." if self.stacked else "block_sparse_moe.")
        return self.p[pre + "gate.weight"], self.p[pre + "e_score_correction_bias"]

    def experts(self, l):
        """(gate_up (E, 2F, H), down (E, H, F)) of layer l."""
        if self.stacked:
            pre = "model.layers.%d.mlp.experts." % l
            return self.p[pre + "gate_up_proj"], self.p[pre + "down_proj"]
        w = lambda e, n: self.p["model.layers.%d.block_sparse_moe.experts.%d.%s.weight" % (l, e, n)]  # noqa: E731
        w1, w3, w2 = (torch.stack([w(e, n) for e in range(self.E)]) for n in ("w1", "w3", "w2"))
        return torch.cat((w1, w3), dim=1), w2

    def route(self, logits, bias):
        """MiniMaxM2TopKRouter.forward: (top-k ids (unsorted), their weights, the values the choice ranks)."""
        logits = logits.float()
        s = torch.sigmoid(logits) if self.score == "sigmoid" else torch.softmax(logits, dim=-1)
        choice = s + bias if self.bias_in_choice else s
        ids = torch.topk(choice, self.k, dim=-1, sorted=False)[1]
        weights = (s + bias if self.bias_in_weights else s).gather(1, ids)
        if self.renormalise:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        return ids, weights, choice

    def moe(self, l, x):
        gate, bias = self.router_tensors(l)
        logits = torch.nn.functional.linear(x, gate)
        if self.router_calls is not None:
            self.router_calls.append((l, x, logits))
        ids, weights, _ = self.route(logits, bias)
        return stacked_experts_forward(x, ids, weights, *self.experts(l), self.E)

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p = self.p
        inv_freq = 1.0 / self.theta ** (torch.arange(0, self.R, 2, dtype=torch.float32) / self.R)
        angles = torch.outer(torch.arange(len(ids), dtype=torch.float32), inv_freq)  # (T, R/2)
        h = p["model.embed_tokens.weight"][torch.tensor(ids)]
        hidden = [h]
        for l in range(self.L):
            w = lambda n: p["model.layers.%d.%s.weight" % (l, n)]  # noqa: E731
            h = h + self.attention(l, self.rms(h, w("input_layernorm")), angles)
            h = h + self.moe(l, self.rms(h, w("post_attention_layernorm")))
            hidden.append(h)
        hidden[-1] = self.rms(h, p["model.norm.weight"])
        head = p["model.embed_tokens.weight"] if self.c["tie_word_embeddings"] else p["lm_head.weight"]
        return hidden[-1] @ head.T, hidden


def minimax_m2_other_layout(p, L, E):
    """MiniMax-M2's weights in the other expert layout: the released per-expert block_sparse_moe.* stacked into
    transformers 5's mlp.* (gate_up_proj per expert [w1; w3], down_proj the w2s), or those split back."""
    q = dict(p)
    for l in range(L):
        a, b = "model.layers.%d.block_sparse_moe." % l, "model.layers.%d.mlp." % l
        if a + "gate.weight" in q:
            for n in ("gate.weight", "e_score_correction_bias"):
                q[b + n] = q.pop(a + n)
            w1, w3, w2 = (torch.stack([q.pop(a + "experts.%d.%s.weight" % (e, n)) for e in range(E)])
                          for n in ("w1", "w3", "w2"))
            q[b + "experts.gate_up_proj"], q[b + "experts.down_proj"] = torch.cat((w1, w3), dim=1), w2
        else:
            for n in ("gate.weight", "e_score_correction_bias"):
                q[a + n] = q.pop(b + n)
            gate_up, down = q.pop(b + "experts.gate_up_proj"), q.pop(b + "experts.down_proj")
            F_ = down.shape[2]
            for e in range(E):
                x = a + "experts.%d." % e
                q[x + "w1.weight"], q[x + "w3.weight"], q[x + "w2.weight"] = gate_up[e, :F_], gate_up[e, F_:], down[e]
    return q


def minimax_m2_other_spelling(cfg, R, HD, theta):
    """MiniMax-M2's config.json in the other spelling: the released rotary_dim / rope_theta as transformers 5's
    rope_parameters {"rope_type": "default", "rope_theta", "partial_rotary_factor"}, or back."""
    c = dict(cfg)
    if "rotary_dim" in c:
        del c["rotary_dim"]
        c.pop("rope_theta", None)
        c["rope_parameters"] = {"partial_rotary_factor": R / HD, "rope_theta": float(theta), "rope_type": "default"}
    else:
        del c["rope_parameters"]
        c.update(rotary_dim=R, rope_theta=theta)
    return c


def check_minimax_m2(name, spec, p, g, st):
    cfg = fixture_config(name)
    m = MiniMaxM2Check(cfg, p)
    model = g["model"]
    check_against_golden(name, "MiniMaxM2Check", m, g, st)
    # the files: exactly MiniMax-M2's tensors in one layout, with their shapes and dtypes
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    F_, QD, KD = cfg["intermediate_size"], m.NH * m.HD, m.NKV * m.HD
    want = {"model.embed_tokens.weight": (m.c["vocab_size"], m.H), "model.norm.weight": (m.H,)}
    if not m.c["tie_word_embeddings"]:
        want["lm_head.weight"] = (m.c["vocab_size"], m.H)
    for l in range(m.L):
        x = "model.layers.%d." % l
        want.update({x + "input_layernorm.weight": (m.H,), x + "post_attention_layernorm.weight": (m.H,),
                     x + "self_attn.q_proj.weight": (QD, m.H), x + "self_attn.k_proj.weight": (KD, m.H),
                     x + "self_attn.v_proj.weight": (KD, m.H), x + "self_attn.o_proj.weight": (m.H, QD),
                     x + "self_attn.q_norm.weight": (QD,), x + "self_attn.k_norm.weight": (KD,)})
        if m.stacked:
            want.update({x + "mlp.gate.weight": (m.E, m.H), x + "mlp.e_score_correction_bias": (m.E,),
                         x + "mlp.experts.gate_up_proj": (m.E, 2 * F_, m.H), x + "mlp.experts.down_proj": (m.E, m.H, F_)})
        else:
            want.update({x + "block_sparse_moe.gate.weight": (m.E, m.H),
                         x + "block_sparse_moe.e_score_correction_bias": (m.E,)})
            for e in range(m.E):
                y = x + "block_sparse_moe.experts.%d." % e
                want.update({y + "w1.weight": (F_, m.H), y + "w3.weight": (F_, m.H), y + "w2.weight": (m.H, F_)})
    shapes = {n: tuple(t.shape) for n, (_, t) in stored.items()}
    dtypes_ok = all(dt == ("F32" if n.endswith(("norm.weight", "e_score_correction_bias")) else "BF16")
                    for n, (dt, _) in stored.items())
    check(shapes == want and dtypes_ok and QD != m.H,
          "%s: exactly MiniMax-M2's tensors (%s experts), q_norm (%d,) / k_norm (%d,) over heads x head_dim (!= hidden "
          "%d), BF16 matrices, F32 norms and e_score_correction_bias" % (
              name, "stacked" if m.stacked else "per-expert", QD, KD, m.H))
    # config.json's spelling, and reference.Spec / golden.json reading it as MiniMaxM2Check does
    if m.stacked:
        rp = cfg["rope_parameters"]
        spelling = ("rotary_dim" not in cfg and "rope_theta" not in cfg and "dtype" in cfg and "torch_dtype" not in cfg
                    and set(rp) == {"rope_type", "rope_theta", "partial_rotary_factor"} and cfg["tie_word_embeddings"]
                    and not any(k in cfg for k in ("use_qk_norm", "scoring_func", "attn_type_list")))
    else:
        spelling = (cfg["rotary_dim"] == m.R and "rope_parameters" not in cfg and "partial_rotary_factor" not in cfg
                    and cfg["use_qk_norm"] and cfg["qk_norm_type"] == "per_layer" and cfg["scoring_func"] == "sigmoid"
                    and cfg["use_routing_bias"] and cfg["shared_intermediate_size"] == 0
                    and cfg["attn_type_list"] == [1] * m.L and "eos_token_id" not in cfg and "auto_map" in cfg)
    flags = ((spec.HD, spec.R, float(spec.theta), spec.qk_norm_full, spec.qk_norm, spec.input_norms, spec.sandwich_norms,
              spec.qkv_bias, spec.o_bias, spec.router, spec.expert_naming, spec.num_experts, spec.top_k,
              spec.norm_topk_prob, spec.shared_intermediate, spec.moe_intermediate, spec.layer_moe) ==
             (m.HD, m.R, m.theta, True, False, True, False, False, False, "minimax",
              "stacked" if m.stacked else "mixtral", m.E, m.k, True, 0, F_, [True] * m.L))
    flags &= bool(torch.equal(spec.inv_freq, 1.0 / m.theta ** (torch.arange(0, m.R, 2, dtype=torch.float32) / m.R)))
    flags &= ((model["rotary_dim"], model["num_experts"], model["experts_per_tok"], model["norm_topk_prob"],
               model["shared_expert"], model["qk_norm_weight_shapes"]) == (m.R, m.E, m.k, True, False, [[QD], [KD]]))
    check(spelling and flags and 0 < m.R < m.HD,
          "%s: config.json in the %s spelling (rotary_dim %d of head_dim %d, rope_theta %g); reference.Spec and "
          "golden.json read it as MiniMaxM2Check does" % (
              name, "transformers 5" if m.stacked else "released remote-code", m.R, m.HD, m.theta))
    # reference.Spec refuses what it does not implement
    bad = {"use_qk_norm false": dict(use_qk_norm=False), "qk_norm_type per_head": dict(qk_norm_type="per_head"),
           "scoring_func softmax": dict(scoring_func="softmax"), "use_routing_bias false": dict(use_routing_bias=False),
           "shared_intermediate_size 8": dict(shared_intermediate_size=8),
           "attn_type_list with a 0": dict(attn_type_list=[0] + [1] * (m.L - 1)),
           # (the file's rotary_dim or partial_rotary_factor, and the other key contradicting it)
           "rotary_dim and partial_rotary_factor disagreeing":
               dict(rotary_dim=2 * m.R) if m.stacked else dict(partial_rotary_factor=2 * m.R / m.HD),
           "two partial_rotary_factor values": dict(partial_rotary_factor=2 * m.R / m.HD, rope_parameters={
               "rope_type": "default", "rope_theta": m.theta, "partial_rotary_factor": m.R / m.HD})}
    refused = []
    for what, extra in bad.items():
        try:
            ref.Spec(dict(cfg, **extra))
        except ValueError:
            refused.append(what)
    agreeing = ref.Spec(dict(cfg, rotary_dim=m.R, partial_rotary_factor=m.R / m.HD)).R == m.R
    # neither key: convert_rope_params_to_dict's default rotary_dim head_dim // 2, in both readings
    bare = {k: v for k, v in cfg.items() if k not in ("rotary_dim", "partial_rotary_factor", "rope_parameters")}
    default = ref.Spec(bare).R == MiniMaxM2Check(bare, p).R == m.HD // 2
    check(refused == list(bad) and agreeing and default,
          "%s: reference.Spec refuses each of: %s (not refused: %s); takes rotary_dim beside an agreeing "
          "partial_rotary_factor; without either, rotary_dim head_dim // 2 = %d here and in MiniMaxM2Check" % (
              name, ", ".join(bad), ", ".join(sorted(set(bad) - set(refused))) or "none", m.HD // 2))
    # the other layout and the other config spelling: the same logits
    prompts = [e["input_ids"] for e in g["prompts"]]
    base = last_logits(spec, p, prompts)
    other_p = minimax_m2_other_layout(p, m.L, m.E)
    other_spec = ref.Spec(spec.cfg)
    ref.minimax_m2_expert_layout(other_spec, other_p)
    other_cfg = minimax_m2_other_spelling(cfg, m.R, m.HD, m.theta)
    respelled = ref.Spec(other_cfg)
    ref.minimax_m2_expert_layout(respelled, p)
    d1 = float((last_logits(other_spec, other_p, prompts) - base).abs().max())
    d2 = float((last_logits(respelled, p, prompts) - base).abs().max())
    ids4 = g["prompts"][4]["input_ids"]
    d3 = float((MiniMaxM2Check(other_cfg, other_p).forward(ids4)[0][-1] - st["logits_last"][4]).abs().max())
    check(other_spec.expert_naming != spec.expert_naming and respelled.R == spec.R and max(d1, d2) == 0.0 and d3 < 1e-4,
          "%s: the weights in the other expert layout (%s) and config.json in the other spelling give the same logits "
          "(reference: %.1e, %.1e; MiniMaxM2Check with both: %.1e)" % (name, other_spec.expert_naming, d1, d2, d3))
    # the routing again, from MiniMaxM2Check's router: the k-th minus (k+1)-th s + bias over the prompt tokens and the
    # tokens fed back while decoding, and the experts chosen at each prompt's last position (in descending order)
    def minimax_route(call, n):
        l, _, logits = call
        ids, _, choice = m.route(logits[n - 1:n], m.router_tensors(l)[1])
        order = choice.gather(1, ids).argsort(dim=-1, descending=True)
        return [int(i) for i in ids.gather(1, order)[0]], kth_margin(m.route(logits, m.router_tensors(l)[1])[2], m.k)

    gaps, last_ok = replay_routing(m, g, "router_calls", minimax_route)
    want_gaps = [model["routing_min_gap"], model["routing_min_gap_generated"]]
    check(all(abs(a - b) < 1e-6 for a, b in zip(gaps, want_gaps)) and min(gaps) >= 1e-3 and last_ok,
          "%s: MiniMaxM2Check's routing gaps (prompt %.6f / fed back %.6f) = golden.json's, >= 1e-3; expert_ids_last "
          "reproduced" % (name, gaps[0], gaps[1]))
    # the what-ifs
    ids = g["prompts"][4]["input_ids"]
    logits = m.forward(ids)[0]
    others = {key: MiniMaxM2Check(cfg, p) for key in ("rope_full_head", "qk_norm_per_head", "router_bias",
                                                       "router_bias_in_weights", "router_unnormalised", "router_softmax")}
    others["rope_full_head"].R = m.HD
    others["qk_norm_per_head"].qk_mode = "per_head"
    others["router_bias"].bias_in_choice = False
    others["router_bias_in_weights"].bias_in_weights = True
    others["router_unnormalised"].renormalise = False
    others["router_softmax"].score = "softmax"
    # how many of prompt 4's tokens take other experts under each router what-if, the router inputs held
    m.router_calls = []
    m.forward(ids)
    changed = {}
    for key in ("router_bias", "router_bias_in_weights", "router_unnormalised", "router_softmax"):
        counts = []
        for l, _, lg in m.router_calls:
            bias = m.router_tensors(l)[1]
            a = m.route(lg, bias)[0].sort(dim=-1).values
            b = others[key].route(lg, bias)[0].sort(dim=-1).values
            counts.append(int((a != b).any(dim=-1).sum()))
        changed[key] = counts
    m.router_calls = None
    check(changed == model["router_changed_tokens_prompt4"] and len(ids) == model["prompt4_tokens"] and
          sum(changed["router_bias"]) >= 0.1 * len(ids) * m.L,
          "%s: MiniMaxM2Check's tokens of prompt 4's %d taking other experts per layer = golden.json's (%s)" % (
              name, len(ids), ", ".join("%s %s" % kv for kv in changed.items())))
    have_keys = set(k[:-len("_effect_prompt4")] for k in model if k.endswith("_effect_prompt4"))
    check(have_keys == set(others), "%s: golden.json's what-ifs are %s" % (name, ", ".join(sorted(others))))
    for key, other in others.items():
        effect = float((other.forward(ids)[0] - logits).abs().max())
        want_effect = model.get("%s_effect_prompt4" % key, float("nan"))
        check(abs(effect - want_effect) < 1e-3 and effect > 1e-2, "%s: MiniMaxM2Check %s_effect_prompt4 %.4f = "
              "golden.json's %.4f (> 1e-2)" % (name, key, effect, want_effect))


class Exaone4Check(LlamaCheck):
    """Exaone4ForCausalLM's forward pass again, from models/exaone4/modular_exaone4.py (Exaone4Config, Exaone4Attention,
    Exaone4DecoderLayer = Olmo2DecoderLayer, Exaone4MLP = Olmo2MLP, Exaone4RotaryEmbedding = Gemma2RotaryEmbedding)
    and modeling_rope_utils.py's _compute_llama3_parameters, sharing nothing with reference.py but the safetensors
    reader (LlamaCheck's RMSNorm and complex-number RoPE and the plain_decoder_forward loop; its own config reading,
    llama3 frequencies, attention and layer).
    config.json read here: Exaone4Config's defaults; the layer types from layer_types, else Exaone4Config.__post_init__
    (sliding_window null: pattern 0, every layer full; an integer pattern n: (i + 1) % n != 0 slides) or, for a string
    pattern, the docstring's rule as vLLM's check_is_sliding codes it (pattern[i % len] == "L", the last layer global);
    `windows` (Exaone4Attention.forward: sliding_window on sliding layers, None on full ones; the masks of
    create_sliding_window_causal_mask / create_causal_mask, i - j < W and j <= i), `rotates` (Exaone4Attention.forward:
    `if self.sliding_window is None or self.is_sliding`), the RoPE from rope_theta / rope_scaling (4.54) or a flat
    rope_parameters (5.x).
    What-ifs (attributes changed after __init__): `layout` ("post", "pre": Llama's order with the same two weights),
    `qk_mode` ("head": an RMS per head over head_dim with the (head_dim,) weight; "whole": one RMS over every head's
    values at once, the weight repeated per head), `rotates`, `windows`, `inv_freq`."""

    # Exaone4Config's defaults of the keys read here (rope_theta: 4.54's __init__ default)
    DEFAULTS = dict(num_key_value_heads=32, head_dim=None, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=10000.0,
                    rope_scaling=None, rope_parameters=None, tie_word_embeddings=False, sliding_window=4096,
                    sliding_window_pattern=4, layer_types=None)

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        if c["hidden_act"] != "silu":
            raise ValueError("Exaone4Check: hidden_act %r" % c["hidden_act"])
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"]
        self.HD = c["head_dim"] or self.H // self.NH  # getattr(config, "head_dim", hidden_size // heads)
        self.qkv_bias = self.o_bias = self.mlp_bias = False
        self.window = c["sliding_window"]
        types = c["layer_types"]
        if types is None:
            pattern = 0 if self.window is None else c["sliding_window_pattern"]
            if isinstance(pattern, str):
                types = ["full_attention" if i == self.L - 1 or pattern[i % len(pattern)] == "G" else
                         "sliding_attention" for i in range(self.L)]
            elif pattern == 0:
                types = ["full_attention"] * self.L
            else:
                types = ["full_attention" if (i + 1) % pattern == 0 else "sliding_attention" for i in range(self.L)]
        self.types = list(types)
        self.windows = [self.window if t == "sliding_attention" else None for t in types]
        self.rotates = [self.window is None or t == "sliding_attention" for t in types]
        rp = c["rope_parameters"]
        if rp is None:
            rp = dict(c["rope_scaling"] or {"rope_type": "default"}, rope_theta=c["rope_theta"])
        self.rope_params = rp
        self.inv_freq = self.frequencies(rp)
        self.layout, self.qk_mode = "post", "head"

    def frequencies(self, rp):
        """The RoPE's inverse frequencies (HD/2,): the default ones, or _compute_llama3_parameters' per pair: kept
        when its wavelength 2 pi / f is below original / high_freq_factor, divided by factor above original /
        low_freq_factor, else (1 - s) f / factor + s f with s = (original / wavelength - low) / (high - low)."""
        base = float(rp["rope_theta"])
        f = [1.0 / base ** (2 * i / self.HD) for i in range(self.HD // 2)]
        kind = rp.get("rope_type", rp.get("type", "default"))
        if kind == "llama3":
            factor, low, high = rp["factor"], rp["low_freq_factor"], rp["high_freq_factor"]
            original = rp["original_max_position_embeddings"]
            out = []
            for x in f:
                wavelength = 2 * math.pi / x
                if wavelength < original / high:
                    out.append(x)
                elif wavelength > original / low:
                    out.append(x / factor)
                else:
                    s = (original / wavelength - low) / (high - low)
                    out.append((1 - s) * x / factor + s * x)
            f = out
        elif kind != "default":
            raise ValueError("Exaone4Check: rope_type %r" % kind)
        return torch.tensor(f, dtype=torch.float32)

    def qk(self, x, w):
        """x (T, heads, head_dim), w (head_dim,) -> the normed x."""
        if self.qk_mode == "head":  # Exaone4RMSNorm(head_dim) on q_proj(h).view(..., -1, head_dim)
            return self.rms(x, w)
        T, heads, _ = x.shape
        return self.rms(x.reshape(T, heads * self.HD), w.repeat(heads)).view(T, heads, self.HD)

    def attention(self, l, x, angles):
        pre, HD, T = "model.layers.%d.self_attn." % l, self.HD, x.shape[0]
        w = lambda n: self.p[pre + n + ".weight"]  # noqa: E731
        q = self.qk((x @ w("q_proj").T).view(T, self.NH, HD), w("q_norm"))
        k = self.qk((x @ w("k_proj").T).view(T, self.NKV, HD), w("k_norm"))
        v = (x @ w("v_proj").T).view(T, self.NKV, HD)
        if self.rotates[l]:
            q, k = self.rotary(q, angles), self.rotary(k, angles)
        i, j = torch.arange(T).unsqueeze(1), torch.arange(T).unsqueeze(0)
        allowed = j <= i
        if self.windows[l] is not None:
            allowed = allowed & (i - j < self.windows[l])
        return attend_heads(q, k, v, allowed) @ w("o_proj").T

    def mlp(self, l, x):
        w = lambda n: self.p["model.layers.%d.mlp.%s.weight" % (l, n)]  # noqa: E731
        return (torch.nn.functional.silu(x @ w("gate_proj").T) * (x @ w("up_proj").T)) @ w("down_proj").T

    def layer(self, l, h, angles):
        post_attn = self.p["model.layers.%d.post_attention_layernorm.weight" % l]
        post_ff = self.p["model.layers.%d.post_feedforward_layernorm.weight" % l]
        if self.layout == "pre":
            h = h + self.attention(l, self.rms(h, post_attn), angles)
            return h + self.mlp(l, self.rms(h, post_ff))
        h = h + self.rms(self.attention(l, h, angles), post_attn)  # Olmo2DecoderLayer.forward
        return h + self.rms(self.mlp(l, h), post_ff)

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        return plain_decoder_forward(self, ids, self.rms, inv_freq=self.inv_freq)


def check_exaone4(name, spec, p, g, st):
    cfg = fixture_config(name)
    m = Exaone4Check(cfg, p)
    model = g["model"]
    check_against_golden(name, "Exaone4Check", m, g, st)
    hybrid = m.window is not None
    # the files: exactly EXAONE 4's tensors, with their shapes and dtypes
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    F_, QD, KD, V = cfg["intermediate_size"], m.NH * m.HD, m.NKV * m.HD, cfg["vocab_size"]
    want = {"model.embed_tokens.weight": (V, m.H), "model.norm.weight": (m.H,)}
    if not m.c["tie_word_embeddings"]:
        want["lm_head.weight"] = (V, m.H)
    for l in range(m.L):
        x = "model.layers.%d." % l
        want.update({x + "post_attention_layernorm.weight": (m.H,), x + "post_feedforward_layernorm.weight": (m.H,),
                     x + "self_attn.q_proj.weight": (QD, m.H), x + "self_attn.k_proj.weight": (KD, m.H),
                     x + "self_attn.v_proj.weight": (KD, m.H), x + "self_attn.o_proj.weight": (m.H, QD),
                     x + "self_attn.q_norm.weight": (m.HD,), x + "self_attn.k_norm.weight": (m.HD,),
                     x + "mlp.gate_proj.weight": (F_, m.H), x + "mlp.up_proj.weight": (F_, m.H),
                     x + "mlp.down_proj.weight": (m.H, F_)})
    shapes = {n: tuple(t.shape) for n, (_, t) in stored.items()}
    dtypes_ok = all(dt == ("F32" if n.endswith("norm.weight") else "BF16") for n, (dt, _) in stored.items())
    check(shapes == want and dtypes_ok,
          "%s: exactly EXAONE 4's tensors (%s; no input_layernorm, no biases), q_norm / k_norm (%d,) per head, BF16 "
          "matrices, F32 norms" % (name, "untied lm_head" if "lm_head.weight" in want else "tied, no lm_head", m.HD))
    # config.json's spelling (EXAONE-4.0-32B's or -1.2B's), and reference.Spec / golden.json reading it as Exaone4Check
    if hybrid:
        spelling = (cfg["sliding_window_pattern"] == "LLLG" and cfg.get("layer_types") is not None and "head_dim" in cfg
                    and (cfg["rope_scaling"] or {}).get("rope_type") == "llama3" and not cfg["tie_word_embeddings"]
                    and "torch_dtype" in cfg and "rope_parameters" not in cfg)
    else:
        spelling = ("sliding_window" in cfg and cfg["sliding_window"] is None
                    and cfg.get("sliding_window_pattern") is None and cfg["layer_types"] == ["full_attention"] * m.L
                    and "head_dim" not in cfg and cfg["rope_scaling"] is None and cfg["tie_word_embeddings"] and m.NKV == m.NH)
    sliding = [w is not None for w in m.windows]
    flags = ((spec.HD, spec.sliding_window, spec.layer_sliding, spec.layer_use_rope, spec.qk_norm, spec.qk_norm_full,
              spec.input_norms, spec.sandwich_norms, spec.qkv_bias, spec.o_bias, spec.mlp_bias, spec.eps, spec.tied) ==
             (m.HD, m.window, sliding, m.rotates, True, False, False, True, False, False, False, m.c["rms_norm_eps"],
              m.c["tie_word_embeddings"]))
    flags &= bool(((spec.inv_freq - m.inv_freq).abs() <= 1e-6 * m.inv_freq).all()) and spec.rope_attention_factor == 1.0
    flags &= ((model["layer_sliding"], model["layer_use_rope"], model["qk_norm_weight_shapes"], model["sliding_window"])
              == (sliding, m.rotates, [[m.HD], [m.HD]], m.window))
    if hybrid:
        flags &= m.rotates == sliding and any(sliding) and not all(sliding)
    else:
        flags &= all(m.rotates) and not any(sliding)
    check(spelling and flags,
          "%s: config.json in EXAONE-4.0-%s's spelling; sliding layers %s (window %s), RoPE on %s, inverse frequencies "
          "within 1e-6: reference.Spec and golden.json read it as Exaone4Check does" % (
              name, "32B" if hybrid else "1.2B", sliding, m.window, m.rotates))
    if hybrid:
        plain = m.frequencies({"rope_type": "default", "rope_theta": m.rope_params["rope_theta"]})
        factor = m.rope_params["factor"]
        kept = int(torch.isclose(m.inv_freq, plain, rtol=1e-6, atol=0.0).sum())
        divided = int(torch.isclose(m.inv_freq, plain / factor, rtol=1e-6, atol=0.0).sum())
        smoothed = m.HD // 2 - kept - divided
        lengths = [len(e["input_ids"]) for e in g["prompts"]]
        bands = [kept, smoothed, divided]
        check(kept and smoothed > 0 and divided and model["llama3_pairs_kept_smoothed_divided"] == bands
              and all(n > m.window for n in lengths),
              "%s: llama3 x%g from %d: %d pairs kept, %d smoothed, %d divided (= golden.json's); every golden prompt "
              "(%s tokens) longer than the window %d" % (
                  name, factor, m.rope_params["original_max_position_embeddings"], kept, smoothed, divided, lengths,
                  m.window))
    # other spellings of the same model: the same logits (reference exactly; Exaone4Check within 1e-4)
    prompts = [e["input_ids"] for e in g["prompts"]]
    base = last_logits(spec, p, prompts)
    ids4 = g["prompts"][4]["input_ids"]
    others = {"layer_types left out": {k: v for k, v in cfg.items() if k != "layer_types"}}
    if hybrid:
        rp = dict(cfg["rope_scaling"], rope_theta=cfg["rope_theta"])
        others.update({
            "layer_types left out, integer sliding_window_pattern 4":
                dict({k: v for k, v in cfg.items() if k != "layer_types"}, sliding_window_pattern=4),
            "transformers 5's flat rope_parameters": dict(
                {k: v for k, v in cfg.items() if k not in ("rope_theta", "rope_scaling")}, rope_parameters=rp)})
    else:
        others["layer_types and sliding_window_pattern left out"] = {
            k: v for k, v in cfg.items() if k not in ("layer_types", "sliding_window_pattern")}
    diffs = []
    for what, other in others.items():
        s2 = ref.Spec(other)
        d1 = float((last_logits(s2, p, prompts) - base).abs().max())
        d2 = float((Exaone4Check(other, p).forward(ids4)[0][-1] - st["logits_last"][4]).abs().max())
        diffs.append(d1 == 0.0 and d2 < 1e-4 and s2.layer_sliding == spec.layer_sliding and
                     s2.layer_use_rope == spec.layer_use_rope)
    check(all(diffs), "%s: %s give the same layers and logits (reference exactly, Exaone4Check 1e-4)" % (
        name, "; ".join(others)))
    # reference.Spec refuses what it does not implement
    bad = {"sliding_window_pattern LLXG": dict(sliding_window=16, sliding_window_pattern="LLXG"),
           "layer_types with chunked_attention": dict(layer_types=["chunked_attention"] + m.types[1:]),
           "attention_bias true": dict(attention_bias=True), "mlp_bias true": dict(mlp_bias=True),
           "rope_parameters beside rope_theta": dict(rope_parameters={"rope_type": "default", "rope_theta": 1e4})}
    if hybrid:
        bad.update({"layer_types disagreeing with sliding_window_pattern": dict(sliding_window_pattern="LGLG"),
                    "integer sliding_window_pattern 0 without layer_types": dict(
                        {k: v for k, v in cfg.items() if k != "layer_types"}, sliding_window_pattern=0),
                    "a sliding_window with every layer full_attention": dict(
                        {k: v for k, v in cfg.items() if k != "sliding_window_pattern"},
                        layer_types=["full_attention"] * m.L)})
    else:
        bad["sliding_attention layers with sliding_window null"] = dict(
            layer_types=["sliding_attention"] + m.types[1:])
    refused = []
    for what, extra in bad.items():
        try:  # (a whole config.json, or the keys changed in this one)
            ref.Spec(extra if "architectures" in extra else dict(cfg, **extra))
        except ValueError:
            refused.append(what)
    check(refused == list(bad), "%s: reference.Spec refuses each of: %s (not refused: %s)" % (
        name, ", ".join(bad), ", ".join(sorted(set(bad) - set(refused))) or "none"))
    # the what-ifs
    ids = g["prompts"][4]["input_ids"]
    logits = m.forward(ids)[0]
    keys = ["prenorm", "qk_norm_whole_projection"] + (
        ["rope_on_every_layer", "sliding_window"] if hybrid else ["nope_as_hybrid"]) + (
        ["rope_scaling"] if m.rope_params.get("rope_type", "default") != "default" else [])
    whatifs = {key: Exaone4Check(cfg, p) for key in keys}
    whatifs["prenorm"].layout = "pre"
    whatifs["qk_norm_whole_projection"].qk_mode = "whole"
    if hybrid:
        whatifs["rope_on_every_layer"].rotates = [True] * m.L
        whatifs["sliding_window"].windows = [None] * m.L
    else:
        # the hybrid model's rule: the layers "LLLG" calls global (every fourth, and the last) take no RoPE
        whatifs["nope_as_hybrid"].rotates = ["LLLG"[i % 4] == "L" and i < m.L - 1 for i in range(m.L)]
    if "rope_scaling" in whatifs:
        whatifs["rope_scaling"].inv_freq = m.frequencies({"rope_theta": m.rope_params["rope_theta"]})
    have_keys = set(k[:-len("_effect_prompt4")] for k in model if k.endswith("_effect_prompt4"))
    check(have_keys == set(keys), "%s: golden.json's what-ifs are %s" % (name, ", ".join(sorted(keys))))
    for key, other in whatifs.items():
        effect = float((other.forward(ids)[0] - logits).abs().max())
        want_effect = model.get("%s_effect_prompt4" % key, float("nan"))
        check(abs(effect - want_effect) < 1e-3 and effect > 1e-2, "%s: Exaone4Check %s_effect_prompt4 %.4f = "
              "golden.json's %.4f (> 1e-2)" % (name, key, effect, want_effect))


class ErnieCheck(LlamaCheck):
    """Ernie4_5ForCausalLM's and Ernie4_5_MoeForCausalLM's forward pass again, from models/ernie4_5/modular_ernie4_5.py,
    configuration_ernie4_5.py, models/ernie4_5_moe/modular_ernie4_5_moe.py and configuration_ernie4_5_moe.py, sharing
    nothing with reference.py but the safetensors reader (LlamaCheck's F.linear and RMSNorm, attend_heads; its own
    config reading, RoPE, layer, router, experts and model loop): Ernie4_5DecoderLayer / Ernie4_5_MoeDecoderLayer
    (Llama's / Qwen3-MoE's pre-norm layer), Ernie4_5Attention / Ernie4_5_MoeAttention (LlamaAttention with q/k/v/o_proj
    bias=use_bias; head_dim from Ernie4_5Config (default 128, None -> hidden / heads) or getattr(config, "head_dim",
    hidden / heads)), Ernie4_5RotaryEmbedding (LlamaRotaryEmbedding's inverse frequencies over head_dim) with ernie4_5's
    apply_rotary_pos_emb: the adjacent pairs (x[2i], x[2i + 1]) turned here as complex numbers by angle pos x inv_freq_i
    (torch.view_as_complex), Ernie4_5MLP / Ernie4_5_MoeMLP (down(silu(gate x) * up x), biases with use_bias), and
    Ernie4_5_MoeSparseMoeBlock.forward as written there: router_logits = gate(h.float()), routing_weights =
    F.softmax(router_logits, dim=1), selected_experts = torch.topk(moe_statics(routing_weights), moe_k) with
    moe_statics(x) = x + e_score_correction_bias.squeeze(), the weights gathered from routing_weights and divided by
    torch.clamp(their sum, min=moe_norm_min), the experts' one_hot / expert_hit / index_add_ loop, plus shared_experts
    (moe_intermediate_size * moe_num_shared_experts, ungated) when moe_num_shared_experts > 0; the MoE layers by
    Ernie4_5_MoeDecoderLayer.__init__'s rule with Ernie4_5_MoeConfig.__init__'s moe_layer_end_index -1 -> L - 1.
    config.json read here with the two config classes' defaults, rope_theta from rope_parameters (transformers 5) or the
    top level.
    What-ifs (attributes changed after __init__): `pairs` ("adjacent", "halves": the pairs (i, i + HD/2) of
    rotate_half), `bias_in_choice`, `bias_in_weights`, `renormalise`, `score` ("softmax", "sigmoid"), `shared`.
    `router_calls`: None, or a list that receives (layer, logits) per MoE call."""

    # Ernie4_5Config's / Ernie4_5_MoeConfig's defaults of the keys read here (rope_theta: 4.54's __init__ default, 5.x's
    # default_theta)
    DENSE_DEFAULTS = dict(num_attention_heads=16, num_key_value_heads=2, head_dim=128, hidden_act="silu",
                          rms_norm_eps=1e-5, rope_theta=500000.0, rope_parameters=None, tie_word_embeddings=True,
                          use_bias=False)
    MOE_DEFAULTS = dict(num_attention_heads=20, num_key_value_heads=4, hidden_act="silu", rms_norm_eps=1e-5,
                        rope_theta=500000.0, rope_parameters=None, tie_word_embeddings=True, use_bias=False,
                        moe_intermediate_size=1536, moe_k=6, moe_num_experts=64, moe_num_shared_experts=2,
                        moe_layer_start_index=1, moe_layer_end_index=-1, moe_layer_interval=1, moe_norm_min=1e-12)

    def __init__(self, cfg, p):
        self.moe_family = cfg["architectures"][0] == "Ernie4_5_MoeForCausalLM"
        c = dict(self.MOE_DEFAULTS if self.moe_family else self.DENSE_DEFAULTS, **cfg)
        if c["hidden_act"] != "silu" or c.get("rope_scaling"):
            raise ValueError("ErnieCheck: hidden_act %r, rope_scaling %r" % (c["hidden_act"], c.get("rope_scaling")))
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"] or self.NH
        # Ernie4_5Config.__post_init__: head_dim None -> hidden_size // heads; LlamaAttention (MoE): getattr(config,
        # "head_dim", hidden_size // heads)
        self.HD = c.get("head_dim") or self.H // self.NH
        rp = c["rope_parameters"] or {}
        self.theta = float(rp.get("rope_theta", c["rope_theta"]))
        self.qkv_bias = self.o_bias = self.mlp_bias = bool(c["use_bias"])
        if self.moe_family and c["use_bias"]:
            raise ValueError("ErnieCheck: use_bias on the MoE family")
        self.moe_layers = [False] * self.L
        if self.moe_family:
            end = c["moe_layer_end_index"]
            end = self.L - 1 if end == -1 else end
            self.moe_layers = [(l + 1) % c["moe_layer_interval"] == 0 and l >= c["moe_layer_start_index"] and l <= end
                               for l in range(self.L)]
            self.E, self.k, self.norm_min = c["moe_num_experts"], c["moe_k"], c["moe_norm_min"]
            self.n_shared = c["moe_num_shared_experts"]
        self.pairs, self.bias_in_choice, self.bias_in_weights = "adjacent", True, False
        self.renormalise, self.score, self.shared = True, "softmax", True
        self.router_calls = None

    def rotary(self, x, angles):
        """x (T, heads, head_dim), angles (T, head_dim / 2): Ernie's adjacent pairs (2i, 2i + 1) as complex numbers
        times e^(i angle_i), in place; "halves": rotate_half's pairs (i, i + HD/2)."""
        rot = torch.polar(torch.ones_like(angles), angles).unsqueeze(1)
        if self.pairs == "halves":
            half = self.HD // 2
            z = torch.complex(x[..., :half], x[..., half:]) * rot
            return torch.cat((z.real, z.imag), dim=-1)
        z = torch.view_as_complex(x.reshape(*x.shape[:-1], self.HD // 2, 2).contiguous()) * rot
        return torch.view_as_real(z).flatten(-2)

    def attention(self, l, x, angles):
        pre, HD, T = "model.layers.%d.self_attn." % l, self.HD, x.shape[0]
        q = self.linear(x, pre + "q_proj", self.qkv_bias).view(T, self.NH, HD)
        k = self.linear(x, pre + "k_proj", self.qkv_bias).view(T, self.NKV, HD)
        v = self.linear(x, pre + "v_proj", self.qkv_bias).view(T, self.NKV, HD)
        q, k = self.rotary(q, angles), self.rotary(k, angles)
        allowed = torch.ones(T, T, dtype=torch.bool).tril()
        return self.linear(attend_heads(q, k, v, allowed), pre + "o_proj", self.o_bias)

    def mlp(self, x, pre):  # Ernie4_5MLP / Ernie4_5_MoeMLP
        return self.linear(torch.nn.functional.silu(self.linear(x, pre + "gate_proj", self.mlp_bias)) *
                           self.linear(x, pre + "up_proj", self.mlp_bias), pre + "down_proj", self.mlp_bias)

    def route(self, logits, bias):
        """The router of Ernie4_5_MoeSparseMoeBlock.forward: (selected experts (topk order), their weights, the values
        the choice ranks)."""
        logits = logits.float()
        weights = (torch.nn.functional.softmax(logits, dim=1, dtype=torch.float) if self.score == "softmax" else
                   torch.sigmoid(logits))
        choice = weights + bias.squeeze() if self.bias_in_choice else weights
        _, selected = torch.topk(choice, self.k, dim=-1)
        top = torch.gather(choice if self.bias_in_weights else weights, dim=-1, index=selected)
        if self.renormalise:
            top = top / torch.clamp(top.sum(dim=-1, keepdim=True), min=self.norm_min)
        return selected, top, choice

    def moe(self, l, x):
        pre = "model.layers.%d.mlp." % l
        logits = torch.nn.functional.linear(x.float(), self.p[pre + "gate.weight"])
        if self.router_calls is not None:
            self.router_calls.append((l, logits))
        selected, weights, _ = self.route(logits, self.p[pre + "moe_statics.e_score_correction_bias"])
        out = torch.zeros_like(x)
        mask = torch.nn.functional.one_hot(selected, num_classes=self.E).permute(2, 1, 0)  # (E, k, T)
        for e in torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero().flatten().tolist():
            idx, top_x = torch.where(mask[e])
            out.index_add_(0, top_x, self.mlp(x[top_x], pre + "experts.%d." % e) * weights[top_x, idx, None])
        if self.n_shared > 0 and self.shared:
            out = out + self.mlp(x, pre + "shared_experts.")
        return out

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p = self.p
        inv_freq = 1.0 / self.theta ** (torch.arange(0, self.HD, 2, dtype=torch.int64).float() / self.HD)
        angles = torch.outer(torch.arange(len(ids), dtype=torch.float32), inv_freq)  # (T, HD/2)
        h = p["model.embed_tokens.weight"][torch.tensor(ids)]
        hidden = [h]
        for l in range(self.L):
            w = lambda n: p["model.layers.%d.%s.weight" % (l, n)]  # noqa: E731
            h = h + self.attention(l, self.rms(h, w("input_layernorm")), angles)
            x = self.rms(h, w("post_attention_layernorm"))
            h = h + (self.moe(l, x) if self.moe_layers[l] else self.mlp(x, "model.layers.%d.mlp." % l))
            hidden.append(h)
        hidden[-1] = self.rms(h, p["model.norm.weight"])
        head = p["model.embed_tokens.weight"] if self.c["tie_word_embeddings"] else p["lm_head.weight"]
        return hidden[-1] @ head.T, hidden


def ernie_other_spelling(cfg, L):
    """An ERNIE 4.5 config.json in the other spelling: the released / 4.5x one (rope_theta at the top level, Baidu's
    keys, moe_layer_end_index absent where it is the last layer) as transformers 5 writes it (rope_parameters, "dtype",
    moe_layer_end_index L - 1 written out, Baidu's keys dropped), or back."""
    c = dict(cfg)
    for key in ("use_rmsnorm", "moe_capacity", "moe_gate", "moe_use_aux_free"):
        c.pop(key, None)
    if "rope_parameters" in c:
        c["rope_theta"] = c.pop("rope_parameters")["rope_theta"]
        c["torch_dtype"] = c.pop("dtype")
        if c.get("moe_layer_end_index") == L - 1:
            del c["moe_layer_end_index"]
    else:
        c["rope_parameters"] = {"rope_theta": float(c.pop("rope_theta")), "rope_type": "default"}
        c["dtype"] = c.pop("torch_dtype")
        if c["architectures"][0] == ref.ERNIE4_5_MOE:
            c["moe_layer_end_index"] = c.get("moe_layer_end_index", L - 1)
    return c


def check_ernie(name, spec, p, g, st):
    cfg = fixture_config(name)
    m = ErnieCheck(cfg, p)
    model = g["model"]
    check_against_golden(name, "ErnieCheck", m, g, st)
    # the files: exactly ERNIE 4.5's tensors with their shapes and dtypes
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    V, QD, KD, F_ = m.c["vocab_size"], m.NH * m.HD, m.NKV * m.HD, m.c["intermediate_size"]
    want = {"model.embed_tokens.weight": (V, m.H), "model.norm.weight": (m.H,)}
    if not m.c["tie_word_embeddings"]:
        want["lm_head.weight"] = (V, m.H)

    def mlp_tensors(x, width):
        out = {x + "gate_proj.weight": (width, m.H), x + "up_proj.weight": (width, m.H),
               x + "down_proj.weight": (m.H, width)}
        if m.mlp_bias:
            out.update({x + "gate_proj.bias": (width,), x + "up_proj.bias": (width,), x + "down_proj.bias": (m.H,)})
        return out
    for l in range(m.L):
        x = "model.layers.%d." % l
        want.update({x + "input_layernorm.weight": (m.H,), x + "post_attention_layernorm.weight": (m.H,),
                     x + "self_attn.q_proj.weight": (QD, m.H), x + "self_attn.k_proj.weight": (KD, m.H),
                     x + "self_attn.v_proj.weight": (KD, m.H), x + "self_attn.o_proj.weight": (m.H, QD)})
        if m.qkv_bias:
            want.update({x + "self_attn.q_proj.bias": (QD,), x + "self_attn.k_proj.bias": (KD,),
                         x + "self_attn.v_proj.bias": (KD,), x + "self_attn.o_proj.bias": (m.H,)})
        if m.moe_layers[l]:
            Fm = m.c["moe_intermediate_size"]
            want.update({x + "mlp.gate.weight": (m.E, m.H), x + "mlp.moe_statics.e_score_correction_bias": (1, m.E)})
            for e in range(m.E):
                want.update(mlp_tensors(x + "mlp.experts.%d." % e, Fm))
            if m.n_shared:
                want.update(mlp_tensors(x + "mlp.shared_experts.", Fm * m.n_shared))
        else:
            want.update(mlp_tensors(x + "mlp.", F_))
    shapes = {n: tuple(t.shape) for n, (_, t) in stored.items()}
    f32 = ("norm.weight", "mlp.gate.weight", "e_score_correction_bias")
    dtypes_ok = all(dt == ("F32" if n.endswith(f32) else "BF16") for n, (dt, _) in stored.items())
    moe = [l for l in range(m.L) if m.moe_layers[l]]
    check(shapes == want and dtypes_ok,
          "%s: exactly ERNIE 4.5's tensors (%s), BF16 matrices%s, F32 norms%s" % (
              name, "MoE layers %s of %d, %d experts%s" % (moe, m.L, m.E, ", shared_experts of %d" % (
                  m.c["moe_intermediate_size"] * m.n_shared) if m.n_shared else ", no shared_experts")
              if m.moe_family else "dense, q/k/v/o and MLP biases" if m.qkv_bias else "dense",
              " and biases" if m.qkv_bias else "", ", mlp.gate and moe_statics.e_score_correction_bias (1, E)"
              if m.moe_family else ""))
    # config.json's spelling, and reference.Spec / golden.json reading it as ErnieCheck does
    if not m.moe_family:
        spelling = (cfg["model_type"] == "ernie4_5" and cfg["head_dim"] * m.NH != m.H and cfg["use_bias"] is True and
                    isinstance(cfg["rope_theta"], int) and "rope_parameters" not in cfg and cfg["tie_word_embeddings"])
    elif "rope_parameters" in cfg:
        spelling = ("rope_theta" not in cfg and "dtype" in cfg and "torch_dtype" not in cfg and "head_dim" not in cfg and
                    set(cfg["rope_parameters"]) == {"rope_type", "rope_theta"} and "moe_layer_end_index" in cfg and
                    not any(k in cfg for k in ("use_rmsnorm", "moe_gate", "moe_capacity", "moe_use_aux_free")))
    else:
        spelling = (isinstance(cfg["rope_theta"], int) and "head_dim" not in cfg and "moe_layer_end_index" not in cfg and
                    cfg["use_rmsnorm"] is True and cfg["moe_gate"] == "topk" and cfg["moe_use_aux_free"] is True and
                    "moe_capacity" in cfg and "torch_dtype" in cfg and cfg["use_bias"] is False)
    flags = ((spec.HD, spec.R, float(spec.theta), spec.rope_interleaved, spec.qkv_bias, spec.o_bias, spec.mlp_bias,
              spec.input_norms, spec.sandwich_norms, spec.qk_norm, spec.qk_norm_full, spec.layer_moe, spec.tied) ==
             (m.HD, m.HD, m.theta, True, m.qkv_bias, m.o_bias, m.mlp_bias, True, False, False, False, m.moe_layers,
              m.c["tie_word_embeddings"]))
    flags &= bool(torch.equal(spec.inv_freq, 1.0 / m.theta ** (torch.arange(0, m.HD, 2, dtype=torch.float32) / m.HD)))
    if m.moe_family:
        flags &= ((spec.router, spec.num_experts, spec.top_k, spec.norm_topk_prob, spec.moe_norm_min,
                   spec.moe_intermediate, spec.shared_intermediate, spec.shared_gated) ==
                  ("ernie", m.E, m.k, True, m.norm_min, m.c["moe_intermediate_size"],
                   m.c["moe_intermediate_size"] * m.n_shared, False))
        flags &= ((model["num_experts"], model["experts_per_tok"], model["moe_layers"], model["shared_expert"],
                   model["correction_bias_shape"]) == (m.E, m.k, m.moe_layers, m.n_shared > 0, [1, m.E]))
    flags &= (model["head_dim"], model["use_bias"], model["rope_theta"]) == (m.HD, m.qkv_bias, spec.theta)
    check(spelling and flags,
          "%s: config.json in the %s spelling (head_dim %d%s, rope_theta %g%s); reference.Spec and golden.json read it "
          "as ErnieCheck does" % (
              name, "ERNIE-4.5-0.3B-PT" if not m.moe_family else "transformers 5" if "rope_parameters" in cfg else
              "ERNIE-4.5-21B-A3B-PT", m.HD, " listed" if "head_dim" in cfg else ": hidden / heads", m.theta,
              ", MoE layers %s" % moe if m.moe_family else ""))
    # reference.Spec refuses what it does not implement
    bad = {"rope_scaling linear": dict(rope_scaling={"rope_type": "linear", "factor": 2.0}),
           "rope_parameters yarn": dict(rope_parameters={"rope_type": "yarn", "rope_theta": m.theta, "factor": 2.0}),
           "attention_bias true": dict(attention_bias=True),
           "rope_theta beside other rope_parameters": dict(rope_theta=int(m.theta) + 1, rope_parameters={
               "rope_type": "default", "rope_theta": m.theta})}
    if m.moe_family:
        bad.update({"use_bias true": dict(use_bias=True), "moe_num_experts as a list (VL)": dict(
            moe_num_experts=[m.E, m.E]), "moe_intermediate_size as a list (VL)": dict(
            moe_intermediate_size=[m.c["moe_intermediate_size"]] * 2), "moe_layer_start_index as a list (VL)": dict(
            moe_layer_start_index=[1, 1]), "moe_use_aux_free false": dict(moe_use_aux_free=False),
            "moe_gate top2": dict(moe_gate="top2"), "use_rmsnorm false": dict(use_rmsnorm=False)})
    refused = []
    for what, extra in bad.items():
        c2 = dict(cfg, **extra)
        if "rope_theta" not in extra and "rope_parameters" in extra:
            c2.pop("rope_theta", None)
        try:
            ref.Spec(c2)
        except ValueError:
            refused.append(what)
    check(refused == list(bad), "%s: reference.Spec refuses each of: %s (not refused: %s)" % (
        name, ", ".join(bad), ", ".join(sorted(set(bad) - set(refused))) or "none"))
    # the other config spelling: the same logits
    prompts = [e["input_ids"] for e in g["prompts"]]
    base = last_logits(spec, p, prompts)
    other = ernie_other_spelling(cfg, m.L)
    d1 = float((last_logits(ref.Spec(other), p, prompts) - base).abs().max())
    ids4 = g["prompts"][4]["input_ids"]
    d2 = float((ErnieCheck(other, p).forward(ids4)[0][-1] - st["logits_last"][4]).abs().max())
    check(d1 == 0.0 and d2 < 1e-4, "%s: config.json in the other spelling (%s) gives the same logits (reference: %.1e; "
          "ErnieCheck: %.1e)" % (name, "rope_parameters" if "rope_parameters" in other else "rope_theta", d1, d2))
    if m.moe_family and cfg.get("moe_layer_end_index", -1) not in (-1, m.L - 1):
        # the rule without the end index would make more layers MoE: the weights do not fit it
        loose = ref.Spec(dict(cfg, moe_layer_end_index=-1))
        extra = [l for l in range(m.L) if loose.layer_moe[l] and not spec.layer_moe[l]]
        dense_there = all("model.layers.%d.mlp.gate_proj.weight" % l in p and "model.layers.%d.mlp.gate.weight" % l
                          not in p for l in extra)
        check(bool(extra) and dense_there and loose.layer_moe == ErnieCheck(dict(cfg, moe_layer_end_index=-1), p)
              .moe_layers, "%s: moe_layer_end_index %d decides: without it layers %s would be MoE too, and the file "
              "holds dense MLP tensors there" % (name, cfg["moe_layer_end_index"], extra))
    if m.moe_family:
        # the routing again, from ErnieCheck's router: the k-th minus (k+1)-th p + bias over the prompt tokens and the
        # tokens fed back while decoding, and the experts chosen at each prompt's last position (topk order)
        def ernie_route(call, n):
            l, logits = call
            bias = p["model.layers.%d.mlp.moe_statics.e_score_correction_bias" % l]
            return [int(i) for i in m.route(logits[n - 1:n], bias)[0][0]], kth_margin(m.route(logits, bias)[2], m.k)

        gaps, last_ok = replay_routing(m, g, "router_calls", ernie_route)
        want_gaps = [model["routing_min_gap"], model["routing_min_gap_generated"]]
        check(all(abs(a - b) < 1e-6 for a, b in zip(gaps, want_gaps)) and min(gaps) >= 1e-3 and last_ok,
              "%s: ErnieCheck's routing gaps (prompt %.6f / fed back %.6f) = golden.json's, >= 1e-3; expert_ids_last "
              "reproduced" % (name, gaps[0], gaps[1]))
    # the what-ifs
    ids = g["prompts"][4]["input_ids"]
    logits = m.forward(ids)[0]
    others = {"rope_layout": ErnieCheck(cfg, p)}
    others["rope_layout"].pairs = "halves"
    if m.qkv_bias:
        for key, suffixes in (("qkv_bias", ("self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias")),
                              ("o_proj_bias", ("self_attn.o_proj.bias",)),
                              ("mlp_bias", ("mlp.gate_proj.bias", "mlp.up_proj.bias", "mlp.down_proj.bias"))):
            others[key] = ErnieCheck(cfg, {n: (t * 0 if n.endswith(suffixes) else t) for n, t in p.items()})
    router_keys = ("router_bias", "router_bias_in_weights", "router_unnormalised", "router_sigmoid")
    if m.moe_family:
        for key in router_keys:
            others[key] = ErnieCheck(cfg, p)
        others["router_bias"].bias_in_choice = False
        others["router_bias_in_weights"].bias_in_weights = True
        others["router_unnormalised"].renormalise = False
        others["router_sigmoid"].score = "sigmoid"
        if m.n_shared:
            others["shared_experts"] = ErnieCheck(cfg, p)
            others["shared_experts"].shared = False
        # how many of prompt 4's tokens take other experts under each router what-if, the router inputs held
        m.router_calls = []
        m.forward(ids)
        calls = dict(m.router_calls)
        m.router_calls = None
        changed = {}
        for key in router_keys:
            counts = []
            for l in range(m.L):
                if l not in calls:
                    counts.append(None)
                    continue
                bias = p["model.layers.%d.mlp.moe_statics.e_score_correction_bias" % l]
                a = m.route(calls[l], bias)[0].sort(dim=-1).values
                b = others[key].route(calls[l], bias)[0].sort(dim=-1).values
                counts.append(int((a != b).any(dim=-1).sum()))
            changed[key] = counts
        check(changed == model["router_changed_tokens_prompt4"] and len(ids) == model["prompt4_tokens"] and
              sum(changed["router_bias"][l] for l in moe) >= 0.1 * len(ids) * len(moe),
              "%s: ErnieCheck's tokens of prompt 4's %d taking other experts per layer = golden.json's (%s)" % (
                  name, len(ids), ", ".join("%s %s" % kv for kv in changed.items())))
    have_keys = set(k[:-len("_effect_prompt4")] for k in model if k.endswith("_effect_prompt4"))
    check(have_keys == set(others), "%s: golden.json's what-ifs are %s" % (name, ", ".join(sorted(others))))
    for key, other in others.items():
        effect = float((other.forward(ids)[0] - logits).abs().max())
        want_effect = model.get("%s_effect_prompt4" % key, float("nan"))
        check(abs(effect - want_effect) < 1e-3 and effect > 1e-2, "%s: ErnieCheck %s_effect_prompt4 %.4f = "
              "golden.json's %.4f (> 1e-2)" % (name, key, effect, want_effect))


class Fp8Check:
    """An FP8 (e4m3, block-scaled) checkpoint read and dequantized again without reference.py: its own
    safetensors reader; e4m3 from the bit fields (sign, 4 exponent bits with bias 7, 3 mantissa bits; a
    normal code's fp32 bits are sign | (e + 120) << 23 | m << 20, a subnormal is m * 2^-9, S.1111.111 is
    NaN); W = fp32(code) * scale_inv[i, j] block by block (transformers' Fp8Dequantize / DeepSeek's
    weight_dequant, edge blocks cut short), then rounded to bf16 (the config's torch_dtype) by
    round-to-nearest-even on the fp32 bits."""

    @staticmethod
    def read(path):
        """name -> (dtype, raw numpy array in the stored type, shape)."""
        with open(path, "rb") as f:
            raw = f.read()
        n = int.from_bytes(raw[:8], "little")
        header = json.loads(raw[8:8 + n])
        types = {"F8_E4M3": "u1", "BF16": "<u2", "F32": "<f4", "F16": "<f2"}
        out = {}
        for name, info in header.items():
            if name != "__metadata__":
                a, b = info["data_offsets"]
                arr = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=types[info["dtype"]]).reshape(info["shape"])
                out[name] = (info["dtype"], arr, tuple(info["shape"]))
        return out

    @staticmethod
    def e4m3(codes):
        """uint8 codes -> float32 values (NaN where S.1111.111)."""
        c = codes.astype(np.uint32)
        sign, e, m = c >> 7, (c >> 3) & 0xF, c & 0x7
        normal = ((sign << 31) | ((e + 120) << 23) | (m << 20)).astype(np.uint32).view(np.float32)
        sub = np.where(sign == 1, -1.0, 1.0) * m.astype(np.float64) / 512.0
        v = np.where(e == 0, sub.astype(np.float32), normal)
        return np.where((e == 15) & (m == 7), np.float32("nan"), v).astype(np.float32)

    @staticmethod
    def values(dtype, arr):
        if dtype == "F8_E4M3":
            return Fp8Check.e4m3(arr)
        if dtype == "BF16":
            return (arr.astype(np.uint32) << 16).view(np.float32)
        return arr.astype(np.float32)

    @staticmethod
    def bf16(x):
        """float32 array -> its bf16 rounding (nearest, ties to even), as float32 (finite input)."""
        b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
        return b.astype(np.uint32).view(np.float32)

    @staticmethod
    def nearest_codes(x):
        """float32 array -> uint8 codes of the nearest finite e4m3 value, a tie to the even code, by
        comparing with every non-negative finite value (codes 0x00-0x7E)."""
        table = Fp8Check.e4m3(np.arange(127, dtype=np.uint8)).astype(np.float64)
        flat = x.astype(np.float64).reshape(-1)
        d = np.abs(np.abs(flat)[:, None] - table[None, :])
        best = d.min(axis=1, keepdims=True)
        first = np.argmax(d == best, axis=1)
        tie = (d == best).sum(axis=1) == 2
        code = np.where(tie & (first % 2 == 1), first + 1, first)
        return (code | np.where(np.signbit(flat), 0x80, 0)).astype(np.uint8).reshape(x.shape)

    def __init__(self, folder):
        with open(os.path.join(folder, "config.json")) as f:
            self.cfg = json.load(f)
        q = self.cfg["quantization_config"]
        self.block = tuple(q["weight_block_size"])
        self.st = self.read(os.path.join(folder, "model.safetensors"))

    def dequantize(self, to_bf16=True):
        """name -> fp32 torch tensor as a loader holds the model (the scales consumed); to_bf16 false: the
        fp32 products kept."""
        bm, bn = self.block
        p = {}
        for name, (dt, arr, shape) in self.st.items():
            if name.endswith("_scale_inv"):
                continue
            v = self.values(dt, arr)
            if dt == "F8_E4M3":
                s = self.st[name + "_scale_inv"][1]
                w = np.empty(shape, dtype=np.float32)
                for i in range(s.shape[0]):
                    for j in range(s.shape[1]):
                        w[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn] = (
                            v[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn] * s[i, j]).astype(np.float32)
                v = self.bf16(w) if to_bf16 else w
            p[name] = torch.from_numpy(np.array(v, dtype=np.float32))
        return p


def fp8_decoder_linear(name):
    # the nn.Linear weights of DeepseekV3DecoderLayer (DeepseekV3Attention, DeepseekV3MLP, every expert and
    # the shared experts) and of the MTP layer (eh_proj): the names that end in a *_proj module
    parts = name.split(".")
    return name.startswith("model.layers.") and parts[-1] == "weight" and (
        parts[-2].endswith("_proj") or parts[-2] == "kv_a_proj_with_mqa")


def check_fp8(name, spec, p, g, st):
    """13. Returns the weights as Fp8Check dequantizes them."""
    folder = os.path.join(ROOT, name)
    m = Fp8Check(folder)
    q, (bm, bn) = m.cfg["quantization_config"], m.block
    check(q == {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [bm, bn]}
          and m.cfg["torch_dtype"] == "bfloat16",
          "%s: quantization_config as DeepSeek-V3's (blocks %d x %d), torch_dtype bfloat16" % (name, bm, bn))
    fp8 = sorted(n for n, (dt, _, _) in m.st.items() if dt == "F8_E4M3")
    linear = sorted(n for n in m.st if fp8_decoder_linear(n))
    scales = sorted(n for n in m.st if n.endswith("_scale_inv"))
    others = {dt for n, (dt, _, _) in m.st.items() if n not in fp8 and n not in scales}
    check(fp8 == linear and scales == sorted(n + "_scale_inv" for n in fp8) and others <= {"BF16", "F32"},
          "%s: the %d F8_E4M3 tensors are exactly the decoder and MTP layers' Linear weights, each with one "
          "_scale_inv (%d), the rest BF16 / F32 (embed_tokens, lm_head, norms, router, bias)" % (
              name, len(fp8), len(scales)))
    mtp = "model.layers.%d.eh_proj.weight" % m.cfg["num_hidden_layers"]
    grid_ok, short, nan, full = True, [], 0, True
    for n in fp8:
        rows, cols = m.st[n][2]
        sdt, s, sshape = m.st[n + "_scale_inv"]
        grid_ok &= sdt == "F32" and sshape == (-(-rows // bm), -(-cols // bn)) and bool((s > 0).all())
        if rows % bm or cols % bn:
            short.append("%s %s" % (n.split(".", 3)[-1], (rows, cols)))
        codes = m.st[n][1]
        nan += int(((codes & 0x7F) == 0x7F).sum())
        for i in range(sshape[0]):
            for j in range(sshape[1]):
                full &= int((codes[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn] & 0x7F).max()) == 0x7E
    check(grid_ok and bool(short) and mtp in fp8,
          "%s: every weight_scale_inv F32 (ceil(out/%d), ceil(in/%d)), positive; edge blocks cut short in %d weights "
          "(e.g. %s); the MTP layer's %s is F8_E4M3" % (name, bm, bn, len(short), ", ".join(short[:3]), mtp))
    check(nan == 0 and full, "%s: no NaN code; every block's largest |code| is 0x7E (448)" % name)
    own = m.dequantize()
    same = sorted(own) == sorted(p) and all(torch.equal(own[n], p[n]) for n in p)
    check(same, "%s: Fp8Check's dequantized weights (fp32(code) x scale_inv per block, bf16) = reference.load_model's, "
          "bit for bit (%d tensors)" % (name, len(p)))
    # the recipe, against the source fixture's stored weights
    src_name = g["model"]["weights_from"]
    src = Fp8Check.read(os.path.join(ROOT, src_name, "model.safetensors"))
    exact_scale, exact_codes = True, True
    for n in fp8:
        w = Fp8Check.values(*src[n][:2])
        s = m.st[n + "_scale_inv"][1]
        for i in range(s.shape[0]):
            for j in range(s.shape[1]):
                blk = w[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn]
                scale = np.float32(np.abs(blk).max()) / np.float32(448.0)
                exact_scale &= bool(scale == s[i, j])
                want = Fp8Check.nearest_codes(np.clip(blk / scale, -448.0, 448.0).astype(np.float32))
                exact_codes &= bool((want == m.st[n][1][i * bm:(i + 1) * bm, j * bn:(j + 1) * bn]).all())
    check(exact_scale and exact_codes, "%s: scale_inv = fp32(amax(|block|) / 448) and codes = nearest e4m3 of "
          "block / scale (ties even), from %s's stored weights, on every block" % (name, src_name))
    redrawn = g["model"]["routers_redrawn"]
    router = ["model.layers.%d.mlp.gate.weight" % l for l in redrawn]
    kept = [n for n in m.st if n not in fp8 and n not in scales and n not in router]
    same_rest = sorted(src) == sorted(n for n in m.st if n not in scales) and all(
        src[n][0] == m.st[n][0] and np.array_equal(src[n][1], m.st[n][1]) for n in kept)
    moved = all(not np.array_equal(src[n][1], m.st[n][1]) for n in router)
    check(same_rest and moved, "%s: the other %d tensors are %s's; the routers of layers %s redrawn" % (
        name, len(kept), src_name, redrawn))
    # the quantization's effect on prompt 4's logits, with DeepseekV3Check
    base = {n: torch.from_numpy(np.array(Fp8Check.values(*src[n][:2]), dtype=np.float32)) for n in src}
    for n in router:
        base[n] = own[n]
    ids = g["prompts"][4]["input_ids"]
    effect = float((DeepseekV3Check(m.cfg, own).forward(ids)[0] - DeepseekV3Check(m.cfg, base).forward(ids)[0])
                   .abs().max())
    want = g["model"]["fp8_quantization_effect_prompt4"]
    check(abs(effect - want) < 1e-3 and effect > 1e-2, "%s: DeepseekV3Check fp8_quantization_effect_prompt4 %.4f "
          "(%s's weights, these routers) = golden.json's %.4f" % (name, effect, src_name, want))
    unrounded = m.dequantize(to_bf16=False)
    effect = float((DeepseekV3Check(m.cfg, own).forward(ids)[0] - DeepseekV3Check(m.cfg, unrounded).forward(ids)[0])
                   .abs().max())
    want = g["model"]["fp8_bf16_rounding_effect_prompt4"]
    check(abs(effect - want) < 1e-3 and effect > 1e-2, "%s: DeepseekV3Check fp8_bf16_rounding_effect_prompt4 %.4f "
          "(the fp32 products kept) = golden.json's %.4f" % (name, effect, want))
    return own


def check_fp8_table():
    """13. tests/fixtures/fp8/e4m3_table.json against Fp8Check's bit-field decoding and known values."""
    path = os.path.join(os.path.dirname(ROOT), "fp8", "e4m3_table.json")
    with open(path) as f:
        table = json.load(f)
    own = Fp8Check.e4m3(np.arange(256, dtype=np.uint8)).astype(np.float64)
    same = len(table) == 256 and all(
        (t is None and math.isnan(o)) or (t is not None and t == o and math.copysign(1, t) == math.copysign(1, o))
        for t, o in zip(table, own))
    known = {0x00: 0.0, 0x01: 2 ** -9, 0x07: 7 * 2 ** -9, 0x08: 2 ** -6, 0x28: 0.25, 0x38: 1.0, 0x46: 3.5,
             0x7E: 448.0, 0x80: -0.0, 0xBC: -1.5, 0xFE: -448.0}
    known_ok = all(table[c] == v for c, v in known.items()) and [i for i, t in enumerate(table) if t is None] == [
        0x7F, 0xFF] and math.copysign(1, table[0x80]) == -1
    check(same and known_ok, "fp8/e4m3_table.json: 256 values = the bit-field decoding (NaN null only at 0x7F, 0xFF; "
          "max 448, smallest subnormal 2^-9, -0.0 at 0x80)")


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


class HybridCheck:
    """Qwen3NextForCausalLM's, Qwen3_5ForConditionalGeneration's and Qwen3_5MoeForConditionalGeneration's language
    model again, token by token, from models/qwen3_next/modular_qwen3_next.py, configuration_qwen3_next.py,
    models/qwen3_5/modular_qwen3_5.py and models/qwen3_5_moe/modular_qwen3_5_moe.py, sharing nothing with reference.py
    but the safetensors reader: its own config reading (text_config, layer_types or full_attention_interval, the RoPE
    from rope_theta / partial_rotary_factor or rope_parameters, the MoE layers), and every token fed one at a time
    through a decoding state, as a cached decode does: per linear-attention layer the last K - 1 conv inputs (the conv
    an explicit sum over the window, torch_causal_conv1d_update's) and the state S (one (DK, DV) matrix per value head,
    torch_recurrent_gated_delta_rule's per-token update written per head), per full-attention layer the rotated keys
    and the values (per-head attention over them with a hand-written softmax, the sigmoid output gate), the (1 + w)
    RMSNorms, the gated RMSNorm (plain w, silu(z)), Qwen3-Next's projections split with a loop over the key heads,
    Qwen2MoeTopKRouter / Qwen3VLMoeTextTopKRouter (softmax, the k largest by a descending sort, renormalised) and the
    experts (per expert, or slices of the stacked gate_up_proj / down_proj) with the sigmoid-gated shared expert.
    What-ifs (attributes changed after __init__, golden_models.hybrid_what_ifs' names): `conv`, `conv_activation`,
    `z_gate`, `gated_norm_one_plus_w`, `attn_output_gate`, `qk_l2norm`, `norm_plain_w`, `rope_full_head`, `decay`,
    `beta`, `A_log_as_A`, `dt_bias`, `state_reset_per_chunk`, `head_map_tiled`, `qkvz_blocks`, `router_unnormalised`,
    `shared_expert_gate`, `gate_up_swapped`: each False, True where it is the mistake. `router_calls`: None, or a list
    that receives (layer, router logits (E,)) per MoE call."""

    # Qwen3NextConfig's defaults of the keys read here (Qwen3_5TextConfig / Qwen3_5MoeTextConfig inherit them)
    DEFAULTS = dict(num_key_value_heads=2, head_dim=256, rms_norm_eps=1e-6, rope_theta=10000.0, rope_parameters=None,
                    partial_rotary_factor=0.25, attention_bias=False, linear_conv_kernel_dim=4, linear_key_head_dim=128,
                    linear_value_head_dim=128, linear_num_key_heads=16, linear_num_value_heads=32,
                    decoder_sparse_step=1, mlp_only_layers=None, layer_types=None, full_attention_interval=4,
                    num_experts=512, num_experts_per_tok=10, norm_topk_prob=True, moe_intermediate_size=512,
                    shared_expert_intermediate_size=512)
    WHAT_IFS = ("conv", "conv_activation", "z_gate", "gated_norm_one_plus_w", "attn_output_gate", "qk_l2norm",
                "norm_plain_w", "rope_full_head", "decay", "beta", "A_log_as_A", "dt_bias", "state_reset_per_chunk",
                "head_map_tiled", "qkvz_blocks", "router_unnormalised", "shared_expert_gate", "gate_up_swapped")

    def __init__(self, cfg, p):
        self.arch = cfg["architectures"][0]
        text = cfg.get("text_config", cfg)
        c = dict(self.DEFAULTS)
        if self.arch == "Qwen3_5ForConditionalGeneration":  # Qwen3_5TextConfig: num_key_value_heads 4, no MoE
            c.update(num_key_value_heads=4, num_experts=0)
        if self.arch == "Qwen3_5MoeForConditionalGeneration":  # Qwen3_5MoeTextConfig
            c.update(num_experts=256, num_experts_per_tok=8)
        c.update(text)
        if c["attention_bias"] or c.get("hidden_act", "silu") != "silu" or c.get("rope_scaling"):
            raise ValueError("HybridCheck: attention_bias %r, hidden_act %r, rope_scaling %r" % (
                c["attention_bias"], c.get("hidden_act"), c.get("rope_scaling")))
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV, self.HD, self.eps = c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
        self.NK, self.NV = c["linear_num_key_heads"], c["linear_num_value_heads"]
        self.DK, self.DV, self.K = c["linear_key_head_dim"], c["linear_value_head_dim"], c["linear_conv_kernel_dim"]
        # Qwen3NextConfig.__post_init__
        every = c["full_attention_interval"]
        self.types = c["layer_types"] or ["linear_attention" if (i + 1) % every else "full_attention"
                                          for i in range(self.L)]
        rp = c["rope_parameters"] or {}
        self.theta = float(rp.get("rope_theta", c["rope_theta"]))
        self.R = int(self.HD * float(rp.get("partial_rotary_factor", c["partial_rotary_factor"])))
        self.prefix = "model." if self.arch == "Qwen3NextForCausalLM" else "model.language_model."
        self.tied = text.get("tie_word_embeddings", cfg.get("tie_word_embeddings", False))
        self.E = c["num_experts"]
        if self.arch == "Qwen3_5MoeForConditionalGeneration":
            self.moe_layers = [True] * self.L
            self.renormalise = True  # Qwen3VLMoeTextTopKRouter, always
        else:
            only = c["mlp_only_layers"] or []
            self.moe_layers = [l not in only and self.E > 0 and (l + 1) % c["decoder_sparse_step"] == 0
                               for l in range(self.L)]
            self.renormalise = bool(c["norm_topk_prob"])
        if any(self.moe_layers):
            self.k = c["num_experts_per_tok"]
        self.stacked = any(n.endswith("mlp.experts.gate_up_proj") for n in p)
        for key in self.WHAT_IFS:
            setattr(self, key, False)
        self.router_calls = None

    # -- pieces
    def w(self, name):
        return self.p[self.prefix + name]

    def norm(self, x, weight):
        """Qwen3NextRMSNorm (Gemma3RMSNorm): x / sqrt(mean(x^2) + eps) times (1 + w) (norm_plain_w: times w)."""
        scale = weight if self.norm_plain_w else 1.0 + weight
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + self.eps) * scale

    def rotate(self, x, pos):
        """x (heads, HD): the pairs (i, i + R/2) of the first R dims as complex numbers times e^(i pos inv_freq_i),
        the rest passed (rope_full_head: R = HD)."""
        R = self.HD if self.rope_full_head else self.R
        inv = 1.0 / self.theta ** (torch.arange(0, R, 2, dtype=torch.int64).float() / R)
        z = torch.complex(x[:, :R // 2], x[:, R // 2:R]) * torch.polar(torch.ones(R // 2), pos * inv)
        return torch.cat((z.real, z.imag, x[:, R:]), dim=-1)

    def new_state(self):
        state = []
        for l in range(self.L):
            if self.types[l] == "linear_attention":
                C = 2 * self.NK * self.DK + self.NV * self.DV
                state.append({"window": torch.zeros(C, self.K - 1),
                              "S": [torch.zeros(self.DK, self.DV) for _ in range(self.NV)]})
            else:
                state.append({"k": [], "v": []})
        return state

    def projections(self, l, x):
        """(mixed [q, k, v] (conv_dim,), z (NV, DV), b (NV,), a (NV,)) of one token."""
        a_ = "layers.%d.linear_attn." % l
        NK, NV, DK, DV = self.NK, self.NV, self.DK, self.DV
        if self.prefix + a_ + "in_proj_qkv.weight" in self.p:  # Qwen3.5: the projections apart, [q, k, v] in order
            mixed = self.w(a_ + "in_proj_qkv.weight") @ x
            return (mixed, (self.w(a_ + "in_proj_z.weight") @ x).view(NV, DV), self.w(a_ + "in_proj_b.weight") @ x,
                    self.w(a_ + "in_proj_a.weight") @ x)
        qkvz = self.w(a_ + "in_proj_qkvz.weight") @ x
        ba = self.w(a_ + "in_proj_ba.weight") @ x
        r = NV // NK
        if self.qkvz_blocks:  # the what-if: contiguous [q | k | v | z], [b | a]
            q, k = qkvz[:NK * DK], qkvz[NK * DK:2 * NK * DK]
            v, z = qkvz[2 * NK * DK:2 * NK * DK + NV * DV], qkvz[2 * NK * DK + NV * DV:]
            return torch.cat((q, k, v)), z.view(NV, DV), ba[:NV], ba[NV:]
        # fix_query_key_value_ordering: per key head j, [q DK, k DK, v r DV, z r DV] and [b r, a r]
        group, qs, ks, vs, zs, bs, as_ = 2 * DK + 2 * r * DV, [], [], [], [], [], []
        for j in range(NK):
            seg = qkvz[j * group:(j + 1) * group]
            qs.append(seg[:DK])
            ks.append(seg[DK:2 * DK])
            vs.append(seg[2 * DK:2 * DK + r * DV])
            zs.append(seg[2 * DK + r * DV:])
            bs.append(ba[j * 2 * r:j * 2 * r + r])
            as_.append(ba[j * 2 * r + r:(j + 1) * 2 * r])
        return torch.cat(qs + ks + vs), torch.cat(zs).view(NV, DV), torch.cat(bs), torch.cat(as_)

    def linear_step(self, l, x, st, pos):
        a_ = "layers.%d.linear_attn." % l
        NK, NV, DK, DV = self.NK, self.NV, self.DK, self.DV
        mixed, z, b, a = self.projections(l, x)
        window = torch.cat((st["window"], mixed.unsqueeze(1)), dim=1)  # (C, K): the K - 1 inputs before and this one
        st["window"] = window[:, 1:]
        if self.conv:
            y = mixed
        else:
            weight = self.w(a_ + "conv1d.weight")[:, 0, :]  # (C, K): weight[:, K - 1] on the current input
            y = torch.zeros_like(mixed)
            for j in range(self.K):
                y = y + weight[:, j] * window[:, j]
        if not self.conv_activation:
            y = y * torch.sigmoid(y)
        q, k, v = y[:NK * DK].view(NK, DK), y[NK * DK:2 * NK * DK].view(NK, DK), y[2 * NK * DK:].view(NV, DV)
        if not self.qk_l2norm:
            q = q / torch.sqrt((q * q).sum(-1, keepdim=True) + 1e-6)
            k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + 1e-6)
        A = self.w(a_ + "A_log") if self.A_log_as_A else torch.exp(self.w(a_ + "A_log"))
        dt = 0.0 if self.dt_bias else self.w(a_ + "dt_bias")
        g = -A * torch.log1p(torch.exp(a + dt))  # softplus
        beta = torch.ones(NV) if self.beta else 1.0 / (1.0 + torch.exp(-b))
        if self.state_reset_per_chunk and pos % 64 == 0:
            st["S"] = [torch.zeros(DK, DV) for _ in range(NV)]
        weight = self.w(a_ + "norm.weight")
        outs = []
        for j in range(NV):
            kh = j % NK if self.head_map_tiled else j // (NV // NK)
            S = st["S"][j] if self.decay else st["S"][j] * torch.exp(g[j])
            S = S + beta[j] * torch.outer(k[kh], v[j] - S.T @ k[kh])
            st["S"][j] = S
            o = S.T @ (q[kh] / math.sqrt(DK))
            o = o / torch.sqrt((o * o).mean() + self.eps) * (1.0 + weight if self.gated_norm_one_plus_w else weight)
            outs.append(o if self.z_gate else o * (z[j] * torch.sigmoid(z[j])))
        return self.w(a_ + "out_proj.weight") @ torch.cat(outs)

    def attention_step(self, l, x, st, pos):
        a_ = "layers.%d.self_attn." % l
        HD = self.HD
        qg = (self.w(a_ + "q_proj.weight") @ x).view(self.NH, 2 * HD)
        q, gate = qg[:, :HD], qg[:, HD:].reshape(-1)
        k = (self.w(a_ + "k_proj.weight") @ x).view(self.NKV, HD)
        v = (self.w(a_ + "v_proj.weight") @ x).view(self.NKV, HD)
        q = self.rotate(self.norm(q, self.w(a_ + "q_norm.weight")), pos)
        k = self.rotate(self.norm(k, self.w(a_ + "k_norm.weight")), pos)
        st["k"].append(k)
        st["v"].append(v)
        keys, values = torch.stack(st["k"]), torch.stack(st["v"])  # (S, NKV, HD)
        heads = []
        for hh in range(self.NH):
            kv = hh // (self.NH // self.NKV)
            s = (keys[:, kv] @ q[hh]) / math.sqrt(HD)
            e = torch.exp(s - s.max())
            heads.append((e / e.sum()) @ values[:, kv])
        o = torch.cat(heads)
        if not self.attn_output_gate:
            o = o / (1.0 + torch.exp(-gate))
        return self.w(a_ + "o_proj.weight") @ o

    def expert(self, pre, e, x):
        if e == "shared":
            gate, up, down = (self.p[pre + "shared_expert.%s_proj.weight" % n] for n in ("gate", "up", "down"))
        elif self.stacked:
            gate_up, down = self.p[pre + "experts.gate_up_proj"][e], self.p[pre + "experts.down_proj"][e]
            F_ = gate_up.shape[0] // 2
            gate, up = (gate_up[F_:], gate_up[:F_]) if self.gate_up_swapped else (gate_up[:F_], gate_up[F_:])
        else:
            gate, up, down = (self.p[pre + "experts.%d.%s_proj.weight" % (e, n)] for n in ("gate", "up", "down"))
        h = gate @ x
        return down @ (h * torch.sigmoid(h) * (up @ x))

    def mlp(self, l, x):
        pre = self.prefix + "layers.%d.mlp." % l
        if not self.moe_layers[l]:
            return self.dense(pre, x)
        logits = self.p[pre + "gate.weight"] @ x
        if self.router_calls is not None:
            self.router_calls.append((l, logits))
        e = torch.exp(logits - logits.max())
        probs = e / e.sum()
        order = torch.sort(probs, descending=True).indices[:self.k]
        weights = probs[order]
        if self.renormalise and not self.router_unnormalised:
            weights = weights / weights.sum()
        out = torch.zeros_like(x)
        for wgt, ex in zip(weights, order.tolist()):
            out = out + wgt * self.expert(pre, ex, x)
        shared = self.expert(pre, "shared", x)
        gate = 1.0 if self.shared_expert_gate else torch.sigmoid(self.p[pre + "shared_expert_gate.weight"] @ x)
        return out + gate * shared

    def dense(self, pre, x):
        h = self.p[pre + "gate_proj.weight"] @ x
        return self.p[pre + "down_proj.weight"] @ (h * torch.sigmoid(h) * (self.p[pre + "up_proj.weight"] @ x))

    def step(self, state, token, pos):
        """One token through every layer, the state updated: (logits (V,), hidden (L+1 tensors (H,)))."""
        x = self.w("embed_tokens.weight")[token]
        hidden = [x]
        for l in range(self.L):
            h = self.norm(x, self.w("layers.%d.input_layernorm.weight" % l))
            if self.types[l] == "linear_attention":
                x = x + self.linear_step(l, h, state[l], pos)
            else:
                x = x + self.attention_step(l, h, state[l], pos)
            x = x + self.mlp(l, self.norm(x, self.w("layers.%d.post_attention_layernorm.weight" % l)))
            hidden.append(x)
        hidden[-1] = self.norm(x, self.w("norm.weight"))
        head = self.w("embed_tokens.weight") if self.tied else self.p["lm_head.weight"]
        return head @ hidden[-1], hidden

    def forward(self, ids, state=None):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)), the state after them)."""
        state = self.new_state() if state is None else state
        logits, hidden = [], []
        for pos, t in enumerate(ids):
            lg, hs = self.step(state, t, pos)
            logits.append(lg)
            hidden.append(hs)
        return torch.stack(logits), [torch.stack(x) for x in zip(*hidden)], state


def hybrid_expected_tensors(m, cfg):
    """name -> shape of every tensor a hybrid fixture must hold (the stand-ins by prefix only)."""
    H, V, QD, KD = m.H, m.c["vocab_size"], m.NH * m.HD, m.NKV * m.HD
    NK, NV, DK, DV = m.NK, m.NV, m.DK, m.DV
    pre = m.prefix
    want = {pre + "embed_tokens.weight": (V, H), pre + "norm.weight": (H,)}
    if not m.tied:
        want["lm_head.weight"] = (V, H)
    for l in range(m.L):
        x = pre + "layers.%d." % l
        want.update({x + "input_layernorm.weight": (H,), x + "post_attention_layernorm.weight": (H,)})
        if m.types[l] == "linear_attention":
            a = x + "linear_attn."
            if m.arch == "Qwen3NextForCausalLM":
                want.update({a + "in_proj_qkvz.weight": (2 * NK * DK + 2 * NV * DV, H),
                             a + "in_proj_ba.weight": (2 * NV, H)})
            else:
                want.update({a + "in_proj_qkv.weight": (2 * NK * DK + NV * DV, H), a + "in_proj_z.weight": (NV * DV, H),
                             a + "in_proj_b.weight": (NV, H), a + "in_proj_a.weight": (NV, H)})
            want.update({a + "conv1d.weight": (2 * NK * DK + NV * DV, 1, m.K), a + "A_log": (NV,), a + "dt_bias": (NV,),
                         a + "norm.weight": (DV,), a + "out_proj.weight": (H, NV * DV)})
        else:
            a = x + "self_attn."
            want.update({a + "q_proj.weight": (2 * QD, H), a + "k_proj.weight": (KD, H), a + "v_proj.weight": (KD, H),
                         a + "o_proj.weight": (H, QD), a + "q_norm.weight": (m.HD,), a + "k_norm.weight": (m.HD,)})
        mp = x + "mlp."
        if m.moe_layers[l]:
            Fm, Fs, E = m.c["moe_intermediate_size"], m.c["shared_expert_intermediate_size"], m.E
            want.update({mp + "gate.weight": (E, H), mp + "shared_expert.gate_proj.weight": (Fs, H),
                         mp + "shared_expert.up_proj.weight": (Fs, H), mp + "shared_expert.down_proj.weight": (H, Fs),
                         mp + "shared_expert_gate.weight": (1, H)})
            if m.stacked:
                want.update({mp + "experts.gate_up_proj": (E, 2 * Fm, H), mp + "experts.down_proj": (E, H, Fm)})
            else:
                for e in range(E):
                    want.update({mp + "experts.%d.gate_proj.weight" % e: (Fm, H),
                                 mp + "experts.%d.up_proj.weight" % e: (Fm, H),
                                 mp + "experts.%d.down_proj.weight" % e: (H, Fm)})
        else:
            F_ = m.c["intermediate_size"]
            want.update({mp + "gate_proj.weight": (F_, H), mp + "up_proj.weight": (F_, H),
                         mp + "down_proj.weight": (H, F_)})
    return want


def check_hybrid_delta_rule_forms():
    """reference's chunked and recurrent gated delta rule on random inputs (some heads with decays near 1, T = 150 over
    three chunks, from a nonzero initial state) against a float64 per-token loop written here: both within 2e-6, final
    states too."""
    g_ = torch.Generator().manual_seed(7)
    B, T, NV, DK, DV = 2, 150, 3, 8, 5
    q = torch.nn.functional.normalize(torch.randn(B, T, NV, DK, generator=g_), dim=-1)
    k = torch.nn.functional.normalize(torch.randn(B, T, NV, DK, generator=g_), dim=-1)
    v = torch.randn(B, T, NV, DV, generator=g_)
    g = -torch.rand(B, T, NV, generator=g_) * torch.tensor([0.01, 0.3, 2.0])
    beta = torch.rand(B, T, NV, generator=g_)
    s0 = torch.randn(B, NV, DK, DV, generator=g_) * 0.3
    S = s0.double().clone()
    want = torch.zeros(B, T, NV, DV, dtype=torch.float64)
    for t in range(T):
        for b in range(B):
            for j in range(NV):
                S[b, j] = S[b, j] * math.exp(float(g[b, t, j]))
                kk, vv = k[b, t, j].double(), v[b, t, j].double()
                S[b, j] = S[b, j] + float(beta[b, t, j]) * torch.outer(kk, vv - S[b, j].T @ kk)
                want[b, t, j] = S[b, j].T @ (q[b, t, j].double() / math.sqrt(DK))
    oc, sc = ref.chunk_gated_delta_rule(q, k, v, g, beta, 64, s0)
    orr, sr = ref.recurrent_gated_delta_rule(q, k, v, g, beta, s0)
    d = [float((oc - want).abs().max()), float((orr - want).abs().max()), float((sc - S).abs().max()),
         float((sr - S).abs().max())]
    check(max(d) < 2e-6, "gated delta rule: reference's chunked (64) and recurrent forms = a float64 per-token loop, "
          "from a nonzero state over 150 tokens (%.1e, %.1e; states %.1e, %.1e)" % tuple(d))


def check_hybrid(name, spec, p, g, st):
    cfg = fixture_config(name)
    m = HybridCheck(cfg, p)
    model = g["model"]
    text = cfg.get("text_config", cfg)
    # the files: exactly the family's tensors with their shapes, plus the stand-ins
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    want = hybrid_expected_tensors(m, cfg)
    stand_ins = sorted(n for n in stored if n.startswith(("mtp.", "model.visual.")))
    shapes = {n: tuple(t.shape) for n, (_, t) in stored.items() if n not in stand_ins}
    visual = any(n.startswith("model.visual.") for n in stand_ins)
    check(shapes == want and any(n.startswith("mtp.") for n in stand_ins) and
          visual == (m.arch != "Qwen3NextForCausalLM"),
          "%s: the files hold exactly %s's tensors (%d; linear_attn.* on layers %s, self_attn.* on %s, %s experts) "
          "plus %d stand-ins (mtp.*%s)" % (
              name, m.arch, len(want), [l for l in range(m.L) if m.types[l] == "linear_attention"],
              [l for l in range(m.L) if m.types[l] == "full_attention"],
              "no" if not any(m.moe_layers) else "stacked" if m.stacked else "per-expert", len(stand_ins),
              ", model.visual.*" if visual else ""))
    dtypes = {stored[n][0] for n in stored if n.endswith(("A_log",))}
    check(dtypes == {"F32"}, "%s: A_log stored F32 (%s)" % (name, sorted(dtypes)))
    # config spelling and reference.Spec's reading
    if m.arch == "Qwen3NextForCausalLM":
        spelling = ("layer_types" not in text and "full_attention_interval" in text and "rope_theta" in text and
                    "partial_rotary_factor" in text and "torch_dtype" in text and "rope_parameters" not in text)
    else:
        spelling = ("layer_types" in text and "full_attention_interval" in text and "rope_parameters" in text and
                    "rope_theta" not in text and "dtype" in text and text.get("attn_output_gate") is True and
                    "text_config" in cfg and cfg["tie_word_embeddings"] == text["tie_word_embeddings"])
    check(spelling, "%s: config.json in the spelling it stands for (%s)" % (
        name, "the Qwen3-Next release's: full_attention_interval, no layer_types, rope_theta + partial_rotary_factor"
        if m.arch == "Qwen3NextForCausalLM" else "transformers 5's: text_config, layer_types listed beside "
        "full_attention_interval, rope_parameters with the mrope keys, attn_output_gate"))
    inv = 1.0 / m.theta ** (torch.arange(0, m.R, 2, dtype=torch.int64).float() / m.R)
    same = (spec.layer_linear == [t == "linear_attention" for t in m.types] and spec.R == m.R and
            float(spec.theta) == m.theta and bool(torch.equal(spec.inv_freq, inv)) and spec.layer_moe == m.moe_layers
            and spec.tied == m.tied and spec.eps == m.eps and model["layer_types"] == m.types and
            model["rotary_dim"] == m.R and (not spec.num_experts or (spec.expert_naming == "stacked") == m.stacked))
    check(same, "%s: reference.Spec and golden.json read the layer types %s, rotary_dim %d of %d, theta %g, the MoE "
          "layers %s and the expert layout as HybridCheck does" % (name, m.types, m.R, m.HD, m.theta, m.moe_layers))
    # the outputs, every token through the decoding state
    logits_last, hidden_last, states = [], [], []
    for i, e in enumerate(g["prompts"]):
        logits, hidden, state = m.forward(e["input_ids"])
        logits_last.append(logits[-1])
        hidden_last.append(torch.stack([x[-1] for x in hidden]))
        states.append((state, logits[-1]))
        if i == 0:
            d0 = float((logits - st["logits_all_0"]).abs().max())
    d1 = float((torch.stack(logits_last) - st["logits_last"]).abs().max())
    d2 = float((torch.stack(hidden_last) - st["hidden_last"]).abs().max())
    check(max(d0, d1, d2) < 1e-4, "%s: HybridCheck (token by token: conv window, recurrent state S, KV cache) "
          "logits_last, hidden_last, logits_all_0 within 1e-4 (%.2e, %.2e, %.2e)" % (name, d1, d2, d0))
    same = True
    for e, (state, last) in zip(g["prompts"], states):
        out, pos = [], len(e["input_ids"])
        nxt = int(last.argmax())
        for _ in range(len(e["greedy_ids"])):
            out.append(nxt)
            nxt = int(m.step(state, nxt, pos)[0].argmax())
            pos += 1
        same &= out == e["greedy_ids"]
    check(same, "%s: HybridCheck greedy decoding from its state after each prompt (one token at a time) = golden "
          "greedy ids" % name)
    # the routers
    if any(m.moe_layers):
        m.router_calls = []
        gaps, gen_gaps, last_ok = [], [], True
        for e in g["prompts"]:
            n = len(e["input_ids"])
            m.router_calls = []
            m.forward(e["input_ids"] + e["greedy_ids"][:-1])
            for l in range(m.L):
                if not m.moe_layers[l]:
                    continue
                probs = torch.stack([torch.softmax(x, dim=-1) for ll, x in m.router_calls if ll == l])
                top = probs.sort(dim=-1, descending=True).values
                gap = top[:, m.k - 1] - top[:, m.k]
                gaps.append(float(gap[:n].min()))
                gen_gaps.append(float(gap[n:].min()))
                last_ok &= probs[n - 1].sort(descending=True).indices[:m.k].tolist() == e["expert_ids_last"][l]
        m.router_calls = None
        ok = (abs(min(gaps) - model["routing_min_gap"]) < 1e-5 and
              abs(min(gen_gaps) - model["routing_min_gap_generated"]) < 1e-5 and
              min(gaps + gen_gaps) >= 1e-3 and last_ok)
        check(ok, "%s: HybridCheck's own router gives golden.json's routing gaps (%.6f, generated %.6f, >= 1e-3) and "
              "expert_ids_last" % (name, min(gaps), min(gen_gaps)))
    # the what-ifs
    expected = [k for k in HybridCheck.WHAT_IFS if
                not (k == "head_map_tiled" and m.NV == m.NK) and
                not (k == "qkvz_blocks" and m.arch != "Qwen3NextForCausalLM") and
                not (k in ("router_unnormalised", "shared_expert_gate") and not any(m.moe_layers)) and
                not (k == "gate_up_swapped" and not m.stacked)]
    ids = g["prompts"][4]["input_ids"]
    check_what_if_effects(name, "HybridCheck", model, {k: (k, True) for k in expected}, lambda: HybridCheck(cfg, p),
                          ids)
    # refusals: what transformers would not run as reference.py does (or a reader of the key would run otherwise)
    def refused(change):
        c2 = json.loads(json.dumps(cfg))
        change(c2.get("text_config", c2))
        try:
            ref.Spec(c2)
        except ValueError:
            return True
        return False
    flipped = ["full_attention" if t == "linear_attention" else "linear_attention" for t in m.types]
    every = text.get("full_attention_interval", 4)
    cases = {"attn_output_gate false": lambda c: c.update(attn_output_gate=False),
             "layer_types against full_attention_interval": lambda c: c.update(layer_types=flipped,
                                                                                 full_attention_interval=every),
             "rope_scaling yarn": lambda c: c.update(rope_scaling={"rope_type": "yarn", "factor": 4.0}),
             "hidden_act gelu": lambda c: c.update(hidden_act="gelu_pytorch_tanh"),
             "attention_bias": lambda c: c.update(attention_bias=True),
             "odd rotary_dim": lambda c: (c["rope_parameters"] if "rope_parameters" in c else c).update(
                 partial_rotary_factor=3 / m.HD)}
    if m.arch != "Qwen3NextForCausalLM":
        cases["mrope_interleaved false"] = lambda c: c["rope_parameters"].update(mrope_interleaved=False)
        cases["mrope_section not adding up to rotary_dim / 2"] = lambda c: c["rope_parameters"].update(
            mrope_section=[m.R // 2, 1, 1])
    if m.arch == "Qwen3_5MoeForConditionalGeneration":
        cases["norm_topk_prob false"] = lambda c: c.update(norm_topk_prob=False)
    wrong = [k for k, f in cases.items() if not refused(f)]
    check(not wrong, "%s: reference.Spec refuses %s%s" % (
        name, ", ".join(cases), " (accepted: %s)" % wrong if wrong else ""))
    ids = torch.tensor([g["prompts"][4]["input_ids"]])
    want = ref.forward(spec, p, ids, capture=False)[0]
    # the other config spelling: the release's flat keys <-> transformers 5's rope_parameters and listed layer_types
    if m.arch == "Qwen3NextForCausalLM":
        other = {k: v for k, v in cfg.items() if k not in ("rope_theta", "partial_rotary_factor", "rope_scaling",
                                                             "torch_dtype", "full_attention_interval")}
        other.update(dtype=cfg["torch_dtype"], layer_types=m.types, transformers_version="5.2.0",
                     rope_parameters={"partial_rotary_factor": cfg["partial_rotary_factor"],
                                      "rope_theta": cfg["rope_theta"], "rope_type": "default"})
    else:
        t2 = {k: v for k, v in text.items() if k not in ("rope_parameters", "layer_types")}
        t2.update(rope_theta=text["rope_parameters"]["rope_theta"],
                  partial_rotary_factor=text["rope_parameters"]["partial_rotary_factor"])
        other = dict(cfg, text_config=t2)
    s2 = ref.Spec(other)
    if spec.num_experts:
        s2.expert_naming = spec.expert_naming
    same = (s2.layer_linear == spec.layer_linear and s2.R == spec.R and s2.theta == spec.theta and
            bool(torch.equal(ref.forward(s2, p, ids, capture=False)[0], want)))
    check(same, "%s: config.json in the other spelling (%s) gives the same layer types, RoPE and logits" % (
        name, "transformers 5's rope_parameters, layer_types listed" if m.arch == "Qwen3NextForCausalLM" else
        "rope_theta / partial_rotary_factor at the top of text_config, no layer_types: from full_attention_interval"))
    # the other expert layout: per expert <-> stacked (E, 2F, H) / (E, H, F)
    if spec.num_experts:
        p2 = {n: t for n, t in p.items() if ".mlp.experts." not in n}
        for l in range(m.L):
            x = m.prefix + "layers.%d.mlp.experts." % l
            if m.stacked:  # -> mlp.experts.{e}.gate_proj / up_proj (the halves of gate_up_proj[e]) / down_proj
                gate_up, down = p[x + "gate_up_proj"], p[x + "down_proj"]
                F_ = gate_up.shape[1] // 2
                for e in range(m.E):
                    p2[x + "%d.gate_proj.weight" % e] = gate_up[e, :F_]
                    p2[x + "%d.up_proj.weight" % e] = gate_up[e, F_:]
                    p2[x + "%d.down_proj.weight" % e] = down[e]
            else:  # -> gate_up_proj (E, 2F, H), down_proj (E, H, F)
                p2[x + "gate_up_proj"] = torch.stack([torch.cat((p[x + "%d.gate_proj.weight" % e],
                                                                 p[x + "%d.up_proj.weight" % e])) for e in range(m.E)])
                p2[x + "down_proj"] = torch.stack([p[x + "%d.down_proj.weight" % e] for e in range(m.E)])
        s3 = ref.Spec(spec.cfg)
        ref.hybrid_expert_layout(s3, p2)
        got = ref.forward(s3, p2, ids, capture=False)[0]
        own = HybridCheck(cfg, p2).forward(g["prompts"][4]["input_ids"])[0]
        d3 = float((own - want).abs().max())
        check(s3.expert_naming != spec.expert_naming and bool(torch.equal(got, want)) and d3 < 1e-4,
              "%s: the experts in the other layout (%s) give the same logits (reference exactly, HybridCheck %.2e)" % (
                  name, s3.expert_naming, d3))
    # the chunked form HF runs whole sequences with (and the golden files hold) against its recurrent form
    rec = copy.copy(spec)
    rec.linear_recurrent = True
    diff = max(float((ref.forward(spec, p, torch.tensor([e["input_ids"]]), capture=False)[0] -
                      ref.forward(rec, p, torch.tensor([e["input_ids"]]), capture=False)[0]).abs().max())
               for e in g["prompts"])
    recorded = model["linear_chunked_vs_recurrent"]
    check(diff <= 5e-5 and abs(diff - recorded) <= 0.01 * recorded,
          "%s: reference's recurrent form of the gated delta rule (whole prompts, token by token) = the chunked one "
          "within 5e-5 over every position's logits (%.2e = golden.json's linear_chunked_vs_recurrent)" % (name, diff))


class GemmaCheck(LlamaCheck):
    """GemmaForCausalLM's forward pass again (Gemma 1), from models/gemma/modeling_gemma.py and configuration_gemma.py,
    sharing nothing with reference.py but the safetensors reader: LlamaCheck's F.linear and complex-number RoPE, its own
    loop and layer: GemmaModel.forward's normalizer (sqrt(hidden_size) as a tensor of the hidden states' dtype: config's
    torch_dtype, bf16 here), GemmaRMSNorm (x / sqrt(mean(x^2) + eps) times (1 + w)), GemmaDecoderLayer (Llama's pre-norm
    order), per-head attention with an explicit mask and a hand-written softmax at head_dim^-0.5, GemmaMLP with the
    activation GemmaMLP.__init__ takes (4.39-4.47: hidden_activation, else gelu_pytorch_tanh whatever hidden_act says)
    written out as 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the tied head. What-ifs (attributes changed after
    __init__, golden_models.gemma_what_ifs / gemma_soft_what_ifs' names): `norm_plain_w`, `embed_scale` (none),
    `activation_silu`, `gelu_exact` (0.5 x (1 + erf(x / sqrt 2))), `embed_scale_fp32`; each False, True where it is the
    mistake."""

    # GemmaConfig's defaults of the keys read here
    DEFAULTS = dict(num_key_value_heads=16, head_dim=256, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
                    attention_bias=False, mlp_bias=False, tie_word_embeddings=True, hidden_activation=None)
    WHAT_IFS = ("norm_plain_w", "embed_scale", "activation_silu", "gelu_exact", "embed_scale_fp32")

    def __init__(self, cfg, p):
        super().__init__(cfg, p)
        if self.qkv_bias or not self.c["tie_word_embeddings"]:
            raise ValueError("GemmaCheck: attention_bias %r, tie_word_embeddings %r" % (
                self.qkv_bias, self.c["tie_word_embeddings"]))
        self.act = self.c["hidden_activation"] or "gelu_pytorch_tanh"
        if self.act != "gelu_pytorch_tanh":
            raise ValueError("GemmaCheck: hidden_activation %r" % self.act)
        self.dtype = getattr(torch, self.c["torch_dtype"])
        for key in self.WHAT_IFS:
            setattr(self, key, False)

    def rms(self, x, w):  # GemmaRMSNorm: (x / rms) * (1 + w) in fp32
        return (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.c["rms_norm_eps"])) * (
            w if self.norm_plain_w else 1.0 + w)

    def gelu(self, x):
        if self.activation_silu:
            return x / (1.0 + torch.exp(-x))
        if self.gelu_exact:
            return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))

    def layer(self, l, h, angles):
        pre, HD, T = "model.layers.%d." % l, self.HD, h.shape[0]
        x = self.rms(h, self.p[pre + "input_layernorm.weight"])
        q = self.linear(x, pre + "self_attn.q_proj", False).view(T, self.NH, HD)
        k = self.linear(x, pre + "self_attn.k_proj", False).view(T, self.NKV, HD)
        v = self.linear(x, pre + "self_attn.v_proj", False).view(T, self.NKV, HD)
        q, k = self.rotary(q, angles), self.rotary(k, angles)
        h = h + self.linear(attend_heads(q, k, v, torch.ones(T, T, dtype=torch.bool).tril()), pre + "self_attn.o_proj",
                            False)
        x = self.rms(h, self.p[pre + "post_attention_layernorm.weight"])
        gate = self.linear(x, pre + "mlp.gate_proj", False)
        return h + self.linear(self.gelu(gate) * self.linear(x, pre + "mlp.up_proj", False), pre + "mlp.down_proj",
                               False)

    def normalizer(self):
        if self.embed_scale:
            return 1.0
        scale = torch.tensor(self.H ** 0.5, dtype=torch.float32)
        return float(scale if self.embed_scale_fp32 else scale.to(self.dtype))

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p = self.p
        inv_freq = 1.0 / self.c["rope_theta"] ** (torch.arange(0, self.HD, 2, dtype=torch.float32) / self.HD)
        angles = torch.outer(torch.arange(len(ids), dtype=torch.float32), inv_freq)
        h = p["model.embed_tokens.weight"][torch.tensor(ids)] * self.normalizer()
        hidden = [h]
        for l in range(self.L):
            h = self.layer(l, h, angles)
            hidden.append(h)
        hidden[-1] = self.rms(h, p["model.norm.weight"])
        return hidden[-1] @ p["model.embed_tokens.weight"].T, hidden


def check_gemma1(name, spec, p, g, st):
    cfg, m = open_check(name, GemmaCheck, p, g, st)
    model = g["model"]
    # the files: exactly Llama's tensors (no sandwich norms, no q/k norms, no lm_head), all BF16
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    want = {"model.embed_tokens.weight": (spec.V, m.H), "model.norm.weight": (m.H,)}
    for l in range(m.L):
        x = "model.layers.%d." % l
        want.update({x + "input_layernorm.weight": (m.H,), x + "post_attention_layernorm.weight": (m.H,),
                     x + "self_attn.q_proj.weight": (m.NH * m.HD, m.H),
                     x + "self_attn.k_proj.weight": (m.NKV * m.HD, m.H),
                     x + "self_attn.v_proj.weight": (m.NKV * m.HD, m.H),
                     x + "self_attn.o_proj.weight": (m.H, m.NH * m.HD),
                     x + "mlp.gate_proj.weight": (cfg["intermediate_size"], m.H),
                     x + "mlp.up_proj.weight": (cfg["intermediate_size"], m.H),
                     x + "mlp.down_proj.weight": (m.H, cfg["intermediate_size"])})
    same = ({n: tuple(v[1].shape) for n, v in stored.items()} == want and
            {v[0] for v in stored.values()} == {"BF16"})
    check(same, "%s: the files hold exactly Gemma 1's %d tensors (q_proj (%d x %d, %d): q width %d != hidden %d; no "
          "lm_head, no sandwich or q/k norms), all BF16" % (name, len(want), m.NH, m.HD, m.H, m.NH * m.HD, m.H))
    # config.json as google/gemma-7b-it's: hidden_act "gelu", no hidden_activation, head_dim listed, no
    # tie_word_embeddings key (default true), rope_scaling null
    spelling = (cfg["hidden_act"] == "gelu" and "hidden_activation" not in cfg and "head_dim" in cfg and
                "tie_word_embeddings" not in cfg and cfg.get("rope_scaling", 0) is None and
                cfg["model_type"] == "gemma" and cfg["head_dim"] != cfg["hidden_size"] // cfg["num_attention_heads"])
    check(spelling, "%s: config.json in gemma-7b-it's spelling (hidden_act gelu and no hidden_activation, head_dim %d "
          "!= hidden / heads %d, no tie_word_embeddings key, rope_scaling null)" % (
              name, cfg["head_dim"], cfg["hidden_size"] // cfg["num_attention_heads"]))
    scale = float(torch.tensor(m.H ** 0.5).to(torch.bfloat16))
    same = (spec.act == "gelu_tanh" and spec.norm_offset and not spec.sandwich_norms and spec.embed_scale == scale ==
            model["embed_scale"] and spec.attn_scale == m.HD ** -0.5 == model["attn_scale"] and spec.tied and
            spec.attn_softcap is None and spec.final_softcap is None and not any(spec.layer_sliding) and
            spec.HD == m.HD and spec.NKV == m.NKV == 1)
    check(same, "%s: reference.Spec and golden.json read GeGLU with gelu_pytorch_tanh, (1 + w) norms in Llama's order, "
          "embed scale bf16(sqrt(%d)) = %g, score scale head_dim^-0.5 = %g, tied, no softcap / window, 1 kv head" % (
              name, m.H, scale, m.HD ** -0.5))
    ids = g["prompts"][4]["input_ids"]
    want_logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    # Gemma 1.1's spelling (hidden_activation listed) reads the same; the values reference.py does not run are refused
    c2 = dict(cfg, hidden_activation="gelu_pytorch_tanh")
    same = bool(torch.equal(ref.forward(ref.Spec(c2), p, torch.tensor([ids]), capture=False)[0], want_logits))
    check(same, "%s: config.json with hidden_activation gelu_pytorch_tanh (gemma-1.1's spelling) gives the same "
          "logits" % name)

    def refused(change):
        try:
            ref.Spec(dict(cfg, **change))
        except ValueError:
            return True
        return False
    cases = {"hidden_activation gelu": {"hidden_activation": "gelu"}, "attention_bias": {"attention_bias": True},
             "rope_scaling linear": {"rope_scaling": {"rope_type": "linear", "factor": 2.0}},
             "use_bidirectional_attention": {"use_bidirectional_attention": True}}
    wrong = [k for k, c in cases.items() if not refused(c)]
    check(not wrong, "%s: reference.Spec refuses %s%s" % (name, ", ".join(cases),
                                                          " (accepted: %s)" % wrong if wrong else ""))
    # the what-ifs: the larger ones (> 1e-2) within 1e-3; the two small readings (exact GELU, the fp32 scale) within
    # 1 % of golden.json's value and above the tests' 1e-4, their greedy ids changed on as many prompts
    keys = sorted(k[:-len("_effect_prompt4")] for k in model if k.endswith("_effect_prompt4"))
    check(keys == sorted(GemmaCheck.WHAT_IFS), "%s: golden.json has exactly the what-ifs %s" % (
        name, ", ".join(GemmaCheck.WHAT_IFS)))
    base = m.forward(ids)[0]
    worst, lows, soft = 0.0, [], []
    for key in keys:
        setattr(m, key, True)
        effect = float((m.forward(ids)[0] - base).abs().max())
        if key in ("gelu_exact", "embed_scale_fp32"):
            changed = 0
            for e in g["prompts"]:
                seq, out = list(e["input_ids"]), []
                for _ in e["greedy_ids"]:
                    out.append(int(m.forward(seq)[0][-1].argmax()))
                    seq.append(out[-1])
                changed += out != e["greedy_ids"]
            soft.append(abs(effect - model[key + "_effect_prompt4"]) <= 0.01 * effect and effect > 1e-4 and
                        changed == model[key + "_greedy_prompts_changed"])
            lows.append(effect * 1e2)
        else:
            worst = max(worst, abs(effect - model[key + "_effect_prompt4"]))
            lows.append(effect)
        setattr(m, key, False)
    check(worst < 1e-3 and min(lows) > 1e-2 and all(soft),
          "%s: GemmaCheck reproduces each *_effect_prompt4 (%s; worst %.1e) and, for gelu_exact (%.3g) and "
          "embed_scale_fp32 (%.3g), the count of prompts whose greedy ids they change (%d, %d)" % (
              name, ", ".join("%s %.4g" % (k, model[k + "_effect_prompt4"]) for k in keys), worst,
              model["gelu_exact_effect_prompt4"], model["embed_scale_fp32_effect_prompt4"],
              model["gelu_exact_greedy_prompts_changed"], model["embed_scale_fp32_greedy_prompts_changed"]))


class Qwen3VLMoeCheck:
    """Qwen3VLMoeForConditionalGeneration's language model again, from models/qwen3_vl_moe/modeling_qwen3_vl_moe.py and
    configuration_qwen3_vl_moe.py as transformers 4.57 has them (the version the releases were saved with), sharing
    nothing with reference.py but the safetensors reader: text_config read with Qwen3VLMoeTextConfig's defaults;
    Qwen3VLMoeTextRotaryEmbedding with three position rows (t, h, w), equal for text, and apply_interleaved_mrope
    (every third frequency from rows 1 and 2), as complex rotations of the pairs (i, i + HD/2); Qwen3VLMoeTextRMSNorm
    (plain w) and the q/k norms over head_dim; per-head attention with a hand-written softmax; the decoder layers by
    Qwen3VLMoeTextDecoderLayer's rule (mlp_only_layers, decoder_sparse_step); Qwen3VLMoeTextSparseMoeBlock.forward's
    router (softmax in fp32, torch.topk, divided by the sum, scattered into a dense (tokens, E) weight matrix) and
    Qwen3VLMoeTextExperts.forward's inference branch as written there: the tokens repeated for every expert, torch.bmm
    with gate_up_proj (E, H, 2F), gate_up.chunk(2, dim=-1), torch.bmm with down_proj (E, F, H), times the routing
    weights, summed over the experts. `v5`: the experts as transformers 5 runs them instead (conversion_mapping.py's
    Transpose(1, 2) to (E, 2F, H) / (E, H, F), then Qwen3MoeExperts' per-expert F.linear loop). What-ifs (attributes
    changed after __init__, golden_models.qwen3_vl_moe_what_ifs' names): `router_unnormalised`, `gate_up_swapped`,
    `gate_up_interleaved`, `experts_untransposed` (the stored bytes viewed as (E, 2F, H) / (E, H, F), then
    transformers 5's F.linear); each False, True where it is the mistake. `router_calls`: None, or a list that receives
    (layer, router logits (T, E)) per MoE call."""

    # Qwen3VLMoeTextConfig's defaults of the keys read here (4.57)
    DEFAULTS = dict(num_key_value_heads=16, head_dim=None, rms_norm_eps=1e-6, rope_theta=5000000.0, rope_scaling=None,
                    attention_bias=False, decoder_sparse_step=1, moe_intermediate_size=1408, num_experts_per_tok=4,
                    num_experts=60, mlp_only_layers=None, hidden_act="silu")
    WHAT_IFS = ("router_unnormalised", "gate_up_swapped", "gate_up_interleaved", "experts_untransposed")

    def __init__(self, cfg, p):
        text = cfg["text_config"]
        c = dict(self.DEFAULTS, **text)
        if c["attention_bias"] or c["hidden_act"] != "silu":
            raise ValueError("Qwen3VLMoeCheck: attention_bias %r, hidden_act %r" % (c["attention_bias"],
                                                                                   c["hidden_act"]))
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV, self.eps = c["num_key_value_heads"], c["rms_norm_eps"]
        self.HD = c["head_dim"] or self.H // self.NH
        rs = c["rope_scaling"] or {}
        self.section = rs.get("mrope_section", [24, 20, 20])  # Qwen3VLMoeTextRotaryEmbedding's default
        self.theta = float(c["rope_theta"])
        self.E, self.k = c["num_experts"], c["num_experts_per_tok"]
        only = c["mlp_only_layers"] or []
        self.moe_layers = [l not in only and self.E > 0 and (l + 1) % c["decoder_sparse_step"] == 0
                           for l in range(self.L)]
        # Qwen3VLMoeConfig: tie_word_embeddings at the top level (false by default)
        self.tied = text.get("tie_word_embeddings", cfg.get("tie_word_embeddings", False))
        self.prefix = "model.language_model."
        self.v5 = False
        for key in self.WHAT_IFS:
            setattr(self, key, False)
        self.router_calls = None

    def w(self, name):
        return self.p[self.prefix + name]

    def rms(self, x, weight):  # Qwen3VLMoeTextRMSNorm
        return weight * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    def angles(self, T):
        """(T, HD/2) rotation angles: Qwen3VLMoeTextRotaryEmbedding.forward with position_ids (3, 1, T), the text
        positions in each of the t, h, w rows (Qwen3VLMoeModel.get_rope_index without images), then
        apply_interleaved_mrope: `freqs_t[..., offset:length:3] = freqs[dim, ..., offset:length:3]` for dim 1, 2
        (length = mrope_section[dim] * 3)."""
        inv = 1.0 / self.theta ** (torch.arange(0, self.HD, 2, dtype=torch.int64).float() / self.HD)
        rows = torch.arange(T, dtype=torch.float32).expand(3, T)
        freqs = rows.unsqueeze(-1) * inv  # (3, T, HD/2)
        out = freqs[0].clone()
        for dim in (1, 2):
            out[:, dim:self.section[dim] * 3:3] = freqs[dim, :, dim:self.section[dim] * 3:3]
        return out

    def rotary(self, x, angles):  # rotate_half's pairs (i, i + HD/2) as complex numbers
        half = self.HD // 2
        z = torch.complex(x[..., :half], x[..., half:]) * torch.polar(torch.ones_like(angles), angles).unsqueeze(1)
        return torch.cat((z.real, z.imag), dim=-1)

    def attention(self, l, x, angles):
        a_, T = "layers.%d.self_attn." % l, x.shape[0]
        lin = torch.nn.functional.linear
        q = self.rms(lin(x, self.w(a_ + "q_proj.weight")).view(T, self.NH, self.HD), self.w(a_ + "q_norm.weight"))
        k = self.rms(lin(x, self.w(a_ + "k_proj.weight")).view(T, self.NKV, self.HD), self.w(a_ + "k_norm.weight"))
        v = lin(x, self.w(a_ + "v_proj.weight")).view(T, self.NKV, self.HD)
        o = attend_heads(self.rotary(q, angles), self.rotary(k, angles), v, torch.ones(T, T, dtype=torch.bool).tril())
        return lin(o, self.w(a_ + "o_proj.weight"))

    def experts(self, pre, x, routing):
        """x (T, H), routing (T, E) dense weights -> (T, H)."""
        gu, down = self.p[pre + "experts.gate_up_proj"], self.p[pre + "experts.down_proj"]
        E, T = self.E, x.shape[0]
        F2 = gu.shape[2]
        if self.v5 or self.experts_untransposed:
            # transformers 5: Qwen3MoeExperts' gate_up_proj (E, 2F, H) / down_proj (E, H, F) after the load-time
            # Transpose(1, 2) (the what-if: the stored bytes merely viewed in those shapes), F.linear per expert
            if self.experts_untransposed:
                gu5, down5 = gu.reshape(E, F2, self.H), down.reshape(E, self.H, F2 // 2)
            else:
                gu5, down5 = gu.transpose(1, 2), down.transpose(1, 2)
            out = torch.zeros_like(x)
            for e in range(E):
                tok = torch.nonzero(routing[:, e]).flatten()
                if len(tok):
                    gate, up = torch.nn.functional.linear(x[tok], gu5[e]).chunk(2, dim=-1)
                    y = torch.nn.functional.linear(torch.nn.functional.silu(gate) * up, down5[e])
                    out.index_add_(0, tok, y * routing[tok, e, None])
            return out
        # Qwen3VLMoeTextExperts.forward (4.57), not training: `hidden_states.repeat(self.num_experts, 1)`, bmm, chunk,
        # `up * self.act_fn(gate)`, bmm, `* routing_weights.transpose(0, 1)...[..., None]`, `.sum(dim=0)`
        xs = x.repeat(E, 1).view(E, T, self.H)
        gate_up = torch.bmm(xs, gu)
        if self.gate_up_interleaved:
            gate, up = gate_up[..., 0::2], gate_up[..., 1::2]
        elif self.gate_up_swapped:
            up, gate = gate_up.chunk(2, dim=-1)
        else:
            gate, up = gate_up.chunk(2, dim=-1)
        y = torch.bmm(up * (gate / (1.0 + torch.exp(-gate))), down)  # (E, T, H)
        return (y * routing.transpose(0, 1)[..., None]).sum(dim=0)

    def mlp(self, l, x):
        pre = self.prefix + "layers.%d.mlp." % l
        lin = torch.nn.functional.linear
        if not self.moe_layers[l]:  # Qwen3VLMoeTextMLP(intermediate_size)
            gate = lin(x, self.p[pre + "gate_proj.weight"])
            return lin(torch.nn.functional.silu(gate) * lin(x, self.p[pre + "up_proj.weight"]),
                       self.p[pre + "down_proj.weight"])
        logits = lin(x, self.p[pre + "gate.weight"])
        if self.router_calls is not None:
            self.router_calls.append((l, logits))
        probs = torch.nn.functional.softmax(logits, dim=-1, dtype=torch.float)
        top, chosen = torch.topk(probs, self.k, dim=-1)
        if not self.router_unnormalised:
            top = top / top.sum(dim=-1, keepdim=True)
        routing = torch.zeros_like(logits).scatter_(1, chosen, top)  # router_weights
        return self.experts(pre, x, routing)

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        angles = self.angles(len(ids))
        h = self.w("embed_tokens.weight")[torch.tensor(ids)]
        hidden = [h]
        for l in range(self.L):
            h = h + self.attention(l, self.rms(h, self.w("layers.%d.input_layernorm.weight" % l)), angles)
            h = h + self.mlp(l, self.rms(h, self.w("layers.%d.post_attention_layernorm.weight" % l)))
            hidden.append(h)
        hidden[-1] = self.rms(h, self.w("norm.weight"))
        head = self.w("embed_tokens.weight") if self.tied else self.p["lm_head.weight"]
        return hidden[-1] @ head.T, hidden


def check_qwen3_vl_moe(name, spec, p, g, st):
    cfg = fixture_config(name)
    text = cfg["text_config"]
    model = g["model"]
    m = Qwen3VLMoeCheck(cfg, p)
    check_against_golden(name, "Qwen3VLMoeCheck (experts by torch.bmm over (E, H, 2F) / (E, F, H))", m, g, st)
    ids = g["prompts"][4]["input_ids"]
    base = m.forward(ids)[0]
    # (1e-6 of the largest |logit|, at least 1e-5: the same products summed in other orders, as check_glm_interleaved's
    # bound; the untied head spreads the logits)
    bound = 1e-6 * max(10.0, float(base.abs().max()))
    m.v5 = True
    d5 = float((m.forward(ids)[0] - base).abs().max())
    m.v5 = False
    check(d5 < bound, "%s: the experts as transformers 5 runs them (Transpose(1, 2) to (E, 2F, H) / (E, H, F), "
          "F.linear per expert) give the same logits (%.2e, bound %.1e)" % (name, d5, bound))
    # the files: exactly Qwen3-VL-MoE's tensors, the experts fused and transposed, plus the model.visual.* stand-ins
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    H, HD, E, Fm, F_ = m.H, m.HD, m.E, text["moe_intermediate_size"], text["intermediate_size"]
    want = {m.prefix + "embed_tokens.weight": (spec.V, H), m.prefix + "norm.weight": (H,),
            "lm_head.weight": (spec.V, H)}
    for l in range(m.L):
        x = m.prefix + "layers.%d." % l
        want.update({x + "input_layernorm.weight": (H,), x + "post_attention_layernorm.weight": (H,),
                     x + "self_attn.q_proj.weight": (m.NH * HD, H), x + "self_attn.k_proj.weight": (m.NKV * HD, H),
                     x + "self_attn.v_proj.weight": (m.NKV * HD, H), x + "self_attn.o_proj.weight": (H, m.NH * HD),
                     x + "self_attn.q_norm.weight": (HD,), x + "self_attn.k_norm.weight": (HD,)})
        if m.moe_layers[l]:
            want.update({x + "mlp.gate.weight": (E, H), x + "mlp.experts.gate_up_proj": (E, H, 2 * Fm),
                         x + "mlp.experts.down_proj": (E, Fm, H)})
        else:
            want.update({x + "mlp.gate_proj.weight": (F_, H), x + "mlp.up_proj.weight": (F_, H),
                         x + "mlp.down_proj.weight": (H, F_)})
    shapes = {n: tuple(v[1].shape) for n, v in stored.items()}
    stand_ins = sorted(n for n in shapes if n.startswith("model.visual."))
    dtypes = {n: v[0] for n, v in stored.items() if n not in stand_ins}
    norms = {n for n in dtypes if n.endswith("norm.weight")}
    same = ({n: s for n, s in shapes.items() if n not in stand_ins} == want and len(stand_ins) == 3 and
            all(dtypes[n] == "F32" for n in norms) and all(dt == "BF16" for n, dt in dtypes.items() if n not in norms))
    check(same, "%s: the files hold exactly Qwen3-VL-MoE's %d tensors (MoE layers %s: mlp.gate (%d, %d), "
          "experts.gate_up_proj (%d, %d, %d), experts.down_proj (%d, %d, %d); dense layers %s; lm_head) plus %d "
          "model.visual.* stand-ins; BF16 matrices, F32 norms" % (
              name, len(want), [l for l in range(m.L) if m.moe_layers[l]], E, H, E, H, 2 * Fm, E, Fm, H,
              [l for l in range(m.L) if not m.moe_layers[l]], len(stand_ins)))
    # config.json as Qwen/Qwen3-VL-30B-A3B-Instruct's
    spelling = (cfg["model_type"] == "qwen3_vl_moe" and text["model_type"] == "qwen3_vl_moe_text" and
                cfg["tie_word_embeddings"] is False and "tie_word_embeddings" not in text and
                text["rope_scaling"] == {"mrope_interleaved": True, "mrope_section": m.section, "rope_type": "default"}
                and isinstance(text["rope_theta"], int) and text["norm_topk_prob"] is True and
                text["mlp_only_layers"] and "decoder_sparse_step" in text and "dtype" in text and
                text["head_dim"] != H // m.NH and cfg["vision_config"]["model_type"] == "qwen3_vl_moe")
    check(spelling, "%s: config.json in the release's spelling (text_config qwen3_vl_moe_text with rope_scaling "
          "{mrope_interleaved, mrope_section %s, rope_type default} beside rope_theta %d, mlp_only_layers %s, "
          "decoder_sparse_step, norm_topk_prob true; tie_word_embeddings false at the top only)" % (
              name, m.section, text["rope_theta"], text["mlp_only_layers"]))
    inv = 1.0 / m.theta ** (torch.arange(0, HD, 2, dtype=torch.int64).float() / HD)
    same = (spec.layer_moe == m.moe_layers == model["moe_layers"] and spec.expert_naming == "fused_transposed" and
            spec.mrope_section == m.section and spec.mrope_interleaved and float(spec.theta) == m.theta and
            bool(torch.equal(spec.inv_freq, inv)) and spec.tied == m.tied is False and spec.top_k == m.k and
            spec.norm_topk_prob and spec.prefix == m.prefix and spec.HD == HD and spec.qk_norm and
            not spec.shared_intermediate)
    check(same, "%s: reference.Spec and golden.json read the MoE layers %s, the fused transposed experts, mrope %s, "
          "theta %g, top-%d renormalised, untied, as Qwen3VLMoeCheck does" % (
              name, m.moe_layers, m.section, m.theta, m.k))
    # the routers
    gaps, gen_gaps, last_ok = [], [], True
    for e in g["prompts"]:
        n = len(e["input_ids"])
        m.router_calls = []
        m.forward(e["input_ids"] + e["greedy_ids"][:-1])
        for l, logits in m.router_calls:
            top = torch.softmax(logits, dim=-1).sort(dim=-1, descending=True)
            gap = top.values[:, m.k - 1] - top.values[:, m.k]
            gaps.append(float(gap[:n].min()))
            gen_gaps.append(float(gap[n:].min()))
            last_ok &= top.indices[n - 1, :m.k].tolist() == e["expert_ids_last"][l]
        last_ok &= all(e["expert_ids_last"][l] is None for l in range(m.L) if not m.moe_layers[l])
    m.router_calls = None
    ok = (abs(min(gaps) - model["routing_min_gap"]) < 1e-5 and
          abs(min(gen_gaps) - model["routing_min_gap_generated"]) < 1e-5 and min(gaps + gen_gaps) >= 1e-3 and last_ok)
    check(ok, "%s: Qwen3VLMoeCheck's own router gives golden.json's routing gaps (%.6f, generated %.6f, >= 1e-3) and "
          "expert_ids_last" % (name, min(gaps), min(gen_gaps)))
    # the what-ifs: the released tensors read otherwise
    check_what_if_effects(name, "Qwen3VLMoeCheck", model, {k: (k, True) for k in Qwen3VLMoeCheck.WHAT_IFS},
                          lambda: Qwen3VLMoeCheck(cfg, p), ids)
    # the other expert layout (per expert, what hf_check's split_fused_experts writes) and the refusals
    want_logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    p2 = {n: t for n, t in p.items() if ".mlp.experts." not in n}
    for l in range(m.L):
        if m.moe_layers[l]:
            x = m.prefix + "layers.%d.mlp.experts." % l
            for e in range(E):
                p2[x + "%d.gate_proj.weight" % e] = p[x + "gate_up_proj"][e, :, :Fm].T.contiguous()
                p2[x + "%d.up_proj.weight" % e] = p[x + "gate_up_proj"][e, :, Fm:].T.contiguous()
                p2[x + "%d.down_proj.weight" % e] = p[x + "down_proj"][e].T.contiguous()
    s2 = ref.Spec(spec.cfg)
    ref.qwen3_vl_moe_expert_layout(s2, p2)
    d2 = float((ref.forward(s2, p2, torch.tensor([ids]), capture=False)[0] - want_logits).abs().max())
    check(s2.expert_naming == "qwen" and d2 < bound, "%s: the experts per expert (mlp.experts.{e}.gate_proj = "
          "gate_up_proj[e][:, :F]^T, up_proj = [:, F:]^T, down_proj = down_proj[e]^T) give the same logits (%.2e, "
          "bound %.1e)" % (name, d2, bound))

    def refused(change=None, weights=None):
        c2 = json.loads(json.dumps(cfg))
        if change:
            c2["text_config"].update(change)
        try:
            s3 = ref.Spec(c2)
            if weights is not None:
                ref.qwen3_vl_moe_expert_layout(s3, weights)
        except ValueError:
            return True
        return False
    transposed = {n: (t.transpose(1, 2) if ".mlp.experts." in n else t) for n, t in p.items()}
    cases = {"norm_topk_prob false": refused({"norm_topk_prob": False}),
             "attention_bias": refused({"attention_bias": True}),
             "mrope_section not adding up to head_dim / 2": refused({"rope_scaling": dict(
                 text["rope_scaling"], mrope_section=[m.section[0] + 1] + m.section[1:])}),
             "experts saved as (E, 2F, H) / (E, H, F)": refused(weights=transposed),
             "both expert layouts": refused(weights=dict(p, **p2))}
    check_refusals(name, cases, "reference.Spec / load refuse")


class Ministral3Check(LlamaCheck):
    """Ministral 3's language model again (Mistral3ForConditionalGeneration with a text_config of model_type
    "ministral3"), from models/ministral3/modeling_ministral3.py, configuration_ministral3.py and
    modeling_rope_utils.py's _compute_yarn_parameters (transformers 5), sharing nothing with reference.py but the
    safetensors reader: text_config read with Ministral3Config's defaults (rope_parameters from __post_init__ when
    absent); the weights under model.language_model.* and lm_head.weight (transformers 5's save); LlamaCheck's F.linear
    and RMSNorm; YaRN's
    frequencies computed here per pair in Python floats (find_correction_range with truncate, linear_ramp_factor) and
    its attention factor from mscale / mscale_all_dim; the rotary pairs (i, i + HD/2) turned as complex numbers of that
    length; then each query (Ministral3Attention.forward, after apply_rotary_pos_emb) times _get_llama_4_attn_scale
    computed per position in Python, 1 + beta log(1 + position // period); per-head attention with an explicit mask and
    a hand-written softmax at head_dim^-0.5 (attend_heads); Mistral's (Llama's) pre-norm layer.
    What-ifs (attributes changed after __init__, golden_models.ministral3_what_ifs' names): `beta` (0: no scaling),
    `scale_keys`, `no_log`, `offset` (1: positions from 1), `plain_rope` (the default RoPE at rope_theta, factor 1),
    `yarn_default_factor` (0.1 ln(factor) + 1 on the rotation's length)."""

    # Ministral3Config's defaults of the keys read here (transformers 5)
    DEFAULTS = dict(num_key_value_heads=8, head_dim=128, rms_norm_eps=1e-5, tie_word_embeddings=False,
                    sliding_window=None, max_position_embeddings=262144,
                    rope_parameters={"type": "yarn", "rope_theta": 1000000.0, "factor": 16.0,
                                     "original_max_position_embeddings": 16384, "beta_fast": 32.0, "beta_slow": 1.0,
                                     "mscale_all_dim": 1.0, "mscale": 1.0, "llama_4_scaling_beta": 0.1})
    prefix = "model.language_model."

    def __init__(self, cfg, p):
        text = cfg["text_config"]
        if text.get("model_type") != "ministral3":
            raise ValueError("Ministral3Check: text_config model_type %r" % text.get("model_type"))
        c = dict(self.DEFAULTS, **text)
        if c["sliding_window"] is not None or c.get("hidden_act", "silu") != "silu":
            raise ValueError("Ministral3Check: sliding_window %r, hidden_act %r" % (c["sliding_window"],
                                                                                  c.get("hidden_act")))
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"] or self.NH
        self.HD = c["head_dim"] or self.H // self.NH
        rp = c["rope_parameters"]
        self.rope_type = rp.get("rope_type", rp.get("type"))
        if self.rope_type != "yarn":
            raise ValueError("Ministral3Check: rope type %r" % self.rope_type)
        self.theta = rp["rope_theta"]
        self.beta, self.period = rp["llama_4_scaling_beta"], rp["original_max_position_embeddings"]
        self.inv_freq, self.attention_factor, self.bounds = self.yarn(rp)
        self.scale_keys = self.no_log = self.plain_rope = self.yarn_default_factor = False
        self.offset = 0

    def yarn(self, rp):
        """(inv_freq (HD/2,) fp32, attention factor, (low, high)) of _compute_yarn_parameters, in Python floats."""
        dim, base, factor = self.HD, self.theta, rp["factor"]
        original = rp["original_max_position_embeddings"]

        def get_mscale(scale, m=1.0):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0
        if rp.get("attention_factor") is not None:
            attention = rp["attention_factor"]
        elif rp.get("mscale") and rp.get("mscale_all_dim"):
            attention = get_mscale(factor, rp["mscale"]) / get_mscale(factor, rp["mscale_all_dim"])
        else:
            attention = get_mscale(factor)

        def correction_dim(rotations):  # find_correction_dim
            return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))
        low = correction_dim(rp.get("beta_fast") or 32)
        high = correction_dim(rp.get("beta_slow") or 1)
        if rp.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        inv = []
        for i in range(dim // 2):
            pos_freq = base ** (2 * i / dim)
            keep = 1.0 - min(max((i - low) / (high - low), 0.0), 1.0)  # inv_freq_extrapolation_factor
            inv.append((1.0 / (factor * pos_freq)) * (1.0 - keep) + (1.0 / pos_freq) * keep)
        return torch.tensor(inv, dtype=torch.float32), float(attention), (low, high)

    def query_factors(self, T):
        """_get_llama_4_attn_scale(cache_position, beta, period) for positions 0 .. T-1, (T,) fp32."""
        out = []
        for pos in range(T):
            n = (pos + self.offset) // self.period  # torch.floor(position / period)
            out.append(1.0 + self.beta * (n if self.no_log else math.log(1.0 + n)))
        return torch.tensor(out, dtype=torch.float32)

    def rotary(self, x, angles):
        # the pairs (i, i + HD/2) as complex numbers turned by the angles, of length attention_scaling (cos s, sin s)
        half = self.HD // 2
        if self.plain_rope:
            length = 1.0
        else:
            length = 0.1 * math.log(self.c["rope_parameters"]["factor"]) + 1.0 if self.yarn_default_factor else \
                self.attention_factor
        turn = torch.polar(torch.full_like(angles, length), angles).unsqueeze(1)
        z = torch.complex(x[..., :half], x[..., half:]) * turn
        return torch.cat((z.real, z.imag), dim=-1)

    def layer(self, l, h, angles, factors):
        pre, HD, T = self.prefix + "layers.%d." % l, self.HD, h.shape[0]
        x = self.rms(h, self.p[pre + "input_layernorm.weight"])
        q = self.linear(x, pre + "self_attn.q_proj", False).view(T, self.NH, HD)
        k = self.linear(x, pre + "self_attn.k_proj", False).view(T, self.NKV, HD)
        v = self.linear(x, pre + "self_attn.v_proj", False).view(T, self.NKV, HD)
        q, k = self.rotary(q, angles), self.rotary(k, angles)
        q = q * factors.view(T, 1, 1)  # query_states * _get_llama_4_attn_scale(...)
        if self.scale_keys:
            k = k * factors.view(T, 1, 1)
        h = h + self.linear(attend_heads(q, k, v, torch.ones(T, T, dtype=torch.bool).tril()), pre + "self_attn.o_proj",
                            False)
        x = self.rms(h, self.p[pre + "post_attention_layernorm.weight"])
        gate, up = self.linear(x, pre + "mlp.gate_proj", False), self.linear(x, pre + "mlp.up_proj", False)
        return h + self.linear(torch.nn.functional.silu(gate) * up, pre + "mlp.down_proj", False)

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p, T = self.p, len(ids)
        inv = (1.0 / self.theta ** (torch.arange(0, self.HD, 2, dtype=torch.float32) / self.HD) if self.plain_rope else
               self.inv_freq)
        angles = torch.outer(torch.arange(T, dtype=torch.float32), inv)
        factors = self.query_factors(T) if self.beta else torch.ones(T)
        h = p[self.prefix + "embed_tokens.weight"][torch.tensor(ids)]
        hidden = [h]
        for l in range(self.L):
            h = self.layer(l, h, angles, factors)
            hidden.append(h)
        hidden[-1] = self.rms(h, p[self.prefix + "norm.weight"])
        head = p[self.prefix + "embed_tokens.weight"] if self.c["tie_word_embeddings"] else p["lm_head.weight"]
        return hidden[-1] @ head.T, hidden


def language_model_shapes(m, V, head="lm_head.weight"):
    """name -> shape of a Llama-shaped language model's embeddings, final norm, untied head (`head`) and
    each layer's two norms and q/k/v/o matrices, under m.prefix (m: H, HD, NH, NKV, L)."""
    H, HD, x0 = m.H, m.HD, m.prefix
    want = {x0 + "embed_tokens.weight": (V, H), x0 + "norm.weight": (H,), head: (V, H)}
    for l in range(m.L):
        x = x0 + "layers.%d." % l
        want.update({x + "input_layernorm.weight": (H,), x + "post_attention_layernorm.weight": (H,),
                     x + "self_attn.q_proj.weight": (m.NH * HD, H), x + "self_attn.k_proj.weight": (m.NKV * HD, H),
                     x + "self_attn.v_proj.weight": (m.NKV * HD, H), x + "self_attn.o_proj.weight": (H, m.NH * HD)})
    return want


def check_ministral3(name, spec, p, g, st):
    cfg = fixture_config(name)
    text = cfg["text_config"]
    model = g["model"]
    m = Ministral3Check(cfg, p)
    check_against_golden(name, "Ministral3Check", m, g, st)
    # the files: Mistral's tensors under model.language_model.*, lm_head.weight, and stand-ins under
    # model.vision_tower.* / model.multi_modal_projector.* (transformers 5's names); BF16 matrices, F32 norms
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    H, HD, F_, x0 = m.H, m.HD, text["intermediate_size"], m.prefix
    want = language_model_shapes(m, spec.V)
    for l in range(m.L):
        x = x0 + "layers.%d." % l
        want.update({x + "mlp.gate_proj.weight": (F_, H), x + "mlp.up_proj.weight": (F_, H),
                     x + "mlp.down_proj.weight": (H, F_)})
    stand_ins = sorted(n for n in stored if n.startswith(("model.vision_tower.", "model.multi_modal_projector.")))
    dtypes_ok = all(stored[n][0] == ("F32" if n.endswith("norm.weight") else "BF16") for n in want)
    same = ({n: tuple(v[1].shape) for n, v in stored.items() if n not in stand_ins} == want and dtypes_ok and
            any(n.startswith("model.vision_tower.") for n in stand_ins) and
            any(n.startswith("model.multi_modal_projector.") for n in stand_ins) and
            stand_ins == model["stand_in_tensors"])
    check(same, "%s: the files hold Mistral's %d tensors under model.language_model.* and lm_head.weight (q_proj (%d "
          "x %d, %d): q width %d != hidden %d), BF16 matrices and F32 norms, beside %d stand-ins under "
          "model.vision_tower.* / model.multi_modal_projector.*" % (name, len(want), m.NH, HD, H, m.NH * HD, H,
                                                                     len(stand_ins)))
    # config.json as transformers 5 writes Ministral 3's: "dtype", text_config of model_type ministral3 with the RoPE in
    # rope_parameters only (rope_type and type yarn, llama_4_scaling_beta, original_max_position_embeddings), no
    # rope_theta / rope_scaling key, max_position_embeddings = factor x original, head_dim != hidden / heads, no window
    rp = text["rope_parameters"]
    spelling = (cfg["model_type"] == "mistral3" and "dtype" in cfg and "torch_dtype" not in cfg and
                cfg["transformers_version"].startswith("5.") and text["model_type"] == "ministral3" and
                "rope_theta" not in text and "rope_scaling" not in text and rp["rope_type"] == rp["type"] == "yarn" and
                "llama_4_scaling_beta" in rp and text["max_position_embeddings"] ==
                rp["factor"] * rp["original_max_position_embeddings"] and text["head_dim"] != H // m.NH and
                text["sliding_window"] is None and cfg["tie_word_embeddings"] is False and
                text["tie_word_embeddings"] is False and rp["mscale"] == rp["mscale_all_dim"] == 1.0)
    check(spelling, "%s: config.json in transformers 5's Ministral 3 spelling (text_config ministral3, rope_parameters "
          "yarn x%g from %d at theta %g with llama_4_scaling_beta %g, no rope_theta key, max_position_embeddings %d = "
          "factor x original, head_dim %d != hidden / heads %d, sliding_window null, untied)" % (
              name, rp["factor"], rp["original_max_position_embeddings"], rp["rope_theta"], rp["llama_4_scaling_beta"],
              text["max_position_embeddings"], text["head_dim"], H // m.NH))
    # reference.Spec reads it as Ministral3Check does
    plain = 1.0 / m.theta ** (torch.arange(0, HD, 2, dtype=torch.float32) / HD)
    factor = rp["factor"]
    kept = int(torch.isclose(m.inv_freq, plain, rtol=1e-6, atol=0.0).sum())
    divided = int(torch.isclose(m.inv_freq, plain / factor, rtol=1e-6, atol=0.0).sum())
    ramped = HD // 2 - kept - divided
    prefix, head = ref.weight_names(spec, p)
    same = (spec.ministral3 and spec.query_scale_beta == m.beta == model["query_scale_beta"] and
            spec.query_scale_period == m.period == model["query_scale_period"] and spec.theta == m.theta and
            bool(((spec.inv_freq - m.inv_freq).abs() <= 1e-6 * m.inv_freq.abs()).all()) and
            spec.rope_attention_factor == m.attention_factor == 1.0 and spec.HD == HD and spec.NKV == m.NKV and
            spec.eps == m.c["rms_norm_eps"] and spec.sliding_window is None and not spec.tied and
            (prefix, head) == (m.prefix, "lm_head.weight") and kept and ramped and divided and
            model["yarn_pairs_kept_ramped_divided"] == [kept, ramped, divided])
    check(same, "%s: reference.Spec and golden.json read the query scaling (beta %g, period %d), theta %g, YaRN's "
          "inverse frequencies (1e-6 relative; ramp bounds %s: %d pair kept, %d ramped, %d divided by %g) and "
          "attention factor %g, head_dim %d, the eps, no window, untied, model.language_model.* as Ministral3Check "
          "does" % (
              name, m.beta, m.period, m.theta, m.bounds, kept, ramped, divided, factor, m.attention_factor, HD))
    # the factor at every period start, and every prompt's sequence (the prompt, then the tokens fed back) crossing a
    # period boundary
    starts = [x for x, _ in model["query_scale_per_period"]]
    factors = m.query_factors(starts[-1] + 1)[starts]
    d = max(abs(float(a) - b) for a, (_, b) in zip(factors, model["query_scale_per_period"]))
    lengths = [len(e["input_ids"]) for e in g["prompts"]]
    reach = [[(n - 1) // m.period, (n + g["max_new_tokens"] - 2) // m.period] for n in lengths]
    check(d < 1e-6 and starts == list(range(0, len(starts) * m.period, m.period)) and
          reach == model["query_scale_periods_reached"] and all(b > a for a, b in reach) and
          starts[-1] <= max(n + g["max_new_tokens"] - 2 for n in lengths) < starts[-1] + m.period,
          "%s: Ministral3Check's query factor at each period start = golden.json's (%s; %.1e), and every prompt's "
          "sequence crosses a period boundary (periods of the last prompt token, the last fed token: %s)" % (
              name, ", ".join("%d: %.4f" % (x, float(f)) for x, f in zip(starts, factors)), d, reach))
    # the what-ifs
    names = {"query_scale": ("beta", 0.0), "query_scale_keys": ("scale_keys", True),
             "query_scale_no_log": ("no_log", True), "query_scale_position_plus_one": ("offset", 1),
             "rope_scaling": ("plain_rope", True),
             "yarn_attention_factor": ("yarn_default_factor", True)}
    ids = g["prompts"][4]["input_ids"]
    check_what_if_effects(name, "Ministral3Check", model, names, lambda: Ministral3Check(cfg, p), ids)

    def refused(change=None, rope=None, drop=()):
        c2 = json.loads(json.dumps(cfg))
        c2["text_config"].update(change or {})
        c2["text_config"]["rope_parameters"].update(rope or {})
        for key in drop:
            del c2["text_config"]["rope_parameters"][key]
        try:
            ref.Spec(c2)
        except ValueError:
            return True
        return False
    cases = {"rope_theta beside rope_parameters": refused({"rope_theta": m.theta}),
             "rope_scaling beside rope_parameters": refused({"rope_scaling": dict(rp)}),
             "no llama_4_scaling_beta": refused(drop=("llama_4_scaling_beta",)),
             "period 0": refused(rope={"original_max_position_embeddings": 0}),
             "period 16.5": refused(rope={"original_max_position_embeddings": 16.5})}
    check_refusals(name, cases)


class WrapperCheck(LlamaCheck):
    """The language model of a LLaVA / InternVL wrapper again, from models/llava/configuration_llava.py /
    modeling_llava.py and models/internvl/configuration_internvl.py / modeling_internvl.py (LlavaConfig / InternVLConfig
    turn text_config into CONFIG_MAPPING[its model_type], absent: "llama" / "qwen2"; the model's language_model is
    AutoModel.from_config(text_config); the head lm_head, untied unless text_config's tie_word_embeddings) with the
    wrapped family's configuration_*.py defaults, sharing nothing with reference.py but the safetensors reader: the
    weights found under the released language_model.model.* / language_model.lm_head.weight or transformers >= 4.52's
    model.language_model.* / lm_head.weight (the wrappers' _checkpoint_conversion_mapping) and renamed to LlamaCheck's
    model.* / lm_head.weight; LlamaCheck's layers (F.linear, RMSNorm, the rotate-half RoPE as complex numbers), with
    Qwen2Attention's q/k/v biases (o_proj none) for qwen2 and MistralAttention's window (an explicit i - W < j <= i
    mask) when mistral's sliding_window is set. What-ifs (attributes changed after __init__,
    golden_models.wrapper_what_ifs' names): `theta` (10000), `window` (16), `qkv_bias` (False)."""

    # the text config classes' defaults of the keys read here: LlamaConfig, MistralConfig, Qwen2Config (4.4x / 4.5x)
    TEXT_DEFAULTS = {
        "llama": LlamaCheck.DEFAULTS,
        "mistral": dict(num_key_value_heads=8, head_dim=None, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
                        sliding_window=4096, tie_word_embeddings=False),
        "qwen2": dict(num_key_value_heads=32, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
                      use_sliding_window=False, tie_word_embeddings=False)}
    WRAPPER_DEFAULT = {"LlavaForConditionalGeneration": "llama", "InternVLForConditionalGeneration": "qwen2"}

    def __init__(self, cfg, p):
        text = cfg["text_config"]
        self.kind = text.get("model_type", self.WRAPPER_DEFAULT[cfg["architectures"][0]])
        c = dict(self.TEXT_DEFAULTS[self.kind], **text)
        if c["rope_scaling"] or c.get("use_sliding_window") or c.get("hidden_act", "silu") != "silu":
            raise ValueError("WrapperCheck: rope_scaling %r, use_sliding_window %r, hidden_act %r" % (
                c["rope_scaling"], c.get("use_sliding_window"), c.get("hidden_act")))
        if "language_model.model.embed_tokens.weight" in p:
            self.prefix, self.head = "language_model.model.", "language_model.lm_head.weight"
        else:
            self.prefix, self.head = "model.language_model.", "lm_head.weight"
        renamed = {("model." + n[len(self.prefix):] if n.startswith(self.prefix) else
                    "lm_head.weight" if n == self.head else n): t for n, t in p.items()}
        super().__init__(dict(c, attention_bias=False, mlp_bias=False), renamed)
        self.qkv_bias = self.kind == "qwen2"  # Qwen2Attention: q/k/v_proj bias=True, o_proj bias=False
        self.o_bias = False
        self.theta = c["rope_theta"]
        self.window = c["sliding_window"] if self.kind == "mistral" else None

    def allowed(self, T):  # MistralAttention's window: query i sees keys i - W < j <= i
        i, j = torch.arange(T).view(T, 1), torch.arange(T).view(1, T)
        return (j <= i) & (j > i - self.window) if self.window else super().allowed(T)

    def forward(self, ids):
        inv_freq = 1.0 / self.theta ** (torch.arange(0, self.HD, 2, dtype=torch.float32) / self.HD)
        return plain_decoder_forward(self, ids, self.rms, inv_freq=inv_freq)


def check_wrapper(name, spec, p, g, st):
    cfg = fixture_config(name)
    text, model = cfg["text_config"], g["model"]
    m = WrapperCheck(cfg, p)
    check_against_golden(name, "WrapperCheck", m, g, st)
    llava = cfg["architectures"] == ["LlavaForConditionalGeneration"]
    # the files: the text family's tensors under the language model's prefix and head, nothing else of it anywhere,
    # beside stand-ins of both the vision tower and the projector, in the spelling of the language model (top-level
    # vision_tower.* / multi_modal_projector.* beside language_model.model.*, model.vision_tower.* /
    # model.multi_modal_projector.* beside model.language_model.*); all BF16
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    H, F_, x0 = m.H, text["intermediate_size"], m.prefix
    want = language_model_shapes(m, spec.V, m.head)
    for l in range(m.L):
        x = x0 + "layers.%d." % l
        want.update(swiglu_tensors(x + "mlp.", H, F_))
        if m.qkv_bias:
            want.update({x + "self_attn.q_proj.bias": (m.NH * m.HD,), x + "self_attn.k_proj.bias": (m.NKV * m.HD,),
                         x + "self_attn.v_proj.bias": (m.NKV * m.HD,)})
    outer = "" if x0 == "language_model.model." else "model."
    stand_ins = sorted(n for n in stored if n not in want)
    same = ({n: tuple(stored[n][1].shape) for n in stored if n in want} == want and
            all(v[0] == "BF16" for v in stored.values()) and stand_ins == model["stand_in_tensors"] and
            all(n.startswith((outer + "vision_tower.", outer + "multi_modal_projector.")) for n in stand_ins) and
            any(n.startswith(outer + "vision_tower.") for n in stand_ins) and
            any(n.startswith(outer + "multi_modal_projector.") for n in stand_ins) and
            (x0, m.head) == ((("language_model.model.", "language_model.lm_head.weight") if llava else
                              ("model.language_model.", "lm_head.weight"))))
    check(same, "%s: the files hold %s's %d tensors under %s* and %s (q width %d, hidden %d), all BF16, beside %d "
          "stand-ins under %svision_tower.* / %smulti_modal_projector.*" % (
              name, m.kind, len(want), x0, m.head, m.NH * m.HD, H, len(stand_ins), outer, outer))
    # config.json in the release's spelling: Pixtral-12B's (text_config mistral with head_dim != hidden / heads,
    # sliding_window null and the leftover is_composition, no token ids and no tie_word_embeddings but vision_config's,
    # a pixtral vision_config, "full" features) or InternVL3-1B-hf's (text_config qwen2 with its token ids and
    # tie_word_embeddings false, no head_dim, use_sliding_window false, none at the top level, an internvl_vision
    # vision_config, "default" features, transformers 4.52)
    ids_keys = ("bos_token_id", "eos_token_id", "pad_token_id")
    if llava:
        spelling = (cfg["model_type"] == "llava" and text["model_type"] == "mistral" and text["is_composition"] and
                    text["head_dim"] != H // m.NH and text["sliding_window"] is None and
                    not any(k in c for c in (cfg, text) for k in ids_keys + ("tie_word_embeddings",)) and
                    cfg["vision_config"]["model_type"] == "pixtral" and
                    cfg["vision_config"]["tie_word_embeddings"] is False and
                    cfg["vision_feature_select_strategy"] == "full" and cfg["torch_dtype"] == "bfloat16")
    else:
        spelling = (cfg["model_type"] == "internvl" and text["model_type"] == "qwen2" and
                    all(k in text for k in ids_keys[:2]) and not any(k in cfg for k in ids_keys) and
                    text["tie_word_embeddings"] is False and "tie_word_embeddings" not in cfg and "head_dim" not in text
                    and text["use_sliding_window"] is False and text["sliding_window"] is None and
                    cfg["vision_config"]["model_type"] == "internvl_vision" and
                    cfg["vision_feature_select_strategy"] == "default" and
                    cfg["transformers_version"].startswith("4.52"))
    check(spelling, "%s: config.json in %s's spelling (text_config %s, token ids %s)" % (
        name, "Pixtral-12B" if llava else "InternVL3-1B-hf", m.kind,
        "nowhere: generation_config.json" if llava else "in text_config only"))
    # reference.Spec and golden.json read the wrapped family as WrapperCheck does
    same = (spec.text_model_type == m.kind == model["text_model_type"] and spec.theta == m.theta ==
            model["rope_theta"] and spec.HD == m.HD and spec.NKV == m.NKV and spec.eps == m.c["rms_norm_eps"] and
            spec.sliding_window == m.window and spec.qkv_bias == m.qkv_bias == model["qkv_bias"] and not spec.o_bias and
            not spec.tied and not m.c["tie_word_embeddings"] and
            ref.weight_names(spec, p) == (m.prefix, m.head) == (model["weight_prefix"], model["lm_head"]))
    check(same, "%s: reference.Spec and golden.json read text_config as %s (theta %g, head_dim %d, %d kv heads, eps %g, "
          "window %s, q/k/v bias %s, untied, %s* / %s) as WrapperCheck does" % (
              name, m.kind, m.theta, m.HD, m.NKV, m.c["rms_norm_eps"], m.window, m.qkv_bias, m.prefix, m.head))
    # other readings: text_config without model_type is the wrapper's default family (llama for LLaVA: Mistral without
    # a window is Llama; qwen2 for InternVL), the same logits; the weights in the other spelling, the same logits;
    # (LLaVA) without a sliding_window key MistralConfig's 4096, longer than every golden sequence
    prompts = [e["input_ids"] for e in g["prompts"]]
    base = last_logits(spec, p, prompts)
    untyped = json.loads(json.dumps(cfg))
    del untyped["text_config"]["model_type"]
    s2, m2 = ref.Spec(untyped), WrapperCheck(untyped, p)
    other = (("model.language_model.", "lm_head.weight") if llava else
             ("language_model.model.", "language_model.lm_head.weight"))
    respelled = {(other[0] + n[len(m.prefix):] if n.startswith(m.prefix) else other[1] if n == m.head else n): t
                 for n, t in p.items()}
    same = (s2.text_model_type == m2.kind == ("llama" if llava else "qwen2") and
            bool((last_logits(s2, p, prompts) == base).all()) and
            bool((last_logits(spec, respelled, prompts) == base).all()))
    if llava:
        no_key = json.loads(json.dumps(cfg))
        del no_key["text_config"]["sliding_window"]
        s3 = ref.Spec(no_key)
        same = same and s3.sliding_window == WrapperCheck(no_key, p).window == 4096 and bool(
            (last_logits(s3, p, prompts) == base).all())
    check(same, "%s: text_config without model_type read as %s, the weights as %s* / %s, %sthe same logits" % (
        name, s2.text_model_type, other[0], other[1], "and without sliding_window (MistralConfig's 4096) " if llava else
        ""))
    ids = g["prompts"][4]["input_ids"]
    names = {"rope_theta_default": ("theta", 10000.0)}
    names.update({"sliding_window": ("window", 16)} if m.kind == "mistral" else {})
    names.update({"qkv_bias": ("qkv_bias", False)} if m.qkv_bias else {})
    check_what_if_effects(name, "WrapperCheck", model, names, lambda: WrapperCheck(cfg, p), ids)
    cases = {"text_config of model_type gemma3_text": spec_refuses(cfg, {"text_config": dict(text,
                                                                                            model_type="gemma3_text")}),
             "no text_config": spec_refuses(cfg, drop=("text_config",))}
    check_refusals(name, cases)


class GlmVCheck:
    """GLM-4.1V's (Glm4vForConditionalGeneration) and GLM-4.5V's (Glm4vMoeForConditionalGeneration) language models
    again, from models/glm4v/modeling_glm4v.py, configuration_glm4v.py and models/glm4v_moe/modular_glm4v_moe.py as
    transformers 4.56 / 4.57 have them (the versions the releases were saved with), with models/glm4_moe/
    modeling_glm4_moe.py's Glm4MoeTopkRouter / Glm4MoeMoE that GLM-4.5V's layers inherit, sharing nothing with
    reference.py but the safetensors reader: text_config read with Glm4vTextConfig's / Glm4vMoeTextConfig's defaults
    (GLM-4.1V: head_dim = hidden // heads whatever the file says, q/k/v biases always, partial_rotary_factor by getattr
    with 1.0; GLM-4.5V: head_dim by getattr, q/k/v biases from attention_bias, partial_rotary_factor 0.5); the
    rotary embedding over rotary_dim = int(head_dim x partial_rotary_factor) dims from three position rows (t, h, w),
    equal for text (Glm4vModel.get_rope_index without images), each frequency taking its angle from the row of the
    mrope_section band it lies in (apply_multimodal_rotary_pos_emb's `mrope_section * 2` split of cat(freqs, freqs),
    band j from row j % 3), the angles computed here frequency by frequency; the rotation as complex numbers: GLM-4.1V's
    adjacent pairs (x[2i], x[2i + 1]) (rotate_half_llm with cos[..., :rotary_dim / 2].repeat_interleave(2)), GLM-4.5V's
    halves (x[i], x[i + rotary_dim / 2]) (rotate_half), the dims past rotary_dim passing; per-head attention with a
    hand-written softmax (attend_heads); GLM-4.1V's Glm4vTextDecoderLayer (post_self_attn_layernorm and
    post_mlp_layernorm on the branch outputs) and Glm4vTextMLP (gate_up_proj.chunk(2): up * silu(gate));
    GLM-4.5V's Glm4MoeDecoderLayer (two norms), Glm4MoeMLP on the first first_k_dense_replace layers, Glm4MoeMoE from
    there on: Glm4MoeTopkRouter.forward (F.linear of the fp32 hidden states, sigmoid) and get_topk_indices (scores +
    e_score_correction_bias, groups by the sum of their two best, masked_fill 0.0, torch.topk unsorted), the scores
    gathered, divided by their sum + 1e-20, times routed_scaling_factor; Glm4MoeMoE.moe's one_hot expert mask and
    index_add_ loop over the per-expert Glm4MoeMLP tensors; plus shared_experts(residuals), ungated.
    What-ifs (attributes changed after __init__, golden_models.glm_v_what_ifs' names where they apply):
    `adjacent` (the pairing), `full_head` (rotary_dim = head_dim, the plain RoPE), `qkv_bias`, `post_norms`,
    `softmax_router` (the router's scores a softmax), `shared` (the shared experts added), and the router's
    `zero_bias`, `groups` (n_group / topk_group, (1, 1): no limit), `scaling` (routed_scaling_factor).
    `router_calls`: None, or a list that receives (layer, masked choice values (T, E), group scores (T, G)) per MoE
    call."""

    # Glm4vTextConfig's (4.5x) defaults of the keys read here (no head_dim, attention_bias, partial_rotary_factor)
    TEXT_DEFAULTS = dict(num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None,
                         tie_word_embeddings=False, hidden_act="silu")
    # Glm4vMoeTextConfig's (4.56 / 4.57) defaults of the keys read here
    MOE_DEFAULTS = dict(num_key_value_heads=8, partial_rotary_factor=0.5, rms_norm_eps=1e-5, rope_theta=10000.0,
                        rope_scaling=None, tie_word_embeddings=False, attention_bias=True, moe_intermediate_size=1408,
                        num_experts_per_tok=8, n_shared_experts=1, n_routed_experts=128, routed_scaling_factor=1.0,
                        n_group=1, topk_group=1, first_k_dense_replace=1, norm_topk_prob=True, hidden_act="silu")
    prefix = "model.language_model."

    def __init__(self, cfg, p):
        self.moe = cfg["architectures"][0] == "Glm4vMoeForConditionalGeneration"
        text = cfg["text_config"]
        c = dict(self.MOE_DEFAULTS if self.moe else self.TEXT_DEFAULTS, **text)
        if c["hidden_act"] != "silu":
            raise ValueError("GlmVCheck: hidden_act %r" % c["hidden_act"])
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV, self.eps = c["num_key_value_heads"], c["rms_norm_eps"]
        # Glm4vTextAttention: `self.head_dim = self.hidden_size // self.num_heads`; Glm4Attention (GLM-4.5V):
        # `getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)`
        self.HD = c.get("head_dim") or self.H // self.NH if self.moe else self.H // self.NH
        # _compute_default_rope_parameters: `partial_rotary_factor = getattr(config, "partial_rotary_factor", 1.0)`,
        # `dim = int(head_dim * partial_rotary_factor)`
        self.R = int(self.HD * c.get("partial_rotary_factor", 1.0))
        self.theta = float(c["rope_theta"])
        self.section = list(c["rope_scaling"]["mrope_section"])
        self.adjacent = not self.moe
        self.qkv_bias = bool(c["attention_bias"]) if self.moe else True  # (Glm4vTextAttention: bias=True)
        self.post_norms = not self.moe
        self.full_head = self.softmax_router = self.zero_bias = False
        self.shared = True
        if self.moe:
            self.E, self.k = c["n_routed_experts"], c["num_experts_per_tok"]
            self.groups = (c["n_group"], c["topk_group"])
            self.scaling = c["routed_scaling_factor"]
            self.moe_layers = [l >= c["first_k_dense_replace"] for l in range(self.L)]
        self.router_calls = None

    def w(self, name):
        return self.p[self.prefix + name]

    def rms(self, x, weight):  # Glm4vRMSNorm / Glm4MoeRMSNorm
        return weight * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    def angles(self, rows):
        """rows (3, T) positions (t, h, w) -> (T, R / 2) angles: frequency i's from the row of the mrope_section band
        it lies in (the first copy of `mrope_section * 2` over cat(freqs, freqs): bands 0, 1, 2 cover frequencies
        [0, s0), [s0, s0 + s1), [s0 + s1, R / 2)); with full_head, rotary_dim = head_dim and the t row for all."""
        R = self.HD if self.full_head else self.R
        out = torch.empty(rows.shape[1], R // 2)
        for i in range(R // 2):
            band = 0
            if not self.full_head:
                edge = 0
                for band, size in enumerate(self.section):
                    edge += size
                    if i < edge:
                        break
            inv = 1.0 / self.theta ** (float(2 * i) / R)  # 1 / base^(arange(0, dim, 2) / dim)
            out[:, i] = rows[band].to(torch.float64) * inv
        return out.to(torch.float32)

    def rotary(self, x, angles):
        """x (T, heads, HD): the first rotary_dim dims turned, the rest passed."""
        R = 2 * angles.shape[1]
        turn = torch.polar(torch.ones_like(angles), angles).unsqueeze(1)
        r, rest = x[..., :R], x[..., R:]
        if self.adjacent:  # (x[2i], x[2i + 1]) as one complex number
            z = torch.complex(r[..., 0::2], r[..., 1::2]) * turn
            r = torch.stack((z.real, z.imag), dim=-1).flatten(-2)
        else:  # (x[i], x[i + R / 2])
            z = torch.complex(r[..., :R // 2], r[..., R // 2:]) * turn
            r = torch.cat((z.real, z.imag), dim=-1)
        return torch.cat((r, rest), dim=-1)

    def attention(self, l, x, angles):
        a_, T = "layers.%d.self_attn." % l, x.shape[0]

        def proj(name, heads):
            y = torch.nn.functional.linear(x, self.w(a_ + name + ".weight"),
                                           self.w(a_ + name + ".bias") if self.qkv_bias else None)
            return y.view(T, heads, self.HD)
        q, k, v = proj("q_proj", self.NH), proj("k_proj", self.NKV), proj("v_proj", self.NKV)
        o = attend_heads(self.rotary(q, angles), self.rotary(k, angles), v, torch.ones(T, T, dtype=torch.bool).tril())
        return torch.nn.functional.linear(o, self.w(a_ + "o_proj.weight"))  # (o_proj bias=False)

    def mlp3(self, pre, x):  # Glm4MoeMLP: down(silu(gate(x)) * up(x))
        lin = torch.nn.functional.linear
        return lin(torch.nn.functional.silu(lin(x, self.w(pre + "gate_proj.weight"))) *
                   lin(x, self.w(pre + "up_proj.weight")), self.w(pre + "down_proj.weight"))

    def moe_block(self, l, x):
        pre = "layers.%d.mlp." % l
        logits = torch.nn.functional.linear(x.float(), self.w(pre + "gate.weight").float())
        scores = torch.softmax(logits, dim=-1) if self.softmax_router else logits.sigmoid()
        bias = self.w(pre + "gate.e_score_correction_bias")
        choice = scores + (bias * 0 if self.zero_bias else bias)
        G, TG = self.groups
        group_scores = choice.view(-1, G, self.E // G).topk(2, dim=-1)[0].sum(dim=-1)
        kept = torch.zeros_like(group_scores).scatter_(1, torch.topk(group_scores, k=TG, dim=-1, sorted=False)[1], 1)
        mask = kept.unsqueeze(-1).expand(-1, G, self.E // G).reshape(-1, self.E)
        choice = choice.masked_fill(~mask.bool(), 0.0)
        if self.router_calls is not None:
            self.router_calls.append((l, choice, group_scores))
        topk_indices = torch.topk(choice, k=self.k, dim=-1, sorted=False)[1]
        topk_weights = scores.gather(1, topk_indices)
        if self.c["norm_topk_prob"]:
            topk_weights = topk_weights / (topk_weights.sum(dim=-1, keepdim=True) + 1e-20)
        topk_weights = topk_weights * self.scaling
        out = torch.zeros_like(x)
        expert_mask = torch.nn.functional.one_hot(topk_indices, num_classes=self.E).permute(2, 0, 1)
        for e in range(self.E):
            token_indices, weight_indices = torch.where(expert_mask[e])
            if token_indices.numel():
                y = self.mlp3(pre + "experts.%d." % e, x[token_indices])
                out.index_add_(0, token_indices, y * topk_weights[token_indices, weight_indices].unsqueeze(-1))
        if self.shared:
            out = out + self.mlp3(pre + "shared_experts.", x)
        return out

    def layer(self, l, h, angles):
        pre = "layers.%d." % l
        a = self.attention(l, self.rms(h, self.w(pre + "input_layernorm.weight")), angles)
        h = h + (self.rms(a, self.w(pre + "post_self_attn_layernorm.weight")) if self.post_norms else a)
        x = self.rms(h, self.w(pre + "post_attention_layernorm.weight"))
        if not self.moe:  # Glm4vTextMLP: `gate, up_states = up_states.chunk(2, dim=-1)`, up * silu(gate)
            gate, up = torch.nn.functional.linear(x, self.w(pre + "mlp.gate_up_proj.weight")).chunk(2, dim=-1)
            m = torch.nn.functional.linear(up * torch.nn.functional.silu(gate), self.w(pre + "mlp.down_proj.weight"))
        elif self.moe_layers[l]:
            m = self.moe_block(l, x)
        else:
            m = self.mlp3(pre + "mlp.", x)
        return h + (self.rms(m, self.w(pre + "post_mlp_layernorm.weight")) if self.post_norms else m)

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        T = len(ids)
        angles = self.angles(torch.arange(T).expand(3, T))  # (position_ids: the text positions in all three rows)
        h = self.w("embed_tokens.weight")[torch.tensor(ids)]
        hidden = [h]
        for l in range(self.L):
            h = self.layer(l, h, angles)
            hidden.append(h)
        hidden[-1] = self.rms(h, self.w("norm.weight"))
        head = self.w("embed_tokens.weight") if self.c["tie_word_embeddings"] else self.p["lm_head.weight"]
        return hidden[-1] @ head.T, hidden


def check_glm_v(name, spec, p, g, st):
    cfg = fixture_config(name)
    text = cfg["text_config"]
    model = g["model"]
    m = GlmVCheck(cfg, p)
    moe = m.moe
    family = "GLM-4.5V" if moe else "GLM-4.1V"
    check_against_golden(name, "GlmVCheck", m, g, st)
    # the files: the language model under model.language_model.* (per-expert tensors for GLM-4.5V), lm_head.weight,
    # three model.visual.* stand-ins; all BF16 but GLM-4.5V's e_score_correction_bias (F32); no MTP layer
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    H, HD, F_, x0 = m.H, m.HD, text["intermediate_size"], m.prefix
    want = language_model_shapes(m, spec.V)
    for l in range(m.L):
        x = x0 + "layers.%d." % l
        want.update({x + "self_attn.q_proj.bias": (m.NH * HD,), x + "self_attn.k_proj.bias": (m.NKV * HD,),
                     x + "self_attn.v_proj.bias": (m.NKV * HD,)})
        if not moe:
            want.update({x + "post_self_attn_layernorm.weight": (H,), x + "post_mlp_layernorm.weight": (H,),
                         x + "mlp.gate_up_proj.weight": (2 * F_, H), x + "mlp.down_proj.weight": (H, F_)})
        elif m.moe_layers[l]:
            Fm, Fs = text["moe_intermediate_size"], text["moe_intermediate_size"] * text["n_shared_experts"]
            want.update({x + "mlp.gate.weight": (m.E, H), x + "mlp.gate.e_score_correction_bias": (m.E,)})
            for e, f in [(str(e), Fm) for e in range(m.E)] + [("shared", Fs)]:
                y = x + ("mlp.shared_experts." if e == "shared" else "mlp.experts.%s." % e)
                want.update({y + "gate_proj.weight": (f, H), y + "up_proj.weight": (f, H),
                             y + "down_proj.weight": (H, f)})
        else:
            want.update({x + "mlp.gate_proj.weight": (F_, H), x + "mlp.up_proj.weight": (F_, H),
                         x + "mlp.down_proj.weight": (H, F_)})
    shapes = {n: tuple(v[1].shape) for n, v in stored.items()}
    stand_ins = sorted(n for n in shapes if n.startswith("model.visual."))
    dtypes_ok = all(stored[n][0] == ("F32" if n.endswith("e_score_correction_bias") else "BF16") for n in shapes)
    same = ({n: s for n, s in shapes.items() if n not in stand_ins} == want and dtypes_ok and len(stand_ins) == 3 and
            stand_ins == model["stand_in_tensors"] and not any(".layers.%d." % m.L in n for n in shapes))
    check(same, "%s: the files hold exactly %s's %d tensors under model.language_model.* and lm_head.weight (%s), no "
          "MTP layer, plus 3 model.visual.* stand-ins; %s" % (
              name, family, len(want),
              "per layer 4 norms, q/k/v biases, fused mlp.gate_up_proj (%d, %d)" % (2 * F_, H) if not moe else
              "dense layers %s, MoE layers %s: mlp.gate (%d, %d), %d per-expert mlp.experts.{e}.* and "
              "mlp.shared_experts.*" % ([l for l in range(m.L) if not m.moe_layers[l]],
                                       [l for l in range(m.L) if m.moe_layers[l]], m.E, H, m.E),
              "all BF16" if not moe else "BF16 but the F32 e_score_correction_bias"))
    # config.json as the releases have it (transformers 4.5x's save)
    rs = text["rope_scaling"]
    spelling = (cfg["model_type"] == ("glm4v_moe" if moe else "glm4v") and text["model_type"] == cfg["model_type"] +
                "_text" and cfg["transformers_version"].startswith("4.5") and "torch_dtype" in cfg and
                text["attention_bias"] is True and text["partial_rotary_factor"] == 0.5 and
                text["tie_word_embeddings"] is False and isinstance(text["eos_token_id"], list) and
                "pad_token_id" in text and "use_qk_norm" not in text and "num_nextn_predict_layers" not in text and
                rs["mrope_section"] == m.section and
                (rs == {"mrope_section": m.section, "type": "default"} and "head_dim" not in text if not moe else
                 rs == {"mrope_section": m.section, "rope_type": "default"} and text["head_dim"] != H // m.NH))
    check(spelling, "%s: config.json in the release's spelling (text_config %s, rope_scaling %s beside rope_theta %g, "
          "partial_rotary_factor 0.5, attention_bias true, %s, no use_qk_norm / num_nextn_predict_layers, untied)" % (
              name, text["model_type"], json.dumps(rs), text["rope_theta"],
              "no head_dim key (hidden / heads = %d)" % HD if not moe else "head_dim %d != hidden / heads %d" % (
                  HD, H // m.NH)))
    # reference.Spec and golden.json read it as GlmVCheck does
    inv = 1.0 / m.theta ** (torch.arange(0, m.R, 2, dtype=torch.float32) / m.R)
    same = (spec.prefix == m.prefix and spec.HD == HD and spec.R == m.R == HD // 2 and model["rotary_dim"] == m.R and
            spec.rope_interleaved == m.adjacent and spec.mrope_section == m.section == model["mrope_section"] and
            not spec.mrope_interleaved and bool(torch.allclose(spec.inv_freq, inv, rtol=1e-6, atol=0)) and
            float(spec.theta) == m.theta and spec.qkv_bias and not spec.o_bias and not spec.qk_norm and
            spec.glm4_norms == m.post_norms and spec.fused_gate_up == (not moe) and not spec.tied and
            spec.eps == m.eps and spec.NKV == m.NKV)
    if moe:
        same = (same and spec.layer_moe == m.moe_layers == model["moe_layers"] and spec.num_experts == m.E and
                spec.top_k == m.k and (spec.n_group, spec.topk_group) == m.groups and spec.router == "sigmoid" and
                spec.routed_scaling_factor == m.scaling and spec.norm_topk_prob and not spec.shared_gated and
                spec.shared_intermediate == text["moe_intermediate_size"] * text["n_shared_experts"] and
                spec.expert_naming == "qwen")
    check(same, "%s: reference.Spec and golden.json read head_dim %d, rotary_dim %d in the %s pairing, mrope %s "
          "(chunked), theta %g, q/k/v biases, %s as GlmVCheck does" % (
              name, HD, m.R, "adjacent" if m.adjacent else "rotate-half", m.section, m.theta,
              "the four norms and the fused MLP" if not moe else
              "MoE layers %s, %d experts top-%d in %d groups keep %d, x%g, a shared expert" % (
                  m.moe_layers, m.E, m.k, m.groups[0], m.groups[1], m.scaling)))
    # the multimodal RoPE: for text (three equal rows) the plain RoPE; for an image's rows (t, h, w differing) each
    # frequency from its band's row, reference.mrope_cos_sin against GlmVCheck's own assignment
    positions = torch.arange(40)
    rows = torch.stack([positions, positions * 0 + 3, positions * 0 + 5])
    plain = m.angles(positions.expand(3, 40))
    inv64 = 1.0 / m.theta ** (torch.arange(0, m.R, 2, dtype=torch.float64) / m.R)
    text_same = bool(torch.equal(plain, torch.outer(positions.double(), inv64).float()))
    cos, sin = ref.mrope_cos_sin(spec, positions.unsqueeze(0), rows.unsqueeze(1))
    image = m.angles(rows)
    # (1e-5: reference's angles are fp32 products, GlmVCheck's float64 ones rounded, at up to 39 rad)
    d = max(float((cos[0, 0, :, :m.R // 2] - image.cos()).abs().max()),
            float((sin[0, 0, :, :m.R // 2] - image.sin()).abs().max()),
            float((cos[0, 0, :, m.R // 2:] - image.cos()).abs().max()))
    check(text_same and d < 1e-5 and not torch.equal(image, plain), "%s: GlmVCheck's multimodal angles of text "
          "positions = the plain RoPE's; for other (t, h, w) rows reference.mrope_cos_sin takes each frequency from "
          "its mrope_section band's row as GlmVCheck does (%.1e)" % (name, d))
    # the routers (GLM-4.5V)
    if moe:
        gaps, last_ok = {"prompt": [], "fed": []}, True
        for e in g["prompts"]:
            n = len(e["input_ids"])
            m.router_calls = []
            m.forward(e["input_ids"] + e["greedy_ids"][:-1])
            for l, choice, groups in m.router_calls:
                top = choice.sort(dim=-1, descending=True)
                gap = top.values[:, m.k - 1] - top.values[:, m.k]
                gs = groups.sort(dim=-1, descending=True).values
                gap = torch.minimum(gap, gs[:, m.groups[1] - 1] - gs[:, m.groups[1]])
                gaps["prompt"].append(float(gap[:n].min()))
                gaps["fed"].append(float(gap[n:].min()))
                last_ok &= top.indices[n - 1, :m.k].tolist() == e["expert_ids_last"][l]
            last_ok &= all(e["expert_ids_last"][l] is None for l in range(m.L) if not m.moe_layers[l])
        m.router_calls = None
        gp, gf = min(gaps["prompt"]), min(gaps["fed"])
        check(abs(gp - model["routing_min_gap"]) < 1e-5 and abs(gf - model["routing_min_gap_generated"]) < 1e-5 and
              min(gp, gf) >= 1e-3 and last_ok, "%s: GlmVCheck's own router gives golden.json's routing gaps (experts "
              "and groups: %.6f, generated %.6f, >= 1e-3) and expert_ids_last" % (name, gp, gf))
    # the what-ifs
    names = ({"rope_adjacent_pairs": ("adjacent", True), "rope_full_head": ("full_head", True),
              "softmax_router": ("softmax_router", True), "shared_expert": ("shared", False),
              "router_bias": ("zero_bias", True), "router_group_limit": ("groups", (1, 1)),
              "router_scaling": ("scaling", 1.0)} if moe else
             {"rope_rotate_half": ("adjacent", False), "rope_full_head": ("full_head", True),
              "qkv_bias": ("qkv_bias", False), "post_norms": ("post_norms", False)})
    ids = g["prompts"][4]["input_ids"]
    check_what_if_effects(name, "GlmVCheck", model, names, lambda: GlmVCheck(cfg, p), ids)

    def refused(change=None, drop=()):
        c2 = json.loads(json.dumps(cfg))
        c2["text_config"].update(change or {})
        for key in drop:
            del c2["text_config"][key]
        try:
            ref.Spec(c2)
        except ValueError:
            return True
        return False
    section = m.section
    cases = {"mrope_section not adding up to rotary_dim / 2": refused(
                 {"rope_scaling": dict(rs, mrope_section=[section[0] + 1] + section[1:])}),
             "rope_scaling without mrope_section": refused({"rope_scaling": {"rope_type": "default"}}),
             "rope_scaling null": refused({"rope_scaling": None}),
             "a linear rope_scaling": refused({"rope_scaling": dict(rs, type="linear", rope_type="linear",
                                                                  factor=2.0)}),
             "a rope_theta in rope_scaling != rope_theta": refused({"rope_scaling": dict(rs, rope_theta=m.theta * 2)})}
    if not moe:
        # Glm4vTextAttention ignores head_dim; without partial_rotary_factor the rope covers the head (1.0), which
        # the sections no longer fit
        cases["head_dim != hidden / heads"] = refused({"head_dim": 2 * HD})
        cases["partial_rotary_factor absent (1.0: the sections no longer fit)"] = refused(
            drop=("partial_rotary_factor",))
    check_refusals(name, cases)


class PhimoeCheck:
    """PhimoeForCausalLM's forward pass again, from transformers 4.x's models/phimoe/modeling_phimoe.py and
    configuration_phimoe.py, sharing nothing with reference.py but the safetensors reader: PhimoeConfig's defaults,
    PhimoeAttention (head_dim = hidden_size // num_heads; q/k/v/o_proj with bias=attention_bias; scores /
    sqrt(head_dim), the mask added, softmax in fp32), PhimoeRotaryEmbedding.forward (mscale = long_mscale if seq_len >
    rope_scaling["original_max_position_embeddings"] else short_mscale; inv_freq from _compute_longrope_parameters with
    seq_len; cos and sin of cat(freqs, freqs) times mscale) with apply_rotary_pos_emb (rotate_half: the pairs (i, i +
    HD/2), turned here as complex numbers of length mscale), the sliding-window mask of
    _prepare_4d_causal_attention_mask_with_cache_position (keys j <= i - sliding_window masked), PhimoeDecoderLayer
    (nn.LayerNorm input_layernorm / post_attention_layernorm, torch's layer_norm with weight and bias), sparsemixer
    (eval mode) and PhimoeSparseMoeBlock.forward's expert loop, PhimoeModel's final nn.LayerNorm, lm_head with its bias.
    What-ifs: `mscale` ("config"; "computed": _compute_longrope_parameters' attention factor), `lm_head_bias`,
    `norm_bias`, `layer_norm` (False: an RMSNorm with the same weight and bias), `qkv_bias`, `o_bias`, `router`
    ("sparsemixer", "mixtral": softmax top-2 renormalised), `masks`, `threshold` (the multiple of jitter_eps),
    `second_excludes_first`, `second_test_from_masked` (the second mask's test on the scores with the first expert's at
    -inf). `router_calls`: None, or a list that receives (layer, logits) per MoE call."""

    # PhimoeConfig's defaults of the keys read here
    DEFAULTS = dict(num_key_value_heads=8, max_position_embeddings=4096 * 32, rms_norm_eps=1e-5,
                    tie_word_embeddings=False, rope_theta=1e6, rope_scaling=None, sliding_window=None,
                    num_experts_per_tok=2, num_local_experts=16, router_jitter_noise=0.01, attention_bias=False,
                    lm_head_bias=False, hidden_act="silu")

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        if c["hidden_act"] != "silu" or c["rope_scaling"] is None:
            raise ValueError("PhimoeCheck: hidden_act %r, rope_scaling %r" % (c["hidden_act"], c["rope_scaling"]))
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"] or self.NH
        self.HD = self.H // self.NH  # PhimoeAttention.__init__
        self.E, self.eps_jitter = c["num_local_experts"], c["router_jitter_noise"]
        self.window = c["sliding_window"]
        rs = c["rope_scaling"]
        self.original = rs["original_max_position_embeddings"]  # (PhimoeConfig copies it to the config)
        self.mscales = (rs["short_mscale"], rs["long_mscale"])
        self.qkv_bias = self.o_bias = bool(c["attention_bias"])
        self.lm_head_bias = bool(c["lm_head_bias"])
        self.norm_bias = self.layer_norm = True
        self.mscale, self.router, self.masks, self.threshold = "config", "sparsemixer", True, 2.0
        self.second_excludes_first, self.second_test_from_masked = True, False
        self.router_calls = None

    def longrope(self, seq_len):
        """modeling_rope_utils.py _compute_longrope_parameters(config, device, seq_len): (inv_freq,
        attention_factor)."""
        c, rs, dim = self.c, self.c["rope_scaling"], self.HD
        factor = c["max_position_embeddings"] / self.original  # (config has original_max_position_embeddings)
        attention_factor = rs.get("attention_factor")
        if attention_factor is None:
            attention_factor = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(self.original))
        ext = torch.tensor(rs["long_factor"] if seq_len and seq_len > self.original else rs["short_factor"],
                           dtype=torch.float32)
        return 1.0 / (ext * c["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)), \
            attention_factor

    def rotation(self, T):
        """PhimoeRotaryEmbedding.forward(x, seq_len=T): (T, HD/2) complex turns of length mscale."""
        inv_freq, attention_factor = self.longrope(T)
        mscale = self.mscales[1] if T > self.original else self.mscales[0]
        if self.mscale == "computed":
            mscale = attention_factor
        angles = torch.outer(torch.arange(T, dtype=torch.float32), inv_freq)
        return torch.polar(torch.full_like(angles, float(mscale)), angles)

    def norm(self, x, name):
        w = self.p[name + ".weight"]
        b = self.p[name + ".bias"] if self.norm_bias else None
        eps = self.c["rms_norm_eps"]
        if self.layer_norm:  # nn.LayerNorm(hidden_size, eps=config.rms_norm_eps, elementwise_affine=True)
            return torch.nn.functional.layer_norm(x, (self.H,), w, b, eps)
        y = w * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps))
        return y if b is None else y + b

    def linear(self, x, name, bias):
        return torch.nn.functional.linear(x, self.p[name + ".weight"], self.p[name + ".bias"] if bias else None)

    def attention(self, l, x, turn):
        pre, HD, T = "model.layers.%d.self_attn." % l, self.HD, x.shape[0]
        q = self.linear(x, pre + "q_proj", self.qkv_bias).view(T, self.NH, HD)
        k = self.linear(x, pre + "k_proj", self.qkv_bias).view(T, self.NKV, HD)
        v = self.linear(x, pre + "v_proj", self.qkv_bias).view(T, self.NKV, HD)

        def rotary(y):  # q * cos + rotate_half(q) * sin: the pair (y[i], y[i + HD/2]) as one complex number
            z = torch.complex(y[..., :HD // 2], y[..., HD // 2:]) * turn.unsqueeze(1)
            return torch.cat((z.real, z.imag), dim=-1)
        q, k = rotary(q), rotary(k)
        i, j = torch.arange(T).unsqueeze(1), torch.arange(T).unsqueeze(0)
        masked = j > i
        if self.window is not None:
            masked = masked | (j <= i - self.window)
        heads = []
        for hh in range(self.NH):
            kv = hh // (self.NH // self.NKV)  # repeat_kv
            w = (q[:, hh] @ k[:, kv].T) / math.sqrt(HD)
            w = w + torch.where(masked, torch.finfo(torch.float32).min, 0.0)
            e = torch.exp(w - w.max(dim=-1, keepdim=True).values)
            heads.append((e / e.sum(dim=-1, keepdim=True)) @ v[:, kv])
        return self.linear(torch.cat(heads, dim=-1), pre + "o_proj", self.o_bias)

    @staticmethod
    def sparsemixer(scores, jitter_eps, threshold=2.0, masks=True, second_excludes_first=True,
                    second_test_from_masked=False):
        """modeling_phimoe.py sparsemixer(scores, jitter_eps, training=False, top_k=2) as written there (the training
        branches left out): (multiplier (N, 2), selected_experts (N, 2), kept (N, 2): the experts each softmax
        keeps)."""
        # first expert
        mask_logits_threshold, max_ind = scores.max(dim=-1, keepdim=True)
        factor = scores.abs().clamp(min=mask_logits_threshold)
        mask_logits_threshold = ((mask_logits_threshold - scores) / factor) > (threshold * jitter_eps)
        masked_gates = scores.masked_fill(mask_logits_threshold, float("-inf")) if masks else scores
        selected_experts = max_ind
        kept = [(masked_gates > float("-inf")).sum(dim=-1)]
        masked_gates = torch.softmax(masked_gates, dim=-1)
        multiplier = masked_gates.gather(dim=-1, index=selected_experts)
        # masked out first expert
        masked_scores = torch.scatter(scores, -1, selected_experts, float("-inf"))
        mask_logits_threshold, max_ind = masked_scores.max(dim=-1, keepdim=True)
        tested = masked_scores if second_test_from_masked else scores
        factor = tested.abs().clamp(min=mask_logits_threshold)
        mask_logits_threshold = ((mask_logits_threshold - tested) / factor) > (threshold * jitter_eps)
        base = masked_scores if second_excludes_first else scores
        masked_gates_top2 = base.masked_fill(mask_logits_threshold, float("-inf")) if masks else base
        selected_experts_top2 = max_ind
        kept.append((masked_gates_top2 > float("-inf")).sum(dim=-1))
        masked_gates_top2 = torch.softmax(masked_gates_top2, dim=-1)
        multiplier_top2 = masked_gates_top2.gather(dim=-1, index=selected_experts_top2)
        return (torch.concat((multiplier, multiplier_top2), dim=-1),
                torch.concat((selected_experts, selected_experts_top2), dim=-1), torch.stack(kept, dim=-1))

    @staticmethod
    def gaps(scores, jitter_eps):
        """(the 2nd minus 3rd largest score, the smallest |(m - s) / max(|s|, m) - 2 jitter_eps| over both masks'
        tests, the second's first expert left out), each over the tokens: how far the choice and each mask are from
        flipping."""
        top = scores.sort(dim=-1, descending=True)
        m1, m2 = top.values[:, :1], top.values[:, 1:2]
        d1 = ((m1 - scores) / scores.abs().clamp(min=m1) - 2 * jitter_eps).abs()
        d2 = ((m2 - scores) / scores.abs().clamp(min=m2) - 2 * jitter_eps).abs()
        d2 = d2.scatter(-1, top.indices[:, :1], float("inf"))
        return float((top.values[:, 1] - top.values[:, 2]).min()), float(torch.minimum(d1, d2).min())

    def moe(self, l, x):
        pre = "model.layers.%d.block_sparse_moe." % l
        router_logits = torch.nn.functional.linear(x, self.p[pre + "gate.weight"])
        if self.router_calls is not None:
            self.router_calls.append((l, router_logits))
        if self.router == "mixtral":  # MixtralSparseMoeBlock's router
            routing_weights = torch.softmax(router_logits, dim=1, dtype=torch.float)
            routing_weights, selected_experts = torch.topk(routing_weights, 2, dim=-1)
            routing_weights = routing_weights / routing_weights.sum(dim=-1, keepdim=True)
        else:
            routing_weights, selected_experts, _ = self.sparsemixer(
                router_logits, self.eps_jitter, self.threshold, self.masks, self.second_excludes_first,
                self.second_test_from_masked)
        final = torch.zeros_like(x)
        expert_mask = torch.nn.functional.one_hot(selected_experts, num_classes=self.E).permute(2, 1, 0)
        for expert_idx in range(self.E):
            idx, top_x = torch.where(expert_mask[expert_idx])
            if top_x.shape[0] == 0:
                continue
            w = lambda n: self.p[pre + "experts.%d.%s.weight" % (expert_idx, n)]  # noqa: E731
            current = x[top_x]
            # PhimoeBlockSparseTop2MLP.forward: w2(act_fn(w1(x)) * w3(x))
            y = torch.nn.functional.linear(torch.nn.functional.silu(torch.nn.functional.linear(current, w("w1"))) *
                                           torch.nn.functional.linear(current, w("w3")), w("w2"))
            final.index_add_(0, top_x, y * routing_weights[top_x, idx, None])
        return final

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p, T = self.p, len(ids)
        turn = self.rotation(T)
        h = p["model.embed_tokens.weight"][torch.tensor(ids)]
        hidden = [h]
        for l in range(self.L):  # PhimoeDecoderLayer.forward
            pre = "model.layers.%d." % l
            h = h + self.attention(l, self.norm(h, pre + "input_layernorm"), turn)
            h = h + self.moe(l, self.norm(h, pre + "post_attention_layernorm"))
            hidden.append(h)
        hidden[-1] = self.norm(h, "model.norm")
        head = p["model.embed_tokens.weight"] if self.c["tie_word_embeddings"] else p["lm_head.weight"]
        return torch.nn.functional.linear(hidden[-1], head, p["lm_head.bias"] if self.lm_head_bias else None), hidden


def check_phimoe(name, spec, p, g, st):
    cfg, m = open_check(name, PhimoeCheck, p, g, st)
    model = g["model"]
    # a sequence past original_max_position_embeddings: the long factors (and long_mscale), which no golden sequence
    # reaches, in reference.forward as in PhimoeCheck
    T = m.original + 24
    long_ids = torch.randint(0, spec.V, (T,), generator=torch.Generator().manual_seed(58)).tolist()
    mine = m.forward(long_ids)[0]
    theirs = ref.forward(spec, p, torch.tensor([long_ids]), capture=False)[0][0]
    d_long = float((mine - theirs).abs().max())
    short = PhimoeCheck(cfg, p)
    short.original = 10 ** 9  # (the short factors throughout: the long ones must change something)
    moved = float((short.forward(long_ids)[0] - mine).abs().max())
    check(d_long < 1e-4 and moved > 1e-2, "%s: on %d tokens (> original_max_position_embeddings %d: long factors, "
          "long_mscale) PhimoeCheck = reference.forward within 1e-4 (%.2e; the short factors there: %.3g)" % (
              name, T, m.original, d_long, moved))
    # the files: PhiMoE's tensors exactly, BF16 but the LayerNorms (F32)
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    H, HD, F_, V = m.H, m.HD, cfg["intermediate_size"], spec.V
    want = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "model.norm.bias": (H,),
            "lm_head.weight": (V, H), "lm_head.bias": (V,)}
    for l in range(m.L):
        x = "model.layers.%d." % l
        for n in ("input_layernorm", "post_attention_layernorm"):
            want.update({x + n + ".weight": (H,), x + n + ".bias": (H,)})
        for n, rows in (("q_proj", m.NH * HD), ("k_proj", m.NKV * HD), ("v_proj", m.NKV * HD), ("o_proj", H)):
            want.update({x + "self_attn.%s.weight" % n: (rows, H if n != "o_proj" else m.NH * HD),
                         x + "self_attn.%s.bias" % n: (rows,)})
        want[x + "block_sparse_moe.gate.weight"] = (m.E, H)
        for e in range(m.E):
            y = x + "block_sparse_moe.experts.%d." % e
            want.update({y + "w1.weight": (F_, H), y + "w3.weight": (F_, H), y + "w2.weight": (H, F_)})
    shapes = {n: tuple(v[1].shape) for n, v in stored.items()}
    dtypes_ok = all(v[0] == ("F32" if "layernorm" in n or n.startswith("model.norm.") else "BF16")
                    for n, v in stored.items())
    check(shapes == want and dtypes_ok, "%s: the file holds exactly PhiMoE's %d tensors (LayerNorm weights and biases, "
          "q/k/v/o weights and biases, block_sparse_moe.gate (%d, %d) and %d experts' w1 / w3 (%d, %d), w2 (%d, %d) "
          "per layer, lm_head.weight and lm_head.bias (%d,)), BF16 but the F32 LayerNorms" % (
              name, len(want), m.E, H, m.E, F_, H, H, F_, V))
    # config.json as transformers 4.x's save_pretrained writes PhimoeConfig
    rs = cfg["rope_scaling"]
    longest = max(len(e["input_ids"]) for e in g["prompts"]) + g["max_new_tokens"]
    computed = m.longrope(1)[1]
    spelling = (cfg["architectures"] == ["PhimoeForCausalLM"] and cfg["model_type"] == "phimoe" and
                "head_dim" not in cfg and cfg["attention_bias"] is True and cfg["lm_head_bias"] is True and
                cfg["tie_word_embeddings"] is False and cfg["num_experts_per_tok"] == 2 and
                cfg["transformers_version"].startswith("4.") and cfg["torch_dtype"] == "bfloat16" and
                rs["type"] == rs["rope_type"] == "longrope" and rs["short_mscale"] == rs["long_mscale"] and
                abs(rs["short_mscale"] - computed) > 0.1 and
                cfg["original_max_position_embeddings"] == rs["original_max_position_embeddings"] and
                len(rs["short_factor"]) == len(rs["long_factor"]) == HD // 2 and cfg["sliding_window"] > longest and
                0 < cfg["router_jitter_noise"] and "input_jitter_noise" in cfg)
    check(spelling, "%s: config.json in PhimoeConfig's saved spelling (no head_dim, attention_bias / lm_head_bias "
          "true, rope_scaling longrope with short_mscale = long_mscale = %g (the computed attention factor: %.4f), "
          "rope_type and original_max_position_embeddings %d beside type, the latter also at the top level; "
          "num_experts_per_tok 2, router_jitter_noise %g, sliding_window %d > the longest sequence %d, untied)" % (
              name, rs["short_mscale"], computed, m.original, cfg["router_jitter_noise"], cfg["sliding_window"],
              longest))
    # reference.Spec and golden.json read it as PhimoeCheck does
    inv_s, inv_l = m.longrope(1)[0], m.longrope(m.original + 1)[0]
    same = (spec.HD == HD and spec.qkv_bias and spec.o_bias and spec.lm_head_bias and spec.layer_norm and
            spec.norm_bias and not spec.parallel_block and spec.eps == cfg["rms_norm_eps"] and spec.R == HD and
            not spec.rope_interleaved and bool(torch.equal(spec.rope["global"][0], inv_s)) and
            bool(torch.equal(spec.rope["long"][0], inv_l)) and
            (spec.rope["global"][1], spec.rope["long"][1]) == tuple(m.mscales) and
            spec.rope_attention_factor == model["rope_attention_factor"] == m.mscales[0] and
            spec.longrope_attention_factor == computed == model["longrope_computed_attention_factor"] and
            spec.long_rope_after == m.original == model["long_rope_after"] and longest - 1 <= m.original and
            model["longest_sequence"] == longest and model["rope_factors_used"] == "short_factor" and
            spec.router == "sparsemixer" and spec.jitter_eps == m.eps_jitter == model["router_jitter_noise"] and
            spec.top_k == 2 and spec.num_experts == m.E and spec.expert_naming == "mixtral" and
            spec.layer_moe == [True] * m.L and spec.moe_intermediate == F_ and not spec.shared_intermediate and
            spec.sliding_window == m.window and spec.layer_sliding == [True] * m.L)
    check(same, "%s: reference.Spec and golden.json read the LayerNorms (weight and bias, eps %g), the q/k/v/o and "
          "lm_head biases, LongRoPE (inverse frequencies of both factor lists, mscale %g / %g, the computed %.4f "
          "unused, the switch past %d; every golden sequence within it) and the router (sparsemixer, jitter %g, %d "
          "experts, per-expert w1 / w3 / w2) as PhimoeCheck does" % (
              name, cfg["rms_norm_eps"], m.mscales[0], m.mscales[1], computed, m.original, m.eps_jitter, m.E))
    # the routers, from PhimoeCheck's sparsemixer: gaps (prompt / fed back), kept-expert histograms, expert_ids_last;
    # and the second mask's test on the scores with the first expert's at -inf: the same weights, bit for bit
    hist = [[0] * m.E, [0] * m.E]
    egap, mgap, last_ok, same_test = [float("inf")] * 2, [float("inf")] * 2, True, True
    inputs = []
    for e in g["prompts"]:
        n = len(e["input_ids"])
        m.router_calls = []
        m.forward(e["input_ids"] + e["greedy_ids"][:-1])
        for l, logits in m.router_calls:
            inputs.append(logits)
            weights, chosen, kept = PhimoeCheck.sparsemixer(logits, m.eps_jitter)
            for i in range(2):
                for c in kept[:, i].tolist():
                    hist[i][c - 1] += 1
            last_ok &= chosen[n - 1].tolist() == e["expert_ids_last"][l]
            for i, part in enumerate((logits[:n], logits[n:])):
                a, b = PhimoeCheck.gaps(part, m.eps_jitter)
                egap[i], mgap[i] = min(egap[i], a), min(mgap[i], b)
    m.router_calls = None
    inputs.append(torch.randn(20000, m.E, generator=torch.Generator().manual_seed(1)))
    for logits in inputs:
        w1, c1, _ = PhimoeCheck.sparsemixer(logits, m.eps_jitter)
        w2, c2, _ = PhimoeCheck.sparsemixer(logits, m.eps_jitter, second_test_from_masked=True)
        same_test &= bool(torch.equal(w1, w2)) and bool(torch.equal(c1, c2))
    gaps_ok = (all(abs(a - b) < 1e-6 for a, b in zip(egap, model["routing_min_expert_gap"])) and
               all(abs(a - b) < 1e-6 for a, b in zip(mgap, model["routing_min_mask_gap"])) and
               min(egap + mgap) >= 1e-3)
    mean = [sum((c + 1) * k for c, k in enumerate(h)) / sum(h) for h in hist]
    check(gaps_ok and last_ok and hist == model["sparsemixer_kept_histogram"],
          "%s: PhimoeCheck's sparsemixer gives golden.json's gaps (2nd - 3rd logit %.6f / %.6f, mask ratio to 2 x "
          "jitter %.6f / %.6f, prompt / fed back, >= 1e-3), kept-expert histograms (mean %.2f and %.2f experts) and "
          "expert_ids_last" % (name, egap[0], egap[1], mgap[0], mgap[1], mean[0], mean[1]))
    check(same_test, "%s: sparsemixer's second mask tested on the scores with the first expert's at -inf instead of "
          "the original scores gives bit-identical weights and experts (%d router inputs of the golden sequences, "
          "20000 random rows)" % (name, len(inputs) - 1))
    # the what-ifs
    names = {"rope_attention_factor": ("mscale", "computed"), "lm_head_bias": ("lm_head_bias", False),
             "norm_bias": ("norm_bias", False), "norm_mean_subtraction": ("layer_norm", False),
             "qkv_bias": ("qkv_bias", False), "o_proj_bias": ("o_bias", False), "router_mixtral": ("router", "mixtral"),
             "router_unmasked": ("masks", False), "router_threshold_eps": ("threshold", 1.0),
             "router_second_keeps_first": ("second_excludes_first", False)}
    check_what_if_effects(name, "PhimoeCheck", model, names, lambda: PhimoeCheck(cfg, p), g["prompts"][4]["input_ids"])

    def refused(change=None, rope=None, drop_rope=()):
        c2 = json.loads(json.dumps(cfg))
        c2.update(change or {})
        c2["rope_scaling"].update(rope or {})
        for key in drop_rope:
            del c2["rope_scaling"][key]
        try:
            ref.Spec(c2)
        except ValueError:
            return True
        return False
    cases = {"num_experts_per_tok 3": refused({"num_experts_per_tok": 3}),
             "a head_dim key != hidden / heads": refused({"head_dim": 2 * HD}),
             "rope type yarn": refused(rope={"type": "yarn", "rope_type": "yarn"}),
             "no short_mscale": refused(drop_rope=("short_mscale",)),
             "a long_mscale that is not a number": refused(rope={"long_mscale": "1.3"}),
             "rope_scaling without original_max_position_embeddings": refused(
                 drop_rope=("original_max_position_embeddings",)),
             "a top-level original_max_position_embeddings that differs": refused(
                 {"original_max_position_embeddings": m.original * 2})}
    check_refusals(name, cases)


class Llama4Check:
    """Llama4ForConditionalGeneration's language model again, from models/llama4/modeling_llama4.py and
    configuration_llama4.py (Llama4TextConfig.__post_init__; modeling_rope_utils.py's _compute_llama3_parameters),
    sharing nothing with reference.py but the safetensors reader: text_config read with Llama4TextConfig's defaults and
    __post_init__'s rules (no_rope_layers, else every no_rope_layer_interval-th layer NoPE; moe_layers, else every
    interleave_moe_layer_step-th; layer_types, else chunked_attention on the RoPE layers); the llama3 inverse frequencies
    pair by pair in Python floats (the wavelength against original / low_freq_factor and original / high_freq_factor:
    kept, divided by factor, or smoothed between), the adjacent pairs (x[2i], x[2i + 1]) rotated in real arithmetic
    (x' = x cos - y sin, y' = x sin + y cos); Llama4TextL2Norm as x / sqrt(mean(x^2) + eps) on the RoPE layers (after
    the rotation); the NoPE layers' query temperature per position in Python (1 + attn_scale log1p((pos + 1) //
    floor_scale)); per-head attention with an explicit causal (and on chunked layers same-chunk) mask and a hand-written
    softmax; Llama4TextMLP on the dense layers (intermediate_size_mlp); on the MoE layers Llama4Router's top-k of the
    logits with their sigmoids and every expert looped over: its input the hidden states times its score (0 where not
    chosen), gate_up_proj[e]'s first F columns the gate and the rest the up, @ down_proj[e], summed, plus the ungated
    shared expert. What-ifs (attributes changed after __init__, golden_models.llama4_what_ifs' names): `scores_on_output`,
    `temperature` (False: none), `temperature_offset` (0: cache_position), `qk_norm` ("rope", "none", "all"), `pairs`
    ("adjacent", "halves"), `router_score` ("sigmoid", "softmax"), `llama3` (False: plain RoPE), `shared` (False: left
    out); `chunk` (None: no chunking). `router_calls`: None, or a list that receives (layer, router logits (T, E)) per MoE
    call."""

    # Llama4TextConfig's defaults of the keys read here
    DEFAULTS = dict(num_key_value_heads=8, head_dim=128, hidden_act="silu", rms_norm_eps=1e-5, intermediate_size=8192,
                    intermediate_size_mlp=16384, num_experts_per_tok=1, num_local_experts=16, moe_layers=None,
                    interleave_moe_layer_step=1, use_qk_norm=True, no_rope_layers=None, no_rope_layer_interval=4,
                    attention_chunk_size=8192, layer_types=None, attn_temperature_tuning=True, floor_scale=8192,
                    attn_scale=0.1, attention_bias=False, rope_theta=500000.0, rope_scaling=None,
                    tie_word_embeddings=False)
    prefix, head = "language_model.model.", "language_model.lm_head.weight"

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg["text_config"])
        if c["hidden_act"] != "silu" or c["attention_bias"]:
            raise ValueError("Llama4Check: hidden_act %r, attention_bias %r" % (c["hidden_act"], c["attention_bias"]))
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV, self.eps = c["num_key_value_heads"] or self.NH, c["rms_norm_eps"]
        self.HD = c["head_dim"] or self.H // self.NH
        # Llama4TextConfig.__post_init__
        self.use_rope = c["no_rope_layers"] or [int((i + 1) % c["no_rope_layer_interval"] != 0) for i in range(self.L)]
        moe = c["moe_layers"]
        if moe is None:
            step = c["interleave_moe_layer_step"]
            moe = list(range(step - 1, self.L, step))
        self.moe_layers = [i in moe for i in range(self.L)]
        types = c["layer_types"] or ["chunked_attention" if r else "full_attention" for r in self.use_rope]
        self.chunked = [t == "chunked_attention" for t in types]
        self.chunk = c["attention_chunk_size"]
        self.E, self.k = c["num_local_experts"], c["num_experts_per_tok"]
        self.inv_freq, self.bands = self.llama3(c["rope_theta"], c["rope_scaling"])
        self.scores_on_output, self.temperature, self.temperature_offset = False, bool(c["attn_temperature_tuning"]), 1
        self.qk_norm = "rope" if c["use_qk_norm"] else "none"
        self.pairs, self.router_score, self.llama3_on, self.shared = "adjacent", "sigmoid", True, True
        self.router_calls = None

    def llama3(self, theta, rs):
        """(inv_freq (HD/2,) fp32, per pair "kept" / "divided" / "smoothed") of _compute_llama3_parameters, pair by
        pair in Python floats."""
        inv, bands = [], []
        for i in range(self.HD // 2):
            base = 1.0 / theta ** (2 * i / self.HD)
            if not rs:
                inv.append(base)
                bands.append("kept")
                continue
            factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
            old = rs["original_max_position_embeddings"]
            wavelen = 2 * math.pi / base
            if wavelen < old / high:  # "wavelen < high_freq_wavelen: do nothing"
                inv.append(base)
                bands.append("kept")
            elif wavelen > old / low:  # "wavelen > low_freq_wavelen: divide by factor"
                inv.append(base / factor)
                bands.append("divided")
            else:  # "otherwise: interpolate between the two, using a smooth factor"
                smooth = (old / wavelen - low) / (high - low)
                inv.append((1 - smooth) * base / factor + smooth * base)
                bands.append("smoothed")
        return torch.tensor(inv, dtype=torch.float32), bands

    def w(self, name):
        return self.p[self.prefix + name]

    def rms(self, x, weight):  # Llama4TextRMSNorm
        return weight * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    def rotate(self, x, cos, sin):
        """x (T, heads, HD): the adjacent pairs (x[2i], x[2i + 1]) (or, pairs "halves", (x[i], x[i + HD/2])) turned by
        the angles, in real arithmetic. cos / sin (T, HD/2)."""
        if self.pairs == "adjacent":
            a, b = x[..., 0::2], x[..., 1::2]
        else:
            a, b = x[..., :self.HD // 2], x[..., self.HD // 2:]
        c, s = cos.unsqueeze(1), sin.unsqueeze(1)
        ra, rb = a * c - b * s, a * s + b * c
        if self.pairs == "adjacent":
            return torch.stack((ra, rb), dim=-1).flatten(-2)
        return torch.cat((ra, rb), dim=-1)

    def temperatures(self, T):
        """The NoPE layers' query factor per position 0 .. T-1, (T,) fp32, in Python."""
        fs, a = self.c["floor_scale"], self.c["attn_scale"]
        return torch.tensor([1.0 + a * math.log1p((pos + self.temperature_offset) // fs) for pos in range(T)],
                            dtype=torch.float32)

    def attention(self, l, x, cos, sin, temps):
        a_, T = "layers.%d.self_attn." % l, x.shape[0]
        lin = torch.nn.functional.linear
        q = lin(x, self.w(a_ + "q_proj.weight")).view(T, self.NH, self.HD)
        k = lin(x, self.w(a_ + "k_proj.weight")).view(T, self.NKV, self.HD)
        v = lin(x, self.w(a_ + "v_proj.weight")).view(T, self.NKV, self.HD)
        if self.use_rope[l]:
            q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
        if self.qk_norm == "all" or (self.qk_norm == "rope" and self.use_rope[l]):
            q = q / torch.sqrt(q.pow(2).mean(-1, keepdim=True) + self.eps)
            k = k / torch.sqrt(k.pow(2).mean(-1, keepdim=True) + self.eps)
        if self.temperature and not self.use_rope[l]:
            q = q * temps.view(T, 1, 1)
        i, j = torch.arange(T).unsqueeze(1), torch.arange(T).unsqueeze(0)
        allowed = j <= i
        if self.chunked[l] and self.chunk is not None:
            allowed = allowed & (j // self.chunk == i // self.chunk)
        heads = []
        for hh in range(self.NH):
            kv = hh // (self.NH // self.NKV)  # repeat_kv
            s = ((q[:, hh] @ k[:, kv].T) * self.HD ** -0.5).masked_fill(~allowed, float("-inf"))
            e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
            heads.append((e / e.sum(dim=-1, keepdim=True)) @ v[:, kv])
        return lin(torch.cat(heads, dim=-1), self.w(a_ + "o_proj.weight"))

    def swiglu(self, x, gate, up, down):  # Llama4TextMLP: down(silu(gate(x)) * up(x)), weights (out, in)
        lin = torch.nn.functional.linear
        return lin(torch.nn.functional.silu(lin(x, gate)) * lin(x, up), down)

    def feed_forward(self, l, x):
        f = "layers.%d.feed_forward." % l
        if not self.moe_layers[l]:
            return self.swiglu(x, self.w(f + "gate_proj.weight"), self.w(f + "up_proj.weight"),
                               self.w(f + "down_proj.weight"))
        logits = x @ self.w(f + "router.weight").T
        if self.router_calls is not None:
            self.router_calls.append((l, logits))
        top, chosen = logits.topk(self.k, dim=-1)
        weights = torch.sigmoid(top) if self.router_score == "sigmoid" else torch.softmax(top, dim=-1)
        scores = torch.zeros_like(logits).scatter(1, chosen, weights)  # (T, E): 0 where not chosen
        gu, down = self.w(f + "experts.gate_up_proj"), self.w(f + "experts.down_proj")
        F_ = down.shape[1]
        out = torch.zeros_like(x)
        for e in range(self.E):
            s = scores[:, e:e + 1]
            xe = x if self.scores_on_output else x * s
            ye = (torch.nn.functional.silu(xe @ gu[e][:, :F_]) * (xe @ gu[e][:, F_:])) @ down[e]
            out = out + (ye * s if self.scores_on_output else ye)
        if self.shared:
            out = out + self.swiglu(x, self.w(f + "shared_expert.gate_proj.weight"),
                                    self.w(f + "shared_expert.up_proj.weight"),
                                    self.w(f + "shared_expert.down_proj.weight"))
        return out

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        T = len(ids)
        inv = self.inv_freq if self.llama3_on else self.llama3(self.c["rope_theta"], None)[0]
        angles = torch.outer(torch.arange(T, dtype=torch.float32), inv)
        cos, sin = torch.cos(angles), torch.sin(angles)
        temps = self.temperatures(T)
        h = self.w("embed_tokens.weight")[torch.tensor(ids)]
        hidden = [h]
        for l in range(self.L):  # Llama4TextDecoderLayer.forward
            h = h + self.attention(l, self.rms(h, self.w("layers.%d.input_layernorm.weight" % l)), cos, sin, temps)
            h = h + self.feed_forward(l, self.rms(h, self.w("layers.%d.post_attention_layernorm.weight" % l)))
            hidden.append(h)
        hidden[-1] = self.rms(h, self.w("norm.weight"))
        head = self.w("embed_tokens.weight") if self.c["tie_word_embeddings"] else self.p[self.head]
        return hidden[-1] @ head.T, hidden


def llama3_inv_freq_as_transformers(theta, dim, rs):
    """modeling_rope_utils.py _compute_llama3_parameters as written there, in torch (the default RoPE's inv_freq, then
    torch.where of the divided band, the smooth factor (inf / nan where low_freq_factor = high_freq_factor: a division
    by zero), torch.where of the medium band)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype=torch.float) / dim))
    factor, low_freq_factor = rs["factor"], rs["low_freq_factor"]
    high_freq_factor, old_context_len = rs["high_freq_factor"], rs["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


def check_llama4(name, spec, p, g, st):
    cfg = fixture_config(name)
    text = cfg["text_config"]
    model = g["model"]
    m = Llama4Check(cfg, p)
    check_against_golden(name, "Llama4Check", m, g, st)
    # a sequence past attention_chunk_size (no golden sequence reaches a second chunk): reference.forward = Llama4Check,
    # and the chunking changes the logits there
    T = m.chunk + 40
    long_ids = torch.randint(0, spec.V, (T,), generator=torch.Generator().manual_seed(59)).tolist()
    mine = m.forward(long_ids)[0]
    theirs = ref.forward(spec, p, torch.tensor([long_ids]), capture=False)[0][0]
    d_long = float((mine - theirs).abs().max())
    unchunked = Llama4Check(cfg, p)
    unchunked.chunk = None
    moved = float((unchunked.forward(long_ids)[0][m.chunk:] - mine[m.chunk:]).abs().max())
    same_first = float((unchunked.forward(long_ids)[0][:m.chunk] - mine[:m.chunk]).abs().max())
    check(d_long < 1e-4 and moved > 1e-2 and same_first < 1e-6,
          "%s: on %d tokens (past attention_chunk_size %d: the chunked layers' second chunk) Llama4Check = "
          "reference.forward within 1e-4 (%.2e; no chunking changes the positions past it by %.3g, not those before)" % (
              name, T, m.chunk, d_long, moved))
    # the files: Llama 4's tensors under language_model.*, BF16 matrices and F32 norms, beside the stand-ins
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    H, HD, E, Fm, Fd = m.H, m.HD, m.E, text["intermediate_size"], text["intermediate_size_mlp"]
    want = language_model_shapes(m, spec.V)
    want[m.head] = want.pop("lm_head.weight")
    for l in range(m.L):
        x = m.prefix + "layers.%d.feed_forward." % l
        if m.moe_layers[l]:
            want.update({x + "router.weight": (E, H), x + "experts.gate_up_proj": (E, H, 2 * Fm),
                         x + "experts.down_proj": (E, Fm, H), x + "shared_expert.gate_proj.weight": (Fm, H),
                         x + "shared_expert.up_proj.weight": (Fm, H), x + "shared_expert.down_proj.weight": (H, Fm)})
        else:
            want.update({x + "gate_proj.weight": (Fd, H), x + "up_proj.weight": (Fd, H), x + "down_proj.weight": (H, Fd)})
    stand_ins = sorted(n for n in stored if n.startswith(("vision_model.", "multi_modal_projector.")))
    dtypes_ok = all(stored[n][0] == ("F32" if n.endswith("norm.weight") else "BF16") for n in want)
    same = ({n: tuple(v[1].shape) for n, v in stored.items() if n not in stand_ins} == want and dtypes_ok and
            any(n.startswith("vision_model.") for n in stand_ins) and
            "multi_modal_projector.linear_1.weight" in stand_ins and stand_ins == model["stand_in_tensors"])
    check(same, "%s: the file holds exactly Llama 4's %d tensors under language_model.model.* and "
          "language_model.lm_head.weight (MoE layers %s: feed_forward.router (%d, %d), experts.gate_up_proj (%d, %d, %d), "
          "experts.down_proj (%d, %d, %d), shared_expert of %d; dense layers: feed_forward.gate/up/down_proj of %d), BF16 "
          "matrices and F32 norms, beside %d stand-ins (%s)" % (
              name, len(want), [l for l in range(m.L) if m.moe_layers[l]], E, H, E, H, 2 * Fm, E, Fm, H, Fm, Fd,
              len(stand_ins), ", ".join(stand_ins)))
    # config.json as the released Llama 4 configs are shaped (transformers 4.51's Llama4Config.to_dict)
    rs = text["rope_scaling"]
    longest = max(len(e["input_ids"]) for e in g["prompts"]) + g["max_new_tokens"]
    step = text["interleave_moe_layer_step"]
    spelling = (cfg["architectures"] == ["Llama4ForConditionalGeneration"] and cfg["model_type"] == "llama4" and
                text["model_type"] == "llama4_text" and cfg["vision_config"]["model_type"] == "llama4_vision_model" and
                cfg["tie_word_embeddings"] is False and text["tie_word_embeddings"] is False and
                cfg["torch_dtype"] == text["torch_dtype"] == "bfloat16" and
                cfg["transformers_version"].startswith("4.") and
                all(k in cfg for k in ("boi_token_index", "eoi_token_index", "image_token_index")) and
                0 in text["no_rope_layers"] and 1 in text["no_rope_layers"] and
                text["moe_layers"] == list(range(step - 1, m.L, step)) and step > 1 and
                rs["rope_type"] == "llama3" and rs["low_freq_factor"] == rs["high_freq_factor"] and
                "rope_parameters" not in text and text["attention_chunk_size"] >= longest and
                text["use_qk_norm"] is True and text["attn_temperature_tuning"] is True and
                text["intermediate_size"] != text["intermediate_size_mlp"] and text["num_experts_per_tok"] > 1)
    check(spelling, "%s: config.json in the released Llama 4 spelling (text_config llama4_text with no_rope_layers %s, "
          "moe_layers %s beside interleave_moe_layer_step %d, rope_scaling llama3 x%g from %d with low = high freq "
          "factor %g beside rope_theta %g, attention_chunk_size %d >= the longest sequence %d, use_qk_norm, "
          "attn_temperature_tuning with floor_scale %d / attn_scale %g, intermediate_size %d / _mlp %d, top-%d of %d; "
          "boi / eoi / image token indices, vision_config llama4_vision_model, untied, bfloat16)" % (
              name, text["no_rope_layers"], text["moe_layers"], step, rs["factor"],
              rs["original_max_position_embeddings"], rs["low_freq_factor"], text["rope_theta"],
              text["attention_chunk_size"], longest, text["floor_scale"], text["attn_scale"], text["intermediate_size"],
              text["intermediate_size_mlp"], m.k, m.E))
    # the llama3 frequencies: transformers' torch.where form (the smooth factor's division by zero where low = high
    # stays in the band torch.where drops) = Llama4Check's pair-by-pair reading = reference.Spec's; no smoothed pair
    hf_inv = llama3_inv_freq_as_transformers(float(text["rope_theta"]), HD, rs)
    kept, divided = m.bands.count("kept"), m.bands.count("divided")
    divided_pairs = [i for i, b in enumerate(m.bands) if b == "divided"]
    same = (bool(torch.isfinite(hf_inv).all()) and bool(((hf_inv - m.inv_freq).abs() <= 1e-6 * m.inv_freq).all()) and
            bool(torch.equal(spec.inv_freq, hf_inv)) and kept and divided and kept + divided == HD // 2 and
            model["llama3_pairs_kept_smoothed_divided"] == [kept, 0, divided] and
            model["llama3_divided_pairs"] == divided_pairs)
    check(same, "%s: llama3 with low_freq_factor = high_freq_factor: transformers' torch.where form (finite; the "
          "smoothed band empty) = Llama4Check's pair-by-pair wavelengths (1e-6 relative) = reference.Spec's (exactly): "
          "pairs %s divided by %g (wavelengths over %d), the other %d kept" % (
              name, divided_pairs, rs["factor"], rs["original_max_position_embeddings"] / rs["low_freq_factor"], kept))
    # reference.Spec and golden.json read the layers, temperature, MoE and names as Llama4Check does
    prefix, head = ref.weight_names(spec, p)
    chunked = [t == "chunked_attention" for t in model["layer_types"]]
    same = (spec.arch == ref.LLAMA4 and spec.layer_use_rope == [bool(r) for r in m.use_rope] == model["layer_use_rope"]
            and spec.layer_chunked == m.chunked == chunked and spec.attention_chunk_size == m.chunk ==
            model["attention_chunk_size"] and spec.layer_qk_l2norm == model["layer_qk_l2norm"] ==
            [bool(r) for r in m.use_rope] and spec.layer_temperature == model["layer_temperature"] ==
            [not r for r in m.use_rope] and spec.temperature_floor_scale == text["floor_scale"] ==
            model["temperature_floor_scale"] and spec.temperature_attn_scale == text["attn_scale"] ==
            model["temperature_attn_scale"] and spec.temperature_offset == 1.0 and spec.rope_interleaved and
            spec.HD == HD and spec.NKV == m.NKV and spec.eps == m.eps and spec.attn_scale == HD ** -0.5 and
            spec.layer_moe == m.moe_layers and spec.num_experts == m.E and spec.top_k == m.k and
            spec.moe_intermediate == spec.shared_intermediate == Fm and spec.F == Fd and not spec.shared_gated and
            spec.router == "llama4" and spec.expert_naming == "llama4" and not spec.norm_topk_prob and
            (prefix, head) == (m.prefix, m.head) and not spec.tied and spec.sliding_window is None and
            not any(spec.layer_sliding))
    check(same, "%s: reference.Spec and golden.json read the layers (RoPE %s, chunked %s of %d, L2 q/k norm on the "
          "RoPE layers, temperature on the NoPE layers: floor_scale %d, attn_scale %g), head_dim %d, the eps, the MoE "
          "layers %s (top-%d of %d, experts and shared expert of %d, dense %d) and language_model.* as Llama4Check "
          "does" % (name, m.use_rope, m.chunked, m.chunk, text["floor_scale"], text["attn_scale"], HD,
                    [l for l in range(m.L) if m.moe_layers[l]], m.k, m.E, Fm, Fd))
    # the temperature at every step, and where each prompt's sequence reaches
    steps = model["temperature_per_step"]
    factors = m.temperatures(model["temperature_last_position"] + 1)
    d = max(abs(float(factors[x]) - f) for x, f in steps)
    fs = text["floor_scale"]
    want_steps = [0] + [x for x in range(1, model["temperature_last_position"] + 1) if (x + 1) % fs == 0]
    reach = [[len(e["input_ids"]) // fs, (len(e["input_ids"]) + g["max_new_tokens"] - 1) // fs] for e in g["prompts"]]
    check(d < 1e-6 and [x for x, _ in steps] == want_steps and
          model["temperature_last_position"] == longest - 2 and steps[-1][1] > 1.5,
          "%s: Llama4Check's query temperature at each step = golden.json's (%s; %.1e); floor((pos + 1) / %d) of each "
          "prompt's last token and last fed token: %s" % (
              name, ", ".join("%d: %.4f" % (x, f) for x, f in steps), d, fs, reach))
    # the routers, from Llama4Check's own: gaps between the k-th and (k+1)-th logit (prompt / fed back), expert_ids_last
    gaps, last_ok = [float("inf"), float("inf")], True
    for e in g["prompts"]:
        n = len(e["input_ids"])
        m.router_calls = []
        m.forward(e["input_ids"] + e["greedy_ids"][:-1])
        for l, logits in m.router_calls:
            top = logits.topk(m.k + 1, dim=-1)
            last_ok &= top.indices[n - 1, :m.k].tolist() == e["expert_ids_last"][l]
            for i, part in enumerate((top.values[:n], top.values[n:])):
                gaps[i] = min(gaps[i], float((part[:, m.k - 1] - part[:, m.k]).min()))
        last_ok &= all(e["expert_ids_last"][l] is None for l in range(m.L) if not m.moe_layers[l])
    m.router_calls = None
    check(abs(gaps[0] - model["routing_min_gap"]) < 1e-6 and abs(gaps[1] - model["routing_min_gap_generated"]) < 1e-6
          and min(gaps) >= 1e-3 and last_ok,
          "%s: Llama4Check's router gives golden.json's gaps between the k-th and (k+1)-th logit (k = %d: %.6f / %.6f, "
          "prompt / fed back, >= 1e-3) and expert_ids_last" % (name, m.k, gaps[0], gaps[1]))
    # the what-ifs
    names = {"router_scores_on_output": ("scores_on_output", True), "attn_temperature_tuning": ("temperature", False),
             "temperature_cache_position": ("temperature_offset", 0), "qk_l2_norm": ("qk_norm", "none"),
             "qk_l2_norm_on_nope": ("qk_norm", "all"), "rope_rotate_half": ("pairs", "halves"),
             "router_softmax": ("router_score", "softmax"), "rope_scaling": ("llama3_on", False),
             "shared_expert": ("shared", False)}
    check_what_if_effects(name, "Llama4Check", model, names, lambda: Llama4Check(cfg, p), g["prompts"][4]["input_ids"])

    def refused(change):
        c2 = json.loads(json.dumps(cfg))
        c2["text_config"].update(change)
        try:
            ref.Spec(c2)
        except ValueError:
            return True
        return False
    cases = {"rope type yarn": refused({"rope_scaling": dict(rs, rope_type="yarn")}),
             "no_rope_layers shorter than num_hidden_layers": refused({"no_rope_layers": [1] * (m.L - 1)}),
             "a no_rope_layers entry 2": refused({"no_rope_layers": [2] + [1] * (m.L - 1)}),
             "a layer type sliding_attention": refused({"layer_types": ["sliding_attention"] * m.L}),
             "attention_chunk_size 0": refused({"attention_chunk_size": 0}),
             "attention_chunk_size null": refused({"attention_chunk_size": None}),
             "attention_bias true": refused({"attention_bias": True}),
             "a moe_layers index past the last layer": refused({"moe_layers": [m.L]}),
             "floor_scale 0": refused({"floor_scale": 0})}
    check_refusals(name, cases)
    # what transformers derives when the lists are left out: no_rope_layers from no_rope_layer_interval 4, moe_layers
    # from interleave_moe_layer_step, layer_types from no_rope_layers; and an empty no_rope_layers list (falsy) alike
    c2 = json.loads(json.dumps(cfg))
    for key in ("no_rope_layers", "moe_layers"):
        del c2["text_config"][key]
    c3 = json.loads(json.dumps(cfg))
    c3["text_config"]["no_rope_layers"] = []
    s2, s3 = ref.Spec(c2), ref.Spec(c3)
    check(s2.layer_use_rope == s3.layer_use_rope == spec.layer_use_rope and s2.layer_moe == spec.layer_moe and
          s2.layer_chunked == spec.layer_chunked and s2.layer_qk_l2norm == spec.layer_qk_l2norm and
          s2.layer_temperature == spec.layer_temperature,
          "%s: without the no_rope_layers / moe_layers lists (and with no_rope_layers []) reference.Spec derives the same "
          "layers from no_rope_layer_interval 4 and interleave_moe_layer_step %d (Llama4TextConfig.__post_init__)" % (
              name, step))
    # transformers 5's spelling of the RoPE: one flat rope_parameters dict (rope_type llama3, rope_theta and the scaling
    # keys) in place of rope_theta / rope_scaling: the same frequencies; both at once refused
    c4 = json.loads(json.dumps(cfg))
    c4["text_config"]["rope_parameters"] = dict(c4["text_config"].pop("rope_scaling"),
                                                rope_theta=c4["text_config"].pop("rope_theta"))
    s4 = ref.Spec(c4)
    both = refused({"rope_parameters": c4["text_config"]["rope_parameters"]})
    check(torch.equal(s4.inv_freq, spec.inv_freq) and s4.theta == spec.theta and both,
          "%s: transformers 5's flat rope_parameters (rope_type llama3) give the same inverse frequencies; beside "
          "rope_theta / rope_scaling refused" % name)


def causal_attention_heads(q, k, v, scale):
    """Causal attention over one sequence as the eager attention paths of GraniteMoeHybridAttention and
    NemotronHAttention (JambaAttention) write it: q (T, NH, HD), k / v (T, NKV, HD), query head hh reading kv head
    hh // (NH / NKV) (repeat_kv), the scores times `scale`, the future masked with -inf, the softmax by hand; the heads'
    outputs concatenated, (T, NH HD), before o_proj."""
    T, NH, NKV = q.shape[0], q.shape[1], k.shape[1]
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    heads = []
    for hh in range(NH):
        kv = hh // (NH // NKV)  # repeat_kv
        s = (q[:, hh] @ k[:, kv].T) * scale
        s = s.masked_fill(future, float("-inf"))
        e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
        heads.append((e / e.sum(dim=-1, keepdim=True)) @ v[:, kv])
    return torch.cat(heads, dim=-1)


def mamba2_by_token(m, pre, x, conv_bias, dt_min, softplus, group, span, eps):
    """One Mamba-2 mixer (GraniteMoeHybridMambaLayer's, NemotronHMamba2Mixer's = Zamba2MambaMixer's) over one sequence
    x (T, H), token by token as torch_forward's cached path runs a decoding step from an empty cache; m is the check
    model (its p, the sizes I, mNH, mP, mG, mN, mK and the what-ifs reset_chunk, conv_act, dt_bias, D, norm_first),
    pre the mixer's tensor prefix. in_proj into z | xBC | dt (torch_forward's step 1); the causal conv (step 2): the
    conv state rolled, the new xBC written last, `torch.sum(conv_state * conv1d.weight[:, 0, :], dim=-1)`, plus
    conv1d.bias when `conv_bias`, SiLU; the scan (step 3): dt = softplus(dt + dt_bias) (`softplus` False: not taken)
    clamped at dt_min (time_step_limit's 0, or Nemotron-H's time_step_min), head hh reading B and C of group
    group[hh], the state times exp(dt A) plus dt B x, y = state @ C by torch.bmm, plus D x; the gated RMSNorm (y
    silu(z) first, then each `span` values over their own mean square plus eps, times norm.weight) and out_proj
    (step 4). Returns (the output (T, H), how many (token, head) values of dt lay under dt_min)."""
    p, T = m.p, x.shape[0]
    I, NH, P, G, N, K = m.I, m.mNH, m.mP, m.mG, m.mN, m.mK
    conv_dim = I + 2 * G * N
    projected_states = torch.nn.functional.linear(x, p[pre + "in_proj.weight"])
    gate, hidden_states_B_C, dt_all = projected_states.split([I, conv_dim, NH], dim=-1)
    conv_state = torch.zeros(conv_dim, K)  # the cache's conv_states[l] (HybridMambaAttentionDynamicCache's for Granite)
    ssm_state = torch.zeros(NH, P, N)  # its ssm_states[l] (one sequence)
    A = -torch.exp(p[pre + "A_log"].float())
    under = 0
    ys = []
    for t in range(T):
        if m.reset_chunk and t % m.reset_chunk == 0:
            ssm_state = torch.zeros(NH, P, N)
        conv_state = torch.roll(conv_state, shifts=-1, dims=-1)
        conv_state[:, -1] = hidden_states_B_C[t]
        xbc = torch.sum(conv_state * p[pre + "conv1d.weight"][:, 0, :], dim=-1)
        if conv_bias:
            xbc = xbc + p[pre + "conv1d.bias"]
        if m.conv_act:
            xbc = torch.nn.functional.silu(xbc)
        hidden_states, B, C = torch.split(xbc, [I, G * N, G * N], dim=-1)
        dt = dt_all[t] + p[pre + "dt_bias"] if m.dt_bias else dt_all[t]
        dt = torch.nn.functional.softplus(dt) if softplus else dt
        under += int((dt < dt_min).sum())
        dt = torch.clamp(dt, dt_min)
        dA = torch.exp(dt[:, None, None] * A[:, None, None])  # [num_heads, head_dim, state_size]
        B, C = B.reshape(G, N)[group], C.reshape(G, N)[group]  # [num_heads, state_size]
        xh = hidden_states.reshape(NH, P)
        ssm_state = ssm_state * dA + (dt[:, None, None] * B[:, None, :]) * xh[..., None]
        y = torch.bmm(ssm_state, C.view(NH, N, 1)).view(NH, P)
        if m.D:  # the D skip connection
            y = y + xh * p[pre + "D"][:, None]
        ys.append(y.reshape(I))
    y = torch.stack(ys)
    z = torch.nn.functional.silu(gate)
    if not m.norm_first:
        y = y * z
    grouped = y.view(T, I // span, span)
    y = (grouped * torch.rsqrt(grouped.pow(2).mean(-1, keepdim=True) + eps)).view(T, I)
    if m.norm_first:
        y = y * z
    return torch.nn.functional.linear(p[pre + "norm.weight"] * y, p[pre + "out_proj.weight"]), under


class GraniteHybridCheck:
    """GraniteMoeHybridForCausalLM's forward pass again, from models/granitemoehybrid/modeling_granitemoehybrid.py
    (generated from modular_granitemoehybrid.py) and configuration_granitemoehybrid.py, sharing nothing with
    reference.py but the safetensors reader: GraniteMoeHybridConfig's defaults (the mamba_* keys: d_head "auto" ->
    mamba_expand x hidden_size // mamba_n_heads) and `layers_block_type` (layer_types, else every layer "mamba"),
    GraniteMoeHybridModel.forward (`inputs_embeds * self.embedding_multiplier`; the rotary embedding only when
    position_embedding_type == "rope": compute_default_rope_parameters' inv_freq over head_dim at rope_theta, turned here
    as complex numbers of the rotate-half pairs (i, i + HD/2)), GraniteMoeHybridAttention (`getattr(config, "head_dim",
    hidden_size // num_attention_heads)`, scores times `scaling = config.attention_multiplier`, per head with an explicit
    mask and a hand-written softmax), GraniteMoeHybridRMSNorm, GraniteMoeHybridDecoderLayer.forward (`residual +
    hidden_states * self.residual_multiplier` twice; `moe_hidden_states + self.shared_mlp(hidden_states)` with experts,
    else `self.shared_mlp(hidden_states)`), GraniteMoeHybridMLP (input_linear, chunk(2), act(first) * second,
    output_linear), GraniteMoeHybridTopKGating and GraniteMoeHybridMoE.forward as written there (the top-k logits'
    softmax, the tokens sorted by expert, GraniteMoeHybridParallelExperts' split per expert, index_add), and
    GraniteMoeHybridForCausalLM.forward (`logits / self.config.logits_scaling`, lm_head or the tied embeddings); on
    "mamba" layers GraniteMoeHybridMambaLayer (`mamba`) run token by token as torch_forward's cached path
    (use_precomputed_states) runs a decoding step, from an empty HybridMambaAttentionDynamicCache: the conv state
    rolled, the new xBC written last, `torch.sum(conv_states * self.conv1d.weight.squeeze(1), dim=-1)` plus the bias,
    SiLU; dt = softplus(dt + dt_bias) clamped at 0; the state times exp(dt A) plus dt B x, y = state @ C by torch.bmm,
    plus D x; then GraniteMoeHybridRMSNormGated (y silu(gate) first, one RMS over the whole intermediate size, w) and
    out_proj (where reference.py takes torch_forward's chunked scan for a whole sequence).
    What-ifs: `embedding_multiplier`, `attention_multiplier`, `residual_multiplier`, `logits_scaling` (each set to its
    plain value), `rope` (the rotation on or off), `shared_mlp` (False: no shared_mlp beside the experts), `swapped`
    (input_linear's halves read up first), `shared_width` (shared_mlp read at that width from the start of each stored
    buffer), `k` (num_experts_per_tok: 1, the top-1 expert alone); on Mamba-2 layers `conv_bias`, `conv_act`, `D`, `dt_bias`, `dt_softplus` (False: each left out),
    `norm_first` (True: the RMSNorm before silu(gate)), `norm_group` (an int: the RMSNorm over groups of that many
    values), `head_group` ("first": every head reads group 0; "tile": head h reads group h % n_groups), `reset_chunk`
    (an int: the state back to zero every that many tokens). `router_calls`: None, or a list that receives (layer,
    router logits) per MoE call."""

    # GraniteMoeHybridConfig's defaults of the keys read here
    DEFAULTS = dict(num_key_value_heads=None, hidden_act="silu", rms_norm_eps=1e-6, tie_word_embeddings=False,
                    rope_theta=10000.0, rope_scaling=None, attention_bias=False, embedding_multiplier=1.0,
                    logits_scaling=1.0, residual_multiplier=1.0, attention_multiplier=1.0, num_local_experts=8,
                    num_experts_per_tok=2, shared_intermediate_size=1024, position_embedding_type=None,
                    layer_types=None, mamba_n_heads=128, mamba_n_groups=1, mamba_d_state=256, mamba_d_head="auto",
                    mamba_d_conv=4, mamba_expand=2, mamba_chunk_size=256, mamba_conv_bias=True, mamba_proj_bias=False)

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        self.L = c["num_hidden_layers"]
        self.blocks = c["layer_types"] or ["mamba"] * self.L  # GraniteMoeHybridConfig.layers_block_type
        if (c["hidden_act"] != "silu" or c["attention_bias"] or c["rope_scaling"] or c["mamba_proj_bias"] or
                not set(self.blocks) <= {"attention", "mamba"}):
            raise ValueError("GraniteHybridCheck: hidden_act %r, attention_bias %r, rope_scaling %r, mamba_proj_bias "
                             "%r, layers %r" % (c["hidden_act"], c["attention_bias"], c["rope_scaling"],
                                            c["mamba_proj_bias"], self.blocks))
        self.c, self.p = c, p
        # GraniteMoeHybridMambaLayer.__init__ (GraniteMoeHybridConfig.__init__'s "auto" mamba_d_head)
        self.I = int(c["mamba_expand"] * c["hidden_size"])
        self.mNH, self.mG = c["mamba_n_heads"], c["mamba_n_groups"]
        self.mN, self.mK = c["mamba_d_state"], c["mamba_d_conv"]
        self.mP = self.I // self.mNH if c["mamba_d_head"] == "auto" else c["mamba_d_head"]
        self.conv_bias = self.conv_act = self.D = self.dt_bias = self.dt_softplus = True
        self.norm_first, self.norm_group, self.head_group, self.reset_chunk = False, None, "interleave", None
        self.NH, self.H = c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"] or self.NH
        self.HD = c.get("head_dim", self.H // self.NH)
        self.E, self.k = c["num_local_experts"], c["num_experts_per_tok"]
        self.embedding_multiplier, self.attention_multiplier = c["embedding_multiplier"], c["attention_multiplier"]
        self.residual_multiplier, self.logits_scaling = c["residual_multiplier"], c["logits_scaling"]
        self.rope = c["position_embedding_type"] == "rope"
        self.shared_mlp, self.swapped, self.shared_width = True, False, None
        self.router_calls = None

    def rms(self, x, w):  # GraniteMoeHybridRMSNorm
        return w * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.c["rms_norm_eps"]))

    def turns(self, T):
        """(T, HD/2) complex e^(i position inv_freq_j): compute_default_rope_parameters' inv_freq (dim = head_dim)."""
        dim = self.HD
        inv_freq = 1.0 / (self.c["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        angles = torch.outer(torch.arange(T, dtype=torch.float32), inv_freq)
        return torch.polar(torch.ones_like(angles), angles)

    def attention(self, l, x, turn):
        pre, HD, T = "model.layers.%d.self_attn." % l, self.HD, x.shape[0]
        q = torch.nn.functional.linear(x, self.p[pre + "q_proj.weight"]).view(T, self.NH, HD)
        k = torch.nn.functional.linear(x, self.p[pre + "k_proj.weight"]).view(T, self.NKV, HD)
        v = torch.nn.functional.linear(x, self.p[pre + "v_proj.weight"]).view(T, self.NKV, HD)
        if self.rope:  # apply_rotary_pos_emb: q cos + rotate_half(q) sin, the pair (y[i], y[i + HD/2]) turned
            def rotary(y):
                z = torch.complex(y[..., :HD // 2], y[..., HD // 2:]) * turn.unsqueeze(1)
                return torch.cat((z.real, z.imag), dim=-1)
            q, k = rotary(q), rotary(k)
        heads = causal_attention_heads(q, k, v, self.attention_multiplier)
        return torch.nn.functional.linear(heads, self.p[pre + "o_proj.weight"])

    def shared(self, l, x):
        """GraniteMoeHybridMLP.forward (shared_mlp)."""
        pre = "model.layers.%d.shared_mlp." % l
        w_in, w_out = self.p[pre + "input_linear.weight"], self.p[pre + "output_linear.weight"]
        if self.shared_width is not None:
            W = self.shared_width
            w_in, w_out = w_in[:2 * W], w_out.flatten()[:self.H * W].reshape(self.H, W)
        chunked = torch.nn.functional.linear(x, w_in).chunk(2, dim=-1)
        gate, up = (chunked[1], chunked[0]) if self.swapped else chunked
        return torch.nn.functional.linear(torch.nn.functional.silu(gate) * up, w_out)

    def moe(self, l, layer_input):
        """GraniteMoeHybridMoE.forward with GraniteMoeHybridTopKGating.forward, as written there."""
        pre = "model.layers.%d.block_sparse_moe." % l
        logits = torch.nn.functional.linear(layer_input, self.p[pre + "router.layer.weight"]).float()
        if self.router_calls is not None:
            self.router_calls.append((l, logits))
        top_k_logits, top_k_indices = logits.topk(self.k, dim=1)
        top_k_gates = torch.softmax(top_k_logits, dim=1).type_as(layer_input)
        gates = torch.zeros([top_k_gates.size(0), self.E], dtype=top_k_gates.dtype).scatter(1, top_k_indices, 1)
        expert_size = gates.long().sum(0).tolist()
        _, index_sorted_experts = top_k_indices.flatten().sort(0)
        batch_index = index_sorted_experts.div(self.k, rounding_mode="trunc")
        batch_gates = top_k_gates.flatten()[index_sorted_experts]
        expert_inputs = layer_input[batch_index]
        w_in, w_out = self.p[pre + "input_linear.weight"], self.p[pre + "output_linear.weight"]
        hidden_states = torch.cat([torch.nn.functional.linear(part, w_in[i])  # GraniteMoeHybridParallelExperts
                                   for i, part in enumerate(expert_inputs.split(expert_size, dim=0))], dim=0)
        chunked = hidden_states.chunk(2, dim=-1)
        hidden_states = torch.nn.functional.silu(chunked[0]) * chunked[1]
        expert_outputs = torch.cat([torch.nn.functional.linear(part, w_out[i])
                                    for i, part in enumerate(hidden_states.split(expert_size, dim=0))], dim=0)
        expert_outputs = expert_outputs * batch_gates[:, None]
        return torch.zeros_like(layer_input).index_add(0, batch_index, expert_outputs)

    def mamba(self, l, x):
        """GraniteMoeHybridMambaLayer on one sequence x (T, H), token by token as torch_forward's cached path
        (mamba2_by_token): dt clamped at time_step_limit's 0 only, head h reading group h // (heads / n_groups) of B and
        C, GraniteMoeHybridRMSNormGated over all intermediate_size values at once (norm_group a what-if)."""
        NH, G = self.mNH, self.mG
        group = {"interleave": [hh // (NH // G) for hh in range(NH)], "first": [0] * NH,
                 "tile": [hh % G for hh in range(NH)]}[self.head_group]
        return mamba2_by_token(self, "model.layers.%d.mamba." % l, x, self.conv_bias and self.c["mamba_conv_bias"],
                               0.0, self.dt_softplus, group, self.norm_group or self.I, self.c["rms_norm_eps"])[0]

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p, T = self.p, len(ids)
        turn = self.turns(T)
        h = p["model.embed_tokens.weight"][torch.tensor(ids)] * self.embedding_multiplier
        hidden = [h]
        for l in range(self.L):  # GraniteMoeHybridDecoderLayer.forward
            pre = "model.layers.%d." % l
            x = self.rms(h, p[pre + "input_layernorm.weight"])
            mixed = self.mamba(l, x) if self.blocks[l] == "mamba" else self.attention(l, x, turn)
            h = h + mixed * self.residual_multiplier
            x = self.rms(h, p[pre + "post_attention_layernorm.weight"])
            if self.E > 0:
                m = self.moe(l, x)
                if self.shared_mlp:
                    m = m + self.shared(l, x)
            else:
                m = self.shared(l, x)
            h = h + m * self.residual_multiplier
            hidden.append(h)
        hidden[-1] = self.rms(h, p["model.norm.weight"])
        head = p["model.embed_tokens.weight"] if self.c["tie_word_embeddings"] else p["lm_head.weight"]
        return torch.nn.functional.linear(hidden[-1], head) / self.logits_scaling, hidden


def check_granite_hybrid(name, spec, p, g, st):
    cfg, m = open_check(name, GraniteHybridCheck, p, g, st)
    model = g["model"]
    F_, Fs, H, HD, V = cfg["intermediate_size"], cfg["shared_intermediate_size"], m.H, m.HD, spec.V
    mamba = [t == "mamba" for t in m.blocks]
    I, NH, P, G, N, K = m.I, m.mNH, m.mP, m.mG, m.mN, m.mK
    conv_dim = I + 2 * G * N
    # the files: exactly GraniteMoeHybrid's tensors (self_attn.* on attention layers, mamba.* on Mamba-2 layers),
    # shared_mlp on every layer, the experts only with num_local_experts > 0, lm_head only untied; the norms' dtype the
    # fixture's, F32 A_log / D / dt_bias, BF16 the rest
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    want = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,)}
    if not m.c["tie_word_embeddings"]:
        want["lm_head.weight"] = (V, H)
    for l in range(m.L):
        x = "model.layers.%d." % l
        want.update({x + "input_layernorm.weight": (H,), x + "post_attention_layernorm.weight": (H,),
                     x + "shared_mlp.input_linear.weight": (2 * Fs, H), x + "shared_mlp.output_linear.weight": (H, Fs)})
        if mamba[l]:
            want.update({x + "mamba.in_proj.weight": (I + conv_dim + NH, H), x + "mamba.conv1d.weight": (conv_dim, 1, K),
                         x + "mamba.dt_bias": (NH,), x + "mamba.A_log": (NH,), x + "mamba.D": (NH,),
                         x + "mamba.norm.weight": (I,), x + "mamba.out_proj.weight": (H, I)})
            if m.c["mamba_conv_bias"]:
                want[x + "mamba.conv1d.bias"] = (conv_dim,)
        else:
            want.update({x + "self_attn.q_proj.weight": (m.NH * HD, H), x + "self_attn.k_proj.weight": (m.NKV * HD, H),
                         x + "self_attn.v_proj.weight": (m.NKV * HD, H), x + "self_attn.o_proj.weight": (H, m.NH * HD)})
        if m.E > 0:
            want.update({x + "block_sparse_moe.input_linear.weight": (m.E, 2 * F_, H),
                         x + "block_sparse_moe.output_linear.weight": (m.E, H, F_),
                         x + "block_sparse_moe.router.layer.weight": (m.E, H)})
    norm_dtype = stored["model.norm.weight"][0]
    dtypes_ok = all(v[0] == (norm_dtype if n.endswith("norm.weight") else
                             "F32" if n.endswith(("mamba.A_log", "mamba.D", "mamba.dt_bias")) else "BF16")
                    for n, v in stored.items())
    check({n: tuple(v[1].shape) for n, v in stored.items()} == want and dtypes_ok,
          "%s: the file holds exactly GraniteMoeHybrid's %d tensors (per layer the two norms, %sshared_mlp.input_linear "
          "(%d, %d) / output_linear (%d, %d)%s; %s), BF16 matrices, %s norms%s" % (
              name, len(want), "q/k/v/o_proj on the attention layers, mamba.in_proj (%d, %d) / conv1d (%d, 1, %d)%s / "
              "dt_bias / A_log / D (%d) / norm (%d) / out_proj (%d, %d) on the Mamba-2 layers %s, " % (
                  I + conv_dim + NH, H, conv_dim, K, " + bias" if m.c["mamba_conv_bias"] else "", NH, I, H, I,
                  [l for l in range(m.L) if mamba[l]]) if any(mamba) else "q/k/v/o_proj, ", 2 * Fs, H, H, Fs,
              ", block_sparse_moe.input_linear (%d, %d, %d) / output_linear (%d, %d, %d) / router.layer (%d, %d)" % (
                  m.E, 2 * F_, H, m.E, H, F_, m.E, H) if m.E else "", "untied: lm_head.weight" if "lm_head.weight" in
              want else "tied: no lm_head.weight", norm_dtype, ", F32 A_log / D / dt_bias" if any(mamba) else ""))
    # config.json as transformers 4.56 writes GraniteMoeHybridConfig (granite-4.0-micro's / granite-4.0-h-micro's keys)
    mamba_keys = ("mamba_chunk_size", "mamba_conv_bias", "mamba_d_conv", "mamba_d_head", "mamba_d_state",
                  "mamba_expand", "mamba_n_groups", "mamba_n_heads", "mamba_proj_bias")
    spelling = (cfg["architectures"] == ["GraniteMoeHybridForCausalLM"] and cfg["model_type"] == "granitemoehybrid" and
                len(cfg["layer_types"]) == m.L and "attention" in cfg["layer_types"] and
                "position_embedding_type" in cfg and all(k in cfg for k in mamba_keys) and
                cfg["mamba_d_head"] * cfg["mamba_n_heads"] == cfg["mamba_expand"] * H and "head_dim" not in cfg and
                F_ != Fs and cfg["attention_multiplier"] != HD ** -0.5 and cfg["attention_bias"] is False and
                cfg["rope_scaling"] is None and cfg["transformers_version"].startswith("4.") and
                cfg["torch_dtype"] == "bfloat16" and cfg["normalization_function"] == "rmsnorm" and
                cfg["rms_norm_eps"] != ref.DEFAULTS[ref.GRANITE_HYBRID]["rms_norm_eps"] and
                (cfg["num_experts_per_tok"] == 0) == (cfg["num_local_experts"] == 0) and "time_step_limit" not in cfg)
    if any(mamba):
        # with Mamba-2 layers: a chunk size that prompt 4 crosses twice and some prompt ends inside of, heads sharing
        # the groups (more than one group without experts, granite4-h, so that the head -> group map matters; with
        # experts, granite4-h-moe, one as granite-4.0-h-tiny / -small have), the conv bias, no projection biases
        lengths = [len(e["input_ids"]) for e in g["prompts"]]
        spelling = (spelling and len(g["prompts"][4]["input_ids"]) > 2 * cfg["mamba_chunk_size"] and
                    any(n % cfg["mamba_chunk_size"] for n in lengths) and (1 < G if not m.E else G == 1) and G < NH and
                    cfg["mamba_conv_bias"] is True and cfg["mamba_proj_bias"] is False)
    check(spelling, "%s: config.json in GraniteMoeHybridConfig's saved spelling (layer_types %s, "
          "position_embedding_type %r, the mamba_* keys (d_head %d x n_heads %d = expand %d x hidden %d%s), no head_dim, num_local_experts %d / "
          "num_experts_per_tok %d, intermediate_size %d != shared_intermediate_size %d, attention_multiplier %g != "
          "head_dim^-0.5, rms_norm_eps %g)" % (
              name, "all attention" if not any(mamba) else cfg["layer_types"], cfg["position_embedding_type"], P, NH,
              cfg["mamba_expand"], H, "; n_groups %d, d_state %d, d_conv %d, chunk_size %d" % (G, N, K,
                                                                                               cfg["mamba_chunk_size"])
              if any(mamba) else "", m.E, m.k, F_, Fs, cfg["attention_multiplier"], cfg["rms_norm_eps"]))
    # reference.Spec and golden.json read it as GraniteHybridCheck does
    use_rope = [m.rope and t == "attention" for t in m.blocks]
    same = (spec.HD == HD and spec.NKV == m.NKV and spec.layer_use_rope == use_rope and spec.layer_mamba == mamba and
            spec.num_experts == m.E and spec.layer_moe == [m.E > 0] * m.L and spec.shared_intermediate == Fs and
            not spec.shared_gated and spec.expert_naming == "granite" and spec.tied == m.c["tie_word_embeddings"] and
            (spec.embed_scale, spec.attn_scale, spec.residual_multiplier, spec.logits_scaling) ==
            (m.embedding_multiplier, m.attention_multiplier, m.residual_multiplier, m.logits_scaling) and
            spec.eps == m.c["rms_norm_eps"] and not spec.qkv_bias and not spec.o_bias and not spec.sandwich_norms and
            model["layer_use_rope"] == spec.layer_use_rope and model["intermediate_size"] == F_ and
            model["shared_intermediate_size"] == Fs and model["rms_norm_eps"] == spec.eps and
            model["position_embedding_type"] == cfg["position_embedding_type"] and
            model["layer_types"] == cfg["layer_types"])
    if m.E:
        same = same and spec.top_k == m.k and spec.moe_intermediate == F_ and spec.norm_topk_prob
    if any(mamba):
        sizes = (I, NH, P, G, N, K, cfg["mamba_chunk_size"], m.c["mamba_conv_bias"])
        same = (same and (spec.mamba_I, spec.mamba_NH, spec.mamba_P, spec.mamba_G, spec.mamba_N, spec.mamba_K,
                          spec.mamba_chunk, spec.mamba_conv_bias) == sizes and model["layer_mamba"] == mamba and
                (model["mamba_intermediate_size"], model["mamba_n_heads"], model["mamba_d_head"],
                 model["mamba_n_groups"], model["mamba_d_state"], model["mamba_d_conv"], model["mamba_chunk_size"],
                 model["mamba_conv_bias"]) == sizes and model["mamba_conv_dim"] == conv_dim)
    inv = 1.0 / (m.c["rope_theta"] ** (torch.arange(0, HD, 2, dtype=torch.int64).float() / HD))
    same = same and bool(torch.equal(spec.rope["global"][0], inv)) and spec.rope["global"][1] == 1.0
    check(same, "%s: reference.Spec and golden.json read the layers (%s, RoPE %s, %s), the multipliers "
          "(%g, %g, %g, %g), rms_norm_eps %g and the RoPE's inverse frequencies as GraniteHybridCheck does" % (
              name, "all attention" if not any(mamba) else "Mamba-2 on %s (intermediate %d, %d heads of %d, %d groups, "
              "d_state %d, d_conv %d, chunk %d)" % ([l for l in range(m.L) if mamba[l]], I, NH, P, G, N, K,
                                                    cfg["mamba_chunk_size"]),
              "on every attention layer" if m.rope else "on none", "%d experts top-%d of intermediate_size %d plus "
              "shared_mlp %d" % (m.E, m.k, F_, Fs) if m.E else "shared_mlp %d as the whole MLP" % Fs,
              m.embedding_multiplier, m.attention_multiplier, m.residual_multiplier, m.logits_scaling,
              m.c["rms_norm_eps"]))
    # position_embedding_type: null, absent and "nope" (the released granite-4.0-h-* spelling) all read as no RoPE
    prompts = [e["input_ids"] for e in g["prompts"]]
    readings = {}
    for label, change in (("null", {"position_embedding_type": None}), ("absent", None),
                          ("\"nope\"", {"position_embedding_type": "nope"})):
        c2 = dict(cfg)
        if change is None:
            del c2["position_embedding_type"]
        else:
            c2.update(change)
        readings[label] = ref.Spec(c2).layer_use_rope
    ok = all(r == [False] * m.L for r in readings.values())
    if not m.rope:
        c2 = dict(cfg, position_embedding_type=None if cfg["position_embedding_type"] == "nope" else "nope")
        ok = ok and bool(torch.equal(last_logits(ref.Spec(c2), p, prompts), last_logits(spec, p, prompts)))
    check(ok, "%s: position_embedding_type null, absent (GraniteMoeHybridConfig's default) and \"nope\" all give no RoPE "
          "on any layer%s" % (name, "; %s gives this fixture's logits_last exactly" % (
              "null" if cfg["position_embedding_type"] == "nope" else "\"nope\"") if not m.rope else ""))
    # layers_block_type: no layer_types (absent, null or []) reads every layer as Mamba-2; a "mamba" entry that layer
    c_mamba = dict(cfg, layer_types=["attention"] * (m.L - 1) + ["mamba"]) if not any(mamba) else cfg
    readings = [ref.Spec(c2).layer_mamba for c2 in (
        {k: v for k, v in cfg.items() if k != "layer_types"}, dict(cfg, layer_types=None), dict(cfg, layer_types=[]))]
    ok = all(r == [True] * m.L for r in readings) and ref.Spec(c_mamba).layer_mamba == [
        t == "mamba" for t in c_mamba["layer_types"]]
    check(ok, "%s: no layer_types (absent, null or []) reads every layer as Mamba-2 (GraniteMoeHybridConfig."
          "layers_block_type), and layer_types %s the listed ones" % (name, c_mamba["layer_types"]))
    if any(mamba):
        check_granite_mamba_forms(name, spec, p, g)
    if not m.E:
        # without experts intermediate_size is not read (GraniteMoeHybridMoE is never built)
        c2 = dict(cfg, intermediate_size=cfg["intermediate_size"] * 3)
        ok = bool(torch.equal(last_logits(ref.Spec(c2), p, prompts), last_logits(spec, p, prompts)))
        check(ok, "%s: without experts intermediate_size is not read (x 3 gives the same logits_last)" % name)
    else:
        # GraniteHybridCheck's own router (the top-k logits): expert_ids_last and the routing gaps (golden_models'
        # routing_gap: the k-th minus (k+1)-th softmax probability, prompt and fed back)
        last_ok, gaps = True, [float("inf"), float("inf")]
        for e in g["prompts"]:
            n = len(e["input_ids"])
            m.router_calls = []
            m.forward(e["input_ids"] + e["greedy_ids"][:-1])
            for l, logits in m.router_calls:
                last_ok &= logits[n - 1].topk(m.k).indices.tolist() == e["expert_ids_last"][l]
                probs = torch.softmax(logits, dim=-1).sort(dim=-1, descending=True).values
                for i, part in enumerate((probs[:n], probs[n:])):
                    gaps[i] = min(gaps[i], float((part[:, m.k - 1] - part[:, m.k]).min()))
        m.router_calls = None
        ok = (last_ok and abs(gaps[0] - model["routing_min_gap"]) < 1e-6 and
              abs(gaps[1] - model["routing_min_gap_generated"]) < 1e-6 and min(gaps) >= 1e-3)
        check(ok, "%s: GraniteHybridCheck's router (GraniteMoeHybridTopKGating) gives golden.json's expert_ids_last and "
              "routing gaps (%.6f / %.6f, prompt / fed back)" % (name, gaps[0], gaps[1]))
    # the what-ifs
    names = {"embed_scale": ("embedding_multiplier", 1.0), "attn_scale": ("attention_multiplier", HD ** -0.5),
             "residual_multiplier": ("residual_multiplier", 1.0), "logits_scaling": ("logits_scaling", 1.0),
             "position_embedding_none" if m.rope else "position_embedding_rope": ("rope", not m.rope),
             "shared_mlp_halves_swapped": ("swapped", True), "shared_mlp_width_intermediate_size": ("shared_width", F_)}
    if m.E:
        names["shared_mlp"] = ("shared_mlp", False)
    if m.E and m.k > 1 and any(mamba):
        names["num_experts_per_tok_1"] = ("k", 1)
    if any(mamba):
        names.update({"mamba_conv_bias": ("conv_bias", False), "mamba_conv_activation": ("conv_act", False),
                      "mamba_D": ("D", False), "mamba_dt_bias": ("dt_bias", False),
                      "mamba_dt_softplus": ("dt_softplus", False), "mamba_norm_before_gate": ("norm_first", True),
                      "mamba_state_reset_per_chunk": ("reset_chunk", cfg["mamba_chunk_size"])})
        if G > 1:
            names.update({"mamba_norm_per_group": ("norm_group", I // G), "mamba_groups_first": ("head_group", "first"),
                          "mamba_groups_tiled": ("head_group", "tile")})
    check_what_if_effects(name, "GraniteHybridCheck", model, names, lambda: GraniteHybridCheck(cfg, p),
                          g["prompts"][4]["input_ids"])

    def refused(change=None, drop=()):
        return spec_refuses(cfg, change, drop)
    with_mamba = {"layer_types": c_mamba["layer_types"]}
    cases = {"a layer_types list one short": refused({"layer_types": cfg["layer_types"][:-1]}),
             "an unknown layer type (\"linear_attention\")": refused(
                 {"layer_types": cfg["layer_types"][:-1] + ["linear_attention"]}),
             "position_embedding_type \"alibi\"": refused({"position_embedding_type": "alibi"}),
             "attention_bias true": refused({"attention_bias": True}),
             "shared_intermediate_size 0": refused({"shared_intermediate_size": 0}),
             "num_local_experts -1": refused({"num_local_experts": -1}),
             "rope_parameters": refused({"rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}}),
             "mamba_d_head x mamba_n_heads != mamba_expand x hidden_size": refused(
                 {"mamba_d_head": cfg["mamba_d_head"] + 1}),
             "mamba_n_heads not dividing mamba_expand x hidden_size": refused(
                 {"mamba_n_heads": cfg["mamba_expand"] * H + 1, "mamba_d_head": "auto"}),
             "mamba_proj_bias true with a Mamba-2 layer": refused(dict(with_mamba, mamba_proj_bias=True)),
             "mamba_n_heads not a multiple of mamba_n_groups with a Mamba-2 layer": refused(
                 dict(with_mamba, mamba_n_groups=3)),
             "hidden_act gelu_pytorch_tanh with a Mamba-2 layer": refused(
                 dict(with_mamba, hidden_act="gelu_pytorch_tanh")),
             "time_step_limit [0, 1] with a Mamba-2 layer": refused(dict(with_mamba, time_step_limit=[0.0, 1.0])),
             "mamba_chunk_size 0": refused({"mamba_chunk_size": 0})}
    check_refusals(name, cases)
    # mamba_d_head "auto" (GraniteMoeHybridConfig's default) reads as mamba_expand x hidden_size // mamba_n_heads
    s2 = ref.Spec(dict(cfg, mamba_d_head="auto"))
    check(s2.mamba_P == spec.mamba_P == cfg["mamba_d_head"], "%s: mamba_d_head \"auto\" reads as mamba_expand x "
          "hidden_size // mamba_n_heads = %d, config.json's" % (name, s2.mamba_P))


def check_granite_mamba_forms(name, spec, p, g):
    """Granite 4.0-H: reference.py's chunked scan (torch_forward's ssd naive form, the golden values) against its
    per-token recurrence (ssd_step) on the fixture, whole prompts plus their greedy ids: at mamba_chunk_size and at
    chunk sizes that divide none of the sequence lengths, all within 1e-5 of the logits; golden.json's
    mamba_chunked_vs_recurrent reproduced; with the cache (greedy_batch's path) a prompt's state after its last token
    equals the state ssd_step reaches token by token from an empty one (1e-5 of the largest value: the layers after
    the first see inputs that differ by the rounding of the scans before them), the conv states too."""
    seqs = [e["input_ids"] + e["greedy_ids"][:-1] for e in g["prompts"]]
    recurrent = copy.copy(spec)
    recurrent.mamba_recurrent = True
    want = [ref.forward(recurrent, p, torch.tensor([x]), capture=False)[0][0] for x in seqs]
    lengths = sorted(set(len(x) for x in seqs))
    chunks = [spec.mamba_chunk] + [c for c in (5, 7, 11) if all(n % c for n in lengths)][:2]
    worst = {}
    for c in chunks:
        s2 = copy.copy(spec)
        s2.mamba_chunk = c
        worst[c] = max(float((ref.forward(s2, p, torch.tensor([x]), capture=False)[0][0] - w).abs().max())
                       for x, w in zip(seqs, want))
    check(max(worst.values()) < 1e-5 and len(chunks) == 3,
          "%s: the chunked Mamba-2 scan (torch_forward's ssd naive form) = the per-token recurrence, prompts plus "
          "greedy ids (lengths %s), within 1e-5 of the logits at chunk sizes %s (%s)" % (
              name, lengths, chunks, ", ".join("%.1e" % v for v in worst.values())))
    form = max(float((ref.forward(spec, p, torch.tensor([e["input_ids"]]), capture=False)[0] -
                      ref.forward(recurrent, p, torch.tensor([e["input_ids"]]), capture=False)[0]).abs().max())
               for e in g["prompts"])
    check(float("%.3g" % form) == g["model"]["mamba_chunked_vs_recurrent"] and form <= 1e-5,
          "%s: golden.json's mamba_chunked_vs_recurrent reproduced (%.3g <= 1e-5)" % (name, form))
    # the cached state of a prompt (prefill by the chunked scan) = ssd_step's, and its conv state the last K inputs
    ids = g["prompts"][4]["input_ids"]
    cache, cache_r = {}, {}
    ref.forward(spec, p, torch.tensor([ids]), cache=cache, capture=False)
    ref.forward(recurrent, p, torch.tensor([ids]), cache=cache_r, capture=False)
    layers = [l for l in range(spec.L) if spec.layer_mamba[l]]
    d_state, d_conv = (max(float((cache[l][i] - cache_r[l][i]).abs().max() / cache_r[l][i].abs().max())
                           for l in layers) for i in (1, 0))
    first = bool(torch.equal(cache[layers[0]][0], cache_r[layers[0]][0]))
    check(d_state < 1e-5 and d_conv < 1e-5 and first, "%s: after prompt 4 the chunked scan's final states = the "
          "recurrence's (%.1e of their largest value), the conv states too (%.1e; the first Mamba-2 layer's equal)" % (
              name, d_state, d_conv))


def check_mamba_ssd_forms():
    """reference's chunked Mamba-2 scan (ssd_chunked, chunk 8) and its recurrence (ssd_step) on random inputs (decays
    exp(dt A) from near 1 to near 0, T = 45 over six chunks, the last one short, from a nonzero initial state) against
    a float64 per-token loop written here: both within 1e-6 of the largest |value| (y up to 6.4), final states too."""
    g_ = torch.Generator().manual_seed(11)
    b, T, NH, P, N = 2, 45, 4, 3, 5
    x = torch.randn(b, T, NH, P, generator=g_)
    dt = torch.nn.functional.softplus(torch.randn(b, T, NH, generator=g_) - 2.0)
    A = -torch.tensor([0.05, 1.0, 4.0, 16.0])
    B = torch.randn(b, T, NH, N, generator=g_)
    C = torch.randn(b, T, NH, N, generator=g_)
    s0 = torch.randn(b, NH, P, N, generator=g_) * 0.3
    S = s0.double().clone()
    want = torch.zeros(b, T, NH, P, dtype=torch.float64)
    for t in range(T):
        for i in range(b):
            for hh in range(NH):
                d = float(dt[i, t, hh])
                S[i, hh] = S[i, hh] * math.exp(d * float(A[hh])) + d * torch.outer(x[i, t, hh].double(),
                                                                                   B[i, t, hh].double())
                want[i, t, hh] = S[i, hh] @ C[i, t, hh].double()
    yc, sc = ref.ssd_chunked(x, dt, A, B, C, 8, s0)
    yr, sr = ref.ssd_step(x, dt, A, B, C, s0)
    ys, ss = float(want.abs().max()), float(S.abs().max())
    d = [float((yc - want).abs().max()) / ys, float((yr - want).abs().max()) / ys, float((sc - S).abs().max()) / ss,
         float((sr - S).abs().max()) / ss]
    check(max(d) < 1e-6, "Mamba-2 scan: reference's chunked (8) and per-token forms = a float64 per-token loop, from a "
          "nonzero state over 45 tokens (%.1e, %.1e; states %.1e, %.1e, of the largest |value|)" % tuple(d))


class HunYuanDenseCheck(LlamaCheck):
    """HunYuanDenseV1ForCausalLM's forward pass again, from models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py (and the
    generated modeling_hunyuan_v1_dense.py) and configuration_hunyuan_v1_dense.py, sharing nothing with reference.py but
    the safetensors reader: HunYuanDenseV1Config's defaults (transformers 4.56: rope_theta / rope_scaling);
    HunYuanDenseV1RotaryEmbedding (`if self.rope_type == "dynamic" and alpha:` base = rope_theta * alpha ** (head_dim /
    (head_dim - 2)), inv_freq = 1 / base ** (arange(0, head_dim, 2) / head_dim), attention_scaling 1; else the default
    RoPE at rope_theta), turned here as complex numbers of the rotate-half pairs (i, i + HD/2) (LlamaCheck.rotary);
    HunYuanDenseV1Attention.forward (q/k/v_proj without bias, the view into heads, apply_rotary_pos_emb, THEN
    query_layernorm / key_layernorm: HunYuanDenseV1RMSNorm over head_dim with one (head_dim,) weight; scores times
    head_dim**-0.5 per head with an explicit mask and a hand-written softmax, repeat_kv, o_proj);
    HunYuanDenseV1DecoderLayer (LlamaDecoderLayer) and HunYuanDenseV1MLP (LlamaMLP without biases); the tied head.
    What-ifs: `norm_after_rope` (False: the norms before the rotation, Qwen3's order), `qk_norms` (False: none), `alpha`
    (None: the default RoPE at rope_theta), `base` (a RoPE base of its own in place of the alpha one)."""

    # HunYuanDenseV1Config's defaults of the keys read here
    DEFAULTS = dict(num_key_value_heads=None, head_dim=None, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=10000.0,
                    rope_scaling=None, attention_bias=False, mlp_bias=False, tie_word_embeddings=False)

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        if c["hidden_act"] != "silu" or c["attention_bias"] or c["mlp_bias"] or c["head_dim"] is None:
            raise ValueError("HunYuanDenseCheck: hidden_act %r, attention_bias %r, mlp_bias %r, head_dim %r" % (
                c["hidden_act"], c["attention_bias"], c["mlp_bias"], c["head_dim"]))
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"] or self.NH
        self.HD = c["head_dim"]  # HunYuanDenseV1Attention: getattr(config, "head_dim", ...): the listed value
        self.qkv_bias = self.o_bias = self.mlp_bias = False
        rs = c["rope_scaling"] or {}
        self.alpha = rs.get("alpha") if rs.get("rope_type", rs.get("type")) == "dynamic" else None
        self.norm_after_rope, self.qk_norms, self.base = True, True, None

    def rope_base(self):
        if self.base is not None:
            return self.base
        theta, dim = self.c["rope_theta"], self.HD
        return theta * self.alpha ** (dim / (dim - 2)) if self.alpha else theta

    def inv_freq(self):
        return 1.0 / (self.rope_base() ** (torch.arange(0, self.HD, 2).float() / self.HD))

    def attention(self, l, x):
        """HunYuanDenseV1Attention.forward on x (T, H), the angles self.angles (HunYuanMoEV1Attention's the same)."""
        pre, HD, T = "model.layers.%d." % l, self.HD, x.shape[0]
        q = self.linear(x, pre + "self_attn.q_proj", False).view(T, self.NH, HD)
        k = self.linear(x, pre + "self_attn.k_proj", False).view(T, self.NKV, HD)
        v = self.linear(x, pre + "self_attn.v_proj", False).view(T, self.NKV, HD)
        wq, wk = self.p[pre + "self_attn.query_layernorm.weight"], self.p[pre + "self_attn.key_layernorm.weight"]
        if self.qk_norms and not self.norm_after_rope:
            q, k = self.rms(q, wq), self.rms(k, wk)
        q, k = self.rotary(q, self.angles), self.rotary(k, self.angles)
        if self.qk_norms and self.norm_after_rope:  # each head's HD values: the last dim of (T, heads, HD)
            q, k = self.rms(q, wq), self.rms(k, wk)
        allowed = torch.ones(T, T, dtype=torch.bool).tril()
        heads = []
        for hh in range(self.NH):
            kv = hh // (self.NH // self.NKV)  # repeat_kv
            s = ((q[:, hh] @ k[:, kv].T) * HD ** -0.5).masked_fill(~allowed, float("-inf"))
            e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
            heads.append((e / e.sum(dim=-1, keepdim=True)) @ v[:, kv])
        return self.linear(torch.cat(heads, dim=-1), pre + "self_attn.o_proj", False)

    def swiglu(self, x, pre):  # HunYuanDenseV1MLP / HunYuanMoEV1MLP (LlamaMLP): down(silu(gate x) * up x), no biases
        gate, up = self.linear(x, pre + "gate_proj", False), self.linear(x, pre + "up_proj", False)
        return self.linear(torch.nn.functional.silu(gate) * up, pre + "down_proj", False)

    def feed_forward(self, l, x):
        return self.swiglu(x, "model.layers.%d.mlp." % l)

    def layer(self, l, h, angles):  # LlamaDecoderLayer.forward
        pre = "model.layers.%d." % l
        self.angles = angles
        h = h + self.attention(l, self.rms(h, self.p[pre + "input_layernorm.weight"]))
        return h + self.feed_forward(l, self.rms(h, self.p[pre + "post_attention_layernorm.weight"]))

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        return plain_decoder_forward(self, ids, self.rms, inv_freq=self.inv_freq())


def swiglu_tensors(x, H, width):
    """The names and shapes of one gated MLP's gate_proj / up_proj / down_proj weights under `x`."""
    return {x + "gate_proj.weight": (width, H), x + "up_proj.weight": (width, H), x + "down_proj.weight": (H, width)}


def hunyuan_attention_tensors(m, x):
    """The names and shapes of a HunYuan V1 layer's norms and attention weights under `x` (HunYuanDenseCheck m's
    sizes): Llama's q/k/v/o_proj without biases, the two layer norms, query_layernorm / key_layernorm (head_dim,)."""
    H, HD = m.H, m.HD
    return {x + "input_layernorm.weight": (H,), x + "post_attention_layernorm.weight": (H,),
            x + "self_attn.q_proj.weight": (m.NH * HD, H), x + "self_attn.k_proj.weight": (m.NKV * HD, H),
            x + "self_attn.v_proj.weight": (m.NKV * HD, H), x + "self_attn.o_proj.weight": (H, m.NH * HD),
            x + "self_attn.query_layernorm.weight": (HD,), x + "self_attn.key_layernorm.weight": (HD,)}


def hunyuan_release_spelling(cfg):
    """The keys Tencent's Hunyuan releases (Hunyuan-7B-Instruct, Hunyuan-A13B-Instruct) spell alike: rope_scaling
    {"type": "dynamic", "alpha": a > 1, "factor": 1.0} with the unread beta / mscale keys beside rope_theta (no
    rope_parameters), use_qk_norm true, eod_token_id, pretraining_tp 1, no biases, rms_norm_eps 1e-5, tied, bfloat16,
    written by transformers 4.x."""
    rs = cfg["rope_scaling"]
    return (rs.get("type") == "dynamic" and "rope_type" not in rs and isinstance(rs.get("alpha"), float) and
            rs["alpha"] > 1.0 and rs.get("factor") == 1.0 and
            all(k in rs for k in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim")) and cfg["use_qk_norm"] is True
            and "eod_token_id" in cfg and cfg["pretraining_tp"] == 1 and cfg["attention_bias"] is False and
            cfg["mlp_bias"] is False and cfg["rms_norm_eps"] == 1e-5 and cfg["tie_word_embeddings"] is True and
            cfg["torch_dtype"] == "bfloat16" and "rope_parameters" not in cfg and
            cfg["transformers_version"].startswith("4."))


def hunyuan_attention_read(spec, m, model):
    """Whether reference.Spec and golden.json (`model`) read a HunYuan V1 fixture's attention as HunYuanDenseCheck m
    does: head_dim, kv heads, the q/k norms (names, after RoPE, per head), no biases, the head, eps, scale, the alpha
    base and its inverse frequencies (attention factor 1, every layer), within max_position_embeddings."""
    inv, HD = m.inv_freq(), m.HD
    return (spec.HD == HD and spec.NKV == m.NKV and spec.qk_norm and spec.qk_norm_after_rope and
            spec.qk_norm_names == ("query_layernorm", "key_layernorm") and not spec.qk_norm_per_head and
            not spec.qk_norm_full and not spec.norm_offset and not spec.qkv_bias and not spec.o_bias and
            not spec.mlp_bias and spec.tied == m.c["tie_word_embeddings"] and spec.eps == m.c["rms_norm_eps"] and
            spec.attn_scale == HD ** -0.5 and bool(torch.equal(spec.rope["global"][0], inv)) and
            spec.rope["global"][1] == 1.0 and spec.layer_use_rope == [True] * m.L and
            model["rope_base"] == m.rope_base() and model["rope_alpha"] == m.alpha and
            model["rope_inv_freq"] == [float(x) for x in inv] and model["rms_norm_eps"] == m.c["rms_norm_eps"] and
            model["qk_norm_weights"] == ["self_attn.query_layernorm.weight", "self_attn.key_layernorm.weight"] and
            model["longest_sequence"] <= m.c["max_position_embeddings"])


def check_hunyuan_dense(name, spec, p, g, st):
    cfg, m = open_check(name, HunYuanDenseCheck, p, g, st)
    model = g["model"]
    H, HD, V, F_ = m.H, m.HD, spec.V, cfg["intermediate_size"]
    # the file: exactly HunYuanDenseV1's tensors, all BF16 as released
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    want = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,)}
    if not m.c["tie_word_embeddings"]:
        want["lm_head.weight"] = (V, H)
    for l in range(m.L):
        x = "model.layers.%d." % l
        want.update(hunyuan_attention_tensors(m, x))
        want.update(swiglu_tensors(x + "mlp.", H, F_))
    check({n: tuple(v[1].shape) for n, v in stored.items()} == want and all(v[0] == "BF16" for v in stored.values()),
          "%s: the file holds exactly HunYuanDenseV1's %d tensors (per layer q/k/v/o_proj, self_attn.query_layernorm / "
          "key_layernorm (%d,), the two norms, mlp.gate/up/down_proj; %s), all BF16" % (
              name, len(want), HD, "untied: lm_head.weight" if "lm_head.weight" in want else "tied: no lm_head.weight"))
    # config.json in tencent/Hunyuan-7B-Instruct's spelling
    rs = cfg["rope_scaling"]
    spelling = (cfg["architectures"] == ["HunYuanDenseV1ForCausalLM"] and cfg["model_type"] == "hunyuan_v1_dense" and
                cfg.get("head_dim") == HD and HD != H // m.NH and hunyuan_release_spelling(cfg))
    check(spelling, "%s: config.json in Hunyuan-7B-Instruct's spelling (head_dim %d listed, != hidden / heads %d; "
          "rope_scaling %s beside rope_theta %r; use_qk_norm, eod_token_id, pretraining_tp; tied)" % (
              name, HD, H // m.NH, json.dumps(rs, sort_keys=True), cfg["rope_theta"]))
    # reference.Spec and golden.json read it as HunYuanDenseCheck does
    inv = m.inv_freq()
    check(hunyuan_attention_read(spec, m, model), "%s: reference.Spec and golden.json read the q/k norms "
          "(query_layernorm / key_layernorm after RoPE), "
          "the RoPE base %.2f = %r x %r^(%d/%d) and its inverse frequencies as HunYuanDenseCheck does" % (
              name, m.rope_base(), cfg["rope_theta"], m.alpha, HD, HD - 2))
    # other spellings of the same rope_scaling; rope_scaling null
    readings = {}
    for label, c2 in (("\"rope_type\" in place of \"type\"", dict(cfg, rope_scaling={"rope_type": "dynamic",
                                                                                         "alpha": rs["alpha"]})),
                      ("only type and alpha", dict(cfg, rope_scaling={"type": "dynamic", "alpha": rs["alpha"]}))):
        readings[label] = torch.equal(ref.Spec(c2).rope["global"][0], inv)
    m0 = HunYuanDenseCheck(dict(cfg, rope_scaling=None), p)
    plain = ref.Spec(dict(cfg, rope_scaling=None)).rope["global"][0]
    ok = all(readings.values()) and torch.equal(plain, m0.inv_freq()) and not torch.equal(plain, inv)
    check(ok, "%s: %s give the same inverse frequencies; rope_scaling null the default ones at rope_theta (%s)" % (
        name, " and ".join(readings), ", ".join("%s %s" % (k, v) for k, v in readings.items())))
    # the what-ifs
    theta, alpha = cfg["rope_theta"], m.alpha
    names = {"qk_norm_before_rope": ("norm_after_rope", False), "qk_norm": ("qk_norms", False),
             "rope_plain_theta": ("alpha", None), "rope_alpha_exponent_one": ("base", theta * alpha)}
    check_what_if_effects(name, "HunYuanDenseCheck", model, names, lambda: HunYuanDenseCheck(cfg, p),
                          g["prompts"][4]["input_ids"])

    def refused(change=None, drop=()):
        return spec_refuses(cfg, change, drop)
    cases = {"no head_dim": refused(drop=("head_dim",)), "head_dim null": refused({"head_dim": None}),
             "use_qk_norm false": refused({"use_qk_norm": False}),
             "rope_scaling linear": refused({"rope_scaling": {"type": "linear", "factor": 2.0}}),
             "rope_scaling dynamic without alpha": refused({"rope_scaling": {"type": "dynamic", "factor": 2.0}}),
             "rope_parameters": refused({"rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}}),
             "attention_bias true": refused({"attention_bias": True}), "mlp_bias true": refused({"mlp_bias": True})}
    check_refusals(name, cases)


class HunYuanMoeCheck(HunYuanDenseCheck):
    """HunYuanMoEV1ForCausalLM's forward pass again, from models/hunyuan_v1_moe/modular_hunyuan_v1_moe.py (the generated
    modeling_hunyuan_v1_moe.py of transformers 4.56 / 4.57) and configuration_hunyuan_v1_moe.py, sharing nothing with
    reference.py but the safetensors reader: HunYuanMoEV1Config's defaults; HunYuanMoEV1Attention and
    HunYuanMoEV1RotaryEmbedding as HunYuanDenseCheck has them (the same code: q/k norms after the rotation, the alpha
    base); HunYuanMoEV1DecoderLayer (LlamaDecoderLayer) with HunYuanMoEV1Moe on every layer: HunYuanMoEV1Gate (wg an
    fp32 nn.Linear, the hidden states cast to fp32 first), `num_experts if isinstance(num_experts, int) else
    num_experts[layer_idx]` and top_k alike from moe_topk, the forward's `F.softmax(router_logits, dim=1,
    dtype=torch.float)`, torch.topk, `routing_weights /= routing_weights.sum(dim=-1, keepdim=True)`, the one_hot(...)
    .permute(2, 1, 0) / where / index_add_ loop over the experts (per expert mlp.experts.{e}.*, or transformers 5's
    stacked mlp.experts.gate_up_proj / down_proj: stacked_experts_forward, HunYuanMoEV1Experts = MixtralExperts), then
    `final_hidden_states + hidden_states_mlp` (mlp.shared_mlp, a HunYuanMoEV1MLP of intermediate_size, ungated).
    What-ifs beside HunYuanDenseCheck's: `score` ("sigmoid" in place of the softmax), `renorm` (False), `k` (an int in
    place of moe_topk), `shared` (False: no shared_mlp). `router_inputs`: None, or a list that receives (layer, x) per
    MoE call."""

    # HunYuanMoEV1Config's defaults of the keys read here (4.56 / 4.57's __init__)
    DEFAULTS = dict(HunYuanDenseCheck.DEFAULTS, num_experts=1, moe_topk=1)

    def __init__(self, cfg, p):
        super().__init__(cfg, p)
        c = self.c
        self.E = [c["num_experts"] if isinstance(c["num_experts"], int) else c["num_experts"][l] for l in range(self.L)]
        self.k = None
        self.score, self.renorm, self.shared = "softmax", True, True
        self.router_inputs = None

    def top_k(self, l):
        c = self.c
        return self.k or (c["moe_topk"] if isinstance(c["moe_topk"], int) else c["moe_topk"][l])

    def route(self, l, x):
        """HunYuanMoEV1Gate + the routing of HunYuanMoEV1Moe.forward on x (T, H): (chosen (T, k), weights (T, k),
        probabilities (T, E))."""
        w = self.p["model.layers.%d.mlp.gate.wg.weight" % l]
        logits = torch.nn.functional.linear(x.float(), w.float())
        probs = logits.sigmoid() if self.score == "sigmoid" else torch.nn.functional.softmax(logits, dim=1,
                                                                                             dtype=torch.float)
        weights, chosen = torch.topk(probs, self.top_k(l), dim=-1)
        if self.renorm:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        return chosen, weights, probs

    def feed_forward(self, l, x):
        """HunYuanMoEV1Moe.forward on one sequence x (T, H)."""
        if self.router_inputs is not None:
            self.router_inputs.append((l, x))
        pre, E = "model.layers.%d.mlp." % l, self.E[l]
        chosen, weights = self.route(l, x)[:2]
        if pre + "experts.gate_up_proj" in self.p:  # (transformers 5's HunYuanMoEV1Experts)
            out = stacked_experts_forward(x, chosen, weights, self.p[pre + "experts.gate_up_proj"],
                                          self.p[pre + "experts.down_proj"], E)
        else:
            out = torch.zeros_like(x)
            mask = torch.nn.functional.one_hot(chosen, num_classes=E).permute(2, 1, 0)  # (E, k, T)
            for e in range(E):
                slot, tok = torch.where(mask[e])
                if tok.numel():
                    out.index_add_(0, tok, self.swiglu(x[tok], pre + "experts.%d." % e) * weights[tok, slot, None])
        return out + self.swiglu(x, pre + "shared_mlp.") if self.shared else out


HUNYUAN_MOE_WHAT_IFS = {"qk_norm_before_rope": ("norm_after_rope", False), "qk_norm": ("qk_norms", False),
                        "rope_plain_theta": ("alpha", None), "router_sigmoid": ("score", "sigmoid"),
                        "router_unnormalised": ("renorm", False), "router_top1": ("k", 1),
                        "shared_mlp": ("shared", False)}


def stacked_hunyuan_experts(p, L, E):
    """The per-expert tensors of a HunYuan-MoE checkpoint stacked as transformers 5 holds them (conversion_mapping's
    qwen2_moe rule: MergeModulelist of each expert's gate_proj / up_proj, concatenated gate rows first, into
    mlp.experts.gate_up_proj (E, 2F, H); the down_proj's into mlp.experts.down_proj (E, H, F))."""
    q = dict(p)
    for l in range(L):
        x = "model.layers.%d.mlp.experts." % l
        q[x + "gate_up_proj"] = torch.stack([torch.cat((q.pop(x + "%d.gate_proj.weight" % e),
                                                        q.pop(x + "%d.up_proj.weight" % e))) for e in range(E)])
        q[x + "down_proj"] = torch.stack([q.pop(x + "%d.down_proj.weight" % e) for e in range(E)])
    return q


def check_hunyuan_moe(name, spec, p, g, st):
    cfg, m = open_check(name, HunYuanMoeCheck, p, g, st)
    model = g["model"]
    H, HD, V, F_, E, L = m.H, m.HD, spec.V, cfg["intermediate_size"], m.E[0], m.L
    # the file: per layer HunYuan's attention tensors, the F32 router mlp.gate.wg, per-expert experts and shared_mlp of
    # intermediate_size; BF16 but the router; tied
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    want = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,)}
    for l in range(L):
        x = "model.layers.%d." % l
        want.update(hunyuan_attention_tensors(m, x))
        want.update(swiglu_tensors(x + "mlp.shared_mlp.", H, F_))
        want[x + "mlp.gate.wg.weight"] = (E, H)
        for e in range(E):
            want.update(swiglu_tensors(x + "mlp.experts.%d." % e, H, F_))
    dtypes = all(v[0] == ("F32" if n.endswith(".mlp.gate.wg.weight") else "BF16") for n, v in stored.items())
    check({n: tuple(v[1].shape) for n, v in stored.items()} == want and dtypes,
          "%s: the file holds exactly HunYuanMoEV1's %d tensors (query_layernorm / key_layernorm (%d,), mlp.gate.wg "
          "(%d, %d) F32, %d experts of %d per expert and mlp.shared_mlp of %d; tied: no lm_head.weight), BF16 but the "
          "router" % (name, len(want), HD, E, H, E, F_, F_))
    # config.json in tencent/Hunyuan-A13B-Instruct's spelling, with transformers' model_type
    rs = cfg["rope_scaling"]
    spelling = (cfg["architectures"] == ["HunYuanMoEV1ForCausalLM"] and cfg["model_type"] == "hunyuan_v1_moe" and
                cfg.get("head_dim") == cfg.get("attention_head_dim") == HD != H // m.NH and m.NKV < m.NH and
                isinstance(cfg["num_experts"], int) and cfg["moe_topk"] == [m.top_k(0)] * L and
                cfg["moe_intermediate_size"] == [F_] * L and cfg["num_shared_expert"] == [1] * L and
                2 * F_ != H and cfg["use_mixed_mlp_moe"] is True and cfg["use_cla"] is False and
                hunyuan_release_spelling(cfg))
    check(spelling, "%s: config.json in Hunyuan-A13B-Instruct's spelling (attention_head_dim = head_dim %d != hidden "
          "/ heads %d; num_experts %d an int; per-layer moe_topk %s, moe_intermediate_size = intermediate_size %d (2 x "
          "%d != hidden), num_shared_expert 1; use_mixed_mlp_moe true, use_cla false, use_qk_norm true; rope_scaling "
          "%s; tied)" % (name, HD, H // m.NH, E, cfg["moe_topk"], F_, F_, json.dumps(rs, sort_keys=True)))
    # reference.Spec and golden.json read it as HunYuanMoeCheck does
    inv = m.inv_freq()
    same = (hunyuan_attention_read(spec, m, model) and spec.layer_moe == [True] * L and spec.router == "softmax" and
            spec.router_score == "softmax" and spec.num_experts == E and spec.top_k == m.top_k(0) and
            spec.norm_topk_prob and spec.moe_intermediate == spec.shared_intermediate == F_ == spec.F and
            not spec.shared_gated and spec.expert_naming == "hunyuan" and
            ref.router_weight_name(spec, "p.") == "p.mlp.gate.wg.weight" and
            model["router_weight"] == "model.layers.0.mlp.gate.wg.weight" and model["router_dtype"] == "F32" and
            model["num_experts"] == E and model["experts_per_tok"] == m.top_k(0) and model["norm_topk_prob"] and
            model["shared_expert"] and model["intermediate_size"] == F_)
    check(same, "%s: reference.Spec and golden.json read the q/k norms (after RoPE), the RoPE base %.2f = %r x "
          "%r^(%d/%d), the router (fp32 mlp.gate.wg, softmax, top-%d renormalised) and the experts / shared_mlp of %d "
          "as HunYuanMoeCheck does" % (name, m.rope_base(), cfg["rope_theta"], m.alpha, HD, HD - 2, m.top_k(0), F_))
    # other spellings of the MoE keys (and of rope_scaling): reference.Spec reads each as the check does, the logits
    # unchanged
    ids = g["prompts"][4]["input_ids"]
    logits = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0][0]
    k0 = m.top_k(0)
    spellings = {"moe_topk an int": {"moe_topk": k0}, "num_experts a per-layer list": {"num_experts": [E] * L},
                 "moe_intermediate_size an int": {"moe_intermediate_size": F_}, "num_shared_expert an int":
                 {"num_shared_expert": 1}, "\"rope_type\" in place of \"type\"":
                 {"rope_scaling": {"rope_type": "dynamic", "alpha": rs["alpha"]}}}
    dropped = ("attention_head_dim", "moe_intermediate_size", "num_shared_expert", "use_mixed_mlp_moe", "use_cla")
    wrong = []
    for label, c2 in [(k, dict(cfg, **v)) for k, v in spellings.items()] + [
            ("without " + ", ".join(dropped), {k: v for k, v in cfg.items() if k not in dropped})]:
        s2, m2 = ref.Spec(c2), HunYuanMoeCheck(c2, p)
        got = ref.forward(s2, p, torch.tensor([ids]), capture=False)[0][0]
        if not ((s2.num_experts, s2.top_k, s2.moe_intermediate, s2.shared_intermediate) == (E, k0, F_, F_) ==
                (m2.E[0], m2.top_k(0), F_, F_) and torch.equal(s2.rope["global"][0], inv) and torch.equal(got, logits)):
            wrong.append(label)
    check(not wrong, "%s: reference.Spec and HunYuanMoeCheck read %s alike (the same experts, top-k, widths, RoPE and "
          "logits)%s" % (name, ", ".join(list(spellings) + ["the config without " + ", ".join(dropped)]),
                         " (differ: %s)" % wrong if wrong else ""))
    # transformers 5's stacked experts (mlp.experts.gate_up_proj / down_proj): the same logits from reference.py and
    # from HunYuanMoeCheck
    q = stacked_hunyuan_experts(p, L, E)
    d_ref = float((ref.forward(spec, q, torch.tensor([ids]), capture=False)[0][0] - logits).abs().max())
    d_chk = float((HunYuanMoeCheck(cfg, q).forward(ids)[0] - m.forward(ids)[0]).abs().max())
    check(d_ref < 1e-5 and d_chk < 1e-5, "%s: the experts stacked as transformers 5 holds them "
          "(mlp.experts.gate_up_proj (%d, %d, %d), down_proj (%d, %d, %d)) give reference.py and HunYuanMoeCheck "
          "prompt 4's logits again (%.1e, %.1e)" % (name, E, 2 * F_, H, E, H, F_, d_ref, d_chk))
    # the routing again, from HunYuanMoeCheck's router: the gaps (the k-th minus (k+1)-th probability) over the prompt
    # tokens and the tokens fed back, the experts at each prompt's last position, prompt 4's expert usage
    def hunyuan_route(call, n):
        chosen, _, probs = m.route(*call)
        return [int(i) for i in chosen[n - 1]], kth_margin(probs, k0)

    gaps, last_ok = replay_routing(m, g, "router_inputs", hunyuan_route, ordered=False)
    want_gaps = [model["routing_min_gap"], model["routing_min_gap_generated"]]
    m.router_inputs = []
    m.forward(ids)
    usage = {str(l): torch.bincount(m.route(l, x)[0].flatten(), minlength=E).tolist() for l, x in m.router_inputs}
    m.router_inputs = None
    check(all(abs(a - b) < 1e-6 for a, b in zip(gaps, want_gaps)) and min(gaps) >= 1e-3 and last_ok and
          usage == model["expert_usage_prompt4"] and all(min(u) > 0 for u in usage.values()) and
          len(ids) == model["prompt4_tokens"],
          "%s: HunYuanMoeCheck's routing gaps (prompt %.6f / fed back %.6f) = golden.json's, >= 1e-3; expert_ids_last "
          "and prompt 4's expert usage (every expert chosen in each layer: %s) reproduced" % (
              name, gaps[0], gaps[1], usage))
    # the what-ifs
    names = dict(HUNYUAN_MOE_WHAT_IFS, rope_alpha_exponent_one=("base", cfg["rope_theta"] * m.alpha))
    check_what_if_effects(name, "HunYuanMoeCheck", model, names, lambda: HunYuanMoeCheck(cfg, p), ids)

    def refused(change=None, drop=()):
        return spec_refuses(cfg, change, drop)
    cases = {"use_mixed_mlp_moe false": refused({"use_mixed_mlp_moe": False}),
             "use_cla true": refused({"use_cla": True}),
             "num_shared_expert 2": refused({"num_shared_expert": [2] * L}),
             "moe_intermediate_size != intermediate_size": refused({"moe_intermediate_size": [F_ + 8] * L}),
             "moe_topk differing per layer": refused({"moe_topk": [k0] * (L - 1) + [k0 + 1]}),
             "moe_topk of another length": refused({"moe_topk": [k0] * (L + 1)}),
             "num_experts differing per layer": refused({"num_experts": [E] * (L - 1) + [E + 2]}),
             "moe_topk > num_experts": refused({"moe_topk": E + 1}),
             "attention_head_dim != head_dim": refused({"attention_head_dim": HD + 8}),
             "no head_dim": refused(drop=("head_dim",)), "use_qk_norm false": refused({"use_qk_norm": False}),
             "rope_scaling dynamic without alpha": refused({"rope_scaling": {"type": "dynamic", "factor": 2.0}}),
             "rope_parameters": refused({"rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}}),
             "attention_bias true": refused({"attention_bias": True}), "mlp_bias true": refused({"mlp_bias": True})}
    check_refusals(name, cases)


class Lfm2Check:
    """Lfm2ForCausalLM's forward pass again, from models/lfm2/modeling_lfm2.py (generated from modular_lfm2.py) and
    configuration_lfm2.py, sharing nothing with reference.py but the safetensors reader: Lfm2Config's defaults and its
    original-key readings (`kwargs.get("block_ff_dim", intermediate_size)`, `kwargs.get("theta", rope_theta)`,
    `kwargs.get("tie_embedding", tie_word_embeddings)`; layer_types, else "full_attention" on full_attn_idxs (all
    layers without it) and "conv" elsewhere); Lfm2MLP.__init__'s width rule (block_auto_adjust_ff_dim: int(2 ff / 3), and
    with block_ffn_dim_multiplier not None int(multiplier ff) rounded up to block_multiple_of; written here with
    math.ceil); Lfm2Model.forward (no embedding scale, every layer, model.embedding_norm); Lfm2RMSNorm (x / sqrt(mean(x^2)
    + norm_eps), times a plain w); Lfm2DecoderLayer.forward (`self.operator_norm` into the mixer, plus the residual,
    then `self.feed_forward(self.ffn_norm(...))` added); Lfm2Attention.forward (q/k/v_proj without bias, the view into
    heads, q_layernorm / k_layernorm over head_dim, THEN the rotate-half RoPE, turned here as complex numbers of the
    pairs (i, i + HD/2) with inv_freq at the theta read above, scores times head_dim**-0.5 per head with an explicit mask
    and a hand-written softmax, repeat_kv, self_attn.out_proj); Lfm2ShortConv.slow_forward as transformers' generate runs
    it: the first `prefill` tokens (all of them by default) in one call (`self.conv(Bx)[..., :seqlen]`, nn.Conv1d with
    padding K - 1, written here as a sum over the K taps of left-shifted copies), the conv cache filled with
    `nn.functional.pad(Bx, (self.L_cache - Bx.shape[-1], 0))`, then each further token in a call of its own on the cached
    path: `conv_state.roll(shifts=-1, dims=-1)`, the new Bx written at `cache_position.clamp(0, self.L_cache - 1)`,
    `torch.sum(conv_state * self.conv.weight[:, 0, :], dim=-1)`; `B, C, x = BCx.chunk(3, dim=-2)` on in_proj's output,
    Bx = B x, y = C conv_out, out_proj; Lfm2MLP.forward (`self.w2(F.silu(self.w1(x)) * self.w3(x))`); the tied head
    (embed_tokens) or lm_head.
    What-ifs: `conv` (False: conv_out = Bx), `conv_act` (True: SiLU on conv_out), `chunks` (the names the three row
    blocks of in_proj are read as), `w13_swapped` (w3 into the SiLU, w1 the up projection), `norm_after_rope` (True:
    q_layernorm / k_layernorm after the rotation), `qk_norms` (False: none), `theta` (a RoPE base of its own)."""

    # Lfm2Config's defaults of the keys read here (transformers 4.54 - 4.57)
    DEFAULTS = dict(vocab_size=65536, hidden_size=2560, intermediate_size=12288, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=8, norm_eps=1e-5, tie_word_embeddings=True,
                    rope_theta=1000000.0, conv_bias=False, conv_L_cache=3, block_multiple_of=256,
                    block_ffn_dim_multiplier=1.0, block_auto_adjust_ff_dim=True, full_attn_idxs=None, layer_types=None)

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        if c["conv_bias"] or c.get("rope_scaling") or c.get("rope_parameters"):
            raise ValueError("Lfm2Check: conv_bias %r, rope_scaling %r, rope_parameters %r" % (
                c["conv_bias"], c.get("rope_scaling"), c.get("rope_parameters")))
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"]
        self.HD = c.get("head_dim", self.H // self.NH)  # Lfm2Attention: getattr(config, "head_dim", ...)
        self.K = c["conv_L_cache"]
        self.ff_in = c.get("block_ff_dim", c["intermediate_size"])
        self.theta = c.get("theta", c["rope_theta"])
        self.tied = c.get("tie_embedding", c["tie_word_embeddings"])
        self.layer_types = c["layer_types"]
        if self.layer_types is None:
            full = c["full_attn_idxs"] if c["full_attn_idxs"] is not None else list(range(self.L))
            self.layer_types = ["full_attention" if i in full else "conv" for i in range(self.L)]
        self.prefill = None
        self.conv, self.conv_act, self.chunks, self.w13_swapped = True, False, ("B", "C", "x"), False
        self.norm_after_rope, self.qk_norms = False, True

    def ff(self):
        """Lfm2MLP.__init__'s intermediate_size."""
        ff = self.ff_in
        if self.c["block_auto_adjust_ff_dim"]:
            ff = int(2 * ff / 3)
            if self.c["block_ffn_dim_multiplier"] is not None:
                ff = int(self.c["block_ffn_dim_multiplier"] * ff)
                ff = self.c["block_multiple_of"] * math.ceil(ff / self.c["block_multiple_of"])
        return ff

    def inv_freq(self):
        return 1.0 / (self.theta ** (torch.arange(0, self.HD, 2, dtype=torch.int64).float() / self.HD))

    def rms(self, x, w):  # Lfm2RMSNorm
        return w * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.c["norm_eps"]))

    def attention(self, l, x, turn):
        pre, HD, T = "model.layers.%d.self_attn." % l, self.HD, x.shape[0]
        q = torch.nn.functional.linear(x, self.p[pre + "q_proj.weight"]).view(T, self.NH, HD)
        k = torch.nn.functional.linear(x, self.p[pre + "k_proj.weight"]).view(T, self.NKV, HD)
        v = torch.nn.functional.linear(x, self.p[pre + "v_proj.weight"]).view(T, self.NKV, HD)
        wq, wk = self.p[pre + "q_layernorm.weight"], self.p[pre + "k_layernorm.weight"]

        def rotary(y):  # apply_rotary_pos_emb: the pair (y[i], y[i + HD/2]) turned by position x inv_freq_i
            z = torch.complex(y[..., :HD // 2], y[..., HD // 2:]) * turn.unsqueeze(1)
            return torch.cat((z.real, z.imag), dim=-1)
        if self.qk_norms and not self.norm_after_rope:
            q, k = self.rms(q, wq), self.rms(k, wk)
        q, k = rotary(q), rotary(k)
        if self.qk_norms and self.norm_after_rope:
            q, k = self.rms(q, wq), self.rms(k, wk)
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        heads = []
        for hh in range(self.NH):
            kv = hh // (self.NH // self.NKV)  # repeat_kv
            s_ = ((q[:, hh] @ k[:, kv].T) * HD ** -0.5).masked_fill(future, float("-inf"))
            e = torch.exp(s_ - s_.max(dim=-1, keepdim=True).values)
            heads.append((e / e.sum(dim=-1, keepdim=True)) @ v[:, kv])
        return torch.nn.functional.linear(torch.cat(heads, dim=-1), self.p[pre + "out_proj.weight"])

    def short_conv(self, l, x):
        """Lfm2ShortConv on one sequence x (T, H): the first self.prefill tokens in one call, the rest one by one."""
        pre, K, T = "model.layers.%d.conv." % l, self.K, x.shape[0]
        BCx = torch.nn.functional.linear(x, self.p[pre + "in_proj.weight"]).T  # (3H, T)
        parts = dict(zip(self.chunks, BCx.chunk(3, dim=-2)))
        B, C, xx = parts["B"], parts["C"], parts["x"]
        Bx = B * xx
        w = self.p[pre + "conv.weight"]  # (H, 1, K)
        n = T if self.prefill is None else min(self.prefill, T)
        # the call on the first n tokens: nn.Conv1d(padding=K - 1)(Bx)[..., :n], tap j reading Bx[t - (K - 1) + j]
        first = torch.zeros(self.H, n)
        for j in range(K):
            shift = K - 1 - j
            first[:, shift:] += w[:, 0, j:j + 1] * Bx[:, :n - shift] if shift < n else 0.0
        outs = [first]
        conv_state = torch.nn.functional.pad(Bx[:, :n], (K - n, 0))  # conv_cache[l] after that call
        for t in range(n, T):  # cache_position = t > 0: the cached path
            conv_state = conv_state.roll(shifts=-1, dims=-1)
            conv_state[:, min(max(t, 0), K - 1)] = Bx[:, t]
            outs.append(torch.sum(conv_state * w[:, 0, :], dim=-1).unsqueeze(-1))
        conv_out = torch.cat(outs, dim=-1)
        if not self.conv:
            conv_out = Bx
        if self.conv_act:
            conv_out = torch.nn.functional.silu(conv_out)
        y = (C * conv_out).T
        return torch.nn.functional.linear(y, self.p[pre + "out_proj.weight"])

    def mlp(self, l, x):
        pre = "model.layers.%d.feed_forward." % l
        w1, w3 = self.p[pre + "w1.weight"], self.p[pre + "w3.weight"]
        if self.w13_swapped:
            w1, w3 = w3, w1
        gate = torch.nn.functional.linear(x, w1)
        return torch.nn.functional.linear(torch.nn.functional.silu(gate) * torch.nn.functional.linear(x, w3),
                                          self.p[pre + "w2.weight"])

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p, T = self.p, len(ids)
        angles = torch.outer(torch.arange(T, dtype=torch.float32), self.inv_freq())
        turn = torch.polar(torch.ones_like(angles), angles)
        h = p["model.embed_tokens.weight"][torch.tensor(ids)]
        hidden = [h]
        for l in range(self.L):  # Lfm2DecoderLayer.forward
            pre = "model.layers.%d." % l
            x = self.rms(h, p[pre + "operator_norm.weight"])
            if self.layer_types[l] == "full_attention":
                mixed = self.attention(l, x, turn)
            else:
                mixed = self.short_conv(l, x)
            h = mixed + h
            h = h + self.mlp(l, self.rms(h, p[pre + "ffn_norm.weight"]))
            hidden.append(h)
        hidden[-1] = self.rms(h, p["model.embedding_norm.weight"])
        head = p["model.embed_tokens.weight"] if self.tied else p["lm_head.weight"]
        return torch.nn.functional.linear(hidden[-1], head), hidden


def check_lfm2_cached_paths(name, label, spec, p, g, make):
    """LFM2 / LFM2-MoE: the check model (make()) run as transformers' generate runs the conv gives the golden greedy ids
    and reference.forward's logits; reference's cached one-token step after prompt 4 = the whole sequence again."""
    m = make()
    H, K = m.H, m.K
    conv = [t == "conv" for t in m.layer_types]
    # transformers' generate: each prompt in one call, then every greedy token on the conv cache's one-token path
    same, worst = True, 0.0
    for e in g["prompts"]:
        m2 = make()
        m2.prefill = len(e["input_ids"])
        seq = e["input_ids"] + e["greedy_ids"][:-1]
        logits = m2.forward(seq)[0]
        same &= [int(x) for x in logits[len(e["input_ids"]) - 1:].argmax(-1)] == e["greedy_ids"]
        worst = max(worst, float((logits - ref.forward(spec, p, torch.tensor([seq]), capture=False)[0][0]).abs().max()))
    check(same and worst < 1e-4, "%s: %s as transformers' generate runs the conv (the prompt in one call, each "
          "generated token on the cached path: conv state rolled, written at cache_position clamped to conv_L_cache - 1, "
          "summed against the kernel) gives the golden greedy ids, its logits within 1e-4 of reference.forward's over "
          "the whole sequences (%.1e)" % (name, label, worst))
    # reference's cache (greedy_batch's path): a one-token step after prompt 4 = the whole sequence again, and the
    # cached conv state is the last conv_L_cache values of B x
    e = g["prompts"][4]
    cache = {}
    ref.forward(spec, p, torch.tensor([e["input_ids"]]), cache=cache, capture=False)
    nxt = e["greedy_ids"][0]
    step = ref.forward(spec, p, torch.tensor([[nxt]]), torch.tensor([[len(e["input_ids"])]]), cache=cache,
                       capture=False)[0][0, -1]
    full = ref.forward(spec, p, torch.tensor([e["input_ids"] + [nxt]]), capture=False)[0][0, -1]
    shapes = all(tuple(cache[l].shape) == (1, H, K) for l in range(m.L) if conv[l])
    check(float((step - full).abs().max()) < 1e-5 and shapes, "%s: reference's cached one-token step after prompt 4 = "
          "the whole sequence run again (%.1e), each conv layer's cache (1, %d, %d)" % (
              name, float((step - full).abs().max()), H, K))


def lfm2_expected_tensors(m, V, HD, K, F_, conv, moe=None, E=0, Fm=0):
    """LFM2's (and LFM2-MoE's) tensor names and shapes: the embedding, embedding_norm, lm_head when untied; per layer
    operator_norm / ffn_norm, the MLP (feed_forward.w1 / w3 (F_, H), w2; on an MoE layer (moe[l]) the router
    feed_forward.gate (E, H), expert_bias (E,) and every expert's w1 / w3 (Fm, H), w2), and the mixer: conv.in_proj
    (3H, H) / conv.conv (H, 1, K) / conv.out_proj on conv layers, q/k/v_proj, q/k_layernorm (HD,) and out_proj on
    attention ones."""
    H = m.H
    want = {"model.embed_tokens.weight": (V, H), "model.embedding_norm.weight": (H,)}
    if not m.tied:
        want["lm_head.weight"] = (V, H)
    for l in range(m.L):
        x = "model.layers.%d." % l
        want.update({x + "operator_norm.weight": (H,), x + "ffn_norm.weight": (H,)})
        if moe is not None and moe[l]:
            f = x + "feed_forward."
            want.update({f + "gate.weight": (E, H), f + "expert_bias": (E,)})
            for e in range(E):
                y = f + "experts.%d." % e
                want.update({y + "w1.weight": (Fm, H), y + "w3.weight": (Fm, H), y + "w2.weight": (H, Fm)})
        else:
            want.update({x + "feed_forward.w1.weight": (F_, H), x + "feed_forward.w3.weight": (F_, H),
                         x + "feed_forward.w2.weight": (H, F_)})
        if conv[l]:
            want.update({x + "conv.in_proj.weight": (3 * H, H), x + "conv.conv.weight": (H, 1, K),
                         x + "conv.out_proj.weight": (H, H)})
        else:
            want.update({x + "self_attn.q_proj.weight": (m.NH * HD, H), x + "self_attn.k_proj.weight": (m.NKV * HD, H),
                         x + "self_attn.v_proj.weight": (m.NKV * HD, H), x + "self_attn.q_layernorm.weight": (HD,),
                         x + "self_attn.k_layernorm.weight": (HD,), x + "self_attn.out_proj.weight": (H, m.NH * HD)})
    return want


def check_lfm2(name, spec, p, g, st):
    cfg, m = open_check(name, Lfm2Check, p, g, st)
    model = g["model"]
    H, HD, V, K, F_ = m.H, m.HD, spec.V, m.K, m.ff()
    conv = [t == "conv" for t in m.layer_types]
    check_lfm2_cached_paths(name, "Lfm2Check", spec, p, g, lambda: Lfm2Check(cfg, p))
    # the file: exactly Lfm2's tensors, all BF16
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    want = lfm2_expected_tensors(m, V, HD, K, F_, conv)
    check({n: tuple(v[1].shape) for n, v in stored.items()} == want and all(v[0] == "BF16" for v in stored.values()),
          "%s: the file holds exactly Lfm2's %d tensors (operator_norm / ffn_norm, conv.in_proj (%d, %d) / conv.conv "
          "(%d, 1, %d) / conv.out_proj on conv layers, self_attn.q/k/v_proj, q_layernorm / k_layernorm (%d,) and out_proj "
          "on attention layers, feed_forward.w1 / w3 / w2 of %d, model.embedding_norm; %s), all BF16" % (
              name, len(want), 3 * H, H, H, K, HD, F_, "untied" if not m.tied else "tied: no lm_head.weight"))
    # config.json in the LFM2 releases' spelling
    original = ("block_auto_adjust_ff_dim", "block_dim", "block_ff_dim", "block_ffn_dim_multiplier", "block_multiple_of",
                "block_norm_eps", "block_use_swiglu", "conv_L_cache", "conv_bias", "conv_dim", "conv_dim_out",
                "num_heads", "use_pos_enc")
    spelling = (cfg["architectures"] == ["Lfm2ForCausalLM"] and cfg["model_type"] == "lfm2" and
                all(k in cfg for k in original) and cfg["block_ff_dim"] == cfg["intermediate_size"] != F_ and
                cfg["block_auto_adjust_ff_dim"] is True and cfg["block_ffn_dim_multiplier"] == 1.0 and
                cfg["block_dim"] == cfg["conv_dim"] == cfg["conv_dim_out"] == H and cfg["num_heads"] == m.NH and
                cfg["block_norm_eps"] == cfg["norm_eps"] and cfg["conv_bias"] is False and
                isinstance(cfg["layer_types"], list) and "full_attn_idxs" in cfg and cfg["full_attn_idxs"] is None and
                conv[0] and conv[1] and not all(conv) and conv[3] and not conv[-1] and
                "head_dim" not in cfg and "theta" not in cfg and "tie_embedding" not in cfg and "hidden_act" not in cfg
                and "rms_norm_eps" not in cfg and isinstance(cfg["rope_theta"], float) and cfg["tie_word_embeddings"]
                is True and cfg["torch_dtype"] == "bfloat16" and "rope_parameters" not in cfg and
                cfg["transformers_version"].startswith("4."))
    check(spelling, "%s: config.json in the LFM2 releases' spelling (block_ff_dim %d = intermediate_size, adjusted to %d; "
          "block_dim / conv_dim / conv_dim_out / num_heads / block_norm_eps beside hidden_size / num_attention_heads / "
          "norm_eps; layer_types %s with full_attn_idxs null; conv_L_cache %d, conv_bias false; rope_theta %r; tied)" % (
              name, cfg["block_ff_dim"], F_, m.layer_types, K, cfg["rope_theta"]))
    # reference.Spec and golden.json read it as Lfm2Check does
    inv = m.inv_freq()
    same = (spec.layer_conv == conv and spec.layer_types == m.layer_types and spec.lfm2_K == K and spec.F == F_ and
            spec.HD == HD and spec.NKV == m.NKV and spec.eps == m.c["norm_eps"] and spec.theta == m.theta and
            spec.tied == m.tied and spec.qk_norm and not spec.qk_norm_after_rope and
            spec.qk_norm_names == ("q_layernorm", "k_layernorm") and not spec.norm_offset and
            spec.o_proj_name == "out_proj" and spec.final_norm_name == "embedding_norm" and spec.embed_scale is None and
            spec.attn_scale == HD ** -0.5 and bool(torch.equal(spec.rope["global"][0], inv)) and
            spec.rope["global"][1] == 1.0 and spec.act == "silu" and
            model["layer_types"] == m.layer_types and model["intermediate_size"] == F_ and
            model["conv_L_cache"] == K and model["rope_inv_freq"] == [float(x) for x in inv] and
            model["rope_theta"] == m.theta and model["norm_eps"] == m.c["norm_eps"])
    check(same, "%s: reference.Spec and golden.json read the layer types, conv_L_cache %d, the MLP width %d, norm_eps, "
          "the q/k layernorms (before RoPE), rope_theta %r and its inverse frequencies, LFM2's names and the tied head "
          "as Lfm2Check does" % (name, K, F_, m.theta))
    # the other readings of Lfm2Config's keys
    idx = [i for i, t in enumerate(m.layer_types) if t == "full_attention"]
    readings = {}

    def reads(label, c2, ok):
        readings[label] = ok(ref.Spec(c2), Lfm2Check(c2, p))
    no_types = {k: v for k, v in cfg.items() if k != "layer_types"}
    reads("full_attn_idxs without layer_types", dict(no_types, full_attn_idxs=idx),
          lambda s2, m2: s2.layer_conv == conv and m2.layer_types == m.layer_types)
    reads("neither: every layer attention", dict(no_types, full_attn_idxs=None),
          lambda s2, m2: s2.layer_conv == [False] * m.L and m2.layer_types == ["full_attention"] * m.L)
    reads("\"theta\" 1e4 over rope_theta", dict(cfg, theta=10000.0),
          lambda s2, m2: s2.theta == m2.theta == 10000.0 and torch.equal(s2.rope["global"][0], m2.inv_freq()))
    reads("tie_embedding false over tie_word_embeddings", dict(cfg, tie_embedding=False),
          lambda s2, m2: s2.tied is False and m2.tied is False)
    reads("block_ff_dim over intermediate_size 999", dict(cfg, intermediate_size=999),
          lambda s2, m2: s2.F == m2.ff() == F_)
    reads("intermediate_size without block_ff_dim", {k: v for k, v in cfg.items() if k != "block_ff_dim"},
          lambda s2, m2: s2.F == m2.ff() == F_)
    for ff_in, mult, multiple, adjust in ((200, 1.0, 32, True), (200, None, 32, True), (200, 1.5, 48, True),
                                          (200, 1.0, 32, False), (12288, 1.0, 256, True)):
        c2 = dict(cfg, block_ff_dim=ff_in, block_ffn_dim_multiplier=mult, block_multiple_of=multiple,
                  block_auto_adjust_ff_dim=adjust)
        reads("width of block_ff_dim %d, multiplier %r, multiple_of %d, adjust %s" % (ff_in, mult, multiple, adjust), c2,
              lambda s2, m2: s2.F == m2.ff())
    widths = {ff_in: Lfm2Check(dict(cfg, block_ff_dim=ff_in, block_ffn_dim_multiplier=mult), p).ff()
              for ff_in, mult in ((200, 1.0), (201, None))}
    wrong = [k for k, ok in readings.items() if not ok]
    check(not wrong and widths == {200: 160, 201: 134},
          "%s: reference.Spec reads as Lfm2Check: %s (block_ff_dim 200 -> 160; 201 with a null multiplier -> 134, not "
          "rounded)%s" % (name, "; ".join(readings), " (differ: %s)" % wrong if wrong else ""))
    # the what-ifs
    names = {"conv": ("conv", False), "conv_activation": ("conv_act", True), "chunks_C_B_x": ("chunks", ("C", "B", "x")),
             "chunks_B_x_C": ("chunks", ("B", "x", "C")), "mlp_w1_w3_swapped": ("w13_swapped", True),
             "qk_norm_after_rope": ("norm_after_rope", True), "qk_norm": ("qk_norms", False),
             "rope_theta_10000": ("theta", 10000.0)}
    check_what_if_effects(name, "Lfm2Check", model, names, lambda: Lfm2Check(cfg, p), g["prompts"][4]["input_ids"])

    def refused(change=None, drop=()):
        return spec_refuses(cfg, change, drop)
    types = list(m.layer_types)
    cases = {"conv_bias true": refused({"conv_bias": True}),
             "an unknown layer type (mamba)": refused({"layer_types": types[:1] + ["mamba"] + types[2:]}),
             "a short layer_types": refused({"layer_types": types[:-1]}),
             "conv_L_cache 0": refused({"conv_L_cache": 0}),
             "rope_scaling linear": refused({"rope_scaling": {"type": "linear", "factor": 2.0}}),
             "rope_parameters": refused({"rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"}}),
             "block_multiple_of 0": refused({"block_multiple_of": 0})}
    check_refusals(name, cases)


class Lfm2MoeCheck(Lfm2Check):
    """Lfm2MoeForCausalLM's forward pass again, from models/lfm2_moe/modular_lfm2_moe.py (modeling_lfm2_moe.py is
    generated from it) and configuration_lfm2_moe.py: Lfm2Check's attention, short conv, norms, layer order and tied head
    (Lfm2MoeAttention, Lfm2MoeShortConv and Lfm2MoeDecoderLayer.forward are LFM2's), with Lfm2MoeConfig read here on its
    own (its defaults; layer_types as given, no full_attn_idxs; tie_embedding over tie_word_embeddings; the RoPE base
    from rope_parameters["rope_theta"], else rope_theta, else its default_theta 1e6; no block_ff_dim, no theta key) and
    Lfm2MoeDecoderLayer.__init__'s feed_forward: layers < num_dense_layers Lfm2MoeMLP of intermediate_size (as it
    stands), the others Lfm2MoeSparseMoeBlock.forward: router_logits = gate(h); route_tokens_to_experts (routing weights
    s = sigmoid; with use_expert_bias the top-k of s + expert_bias and s gathered at those ids, else the top-k of s;
    with norm_topk_prob w / (w.sum + 1e-6); times routed_scaling_factor); the experts as transformers 5 holds them after
    conversion_mapping's "lfm2_moe" entry (per expert [w1 rows; w3 rows] into gate_up_proj, w2 into down_proj) and
    Lfm2MoeExperts.forward's loop (one_hot mask, the experts hit, F.linear(x, gate_up_proj[e]).chunk(2), silu(gate) *
    up, F.linear(., down_proj[e]), times the token's weight, index_add_).
    What-ifs: Lfm2Check's, and `bias_in_choice` (False: the top-k of s), `bias_in_weights` (True: s + bias gathered as
    the weights), `score` ("softmax"), `renormalise`, `scaling` (the factor the weights are multiplied by),
    `expert_w13_swapped` (each expert's w3 into the SiLU). `router_calls`: None, or a list that receives (layer,
    logits) per MoE call."""

    # Lfm2MoeConfig's defaults of the keys read here (rope_theta: its default_theta)
    DEFAULTS = dict(vocab_size=65536, hidden_size=2048, intermediate_size=7168, moe_intermediate_size=1792,
                    num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, norm_eps=1e-5,
                    tie_word_embeddings=True, rope_theta=1000000.0, rope_parameters=None, conv_bias=False,
                    conv_L_cache=3, num_dense_layers=2, num_experts_per_tok=4, num_experts=32, use_expert_bias=True,
                    routed_scaling_factor=1.0, norm_topk_prob=True, layer_types=None)

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        if c["conv_bias"] or c.get("rope_scaling") or c["layer_types"] is None:
            raise ValueError("Lfm2MoeCheck: conv_bias %r, rope_scaling %r, layer_types %r" % (
                c["conv_bias"], c.get("rope_scaling"), c["layer_types"]))
        self.c, self.p = c, p
        self.L, self.NH, self.H = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
        self.NKV = c["num_key_value_heads"]
        self.HD = c.get("head_dim", self.H // self.NH)
        self.K = c["conv_L_cache"]
        rp = c["rope_parameters"] or {}
        self.theta = float(rp.get("rope_theta", c["rope_theta"]))
        self.tied = c.get("tie_embedding", c["tie_word_embeddings"])
        self.layer_types = list(c["layer_types"])
        self.dense = c["num_dense_layers"]
        self.E, self.k = c["num_experts"], c["num_experts_per_tok"]
        self.prefill = None
        self.conv, self.conv_act, self.chunks, self.w13_swapped = True, False, ("B", "C", "x"), False
        self.norm_after_rope, self.qk_norms = False, True
        self.use_bias = c["use_expert_bias"]
        self.bias_in_choice, self.bias_in_weights, self.score = True, False, "sigmoid"
        self.renormalise, self.scaling = c["norm_topk_prob"], float(c["routed_scaling_factor"])
        self.expert_w13_swapped = False
        self.router_calls = None

    def ff(self):
        """Lfm2MoeMLP(config, intermediate_size=config.intermediate_size): no adjusting."""
        return self.c["intermediate_size"]

    def route(self, logits, bias):
        """route_tokens_to_experts: (top-k ids, their weights, the values the choice ranks)."""
        s = torch.sigmoid(logits) if self.score == "sigmoid" else torch.softmax(logits, dim=-1)
        if self.use_bias and self.bias_in_choice:
            choice = s + bias
            ids = torch.topk(choice, k=self.k, dim=-1)[1]
            weights = torch.gather(choice if self.bias_in_weights else s, dim=1, index=ids)
        else:
            choice = s
            weights, ids = torch.topk(s, k=self.k, dim=-1)
        if self.renormalise:
            weights = weights / (weights.sum(dim=-1, keepdim=True) + 1e-6)
        return ids, weights * self.scaling, choice

    def router_tensors(self, l):
        pre = "model.layers.%d.feed_forward." % l
        return self.p[pre + "gate.weight"], self.p.get(pre + "expert_bias")

    def experts(self, l):
        """(gate_up_proj (E, 2F, H), down_proj (E, H, F)) as the checkpoint conversion stacks the released tensors."""
        w = lambda e, n: self.p["model.layers.%d.feed_forward.experts.%d.%s.weight" % (l, e, n)]  # noqa: E731
        first, second = ("w3", "w1") if self.expert_w13_swapped else ("w1", "w3")
        gate = torch.stack([w(e, first) for e in range(self.E)])
        up = torch.stack([w(e, second) for e in range(self.E)])
        return torch.cat((gate, up), dim=1), torch.stack([w(e, "w2") for e in range(self.E)])

    def mlp(self, l, x):
        if l < self.dense:
            return Lfm2Check.mlp(self, l, x)
        gate, bias = self.router_tensors(l)
        logits = torch.nn.functional.linear(x, gate)
        if self.router_calls is not None:
            self.router_calls.append((l, logits))
        ids, weights, _ = self.route(logits, bias)
        return stacked_experts_forward(x, ids, weights, *self.experts(l), self.E)


def check_lfm2_moe(name, spec, p, g, st):
    cfg, m = open_check(name, Lfm2MoeCheck, p, g, st)
    model = g["model"]
    check_lfm2_cached_paths(name, "Lfm2MoeCheck", spec, p, g, lambda: Lfm2MoeCheck(cfg, p))
    H, HD, V, K, F_, E = m.H, m.HD, spec.V, m.K, m.ff(), m.E
    Fm = m.c["moe_intermediate_size"]
    conv = [t == "conv" for t in m.layer_types]
    moe = [l >= m.dense for l in range(m.L)]
    # the file: exactly Lfm2Moe's tensors as released (per-expert), BF16 but the F32 expert_bias
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    want = lfm2_expected_tensors(m, V, HD, K, F_, conv, moe, E, Fm)
    check({n: tuple(v[1].shape) for n, v in stored.items()} == want and
          all(v[0] == ("F32" if n.endswith("feed_forward.expert_bias") else "BF16") for n, v in stored.items()),
          "%s: the file holds exactly Lfm2Moe's %d tensors as released (LFM2's conv / attention tensors, dense "
          "feed_forward.w1 / w3 / w2 of %d on layers < %d, on the others feed_forward.gate (%d, %d), feed_forward."
          "expert_bias (%d,) and per expert feed_forward.experts.{e}.w1 / w3 (%d, %d) and w2 (%d, %d); %s), BF16 but the "
          "F32 expert_bias" % (name, len(want), F_, m.dense, E, H, E, Fm, H, H, Fm,
                               "untied" if not m.tied else "tied: no lm_head.weight"))
    # config.json as transformers 4.57 writes Lfm2MoeConfig
    spelling = (cfg["architectures"] == ["Lfm2MoeForCausalLM"] and cfg["model_type"] == "lfm2_moe" and
                not any(k.startswith("block_") for k in cfg) and
                not any(k in cfg for k in ("theta", "tie_embedding", "full_attn_idxs", "head_dim", "hidden_act",
                                           "rope_parameters", "rope_scaling", "rms_norm_eps", "torch_dtype")) and
                isinstance(cfg["layer_types"], list) and isinstance(cfg["rope_theta"], float) and
                cfg["dtype"] == "bfloat16" and cfg["transformers_version"].startswith("4.57") and
                cfg["conv_bias"] is False and cfg["use_expert_bias"] is True and cfg["norm_topk_prob"] is True and
                cfg["routed_scaling_factor"] != 1.0 and cfg["tie_word_embeddings"] is True and
                0 < m.dense < m.L and any(conv[:m.dense]) and not all(conv[:m.dense]) and
                any(conv[m.dense:]) and not all(conv[m.dense:]) and int(2 * F_ / 3) != F_)
    check(spelling, "%s: config.json as transformers 4.57 writes Lfm2MoeConfig (\"dtype\", rope_theta %r at the top "
          "level, layer_types %s listed, num_dense_layers %d over a conv and an attention layer, intermediate_size %d, "
          "moe_intermediate_size %d, use_expert_bias, norm_topk_prob, routed_scaling_factor %r, tied; none of LFM2's "
          "original keys)" % (name, cfg["rope_theta"], m.layer_types, m.dense, F_, Fm, cfg["routed_scaling_factor"]))
    # reference.Spec and golden.json read it as Lfm2MoeCheck does
    inv = m.inv_freq()
    same = (spec.layer_conv == conv and spec.layer_types == m.layer_types and spec.lfm2_K == K and spec.F == F_ and
            spec.HD == HD and spec.NKV == m.NKV and spec.eps == m.c["norm_eps"] and spec.theta == m.theta and
            spec.tied == m.tied and spec.qk_norm and not spec.qk_norm_after_rope and
            spec.qk_norm_names == ("q_layernorm", "k_layernorm") and not spec.norm_offset and
            spec.o_proj_name == "out_proj" and spec.final_norm_name == "embedding_norm" and spec.embed_scale is None and
            spec.attn_scale == HD ** -0.5 and bool(torch.equal(spec.rope["global"][0], inv)) and spec.act == "silu" and
            spec.layer_moe == moe and spec.num_experts == E and spec.top_k == m.k and spec.moe_intermediate == Fm and
            spec.router == "lfm2" and spec.expert_naming == "lfm2" and spec.shared_intermediate == 0 and
            spec.norm_topk_prob == m.renormalise and spec.routed_scaling_factor == m.scaling and
            spec.lfm2_expert_bias == m.use_bias and
            model["layer_types"] == m.layer_types and model["intermediate_size"] == F_ and
            model["moe_intermediate_size"] == Fm and model["dense_layers"] == [l for l in range(m.L) if not moe[l]] and
            model["moe_layers"] == moe and model["num_experts"] == E and model["experts_per_tok"] == m.k and
            model["routed_scaling_factor"] == m.scaling and model["use_expert_bias"] == m.use_bias and
            model["norm_topk_prob"] == m.renormalise and model["conv_L_cache"] == K and
            model["rope_inv_freq"] == [float(x) for x in inv] and model["rope_theta"] == m.theta)
    check(same, "%s: reference.Spec and golden.json read the layer types, num_dense_layers %d, the dense width %d (as it "
          "stands), the %d experts of %d, top-%d, the router (use_expert_bias, norm_topk_prob, routed_scaling_factor %r), "
          "rope_theta and LFM2's names as Lfm2MoeCheck does" % (name, m.dense, F_, E, Fm, m.k, m.scaling))
    # the routing again, from Lfm2MoeCheck's router: the k-th minus (k+1)-th s + bias over the prompt tokens and the
    # tokens fed back, the experts chosen at each prompt's last position, prompt 4's expert usage
    def lfm2_route(call, n):
        l, logits = call
        bias = m.router_tensors(l)[1]
        return [int(i) for i in m.route(logits[n - 1:n], bias)[0][0]], kth_margin(m.route(logits, bias)[2], m.k)

    gaps, last_ok = replay_routing(m, g, "router_calls", lfm2_route)
    ids = g["prompts"][4]["input_ids"]
    m.router_calls = []
    m.forward(ids)
    calls = list(m.router_calls)
    m.router_calls = None
    usage = {str(l): torch.bincount(m.route(lg, m.router_tensors(l)[1])[0].flatten(), minlength=E).tolist()
             for l, lg in calls}
    want_gaps = [model["routing_min_gap"], model["routing_min_gap_generated"]]
    check(all(abs(a - b) < 1e-6 for a, b in zip(gaps, want_gaps)) and min(gaps) >= 1e-3 and last_ok and
          usage == model["expert_usage_prompt4"] and all(min(u) > 0 for u in usage.values()),
          "%s: Lfm2MoeCheck's routing gaps (prompt %.6f / fed back %.6f) = golden.json's, >= 1e-3; expert_ids_last "
          "reproduced; prompt 4's expert usage per MoE layer = golden.json's, every expert chosen (%s)" % (
              name, gaps[0], gaps[1], "; ".join("%s: %s" % kv for kv in usage.items())))
    # how many of prompt 4's tokens take other experts under each router what-if, the router inputs held
    changed = {}
    for key, attr, value in (("router_bias", "bias_in_choice", False), ("router_bias_in_weights", "bias_in_weights", True),
                             ("router_softmax", "score", "softmax"), ("router_unnormalised", "renormalise", False),
                             ("router_scaling", "scaling", 1.0)):
        other = Lfm2MoeCheck(cfg, p)
        setattr(other, attr, value)
        counts = {l: int((m.route(lg, m.router_tensors(l)[1])[0].sort(dim=-1).values !=
                          other.route(lg, m.router_tensors(l)[1])[0].sort(dim=-1).values).any(dim=-1).sum())
                  for l, lg in calls}
        changed[key] = [counts.get(l) for l in range(m.L)]
    check(changed == model["router_changed_tokens_prompt4"] and len(ids) == model["prompt4_tokens"] and
          all(n > 0 for n in changed["router_bias"] if n is not None),
          "%s: Lfm2MoeCheck's tokens of prompt 4's %d taking other experts per layer = golden.json's (%s)" % (
              name, len(ids), ", ".join("%s %s" % kv for kv in changed.items())))
    # the what-ifs
    names = {"router_bias": ("bias_in_choice", False), "router_bias_in_weights": ("bias_in_weights", True),
             "router_softmax": ("score", "softmax"), "router_unnormalised": ("renormalise", False),
             "router_scaling": ("scaling", 1.0), "expert_w1_w3_swapped": ("expert_w13_swapped", True)}
    check_what_if_effects(name, "Lfm2MoeCheck", model, names, lambda: Lfm2MoeCheck(cfg, p), ids)
    # the other readings of Lfm2MoeConfig's keys
    base = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0][0]
    readings = {}

    def reads(label, c2, ok):
        readings[label] = ok(ref.Spec(c2), Lfm2MoeCheck(c2, p))
    no_theta = {k: v for k, v in cfg.items() if k != "rope_theta"}
    reads("rope_parameters {default, 5e5} without rope_theta (transformers 5)",
          dict(no_theta, rope_parameters={"rope_theta": 500000.0, "rope_type": "default"}),
          lambda s2, m2: s2.theta == m2.theta == 500000.0 and torch.equal(s2.rope["global"][0], m2.inv_freq()))
    reads("neither rope key: default_theta 1e6", no_theta,
          lambda s2, m2: s2.theta == m2.theta == 1000000.0)
    reads("tie_embedding false over tie_word_embeddings", dict(cfg, tie_embedding=False),
          lambda s2, m2: s2.tied is False and m2.tied is False)
    reads("block_ff_dim 999 beside (not read)", dict(cfg, block_ff_dim=999, block_auto_adjust_ff_dim=True),
          lambda s2, m2: s2.F == m2.ff() == F_)
    reads("num_dense_layers 4", dict(cfg, num_dense_layers=4),
          lambda s2, m2: s2.layer_moe == [l >= 4 for l in range(m.L)] and m2.dense == 4)
    reads("num_dense_layers absent: 2", {k: v for k, v in cfg.items() if k != "num_dense_layers"},
          lambda s2, m2: s2.layer_moe == [l >= 2 for l in range(m.L)] and m2.dense == 2)

    def unbiased(s2, m2):  # use_expert_bias false: the router_bias what-if, whatever the stored buffer holds
        effect = float((ref.forward(s2, p, torch.tensor([ids]), capture=False)[0][0] - base).abs().max())
        return (not s2.lfm2_expert_bias and not m2.use_bias and
                abs(effect - model["router_bias_effect_prompt4"]) < 1e-3)
    reads("use_expert_bias false (= the router_bias what-if)", dict(cfg, use_expert_bias=False), unbiased)
    wrong = [k for k, ok in readings.items() if not ok]
    check(not wrong, "%s: reference.Spec reads as Lfm2MoeCheck: %s%s" % (name, "; ".join(readings),
                                                                         " (differ: %s)" % wrong if wrong else ""))

    def refused(change=None, drop=()):
        return spec_refuses(cfg, change, drop)
    types = list(m.layer_types)
    idx = [i for i, t in enumerate(types) if t == "full_attention"]
    cases = {"conv_bias true": refused({"conv_bias": True}),
             "no layer_types (full_attn_idxs only)": refused({"full_attn_idxs": idx}, drop=("layer_types",)),
             "an unknown layer type (mamba)": refused({"layer_types": types[:1] + ["mamba"] + types[2:]}),
             "\"theta\" (LFM2's original key)": refused({"theta": 10000.0}),
             "rope_scaling linear": refused({"rope_scaling": {"type": "linear", "factor": 2.0}}),
             "rope_parameters yarn": refused({"rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 2.0}}),
             "rope_parameters' rope_theta != rope_theta": refused({"rope_parameters": {"rope_type": "default",
                                                                                        "rope_theta": 5e5}}),
             "hidden_act gelu": refused({"hidden_act": "gelu"}),
             "num_experts 0": refused({"num_experts": 0}),
             "num_experts_per_tok 9 > num_experts": refused({"num_experts_per_tok": E + 1}),
             "conv_L_cache 0": refused({"conv_L_cache": 0})}
    check_refusals(name, cases)


class NemotronHCheck:
    """NemotronHForCausalLM's forward pass again, from models/nemotron_h/modular_nemotron_h.py (the generated
    modeling_nemotron_h.py), models/zamba2/modular_zamba2.py (Zamba2MambaMixer.torch_forward, Zamba2RMSNormGated) and
    configuration_nemotron_h.py / NVIDIA's remote configuration of the releases, sharing nothing with reference.py but the
    safetensors reader: config.json read here with NemotronHConfig's numbers for the keys it leaves out, the blocks from
    hybrid_override_pattern (NemotronHConfig._pattern_to_list's characters, NemotronHBlock's MIXER_TYPES), the head width
    attention_head_dim (the releases' NemotronHAttention: `config.attention_head_dim`); NemotronHModel.forward
    (backbone.embeddings, the blocks, backbone.norm_f; hidden_states the embeddings, each block's output and the last
    one after norm_f), NemotronHBlock.forward (`residual + mixer(norm(hidden_states))`), NemotronHRMSNorm (x /
    sqrt(mean(x^2) + layer_norm_epsilon) times w), NemotronHAttention (JambaAttention: q/k/v_proj, repeat_kv, scores
    times head_dim**-0.5 per head with an explicit mask and a hand-written softmax, o_proj, no rotary embedding),
    NemotronHMLP (down_proj(relu(up_proj(x)) ** 2)), and on "M" blocks NemotronHMamba2Mixer run token by token as
    torch_forward's cached path runs a decoding step, from an empty cache (mamba2_by_token, GraniteHybridCheck's too):
    the conv state rolled, the new xBC written last, `torch.sum(conv_state * self.conv1d.weight[:, 0, :], dim=-1)` plus
    the bias, SiLU; dt = softplus(dt + dt_bias), `torch.clamp(dt, self.time_step_min)`; B and C viewed (n_groups,
    state) and given to the heads as that path's expand gives them ([..., None, :].expand(n_groups, heads // n_groups,
    state): head h reads group h // (heads / n_groups)); the state times exp(dt A) plus dt B x, y =
    state @ C by torch.bmm, plus D x; then Zamba2RMSNormGated (y silu(gate), viewed (groups, group_size), each group
    over its own mean square, times w) and out_proj; lm_head (where reference.py takes torch_forward's chunked scan
    for a whole sequence, mamba_mixer's norm span and floor as Spec fields).
    What-ifs: `dt_floor` (False: dt clamped at 0 only), `norm_group` (the gated norm's group size: intermediate_size for
    one RMS over all), `norm_first` (True: the RMSNorm before silu(gate)), `head_group` ("first": every head reads group
    0; "tile": head h reads group h % n_groups), `conv_act`, `conv_bias`, `D`, `dt_bias` (False: each left out),
    `reset_chunk` (an int: the state back to zero every that many tokens), `squared` (False: a plain ReLU in the MLP),
    `rope` (True: the rotate-half RoPE at theta 1e4 on the attention blocks, turned here as complex numbers).
    `floored`: None, or a dict that receives per Mamba-2 layer how many (token, head) values the floor raised.
    "E" blocks (NVIDIA-Nemotron-3-Nano's, head width head_dim there): NemotronHMoE (`moe`), its routing as
    DeepseekV3MoE.route_tokens_to_experts writes it (`route`: the fp32 logits of mixer.gate.weight, sigmoid, the choice
    values s + e_score_correction_bias, each group's two best summed, the topk_group best groups kept by scatter_ and
    the others' values set to 0.0, topk unsorted, s gathered, over (sum + 1e-20), x routed_scaling_factor), the
    per-expert tensors stacked as conversion_mapping's "nemotron_h" MergeModulelist(dim=0) stacks them into
    NemotronHExperts' up_proj (E, Fm, H) / down_proj (E, H, Fm), NemotronHExperts.forward's one_hot / where / index_add_
    loop over the experts hit, then `+ shared_experts(residuals)` (a NemotronHMLP). What-ifs there: `use_bias` (False:
    the choice on s alone), `score` ("softmax" in place of the sigmoid), `renorm` (False: not divided), `scaling`
    (another routed_scaling_factor), `k` (another num_experts_per_tok), `shared` (False: no shared expert); `squared`
    covers the experts too. With moe_latent_size (NVIDIA-Nemotron-3-Super's LatentMoE, `latent`): NemotronHMoE.forward
    routes on the block input, takes it through mixer.fc1_latent_proj before NemotronHExperts (whose up_proj / down_proj
    are then moe_latent_size wide), the experts' index_add_ sum through mixer.fc2_latent_proj, and adds the shared
    expert on the un-projected input (`residuals`); the what-ifs there replace `p` (fc2 at 0, fc1 / fc2 swapped)."""

    # NemotronHConfig's numbers for the keys read here (configuration_nemotron_h.py)
    DEFAULTS = dict(num_key_value_heads=8, layer_norm_epsilon=1e-5, tie_word_embeddings=False, mlp_hidden_act="relu2",
                    mamba_hidden_act="silu", ssm_state_size=128, mamba_num_heads=128, mamba_head_dim=64, n_groups=8,
                    conv_kernel=4, time_step_min=0.001, use_conv_bias=True, chunk_size=128, use_bias=False,
                    mlp_bias=False, attention_bias=False, n_routed_experts=8, num_experts_per_tok=2,
                    moe_intermediate_size=7688, moe_shared_expert_intermediate_size=7688, n_group=1, topk_group=1,
                    norm_topk_prob=True, routed_scaling_factor=1.0, moe_latent_size=None)
    BLOCKS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}  # MIXER_TYPES' keys by _pattern_to_list's

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        if (c["mlp_hidden_act"] != "relu2" or c["mamba_hidden_act"] != "silu" or c["use_bias"] or c["mlp_bias"] or
                c["attention_bias"]):
            raise ValueError("NemotronHCheck: mlp_hidden_act %r, mamba_hidden_act %r, biases %r" % (
                c["mlp_hidden_act"], c["mamba_hidden_act"], (c["use_bias"], c["mlp_bias"], c["attention_bias"])))
        self.c, self.p = c, p
        self.blocks = [self.BLOCKS[ch] for ch in c["hybrid_override_pattern"]]
        self.L = len(self.blocks)
        self.H, self.NH = c["hidden_size"], c["num_attention_heads"]
        self.NKV = c["num_key_value_heads"]
        # (the 4.48-era releases: attention_head_dim; NVIDIA-Nemotron-3-Nano: head_dim)
        self.HD = c["attention_head_dim"] if "attention_head_dim" in c else c["head_dim"]
        self.eps = c["layer_norm_epsilon"]
        # NemotronHMoE.__init__ / DeepseekV3MoE.__init__
        self.E, self.k = c["n_routed_experts"], c["num_experts_per_tok"]
        self.G, self.TG = c["n_group"], c["topk_group"]
        self.renorm, self.scaling = c["norm_topk_prob"], c["routed_scaling_factor"]
        self.use_bias, self.score, self.shared = True, "sigmoid", True
        # NemotronHMoE.__init__: fc1_latent_proj / fc2_latent_proj only when moe_latent_size is set
        self.latent = c["moe_latent_size"]
        # NemotronHMamba2Mixer.__init__
        self.mNH, self.mP, self.mG = c["mamba_num_heads"], c["mamba_head_dim"], c["n_groups"]
        self.mN, self.mK = c["ssm_state_size"], c["conv_kernel"]
        self.I = self.mNH * self.mP
        self.time_step_min = c["time_step_min"]
        self.dt_floor = self.conv_act = self.conv_bias = self.D = self.dt_bias = self.squared = True
        self.norm_group, self.norm_first, self.head_group, self.reset_chunk = self.I // self.mG, False, "expand", None
        self.rope = False
        self.floored = None

    def rms(self, x, w):  # NemotronHRMSNorm
        return w * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    def attention(self, l, x):
        """NemotronHAttention (JambaAttention) on one sequence x (T, H); the rotation a what-if only."""
        pre, HD, T = "backbone.layers.%d.mixer." % l, self.HD, x.shape[0]
        q = torch.nn.functional.linear(x, self.p[pre + "q_proj.weight"]).view(T, self.NH, HD)
        k = torch.nn.functional.linear(x, self.p[pre + "k_proj.weight"]).view(T, self.NKV, HD)
        v = torch.nn.functional.linear(x, self.p[pre + "v_proj.weight"]).view(T, self.NKV, HD)
        if self.rope:
            inv_freq = 1.0 / (10000.0 ** (torch.arange(0, HD, 2, dtype=torch.int64).float() / HD))
            angles = torch.outer(torch.arange(T, dtype=torch.float32), inv_freq)
            turn = torch.polar(torch.ones_like(angles), angles).unsqueeze(1)

            def rotary(y):
                z = torch.complex(y[..., :HD // 2], y[..., HD // 2:]) * turn
                return torch.cat((z.real, z.imag), dim=-1)
            q, k = rotary(q), rotary(k)
        heads = causal_attention_heads(q, k, v, HD ** -0.5)
        return torch.nn.functional.linear(heads, self.p[pre + "o_proj.weight"])

    def mlp(self, l, x):
        """NemotronHMLP.forward: down_proj(act_fn(up_proj(x))), act_fn relu2 (ReLUSquaredActivation)."""
        pre = "backbone.layers.%d.mixer." % l
        u = torch.relu(torch.nn.functional.linear(x, self.p[pre + "up_proj.weight"]))
        return torch.nn.functional.linear(u * u if self.squared else u, self.p[pre + "down_proj.weight"])

    def route(self, l, x):
        """(experts (T, k), weights (T, k)) of the "E" block l for its inputs x (T, H), DeepseekV3MoE's routing."""
        pre = "backbone.layers.%d.mixer." % l
        logits = torch.nn.functional.linear(x.float(), self.p[pre + "gate.weight"].float())
        bias = self.p[pre + "gate.e_score_correction_bias"] if self.use_bias else None
        return deepseek_v3_route(logits, bias, self.G, self.TG, self.k, self.renorm, self.scaling, self.score)[:2]

    def moe(self, l, x):
        """NemotronHMoE.forward on one sequence x (T, H): route, NemotronHExperts over the stacked tensors, shared;
        with moe_latent_size the experts between fc1_latent_proj and fc2_latent_proj."""
        pre, p, E = "backbone.layers.%d.mixer." % l, self.p, self.E
        residuals = x
        chosen, weights = self.route(l, x)  # (the gate on the full-width input, latent or not)
        if self.latent is not None:
            x = torch.nn.functional.linear(x, p[pre + "fc1_latent_proj.weight"])
        # conversion_mapping "nemotron_h": mixer.experts.*.up_proj.weight -> mixer.experts.up_proj by
        # MergeModulelist(dim=0), a stack along a new first dimension (down_proj alike)
        up = torch.stack([p[pre + "experts.%d.up_proj.weight" % e] for e in range(E)])
        down = torch.stack([p[pre + "experts.%d.down_proj.weight" % e] for e in range(E)])
        out = torch.zeros_like(x)
        expert_mask = torch.nn.functional.one_hot(chosen, num_classes=E).permute(2, 1, 0)
        for e in torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero().squeeze(-1).tolist():
            top_k_pos, token_idx = torch.where(expert_mask[e])
            u = torch.relu(torch.nn.functional.linear(x[token_idx], up[e]))
            y = torch.nn.functional.linear(u * u if self.squared else u, down[e])
            out.index_add_(0, token_idx, y * weights[token_idx, top_k_pos, None])
        if self.latent is not None:
            out = torch.nn.functional.linear(out, p[pre + "fc2_latent_proj.weight"])
        if self.shared:
            u = torch.relu(torch.nn.functional.linear(residuals, p[pre + "shared_experts.up_proj.weight"]))
            u = u * u if self.squared else u
            out = out + torch.nn.functional.linear(u, p[pre + "shared_experts.down_proj.weight"])
        return out

    def mamba(self, l, x):
        """NemotronHMamba2Mixer on one sequence x (T, H), token by token as torch_forward's cached path
        (mamba2_by_token): dt clamped at time_step_min (`torch.clamp(dt, self.time_step_min)`), B and C expanded to the
        heads as that path does (B.reshape(n_groups, -1)[..., None, :].expand(...): head h reads group
        h // (heads / n_groups)), Zamba2RMSNormGated's groups of group_size values."""
        NH, G = self.mNH, self.mG
        group = {"expand": [hh // (NH // G) for hh in range(NH)], "first": [0] * NH,
                 "tile": [hh % G for hh in range(NH)]}[self.head_group]
        out, floored = mamba2_by_token(self, "backbone.layers.%d.mixer." % l, x,
                                       self.conv_bias and self.c["use_conv_bias"],
                                       self.time_step_min if self.dt_floor else 0.0, True, group, self.norm_group,
                                       self.eps)
        if self.floored is not None:
            self.floored[l] = floored
        return out

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p = self.p
        h = p["backbone.embeddings.weight"][torch.tensor(ids)]
        hidden = [h]
        for l, kind in enumerate(self.blocks):  # NemotronHBlock.forward
            x = self.rms(h, p["backbone.layers.%d.norm.weight" % l])
            h = h + (self.mamba(l, x) if kind == "mamba" else self.attention(l, x) if kind == "attention" else
                     self.moe(l, x) if kind == "moe" else self.mlp(l, x))
            hidden.append(h)
        hidden[-1] = self.rms(h, p["backbone.norm_f.weight"])
        head = p["backbone.embeddings.weight"] if self.c["tie_word_embeddings"] else p["lm_head.weight"]
        return torch.nn.functional.linear(hidden[-1], head), hidden


def nemotron_h_against_golden(name, p, g, st):
    """A Nemotron-H fixture's config.json, golden.json's model block and NemotronHCheck, that check against the golden
    outputs first (check_against_golden)."""
    cfg, m = open_check(name, NemotronHCheck, p, g, st)
    return cfg, g["model"], m


def nemotron_h_expected_tensors(m, cfg, V):
    """NemotronH's tensor names and shapes as the releases hold them, from NemotronHCheck m's sizes and config.json cfg:
    backbone.embeddings (V, H), backbone.norm_f and the untied lm_head; per layer backbone.layers.{l}.norm and the one
    mixer under mixer.: on Mamba-2 blocks in_proj (I + conv_dim + heads, H), conv1d (conv_dim, 1, K) + bias, dt_bias /
    A_log / D (heads,), norm (I,) and out_proj (H, I); q/k/v/o_proj on attention blocks; up_proj (F, H) / down_proj on
    the MLP blocks; on "E" (moe) blocks, as NVIDIA-Nemotron-3-Nano's files keep them (its remote code: experts per
    expert), the router gate.weight (E, H) and gate.e_score_correction_bias (E,), experts.{e}.up_proj (Fm, D) /
    down_proj per expert (D = H, or moe_latent_size beside fc1_latent_proj (D, H) / fc2_latent_proj (H, D): Nemotron 3
    Super's LatentMoE) and shared_experts.up_proj (Fs, H) / down_proj."""
    H, HD, I, NH, K, F_ = m.H, m.HD, m.I, m.mNH, m.mK, cfg["intermediate_size"]
    conv_dim = I + 2 * m.mG * m.mN
    want = {"backbone.embeddings.weight": (V, H), "backbone.norm_f.weight": (H,), "lm_head.weight": (V, H)}
    for l, kind in enumerate(m.blocks):
        x = "backbone.layers.%d." % l
        want[x + "norm.weight"] = (H,)
        x += "mixer."
        if kind == "mamba":
            want.update({x + "in_proj.weight": (I + conv_dim + NH, H), x + "conv1d.weight": (conv_dim, 1, K),
                         x + "conv1d.bias": (conv_dim,), x + "dt_bias": (NH,), x + "A_log": (NH,), x + "D": (NH,),
                         x + "norm.weight": (I,), x + "out_proj.weight": (H, I)})
        elif kind == "attention":
            want.update({x + "q_proj.weight": (m.NH * HD, H), x + "k_proj.weight": (m.NKV * HD, H),
                         x + "v_proj.weight": (m.NKV * HD, H), x + "o_proj.weight": (H, m.NH * HD)})
        elif kind == "moe":
            E, Fm, Fs = m.E, cfg["moe_intermediate_size"], cfg["moe_shared_expert_intermediate_size"]
            D = m.latent if m.latent is not None else H
            want.update({x + "gate.weight": (E, H), x + "gate.e_score_correction_bias": (E,),
                         x + "shared_experts.up_proj.weight": (Fs, H), x + "shared_experts.down_proj.weight": (H, Fs)})
            if m.latent is not None:
                want.update({x + "fc1_latent_proj.weight": (D, H), x + "fc2_latent_proj.weight": (H, D)})
            for e in range(E):
                want.update({x + "experts.%d.up_proj.weight" % e: (Fm, D),
                             x + "experts.%d.down_proj.weight" % e: (D, Fm)})
        else:
            want.update({x + "up_proj.weight": (F_, H), x + "down_proj.weight": (H, F_)})
    return want


def nemotron_h_file_as_released(name, want):
    """Whether the fixture's model.safetensors holds exactly the tensors `want` (name -> shape), BF16 but those the
    releases keep in F32: A_log / D / dt_bias (NemotronHMamba2Mixer's) and e_score_correction_bias
    (NemotronHTopkRouter's buffer, _keep_in_fp32_modules_strict)."""
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    f32 = (".A_log", ".D", ".dt_bias", ".e_score_correction_bias")
    return ({n: tuple(v[1].shape) for n, v in stored.items()} == want and
            all(v[0] == ("F32" if n.endswith(f32) else "BF16") for n, v in stored.items()))


def check_nemotron_h_mamba(name, spec, p, g, m):
    """The Mamba-2 blocks of a Nemotron-H fixture beyond the golden outputs: dt's floor bites (NemotronHCheck m's count
    of the (token, head) values it raises over prompt 4, per Mamba-2 layer, = golden.json's mamba_dt_floored_prompt4:
    some and not all of them in every layer), and reference.py's scan forms (check_granite_mamba_forms)."""
    ids = g["prompts"][4]["input_ids"]
    m.floored = {}
    m.forward(ids)
    counts = {str(l): [n, len(ids) * m.mNH] for l, n in sorted(m.floored.items())}
    m.floored = None
    check(counts == g["model"]["mamba_dt_floored_prompt4"] and all(0 < a < b for a, b in counts.values()),
          "%s: dt's floor time_step_min %g raises some and not all of prompt 4's (token, head) values in every Mamba-2 "
          "layer (%s), as golden.json has it" % (name, m.time_step_min, ", ".join(
              "layer %s: %d of %d" % (l, a, b) for l, (a, b) in counts.items())))
    check_granite_mamba_forms(name, spec, p, g)


def check_nemotron_h_unread(name, cfg, p, prompts, base, unread):
    """The config.json keys that NemotronH lists and does not read (`unread`: key -> another value) leave reference.py's
    logits_last (`base` over `prompts`) exactly as they are; layer_norm_epsilon, every norm's eps, is read."""
    ok = all(torch.equal(last_logits(ref.Spec(dict(cfg, **{key: v})), p, prompts), base) for key, v in unread.items())
    eps_read = float((last_logits(ref.Spec(dict(cfg, layer_norm_epsilon=0.5)), p, prompts) - base).abs().max())
    check(ok and eps_read > 1e-2, "%s: %s change nothing (logits_last exactly); layer_norm_epsilon 0.5 changes them "
          "by %.3g" % (name, ", ".join(unread), eps_read))


def nemotron_h_block_type_readings(kinds, spec, cfg, p, prompts, base, drop=(), **extra):
    """transformers 5's layers_block_type in place of hybrid_override_pattern (and of the keys `drop`, with `extra`
    set), in either naming of its NemotronHConfig (mamba / attention, or linear_attention / full_attention; mlp and moe
    as they are): per naming whether reference.Spec reads the blocks `kinds`, spec's MoE layers and head width, and the
    same logits_last (`base` over `prompts`)."""
    plain = {key: v for key, v in cfg.items() if key not in ("hybrid_override_pattern",) + tuple(drop)}
    readings = []
    for names in ({"mamba": "mamba", "attention": "attention", "mlp": "mlp", "moe": "moe"},
                  {"mamba": "linear_attention", "attention": "full_attention", "mlp": "mlp", "moe": "moe"}):
        s2 = ref.Spec(dict(plain, layers_block_type=[names[kind] for kind in kinds], **extra))
        readings.append(s2.layer_kinds == kinds and s2.layer_moe == spec.layer_moe and s2.HD == spec.HD and
                        torch.equal(last_logits(s2, p, prompts), base))
    return readings


def check_nemotron_h_refusals(name, cases):
    """reference.Spec refuses each of `cases` (what -> whether spec_refuses said so)."""
    wrong = [what for what, ok in cases.items() if not ok]
    check(not wrong, "%s: reference.Spec refuses %s%s" % (name, ", ".join(cases),
                                                          " (accepted: %s)" % wrong if wrong else ""))


def check_nemotron_h_what_ifs(name, cfg, p, model, ids):
    """golden.json's *_effect_prompt4 of a Nemotron-H fixture reproduced by NemotronHCheck with the one attribute of
    each what-if set: golden_models.nemotron_h_what_ifs, plus nemotron_h_moe_what_ifs and the sigmoid router's when
    the pattern has "E" blocks."""
    m = NemotronHCheck(cfg, p)
    names = {"mamba_dt_floor": ("dt_floor", False), "mamba_norm_whole": ("norm_group", m.I),
             "mamba_norm_before_gate": ("norm_first", True), "mamba_groups_first": ("head_group", "first"),
             "mamba_groups_tiled": ("head_group", "tile"), "mamba_conv_activation": ("conv_act", False),
             "mamba_state_reset_per_chunk": ("reset_chunk", cfg["chunk_size"]), "mlp_relu": ("squared", False),
             "attention_rope": ("rope", True), "mamba_conv_bias": ("conv_bias", False), "mamba_D": ("D", False),
             "mamba_dt_bias": ("dt_bias", False)}
    if "moe" in m.blocks:
        names.update({"router_bias": ("use_bias", False), "router_scaling": ("scaling", 1.0),
                      "router_softmax": ("score", "softmax"), "router_unnormalised": ("renorm", False),
                      "router_top1": ("k", 1), "shared_expert": ("shared", False)})
    if m.latent is not None:
        # LatentMoE: fc2_latent_proj at 0 (the routed path gone, the shared expert alone), and fc1 / fc2 each read as
        # the other's transpose (the shapes (latent, H) / (H, latent) allow it)
        swapped = dict(p)
        for l, kind in enumerate(m.blocks):
            if kind == "moe":
                a, b = ("backbone.layers.%d.mixer.fc%d_latent_proj.weight" % (l, i) for i in (1, 2))
                swapped[a], swapped[b] = p[b].t(), p[a].t()
        names.update({"latent_routed_path": ("p", {n: t * 0 if n.endswith(".fc2_latent_proj.weight") else t
                                                   for n, t in p.items()}),
                      "latent_projections_swapped": ("p", swapped)})
    check_what_if_effects(name, "NemotronHCheck", model, names, lambda: NemotronHCheck(cfg, p), ids)


def check_nemotron_h(name, spec, p, g, st):
    cfg, model, m = nemotron_h_against_golden(name, p, g, st)
    H, HD, V, F_ = m.H, m.HD, spec.V, cfg["intermediate_size"]
    I, NH, P, G, N, K = m.I, m.mNH, m.mP, m.mG, m.mN, m.mK
    conv_dim = I + 2 * G * N
    kinds = m.blocks
    mamba = [k == "mamba" for k in kinds]
    # the file: exactly the released NemotronH tensors, BF16 but A_log / D / dt_bias (F32, as released)
    want = nemotron_h_expected_tensors(m, cfg, V)
    check(nemotron_h_file_as_released(name, want),
          "%s: the file holds exactly NemotronH's %d tensors as released (backbone.embeddings, per layer norm and "
          "mixer.*: in_proj (%d, %d) / conv1d (%d, 1, %d) + bias / dt_bias / A_log / D (%d) / norm (%d) / out_proj "
          "(%d, %d) on the Mamba-2 layers, q/k/v/o_proj on the attention layer, up_proj (%d, %d) / down_proj (%d, %d) "
          "on the MLP layers; backbone.norm_f, lm_head: untied), BF16 but F32 A_log / D / dt_bias" % (
              name, len(want), I + conv_dim + NH, H, conv_dim, K, NH, I, H, I, F_, H, H, F_))
    # config.json in nvidia/Nemotron-H-8B-Base-8K's spelling
    lengths = [len(e["input_ids"]) for e in g["prompts"]]
    chunk = cfg["chunk_size"]
    limit = cfg["time_step_limit"]
    spelling = (cfg["architectures"] == ["NemotronHForCausalLM"] and cfg["model_type"] == "nemotron_h" and
                isinstance(cfg["hybrid_override_pattern"], str) and len(kinds) == cfg["num_hidden_layers"] and
                set(kinds) == {"mamba", "attention", "mlp"} and kinds[0] == "mamba" and kinds[-1] == "mlp" and
                "head_dim" not in cfg and "layers_block_type" not in cfg and "layer_types" not in cfg and
                cfg["attention_head_dim"] == H // m.NH and cfg["mlp_hidden_act"] == "relu2" and
                "hidden_act" not in cfg and cfg["expand"] * H != I and 1 < G < NH and
                cfg["use_conv_bias"] is True and cfg["use_bias"] is False and cfg["mamba_proj_bias"] is False and
                cfg["mlp_bias"] is False and cfg["attention_bias"] is False and
                len(g["prompts"][4]["input_ids"]) > 2 * chunk and any(n % chunk for n in lengths) and
                limit[0] == 0.0 and limit[1] == float("inf") and cfg["time_step_min"] > 0 and
                cfg["time_step_max"] > cfg["time_step_min"] > cfg["time_step_floor"] and
                cfg["layer_norm_epsilon"] == cfg["rms_norm_eps"] and cfg["tie_word_embeddings"] is False and
                cfg["torch_dtype"] == "bfloat16" and cfg["transformers_version"].startswith("4.48") and
                "auto_map" in cfg and not any(k in cfg for k in ref.NEMOTRON_H_LEGACY_KEYS))
    check(spelling, "%s: config.json in nvidia/Nemotron-H-8B-Base-8K's spelling (hybrid_override_pattern %r, "
          "attention_head_dim %d and no head_dim, mlp_hidden_act relu2, mamba_num_heads %d x mamba_head_dim %d = %d != "
          "expand %d x hidden %d, n_groups %d, ssm_state_size %d, conv_kernel %d, chunk_size %d that prompt 4 crosses "
          "twice and some prompt ends inside of, time_step_min %g / max %g / floor %g, time_step_limit [0, Infinity], "
          "layer_norm_epsilon = rms_norm_eps, untied, auto_map)" % (
              name, cfg["hybrid_override_pattern"], HD, NH, P, I, cfg["expand"], H, G, N, K, chunk,
              cfg["time_step_min"], cfg["time_step_max"], cfg["time_step_floor"]))
    # reference.Spec and golden.json read it as NemotronHCheck does
    same = (spec.layer_kinds == kinds and spec.layer_mamba == mamba and spec.layer_use_rope == [False] * m.L and
            spec.HD == HD and spec.NH == m.NH and spec.NKV == m.NKV and spec.F == F_ and spec.eps == m.eps and
            spec.act == "relu2" and spec.attn_scale == HD ** -0.5 and spec.embed_scale is None and not spec.tied and
            not spec.norm_offset and not spec.qkv_bias and not spec.o_bias and not spec.num_experts and
            (spec.prefix, spec.embed_name, spec.final_norm_name, spec.attn_module, spec.mamba_module) ==
            ("backbone.", "embeddings", "norm_f", "mixer", "mixer") and
            (spec.mamba_I, spec.mamba_NH, spec.mamba_P, spec.mamba_G, spec.mamba_N, spec.mamba_K, spec.mamba_chunk,
             spec.mamba_conv_bias) == (I, NH, P, G, N, K, chunk, True) and
            spec.mamba_dt_floor == m.time_step_min and spec.mamba_norm_group == m.norm_group == I // G and
            spec.mamba_norm_order == "gate_first" and spec.mamba_head_group == "interleave" and
            model["layer_kinds"] == kinds and model["layer_mamba"] == mamba and model["attention_head_dim"] == HD and
            model["layer_norm_epsilon"] == m.eps and model["mamba_intermediate_size"] == I and
            (model["mamba_num_heads"], model["mamba_head_dim"], model["n_groups"], model["ssm_state_size"],
             model["conv_kernel"], model["chunk_size"], model["mamba_conv_dim"]) == (NH, P, G, N, K, chunk, conv_dim)
            and model["time_step_min"] == m.time_step_min)
    check(same, "%s: reference.Spec and golden.json read the blocks %s, the head width %d, layer_norm_epsilon, relu2, the "
          "names (backbone., embeddings, norm_f, mixer) and the mixer (intermediate %d, %d heads of %d, %d groups, state "
          "%d, conv %d + bias, chunk %d, dt floor %g, gated norm per %d values) as NemotronHCheck does" % (
              name, kinds, HD, I, NH, P, G, N, K, chunk, m.time_step_min, I // G))
    # the floor bites: NemotronHCheck's count of the (token, head) values it raises over prompt 4 = golden.json's
    check_nemotron_h_mamba(name, spec, p, g, m)
    # keys that are listed and not read: the same logits_last; layer_norm_epsilon is read
    prompts = [e["input_ids"] for e in g["prompts"]]
    base = last_logits(spec, p, prompts)
    unread = {"expand": 4, "rms_norm_eps": 0.5, "time_step_max": 0.5, "time_step_floor": 0.05,
              "residual_in_fp32": True, "rescale_prenorm_residual": False, "use_mamba_kernels": False,
              "num_logits_to_keep": 0, "hidden_dropout": 0.5, "attention_dropout": 0.5, "initializer_range": 1.0}
    check_nemotron_h_unread(name, cfg, p, prompts, base, unread)
    # transformers 5's spellings: layers_block_type (either naming) for the pattern, head_dim for attention_head_dim,
    # time_step_limit absent
    readings = nemotron_h_block_type_readings(kinds, spec, cfg, p, prompts, base,
                                              drop=("attention_head_dim", "time_step_limit"), head_dim=HD)
    both = ref.Spec(dict(cfg, layers_block_type=[{"mamba": "linear_attention", "attention": "full_attention",
                                                  "mlp": "mlp"}[k] for k in kinds], head_dim=HD))
    readings.append(both.layer_kinds == kinds and both.HD == HD)
    check(all(readings), "%s: transformers 5's layers_block_type (mamba / attention / mlp, or linear_attention / "
          "full_attention / mlp) with head_dim and no time_step_limit read as hybrid_override_pattern with "
          "attention_head_dim (the same logits_last); both spellings together agree" % name)

    def refused(change=None, drop=()):
        return spec_refuses(cfg, change, drop)
    pat = cfg["hybrid_override_pattern"]
    check_nemotron_h_refusals(name, {
        "an \"E\" (MoE) block with moe_latent_size 0": refused({"hybrid_override_pattern": pat[:-1] + "E",
                                                                "moe_latent_size": 0}),
        "a pattern one short of num_hidden_layers": refused({"hybrid_override_pattern": pat[:-1]}),
        "an unknown pattern character": refused({"hybrid_override_pattern": pat[:-1] + "A"}),
        "no pattern and no layers_block_type": refused(drop=("hybrid_override_pattern",)),
        "layers_block_type disagreeing with the pattern": refused({"layers_block_type": ["mamba"] * len(kinds)}),
        "mlp_hidden_act silu": refused({"mlp_hidden_act": "silu"}),
        "mamba_hidden_act gelu": refused({"mamba_hidden_act": "gelu"}),
        "use_bias true": refused({"use_bias": True}), "mamba_proj_bias true": refused({"mamba_proj_bias": True}),
        "mlp_bias true": refused({"mlp_bias": True}), "attention_bias true": refused({"attention_bias": True}),
        "time_step_limit [0, 1]": refused({"time_step_limit": [0.0, 1.0]}),
        "mamba_num_heads not a multiple of n_groups": refused({"n_groups": 3}),
        "chunk_size 0": refused({"chunk_size": 0}),
        "head_dim != attention_head_dim": refused({"head_dim": HD * 2}),
        "the legacy key mamba_chunk_size": refused({"mamba_chunk_size": chunk}),
        "a negative time_step_min": refused({"time_step_min": -0.1})})
    check_nemotron_h_what_ifs(name, cfg, p, model, g["prompts"][4]["input_ids"])


def check_nemotron_h_moe(name, spec, p, g, st):
    """The Nemotron-H fixtures with "E" blocks (NVIDIA-Nemotron-3-Nano-30B-A3B's config.json spelling; with
    moe_latent_size, NVIDIA-Nemotron-3-Super's LatentMoE in that spelling)."""
    cfg, model, m = nemotron_h_against_golden(name, p, g, st)
    H, HD, V, F_ = m.H, m.HD, spec.V, cfg["intermediate_size"]
    I, NH, G = m.I, m.mNH, m.mG
    E, k, Fm, Fs = m.E, m.k, cfg["moe_intermediate_size"], cfg["moe_shared_expert_intermediate_size"]
    latent = m.latent
    D = H if latent is None else latent  # the routed experts' width
    kinds = m.blocks
    moe = [l for l, kind in enumerate(kinds) if kind == "moe"]
    ids4 = g["prompts"][4]["input_ids"]
    # the file: exactly the released tensors (NVIDIA's remote code: experts per expert), BF16 but F32 A_log / D /
    # dt_bias / e_score_correction_bias
    want = nemotron_h_expected_tensors(m, cfg, V)
    check(nemotron_h_file_as_released(name, want),
          "%s: the file holds exactly NemotronH's %d tensors as NVIDIA-Nemotron-3-%s is released (the Mamba-2, "
          "attention and MLP layers' as nemotron-h's; on the MoE layers mixer.gate.weight (%d, %d), "
          "mixer.gate.e_score_correction_bias (%d,), %sper expert mixer.experts.{e}.up_proj.weight (%d, %d) / "
          "down_proj.weight (%d, %d), mixer.shared_experts.up_proj (%d, %d) / down_proj (%d, %d)), BF16 but F32 "
          "A_log / D / dt_bias / e_score_correction_bias" % (
              name, len(want), "Nano" if latent is None else "Super", E, H, E,
              "" if latent is None else "mixer.fc1_latent_proj.weight (%d, %d), mixer.fc2_latent_proj.weight (%d, "
              "%d), " % (D, H, H, D), Fm, D, D, Fm, Fs, H, H, Fs))
    # config.json in nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16's spelling
    lengths = [len(e["input_ids"]) for e in g["prompts"]]
    chunk = cfg["chunk_size"]
    spelling = (cfg["architectures"] == ["NemotronHForCausalLM"] and cfg["model_type"] == "nemotron_h" and
                isinstance(cfg["hybrid_override_pattern"], str) and len(kinds) == cfg["num_hidden_layers"] and
                set(kinds) == {"mamba", "attention", "mlp", "moe"} and
                cfg["head_dim"] == H // m.NH and "attention_head_dim" not in cfg and
                "rms_norm_eps" not in cfg and cfg["norm_eps"] == cfg["layer_norm_epsilon"] and
                "time_step_limit" not in cfg and
                (latent is None) == ("moe_latent_size" not in cfg) and
                "layers_block_type" not in cfg and "layer_types" not in cfg and "hidden_act" not in cfg and
                cfg["mlp_hidden_act"] == "relu2" and cfg["expand"] * H != I and 1 < G < NH and
                cfg["use_conv_bias"] is True and cfg["use_bias"] is False and cfg["mamba_proj_bias"] is False and
                cfg["mlp_bias"] is False and cfg["attention_bias"] is False and
                len(ids4) > 2 * chunk and any(n % chunk for n in lengths) and
                cfg["time_step_max"] > cfg["time_step_min"] > cfg["time_step_floor"] and
                cfg["n_shared_experts"] == 1 and cfg["n_group"] == 1 and cfg["topk_group"] == 1 and
                cfg["norm_topk_prob"] is True and cfg["routed_scaling_factor"] != 1 and 1 < k < E and
                len({Fm, Fs, F_, D} | {H}) == (4 if latent is None else 5) and
                cfg["mamba_ssm_cache_dtype"] == "float32" and
                cfg["rope_theta"] == 10000 and cfg["partial_rotary_factor"] == 1.0 and
                cfg["tie_word_embeddings"] is False and cfg["torch_dtype"] == "bfloat16" and
                cfg["transformers_version"] == "4.55.4" and
                sorted(cfg["auto_map"]) == ["AutoConfig", "AutoModel", "AutoModelForCausalLM"] and
                not any(key in cfg for key in ref.NEMOTRON_H_LEGACY_KEYS))
    check(spelling, "%s: config.json in NVIDIA-Nemotron-3-Nano-30B-A3B-BF16's spelling (hybrid_override_pattern %r, "
          "head_dim %d and no attention_head_dim, norm_eps beside layer_norm_epsilon and no rms_norm_eps, no "
          "time_step_limit, %s, n_routed_experts %d, num_experts_per_tok %d, moe_intermediate_size %d, "
          "moe_shared_expert_intermediate_size %d, intermediate_size %d, n_shared_experts 1, n_group 1, topk_group 1, "
          "norm_topk_prob, routed_scaling_factor %r, mamba_ssm_cache_dtype, rope_theta / partial_rotary_factor, "
          "transformers 4.55.4, auto_map with AutoModel)" % (
              name, cfg["hybrid_override_pattern"], HD,
              "no moe_latent_size" if latent is None else "moe_latent_size %d (!= hidden %d and every other width)" % (
                  latent, H), E, k, Fm, Fs, F_, cfg["routed_scaling_factor"]))
    # reference.Spec and golden.json read it as NemotronHCheck does
    same = (spec.layer_kinds == kinds and spec.layer_moe == [kind == "moe" for kind in kinds] and
            spec.layer_mamba == [kind == "mamba" for kind in kinds] and spec.layer_use_rope == [False] * m.L and
            spec.HD == HD and spec.NKV == m.NKV and spec.F == F_ and spec.eps == m.eps and spec.act == "relu2" and
            not spec.tied and (spec.prefix, spec.embed_name, spec.final_norm_name, spec.attn_module) ==
            ("backbone.", "embeddings", "norm_f", "mixer") and
            (spec.mamba_I, spec.mamba_NH, spec.mamba_G, spec.mamba_dt_floor) == (I, NH, G, m.time_step_min) and
            (spec.num_experts, spec.top_k, spec.moe_intermediate, spec.shared_intermediate) == (E, k, Fm, Fs) and
            spec.moe_latent == latent and model["moe_latent_size"] == latent and
            ("latent_projections" in model) == (latent is not None) and
            (spec.router, spec.router_score, spec.expert_naming, spec.shared_gated) ==
            ("sigmoid", "sigmoid", "nemotron_h", False) and
            (spec.n_group, spec.topk_group, spec.norm_topk_prob, spec.routed_scaling_factor) ==
            (m.G, m.TG, m.renorm, m.scaling) and
            model["layer_kinds"] == kinds and model["n_routed_experts"] == E and model["num_experts_per_tok"] == k and
            model["moe_intermediate_size"] == Fm and model["moe_shared_expert_intermediate_size"] == Fs and
            model["moe_layers"] == spec.layer_moe and model["routed_scaling_factor"] == m.scaling and
            model["router_weight"] == "backbone.layers.%d.mixer.gate.weight" % moe[0] and
            model["correction_bias"] == "backbone.layers.%d.mixer.gate.e_score_correction_bias" % moe[0])
    check(same, "%s: reference.Spec and golden.json read the blocks %s, head_dim %d, the Mamba-2 sizes and the MoE "
          "(%d experts of %d, top-%d, shared %d, DeepSeek-V3's sigmoid router, groups %d / %d, routed_scaling_factor "
          "%r, renormalised, moe_latent_size %s; mixer.gate / mixer.experts.{e} / mixer.shared_experts) as "
          "NemotronHCheck does" % (name, kinds, HD, E, Fm, k, Fs, m.G, m.TG, m.scaling, latent))
    # the floor bites in every Mamba-2 layer, as golden.json counts
    check_nemotron_h_mamba(name, spec, p, g, m)
    # NemotronHCheck's router: prompt 4's expert usage, the last prompt positions' experts, the routing gaps, and the
    # tokens each router what-if reroutes (the router inputs held: NemotronHCheck's own block inputs)
    inputs = {}
    original = m.route

    def recording(l, x):
        inputs.setdefault(l, x)
        return original(l, x)
    m.route = recording
    m.forward(ids4)
    m.route = original
    usage = {str(l): torch.bincount(m.route(l, inputs[l])[0].flatten(), minlength=E).tolist() for l in moe}
    last_ok = True
    for e in g["prompts"]:
        seen = {}
        m.route = lambda l, x, seen=seen: seen.setdefault(l, original(l, x))
        m.forward(e["input_ids"])
        m.route = original
        last_ok &= all(sorted(int(i) for i in seen[l][0][-1]) == sorted(e["expert_ids_last"][l]) for l in moe)
    changed = {}
    for key, attr, value in (("router_bias", "use_bias", False), ("router_softmax", "score", "softmax"),
                             ("router_top1", "k", 1)):
        m2 = NemotronHCheck(cfg, p)
        setattr(m2, attr, value)
        counts_l = []
        for l in range(m.L):
            if l not in moe:
                counts_l.append(None)
                continue
            a = m.route(l, inputs[l])[0].sort(dim=-1).values
            b = m2.route(l, inputs[l])[0].sort(dim=-1).values
            # (top-1: another number of experts for every token)
            counts_l.append(a.shape[0] if a.shape != b.shape else int((a != b).any(dim=-1).sum()))
        changed[key] = counts_l
    check(usage == model["expert_usage_prompt4"] and all(min(u) > 0 for u in usage.values()) and last_ok and
          changed == model["router_changed_tokens_prompt4"] and
          all(n > 0 for n in changed["router_bias"] if n is not None),
          "%s: NemotronHCheck's router gives prompt 4's expert usage (%s: every expert chosen in each MoE layer), "
          "every prompt's expert_ids_last, and the tokens each router what-if reroutes over prompt 4's %d (no "
          "correction bias in the choice %s, softmax %s, top-1 %s), as golden.json has them" % (
              name, "; ".join("layer %s %s" % (l, u) for l, u in usage.items()), len(ids4),
              changed["router_bias"], changed["router_softmax"], changed["router_top1"]))
    # transformers 5's in-memory layout (conversion_mapping's MergeModulelist: mixer.experts.up_proj (E, Fm, H) /
    # down_proj (E, H, Fm), no .weight) read by reference.py gives the same logits
    prompts = [e["input_ids"] for e in g["prompts"]]
    base = last_logits(spec, p, prompts)
    stacked = dict(p)
    for l in moe:
        x = "backbone.layers.%d.mixer.experts." % l
        for part in ("up_proj", "down_proj"):
            stacked[x + part] = torch.stack([stacked.pop(x + "%d.%s.weight" % (e, part)) for e in range(E)])
    check(torch.equal(last_logits(spec, stacked, prompts), base),
          "%s: the experts stacked as transformers 5 holds them (mixer.experts.up_proj (%d, %d, %d), down_proj "
          "(%d, %d, %d)) give reference.py the same logits_last" % (name, E, Fm, D, E, D, Fm))
    # keys that are listed and not read: the same logits_last; layer_norm_epsilon is read
    unread = {"expand": 4, "norm_eps": 0.5, "rope_theta": 500000, "partial_rotary_factor": 0.5,
              "mamba_ssm_cache_dtype": "bfloat16", "time_step_max": 0.5, "time_step_floor": 0.05,
              "residual_in_fp32": True, "rescale_prenorm_residual": False, "use_mamba_kernels": False,
              "num_logits_to_keep": 0, "hidden_dropout": 0.5, "attention_dropout": 0.5, "initializer_range": 1.0,
              "max_position_embeddings": 4096, "moe_shared_expert_overlap": False}
    if latent is None:
        unread["moe_latent_size"] = None  # (an explicit null: no latent projection, as its absence)
    check_nemotron_h_unread(name, cfg, p, prompts, base, unread)
    if latent is not None:
        # moe_latent_size is read: without it the latent-wide experts do not fit the hidden-wide input
        try:
            last_logits(ref.Spec(dict(cfg, moe_latent_size=None)), p, prompts)
            unfit = False
        except RuntimeError:
            unfit = True
        check(unfit, "%s: moe_latent_size is read: read as null, the experts' up_proj (%d, %d) do not fit the %d-wide "
              "input (a shape error)" % (name, Fm, latent, H))
    # transformers 5's spelling: layers_block_type (either naming, "moe" for "E") for the pattern
    readings = nemotron_h_block_type_readings(kinds, spec, cfg, p, prompts, base)
    check(all(readings), "%s: transformers 5's layers_block_type (mamba / attention / mlp / moe, or linear_attention / "
          "full_attention / mlp / moe) reads as hybrid_override_pattern (the same logits_last)" % name)

    def refused(change=None, drop=()):
        return spec_refuses(cfg, change, drop)
    check_nemotron_h_refusals(name, {
        "moe_latent_size 0 (no latent width)": refused({"moe_latent_size": 0}),
        "moe_latent_size true": refused({"moe_latent_size": True}),
        "n_shared_experts 2": refused({"n_shared_experts": 2}), "n_shared_experts 0": refused({"n_shared_experts": 0}),
        "n_group 3 (not dividing n_routed_experts)": refused({"n_group": 3}),
        "n_group 8 (one expert per group)": refused({"n_group": E}),
        "topk_group 2 > n_group 1": refused({"topk_group": 2}),
        "num_experts_per_tok > n_routed_experts": refused({"num_experts_per_tok": E + 1}),
        "n_routed_experts 0": refused({"n_routed_experts": 0}),
        "moe_intermediate_size 0": refused({"moe_intermediate_size": 0}),
        "moe_shared_expert_intermediate_size 0": refused({"moe_shared_expert_intermediate_size": 0}),
        "mlp_bias true": refused({"mlp_bias": True}), "mlp_hidden_act silu": refused({"mlp_hidden_act": "silu"}),
        "head_dim != attention_head_dim": refused({"attention_head_dim": HD * 2}),
        "a time_step_limit [0, 1]": refused({"time_step_limit": [0.0, 1.0]})})
    check_nemotron_h_what_ifs(name, cfg, p, model, ids4)


class ArceeCheck(LlamaCheck):
    """ArceeForCausalLM's forward pass again, from models/arcee/modular_arcee.py (the generated modeling_arcee.py) and
    configuration_arcee.py, sharing nothing with reference.py but the safetensors reader: ArceeConfig's defaults;
    LlamaCheck's layers (ArceeAttention / ArceeDecoderLayer / ArceeModel are Llama's: F.linear with attention_bias,
    LlamaRMSNorm, the rotate-half pairs turned as complex numbers, per-head attention with an explicit mask and a
    hand-written softmax) with ArceeMLP = NemotronMLP (`mlp`: down_proj(act_fn(up_proj(x))), act_fn = ACT2FN[hidden_act],
    relu2 = torch.square(relu), no gate_proj); the RoPE from rope_scaling: YaRN computed as _compute_yarn_parameters
    does (GptOssCheck.yarn), the attention factor multiplying the rotated q and k (ArceeRotaryEmbedding's cos / sin x
    attention_scaling), else the default RoPE at rope_theta.
    What-ifs: `act` ("relu2", "relu", "silu": the activation, the MLP ungated whatever it is), `rope` ("yarn", "plain":
    the default RoPE at rope_theta, "unscaled": YaRN's frequencies with cos / sin unscaled)."""

    # ArceeConfig's defaults of the keys read here
    DEFAULTS = dict(num_key_value_heads=None, head_dim=None, hidden_act="relu2", rms_norm_eps=1e-5, rope_theta=10000.0,
                    rope_scaling=None, attention_bias=False, mlp_bias=False, tie_word_embeddings=False,
                    max_position_embeddings=4096)
    yarn = GptOssCheck.yarn  # (_compute_yarn_parameters: attention_factor, else 0.1 ln(factor) + 1)

    def __init__(self, cfg, p):
        rs = dict(self.DEFAULTS, **cfg)["rope_scaling"] or {}
        kind = rs.get("rope_type", rs.get("type", "default"))
        if kind not in ("default", "yarn") or "mscale_all_dim" in rs:
            # (with mscale and mscale_all_dim both set the factor is their ratio: not used by the fixture)
            raise ValueError("ArceeCheck: rope_scaling %r" % (rs,))
        super().__init__(dict(cfg, rope_scaling=None), p)  # (LlamaCheck has no rope_scaling)
        self.c = dict(self.DEFAULTS, **cfg)
        if self.c["mlp_bias"]:
            raise ValueError("ArceeCheck: mlp_bias is not used by the fixture")
        self.act = self.c["hidden_act"]
        self.rope = "yarn" if kind == "yarn" else "plain"
        self.scale = 1.0

    def rope_table(self):
        """(inv_freq (HD/2,), attention factor) of the RoPE this model turns by."""
        if self.rope == "plain":
            return 1.0 / self.c["rope_theta"] ** (torch.arange(0, self.HD, 2, dtype=torch.float32) / self.HD), 1.0
        inv, factor = self.yarn(dict(self.c, head_dim=self.HD))
        return inv, (1.0 if self.rope == "unscaled" else factor)

    def rotary(self, x, angles):  # q * (cos x factor) + rotate_half(q) * (sin x factor)
        return LlamaCheck.rotary(self, x, angles) * self.scale

    def mlp(self, pre, x):  # ArceeMLP (NemotronMLP).forward
        up = self.linear(x, pre + "mlp.up_proj", False)
        a = torch.nn.functional.silu(up) if self.act == "silu" else torch.relu(up)
        return self.linear(a * a if self.act == "relu2" else a, pre + "mlp.down_proj", False)

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        inv, self.scale = self.rope_table()
        return plain_decoder_forward(self, ids, self.rms, inv_freq=inv)


def check_added_attention_biases(name, cls, cfg, p, spec, ids):
    """attention_bias true on a fixture that has none (Arcee's, dots.llm1's: LlamaAttention / Qwen3Attention take
    q/k/v_proj and o_proj biases from it): random biases (std 0.3) added to the weights, reference.Spec reads q/k/v and
    o biases, reference.forward equals the check model `cls` on prompt `ids` (1e-4), and the biases change its logits."""
    gen = torch.Generator().manual_seed(0)
    p2 = dict(p)
    for l in range(spec.L):
        x = "model.layers.%d.self_attn." % l
        for proj, width in (("q_proj", spec.NH * spec.HD), ("k_proj", spec.NKV * spec.HD),
                            ("v_proj", spec.NKV * spec.HD), ("o_proj", spec.H)):
            p2[x + proj + ".bias"] = torch.randn(width, generator=gen) * 0.3
    c2 = dict(cfg, attention_bias=True)
    s2 = ref.Spec(c2)
    got = ref.forward(s2, p2, torch.tensor([ids]), capture=False)[0][0]
    diff = float((got - cls(c2, p2).forward(ids)[0]).abs().max())
    effect = float((got - ref.forward(spec, p, torch.tensor([ids]), capture=False)[0][0]).abs().max())
    check(s2.qkv_bias and s2.o_bias and diff < 1e-4 and effect > 1e-2,
          "%s: attention_bias true with q/k/v/o_proj biases added: reference.Spec reads them (qkv_bias %s, o_bias %s), "
          "reference = %s (%.2e), the biases change prompt 4's logits by %.4f" % (
              name, s2.qkv_bias, s2.o_bias, cls.__name__, diff, effect))


def ungated_llama_tensors(m, V, F_, norm_names):
    """name -> shape of a Llama-shaped checkpoint whose MLP has no gate_proj (Arcee's, Apertus's) on check model m's
    sizes: embed_tokens, the final norm, an untied lm_head.weight and per layer the two norms `norm_names`,
    q/k/v/o_proj and mlp.up_proj / down_proj of width F_."""
    H, HD = m.H, m.HD
    want = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}
    for l in range(m.L):
        x = "model.layers.%d." % l
        want.update({x + norm_names[0] + ".weight": (H,), x + norm_names[1] + ".weight": (H,),
                     x + "self_attn.q_proj.weight": (m.NH * HD, H), x + "self_attn.k_proj.weight": (m.NKV * HD, H),
                     x + "self_attn.v_proj.weight": (m.NKV * HD, H), x + "self_attn.o_proj.weight": (H, m.NH * HD),
                     x + "mlp.up_proj.weight": (F_, H), x + "mlp.down_proj.weight": (H, F_)})
    return want


def check_arcee(name, spec, p, g, st):
    cfg, m = open_check(name, ArceeCheck, p, g, st)
    model = g["model"]
    HD, F_, V = m.HD, cfg["intermediate_size"], spec.V
    # the file: Llama's tensors without mlp.gate_proj, all BF16 as AFM ships
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    want = ungated_llama_tensors(m, V, F_, ("input_layernorm", "post_attention_layernorm"))
    check({n: tuple(v[1].shape) for n, v in stored.items()} == want and all(v[0] == "BF16" for v in stored.values()),
          "%s: the file holds exactly ArceeForCausalLM's %d tensors (per layer q/k/v/o_proj, the two norms, "
          "mlp.up_proj / down_proj and no mlp.gate_proj; untied lm_head.weight), all BF16" % (name, len(want)))
    # config.json: ArceeConfig's keys as AFM-4.5B's config.json holds them
    rs = cfg["rope_scaling"]
    spelling = (cfg["architectures"] == ["ArceeForCausalLM"] and cfg["model_type"] == "arcee" and
                cfg["hidden_act"] == "relu2" and cfg.get("head_dim") == HD and cfg["attention_bias"] is False and
                cfg["mlp_bias"] is False and "pretraining_tp" not in cfg and m.NKV < m.NH and
                cfg["tie_word_embeddings"] is False and rs.get("rope_type") == rs.get("type") == "yarn" and
                rs.get("mscale") == 1.0 and "mscale_all_dim" not in rs and "attention_factor" not in rs and
                cfg["max_position_embeddings"] == rs["factor"] * rs["original_max_position_embeddings"] and
                cfg["torch_dtype"] == "bfloat16" and cfg["transformers_version"].startswith("4."))
    check(spelling, "%s: config.json in ArceeConfig's spelling (hidden_act relu2, head_dim %d listed, GQA %d, untied, "
          "no pretraining_tp; rope_scaling %s, max_position_embeddings %d = factor x original)" % (
              name, HD, m.NH // m.NKV, json.dumps(rs, sort_keys=True), cfg["max_position_embeddings"]))
    # reference.Spec and golden.json read the MLP and the RoPE as ArceeCheck does
    inv, factor = m.rope_table()
    r_inv, r_factor = spec.rope["global"]
    plain = 1.0 / cfg["rope_theta"] ** (torch.arange(0, HD, 2, dtype=torch.float32) / HD)
    kept = int(torch.isclose(inv, plain, rtol=1e-6, atol=0.0).sum())
    divided = int(torch.isclose(inv, plain / rs["factor"], rtol=1e-6, atol=0.0).sum())
    bands = [kept, HD // 2 - kept - divided, divided]
    same = (spec.act == "relu2" and not spec.mlp_gated and not spec.qkv_bias and not spec.o_bias and
            not spec.mlp_bias and spec.HD == HD and spec.NKV == m.NKV and not spec.tied and
            bool(((r_inv - inv).abs() <= 1e-7 * inv.abs()).all()) and abs(r_factor - factor) < 1e-12 and
            abs(factor - (0.1 * math.log(rs["factor"]) + 1.0)) < 1e-12 and all(bands) and
            model["yarn_pairs_kept_ramped_divided"] == bands and model["rope_attention_factor"] == r_factor and
            model["rope_inv_freq"] == [float(x) for x in r_inv] and model["hidden_act"] == "relu2")
    check(same, "%s: reference.Spec and golden.json read relu2 without a gate and YaRN x%g from %d (pairs kept / "
          "ramped / divided %s, cos / sin x %.6f) as ArceeCheck does" % (
              name, rs["factor"], rs["original_max_position_embeddings"], bands, factor))
    # other spellings of the same rope_scaling read alike; null the default RoPE
    readings = {}
    for label, drop in (("only \"rope_type\"", "type"), ("only \"type\"", "rope_type"), ("no mscale", "mscale")):
        s2 = ref.Spec(dict(cfg, rope_scaling={k: v for k, v in rs.items() if k != drop}))
        readings[label] = torch.equal(s2.rope["global"][0], r_inv) and s2.rope["global"][1] == r_factor
    s0 = ref.Spec(dict(cfg, rope_scaling=None))
    ok = all(readings.values()) and torch.equal(s0.rope["global"][0], plain) and s0.rope["global"][1] == 1.0
    check(ok, "%s: rope_scaling with %s reads alike; rope_scaling null gives the default RoPE (%s)" % (
        name, ", ".join(readings), ", ".join("%s %s" % kv for kv in readings.items())))
    ids = g["prompts"][4]["input_ids"]
    check_what_if_effects(name, "ArceeCheck", model, {"mlp_silu": ("act", "silu"), "mlp_relu": ("act", "relu"),
                                                      "rope_scaling": ("rope", "plain"),
                                                      "rope_attention_factor": ("rope", "unscaled")},
                          lambda: ArceeCheck(cfg, p), ids)
    check_added_attention_biases(name, ArceeCheck, cfg, p, spec, ids)
    cases = {"hidden_act silu": spec_refuses(cfg, {"hidden_act": "silu"}),
             "mlp_bias true": spec_refuses(cfg, {"mlp_bias": True})}
    check_refusals(name, cases)


class Dots1Check(LlamaCheck):
    """Dots1ForCausalLM's forward pass again, from models/dots1/modular_dots1.py (the generated modeling_dots1.py of
    transformers 4.53 - 4.57) and configuration_dots1.py, sharing nothing with reference.py but the safetensors reader:
    Dots1Config's defaults and its layer types (layer_types, else `"sliding_attention" if sliding_window is not None and
    i >= max_window_layers`); Dots1Attention (Qwen3Attention: q/k/v/o_proj with attention_bias, head_dim from
    getattr(config, "head_dim", hidden_size // heads), q_norm / k_norm (Dots1RMSNorm over each head's head_dim values)
    on the view into heads, then the rotate-half RoPE turned as complex numbers (LlamaCheck.rotary), per-head attention
    with an explicit mask (i - W < j <= i on the sliding layers: create_sliding_window_causal_mask) and a hand-written
    softmax (attend_heads), o_proj); Dots1DecoderLayer (DeepseekV3DecoderLayer): Dots1MLP (LlamaCheck.mlp) below
    first_k_dense_replace, else Dots1MoE: Dots1TopkRouter (fp32 F.linear of mlp.gate.weight, deepseek_v3_route with
    mlp.gate.e_score_correction_bias), Dots1MoE.moe's one_hot(...).permute(2, 0, 1) / where / index_add_ loop over the
    per-expert Dots1MLPs, plus mlp.shared_experts (a Dots1MLP, no gate of its own).
    What-ifs: `use_bias` (False: the choice on s alone), `groups` ((n_group, topk_group)), `scaling`, `score`
    ("softmax"), `renorm` (False), `k`, `shared` (False: no shared expert), `windows` (per layer the window or None),
    `norm_after_rope` (True: the q/k norms after the rotation). `router_inputs`: None, or a list that receives (layer, x)
    per MoE call."""

    # Dots1Config's defaults of the keys read here (4.53 - 4.57's __init__)
    DEFAULTS = dict(num_key_value_heads=32, head_dim=None, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=10000.0,
                    rope_scaling=None, attention_bias=False, tie_word_embeddings=False, moe_intermediate_size=1408,
                    n_shared_experts=None, n_routed_experts=None, n_group=1, topk_group=1, num_experts_per_tok=None,
                    first_k_dense_replace=0, norm_topk_prob=False, routed_scaling_factor=1.0, sliding_window=4096,
                    max_window_layers=62, layer_types=None, mlp_bias=False)

    def __init__(self, cfg, p):
        super().__init__(cfg, p)  # (LlamaCheck's sizes, head_dim, attention_bias; no rope_scaling)
        c = self.c
        if c["hidden_act"] != "silu" or c["mlp_bias"]:  # (DeepseekV3MLP: bias=False)
            raise ValueError("Dots1Check: hidden_act %r, mlp_bias %r" % (c["hidden_act"], c["mlp_bias"]))
        types = c["layer_types"] or ["sliding_attention" if c["sliding_window"] is not None and
                                     i >= c["max_window_layers"] else "full_attention" for i in range(self.L)]
        self.windows = [c["sliding_window"] if t == "sliding_attention" else None for t in types]
        self.E, self.k, self.dense = c["n_routed_experts"], c["num_experts_per_tok"], c["first_k_dense_replace"]
        self.groups = (c["n_group"], c["topk_group"])
        self.renorm, self.scaling = c["norm_topk_prob"], c["routed_scaling_factor"]
        self.use_bias, self.score, self.shared, self.norm_after_rope = True, "sigmoid", True, False
        self.router_inputs = None

    def attention(self, l, x, angles):
        pre, HD, T = "model.layers.%d.self_attn." % l, self.HD, x.shape[0]
        q = self.linear(x, pre + "q_proj", self.qkv_bias).view(T, self.NH, HD)
        k = self.linear(x, pre + "k_proj", self.qkv_bias).view(T, self.NKV, HD)
        v = self.linear(x, pre + "v_proj", self.qkv_bias).view(T, self.NKV, HD)
        wq, wk = self.p[pre + "q_norm.weight"], self.p[pre + "k_norm.weight"]
        if not self.norm_after_rope:
            q, k = self.rms(q, wq), self.rms(k, wk)
        q, k = self.rotary(q, angles), self.rotary(k, angles)
        if self.norm_after_rope:
            q, k = self.rms(q, wq), self.rms(k, wk)
        i, j = torch.arange(T).unsqueeze(1), torch.arange(T).unsqueeze(0)
        allowed = j <= i
        if self.windows[l] is not None:
            allowed = allowed & (j > i - self.windows[l])
        return self.linear(attend_heads(q, k, v, allowed), pre + "o_proj", self.o_bias)

    def route(self, l, x):
        """Dots1TopkRouter.forward on x (T, H): (chosen, weights, masked choice values, group scores)."""
        pre = "model.layers.%d.mlp.gate." % l
        logits = torch.nn.functional.linear(x.float(), self.p[pre + "weight"].float())
        bias = self.p[pre + "e_score_correction_bias"] if self.use_bias else None
        return deepseek_v3_route(logits, bias, *self.groups, self.k, self.renorm, self.scaling, self.score)

    def moe(self, l, x):
        """Dots1MoE.forward on one sequence x (T, H)."""
        if self.router_inputs is not None:
            self.router_inputs.append((l, x))
        pre = "model.layers.%d.mlp." % l
        chosen, weights = self.route(l, x)[:2]
        out = torch.zeros_like(x)
        mask = torch.nn.functional.one_hot(chosen, num_classes=self.E).permute(2, 0, 1)  # (E, T, k)
        for e in range(self.E):
            tok, slot = torch.where(mask[e])
            if tok.numel():
                out.index_add_(0, tok, self.swiglu(x[tok], pre + "experts.%d." % e) * weights[tok, slot].unsqueeze(-1))
        if self.shared:  # `hidden_states + self.shared_experts(residuals)`
            out = out + self.swiglu(x, pre + "shared_experts.")
        return out

    def swiglu(self, x, pre):  # Dots1MLP (DeepseekV3MLP): down_proj(silu(gate_proj(x)) * up_proj(x)), no biases
        gate, up = self.linear(x, pre + "gate_proj", False), self.linear(x, pre + "up_proj", False)
        return self.linear(torch.nn.functional.silu(gate) * up, pre + "down_proj", False)

    def layer(self, l, h, angles):
        pre = "model.layers.%d." % l
        h = h + self.attention(l, self.rms(h, self.p[pre + "input_layernorm.weight"]), angles)
        x = self.rms(h, self.p[pre + "post_attention_layernorm.weight"])
        return h + (self.moe(l, x) if l >= self.dense else self.swiglu(x, pre + "mlp."))
DOTS1_WHAT_IFS = {"router_bias": ("use_bias", False), "router_group_limit": ("groups", (1, 1)),
                  "router_scaling": ("scaling", 1.0), "router_softmax": ("score", "softmax"),
                  "router_unnormalised": ("renorm", False), "router_top1": ("k", 1), "shared_expert": ("shared", False),
                  "qk_norm_after_rope": ("norm_after_rope", True)}


def check_dots1(name, spec, p, g, st):
    cfg, m = open_check(name, Dots1Check, p, g, st)
    model = g["model"]
    H, HD, V, E = m.H, m.HD, spec.V, m.E
    F_, Fm = cfg["intermediate_size"], cfg["moe_intermediate_size"]
    Fs = Fm * cfg["n_shared_experts"]
    moe = [l >= m.dense for l in range(m.L)]
    # the file: per layer Qwen3's attention tensors, a dense Dots1MLP or the router, its F32 bias, the per-expert
    # Dots1MLPs and the shared experts; all BF16 but the bias
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    want = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}

    def swiglu(x, width):
        return {x + "gate_proj.weight": (width, H), x + "up_proj.weight": (width, H), x + "down_proj.weight": (H, width)}
    for l in range(m.L):
        x = "model.layers.%d." % l
        want.update({x + "input_layernorm.weight": (H,), x + "post_attention_layernorm.weight": (H,),
                     x + "self_attn.q_proj.weight": (m.NH * HD, H), x + "self_attn.k_proj.weight": (m.NKV * HD, H),
                     x + "self_attn.v_proj.weight": (m.NKV * HD, H), x + "self_attn.o_proj.weight": (H, m.NH * HD),
                     x + "self_attn.q_norm.weight": (HD,), x + "self_attn.k_norm.weight": (HD,)})
        if not moe[l]:
            want.update(swiglu(x + "mlp.", F_))
            continue
        want.update({x + "mlp.gate.weight": (E, H), x + "mlp.gate.e_score_correction_bias": (E,)})
        want.update(swiglu(x + "mlp.shared_experts.", Fs))
        for e in range(E):
            want.update(swiglu(x + "mlp.experts.%d." % e, Fm))
    dtypes = all(v[0] == ("F32" if n.endswith("e_score_correction_bias") else "BF16") for n, v in stored.items())
    check({n: tuple(v[1].shape) for n, v in stored.items()} == want and dtypes,
          "%s: the file holds exactly Dots1ForCausalLM's %d tensors (q_norm / k_norm (%d,), layers %s a dense "
          "mlp.gate/up/down_proj of %d, the others mlp.gate (%d, %d), mlp.gate.e_score_correction_bias (%d,) F32, %d "
          "experts of %d per expert and mlp.shared_experts of %d; untied), BF16 but the bias" % (
              name, len(want), HD, [l for l in range(m.L) if not moe[l]], F_, E, H, E, E, Fm, Fs))
    # config.json: Dots1Config's keys, layer types left to sliding_window / max_window_layers
    lengths = [len(e["input_ids"]) for e in g["prompts"]]
    W, first = cfg["sliding_window"], cfg["max_window_layers"]
    spelling = (cfg["architectures"] == ["Dots1ForCausalLM"] and cfg["model_type"] == "dots1" and
                "layer_types" not in cfg and "use_sliding_window" not in cfg and 0 < first < m.L and W < min(lengths)
                and cfg.get("head_dim") == HD != H // m.NH and m.NKV < m.NH and 1 < cfg["n_group"] and
                cfg["topk_group"] < cfg["n_group"] and cfg["norm_topk_prob"] is True and
                cfg["routed_scaling_factor"] != 1.0 and cfg["scoring_func"] == "sigmoid" and 0 < m.dense < m.L and
                cfg["n_shared_experts"] == 1 and cfg["rope_scaling"] is None and cfg["attention_bias"] is False and
                cfg["tie_word_embeddings"] is False and cfg["torch_dtype"] == "bfloat16" and
                cfg["transformers_version"].startswith("4."))
    check(spelling, "%s: config.json in Dots1Config's spelling (no layer_types: sliding_window %d from max_window_layers "
          "%d; head_dim %d != hidden / heads %d; %d of %d expert groups kept, top-%d, renormalised x %r, scoring_func "
          "sigmoid, first_k_dense_replace %d, one shared expert; untied); every golden prompt (%s tokens) longer than the "
          "window" % (name, W, first, HD, H // m.NH, cfg["topk_group"], cfg["n_group"], m.k,
                      cfg["routed_scaling_factor"], m.dense, lengths))
    # reference.Spec and golden.json read it as Dots1Check does
    sliding = [w is not None for w in m.windows]
    same = (spec.layer_sliding == sliding and spec.sliding_window == W and any(sliding) and not all(sliding) and
            spec.qk_norm and not spec.qk_norm_after_rope and spec.qk_norm_names == ("q_norm", "k_norm") and
            not spec.qk_norm_full and not spec.qk_norm_per_head and not spec.norm_offset and spec.HD == HD and
            spec.NKV == m.NKV and spec.eps == cfg["rms_norm_eps"] and spec.attn_scale == HD ** -0.5 and
            spec.layer_moe == moe and spec.router == "sigmoid" and (spec.n_group, spec.topk_group) == m.groups and
            spec.top_k == m.k and spec.num_experts == E and spec.norm_topk_prob == m.renorm and
            spec.routed_scaling_factor == m.scaling and spec.moe_intermediate == Fm and spec.shared_intermediate == Fs
            and not spec.shared_gated and spec.mlp_gated and spec.F == F_ and not spec.qkv_bias and not spec.o_bias and
            not spec.tied and model["layer_sliding"] == sliding and model["max_window_layers"] == first and
            model["layer_types_in_config"] is None and model["dense_mlp_layers"] == [l for l in range(m.L) if not moe[l]]
            and model["qk_norm_weight_shapes"] == [[HD], [HD]] and model["q_width"] == m.NH * HD)
    check(same, "%s: reference.Spec and golden.json read the sliding layers %s (window %d), the q/k norms before RoPE, "
          "the dense / MoE layers and the router as Dots1Check does" % (name, sliding, W))
    # other spellings of the layer types: reference.Spec and Dots1Check agree on each
    flipped = ["sliding_attention" if not s_ else "full_attention" for s_ in sliding]
    readings = {"layer_types listed as Dots1Config writes them": dict(cfg, layer_types=[
                    "sliding_attention" if s_ else "full_attention" for s_ in sliding]),
                "use_sliding_window false (not read)": dict(cfg, use_sliding_window=False),
                "sliding_window null": dict(cfg, sliding_window=None),
                "max_window_layers 0": dict(cfg, max_window_layers=0),
                "layer_types disagreeing with max_window_layers": dict(cfg, layer_types=flipped)}
    got = {k: ([w is not None for w in Dots1Check(c2, p).windows], ref.Spec(c2).layer_sliding)
           for k, c2 in readings.items()}
    expect = {"layer_types listed as Dots1Config writes them": sliding, "use_sliding_window false (not read)": sliding,
              "sliding_window null": [False] * m.L, "max_window_layers 0": [True] * m.L,
              "layer_types disagreeing with max_window_layers": [not s_ for s_ in sliding]}
    wrong = [k for k, (a, b) in got.items() if not a == b == expect[k]]
    check(not wrong, "%s: reference.Spec reads the layer types as Dots1Check does with %s%s" % (
        name, ", ".join(readings), " (differ: %s)" % wrong if wrong else ""))
    # the routing again, from Dots1Check's router: the gaps (the k-th minus (k+1)-th masked choice value, the
    # topk_group-th minus next group score) over the prompt tokens and the tokens fed back, the experts at each prompt's
    # last position, prompt 4's expert usage and the tokens each router what-if reroutes
    def dots1_route(call, n):
        chosen, _, choice, groups = m.route(*call)
        return [int(i) for i in chosen[n - 1]], torch.minimum(kth_margin(choice, m.k), kth_margin(groups, m.groups[1]))

    gaps, last_ok = replay_routing(m, g, "router_inputs", dots1_route, ordered=False)
    want_gaps = [model["routing_min_gap"], model["routing_min_gap_generated"]]
    check(all(abs(a - b) < 1e-6 for a, b in zip(gaps, want_gaps)) and min(gaps) >= 1e-3 and last_ok,
          "%s: Dots1Check's routing gaps (experts and groups; prompt %.6f / fed back %.6f) = golden.json's, >= 1e-3; "
          "expert_ids_last reproduced" % (name, gaps[0], gaps[1]))
    ids = g["prompts"][4]["input_ids"]
    m.router_inputs = []
    m.forward(ids)
    inputs, m.router_inputs = dict(m.router_inputs), None
    usage = {str(l): torch.bincount(m.route(l, x)[0].flatten(), minlength=E).tolist() for l, x in inputs.items()}
    changed = {}
    for key in ("router_bias", "router_group_limit", "router_softmax", "router_top1"):
        m2 = copy.copy(m)
        setattr(m2, *DOTS1_WHAT_IFS[key])
        changed[key] = [sum(set(a.tolist()) != set(b.tolist()) for a, b in zip(m.route(l, inputs[l])[0],
                                                                                m2.route(l, inputs[l])[0]))
                        if l in inputs else None for l in range(m.L)]
    check(usage == model["expert_usage_prompt4"] and all(min(u) > 0 for u in usage.values()) and
          changed == model["router_changed_tokens_prompt4"] and len(ids) == model["prompt4_tokens"] and
          all(n > 0 for n in changed["router_bias"] if n is not None),
          "%s: Dots1Check's expert usage over prompt 4 (every expert chosen in each MoE layer) and the tokens each router "
          "what-if reroutes (%s, of %d) = golden.json's" % (name, changed, len(ids)))
    # the what-ifs
    settings = dict(DOTS1_WHAT_IFS, sliding_window=("windows", [None] * m.L),
                    sliding_window_first_layers=("windows", [W if l < first else None for l in range(m.L)]))
    check_what_if_effects(name, "Dots1Check", model, settings, lambda: Dots1Check(cfg, p), ids)
    check_added_attention_biases(name, Dots1Check, cfg, p, spec, ids)
    cases = {"n_shared_experts null": spec_refuses(cfg, {"n_shared_experts": None}),
             "no n_routed_experts": spec_refuses(cfg, drop=("n_routed_experts",)),
             "scoring_func softmax": spec_refuses(cfg, {"scoring_func": "softmax"}),
             "n_group 3 (not dividing 8)": spec_refuses(cfg, {"n_group": 3}),
             "topk_group > n_group": spec_refuses(cfg, {"topk_group": cfg["n_group"] + 1}),
             "top-k beyond the kept groups": spec_refuses(cfg, {"num_experts_per_tok": E // cfg["n_group"] + 1}),
             "layer_types of another length": spec_refuses(cfg, {"layer_types": ["full_attention"] * (m.L - 1)}),
             "sliding layers with sliding_window null": spec_refuses(cfg, {"sliding_window": None,
                                                                           "layer_types": flipped}),
             "max_window_layers null": spec_refuses(cfg, {"max_window_layers": None})}
    check_refusals(name, cases)


class ApertusCheck(LlamaCheck):
    """ApertusForCausalLM's forward pass again, from models/apertus/modular_apertus.py (the generated
    modeling_apertus.py of transformers 4.56 / 4.57), configuration_apertus.py and activations.py's XIELUActivation,
    sharing nothing with reference.py but the safetensors reader: ApertusConfig's defaults (rope_theta 12000000.0 with
    the llama3 rope_scaling when the keys are absent; transformers 5's flat rope_parameters read as the same two);
    LlamaCheck's linear layers (attention_bias on q/k/v/o_proj), RMSNorm (ApertusRMSNorm) and rotate-half RoPE turned as
    complex numbers; ApertusAttention as Dots1Check's (q_norm / k_norm over each head's head_dim on the view into heads,
    then the rotation, per-head attention with an explicit causal mask and a hand-written softmax, o_proj), no window;
    the llama3 inverse frequencies per pair in Python floats (Exaone4Check.frequencies: _compute_llama3_parameters'
    kept, divided and smoothed bands); ApertusDecoderLayer: attention_layernorm, the attention, the add,
    feedforward_layernorm, ApertusMLP (up_proj, act_fn, down_proj; no gate, no biases whatever mlp_bias says), the add;
    act_fn XIELUActivation._xielu_python on the layer's mlp.act_fn.alpha_p / alpha_n / beta / eps, softplus written out
    (log1p(exp(a)), a itself above torch's threshold 20).
    What-ifs (attributes set after __init__): `act` ("xielu", "silu"), `params` ("stored", "default": __init__'s values
    computed in bfloat16), `softplus` (False: alpha_p / alpha_n as stored), `eps` (None: the stored ones, else one value
    for every layer), `param_dtype` (torch.bfloat16: softplus and the beta add rounded as parameters held in bfloat16
    round them), `norm_after_rope` (True), `rope` ("llama3", "plain": the default RoPE at rope_theta). `xielu_inputs`:
    None, or a list that receives (layer, x) per xIELU call."""

    # ApertusConfig's defaults of the keys read here (4.56 / 4.57's __init__)
    DEFAULTS = dict(num_key_value_heads=None, head_dim=None, hidden_act="xielu", rms_norm_eps=1e-5,
                    rope_theta=12000000.0, rope_parameters=None, attention_bias=False, tie_word_embeddings=False,
                    max_position_embeddings=65536,
                    rope_scaling={"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192,
                                  "low_freq_factor": 1.0, "high_freq_factor": 4.0})
    frequencies = Exaone4Check.frequencies  # (default / llama3 per pair)
    attention = Dots1Check.attention  # (Qwen3Attention's q/k norms before the rotation; windows all None)

    def __init__(self, cfg, p):
        c = dict(self.DEFAULTS, **cfg)
        if c["hidden_act"] != "xielu":
            raise ValueError("ApertusCheck: hidden_act %r" % c["hidden_act"])
        LlamaCheck.__init__(self, dict(c, rope_scaling=None, mlp_bias=False), p)  # (sizes, head_dim, attention_bias)
        self.c = c
        rp = c["rope_parameters"]
        if rp is None:  # 4.56's rope_theta / rope_scaling (rope_scaling null: the default RoPE)
            rp = dict(c["rope_scaling"] or {"rope_type": "default"}, rope_theta=c["rope_theta"])
        self.rope_params, self.windows = rp, [None] * self.L
        self.act, self.params, self.softplus, self.eps, self.param_dtype = "xielu", "stored", True, None, torch.float32
        self.norm_after_rope, self.rope, self.xielu_inputs = False, "llama3", None

    def xielu_parameters(self, l):
        """(alpha_p, alpha_n, beta, eps) of layer l as the what-ifs pick them."""
        if self.params == "default":  # XIELUActivation.__init__(dtype=torch.bfloat16): log(expm1(init)), unsqueeze(0)
            bf = torch.bfloat16
            out = [torch.log(torch.expm1(torch.tensor([0.8], dtype=bf))), torch.log(torch.expm1(torch.tensor([0.3],
                   dtype=bf))), torch.tensor(0.5, dtype=bf), torch.tensor(-1e-6, dtype=bf)]
        else:
            a = "model.layers.%d.mlp.act_fn." % l
            out = [self.p[a + n] for n in ("alpha_p", "alpha_n", "beta", "eps")]
        if self.eps is not None:
            out[3] = torch.tensor(self.eps)
        return [t.float() for t in out]

    def xielu(self, l, x):
        """XIELUActivation._xielu_python on x (T, F)."""
        if self.xielu_inputs is not None:
            self.xielu_inputs.append((l, x))
        alpha_p, alpha_n, beta, eps = self.xielu_parameters(l)
        dt = self.param_dtype
        if self.softplus:  # nn.functional.softplus (beta 1, threshold 20), one rounding to the parameters' dtype
            alpha_p, alpha_n = (torch.where(a > 20, a, torch.log1p(torch.exp(a))).to(dt) for a in (alpha_p, alpha_n))
        alpha_n = (beta.to(dt) + alpha_n.to(dt)).float()  # `self.beta + softplus(self.alpha_n)`
        alpha_p = alpha_p.float()
        return torch.where(x > 0, alpha_p * x * x + beta * x, (torch.expm1(torch.min(x, eps)) - x) * alpha_n + beta * x)

    def feed_forward(self, l, x):  # ApertusMLP.forward: down_proj(act_fn(up_proj(x)))
        pre = "model.layers.%d.mlp." % l
        up = self.linear(x, pre + "up_proj", False)
        a = self.xielu(l, up) if self.act == "xielu" else torch.nn.functional.silu(up)
        return self.linear(a, pre + "down_proj", False)

    def layer(self, l, h, angles):  # ApertusDecoderLayer.forward
        pre = "model.layers.%d." % l
        h = h + self.attention(l, self.rms(h, self.p[pre + "attention_layernorm.weight"]), angles)
        return h + self.feed_forward(l, self.rms(h, self.p[pre + "feedforward_layernorm.weight"]))

    def inv_freq(self):
        """The RoPE's inverse frequencies (HD/2,) this model turns by."""
        if self.rope == "plain":
            return self.frequencies({"rope_type": "default", "rope_theta": self.rope_params["rope_theta"]})
        return self.frequencies(self.rope_params)

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        return plain_decoder_forward(self, ids, self.rms, inv_freq=self.inv_freq())


APERTUS_WHAT_IFS = {"mlp_silu": ("act", "silu"), "xielu_default_parameters": ("params", "default"),
                    "xielu_no_softplus": ("softplus", False), "xielu_eps": ("eps", -9.98377799987793e-07),
                    "qk_norm_after_rope": ("norm_after_rope", True), "rope_scaling": ("rope", "plain")}


def apertus_file_tensors(name, m, V, F_):
    """The fixture's tensors as ApertusForCausalLM's state dict holds them (name -> shape), whether every one is BF16,
    and the raw safetensors header's shapes of the act_fn tensors ([1] and [], as save_pretrained writes a (1,)
    nn.Parameter and a 0-d buffer)."""
    path = os.path.join(ROOT, name, "model.safetensors")
    stored = ref.read_safetensors(path)
    want = ungated_llama_tensors(m, V, F_, ("attention_layernorm", "feedforward_layernorm"))
    for l in range(m.L):
        x = "model.layers.%d." % l
        want.update({x + "self_attn.q_norm.weight": (m.HD,), x + "self_attn.k_norm.weight": (m.HD,),
                     x + "mlp.act_fn.alpha_p": (1,), x + "mlp.act_fn.alpha_n": (1,), x + "mlp.act_fn.beta": (),
                     x + "mlp.act_fn.eps": ()})
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    raw = {k: v["shape"] for k, v in header.items() if ".mlp.act_fn." in k}
    raw_ok = all(v == ([1] if k.endswith(("alpha_p", "alpha_n")) else []) for k, v in raw.items()) and \
        len(raw) == 4 * m.L
    shapes = {n: tuple(v[1].shape) for n, v in stored.items()}
    return shapes == want, all(v[0] == "BF16" for v in stored.values()), raw_ok, len(want)


def check_apertus(name, spec, p, g, st):
    cfg, m = open_check(name, ApertusCheck, p, g, st)
    model = g["model"]
    HD, F_, V, L = m.HD, cfg["intermediate_size"], spec.V, m.L
    # the file: the release's tensors, the act_fn ones (1,) / 0-d, all BF16
    exact, bf16, raw_ok, count = apertus_file_tensors(name, m, V, F_)
    check(exact and bf16 and raw_ok, "%s: the file holds exactly ApertusForCausalLM's %d tensors (per layer "
          "attention_layernorm / feedforward_layernorm, q/k/v/o_proj, q_norm / k_norm (%d,), mlp.up_proj / down_proj "
          "and no gate_proj, mlp.act_fn.alpha_p / alpha_n (1,) and beta / eps 0-d (header shapes [1] and []); untied "
          "lm_head.weight), all BF16" % (name, count, HD))
    # config.json: ApertusConfig's keys as Apertus-8B-2509's config.json holds them
    rs = cfg["rope_scaling"]
    spelling = (cfg["architectures"] == ["ApertusForCausalLM"] and cfg["model_type"] == "apertus" and
                cfg["hidden_act"] == "xielu" and "head_dim" not in cfg and cfg["attention_bias"] is False and
                cfg["mlp_bias"] is False and cfg["qk_norm"] is True and cfg["post_norm"] is False and
                m.NKV < m.NH and cfg["tie_word_embeddings"] is False and isinstance(cfg["rope_theta"], int) and
                rs.get("rope_type") == rs.get("type") == "llama3" and
                cfg["max_position_embeddings"] == rs["factor"] * rs["original_max_position_embeddings"] and
                cfg["rms_norm_eps"] == 1e-5 and cfg["torch_dtype"] == "bfloat16" and
                cfg["transformers_version"].startswith("4."))
    check(spelling, "%s: config.json in ApertusConfig's spelling (hidden_act xielu, no head_dim, GQA %d, untied, "
          "qk_norm true / post_norm false / mlp_bias false listed and unread, rope_theta %r an integer; rope_scaling "
          "%s, max_position_embeddings %d = factor x original)" % (
              name, m.NH // m.NKV, cfg["rope_theta"], json.dumps(rs, sort_keys=True), cfg["max_position_embeddings"]))
    # reference.Spec and golden.json read the layer, the RoPE and the xIELU parameters as ApertusCheck does
    inv = m.inv_freq()
    r_inv, r_factor = spec.rope["global"]
    plain = m.frequencies({"rope_type": "default", "rope_theta": cfg["rope_theta"]})
    kept = int(torch.isclose(inv, plain, rtol=1e-6, atol=0.0).sum())
    divided = int(torch.isclose(inv, plain / rs["factor"], rtol=1e-6, atol=0.0).sum())
    bands = [kept, HD // 2 - kept - divided, divided]
    stored, used = [], []
    for l in range(L):
        a_p, a_n, beta, eps = m.xielu_parameters(l)
        stored.append([float(a_p[0]), float(a_n[0]), float(beta), float(eps)])
        sp = [float(torch.log1p(torch.exp(t))[0]) for t in (a_p, a_n)]
        used.append([sp[0], float(beta) + sp[1], float(beta), float(eps)])
    close = lambda a, b: all(abs(x - y) <= 1e-6 * max(1.0, abs(y)) for r, q in zip(a, b) for x, y in zip(r, q))  # noqa
    same = (spec.act == "xielu" and not spec.mlp_gated and spec.qk_norm and not spec.qk_norm_after_rope and
            spec.layer_norm_names == ("attention_layernorm", "feedforward_layernorm") and spec.xielu_softplus and
            not spec.qkv_bias and not spec.o_bias and not spec.mlp_bias and spec.HD == HD and spec.NKV == m.NKV and
            not spec.tied and r_factor == 1.0 and bool(((r_inv - inv).abs() <= 1e-6 * inv.abs()).all()) and
            all(bands) and model["llama3_pairs_kept_smoothed_divided"] == bands and
            model["layer_norm_names"] == ["attention_layernorm", "feedforward_layernorm"] and
            model["rope_inv_freq"] == [float(x) for x in r_inv] and
            model["xielu_stored_alpha_p_alpha_n_beta_eps"] == stored and
            close(model["xielu_used_softplus_alpha_p_beta_plus_softplus_alpha_n_beta_eps"], used))
    check(same, "%s: reference.Spec and golden.json read attention_layernorm / feedforward_layernorm, the q/k norms "
          "before RoPE, xIELU without a gate, llama3 x%g from %d (pairs kept / smoothed / divided %s) and the xIELU "
          "parameters as ApertusCheck does (softplus(alpha_p), beta + softplus(alpha_n), beta, eps per layer: %s)" % (
              name, rs["factor"], rs["original_max_position_embeddings"], bands,
              "; ".join("%.4f, %.4f, %.4f, %.3g" % tuple(u) for u in used)))
    distinct = (len(set(tuple(u[:3]) for u in used)) == L and
                all(u[:3] != [0.8, 0.8, 0.5] for u in used) and all(abs(s_[2] - 0.5) > 0.05 for s_ in stored))
    check(distinct, "%s: every layer's xIELU parameters differ from the others' and from XIELUActivation's defaults "
          "(0.8, beta + 0.3 = 0.8, beta 0.5)" % name)
    # which branch prompt 4's xIELU inputs take (golden.json's xielu_branches_prompt4)
    ids = g["prompts"][4]["input_ids"]
    m.xielu_inputs = []
    m.forward(ids)
    branches = []
    for l, x in m.xielu_inputs:
        eps = m.xielu_parameters(l)[3]
        branches.append([int((x > 0).sum()), int((x <= eps).sum()), int(((x > eps) & (x <= 0)).sum())])
    m.xielu_inputs = None
    check(branches == model["xielu_branches_prompt4"] and all(b[0] and b[1] for b in branches) and
          any(b[2] for b in branches), "%s: prompt 4's xIELU inputs per layer (x > 0, x <= eps, eps < x <= 0) = "
          "golden.json's %s" % (name, branches))
    # other spellings of the same config read alike (the logits, reference and ApertusCheck); absent RoPE keys give
    # ApertusConfig's llama3 default
    base = m.forward(ids)[0]
    v5 = {k: v for k, v in cfg.items() if k not in ("rope_theta", "rope_scaling", "torch_dtype")}
    v5.update({"dtype": cfg["torch_dtype"], "transformers_version": "5.0.0",
               "rope_parameters": dict({k: v for k, v in rs.items() if k != "type"}, rope_theta=cfg["rope_theta"])})
    spellings = {"only \"rope_type\"": dict(cfg, rope_scaling={k: v for k, v in rs.items() if k != "type"}),
                 "only \"type\"": dict(cfg, rope_scaling={k: v for k, v in rs.items() if k != "rope_type"}),
                 "transformers 5's rope_parameters and dtype": v5,
                 "no qk_norm / post_norm / mlp_bias keys": {k: v for k, v in cfg.items()
                                                           if k not in ("qk_norm", "post_norm", "mlp_bias")}}
    worst = 0.0
    for c2 in spellings.values():
        got = ref.forward(ref.Spec(c2), p, torch.tensor([ids]), capture=False)[0][0]
        again = ApertusCheck(c2, p).forward(ids)[0]
        worst = max(worst, float((got - base).abs().max()), float((again - base).abs().max()))
    bare = {k: v for k, v in cfg.items() if k not in ("rope_theta", "rope_scaling")}
    s0 = ref.Spec(bare)
    default_inv = ApertusCheck(bare, p).inv_freq()
    defaults_ok = (s0.theta == 12000000.0 and s0.rope_scaling["original_max_position_embeddings"] == 8192 and
                   bool(((s0.rope["global"][0] - default_inv).abs() <= 1e-6 * default_inv.abs()).all()))
    check(worst < 1e-4 and defaults_ok, "%s: %s read alike (reference and ApertusCheck, %.1e); without rope_theta / "
          "rope_scaling both take ApertusConfig's llama3 x8 from 8192 at 1.2e7" % (name, ", ".join(spellings), worst))
    check_what_if_effects(name, "ApertusCheck", model, APERTUS_WHAT_IFS, lambda: ApertusCheck(cfg, p), ids)
    m.param_dtype = torch.bfloat16
    change = float((m.forward(ids)[0] - base).abs().max())
    m.param_dtype = torch.float32
    check(abs(change - model["xielu_bf16_parameters_change_prompt4"]) < 1e-3 and change > 1e-2,
          "%s: the xIELU parameters rounded as bfloat16 parameters round them change prompt 4's logits by %.4f (= "
          "golden.json's xielu_bf16_parameters_change_prompt4 %.4f)" % (
              name, change, model["xielu_bf16_parameters_change_prompt4"]))
    check_added_attention_biases(name, ApertusCheck, cfg, p, spec, ids)
    cases = {"hidden_act silu": spec_refuses(cfg, {"hidden_act": "silu"}),
             "hidden_act relu2": spec_refuses(cfg, {"hidden_act": "relu2"}),
             "mlp_bias true": spec_refuses(cfg, {"mlp_bias": True}),
             "qk_norm false": spec_refuses(cfg, {"qk_norm": False}),
             "post_norm true": spec_refuses(cfg, {"post_norm": True}),
             "rope_parameters beside rope_theta": spec_refuses(cfg, {"rope_parameters": v5["rope_parameters"]})}
    check_refusals(name, cases)


class Glm4MoeLiteCheck(DeepseekV3Check):
    """Glm4MoeLiteForCausalLM's forward pass again, from transformers 5's models/glm4_moe_lite/modular_glm4_moe_lite.py
    (the generated modeling_glm4_moe_lite.py) and configuration_glm4_moe_lite.py: DeepseekV3Check's attention
    (Glm4MoeLiteAttention = DeepseekV3Attention; Glm4MoeLiteRMSNorm's default eps 1e-6 on the latents), router
    (Glm4MoeLiteTopkRouter = Glm4MoeTopkRouter = DeepseekV3TopkRouter's rule) and MoE loop (Glm4MoeLiteMoE = Glm4MoeMoE:
    the experts' index_add_ loop plus the ungated shared_experts), on Glm4MoeLiteConfig's defaults and with what that
    config reads its own way: the RoPE from rope_parameters (rope_theta, rope_type; a legacy top-level rope_theta /
    rope_scaling taken into it as PreTrainedConfig's convert_rope_params_to_dict does, rope_theta else its default_theta
    10000), the layer kinds from mlp_layer_types (Glm4MoeLiteDecoderLayer.__init__: "sparse" a Glm4MoeLiteMoE, else a
    Glm4MoeLiteMLP; Glm4MoeLiteConfig.__post_init__'s default ["dense"] + ["sparse"] x (L - 1)), first_k_dense_replace
    not read. The MTP layer (model.layers.{L}.*) is never read. What-ifs: DeepseekV3Check's."""

    # Glm4MoeLiteConfig's defaults of the keys read here (transformers 5's dataclass fields)
    DEFAULTS = dict(num_key_value_heads=20, rms_norm_eps=1e-5, rope_interleave=True, tie_word_embeddings=False,
                    max_position_embeddings=202752, moe_intermediate_size=1536, num_experts_per_tok=4,
                    n_shared_experts=1, n_routed_experts=64, routed_scaling_factor=1.8, n_group=1, topk_group=1,
                    norm_topk_prob=True, q_lora_rank=768, kv_lora_rank=512, qk_rope_head_dim=64, v_head_dim=256,
                    qk_nope_head_dim=192, mlp_layer_types=None)

    def __init__(self, cfg, p):
        rp = cfg.get("rope_parameters")
        if rp is None:  # convert_rope_params_to_dict: rope_scaling (else {}) with rope_theta set into it
            rp = dict(cfg.get("rope_scaling") or {}, rope_theta=cfg.get("rope_theta", 10000.0))
        kind = rp.get("rope_type", rp.get("type", "default"))
        # (DeepseekV3Check's reading of that RoPE; no layer below first_k_dense_replace: the kinds come next)
        legacy = {k: v for k, v in cfg.items() if k != "rope_parameters"}
        legacy.update(rope_theta=rp["rope_theta"], rope_scaling=None if kind == "default" else rp,
                      first_k_dense_replace=0)
        super().__init__(legacy, p)
        self.rope_parameters = rp
        types = self.c["mlp_layer_types"] or ["dense"] + ["sparse"] * (self.L - 1)
        self.sparse = [t == "sparse" for t in types]


GLM4_MOE_LITE_WHAT_IFS = {"rope_layout": ("interleave", False), "router_bias": ("use_bias", False),
                          "router_scaling": ("routed_scaling", 1.0), "shared_expert": ("shared", False)}


def glm4_moe_lite_expected_tensors(m, V, F_):
    """The tensors (name -> shape) a GLM-4.7-Flash checkpoint of check model m's config holds, as released: per layer the
    latent attention's (q_a_proj / q_a_layernorm / q_b_proj with a q_lora_rank), the two norms, a dense SwiGLU of F_ or
    the router, its bias, the per-expert SwiGLUs and shared_experts; and the MTP layer model.layers.{L}.* (a whole MoE
    decoder layer plus embed_tokens, enorm, hnorm, eh_proj, shared_head.norm / .head); untied."""
    H, NH, C, QL, E = m.H, m.NH, m.C, m.c["q_lora_rank"], m.E
    Fm = m.c["moe_intermediate_size"]
    want = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}
    for l in range(m.L + 1):
        x = "model.layers.%d." % l
        want.update({x + "input_layernorm.weight": (H,), x + "post_attention_layernorm.weight": (H,),
                     x + "self_attn.q_a_proj.weight": (QL, H), x + "self_attn.q_a_layernorm.weight": (QL,),
                     x + "self_attn.q_b_proj.weight": (NH * m.QK, QL),
                     x + "self_attn.kv_a_proj_with_mqa.weight": (C + m.ROPE, H),
                     x + "self_attn.kv_a_layernorm.weight": (C,),
                     x + "self_attn.kv_b_proj.weight": (NH * (m.NOPE + m.DV), C),
                     x + "self_attn.o_proj.weight": (H, NH * m.DV)})
        if l < m.L and not m.sparse[l]:
            want.update(swiglu_tensors(x + "mlp.", H, F_))
            continue
        want.update({x + "mlp.gate.weight": (E, H), x + "mlp.gate.e_score_correction_bias": (E,)})
        want.update(swiglu_tensors(x + "mlp.shared_experts.", H, Fm * m.c["n_shared_experts"]))
        for e in range(E):
            want.update(swiglu_tensors(x + "mlp.experts.%d." % e, H, Fm))
        if l == m.L:
            want.update({x + "embed_tokens.weight": (V, H), x + "enorm.weight": (H,), x + "hnorm.weight": (H,),
                         x + "eh_proj.weight": (H, 2 * H), x + "shared_head.norm.weight": (H,),
                         x + "shared_head.head.weight": (V, H)})
    return want


def check_glm4_moe_lite(name, spec, p, g, st):
    # 12. with Glm4MoeLiteCheck: the goldens, the absorbed MLA form, the rotary scores, the scale / frequencies / eps
    check_deepseek_v3(name, spec, p, g, st, Glm4MoeLiteCheck)
    cfg = fixture_config(name)
    m = Glm4MoeLiteCheck(cfg, p)
    model = g["model"]
    V, F_, L = spec.V, cfg["intermediate_size"], m.L
    # the file: the release's tensors (per expert, the MTP layer whole), BF16 but the routers' biases
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    want = glm4_moe_lite_expected_tensors(m, V, F_)
    mtp = sorted(n for n in want if n.startswith("model.layers.%d." % L))
    dtypes = all(v[0] == ("F32" if n.endswith("e_score_correction_bias") else "BF16") for n, v in stored.items())
    check({n: tuple(v[1].shape) for n, v in stored.items()} == want and dtypes and mtp == model["mtp_tensor_names"],
          "%s: the file holds exactly Glm4MoeLiteForCausalLM's %d tensors as released (q_a_proj (%d, %d), "
          "kv_a_proj_with_mqa (%d + %d, %d), kv_b_proj (%d x (%d + %d), %d), o_proj (%d, %d x %d); layers %s a dense mlp "
          "of %d, the others mlp.gate (%d, %d) with an F32 e_score_correction_bias, %d experts of %d per expert and "
          "shared_experts; the MTP layer model.layers.%d.* whole, %d tensors = golden.json's mtp_tensor_names; untied), "
          "BF16 but the biases" % (
              name, len(want), m.c["q_lora_rank"], m.H, m.C, m.ROPE, m.H, m.NH, m.NOPE, m.DV, m.C, m.H, m.NH, m.DV,
              [l for l in range(L) if not m.sparse[l]], F_, m.E, m.H, m.E, cfg["moe_intermediate_size"], L, len(mtp)))
    # config.json: transformers 5's Glm4MoeLiteConfig spelling plus the release's unread keys
    spelling = (cfg["architectures"] == ["Glm4MoeLiteForCausalLM"] and cfg["model_type"] == "glm4_moe_lite" and
                cfg["rope_parameters"] == {"rope_theta": 1000000.0, "rope_type": "default"} and
                not {"rope_theta", "rope_scaling", "head_dim", "torch_dtype", "scoring_func"} & set(cfg) and
                cfg["dtype"] == "bfloat16" and cfg["transformers_version"].startswith("5.") and
                cfg["mlp_layer_types"] == ["dense"] + ["sparse"] * (L - 1) and cfg["first_k_dense_replace"] == 1 and
                cfg["num_nextn_predict_layers"] == 1 and cfg["topk_method"] == "noaux_tc" and
                cfg["rope_interleave"] is True and cfg["n_group"] == cfg["topk_group"] == 1 and
                cfg["routed_scaling_factor"] == 1.8 and cfg["norm_topk_prob"] is True and cfg["n_shared_experts"] == 1
                and cfg["rms_norm_eps"] == 1e-5 and m.DV == m.QK != m.NOPE and cfg["attention_bias"] is False and
                cfg["tie_word_embeddings"] is False)
    check(spelling, "%s: config.json in transformers 5's Glm4MoeLiteConfig spelling (dtype, rope_parameters {default, "
          "1e6} and no rope_theta, mlp_layer_types listed, rope_interleave) with GLM-4.7-Flash's unread keys "
          "(first_k_dense_replace 1, num_nextn_predict_layers 1, topk_method noaux_tc), one expert group, x1.8, "
          "rms_norm_eps 1e-5, v head %d = q/k head %d != nope %d as released" % (name, m.DV, m.QK, m.NOPE))
    # reference.Spec and golden.json read it as Glm4MoeLiteCheck does
    same = (spec.mla and spec.layer_moe == m.sparse and spec.theta == m.rope_parameters["rope_theta"] and
            spec.rope_scaling is None and spec.R == m.ROPE and spec.eps == m.c["rms_norm_eps"] and
            spec.router == "sigmoid" and (spec.n_group, spec.topk_group) == (m.c["n_group"], m.c["topk_group"]) and spec.top_k == m.k and
            spec.num_experts == m.E and spec.norm_topk_prob == m.c["norm_topk_prob"] and
            spec.routed_scaling_factor == m.routed_scaling and spec.moe_intermediate == cfg["moe_intermediate_size"]
            and spec.shared_intermediate == cfg["moe_intermediate_size"] and not spec.shared_gated and spec.F == F_ and
            not spec.tied and spec.v_head_dim == m.DV and model["dense_mlp_layers"] == [0] and
            model["mlp_layer_types_in_config"] == cfg["mlp_layer_types"] and model["rope_theta"] == spec.theta and
            model["num_nextn_predict_layers"] == 1 and model["mtp_tensors"] == len(mtp))
    check(same, "%s: reference.Spec and golden.json read the dense / MoE layers %s, the RoPE (theta %g, %d dims), the "
          "router and the widths as Glm4MoeLiteCheck does" % (name, m.sparse, spec.theta, spec.R))
    # other spellings: reference.Spec and Glm4MoeLiteCheck read each alike, and reference.forward gives the same logits
    ids = g["prompts"][4]["input_ids"]
    base = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    legacy = {k: v for k, v in cfg.items() if k != "rope_parameters"}
    legacy.update(rope_theta=1000000.0, rope_scaling=None, partial_rotary_factor=1.0)
    readings = {"legacy rope_theta / rope_scaling null / partial_rotary_factor 1.0": legacy,
                "no mlp_layer_types (the default)": {k: v for k, v in cfg.items() if k != "mlp_layer_types"},
                "no first_k_dense_replace (not read)": {k: v for k, v in cfg.items() if k != "first_k_dense_replace"},
                "no num_nextn_predict_layers / topk_method (not read)":
                    {k: v for k, v in cfg.items() if k not in ("num_nextn_predict_layers", "topk_method")},
                "rope_parameters with partial_rotary_factor 1.0": dict(cfg, rope_parameters=dict(
                    cfg["rope_parameters"], partial_rotary_factor=1.0)),
                "head_dim = qk_rope_head_dim (the attribute_map)": dict(cfg, head_dim=cfg["qk_rope_head_dim"])}
    worst, wrong = 0.0, []
    for key, c2 in readings.items():
        s2, m2 = ref.Spec(c2), Glm4MoeLiteCheck(c2, p)
        if not (s2.layer_moe == m2.sparse == m.sparse and bool((s2.inv_freq - m2.inv_freq).abs().max() < 1e-12) and
                bool((s2.inv_freq - spec.inv_freq).abs().max() == 0) and s2.attn_scale == spec.attn_scale):
            wrong.append(key)
        worst = max(worst, float((ref.forward(s2, p, torch.tensor([ids]), capture=False)[0] - base).abs().max()))
    unset = {k: v for k, v in cfg.items() if k != "rope_parameters"}
    default_ok = ref.Spec(unset).theta == Glm4MoeLiteCheck(unset, p).rope_parameters["rope_theta"] == 10000.0
    check(not wrong and worst == 0.0 and default_ok,
          "%s: %s read alike (reference.Spec and Glm4MoeLiteCheck; the same logits), and without any RoPE key both take "
          "theta 10000%s" % (name, ", ".join(readings), " (differ: %s)" % wrong if wrong else ""))
    # the routing again, from Glm4MoeLiteCheck's router: the gaps over the prompt and fed-back tokens, the experts at
    # each prompt's last position, prompt 4's expert usage and the tokens the router's bias changes
    def lite_route(call, n):
        chosen, _, choice, _ = m.route(*call)
        return [int(i) for i in chosen[n - 1]], kth_margin(choice, m.k)

    gaps, last_ok = replay_routing(m, g, "router_inputs", lite_route, ordered=False)
    want_gaps = [model["routing_min_gap"], model["routing_min_gap_generated"]]
    check(all(abs(a - b) < 1e-6 for a, b in zip(gaps, want_gaps)) and min(gaps) >= 1e-3 and last_ok,
          "%s: Glm4MoeLiteCheck's routing gaps (prompt %.6f / fed back %.6f) = golden.json's, >= 1e-3; expert_ids_last "
          "reproduced" % (name, gaps[0], gaps[1]))
    m.router_inputs = []
    m.forward(ids)
    inputs, m.router_inputs = dict(m.router_inputs), None
    usage = {str(l): torch.bincount(m.route(l, x)[0].flatten(), minlength=m.E).tolist() for l, x in inputs.items()}
    unbiased = copy.copy(m)
    unbiased.use_bias = False
    changed = {"router_bias": [sum(set(a.tolist()) != set(b.tolist()) for a, b in zip(
        m.route(l, inputs[l])[0], unbiased.route(l, inputs[l])[0])) if l in inputs else None for l in range(L)]}
    check(usage == model["expert_usage_prompt4"] and all(min(u) > 0 for u in usage.values()) and
          changed == model["router_changed_tokens_prompt4"] and len(ids) == model["prompt4_tokens"] and
          all(n > 0 for n in changed["router_bias"] if n is not None),
          "%s: Glm4MoeLiteCheck's expert usage over prompt 4 (every expert chosen in each MoE layer) and the tokens the "
          "correction bias moves (%s, of %d) = golden.json's" % (name, changed["router_bias"], len(ids)))
    # the what-ifs
    ones = {"kv_a_layernorm": "self_attn.kv_a_layernorm.weight", "q_a_layernorm": "self_attn.q_a_layernorm.weight"}
    settings = dict(GLM4_MOE_LITE_WHAT_IFS, latent_norm_eps=("LATENT_EPS", m.c["rms_norm_eps"]),
                    rope_theta_default=("inv_freq", 1.0 / 10000.0 ** (torch.arange(0, m.ROPE, 2).float() / m.ROPE)),
                    **{k: ("p", {n: (torch.ones_like(t) if n.endswith(w) else t) for n, t in p.items()})
                       for k, w in ones.items()})
    check_what_if_effects(name, "Glm4MoeLiteCheck", model, settings, lambda: Glm4MoeLiteCheck(cfg, p), ids)
    cases = {"first_k_dense_replace 2 (disagreeing with mlp_layer_types)":
                 spec_refuses(cfg, {"first_k_dense_replace": 2}),
             "mlp_layer_types of another length": spec_refuses(cfg, {"mlp_layer_types": ["dense", "sparse"]}),
             "mlp_layer_types \"moe\"": spec_refuses(cfg, {"mlp_layer_types": ["dense", "moe", "moe"]}),
             "n_shared_experts 0": spec_refuses(cfg, {"n_shared_experts": 0}),
             "topk_method greedy": spec_refuses(cfg, {"topk_method": "greedy"}),
             "scoring_func softmax": spec_refuses(cfg, {"scoring_func": "softmax"}),
             "partial_rotary_factor 0.5": spec_refuses(cfg, {"rope_parameters": dict(cfg["rope_parameters"],
                                                                                      partial_rotary_factor=0.5)}),
             "head_dim != qk_rope_head_dim": spec_refuses(cfg, {"head_dim": m.QK}),
             "rope_parameters beside rope_theta": spec_refuses(cfg, {"rope_theta": 1000000.0}),
             "rope_type llama3": spec_refuses(cfg, {"rope_parameters": {
                 "rope_theta": 1000000.0, "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                 "high_freq_factor": 4.0, "original_max_position_embeddings": 64}}),
             "n_group 3 (not dividing 8)": spec_refuses(cfg, {"n_group": 3}),
             "num_key_value_heads != heads": spec_refuses(cfg, {"num_key_value_heads": 2}),
             "attention_bias true": spec_refuses(cfg, {"attention_bias": True})}
    check_refusals(name, cases)


class Gemma4Check:
    """Gemma4ForCausalLM's and Gemma4ForConditionalGeneration's language model again, from transformers'
    models/gemma4/modeling_gemma4.py (the generated file, @0246b4f), configuration_gemma4.py and
    modeling_rope_utils._compute_proportional_rope_parameters (docs/gemma4.md §2), sharing nothing with reference.py
    but the safetensors reader: config.json read on its own (the text keys of text_config for the multimodal
    checkpoint, Gemma4TextConfig's defaults for the absent ones; the flat head_dim / global_head_dim /
    num_global_key_value_heads of the modeling file, or configuration_gemma4.py @008e574's per_layer_config when
    config.json holds one; layer_types, else the pattern 6, the last layer forced full); Gemma4TextAttention.__init__'s
    per-layer head size, kv heads, use_alternative_attention, is_kv_shared_layer and store_full_length_kv as written
    there; the RoPE inverse frequencies in Python floats per layer type (compute_default_rope_parameters over
    head_dim; the proportional one over global_head_dim with rope_angles = int(factor x head // 2) and zeros after),
    applied as the rotate-half pairs (i, i + head / 2) turned as complex numbers; Gemma4RMSNorm as x rsqrt(mean(x^2)
    + eps) times the weight (plain w); per-head attention with an explicit causal / sliding mask (p - W < j <= p), the
    score scale 1 and a hand-written softmax; shared_kv_states keyed by layer type; the GELU's tanh formula written out;
    the per-layer inputs (get_per_layer_inputs, project_per_layer_inputs) and their per-layer gate / projection / norm;
    layer_scalar; Gemma4TextRouter (weightless norm, scale, hidden_size^-0.5, proj, softmax, topk, renormalised,
    per_expert_scale) and Gemma4TextExperts.forward's one_hot / index_add_ loop over the stacked gate_up_proj /
    down_proj; the final norm, the tied head and the soft-cap (both architectures).
    What-ifs (attributes set after __init__): `norm_plus_one` (Gemma 3's (1 + w)), `scale_rule` ("one", "head_dim":
    head^-0.5), `use_layer_scalar`, `cap` (None: no soft-cap), `window` (None: no window), `full_rope`
    ("proportional", "partial": int(head x factor) dims in their own rotate-half pairs at theta^(-2i/that),
    "default": every pair turning at theta^(-2i/head)), `use_v_norm`, `use_ple`, `ple_scale` (None: the table's
    bf16(sqrt(P)); else that number), `kv_share` ("states", "weights": each shared layer its own K, V from the storing
    layer's k_proj / v_proj / k_norm; "first_of_type": the first unshared layer of a type storing), `v_source` (k_eq_v:
    "raw", "normed", "rotated"), `router_input` ("residual", "pre_ffn"), `router_scale`, `expert_scale`,
    `renormalise`, `expert_norm` ("pre_ffn_2", "pre_ffn"), `dense_mlp`, `gate_up_swapped`. `router_inputs`: None, or a
    list that receives (layer, router input) per MoE layer."""

    # Gemma4TextConfig's defaults of the keys read here (configuration_gemma4.py; global_head_dim 512 and
    # num_global_key_value_heads None as @008e574's __post_init__ pops them)
    DEFAULTS = dict(num_attention_heads=8, num_key_value_heads=4, head_dim=256, global_head_dim=512,
                    num_global_key_value_heads=None, rms_norm_eps=1e-6, sliding_window=512, layer_types=None,
                    final_logit_softcapping=None, rope_parameters=None, hidden_size_per_layer_input=256,
                    attention_k_eq_v=False, num_kv_shared_layers=0, enable_moe_block=False, use_double_wide_mlp=False,
                    hidden_activation="gelu_pytorch_tanh", num_experts=None, top_k_experts=None,
                    moe_intermediate_size=None, per_layer_config=None)

    def __init__(self, cfg, p):
        multimodal = cfg["architectures"][0] == "Gemma4ForConditionalGeneration"
        text = cfg["text_config"] if multimodal else cfg
        c = dict(self.DEFAULTS, **text)
        if c["hidden_activation"] != "gelu_pytorch_tanh":
            raise ValueError("Gemma4Check: hidden_activation %r" % c["hidden_activation"])
        self.c, self.p = c, p
        self.prefix = "model.language_model." if multimodal else "model."
        self.H, self.L = c["hidden_size"], c["num_hidden_layers"]
        self.NH, self.V = c["num_attention_heads"], c["vocab_size"]
        self.eps = c["rms_norm_eps"]
        types = list(c["layer_types"] or ["sliding_attention" if (i + 1) % 6 else "full_attention"
                                           for i in range(self.L)])
        types[-1] = "full_attention"  # Gemma4TextConfig.__post_init__
        self.types = types
        # Gemma4TextAttention.__init__, layer by layer
        overrides = {int(k): v for k, v in (c["per_layer_config"] or {}).items()}
        first = self.L - c["num_kv_shared_layers"]
        prev = types[:first]
        self.head, self.nkv, self.alt, self.shared, self.store, self.width = [], [], [], [], [], []
        for l, t in enumerate(types):
            sliding = t == "sliding_attention"
            if c["per_layer_config"] is not None:
                head = overrides.get(l, {}).get("head_dim", c["head_dim"])
                nkv = overrides.get(l, {}).get("num_key_value_heads", c["num_key_value_heads"])
            else:
                head = c["global_head_dim"] if not sliding and c["global_head_dim"] else c["head_dim"]
                nkv = c["num_global_key_value_heads"] if c["attention_k_eq_v"] and not sliding else \
                    c["num_key_value_heads"]
            self.head.append(head)
            self.nkv.append(nkv)
            self.alt.append(bool(c["attention_k_eq_v"]) and not sliding)
            self.shared.append(l >= first >= 0)
            self.store.append(not self.shared[l] and l == len(prev) - 1 - prev[::-1].index(t))
            # Gemma4TextMLP.__init__
            self.width.append(c["intermediate_size"] * (2 if c["use_double_wide_mlp"] and l >= first > 0 else 1))
        self.P = c["hidden_size_per_layer_input"] or 0
        dtype = cfg.get("dtype", text.get("dtype", cfg.get("torch_dtype")))
        rounded = (lambda x: float(torch.tensor(x).to(torch.bfloat16))) if dtype == "bfloat16" else float
        self.normalizer = rounded(self.H ** 0.5)  # Gemma4TextScaledWordEmbedding: embed_scale.to(weight.dtype)
        self.ple_normalizer = rounded(self.P ** 0.5) if self.P else None
        rp = c["rope_parameters"] or {
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0}}
        self.rope_parameters = rp
        self.E, self.k = c["num_experts"], c["top_k_experts"]
        # what-ifs
        self.norm_plus_one, self.scale_rule, self.use_layer_scalar = False, "one", True
        self.cap, self.window = c["final_logit_softcapping"], c["sliding_window"]
        self.full_rope, self.use_v_norm, self.use_ple, self.ple_scale = "proportional", True, True, None
        self.kv_share, self.v_source = "states", "raw"
        self.router_input, self.router_scale, self.expert_scale, self.renormalise = "residual", True, True, True
        self.expert_norm, self.dense_mlp, self.gate_up_swapped = "pre_ffn_2", True, False
        self.router_inputs = None

    def frequencies(self, t):
        """Layer type t's inverse frequencies (head / 2 Python floats), as the rotary embedding builds them."""
        e = self.rope_parameters[t]
        base, c = float(e["rope_theta"]), self.c
        if t == "full_attention" and self.full_rope != "proportional":
            head = self.head[self.types.index(t)]
            if self.full_rope == "default":
                return [base ** (-2 * i / head) for i in range(head // 2)]
            dim = int(head * e.get("partial_rotary_factor", 1.0))  # "partial": a rotary dim of its own
            return [base ** (-2 * i / dim) for i in range(dim // 2)]
        if e["rope_type"] == "default":  # compute_default_rope_parameters: config.head_dim
            dim = c["head_dim"] or self.H // self.NH
            return [base ** (-2 * i / dim) for i in range(dim // 2)]
        # _compute_proportional_rope_parameters, head_dim_key "global_head_dim" for the full type
        head = self.head[self.types.index(t)]
        angles = int(e.get("partial_rotary_factor", 1.0) * head // 2)
        factor = float(e.get("factor", 1.0))
        return [base ** (-2 * i / head) / factor for i in range(angles)] + [0.0] * (head // 2 - angles)

    def rms(self, x, w=None):  # Gemma4RMSNorm: plain w (with_scale=False: none)
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        if w is None:
            return y
        return y * (1 + w) if self.norm_plus_one else y * w

    @staticmethod
    def gelu(x):  # gelu_pytorch_tanh
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))

    @staticmethod
    def rotary(x, angles):
        """x (T, heads, D): the pairs (x[i], x[i + R/2]) of the first R = 2 x angles' width dims as complex numbers
        times e^(i angle) (apply_rotary_pos_emb's rotate_half), the rest unchanged."""
        half = angles.shape[-1]
        z = torch.complex(x[..., :half], x[..., half:2 * half]) * torch.polar(torch.ones_like(angles),
                                                                              angles).unsqueeze(1)
        return torch.cat((z.real, z.imag, x[..., 2 * half:]), dim=-1)

    def w(self, l, name):
        return self.p[self.prefix + "layers.%d.%s" % (l, name)]

    def attention(self, l, x, turns, shared_kv):
        T, NH, HD, NKV = x.shape[0], self.NH, self.head[l], self.nkv[l]
        t = self.types[l]
        q = self.rotary(self.rms((x @ self.w(l, "self_attn.q_proj.weight").T).view(T, NH, HD),
                                 self.w(l, "self_attn.q_norm.weight")), turns[t])
        if self.shared[l] and self.kv_share != "weights":
            k, v = shared_kv[t]
        else:
            src = l
            if self.shared[l]:  # (what-if "weights": the storing layer's projections on this layer's input)
                src = max(i for i in range(l) if self.store[i] and self.types[i] == t)
            k0 = (x @ self.w(src, "self_attn.k_proj.weight").T).view(T, NKV, HD)
            v = k0 if self.alt[l] else (x @ self.w(src, "self_attn.v_proj.weight").T).view(T, NKV, HD)
            kn = self.rms(k0, self.w(src, "self_attn.k_norm.weight"))
            k = self.rotary(kn, turns[t])
            if self.alt[l] and self.v_source != "raw":
                v = kn if self.v_source == "normed" else k
            v = self.rms(v) if self.use_v_norm else v
            if self.store[l]:
                shared_kv[t] = (k, v)
        i = torch.arange(T)
        allowed = i[None, :] <= i[:, None]
        if t == "sliding_attention" and self.window is not None:
            allowed &= i[None, :] > i[:, None] - self.window
        scale = HD ** -0.5 if self.scale_rule == "head_dim" else 1.0
        heads = []
        for hh in range(NH):
            kv = hh // (NH // NKV)  # repeat_kv
            s = ((q[:, hh] @ k[:, kv].T) * scale).masked_fill(~allowed, float("-inf"))
            e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
            heads.append((e / e.sum(dim=-1, keepdim=True)) @ v[:, kv])
        return torch.cat(heads, dim=-1) @ self.w(l, "self_attn.o_proj.weight").T

    def route(self, l, x):
        """Gemma4TextRouter.forward on x (T, H) -> (chosen (T, k), weights (T, k), probabilities (T, E))."""
        z = self.rms(x) * (self.w(l, "router.scale") if self.router_scale else 1.0) * self.H ** -0.5
        probs = torch.nn.functional.softmax(z @ self.w(l, "router.proj.weight").T, dim=-1, dtype=torch.float32)
        top, chosen = torch.topk(probs, k=self.k, dim=-1)
        if self.renormalise:
            top = top / top.sum(dim=-1, keepdim=True)
        if self.expert_scale:
            top = top * self.w(l, "router.per_expert_scale")[chosen]
        return chosen, top, probs

    def moe(self, l, r):
        """The experts' weighted sum for the residual r (T, H), before post_feedforward_layernorm_2: the router on r
        (or on pre_feedforward_layernorm(r)), Gemma4TextExperts.forward on pre_feedforward_layernorm_2(r)."""
        xr = r if self.router_input == "residual" else self.rms(r, self.w(l, "pre_feedforward_layernorm.weight"))
        if self.router_inputs is not None:
            self.router_inputs.append((l, xr))
        chosen, top, _ = self.route(l, xr)
        norm = "pre_feedforward_layernorm_2.weight" if self.expert_norm == "pre_ffn_2" else \
            "pre_feedforward_layernorm.weight"
        x = self.rms(r, self.w(l, norm))
        out = torch.zeros_like(x)
        mask = torch.nn.functional.one_hot(chosen, num_classes=self.E).permute(2, 1, 0)
        gate_up, down = self.w(l, "experts.gate_up_proj"), self.w(l, "experts.down_proj")
        for e in range(self.E):
            slot, tok = torch.where(mask[e])
            if len(tok) == 0:
                continue
            gate, up = torch.nn.functional.linear(x[tok], gate_up[e]).chunk(2, dim=-1)
            if self.gate_up_swapped:
                gate, up = up, gate
            y = torch.nn.functional.linear(self.gelu(gate) * up, down[e])
            out.index_add_(0, tok, y * top[tok, slot, None])
        return out

    def layer(self, l, x, turns, shared_kv, per_layer_input):  # Gemma4TextDecoderLayer.forward
        x = x + self.rms(self.attention(l, self.rms(x, self.w(l, "input_layernorm.weight")), turns, shared_kv),
                         self.w(l, "post_attention_layernorm.weight"))
        r = x
        h = self.rms(r, self.w(l, "pre_feedforward_layernorm.weight"))
        m = None
        if self.dense_mlp or not self.E:
            m = (self.gelu(h @ self.w(l, "mlp.gate_proj.weight").T) * (h @ self.w(l, "mlp.up_proj.weight").T)) @ \
                self.w(l, "mlp.down_proj.weight").T
        if self.E:
            y = self.rms(self.moe(l, r), self.w(l, "post_feedforward_layernorm_2.weight"))
            m = y if m is None else self.rms(m, self.w(l, "post_feedforward_layernorm_1.weight")) + y
        x = r + self.rms(m, self.w(l, "post_feedforward_layernorm.weight"))
        if self.P and self.use_ple:
            g = self.gelu(x @ self.w(l, "per_layer_input_gate.weight").T) * per_layer_input
            g = g @ self.w(l, "per_layer_projection.weight").T
            x = x + self.rms(g, self.w(l, "post_per_layer_input_norm.weight"))
        return x * self.w(l, "layer_scalar") if self.use_layer_scalar else x

    def forward(self, ids):
        """ids: list of ints -> (logits (T, V), hidden_states (L+1 tensors (T, H)))."""
        p, pre, T = self.p, self.prefix, len(ids)
        idx = torch.tensor(ids)
        x = p[pre + "embed_tokens.weight"][idx] * self.normalizer
        per_layer = None
        if self.P:
            scale = self.ple_normalizer if self.ple_scale is None else self.ple_scale
            tokens = (p[pre + "embed_tokens_per_layer.weight"][idx] * scale).view(T, self.L, self.P)
            ctx = self.rms(((x @ p[pre + "per_layer_model_projection.weight"].T) / math.sqrt(self.H)).view(
                T, self.L, self.P), p[pre + "per_layer_projection_norm.weight"])
            per_layer = (ctx + tokens) / math.sqrt(2.0)
        positions = torch.arange(T, dtype=torch.float32)
        turns = {t: torch.outer(positions, torch.tensor(self.frequencies(t), dtype=torch.float32))
                 for t in set(self.types)}
        hidden, shared_kv = [x], {}
        if self.kv_share == "first_of_type":  # (what-if: the first unshared layer of each type stores)
            self.store = [not self.shared[l] and self.types.index(self.types[l]) == l for l in range(self.L)]
        for l in range(self.L):
            x = self.layer(l, x, turns, shared_kv, None if per_layer is None else per_layer[:, l])
            hidden.append(x)
        hidden[-1] = self.rms(x, p[pre + "norm.weight"])
        logits = hidden[-1] @ p[pre + "embed_tokens.weight"].T  # tied (_tied_weights_keys)
        if self.cap is not None:
            logits = torch.tanh(logits / self.cap) * self.cap
        return logits, hidden


GEMMA4_WHAT_IFS = {"norms_plus_one": ("norm_plus_one", True), "attn_scale_head_dim": ("scale_rule", "head_dim"),
                   "layer_scalar": ("use_layer_scalar", False), "final_softcap": ("cap", None),
                   "sliding_window": ("window", None), "full_rope_partial_dim": ("full_rope", "partial"),
                   "full_rope_default": ("full_rope", "default"), "v_norm": ("use_v_norm", False),
                   "ple": ("use_ple", False), "ple_table_unscaled": ("ple_scale", 1.0),
                   "kv_shared_weights": ("kv_share", "weights"),
                   "kv_source_first_of_type": ("kv_share", "first_of_type"),
                   "v_after_k_norm": ("v_source", "normed"), "v_after_rope": ("v_source", "rotated"),
                   "router_input_normed": ("router_input", "pre_ffn"), "router_scale": ("router_scale", False),
                   "router_per_expert_scale": ("expert_scale", False), "experts_input_norm": ("expert_norm", "pre_ffn"),
                   "dense_mlp": ("dense_mlp", False), "experts_gate_up_swapped": ("gate_up_swapped", True)}


def gemma4_expected_tensors(m, cfg):
    """The tensors (name -> shape) Gemma4ForCausalLM's / Gemma4ForConditionalGeneration's state dict holds for the
    check model m's config (docs/gemma4.md §4), the multimodal checkpoint's stand-ins aside."""
    H, P, L, pre = m.H, m.P, m.L, m.prefix
    want = {pre + "embed_tokens.weight": (m.V, H), pre + "norm.weight": (H,)}
    if P:
        want.update({pre + "embed_tokens_per_layer.weight": (m.V, L * P),
                     pre + "per_layer_model_projection.weight": (L * P, H),
                     pre + "per_layer_projection_norm.weight": (P,)})
    for l in range(L):
        x, HD, NKV, F_ = pre + "layers.%d." % l, m.head[l], m.nkv[l], m.width[l]
        for n in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                  "post_feedforward_layernorm"):
            want[x + n + ".weight"] = (H,)
        want.update({x + "self_attn.q_proj.weight": (m.NH * HD, H), x + "self_attn.q_norm.weight": (HD,),
                     x + "self_attn.o_proj.weight": (H, m.NH * HD), x + "mlp.gate_proj.weight": (F_, H),
                     x + "mlp.up_proj.weight": (F_, H), x + "mlp.down_proj.weight": (H, F_), x + "layer_scalar": (1,)})
        if not m.shared[l]:
            want.update({x + "self_attn.k_proj.weight": (NKV * HD, H), x + "self_attn.k_norm.weight": (HD,)})
            if not m.alt[l]:
                want[x + "self_attn.v_proj.weight"] = (NKV * HD, H)
        if P:
            want.update({x + "per_layer_input_gate.weight": (P, H), x + "per_layer_projection.weight": (H, P),
                         x + "post_per_layer_input_norm.weight": (H,)})
        if m.E:
            Fm = m.c["moe_intermediate_size"]
            want.update({x + "router.proj.weight": (m.E, H), x + "router.scale": (H,),
                         x + "router.per_expert_scale": (m.E,), x + "experts.gate_up_proj": (m.E, 2 * Fm, H),
                         x + "experts.down_proj": (m.E, H, Fm)})
            for n in ("pre_feedforward_layernorm_2", "post_feedforward_layernorm_1", "post_feedforward_layernorm_2"):
                want[x + n + ".weight"] = (H,)
    return want


def gemma4_text_change(cfg, change=None, drop=()):
    """A copy of config.json with the text keys `change` set and `drop` removed (in text_config for the multimodal
    checkpoint)."""
    c2 = json.loads(json.dumps(cfg))
    text = c2["text_config"] if "text_config" in c2 else c2
    text.update(change or {})
    for key in drop:
        text.pop(key, None)
    return c2


def gemma4_refuses(cfg, change=None, drop=()):
    try:
        ref.Spec(gemma4_text_change(cfg, change, drop))
    except ValueError:
        return True
    return False


def check_gemma4(name, spec, p, g, st):
    cfg, m = open_check(name, Gemma4Check, p, g, st)
    model = g["model"]
    text = cfg.get("text_config", cfg)
    multimodal = "text_config" in cfg
    ids = g["prompts"][4]["input_ids"]
    # the file: exactly the tensors the state dict holds (no k/v tensors on shared layers, no v_proj on k_eq_v layers,
    # the layer's own head size and MLP width), all BF16, plus the multimodal checkpoint's stand-ins
    stored = ref.read_safetensors(os.path.join(ROOT, name, "model.safetensors"))
    want = gemma4_expected_tensors(m, cfg)
    stand_ins = sorted(n for n in stored if not n.startswith(m.prefix))
    shapes = {n: tuple(v[1].shape) for n, v in stored.items() if n.startswith(m.prefix)}
    want_stand_ins = ["model.embed_vision.embedding_projection.weight",
                      "model.vision_tower.encoder.layers.0.input_layernorm.weight",
                      "model.vision_tower.encoder.layers.0.self_attn.q_proj.linear.weight",
                      "model.vision_tower.patch_embedder.input_proj.weight",
                      "model.vision_tower.patch_embedder.position_embedding_table"] if multimodal else []
    check(shapes == want and all(v[0] == "BF16" for v in stored.values()) and stand_ins == want_stand_ins and
          stand_ins == model.get("stand_in_tensors", []) and "lm_head.weight" not in stored,
          "%s: the file holds exactly %s's %d tensors under %s (head sizes %s, kv heads %s, no k_proj / v_proj / k_norm "
          "on the shared layers %s, no v_proj on the k_eq_v layers %s, MLP widths %s%s%s; tied: no lm_head)%s, all "
          "BF16" % (name, cfg["architectures"][0], len(want), m.prefix, m.head, m.nkv,
                    [l for l in range(m.L) if m.shared[l]], [l for l in range(m.L) if m.alt[l]], m.width,
                    ", per-layer embeddings of %d" % m.P if m.P else "", ", %d experts of %d top-%d" % (
                        m.E, text["moe_intermediate_size"], m.k) if m.E else "",
                    " plus %d stand-ins" % len(stand_ins) if stand_ins else ""))
    # config.json: the flat spelling modeling_gemma4.py reads
    rp = text["rope_parameters"]
    spelling = (text["model_type"] == "gemma4_text" and "per_layer_config" not in text and
                {"head_dim", "global_head_dim", "num_global_key_value_heads", "layer_types", "rope_parameters",
                 "hidden_size_per_layer_input", "num_kv_shared_layers", "attention_k_eq_v",
                 "use_double_wide_mlp", "enable_moe_block"} <= set(text) and
                rp == {"full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0,
                                          "rope_type": "proportional"},
                       "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}} and
                not {"rope_theta", "rope_scaling", "query_pre_attn_scalar", "torch_dtype"} & set(text) and
                text["sliding_window"] == 8 and text["final_logit_softcapping"] == 30.0 and
                text["rms_norm_eps"] == 1e-6 and text["hidden_activation"] == "gelu_pytorch_tanh" and
                text["tie_word_embeddings"] is True and text["vocab_size_per_layer_input"] == text["vocab_size"] and
                cfg.get("dtype") == "bfloat16" and cfg["transformers_version"].startswith("5.") and
                (cfg["model_type"] == "gemma4" and cfg["tie_word_embeddings"] is True and
                 cfg["vision_config"]["model_type"] == "gemma4_vision" and cfg["audio_config"] is None
                 if multimodal else cfg["architectures"] == ["Gemma4ForCausalLM"]) and
                len(text["layer_types"]) == m.L and text["layer_types"][-1] == "full_attention")
    check(spelling, "%s: config.json in the flat spelling (%s; head_dim %d, global_head_dim %d, "
          "num_global_key_value_heads %r as text keys, no per_layer_config), rope_parameters per type written out "
          "(sliding default at 1e4, full proportional 0.25 at 1e6), layer_types listed, window 8, softcap 30, eps 1e-6, "
          "tied, dtype bfloat16" % (name, "Gemma4Config with text_config gemma4_text and a gemma4_vision "
                                          "vision_config" if multimodal else "gemma4_text at the top level",
                                    text["head_dim"], text["global_head_dim"], text["num_global_key_value_heads"]))
    # reference.Spec and golden.json read the geometry, the RoPE, the sharing, the widths and the scales as Gemma4Check
    freq = {t: torch.tensor(m.frequencies(t), dtype=torch.float32) for t in set(m.types)}
    rope_ok = all(bool(((spec.rope[k][0] - freq[t]).abs() <= 1e-6 * freq[t].abs()).all()) and spec.rope[k][1] == 1.0
                  for k, t in (("local", "sliding_attention"), ("global", "full_attention")))
    turning = sum(f != 0.0 for f in m.frequencies("full_attention"))
    same = (spec.layer_types == m.types and spec.layer_head_dim == m.head and spec.layer_kv_heads == m.nkv and
            spec.layer_k_eq_v == m.alt and spec.layer_kv_shared == m.shared and spec.layer_kv_store == m.store and
            spec.layer_mlp_width == m.width and spec.ple_dim == m.P and spec.ple_embed_scale == m.ple_normalizer and
            spec.embed_scale == m.normalizer and spec.final_softcap == m.cap and spec.sliding_window == m.window and
            spec.attn_scale == 1.0 and not spec.norm_offset and rope_ok and spec.eps == m.eps and spec.tied and
            model["layer_head_dim"] == m.head and model["layer_kv_heads"] == m.nkv and model["layer_k_eq_v"] == m.alt
            and model["layer_kv_store"] == m.store and model["layer_mlp_width"] == m.width and
            model["rope"]["full_attention"]["inv_freq"] == [float(x) for x in spec.rope["global"][0]] and
            model["rope"]["full_attention"]["pairs_turning"] == turning and
            model["embed_scale"] == m.normalizer and model.get("ple_embed_scale") == m.ple_normalizer and
            model["layer_scalar"] == [float(m.w(l, "layer_scalar")) for l in range(m.L)])
    sources = [None if not m.shared[l] else max(i for i in range(l) if m.store[i] and m.types[i] == m.types[l])
               for l in range(m.L)]
    check(same and spec.layer_kv_source == sources == model["layer_kv_source"],
          "%s: reference.Spec and golden.json read the layer types, head sizes %s, kv heads %s, k_eq_v %s, KV sharing "
          "(sources %s), MLP widths, the RoPE per type (full: %d of %d pairs turn), the embedding scale %g%s, the "
          "soft-cap and the layer scalars as Gemma4Check does" % (
              name, m.head, m.nkv, m.alt, sources, turning, m.head[m.types.index("full_attention")] // 2, m.normalizer,
              " and the per-layer table's bf16(sqrt(%d)) = %g" % (m.P, m.ple_normalizer) if m.P else ""))
    check(all(abs(s - 1.0) >= 0.1 for s in model["layer_scalar"]) and
          model["max_abs_raw_logit_prompt4"] > text["final_logit_softcapping"] and
          min(len(e["input_ids"]) for e in g["prompts"]) > m.window and abs(model["norm_weight_mean"] - 1) < 0.15,
          "%s: every layer_scalar at least 0.1 from 1 (%s), prompt 4's raw logits past the soft-cap (%.1f > 30), every "
          "prompt past the window, the layer norms' weights around 1 (mean %.3f: plain w)" % (
              name, model["layer_scalar"], model["max_abs_raw_logit_prompt4"], model["norm_weight_mean"]))
    # other spellings read alike: configuration_gemma4.py @008e574's per_layer_config, rope_parameters left to the
    # defaults, a last layer written sliding (forced full), an unread top-level rope_theta / rope_scaling; and (KV
    # sharing) stray k/v tensors on the shared layers (_keys_to_ignore_on_load_unexpected)
    base = ref.forward(spec, p, torch.tensor([ids]), capture=False)[0]
    full = [l for l in range(m.L) if m.types[l] == "full_attention"]
    override = {"head_dim": text["global_head_dim"]}
    if text["attention_k_eq_v"]:
        override["num_key_value_heads"] = text["num_global_key_value_heads"]
    types_last_sliding = text["layer_types"][:-1] + ["sliding_attention"]
    readings = {"per_layer_config (no flat keys)": gemma4_text_change(
                    cfg, {"per_layer_config": {str(l): override for l in full}},
                    ("global_head_dim", "num_global_key_value_heads")),
                "per_layer_config beside equal flat keys": gemma4_text_change(
                    cfg, {"per_layer_config": {str(l): override for l in full}}),
                "rope_parameters absent (the defaults)": gemma4_text_change(cfg, drop=("rope_parameters",)),
                "the last layer written sliding": gemma4_text_change(cfg, {"layer_types": types_last_sliding}),
                "a top-level rope_theta / rope_scaling (unread)": gemma4_text_change(
                    cfg, {"rope_theta": 5000.0, "rope_scaling": {"rope_type": "linear", "factor": 2.0}})}
    worst = 0.0
    for c2 in readings.values():
        worst = max(worst, float((ref.forward(ref.Spec(c2), p, torch.tensor([ids]), capture=False)[0] -
                                  base).abs().max()),
                    float((Gemma4Check(c2, p).forward(ids)[0] - base).abs().max()))
    extra = ""
    if any(m.shared):
        stray = dict(p)
        for l in range(m.L):
            if m.shared[l]:
                x = m.prefix + "layers.%d.self_attn." % l
                stray[x + "k_proj.weight"] = torch.randn(m.nkv[l] * m.head[l], m.H)
                stray[x + "v_proj.weight"] = torch.randn(m.nkv[l] * m.head[l], m.H)
                stray[x + "k_norm.weight"] = torch.randn(m.head[l])
        worst = max(worst, float((ref.forward(spec, stray, torch.tensor([ids]), capture=False)[0] - base).abs().max()))
        extra = "; stray k_proj / v_proj / k_norm on the shared layers are ignored"
    check(worst < 1e-4, "%s: %s read alike (reference and Gemma4Check, %.1e)%s" % (
        name, ", ".join(readings), worst, extra))
    # the what-ifs (and, with experts, the routing)
    keys = ["norms_plus_one", "attn_scale_head_dim", "layer_scalar", "final_softcap", "sliding_window",
            "full_rope_partial_dim", "full_rope_default", "v_norm"]
    if m.P:
        keys += ["ple", "ple_table_unscaled"]
    if any(m.shared):
        keys += ["kv_shared_weights"]
        prev = m.types[:m.shared.index(True)]
        if any(prev.count(m.types[l]) > 1 for l in range(m.L) if m.shared[l]):
            keys += ["kv_source_first_of_type"]
    if any(m.alt):
        keys += ["v_after_k_norm", "v_after_rope"]
    if m.E:
        keys += ["router_input_normed", "router_scale", "router_per_expert_scale", "experts_input_norm", "dense_mlp",
                 "experts_gate_up_swapped"]
    settings = {k: GEMMA4_WHAT_IFS[k] for k in keys}
    check_what_if_effects(name, "Gemma4Check", model, settings, lambda: Gemma4Check(cfg, p), ids)
    if m.E:
        def gemma4_route(call, n):
            chosen, _, probs = m.route(*call)
            return [int(i) for i in chosen[n - 1]], kth_margin(probs, m.k)

        gaps, last_ok = replay_routing(m, g, "router_inputs", gemma4_route)
        want_gaps = [model["routing_min_gap"], model["routing_min_gap_generated"]]
        check(all(abs(a - b) < 1e-6 for a, b in zip(gaps, want_gaps)) and min(gaps) >= 1e-3 and last_ok,
              "%s: Gemma4Check's routing gaps (prompt %.6f / fed back %.6f) = golden.json's, >= 1e-3; expert_ids_last "
              "reproduced" % (name, gaps[0], gaps[1]))
        m.router_inputs = []
        m.forward(ids)
        inputs, m.router_inputs = dict(m.router_inputs), None
        usage = {str(l): torch.bincount(m.route(l, x)[0].flatten(), minlength=m.E).tolist() for l, x in inputs.items()}
        changed = {}
        for key in ("router_input_normed", "router_scale"):
            m2 = Gemma4Check(cfg, p)
            setattr(m2, *GEMMA4_WHAT_IFS[key])
            counts = []
            for l, x in inputs.items():
                x2 = m.rms(x, m.w(l, "pre_feedforward_layernorm.weight")) if key == "router_input_normed" else x
                counts.append(sum(set(a.tolist()) != set(b.tolist()) for a, b in zip(m.route(l, x)[0],
                                                                                      m2.route(l, x2)[0])))
            changed[key] = counts
        unnormalised = Gemma4Check(cfg, p)
        unnormalised.renormalise = False
        renorm = float((unnormalised.forward(ids)[0] - m.forward(ids)[0]).abs().max())
        check(usage == model["expert_usage_prompt4"] and all(min(u) > 0 for u in usage.values()) and
              changed == model["router_changed_tokens_prompt4"] and renorm < 1e-2 and
              model["router_renormalisation_change_prompt4"] < 1e-2,
              "%s: Gemma4Check's expert usage over prompt 4 (every expert chosen in each layer), the tokens the router "
              "what-ifs move (%s) = golden.json's; the top-k weights not renormalised change the logits by %.1e only "
              "(golden.json's %.1e: post_feedforward_layernorm_2 takes the per-token factor out but for its eps)" % (
                  name, changed, renorm, model["router_renormalisation_change_prompt4"]))
    # the sensitivity to 1e-7 weight noise golden.json records (golden_models.weight_noise_change)
    from golden_models import weight_noise_change, MAX_WEIGHT_NOISE_CHANGE
    noise = weight_noise_change(spec, p, ids, base)
    recorded = model["weight_noise_logit_change_prompt4"]
    # (a measure of rounding, so within a quarter of the recorded value rather than equal: another CPU's kernels round
    # otherwise)
    check(abs(noise - recorded) <= 0.25 * recorded and recorded <= MAX_WEIGHT_NOISE_CHANGE,
          "%s: prompt 4's logits move by %.2e under 1e-7 weight noise (golden.json's %.3g, <= %g)" % (
              name, noise, recorded, MAX_WEIGHT_NOISE_CHANGE))
    # refusals
    L = m.L
    cases = {"use_bidirectional_attention \"all\"": gemma4_refuses(cfg, {"use_bidirectional_attention": "all"}),
             "attention_bias true": gemma4_refuses(cfg, {"attention_bias": True}),
             "num_kv_shared_layers = num_hidden_layers": gemma4_refuses(cfg, {"num_kv_shared_layers": L}),
             "num_kv_shared_layers > num_hidden_layers": gemma4_refuses(cfg, {"num_kv_shared_layers": L + 1}),
             "a shared full layer with no unshared full layer": gemma4_refuses(cfg, {"num_kv_shared_layers": L - 2}),
             "full rope_type yarn": gemma4_refuses(cfg, {"rope_parameters": dict(rp, full_attention={
                 "rope_type": "yarn", "factor": 2.0, "rope_theta": 1e6, "original_max_position_embeddings": 64})}),
             "full rope_type default (a head_dim-wide table for global_head_dim)": gemma4_refuses(
                 cfg, {"rope_parameters": dict(rp, full_attention={"rope_type": "default", "rope_theta": 1e6})}),
             "sliding default rope with partial_rotary_factor 0.5": gemma4_refuses(cfg, {"rope_parameters": dict(
                 rp, sliding_attention={"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.5})}),
             "rope_parameters without sliding_attention": gemma4_refuses(
                 cfg, {"rope_parameters": {"full_attention": rp["full_attention"]}}),
             "per_layer_config disagreeing with global_head_dim": gemma4_refuses(
                 cfg, {"per_layer_config": {str(l): dict(override, head_dim=64) for l in full}}),
             "per_layer_config on a sliding layer": gemma4_refuses(
                 cfg, {"per_layer_config": {str(l): override for l in full + [0]}}),
             "global_head_dim null with proportional RoPE (H / NH != head_dim)": gemma4_refuses(
                 cfg, {"global_head_dim": None, "head_dim": 8})}
    if text["hidden_size_per_layer_input"]:
        cases["vocab_size_per_layer_input != vocab_size"] = gemma4_refuses(
            cfg, {"vocab_size_per_layer_input": text["vocab_size"] + 1})
    if text["attention_k_eq_v"]:
        cases["attention_k_eq_v with num_global_key_value_heads null"] = gemma4_refuses(
            cfg, {"num_global_key_value_heads": None})
    if text["enable_moe_block"]:
        cases["enable_moe_block without num_experts"] = gemma4_refuses(cfg, {"num_experts": None})
        cases["top_k_experts > num_experts"] = gemma4_refuses(cfg, {"top_k_experts": m.E + 1})
    check_refusals(name, cases)


# The families' own checks, run after the shared ones in this order, each where `applies` holds: an architecture, a
# tuple of them, or a test of the spec.
FAMILY_CHECKS = (
    (ref.DEEPSEEK_V3, check_deepseek_v3), (ref.DEEPSEEK_V2, check_deepseek_v2), (ref.OLMOE, check_olmoe),
    (ref.MINIMAX_M2, check_minimax_m2), (ref.EXAONE4, check_exaone4), (ref.ERNIE, check_ernie),
    (ref.HYBRID, check_hybrid), (ref.QWEN3_VL_MOE, check_qwen3_vl_moe), (lambda s: s.ministral3, check_ministral3),
    (ref.GLM_V, check_glm_v), (ref.PHIMOE, check_phimoe), (ref.LLAMA4, check_llama4),
    (ref.GRANITE_HYBRID, check_granite_hybrid), (ref.HUNYUAN_DENSE, check_hunyuan_dense),
    (ref.HUNYUAN_MOE, check_hunyuan_moe), (ref.LFM2, check_lfm2), (ref.LFM2_MOE, check_lfm2_moe),
    (lambda s: s.arch == ref.NEMOTRON_H and not s.num_experts, check_nemotron_h),
    (lambda s: s.arch == ref.NEMOTRON_H and s.num_experts, check_nemotron_h_moe), (ref.ARCEE, check_arcee),
    (ref.DOTS1, check_dots1), (ref.APERTUS, check_apertus), (ref.GLM4_MOE_LITE, check_glm4_moe_lite),
    (ref.WRAPPERS, check_wrapper), (ref.GEMMA4, check_gemma4),
)


def main():
    torch.set_num_threads(1)
    names = sorted(n for n in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, n)))
    if sys.argv[1:]:  # only the named fixtures
        unknown = sorted(set(sys.argv[1:]) - set(names))
        if unknown:
            raise SystemExit("check_reference.py: no golden fixture named %s" % ", ".join(unknown))
        names = [n for n in names if n in sys.argv[1:]]
    with torch.no_grad():
        for name in names:
            spec, p, g, st = load(name)
            check_cache_path(name, spec, p, g, st)
            if spec.arch == "Phi3ForCausalLM":
                check_phi3_unfused(name, spec, p, g)
            if spec.num_experts:
                check_moe(name, spec, p, g)
            if spec.arch in ref.GEMMA or spec.arch == ref.GEMMA1 or spec.arch in ref.GEMMA4:
                check_gemma(name, spec, p, g, st)
            if spec.arch == ref.GEMMA1:
                check_gemma1(name, spec, p, g, st)
            if spec.arch in ref.MULTIMODAL:
                check_multimodal_spellings(name, spec, p, g)
            if (spec.arch in ref.GLM or spec.arch in ref.COHERE or spec.arch in ref.ERNIE or
                    spec.arch in (ref.GLM4V, ref.LLAMA4)):
                check_glm_interleaved(name, spec, p, g)
            if spec.arch in ref.COHERE:
                check_cohere(name, spec, p, g, st)
            if spec.arch == "LlamaForCausalLM" and not spec.rope_scaling:
                check_llama(name, spec, p, g, st)
            if spec.arch == ref.SEED_OSS:
                check_seed_oss(name, spec, p, g, st)
            if spec.arch == ref.OLMO2:
                check_olmo2(name, spec, p, g, st)
            if spec.arch == ref.OLMO3:
                check_olmo3(name, spec, p, g, st)
            if spec.arch in ref.QWEN_VL or (spec.arch in ref.HYBRID + ref.GLM_V and spec.mrope_section):
                check_mrope_text(name, spec)
            if spec.arch == ref.GPT_OSS:
                check_gpt_oss(name, spec, p, g, st)
            if "quantization_config" in spec.cfg:
                p = check_fp8(name, spec, p, g, st)  # (equal to reference's, from a path of its own)
            for applies, check in FAMILY_CHECKS:
                if ref.arch_applies(applies, spec):
                    check(name, spec, p, g, st)
        if any(ref.Spec(fixture_config(n)).arch in ref.HYBRID for n in names):
            check_hybrid_delta_rule_forms()
        if any(any(ref.Spec(fixture_config(n)).layer_mamba) for n in names):
            check_mamba_ssd_forms()
        check_fp8_table()
    print("%d passed, %d failed" % (len(passes), len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
