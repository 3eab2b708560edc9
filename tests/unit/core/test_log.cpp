#include <gtest/gtest.h>

#include "abl/core/error.h"
#include "abl/core/log.h"

using abl::log::Config;
using abl::log::Level;

namespace {
struct RestoreLog {
  Config saved = abl::log::config();
  ~RestoreLog() { abl::log::configure(saved); }
};
}  // namespace

TEST(Log, RankZeroOnlyUnlessAllRanks) {
  RestoreLog restore;
  Config c;
  c.rank = 3;
  c.world = 4;
  abl::log::configure(c);
  EXPECT_FALSE(abl::log::enabled(Level::info));
  EXPECT_FALSE(abl::log::enabled(Level::warn));
  EXPECT_TRUE(abl::log::enabled(Level::error));  // errors from every rank
  c.all_ranks = true;
  abl::log::configure(c);
  EXPECT_TRUE(abl::log::enabled(Level::info));
  EXPECT_FALSE(abl::log::enabled(Level::debug));
}

TEST(Log, LevelsAndQuiet) {
  RestoreLog restore;
  Config c;
  c.level = Level::debug;
  abl::log::configure(c);
  EXPECT_TRUE(abl::log::enabled(Level::debug));
  c.quiet = true;
  abl::log::configure(c);
  EXPECT_FALSE(abl::log::enabled(Level::info));
  EXPECT_TRUE(abl::log::enabled(Level::warn));
  EXPECT_EQ(abl::log::parse_level("warning"), Level::warn);
  EXPECT_THROW(abl::log::parse_level("loud"), abl::Error);
}

TEST(Log, PrefixCarriesRankInMultiRankRuns) {
  RestoreLog restore;
  Config c;
  c.rank = 0;
  c.world = 2;
  abl::log::configure(c);
  ::testing::internal::CaptureStderr();
  abl::log::info("hello {}", 42);
  abl::log::warn("careful");
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("[rank 0] hello 42"), std::string::npos) << err;
  EXPECT_NE(err.find("[rank 0] warn: careful"), std::string::npos) << err;
}
