// Causal GQA attention (attention.h): a tiled FlashAttention-style kernel for prompts (bf16 tensor
// cores through mma.sync, online softmax in registers) and a split-K decode kernel for q_len == 1
// rows that reads each kv head's K/V once for all its query heads. Decision: the AttnSeq array is
// device-resident, so every block reads its own sequence and exits when it has no work; the host
// sizes grids from bounds only, which lets a captured decode graph replay as the lengths grow.
#include <cuda_bf16.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include "abl/backend/cuda/attention.h"
#include "abl/backend/cuda/check.h"
#include "abl/core/error.h"
#include "attention_common.cuh"

namespace abl::cuda {
namespace {

// ---- tiled kernel: grid (query tiles, NH, B) -------------------------------------------------

template <int HD>
__global__ void __launch_bounds__(kTiledThreads) attention_tiled_kernel(Args a, bool skip_single) {
  constexpr int BM = kTiledRows;
  constexpr int BN = TiledShape<HD>::kKeys;
  constexpr int LD = TiledShape<HD>::kLd;
  constexpr int kDimTiles = HD / 8;  // n-tiles of the output
  constexpr int kKeyTiles = BN / 8;  // n-tiles of the scores
  extern __shared__ __align__(16) unsigned char smem_raw[];
  bf16* Qs = reinterpret_cast<bf16*>(smem_raw);  // (BM, LD)
  bf16* Ks = Qs + BM * LD;                         // (BN, LD)
  bf16* Vs = Ks + BN * LD;                         // (BN, LD)

  const AttnSeq sq = a.seqs[blockIdx.z];
  const int q_len = static_cast<int>(sq.q_len);
  const int kv_len = static_cast<int>(sq.kv_len);
  if (q_len <= 0 || (skip_single && q_len == 1)) return;
  // Latest tiles first: under the causal mask they see the most keys.
  const int tile = static_cast<int>(ceil_div(q_len, BM)) - 1 - static_cast<int>(blockIdx.x);
  if (tile < 0) return;
  const int h = static_cast<int>(blockIdx.y);
  const int kvh = h / (a.NH / a.NKV);
  const int m0 = tile * BM;
  const int rows_valid = min(BM, q_len - m0);
  const int p_lo = kv_len - q_len + m0;  // position of the tile's first query
  const int p_hi = p_lo + rows_valid - 1;
  const int k_begin = a.window > 0 ? max(0, p_lo - a.window + 1) : 0;
  const int k_end = p_hi + 1;  // keys [k_begin, k_end) hold every unmasked pair of this tile

  const int64_t q_stride = static_cast<int64_t>(a.NH) * HD;
  const int64_t kv_stride = static_cast<int64_t>(a.NKV) * HD;
  const bf16* k_base = a.k_cache + sq.kv_begin * kv_stride + kvh * HD;
  const bf16* v_base = a.v_cache + sq.kv_begin * kv_stride + kvh * HD;
  stage_rows<HD, BM, kTiledThreads>(Qs, a.q + (sq.q_begin + m0) * q_stride + h * HD, q_stride, rows_valid);
  cp_async_commit();

  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int g = lane / 4;
  const int t = lane % 4;
  const int wr = warp * 16;  // the warp's first row in the tile
  const int pos[2] = {p_lo + wr + g, p_lo + wr + g + 8};  // positions of this thread's two rows

  float o[kDimTiles][4];
#pragma unroll
  for (int dt = 0; dt < kDimTiles; ++dt) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
  float m_run[2] = {-INFINITY, -INFINITY};
  float l_part[2] = {0.0f, 0.0f};  // this thread's share of the row sums; the quad adds them at the end

  for (int k0 = k_begin; k0 < k_end; k0 += BN) {
    const int n_valid = min(BN, k_end - k0);
    stage_rows<HD, BN, kTiledThreads>(Ks, k_base + k0 * kv_stride, kv_stride, n_valid);
    cp_async_commit();
    stage_rows<HD, BN, kTiledThreads>(Vs, v_base + k0 * kv_stride, kv_stride, n_valid);
    cp_async_commit();
    cp_async_wait<1>();  // Q and K have landed; V is still in flight during the scores
    __syncthreads();

    // S(16 rows, BN keys) = Q K^T for this warp's rows.
    float s[kKeyTiles][4];
#pragma unroll
    for (int nt = 0; nt < kKeyTiles; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      const bf16* qa = Qs + (wr + g) * LD + kk * 16 + 2 * t;
      const uint32_t af[4] = {load_u32(qa), load_u32(qa + 8 * LD), load_u32(qa + 8), load_u32(qa + 8 * LD + 8)};
#pragma unroll
      for (int nt = 0; nt < kKeyTiles; ++nt) {
        const bf16* kb = Ks + (nt * 8 + g) * LD + kk * 16 + 2 * t;
        const uint32_t bf[2] = {load_u32(kb), load_u32(kb + 8)};
        mma_16816(s[nt], af, bf);
      }
    }

    // Scale, mask (causal, window, past the tile's keys), online softmax per row.
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int nt = 0; nt < kKeyTiles; ++nt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = i / 2;
        const int key = k0 + nt * 8 + 2 * t + (i & 1);
        const bool visible = key < k_end && key <= pos[r] && (a.window <= 0 || key > pos[r] - a.window);
        s[nt][i] = visible ? finish_score(s[nt][i] * a.q_factor, a) : -INFINITY;
        mx[r] = fmaxf(mx[r], s[nt][i]);
      }
    }
    float ref[2], alpha[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float m_new = fmaxf(m_run[r], quad_max(mx[r]));
      ref[r] = softmax_ref(m_new);
      alpha[r] = exp2f(m_run[r] - ref[r]);  // 0 while the row had no visible key
      m_run[r] = m_new;
    }
    float rowsum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int nt = 0; nt < kKeyTiles; ++nt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        s[nt][i] = exp2f(s[nt][i] - ref[i / 2]);
        rowsum[i / 2] += s[nt][i];
      }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) l_part[r] = l_part[r] * alpha[r] + rowsum[r];
