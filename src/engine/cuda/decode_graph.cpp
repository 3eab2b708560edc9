// Decode-step graphs (decode_graph.h): bucket and padding rules, capture and an LRU cache.
#include "abl/engine/cuda/decode_graph.h"

#include <algorithm>

#include "abl/backend/cuda/check.h"
#include "abl/core/error.h"

namespace abl::cuda {

bool is_decode_step(const engine::Batch& batch) {
  if (batch.num_seqs() == 0) return false;
  return std::all_of(batch.seqs.begin(), batch.seqs.end(), [](const cpu::AttnSeq& s) { return s.q_len == 1; });
}

int64_t decode_bucket(int64_t B, int64_t max_seqs) {
  ABL_CHECK(B >= 1 && B <= max_seqs, "decode step of {} sequences with at most {} per pass", B, max_seqs);
  const int64_t step = B <= 64 ? 8 : B <= 512 ? 32 : 128;
  return std::min((B + step - 1) / step * step, max_seqs);
}

int64_t kv_bucket(int64_t max_kv, int64_t limit) {
  int64_t b = 256;
  while (b < max_kv) b *= 2;
  return std::min(b, std::max(limit, max_kv));
}

engine::Batch pad_decode_step(const engine::Batch& batch, int64_t seqs, int64_t scratch_row, int64_t scratch_slot) {
  ABL_CHECK(seqs >= batch.num_seqs(), "padding {} sequences down to {}", batch.num_seqs(), seqs);
  engine::Batch p = batch;
  const int32_t dummy = 0;
  while (p.num_seqs() < seqs) p.add(&dummy, 1, scratch_row, 0, -1, scratch_slot);
  return p;
}

Graph::Graph(cudaStream_t s, const std::function<void()>& record) {
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    record();
  } catch (...) {
    cudaStreamEndCapture(s, &graph);  // leave the stream usable; the partial graph is dropped
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes_));
  const cudaError_t e = cudaGraphInstantiate(&exec_, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_CHECK(e);
}

Graph::~Graph() {
  if (exec_) cudaGraphExecDestroy(exec_);
}

void Graph::launch(cudaStream_t s) const { CUDA_CHECK(cudaGraphLaunch(exec_, s)); }

void DecodeGraphs::run(const DecodeGraphKey& key, cudaStream_t s, const std::function<void()>& record) {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= capacity_) {
      entries_.erase(order_.back());
      order_.pop_back();
    }
    order_.push_front(key);
    entries_.emplace(key, Entry{nullptr, order_.begin()});
    ++warmups_;
    record();
    return;
  }
  order_.splice(order_.begin(), order_, it->second.at);
  if (!it->second.graph) {
    it->second.graph = std::make_unique<Graph>(s, record);
    ++captures_;
  } else {
    ++replays_;
  }
  it->second.graph->launch(s);
}

void DecodeGraphs::clear() {
  entries_.clear();
  order_.clear();
}

}  // namespace abl::cuda
