// The gather schedule both sharded weight sources share: slots, overlap of the next unit's gather
// with the current unit, and recovery when the pass order is broken.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "abl/parallel/gather_scheduler.h"

namespace abl::parallel {
namespace {

// Records "start u→slot" and "wait u" events in order.
struct Log {
  std::vector<std::string> events;
};

class FakePending final : public Pending {
 public:
  FakePending(Log& log, size_t unit) : log_(log), unit_(unit) {}
  void wait() override {
    if (!done_) log_.events.push_back("wait " + std::to_string(unit_));
    done_ = true;
  }

 private:
  Log& log_;
  size_t unit_;
  bool done_ = false;
};

GatherScheduler::Start recorder(Log& log) {
  return [&log](size_t u, size_t slot) -> std::unique_ptr<Pending> {
    log.events.push_back("start " + std::to_string(u) + "->" + std::to_string(slot));
    return std::make_unique<FakePending>(log, u);
  };
}

// Units [0, end) requested in pass order: ensure(u) then prefetch(u + 1), as the weight sources do.
void request_in_pass_order(GatherScheduler& g, size_t end) {
  for (size_t u = 0; u < end; ++u) {
    g.ensure(u);
    g.prefetch(u + 1);
  }
}

TEST(GatherScheduler, SlotsAlternateForLayersAndShareTheGlobalSlot) {
  Log log;
  GatherScheduler g(5, recorder(log));  // embedding, 3 layers, head
  EXPECT_EQ(g.slot_of(0), GatherScheduler::kGlobalSlot);
  EXPECT_EQ(g.slot_of(1), 0u);
  EXPECT_EQ(g.slot_of(2), 1u);
  EXPECT_EQ(g.slot_of(3), 0u);
  EXPECT_EQ(g.slot_of(4), GatherScheduler::kGlobalSlot);
}

TEST(GatherScheduler, PassOrderOverlapsTheNextGatherWithTheCurrentUnit) {
  Log log;
  GatherScheduler g(4, recorder(log));  // embedding, 2 layers, head
  request_in_pass_order(g, 4);  // a whole pass
  const std::vector<std::string> want = {"start 0->2", "wait 0", "start 1->0", "wait 1", "start 2->1",
                                         "wait 2",     "start 3->2", "wait 3"};
  EXPECT_EQ(log.events, want);
  EXPECT_EQ(g.gathers(), 4);
  EXPECT_EQ(g.resident(0), 1);
  EXPECT_EQ(g.resident(1), 2);
  EXPECT_EQ(g.resident(2), 3);
}

TEST(GatherScheduler, ResidentUnitsAreNotGatheredAgain) {
  Log log;
  GatherScheduler g(4, recorder(log));
  g.ensure(1);
  g.prefetch(1);  // resident: nothing
  g.ensure(1);
  EXPECT_EQ(g.gathers(), 1);
  g.prefetch(4);  // past the head: nothing
  EXPECT_EQ(g.gathers(), 1);
}

TEST(GatherScheduler, BrokenOrderCompletesTheGatherInFlightFirst) {
  Log log;
  GatherScheduler g(5, recorder(log));
  g.ensure(1);
  g.prefetch(2);  // in flight into slot 1
  g.ensure(3);    // not the one in flight: 2 completes first (and stays resident), then 3
  const std::vector<std::string> want = {"start 1->0", "wait 1", "start 2->1", "wait 2", "start 3->0", "wait 3"};
  EXPECT_EQ(log.events, want);
  EXPECT_EQ(g.resident(1), 2);
  g.ensure(2);  // still resident: no gather
  EXPECT_EQ(g.gathers(), 3);
}

// A resident unit asked for again while another gather is in flight (the embedding re-requested
// after layer 2 prefetched layer 3): its prefetch of the next unit completes that gather first.
TEST(GatherScheduler, PrefetchAfterAResidentUnitOutOfOrderCompletesTheGatherInFlight) {
  Log log;
  GatherScheduler g(5, recorder(log));  // embedding, 3 layers, head
  request_in_pass_order(g, 3);  // up to layer 2, which prefetches layer 3
  ASSERT_EQ(log.events.back(), "start 3->0");  // in flight
  EXPECT_EQ(g.ensure(0), GatherScheduler::kGlobalSlot);  // resident
  EXPECT_NO_THROW(g.prefetch(1));
  const std::vector<std::string> tail(log.events.end() - 2, log.events.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"wait 3", "start 1->0"}));
  EXPECT_EQ(g.ensure(1), 0u);
  EXPECT_EQ(g.ensure(3), 0u);  // slot 0 went to layer 1: gathered again
  EXPECT_EQ(log.events.back(), "wait 3");
}

TEST(GatherScheduler, DestructionCompletesAGatherInFlight) {
  Log log;
  {
    GatherScheduler g(3, recorder(log));
    g.ensure(0);
    g.prefetch(1);
  }
  ASSERT_FALSE(log.events.empty());
  EXPECT_EQ(log.events.back(), "wait 1");
}

}  // namespace
}  // namespace abl::parallel
