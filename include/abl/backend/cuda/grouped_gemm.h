// Grouped linear layers on the GPU: the experts of an MoE layer as one launch per projection. The
// rows are sorted by group (expert): group g owns rows [offsets[g], offsets[g+1]) of the input and
// the output and multiplies them by its own weight w + g·w_stride (out, in):
//   y(r, :) = x(r, :) · W_gᵀ   for every row r of group g,
// bf16 inputs, fp32 accumulation on the tensor cores, bf16 or fp32 output. The group sizes live on
// the device only (group_offsets turns the counts into offsets and row tiles), so nothing comes
// back to the host and a decode step with MoE layers can be captured in a CUDA graph.
//
// Each block computes one (row tile, column tile) of one group; the grid covers the most row tiles
// any split of `rows` into `groups` can need (grouped_max_tiles), and blocks past the last tile
// return at once. CPU twin: one abl::cpu linear per expert over its rows (engine/cpu/engine.cpp).
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace abl::cuda {

// Where the groups' rows are. offsets and tile_starts are device arrays of groups + 1 entries (the
// exclusive scans of the row counts and of their row tiles, from group_offsets); rows is
// offsets[groups], known to the host (an MoE layer has T·k rows whatever the routing).
struct RowGroups {
  const int64_t* offsets = nullptr;      // (groups + 1)
  const int32_t* tile_starts = nullptr;  // (groups + 1)
  int64_t groups = 0;
  int64_t rows = 0;
  int64_t tile_rows = 0;  // grouped_tile_rows(rows, groups)
};

// Rows per tile: 16 while the groups average fewer than 32 rows (decode: each tile reads its
// group's weight once, and a short tile wastes less), else 64 (prefill: more reuse of each weight
// tile). A host rule of (rows, groups) only, so a captured graph keeps its choice.
int64_t grouped_tile_rows(int64_t rows, int64_t groups);
// The most row tiles `rows` rows in `groups` groups can need: ⌈rows / tile_rows⌉ + min(groups, rows).
int64_t grouped_max_tiles(int64_t rows, int64_t groups, int64_t tile_rows);

// offsets(groups+1) = exclusive scan of counts(groups); tile_starts(groups+1) = exclusive scan of
// ⌈counts / tile_rows⌉. One block; groups ≤ 1024.
void group_offsets(const int32_t* counts, int64_t groups, int64_t tile_rows, int64_t* offsets, int32_t* tile_starts,
                   cudaStream_t s);

// y(rows, out) = x(rows, in) · W_gᵀ per group (see above). Requires in % 8 == 0 and x, w 16-byte
// aligned with w_stride % 8 == 0 (16-byte rows for the asynchronous copies); a device of compute
// capability 8.0 or newer.
void grouped_linear(const __nv_bfloat16* x, const __nv_bfloat16* w, int64_t w_stride, const RowGroups& g, int64_t in,
                    int64_t out, __nv_bfloat16* y, cudaStream_t s);
void grouped_linear(const __nv_bfloat16* x, const __nv_bfloat16* w, int64_t w_stride, const RowGroups& g, int64_t in,
                    int64_t out, float* y, cudaStream_t s);

}  // namespace abl::cuda
