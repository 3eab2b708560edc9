// Shared by the sharded-weights tests on the GPU (the unit module and the MPI program): passes of
// organism prompts through a CudaEngine — a packed prefill, then one greedy decode step of each
// prompt — and a bit-for-bit comparison of two engines' results. Sharded bf16 weights are the
// resident ones bit for bit, so the same passes give the same bits.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "abl/ablation/trial.h"
#include "abl/engine/cuda/engine.h"
#include "common/unit_vector.h"

namespace abl::testing {

// Per prompt: prefill logits (V) then decode-step logits (V); prefill hidden states (L+1, H).
// Empty for prompts this rank did not run.
struct PassResults {
  std::vector<std::vector<float>> logits, residuals;
};

// Runs each pass (prompt indices; an empty pass runs two empty forward calls, as a lockstep rank
// with no work does). `trial_of[p]`: the ablation trial of prompt p (-1: none), empty for none.
inline PassResults run_passes(cuda::CudaEngine& engine, cuda::DeviceKvCache& cache,
                              const std::vector<std::vector<int32_t>>& prompts,
                              const std::vector<std::vector<size_t>>& passes, const std::vector<int32_t>& trial_of,
                              const cuda::DeviceAblation* ablation) {
  const model::ModelSpec& spec = engine.spec();
  const auto V = static_cast<size_t>(spec.vocab_size);
  const auto D = static_cast<size_t>((spec.num_layers + 1) * spec.hidden_size);
  PassResults r;
  r.logits.resize(prompts.size());
  r.residuals.resize(prompts.size());
  for (const auto& pass : passes) {
    engine::Batch prefill, decode;
    std::vector<int64_t> begin;
    int64_t row = 0;
    for (size_t p : pass) {
      const int32_t trial = trial_of.empty() ? -1 : trial_of[p];
      prefill.add(prompts[p].data(), static_cast<int64_t>(prompts[p].size()), row, 0, trial);
      begin.push_back(row);
      row += static_cast<int64_t>(prompts[p].size()) + 1;
    }
    const size_t B = pass.size();
    std::vector<float> logits(std::max<size_t>(B, 1) * V), residuals(std::max<size_t>(B, 1) * D);
    engine.forward(prefill, cache, {logits.data(), residuals.data(), nullptr}, ablation);
    std::vector<int32_t> next(B);
    for (size_t i = 0; i < B; ++i) {
      const float* l = logits.data() + i * V;
      next[i] = static_cast<int32_t>(std::max_element(l, l + V) - l);
      r.logits[pass[i]].assign(l, l + V);
      r.residuals[pass[i]].assign(residuals.data() + i * D, residuals.data() + (i + 1) * D);
    }
    for (size_t i = 0; i < B; ++i) {
      const size_t p = pass[i];
      decode.add(&next[i], 1, begin[i], static_cast<int64_t>(prompts[p].size()), trial_of.empty() ? -1 : trial_of[p]);
    }
    engine.forward(decode, cache, {logits.data(), nullptr, nullptr}, ablation);
    for (size_t i = 0; i < B; ++i) {
      r.logits[pass[i]].insert(r.logits[pass[i]].end(), logits.data() + i * V, logits.data() + (i + 1) * V);
    }
  }
  return r;
}

// Two ablation trials with full row normalisation over L+1 random directions (from `seed`): one
// global direction, one per layer.
inline engine::AblationTable two_trial_table(const model::ModelSpec& spec, uint32_t seed) {
  std::vector<std::vector<float>> r;
  for (int64_t d = 0; d <= spec.num_layers; ++d) {
    r.push_back(unit_vector(spec.hidden_size, seed + static_cast<uint32_t>(d)));
  }
  std::vector<ablation::TrialParams> params(2);
  params[0].direction_index = 0.7;
  params[0].comp[0] = {1.1, 1.5, 0.5, 2.0};
  params[0].comp[1] = {0.8, 2.0, 0.4, 1.5};
  params[1].scope = ablation::DirectionScope::per_layer;
  params[1].comp[0] = {0.9, 1.0, 0.3, 2.5};
  params[1].comp[1] = {1.2, 2.5, 0.6, 2.5};
  return ablation::build_trial_table(params, r, engine::RowNorm::full);
}

// Every value bit-identical; reports the count and the largest difference otherwise.
inline void expect_identical(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      ++bad;
      worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " values differ (max |Δ| " << worst << ")";
}

inline void expect_identical(const PassResults& got, const PassResults& want, const std::string& what) {
  ASSERT_EQ(got.logits.size(), want.logits.size()) << what;
  for (size_t p = 0; p < got.logits.size(); ++p) {
    expect_identical(got.logits[p], want.logits[p], what + ", logits of prompt " + std::to_string(p));
    expect_identical(got.residuals[p], want.residuals[p], what + ", hidden states of prompt " + std::to_string(p));
  }
}

}  // namespace abl::testing
