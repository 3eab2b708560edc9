// Refusal directions and their per-depth statistics (DESIGN.md §1.2): r_i = normalize(bad_mean_i −
// good_mean_i), projected = r_i with its component along normalize(good_mean_i) removed and
// renormalized; a zero row where the means are equal (up to rounding); norms, cosine(good, bad)
// and Cohen's d of the per-prompt projections checked against values computed by hand or, for
// the blocked read of a residuals file, independently in the test.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <mpi.h>

#include "abl/ablation/directions.h"
#include "abl/io/output_schema.h"
#include "common/error_of.h"
#include "common/temp_dir.h"

using namespace abl;
using abl::testing::error_of;
using abl::testing::TempDir;
using io::schema::PromptSet;

namespace {

constexpr double kTol = 1e-12;

std::vector<double> row(const io::schema::DirectionsData& d, int64_t i) {
  return {d.directions.begin() + i * d.hidden, d.directions.begin() + (i + 1) * d.hidden};
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t j = 0; j < got.size(); ++j) EXPECT_NEAR(got[j], want[j], tol) << what << " component " << j;
}

// residuals.h5 from (rows, depths, hidden) row-major residuals of each set, written serially.
std::string write_residuals(const TempDir& dir, const std::vector<float>& good, const std::vector<float>& bad,
                            int64_t depths, int64_t hidden, bool full) {
  const std::string path = dir.file("residuals.h5");
  io::schema::ResidualsMeta meta;
  meta.model = "synthetic:test";
  meta.architecture = "LlamaForCausalLM";
  const int64_t block = depths * hidden;
  const int64_t ng = static_cast<int64_t>(good.size()) / block, nb = static_cast<int64_t>(bad.size()) / block;
  io::schema::ResidualsWriter w(path, MPI_COMM_NULL, meta, ng, nb, depths, hidden, full);
  const std::vector<int64_t> tg(static_cast<size_t>(ng), 3), tb(static_cast<size_t>(nb), 4);
  w.write(PromptSet::good, 0, ng, good.data(), tg.data(), std::vector<std::string>(static_cast<size_t>(ng), "g"));
  w.write(PromptSet::bad, 0, nb, bad.data(), tb.data(), std::vector<std::string>(static_cast<size_t>(nb), "b"));
  w.commit();
  return path;
}

}  // namespace

TEST(DirectionsFromMeans, UnprojectedIsTheNormalizedDifferenceWithItsStatistics) {
  // Depth 0: g = (1,0,0), b = (1,3,4): b − g = (0,3,4), ‖·‖ = 5 → r = (0, 0.6, 0.8);
  //          ‖g‖ = 1, ‖b‖ = √26, cos = 1/√26.
  // Depth 1: g = (2,2,1), b = (0,2,1): b − g = (−2,0,0), ‖·‖ = 2 → r = (−1, 0, 0);
  //          ‖g‖ = 3, ‖b‖ = √5, cos = (0 + 4 + 1)/(3√5) = √5/3.
  const std::vector<double> g = {1, 0, 0, 2, 2, 1}, b = {1, 3, 4, 0, 2, 1};
  const io::schema::DirectionsData d = ablation::directions_from_means(g, b, 2, 3, false);
  EXPECT_EQ(d.depths, 2);
  EXPECT_EQ(d.hidden, 3);
  EXPECT_FALSE(d.projected);
  EXPECT_EQ(d.good_mean, g);
  EXPECT_EQ(d.bad_mean, b);
  expect_near(row(d, 0), {0, 0.6, 0.8}, kTol, "depth 0");
  expect_near(row(d, 1), {-1, 0, 0}, kTol, "depth 1");
  expect_near(d.good_norm, {1, 3}, kTol, "good_norm");
  expect_near(d.bad_norm, {std::sqrt(26.0), std::sqrt(5.0)}, kTol, "bad_norm");
  expect_near(d.direction_norm, {5, 2}, kTol, "direction_norm");
  expect_near(d.cosine_good_bad, {1 / std::sqrt(26.0), std::sqrt(5.0) / 3}, kTol, "cosine_good_bad");
  ASSERT_EQ(d.separation.size(), 2u);
  EXPECT_TRUE(std::isnan(d.separation[0]) && std::isnan(d.separation[1])) << "no residuals, no separation";
}

