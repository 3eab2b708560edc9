// Sharded weights on the device (sharded_device_weights.h): shards built on the host by range,
// gathered unit by unit into two layer slots and one global slot.
#include "abl/parallel/cuda/sharded_device_weights.h"

#include <algorithm>

#include "abl/backend/cuda/check.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/io/safetensors.h"

namespace abl::cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr int64_t kLoadElems = int64_t{16} << 20;  // 32 MiB of bf16 per host-to-device load chunk

// A one-rank upload of an offloaded unit in flight: wait() orders the compute stream after it.
class UploadPending final : public parallel::Pending {
 public:
  UploadPending(const Event& uploaded, cudaStream_t compute) : uploaded_(uploaded), compute_(compute) {}
  ~UploadPending() override { finish_quietly(*this); }
  void wait() override {
    if (done_) return;
    done_ = true;
    uploaded_.wait_on(compute_);
  }

 private:
  const Event& uploaded_;
  cudaStream_t compute_;
  bool done_ = false;
};

}  // namespace

DeviceShardedWeights::DeviceShardedWeights(const model::ModelSpec& spec, DeviceComm* group,
                                           const DeviceShardingOptions& opts, cudaStream_t compute)
    : spec_(spec), layout_(device_unit_layout(spec)), group_(group), opts_(opts), compute_(compute) {
  ABL_CHECK(compute != nullptr, "sharded device weights need a compute stream of their own");
  if (group_) {
    ABL_CHECK(group_->compute_stream() == compute,
              "the shard group's communicator was made for another compute stream than the weights'");
    G_ = group_->size();
    rank_ = group_->rank();
  }
  through_group_ = G_ > 1 || (group_ != nullptr && opts_.gather_through_group);
  slots_used_ = through_group_ || opts_.offload_params;
}

DeviceShardedWeights::~DeviceShardedWeights() {
  gathers_.reset();  // completes a gather still in flight
  // The buffers are freed next: no kernel or copy may still use them (the compute stream waits for
  // every gather and upload it consumed). Errors are ignored here.
  cudaStreamSynchronize(compute_);
}

std::unique_ptr<DeviceShardedWeights> DeviceShardedWeights::load(const std::string& model, DeviceComm* group,
                                                                 const DeviceShardingOptions& opts,
                                                                 cudaStream_t compute) {
  if (model.rfind("synthetic:", 0) == 0) return load(model::synthetic_model_spec(model), "", group, opts, compute);
  return load(model::load_model_spec(model), model, group, opts, compute);
}

std::unique_ptr<DeviceShardedWeights> DeviceShardedWeights::load(const model::ModelSpec& spec, const std::string& dir,
                                                                 DeviceComm* group, const DeviceShardingOptions& opts,
                                                                 cudaStream_t compute) {
  std::unique_ptr<DeviceShardedWeights> w(new DeviceShardedWeights(spec, group, opts, compute));
  std::unique_ptr<io::SafetensorsReader> reader;
  if (!dir.empty()) {
    reader = std::make_unique<io::SafetensorsReader>(dir);
    model::check_weights(spec, *reader);
  }
  w->fill_shards(reader.get());
  return w;
}

void DeviceShardedWeights::fill_shards(const io::SafetensorsReader* reader) {
  const size_t U = layout_.units.size(), head_u = layout_.head_unit();
  int64_t total = 0, largest = 0;
  for (size_t u = 0; u < U; ++u) {
    const DeviceUnit& unit = layout_.units[u];
    // Without slots a tied lm_head views the embedding unit: the head keeps the tensors before it
    // (the final norm and its bias).
    const bool norm_only = !slots_used_ && u == head_u && spec_.tied_embeddings;
    const int64_t extent = norm_only ? unit.tensors.back().offset : unit.elements;
    const int64_t S = device_shard_elements(extent, G_);
    shard_elems_.push_back(S);
    shard_at_.push_back(total);
    total += S;
    largest = std::max(largest, S);
  }
  const size_t held = static_cast<size_t>(total) * sizeof(bf16);
  if (opts_.offload_params) {
    host_shards_ = PinnedBuffer(held);
    for (size_t u = 0; u < U; ++u) {
      build_unit_range(layout_.units[u], reader, rank_ * shard_elems_[u], shard_elems_[u],
                       host_shards_.as<uint16_t>() + shard_at_[u]);
    }
  } else {
    shards_ = DeviceBuffer(held, "this rank's weight shards (--offload-params keeps them in host memory)");
    const int64_t chunk = std::min(largest, kLoadElems);
    PinnedBuffer stage(static_cast<size_t>(chunk) * sizeof(bf16));
    Stream load;
    for (size_t u = 0; u < U; ++u) {
      const int64_t S = shard_elems_[u];
      for (int64_t done = 0; done < S; done += chunk) {
        const int64_t m = std::min(chunk, S - done);
        build_unit_range(layout_.units[u], reader, rank_ * S + done, m, stage.as<uint16_t>());
        CUDA_CHECK(cudaMemcpyAsync(shards_.as<bf16>() + shard_at_[u] + done, stage.get(),
                                   static_cast<size_t>(m) * sizeof(bf16), cudaMemcpyHostToDevice, load.get()));
        load.synchronize();  // the staging is refilled next
      }
    }
  }
  if (slots_used_) {
    int64_t layer_slot = 0;
    for (int64_t l = 0; l < spec_.num_layers; ++l) {
      layer_slot = std::max(layer_slot, shard_elems_[layout_.layer_unit(l)] * G_);
    }
    const int64_t global_slot = std::max(shard_elems_.front(), shard_elems_.back()) * G_;
    slot_at_[0] = 0;
    slot_at_[1] = layer_slot;
    slot_at_[2] = 2 * layer_slot;
    slots_ = DeviceBuffer(static_cast<size_t>(2 * layer_slot + global_slot) * sizeof(bf16),
                          "the gather slots (two layers and the embedding or head, whole)");
    if (opts_.offload_params && through_group_) {
      send_ = DeviceBuffer(static_cast<size_t>(largest) * sizeof(bf16), "the shard send buffer");
    }
    if (opts_.offload_params && !through_group_) upload_ = std::make_unique<Stream>();
    gathers_ = std::make_unique<parallel::GatherScheduler>(
        layout_.units.size(), [this](size_t u, size_t slot) { return start_gather(u, slot); });
  }
  layers_.resize(static_cast<size_t>(spec_.num_layers));
  log::debug("sharded device weights of {}: group of {}, {:.1f} MiB of shards ({}), {:.1f} MiB of gather slots",
             spec_.source, G_, static_cast<double>(held) / (1 << 20),
             opts_.offload_params ? "pinned host" : "device", static_cast<double>(slots_.bytes()) / (1 << 20));
}

