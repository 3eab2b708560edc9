// The batch evaluation of the sweep (trial_evaluator.h).
#include "abl/app/trial_evaluator.h"

#include "abl/parallel/lockstep.h"
#include "abl/engine/generate.h"
#include "abl/io/h5.h"

namespace abl::app {

TrialEvaluator::TrialEvaluator(Session& ses, std::vector<std::vector<float>> directions, engine::RowNorm mode,
                               bool routed_experts, std::vector<std::vector<int32_t>> kl_ids, std::vector<float> base_logprobs,
                               std::vector<std::vector<int32_t>> eval_ids, const text::RefusalMarkers& markers,
                               int64_t max_new, bool early_exit, bool keep_responses)
    : ses_(ses), directions_(std::move(directions)), mode_(mode), routed_experts_(routed_experts), kl_ids_(std::move(kl_ids)),
      base_(std::move(base_logprobs)), eval_ids_(std::move(eval_ids)), markers_(markers), max_new_(max_new),
      early_exit_(early_exit), keep_responses_(keep_responses) {}

TrialEvaluator::~TrialEvaluator() {
  if (kl_reference_set_) ses_.backend().set_kl_reference(nullptr, 0);  // base_ goes with this
}

BatchResult TrialEvaluator::evaluate(const std::vector<ablation::TrialParams>& trials) {
  parallel::Runtime& rt = ses_.rt();
  const auto K = static_cast<int64_t>(trials.size());
  const auto table = ablation::build_trial_table(trials, directions_, mode_, routed_experts_);
  AblationScope ablate(ses_.backend(), table);
  if (!kl_reference_set_) {
    ses_.backend().set_kl_reference(base_.data(), static_cast<int64_t>(kl_ids_.size()));
    kl_reference_set_ = true;
  }
  BatchResult res;

  // KL: items (trial t, prompt p) in t-major order, a contiguous block per rank.
  const auto n_kl = static_cast<int64_t>(kl_ids_.size());
  {
    std::vector<int64_t> cost;
    for (int64_t i = 0; i < K * n_kl; ++i) cost.push_back(static_cast<int64_t>(kl_ids_[static_cast<size_t>(i % n_kl)].size()));
    const auto [b, e] = rank_block(cost, rt);
    std::vector<std::vector<int32_t>> prompts;
    std::vector<int32_t> trial_ids, ref_rows;
    for (size_t i = b; i < e; ++i) {
      prompts.push_back(kl_ids_[i % static_cast<size_t>(n_kl)]);
      trial_ids.push_back(static_cast<int32_t>(i / static_cast<size_t>(n_kl)));
      ref_rows.push_back(static_cast<int32_t>(i % static_cast<size_t>(n_kl)));
      res.prompt_tokens += static_cast<int64_t>(prompts.back().size());
    }
    // KL against the baseline's rows where the logits are (the backend holds the reference), so
    // only one number per item comes back from a GPU.
    std::vector<double> item_kl(static_cast<size_t>(K * n_kl), 0.0);
    parallel::PrefillOptions opts;
    opts.logits = false;
    opts.residuals = false;
    opts.trials = &trial_ids;
    opts.kl_rows = &ref_rows;
    opts.kl = item_kl.data() + b;
    parallel::prefill_lockstep(ses_.pass(longest_prompt(kl_ids_), 0), prompts, rt.shard_group(),
                           [](size_t, const float*, const float*) {}, opts);
    rt.world().all_reduce_sum(item_kl.data(), item_kl.size());  // one owner per item: exact
    res.kl.assign(static_cast<size_t>(K), 0.0);
    for (int64_t t = 0; t < K; ++t) {
      double sum = 0;
      for (int64_t p = 0; p < n_kl; ++p) sum += item_kl[static_cast<size_t>(t * n_kl + p)];
      res.kl[static_cast<size_t>(t)] = sum / static_cast<double>(n_kl);  // batchmean
    }
  }

  // Refusals: items (trial t, evaluation prompt p), greedy generation with the trial's ablation.
  const auto n_ev = static_cast<int64_t>(eval_ids_.size());
  {
    std::vector<int64_t> cost;
    for (int64_t i = 0; i < K * n_ev; ++i) {
      cost.push_back(static_cast<int64_t>(eval_ids_[static_cast<size_t>(i % n_ev)].size()) + max_new_);
    }
    const auto [b, e] = rank_block(cost, rt);
    std::vector<engine::GenerateRequest> reqs;
    for (size_t i = b; i < e; ++i) {
      reqs.push_back({eval_ids_[i % static_cast<size_t>(n_ev)], static_cast<int32_t>(i / static_cast<size_t>(n_ev))});
      res.prompt_tokens += static_cast<int64_t>(reqs.back().prompt.size());
    }
    engine::GenerateOptions opts;
    opts.max_new_tokens = max_new_;
    opts.eos_ids = ses_.spec().eos_token_ids;
    if (early_exit_) opts.stop_when = [this](std::string_view t) { return !markers_.find(t).empty(); };
    opts.any_work = parallel::group_any_work(rt.shard_group());
    const auto out = engine::generate(ses_.pass(longest_prompt(eval_ids_), max_new_), ses_.tokenizer(), reqs, opts);
    std::vector<int64_t> refused(static_cast<size_t>(K * n_ev), 0);
    std::vector<std::string> texts;
    for (size_t i = b; i < e; ++i) {
      const auto& r = out[i - b];
      refused[i] = markers_.is_refusal(r.text) ? 1 : 0;
      res.decode_tokens += static_cast<int64_t>(r.ids.size());
      if (keep_responses_) texts.push_back(r.text);
    }
    rt.world().all_reduce_sum(refused.data(), refused.size());
    res.refusals.assign(static_cast<size_t>(K), 0);
    for (int64_t i = 0; i < K * n_ev; ++i) res.refusals[static_cast<size_t>(i / n_ev)] += refused[static_cast<size_t>(i)];
    if (keep_responses_) {
      const auto all = rt.world().gather_strings(texts, 0);
      if (rt.world_rank() == 0) {
        res.responses.assign(static_cast<size_t>(K), {});
        for (size_t i = 0; i < all.size(); ++i) res.responses[i / static_cast<size_t>(n_ev)].push_back(all[i]);
      }
    }
  }
  int64_t counts[2] = {res.decode_tokens, res.prompt_tokens};
  rt.world().all_reduce_sum(counts, 2);
  res.decode_tokens = counts[0];
  res.prompt_tokens = counts[1];
  return res;
}

}  // namespace abl::app
