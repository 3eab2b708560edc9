// The CUDA forward pass (engine/cuda/engine.h) against the CPU engine on the same HostWeights:
// packed prefill and decode logits and hidden states on the organism and every golden model,
// greedy generation on the organism, and the ablation epilogue for several trials in one batch.
// Tolerance by vector: max|Δ| ≤ rtol·max|ref| over each logits row or hidden-state vector (bf16
// activations keep 8 significant bits); the measured worst ratio is printed as "[ measured ]".
// The fixtures are read from ABL_FIXTURE_DIR, or from $ABL_FIXTURE_DIR_OVERRIDE when set (a
// checkout at another path, e.g. on a GPU machine).
#include <gtest/gtest.h>

#include "abl/engine/cuda/plan.h"
#include "engine/cuda/engine_cuda_check.h"

using namespace abl;
using namespace abl::cuda_engine_test;

// ---- on the device --------------------------------------------------------------------------

// (1) A packed prefill of the 8 organism prompts: last-token logits, hidden states at every depth
// and the logits of every token of the batch.
TEST(CudaEngine, PrefillMatchesCpuOnOrganism) {
  ABL_REQUIRE_GPU();
  const std::string dir = fixture_dir() + "/organism";
  const auto prompts = golden_prompts(dir);
  const int64_t total = total_tokens(prompts);
  Twin tw(dir, {total, 16}, total + 64);
  const engine::Batch b = packed_prefill(prompts);
  auto [c, g] = tw.run(b);
  const int64_t H = tw.spec().hidden_size, V = tw.spec().vocab_size;
  expect_vectors_close(g.logits, c.logits, V, kLogitsRtol, "organism prefill logits");
  expect_vectors_close(g.residuals, c.residuals, H, kResidualRtol, "organism prefill hidden states");

  std::vector<float> all_c(static_cast<size_t>(total * V)), all_g(all_c.size());
  engine::Outputs oc, og;
  oc.all_logits = all_c.data();
  og.all_logits = all_g.data();
  tw.cpu->forward(b, *tw.cpu_cache, oc);
  tw.gpu->forward(b, *tw.gpu_cache, og);
  expect_vectors_close(all_g, all_c, V, kAllTokenLogitsRtol, "organism prefill logits at every token");

  // Packing invariance: each prompt alone gives its rows of the packed pass.
  std::vector<float> alone(all_g.size());
  int64_t at = 0;
  for (const auto& p : prompts) {
    engine::Batch one;
    one.add(p.data(), static_cast<int64_t>(p.size()), 0, 0);
    engine::Outputs o;
    o.all_logits = alone.data() + at * V;
    tw.gpu->forward(one, *tw.gpu_cache, o);
    at += static_cast<int64_t>(p.size());
  }
  expect_vectors_close(alone, all_g, V, kLogitsRtol, "organism logits at every token, prompts alone vs packed");
  expect_vectors_close(alone, all_c, V, kAllTokenLogitsRtol, "organism logits at every token, prompts alone vs CPU");
  std::vector<double> rel;
  for (int64_t r = 0; r < total; ++r) {
    double scale = 0;
    for (int64_t i = 0; i < V; ++i) scale = std::max(scale, std::fabs(static_cast<double>(all_c[r * V + i])));
    rel.push_back(max_abs_diff(all_g.data() + r * V, all_c.data() + r * V, V) / scale);
  }
  std::sort(rel.begin(), rel.end());
  std::cout << "[ measured ] every-token logits rel error: median " << rel[rel.size() / 2] << ", 90% "
            << rel[rel.size() * 9 / 10] << ", 99% " << rel[rel.size() * 99 / 100] << ", max " << rel.back() << "\n";
}

