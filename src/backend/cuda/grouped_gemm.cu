// Grouped linear layers (grouped_gemm.h). A block of four warps computes a tile of `BM` rows of one
// group by 64 output columns: both operands are K-contiguous (x rows and the rows of W_g), so each
// K step of 32 copies a (BM × 32) slice of x and a (64 × 32) slice of W_g into shared memory with
// asynchronous copies (three stages: the next two slices load while the tensor cores work on this
// one; rows past the group, columns past `out` and K past `in` are zero-filled), and the warps multiply
// them with 16×16×16 bf16 WMMA fragments into fp32 accumulators. The accumulators go through
// shared memory so the stores to y are coalesced and bounded by the group's rows.
#include <cuda_bf16.h>
#include <mma.h>

#include <algorithm>
#include <climits>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/grouped_gemm.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kThreads = 128;  // four warps
constexpr int kBN = 64;        // output columns per block
constexpr int kBK = 32;        // K per stage
constexpr int kLds = kBK + 8;  // shared row pitch (bf16): 80 bytes, a multiple of 16, off the bank period
constexpr int kLdc = kBN + 4;  // fp32 staging pitch
constexpr int kChunk = 8;      // bf16 per 16-byte copy
constexpr int kStages = 3;     // K slices in shared memory: two load while the third is multiplied

// One 16-byte asynchronous copy global → shared; `bytes` (0 or 16) are read, the rest zero-filled.
__device__ __forceinline__ void copy16_async(void* smem, const void* gmem, int bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(bytes) : "memory");
}
__device__ __forceinline__ void copy_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void copy_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void store(bf16* p, float v) { *p = __float2bfloat16(v); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }

// The largest index i in [0, n) with a[i] <= v (a non-decreasing, a[0] <= v): the group owning a
// tile or row even when empty groups share its start.
template <typename T>
__device__ __forceinline__ int last_at_or_below(const T* __restrict__ a, int n, int64_t v) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (static_cast<int64_t>(a[mid]) <= v) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

template <int BM>
struct TileShape {
  static constexpr int kWarpsM = BM >= 32 ? 2 : 1;
  static constexpr int kWarpsN = 4 / kWarpsM;
  static constexpr int kFragsM = BM / kWarpsM / 16;
  static constexpr int kFragsN = kBN / kWarpsN / 16;
  static constexpr int kStageElems = (BM + kBN) * kLds;  // x slice, then W slice
  static constexpr int kOperandBytes = kStages * kStageElems * 2;
  static constexpr int kStagingBytes = BM * kLdc * 4;
  static constexpr int kSmemBytes = kOperandBytes > kStagingBytes ? kOperandBytes : kStagingBytes;
};

template <int BM, typename OutT>
__global__ void __launch_bounds__(kThreads)
    grouped_linear_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w, int64_t w_stride,
                          const int64_t* __restrict__ offsets, const int32_t* __restrict__ tile_starts, int groups,
                          int in, int out, OutT* __restrict__ y) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // bf16 WMMA and cp.async need sm_80 (the host side refuses older devices first)
