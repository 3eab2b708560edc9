#include "abl/engine/ablation_table.h"

#include "abl/core/error.h"

namespace abl::engine {

RowNorm parse_row_norm(std::string_view name) {
  if (name == "none") return RowNorm::none;
  if (name == "pre") return RowNorm::pre;
  if (name == "full") return RowNorm::full;
  fail("invalid row normalization '{}' (expected none, pre or full)", name);
}

std::string_view row_norm_name(RowNorm m) {
  switch (m) {
    case RowNorm::none: return "none";
    case RowNorm::pre: return "pre";
    case RowNorm::full: return "full";
  }
  return "?";
}

}  // namespace abl::engine