TEST(DirectionsFromMeans, ProjectedRemovesTheComponentAlongTheGoodMean) {
  // Depth 0: g = (2,0,0), b = (5,4,0): r = (0.6, 0.8, 0); minus its x component → (0, 0.8, 0) → (0,1,0).
  // Depth 1: g = (0,0,3), b = (1,1,3+√2): b − g = (1,1,√2), ‖·‖ = 2; minus z → (1,1,0)/√2.
  const double s2 = std::sqrt(2.0);
  const std::vector<double> g = {2, 0, 0, 0, 0, 3}, b = {5, 4, 0, 1, 1, 3 + s2};
  const io::schema::DirectionsData p = ablation::directions_from_means(g, b, 2, 3, true);
  const io::schema::DirectionsData u = ablation::directions_from_means(g, b, 2, 3, false);
  EXPECT_TRUE(p.projected);
  expect_near(row(p, 0), {0, 1, 0}, kTol, "projected depth 0");
  expect_near(row(p, 1), {1 / s2, 1 / s2, 0}, kTol, "projected depth 1");
  expect_near(row(u, 0), {0.6, 0.8, 0}, kTol, "plain depth 0");
  expect_near(row(u, 1), {0.5, 0.5, s2 / 2}, kTol, "plain depth 1");
  // The statistics describe the means, not the projected direction: the same in both variants.
  expect_near(p.direction_norm, {5, 2}, kTol, "direction_norm (before projection)");
  EXPECT_EQ(p.direction_norm, u.direction_norm);
  EXPECT_EQ(p.good_norm, u.good_norm);
  EXPECT_EQ(p.bad_norm, u.bad_norm);
  // cos: depth 0 g·b = 10, ‖b‖ = √41; depth 1 g·b = 3(3 + √2), ‖b‖² = 1 + 1 + (3 + √2)² = 13 + 6√2.
  expect_near(p.cosine_good_bad, {10 / (2 * std::sqrt(41.0)), (9 + 3 * s2) / (3 * std::sqrt(13 + 6 * s2))}, kTol,
              "cosine_good_bad");
}

TEST(DirectionsFromMeans, RowsAreUnitOrthogonalToTheGoodMeanAndPointTowardsBad) {
  // Generic means (no hand-picked zeros): every row has norm 1; projected rows are orthogonal to
  // good_mean; the plain direction has positive projection on bad − good (= ‖bad − good‖), and
  // swapping the classes negates it.
  const int64_t D = 3, H = 5;
  std::vector<double> g(D * H), b(D * H);
  for (int64_t k = 0; k < D * H; ++k) {
    g[static_cast<size_t>(k)] = std::sin(0.7 * static_cast<double>(k) + 0.3) * 2.0;
    b[static_cast<size_t>(k)] = std::cos(1.3 * static_cast<double>(k)) * 1.5 + 0.25;
  }
  const auto plain = ablation::directions_from_means(g, b, D, H, false);
  const auto swapped = ablation::directions_from_means(b, g, D, H, false);
  const auto proj = ablation::directions_from_means(g, b, D, H, true);
  for (int64_t i = 0; i < D; ++i) {
    double n_plain = 0, n_proj = 0, dot_good = 0, dot_diff = 0;
    for (int64_t j = 0; j < H; ++j) {
      const auto k = static_cast<size_t>(i * H + j);
      n_plain += plain.directions[k] * plain.directions[k];
      n_proj += proj.directions[k] * proj.directions[k];
      dot_good += proj.directions[k] * g[k];
      dot_diff += plain.directions[k] * (b[k] - g[k]);
      EXPECT_NEAR(swapped.directions[k], -plain.directions[k], kTol) << "depth " << i << " component " << j;
    }
    EXPECT_NEAR(n_plain, 1.0, kTol) << "depth " << i;
    EXPECT_NEAR(n_proj, 1.0, kTol) << "depth " << i;
    EXPECT_NEAR(dot_good, 0.0, kTol) << "depth " << i;
    EXPECT_NEAR(dot_diff, plain.direction_norm[static_cast<size_t>(i)], kTol) << "depth " << i;
    EXPECT_GT(dot_diff, 0.0) << "depth " << i;
  }
}

