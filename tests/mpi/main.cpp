// The one GoogleTest main of every MPI test program: one parallel::Runtime for the whole process
// (MPI is initialised around the run), its topology configured from the environment
// (ABL_TEST_SHARDING, default HYBRID_SHARD; ABL_RANKS_PER_NODE), a test folder shared by all ranks
// (--output-dir DIR keeps the files, e.g. for the h5py check; else a temporary folder removed at
// the end). Rank 0 prints the progress, other ranks print their own failures prefixed with their
// rank, and the exit code is non-zero on every rank when any rank failed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "abl/core/error.h"
#include "mpi_test_env.h"

namespace abl::testing {

parallel::Runtime& runtime() {
  static parallel::Runtime rt;
  return rt;
}

}  // namespace abl::testing

namespace {

// Failures of a rank other than 0, which has no progress printer. The test's name is kept
// from OnTestStart: UnitTest::current_test_info() would deadlock inside OnTestPartResult.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestStart(const ::testing::TestInfo& t) override {
    test_ = std::string(t.test_suite_name()) + "." + t.name();
  }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s %s:%d: Failure\n%s\n", rank_, test_.c_str(),
                 r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
  }
  void OnTestEnd(const ::testing::TestInfo& t) override {
    if (t.result()->Failed()) std::fprintf(stderr, "[rank %d] FAILED %s\n", rank_, test_.c_str());
  }

 private:
  int rank_;
  std::string test_;
};

// The test folder: --output-dir or a fresh temporary one, created clean by rank 0.
std::string make_test_folder(abl::parallel::Runtime& rt, int argc, char** argv, bool& keep) {
  std::string dir;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--output-dir") dir = argv[i + 1];
  }
  keep = !dir.empty();
  if (rt.world_rank() == 0) {
    if (!keep) {
      std::random_device rd;
      dir = (std::filesystem::temp_directory_path() /
             ("abl-mpi-test-" + std::to_string(rd()) + "-" + std::to_string(rd())))
                .string();
    }
    std::filesystem::remove_all(dir);  // a clean folder: tests check which files exist
    std::filesystem::create_directories(dir);
  }
  uint64_t len = dir.size();
  rt.world().broadcast(&len, sizeof(len), 0);
  dir.resize(len);
  rt.world().broadcast(dir.data(), len, 0);
  return dir;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto& rt = abl::testing::runtime();
  bool keep = false;
  std::string dir;
  try {
    abl::parallel::TopologyRequest req;
    const char* s = std::getenv("ABL_TEST_SHARDING");
    req.sharding = abl::parallel::parse_sharding(s ? s : "HYBRID_SHARD");
    req.ranks_per_node = abl::parallel::ranks_per_node_from_env();
    const auto& t = rt.configure(req);
    if (rt.world_rank() == 0) std::printf("topology: %s\n", t.describe().c_str());
    dir = make_test_folder(rt, argc, argv, keep);
  } catch (const abl::Error& e) {
    rt.abort(e.what());
  }
  setenv("ABL_MPI_IO_DIR", dir.c_str(), 1);

  const int rank = rt.world_rank(), size = rt.world_size();
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  const int64_t failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  std::vector<int64_t> all(static_cast<size_t>(size), 0);
  rt.world().all_gather(&failed, all.data(), sizeof(failed));
  if (rank == 0) {
    std::string ranks;
    for (int r = 0; r < size; ++r) {
      if (all[static_cast<size_t>(r)]) ranks += " " + std::to_string(r);
    }
    if (!ranks.empty()) {
      std::fprintf(stderr, "MPI test FAILED on rank(s):%s of %d\n", ranks.c_str(), size);
    } else {
      std::printf("MPI test passed on all %d rank(s)\n", size);
    }
    if (!keep) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  }
  for (int64_t f : all) {
    if (f) return 1;
  }
  return 0;
}
