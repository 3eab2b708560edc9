// A directions.h5 payload the io tests write (test_driver_files.cpp, test_trials_file.cpp).
#pragma once
#include <cmath>
#include <cstdint>

#include "abl/io/driver_files.h"

namespace abl::io {

inline schema::DirectionsData sample_directions(int64_t depths = 3, int64_t hidden = 4) {
  schema::DirectionsData d;
  d.model = "org/model";
  d.architecture = "LlamaForCausalLM";
  d.residuals_created = "2025-01-31T12:00:00Z";
  d.projected = false;
  d.depths = depths;
  d.hidden = hidden;
  for (int64_t i = 0; i < depths * hidden; ++i) {
    d.directions.push_back(0.25 * static_cast<double>(i) - 1);
    d.good_mean.push_back(static_cast<double>(i) + 0.5);
    d.bad_mean.push_back(-static_cast<double>(i) * 1e-3);
  }
  for (int64_t i = 0; i < depths; ++i) {
    d.good_norm.push_back(static_cast<double>(i) + 1);
    d.bad_norm.push_back(static_cast<double>(i) + 2);
    d.direction_norm.push_back(static_cast<double>(i) + 3);
    d.cosine_good_bad.push_back(0.1 * static_cast<double>(i));
    d.separation.push_back(i == 1 ? std::nan("") : 2.5 * static_cast<double>(i));
  }
  return d;
}

}  // namespace abl::io
