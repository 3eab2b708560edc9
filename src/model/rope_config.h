// RoPE scaling in config.json (`rope_scaling`, or an entry of transformers 5's `rope_parameters`)
// -> RopeScaling: default, linear, llama3, longrope (and Phi-3's older names su / yarn with
// factor lists), yarn. Other types are refused naming the key.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "abl/io/json_file.h"
#include "abl/model/model_spec.h"

namespace abl::model {

// The top-level keys some scalings read besides their own block.
struct RopeTopLevel {
  int64_t max_position_embeddings = 0;
  std::optional<int64_t> original_max_position_embeddings = {};  // Phi-3's key (the config class's default too)
};

void parse_rope_scaling(const io::JsonValue& r, const RopeTopLevel& top, RopeScaling* out);

// The scaling's values are usable (positive factors, ordered bands, list lengths); throws naming
// the key otherwise.
void check_rope_scaling(const ModelSpec& s);

// " llama3 x8", " yarn x4 (from 32768 tokens, attention x1.139)", ... ("" for none).
std::string describe_rope_scaling(const RopeScaling& r);

}  // namespace abl::model
