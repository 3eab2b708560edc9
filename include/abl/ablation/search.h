// Trial search (DESIGN.md §1.5), batch-sequential: explicit grids from a file, quasi-random
// Sobol batches over the default ranges, and a batched multi-objective TPE (refusals, KL) that
// starts after a Sobol start-up. Every proposal is a pure function of its inputs (the space,
// the trials so far with their scores, the batch size and a seed), so a resumed sweep proposes
// exactly what an uninterrupted one would, and every rank can compute the same proposals.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "abl/ablation/trial.h"

namespace abl::ablation {

// The default search ranges for a model of `num_layers` layers (last = L−1), DESIGN.md §1.5:
// direction_scope ∈ {global, per_layer}; direction_index ∈ [0.4·last, 0.9·last];
// attn.max_weight ∈ [0.8, 1.5]; mlp.max_weight ∈ [−0.25, 1.5] clamped at 0;
// *.max_weight_position ∈ [0.6·last, last]; *.min_weight = f·max_weight, f ∈ [0, 1];
// *.min_weight_distance ∈ [1, max(0.6·last, 1)].
struct SearchSpace {
  int64_t num_layers = 0;
  bool search_scope = true;  // false: every trial is global
  // The unit-cube point u (dims() values in [0, 1]) → parameters. Dimensions in order:
  // direction_scope (only when search_scope; u < 0.5 → global), direction_index, then for attn
  // and mlp: max_weight, max_weight_position, f, min_weight_distance.
  TrialParams map(const std::vector<double>& u) const;
  // A point that map() takes to p (clamped into the cube where p lies outside the ranges), so
  // TPE can place kernels at evaluated trials; where map() is not one-to-one it picks the middle
  // of the preimage (mlp.max_weight = 0: the middle of the clamped part; max_weight = 0: f = ½).
  std::vector<double> unmap(const TrialParams& p) const;
  int64_t dims() const;
};
SearchSpace default_search_space(int64_t num_layers);

// Sobol' low-discrepancy sequence in up to 16 dimensions (our own direction numbers, see the
// source), with a seed-dependent digital shift (seed 0: unshifted). point(i) is the i-th point.
class Sobol {
 public:
  Sobol(int64_t dims, uint64_t seed);
  std::vector<double> point(uint64_t index) const;
  int64_t dims() const { return dims_; }

 private:
  int64_t dims_;
  std::vector<std::array<uint32_t, 32>> v_;  // direction numbers per dimension
  std::vector<uint32_t> shift_;
};

// Trials first_index .. first_index+count−1 of the Sobol sequence mapped through the space.
// Trial j uses Sobol point j+1, whatever the seed: the unshifted point 0 is the all-zero corner
// (every parameter at the low end of its range), a poor first guess. Skipping it costs the first
// 2^k trials one point of their stratification; a shifted sequence (seed != 0) loses the same.
std::vector<TrialParams> sobol_trials(const SearchSpace& space, uint64_t seed, int64_t first_index,
                                      int64_t count);

// A grid file: one parameter per line, `name = v1, v2, ...` or `name = lo:hi:count` (count
// evenly spaced values, ends included), `#` comments; numbers may be written relative to the
// last layer index as `last` or `0.6*last`. Parameters not named keep the defaults of
// default_grid_params (plain abliteration: global, every layer, weight 1). The trials are the
// Cartesian product in file order (the last parameter varies fastest). Errors name FILE:LINE
// (unknown parameter, bad number, empty range, repeated parameter, value out of its domain).
// Names are kParamNames plus the shorthands max_weight, max_weight_position, min_weight and
// min_weight_distance, which set attn and mlp alike (one grid axis). A component whose
// min_weight is not named gets min_weight = its max_weight (a flat kernel). direction_scope
// takes the words global and per_layer. At most kMaxGridTrials trials.
inline constexpr int64_t kMaxGridTrials = 1000000;
// global, direction_index = round(0.6·last), both components λ = 1 on every layer
// (max_weight_position 0, min_weight_distance max(last, 1)).
TrialParams default_grid_params(int64_t num_layers);
std::vector<TrialParams> parse_grid_file(const std::string& path, int64_t num_layers);
std::vector<TrialParams> parse_grid_text(const std::string& text, const std::string& name,
                                         int64_t num_layers);

// Scores of an evaluated trial; both are minimized.
struct Scores {
  double refusals = 0;  // count
  double kl = 0;
};

// Indices of the non-dominated trials, sorted by refusals then KL. Of trials with equal scores
// only the first (lowest index) is kept; trials with a NaN score are never on the front.
std::vector<size_t> pareto_front(const std::vector<Scores>& scores);

// Batched multi-objective TPE: `count` new trials from the evaluated ones (params, scores),
// splitting them into a good set (the best ranks of non-dominated sorting, a fraction gamma)
// and the rest, and choosing candidates that maximize l(x)/g(x) of Parzen estimators in the
// unit cube, spread over the batch. Deterministic for a given seed. Fewer than 2 evaluated
// trials: the Sobol trials done.size() .. done.size()+count−1 (sobol_trials with this seed).
struct TpeOptions {
  double gamma = 0.25;
  int64_t candidates = 64;  // per proposed trial
};
std::vector<TrialParams> tpe_propose(const SearchSpace& space, const std::vector<TrialParams>& done,
                                     const std::vector<Scores>& scores, int64_t count, uint64_t seed,
                                     const TpeOptions& opts = {});

}  // namespace abl::ablation
