#include "abl/parallel/gather_scheduler.h"

#include "abl/core/error.h"

namespace abl::parallel {

GatherScheduler::GatherScheduler(size_t num_units, Start start) : num_units_(num_units), start_(std::move(start)) {
  ABL_CHECK(num_units >= 2, "a gather schedule of {} units (needs the embedding and the head)", num_units);
}

GatherScheduler::~GatherScheduler() {
  if (!pending_) return;
  try {
    pending_->wait();
  } catch (...) {  // unwinding from another error already: that one is reported
  }
}

size_t GatherScheduler::slot_of(size_t unit) const {
  if (unit == 0 || unit + 1 == num_units_) return kGlobalSlot;
  return (unit - 1) % kLayerSlots;
}

void GatherScheduler::finish_pending() {
  if (!pending_) return;
  pending_->wait();
  pending_.reset();
  resident_[slot_of(static_cast<size_t>(pending_unit_))] = pending_unit_;
  pending_unit_ = -1;
}

void GatherScheduler::prefetch(size_t unit) {
  if (unit >= num_units_) return;
  const size_t slot = slot_of(unit);
  const auto u = static_cast<int64_t>(unit);
  if (resident_[slot] == u || pending_unit_ == u) return;
  finish_pending();  // another unit's gather in flight (a resident unit was asked for out of order)
  resident_[slot] = -1;
  pending_ = start_(unit, slot);
  pending_unit_ = u;
  ++gathers_;
}

size_t GatherScheduler::ensure(size_t unit) {
  ABL_CHECK(unit < num_units_, "weight unit {} of {}", unit, num_units_);
  const size_t slot = slot_of(unit);
  if (resident_[slot] != static_cast<int64_t>(unit)) {
    if (pending_unit_ != static_cast<int64_t>(unit)) {
      finish_pending();  // an unrelated gather in flight (the pass order was broken): complete it first
      prefetch(unit);
    }
    finish_pending();
  }
  return slot;
}

}  // namespace abl::parallel
