// What an engine allocates, by name: printed before a run, summed for `plan`, never exceeded.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace abl::engine {

// Named buffers and their sizes: printed before a run, summed for `plan`, never exceeded.
struct BufferPlan {
  struct Entry {
    std::string name;
    int64_t bytes = 0;
  };
  std::vector<Entry> entries;
  void add(std::string name, int64_t bytes) { entries.push_back({std::move(name), bytes}); }
  int64_t total() const;
  std::string table() const;  // one line per buffer, MiB
};

}  // namespace abl::engine
