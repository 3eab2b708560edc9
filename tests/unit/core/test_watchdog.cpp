// The hang watchdog: where a rank is, and a job that stays in one place too long is ended.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "abl/core/watchdog.h"

namespace abl {
namespace {

TEST(Watchdog, ReportsThePlaceAndThePhase) {
  watchdog::set_phase("sweep batch 3");
  {
    watchdog::Scope at("MPI_Allreduce (max)");
    EXPECT_NE(watchdog::where_now().find("in MPI_Allreduce (max) for 0 s (phase: sweep batch 3)"), std::string::npos)
        << watchdog::where_now();
  }
  watchdog::mark("forward pass");
  EXPECT_EQ(watchdog::where_now().rfind("in forward pass", 0), 0u) << watchdog::where_now();
  watchdog::set_phase("");
}

TEST(WatchdogDeathTest, EndsAProcessThatStaysInOnePlace) {
  EXPECT_EXIT(
      {
        watchdog::mark("HDF5 close (H5Fclose)");
        watchdog::start(
            0.3,
            [](const std::string& report) {
              std::fprintf(stderr, "fired: %s\n", report.c_str());
              std::_Exit(3);
            },
            0.0);
        std::this_thread::sleep_for(std::chrono::seconds(20));
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(3), "hang watchdog: no progress for 0 s .* this rank is in HDF5 close \\(H5Fclose\\)");
}

TEST(WatchdogDeathTest, ProgressKeepsItQuiet) {
  EXPECT_EXIT(
      {
        watchdog::start(0.5, [](const std::string&) { std::_Exit(3); }, 0.0);
        for (int i = 0; i < 30; ++i) {  // 1.5 s of work, marking every 50 ms
          watchdog::mark("forward pass");
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Watchdog, FaultHooksAreCheckedOnce) {
  setenv("ABL_FAULT_HANG", "no-colon", 1);
  EXPECT_ANY_THROW(watchdog::configure_faults(0));
  unsetenv("ABL_FAULT_HANG");
  setenv("ABL_FAULT_DELAY_MS", "3abc", 1);
  EXPECT_ANY_THROW(watchdog::configure_faults(0));
  setenv("ABL_FAULT_DELAY_MS", "2", 1);
  EXPECT_NO_THROW(watchdog::configure_faults(0));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) watchdog::fault_delay();
  EXPECT_LE(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  setenv("ABL_FAULT_DELAY_MS", "0", 1);
  watchdog::configure_faults(0);
  unsetenv("ABL_FAULT_DELAY_MS");
}

}  // namespace
}  // namespace abl
