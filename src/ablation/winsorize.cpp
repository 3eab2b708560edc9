// The quantile is taken of |x| over one (prompt, depth) vector, so an outlier dimension with a
// huge activation cannot dominate the class means.
#include "abl/ablation/winsorize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "abl/core/error.h"

namespace abl::ablation {

void winsorize(float* x, int64_t n, double q) {
  ABL_CHECK(q > 0.0, "winsorize quantile must be in (0, 1], got {}", q);
  if (q >= 1.0 || n == 0) return;
  std::vector<float> a(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) a[static_cast<size_t>(i)] = std::fabs(x[i]);
  std::sort(a.begin(), a.end());
  const double pos = q * static_cast<double>(n - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, a.size() - 1);
  const float bound = static_cast<float>(a[lo] + (pos - static_cast<double>(lo)) * (a[hi] - a[lo]));
  for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], -bound, bound);
}

}  // namespace abl::ablation
