// Work over many ranks: a deterministic split of sequences balanced by token count, and passes
// run in lockstep within a shard group (every rank joins every weight gather, with an empty
// batch once its own work is done).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "abl/parallel/comm.h"
#include "abl/engine/batch.h"
#include "abl/engine/forward_pass.h"
#include "abl/engine/generate.h"

namespace abl::parallel {

// Owner (0..owners-1) of each item: largest cost first to the least-loaded owner, ties broken by
// index, so every rank computes the same split.
std::vector<int> assign_balanced(const std::vector<int64_t>& costs, int owners);

// Contiguous blocks balanced by cost: owner r gets items [bounds[r], bounds[r+1]). Used where
// each rank writes its rows of a shared dataset as one block.
std::vector<size_t> split_contiguous(const std::vector<int64_t>& costs, int owners);

// What a lockstep prefill computes.
struct PrefillOptions {
  bool logits = true;                          // the last token's logits (V) per prompt
  bool residuals = true;                       // capture (L+1, H) per prompt
  const std::vector<int32_t>* trials = nullptr;  // ablation trial of each prompt (null: none)
  // KL of each prompt's next-token distribution against row (*kl_rows)[i] of the pass's KL
  // reference, into kl[i] (ForwardPass overload; the logits need not leave the device).
  const std::vector<int32_t>* kl_rows = nullptr;
  double* kl = nullptr;                        // (prompts)
};

// Prefill of this rank's prompts in passes within the engine limits, as many passes as the
// busiest rank of `group` needs. on_result(i, logits (V) or null, residuals (L+1, H) or null) for
// prompt i, after its kl[i] is filled.
void prefill_lockstep(engine::ForwardPass& pass, const std::vector<std::vector<int32_t>>& prompts, Comm& group,
                      const std::function<void(size_t, const float*, const float*)>& on_result,
                      const PrefillOptions& opts = {});
// GenerateOptions::any_work for a group: true while any rank of `group` has work.
std::function<bool(bool)> group_any_work(Comm& group);

}  // namespace abl::parallel