TEST(DirectionsFromMeans, EqualMeansGiveAZeroRowUpToARelativeThreshold) {
  // Depth 0: equal means → zero row, cos 1.
  // Depth 1: both means zero → zero row, cos NaN (no angle between zero vectors).
  // Depth 2: ‖b − g‖ = 1e-4 against means of norm 1e6 (relative 1e-10 < 1e-9): rounding, zero row.
  // Depth 3: the same difference 1e-4 against means of norm 1: a real direction (0, 1).
  const std::vector<double> g = {1, 2, 0, 0, 1e6, 0, 1, 0};
  const std::vector<double> b = {1, 2, 0, 0, 1e6, 1e-4, 1, 1e-4};
  for (const bool projected : {false, true}) {
    const auto d = ablation::directions_from_means(g, b, 4, 2, projected);
    const std::string v = projected ? "projected" : "plain";
    EXPECT_EQ(row(d, 0), (std::vector<double>{0, 0})) << v;
    EXPECT_EQ(row(d, 1), (std::vector<double>{0, 0})) << v;
    EXPECT_EQ(row(d, 2), (std::vector<double>{0, 0})) << v;
    expect_near(row(d, 3), {0, 1}, kTol, v + " depth 3");
    EXPECT_EQ(d.direction_norm[0], 0.0) << v;
    EXPECT_EQ(d.direction_norm[1], 0.0) << v;
    EXPECT_NEAR(d.direction_norm[2], 1e-4, 1e-12) << v;
    EXPECT_NEAR(d.cosine_good_bad[0], 1.0, kTol) << v;
    EXPECT_TRUE(std::isnan(d.cosine_good_bad[1])) << v;
  }
}

TEST(DirectionsFromMeans, ProjectionOfADifferenceAlongTheGoodMeanIsAZeroRow) {
  // b − g = (2, 0) is parallel to g = (1, 0): nothing is left after the projection → zero row
  // (the plain direction is (1, 0)). A zero good mean has no direction to remove: the projected
  // row is the plain one, normalize(b) = (0.6, 0.8), and the cosine is NaN.
  const auto p = ablation::directions_from_means({1, 0, 0, 0}, {3, 0, 3, 4}, 2, 2, true);
  const auto u = ablation::directions_from_means({1, 0, 0, 0}, {3, 0, 3, 4}, 2, 2, false);
  EXPECT_EQ(row(p, 0), (std::vector<double>{0, 0}));
  expect_near(row(u, 0), {1, 0}, kTol, "plain depth 0");
  EXPECT_NEAR(p.direction_norm[0], 2.0, kTol);
  EXPECT_NEAR(p.cosine_good_bad[0], 1.0, kTol);
  expect_near(row(p, 1), {0.6, 0.8}, kTol, "projected depth 1");
  expect_near(row(u, 1), {0.6, 0.8}, kTol, "plain depth 1");
  EXPECT_TRUE(std::isnan(p.cosine_good_bad[1]));
}

