// Engine ops, CUDA twins of abl::cpu (backend/ops.h): same names and dimension letters, the
// stream last. Precision (issue #6): weights and activations bf16 with fp32 accumulation, the
// residual stream, o_proj/down_proj outputs and logits fp32.
//
// Dimensions: T tokens of a packed batch, H hidden, HD head dim, V vocab, C KV-cache rows;
// rows × dim for per-row ops. All pointers are device pointers unless a comment says otherwise.
// Every function only enqueues work on `s` (no host sync) and checks the launch; a call with a
// zero extent enqueues nothing. Bad extents (negative, odd HD, a grid too large) throw abl::Error
// before anything is launched.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "abl/backend/cuda/attention.h"
#include "abl/backend/router.h"
#include "abl/backend/xielu.h"

namespace abl::cuda {

// ---- conversions (convert.cu); weights are stored bf16 on the device, converted at load.
void f32_to_bf16(const float* x,          // (n)
                 __nv_bfloat16* y,        // (n), round to nearest even
                 int64_t n, cudaStream_t s);
void bf16_to_f32(const __nv_bfloat16* x,  // (n)
                 float* y,                // (n), exact
                 int64_t n, cudaStream_t s);
void f16_to_bf16(const __half* x,         // (n)
                 __nv_bfloat16* y,        // (n), through fp32, round to nearest even
                 int64_t n, cudaStream_t s);

// ---- embedding (embedding.cu): out(T,H) = table(V,H)[tokens], widened to fp32 (the residual).
// The caller validates tokens on the host (abl::cpu::embedding's check) before uploading them; a
// token outside [0, V) that slips through reads nothing and turns its row into NaN.
void embedding(const int32_t* tokens,       // (T)
               int64_t T,
               const __nv_bfloat16* table,  // (V, H)
               int64_t V, int64_t H,
               float* out,                  // (T, H) fp32
               cudaStream_t s);

// ---- RMSNorm (rmsnorm.cu): y = x / sqrt(mean(x²) + eps) * (w_offset + w), sum of squares and
// the product in fp32 (w_offset is 1 for Gemma's (1 + w) norms, applied here, never stored).
// Residual-stream norm: fp32 rows in, bf16 rows out (the next GEMM's input).
void rmsnorm(const float* x,          // (rows, dim) fp32
             const __nv_bfloat16* w,  // (dim)
             __nv_bfloat16* y,        // (rows, dim)
             int64_t rows, int64_t dim, float eps, float w_offset, cudaStream_t s);
// Per-head q/k norm: rows = T·heads, dim = HD. y may alias x (in place). w null: no weight (Llama 4's
// L2 norm, Llama4TextL2Norm).
void rmsnorm(const __nv_bfloat16* x,  // (rows, dim)
             const __nv_bfloat16* w,  // (dim)
             __nv_bfloat16* y,        // (rows, dim), may alias x
             int64_t rows, int64_t dim, float eps, float w_offset, cudaStream_t s);
// Gemma's post-norms of a branch output: fp32 rows in and out (y may alias x).
void rmsnorm(const float* x,          // (rows, dim) fp32
             const __nv_bfloat16* w,  // (dim)
             float* y,                // (rows, dim) fp32, may alias x
             int64_t rows, int64_t dim, float eps, float w_offset, cudaStream_t s);

// The residual stream's LayerNorm (abl::cpu::layernorm): y = (x − mean) / sqrt(var + eps) · w + b, mean
// and variance in fp32, b null for Cohere's (no bias); fp32 rows in, bf16 rows out (rounded once).
void layernorm(const float* x,          // (rows, dim) fp32
               const __nv_bfloat16* w,  // (dim)
               const __nv_bfloat16* b,  // (dim) or null
               __nv_bfloat16* y,        // (rows, dim)
               int64_t rows, int64_t dim, float eps, cudaStream_t s);

// Command R+'s q/k norm, the same per head in place: rows = T·heads, dim = HD, row r scaled by weight
// row r % w_rows (w_rows = heads: one weight row per head).
void layernorm(const __nv_bfloat16* x,  // (rows, dim)
               const __nv_bfloat16* w,  // (w_rows, dim)
               __nv_bfloat16* y,        // (rows, dim), may alias x
               int64_t rows, int64_t dim, float eps, int64_t w_rows, cudaStream_t s);

// ---- RoPE (rope.cu), Hugging Face rotate-half layout, in place: pairs (i, i + R/2) of the first
// R = rotary_dim dims of each head (0 = HD; the rest pass unchanged; R even, HD the rows' stride), or pairs (2i, 2i + 1) when
// interleaved (GLM); the angle position·inv_freq[i] and the rotation are computed in fp32, the
// result rounded once to bf16.
void rope(__nv_bfloat16* x,          // (T, heads, HD), in place
          const int64_t* positions,  // (T)
          int64_t T, int64_t heads, int64_t HD,
          const float* inv_freq,     // (tables, R/2), rope scaling already applied
          const int32_t* table,      // (T) row of inv_freq of each token, or null: row 0 for all
          cudaStream_t s, int64_t rotary_dim = 0, bool interleaved = false,
          float attention_factor = 1.0f);  // cos and sin times this (YaRN, LongRoPE)

// ---- Row gather (gather_rows.cu): dst[i·dst_stride + c] = src[rows[i]·width + c] for c < width.
// rows are inside src (the caller's); dst_stride ≥ width lets rows land in a wider layout.
void gather_rows(const float* src,     // (·, width)
                 const int64_t* rows,  // (n)
                 int64_t n, int64_t width,
                 float* dst,  // (n, dst_stride)
                 int64_t dst_stride, cudaStream_t s);

// ---- KV append (kv_append.cu): k_cache[dst_rows[t]] = k[t], v_cache[dst_rows[t]] = v[t].
// dst_rows are the caller's (distinct, inside [0, C)); kv_dim = NKV·HD.
void kv_append(const __nv_bfloat16* k,  // (T, kv_dim)
               const __nv_bfloat16* v,  // (T, kv_dim)
               const int64_t* dst_rows,  // (T)
               int64_t T, int64_t kv_dim,
               __nv_bfloat16* k_cache,  // (C, kv_dim)
               __nv_bfloat16* v_cache,  // (C, kv_dim)
               cudaStream_t s);

// Latent attention's per-head keys and values (kv_append.cu; abl::cpu::mla_split_kv's twin, with row strides):
// from kv_b_proj's output kvb(T, NH, nope + HDv) and the rotated shared k_pe (row t at k_pe + t·pe_stride),
// k head (t, h) at k + (t·NH + h)·k_stride = [kvb's first nope of head h ; k_pe (R)] and v head (t, h) at
// v + (t·NH + h)·v_stride = kvb's last HDv of head h. Strides wider than nope + R and HDv write into padded
// rows (the padding columns are left as they are: zero in the engine's padded buffers).
void mla_split_kv(const __nv_bfloat16* kvb, const __nv_bfloat16* k_pe, int64_t pe_stride, int64_t T, int64_t NH,
                  int64_t nope, int64_t R, int64_t HDv, __nv_bfloat16* k, int64_t k_stride, __nv_bfloat16* v,
                  int64_t v_stride, cudaStream_t s);

// ---- SwiGLU and GeGLU (swiglu.cu): out = act(gate) · up, in fp32, rounded once; out may alias
// gate or up. GeGLU's act is gelu with the tanh approximation (abl::cpu::geglu).
void swiglu(const __nv_bfloat16* gate,  // (n) = (T, F)
            const __nv_bfloat16* up,    // (n)
            __nv_bfloat16* out,         // (n)
            int64_t n, cudaStream_t s);
void geglu(const __nv_bfloat16* gate,  // (n) = (T, F)
           const __nv_bfloat16* up,    // (n)
           __nv_bfloat16* out,         // (n)
           int64_t n, cudaStream_t s);
// x = relu(x)² in place, in fp32 and rounded once (Nemotron-H's ungated MLP; abl::cpu::relu_squared).
void relu_squared(__nv_bfloat16* x,  // (n) = (T, F)
                  int64_t n, cudaStream_t s);
// x = xIELU(x) in place, in fp32 and rounded once, the scalars read from device memory (fp32) by every thread,
// so a graph replays with whichever layer's scalars sit there, its two factors rounded to bf16 as transformers' bf16
// model has them (Apertus' ungated MLP; abl::cpu::xielu, which keeps them fp32 as the fp32 reference).
void xielu(__nv_bfloat16* x,  // (n) = (T, F)
           int64_t n, const XieluParams& p, cudaStream_t s);

// Per-group biases of rows sorted by group (an MoE layer's rows in expert order): row r of group e
// (offsets[e] ≤ r < offsets[e + 1]) takes bias0 + e · stride; a null bias0 adds nothing.
struct GroupBias {
  const __nv_bfloat16* bias0 = nullptr;
  int64_t stride = 0;               // elements between two groups' biases
  const int64_t* offsets = nullptr;  // (groups + 1), device memory
  int64_t groups = 0;
};

// gpt-oss's clamped SwiGLU (abl::cpu::swiglu_clamped) on (rows, F) gate and up, each first plus its
// group's bias (GptOssExperts: the biases belong to the gate_up projection), all in fp32, rounded once;
// out may alias gate or up.
void swiglu_clamped(const __nv_bfloat16* gate,  // (rows, F)
                    const __nv_bfloat16* up,    // (rows, F)
                    __nv_bfloat16* out,         // (rows, F)
                    int64_t rows, int64_t F, float alpha, float limit, const GroupBias& gate_bias,
                    const GroupBias& up_bias, cudaStream_t s);

// ---- scale and soft-cap (scale.cu), fp32 in place: x *= s (Gemma's embedding scale);
// x = cap · tanh(x / cap) (Gemma's logit soft-cap).
void scale(float* x, float s_factor, int64_t n, cudaStream_t s);
void softcap(float* x, float cap, int64_t n, cudaStream_t s);
// Row t of x(T, width) *= 1 + beta · log(1 + floor((positions[t] + offset) / period)): the factor in fp32,
// rounded to bf16 (Ministral 3's query scaling as transformers runs it in bf16: Ministral3Attention;
// Llama 4's NoPE layers multiply by the fp32 factor, bf16_factor false), the product rounded once; the
// twin of abl::cpu::scale_by_position.
void scale_by_position(__nv_bfloat16* x, const int64_t* positions, int64_t T, int64_t width, float beta,
                       int64_t period, int64_t offset, bool bf16_factor, cudaStream_t s);

// ---- residual add (add.cu): x += y, fp32.
void add(float* x,        // (n) the residual stream
         const float* y,  // (n)
         int64_t n, cudaStream_t s);
// x(rows, width) += bias(width) on every row, or its group's bias (GroupBias), in fp32: the biases of
// gpt-oss's o_proj and experts' down projections, added after the ablation epilogue.
void add_bias_rows(float* x, const __nv_bfloat16* bias, int64_t rows, int64_t width, cudaStream_t s);
void add_group_bias(float* x, int64_t rows, int64_t width, const GroupBias& bias, cudaStream_t s);

// ---- log-softmax and KL (log_softmax.cu), one block per row.
// out = logits − logsumexp(logits) per row (max subtracted, fp32 sums); out may alias logits.
void log_softmax(const float* logits,  // (rows, V)
                 float* out,           // (rows, V), may alias logits
                 int64_t rows, int64_t V, cudaStream_t s);
// out[r] = KL(p‖q) = Σ_v exp(ref[r,v]) · (ref[r,v] − lp[r,v]), summed in fp64; ref and lp are
// log-probabilities (the stored base model's and the trial's), as the CPU evaluator computes it.
void kl_rows(const float* ref,  // (rows, V) log p
             const float* lp,   // (rows, V) log q
             double* out,       // (rows)
             int64_t rows, int64_t V, cudaStream_t s);

// ---- mixture of experts (moe.cu), twins of abl::cpu's MoE ops. A layer runs, all on the device:
// router_topk → moe_expert_counts → group_offsets (grouped_gemm.h: the offsets and row tiles) →
// moe_dispatch → moe_gather → the experts as grouped_linear GEMMs → moe_combine (+ add_gated for a
// shared expert). Every step is deterministic: no atomics, the order of rows fixed by (token, slot).

// Per token (router.h): the k experts of logits(t, E) (fp32) in descending order into ids(t, k) and
// their weights into weights(t, k); router.bias is a device pointer. One thread per token; E ≤ 1024,
// k ≤ 32, groups ≤ 64.
void router_topk(const float* logits,  // (T, E) f32
                 int64_t T, int64_t E, int64_t k, const RouterConfig& router,
                 int32_t* ids,     // (T, k)
                 float* weights,   // (T, k)
                 cudaStream_t s);
// counts(E) = how many of the T·k slots chose each expert.
void moe_expert_counts(const int32_t* ids, int64_t slots, int64_t E, int32_t* counts, cudaStream_t s);
// The slots sorted by expert, in slot order within an expert: order(slots) holds slot indices
// (t·k + j), expert e's from offsets[e] (offsets(E+1), the exclusive scan of the counts:
// group_offsets); slot_pos(slots) is the inverse (where each slot's row lands).
void moe_dispatch(const int32_t* ids, int64_t slots, int64_t E, const int64_t* offsets, int64_t* order,
                  int64_t* slot_pos, cudaStream_t s);
// The rows in expert order: out(i) = h(order[i] / k) (bf16), times scale(order[i]) when scale is given
// (Llama 4: the router's weight scales the expert's input; the product in fp32, rounded once), and
// row_seq_out(i) = row_seq(order[i] / k) (each row's sequence, for the ablation epilogue).
void moe_gather(const __nv_bfloat16* h,  // (T, H)
                const int64_t* order, int64_t slots, int64_t k, int64_t H,
                const int64_t* row_seq,  // (T)
                const float* scale,      // (T·k) or null
                __nv_bfloat16* out,      // (slots, H)
                int64_t* row_seq_out,    // (slots)
                cudaStream_t s);
// y(T, H) = Σ_j weights(t, j) · expert_out(slot_pos[t·k + j]) for j = 0 … k−1 in that order (fp32);
// weights null: each 1 (the weights went into the experts' inputs).
void moe_combine(const float* expert_out,  // (T·k, H) in expert order
                 const int64_t* slot_pos, const float* weights, int64_t T, int64_t k, int64_t H,
                 float* y,                 // (T, H)
                 cudaStream_t s);
// y(T, H) += sigmoid(x(t) · w) · shared(t): Qwen2-MoE's gated shared expert (dot in fp32).
void add_gated(const __nv_bfloat16* x,  // (T, H)
               const __nv_bfloat16* w,  // (H)
               const float* shared,     // (T, H)
               int64_t T, int64_t H,
               float* y,                // (T, H)
               cudaStream_t s);

// ---- linear attention (linear_attention.cu): the gated delta rule of Qwen3-Next / Qwen3.5, Mamba-2 of
// Granite 4.0-H and LFM2's short conv, the twins of abl::cpu::causal_conv_silu, gated_delta_rule, rmsnorm_gated,
// mul_sigmoid, mamba2_scan, short_conv and rmsnorm_of_gated. States are fp32, indexed by each sequence's slot (slots, in device
// memory like seqs); a sequence whose pass starts at its first token (kv_len == q_len) starts from zeros.
// x(T, C) in place: the depthwise causal conv of K taps (w (C, K), plus bias (C) when given) over each
// sequence's tokens, then SiLU; conv_state (slots, C, K−1) keeps each channel's last inputs.
void causal_conv_silu(__nv_bfloat16* x, const __nv_bfloat16* w, const __nv_bfloat16* bias, const AttnSeq* seqs,
                      const int64_t* slots, int64_t B, int64_t C, int64_t K, float* conv_state, cudaStream_t s);
// out(T, NV·DV) from x(T, C) = [q | k | v] and ba(T, 2·NV) = [b | a]; S (slots, NV, DK, DV).
void gated_delta_rule(const __nv_bfloat16* x, const __nv_bfloat16* ba, const float* a_log, const float* dt_bias,
                      const AttnSeq* seqs, const int64_t* slots, int64_t B, int64_t NK, int64_t NV, int64_t DK,
                      int64_t DV, float* S, __nv_bfloat16* out, cudaStream_t s);
// x(rows, D) = RMSNorm(x)·w·SiLU(z), in place.
void rmsnorm_gated(__nv_bfloat16* x, const __nv_bfloat16* w, const __nv_bfloat16* z, int64_t rows, int64_t D, float eps,
                   cudaStream_t s);
// x(n) *= σ(g(n)) in place.
void mul_sigmoid(__nv_bfloat16* x, const __nv_bfloat16* g, int64_t n, cudaStream_t s);
// Mamba-2's scan: out(T, NV·DV) from x(T, C) = [x (NV·DV) | B (NK·DK) | C (NK·DK)] and dt(T, NV); head h
// reads group h / (NV/NK); dt = clamp(softplus(dt + dt_bias), dt_min, dt_max); S (slots, NV, DK, DV)
// ← exp(−exp(A_log)·dt)·S + dt·B ⊗ x; out = SᵀC + D·x.
void mamba2_scan(const __nv_bfloat16* x, const __nv_bfloat16* dt, const float* a_log, const float* dt_bias,
                 const float* D, const AttnSeq* seqs, const int64_t* slots, int64_t B, int64_t NK, int64_t NV,
                 int64_t DK, int64_t DV, float dt_min, float dt_max, float* S, __nv_bfloat16* out, cudaStream_t s);
// LFM2's short conv: out(T, C) = C ⊙ conv(B ⊙ x) from bcx(T, 3·C) = [B | C | x], the causal depthwise conv of K
// taps (w (C, K), no bias, no activation) over each sequence's tokens; conv_state (slots, C, K−1) keeps B ⊙ x.
void short_conv(const __nv_bfloat16* bcx, const __nv_bfloat16* w, const AttnSeq* seqs, const int64_t* slots, int64_t B,
                int64_t C, int64_t K, float* conv_state, __nv_bfloat16* out, cudaStream_t s);
// x(rows, D) = RMSNorm(x·SiLU(z))·w, in place (the gate before the norm); with groups > 1 each row's spans of
// D / groups normalised apart, w (D) spanning the row (Nemotron-H).
void rmsnorm_of_gated(__nv_bfloat16* x, const __nv_bfloat16* w, const __nv_bfloat16* z, int64_t rows, int64_t D,
                      int64_t groups, float eps, cudaStream_t s);

// ---- argmax (argmax.cu), greedy decoding: out[r] = index of the largest value of row r, the
// first one on ties (torch.argmax, abl::cpu::argmax). NaNs are never chosen; an all-NaN row gives 0.
void argmax(const float* x,  // (rows, V), V < 2³¹
            int64_t rows, int64_t V,
            int32_t* out,    // (rows)
            cudaStream_t s);

}  // namespace abl::cuda
