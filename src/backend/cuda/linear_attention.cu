// Linear attention on the device (Qwen3-Next / Qwen3.5's gated delta rule, Granite 4.0-H's Mamba-2, LFM2's short
// conv; the twins of
// src/backend/cpu/linear_attention.cpp): bf16 activations in and out, fp32 arithmetic and states.
// Every kernel walks each sequence's tokens in order, as the CPU ops do: a state carries from one
// token to the next.
#include <cuda_bf16.h>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kMaxConvTaps = 64;  // ModelSpec validation: linear_conv_kernel_dim <= 64

__device__ float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ float siluf(float x) { return x * sigmoidf(x); }
__device__ float softplusf(float x) { return x > 20.0f ? x : log1pf(expf(x)); }  // F.softplus, threshold 20

__device__ bool starts_fresh(const AttnSeq& q) { return q.kv_len == q.q_len; }

// One thread per (sequence, channel): the channel's window slides over the sequence's tokens. kShort: LFM2's
// short conv — the input B·x from in = bcx (T, 3C), the output C·conv to out (T, C); else the conv (plus bias)
// and SiLU of in (T, C) into out (the same array: in place).
template <bool kShort>
__global__ void causal_conv_kernel(const bf16* in, bf16* out, const bf16* w, const bf16* bias, const AttnSeq* seqs,
                                   const int64_t* slots, int64_t C, int K, float* conv_state) {
  const int64_t s = blockIdx.y;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  const AttnSeq q = seqs[s];
  const int P = K - 1;
  float* past = conv_state + (slots[s] * C + c) * P;
  float win[kMaxConvTaps];
  for (int j = 0; j < P; ++j) win[j] = starts_fresh(q) ? 0.0f : past[j];
  float wc[kMaxConvTaps];
  for (int j = 0; j < K; ++j) wc[j] = __bfloat162float(w[c * K + j]);
  const float b = bias ? __bfloat162float(bias[c]) : 0.0f;
  for (int64_t t = q.q_begin; t < q.q_begin + q.q_len; ++t) {
    const bf16* row = kShort ? in + t * 3 * C : in + t * C;
    win[P] = kShort ? __bfloat162float(row[c]) * __bfloat162float(row[2 * C + c]) : __bfloat162float(row[c]);
    float acc = 0.0f;
    for (int j = 0; j < K; ++j) acc += wc[j] * win[j];
    for (int j = 0; j < P; ++j) win[j] = win[j + 1];
    out[t * C + c] = __float2bfloat16_rn(kShort ? __bfloat162float(row[C + c]) * acc : siluf(bias ? acc + b : acc));
  }
  for (int j = 0; j < P; ++j) past[j] = win[j];
}

// One block per (sequence, value head); the block's threads share the DV columns of the head's state
// S (DK, DV) (fp32 in global memory, each thread its columns) and load q, k into shared memory.
__global__ void gated_delta_rule_kernel(const bf16* x, const bf16* ba, const float* a_log, const float* dt_bias,
                                        const AttnSeq* seqs, const int64_t* slots, int NK, int NV, int DK, int DV,
                                        float* S_all, bf16* out) {
  extern __shared__ float qk[];  // q (DK), then k (DK)
  const int64_t s = blockIdx.x / NV;
  const int h = static_cast<int>(blockIdx.x % NV), kh = h / (NV / NK);
  const AttnSeq q = seqs[s];
  const int64_t C = 2 * static_cast<int64_t>(NK) * DK + static_cast<int64_t>(NV) * DV;
  float* S = S_all + (slots[s] * NV + h) * static_cast<int64_t>(DK) * DV;
  if (starts_fresh(q)) {
    for (int64_t i = threadIdx.x; i < static_cast<int64_t>(DK) * DV; i += blockDim.x) S[i] = 0.0f;
  }
  const float A = -expf(a_log[h]);
  const float q_scale = rsqrtf(static_cast<float>(DK));
  for (int64_t t = q.q_begin; t < q.q_begin + q.q_len; ++t) {
    const bf16* xt = x + t * C;
    float qq = 0.0f, kk = 0.0f;
    for (int i = threadIdx.x; i < DK; i += blockDim.x) {
      const float qi = __bfloat162float(xt[kh * DK + i]), ki = __bfloat162float(xt[NK * DK + kh * DK + i]);
      qk[i] = qi;
      qk[DK + i] = ki;
      qq += qi * qi;
      kk += ki * ki;
    }
    qq = detail::block_reduce(qq, detail::SumOp{}, 0.0f);
    kk = detail::block_reduce(kk, detail::SumOp{}, 0.0f);  // synchronises: qk is complete
    const float rq = rsqrtf(qq + 1e-6f) * q_scale, rk = rsqrtf(kk + 1e-6f);
    const float beta = sigmoidf(__bfloat162float(ba[t * 2 * NV + h]));
    const float decay = expf(A * softplusf(__bfloat162float(ba[t * 2 * NV + NV + h]) + dt_bias[h]));
    for (int j = threadIdx.x; j < DV; j += blockDim.x) {
      float mem = 0.0f;
      for (int i = 0; i < DK; ++i) {
        float* sij = S + static_cast<int64_t>(i) * DV + j;
        *sij *= decay;
        mem += *sij * qk[DK + i] * rk;
      }
      const float delta = (__bfloat162float(xt[2 * NK * DK + h * DV + j]) - mem) * beta;
      float o = 0.0f;
      for (int i = 0; i < DK; ++i) {
        float* sij = S + static_cast<int64_t>(i) * DV + j;
        *sij += qk[DK + i] * rk * delta;
        o += *sij * qk[i] * rq;
      }
      out[t * NV * DV + h * DV + j] = __float2bfloat16_rn(o);
    }
    __syncthreads();  // qk is rewritten for the next token
  }
}

