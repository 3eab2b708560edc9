// The decode step as a CUDA graph (DESIGN.md §3, notes/performance.md: launch overhead dominates
// small decode steps). A pass whose sequences all decode one token is padded to a bucket of
// sequences with dummy ones (token 0 at position 0 over one scratch KV-cache row, no trial), and
// its kernels — every layer, the final norm, lm_head and the argmax — run eagerly the first time
// a (bucket, kv-length bucket, cache, ablation) is seen, are captured the second time and replayed
// after that. Kernels read the exact lengths from
// the device AttnSeq array, so one graph serves every step whose lengths stay under its kv bucket;
// the host-side attention plan (grid, splits) is made for the bucket's bound.
//
// The host-side rules (buckets, padding) are plain functions, unit-tested without a GPU.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <tuple>

#include "abl/engine/batch.h"

namespace abl::cuda {

// Whether every sequence of the batch runs exactly one token (a pure decode step).
bool is_decode_step(const engine::Batch& batch);
// Sequences a decode step of B runs as: B rounded up to a multiple of 8 up to 64, of 32 up to 512,
// of 128 beyond; never above max_seqs (B ≤ max_seqs).
int64_t decode_bucket(int64_t B, int64_t max_seqs);
// The kv-length bound of a graph: the next power of two ≥ max(max_kv, 256), at most `limit`.
int64_t kv_bucket(int64_t max_kv, int64_t limit);
// The batch with dummy sequences appended up to `seqs` sequences: token 0 at position 0, its k/v
// written to and read from `scratch_row` (a cache row no sequence owns), its recurrent state (hybrid
// models) in `scratch_slot` (a state slot no sequence owns: the dummies share it, and what they leave
// there is never read), kv_len 1, no trial.
engine::Batch pad_decode_step(const engine::Batch& batch, int64_t seqs, int64_t scratch_row, int64_t scratch_slot);

// A captured stream section, replayed with one launch.
class Graph {
 public:
  // Captures what `record` enqueues on `s` (a non-default stream, thread-local capture mode) and
  // instantiates it. An exception inside `record` ends the capture before it propagates.
  Graph(cudaStream_t s, const std::function<void()>& record);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  void launch(cudaStream_t s) const;
  size_t nodes() const { return nodes_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
  size_t nodes_ = 0;
};

// What a decode graph depends on besides the device buffers of the engine.
struct DecodeGraphKey {
  int64_t seqs = 0;          // decode_bucket
  int64_t kv = 0;            // kv_bucket
  uint64_t cache = 0;        // DeviceKvCache::id(): its k/v pointers are baked into the graph
  uint64_t ablation = 0;     // DeviceAblation::id(), 0 = none
  bool operator<(const DecodeGraphKey& o) const {
    return std::tie(seqs, kv, cache, ablation) < std::tie(o.seqs, o.kv, o.cache, o.ablation);
  }
};

// Graphs by key; the least recently used beyond `capacity` are destroyed.
class DecodeGraphs {
 public:
  explicit DecodeGraphs(size_t capacity = 32) : capacity_(capacity) {}
  // Runs the step `record` enqueues on `s`: eagerly the first time a key is seen (GEMM plans are
  // made and kernel modules loaded outside any capture), captured and launched the second time,
  // replayed after that.
  void run(const DecodeGraphKey& key, cudaStream_t s, const std::function<void()>& record);
  void clear();
  size_t size() const { return entries_.size(); }
  int64_t warmups() const { return warmups_; }
  int64_t captures() const { return captures_; }
  int64_t replays() const { return replays_; }

 private:
  struct Entry {
    std::unique_ptr<Graph> graph;  // null until the second use
    std::list<DecodeGraphKey>::iterator at;
  };
  size_t capacity_;
  std::list<DecodeGraphKey> order_;  // most recent first
  std::map<DecodeGraphKey, Entry> entries_;
  int64_t warmups_ = 0, captures_ = 0, replays_ = 0;
};

}  // namespace abl::cuda
