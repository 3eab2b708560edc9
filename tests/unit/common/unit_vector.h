// A random unit vector (Gaussian components, normalized) for ablation directions in tests.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace abl::testing {

inline std::vector<float> unit_vector(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(static_cast<size_t>(n));
  double ss = 0;
  for (auto& x : v) {
    x = d(rng);
    ss += static_cast<double>(x) * x;
  }
  for (auto& x : v) x = static_cast<float>(x / std::sqrt(ss));
  return v;
}

}  // namespace abl::testing
