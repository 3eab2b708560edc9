// Sharded weights on the GPU under mpirun (sharded_device_weights.h, staging_comm.h). Every rank
// shares the machine's one GPU, so the multi-rank group gathers through StagingComm (NCCL refuses
// two ranks on one device). Each rank compares against the resident engine it runs itself:
//  - StagingComm's collectives on device memory, over the world;
//  - one-rank groups (NcclComm and StagingComm on MPI_COMM_SELF), resident and offloaded shards;
//  - the world as one shard group of np ranks, resident and offloaded shards: every rank runs its
//    own prompts in passes, with empty passes where it has none left (before or after its work),
//    plain and ablated — the logits and hidden states are the resident engine's bit for bit, and
//    every rank made the same number of gathers.
// Without a GPU every test is skipped visibly (ctest reports the case as skipped).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "abl/engine/cpu/weights.h"
#include "abl/ablation/trial.h"
#include "abl/engine/cuda/engine.h"
#include "abl/parallel/cuda/device_comm.h"
#include "abl/parallel/cuda/sharded_device_weights.h"
#include "abl/parallel/cuda/staging_comm.h"
#include "abl/engine/weights.h"
#include "common/fixtures.h"
#include "common/cuda_test.h"
#include "common/sharded_engine_check.h"
#include "mpi_test_env.h"

using namespace abl;

namespace {

std::string organism() { return abl::testing::fixture_dir() + "/organism"; }

// One rank's passes and the resident engine's results for them, plain and ablated.
struct Case {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::vector<size_t>> passes;
  std::vector<int32_t> trial_of;
  engine::AblationTable table;
  engine::Limits limits;
  int64_t rows = 0;
  abl::testing::PassResults plain, ablated;
};

// Prompt p belongs to rank p mod G; ranks after the first drop their last prompt so that they run
// out of work early. One prompt per pass; odd ranks put their empty passes first.
std::vector<std::vector<size_t>> rank_passes(size_t P, int G, int rank) {
  std::vector<size_t> mine;
  for (size_t p = static_cast<size_t>(rank); p < P; p += static_cast<size_t>(G)) mine.push_back(p);
  if (rank > 0 && !mine.empty()) mine.pop_back();
  const size_t n = (P + static_cast<size_t>(G) - 1) / static_cast<size_t>(G);  // rank 0's count
  std::vector<std::vector<size_t>> passes;
  if (rank % 2 == 1) passes.resize(n - mine.size());
  for (size_t p : mine) passes.push_back({p});
  passes.resize(n);
  return passes;
}

Case make_case(int G, int rank) {
  Case c;
  c.prompts = abl::testing::golden_prompts(organism());
  c.passes = G == 1 ? std::vector<std::vector<size_t>>{{0, 1, 2}, {}, {3, 4, 5, 6, 7}} : rank_passes(c.prompts.size(), G, rank);
  for (const auto& p : c.prompts) c.rows += static_cast<int64_t>(p.size()) + 1;
  c.limits = {c.rows, 16};
  c.trial_of = {0, 1, -1, 1, 0, -1, 1, 0};
  auto host = engine::HostWeights::load(organism());
  const model::ModelSpec& spec = host->spec();
  c.table = abl::testing::two_trial_table(spec, 31);

  cuda::Stream load;
  cuda::DeviceWeights dev(*host, load.get());
  cuda::CudaEngine eng(dev, c.limits);
  cuda::DeviceKvCache cache(spec, c.rows, eng.stream());
  c.plain = abl::testing::run_passes(eng, cache, c.prompts, c.passes, {}, nullptr);
  const cuda::DeviceAblation ab(dev, c.table, eng.stream());
  c.ablated = abl::testing::run_passes(eng, cache, c.prompts, c.passes, c.trial_of, &ab);
  return c;
}

// The sharded engine over `group` (may be null) against the case's reference.
int64_t check_sharded(const Case& c, cuda::DeviceComm* group, cudaStream_t compute, bool offload,
                      const std::string& what, bool through_group = false) {
  cuda::DeviceShardingOptions opts;
  opts.offload_params = offload;
  opts.gather_through_group = through_group;
  auto w = cuda::DeviceShardedWeights::load(organism(), group, opts, compute);
  EXPECT_EQ(w->group_size(), group ? group->size() : 1);
  EXPECT_EQ(w->collective(), w->group_size() > 1);
  cuda::CudaEngine eng(*w, c.limits);
  EXPECT_EQ(eng.stream(), compute);
  cuda::DeviceKvCache cache(w->spec(), c.rows, eng.stream());
  abl::testing::expect_identical(abl::testing::run_passes(eng, cache, c.prompts, c.passes, {}, nullptr), c.plain,
                                 what);
  const cuda::DeviceAblation ab(*w, c.table, eng.stream());
  abl::testing::expect_identical(abl::testing::run_passes(eng, cache, c.prompts, c.passes, c.trial_of, &ab),
                                 c.ablated, what + ", ablated");
  return w->gathers();
}

}  // namespace

