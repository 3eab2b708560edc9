// MPI helpers of the collective HDF5 files (mpi_collectives.h).
#include "abl/io/mpi_collectives.h"

#include <algorithm>
#include <climits>
#include <numeric>

#include <fmt/format.h>

#include "abl/core/error.h"
#include "abl/core/watchdog.h"

namespace abl::io::mpi {

// MPI errors are fatal (MPI_ERRORS_ARE_FATAL, the default), so return codes are not checked.
void agree(MPI_Comm comm, bool ok, const std::string& message) {
  watchdog::fault_delay();
  watchdog::Scope at("HDF5 agree (MPI_Allreduce)");
  if (comm == MPI_COMM_NULL) {
    if (!ok) throw Error(message);
    return;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = ok ? size : rank, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  std::string text = rank == first ? message : std::string();
  uint64_t len = text.size();
  MPI_Bcast(&len, 1, MPI_UINT64_T, first, comm);
  text.resize(len);
  MPI_Bcast(text.data(), static_cast<int>(len), MPI_CHAR, first, comm);
  throw Error(size > 1 ? fmt::format("rank {}: {}", first, text) : text);
}

int64_t collective_max_bytes(MPI_Comm comm, const std::vector<std::string>& strings) {
  int64_t mine = 0;
  for (const auto& s : strings) mine = std::max<int64_t>(mine, static_cast<int64_t>(s.size()));
  if (comm == MPI_COMM_NULL) return mine;
  int64_t all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_MAX, comm);
  return all;
}

std::vector<std::string> gather_strings(MPI_Comm comm, const std::vector<std::string>& local,
                                        int root) {
  if (comm == MPI_COMM_NULL) return local;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  // Sizes first, agreed by every rank, so that the int counts of MPI_Gatherv cannot overflow.
  int64_t my_bytes = 0;
  for (const auto& s : local) my_bytes += static_cast<int64_t>(s.size());
  int64_t totals[2] = {0, 0}, mine[2] = {my_bytes, static_cast<int64_t>(local.size())};
  MPI_Allreduce(mine, totals, 2, MPI_INT64_T, MPI_SUM, comm);
  agree(comm, totals[0] <= INT_MAX && totals[1] <= INT_MAX,
        fmt::format("gather_strings: {} strings of {} bytes exceed one MPI message", totals[1],
                    totals[0]));

  int counts[2] = {static_cast<int>(local.size()), static_cast<int>(my_bytes)};
  std::vector<int> all_counts(rank == root ? 2 * size : 0);
  MPI_Gather(counts, 2, MPI_INT, all_counts.data(), 2, MPI_INT, root, comm);

  std::vector<int64_t> lengths(local.size());
  std::string bytes;
  bytes.reserve(static_cast<size_t>(my_bytes));
  for (size_t i = 0; i < local.size(); ++i) {
    lengths[i] = static_cast<int64_t>(local[i].size());
    bytes += local[i];
  }

  std::vector<int> n_strings(size), n_bytes(size), string_displs(size), byte_displs(size);
  std::vector<int64_t> all_lengths;
  std::string all_bytes;
  if (rank == root) {
    for (int r = 0; r < size; ++r) {
      n_strings[r] = all_counts[2 * r];
      n_bytes[r] = all_counts[2 * r + 1];
    }
    std::exclusive_scan(n_strings.begin(), n_strings.end(), string_displs.begin(), 0);
    std::exclusive_scan(n_bytes.begin(), n_bytes.end(), byte_displs.begin(), 0);
    all_lengths.resize(static_cast<size_t>(totals[1]));
    all_bytes.resize(static_cast<size_t>(totals[0]));
  }
  MPI_Gatherv(lengths.data(), counts[0], MPI_INT64_T, all_lengths.data(), n_strings.data(),
              string_displs.data(), MPI_INT64_T, root, comm);
  MPI_Gatherv(bytes.data(), counts[1], MPI_CHAR, all_bytes.data(), n_bytes.data(),
              byte_displs.data(), MPI_CHAR, root, comm);

  std::vector<std::string> out;
  if (rank != root) return out;
  out.reserve(all_lengths.size());
  size_t at = 0;
  for (int64_t len : all_lengths) {
    out.emplace_back(all_bytes, at, static_cast<size_t>(len));
    at += static_cast<size_t>(len);
  }
  return out;
}

}  // namespace abl::io::mpi
