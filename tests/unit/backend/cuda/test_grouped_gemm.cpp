// The grouped expert GEMMs (backend/cuda/grouped_gemm.h): the device scans of the expert counts
// into offsets and row tiles, and grouped_linear against a double-precision product of the same
// bf16 values, group by group — empty groups, groups of one row, groups longer than a tile, K and
// output widths that are not multiples of the tile, a weight stride with padding, both tile heights
// and both output types. The host rules and checks need no device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <cuda_bf16.h>

#include "abl/backend/cuda/grouped_gemm.h"
#include "abl/core/error.h"
#include "common/cuda_test.h"
#include "common/random_values.h"

namespace abl {
namespace {

// upload/download, to_bf16/to_f32, expect_close and the seeded inputs (cuda_test.h, random_values.h).
using namespace testing;

// Exclusive scans of the counts and of ⌈count / tile_rows⌉ (what group_offsets computes).
void host_offsets(const std::vector<int32_t>& counts, int64_t tile_rows, std::vector<int64_t>& offsets,
                  std::vector<int32_t>& tiles) {
  offsets.assign(counts.size() + 1, 0);
  tiles.assign(counts.size() + 1, 0);
  for (size_t g = 0; g < counts.size(); ++g) {
    offsets[g + 1] = offsets[g] + counts[g];
    tiles[g + 1] = tiles[g] + static_cast<int32_t>((counts[g] + tile_rows - 1) / tile_rows);
  }
}

TEST(GroupedGemmHost, MaxTilesBoundsEverySplit) {
  // most[g][r]: the most row tiles any split of r rows into g groups needs (dynamic programming over
  // the first group's rows), against the bound the grid is sized by.
  for (const int64_t tile : {4, 16}) {
    const int64_t R = 90, G = 9;
    std::vector<std::vector<int64_t>> most(G + 1, std::vector<int64_t>(R + 1, -1));
    most[0][0] = 0;
    for (int64_t g = 1; g <= G; ++g) {
      for (int64_t r = 0; r <= R; ++r) {
        for (int64_t c = 0; c <= r; ++c) {
          if (most[g - 1][r - c] >= 0) most[g][r] = std::max(most[g][r], (c + tile - 1) / tile + most[g - 1][r - c]);
        }
        EXPECT_LE(most[g][r], cuda::grouped_max_tiles(r, g, tile)) << r << " rows, " << g << " groups, tile " << tile;
      }
    }
  }
  EXPECT_EQ(cuda::grouped_max_tiles(0, 8, 16), 0);
  EXPECT_EQ(cuda::grouped_max_tiles(17, 1, 16), 3);  // ⌈17/16⌉ + 1: loose by one for a single group
}

TEST(GroupedGemmHost, TileRowsFollowTheRowsPerGroup) {
  EXPECT_EQ(cuda::grouped_tile_rows(64 * 8, 128), 16);    // decode: 4 rows per expert
  EXPECT_EQ(cuda::grouped_tile_rows(4096 * 8, 128), 64);  // prefill: 256 rows per expert
  EXPECT_EQ(cuda::grouped_tile_rows(31 * 8, 8), 16);
  EXPECT_EQ(cuda::grouped_tile_rows(32 * 8, 8), 64);
}

TEST(GroupedGemmHost, BadShapesThrowBeforeLaunch) {
  cudaStream_t s = nullptr;
  cuda::RowGroups g{nullptr, nullptr, 4, 10, 16};
  __nv_bfloat16* y = nullptr;
  EXPECT_THROW(cuda::grouped_linear(nullptr, nullptr, 0, g, 12, 8, y, s), Error);  // in % 8
  EXPECT_THROW(cuda::grouped_linear(nullptr, nullptr, 4, g, 16, 8, y, s), Error);  // stride % 8
  cuda::RowGroups bad_tile = g;
  bad_tile.tile_rows = 32;
  EXPECT_THROW(cuda::grouped_linear(nullptr, nullptr, 0, bad_tile, 16, 8, y, s), Error);
  cuda::RowGroups too_many = g;
  too_many.groups = 1025;
  EXPECT_THROW(cuda::grouped_linear(nullptr, nullptr, 0, too_many, 16, 8, y, s), Error);
  EXPECT_THROW(cuda::group_offsets(nullptr, 0, 16, nullptr, nullptr, s), Error);
  EXPECT_THROW(cuda::group_offsets(nullptr, 1025, 16, nullptr, nullptr, s), Error);
  cuda::RowGroups empty = g;
  empty.rows = 0;
  cuda::grouped_linear(nullptr, nullptr, 0, empty, 16, 8, y, s);  // nothing to do: no launch
}

TEST(GroupedGemm, OffsetsAndTilesMatchHostScans) {
  ABL_REQUIRE_GPU();
  cuda::Stream st;
  std::mt19937 rng(3);
  for (const int64_t G : {1, 7, 32, 33, 128, 1000, 1024}) {
    std::vector<int32_t> counts(static_cast<size_t>(G));
    std::uniform_int_distribution<int32_t> d(0, 70);
    for (auto& c : counts) c = d(rng) < 20 ? 0 : d(rng);  // many empty groups
    auto dc = upload(counts, st.get());
    cuda::DeviceBuffer off(static_cast<size_t>(G + 1) * sizeof(int64_t)), tiles(static_cast<size_t>(G + 1) * 4);
    for (const int64_t tile : {16, 64}) {
      cuda::group_offsets(dc.as<int32_t>(), G, tile, off.as<int64_t>(), tiles.as<int32_t>(), st.get());
      std::vector<int64_t> want_off;
      std::vector<int32_t> want_tiles;
      host_offsets(counts, tile, want_off, want_tiles);
      EXPECT_EQ(download<int64_t>(off, want_off.size(), st.get()), want_off) << G << " groups, tile " << tile;
      EXPECT_EQ(download<int32_t>(tiles, want_tiles.size(), st.get()), want_tiles) << G << " groups, tile " << tile;
    }
  }
}

struct Case {
  std::vector<int32_t> counts;
  int64_t in, out, tile_rows;
  std::string name;
};

// y for every row of every group from the bf16 values, in double.
std::vector<double> reference(const std::vector<float>& x, const std::vector<float>& w, int64_t stride,
                              const std::vector<int64_t>& offsets, int64_t in, int64_t out) {
  const int64_t rows = offsets.back();
  std::vector<double> y(static_cast<size_t>(rows * out));
  for (size_t g = 0; g + 1 < offsets.size(); ++g) {
    const float* wg = w.data() + static_cast<int64_t>(g) * stride;
    for (int64_t r = offsets[g]; r < offsets[g + 1]; ++r) {
      for (int64_t o = 0; o < out; ++o) {
        double acc = 0;
        for (int64_t i = 0; i < in; ++i) {
          acc += static_cast<double>(x[static_cast<size_t>(r * in + i)]) * wg[o * in + i];
        }
        y[static_cast<size_t>(r * out + o)] = acc;
      }
    }
  }
  return y;
}

TEST(GroupedGemm, MatchesDoublePrecisionPerGroup) {
  ABL_REQUIRE_GPU();
  cuda::Stream st;
  std::mt19937 rng(11);
  std::vector<Case> cases = {
      {{0, 1, 17, 0, 40}, 40, 72, 16, "tails (K 40, out 72), empty and one-row groups, tile 16"},
      {{0, 1, 17, 0, 40}, 40, 72, 64, "the same, tile 64"},
      {{300, 0, 129, 64, 65, 1, 0, 200}, 128, 64, 64, "prefill-like, tile 64"},
      {{}, 256, 96, 16, "128 groups of 0–8 rows (decode-like)"},
      {{5}, 1024, 200, 16, "one group, long K"},
  };
  std::uniform_int_distribution<int32_t> small(0, 8);
  for (int g = 0; g < 128; ++g) cases[3].counts.push_back(small(rng));

  for (const Case& c : cases) {
    const auto G = static_cast<int64_t>(c.counts.size());
    std::vector<int64_t> offsets;
    std::vector<int32_t> tiles;
    host_offsets(c.counts, c.tile_rows, offsets, tiles);
    const int64_t rows = offsets.back();
    const int64_t stride = c.out * c.in + 64;  // padding between the groups' weights, never read
    const auto x = to_f32(to_bf16(normal(static_cast<size_t>(rows * c.in), 1.0f, 21)));
    auto w = to_f32(to_bf16(normal(static_cast<size_t>(G * stride), 0.1f, 22)));
    const std::vector<double> want = reference(x, w, stride, offsets, c.in, c.out);
    double scale = 0;
    for (double v : want) scale = std::max(scale, std::fabs(v));

    auto dx = upload(to_bf16(x), st.get());
    auto dw = upload(to_bf16(w), st.get());
    auto doff = upload(offsets, st.get());
    auto dtiles = upload(tiles, st.get());
    const cuda::RowGroups groups{doff.as<int64_t>(), dtiles.as<int32_t>(), G, rows, c.tile_rows};
    std::vector<float> want_f(want.begin(), want.end());

    // NaN first: a row or column no tile writes shows as a mismatch.
    const std::vector<float> nan_fill(static_cast<size_t>(rows * c.out), std::nanf(""));
    auto y32 = upload(nan_fill, st.get());
    cuda::grouped_linear(dx.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), stride, groups, c.in, c.out,
                         y32.as<float>(), st.get());
    // bf16 products are exact in fp32: only the order of the fp32 sums differs.
    expect_close(download<float>(y32, want_f.size(), st.get()), want_f, 1e-5 * scale, 1e-5, c.name + " (fp32 out)");

    auto y16 = upload(to_bf16(nan_fill), st.get());
    cuda::grouped_linear(dx.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), stride, groups, c.in, c.out,
                         y16.as<__nv_bfloat16>(), st.get());
    // One rounding to bf16 (2⁻⁸ relative) on top.
    expect_close(to_f32(download<__nv_bfloat16>(y16, want_f.size(), st.get())), want_f, 1e-5 * scale, 5e-3,
                 c.name + " (bf16 out)");
  }
}

