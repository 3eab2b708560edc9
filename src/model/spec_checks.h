// Checks of config.json values shared by the parser's files (model_spec.cpp, rope_config.cpp):
// each error names the config file and the key.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "abl/core/error.h"
#include "abl/model/model_spec.h"

namespace abl::model {

// Everything must also fit products like V * H in int64_t without overflow.
constexpr int64_t kMaxDim = int64_t{1} << 31;

[[noreturn]] inline void bad_key(const ModelSpec& s, const char* key, const std::string& msg) {
  fail("{}: key '{}': {}", s.source, key, msg);
}

inline void check_size(const ModelSpec& s, const char* key, int64_t v) {
  if (v <= 0) bad_key(s, key, fmt::format("must be positive, found {}", v));
  if (v > kMaxDim) bad_key(s, key, fmt::format("{} is implausibly large", v));
}

}  // namespace abl::model
