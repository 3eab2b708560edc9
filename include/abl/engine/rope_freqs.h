// RoPE inverse frequencies, shared by both engines.
#pragma once
#include <vector>

#include "abl/model/model_spec.h"

namespace abl::engine {

// RoPE inverse frequencies (HD/2) with the spec's rope scaling, as transformers computes them.
std::vector<float> rope_inv_freq(const model::ModelSpec& spec);

}  // namespace abl::engine
