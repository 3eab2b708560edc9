// Symmetric winsorization of one residual vector (DESIGN.md §1.1): every component clamped to
// ±the q-quantile of |components|, the quantile linearly interpolated between order statistics
// as torch.quantile / numpy.quantile do; q >= 1 leaves the vector alone, q <= 0 is an error.
// Expected values are computed by hand in the comments (and agree with numpy.quantile).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "abl/ablation/winsorize.h"
#include "common/error_of.h"

using abl::ablation::winsorize;
using abl::testing::error_of;

namespace {

std::vector<float> winsorized(std::vector<float> x, double q) {
  winsorize(x.data(), static_cast<int64_t>(x.size()), q);
  return x;
}

}  // namespace

TEST(Winsorize, ClampsToTheInterpolatedQuantileOfAbsoluteValues) {
  // |x| sorted: 1 2 3 4 5 (n = 5, positions 0..4).
  const std::vector<float> x = {1, -2, 3, -4, 5};
  // q = 0.5: position 0.5·4 = 2 → bound 3, exactly an order statistic.
  EXPECT_EQ(winsorized(x, 0.5), (std::vector<float>{1, -2, 3, -3, 3}));
  // q = 0.6: position 2.4 → bound 3 + 0.4·(4 − 3) = 3.4 (numpy.quantile gives 3.4 too).
  const std::vector<float> y = winsorized(x, 0.6);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -2.0f);
  EXPECT_EQ(y[2], 3.0f);
  EXPECT_FLOAT_EQ(y[3], -3.4f);
  EXPECT_FLOAT_EQ(y[4], 3.4f);
  // q = 0.25: position 1 → bound 2; components inside ±2 keep their value and sign.
  EXPECT_EQ(winsorized(x, 0.25), (std::vector<float>{1, -2, 2, -2, 2}));
}

TEST(Winsorize, BoundIsSymmetricFromAbsoluteValuesNotSignedQuantiles) {
  // One huge negative outlier: |x| sorted 1 1 1 1 10; q = 0.75 → position 3 → bound 1. A signed
  // quantile would leave −10 alone (it is the minimum); the symmetric bound clamps it to −1.
  EXPECT_EQ(winsorized({-10, 1, 1, 1, 1}, 0.75), (std::vector<float>{-1, 1, 1, 1, 1}));
  // The same with the outlier positive, in another position: the result is the mirror image.
  EXPECT_EQ(winsorized({1, -1, 10, -1, 1}, 0.75), (std::vector<float>{1, -1, 1, -1, 1}));
}

TEST(Winsorize, QuantileOneOrAboveLeavesTheVectorUnchanged) {
  const std::vector<float> x = {1e30f, -3.5f, 0.0f, -1e-30f, 7.25f, -1e30f};
  EXPECT_EQ(winsorized(x, 1.0), x);
  EXPECT_EQ(winsorized(x, 1.5), x);  // "q >= 1 is off" (the CLI itself refuses q > 1)
  // Just below 1 the largest |x| is already the bound up to the interpolation: q = 1 − 1e-12
  // gives position 5 − 5e-12, between 1e30 and 1e30 → 1e30, so nothing moves either.
  EXPECT_EQ(winsorized(x, 1.0 - 1e-12), x);
}

TEST(Winsorize, TiesInAbsoluteValue) {
  // |x| sorted 1 2 2 2 2: q = 0.5 → position 2 → bound 2: the ties are the bound, nothing moves.
  EXPECT_EQ(winsorized({2, -2, 2, -2, 1}, 0.5), (std::vector<float>{2, -2, 2, -2, 1}));
  // q = 0.1 → position 0.4 → bound 1 + 0.4·(2 − 1) = 1.4: +2 and −2 are clamped alike.
  const std::vector<float> y = winsorized({2, -2, 2, -2, 1}, 0.1);
  EXPECT_FLOAT_EQ(y[0], 1.4f);
  EXPECT_FLOAT_EQ(y[1], -1.4f);
  EXPECT_FLOAT_EQ(y[2], 1.4f);
  EXPECT_FLOAT_EQ(y[3], -1.4f);
  EXPECT_EQ(y[4], 1.0f);
  // All components of equal magnitude: any q leaves them alone.
  EXPECT_EQ(winsorized({-3, 3, -3, 3}, 0.01), (std::vector<float>{-3, 3, -3, 3}));
}

TEST(Winsorize, SmallVectors) {
  // n = 1: the only order statistic is |x0| itself, for every q.
  EXPECT_EQ(winsorized({-4.5f}, 0.01), (std::vector<float>{-4.5f}));
  EXPECT_EQ(winsorized({4.5f}, 0.5), (std::vector<float>{4.5f}));
  // n = 2: |x| sorted 1 3; q = 0.5 → position 0.5 → bound 2.
  EXPECT_EQ(winsorized({-1, 3}, 0.5), (std::vector<float>{-1, 2}));
  EXPECT_EQ(winsorized({-3, 1}, 0.5), (std::vector<float>{-2, 1}));
  // n = 0: nothing to read or write (a null pointer is fine).
  EXPECT_EQ(error_of([] { winsorize(nullptr, 0, 0.5); }), "");
}

TEST(Winsorize, TouchesOnlyTheFirstNComponents) {
  // A (prompt, depth) slice of a larger buffer: the neighbours are neither read nor written.
  std::vector<float> buf = {100, 5, -1, 2, -3, 100, -100};
  winsorize(buf.data() + 1, 4, 0.5);  // |5 −1 2 −3| sorted 1 2 3 5: position 1.5 → bound 2.5
  EXPECT_EQ(buf, (std::vector<float>{100, 2.5f, -1, 2, -2.5f, 100, -100}));
}

TEST(Winsorize, InfiniteComponentsAreClampedToAFiniteBound) {
  // ±inf sort to the top of |x|; when both order statistics the bound interpolates between
  // are finite, so is the bound, and the infinities are clamped to it.
  const float inf = std::numeric_limits<float>::infinity();
  // |x| sorted 1 2 3 4 inf inf; q = 0.5 → position 2.5 → bound 3 + 0.5·(4 − 3) = 3.5.
  EXPECT_EQ(winsorized({inf, 1, -inf, -2, 3, -4}, 0.5), (std::vector<float>{3.5f, 1, -3.5f, -2, 3, -3.5f}));
}

TEST(Winsorize, QuantileOutsideTheRangeIsAnError) {
  std::vector<float> x = {1, -2, 3};
  for (const double q : {0.0, -0.5, std::numeric_limits<double>::quiet_NaN()}) {
    const std::string e = error_of([&] { winsorize(x.data(), 3, q); });
    EXPECT_NE(e.find("winsorize quantile must be in (0, 1]"), std::string::npos) << q << ": " << e;
    EXPECT_EQ(x, (std::vector<float>{1, -2, 3})) << "changed by the refused call with q = " << q;
  }
  EXPECT_NE(error_of([] { winsorize(nullptr, 0, 0.0); }).find("got 0"), std::string::npos);
}