TEST(CudaSharding, StagingCommCollectivesOnDeviceMemory) {
  ABL_REQUIRE_GPU();
  cuda::Stream compute;
  cuda::StagingComm comm(MPI_COMM_WORLD, compute.get());
  const int G = comm.size(), j = comm.rank();
  ASSERT_EQ(G, abl::testing::runtime().world_size());
  // Gathers of a few sizes, twice into the same buffer (the staging is reused and grown).
  for (size_t n : {size_t{1}, size_t{1000}, size_t{300000}, size_t{7}}) {
    std::vector<int32_t> mine(n);
    std::iota(mine.begin(), mine.end(), static_cast<int32_t>(j * 1000003));
    cuda::DeviceBuffer send(n * 4), recv(n * 4 * static_cast<size_t>(G));
    cuda::copy_to_device(send.get(), mine.data(), n * 4, compute.get());
    auto pending = comm.start_all_gather(send.get(), recv.get(), n * 4);
    pending->wait();
    std::vector<int32_t> back(n * static_cast<size_t>(G));
    cuda::copy_to_host(back.data(), recv.get(), back.size() * 4, compute.get());  // ordered by wait()
    for (int r = 0; r < G; ++r) {
      for (size_t i = 0; i < n; i += 97) {
        EXPECT_EQ(back[static_cast<size_t>(r) * n + i], static_cast<int32_t>(r * 1000003 + static_cast<int64_t>(i)))
            << "rank " << r << " element " << i << " of " << n;
      }
    }
  }
  cuda::DeviceBuffer d(16);
  int64_t v[2] = {j + 1, 10 * (j + 1)};
  cuda::copy_to_device(d.get(), v, 16, compute.get());
  comm.all_reduce_sum(d.as<int64_t>(), 2);
  cuda::copy_to_host(v, d.get(), 16, compute.get());
  EXPECT_EQ(v[0], int64_t{G} * (G + 1) / 2);
  EXPECT_EQ(v[1], int64_t{10} * G * (G + 1) / 2);
  v[0] = j;
  cuda::copy_to_device(d.get(), v, 8, compute.get());
  comm.all_reduce_max(d.as<int64_t>(), 1);
  cuda::copy_to_host(v, d.get(), 8, compute.get());
  EXPECT_EQ(v[0], G - 1);
  double x = j == G - 1 ? 2.5 : 0.0;
  cuda::copy_to_device(d.get(), &x, 8, compute.get());
  comm.broadcast(d.get(), 8, G - 1);
  comm.all_reduce_sum(d.as<double>(), 1);
  cuda::copy_to_host(&x, d.get(), 8, compute.get());
  EXPECT_EQ(x, 2.5 * G);
  comm.barrier();
}

// Groups of one rank: no gathers, the communicator's kind makes no difference. Then every unit
// gathered through the communicator anyway (gather_through_group): NCCL's and the staging
// communicator's all-gather into the slots, with their stream events and slot reuse, on one GPU.
TEST(CudaSharding, OneRankGroupsMatchResidentEngine) {
  ABL_REQUIRE_GPU();
  const Case c = make_case(1, 0);
  for (bool through_group : {false, true}) {
    for (bool offload : {false, true}) {
      for (auto kind : {cuda::DeviceCommKind::nccl, cuda::DeviceCommKind::mpi}) {
        cuda::Stream compute;
        const auto comm = cuda::make_device_comm(kind, MPI_COMM_SELF, compute.get());
        ASSERT_EQ(comm->size(), 1);
        EXPECT_EQ(comm->compute_stream(), compute.get());
        const std::string what = std::string(kind == cuda::DeviceCommKind::nccl ? "NCCL" : "staging") +
                                 (offload ? ", offloaded" : "") + (through_group ? ", gathered through it" : "");
        const int64_t gathers = check_sharded(c, comm.get(), compute.get(), offload, what, through_group);
        EXPECT_EQ(gathers > 0, offload || through_group) << what;
      }
    }
  }
}

// The world as one shard group: every unit gathered from np ranks through host MPI.
TEST(CudaSharding, WorldGroupMatchesResidentEngine) {
  ABL_REQUIRE_GPU();
  auto& rt = abl::testing::runtime();
  const Case c = make_case(rt.world_size(), rt.world_rank());
  for (bool offload : {false, true}) {
    cuda::Stream compute;
    cuda::StagingComm group(MPI_COMM_WORLD, compute.get());
    const std::string what = "group of " + std::to_string(group.size()) + (offload ? ", offloaded" : "");
    const int64_t gathers = check_sharded(c, &group, compute.get(), offload, what);
    if (group.size() > 1) {
      EXPECT_GT(gathers, 0) << what;
    }
    // Lockstep: every rank joined every gather.
    int64_t most = gathers, least = -gathers;
    rt.world().all_reduce_max(&most, 1);
    rt.world().all_reduce_max(&least, 1);
    EXPECT_EQ(most, gathers) << what;
    EXPECT_EQ(-least, gathers) << what;
  }
}
