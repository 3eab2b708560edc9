// The test fixtures: their folder (ABL_FIXTURE_DIR, or $ABL_FIXTURE_DIR_OVERRIDE when set — a
// checkout at another path, e.g. on a GPU machine) and the prompts of a golden.json.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "abl/io/json_file.h"

namespace abl::testing {

inline std::string fixture_dir() {
  if (const char* o = std::getenv("ABL_FIXTURE_DIR_OVERRIDE"); o != nullptr && *o != '\0') return o;
  return ABL_FIXTURE_DIR;
}

// The input ids of every prompt of `dir`/golden.json.
inline std::vector<std::vector<int32_t>> golden_prompts(const std::string& dir) {
  const io::JsonValue g = io::read_json_file(dir + "/golden.json");
  const io::JsonValue prompts = g.at("prompts");
  std::vector<std::vector<int32_t>> ids(prompts.size());
  for (size_t p = 0; p < prompts.size(); ++p) {
    for (int64_t id : prompts.at(p).at("input_ids").as_int_list()) ids[p].push_back(static_cast<int32_t>(id));
  }
  return ids;
}

}  // namespace abl::testing
