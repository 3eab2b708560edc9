// GoogleTest under mpirun: MPI is initialised around the whole run, rank 0 prints the progress,
// other ranks print their own failures prefixed with their rank, and the exit code is non-zero
// on every rank when any rank failed. --output-dir DIR keeps the files written (for the h5py
// check); without it they go to a temporary folder removed at the end.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

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

std::string broadcast(std::string s) {
  unsigned long len = s.size();
  MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
  s.resize(len);
  MPI_Bcast(s.data(), static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  std::string dir;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--output-dir") dir = argv[i + 1];
  }
  const bool keep = !dir.empty();
  if (rank == 0) {
    if (!keep) {
      std::random_device rd;
      dir = (std::filesystem::temp_directory_path() /
             ("abl-mpi-io-" + std::to_string(rd()) + "-" + std::to_string(rd())))
                .string();
    }
    std::filesystem::remove_all(dir);  // a clean folder: tests check which files exist
    std::filesystem::create_directories(dir);
  }
  dir = broadcast(dir);
  setenv("ABL_MPI_IO_DIR", dir.c_str(), 1);

  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  std::vector<int> all(static_cast<size_t>(size), 0);
  MPI_Gather(&failed, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) {
    if (any) {
      std::string ranks;
      for (int r = 0; r < size; ++r) {
        if (all[static_cast<size_t>(r)]) ranks += " " + std::to_string(r);
      }
      std::fprintf(stderr, "MPI test FAILED on rank(s):%s of %d\n", ranks.c_str(), size);
    } else {
      std::printf("MPI test passed on all %d rank(s)\n", size);
    }
    if (!keep) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  }
  MPI_Finalize();
  return any ? 1 : 0;
}
