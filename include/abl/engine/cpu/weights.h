// HostWeights holds every unit in fp32 host memory (the CPU engine's resident weights), loaded
// from safetensors or generated for a synthetic preset; the twin of engine/cuda/device_weights.h.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "abl/engine/weights.h"

namespace abl::engine {

class HostWeights final : public WeightSource {
 public:
  // `model` is a model folder or "synthetic:<preset>"; files are checked before data is read.
  static std::unique_ptr<HostWeights> load(const std::string& model);
  // From a spec already parsed (e.g. tests) and a model folder, or synthetic when dir is empty.
  static std::unique_ptr<HostWeights> load(const model::ModelSpec& spec, const std::string& dir);

  const model::ModelSpec& spec() const override { return spec_; }
  const float* embedding() override { return embed_.data(); }
  LayerWeights layer(int64_t l) override;
  HeadWeights head() override;
  int64_t bytes() const;  // host memory held

  // Mutable access to one tensor of a layer (tests and export write modified weights).
  float* layer_tensor(int64_t l, model::WeightRole role, int32_t expert = -1);

 private:
  HostWeights() = default;
  model::ModelSpec spec_;
  std::vector<UnitLayout> layouts_;  // (L)
  std::vector<std::vector<float>> units_;  // L units
  std::vector<float> embed_, final_norm_, lm_head_;
  std::vector<float> final_norm_bias_, lm_head_bias_;  // norm_bias, lm_head_bias (else empty)
};

}  // namespace abl::engine
