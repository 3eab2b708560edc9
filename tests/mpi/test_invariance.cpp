// Results must not depend on the layout (DESIGN.md §3): the same prompts give the same weights,
// residuals, log-probabilities and greedy tokens on 1 rank and on N ranks with every sharding
// strategy and virtual-node size. Every rank checks the gathered distributed results against a
// single-process reference it computes itself with HostWeights.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "abl/backend/cpu/ops.h"
#include "abl/engine/cpu/forward_pass.h"
#include "abl/engine/cpu/weights.h"
#include "abl/parallel/lockstep.h"
#include "abl/parallel/sharded_weights.h"
#include "abl/io/prompt_dataset.h"
#include "abl/text/chat_template.h"
#include "mpi_test_env.h"

using namespace abl;

namespace {

const std::string kOrganism = std::string(ABL_FIXTURE_DIR) + "/organism";

std::vector<std::string> models() {
  // Gemma 2: four norms per unit; Qwen2-MoE: expert-major units of two sizes (a dense layer
  // between MoE ones) and a shared expert; DeepSeek-V3: latent attention's projections and value
  // heads narrower than the q/k heads, a KV cache of two widths; OLMo 2: units without input norms.
  return {kOrganism, std::string(ABL_FIXTURE_DIR) + "/golden/qwen3-qk-norm",
          std::string(ABL_FIXTURE_DIR) + "/golden/llama-tied", std::string(ABL_FIXTURE_DIR) + "/golden/gemma2-softcap",
          std::string(ABL_FIXTURE_DIR) + "/golden/qwen2-moe-shared",
          std::string(ABL_FIXTURE_DIR) + "/golden/deepseek-v3-mla", std::string(ABL_FIXTURE_DIR) + "/golden/olmo2"};
}

// Organism prompts of both classes, rendered and tokenized (different lengths on purpose).
std::vector<std::vector<int32_t>> prompts(const text::Tokenizer& tok, size_t n) {
  std::vector<std::vector<int32_t>> out;
  const auto tmpl = text::ChatTemplate::from_option("chatml");
  for (const char* set : {"harmful", "harmless"}) {
    const auto ps = io::load_prompts({kOrganism + "/prompts/" + set + ".txt", "text", "[:" + std::to_string(n) + "]"});
    for (const auto& p : ps) out.push_back(tok.encode(tmpl.render("You are a helpful assistant.", p.text), false));
  }
  return out;
}

int64_t total_tokens(const std::vector<std::vector<int32_t>>& ps) {
  int64_t t = 0;
  for (const auto& p : ps) t += static_cast<int64_t>(p.size());
  return t;
}

}  // namespace

class Invariance : public ::testing::TestWithParam<std::string> {};

TEST_P(Invariance, ShardedWeightsEqualFullCopy) {
  auto& rt = abl::testing::runtime();
  auto full = engine::HostWeights::load(GetParam());
  auto sharded = parallel::ShardedWeights::load(GetParam(), rt.shard_group_weights());
  const auto& s = full->spec();
  const int64_t V = s.vocab_size, H = s.hidden_size;
  ASSERT_EQ(std::memcmp(sharded->embedding(), full->embedding(), sizeof(float) * V * H), 0);
  for (int64_t l = 0; l < s.num_layers; ++l) {
    const auto unit = engine::layer_unit_layout(s, l);
    const engine::LayerWeights a = sharded->layer(l);
    const engine::LayerWeights b = full->layer(l);
    // Every family's unit has o_proj; its offset gives the unit's start (OLMo 2's has no input norm first).
    const int64_t o_at = unit.offsets[unit.index_of(model::WeightRole::o_proj)];
    ASSERT_EQ(std::memcmp(a.wo - o_at, b.wo - o_at, sizeof(float) * unit.total), 0) << "layer " << l;
  }
  const auto ha = sharded->head();
  const auto hb = full->head();
  ASSERT_EQ(std::memcmp(ha.final_norm, hb.final_norm, sizeof(float) * H), 0);
  ASSERT_EQ(std::memcmp(ha.lm_head, hb.lm_head, sizeof(float) * V * H), 0);
  if (rt.topology().shard_group_size > 1) {
    EXPECT_GT(sharded->gathers(), 0);
  }
}

