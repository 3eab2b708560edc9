// Options of the subcommands that run on many ranks: sharding strategy and layout.
#pragma once
#include "abl/app/backend.h"
#include "abl/app/cli.h"
#include "abl/dist/runtime.h"
#include "abl/engine/engine.h"

namespace abl::app {

// --sharding, --shard-group-size, --ranks-per-node, --offload-params, --comm (section [dist]).
void declare_dist_options(OptionSet& o);

// Resolves the strategy (auto: NO_SHARD when a copy of the weights and the pass buffers fit one
// rank's memory: its share of the node's host memory on the CPU, of its GPU's memory on cuda),
// configures the runtime's topology and, on cuda, binds the rank to its GPU.
const dist::Topology& configure_topology(dist::Runtime& rt, const po::variables_map& vm,
                                         const model::ModelSpec& spec, const engine::Limits& limits,
                                         BackendKind backend);

}  // namespace abl::app
