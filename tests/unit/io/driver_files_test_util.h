// What the driver-file tests share (test_driver_files.cpp, test_trials_file.cpp): a check that a
// message contains a part, the count of open HDF5 ids, the .partial name of an output, and a
// directions.h5 payload.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <hdf5.h>

#include "abl/io/driver_files.h"
#include "abl/io/h5.h"

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

namespace abl::io {

inline ssize_t open_ids() { return H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL); }

inline std::string partial(const std::string& path) { return h5::OutputFile::partial_path_for(path); }


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
