// Trial search: the Sobol construction has the stratification every valid Sobol' sequence has,
// the search space maps the unit cube onto DESIGN.md §1.5's ranges, the Pareto front, and TPE beats
// more Sobol points on a synthetic two-objective problem while staying deterministic and inside
// the domain (grid files: test_grid_file.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "abl/ablation/search.h"
#include "abl/core/error.h"

using namespace abl;
using namespace abl::ablation;

namespace {

constexpr int kDims = 16;

// Degree of each dimension's polynomial (dimension 1: x, degree 1), for the t-value of a pair.
constexpr int kDegree[kDims] = {1, 1, 2, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5, 6, 6, 6};

uint32_t bits(double x) { return static_cast<uint32_t>(std::ldexp(x, 32)); }

std::vector<std::vector<uint32_t>> sobol_bits(uint64_t seed, uint64_t n, uint64_t first = 0) {
  const Sobol s(kDims, seed);
  std::vector<std::vector<uint32_t>> pts;
  for (uint64_t i = 0; i < n; ++i) {
    std::vector<uint32_t> p;
    for (double x : s.point(first + i)) p.push_back(bits(x));
    pts.push_back(p);
  }
  return pts;
}

// Every block of 2^k consecutive points starting at a multiple of 2^k puts one point in each
// interval [j/2^k, (j+1)/2^k) of every dimension.
void expect_stratified(uint64_t seed) {
  const auto pts = sobol_bits(seed, 1u << 9);
  for (int k = 0; k <= 8; ++k) {
    const uint64_t n = uint64_t{1} << k;
    for (uint64_t start = 0; start + n <= pts.size(); start += n) {
      for (int d = 0; d < kDims; ++d) {
        std::vector<int> hits(n, 0);
        for (uint64_t i = start; i < start + n; ++i) ++hits[k == 0 ? 0 : pts[i][d] >> (32 - k)];
        for (uint64_t j = 0; j < n; ++j) {
          ASSERT_EQ(hits[j], 1) << "seed " << seed << " dim " << d + 1 << " k " << k << " start " << start;
        }
      }
    }
  }
}

// The first 2^m points of dimensions (i, j) form a (t, m, 2)-net: every box 2^-a × 2^-b with
// a + b = m − t holds exactly 2^t points.
void expect_pair_nets(uint64_t seed, int max_log2) {
  const auto pts = sobol_bits(seed, uint64_t{1} << max_log2);
  for (int i = 0; i < kDims; ++i) {
    for (int j = i + 1; j < kDims; ++j) {
      const int t = (kDegree[i] - 1) + (kDegree[j] - 1);
      for (int m = t; m <= std::min(max_log2, t + 8); ++m) {
        for (int a = 0; a <= m - t; ++a) {
          const int b = m - t - a;
          std::vector<int> hits(size_t{1} << (m - t), 0);
          for (uint64_t p = 0; p < (uint64_t{1} << m); ++p) {
            const uint64_t x = a == 0 ? 0 : pts[p][i] >> (32 - a);
            const uint64_t y = b == 0 ? 0 : pts[p][j] >> (32 - b);
            ++hits[(x << b) | y];
          }
          for (int h : hits) {
            ASSERT_EQ(h, 1 << t) << "seed " << seed << " dims " << i + 1 << "," << j + 1 << " m " << m
                                 << " box 2^-" << a << " x 2^-" << b;
          }
        }
      }
    }
  }
}

bool same(const TrialParams& a, const TrialParams& b) { return param_values(a) == param_values(b); }


// Every value map() can produce, for a model of L layers.
void expect_in_domain(const TrialParams& p, int64_t L, bool scope = true) {
  const double last = static_cast<double>(L - 1);
  if (!scope) {
    EXPECT_EQ(p.scope, DirectionScope::global);
  }
  EXPECT_GE(p.direction_index, 0.4 * last);
  EXPECT_LE(p.direction_index, 0.9 * last);
  EXPECT_LE(p.direction_index, last);
  EXPECT_GE(p.comp[0].max_weight, 0.8);
  EXPECT_LE(p.comp[0].max_weight, 1.5);
  EXPECT_GE(p.comp[1].max_weight, 0.0);
  EXPECT_LE(p.comp[1].max_weight, 1.5);
  for (const ComponentParams& c : p.comp) {
    EXPECT_GE(c.max_weight_position, 0.6 * last);
    EXPECT_LE(c.max_weight_position, last);
    EXPECT_GE(c.min_weight, 0.0);
    EXPECT_LE(c.min_weight, c.max_weight);
    EXPECT_GE(c.min_weight_distance, 1.0);
    EXPECT_LE(c.min_weight_distance, std::max(0.6 * last, 1.0));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Sobol

TEST(Sobol, UnshiftedFirstPointIsZeroAndShiftMovesIt) {
  for (double x : Sobol(kDims, 0).point(0)) EXPECT_EQ(x, 0.0);
  const auto a = Sobol(kDims, 1).point(0), b = Sobol(kDims, 2).point(0);
  EXPECT_NE(a, b);
  EXPECT_NE(a, std::vector<double>(kDims, 0.0));
  EXPECT_EQ(Sobol(kDims, 1).point(77), Sobol(kDims, 1).point(77));
  // The shift is an XOR: the same on every point.
  const auto u0 = sobol_bits(0, 8), u5 = sobol_bits(5, 8);
  for (size_t i = 1; i < 8; ++i) {
    for (int d = 0; d < kDims; ++d) EXPECT_EQ(u0[i][d] ^ u5[i][d], u0[0][d] ^ u5[0][d]);
  }
}

TEST(Sobol, FirstDimensionIsVanDerCorput) {
  const Sobol s(3, 0);
  const double expect[] = {0, 0.5, 0.25, 0.75, 0.125, 0.625, 0.375, 0.875};
  for (uint64_t i = 0; i < 8; ++i) EXPECT_EQ(s.point(i)[0], expect[i]);
}

TEST(Sobol, EveryDimensionStratifiesPowersOfTwo) {
  expect_stratified(0);
  expect_stratified(12345);
}

TEST(Sobol, PointsAreDistinct) {
  const auto pts = sobol_bits(0, 4096);
  std::set<std::vector<uint32_t>> seen(pts.begin(), pts.end());
  EXPECT_EQ(seen.size(), pts.size());
  // Each coordinate alone too: 2^12 points of a (0,1)-sequence fill 2^12 distinct intervals.
  for (int d = 0; d < kDims; ++d) {
    std::set<uint32_t> col;
    for (const auto& p : pts) col.insert(p[d]);
    EXPECT_EQ(col.size(), pts.size()) << "dim " << d + 1;
  }
}

TEST(Sobol, FirstTwoDimensionsFillEverySquareCell) {
  const auto pts = sobol_bits(0, 256);
  for (int m = 1; m <= 4; ++m) {
    std::vector<int> hits(size_t{1} << (2 * m), 0);
    for (uint64_t p = 0; p < (uint64_t{1} << (2 * m)); ++p) {
      ++hits[((pts[p][0] >> (32 - m)) << m) | (pts[p][1] >> (32 - m))];
    }
    for (int h : hits) EXPECT_EQ(h, 1) << "m " << m;
  }
}

TEST(Sobol, PairsOfDimensionsAreNetsWithTheirTValue) {
  expect_pair_nets(0, 14);
  expect_pair_nets(99, 12);  // a digital shift permutes the boxes, so the nets survive it
}

TEST(Sobol, RejectsUnsupportedDimensions) {
  EXPECT_THROW(Sobol(0, 0), Error);
  EXPECT_THROW(Sobol(17, 0), Error);
  EXPECT_NO_THROW(Sobol(16, 0));
  EXPECT_THROW(Sobol(2, 0).point(uint64_t{1} << 32), Error);
}

// ---------------------------------------------------------------------------------------------
// Search space

TEST(SearchSpace, MapsTheUnitCubeOntoTheDesignRanges) {
  const SearchSpace s = default_search_space(33);  // last = 32
  ASSERT_EQ(s.dims(), 10);
  const TrialParams lo = s.map(std::vector<double>(10, 0.0));
  EXPECT_EQ(lo.scope, DirectionScope::global);
  EXPECT_DOUBLE_EQ(lo.direction_index, 0.4 * 32);
  EXPECT_DOUBLE_EQ(lo.comp[0].max_weight, 0.8);
  EXPECT_DOUBLE_EQ(lo.comp[1].max_weight, 0.0);  // −0.25 clamped
  EXPECT_DOUBLE_EQ(lo.comp[0].max_weight_position, 0.6 * 32);
  EXPECT_DOUBLE_EQ(lo.comp[0].min_weight, 0.0);
  EXPECT_DOUBLE_EQ(lo.comp[0].min_weight_distance, 1.0);
  const TrialParams hi = s.map(std::vector<double>(10, 1.0));
  EXPECT_EQ(hi.scope, DirectionScope::per_layer);
  EXPECT_DOUBLE_EQ(hi.direction_index, 0.9 * 32);
  EXPECT_DOUBLE_EQ(hi.comp[0].max_weight, 1.5);
  EXPECT_DOUBLE_EQ(hi.comp[1].max_weight, 1.5);
  EXPECT_DOUBLE_EQ(hi.comp[1].max_weight_position, 32.0);
  EXPECT_DOUBLE_EQ(hi.comp[1].min_weight, 1.5);
  EXPECT_DOUBLE_EQ(hi.comp[1].min_weight_distance, 0.6 * 32);
  // Order of the coordinates: scope, direction_index, attn ×4, mlp ×4.
  const TrialParams p = s.map({0.49, 0.5, 0.5, 0.5, 0.5, 0.5, 0.6, 0.25, 0.5, 0.0});
  EXPECT_EQ(p.scope, DirectionScope::global);
  EXPECT_DOUBLE_EQ(p.direction_index, 0.65 * 32);
  EXPECT_DOUBLE_EQ(p.comp[0].min_weight, 0.5 * p.comp[0].max_weight);
  EXPECT_DOUBLE_EQ(p.comp[1].max_weight, -0.25 + 0.6 * 1.75);
  EXPECT_DOUBLE_EQ(p.comp[1].max_weight_position, 0.7 * 32);
  EXPECT_DOUBLE_EQ(p.comp[1].min_weight_distance, 1.0);
  EXPECT_THROW(s.map(std::vector<double>(9, 0.5)), Error);

  SearchSpace g = s;
  g.search_scope = false;
  ASSERT_EQ(g.dims(), 9);
  EXPECT_EQ(g.map(std::vector<double>(9, 1.0)).scope, DirectionScope::global);
  EXPECT_DOUBLE_EQ(g.map(std::vector<double>(9, 1.0)).direction_index, 0.9 * 32);
}

TEST(SearchSpace, SmallModelsStayInsideTheirLayers) {
  EXPECT_THROW(default_search_space(0), Error);
  for (int64_t L : {1, 2, 3}) {
    const SearchSpace s = default_search_space(L);
    for (const TrialParams& p : sobol_trials(s, 3, 0, 64)) {
      expect_in_domain(p, L);
      EXPECT_GE(p.direction_index, 0.0);
      EXPECT_LE(p.direction_index, static_cast<double>(L - 1));
      EXPECT_GE(p.comp[0].min_weight_distance, 1.0);  // L = 1: the range [1, max(0, 1)] is the point 1
    }
  }
  // The trials are usable: build_trial_table accepts their direction indices.
  const int64_t L = 2;
  std::vector<std::vector<float>> r(L + 1, std::vector<float>{1.0f, 0.0f});
  EXPECT_NO_THROW(build_trial_table(sobol_trials(default_search_space(L), 1, 0, 16), r, engine::RowNorm::full));
}

TEST(SearchSpace, UnmapInvertsMap) {
  const SearchSpace s = default_search_space(28);
  const Sobol sobol(s.dims(), 4);
  for (uint64_t i = 1; i < 200; ++i) {
    const std::vector<double> u = sobol.point(i);
    const TrialParams p = s.map(u);
    const TrialParams q = s.map(s.unmap(p));
    const auto a = param_values(p), b = param_values(q);
    for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 1e-12) << kParamNames[k];
    const std::vector<double> v = s.unmap(p);
    for (size_t k = 1; k < u.size(); ++k) {
      if (k == 6 && p.comp[1].max_weight == 0) continue;  // clamped mlp weight: many-to-one
      if (k == 8 && p.comp[1].max_weight == 0) continue;  // f of a zero weight
      EXPECT_NEAR(u[k], v[k], 1e-12) << "coordinate " << k;
    }
  }
}

TEST(SearchSpace, SobolTrialsSkipTheCornerAndContinue) {
  const SearchSpace s = default_search_space(16);
  const auto all = sobol_trials(s, 7, 0, 12);
  const Sobol sobol(s.dims(), 7);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_TRUE(same(all[i], s.map(sobol.point(i + 1))));
  const auto tail = sobol_trials(s, 7, 5, 7);
  for (size_t i = 0; i < tail.size(); ++i) EXPECT_TRUE(same(tail[i], all[5 + i]));
  EXPECT_FALSE(same(sobol_trials(s, 0, 0, 1)[0], s.map(std::vector<double>(10, 0.0))));
  EXPECT_FALSE(same(sobol_trials(s, 1, 0, 1)[0], sobol_trials(s, 2, 0, 1)[0]));
}

// ---------------------------------------------------------------------------------------------
// Pareto front

TEST(Pareto, NonDominatedSortedFirstDuplicateKept) {
  const std::vector<Scores> s = {
      {10, 0.5},            // 0 dominated by 2
      {3, 2.0},             // 1 front
      {5, 0.4},             // 2 front
      {3, 2.0},             // 3 duplicate of 1: dropped
      {0, 9.0},             // 4 front
      {5, 0.4},             // 5 duplicate of 2: dropped
      {3, 2.5},             // 6 dominated by 1 (equal refusals, larger KL)
      {20, 0.1},            // 7 front
      {std::nan(""), 0.0},  // 8 NaN: never on the front
      {21, 0.1},            // 9 dominated by 7
  };
  EXPECT_EQ(pareto_front(s), (std::vector<size_t>{4, 1, 2, 7}));
  EXPECT_TRUE(pareto_front({}).empty());
  EXPECT_EQ(pareto_front({{1, 1}, {1, 1}}), (std::vector<size_t>{0}));
}

TEST(Pareto, MatchesBruteForceOnRandomScores) {
  std::mt19937_64 rng(3);
  for (int rep = 0; rep < 50; ++rep) {
    std::vector<Scores> s(1 + rng() % 60);
    for (auto& x : s) x = {static_cast<double>(rng() % 8), static_cast<double>(rng() % 8) / 4.0};
    std::vector<size_t> expect;
    for (size_t i = 0; i < s.size(); ++i) {
      bool keep = true;
      for (size_t j = 0; j < s.size(); ++j) {
        const bool dom = s[j].refusals <= s[i].refusals && s[j].kl <= s[i].kl &&
                         (s[j].refusals < s[i].refusals || s[j].kl < s[i].kl);
        const bool dup = j < i && s[j].refusals == s[i].refusals && s[j].kl == s[i].kl;
        if (dom || dup) keep = false;
      }
      if (keep) expect.push_back(i);
    }
    std::sort(expect.begin(), expect.end(),
              [&](size_t a, size_t b) { return s[a].refusals < s[b].refusals; });
    EXPECT_EQ(pareto_front(s), expect);
  }
}

// ---------------------------------------------------------------------------------------------
// TPE

namespace {

// Two conflicting objectives of the continuous coordinates u: squared distances to a and to b. The
// Pareto set is the segment from a to b at global scope (per_layer costs both objectives 0.5).
double synthetic_a(size_t j) { return 0.3 + 0.02 * static_cast<double>(j); }
constexpr double kSyntheticB = 0.75;

Scores synthetic(const SearchSpace& s, const TrialParams& p) {
  const std::vector<double> u = s.unmap(p);
  double f1 = 0, f2 = 0;
  for (size_t j = 1; j < u.size(); ++j) {
    f1 += (u[j] - synthetic_a(j)) * (u[j] - synthetic_a(j));
    f2 += (u[j] - kSyntheticB) * (u[j] - kSyntheticB);
  }
  const double penalty = p.scope == DirectionScope::per_layer ? 0.5 : 0.0;
  return {f1 + penalty, f2 + penalty};
}

// Distance in the unit cube from p to the Pareto set (scope mismatch counts 0.5).
double distance_to_optimum(const SearchSpace& s, const TrialParams& p) {
  const std::vector<double> u = s.unmap(p);
  double best = INFINITY;
  for (int k = 0; k <= 200; ++k) {
    const double t = k / 200.0;
    double d = 0;
    for (size_t j = 1; j < u.size(); ++j) {
      const double c = synthetic_a(j) + t * (kSyntheticB - synthetic_a(j));
      d += (u[j] - c) * (u[j] - c);
    }
    best = std::min(best, d);
  }
  return std::sqrt(best) + (p.scope == DirectionScope::per_layer ? 0.5 : 0.0);
}

double hypervolume(const std::vector<Scores>& s, Scores ref) {
  const std::vector<size_t> front = pareto_front(s);
  double hv = 0, prev_kl = ref.kl;
  for (size_t i : front) {  // by refusals ascending, so KL descends
    if (s[i].refusals >= ref.refusals || s[i].kl >= prev_kl) continue;
    hv += (ref.refusals - s[i].refusals) * (prev_kl - s[i].kl);
    prev_kl = s[i].kl;
  }
  return hv;
}

}  // namespace

TEST(Tpe, FallsBackToSobolWithFewerThanTwoTrials) {
  const SearchSpace s = default_search_space(24);
  const auto none = tpe_propose(s, {}, {}, 5, 9);
  const auto sob = sobol_trials(s, 9, 0, 5);
  ASSERT_EQ(none.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(same(none[i], sob[i]));
  const auto one = tpe_propose(s, {sob[0]}, {{1, 1}}, 3, 9);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(same(one[i], sob[1 + i]));
  // A NaN score does not count as evaluated.
  const auto nan = tpe_propose(s, {sob[0], sob[1]}, {{1, 1}, {std::nan(""), 1}}, 2, 9);
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(same(nan[i], sob[2 + i]));
  EXPECT_THROW(tpe_propose(s, {sob[0]}, {}, 1, 9), Error);
}

TEST(Tpe, DeterministicInsideTheDomainAndSeedDependent) {
  for (bool scope : {true, false}) {
    for (int64_t L : {1, 2, 36}) {
      SearchSpace s = default_search_space(L);
      s.search_scope = scope;
      std::vector<TrialParams> done = sobol_trials(s, 1, 0, 24);
      std::vector<Scores> scores;
      for (const auto& p : done) scores.push_back(synthetic(s, p));
      scores[3] = {std::nan(""), 0};  // a failed trial is tolerated
      const auto a = tpe_propose(s, done, scores, 16, 42);
      const auto b = tpe_propose(s, done, scores, 16, 42);
      const auto c = tpe_propose(s, done, scores, 16, 43);
      ASSERT_EQ(a.size(), 16u);
      size_t differ = 0;
      std::set<std::array<double, kParamNames.size()>> distinct;
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_TRUE(same(a[i], b[i]));
        differ += !same(a[i], c[i]);
        expect_in_domain(a[i], L, scope);
        expect_in_domain(c[i], L, scope);
        distinct.insert(param_values(a[i]));
      }
      EXPECT_EQ(differ, a.size());
      EXPECT_EQ(distinct.size(), a.size());  // the batch is spread, no repeats
    }
  }
}

// 20 Sobol start-up trials, then 20 TPE trials in batches of 4 against 20 more Sobol trials, over
// 12 seeds. Measured when written: mean distance of the new trials to the Pareto set 0.69 (TPE) vs
// 1.06 (Sobol), mean hypervolume gap to the ideal front 1.25 vs 1.52, TPE better in 11 of 12 seeds.
TEST(Tpe, BeatsMoreSobolPointsOnASyntheticProblem) {
  const SearchSpace s = default_search_space(32);
  const Scores ref{2.0, 2.0};
  std::vector<Scores> ideal;
  for (int k = 0; k <= 2000; ++k) {
    std::vector<double> u(10, 0.25);
    for (size_t j = 1; j < u.size(); ++j) u[j] = synthetic_a(j) + k / 2000.0 * (kSyntheticB - synthetic_a(j));
    ideal.push_back(synthetic(s, s.map(u)));
  }
  const double hv_ideal = hypervolume(ideal, ref);
  const int seeds = 12;
  double gap_tpe = 0, gap_sobol = 0, dist_tpe = 0, dist_sobol = 0;
  int wins = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const auto useed = static_cast<uint64_t>(seed);
    std::vector<TrialParams> done = sobol_trials(s, useed, 0, 20);
    std::vector<Scores> scores;
    for (const auto& p : done) scores.push_back(synthetic(s, p));
    for (int round = 0; round < 5; ++round) {
      for (const auto& p : tpe_propose(s, done, scores, 4, useed)) {
        dist_tpe += distance_to_optimum(s, p) / (20.0 * seeds);
        done.push_back(p);
        scores.push_back(synthetic(s, p));
      }
    }
    std::vector<Scores> sobol;
    for (const auto& p : sobol_trials(s, useed, 0, 40)) sobol.push_back(synthetic(s, p));
    for (const auto& p : sobol_trials(s, useed, 20, 20))
      dist_sobol += distance_to_optimum(s, p) / (20.0 * seeds);
    const double t = hv_ideal - hypervolume(scores, ref), q = hv_ideal - hypervolume(sobol, ref);
    gap_tpe += t / seeds;
    gap_sobol += q / seeds;
    wins += t < q;
  }
  RecordProperty("wins", wins);
  RecordProperty("distance_tpe", std::to_string(dist_tpe));
  RecordProperty("distance_sobol", std::to_string(dist_sobol));
  RecordProperty("hypervolume_gap_tpe", std::to_string(gap_tpe));
  RecordProperty("hypervolume_gap_sobol", std::to_string(gap_sobol));
  EXPECT_LT(dist_tpe, 0.8 * dist_sobol);
  EXPECT_LT(gap_tpe, 0.9 * gap_sobol);
  EXPECT_GE(wins, 9) << "gap TPE " << gap_tpe << " Sobol " << gap_sobol;
}