// (2) Decode steps after a prefill, one with a new prompt's prefill packed among the decodes
// (continuous batching). Both engines are fed the CPU's greedy token.
TEST(CudaEngine, DecodeMatchesCpuOnOrganism) {
  ABL_REQUIRE_GPU();
  const std::string dir = fixture_dir() + "/organism";
  const auto prompts = golden_prompts(dir);
  const int64_t steps = 6;
  int64_t rows = 0;
  for (const auto& p : prompts) rows += static_cast<int64_t>(p.size()) + steps;
  const int64_t extra_at = rows;
  rows += static_cast<int64_t>(prompts[0].size()) + steps;
  Twin tw(dir, {rows, 16}, rows);
  const int64_t Vv = tw.spec().vocab_size, H = tw.spec().hidden_size;
  const size_t P = prompts.size();
  std::vector<int64_t> begin(P + 1), cached(P + 1, 0);
  std::vector<int32_t> next(P + 1);
  int64_t r = 0;
  for (size_t p = 0; p < P; ++p) {
    begin[p] = r;
    r += static_cast<int64_t>(prompts[p].size()) + steps;
  }
  begin[P] = extra_at;
  engine::Batch pre;
  for (size_t p = 0; p < P; ++p) {
    pre.add(prompts[p].data(), static_cast<int64_t>(prompts[p].size()), begin[p], 0);
    cached[p] = static_cast<int64_t>(prompts[p].size());
  }
  auto [c0, g0] = tw.run(pre);
  for (size_t p = 0; p < P; ++p) next[p] = argmax_row(c0.logits.data() + p * static_cast<size_t>(Vv), Vv);
  bool extra_started = false;
  for (int64_t step = 0; step < steps; ++step) {
    engine::Batch b;
    std::vector<size_t> who;
    for (size_t p = 0; p <= P; ++p) {
      if (p == P) {
        if (step < 2) continue;
        if (!extra_started) {  // the new prompt's prefill, packed with the decodes
          b.add(prompts[0].data(), static_cast<int64_t>(prompts[0].size()), begin[P], 0);
          cached[P] = static_cast<int64_t>(prompts[0].size());
          extra_started = true;
          who.push_back(p);
          continue;
        }
      }
      b.add(&next[p], 1, begin[p], cached[p]);
      cached[p] += 1;
      who.push_back(p);
    }
    auto [c, g] = tw.run(b);
    const std::string what = "organism decode step " + std::to_string(step);
    expect_vectors_close(g.logits, c.logits, Vv, kLogitsRtol, what + " logits");
    expect_vectors_close(g.residuals, c.residuals, H, kResidualRtol, what + " hidden states");
    for (size_t i = 0; i < who.size(); ++i) next[who[i]] = argmax_row(c.logits.data() + i * static_cast<size_t>(Vv), Vv);
  }
}