bf16* DeviceShardedWeights::slot_data(size_t slot) const { return slots_.as<bf16>() + slot_at_[slot]; }

std::unique_ptr<parallel::Pending> DeviceShardedWeights::start_gather(size_t u, size_t slot) {
  bf16* dst = slot_data(slot);
  const bf16* mine = opts_.offload_params ? host_shards_.as<bf16>() + shard_at_[u] : shards_.as<bf16>() + shard_at_[u];
  const size_t n = static_cast<size_t>(shard_elems_[u]) * sizeof(bf16);
  if (!through_group_) {
    // One rank, offloaded: the unit is copied into its slot once the compute stream has passed the
    // slot's last reader (enqueued before this request).
    const cudaStream_t s = upload_->get();
    slot_free_.record(compute_);
    slot_free_.wait_on(s);
    CUDA_CHECK(cudaMemcpyAsync(dst, mine, n, cudaMemcpyHostToDevice, s));
    uploaded_.record(s);
    return std::make_unique<UploadPending>(uploaded_, compute_);
  }
  const void* send = mine;
  if (opts_.offload_params) {
    // On the gather's stream: behind the previous gather's read of the send buffer, before this one.
    CUDA_CHECK(cudaMemcpyAsync(send_.get(), mine, n, cudaMemcpyHostToDevice, group_->stream()));
    send = send_.get();
  }
  // The communicator waits for the compute stream's work so far before writing dst (device_comm.h).
  return group_->start_all_gather(send, dst, n);
}

void DeviceShardedWeights::prefetch(size_t u) {
  if (gathers_) gathers_->prefetch(u);
}

const bf16* DeviceShardedWeights::ensure(size_t u) {
  if (!gathers_) return shards_.as<bf16>() + shard_at_[u];
  return slot_data(gathers_->ensure(u));
}

const bf16* DeviceShardedWeights::embedding() {
  const bf16* p = ensure(0);
  prefetch(1);
  return p;
}

const DeviceLayer& DeviceShardedWeights::layer(int64_t l) {
  ABL_CHECK(l >= 0 && l < spec_.num_layers, "layer {} out of range (L = {})", l, spec_.num_layers);
  const size_t u = layout_.layer_unit(l);
  const bf16* p = ensure(u);
  prefetch(u + 1);
  DeviceLayer& views = layers_[static_cast<size_t>(l)];
  views = device_layer_views(layout_.units[u], p);
  return views;
}

const DeviceHead& DeviceShardedWeights::head() {
  const size_t u = layout_.head_unit();
  const bf16* p = ensure(u);
  const DeviceUnit& unit = layout_.units[u];
  head_ = device_head_views(unit, p);
  if (!slots_used_ && spec_.tied_embeddings) head_.lm_head = shards_.as<bf16>() + shard_at_[0];
  return head_;
}

size_t DeviceShardedWeights::bytes() const { return shards_.bytes() + send_.bytes() + slots_.bytes(); }

std::unique_ptr<DeviceWeightSource> load_device_weights(const std::string& model, DeviceComm* group,
                                                        const DeviceShardingOptions& opts, cudaStream_t compute) {
  return DeviceShardedWeights::load(model, group, opts, compute);
}

}  // namespace abl::cuda
