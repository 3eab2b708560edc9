// Decisions taken once (dist/agree.h) on every layout of the invariance runs: rank 0's value or its
// error reaches every rank, and a verdict that fails on some ranks fails on all with the message of
// the lowest failing rank.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "abl/core/error.h"
#include "abl/parallel/agree.h"
#include "mpi_test_env.h"

namespace abl {
namespace {

parallel::Comm& world() { return testing::runtime().world(); }

TEST(Agree, RootValuesReachEveryRank) {
  const int rank = world().rank();
  EXPECT_TRUE(parallel::root_decides(world(), [&] { return rank == 0; }));
  EXPECT_EQ(parallel::root_value(world(), [&] { return int64_t{1000} + rank; }), 1000);
  EXPECT_EQ(parallel::root_string(world(), [&] { return std::string("rank ") + std::to_string(rank); }), "rank 0");
  const std::vector<std::string> strings = {"", "a", std::string(3, '\0'), "üñï"};
  EXPECT_EQ(parallel::root_strings(world(), [&] { return rank == 0 ? strings : std::vector<std::string>{"x"}; }), strings);
}

TEST(Agree, AnErrorOnRootIsTheSameErrorEverywhere) {
  try {
    parallel::root_decides(world(), []() -> bool { throw Error("no such file: prompts.txt"); });
    FAIL() << "no error";
  } catch (const AgreedError& e) {
    EXPECT_STREQ(e.what(), "no such file: prompts.txt");
  }
}

TEST(Agree, TheLowestFailingRankIsNamed) {
  const int rank = world().rank(), size = world().size();
  EXPECT_NO_THROW(parallel::agree_all(world(), true, "unused"));
  if (size == 1) {
    EXPECT_THROW(parallel::agree_all(world(), false, "alone"), AgreedError);
    return;
  }
  try {
    parallel::agree_all(world(), rank == 0 || rank != 1, "rank " + std::to_string(rank) + " failed");
    FAIL() << "no error";
  } catch (const AgreedError& e) {
    EXPECT_STREQ(e.what(), "rank 1: rank 1 failed");
  }
}

TEST(Agree, MinAndMaxOfAllRanks) {
  const int rank = world().rank(), size = world().size();
  EXPECT_EQ(parallel::all_min(world(), 10 - rank), 10 - (size - 1));
  EXPECT_EQ(parallel::all_max(world(), 10 - rank), 10);
}

TEST(Agree, FilesAreReadByRootOnly) {
  // Every rank names its own file; only rank 0's exists: every rank gets rank 0's bytes.
  const std::string path = ::testing::TempDir() + "/agree-" + std::to_string(world().rank()) + ".txt";
  if (world().rank() == 0) std::ofstream(path) << "grid contents\n";
  EXPECT_EQ(parallel::read_file_on_root(world(), world().rank() == 0 ? path : "/no/such/file"), "grid contents\n");
  EXPECT_THROW(parallel::read_file_on_root(world(), "/no/such/file"), AgreedError);
  if (world().rank() == 0) std::remove(path.c_str());
}

}  // namespace
}  // namespace abl
