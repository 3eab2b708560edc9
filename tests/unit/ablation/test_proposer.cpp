// The Proposer interface over the three searches: each proposes what the search functions give for
// the batch's trials, deterministically, and the trials of a batch do not depend on where an
// earlier run stopped inside it (a resumed or extended sweep proposes what an uninterrupted one
// would). TPE depends only on the trials before the batch, the batch index and the seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "abl/ablation/proposer.h"
#include "abl/ablation/search.h"
#include "abl/core/error.h"

using namespace abl;
using namespace abl::ablation;

namespace {

bool same(const TrialParams& a, const TrialParams& b) { return param_values(a) == param_values(b); }

bool same(const std::vector<TrialParams>& a, const std::vector<TrialParams>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same(a[i], b[i])) return false;
  }
  return true;
}

BatchRequest batch(int64_t index, int64_t per_batch, int64_t n_trials, int64_t from = -1) {
  BatchRequest b;
  b.index = index;
  b.start = index * per_batch;
  b.end = std::min(b.start + per_batch, n_trials);
  b.from = from < 0 ? b.start : from;
  return b;
}

// Made-up scores of a trial, a deterministic function of its parameters.
Scores score(const TrialParams& p) {
  return {std::floor(10 * p.comp[0].max_weight), p.direction_index * 0.1 + p.comp[1].max_weight};
}

struct Evaluated {
  std::vector<TrialParams> params;
  std::vector<Scores> scores;
  void add(const std::vector<TrialParams>& trials) {
    for (const auto& t : trials) {
      params.push_back(t);
      scores.push_back(score(t));
    }
  }
  History history() const { return {params, scores}; }
};

constexpr int64_t kLayers = 12;

}  // namespace

TEST(Proposer, GridGivesItsTrialsFromTheSliceStart) {
  std::vector<TrialParams> grid = sobol_trials(default_search_space(kLayers), 5, 0, 10);
  const GridProposer whole(grid);
  const GridProposer slice(grid, 4);
  EXPECT_EQ(*whole.size(), 10);
  EXPECT_EQ(*slice.size(), 6);
  const Evaluated none;
  const auto b = whole.propose(batch(1, 4, 10), none.history());  // trials 4..7
  ASSERT_EQ(b.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(same(b[i], grid[4 + i]));
  const auto s = slice.propose(batch(1, 4, 6, 5), none.history());  // slice trials 5 = grid 9
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(same(s[0], grid[9]));
  EXPECT_THROW(slice.propose(batch(1, 4, 8), none.history()), Error);  // beyond the grid
  EXPECT_THROW(GridProposer(grid, 11), Error);
}

TEST(Proposer, SobolIsTheSequenceFromTheSliceStart) {
  const SearchSpace space = default_search_space(kLayers);
  const SobolProposer p(space, 3, 20);
  EXPECT_FALSE(p.size().has_value());
  const Evaluated none;
  EXPECT_TRUE(same(p.propose(batch(2, 8, 100), none.history()), sobol_trials(space, 3, 36, 8)));
  EXPECT_TRUE(same(p.propose(batch(2, 8, 100, 19), none.history()), sobol_trials(space, 3, 39, 5)));
  // The same request, the same trials; another seed, others.
  EXPECT_TRUE(same(p.propose(batch(0, 8, 100), none.history()), p.propose(batch(0, 8, 100), none.history())));
  EXPECT_FALSE(same(p.propose(batch(0, 8, 100), none.history()),
                    SobolProposer(space, 4, 20).propose(batch(0, 8, 100), none.history())));
}

TEST(Proposer, TpeStartsWithSobolThenProposesFromTheHistoryBeforeTheBatch) {
  const SearchSpace space = default_search_space(kLayers);
  const int64_t per_batch = 6, startup = 9, n = 30;
  const TpeProposer tpe(space, 11, startup);
  Evaluated ev;
  ev.add(tpe.propose(batch(0, per_batch, n), ev.history()));
  EXPECT_TRUE(same(ev.params, sobol_trials(space, 11, 0, 6)));
  // Batch 1 straddles the start-up: 3 Sobol trials, then 3 of TPE from the 6 before the batch.
  const auto b1 = tpe.propose(batch(1, per_batch, n), ev.history());
  ASSERT_EQ(b1.size(), 6u);
  std::vector<TrialParams> expect = sobol_trials(space, 11, 6, 3);
  const auto more = tpe_propose(space, ev.params, ev.scores, 3, 11 * 1000003ull + 1);
  expect.insert(expect.end(), more.begin(), more.end());
  EXPECT_TRUE(same(b1, expect));
  ev.add(b1);
  const auto b2 = tpe.propose(batch(2, per_batch, n), ev.history());
  EXPECT_TRUE(same(b2, tpe_propose(space, ev.params, ev.scores, 6, 11 * 1000003ull + 2)));
}

TEST(Proposer, TpeBatchIsTheSameWhereverAnEarlierRunStoppedInsideIt) {
  const SearchSpace space = default_search_space(kLayers);
  const int64_t per_batch = 5, n = 40;
  const TpeProposer tpe(space, 2, 5);
  Evaluated ev;
  for (int64_t b = 0; b < 3; ++b) ev.add(tpe.propose(batch(b, per_batch, n), ev.history()));
  const auto full = tpe.propose(batch(3, per_batch, n), ev.history());
  // A sweep that stopped after 2 trials of batch 3 (--trials 17, now extended) asks for the rest:
  // the history then also holds those 2 trials, which TPE must not use.
  Evaluated partial = ev;
  partial.add({full[0], full[1]});
  const auto rest = tpe.propose(batch(3, per_batch, n, 17), partial.history());
  ASSERT_EQ(rest.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(same(rest[i], full[2 + i]));
  // The last batch of a shorter sweep is a prefix of the full batch.
  const auto short_batch = tpe.propose(batch(3, per_batch, 18), ev.history());
  ASSERT_EQ(short_batch.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(same(short_batch[i], full[i]));
  // Deterministic; the batch index seeds it.
  EXPECT_TRUE(same(tpe.propose(batch(3, per_batch, n), ev.history()), full));
  BatchRequest other = batch(3, per_batch, n);
  other.index = 4;
  EXPECT_FALSE(same(tpe.propose(other, ev.history()), full));
  // A history shorter than the batch start is an error, not a silent other proposal.
  Evaluated short_history;
  short_history.add({ev.params[0]});
  EXPECT_THROW(tpe.propose(batch(3, per_batch, n), short_history.history()), Error);
}
