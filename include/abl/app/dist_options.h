// Options of the subcommands that run on many ranks: sharding strategy and layout.
#pragma once
#include "abl/app/cli.h"
#include "abl/dist/runtime.h"
#include "abl/engine/engine.h"

namespace abl::app {

// --sharding, --shard-group-size, --ranks-per-node, --offload-params (section [dist]).
void declare_dist_options(OptionSet& o);

// Resolves the strategy (auto: NO_SHARD when the fp32 weights and the pass buffers fit the
// node's memory per rank) and configures the runtime's topology.
const dist::Topology& configure_topology(dist::Runtime& rt, const po::variables_map& vm,
                                         const model::ModelSpec& spec, const engine::Limits& limits);

}  // namespace abl::app