TEST(DirectionsFromMeans, NonFiniteMeansGiveAZeroRowAndAreKept) {
  // A NaN or an infinity in a mean makes ‖b − g‖ non-finite: the row is zero, never NaN, and
  // the means are kept as given so that the caller (the directions phase) can name the problem.
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> g = {nan, 0, 0, 0, 1, 0}, b = {1, 1, inf, 0, 1, 2};
  for (const bool projected : {false, true}) {
    const auto d = ablation::directions_from_means(g, b, 3, 2, projected);
    EXPECT_EQ(row(d, 0), (std::vector<double>{0, 0})) << projected;
    EXPECT_EQ(row(d, 1), (std::vector<double>{0, 0})) << projected;
    expect_near(row(d, 2), {0, 1}, kTol, "finite depth 2");
    EXPECT_TRUE(std::isnan(d.good_mean[0]));
    EXPECT_TRUE(std::isinf(d.bad_mean[2]));
  }
}

TEST(DirectionsFromMeans, ShapeMismatchIsAnErrorNamingTheSizes) {
  const std::vector<double> six(6, 1.0), five(5, 1.0);
  std::string e = error_of([&] { ablation::directions_from_means(five, six, 2, 3, true); });
  EXPECT_NE(e.find("class means of 5 and 6 values for 2 depths of 3"), std::string::npos) << e;
  e = error_of([&] { ablation::directions_from_means(six, six, 3, 3, false); });
  EXPECT_NE(e.find("class means of 6 and 6 values for 3 depths of 3"), std::string::npos) << e;
  e = error_of([&] { ablation::directions_from_means({}, {}, 0, 3, false); });
  EXPECT_NE(e.find("for 0 depths of 3"), std::string::npos) << e;
  e = error_of([&] { ablation::directions_from_means({}, {}, 2, 0, false); });
  EXPECT_NE(e.find("for 2 depths of 0"), std::string::npos) << e;
  EXPECT_EQ(error_of([&] { ablation::directions_from_means(six, six, 2, 3, false); }), "");
}

TEST(DirectionRows, AreTheDirectionsAsFloatRows) {
  const auto d = ablation::directions_from_means({1, 0, 0, 2, 2, 1}, {1, 3, 4, 0, 2, 1}, 2, 3, false);
  const std::vector<std::vector<float>> rows = ablation::direction_rows(d);
  ASSERT_EQ(rows.size(), 2u);
  for (int64_t i = 0; i < 2; ++i) {
    ASSERT_EQ(rows[static_cast<size_t>(i)].size(), 3u);
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(rows[static_cast<size_t>(i)][static_cast<size_t>(j)],
                static_cast<float>(d.directions[static_cast<size_t>(i * 3 + j)]));
  }
  EXPECT_FLOAT_EQ(rows[0][2], 0.8f);
  EXPECT_FLOAT_EQ(rows[1][0], -1.0f);
}

TEST(DirectionsTable, OneLinePerDepthAndTheSeparationNote) {
  auto d = ablation::directions_from_means({1, 0, 0, 2, 2, 1}, {1, 3, 4, 0, 2, 1}, 2, 3, false);
  std::string t = ablation::directions_table(d);
  EXPECT_NE(t.find("depth"), std::string::npos) << t;
  EXPECT_NE(t.find("separation"), std::string::npos) << t;
  // Depth 1: ‖good‖ 3, ‖bad‖ √5 = 2.236, ‖bad − good‖ 2, cos √5/3 = 0.7454, no separation.
  EXPECT_NE(t.find("    1           3       2.236           2    0.7454          -\n"), std::string::npos) << t;
  EXPECT_NE(t.find("run residuals without --no-full-residuals"), std::string::npos) << t;
  d.separation = {2.5, std::numeric_limits<double>::quiet_NaN()};
  t = ablation::directions_table(d);
  EXPECT_NE(t.find("2.500\n"), std::string::npos) << t;
  EXPECT_EQ(t.find("--no-full-residuals"), std::string::npos) << t;
}