#else
  using namespace nvcuda;
  using Shape = TileShape<BM>;
  __shared__ __align__(128) unsigned char smem[Shape::kSmemBytes];

  const int tile = static_cast<int>(blockIdx.x);
  if (tile >= tile_starts[groups]) return;  // block-uniform
  const int g = last_at_or_below(tile_starts, groups, tile);
  const int64_t row0 = offsets[g] + static_cast<int64_t>(tile - tile_starts[g]) * BM;
  const int rows = static_cast<int>(min(static_cast<int64_t>(BM), offsets[g + 1] - row0));
  const int col0 = static_cast<int>(blockIdx.y) * kBN;
  const bf16* wg = w + static_cast<int64_t>(g) * w_stride;
  bf16* stage_base = reinterpret_cast<bf16*>(smem);

  // Stage `buf` ← x rows [row0, row0 + BM) and W_g rows [col0, col0 + 64), K slice [k0, k0 + 32).
  auto load = [&](int buf, int k0) {
    bf16* xs = stage_base + buf * Shape::kStageElems;
    bf16* ws = xs + BM * kLds;
    constexpr int kPerRow = kBK / kChunk;
    for (int c = static_cast<int>(threadIdx.x); c < BM * kPerRow; c += kThreads) {
      const int r = c / kPerRow, kc = (c % kPerRow) * kChunk;
      const bool ok = r < rows && k0 + kc < in;
      copy16_async(xs + r * kLds + kc, ok ? x + (row0 + r) * in + k0 + kc : x, ok ? 16 : 0);
    }
    for (int c = static_cast<int>(threadIdx.x); c < kBN * kPerRow; c += kThreads) {
      const int n = c / kPerRow, kc = (c % kPerRow) * kChunk;
      const bool ok = col0 + n < out && k0 + kc < in;
      copy16_async(ws + n * kLds + kc, ok ? wg + static_cast<int64_t>(col0 + n) * in + k0 + kc : wg, ok ? 16 : 0);
    }
    copy_commit();
  };

  const int warp = static_cast<int>(threadIdx.x) / detail::kWarp;
  const int wm = warp / Shape::kWarpsN, wn = warp % Shape::kWarpsN;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[Shape::kFragsM][Shape::kFragsN];
  for (auto& row : acc) {
    for (auto& f : row) wmma::fill_fragment(f, 0.0f);
  }

  // kStages slices in flight: stage s is waited for, then the slice kStages − 1 ahead goes into the
  // buffer stage s − 1 used (every warp passed this barrier, so none still reads it), then stage s
  // is multiplied. Empty groups past the last slice keep the group count per iteration at one.
  const int steps = (in + kBK - 1) / kBK;
  for (int p = 0; p < kStages - 1; ++p) {
    if (p < steps) {
      load(p, p * kBK);
    } else {
      copy_commit();
    }
  }
  for (int s = 0; s < steps; ++s) {
    copy_wait<kStages - 2>();
    __syncthreads();
    const int ahead = s + kStages - 1;
    if (ahead < steps) {
      load(ahead % kStages, ahead * kBK);
    } else {
      copy_commit();
    }
    const bf16* xs = stage_base + (s % kStages) * Shape::kStageElems;
    const bf16* ws = xs + BM * kLds;
    for (int kk = 0; kk < kBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> a[Shape::kFragsM];
      // W_g's rows are the columns of Bᵀ: a (K × N) column-major operand with pitch kLds.
      wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> b[Shape::kFragsN];
      for (int i = 0; i < Shape::kFragsM; ++i) {
        wmma::load_matrix_sync(a[i], xs + ((wm * Shape::kFragsM + i) * 16) * kLds + kk, kLds);
      }
      for (int j = 0; j < Shape::kFragsN; ++j) {
        wmma::load_matrix_sync(b[j], ws + ((wn * Shape::kFragsN + j) * 16) * kLds + kk, kLds);
      }
      for (int i = 0; i < Shape::kFragsM; ++i) {
        for (int j = 0; j < Shape::kFragsN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
      }
    }
  }
  copy_wait<0>();    // only empty groups are left
  __syncthreads();   // every warp is done with the stages before the staging below overwrites them

  // The accumulators through shared memory (the operand stages are free now), then bounded,
  // coalesced stores.
  float* cs = reinterpret_cast<float*>(smem);
  for (int i = 0; i < Shape::kFragsM; ++i) {
    for (int j = 0; j < Shape::kFragsN; ++j) {
      wmma::store_matrix_sync(cs + ((wm * Shape::kFragsM + i) * 16) * kLdc + (wn * Shape::kFragsN + j) * 16,
                              acc[i][j], kLdc, wmma::mem_row_major);
    }
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < BM * kBN; i += kThreads) {
    const int r = i / kBN, c = i % kBN;
    if (r < rows && col0 + c < out) store(y + (row0 + r) * out + col0 + c, cs[r * kLdc + c]);
  }
#endif
}

// Inclusive scans of (rows, tiles) across the lanes of a warp.
__device__ __forceinline__ void warp_inclusive_scan(int64_t& rows, int32_t& tiles, int lane) {
  for (int o = 1; o < detail::kWarp; o *= 2) {
    const int64_t r = __shfl_up_sync(0xffffffffu, rows, o);
    const int32_t t = __shfl_up_sync(0xffffffffu, tiles, o);
    if (lane >= o) {
      rows += r;
      tiles += t;
    }
  }
}

