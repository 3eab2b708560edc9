// Pareto front and batched multi-objective TPE. The estimators are joint Parzen mixtures in the
// unit cube of the search space: one product kernel per observed trial (truncated Gaussians on the
// continuous coordinates, a two-way categorical on the scope) plus a uniform prior component, as in
// Optuna's multivariate TPE; the good trials weigh by their share of the good set's hypervolume (as
// in MOTPE), and each chosen proposal joins the bad set as a constant liar so a batch spreads out.
// The direction_index coordinate is conditional — it means nothing for a per_layer trial — so
// per_layer observations put a uniform factor on it and per_layer candidates leave it out of their
// density. All randomness is drawn from the raw outputs of mt19937_64 (the
// standard fixes them), so a proposal is the same on every rank and platform up to libm rounding.
#include "abl/ablation/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "abl/core/error.h"

namespace abl::ablation {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kWeightFloor = 0.1;

bool has_nan(const Scores& s) { return std::isnan(s.refusals) || std::isnan(s.kl); }

// Non-dominated sorting rank of every trial (0 = the front); trials with a NaN score get the rank
// after the last. Two objectives allow a sweep: in (refusals, KL) order every dominator of a trial
// comes before it, and "front k dominates p" is monotone in k, so a binary search places p.
std::vector<int64_t> nondominated_ranks(const std::vector<Scores>& s) {
  std::vector<size_t> order;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!has_nan(s[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return s[a].refusals < s[b].refusals || (s[a].refusals == s[b].refusals && s[a].kl < s[b].kl);
  });
  // Per front: the least KL in it and the least refusals among its trials with that KL.
  std::vector<double> front_kl, front_ref;
  std::vector<int64_t> rank(s.size(), -1);
  for (size_t i : order) {
    const auto dominated_by = [&](size_t k) {
      return front_kl[k] < s[i].kl || (front_kl[k] == s[i].kl && front_ref[k] < s[i].refusals);
    };
    size_t lo = 0, hi = front_kl.size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (dominated_by(mid)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo == front_kl.size()) {
      front_kl.push_back(s[i].kl);
      front_ref.push_back(s[i].refusals);
    } else if (s[i].kl < front_kl[lo]) {
      front_kl[lo] = s[i].kl;
      front_ref[lo] = s[i].refusals;
    }
    rank[i] = static_cast<int64_t>(lo);
  }
  for (auto& r : rank) {
    if (r < 0) r = static_cast<int64_t>(front_kl.size());
  }
  return rank;
}

// NSGA-II crowding distance of the trials `idx` within their front (larger: more isolated).
std::vector<double> crowding(const std::vector<Scores>& s, const std::vector<size_t>& idx) {
  std::vector<double> d(idx.size(), 0.0);
  for (int obj = 0; obj < 2; ++obj) {
    const auto f = [&](size_t k) { return obj == 0 ? s[idx[k]].refusals : s[idx[k]].kl; };
    std::vector<size_t> o(idx.size());
    std::iota(o.begin(), o.end(), size_t{0});
    std::stable_sort(o.begin(), o.end(), [&](size_t a, size_t b) { return f(a) < f(b); });
    const double range = f(o.back()) - f(o.front());
    d[o.front()] = d[o.back()] = std::numeric_limits<double>::infinity();
    if (!(range > 0) || !std::isfinite(range)) continue;
    for (size_t k = 1; k + 1 < o.size(); ++k) d[o[k]] += (f(o[k + 1]) - f(o[k - 1])) / range;
  }
  return d;
}

// Weights of the good trials `idx` in l: each one's exclusive share of the set's hypervolume (as in
// MOTPE) relative to the largest, floored at `floor`. Plain TPE weighs good trials alike and so
// crowds the middle of the front; the shares pull proposals towards its ends and gaps as well.
std::vector<double> hypervolume_weights(const std::vector<Scores>& s, const std::vector<size_t>& idx,
                                        double floor) {
  std::vector<double> w(idx.size(), 1.0);
  std::vector<Scores> sub;
  for (size_t i : idx) sub.push_back(s[i]);
  double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
  for (const Scores& x : sub) {
    lo[0] = std::min(lo[0], x.refusals), hi[0] = std::max(hi[0], x.refusals);
    lo[1] = std::min(lo[1], x.kl), hi[1] = std::max(hi[1], x.kl);
  }
  if (!std::isfinite(lo[0] + lo[1] + hi[0] + hi[1])) return w;
  // Reference point a tenth of the spread beyond the worst, so the end points get a share too.
  double ref[2];
  for (int k = 0; k < 2; ++k) {
    ref[k] = hi[k] + (hi[k] > lo[k] ? 0.1 * (hi[k] - lo[k]) : std::max(1.0, hi[k]) * 0.1);
  }
  const std::vector<int64_t> rank = nondominated_ranks(sub);
  std::vector<size_t> front;
  for (size_t k = 0; k < sub.size(); ++k) {
    if (rank[k] == 0) front.push_back(k);
  }
  std::stable_sort(front.begin(), front.end(), [&](size_t a, size_t b) {
    return sub[a].refusals < sub[b].refusals || (sub[a].refusals == sub[b].refusals && sub[a].kl < sub[b].kl);
  });
  std::vector<double> share(sub.size(), 0.0);
  for (size_t a = 0; a < front.size();) {
    size_t b = a;  // [a, b): equal scores, which share one contribution
    while (b < front.size() && sub[front[b]].refusals == sub[front[a]].refusals &&
           sub[front[b]].kl == sub[front[a]].kl) {
      ++b;
    }
    const double next_ref = b < front.size() ? sub[front[b]].refusals : ref[0];
    const double prev_kl = a > 0 ? sub[front[a - 1]].kl : ref[1];
    const double c = (next_ref - sub[front[a]].refusals) * (prev_kl - sub[front[a]].kl);
    for (size_t k = a; k < b; ++k) share[front[k]] = c;
    a = b;
  }
  const double top = *std::max_element(share.begin(), share.end());
  if (!(top > 0)) return w;
  for (size_t k = 0; k < w.size(); ++k) w[k] = std::max(floor, share[k] / top);
  return w;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform and normal variates from raw 64-bit outputs (std's distributions are implementation-defined).
class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  double uniform() { return static_cast<double>(g_() >> 11) * 0x1p-53; }  // [0, 1)
  double normal() {                                                       // Box–Muller, one of the pair
    const double u1 = static_cast<double>((g_() >> 11) + 1) * 0x1p-53;    // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
  }

 private:
  std::mt19937_64 g_;
};

double log_normal_mass(double mu, double h) {  // log of the N(mu, h²) mass inside [0, 1]
  const auto cdf = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  return std::log(std::max(cdf((1.0 - mu) / h) - cdf(-mu / h), 1e-300));
}

// A Parzen mixture over the unit cube of a SearchSpace.
class Parzen {
 public:
  // `scope`: the space has a scope coordinate (index 0, < 0.5 = global); `dir`: direction_index's.
  // `weights`: of each point's component (empty: all 1); the prior and later add()s weigh 1.
  Parzen(const std::vector<std::vector<double>>& points, const std::vector<double>& weights, bool scope,
         size_t dims)
      : scope_(scope), dir_(scope ? 1 : 0), h_(dims, 1.0) {
    const double n = static_cast<double>(points.size());
    const size_t continuous = dims - (scope ? 1 : 0);
    // Scott's factor n^(−1/(d+4)) times the spread of each coordinate, floored so that a few
    // clustered points still leave room to explore (the floor shrinks as evidence grows).
    const double scott = std::pow(std::max(n, 1.0), -1.0 / (static_cast<double>(continuous) + 4.0));
    const double h_floor = std::max(0.03, 0.5 / std::sqrt(n + 1.0));
    for (size_t j = scope ? 1 : 0; j < dims; ++j) {
      double sum = 0, sum2 = 0, m = 0;
      for (const auto& p : points) {
        if (j == dir_ && !global(p)) continue;
        sum += p[j];
        sum2 += p[j] * p[j];
        m += 1;
      }
      const double sd = m > 1 ? std::sqrt(std::max(0.0, (sum2 - sum * sum / m) / (m - 1))) : 0.0;
      h_[j] = std::min(1.0, std::max(h_floor, sd * scott));
    }
    // Chance that a kernel's scope differs from its centre's.
    flip_ = std::min(0.25, std::max(0.05, 1.0 / (n + 2.0)));
    for (size_t k = 0; k < points.size(); ++k) add(points[k], weights.empty() ? 1.0 : weights[k]);
  }

  void add(const std::vector<double>& p, double weight = 1.0) {
    std::vector<double> lz(p.size(), 0.0);
    for (size_t j = scope_ ? 1 : 0; j < p.size(); ++j) {
      lz[j] = std::log(h_[j]) + 0.5 * std::log(2.0 * kPi) + log_normal_mass(p[j], h_[j]);
    }
    centres_.push_back(p);
    log_norm_.push_back(std::move(lz));
    weight_.push_back(weight);
    total_weight_ += weight;
  }

  double log_density(const std::vector<double>& x) const {
    const bool g = global(x);
    std::vector<double> terms;
    terms.reserve(centres_.size() + 1);
    terms.push_back(scope_ ? std::log(0.5) : 0.0);  // the uniform prior
    for (size_t k = 0; k < centres_.size(); ++k) {
      const std::vector<double>& c = centres_[k];
      double lp = std::log(weight_[k]);
      if (scope_) lp += std::log(global(c) == g ? 1.0 - flip_ : flip_);
      for (size_t j = scope_ ? 1 : 0; j < x.size(); ++j) {
        if (j == dir_ && !(g && global(c))) continue;  // uniform factor
        const double z = (x[j] - c[j]) / h_[j];
        lp += -0.5 * z * z - log_norm_[k][j];
      }
      terms.push_back(lp);
    }
    const double top = *std::max_element(terms.begin(), terms.end());
    double sum = 0;
    for (double t : terms) sum += std::exp(t - top);
    return top + std::log(sum) - std::log(total_weight_);
  }

  std::vector<double> sample(Rng& rng) const {
    // Component by weight: the prior (weight 1) first, then the centres.
    double pick = rng.uniform() * total_weight_ - 1.0;
    size_t k = 0;
    while (pick >= 0 && k < centres_.size()) pick -= weight_[k++];
    std::vector<double> x(h_.size());
    if (k == 0) {
      for (auto& v : x) v = rng.uniform();
      if (scope_) x[0] = x[0] < 0.5 ? 0.25 : 0.75;
      return x;
    }
    const std::vector<double>& c = centres_[k - 1];
    bool g = global(c);
    if (scope_) {
      if (rng.uniform() < flip_) g = !g;
      x[0] = g ? 0.25 : 0.75;
    }
    for (size_t j = scope_ ? 1 : 0; j < x.size(); ++j) {
      if (j == dir_ && !global(c)) {
        x[j] = rng.uniform();
        continue;
      }
      // Rejection keeps the kernel a truncated Gaussian; h ≤ 1 and a centre inside [0, 1] accept
      // at least a third of the draws, the cap only guards against a pathological libm.
      double v = c[j];
      for (int tries = 0; tries < 1000; ++tries) {
        const double t = c[j] + h_[j] * rng.normal();
        if (t >= 0.0 && t <= 1.0) {
          v = t;
          break;
        }
      }
      x[j] = v;
    }
    return x;
  }

 private:
  bool global(const std::vector<double>& p) const { return !scope_ || p[0] < 0.5; }

  bool scope_;
  size_t dir_;
  std::vector<double> h_;
  double flip_ = 0.25;
  std::vector<std::vector<double>> centres_;
  std::vector<std::vector<double>> log_norm_;
  std::vector<double> weight_;
  double total_weight_ = 1.0;  // the prior's
};

}  // namespace

std::vector<size_t> pareto_front(const std::vector<Scores>& scores) {
  const std::vector<int64_t> rank = nondominated_ranks(scores);
  std::vector<size_t> front;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (rank[i] == 0 && !has_nan(scores[i])) front.push_back(i);
  }
  // Stable: equal scores stay in index order, and only the first of them is kept.
  std::stable_sort(front.begin(), front.end(), [&](size_t a, size_t b) {
    return scores[a].refusals < scores[b].refusals ||
           (scores[a].refusals == scores[b].refusals && scores[a].kl < scores[b].kl);
  });
  front.erase(std::unique(front.begin(), front.end(),
                          [&](size_t a, size_t b) {
                            return scores[a].refusals == scores[b].refusals && scores[a].kl == scores[b].kl;
                          }),
              front.end());
  return front;
}

