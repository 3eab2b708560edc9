// Bootstrap in one short function (CONVENTIONS 8): MPI_Init_thread → world → node communicator
// (MPI_COMM_TYPE_SHARED, or blocks of --ranks-per-node ranks) → validated topology → shard and
// replica communicators by MPI_Comm_split. MPI errors return codes (MPI_ERRORS_RETURN) so they
// become exceptions that the app turns into one clear message and MPI_Abort.
#include "abl/parallel/runtime.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/watchdog.h"

namespace abl::parallel {

int ranks_per_node_from_env() {
  const char* v = std::getenv("ABL_RANKS_PER_NODE");
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long k = std::strtol(v, &end, 10);
  ABL_CHECK(end && *end == '\0' && k > 0, "ABL_RANKS_PER_NODE must be a positive integer, got '{}'", v);
  return static_cast<int>(k);
}

Runtime::Runtime() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  ABL_CHECK(!initialized, "MPI is already initialised (one Runtime per process)");
  int provided = 0;
  mpi_check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  world_ = std::make_unique<MpiComm>(MPI_COMM_WORLD);
  world_rank_ = world_->rank();
  world_size_ = world_->size();
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  host_ = name;
  MPI_Comm node = MPI_COMM_NULL;
  mpi_check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank_, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  MPI_Comm_size(node, &node_size_);
  MPI_Comm_free(&node);
  watchdog::configure_faults(world_rank_);
  log::Config lc = log::config();
  lc.rank = world_rank_;
  lc.world = world_size_;
  log::configure(lc);
}

Runtime::~Runtime() {
  // Unwinding from an error: MPI_Finalize is collective and the other ranks may be elsewhere, so
  // leave MPI up for the top-level handler, which ends the job (abort_job_if_parallel) or, alone,
  // finalizes (finalize_if_needed).
  if (std::uncaught_exceptions() > 0) return;
  replica_.reset();
  weights_.reset();
  shard_.reset();
  world_.reset();
  MPI_Finalize();
}

void finalize_if_needed() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin) MPI_Finalize();
}

const Topology& Runtime::configure(TopologyRequest req) {
  MPI_Comm node = MPI_COMM_NULL;
  mpi_check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank_, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  MpiComm node_comm(node);
  req.world_size = world_size_;
  req.world_rank = world_rank_;
  req.node_size = node_comm.size();
  // Every rank validates the same numbers (node sizes may differ: take the smallest so an
  // uneven allocation is caught on every rank, not only where it shows).
  int64_t sizes[2] = {-req.node_size, req.node_size};
  world_->all_reduce_max(sizes, 2);
  if (req.ranks_per_node == 0 && -sizes[0] != sizes[1]) {
    fail("nodes have different numbers of ranks ({} to {}); give every node the same count", -sizes[0], sizes[1]);
  }
  // Ranks are numbered node by node (srun's default block distribution, mpirun --map-by slot):
  // local rank, GPU binding and shard groups within a node all follow from that. A cyclic
  // placement would put two ranks of one host on one GPU and groups across hosts: refuse it on
  // every rank. (Only for real nodes: --ranks-per-node blocks of another size simulate nodes.)
  if (req.ranks_per_node == 0 || req.ranks_per_node == req.node_size) {
    const int n = req.node_size, r = world_rank_;
    int64_t v[3] = {node_comm.rank() != r % n ? 1 : 0, r / n, -(r / n)};  // off, node id max, -min
    node_comm.all_reduce_max(v, 3);
    int64_t off = v[0] != 0 || v[1] != -v[2] ? 1 : 0;
    world_->all_reduce_max(&off, 1);
    if (off != 0) {
      throw AgreedError(fmt::format(
          "the ranks of a node are not numbered one after another (a cyclic placement such as srun "
          "--distribution=cyclic or mpirun --map-by node); GPUs are bound and shard groups formed by blocks of {} "
          "consecutive ranks per node: place the ranks in blocks (srun --distribution=block, the default; mpirun "
          "--map-by slot)",
          n));
    }
  }
  topo_ = make_topology(req);
  MPI_Comm shard = MPI_COMM_NULL, weights = MPI_COMM_NULL, replica = MPI_COMM_NULL;
  mpi_check(MPI_Comm_split(MPI_COMM_WORLD, topo_.shard_group, topo_.shard_rank, &shard), "MPI_Comm_split (shard)");
  mpi_check(MPI_Comm_dup(shard, &weights), "MPI_Comm_dup (weights)");
  mpi_check(MPI_Comm_split(MPI_COMM_WORLD, topo_.shard_rank, topo_.shard_group, &replica), "MPI_Comm_split (replica)");
  shard_ = std::make_unique<MpiComm>(shard);
  weights_ = std::make_unique<MpiComm>(weights);
  replica_ = std::make_unique<MpiComm>(replica);
  log::debug("topology: {}", topo_.describe());
  return topo_;
}

void abort_job_if_parallel(std::string_view message, int code) {
  int init = 0, fin = 0, size = 1, rank = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size <= 1) return;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::fprintf(stderr, "[rank %d on %s] error: %.*s\n", rank, host, static_cast<int>(message.size()), message.data());
  std::fprintf(stderr, "[rank %d on %s] ending the whole job (MPI_Abort)\n", rank, host);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
}

void Runtime::abort(std::string_view message, int code) const {
  std::fprintf(stderr, "[rank %d on %s] error: %.*s\n", world_rank_, host_.c_str(), static_cast<int>(message.size()),
               message.data());
  std::fflush(stderr);
  if (world_size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
  MPI_Finalize();
  std::exit(code);
}

}  // namespace abl::parallel
