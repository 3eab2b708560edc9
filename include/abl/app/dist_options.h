// Options of the subcommands that run on many ranks: sharding strategy and layout.
#pragma once
#include "abl/app/backend.h"
#include "abl/app/cli.h"
#include "abl/parallel/runtime.h"
#include "abl/engine/batch.h"

namespace abl::app {

// --sharding, --shard-group-size, --ranks-per-node, --offload-params, --comm, --hang-timeout
// (section [dist]).
void declare_dist_options(OptionSet& o);
// The [dist] options as parsed and checked (--sharding a strategy name, --shard-group-size >= 0,
// --hang-timeout a number of seconds >= 0).
struct DistOptions {
  parallel::Sharding sharding = parallel::Sharding::automatic;
  int shard_group_size = 0;  // 0 = from the strategy
  int ranks_per_node = 0;    // 0 = ABL_RANKS_PER_NODE (rank 0's) or the real hosts
  bool offload_params = false;
  std::string comm = "auto";  // parse_gpu_comm
  double hang_timeout = 1800;  // seconds, 0 = off
};
DistOptions parse_dist_options(const po::variables_map& vm);
// --hang-timeout checked (export declares its own): a finite number >= 0.
double checked_hang_timeout(double seconds);

// Starts the hang watchdog (core/watchdog.h) with a --hang-timeout of `seconds` (0 = off): when it
// fires it prints where this rank is, releases the run folder's lock and ends the whole job
// (MPI_Abort, exit status 1).
void start_watchdog(parallel::Runtime& rt, double seconds);

// --backend resolved once for the whole job: auto is cuda only when every rank sees a GPU; cuda
// when a rank has none is an error naming that rank, on every rank.
BackendKind agree_backend(parallel::Runtime& rt, const std::string& option);

// Resolves the strategy (auto: NO_SHARD when a copy of the weights and the pass buffers fit one
// rank's memory: its share of the node's host memory on the CPU, of its GPU's memory on cuda),
// configures the runtime's topology and, on cuda, binds the rank to its GPU.
const parallel::Topology& configure_topology(parallel::Runtime& rt, const DistOptions& dist,
                                         const model::ModelSpec& spec, const engine::Limits& limits,
                                         BackendKind backend);

}  // namespace abl::app
