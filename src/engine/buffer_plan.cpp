#include "abl/engine/buffer_plan.h"

#include <fmt/format.h>

namespace abl::engine {

int64_t BufferPlan::total() const {
  int64_t t = 0;
  for (const auto& e : entries) t += e.bytes;
  return t;
}

std::string BufferPlan::table() const {
  std::string s;
  for (const auto& e : entries) {
    s += fmt::format("  {:<28} {:>10.2f} MiB\n", e.name, static_cast<double>(e.bytes) / (1 << 20));
  }
  s += fmt::format("  {:<28} {:>10.2f} MiB\n", "total", static_cast<double>(total()) / (1 << 20));
  return s;
}

}  // namespace abl::engine