// One block per row: x = RMSNorm(x·SiLU(z))·w (kGateFirst: Mamba-2's) or RMSNorm(x)·w·SiLU(z) (Qwen3-Next's);
// rows of D in `groups` spans, span r taking w + (r % groups)·D (Zamba2RMSNormGated's groups).
template <bool kGateFirst>
__global__ void gated_rmsnorm_kernel(bf16* x, const bf16* w_all, const bf16* z, int64_t D, int64_t groups, float eps) {
  bf16* xr = x + blockIdx.x * D;
  const bf16* zr = z + blockIdx.x * D;
  const bf16* w = w_all + (blockIdx.x % groups) * D;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < D; i += blockDim.x) {
    const float v = __bfloat162float(xr[i]) * (kGateFirst ? siluf(__bfloat162float(zr[i])) : 1.0f);
    ss += v * v;
  }
  ss = detail::block_reduce(ss, detail::SumOp{}, 0.0f);
  const float inv = rsqrtf(ss / static_cast<float>(D) + eps);
  for (int64_t i = threadIdx.x; i < D; i += blockDim.x) {
    const float v = __bfloat162float(xr[i]), g = siluf(__bfloat162float(zr[i])), wi = __bfloat162float(w[i]);
    xr[i] = __float2bfloat16_rn(kGateFirst ? wi * (v * g * inv) : wi * (v * inv) * g);
  }
}

// One block per (sequence, head); each thread owns columns j of the head's state S (DK, DV) (fp32 in global
// memory: consecutive threads, consecutive columns) and B, C of the head's group sit in shared memory.
__global__ void mamba2_scan_kernel(const bf16* x, const bf16* dt, const float* a_log, const float* dt_bias,
                                   const float* D, const AttnSeq* seqs, const int64_t* slots, int NK, int NV, int DK,
                                   int DV, float dt_min, float dt_max, float* S_all, bf16* out) {
  extern __shared__ float bc[];  // B (DK), then C (DK)
  const int64_t s = blockIdx.x / NV;
  const int h = static_cast<int>(blockIdx.x % NV), g = h / (NV / NK);
  const AttnSeq q = seqs[s];
  const int64_t C = static_cast<int64_t>(NV) * DV + 2 * static_cast<int64_t>(NK) * DK;
  float* S = S_all + (slots[s] * NV + h) * static_cast<int64_t>(DK) * DV;
  if (starts_fresh(q)) {
    for (int64_t i = threadIdx.x; i < static_cast<int64_t>(DK) * DV; i += blockDim.x) S[i] = 0.0f;
  }
  const float A = -expf(a_log[h]);
  for (int64_t t = q.q_begin; t < q.q_begin + q.q_len; ++t) {
    const bf16* xt = x + t * C;
    for (int i = threadIdx.x; i < DK; i += blockDim.x) {
      bc[i] = __bfloat162float(xt[static_cast<int64_t>(NV) * DV + g * DK + i]);
      bc[DK + i] = __bfloat162float(xt[static_cast<int64_t>(NV) * DV + static_cast<int64_t>(NK) * DK + g * DK + i]);
    }
    __syncthreads();
    const float sp = softplusf(__bfloat162float(dt[t * NV + h]) + dt_bias[h]);
    const float step = isnan(sp) ? sp : fminf(fmaxf(sp, dt_min), dt_max);  // a NaN passes, as std::min/max on the CPU
    const float decay = expf(step * A);
    for (int j = threadIdx.x; j < DV; j += blockDim.x) {
      const float xj = __bfloat162float(xt[h * DV + j]);
      float y = D[h] * xj;
      for (int i = 0; i < DK; ++i) {
        float* sij = S + static_cast<int64_t>(i) * DV + j;
        *sij = *sij * decay + step * bc[i] * xj;
        y += *sij * bc[DK + i];
      }
      out[t * NV * DV + h * DV + j] = __float2bfloat16_rn(y);
    }
    __syncthreads();  // bc is rewritten for the next token
  }
}

__global__ void mul_sigmoid_kernel(bf16* x, const bf16* g, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    x[i] = __float2bfloat16_rn(__bfloat162float(x[i]) * sigmoidf(__bfloat162float(g[i])));
  }
}

}  // namespace

