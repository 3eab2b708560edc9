// Distributed options. `auto` asks the memory planner (the same one `abliterate plan` uses)
// whether a full fp32 copy plus the working memory of a pass fits one rank's share of this
// node's physical memory.
#include "abl/app/dist_options.h"

#include <unistd.h>

#include <algorithm>

#include "abl/core/error.h"
#include "abl/dist/memory_plan.h"
#ifdef ABL_WITH_CUDA
#include "abl/backend/cuda/device.h"
#endif

namespace abl::app {

void declare_dist_options(OptionSet& o) {
  o.group("dist", "Distribution")
      ("sharding", po::value<std::string>()->default_value("auto"),
       "FULL_SHARD, HYBRID_SHARD, NO_SHARD or auto (replicate when a copy fits a rank)")
      ("shard-group-size", po::value<int>()->default_value(0), "ranks sharing one copy of the weights (0 = from --sharding)")
      ("ranks-per-node", po::value<int>()->default_value(0),
       "virtual nodes of this many consecutive ranks (tests of multi-node layouts; env ABL_RANKS_PER_NODE)")
      ("offload-params", po::bool_switch(),
       "cuda: keep weight shards in pinned host memory, copied up before each gather (the CPU backend "
       "always holds them in host memory)")
      ("comm", po::value<std::string>()->default_value("auto"),
       "cuda: weight all-gathers over nccl, or mpi staged through host memory (lets ranks share a GPU); "
       "auto: mpi when a node has more ranks than GPUs");
}

const dist::Topology& configure_topology(dist::Runtime& rt, const po::variables_map& vm,
                                         const model::ModelSpec& spec, const engine::Limits& limits,
                                         BackendKind backend) {
  dist::TopologyRequest req;
  req.sharding = dist::parse_sharding(vm["sharding"].as<std::string>());
  req.shard_group_size = vm["shard-group-size"].as<int>();
  ABL_CHECK(req.shard_group_size >= 0, "--shard-group-size must be >= 0, got {}", req.shard_group_size);
  req.ranks_per_node = vm["ranks-per-node"].as<int>();
  if (req.ranks_per_node == 0) req.ranks_per_node = dist::ranks_per_node_from_env();
  const double mem = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  const int node_ranks = req.ranks_per_node > 0 ? req.ranks_per_node : rt.world_size();
  dist::PlanOptions opts;
  opts.backend = dist::Backend::cpu;
  opts.budget_gib = mem / node_ranks / static_cast<double>(int64_t{1} << 30);
#ifdef ABL_WITH_CUDA
  if (backend == BackendKind::cuda) {
    // One rank's GPU: its memory, shared by the node's ranks when there are more ranks than GPUs.
    const int gpus = std::max(cuda::device_count(), 1);
    opts.backend = dist::Backend::cuda;
    opts.budget_gib = static_cast<double>(cuda::device_memory_bytes(0)) / std::max(1, (node_ranks + gpus - 1) / gpus) /
                      static_cast<double>(int64_t{1} << 30);
  }
#else
  (void)backend;
#endif
  opts.batch_tokens = limits.max_tokens;
  opts.prompt_tokens = std::min<int64_t>(256, limits.max_tokens);
  dist::TopologyRequest probe = req;
  probe.world_size = rt.world_size();
  probe.node_size = node_ranks;
  probe.ranks_per_node = node_ranks;
  probe.sharding = dist::Sharding::no_shard;
  probe.shard_group_size = 0;
  req.fits_one_rank = dist::plan_memory(spec, probe, opts).fits;
  return rt.configure(req);
}

}  // namespace abl::app