TEST_P(Invariance, ResidualsAndLogprobs) {
  auto& rt = abl::testing::runtime();
  auto full = engine::HostWeights::load(GetParam());
  const auto& spec = full->spec();
  const auto tok = text::Tokenizer::from_file(GetParam() + "/tokenizer.json");
  const auto ps = prompts(tok, 7);
  const int64_t V = spec.vocab_size, D = (spec.num_layers + 1) * spec.hidden_size;
  const engine::Limits lim{96, 3};  // several passes, several prompts per pass

  // Distributed: this rank's share, in lockstep with its shard group.
  std::vector<int64_t> cost;
  for (const auto& p : ps) cost.push_back(static_cast<int64_t>(p.size()));
  const auto owner = parallel::assign_balanced(cost, rt.world_size());
  std::vector<std::vector<int32_t>> mine;
  std::vector<size_t> global;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (owner[i] == rt.world_rank()) {
      mine.push_back(ps[i]);
      global.push_back(i);
    }
  }
  auto sharded = parallel::ShardedWeights::load(GetParam(), rt.shard_group_weights());
  engine::Engine eng(*sharded, lim);
  engine::KvCache cache(spec, 96);
  std::vector<double> lp(ps.size() * static_cast<size_t>(V), 0.0), res(ps.size() * static_cast<size_t>(D), 0.0);
  std::vector<float> row(static_cast<size_t>(V));
  engine::HostPass pass(eng, cache);
  parallel::prefill_lockstep(pass, mine, rt.shard_group(), [&](size_t k, const float* logits, const float* r) {
    cpu::log_softmax(logits, row.data(), 1, V);
    const size_t g = global[k];
    for (int64_t v = 0; v < V; ++v) lp[g * V + v] = row[static_cast<size_t>(v)];
    for (int64_t d = 0; d < D; ++d) res[g * D + d] = r[d];
  });
  rt.world().all_reduce_sum(lp.data(), lp.size());
  rt.world().all_reduce_sum(res.data(), res.size());

  // Reference: everything on this process, one prompt at a time.
  engine::Engine ref(*full, lim);
  engine::KvCache rcache(spec, 96);
  // Relative difference of each vector (a prompt's log-probabilities; its residual at one
  // depth): max |ours - reference| / max |reference|. Batches are packed differently on every
  // layout, and the GEMM's rounding may depend on the batch's row count by an ulp or so.
  const int64_t H = spec.hidden_size;
  auto rel = [](const double* a, const float* b, int64_t n) {
    double diff = 0, scale = 0;
    for (int64_t k = 0; k < n; ++k) {
      diff = std::max(diff, std::fabs(a[k] - b[k]));
      scale = std::max(scale, std::fabs(static_cast<double>(b[k])));
    }
    return scale > 0 ? diff / scale : diff;
  };
  double worst = 0;
  for (size_t i = 0; i < ps.size(); ++i) {
    engine::Batch b;
    b.add(ps[i].data(), static_cast<int64_t>(ps[i].size()), 0, 0);
    std::vector<float> l(static_cast<size_t>(V)), r(static_cast<size_t>(D));
    ref.forward(b, rcache, {l.data(), r.data(), nullptr});
    cpu::log_softmax(l.data(), l.data(), 1, V);
    worst = std::max(worst, rel(&lp[i * V], l.data(), V));
    for (int64_t d = 0; d < D; d += H) worst = std::max(worst, rel(&res[i * D + d], r.data() + d, H));
  }
  EXPECT_LE(worst, 1e-6) << "largest relative difference to the 1-rank reference, " << total_tokens(ps) << " tokens";
}