// The offsets and tiles come from the device scan, as in the engine: counts → group_offsets →
// grouped_linear, with more tiles in the grid than the split needs (blocks past the last tile
// return) and every output row of every group written (the buffer starts as NaN).
TEST(GroupedGemm, RunsFromTheDeviceScan) {
  ABL_REQUIRE_GPU();
  cuda::Stream st;
  const std::vector<int32_t> counts = {3, 0, 0, 70, 16, 0, 1};
  const int64_t G = static_cast<int64_t>(counts.size()), in = 64, out = 48;
  const int64_t rows = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  std::vector<int64_t> offsets;
  std::vector<int32_t> tiles;
  const int64_t tile_rows = cuda::grouped_tile_rows(rows, G);
  host_offsets(counts, tile_rows, offsets, tiles);
  const auto x = to_f32(to_bf16(normal(static_cast<size_t>(rows * in), 1.0f, 31)));
  const auto w = to_f32(to_bf16(normal(static_cast<size_t>(G * out * in), 0.1f, 32)));
  const auto want = reference(x, w, out * in, offsets, in, out);

  auto dc = upload(counts, st.get());
  cuda::DeviceBuffer doff(static_cast<size_t>(G + 1) * 8), dtiles(static_cast<size_t>(G + 1) * 4);
  cuda::group_offsets(dc.as<int32_t>(), G, tile_rows, doff.as<int64_t>(), dtiles.as<int32_t>(), st.get());
  auto dx = upload(to_bf16(x), st.get());
  auto dw = upload(to_bf16(w), st.get());
  const std::vector<float> nan_fill(static_cast<size_t>(rows * out), std::nanf(""));
  auto dy = upload(nan_fill, st.get());
  cuda::grouped_linear(dx.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), out * in,
                       {doff.as<int64_t>(), dtiles.as<int32_t>(), G, rows, tile_rows}, in, out, dy.as<float>(),
                       st.get());
  expect_close(download<float>(dy, want.size(), st.get()), std::vector<float>(want.begin(), want.end()), 1e-4, 1e-5,
               "from the device scan");
}

}  // namespace
}  // namespace abl
