// The ablation epilogue on the GPU (DESIGN.md §2; CPU twin: abl::engine::AblationEpilogue).
// On the fp32 output y(T,H) of o_proj or down_proj, per token, with its sequence's trial:
//   none: y' = y − λ v (vᵀy)
//   pre:  y' = y − λ (n⊙v) ((v⊘n)ᵀ y)
//   full: y' = (y − λ (n⊙v) ((v⊘n)ᵀ y)) ⊘ s,  s_i² = 1 − 2λ v_i (Ŵa)_i + λ² v_i² ‖a‖²,  a = Ŵᵀv
// The weight-derived vectors (n, Ŵa, ‖a‖²) are computed on the device from the gathered bf16
// weight once per (layer, component, direction); the apply step is then O(H) per token.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace abl::cuda {

// Row normalisation, numbered as abl::engine::RowNorm.
enum class AblationMode : int32_t { none = 0, pre = 1, full = 2 };

// Per-trial tables of one batch of trials (K trials, L layers), device pointers; uploaded once
// per batch of trials. Component c is engine::Component (0 = attn.o_proj, 1 = mlp.down_proj).
struct AblationTrials {
  int32_t num_trials = 0;            // K
  int32_t num_layers = 0;            // L
  const int32_t* mode = nullptr;     // (K) AblationMode
  const int32_t* slot = nullptr;     // (K, L) direction slot of each trial in each layer
  const float* lambda = nullptr;     // (K, 2, L) λ of each trial, component, layer (0 = untouched)
};

// The host image of AblationTrials, in the same layout; the caller copies the three vectors into
// device buffers and points an AblationTrials at them.
struct AblationTrialsHost {
  int32_t num_layers = 0;        // L
  std::vector<int32_t> mode;     // (K)
  std::vector<int32_t> slot;     // (K, L)
  std::vector<float> lambda;     // (K, 2, L)

  explicit AblationTrialsHost(int32_t layers) : num_layers(layers) {}
  int32_t num_trials() const { return static_cast<int32_t>(mode.size()); }
  // Appends one trial; slots(L) index the direction slots, lambda_*(L) the weights per layer.
  // A slot outside [0, num_slots) or a mode out of range is an error naming the trial and layer.
  void add_trial(AblationMode m, const int32_t* slots, const float* lambda_attn, const float* lambda_mlp,
                 int32_t num_slots);
};

// The direction-dependent inputs of one (layer, component) for S direction slots, device pointers.
// n is only read by pre/full trials, wa and a2 only by full trials; they may be null when no trial
// of the batch needs them.
struct AblationVectors {
  const float* v = nullptr;   // (S, H) unit directions
  const float* n = nullptr;   // (H) row norms of the component's weight W (H, in)
  const float* wa = nullptr;  // (S, H) Ŵa per slot
  const float* a2 = nullptr;  // (S) ‖a‖² per slot
};

// n(H) = row norms of w(H, in) (bf16, fp32 accumulation). Direction independent.
void ablation_row_norms(const __nv_bfloat16* w, int64_t H, int64_t in, float* n, cudaStream_t stream);

// For S directions v(S,H) and n from ablation_row_norms: a(S,in) = Ŵᵀv (scratch, also useful
// output), wa(S,H) = Ŵa and a2(S) = ‖a‖², with rows of zero norm contributing nothing (as on the
// CPU). Two passes over w per direction; meant to run once per (layer, component, direction).
void ablation_direction_vectors(const __nv_bfloat16* w, int64_t H, int64_t in, const float* n, const float* v,
                                int64_t S, float* a, float* wa, float* a2, cudaStream_t stream);

// Applies the epilogue in place on y(T,H) for component `component` of layer `layer`: token t
// belongs to sequence row_seq[t], whose trial is seq_trial[...] (−1 = none). Tokens without a
// trial, or whose trial has λ = 0 here, are left untouched. Trial ids are validated on the host
// when the batch is built; an id outside [0, K) is treated as −1.
void ablation_apply(float* y, int64_t T, int64_t H, const int64_t* row_seq, const int32_t* seq_trial,
                    const AblationTrials& trials, int32_t component, int32_t layer, const AblationVectors& vecs,
                    cudaStream_t stream);

// ablation_apply on mlp.down_proj of an MoE layer's routed experts: y(rows, H) holds the expert
// outputs sorted by expert (grouped_gemm.h), row r belongs to the expert e with offsets[e] <= r <
// offsets[e+1] (device, experts + 1 entries) and to sequence row_seq[r], and is ablated with
// vecs[e] (a device array of `experts` vector sets: each expert its own row norms).
void ablation_apply_grouped(float* y, int64_t rows, int64_t H, const int64_t* row_seq, const int32_t* seq_trial,
                            const AblationTrials& trials, int32_t layer, const int64_t* offsets, int64_t experts,
                            const AblationVectors* vecs, cudaStream_t stream);

}  // namespace abl::cuda
