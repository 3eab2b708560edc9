// Fuzz target: grid files (parse_grid_text) for a model of 1-64 layers (input byte 0). An
// accepted grid has 1..kMaxGridTrials trials whose parameters are finite and inside the domains
// the ablation can use: direction_index in [0, last], weights bounded, positions inside the
// model, 0 < min_weight_distance <= 10·L.
#include <cmath>

#include "abl/ablation/search.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  abl::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int64_t layers = 1 + data[0] % 64;
  const double last = static_cast<double>(layers - 1);
  return abl::fuzz::run_input([&] {
    const std::vector<abl::ablation::TrialParams> trials = abl::ablation::parse_grid_text(
        std::string(abl::fuzz::as_text(data + 1, size - 1)), "grid.txt", layers);
    ABL_FUZZ_CHECK(!trials.empty() && static_cast<int64_t>(trials.size()) <= abl::ablation::kMaxGridTrials, "");
    for (const abl::ablation::TrialParams& t : trials) {
      bool ok = t.direction_index >= 0 && t.direction_index <= last;
      for (double v : abl::ablation::param_values(t)) ok = ok && std::isfinite(v);
      for (const abl::ablation::ComponentParams& c : t.comp) {
        ok = ok && std::fabs(c.max_weight) <= 10 && std::fabs(c.min_weight) <= 10 &&
             c.max_weight_position >= 0 && c.max_weight_position <= last && c.min_weight_distance > 0 &&
             c.min_weight_distance <= 10 * static_cast<double>(layers);
      }
      ABL_FUZZ_CHECK(ok, abl::ablation::describe(t));
    }
  });
}
