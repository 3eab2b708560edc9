// One interface for the three searches of a sweep (search.h): a Proposer says which trials a batch
// evaluates. The sweep asks it for the trials of each batch and never looks at which search it is.
// Every proposal is a pure function of the batch, the proposer's settings (space, seed, grid) and
// the evaluated history, so a resumed or extended sweep proposes exactly what an uninterrupted one
// would. In a distributed sweep only rank 0 (which holds the history) asks and broadcasts.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "abl/ablation/search.h"
#include "abl/ablation/trial.h"

namespace abl::ablation {

// One batch of a sweep: batch `index` holds the sweep's trials [start, end); the ones before
// `from` (start <= from < end) are already evaluated (a sweep that stopped inside the batch and is
// now extended), so only [from, end) are asked for. Trial numbers count from the first trial of
// this sweep (of this slice, for a slice).
struct BatchRequest {
  int64_t index = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t from = 0;
};

// The evaluated trials of the sweep, in order, with their scores (same length).
struct History {
  const std::vector<TrialParams>& params;
  const std::vector<Scores>& scores;
};

class Proposer {
 public:
  virtual ~Proposer() = default;
  // Trials [batch.from, batch.end) of the sweep; `history` holds at least the trials before
  // batch.from. Errors (abl::Error) when asked beyond size().
  virtual std::vector<TrialParams> propose(const BatchRequest& batch, const History& history) const = 0;
  // How many trials it can propose at all (a grid's size), or none for an endless search.
  virtual std::optional<int64_t> size() const { return std::nullopt; }
};

// The trials of a grid file (parse_grid_text), from its trial `first` on (a slice of the grid).
class GridProposer : public Proposer {
 public:
  GridProposer(std::vector<TrialParams> grid, int64_t first = 0);
  std::vector<TrialParams> propose(const BatchRequest& batch, const History& history) const override;
  std::optional<int64_t> size() const override;  // trials from `first` to the grid's end

 private:
  std::vector<TrialParams> grid_;
  int64_t first_;
};

// Sobol trials (sobol_trials): the sweep's trial j is Sobol trial first + j.
class SobolProposer : public Proposer {
 public:
  SobolProposer(SearchSpace space, uint64_t seed, int64_t first = 0);
  std::vector<TrialParams> propose(const BatchRequest& batch, const History& history) const override;

 private:
  SearchSpace space_;
  uint64_t seed_;
  int64_t first_;
};

// Sobol trials for the first `startup` trials, then batched TPE (tpe_propose). The whole batch is
// proposed from the trials before batch.start with the seed seed·1000003 + batch.index (so the
// trials of a batch do not depend on where an earlier run stopped inside it); the trials before
// batch.from are dropped.
class TpeProposer : public Proposer {
 public:
  TpeProposer(SearchSpace space, uint64_t seed, int64_t startup, TpeOptions opts = {});
  std::vector<TrialParams> propose(const BatchRequest& batch, const History& history) const override;

 private:
  SearchSpace space_;
  uint64_t seed_;
  int64_t startup_;
  TpeOptions opts_;
};

}  // namespace abl::ablation
