// FSDP-style sharding on the GPU: the device twin of parallel::ShardedWeights. Units and their bf16
// images are those of device_unit_layout (device_weights.h); unit u of E elements is padded to G·S
// (S = device_shard_elements(E, G)) and rank j of the group keeps elements [j·S, (j+1)·S). Each
// rank reads only those elements (safetensors by range, or the synthetic values), converts them to
// bf16 on the host, and uploads them. A group of one rank keeps whole units and
// computes from them, with no gathers (and no second copy of a tied embedding).
//
// Buffers: this rank's shards (device memory, or pinned host memory with offload_params), two
// layer slots (layer l in slot l mod 2) and one global slot (embedding, then head), each sized for
// a gathered unit, and with offload_params one device send buffer of the largest shard.
//
// Ordering. Requests come in pass order (embedding, layer 0 … L-1, head); asking for unit u waits
// for its gather (the compute stream waits on an event, the host does not wait for the GPU) and
// starts unit u+1's on the communicator's stream, so the gather of u+1 overlaps u's compute. Unit
// u+1 goes into the slot that held u-1. When layer(l) is requested every kernel that reads layer
// l-1 has already been enqueued on the compute stream (the engine enqueues a whole layer before
// asking for the next), so the slot is free once the compute stream passes that point: the gather
// into it starts with an event recorded on the compute stream at that request, and the
// communicator's stream waits on it before writing the slot (DeviceComm contract, device_comm.h;
// the offloaded one-rank upload records the same event itself). Likewise the head's gather into
// the global slot starts at layer(L-1)'s request, after the embedding's reader; the embedding's at
// the next pass's embedding() request, after the head's readers. Uploads of offloaded shards into
// the send buffer are enqueued on the communicator's stream right before their gather, which also
// keeps them behind the previous gather's read of that buffer. Hence the rule of
// DeviceWeightSource: a view may be used only until another unit is requested.
//
// Requests are collective (every rank of a group of G > 1 makes the same requests in the same
// order); any order is correct, the pass order is the one that overlaps. DeviceAblation's
// construction requests layer(0..L-1) too.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "abl/parallel/cuda/device_comm.h"
#include "abl/engine/cuda/device_weights.h"
#include "abl/backend/cuda/memory.h"
#include "abl/parallel/comm.h"
#include "abl/parallel/gather_scheduler.h"
#include "abl/parallel/memory_plan.h"

namespace abl::cuda {

// Elements of each rank's shard of a device unit (parallel::shard_elements with 256-byte blocks of
// bf16: every shard starts on a kDeviceTensorAlign boundary of the gathered unit).
inline int64_t device_shard_elements(int64_t elements, int G) {
  return parallel::shard_elements(elements, G, 2, kDeviceTensorAlign * 2);
}

struct DeviceShardingOptions {
  // --offload-params: shards live in pinned host memory and are copied up (on the communicator's
  // stream, into a device send buffer) right before their gather; a group of one rank copies each
  // unit into its slot instead.
  bool offload_params = false;
  // Tests: a group of one rank gathers every unit through its communicator too (a one-rank
  // all-gather into the slots), so one GPU exercises the communicator's gather path and its events.
  bool gather_through_group = false;
};

class DeviceShardedWeights final : public DeviceWeightSource {
 public:
  // `model`: a model folder or synthetic:<preset>. `group`: the shard group, or null for a group of
  // one rank; its compute stream must be `compute`, the stream every reader of the views runs on
  // (the caller owns it; it and `group` outlive this). Collective over the group.
  static std::unique_ptr<DeviceShardedWeights> load(const std::string& model, DeviceComm* group,
                                                    const DeviceShardingOptions& opts, cudaStream_t compute);
  // From a parsed spec and a model folder, or synthetic values when `dir` is empty.
  static std::unique_ptr<DeviceShardedWeights> load(const model::ModelSpec& spec, const std::string& dir,
                                                    DeviceComm* group, const DeviceShardingOptions& opts,
                                                    cudaStream_t compute);
  ~DeviceShardedWeights() override;
  DeviceShardedWeights(const DeviceShardedWeights&) = delete;
  DeviceShardedWeights& operator=(const DeviceShardedWeights&) = delete;

  const model::ModelSpec& spec() const override { return spec_; }
  int64_t attention_head_dim() const override { return layout_.attention_head_dim; }
  const __nv_bfloat16* embedding() override;
  const DeviceLayer& layer(int64_t l) override;
  const DeviceHead& head() override;
  cudaStream_t compute_stream() const override { return compute_; }
  bool collective() const override { return G_ > 1; }
  bool views_fixed() const override { return !slots_used_; }
  size_t bytes() const override;  // shards (unless offloaded), slots and send buffer

  int group_size() const { return G_; }
  size_t host_bytes() const { return host_shards_.bytes(); }  // pinned shards (offload_params)
  int64_t gathers() const { return gathers_ ? gathers_->gathers() : 0; }  // gathers (or one-rank uploads) started
  const DeviceUnitLayout& layout() const { return layout_; }

 private:
  DeviceShardedWeights(const model::ModelSpec& spec, DeviceComm* group, const DeviceShardingOptions& opts,
                       cudaStream_t compute);
  void fill_shards(const io::SafetensorsReader* reader);
  __nv_bfloat16* slot_data(size_t slot) const;
  const __nv_bfloat16* ensure(size_t u);         // unit u complete for the compute stream
  void prefetch(size_t u);                       // start unit u's gather (or upload)
  std::unique_ptr<parallel::Pending> start_gather(size_t u, size_t slot);

  model::ModelSpec spec_;
  DeviceUnitLayout layout_;
  DeviceComm* group_;
  DeviceShardingOptions opts_;
  cudaStream_t compute_;
  int G_ = 1, rank_ = 0;
  bool through_group_ = false;       // units are all-gathered: G > 1 (or gather_through_group)
  bool slots_used_ = false;          // gathered or offloaded
  std::vector<int64_t> shard_elems_;  // S per unit
  std::vector<int64_t> shard_at_;     // element offset of each unit's shard in the shard buffer
  DeviceBuffer shards_;               // this rank's shards (device), unless offloaded
  PinnedBuffer host_shards_;          // this rank's shards (offload_params)
  DeviceBuffer send_;                 // offload_params, gathered: the shard being gathered
  DeviceBuffer slots_;                // the two layer slots, then the global slot
  int64_t slot_at_[3] = {0, 0, 0};    // element offsets of the slots in slots_
  std::unique_ptr<Stream> upload_;    // offload_params, G = 1: where units are copied up
  Event slot_free_;                   // offload_params, G = 1: compute stream at the request
  Event uploaded_;                    // offload_params, G = 1: the unit is in its slot
  std::unique_ptr<parallel::GatherScheduler> gathers_;  // slots used: the schedule over the three slots
  std::vector<DeviceLayer> layers_;  // (L) views, refreshed at each request
  DeviceHead head_;
};

// The weight source the app's CUDA backend runs on: DeviceShardedWeights over `group` (null: a
// group of one rank, which holds whole units and gathers nothing — the resident layout, read by
// range with no fp32 host copy of the model). `compute`: the stream the engine runs on; it must be
// the compute stream `group` was made with. Collective over the group.
std::unique_ptr<DeviceWeightSource> load_device_weights(const std::string& model, DeviceComm* group,
                                                        const DeviceShardingOptions& opts, cudaStream_t compute);

}  // namespace abl::cuda
