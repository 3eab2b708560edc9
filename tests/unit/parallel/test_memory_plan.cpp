// Memory plan: sharding units add up to the model, the CPU activations match the engine's own
// table, and real layouts (Llama 3.1 8B and 3.3 70B on 1x8 and 4x8 H100-80GB) give the numbers
// one expects: 70B does not fit a rank and shards, 8B replicates, the batch grows as memory frees.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "abl/core/error.h"
#include "abl/parallel/memory_plan.h"
#include "abl/engine/cpu/engine.h"
#include "abl/model/model_spec.h"
#include "abl/model/weights.h"

using namespace abl;
using namespace abl::parallel;

namespace {

constexpr double kGB = 1e9;
constexpr int64_t kGiB = int64_t{1} << 30;

model::ModelSpec preset(const std::string& name) { return model::synthetic_model_spec("synthetic:" + name); }

TopologyRequest layout(int nodes, int per_node, Sharding s, int group = 0) {
  TopologyRequest r;
  r.world_size = nodes * per_node;
  r.ranks_per_node = per_node;
  r.node_size = per_node;
  r.sharding = s;
  r.shard_group_size = group;
  return r;
}

MemoryPlan plan(const std::string& model, int nodes, int per_node, Sharding s,
                PlanOptions o = PlanOptions()) {
  return plan_memory(preset(model), layout(nodes, per_node, s), o);
}

int64_t bytes_of(const MemoryPlan& m, const std::string& prefix) {
  int64_t b = 0;
  for (const auto& e : m.buffers.entries) {
    if (e.name.rfind(prefix, 0) == 0) b += e.bytes;
  }
  return b;
}

// The weight shard alone (not the gathered units).
int64_t shard_bytes(const MemoryPlan& m) { return bytes_of(m, "weight"); }

std::string plan_error(const PlanOptions& o) {
  try {
    plan("llama-3.1-8b", 1, 1, Sharding::no_shard, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Largest batch: B fits and B + 1 does not (unless a cap stopped it).
void expect_largest(const MemoryPlan& m) {
  ASSERT_TRUE(m.fits);
  EXPECT_LE(m.needed(), m.budget_bytes);
  const int64_t B = m.batch_seqs + 1;
  const int64_t T = m.options.batch_tokens > 0
                        ? m.options.batch_tokens
                        : std::max({B, m.options.prompt_tokens,
                                    std::min(B * m.options.prompt_tokens, kAutoMaxBatchTokens)});
  if (m.options.batch_tokens > 0 && B > m.options.batch_tokens) return;
  const int64_t next = rank_buffers(m.spec, m.topology.shard_group_size, B, T, m.options).total() +
                       m.reserve_bytes;
  EXPECT_GT(next, m.budget_bytes) << "B = " << m.batch_seqs << " is not the largest";
}

}  // namespace

TEST(MemoryPlan, UnitsAddUpToTheModel) {
  for (const std::string& name : model::synthetic_presets()) {
    const model::ModelSpec spec = preset(name);
    const ShardUnits u = shard_units(spec);
    int64_t layers = 0;
    for (int64_t n : u.layers) layers += n;
    // (Gemma 4's per-layer embeddings: every layer unit holds the model's per_layer_projection_norm, (P))
    const int64_t copies = spec.ple_dim > 0 ? (spec.num_layers - 1) * spec.ple_dim : 0;
    EXPECT_EQ(layers + u.embed + u.head, model::parameter_count(spec) + copies) << name;
    EXPECT_EQ(static_cast<int64_t>(u.layers.size()), u.num_layers) << name;
    EXPECT_EQ(u.embed, spec.vocab_size * spec.hidden_size) << name;
    EXPECT_EQ(u.tied, spec.tied_embeddings) << name;
    // the final norm (with its bias: Phi-3.5-MoE), lm_head's bias, lm_head unless tied
    EXPECT_EQ(u.head, spec.hidden_size * (spec.norm_bias ? 2 : 1) + (spec.lm_head_bias ? spec.vocab_size : 0) +
                          (spec.tied_embeddings ? 0 : spec.vocab_size * spec.hidden_size))
        << name;
  }
  const ShardUnits u8 = shard_units(preset("llama-3.1-8b"));
  EXPECT_EQ(u8.layer, 218'112'000);
  // Slices are multiples of 16 floats, and of 1 MiB (2^18 floats) beyond 2 GiB per rank.
  EXPECT_EQ(shard_elements(10, 4, 4), 16);
  EXPECT_EQ(padded_elements(10, 4), 64);
  EXPECT_EQ(padded_elements(64, 4), 64);
  EXPECT_EQ(padded_elements(7, 1), 16);
  EXPECT_EQ(shard_elements(int64_t{3} << 29, 1, 4) % (int64_t{1} << 18), 0);
  EXPECT_EQ(padded_elements(218'112'000, 3) % 3, 0);
}

TEST(MemoryPlan, CpuActivationsMatchTheEngine) {
  for (const char* name : {"llama-3.1-8b", "qwen2.5-7b", "gemma-2-9b", "mixtral-8x7b", "qwen3-30b-a3b",
                           "moonlight-16b-a3b", "deepseek-v3", "nemotron-h-8b",  // (relu²: no gate rows)
                           "apertus-8b",  // (xIELU: none either)
                           "gemma-4-e2b", "gemma-4-26b-a4b"}) {  // (per-layer embeddings; experts beside the MLP)
    const model::ModelSpec spec = preset(name);
    for (int64_t T : {1, 17, 4096}) {
      const engine::BufferPlan engine_plan = engine::Engine::plan_for(spec, {T, 33});
      const engine::BufferPlan ours = activation_buffers(spec, 33, T, precision_for(engine::BackendKind::cpu));
      ASSERT_EQ(ours.entries.size(), engine_plan.entries.size());
      for (size_t i = 0; i < ours.entries.size(); ++i) {
        EXPECT_EQ(ours.entries[i].bytes, engine_plan.entries[i].bytes) << ours.entries[i].name;
        // Same buffer, same name, plus the element type.
        EXPECT_EQ(ours.entries[i].name.rfind(engine_plan.entries[i].name, 0), 0u) << ours.entries[i].name;
      }
    }
  }
  // An ungated MLP carves its up rows only.
  for (const char* name : {"nemotron-h-8b", "apertus-8b"}) {
    for (const auto& e : engine::Engine::plan_for(preset(name), {64, 4}).entries) {
      EXPECT_EQ(e.name.find("gate"), std::string::npos) << name << ": " << e.name;
    }
  }
  // On the GPU only the residual stream and the last-token rows stay fp32.
  const model::ModelSpec spec = preset("llama-3.1-8b");
  const int64_t cpu = activation_buffers(spec, 1, 1000, precision_for(engine::BackendKind::cpu)).total();
  const int64_t gpu = activation_buffers(spec, 1, 1000, precision_for(engine::BackendKind::cuda)).total();
  const int64_t fp32_part = 1000 * spec.hidden_size * 4 + spec.hidden_size * 4;
  EXPECT_EQ(gpu - fp32_part, (cpu - fp32_part) / 2);
}

TEST(MemoryPlan, KvCache) {
  const model::ModelSpec spec = preset("llama-3.1-8b");
  EXPECT_EQ(kv_cache_bytes(spec, 100, DType::f32), engine::KvCache::bytes_for(spec, 100));
  // 2 x 32 layers x 8 kv heads x 128 x 2 bytes = 128 KiB per token in bf16.
  EXPECT_EQ(kv_cache_bytes(spec, 1, DType::bf16), 128 * 1024);
  const MemoryPlan m = plan("llama-3.1-8b", 1, 8, Sharding::no_shard);
  EXPECT_EQ(bytes_of(m, "KV cache"), m.batch_seqs * m.tokens_per_seq * 128 * 1024);
  EXPECT_EQ(m.tokens_per_seq, 256 + 100);
}

TEST(MemoryPlan, Llama70bDoesNotFitOneRankAndShards) {
  const model::ModelSpec spec = preset("llama-3.3-70b");
  EXPECT_NEAR(static_cast<double>(model::weight_bytes(spec, DType::bf16)) / kGB, 141.1, 0.1);

  // auto on 1x8: too big for one rank -> HYBRID_SHARD over the node.
  const MemoryPlan a = plan("llama-3.3-70b", 1, 8, Sharding::automatic);
  EXPECT_FALSE(a.fits_one_rank);
  EXPECT_GT(a.one_rank_bytes, 80 * kGiB);
  EXPECT_EQ(a.topology.sharding, Sharding::hybrid_shard);
  EXPECT_EQ(a.topology.shard_group_size, 8);
  EXPECT_EQ(a.topology.num_shard_groups, 1);
  EXPECT_NEAR(static_cast<double>(shard_bytes(a)) / kGB, 17.64, 0.01);  // 141.1 GB / 8
  // Two gathered layers (2 x 855.7 M x 2 B) and the embedding/head buffer, sized for the head
  // (final norm + lm_head, (H + V x H) x 2 B).
  EXPECT_NEAR(static_cast<double>(bytes_of(a, "gathered layer")) / kGB, 3.42, 0.01);
  EXPECT_EQ(bytes_of(a, "gathered embedding/head"), (8192 + 128256LL * 8192) * 2);
  expect_largest(a);
  EXPECT_GT(a.batch_seqs, 300);
  EXPECT_LT(a.batch_seqs, 600);
  EXPECT_EQ(a.concurrent_seqs(), a.batch_seqs * 8);
  // A pass receives 7/8 of every unit.
  EXPECT_NEAR(static_cast<double>(a.gathered_bytes_per_pass) / kGB, 141.1 * 7 / 8, 0.1);

  // NO_SHARD: the weights alone exceed 80 GiB; the advice is to shard within the node.
  const MemoryPlan n = plan("llama-3.3-70b", 1, 8, Sharding::no_shard);
  EXPECT_FALSE(n.fits);
  EXPECT_EQ(n.batch_seqs, 1);
  EXPECT_NE(n.problem.find("at the smallest batch (1 sequence of 356 tokens"), std::string::npos) << n.problem;
  EXPECT_NE(n.problem.find("weights alone are too big"), std::string::npos) << n.problem;
  EXPECT_NE(n.advice.find("HYBRID_SHARD (shard within the node)"), std::string::npos) << n.advice;
  EXPECT_NE(n.table().find("SHORT BY"), std::string::npos);
  EXPECT_EQ(n.gathered_bytes_per_pass, 0);
}

TEST(MemoryPlan, Llama70bOnFourNodes) {
  const MemoryPlan h = plan("llama-3.3-70b", 4, 8, Sharding::hybrid_shard);
  const MemoryPlan f = plan("llama-3.3-70b", 4, 8, Sharding::full_shard);
  const MemoryPlan a = plan("llama-3.3-70b", 4, 8, Sharding::automatic);
  EXPECT_EQ(h.topology.shard_group_size, 8);
  EXPECT_EQ(h.topology.num_shard_groups, 4);
  EXPECT_EQ(a.topology.sharding, Sharding::hybrid_shard);
  EXPECT_EQ(a.batch_seqs, h.batch_seqs);
  // FULL_SHARD on 4x8 divides the weights by 32.
  EXPECT_EQ(f.topology.shard_group_size, 32);
  EXPECT_NEAR(static_cast<double>(shard_bytes(f)) / kGB, 141.1 / 32, 0.01);
  EXPECT_NEAR(static_cast<double>(shard_bytes(h)) / static_cast<double>(shard_bytes(f)), 4.0, 1e-3);
  // The memory freed goes into the batch.
  expect_largest(h);
  expect_largest(f);
  EXPECT_GT(f.batch_seqs, h.batch_seqs);
  EXPECT_EQ(h.concurrent_seqs(), h.batch_seqs * 32);
  EXPECT_NEAR(static_cast<double>(f.gathered_bytes_per_pass) / kGB, 141.1 * 31 / 32, 0.1);
  const MemoryPlan n = plan("llama-3.3-70b", 4, 8, Sharding::no_shard);
  EXPECT_FALSE(n.fits);
  // A group of two nodes is a valid HYBRID_SHARD and sits in between.
  const MemoryPlan two = plan_memory(preset("llama-3.3-70b"), layout(4, 8, Sharding::hybrid_shard, 16), {});
  EXPECT_EQ(two.topology.num_shard_groups, 2);
  EXPECT_GT(two.batch_seqs, h.batch_seqs);
  EXPECT_LT(two.batch_seqs, f.batch_seqs);
}

// docs/cluster.md's MoE table: Qwen3-235B-A22B shards within each of four nodes, 1/8 of 94 units of
// 2.49 B parameters per GPU, and every pass re-gathers 7/8 of them; Qwen3-30B-A3B replicates.
TEST(MemoryPlan, MixtureOfExpertsOnFourNodes) {
  const model::ModelSpec spec = preset("qwen3-235b-a22b");
  EXPECT_EQ(model::parameter_count(spec), 235'093'634'560);
  const ShardUnits u = shard_units(spec);
  EXPECT_EQ(u.layer, 2'487'755'008);  // attention + router + 128 experts of 3 x 1536 x 4096
  const MemoryPlan a = plan("qwen3-235b-a22b", 4, 8, Sharding::automatic);
  EXPECT_EQ(a.topology.sharding, Sharding::hybrid_shard);
  EXPECT_EQ(a.topology.shard_group_size, 8);
  expect_largest(a);
  EXPECT_NEAR(static_cast<double>(bytes_of(a, "weight shard: 94 layer units")) / kGiB, 54.45, 0.01);
  EXPECT_GT(a.batch_seqs, 30);
  EXPECT_NEAR(static_cast<double>(a.gathered_bytes_per_pass) / kGiB, 383.2, 0.1);
  EXPECT_GT(bytes_of(a, "expert outputs of every token"), 0);
  // Every layer is MoE: the gate/up buffers are an expert's width (1536), not the unused
  // intermediate_size (12288) of config.json.
  EXPECT_EQ(spec.dense_mlp_width(), 0);
  EXPECT_EQ(bytes_of(a, "gate, up (T,F)"), 2 * a.batch_tokens * 1536 * 2);
  const MemoryPlan f = plan("qwen3-235b-a22b", 4, 8, Sharding::full_shard);
  EXPECT_GT(f.batch_seqs, a.batch_seqs);
  const MemoryPlan small = plan("qwen3-30b-a3b", 1, 8, Sharding::automatic);
  EXPECT_EQ(small.topology.sharding, Sharding::no_shard);
}

// Sharded, a tied model's head unit carries the embedding a second time (the sharded sources
// gather it whole into the global slot): each rank's shard holds 1/G of that copy.
TEST(MemoryPlan, ShardedTiedHeadCountsItsEmbeddingCopy) {
  const model::ModelSpec spec = preset("qwen2.5-0.5b");
  ASSERT_TRUE(spec.tied_embeddings);
  const int64_t H = spec.hidden_size, V = spec.vocab_size;
  const MemoryPlan f = plan("qwen2.5-0.5b", 1, 8, Sharding::full_shard);
  ASSERT_EQ(f.topology.shard_group_size, 8);
  EXPECT_EQ(bytes_of(f, "weight shard: final norm (H) + tied lm_head copy"), padded_elements(H + V * H, 8) / 8 * 2);
  EXPECT_EQ(bytes_of(f, "gathered embedding/head"), padded_elements(H + V * H, 8) * 2);
  // Replicated, lm_head views the embedding: only the norm.
  const MemoryPlan n = plan("qwen2.5-0.5b", 1, 8, Sharding::no_shard);
  EXPECT_EQ(bytes_of(n, "weights: final norm (H), lm_head tied"), padded_elements(H, 1) * 2);
}

TEST(MemoryPlan, Llama8bReplicates) {
  const model::ModelSpec spec = preset("llama-3.1-8b");
  EXPECT_NEAR(static_cast<double>(model::weight_bytes(spec, DType::bf16)) / kGB, 16.06, 0.01);
  for (int nodes : {1, 4}) {
    SCOPED_TRACE(nodes);
    const MemoryPlan a = plan("llama-3.1-8b", nodes, 8, Sharding::automatic);
    EXPECT_TRUE(a.fits_one_rank);
    EXPECT_EQ(a.topology.sharding, Sharding::no_shard);
    EXPECT_EQ(a.topology.shard_group_size, 1);
    EXPECT_EQ(a.topology.num_shard_groups, 8 * nodes);
    EXPECT_EQ(shard_bytes(a), static_cast<int64_t>(model::weight_bytes(spec, DType::bf16)));
    EXPECT_EQ(bytes_of(a, "gathered"), 0);
    EXPECT_EQ(a.gathered_bytes_per_pass, 0);
    expect_largest(a);
    // ~60 GiB left for 128 KiB x 356 tokens per sequence: several hundred sequences per GPU.
    EXPECT_GT(a.batch_seqs, 800);
    EXPECT_LT(a.batch_seqs, 1500);
    EXPECT_EQ(a.batch_tokens, kAutoMaxBatchTokens);
    EXPECT_EQ(a.concurrent_seqs(), a.batch_seqs * 8 * nodes);

    const MemoryPlan h = plan("llama-3.1-8b", nodes, 8, Sharding::hybrid_shard);
    const MemoryPlan f = plan("llama-3.1-8b", nodes, 8, Sharding::full_shard);
    EXPECT_NEAR(static_cast<double>(shard_bytes(h)) / kGB, 16.06 / 8, 0.01);
    EXPECT_NEAR(static_cast<double>(shard_bytes(f)) / kGB, 16.06 / (8 * nodes), 0.01);
    expect_largest(h);
    expect_largest(f);
    EXPECT_GT(h.batch_seqs, a.batch_seqs);
    EXPECT_GE(f.batch_seqs, h.batch_seqs);
  }
}

TEST(MemoryPlan, BatchFollowsTheBudgetAndOptions) {
  PlanOptions h200;
  h200.budget_gib = 139;
  const MemoryPlan small = plan("llama-3.1-8b", 1, 8, Sharding::no_shard);
  const MemoryPlan big = plan("llama-3.1-8b", 1, 8, Sharding::no_shard, h200);
  expect_largest(big);
  EXPECT_GT(big.batch_seqs, small.batch_seqs);
  // 70B fits one H200 rank? 131 GiB of weights + reserve: no.
  EXPECT_FALSE(plan("llama-3.3-70b", 1, 8, Sharding::automatic, h200).fits_one_rank);

  // Longer responses: fewer sequences.
  PlanOptions longer;
  longer.max_new_tokens = 1000;
  EXPECT_LT(plan("llama-3.1-8b", 1, 8, Sharding::no_shard, longer).batch_seqs, small.batch_seqs);

  // A fixed number of tokens per pass, and a cap on sequences.
  PlanOptions fixed;
  fixed.batch_tokens = 2048;
  const MemoryPlan f = plan("llama-3.1-8b", 1, 8, Sharding::no_shard, fixed);
  EXPECT_EQ(f.batch_tokens, 2048);
  EXPECT_LE(f.batch_seqs, 2048);
  expect_largest(f);
  PlanOptions capped;
  capped.max_seqs = 64;
  const MemoryPlan c = plan("llama-3.1-8b", 1, 8, Sharding::no_shard, capped);
  EXPECT_TRUE(c.fits);
  EXPECT_EQ(c.batch_seqs, 64);
  EXPECT_EQ(c.batch_tokens, 64 * 256);
  EXPECT_GT(c.free_bytes(), 10 * kGiB);

  // CPU deployment: fp32 weights and cache, no cuBLAS workspace.
  PlanOptions cpu;
  cpu.backend = engine::BackendKind::cpu;
  cpu.budget_gib = 256;
  const MemoryPlan m = plan("llama-3.1-8b", 1, 1, Sharding::no_shard, cpu);
  EXPECT_EQ(shard_bytes(m), static_cast<int64_t>(model::weight_bytes(preset("llama-3.1-8b"), DType::f32)));
  EXPECT_EQ(bytes_of(m, "cuBLAS"), 0);
  EXPECT_EQ(bytes_of(m, "KV cache"), kv_cache_bytes(m.spec, m.batch_seqs * 356, DType::f32));
  expect_largest(m);
}

TEST(MemoryPlan, WorkingMemoryTooBig) {
  // The weights fit but a single sequence's cache does not.
  PlanOptions o;
  o.prompt_tokens = 100000;
  o.max_new_tokens = 30000;
  o.budget_gib = 24;
  const MemoryPlan m = plan("llama-3.1-8b", 1, 1, Sharding::no_shard, o);
  EXPECT_FALSE(m.fits);
  EXPECT_NE(m.problem.find("working memory does not fit"), std::string::npos) << m.problem;
  EXPECT_NE(m.advice.find("--prompt-tokens"), std::string::npos) << m.advice;

  // One rank and a model too big for it: no strategy helps, more GPUs do.
  const MemoryPlan one = plan("llama-3.3-70b", 1, 1, Sharding::automatic);
  EXPECT_FALSE(one.fits);
  EXPECT_NE(one.advice.find("more GPUs"), std::string::npos) << one.advice;
  // 4 x 8 with a budget too small for even FULL_SHARD.
  PlanOptions tiny;
  tiny.budget_gib = 8;
  const MemoryPlan t = plan("llama-3.3-70b", 4, 8, Sharding::hybrid_shard, tiny);
  EXPECT_FALSE(t.fits);
  EXPECT_NE(t.advice.find("even FULL_SHARD over all 32 ranks"), std::string::npos) << t.advice;
}

TEST(MemoryPlan, Table) {
  const MemoryPlan m = plan("llama-3.3-70b", 4, 8, Sharding::hybrid_shard);
  const std::string t = m.table();
  for (const char* row : {"weight shard: 80 layer units, 1/8 bf16", "gathered layer units: 2 slots",
                          "gathered embedding/head", "KV cache", "residual x (T,H) f32",
                          "gate, up (T,F) bf16", "logits (B,V) f32", "log-softmax (B,V) f32",
                          "cuBLAS workspace", "allocated", "reserve", "needed", "budget", "free",
                          "MiB", "GiB"}) {
    EXPECT_NE(t.find(row), std::string::npos) << row << "\n" << t;
  }
  EXPECT_EQ(m.reserve_bytes, kReserveFixedBytes + static_cast<int64_t>(0.05 * 80 * kGiB));
  EXPECT_EQ(format_bytes(3 * kGiB / 2), "1.50 GiB");
  EXPECT_EQ(format_bytes(5 << 20), "5.0 MiB");
  EXPECT_EQ(format_bytes(12), "12 B");
}

TEST(MemoryPlan, RejectsBadOptions) {
  PlanOptions o;
  o.batch_tokens = 100;  // below the 256 prompt tokens
  EXPECT_NE(plan_error(o).find("--batch-tokens 100 is smaller than --prompt-tokens 256"),
            std::string::npos);
  o = PlanOptions();
  o.prompt_tokens = 200000;  // Llama 3.1: 131072 positions
  EXPECT_NE(plan_error(o).find("context length"), std::string::npos);
  o = PlanOptions();
  o.budget_gib = 0;
  EXPECT_NE(plan_error(o).find("budget"), std::string::npos);
  EXPECT_EQ(parse_backend("CUDA"), engine::BackendKind::cuda);
  EXPECT_EQ(parse_backend("cpu"), engine::BackendKind::cpu);
  EXPECT_EQ(parse_backend("auto"), engine::BackendKind::cuda);  // run's --backend auto on the GPU nodes planned for
  EXPECT_THROW(parse_backend("rocm"), Error);
  // An invalid layout is the topology's error.
  EXPECT_THROW(plan_memory(preset("llama-3.1-8b"), layout(1, 8, Sharding::hybrid_shard, 3), {}), Error);
}