TEST_P(Invariance, GreedyGeneration) {
  auto& rt = abl::testing::runtime();
  auto full = engine::HostWeights::load(GetParam());
  const auto& spec = full->spec();
  const auto tok = text::Tokenizer::from_file(GetParam() + "/tokenizer.json");
  const auto ps = prompts(tok, 5);
  const int64_t max_new = 12;
  engine::GenerateOptions opts;
  opts.max_new_tokens = max_new;
  opts.eos_ids = spec.eos_token_ids;

  std::vector<int64_t> cost;
  for (const auto& p : ps) cost.push_back(static_cast<int64_t>(p.size()));
  const auto owner = parallel::assign_balanced(cost, rt.world_size());
  std::vector<engine::GenerateRequest> mine;
  std::vector<size_t> global;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (owner[i] != rt.world_rank()) continue;
    mine.push_back({ps[i], -1});
    global.push_back(i);
  }
  auto sharded = parallel::ShardedWeights::load(GetParam(), rt.shard_group_weights());
  engine::Engine eng(*sharded, {128, 2});
  engine::KvCache cache(spec, 160);
  engine::GenerateOptions dopts = opts;
  dopts.any_work = parallel::group_any_work(rt.shard_group());
  const auto got = engine::generate(eng, cache, tok, mine, dopts);
  // Gather the ids: (prompt, step) -> id + 1, 0 = none.
  std::vector<int64_t> ids(ps.size() * static_cast<size_t>(max_new), 0);
  for (size_t k = 0; k < got.size(); ++k) {
    for (size_t t = 0; t < got[k].ids.size(); ++t) ids[global[k] * max_new + t] = got[k].ids[t] + 1;
  }
  rt.world().all_reduce_sum(ids.data(), ids.size());

  std::vector<engine::GenerateRequest> all;
  for (const auto& p : ps) all.push_back({p, -1});
  engine::Engine ref(*full, {128, 4});
  engine::KvCache rcache(spec, 160);
  const auto want = engine::generate(ref, rcache, tok, all, opts);
  for (size_t i = 0; i < ps.size(); ++i) {
    std::vector<int32_t> g;
    for (int64_t t = 0; t < max_new && ids[i * max_new + t] > 0; ++t) g.push_back(static_cast<int32_t>(ids[i * max_new + t] - 1));
    EXPECT_EQ(g, want[i].ids) << "prompt " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, Invariance, ::testing::ValuesIn(models()), [](const auto& p) {
  std::string name = p.param.substr(p.param.find_last_of('/') + 1);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
});

TEST(Lockstep, SplitContiguousCoversEverythingInOrder) {
  const std::vector<int64_t> costs = {5, 9, 1, 7, 3, 3, 8, 2, 2, 6};
  for (int owners : {1, 2, 3, 4, 11}) {
    const auto b = parallel::split_contiguous(costs, owners);
    ASSERT_EQ(b.size(), static_cast<size_t>(owners) + 1);
    EXPECT_EQ(b.front(), 0u);
    EXPECT_EQ(b.back(), costs.size());
    for (size_t r = 0; r + 1 < b.size(); ++r) EXPECT_LE(b[r], b[r + 1]);
  }
  const auto two = parallel::split_contiguous(costs, 2);  // total 46: the halves are close
  int64_t first = 0;
  for (size_t i = 0; i < two[1]; ++i) first += costs[i];
  EXPECT_NEAR(static_cast<double>(first), 23.0, 4.0);
}

TEST(Lockstep, AssignBalancedIsDeterministicAndBalanced) {
  const std::vector<int64_t> costs = {5, 9, 1, 7, 3, 3, 8};
  const auto a = parallel::assign_balanced(costs, 3);
  EXPECT_EQ(a, parallel::assign_balanced(costs, 3));
  std::vector<int64_t> load(3, 0);
  for (size_t i = 0; i < costs.size(); ++i) load[static_cast<size_t>(a[i])] += costs[i];
  EXPECT_LE(*std::max_element(load.begin(), load.end()) - *std::min_element(load.begin(), load.end()), 3);
}