TEST(ComputeDirections, SeparationIsCohensDOfTheProjectionsByHand) {
  // D = 2, H = 2, plain directions.
  // Depth 0: good (0,0) (2,0) → mean (1,0); bad (4,0) (6,0) (8,0) → mean (6,0); r = (1,0).
  //   Projections: good 0 2 (mean 1, sample variance 2), bad 4 6 8 (mean 6, variance 4):
  //   d = (6 − 1) / √((2 + 4)/2) = 5/√3.
  // Depth 1: good (3,1) (−1,1) → mean (1,1); bad (1,2) (1,4) (1,6) → mean (1,4); r = (0,1).
  //   Projections: good 1 1 (variance 0), bad 2 4 6 (variance 4): d = (4 − 1)/√2.
  const std::vector<float> good = {0, 0, 3, 1, 2, 0, -1, 1};
  const std::vector<float> bad = {4, 0, 1, 2, 6, 0, 1, 4, 8, 0, 1, 6};
  TempDir dir;
  const io::schema::ResidualsReader res(write_residuals(dir, good, bad, 2, 2, true));
  const auto d = ablation::compute_directions(res, false);
  EXPECT_EQ(d.model, "synthetic:test");
  EXPECT_EQ(d.architecture, "LlamaForCausalLM");
  EXPECT_EQ(d.residuals_created, res.meta().created);
  EXPECT_FALSE(d.residuals_created.empty());
  EXPECT_EQ(d.good_mean, (std::vector<double>{1, 0, 1, 1}));
  EXPECT_EQ(d.bad_mean, (std::vector<double>{6, 0, 1, 4}));
  expect_near(row(d, 0), {1, 0}, kTol, "depth 0");
  expect_near(row(d, 1), {0, 1}, kTol, "depth 1");
  expect_near(d.direction_norm, {5, 3}, kTol, "direction_norm");
  expect_near(d.separation, {5 / std::sqrt(3.0), 3 / std::sqrt(2.0)}, 1e-12, "separation");
}