// (3) Greedy generation (up to 40 tokens or EOS) on the organism's 8 golden prompts (identical ids
// required; they are also checked against the torch reference) and the first 20 held-out
// harmful and harmless prompts (a divergence passes only where the CPU's top-2 margin at that
// step is within twice the measured logits difference of that step: a bf16 near-tie).
TEST(CudaEngine, GreedyMatchesCpuOnOrganism) {
  ABL_REQUIRE_GPU();
  const std::string dir = fixture_dir() + "/organism";
  const io::JsonValue gold = io::read_json_file(dir + "/golden.json");
  std::vector<std::vector<int32_t>> prompts = golden_prompts(dir);
  const size_t num_golden = prompts.size();
  const text::Tokenizer tok = text::Tokenizer::from_file(dir + "/tokenizer.json");
  const text::ChatTemplate tmpl = text::ChatTemplate::resolve("auto", dir);
  const std::string system = gold.get_string("system_prompt", "");
  for (const char* name : {"harmful.txt", "harmless.txt"}) {
    const auto lines = read_lines(dir + "/prompts/" + name);
    ASSERT_GE(lines.size(), 420u) << name;
    for (size_t i = 400; i < 420; ++i) prompts.push_back(tok.encode(tmpl.render(system, lines[i]), false));
  }
  const int64_t max_new = 40;
  int64_t rows = 0;
  for (const auto& p : prompts) rows += static_cast<int64_t>(p.size()) + max_new;
  int64_t prefill = 0;
  for (const auto& p : prompts) prefill += static_cast<int64_t>(p.size());
  Twin tw(dir, {prefill, static_cast<int64_t>(prompts.size())}, rows);
  const int64_t V = tw.spec().vocab_size;
  const std::vector<int64_t> eos = tw.spec().eos_token_ids;

  const Greedy cpu = greedy(
      [&](const engine::Batch& b) {
        std::vector<float> l(static_cast<size_t>(b.num_seqs() * V));
        tw.cpu->forward(b, *tw.cpu_cache, {l.data(), nullptr, nullptr});
        return l;
      },
      prompts, eos, max_new, V);
  const Greedy gpu = greedy(
      [&](const engine::Batch& b) {
        std::vector<float> l(static_cast<size_t>(b.num_seqs() * V));
        tw.gpu->forward(b, *tw.gpu_cache, {l.data(), nullptr, nullptr});
        return l;
      },
      prompts, eos, max_new, V);

  int identical = 0, near_ties = 0;
  double worst_step_diff = 0;
  for (size_t p = 0; p < prompts.size(); ++p) {
    if (p < num_golden) {
      std::vector<int32_t> ref;
      for (int64_t id : gold.at("prompts").at(p).at("greedy_ids").as_int_list()) ref.push_back(static_cast<int32_t>(id));
      EXPECT_EQ(cpu.ids[p], ref) << "CPU greedy ids of golden prompt " << p << " (torch reference)";
    }
    size_t i = 0;
    while (i < cpu.ids[p].size() && i < gpu.ids[p].size() && cpu.ids[p][i] == gpu.ids[p][i]) ++i;
    for (size_t st = 0; st < std::min(i + 1, std::min(cpu.step_logits[p].size(), gpu.step_logits[p].size())); ++st) {
      worst_step_diff = std::max(worst_step_diff, max_abs_diff(gpu.step_logits[p][st].data(),
                                                               cpu.step_logits[p][st].data(), V));
    }
    if (i == cpu.ids[p].size() && i == gpu.ids[p].size()) {
      ++identical;
      continue;
    }
    const float margin = top2_margin(cpu.step_logits[p][i].data(), V);
    const double diff = max_abs_diff(gpu.step_logits[p][i].data(), cpu.step_logits[p][i].data(), V);
    std::cout << "[ measured ] prompt " << p << " diverges at generated token " << i << ": CPU top-2 margin " << margin
              << ", max|Δlogits| " << diff << "\n";
    if (p < num_golden) {
      ADD_FAILURE() << "golden prompt " << p << ": GPU greedy ids differ from the CPU's at token " << i;
    } else if (margin <= 2 * diff) {
      ++near_ties;
    } else {
      ADD_FAILURE() << "prompt " << p << ": GPU greedy ids differ at token " << i << " with CPU margin " << margin
                    << " > 2 × " << diff;
    }
  }
  std::cout << "[ measured ] organism greedy: " << identical << " of " << prompts.size()
            << " prompts identical, " << near_ties << " near-tie divergences; worst max|Δlogits| along the common"
            << " prefix " << worst_step_diff << "\n";
}

// (4) Every golden model (family flags: qkv bias, qk norm, sliding window, llama3 rope scaling,
// tied embeddings, MHA; Gemma 2/3, Phi-3 with LongRoPE, Mixtral, Qwen2/3-MoE): packed prefill logits
// and hidden states, then decode steps. The MoE fixtures' routing gaps are only ≥ 1e-3 in fp32, so a
// bf16 engine may route a token differently: a mismatch there is first a routing question.
class CudaEngineGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaEngineGolden, MatchesCpu) {
  ABL_REQUIRE_GPU();
  const std::string dir = GetParam();
  const std::string name = fs::path(dir).filename().string();
  const auto prompts = golden_prompts(dir);
  const int64_t steps = 4;
  const int64_t total = total_tokens(prompts);
  Twin tw(dir, {total, 16}, total + steps * static_cast<int64_t>(prompts.size()));
  const int64_t H = tw.spec().hidden_size, V = tw.spec().vocab_size;
  std::vector<int64_t> begin, cached;
  engine::Batch b;
  int64_t row = 0;
  for (const auto& p : prompts) {
    begin.push_back(row);
    cached.push_back(static_cast<int64_t>(p.size()));
    b.add(p.data(), static_cast<int64_t>(p.size()), row, 0);
    row += static_cast<int64_t>(p.size()) + steps;
  }
  auto [c, g] = tw.run(b);
  expect_vectors_close(g.logits, c.logits, V, kLogitsRtol, name + " prefill logits");
  expect_vectors_close(g.residuals, c.residuals, H, kResidualRtol, name + " prefill hidden states");
  {
    const io::SafetensorsReader ref(dir + "/golden.safetensors");
    std::cout << "[ info ] against the torch reference:\n";
    expect_vectors_close(g.logits, ref.read_f32("logits_last"), V, kLogitsRtol, name + " prefill logits vs torch");
  }
  std::vector<int32_t> next(prompts.size());
  for (size_t p = 0; p < prompts.size(); ++p) next[p] = argmax_row(c.logits.data() + p * static_cast<size_t>(V), V);
  for (int64_t step = 0; step < steps; ++step) {
    engine::Batch d;
    for (size_t p = 0; p < prompts.size(); ++p) {
      d.add(&next[p], 1, begin[p], cached[p]);
      cached[p] += 1;
    }
    auto [cd, gd] = tw.run(d);
    expect_vectors_close(gd.logits, cd.logits, V, kLogitsRtol, name + " decode step " + std::to_string(step) + " logits");
    for (size_t p = 0; p < prompts.size(); ++p) next[p] = argmax_row(cd.logits.data() + p * static_cast<size_t>(V), V);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, CudaEngineGolden, ::testing::ValuesIn(golden_model_folders()), [](const auto& p) {
  std::string n = fs::path(p.param).filename().string();
  for (char& ch : n) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n;
});
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaEngineGolden);

