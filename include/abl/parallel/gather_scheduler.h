// The FSDP gather schedule shared by the host (ShardedWeights) and device (cuda::DeviceShardedWeights)
// sharded weights: which unit each gather slot holds, which gather is in flight, and when the next
// one starts. Units are numbered in pass order: 0 the embedding, 1..L the decoder layers, L+1 the
// head. Layer units alternate between two layer slots (unit u in slot (u-1) mod 2); the embedding
// and the head share the global slot. At most one gather is in flight.
//
// A source asks ensure(u) when unit u is requested (waits for its gather, starting it first when the
// pass order was broken) and then prefetch(u+1), so the next unit's gather overlaps u's compute and
// writes the slot u-1 used. The source owns the buffers; `start` begins the gather of a unit into a
// slot and returns it in flight. Every rank of a group makes the same calls in the same order.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "abl/parallel/comm.h"

namespace abl::parallel {

class GatherScheduler {
 public:
  static constexpr size_t kLayerSlots = 2;
  static constexpr size_t kGlobalSlot = 2;
  static constexpr size_t kSlots = 3;
  using Start = std::function<std::unique_ptr<Pending>(size_t unit, size_t slot)>;

  // `num_units`: L + 2.
  GatherScheduler(size_t num_units, Start start);
  // Completes a gather still in flight (errors are not raised from a destructor).
  ~GatherScheduler();
  GatherScheduler(const GatherScheduler&) = delete;
  GatherScheduler& operator=(const GatherScheduler&) = delete;

  size_t slot_of(size_t unit) const;
  // Unit `unit` complete in its slot (which is returned): waits for its gather, started here when
  // it is neither resident nor the one in flight (an unrelated gather in flight completes first).
  size_t ensure(size_t unit);
  // Starts the gather of `unit` into its slot, unless it is resident or in flight (another gather
  // in flight completes first); a unit past the last (the head's successor) starts nothing.
  void prefetch(size_t unit);
  int64_t gathers() const { return gathers_; }  // gathers started
  int64_t resident(size_t slot) const { return resident_[slot]; }  // unit held, -1 none

 private:
  void finish_pending();  // waits for the gather in flight; its unit becomes resident

  size_t num_units_;
  Start start_;
  int64_t resident_[kSlots] = {-1, -1, -1};
  int64_t pending_unit_ = -1;
  std::unique_ptr<Pending> pending_;
  int64_t gathers_ = 0;
};

}  // namespace abl::parallel