std::vector<TrialParams> tpe_propose(const SearchSpace& space, const std::vector<TrialParams>& done,
                                     const std::vector<Scores>& scores, int64_t count, uint64_t seed,
                                     const TpeOptions& opts) {
  ABL_CHECK(done.size() == scores.size(), "TPE got {} trials but {} scores", done.size(), scores.size());
  ABL_CHECK(count >= 0, "TPE asked for {} trials", count);
  ABL_CHECK(opts.gamma > 0 && opts.gamma <= 1, "TPE gamma must be in (0, 1], got {}", opts.gamma);
  ABL_CHECK(opts.candidates >= 1, "TPE needs at least 1 candidate per trial, got {}", opts.candidates);
  const size_t n = done.size();
  const size_t scored = static_cast<size_t>(
      std::count_if(scores.begin(), scores.end(), [](const Scores& s) { return !has_nan(s); }));
  if (scored < 2) return sobol_trials(space, seed, static_cast<int64_t>(n), count);

  // Good set: whole non-dominated ranks while they fit, the last one cut by crowding distance.
  const size_t n_good =
      std::min(scored, std::max<size_t>(1, static_cast<size_t>(std::ceil(opts.gamma * scored))));
  const std::vector<int64_t> rank = nondominated_ranks(scores);
  std::vector<bool> good(n, false);
  size_t taken = 0;
  for (int64_t r = 0; taken < n_good; ++r) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < n; ++i) {
      if (rank[i] == r) idx.push_back(i);
    }
    if (taken + idx.size() > n_good) {
      const std::vector<double> d = crowding(scores, idx);
      std::vector<size_t> o(idx.size());
      std::iota(o.begin(), o.end(), size_t{0});
      std::stable_sort(o.begin(), o.end(), [&](size_t a, size_t b) { return d[a] > d[b]; });
      o.resize(n_good - taken);
      for (size_t k : o) good[idx[k]] = true;
      taken = n_good;
    } else {
      for (size_t i : idx) good[i] = true;
      taken += idx.size();
    }
  }
  std::vector<std::vector<double>> below, above;
  std::vector<size_t> good_idx;
  for (size_t i = 0; i < n; ++i) {
    (good[i] ? below : above).push_back(space.unmap(done[i]));
    if (good[i]) good_idx.push_back(i);
  }

  const size_t dims = static_cast<size_t>(space.dims());
  const Parzen l(below, hypervolume_weights(scores, good_idx, kWeightFloor), space.search_scope, dims);
  Parzen g(above, {}, space.search_scope, dims);
  // Successive batches of one sweep usually share a seed; the trial count makes their streams differ.
  Rng rng(splitmix64(seed) ^ splitmix64(0xA5A5A5A5ull + n));
  std::vector<TrialParams> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t t = 0; t < count; ++t) {
    std::vector<double> best;
    double best_score = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < opts.candidates; ++c) {
      std::vector<double> x = l.sample(rng);
      const double score = l.log_density(x) - g.log_density(x);
      if (best.empty() || score > best_score) {
        best_score = score;
        best = std::move(x);
      }
    }
    // Constant liar: the chosen point counts as a bad trial, so the rest of the batch looks elsewhere.
    g.add(best);
    out.push_back(space.map(best));
  }
  return out;
}

}  // namespace abl::ablation