// (5) The ablation epilogue: several trials in one batch (global and per-layer directions, all
// three row normalisations, a trial that ablates nothing, un-ablated sequences) against the CPU
// engine with engine::AblationEpilogue, from a TrialTable and from a direct trial list.
static void expect_ablation_matches_cpu(const std::string& dir) {
  const auto prompts = golden_prompts(dir);
  const int64_t total = total_tokens(prompts);
  Twin tw(dir, {total, 16}, total);
  const model::ModelSpec& spec = tw.spec();
  const int64_t H = spec.hidden_size, V = spec.vocab_size, L = spec.num_layers;

  std::vector<std::vector<float>> r;  // (L+1, H) candidate directions
  for (int64_t d = 0; d <= L; ++d) r.push_back(unit_vector(H, static_cast<uint32_t>(100 + d)));
  std::vector<ablation::TrialParams> params(3);
  params[0].direction_index = 0.5;
  params[0].comp[0] = {1.2, 1.5, 0.6, 2.0};
  params[0].comp[1] = {0.9, 2.5, 0.3, 1.5};
  params[1].direction_index = 1.7;
  params[1].comp[0] = {0.8, 0.0, 0.8, 3.0};
  params[1].comp[1] = {1.4, 3.0, 0.5, 2.0};
  params[2].scope = ablation::DirectionScope::per_layer;
  params[2].comp[0] = {1.0, 2.0, 0.4, 2.5};
  params[2].comp[1] = {1.1, 1.0, 0.7, 2.5};
  const std::vector<int32_t> trial_of = {0, 1, 2, -1, 0, 2, 1, -1};

  auto check = [&](const std::vector<std::vector<float>>& directions,
                   const std::vector<engine::TrialAblation>& trials, const cuda::DeviceAblation& dab,
                   const std::vector<int32_t>& ids, const std::string& check_name) -> double {
    const std::string what = fs::path(dir).filename().string() + ": " + check_name;
    const engine::Batch b = packed_prefill(prompts, ids);
    engine::AblationEpilogue ep(spec, directions, trials);
    auto [c, g] = tw.run(b, &ep, &dab);
    expect_vectors_close(g.logits, c.logits, V, kLogitsRtol, what + " logits");
    expect_vectors_close(g.residuals, c.residuals, H, kResidualRtol, what + " hidden states");
    // Not vacuous: the ablated sequences moved well beyond the tolerance.
    auto [c0, g0] = tw.run(b);
    double most = 0;
    for (size_t p = 0; p < prompts.size(); ++p) {
      if (ids[p % ids.size()] < 0) continue;
      const size_t at = p * static_cast<size_t>(V);
      const double moved = max_abs_diff(g.logits.data() + at, g0.logits.data() + at, V);
      const double err = max_abs_diff(g.logits.data() + at, c.logits.data() + at, V);
      if (moved > 0) {
        EXPECT_GT(moved, 2 * err) << what << " sequence " << p;
      }
      most = std::max(most, moved);
    }
    return most;  // the largest move of an ablated sequence's logits
  };

  engine::AblationTable table = ablation::build_trial_table(params, r, engine::RowNorm::full);
  if (spec.num_experts > 0) {
    // Only the last MoE layer's MLP is ablated: every router then sees the unablated residual
    // stream, whose top-k gaps the fixtures guarantee (≥ 1e-3 in fp32), so the bf16 engine routes
    // as the CPU does and the comparison is of the experts' epilogue, not of a routing flip.
    int64_t last = L - 1;
    while (!spec.is_moe_layer(last)) --last;
    for (auto& t : table.ablations) {
      for (int64_t l = 0; l < L; ++l) {
        const auto i = static_cast<size_t>(l);
        t.lambda[0][i] = 0.0f;
        if (l != last) t.lambda[1][i] = 0.0f;
        if (l == last && t.lambda[1][i] == 0.0f) t.lambda[1][i] = 1.0f;
      }
    }
  }
  {
    const cuda::DeviceAblation dab(*tw.dev, table, tw.gpu->stream());
    ASSERT_EQ(dab.num_trials(), 3);
    check(table.directions, table.ablations, dab, trial_of, "ablation (trial table, full)");
  }
  // Mixed row normalisations, one trial ablating nothing.
  std::vector<engine::TrialAblation> mixed = table.ablations;
  mixed[0].mode = engine::RowNorm::none;
  mixed[1].mode = engine::RowNorm::pre;
  mixed.push_back(mixed[2]);
  for (auto& l : mixed[3].lambda) std::fill(l.begin(), l.end(), 0.0f);
  mixed[2].lambda[1][0] = 0.0f;
  const cuda::DeviceAblation dab(*tw.dev, table.directions, mixed, tw.gpu->stream());
  check(table.directions, mixed, dab, {0, 1, 2, 3, -1, 2, 1, 0}, "ablation (none/pre/full mixed)");
  if (spec.num_experts > 0) {
    // Heretic's reach: attention and the shared expert only, the routed experts left as they are.
    for (auto& t : mixed) t.routed_experts = false;
    const cuda::DeviceAblation shared_only(*tw.dev, table.directions, mixed, tw.gpu->stream());
    const double moved =
        check(table.directions, mixed, shared_only, {0, 1, 2, 3, -1, 2, 1, 0}, "ablation without the routed experts");
    // Only the last MoE layer's MLP is ablated here: the shared expert moves the logits (Qwen2-MoE);
    // without one (Mixtral, Qwen3-MoE) nothing is ablated and the logits stay bit for bit.
    if (spec.shared_expert_intermediate_size > 0) {
      EXPECT_GT(moved, 0.0);
    } else {
      EXPECT_EQ(moved, 0.0);
    }
  }
}

TEST(CudaEngine, AblationMatchesCpuOnOrganism) {
  ABL_REQUIRE_GPU();
  expect_ablation_matches_cpu(fixture_dir() + "/organism");
}

// Nemotron-H: every trial's λ on both components of every layer, while each layer has only one of them (its
// mixer's out_proj / o_proj, or its MLP's down projection, its experts' in the MoE blocks).
TEST(CudaEngine, AblationMatchesCpuOnSingleBlockLayers) {
  ABL_REQUIRE_GPU();
  for (const char* name : {"nemotron-h", "nemotron-h-moe", "nemotron-h-latent-moe"}) {
    expect_ablation_matches_cpu(fixture_dir() + "/golden/" + name);
  }
}

// Every routed expert's down projection (grouped, each with its own row norms) and the shared
// expert's, in the last MoE layer (see above: the routing stays the unablated one).
TEST(CudaEngine, AblationMatchesCpuOnMoe) {
  ABL_REQUIRE_GPU();
  for (const char* name : {"qwen2-moe-shared", "qwen3-moe", "glm4-moe", "granite-moe-shared", "gpt-oss"}) {
    expect_ablation_matches_cpu(fixture_dir() + "/golden/" + name);
  }
}

