// GoogleTest under mpirun: one dist::Runtime for the whole process, configured from the
// environment (ABL_TEST_SHARDING, ABL_RANKS_PER_NODE), and an exit code that is non-zero on
// every rank when any rank failed.
#include <gtest/gtest.h>

#include <cstdlib>

#include "abl/core/error.h"
#include "dist_test_env.h"

namespace abl::testing {

dist::Runtime& runtime() {
  static dist::Runtime rt;
  return rt;
}

}  // namespace abl::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto& rt = abl::testing::runtime();
  try {
    abl::dist::TopologyRequest req;
    const char* s = std::getenv("ABL_TEST_SHARDING");
    req.sharding = abl::dist::parse_sharding(s ? s : "HYBRID_SHARD");
    req.ranks_per_node = abl::dist::ranks_per_node_from_env();
    const auto& t = rt.configure(req);
    if (rt.world_rank() == 0) std::printf("topology: %s\n", t.describe().c_str());
  } catch (const abl::Error& e) {
    rt.abort(e.what());
  }
  if (rt.world_rank() != 0) {
    // Only rank 0 prints the progress; failures on any rank are still reported by that rank.
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int64_t any = failed;
  rt.world().all_reduce_max(&any, 1);
  if (any && rt.world_rank() == 0) std::printf("FAILED on at least one rank\n");
  return any ? 1 : 0;
}
