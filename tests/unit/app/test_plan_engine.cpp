// `abliterate plan` prints what the engine allocates: its rows are the engine's own plan (the CUDA
// engine's typed arena, the CPU engine's buffers) and KV cache, at the batch the planner chose.
// Runs the binary; needs no GPU.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "abl/engine/cpu/engine.h"
#include "abl/model/model_spec.h"
#ifdef ABL_WITH_CUDA
#include "abl/engine/cuda/plan.h"
#endif

namespace abl::app {
namespace {

std::string run_plan(const std::string& args) {
  const std::string cmd = std::string(ABL_BINARY) + " plan " + args + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  pclose(p);
  return out;
}

// The row MemoryPlan::table() prints for a buffer.
std::string row(const std::string& name, int64_t bytes) {
  const double b = static_cast<double>(bytes);
  return fmt::format("  {:<58} {:>12.1f} {:>9.2f}\n", name, b / (1 << 20), b / (int64_t{1} << 30));
}

// B and T of the table's heading.
std::pair<int64_t, int64_t> batch_of(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(R"(B = (\d+), T = (\d+))"))) return {0, 0};
  return {std::stoll(m[1]), std::stoll(m[2])};
}

void expect_engine_rows(const std::string& out, const engine::BufferPlan& plan, const std::string& engine) {
  for (const auto& e : plan.entries) {
    EXPECT_NE(out.find(row(engine + " engine: " + e.name, e.bytes)), std::string::npos)
        << "missing the engine's buffer '" << e.name << "' (" << e.bytes << " bytes) in\n" << out;
  }
}

TEST(PlanCommand, CpuRowsAreTheCpuEnginePlan) {
  const std::string out = run_plan("--model synthetic:llama-3.2-1b --backend cpu --gpu-mem-gib 64 --sharding NO_SHARD "
                                   "--prompt-tokens 200 --max-new-tokens 50");
  const auto [B, T] = batch_of(out);
  ASSERT_GT(B, 0) << out;
  const model::ModelSpec spec = model::synthetic_model_spec("synthetic:llama-3.2-1b");
  expect_engine_rows(out, engine::Engine::plan_for(spec, {T, B}), "cpu");
  EXPECT_NE(out.find(row("KV cache (2,L,rows,NKV*HD) f32, rows = B*(P+N)", engine::KvCache::bytes_for(spec, B * 250))),
            std::string::npos)
      << out;
}

#ifdef ABL_WITH_CUDA
TEST(PlanCommand, CudaRowsAreTheCudaEngineArena) {
  for (const char* sharding : {"NO_SHARD", "FULL_SHARD"}) {
    const std::string out = run_plan(fmt::format(
        "--model synthetic:llama-3.1-8b --backend cuda --nodes 1 --gpus-per-node 4 --sharding {} --gpu-mem-gib 80 "
        "--prompt-tokens 256 --max-new-tokens 100",
        sharding));
    const auto [B, T] = batch_of(out);
    ASSERT_GT(B, 0) << out;
    const model::ModelSpec spec = model::synthetic_model_spec("synthetic:llama-3.1-8b");
    const cuda::CudaEnginePlan plan = cuda::plan_cuda_engine(spec, {T, B}, cuda::kPlanSmCount);
    expect_engine_rows(out, plan.table, "cuda");
    EXPECT_NE(out.find(row("KV cache (2,L,rows+1,NKV*HDp) bf16, rows = B*(P+N)",
                           cuda::device_kv_cache_bytes(spec, B * 356))),
              std::string::npos)
        << out;
  }
}
#endif

}  // namespace
}  // namespace abl::app
