// Distributed options. `auto` asks the memory planner (the same one `abliterate plan` uses)
// whether a full fp32 copy plus the working memory of a pass fits one rank's share of this
// node's physical memory.
#include "abl/app/dist_options.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "abl/app/backend.h"
#include "abl/app/run_folder.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/watchdog.h"
#include "abl/parallel/agree.h"
#include "abl/parallel/memory_plan.h"
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
       "auto: mpi when a node has more ranks than GPUs")
      ("hang-timeout", po::value<double>()->default_value(1800),
       "seconds a rank may stay in one collective, file write or pass before the job is ended with a report of "
       "where each rank is (0 = off)");
}

double checked_hang_timeout(double seconds) {
  ABL_CHECK(std::isfinite(seconds) && seconds >= 0, "--hang-timeout must be a number of seconds >= 0, got {}", seconds);
  return seconds;
}

DistOptions parse_dist_options(const po::variables_map& vm) {
  DistOptions o;
  o.sharding = parallel::parse_sharding(vm["sharding"].as<std::string>());
  o.shard_group_size = vm["shard-group-size"].as<int>();
  ABL_CHECK(o.shard_group_size >= 0, "--shard-group-size must be >= 0, got {}", o.shard_group_size);
  o.ranks_per_node = vm["ranks-per-node"].as<int>();
  o.offload_params = vm["offload-params"].as<bool>();
  o.comm = vm["comm"].as<std::string>();
  o.hang_timeout = checked_hang_timeout(vm["hang-timeout"].as<double>());
  return o;
}

void start_watchdog(parallel::Runtime& rt, double seconds) {
  const bool parallel = rt.world_size() > 1;
  watchdog::start(seconds, [parallel](const std::string& report) {
    release_run_folder_lock_on_abort();
    std::fprintf(stderr, "%s: ending the whole job (the ranks above show where each one was)\n",
                 report.substr(0, report.find(']') + 1).c_str());
    std::fflush(stderr);
    if (parallel) MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  });
}

BackendKind agree_backend(parallel::Runtime& rt, const std::string& option) {
  std::string why;
  BackendKind kind = BackendKind::cpu;
  bool ok = true;
  try {
    kind = resolve_backend(option);
  } catch (const Error& e) {
    ok = false;
    why = e.what();
  }
  parallel::agree_all(rt.world(), ok, why);
  // auto: cuda only where every rank has a GPU.
  const int64_t all_cuda = parallel::all_min(rt.world(), kind == BackendKind::cuda ? 1 : 0);
  if (kind == BackendKind::cuda && all_cuda == 0) {
    log::info("--backend {}: not every rank sees a GPU; every rank runs on the cpu backend", option);
  }
  return all_cuda == 1 ? BackendKind::cuda : BackendKind::cpu;
}

const parallel::Topology& configure_topology(parallel::Runtime& rt, const DistOptions& dist,
                                         const model::ModelSpec& spec, const engine::Limits& limits,
                                         BackendKind backend) {
  parallel::TopologyRequest req;
  req.sharding = dist.sharding;
  req.shard_group_size = dist.shard_group_size;
  req.ranks_per_node = dist.ranks_per_node;
  // The environment is rank 0's: every rank must build the same layout.
  if (req.ranks_per_node == 0) {
    req.ranks_per_node = static_cast<int>(parallel::root_value(rt.world(), [] { return parallel::ranks_per_node_from_env(); }));
  }
  // Ranks sharing one host's memory: a virtual node's, else the real host's (the largest of any host).
  const int node_ranks = req.ranks_per_node > 0 ? req.ranks_per_node
                                                : static_cast<int>(parallel::all_max(rt.world(), rt.node_size()));
  // A rank's share of its host's memory, the smallest of any rank, so every rank plans alike.
  const double mem = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  int64_t budget_bytes = static_cast<int64_t>(mem / node_ranks);
  parallel::PlanOptions opts;
  opts.backend = backend;
  opts.engine = engine_footprint(backend);
#ifdef ABL_WITH_CUDA
  if (backend == BackendKind::cuda) {
    // One rank's GPU: its memory, shared by the node's ranks when there are more ranks than GPUs.
    const int gpus = std::max(cuda::device_count(), 1);
    budget_bytes = cuda::device_memory_bytes(0) / std::max(1, (node_ranks + gpus - 1) / gpus);
  }
#endif
  opts.budget_gib = static_cast<double>(parallel::all_min(rt.world(), budget_bytes)) / static_cast<double>(int64_t{1} << 30);
  opts.batch_tokens = limits.max_tokens;
  // A typical sequence for sizing (256 prompt + 100 new tokens), within the model's context; the
  // phases check their real lengths against it (Session::pass).
  int64_t seq_prompt = 256, seq_new = 100;
  const int64_t context = spec.context_length();
  if (context > 0 && seq_prompt + seq_new > context) {
    seq_new = std::min<int64_t>(seq_new, context / 2);
    seq_prompt = context - seq_new;
  }
  opts.prompt_tokens = std::max<int64_t>(1, std::min<int64_t>(seq_prompt, limits.max_tokens));
  opts.max_new_tokens = seq_new;
  parallel::TopologyRequest probe = req;
  probe.world_size = rt.world_size();
  probe.node_size = node_ranks;
  probe.ranks_per_node = node_ranks;
  probe.sharding = parallel::Sharding::no_shard;
  probe.shard_group_size = 0;
  req.fits_one_rank = parallel::plan_memory(spec, probe, opts).fits;
  return rt.configure(req);
}

}  // namespace abl::app