#pragma unroll
    for (int dt = 0; dt < kDimTiles; ++dt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) o[dt][i] *= alpha[i / 2];
    }

    cp_async_wait<0>();
    __syncthreads();
    // O += P V: the score fragments of two adjacent key n-tiles are exactly the A fragment of one
    // k16 step, so P never leaves registers.
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      const uint32_t pf[4] = {pack_bf16(s[2 * kk][0], s[2 * kk][1]), pack_bf16(s[2 * kk][2], s[2 * kk][3]),
                              pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
      const bf16* vb = Vs + (kk * 16 + 2 * t) * LD + g;
#pragma unroll
      for (int dt = 0; dt < kDimTiles; ++dt) {
        const bf16* v = vb + dt * 8;
        const uint32_t bf[2] = {pack_bf16(v[0], v[LD]), pack_bf16(v[8 * LD], v[9 * LD])};
        mma_16816(o[dt], pf, bf);
      }
    }
    __syncthreads();  // every warp is done with K and V before the next tile overwrites them
  }
  cp_async_wait<0>();

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = wr + g + 8 * r;
    const float l = quad_sum(l_part[r]) + sink_term(a, h, softmax_ref(m_run[r]));
    if (row >= rows_valid) continue;
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    bf16* dst = a.out + (sq.q_begin + m0 + row) * q_stride + h * HD + 2 * t;
#pragma unroll
    for (int dt = 0; dt < kDimTiles; ++dt) {
      *reinterpret_cast<uint32_t*>(dst + dt * 8) = pack_bf16(o[dt][2 * r] * inv, o[dt][2 * r + 1] * inv);
    }
  }
}

// ---- decode kernel: grid (splits, NKV · head chunks, B) --------------------------------------

