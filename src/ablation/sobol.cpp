// Sobol' points and the default search space. Our own construction: dimension 1 is the van der
// Corput sequence in base 2 (all m_k = 1); dimension j > 1 uses the (j−1)-th primitive polynomial
// over GF(2) in order of degree, with odd initial values m_k < 2^k (the values of Joe and Kuo's
// published table). Any odd m_k < 2^k makes every dimension a (0,1)-sequence; the polynomials being
// distinct and primitive makes each pair of dimensions a (t,2)-sequence with t = (deg_i − 1) +
// (deg_j − 1) (dimension 1 counting as degree 1). The tests check both.
#include "abl/ablation/search.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "abl/core/error.h"

namespace abl::ablation {

namespace {

// x^s + a_1 x^(s−1) + ... + a_(s−1) x + 1, with a = a_1 ... a_(s−1) read as a binary number.
struct Polynomial {
  int degree;
  uint32_t a;
  std::array<uint32_t, 6> m;  // initial direction integers m_1 .. m_degree
};

// Dimensions 2..16. Degree 6 (dimensions 14–16): x^6+x+1, x^6+x^4+x^3+x+1, x^6+x^5+1.
constexpr std::array<Polynomial, 15> kPolynomials = {{
    {1, 0, {1}},
    {2, 1, {1, 3}},
    {3, 1, {1, 3, 1}},
    {3, 2, {1, 1, 1}},
    {4, 1, {1, 1, 3, 3}},
    {4, 4, {1, 3, 5, 13}},
    {5, 2, {1, 1, 5, 5, 17}},
    {5, 4, {1, 1, 5, 5, 5}},
    {5, 7, {1, 1, 7, 11, 19}},
    {5, 11, {1, 1, 5, 1, 1}},
    {5, 13, {1, 1, 1, 3, 11}},
    {5, 14, {1, 3, 5, 5, 31}},
    {6, 1, {1, 3, 3, 9, 7, 49}},
    {6, 13, {1, 1, 1, 15, 21, 21}},
    {6, 16, {1, 3, 1, 13, 27, 49}},
}};

constexpr int kMaxDims = static_cast<int>(kPolynomials.size()) + 1;

double lerp(double lo, double hi, double t) { return lo + (hi - lo) * t; }
double clamp01(double x) { return std::isfinite(x) ? std::min(1.0, std::max(0.0, x)) : 0.5; }
// Where x lies in [lo, hi] as a fraction; the middle for an empty range.
double fraction(double x, double lo, double hi) { return hi > lo ? clamp01((x - lo) / (hi - lo)) : 0.5; }

struct Ranges {
  double last, dir_lo, dir_hi, pos_lo, pos_hi, dist_lo, dist_hi;
};

Ranges ranges(int64_t num_layers) {
  ABL_CHECK(num_layers >= 1, "the search space needs a model with at least one layer, got {}", num_layers);
  const double last = static_cast<double>(num_layers - 1);
  return {last, 0.4 * last, 0.9 * last, 0.6 * last, last, 1.0, std::max(0.6 * last, 1.0)};
}

constexpr double kAttnLo = 0.8, kAttnHi = 1.5, kMlpLo = -0.25, kMlpHi = 1.5;

}  // namespace

int64_t SearchSpace::dims() const { return search_scope ? 10 : 9; }

TrialParams SearchSpace::map(const std::vector<double>& u) const {
  const Ranges r = ranges(num_layers);
  ABL_CHECK(static_cast<int64_t>(u.size()) == dims(),
            "a point of the search space has {} coordinates, got {}", dims(), u.size());
  size_t k = 0;
  auto next = [&] { return clamp01(u[k++]); };
  TrialParams p;
  p.scope = search_scope && next() >= 0.5 ? DirectionScope::per_layer : DirectionScope::global;
  p.direction_index = lerp(r.dir_lo, r.dir_hi, next());
  for (size_t c = 0; c < 2; ++c) {
    ComponentParams& comp = p.comp[c];
    const double w = next();
    comp.max_weight = c == 0 ? lerp(kAttnLo, kAttnHi, w) : std::max(0.0, lerp(kMlpLo, kMlpHi, w));
    comp.max_weight_position = lerp(r.pos_lo, r.pos_hi, next());
    comp.min_weight = next() * comp.max_weight;
    comp.min_weight_distance = lerp(r.dist_lo, r.dist_hi, next());
  }
  return p;
}

std::vector<double> SearchSpace::unmap(const TrialParams& p) const {
  const Ranges r = ranges(num_layers);
  std::vector<double> u;
  u.reserve(static_cast<size_t>(dims()));
  if (search_scope) u.push_back(p.scope == DirectionScope::global ? 0.25 : 0.75);
  u.push_back(fraction(p.direction_index, r.dir_lo, r.dir_hi));
  for (size_t c = 0; c < 2; ++c) {
    const ComponentParams& k = p.comp[c];
    if (c == 0) {
      u.push_back(fraction(k.max_weight, kAttnLo, kAttnHi));
    } else {
      // Every u below the zero crossing maps to 0; a kernel in the middle of that stretch covers it.
      const double zero = fraction(0.0, kMlpLo, kMlpHi);
      u.push_back(k.max_weight > 0 ? fraction(k.max_weight, kMlpLo, kMlpHi) : 0.5 * zero);
    }
    u.push_back(fraction(k.max_weight_position, r.pos_lo, r.pos_hi));
    u.push_back(k.max_weight != 0 ? clamp01(k.min_weight / k.max_weight) : 0.5);
    u.push_back(fraction(k.min_weight_distance, r.dist_lo, r.dist_hi));
  }
  return u;
}

SearchSpace default_search_space(int64_t num_layers) {
  ranges(num_layers);  // validates
  SearchSpace s;
  s.num_layers = num_layers;
  return s;
}

Sobol::Sobol(int64_t dims, uint64_t seed) : dims_(dims) {
  ABL_CHECK(dims >= 1 && dims <= kMaxDims, "Sobol sequences are available in 1 to {} dimensions, not {}",
            kMaxDims, dims);
  v_.resize(static_cast<size_t>(dims));
  for (int k = 0; k < 32; ++k) v_[0][static_cast<size_t>(k)] = 1u << (31 - k);
  for (size_t j = 1; j < v_.size(); ++j) {
    const Polynomial& poly = kPolynomials[j - 1];
    const int s = poly.degree;
    // m_k for k > s by the recurrence m_k = 2a_1 m_(k−1) ⊕ 4a_2 m_(k−2) ⊕ ... ⊕ 2^s m_(k−s) ⊕ m_(k−s);
    // 64-bit because m_k < 2^k reaches 2^32.
    std::array<uint64_t, 33> m{};
    for (int k = 1; k <= s; ++k) m[static_cast<size_t>(k)] = poly.m[static_cast<size_t>(k - 1)];
    for (int k = s + 1; k <= 32; ++k) {
      uint64_t x = m[static_cast<size_t>(k - s)] ^ (m[static_cast<size_t>(k - s)] << s);
      for (int i = 1; i < s; ++i) {
        if ((poly.a >> (s - 1 - i)) & 1u) x ^= m[static_cast<size_t>(k - i)] << i;
      }
      m[static_cast<size_t>(k)] = x;
    }
    for (int k = 1; k <= 32; ++k) {
      v_[j][static_cast<size_t>(k - 1)] = static_cast<uint32_t>(m[static_cast<size_t>(k)] << (32 - k));
    }
  }
  shift_.assign(static_cast<size_t>(dims), 0u);
  if (seed != 0) {
    // The raw outputs of mt19937_64 are fixed by the standard, so the shift is the same everywhere.
    std::mt19937_64 rng(seed);
    for (auto& s : shift_) s = static_cast<uint32_t>(rng() >> 32);
  }
}

std::vector<double> Sobol::point(uint64_t index) const {
  ABL_CHECK(index < (uint64_t{1} << 32), "Sobol point {} is beyond the 2^32 points of the sequence", index);
  std::vector<double> x(static_cast<size_t>(dims_));
  for (size_t j = 0; j < x.size(); ++j) {
    uint32_t bits = shift_[j];
    for (int b = 0; b < 32; ++b) {
      if ((index >> b) & 1u) bits ^= v_[j][static_cast<size_t>(b)];
    }
    x[j] = std::ldexp(static_cast<double>(bits), -32);
  }
  return x;
}

std::vector<TrialParams> sobol_trials(const SearchSpace& space, uint64_t seed, int64_t first_index,
                                      int64_t count) {
  ABL_CHECK(first_index >= 0 && count >= 0, "invalid Sobol trial range: first {} count {}", first_index,
            count);
  const Sobol sobol(space.dims(), seed);
  std::vector<TrialParams> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    out.push_back(space.map(sobol.point(static_cast<uint64_t>(first_index + i + 1))));
  return out;
}

}  // namespace abl::ablation