void causal_conv_silu(__nv_bfloat16* x, const __nv_bfloat16* w, const __nv_bfloat16* bias, const AttnSeq* seqs,
                      const int64_t* slots, int64_t B, int64_t C, int64_t K, float* conv_state, cudaStream_t s) {
  ABL_CHECK(K >= 1 && K <= kMaxConvTaps && C > 0, "causal conv of {} taps over {} channels", K, C);
  if (B == 0) return;
  const dim3 grid(static_cast<unsigned>((C + 127) / 128), static_cast<unsigned>(B));
  causal_conv_kernel<false><<<grid, 128, 0, s>>>(x, x, w, bias, seqs, slots, C, static_cast<int>(K), conv_state);
  CUDA_CHECK_LAUNCH();
}

void gated_delta_rule(const __nv_bfloat16* x, const __nv_bfloat16* ba, const float* a_log, const float* dt_bias,
                      const AttnSeq* seqs, const int64_t* slots, int64_t B, int64_t NK, int64_t NV, int64_t DK,
                      int64_t DV, float* S, __nv_bfloat16* out, cudaStream_t s) {
  ABL_CHECK(NK > 0 && NV % NK == 0 && DK > 0 && DV > 0 && DK <= 1024,
            "gated delta rule with {} value heads over {} key heads of {} (value heads of {})", NV, NK, DK, DV);
  if (B == 0) return;
  const unsigned threads = detail::row_threads(DV);
  gated_delta_rule_kernel<<<static_cast<unsigned>(B * NV), threads, 2 * DK * sizeof(float), s>>>(
      x, ba, a_log, dt_bias, seqs, slots, static_cast<int>(NK), static_cast<int>(NV), static_cast<int>(DK),
      static_cast<int>(DV), S, out);
  CUDA_CHECK_LAUNCH();
}

void rmsnorm_gated(__nv_bfloat16* x, const __nv_bfloat16* w, const __nv_bfloat16* z, int64_t rows, int64_t D, float eps,
                   cudaStream_t s) {
  ABL_CHECK(rows >= 0 && D > 0, "gated RMSNorm of {} rows of {}", rows, D);
  if (rows == 0) return;
  gated_rmsnorm_kernel<false><<<static_cast<unsigned>(rows), detail::row_threads(D), 0, s>>>(x, w, z, D, 1, eps);
  CUDA_CHECK_LAUNCH();
}

void mul_sigmoid(__nv_bfloat16* x, const __nv_bfloat16* g, int64_t n, cudaStream_t s) {
  ABL_CHECK(n >= 0, "mul_sigmoid: negative length {}", n);
  if (n == 0) return;
  mul_sigmoid_kernel<<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, s>>>(x, g, n);
  CUDA_CHECK_LAUNCH();
}

void mamba2_scan(const __nv_bfloat16* x, const __nv_bfloat16* dt, const float* a_log, const float* dt_bias,
                 const float* D, const AttnSeq* seqs, const int64_t* slots, int64_t B, int64_t NK, int64_t NV,
                 int64_t DK, int64_t DV, float dt_min, float dt_max, float* S, __nv_bfloat16* out, cudaStream_t s) {
  ABL_CHECK(NK > 0 && NV % NK == 0 && DK > 0 && DV > 0 && DK <= 4096,
            "Mamba-2 scan of {} heads of {} in {} groups of state {}", NV, DV, NK, DK);
  if (B == 0) return;
  const unsigned threads = detail::row_threads(DV);
  mamba2_scan_kernel<<<static_cast<unsigned>(B * NV), threads, 2 * DK * sizeof(float), s>>>(
      x, dt, a_log, dt_bias, D, seqs, slots, static_cast<int>(NK), static_cast<int>(NV), static_cast<int>(DK),
      static_cast<int>(DV), dt_min, dt_max, S, out);
  CUDA_CHECK_LAUNCH();
}

void short_conv(const __nv_bfloat16* bcx, const __nv_bfloat16* w, const AttnSeq* seqs, const int64_t* slots, int64_t B,
                int64_t C, int64_t K, float* conv_state, __nv_bfloat16* out, cudaStream_t s) {
  ABL_CHECK(K >= 1 && K <= kMaxConvTaps && C > 0, "short conv of {} taps over {} channels", K, C);
  if (B == 0) return;
  const dim3 grid(static_cast<unsigned>((C + 127) / 128), static_cast<unsigned>(B));
  causal_conv_kernel<true><<<grid, 128, 0, s>>>(bcx, out, w, nullptr, seqs, slots, C, static_cast<int>(K), conv_state);
  CUDA_CHECK_LAUNCH();
}

void rmsnorm_of_gated(__nv_bfloat16* x, const __nv_bfloat16* w, const __nv_bfloat16* z, int64_t rows, int64_t D,
                      int64_t groups, float eps, cudaStream_t s) {
  ABL_CHECK(rows >= 0 && D > 0 && groups > 0 && D % groups == 0, "RMSNorm of gated rows: {} rows of {} in {} groups",
            rows, D, groups);
  if (rows == 0) return;
  const int64_t span = D / groups;
  gated_rmsnorm_kernel<true><<<static_cast<unsigned>(rows * groups), detail::row_threads(span), 0, s>>>(
      x, w, z, span, groups, eps);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
