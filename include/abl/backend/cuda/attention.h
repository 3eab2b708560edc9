// Causal GQA attention on the GPU, the twin of abl::cpu::attention (backend/ops.h): bf16 q and KV
// caches, fp32 softmax and accumulation, bf16 output. The AttnSeq array stays on the device, so the
// host passes only bounds: grids and scratch are sized from them and the kernels read the exact
// lengths, which keeps a captured decode-step graph valid while the lengths grow under the bounds.
//
// Dimensions: B sequences, T packed query rows, NH query heads, NKV kv heads, HD head dim, C cache rows.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "abl/backend/cpu/ops.h"

namespace abl::cuda {

// Same layout as the CPU twin's (four int64: q_begin, q_len, kv_begin, kv_len); an array of them
// is uploaded as is.
using AttnSeq = cpu::AttnSeq;
// How scores are formed (scale, soft-cap, sinks), as the CPU twin's; on the device, sinks is (NH)
// fp32 device memory.
using AttnScores = cpu::AttnScores;

enum class AttnPath {
  automatic,  // q_len == 1 sequences: split-K decode kernel; q_len > 1: tiled kernel
  tiled,      // every sequence through the tiled kernel (tests and benchmarks of that kernel)
};

// What the host knows of a batch whose AttnSeq array is on the device.
struct AttnBounds {
  int64_t B = 0;           // sequences in the array
  int64_t max_q_len = 0;   // ≥ every seqs[s].q_len
  int64_t max_kv_len = 0;  // ≥ every seqs[s].kv_len
  AttnPath path = AttnPath::automatic;
};

// Head dims with a compiled kernel.
bool attention_supports_head_dim(int64_t HD);

// KV splits of the decode kernel: enough blocks to fill `sm_count` SMs a few times over, but at
// least 256 visible keys per split on the longest sequence (window > 0 caps the visible keys), at
// most 64. 1 (no combine pass, no scratch) for short contexts or batches that fill the GPU alone.
int attention_decode_splits(int64_t B, int64_t NH, int64_t NKV, int64_t max_kv_len, int64_t window, int sm_count);

// Scratch bytes attention() needs for every batch with at most bounds.B sequences and kv lengths at
// most bounds.max_kv_len, on a device with `sm_count` SMs (cudaDevAttrMultiProcessorCount): plan the
// buffer once from the largest batch. 0 when no batch within the bounds splits.
size_t attention_scratch_bytes(const AttnBounds& bounds, int64_t NH, int64_t NKV, int64_t HD, int64_t window,
                               int sm_count);

// out(T,NH,HD) = causal GQA attention per sequence, as abl::cpu::attention (score scale
// scores.scale, 0 = 1/sqrt(HD); scores.softcap > 0: cap · tanh(score / cap) before the mask;
// scores.sinks: each head's sink logit in the normaliser; query head h reads kv head h/(NH/NKV),
// window > 0: keys j with p − window < j ≤ p).
// Requirements: NH % NKV == 0, attention_supports_head_dim(HD), 0 ≤ q_len ≤ kv_len ≤ bounds,
// B ≤ 65535, q/k/v/out 16-byte aligned. Dispatch (path automatic): sequences with q_len == 1 go to
// the split-K decode kernel (+ a combine kernel when it splits), the others to the tiled kernel;
// the tiled kernel is launched only when bounds.max_q_len > 1. Sequences with q_len == 0 write
// nothing. `scratch` (device, ≥ attention_scratch_bytes for these bounds on this device; may be
// null when that is 0) is overwritten. Only enqueues work on `s`; bad arguments throw abl::Error
// before anything is launched.
void attention(const __nv_bfloat16* q,        // (T, NH, HD)
               const __nv_bfloat16* k_cache,  // (C, NKV, HD)
               const __nv_bfloat16* v_cache,  // (C, NKV, HD)
               __nv_bfloat16* out,            // (T, NH, HD)
               const AttnSeq* seqs,           // (B) in device memory
               const AttnBounds& bounds, int64_t NH, int64_t NKV, int64_t HD, int64_t window, AttnScores scores,
               void* scratch, size_t scratch_bytes, cudaStream_t s);

}  // namespace abl::cuda