// Exclusive scans of the counts and of their row tiles, one thread per group: warp scans, then a
// scan of the warp totals.
__global__ void group_offsets_kernel(const int32_t* __restrict__ counts, int groups, int tile_rows,
                                     int64_t* __restrict__ offsets, int32_t* __restrict__ tile_starts) {
  __shared__ int64_t warp_rows[detail::kWarp];
  __shared__ int32_t warp_tiles[detail::kWarp];
  const int g = static_cast<int>(threadIdx.x), lane = g % detail::kWarp, warp = g / detail::kWarp;
  const int warps = static_cast<int>(blockDim.x) / detail::kWarp;
  int64_t r = g < groups ? counts[g] : 0;
  int32_t t = static_cast<int32_t>((r + tile_rows - 1) / tile_rows);
  warp_inclusive_scan(r, t, lane);
  if (lane == detail::kWarp - 1) {
    warp_rows[warp] = r;
    warp_tiles[warp] = t;
  }
  __syncthreads();
  if (warp == 0) {
    int64_t wr = lane < warps ? warp_rows[lane] : 0;
    int32_t wt = lane < warps ? warp_tiles[lane] : 0;
    warp_inclusive_scan(wr, wt, lane);
    warp_rows[lane] = wr;
    warp_tiles[lane] = wt;
  }
  __syncthreads();
  if (warp > 0) {
    r += warp_rows[warp - 1];
    t += warp_tiles[warp - 1];
  }
  if (g < groups) {  // inclusive through g: the start of g + 1
    offsets[g + 1] = r;
    tile_starts[g + 1] = t;
  }
  if (g == 0) {
    offsets[0] = 0;
    tile_starts[0] = 0;
  }
}

bool device_has_sm80() {
  int dev = 0, major = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  return major >= 8;
}

template <typename OutT>
void launch_grouped(const bf16* x, const bf16* w, int64_t w_stride, const RowGroups& g, int64_t in, int64_t out,
                    OutT* y, cudaStream_t s) {
  ABL_CHECK(g.groups > 0 && g.groups <= 1024 && g.rows >= 0 && in > 0 && out > 0 && in <= INT_MAX &&
                out <= INT_MAX && (out + kBN - 1) / kBN <= 65535,
            "grouped_linear: bad extents (groups = {}, rows = {}, in = {}, out = {})", g.groups, g.rows, in, out);
  ABL_CHECK(g.tile_rows == 16 || g.tile_rows == 64, "grouped_linear: tile rows {} (16 or 64)", g.tile_rows);
  ABL_CHECK(in % kChunk == 0 && w_stride % kChunk == 0,
            "grouped_linear: the input width {} and the weight stride {} must be multiples of {} (16-byte rows)", in,
            w_stride, kChunk);
  ABL_CHECK(reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(w) % 16 == 0,
            "grouped_linear: x and w must be 16-byte aligned");
  if (g.rows == 0) return;
  static const bool sm80 = device_has_sm80();
  ABL_CHECK(sm80, "grouped_linear (the MoE experts) needs a GPU of compute capability 8.0 or newer");
  const int64_t tiles = grouped_max_tiles(g.rows, g.groups, g.tile_rows);
  ABL_CHECK(tiles <= INT_MAX, "grouped_linear: {} row tiles", tiles);
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>((out + kBN - 1) / kBN));
  const auto G = static_cast<int>(g.groups);
  if (g.tile_rows == 16) {
    grouped_linear_kernel<16, OutT><<<grid, kThreads, 0, s>>>(x, w, w_stride, g.offsets, g.tile_starts, G,
                                                              static_cast<int>(in), static_cast<int>(out), y);
  } else {
    grouped_linear_kernel<64, OutT><<<grid, kThreads, 0, s>>>(x, w, w_stride, g.offsets, g.tile_starts, G,
                                                              static_cast<int>(in), static_cast<int>(out), y);
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace

int64_t grouped_tile_rows(int64_t rows, int64_t groups) { return rows < 32 * groups ? 16 : 64; }

int64_t grouped_max_tiles(int64_t rows, int64_t groups, int64_t tile_rows) {
  return (rows + tile_rows - 1) / tile_rows + std::min(groups, rows);
}

void group_offsets(const int32_t* counts, int64_t groups, int64_t tile_rows, int64_t* offsets, int32_t* tile_starts,
                   cudaStream_t s) {
  ABL_CHECK(groups > 0 && groups <= 1024 && tile_rows > 0 && tile_rows <= INT_MAX,
            "group_offsets: bad extents (groups = {} of at most 1024, tile rows = {})", groups, tile_rows);
  const auto threads = static_cast<unsigned>((groups + detail::kWarp - 1) / detail::kWarp * detail::kWarp);
  group_offsets_kernel<<<1, threads, 0, s>>>(counts, static_cast<int>(groups), static_cast<int>(tile_rows), offsets,
                                             tile_starts);
  CUDA_CHECK_LAUNCH();
}

void grouped_linear(const bf16* x, const bf16* w, int64_t w_stride, const RowGroups& g, int64_t in, int64_t out,
                    bf16* y, cudaStream_t s) {
  launch_grouped(x, w, w_stride, g, in, out, y, s);
}

void grouped_linear(const bf16* x, const bf16* w, int64_t w_stride, const RowGroups& g, int64_t in, int64_t out,
                    float* y, cudaStream_t s) {
  launch_grouped(x, w, w_stride, g, in, out, y, s);
}

}  // namespace abl::cuda
