// Scores of a batch of ablation trials, evaluated by every rank together (DESIGN.md §2): the KL
// prompts of all K trials as prefills (first-token log-probabilities against the baseline), then
// the evaluation prompts of all K trials as greedy generation that stops at EOS, at the response
// length or — early exit — at the first refusal marker. Each sequence carries its trial id, so
// one pass serves many trials. The (trial, prompt) items are split over all ranks in contiguous
// blocks balanced by tokens; per-item results are summed into arrays where every item has exactly
// one owner, so the scores do not depend on the number of ranks or the layout.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "abl/engine/cpu/ablation_epilogue.h"
#include "abl/ablation/trial.h"
#include "abl/app/driver.h"
#include "abl/text/refusal_markers.h"

namespace abl::app {

struct BatchResult {
  std::vector<double> kl;                           // (K) batchmean KL(original ‖ ablated)
  std::vector<int64_t> refusals;                    // (K)
  std::vector<std::vector<std::string>> responses;  // (K, N_eval) on rank 0 when kept
  int64_t decode_tokens = 0;                        // generated tokens, all ranks
  int64_t prompt_tokens = 0;                        // prefilled tokens, all ranks
};

class TrialEvaluator {
 public:
  // directions: the rows of directions.h5; base_logprobs: (N_kl, V) of baseline.h5.
  TrialEvaluator(Session& ses, std::vector<std::vector<float>> directions, engine::RowNorm mode, bool routed_experts,
                 std::vector<std::vector<int32_t>> kl_ids, std::vector<float> base_logprobs,
                 std::vector<std::vector<int32_t>> eval_ids, const text::RefusalMarkers& markers, int64_t max_new,
                 bool early_exit, bool keep_responses);
  ~TrialEvaluator();
  TrialEvaluator(const TrialEvaluator&) = delete;
  TrialEvaluator& operator=(const TrialEvaluator&) = delete;
  // Collective over the world: every rank passes the same trials.
  BatchResult evaluate(const std::vector<ablation::TrialParams>& trials);

 private:
  Session& ses_;
  std::vector<std::vector<float>> directions_;
  engine::RowNorm mode_;
  bool routed_experts_;
  std::vector<std::vector<int32_t>> kl_ids_;
  std::vector<float> base_;
  std::vector<std::vector<int32_t>> eval_ids_;
  const text::RefusalMarkers& markers_;
  int64_t max_new_;
  bool early_exit_, keep_responses_;
  bool kl_reference_set_ = false;  // the backend holds base_ as its KL reference
};

}  // namespace abl::app
