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

// Starts the hang watchdog with --hang-timeout (core/watchdog.h): when it fires it prints where this
// rank is, releases the run folder's lock and ends the whole job (MPI_Abort, exit status 1).
void start_watchdog(parallel::Runtime& rt, const po::variables_map& vm);

// --backend resolved once for the whole job: auto is cuda only when every rank sees a GPU; cuda
// when a rank has none is an error naming that rank, on every rank.
BackendKind agree_backend(parallel::Runtime& rt, const std::string& option);

// Resolves the strategy (auto: NO_SHARD when a copy of the weights and the pass buffers fit one
// rank's memory: its share of the node's host memory on the CPU, of its GPU's memory on cuda),
// configures the runtime's topology and, on cuda, binds the rank to its GPU.
const parallel::Topology& configure_topology(parallel::Runtime& rt, const po::variables_map& vm,
                                         const model::ModelSpec& spec, const engine::Limits& limits,
                                         BackendKind backend);

}  // namespace abl::app
