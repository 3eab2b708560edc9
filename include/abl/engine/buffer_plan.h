// What an engine allocates, by name: printed before a run, summed for `plan`, never exceeded.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "abl/core/dtype.h"
#include "abl/engine/batch.h"
#include "abl/model/model_spec.h"

namespace abl::engine {

// Named buffers and their sizes: printed before a run, summed for `plan`, never exceeded.
struct BufferPlan {
  struct Entry {
    std::string name;
    int64_t bytes = 0;
  };
  std::vector<Entry> entries;
  void add(std::string name, int64_t bytes) { entries.push_back({std::move(name), bytes}); }
  int64_t total() const;
  std::string table() const;  // one line per buffer, MiB
};


// What one engine allocates besides its weights, from the model and the pass limits alone: its pass
// buffers (exactly the plan its constructor allocates) and a KV cache of `rows` rows. The memory
// planner (parallel/memory_plan.h) sizes a deployment with the footprint of the engine that runs it:
// engine::cpu_engine_footprint() or cuda::cuda_engine_footprint().
struct EngineFootprint {
  std::string name;             // "cpu", "cuda"
  DType weights = DType::f32;   // the element type the engine's weights (shards, gathers) are held in
  std::function<BufferPlan(const model::ModelSpec&, const Limits&)> pass_buffers;
  std::function<int64_t(const model::ModelSpec&, int64_t rows)> kv_cache_bytes;
  std::string kv_cache_label;   // how the table names the KV cache, e.g. "KV cache (2,L,rows,NKV*HD) f32"
};

}  // namespace abl::engine
