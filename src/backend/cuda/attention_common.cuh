// What the attention kernels of attention.cu share: tile and thread constants, the kernel
// arguments, the decode scratch arithmetic and the warp-level helpers (mma fragments, reductions,
// the online-softmax reference point). Included by attention.cu only.
#pragma once
#include <cuda_bf16.h>

#include <climits>
#include <cmath>
#include <cstdint>

#include "abl/backend/cuda/attention.h"

namespace abl::cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kWarp = 32;
constexpr int kPad = 8;  // bf16 appended to each shared row: the fragment loads below hit 32 distinct banks
constexpr float kLog2e = 1.4426950408889634f;

// Tiled kernel: 4 warps, each owns 16 query rows of a 64-row tile; K/V tiles of 64 keys (32 for
// HD 256, to keep the fp32 output fragments and the score tile within the register budget).
constexpr int kTiledThreads = 128;
constexpr int kTiledRows = 64;
template <int HD>
struct TiledShape {
  static constexpr int kKeys = HD > 128 ? 32 : 64;
  static constexpr int kLd = HD + kPad;
  static constexpr size_t kSmemBytes = static_cast<size_t>(kTiledRows + 2 * kKeys) * kLd * sizeof(bf16);
};

// Decode kernel: one block per (split, kv head, chunk of ≤ 8 of its query heads, sequence),
// 32-key tiles in a ring of kDecodeStages shared buffers (the next tile loads while this one computes).
constexpr int kDecodeThreads = 128;
constexpr int kDecodeKeys = 32;
constexpr int kDecodeHeads = 8;
constexpr int kDecodeStages = 2;
template <int HD>
struct DecodeShape {
  static constexpr int kLd = HD + kPad;
  static constexpr int kTileElems = kDecodeKeys * kLd;  // one K or V tile
  static constexpr size_t kSmemBytes = static_cast<size_t>(kDecodeStages) * 2 * kTileElems * sizeof(bf16);
};
constexpr int kCombineThreads = 128;
constexpr int64_t kMinKeysPerSplit = 256;
constexpr int kMaxSplits = 64;
constexpr int kDecodeBlocksPerSm = 4;
constexpr int64_t kMaxGridYZ = 65535;

__host__ __device__ constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t decode_head_blocks(int64_t NH, int64_t NKV) { return NKV * ceil_div(NH / NKV, kDecodeHeads); }

// Split-K scratch of one batch: per (sequence, head, split) an unnormalised fp32 accumulator (HD)
// followed, after all of them, by its (running max in log2 units, sum of exponentials).
size_t decode_scratch_bytes(int64_t B, int64_t NH, int64_t HD, int splits) {
  if (splits <= 1) return 0;
  return static_cast<size_t>(B) * NH * splits * (HD + 2) * sizeof(float);
}

struct Args {
  const bf16* q;
  const bf16* k_cache;
  const bf16* v_cache;
  bf16* out;
  const AttnSeq* seqs;
  int NH;
  int NKV;
  int window;
  // Scores live in log2 units (exp2f does the softmax): score = finish(q·k · q_factor). Without a
  // soft-cap q_factor = scale · log2(e) and finish is the identity; with one, q_factor = scale and
  // finish(s) = cap · log2(e) · tanh(s / cap).
  float q_factor;
  float softcap;  // 0 = off
  // (NH) fp32 device memory, or null: each head's sink logit (gpt-oss), in natural units; it joins
  // the normaliser as 2^(sink · log2(e) − ref) with no value row (AttnScores::sinks).
  const float* sinks;
};
// The sink's share of head h's normaliser, relative to the row's softmax reference; 0 without sinks.
__device__ __forceinline__ float sink_term(const Args& a, int h, float ref) {
  return a.sinks ? exp2f(a.sinks[h] * kLog2e - ref) : 0.0f;
}

__device__ __forceinline__ float finish_score(float s, const Args& a) {
  return a.softcap > 0.0f ? a.softcap * kLog2e * tanhf(s / a.softcap) : s;
}

// ---- device helpers -------------------------------------------------------------------------

__device__ __forceinline__ void cp_async_16(void* dst, const void* src, bool valid) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Stages a (ROWS, HD) tile whose row r starts at src + r·stride into shared rows of HD + kPad.
// Rows from n_valid on are zero-filled (source size 0), so masked keys never multiply NaN garbage;
// their source address is row 0's, which is valid (n_valid ≥ 1).
template <int HD, int ROWS, int THREADS>
__device__ __forceinline__ void stage_rows(bf16* dst, const bf16* src, int64_t stride, int n_valid) {
  constexpr int kChunks = HD / 8;  // 16-byte chunks per row
  for (int i = static_cast<int>(threadIdx.x); i < ROWS * kChunks; i += THREADS) {
    const int r = i / kChunks;
    const int c = i - r * kChunks;
    const bool valid = r < n_valid;
    cp_async_16(dst + r * (HD + kPad) + c * 8, src + (valid ? r * stride : 0) + c * 8, valid);
  }
}

__device__ __forceinline__ uint32_t load_u32(const bf16* p) { return *reinterpret_cast<const uint32_t*>(p); }
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (lo) in the low half
  return *reinterpret_cast<const uint32_t*>(&v);
}
__device__ __forceinline__ uint32_t pack_bf16(bf16 lo, bf16 hi) {
  return (static_cast<uint32_t>(__bfloat16_as_ushort(hi)) << 16) | __bfloat16_as_ushort(lo);
}

// d(16×8, f32) += a(16×16, bf16, row-major) · b(16×8, bf16, column-major). Fragments, with
// g = lane/4 and t = lane%4 (PTX ISA, mma.m16n8k16): a = {A[g][2t..], A[g+8][2t..], A[g][2t+8..],
// A[g+8][2t+8..]}, b = {B[2t..][g], B[2t+8..][g]}, d = {D[g][2t], D[g][2t+1], D[g+8][2t], D[g+8][2t+1]}.
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
// Over the 4 lanes of a quad (the threads that hold one row of an mma fragment).
__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// Online-softmax reference point: a row that has seen only masked keys keeps max −inf, and
// exp2(−inf − 0) = 0 keeps it at zero instead of exp2(−inf + inf) = NaN.
__device__ __forceinline__ float softmax_ref(float m) { return m == -INFINITY ? 0.0f : m; }

}  // namespace
}  // namespace abl::cuda
