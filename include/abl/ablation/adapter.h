// The ablation of one weight as a PEFT adapter: W_eff = W + B·A (LoRA) or, for row normalization
// `full`, W_eff = m ⊙ (W + B·A) / ‖W + B·A‖_row (DoRA, PEFT's use_dora). With n the row norms of W
// and Ŵ = W with unit rows (ablate_weight, export.h):
//   none: W' = W − λ v (vᵀW)                       = W + B·A, B = −λ v,     A = vᵀW     (rank 1, exact)
//   pre:  W' = W − λ (n⊙v) (vᵀŴ)                   = W + B·A, B = −λ (n⊙v), A = vᵀŴ     (rank 1, exact)
//   full: W'_i = n_i (W_i + B_i A) / ‖W_i + B_i A‖  with the B, A of pre:              (DoRA rank 1, m = n, exact)
// `full` is not W + (low rank) in general (every row is rescaled), so a plain LoRA of it is an
// approximation: with approx_rank R > 0 the factors are a rank-R truncated SVD of W' − W
// (randomized subspace iteration, fixed seed: deterministic).
#pragma once
#include <cstdint>
#include <vector>

#include "abl/engine/ablation_table.h"

namespace abl::ablation {

struct AdapterFactors {
  int64_t out = 0, in = 0, rank = 0;
  std::vector<float> a;          // lora_A (rank, in)
  std::vector<float> b;          // lora_B (out, rank)
  std::vector<float> magnitude;  // DoRA's lora_magnitude_vector (out); empty for plain LoRA
};

// Factors reproducing ablate_weight(W, v, λ, mode) for W (out, in). approx_rank 0: the exact
// structure above; approx_rank R > 0 with mode full: a rank-R LoRA (truncated SVD of the delta,
// zero-padded when R > min(out, in)); ignored for none and pre, which are exact at rank 1.
AdapterFactors adapter_factors(const float* w, int64_t out, int64_t in, const float* v, float lambda,
                               engine::RowNorm mode, int64_t approx_rank);

// What PEFT computes for the weight from W and the factors (scaling 1): W + B·A, or with a
// magnitude DoRA's m ⊙ (W + B·A) / ‖W + B·A‖_row; in place, computed in double, rounded once.
void apply_adapter(float* w, const AdapterFactors& f);

// How far W + adapter (evaluated in double from the stored values) is from the ablated weight
// W' = ablate_weight(W) as the merged f32 export stores it:
// rel_fro = ‖W' − W_eff‖_F / ‖W' − W‖_F (0 when W' = W), max_abs = max |W' − W_eff|.
struct AdapterError {
  double err_sq = 0;    // ‖W' − W_eff‖_F²
  double delta_sq = 0;  // ‖W' − W‖_F²
  double max_abs = 0;
  double rel_fro() const;
  void add(const AdapterError& o);  // sums the squares, keeps the larger max
};
AdapterError adapter_error(const float* w, const float* ablated, const AdapterFactors& f);

}  // namespace abl::ablation
