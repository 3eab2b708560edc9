// The three searches behind the Proposer interface; the search itself is in grid_file.cpp,
// sobol.cpp and tpe.cpp.
#include "abl/ablation/proposer.h"

#include <algorithm>

#include "abl/core/error.h"

namespace abl::ablation {
namespace {

void check_batch(const BatchRequest& b) {
  ABL_CHECK(b.start >= 0 && b.start <= b.from && b.from <= b.end,
            "invalid batch {}: trials [{}, {}) from {}", b.index, b.start, b.end, b.from);
}

}  // namespace

GridProposer::GridProposer(std::vector<TrialParams> grid, int64_t first) : grid_(std::move(grid)), first_(first) {
  ABL_CHECK(first_ >= 0 && first_ <= static_cast<int64_t>(grid_.size()), "grid slice starts at trial {} of {}", first_,
            grid_.size());
}

std::optional<int64_t> GridProposer::size() const { return static_cast<int64_t>(grid_.size()) - first_; }

std::vector<TrialParams> GridProposer::propose(const BatchRequest& b, const History&) const {
  check_batch(b);
  ABL_CHECK(b.end <= *size(), "the grid has {} trials, not {}", *size(), b.end);
  return {grid_.begin() + first_ + b.from, grid_.begin() + first_ + b.end};
}

SobolProposer::SobolProposer(SearchSpace space, uint64_t seed, int64_t first)
    : space_(space), seed_(seed), first_(first) {}

std::vector<TrialParams> SobolProposer::propose(const BatchRequest& b, const History&) const {
  check_batch(b);
  return sobol_trials(space_, seed_, first_ + b.from, b.end - b.from);
}

TpeProposer::TpeProposer(SearchSpace space, uint64_t seed, int64_t startup, TpeOptions opts)
    : space_(space), seed_(seed), startup_(startup), opts_(opts) {}

std::vector<TrialParams> TpeProposer::propose(const BatchRequest& b, const History& h) const {
  check_batch(b);
  ABL_CHECK(static_cast<int64_t>(h.params.size()) >= b.start && h.params.size() == h.scores.size(),
            "TPE batch {} needs the {} trials before it, the history holds {}", b.index, b.start, h.params.size());
  const int64_t full = b.end - b.start;
  const int64_t n_sobol = std::clamp<int64_t>(startup_ - b.start, 0, full);
  std::vector<TrialParams> proposal = sobol_trials(space_, seed_, b.start, n_sobol);
  if (full > n_sobol) {
    const std::vector<TrialParams> done(h.params.begin(), h.params.begin() + b.start);
    const std::vector<Scores> scores(h.scores.begin(), h.scores.begin() + b.start);
    const auto more =
        tpe_propose(space_, done, scores, full - n_sobol, seed_ * 1000003ull + static_cast<uint64_t>(b.index), opts_);
    proposal.insert(proposal.end(), more.begin(), more.end());
  }
  proposal.erase(proposal.begin(), proposal.begin() + (b.from - b.start));
  return proposal;
}

}  // namespace abl::ablation