TEST(ComputeDirections, SeparationAcrossReadBlocksMatchesAnIndependentTwoPassComputation) {
  // 70 good and 130 bad prompts (more than one 64-row block each), projected directions.
  const int64_t D = 3, H = 4, NG = 70, NB = 130;
  auto make = [&](int64_t n, double shift, double phase) {
    std::vector<float> x(static_cast<size_t>(n * D * H));
    for (int64_t p = 0; p < n; ++p)
      for (int64_t i = 0; i < D; ++i)
        for (int64_t j = 0; j < H; ++j)
          x[static_cast<size_t>((p * D + i) * H + j)] = static_cast<float>(
              std::sin(phase + 1.7 * static_cast<double>(p) + 0.9 * static_cast<double>(j) + static_cast<double>(i)) +
              (j == i ? shift * static_cast<double>(i + 1) : 0.0) + 0.5);
    return x;
  };
  const std::vector<float> good = make(NG, 0.0, 0.1), bad = make(NB, 1.5, 2.0);
  TempDir dir;
  const io::schema::ResidualsReader res(write_residuals(dir, good, bad, D, H, true));
  const auto d = ablation::compute_directions(res, true);
  ASSERT_EQ(d.separation.size(), static_cast<size_t>(D));

  for (int64_t i = 0; i < D; ++i) {
    // Class means, the projected direction, then the two-pass sample variances of the projections.
    std::vector<double> mg(H, 0.0), mb(H, 0.0);
    for (int64_t p = 0; p < NG; ++p)
      for (int64_t j = 0; j < H; ++j) mg[static_cast<size_t>(j)] += good[static_cast<size_t>((p * D + i) * H + j)];
    for (int64_t p = 0; p < NB; ++p)
      for (int64_t j = 0; j < H; ++j) mb[static_cast<size_t>(j)] += bad[static_cast<size_t>((p * D + i) * H + j)];
    for (auto& v : mg) v /= NG;
    for (auto& v : mb) v /= NB;
    std::vector<double> r(H);
    double rn = 0, gn = 0;
    for (int64_t j = 0; j < H; ++j) {
      const auto k = static_cast<size_t>(j);
      r[k] = mb[k] - mg[k];
      rn += r[k] * r[k];
      gn += mg[k] * mg[k];
    }
    rn = std::sqrt(rn);
    gn = std::sqrt(gn);
    double c = 0;
    for (int64_t j = 0; j < H; ++j) c += r[static_cast<size_t>(j)] / rn * mg[static_cast<size_t>(j)] / gn;
    double pn = 0;
    for (int64_t j = 0; j < H; ++j) {
      const auto k = static_cast<size_t>(j);
      r[k] = r[k] / rn - c * mg[k] / gn;
      pn += r[k] * r[k];
    }
    for (auto& v : r) v /= std::sqrt(pn);
    expect_near(row(d, i), r, 1e-9, "projected direction of depth " + std::to_string(i));

    auto stats = [&](const std::vector<float>& x, int64_t n, double& mean, double& var) {
      std::vector<double> proj(static_cast<size_t>(n), 0.0);
      for (int64_t p = 0; p < n; ++p)
        for (int64_t j = 0; j < H; ++j)
          proj[static_cast<size_t>(p)] += x[static_cast<size_t>((p * D + i) * H + j)] * r[static_cast<size_t>(j)];
      mean = 0;
      for (double v : proj) mean += v;
      mean /= static_cast<double>(n);
      var = 0;
      for (double v : proj) var += (v - mean) * (v - mean);
      var /= static_cast<double>(n - 1);
    };
    double m_good, v_good, m_bad, v_bad;
    stats(good, NG, m_good, v_good);
    stats(bad, NB, m_bad, v_bad);
    const double want = (m_bad - m_good) / std::sqrt((v_good + v_bad) / 2);
    EXPECT_GT(want, 0.5) << "the test data should separate the classes at depth " << i;
    EXPECT_NEAR(d.separation[static_cast<size_t>(i)], want, 1e-8 * std::fabs(want)) << "depth " << i;
  }
}

TEST(ComputeDirections, WithoutFullResidualsOrSpreadTheSeparationIsNaN) {
  // Means only (--no-full-residuals): the directions from the means, separation NaN everywhere.
  const std::vector<float> good = {0, 0, 2, 0}, bad = {4, 0, 6, 0, 8, 0};
  {
    TempDir dir;
    const io::schema::ResidualsReader res(write_residuals(dir, good, bad, 1, 2, false));
    ASSERT_FALSE(res.has_full_residuals());
    const auto d = ablation::compute_directions(res, false);
    expect_near(row(d, 0), {1, 0}, kTol, "means only");
    EXPECT_TRUE(std::isnan(d.separation[0]));
    EXPECT_NE(ablation::directions_table(d).find("--no-full-residuals"), std::string::npos);
  }
  // One prompt per class: no variance to pool, so no Cohen's d (NaN, not ±inf).
  {
    TempDir dir;
    const io::schema::ResidualsReader res(write_residuals(dir, {1, 0}, {3, 0}, 1, 2, true));
    const auto d = ablation::compute_directions(res, false);
    expect_near(row(d, 0), {1, 0}, kTol, "one prompt each");
    EXPECT_TRUE(std::isnan(d.separation[0])) << d.separation[0];
  }
  // A zero row (equal means) projects everything to 0: NaN as well.
  {
    TempDir dir;
    const io::schema::ResidualsReader res(write_residuals(dir, {1, 0, 3, 0}, {2, 0, 2, 0}, 1, 2, true));
    const auto d = ablation::compute_directions(res, false);
    EXPECT_EQ(row(d, 0), (std::vector<double>{0, 0}));
    EXPECT_TRUE(std::isnan(d.separation[0])) << d.separation[0];
  }
}
