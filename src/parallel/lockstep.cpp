// Lockstep helpers. The number of passes is agreed with one all-reduce (max) before prefill, and
// per pass during generation, on the group's small-collective communicator.
#include "abl/parallel/lockstep.h"

#include <algorithm>
#include <numeric>

#include "abl/core/error.h"
#include "abl/core/watchdog.h"

namespace abl::parallel {

std::vector<int> assign_balanced(const std::vector<int64_t>& costs, int owners) {
  ABL_CHECK(owners > 0, "cannot split work over {} ranks", owners);
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs[a] > costs[b]; });
  std::vector<int64_t> load(static_cast<size_t>(owners), 0);
  std::vector<int> owner(costs.size(), 0);
  for (size_t i : order) {
    const auto it = std::min_element(load.begin(), load.end());  // first least-loaded owner
    owner[i] = static_cast<int>(it - load.begin());
    *it += costs[i];
  }
  return owner;
}

std::vector<size_t> split_contiguous(const std::vector<int64_t>& costs, int owners) {
  ABL_CHECK(owners > 0, "cannot split work over {} ranks", owners);
  int64_t total = 0;
  for (int64_t c : costs) total += c;
  std::vector<size_t> bounds(static_cast<size_t>(owners) + 1, costs.size());
  bounds[0] = 0;
  // Owner r's block ends where the running cost first reaches (r+1)/owners of the total.
  int64_t run = 0;
  size_t i = 0;
  for (int r = 0; r < owners - 1; ++r) {
    const int64_t target = total * (r + 1) / owners;
    while (i < costs.size() && run + costs[i] / 2 < target) run += costs[i++];
    bounds[static_cast<size_t>(r) + 1] = i;
  }
  return bounds;
}

void prefill_lockstep(engine::ForwardPass& pass, const std::vector<std::vector<int32_t>>& prompts, Comm& group,
                      const std::function<void(size_t, const float*, const float*)>& on_result,
                      const PrefillOptions& opts) {
  ABL_CHECK(!opts.trials || opts.trials->size() == prompts.size(), "{} trial ids for {} prompts",
            opts.trials ? opts.trials->size() : 0, prompts.size());
  ABL_CHECK(!opts.kl_rows || (opts.kl_rows->size() == prompts.size() && opts.kl),
            "{} KL reference rows for {} prompts", opts.kl_rows ? opts.kl_rows->size() : 0, prompts.size());
  const engine::Limits& lim = pass.limits();
  const model::ModelSpec& spec = pass.spec();
  const int64_t cache_rows = pass.cache_rows();
  const int64_t V = spec.vocab_size, D = (spec.num_layers + 1) * spec.hidden_size;
  // Passes of whole prompts, packed in order.
  std::vector<std::pair<size_t, size_t>> passes;  // [begin, end) of prompts
  size_t i = 0;
  while (i < prompts.size()) {
    size_t j = i;
    int64_t tokens = 0;
    while (j < prompts.size() && static_cast<int64_t>(j - i) < lim.max_seqs &&
           tokens + static_cast<int64_t>(prompts[j].size()) <= std::min(lim.max_tokens, cache_rows)) {
      tokens += static_cast<int64_t>(prompts[j].size());
      ++j;
    }
    ABL_CHECK(j > i, "prompt of {} tokens does not fit a pass ({} tokens, {} cache rows)", prompts[i].size(),
              lim.max_tokens, cache_rows);
    passes.emplace_back(i, j);
    i = j;
  }
  int64_t n_passes = static_cast<int64_t>(passes.size());
  group.all_reduce_max(&n_passes, 1);
  std::vector<float> logits, residuals;
  for (int64_t p = 0; p < n_passes; ++p) {
    engine::Batch b;
    size_t begin = 0, end = 0;
    if (p < static_cast<int64_t>(passes.size())) std::tie(begin, end) = passes[static_cast<size_t>(p)];
    int64_t row = 0;
    for (size_t k = begin; k < end; ++k) {
      b.add(prompts[k].data(), static_cast<int64_t>(prompts[k].size()), row, 0, opts.trials ? (*opts.trials)[k] : -1);
      row += static_cast<int64_t>(prompts[k].size());
    }
    if (opts.logits) logits.resize(static_cast<size_t>(std::max<int64_t>(b.num_seqs(), 1) * V));
    if (opts.residuals) residuals.resize(static_cast<size_t>(std::max<int64_t>(b.num_seqs(), 1) * D));
    engine::Outputs out;
    out.logits = opts.logits ? logits.data() : nullptr;
    out.residuals = opts.residuals ? residuals.data() : nullptr;
    if (opts.kl_rows) {
      out.kl_rows = opts.kl_rows->data() + begin;
      out.kl = opts.kl + begin;
    }
    watchdog::mark("forward pass (prefill)");
    pass.forward(b, out);
    for (size_t k = begin; k < end; ++k) {
      on_result(k, opts.logits ? logits.data() + (k - begin) * static_cast<size_t>(V) : nullptr,
                opts.residuals ? residuals.data() + (k - begin) * static_cast<size_t>(D) : nullptr);
    }
  }
}

std::function<bool(bool)> group_any_work(Comm& group) {
  return [&group](bool local) {
    int64_t any = local ? 1 : 0;
    group.all_reduce_max(&any, 1);
    return any != 0;
  };
}

}  // namespace abl::parallel