// One query row (q_len == 1) against keys [k_lo, k_hi) of its split, for up to kDecodeHeads query
// heads sharing kv head `kvh`. Scores: lane = key, warp = head. P·V: thread = (pair of dims, key
// group), so each V pair read from shared memory serves every head (one thread per (head, dim)
// made the kernel bound by shared-memory loads, not HBM). With one split it writes the output;
// otherwise the unnormalised accumulator and (max, sum) go to the scratch for the combine kernel.
template <int HD>
__global__ void __launch_bounds__(kDecodeThreads)
    attention_decode_kernel(Args a, int n_splits, float* __restrict__ part_acc, float* __restrict__ part_ml) {
  constexpr int LD = DecodeShape<HD>::kLd;
  constexpr int kTile = DecodeShape<HD>::kTileElems;
  constexpr int kWarps = kDecodeThreads / kWarp;
  constexpr int kHeadsPerWarp = kDecodeHeads / kWarps;  // warp w scores heads w, w + 4
  constexpr int kDimPairs = HD / 2;
  constexpr int kKeyGroups = kDecodeThreads / kDimPairs;  // threads beyond kKeyGroups · kDimPairs idle in P·V
  static_assert(kKeyGroups >= 1, "HD up to 2 · kDecodeThreads");
  static_assert(kKeyGroups == 1 || kKeyGroups * kDecodeHeads * HD * sizeof(float) <= DecodeShape<HD>::kSmemBytes,
                "the key-group reduction reuses the K/V tiles");
  extern __shared__ __align__(16) unsigned char kv_raw[];  // stage i: K tile at 2i·kTile, V tile after it
  bf16* const kv_tiles = reinterpret_cast<bf16*>(kv_raw);
  __shared__ __align__(16) float qs[kDecodeHeads * HD];          // prescaled by scale · log2(e)
  __shared__ __align__(16) float ps[kDecodeKeys][kDecodeHeads];  // probabilities of this tile, 0 past G
  __shared__ float alpha_s[kDecodeHeads];
  __shared__ float m_s[kDecodeHeads];
  __shared__ float l_s[kDecodeHeads];

  const int b = static_cast<int>(blockIdx.z);
  const AttnSeq sq = a.seqs[b];
  if (sq.q_len != 1) return;
  const int group = a.NH / a.NKV;
  const int n_chunks = static_cast<int>(ceil_div(group, kDecodeHeads));
  const int kvh = static_cast<int>(blockIdx.y) / n_chunks;
  const int chunk = static_cast<int>(blockIdx.y) - kvh * n_chunks;
  const int h0 = kvh * group + chunk * kDecodeHeads;  // first query head of this block
  const int G = min(kDecodeHeads, group - chunk * kDecodeHeads);
  const int split = static_cast<int>(blockIdx.x);
  const int tid = static_cast<int>(threadIdx.x);

  const int pos = static_cast<int>(sq.kv_len) - 1;
  const int k_first = a.window > 0 ? max(0, pos - a.window + 1) : 0;
  const int n_keys = pos - k_first + 1;
  const int per = static_cast<int>(ceil_div(ceil_div(n_keys, n_splits), kDecodeKeys) * kDecodeKeys);
  const int k_lo = k_first + split * per;
  const int k_hi = min(k_lo + per, pos + 1);
  const int64_t part0 = (static_cast<int64_t>(b) * a.NH + h0) * n_splits + split;  // head h0's entry
  if (k_lo >= k_hi) {  // an empty split (short sequence): sum 0 tells the combine to skip it
    for (int h = tid; h < G && n_splits > 1; h += kDecodeThreads) {
      part_ml[(part0 + static_cast<int64_t>(h) * n_splits) * 2] = -INFINITY;
      part_ml[(part0 + static_cast<int64_t>(h) * n_splits) * 2 + 1] = 0.0f;
    }
    return;
  }

  const int64_t kv_stride = static_cast<int64_t>(a.NKV) * HD;
  const bf16* k_base = a.k_cache + sq.kv_begin * kv_stride + kvh * HD;
  const bf16* v_base = a.v_cache + sq.kv_begin * kv_stride + kvh * HD;
  const bf16* q_row = a.q + (sq.q_begin * a.NH + h0) * HD;  // G heads, contiguous
  for (int i = tid; i < G * HD; i += kDecodeThreads) qs[i] = __bfloat162float(q_row[i]) * a.q_factor;
  for (int i = tid; i < kDecodeKeys * kDecodeHeads; i += kDecodeThreads) ps[i / kDecodeHeads][i % kDecodeHeads] = 0.0f;
  if (tid < kDecodeHeads) alpha_s[tid] = 1.0f;

  const int warp = tid / kWarp;
  const int lane = tid % kWarp;
  float m_run[kHeadsPerWarp], l_run[kHeadsPerWarp];
#pragma unroll
  for (int hh = 0; hh < kHeadsPerWarp; ++hh) {
    m_run[hh] = -INFINITY;
    l_run[hh] = 0.0f;
  }
  const int dp = tid % kDimPairs;  // dims 2·dp, 2·dp + 1
  const int kg = tid / kDimPairs;  // keys kg, kg + kKeyGroups, ...
  const bool pv_thread = kg < kKeyGroups;
  float acc[kDecodeHeads][2];
#pragma unroll
  for (int h = 0; h < kDecodeHeads; ++h) acc[h][0] = acc[h][1] = 0.0f;

  // Tile j (keys k_lo + j·kDecodeKeys ...) lives in stage j % kDecodeStages. One commit group per
  // tile, empty past the end, so "all but the newest kDecodeStages − 1 groups" is always tile j.
  const int n_tiles = static_cast<int>(ceil_div(k_hi - k_lo, kDecodeKeys));
  // Stages tile j (if it exists) and commits its group.
  auto prefetch = [=](int j) {
    if (j < n_tiles) {
      const int k0 = k_lo + j * kDecodeKeys;
      const int n_valid = min(kDecodeKeys, k_hi - k0);
      bf16* stage = kv_tiles + (j % kDecodeStages) * 2 * kTile;
      stage_rows<HD, kDecodeKeys, kDecodeThreads>(stage, k_base + k0 * kv_stride, kv_stride, n_valid);
      stage_rows<HD, kDecodeKeys, kDecodeThreads>(stage + kTile, v_base + k0 * kv_stride, kv_stride, n_valid);
    }
    cp_async_commit();
  };
  for (int j = 0; j < kDecodeStages - 1; ++j) prefetch(j);

  for (int j = 0; j < n_tiles; ++j) {
    prefetch(j + kDecodeStages - 1);  // into the stage tile j − 1 used; freed by the last barrier
    cp_async_wait<kDecodeStages - 1>();
    __syncthreads();  // tile j visible (and, on the first tile, qs, ps and alpha_s)
    const bf16* Ks = kv_tiles + (j % kDecodeStages) * 2 * kTile;
    const bf16* Vs = Ks + kTile;
    const int n_valid = min(kDecodeKeys, k_hi - (k_lo + j * kDecodeKeys));

    // Scores: lane = key; each K chunk read once serves both of the warp's heads.
    float sc[kHeadsPerWarp];
#pragma unroll
    for (int hh = 0; hh < kHeadsPerWarp; ++hh) sc[hh] = 0.0f;
#pragma unroll 4
    for (int c = 0; c < HD / 8; ++c) {
      const uint4 raw = *reinterpret_cast<const uint4*>(Ks + lane * LD + c * 8);
      const __nv_bfloat162* kp = reinterpret_cast<const __nv_bfloat162*>(&raw);
      float kf[8];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 f = __bfloat1622float2(kp[e]);
        kf[2 * e] = f.x;
        kf[2 * e + 1] = f.y;
      }
#pragma unroll
      for (int hh = 0; hh < kHeadsPerWarp; ++hh) {
        const int h = warp + kWarps * hh;
        if (h >= G) continue;
        const float4 qa = *reinterpret_cast<const float4*>(qs + h * HD + c * 8);
        const float4 qb = *reinterpret_cast<const float4*>(qs + h * HD + c * 8 + 4);
        sc[hh] += qa.x * kf[0] + qa.y * kf[1] + qa.z * kf[2] + qa.w * kf[3] + qb.x * kf[4] + qb.y * kf[5] +
                  qb.z * kf[6] + qb.w * kf[7];
      }
    }
#pragma unroll
    for (int hh = 0; hh < kHeadsPerWarp; ++hh) {
      const int h = warp + kWarps * hh;
      if (h >= G) continue;  // uniform over the warp: the shuffles below stay legal
      const float s = lane < n_valid ? finish_score(sc[hh], a) : -INFINITY;
      const float m_new = fmaxf(m_run[hh], warp_max(s));
      const float ref = softmax_ref(m_new);
      const float alpha = exp2f(m_run[hh] - ref);
      const float p = exp2f(s - ref);
      l_run[hh] = l_run[hh] * alpha + warp_sum(p);
      m_run[hh] = m_new;
      ps[lane][h] = p;
      if (lane == 0) alpha_s[h] = alpha;
    }
    __syncthreads();  // ps and alpha_s visible

    if (pv_thread) {
#pragma unroll
      for (int h = 0; h < kDecodeHeads; ++h) {
        const float al = alpha_s[h];
        acc[h][0] *= al;
        acc[h][1] *= al;
      }
      for (int k = kg; k < kDecodeKeys; k += kKeyGroups) {
        const float2 v = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(Vs + k * LD + 2 * dp));
        const float4 pa = *reinterpret_cast<const float4*>(&ps[k][0]);
        const float4 pb = *reinterpret_cast<const float4*>(&ps[k][4]);
        const float p[kDecodeHeads] = {pa.x, pa.y, pa.z, pa.w, pb.x, pb.y, pb.z, pb.w};
#pragma unroll
        for (int h = 0; h < kDecodeHeads; ++h) {
          acc[h][0] += p[h] * v.x;
          acc[h][1] += p[h] * v.y;
        }
      }
    }
    __syncthreads();  // done with this stage and ps before they are refilled
  }
  cp_async_wait<0>();  // only empty groups remain; the tiles below are free

  // Key groups 1.. hand their partial sums to group 0 through the (now idle) K/V tiles.
  float* red = reinterpret_cast<float*>(kv_raw);  // (kKeyGroups, kDecodeHeads, HD)
  if (kKeyGroups > 1 && pv_thread && kg > 0) {
#pragma unroll
    for (int h = 0; h < kDecodeHeads; ++h) {
      if (h >= G) break;
      red[(kg * kDecodeHeads + h) * HD + 2 * dp] = acc[h][0];
      red[(kg * kDecodeHeads + h) * HD + 2 * dp + 1] = acc[h][1];
    }
  }
