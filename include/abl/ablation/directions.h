// Refusal directions from the class means of residuals.h5 (DESIGN.md §1.2), with per-depth
// statistics: r_i = normalize(bad_mean_i − good_mean_i), optionally projected (the component
// along normalize(good_mean_i) removed, renormalized). A depth whose means are equal (the
// embeddings when every prompt ends with the same tokens) gets a zero row.
#pragma once
#include <string>
#include <vector>

#include "abl/io/driver_files.h"
#include "abl/io/output_schema.h"

namespace abl::ablation {

// From the reader's means; the separation statistic reads the full residuals in blocks when the
// file has them (NaN otherwise).
io::schema::DirectionsData compute_directions(const io::schema::ResidualsReader& residuals, bool projected);

// The same from means given directly (depths, hidden) row-major; separation left NaN.
io::schema::DirectionsData directions_from_means(const std::vector<double>& good_mean,
                                                 const std::vector<double>& bad_mean, int64_t depths,
                                                 int64_t hidden, bool projected);

// Rows of `d.directions` as f32 vectors: what build_trial_table and the epilogue take.
std::vector<std::vector<float>> direction_rows(const io::schema::DirectionsData& d);

// One line per depth: norms, cosine, ‖difference‖ and separation.
std::string directions_table(const io::schema::DirectionsData& d);

}  // namespace abl::ablation
