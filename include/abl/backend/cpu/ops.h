// Engine ops, CPU twins (fp32, Eigen + OpenMP). Each op has one .cpp in src/backend/cpu/; the
// CUDA twin (issue #6) takes the same arguments plus a stream, declared beside it here.
//
// Dimensions: B sequences, T tokens of a packed batch (sequences concatenated, no padding),
// H hidden, NH attention heads, NKV key/value heads, HD head dim, F ffn, V vocab, C KV-cache rows.
// Matrices are row-major; a weight W of a linear layer is (out, in) as in Hugging Face files.
#pragma once
#include <cstdint>

#include "abl/backend/router.h"
#include "abl/backend/xielu.h"

namespace abl::cpu {

// out(T,H) = table(V,H)[tokens]; a token outside [0, V) is an error naming it.
void embedding(const int32_t* tokens, int64_t T, const float* table, int64_t V, int64_t H, float* out);

// y(rows,dim) = x / sqrt(mean(x²) + eps) * (w_offset + w(dim)). y may alias x. Per-head q/k norm:
// rows = T*heads. w_offset is 1 for Gemma's norms, which scale by (1 + w). w null: no weight (Llama 4's
// L2 norm of the q/k heads, Llama4TextL2Norm).
void rmsnorm(const float* x, const float* w, float* y, int64_t rows, int64_t dim, float eps, float w_offset = 0.0f);

// y = (x − mean(x)) / sqrt(var(x) + eps) · w per row: Cohere's LayerNorm without a bias (mean and
// variance in double); y may alias x. Row r takes weight row r % w_rows (w: (w_rows, dim)); Command
// R+'s q/k norm has one per head: rows = T*heads, w_rows = heads.
void layernorm(const float* x, const float* w, float* y, int64_t rows, int64_t dim, float eps, int64_t w_rows = 1);

// y(T,out) = x(T,in) · W(out,in)ᵀ (+ bias(out) when non-null).
void linear(const float* x, const float* w, const float* bias, float* y, int64_t T, int64_t in, int64_t out);

// RoPE in Hugging Face's rotate-half layout, in place on x(T, heads, HD) at positions(T): the
// first R = rotary_dim dims of each head rotate in pairs (i, i + R/2), the rest pass (0 = HD, all);
// inv_freq(tables, R/2) already carries any rope scaling, and token t rotates with row table[t]
// (row 0 for every token when table is null: LongRoPE's long factors are row 1); cos and sin
// are multiplied by attention_factor (LongRoPE's and YaRN's scaling; 1 otherwise). interleaved:
// pair i is (2i, 2i + 1) instead (GLM), with the same frequency inv_freq[i].
void rope(float* x, const int64_t* positions, int64_t T, int64_t heads, int64_t HD, const float* inv_freq,
          float attention_factor = 1.0f, const int32_t* table = nullptr, int64_t rotary_dim = 0,
          bool interleaved = false);

// Where one sequence's queries and keys are. Its keys/values are cache rows
// [kv_begin, kv_begin + kv_len) at positions 0..kv_len-1; its q_len queries are rows
// [q_begin, q_begin + q_len) of q at positions kv_len-q_len .. kv_len-1 (prefill: q_len = kv_len;
// decode: q_len = 1).
struct AttnSeq {
  int64_t q_begin = 0;
  int64_t q_len = 0;
  int64_t kv_begin = 0;
  int64_t kv_len = 0;
};

// How attention scores are formed: s = scale · q·k, then s = softcap · tanh(s / softcap) when
// softcap > 0 (Gemma 2), before the causal mask and the softmax. With sinks (gpt-oss), head h's
// softmax also counts one more logit, sinks[h], whose value row is zero (eager_attention_forward
// concatenates it and drops its column): the weights of the keys sum to less than 1.
struct AttnScores {
  float scale = 0.0f;    // 0 = 1/sqrt(HD)
  float softcap = 0.0f;  // 0 = off
  const float* sinks = nullptr;  // (NH) or null
};

// Causal GQA attention per sequence: out(T,NH,HDv) from q(T,NH,HD) and caches k (C,NKV,HD), v
// (C,NKV,HDv); HDv = 0: HD (value heads differ only in latent attention). Query head h reads kv
// head h / (NH/NKV). window > 0: a query at position p sees keys at positions j with
// p - window < j <= p (Mistral's sliding window); 0 = full causal.
void attention(const float* q, const float* k_cache, const float* v_cache, float* out,
               const AttnSeq* seqs, int64_t B, int64_t NH, int64_t NKV, int64_t HD, int64_t window,
               AttnScores scores = {}, int64_t HDv = 0);

// Copies k rows (T,kv_dim) and v rows (T,v_dim) into the caches at rows dst_rows[t]; v_dim 0 = kv_dim.
void kv_append(const float* k, const float* v, const int64_t* dst_rows, int64_t T, int64_t kv_dim,
               float* k_cache, float* v_cache, int64_t v_dim = 0);

// Latent attention's per-head keys and values (DeepseekV3Attention.forward): from kv_b_proj's output
// kvb(T, NH, nope + HDv) and the rotated shared k_pe(T, R) (row t at k_pe + t·pe_stride), k(T, NH,
// nope + R) = [kvb's first nope of head h ; k_pe] and v(T, NH, HDv) = kvb's last HDv of head h.
void mla_split_kv(const float* kvb, const float* k_pe, int64_t pe_stride, int64_t T, int64_t NH, int64_t nope,
                  int64_t R, int64_t HDv, float* k, float* v);

// dst(rows, width) = src's columns [0, width) of rows of src_stride values (a leading slice per row).
void copy_columns(const float* src, int64_t src_stride, int64_t rows, int64_t width, float* dst);

// out(n) = silu(gate) * up; out may alias gate.
void swiglu(const float* gate, const float* up, float* out, int64_t n);

// out(n) = (clamp(up, -limit, limit) + 1) · g · sigmoid(alpha · g) with g = min(gate, limit)
// (gpt-oss's GptOssExperts._apply_gate on de-interleaved gate and up); out may alias gate.
void swiglu_clamped(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit);

// out(n) = gelu_tanh(gate) * up, gelu_tanh(x) = x/2 · (1 + tanh(sqrt(2/π) · (x + 0.044715 x³)))
// (torch's gelu(approximate="tanh"), Gemma's GeGLU); out may alias gate.
void geglu(const float* gate, const float* up, float* out, int64_t n);

// x(n) = relu(x)² in place (Nemotron-H's ungated relu2 MLP: transformers' ReLUSquaredActivation).
void relu_squared(float* x, int64_t n);

// x(n) = xIELU(x) in place with the layer's stored scalars (Apertus' ungated MLP; backend/xielu.h).
void xielu(float* x, int64_t n, const XieluParams& p);

// x(n) *= s
void scale(float* x, float s, int64_t n);

// Row t of x(T, width) *= 1 + beta · log(1 + floor((positions[t] + offset) / period)), in fp32 (the query
// scaling of Ministral 3, offset 0: Ministral3Attention, _get_llama_4_attn_scale; and of Llama 4's NoPE
// layers, offset 1: Llama4TextAttention's attn_temperature_tuning).
void scale_by_position(float* x, const int64_t* positions, int64_t T, int64_t width, float beta, int64_t period,
                       int64_t offset = 0);

// x(n) = cap · tanh(x / cap) (Gemma's logit soft-capping).
void softcap(float* x, float cap, int64_t n);

// x(n) += y(n)
void add(float* x, const float* y, int64_t n);

// x(rows, width) += b(width) on every row (a bias added after the ablation epilogue)
void add_rows(float* x, const float* b, int64_t rows, int64_t width);

// ---- mixture of experts

// The router of an MoE layer, per token t (router.h): the k experts of logits(t, E) (fp32) in
// descending order into ids(t, k) and their weights into weights(t, k).
void router_topk(const float* logits, int64_t T, int64_t E, int64_t k, const RouterConfig& router, int32_t* ids,
                 float* weights);

// dst(n, width) = src(rows[i], width) for i < n.
void gather_rows(const float* src, const int64_t* rows, int64_t n, int64_t width, float* dst);

// out(T, H) = Σ_j weights(t, j) · slots(t·k + j, H), j = 0 … k−1 in that order (every token's
// expert outputs combined in a fixed order, whatever the batch or the layout).
void combine_experts(const float* slots, const float* weights, int64_t T, int64_t k, int64_t H, float* out);

// y(T, H) += sigmoid(x(T, H) · w(H)) · s(T, H): Qwen2-MoE's gated shared expert.
void add_gated(const float* x, const float* w, const float* s, int64_t T, int64_t H, float* y);

// ---- linear attention (the gated delta rule of Qwen3-Next and Qwen3.5: models/qwen3_next)

// The sizes of a gated delta rule layer: NK key heads of DK, NV value heads of DV (NV a multiple of NK),
// a causal conv of K taps over the C = 2·NK·DK + NV·DV channels [q | k | v].
struct DeltaRuleDims {
  int64_t NK = 0, NV = 0, DK = 0, DV = 0, K = 0;
  int64_t channels() const { return 2 * NK * DK + NV * DV; }
};

// Each sequence's recurrent state, in the arrays indexed by its state slot: the conv's last K − 1
// inputs conv(slot, C, K−1) and S(slot, NV, DK, DV). A sequence whose pass starts at its first token
// (kv_len == q_len) starts from zeros; any other continues from its slot.
struct DeltaRuleState {
  float* conv = nullptr;
  float* S = nullptr;
  const int64_t* slots = nullptr;  // (B)
};

// x(T, C) in place: per sequence, the depthwise causal conv of each channel c over its tokens,
// y_t = Σ_j w(c, j) · in_{t−K+1+j} (+ bias(c) when given: Mamba-2's conv1d.bias; in before the sequence's
// first token: the state, zeros at its start), then SiLU (torch_causal_conv1d_fn / _update); the state
// keeps the last K − 1 inputs.
void causal_conv_silu(float* x, const float* w, const float* bias, const AttnSeq* seqs, int64_t B,
                      const DeltaRuleDims& d, const DeltaRuleState& state);

// out(T, NV·DV) from the conv's output x(T, C) and ba(T, 2·NV) (b then a): per sequence, token by
// token (torch_recurrent_gated_delta_rule): q, k L2-normed (eps 1e-6), q·DK^−0.5, value head h reading
// key head h / (NV/NK); g = −exp(A_log_h)·softplus(a_h + dt_bias_h), β = σ(b_h); S ← exp(g)·S,
// S += k ⊗ β(v − Sᵀk), out = Sᵀq.
void gated_delta_rule(const float* x, const float* ba, const float* a_log, const float* dt_bias, const AttnSeq* seqs,
                      int64_t B, const DeltaRuleDims& d, const DeltaRuleState& state, float* out);

// x(rows, D) = RMSNorm(x)·w·SiLU(z) per row (Qwen3NextRMSNormGated: plain w; eps the model's).
void rmsnorm_gated(float* x, const float* w, const float* z, int64_t rows, int64_t D, float eps);

// Mamba-2's selective scan (GraniteMoeHybridMambaLayer / BambaMixer torch_forward, token by token as its
// cached decode step; its chunked prefill computes the same sums regrouped), with the dims of ModelSpec's
// mapping (NK groups of B and C of DK, NV heads of DV): out(T, NV·DV) from the conv's output x(T, C) =
// [x | B | C] and dt(T, NV): per sequence and head h of group g = h / (NV/NK), dt = clamp(softplus(dt +
// dt_bias_h), dt_min, dt_max), S (DK, DV) ← exp(−exp(A_log_h)·dt)·S + dt·B_g ⊗ x_h, out_h = Sᵀ C_g + D_h·x_h.
// state.S holds S per slot and head; state.conv is not used.
struct DtRange {
  float min = 0.0f, max = 0.0f;
};
void mamba2_scan(const float* x, const float* dt, const float* a_log, const float* dt_bias, const float* D,
                 const AttnSeq* seqs, int64_t B, const DeltaRuleDims& d, DtRange range, const DeltaRuleState& state,
                 float* out);

// LFM2's short convolution (Lfm2ShortConv.slow_forward): from bcx(T, 3·C) = [B | C | x] per token, the causal
// depthwise conv of K taps (w (C, K), no bias, no activation) over B·x, times C: out(T, C). The state keeps each
// channel's last K − 1 values of B·x (state.conv; d.channels() = C; state.S is not used).
void short_conv(const float* bcx, const float* w, const AttnSeq* seqs, int64_t B, const DeltaRuleDims& d,
                const DeltaRuleState& state, float* out);

// x(rows, D) = RMSNorm(x·SiLU(z))·w per row: the gate before the norm (GraniteMoeHybridRMSNormGated /
// BambaRMSNormGated; plain w); with groups > 1 each row's `groups` spans of D / groups are normalised apart
// (Zamba2RMSNormGated's group_size: Nemotron-H), w (D) spanning the row.
void rmsnorm_of_gated(float* x, const float* w, const float* z, int64_t rows, int64_t D, int64_t groups, float eps);

// x(n) *= σ(g(n)) (the attention output gate of Qwen3NextAttention).
void mul_sigmoid(float* x, const float* g, int64_t n);

// out(rows,V) = log_softmax(logits) per row; out may alias logits.
void log_softmax(const float* logits, float* out, int64_t rows, int64_t V);

// out(rows) = index of the largest value per row (the first one on ties, as torch.argmax); NaN never
// wins (unlike torch, as the CUDA twin), a row without a number gives 0.
void argmax(const float* x, int64_t rows, int64_t V, int32_t* out);

// Threads used by the CPU ops (OpenMP and Eigen); 0 = all cores.
void set_num_threads(int n);
int num_threads();

}  // namespace abl::cpu
