#include "abl/ablation/directions.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "abl/core/error.h"

namespace abl::ablation {
namespace {

double dot(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

io::schema::DirectionsData directions_from_means(const std::vector<double>& good_mean,
                                                 const std::vector<double>& bad_mean, int64_t depths,
                                                 int64_t hidden, bool projected) {
  const auto n = static_cast<size_t>(depths * hidden);
  ABL_CHECK(depths > 0 && hidden > 0 && good_mean.size() == n && bad_mean.size() == n,
            "class means of {} and {} values for {} depths of {}", good_mean.size(), bad_mean.size(), depths,
            hidden);
  io::schema::DirectionsData d;
  d.depths = depths;
  d.hidden = hidden;
  d.projected = projected;
  d.good_mean = good_mean;
  d.bad_mean = bad_mean;
  d.directions.assign(n, 0.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t i = 0; i < depths; ++i) {
    const double* g = good_mean.data() + i * hidden;
    const double* b = bad_mean.data() + i * hidden;
    double* r = d.directions.data() + i * hidden;
    const double gn = std::sqrt(dot(g, g, hidden)), bn = std::sqrt(dot(b, b, hidden));
    for (int64_t j = 0; j < hidden; ++j) r[j] = b[j] - g[j];
    const double rn = std::sqrt(dot(r, r, hidden));
    d.good_norm.push_back(gn);
    d.bad_norm.push_back(bn);
    d.direction_norm.push_back(rn);
    d.cosine_good_bad.push_back(gn > 0 && bn > 0 ? dot(g, b, hidden) / (gn * bn) : nan);
    d.separation.push_back(nan);
    // Relative threshold: means equal up to rounding give no direction, not a noise vector.
    if (!(rn > 1e-9 * std::max(gn, bn))) {
      std::fill(r, r + hidden, 0.0);
      continue;
    }
    for (int64_t j = 0; j < hidden; ++j) r[j] /= rn;
    if (projected && gn > 0) {
      const double c = dot(r, g, hidden) / gn;  // r · normalize(g)
      for (int64_t j = 0; j < hidden; ++j) r[j] -= c * g[j] / gn;
      const double pn = std::sqrt(dot(r, r, hidden));
      if (!(pn > 1e-9)) {
        std::fill(r, r + hidden, 0.0);
        continue;
      }
      for (int64_t j = 0; j < hidden; ++j) r[j] /= pn;
    }
  }
  return d;
}

io::schema::DirectionsData compute_directions(const io::schema::ResidualsReader& res, bool projected) {
  using io::schema::PromptSet;
  const int64_t D = res.depths(), H = res.hidden();
  io::schema::DirectionsData d =
      directions_from_means(res.mean(PromptSet::good), res.mean(PromptSet::bad), D, H, projected);
  d.model = res.meta().model;
  d.architecture = res.meta().architecture;
  d.residuals_created = res.meta().created;
  if (!res.has_full_residuals()) return d;
  // Cohen's d of the projections p = x·r_i: (mean_bad − mean_good) / sqrt((var_bad + var_good)/2).
  std::vector<double> sum[2], sum2[2];
  int64_t count[2] = {0, 0};
  const PromptSet sets[2] = {PromptSet::good, PromptSet::bad};
  constexpr int64_t kBlock = 64;
  for (int s = 0; s < 2; ++s) {
    sum[s].assign(static_cast<size_t>(D), 0.0);
    sum2[s].assign(static_cast<size_t>(D), 0.0);
    const int64_t rows = res.rows(sets[s]);
    for (int64_t first = 0; first < rows; first += kBlock) {
      const int64_t n = std::min(kBlock, rows - first);
      const std::vector<float> x = res.residuals(sets[s], first, n);
      for (int64_t p = 0; p < n; ++p) {
        for (int64_t i = 0; i < D; ++i) {
          const float* xi = x.data() + (p * D + i) * H;
          const double* r = d.directions.data() + i * H;
          double proj = 0;
          for (int64_t j = 0; j < H; ++j) proj += xi[j] * r[j];
          sum[s][static_cast<size_t>(i)] += proj;
          sum2[s][static_cast<size_t>(i)] += proj * proj;
        }
      }
      count[s] += n;
    }
  }
  for (int64_t i = 0; i < D; ++i) {
    const auto k = static_cast<size_t>(i);
    double m[2], v[2];
    for (int s = 0; s < 2; ++s) {
      const double c = static_cast<double>(count[s]);
      m[s] = sum[s][k] / c;
      v[s] = count[s] > 1 ? std::max(0.0, (sum2[s][k] - c * m[s] * m[s]) / (c - 1)) : 0.0;
    }
    const double pooled = std::sqrt((v[0] + v[1]) / 2);
    d.separation[k] = pooled > 0 ? (m[1] - m[0]) / pooled : std::numeric_limits<double>::quiet_NaN();
  }
  return d;
}

std::vector<std::vector<float>> direction_rows(const io::schema::DirectionsData& d) {
  std::vector<std::vector<float>> rows(static_cast<size_t>(d.depths));
  for (int64_t i = 0; i < d.depths; ++i) {
    const double* r = d.directions.data() + i * d.hidden;
    rows[static_cast<size_t>(i)].assign(r, r + d.hidden);
  }
  return rows;
}

std::string directions_table(const io::schema::DirectionsData& d) {
  std::string s = fmt::format("{:>5} {:>11} {:>11} {:>11} {:>9} {:>10}\n", "depth", "|good|", "|bad|",
                              "|bad-good|", "cos", "separation");
  bool any_separation = false;
  for (int64_t i = 0; i < d.depths; ++i) {
    const auto k = static_cast<size_t>(i);
    const bool sep = std::isfinite(d.separation[k]);
    any_separation = any_separation || sep;
    s += fmt::format("{:>5} {:>11.4g} {:>11.4g} {:>11.4g} {:>9.4f} {:>10}\n", i, d.good_norm[k], d.bad_norm[k],
                     d.direction_norm[k], d.cosine_good_bad[k], sep ? fmt::format("{:.3f}", d.separation[k]) : "-");
  }
  if (!any_separation) s += "(separation needs every prompt's residuals: run residuals without --no-full-residuals)\n";
  return s;
}

}  // namespace abl::ablation