#pragma unroll
  for (int hh = 0; hh < kHeadsPerWarp; ++hh) {
    const int h = warp + kWarps * hh;
    if (h < G && lane == 0) {
      m_s[h] = m_run[hh];
      l_s[h] = l_run[hh];
    }
  }
  __syncthreads();
  if (kg != 0) return;

#pragma unroll
  for (int h = 0; h < kDecodeHeads; ++h) {
    if (h >= G) break;
    float o0 = acc[h][0], o1 = acc[h][1];
    for (int g2 = 1; g2 < kKeyGroups; ++g2) {
      o0 += red[(g2 * kDecodeHeads + h) * HD + 2 * dp];
      o1 += red[(g2 * kDecodeHeads + h) * HD + 2 * dp + 1];
    }
    const int64_t entry = part0 + static_cast<int64_t>(h) * n_splits;
    if (n_splits == 1) {
      const float inv = 1.0f / (l_s[h] + sink_term(a, h0 + h, softmax_ref(m_s[h])));
      *reinterpret_cast<__nv_bfloat162*>(a.out + (sq.q_begin * a.NH + h0 + h) * HD + 2 * dp) =
          __floats2bfloat162_rn(o0 * inv, o1 * inv);
    } else {
      *reinterpret_cast<float2*>(part_acc + entry * HD + 2 * dp) = make_float2(o0, o1);
      if (dp == 0) {
        part_ml[entry * 2] = m_s[h];
        part_ml[entry * 2 + 1] = l_s[h];
      }
    }
  }
}

