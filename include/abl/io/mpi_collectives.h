// The few MPI collectives the collective HDF5 files need, on a raw communicator (the io layer is
// below the parallel runtime): a shared verdict before a collective call, the longest string of any
// rank, and strings gathered to one rank. Above io they are reached through parallel::Comm
// (parallel::agree_all, MpiComm::gather_strings). MPI_COMM_NULL means one process.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace abl::io::mpi {

// Collective verdict: every rank of `comm` passes its own `ok`; if any is false, every rank
// throws abl::Error carrying the message of the lowest failing rank, prefixed "rank R: ". Used
// before collective HDF5 calls so that a bad argument on one rank fails all ranks instead of
// leaving the others in a collective. With MPI_COMM_NULL it simply throws when !ok.
void agree(MPI_Comm comm, bool ok, const std::string& message);
// The largest byte length of any string on any rank (0 if none); MPI_COMM_NULL: local.
int64_t collective_max_bytes(MPI_Comm comm, const std::vector<std::string>& strings);
// Every rank's `local` strings concatenated in rank order, on `root` only (others get {}).
std::vector<std::string> gather_strings(MPI_Comm comm, const std::vector<std::string>& local,
                                        int root);

}  // namespace abl::io::mpi
