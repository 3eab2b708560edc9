// The progress line and bar are what users read in Slurm logs and on terminals.
#include <gtest/gtest.h>

#include "abl/core/progress.h"

using abl::Progress;

TEST(Progress, LineHasCountsRatesAndEta) {
  EXPECT_EQ(Progress::line("sweep", "batch 3", 32, 200, "trials", 60.0, 6000, "front: 0/100 @ KL 0.016"),
            "sweep: batch 3: 32/200 trials (16%), 1920 trials/h, 100 tokens/s, ETA 5m15s | front: 0/100 @ KL 0.016");
  // No rate before anything is done; no tokens/s without a token count.
  EXPECT_EQ(Progress::line("residuals", "", 0, 400, "prompts", 0.0, -1, ""), "residuals: 0/400 prompts (0%)");
  EXPECT_EQ(Progress::line("baseline", "", 10, 100, "responses", 10.0, -1, ""),
            "baseline: 10/100 responses (10%), 3600 responses/h, ETA 1m30s");
}

TEST(Progress, BarAndDuration) {
  EXPECT_EQ(Progress::bar(0.0, 10), "[----------]");
  EXPECT_EQ(Progress::bar(0.5, 10), "[#####-----]");
  EXPECT_EQ(Progress::bar(2.0, 4), "[####]");
  EXPECT_EQ(Progress::duration(59.6), "1m00s");
  EXPECT_EQ(Progress::duration(3725), "1h02m");
  EXPECT_EQ(Progress::duration(-1), "?");
}