// Merges the splits of one (sequence, head): out = Σ 2^(m_i − M) acc_i / Σ 2^(m_i − M) l_i (+ the
// head's sink term in the denominator). Grid (NH, B).
__global__ void __launch_bounds__(kCombineThreads)
    attention_combine_kernel(const float* __restrict__ part_acc, const float* __restrict__ part_ml,
                             const AttnSeq* __restrict__ seqs, bf16* __restrict__ out, int NH, int HD, int n_splits,
                             const float* __restrict__ sinks) {
  const int b = static_cast<int>(blockIdx.y);
  const AttnSeq sq = seqs[b];
  if (sq.q_len != 1) return;
  const int h = static_cast<int>(blockIdx.x);
  const int64_t part0 = (static_cast<int64_t>(b) * NH + h) * n_splits;
  float M = -INFINITY;
  for (int i = 0; i < n_splits; ++i) {
    if (part_ml[(part0 + i) * 2 + 1] > 0.0f) M = fmaxf(M, part_ml[(part0 + i) * 2]);
  }
  float L = 0.0f;
  for (int i = 0; i < n_splits; ++i) {
    const float l = part_ml[(part0 + i) * 2 + 1];
    if (l > 0.0f) L += exp2f(part_ml[(part0 + i) * 2] - M) * l;
  }
  if (sinks) L += exp2f(sinks[h] * kLog2e - softmax_ref(M));
  const float inv = L > 0.0f ? 1.0f / L : 0.0f;
  for (int d = static_cast<int>(threadIdx.x); d < HD; d += kCombineThreads) {
    float o = 0.0f;
    for (int i = 0; i < n_splits; ++i) {
      if (part_ml[(part0 + i) * 2 + 1] > 0.0f) {
        o += exp2f(part_ml[(part0 + i) * 2] - M) * part_acc[(part0 + i) * HD + d];
      }
    }
    out[(sq.q_begin * NH + h) * HD + d] = __float2bfloat16(o * inv);
  }
}

