// Distributed options. `auto` compares what a full fp32 copy plus the pass buffers need with
// this node's physical memory divided among its ranks (the CPU backend's budget).
#include "abl/app/dist_options.h"

#include <unistd.h>

#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/model/weights.h"

namespace abl::app {

void declare_dist_options(OptionSet& o) {
  o.group("dist", "Distribution")
      ("sharding", po::value<std::string>()->default_value("auto"),
       "FULL_SHARD, HYBRID_SHARD, NO_SHARD or auto (replicate when a copy fits a rank)")
      ("shard-group-size", po::value<int>()->default_value(0), "ranks sharing one copy of the weights (0 = from --sharding)")
      ("ranks-per-node", po::value<int>()->default_value(0),
       "virtual nodes of this many consecutive ranks (tests of multi-node layouts; env ABL_RANKS_PER_NODE)")
      ("offload-params", po::bool_switch(), "keep weight shards in host memory (the CPU backend always does)");
}

const dist::Topology& configure_topology(dist::Runtime& rt, const po::variables_map& vm,
                                         const model::ModelSpec& spec, const engine::Limits& limits) {
  dist::TopologyRequest req;
  req.sharding = dist::parse_sharding(vm["sharding"].as<std::string>());
  req.shard_group_size = vm["shard-group-size"].as<int>();
  ABL_CHECK(req.shard_group_size >= 0, "--shard-group-size must be >= 0, got {}", req.shard_group_size);
  req.ranks_per_node = vm["ranks-per-node"].as<int>();
  if (req.ranks_per_node == 0) req.ranks_per_node = dist::ranks_per_node_from_env();
  const double mem = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  const double need = static_cast<double>(model::weight_bytes(spec, DType::f32)) +
                      static_cast<double>(engine::Engine::plan_for(spec, limits).total());
  // The node's ranks share its memory; leave a quarter for the OS, caches and the KV cache.
  int node_ranks = req.ranks_per_node > 0 ? req.ranks_per_node : rt.world_size();
  req.fits_one_rank = need * node_ranks <= 0.75 * mem;
  return rt.configure(req);
}

}  // namespace abl::app
