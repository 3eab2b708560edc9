// What the MPI tests share: the world communicator's rank and size, and the folder where they
// write (given by --output-dir to the test binary, else a temporary one; see main.cpp).
#pragma once
#include <mpi.h>

#include <cstdlib>
#include <string>

namespace abl::testing {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// A path in the test folder (the same on every rank).
inline std::string out_file(const std::string& name) {
  const char* dir = std::getenv("ABL_MPI_IO_DIR");
  return std::string(dir ? dir : ".") + "/" + name;
}

}  // namespace abl::testing