// ---- launcher --------------------------------------------------------------------------------

template <int HD>
void launch(const Args& a, const AttnBounds& bounds, int n_splits, float* scratch, cudaStream_t s) {
  const bool automatic = bounds.path == AttnPath::automatic;
  if (!automatic || bounds.max_q_len > 1) {
    constexpr size_t smem = TiledShape<HD>::kSmemBytes;
    CUDA_CHECK(cudaFuncSetAttribute(attention_tiled_kernel<HD>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(smem)));
    const dim3 grid(static_cast<unsigned>(ceil_div(bounds.max_q_len, kTiledRows)), static_cast<unsigned>(a.NH),
                    static_cast<unsigned>(bounds.B));
    attention_tiled_kernel<HD><<<grid, kTiledThreads, smem, s>>>(a, automatic);
    CUDA_CHECK_LAUNCH();
  }
  if (automatic) {
    float* part_acc = n_splits > 1 ? scratch : nullptr;
    float* part_ml = n_splits > 1 ? scratch + static_cast<int64_t>(bounds.B) * a.NH * n_splits * HD : nullptr;
    const dim3 grid(static_cast<unsigned>(n_splits), static_cast<unsigned>(decode_head_blocks(a.NH, a.NKV)),
                    static_cast<unsigned>(bounds.B));
    constexpr size_t smem = DecodeShape<HD>::kSmemBytes;
    CUDA_CHECK(cudaFuncSetAttribute(attention_decode_kernel<HD>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(smem)));
    attention_decode_kernel<HD><<<grid, kDecodeThreads, smem, s>>>(a, n_splits, part_acc, part_ml);
    CUDA_CHECK_LAUNCH();
    if (n_splits > 1) {
      const dim3 cgrid(static_cast<unsigned>(a.NH), static_cast<unsigned>(bounds.B));
      attention_combine_kernel<<<cgrid, kCombineThreads, 0, s>>>(part_acc, part_ml, a.seqs, a.out, a.NH, HD,
                                                                 n_splits, a.sinks);
      CUDA_CHECK_LAUNCH();
    }
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

bool attention_supports_head_dim(int64_t HD) {
  return HD == 64 || HD == 80 || HD == 96 || HD == 128 || HD == 256;
}

int attention_decode_splits(int64_t B, int64_t NH, int64_t NKV, int64_t max_kv_len, int64_t window, int sm_count) {
  if (B <= 0 || NH <= 0 || NKV <= 0 || NH % NKV != 0 || max_kv_len <= 0) return 1;
  const int64_t keys = window > 0 ? std::min(max_kv_len, window) : max_kv_len;
  const int64_t by_length = std::clamp<int64_t>(keys / kMinKeysPerSplit, 1, kMaxSplits);
  const int64_t target = int64_t{kDecodeBlocksPerSm} * std::max(sm_count, 1);
  const int64_t by_occupancy = std::max<int64_t>(1, ceil_div(target, B * decode_head_blocks(NH, NKV)));
  return static_cast<int>(std::min(by_length, by_occupancy));
}

size_t attention_scratch_bytes(const AttnBounds& bounds, int64_t NH, int64_t NKV, int64_t HD, int64_t window,
                               int sm_count) {
  if (bounds.path != AttnPath::automatic || bounds.B <= 0 || bounds.max_kv_len <= 0) return 0;
  // Splits grow with the kv length and shrink with the batch, so B · splits can peak below bounds.B.
  size_t most = 0;
  for (int64_t b = 1; b <= bounds.B; ++b) {
    const int splits = attention_decode_splits(b, NH, NKV, bounds.max_kv_len, window, sm_count);
    most = std::max(most, decode_scratch_bytes(b, NH, HD, splits));
  }
  return most;
}

void attention(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache, __nv_bfloat16* out,
               const AttnSeq* seqs, const AttnBounds& bounds, int64_t NH, int64_t NKV, int64_t HD, int64_t window,
               AttnScores scores, void* scratch, size_t scratch_bytes, cudaStream_t s) {
  ABL_CHECK(NH > 0 && NKV > 0 && NH % NKV == 0 && NH <= kMaxGridYZ,
            "attention: NH = {} must be a positive multiple of NKV = {} (at most {})", NH, NKV, kMaxGridYZ);
  ABL_CHECK(attention_supports_head_dim(HD), "attention: no kernel for head dim {} (supported: 64, 80, 96, 128, 256)",
            HD);
  ABL_CHECK(bounds.B >= 0 && bounds.B <= kMaxGridYZ, "attention: B = {} sequences (at most {} per call)", bounds.B,
            kMaxGridYZ);
  ABL_CHECK(bounds.max_q_len >= 0 && bounds.max_q_len <= bounds.max_kv_len && bounds.max_kv_len <= INT_MAX,
            "attention: bounds max_q_len = {}, max_kv_len = {} (need 0 <= max_q_len <= max_kv_len < 2^31)",
            bounds.max_q_len, bounds.max_kv_len);
  ABL_CHECK(window >= 0 && window <= INT_MAX, "attention: window = {} out of range", window);
  ABL_CHECK(scores.scale >= 0.0f && scores.softcap >= 0.0f && std::isfinite(scores.scale) && std::isfinite(scores.softcap),
            "attention: score scale {} and soft-cap {} must be finite and not negative", scores.scale, scores.softcap);
  if (bounds.B == 0 || bounds.max_q_len == 0) return;
  ABL_CHECK(q && k_cache && v_cache && out && seqs, "attention: null tensor pointer");
  ABL_CHECK(aligned16(q) && aligned16(k_cache) && aligned16(v_cache) && aligned16(out),
            "attention: q, k_cache, v_cache and out must be 16-byte aligned");

  int n_splits = 1;
  if (bounds.path == AttnPath::automatic) {
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    n_splits = attention_decode_splits(bounds.B, NH, NKV, bounds.max_kv_len, window, sms);
    const size_t need = decode_scratch_bytes(bounds.B, NH, HD, n_splits);
    ABL_CHECK(scratch_bytes >= need && (need == 0 || scratch != nullptr),
              "attention: scratch of {} bytes, this batch needs {} (attention_scratch_bytes)", scratch_bytes, need);
  }

  const float scale =
      scores.scale > 0.0f ? scores.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(HD)));
  const Args a{q,
               k_cache,
               v_cache,
               out,
               seqs,
               static_cast<int>(NH),
               static_cast<int>(NKV),
               static_cast<int>(window),
               scores.softcap > 0.0f ? scale : scale * kLog2e,
               scores.softcap,
               scores.sinks};
  float* sc = static_cast<float*>(scratch);
  switch (HD) {
    case 64: launch<64>(a, bounds, n_splits, sc, s); break;
    case 80: launch<80>(a, bounds, n_splits, sc, s); break;
    case 96: launch<96>(a, bounds, n_splits, sc, s); break;
    case 128: launch<128>(a, bounds, n_splits, sc, s); break;
    case 256: launch<256>(a, bounds, n_splits, sc, s); break;
    default: break;  // rejected above
  }
}

}  // namespace abl::cuda
