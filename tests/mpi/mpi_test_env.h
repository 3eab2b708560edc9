// What the MPI tests share (main.cpp sets it up): the process's parallel::Runtime, configured from
// the environment (ABL_TEST_SHARDING, ABL_RANKS_PER_NODE), the world's rank and size, and the
// folder where tests write (--output-dir DIR, else a temporary one removed at the end).
#pragma once
#include <cstdlib>
#include <string>

#include "abl/parallel/runtime.h"

namespace abl::testing {

parallel::Runtime& runtime();

inline int world_rank() { return runtime().world_rank(); }
inline int world_size() { return runtime().world_size(); }

// A path in the test folder (the same on every rank).
inline std::string out_file(const std::string& name) {
  const char* dir = std::getenv("ABL_MPI_IO_DIR");
  return std::string(dir ? dir : ".") + "/" + name;
}

}  // namespace abl::testing
