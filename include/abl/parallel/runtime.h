// The MPI job: bootstrap (MPI_Init_thread, world rank/size, node communicator or virtual nodes
// of --ranks-per-node ranks), the validated topology, and one communicator per group. Created
// once by a subcommand that runs on many ranks; without a launcher it is a job of one rank.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "abl/parallel/mpi_comm.h"
#include "abl/parallel/topology.h"

namespace abl::parallel {

class Runtime {
 public:
  Runtime();   // MPI_Init_thread; logging switches to MPI's rank and size
  ~Runtime();  // MPI_Finalize
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int world_rank() const { return world_rank_; }
  int world_size() const { return world_size_; }
  // Ranks on this host (MPI_COMM_TYPE_SHARED), known from start-up: they share its cores and memory.
  int node_size() const { return node_size_; }
  const std::string& host() const { return host_; }

  // Fills in world and node sizes, validates (every rank reaches the same verdict, so an invalid
  // layout fails everywhere at once, reported by rank 0) and creates the group communicators.
  const Topology& configure(TopologyRequest req);
  const Topology& topology() const { return topo_; }

  MpiComm& world() { return *world_; }
  MpiComm& shard_group() { return *shard_; }          // small collectives of the group
  MpiComm& shard_group_weights() { return *weights_; }  // weight all-gathers (own ordering)
  MpiComm& replica_group() { return *replica_; }

  // Ends the whole job from this rank: the message with rank and host, then MPI_Abort.
  [[noreturn]] void abort(std::string_view message, int code = 1) const;

 private:
  int world_rank_ = 0, world_size_ = 1, node_size_ = 1;
  std::string host_;
  Topology topo_;
  std::unique_ptr<MpiComm> world_, shard_, weights_, replica_;
};

// When this process is one rank of a running multi-rank MPI job: prints `message` with the rank
// and host and ends the whole job with MPI_Abort (other ranks may be waiting in a collective).
// Otherwise returns, and the caller reports the error and exits normally.
void abort_job_if_parallel(std::string_view message, int code = 1);

// MPI_Finalize when MPI is up (after an error on a single-rank job).
void finalize_if_needed();

// Ranks per virtual node from ABL_RANKS_PER_NODE (0 when unset).
int ranks_per_node_from_env();

}  // namespace abl::parallel
