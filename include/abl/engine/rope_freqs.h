// RoPE inverse frequencies, shared by both engines.
#pragma once
#include <vector>

#include "abl/model/model_spec.h"

namespace abl::engine {

// RoPE inverse frequencies (HD/2) with the spec's rope scaling, as transformers computes them.
// local: those of the sliding-window layers of a spec with rope_local_theta (Gemma 3): that base,
// no scaling.
std::vector<float> rope_inv_freq(const model::ModelSpec& spec, bool local = false);

// LongRoPE's long-factor inverse frequencies (HD/2) of the global layers, for sequences longer than
// spec.long_rope_after(); empty for every other rope.
std::vector<float> rope_long_inv_freq(const model::ModelSpec& spec);

// The factor cos and sin are multiplied by (the attention factor of LongRoPE and YaRN; 1 otherwise).
float rope_attention_factor(const model::ModelSpec& spec, bool local = false);

}  // namespace abl::engine
