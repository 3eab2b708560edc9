// Decode-step graphs against eager steps, generation over the DevicePass and the device KL, each
// against the CPU engine.
#include <gtest/gtest.h>

#include <initializer_list>

#include "common/sharded_engine_check.h"
#include "engine/cuda/engine_cuda_check.h"

using namespace abl;
using namespace abl::cuda_engine_test;

// ---- decode-step graphs and the forward-pass interface ---------------------------------------

namespace {


// Decode steps of the organism's golden prompts, each run twice on the GPU: eagerly on the batch
// padded by hand to the graph's bucket (dummy sequences on a spare row), and through the decode
// graph. The real sequences see the same kernels at the same shapes, so their greedy ids must be
// bit-identical; the first step of the bucket runs eagerly, the second is captured, the rest replay.
void expect_graph_steps_equal_eager(const std::string& dir, const cuda::DeviceAblation* ablation,
                                    const std::vector<int32_t>& trial_of, const std::string& what) {
  std::vector<std::vector<int32_t>> prompts = golden_prompts(dir);
  if (prompts.size() > 5) prompts.resize(5);
  const int64_t P = static_cast<int64_t>(prompts.size()), max_new = 12;
  std::vector<int64_t> kv_begin, cached;
  int64_t rows = 0, prefill = 0;
  for (const auto& p : prompts) {
    kv_begin.push_back(rows);
    cached.push_back(static_cast<int64_t>(p.size()));
    rows += static_cast<int64_t>(p.size()) + max_new;
    prefill += static_cast<int64_t>(p.size());
  }
  const int64_t spare = rows;  // the hand-padded steps' dummy row
  Twin tw(dir, {prefill, 16}, rows + 1);
  cuda::CudaEngine& gpu = *tw.gpu;
  std::vector<int32_t> next(static_cast<size_t>(P));
  engine::Batch pre;
  for (int64_t p = 0; p < P; ++p) {
    pre.add(prompts[static_cast<size_t>(p)].data(), cached[static_cast<size_t>(p)], kv_begin[static_cast<size_t>(p)], 0,
            trial_of[static_cast<size_t>(p) % trial_of.size()]);
  }
  engine::Outputs o;
  o.next_ids = next.data();
  gpu.forward(pre, *tw.gpu_cache, o, ablation);
  const int64_t S = cuda::decode_bucket(P, 16);
  const int64_t captures0 = gpu.graphs().captures(), replays0 = gpu.graphs().replays();
  for (int64_t step = 0; step < max_new; ++step) {
    engine::Batch d;
    for (int64_t p = 0; p < P; ++p) {
      d.add(&next[static_cast<size_t>(p)], 1, kv_begin[static_cast<size_t>(p)], cached[static_cast<size_t>(p)],
            trial_of[static_cast<size_t>(p) % trial_of.size()]);
    }
    std::vector<int32_t> eager(static_cast<size_t>(S)), graph(static_cast<size_t>(P));
    gpu.set_decode_graphs(false);
    engine::Outputs oe;
    oe.next_ids = eager.data();
    gpu.forward(cuda::pad_decode_step(d, S, spare, tw.gpu_cache->scratch_state_slot()), *tw.gpu_cache, oe, ablation);
    gpu.set_decode_graphs(true);
    engine::Outputs og;
    og.next_ids = graph.data();
    gpu.forward(d, *tw.gpu_cache, og, ablation);
    for (int64_t p = 0; p < P; ++p) {
      EXPECT_EQ(graph[static_cast<size_t>(p)], eager[static_cast<size_t>(p)]) << what << ": step " << step << " sequence " << p;
      cached[static_cast<size_t>(p)] += 1;
    }
    next = graph;
  }
  EXPECT_EQ(gpu.graphs().captures() - captures0, 1) << what << ": one bucket, one kv bucket, one graph";
  EXPECT_EQ(gpu.graphs().replays() - replays0, max_new - 2) << what;
}

// The ablation of two_trial_table on `dir`'s weights, checked through decode graphs.
void expect_ablated_graph_steps_equal_eager(const std::string& dir) {
  const model::ModelSpec spec = model::load_model_spec(dir);
  auto host = engine::HostWeights::load(dir);
  cuda::Stream s;
  cuda::DeviceWeights dev(*host, s.get());
  const engine::AblationTable table = abl::testing::two_trial_table(spec, 300);
  // The ablation is built on another engine's weights: same bf16 values, so the same vectors; the
  // test's own Twin uploads the weights again.
  const cuda::DeviceAblation dab(dev, table, s.get());
  s.synchronize();
  expect_graph_steps_equal_eager(dir, &dab, {0, 1, -1}, "ablated " + dir);
}

// Both checks, unablated and ablated, on each golden fixture of `names`.
void expect_graph_steps_equal_eager_on(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const std::string dir = fixture_dir() + "/golden/" + name;
    expect_graph_steps_equal_eager(dir, nullptr, {-1}, std::string(name) + " unablated");
    expect_ablated_graph_steps_equal_eager(dir);
  }
}

}  // namespace

TEST(CudaEngine, DecodeGraphEqualsEagerSteps) {
  ABL_REQUIRE_GPU();
  expect_graph_steps_equal_eager(fixture_dir() + "/organism", nullptr, {-1}, "unablated");
}

TEST(CudaEngine, DecodeGraphEqualsEagerStepsWithAblation) {
  ABL_REQUIRE_GPU();
  expect_ablated_graph_steps_equal_eager(fixture_dir() + "/organism");
}

// MoE layers route, sort and run their experts on the device, so their decode steps are graphs too:
// Qwen2-MoE (shared expert, a dense layer among the MoE ones), Qwen3-MoE (top-3 of 8), Mixtral and
// GLM-4.5 (sigmoid router with its fp32 bias, ungated shared expert), Granite-MoE (stacked experts,
// the multipliers), DeepSeek-V3 (latent attention: its keys and values built on the device),
// with the routed and shared experts ablated. (The graph against eager steps of the same engine: the
// grouped path's correctness is CudaEngineGolden's and AblationMatchesCpuOnMoe's.)
TEST(CudaEngine, DecodeGraphEqualsEagerStepsOnMoe) {
  ABL_REQUIRE_GPU();
  expect_graph_steps_equal_eager_on({"qwen2-moe-shared", "qwen3-moe", "mixtral-moe", "glm4-moe", "granite-moe-shared",
                                     "gpt-oss", "deepseek-v3-mla"});
}

// The families whose kernels take other paths in a captured step: Gemma 2's sliding window on
// alternate layers, attention soft-cap and final soft-cap in the graph's greedy ids; Gemma 3's local
// and global RoPE tables and q/k norms; Phi-3's LongRoPE table (steps past original_max use the long
// factors), unablated and ablated; Apertus' xIELU, whose scalars the kernel reads from each layer's unit in device
// memory.
TEST(CudaEngine, DecodeGraphEqualsEagerStepsOnGemmaAndPhi3) {
  ABL_REQUIRE_GPU();
  expect_graph_steps_equal_eager_on({"gemma2-softcap", "gemma3-local-global", "phi3-longrope-long", "apertus"});
}

// generate() over DevicePass (what the app's CUDA backend runs) against generate() over the CPU
// engine on 40 organism prompts: identical responses except where bf16 flips a near-tie, and the
// decode steps went through graphs.
TEST(CudaEngine, GenerateOverDevicePassMatchesCpu) {
  ABL_REQUIRE_GPU();
  const std::string dir = fixture_dir() + "/organism";
  const text::Tokenizer tok = text::Tokenizer::from_file(dir + "/tokenizer.json");
  const text::ChatTemplate tmpl = text::ChatTemplate::resolve("auto", dir);
  std::vector<engine::GenerateRequest> reqs;
  for (const char* name : {"harmful.txt", "harmless.txt"}) {
    const auto lines = read_lines(dir + "/prompts/" + name);
    for (size_t i = 400; i < 420 && i < lines.size(); ++i) reqs.push_back({tok.encode(tmpl.render("", lines[i]), false), -1});
  }
  ASSERT_EQ(reqs.size(), 40u);
  engine::GenerateOptions opts;
  opts.max_new_tokens = 24;
  opts.keep_first_logprobs = true;
  const int64_t rows = 16 * (64 + opts.max_new_tokens) + 512;
  Twin tw(dir, {512, 16}, rows);
  tw.gpu->set_decode_graphs(true);  // whatever ABL_CUDA_GRAPHS says
  opts.eos_ids = tw.spec().eos_token_ids;
  engine::HostPass cpu_pass(*tw.cpu, *tw.cpu_cache);
  cuda::DevicePass gpu_pass(*tw.gpu, *tw.gpu_cache);
  const auto want = engine::generate(cpu_pass, tok, reqs, opts);
  const auto got = engine::generate(gpu_pass, tok, reqs, opts);
  ASSERT_EQ(got.size(), want.size());
  int same = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    same += got[i].ids == want[i].ids ? 1 : 0;
    ASSERT_EQ(got[i].first_logprobs.size(), want[i].first_logprobs.size());
    // First-token log-probabilities: the KL the sweep scores is tiny.
    double kl = 0;
    for (size_t v = 0; v < want[i].first_logprobs.size(); ++v) {
      const double lp = want[i].first_logprobs[v];
      kl += std::exp(lp) * (lp - got[i].first_logprobs[v]);
    }
    EXPECT_LT(kl, 1e-2) << "prompt " << i;
  }
  std::cout << "[ measured ] generate over DevicePass: " << same << " of " << got.size()
            << " responses identical to the CPU's; decode graphs captured " << tw.gpu->graphs().captures()
            << ", replayed " << tw.gpu->graphs().replays() << "\n";
  EXPECT_GE(same, 36);
  EXPECT_GT(tw.gpu->graphs().replays(), 0);
}

// The sweep's KL on the device (Outputs::kl over DevicePass, the reference in device memory)
// against the CPU's (HostPass): the reference is the CPU's unablated next-token distribution, the
// passes are ablated by three trials, so KL spans near zero (no trial) to well above it.
namespace {

void expect_device_kl_matches_host_kl(const std::string& dir) {
  const auto prompts = golden_prompts(dir);
  const int64_t total = total_tokens(prompts);
  Twin tw(dir, {total, 16}, total);
  const model::ModelSpec& spec = tw.spec();
  const int64_t V = spec.vocab_size, P = static_cast<int64_t>(prompts.size());
  const engine::Batch plain = packed_prefill(prompts);
  std::vector<float> logits(static_cast<size_t>(P * V)), ref(logits.size());
  tw.cpu->forward(plain, *tw.cpu_cache, {logits.data(), nullptr, nullptr});
  cpu::log_softmax(logits.data(), ref.data(), P, V);
  cuda::DeviceBuffer ref_dev(ref.size() * sizeof(float));
  cuda::copy_to_device(ref_dev.get(), ref.data(), ref.size() * sizeof(float), tw.gpu->stream());

  const engine::AblationTable table = abl::testing::two_trial_table(spec, 700);
  engine::AblationEpilogue epi(spec, table.directions, table.ablations);
  const cuda::DeviceAblation dab(*tw.dev, table, tw.gpu->stream());

  const engine::Batch ablated = packed_prefill(prompts, {-1, 0, 1});
  std::vector<int32_t> rows(static_cast<size_t>(P));
  std::iota(rows.begin(), rows.end(), 0);  // each prompt against its own unablated distribution
  std::vector<double> want(static_cast<size_t>(P)), got(static_cast<size_t>(P));
  engine::HostPass host(*tw.cpu, *tw.cpu_cache, &epi, {ref.data(), P});
  cuda::DevicePass dev(*tw.gpu, *tw.gpu_cache, &dab, {ref_dev.as<float>(), P});
  engine::Outputs oh, od;
  oh.kl_rows = od.kl_rows = rows.data();
  oh.kl = want.data();
  od.kl = got.data();
  host.forward(ablated, oh);
  dev.forward(ablated, od);
  double worst = 0;
  for (int64_t p = 0; p < P; ++p) {
    const double w = want[static_cast<size_t>(p)], g = got[static_cast<size_t>(p)];
    // bf16 activations: the unablated rows sit at the noise floor, the ablated ones agree to ~10 %.
    EXPECT_NEAR(g, w, 2e-3 + 0.1 * w) << dir << ": prompt " << p << " (trial " << p % 3 - 1 << ")";
    worst = std::max(worst, std::fabs(g - w) / std::max(w, 1e-3));
  }
  std::cout << "[ measured ] device KL against host KL on " << dir << ": worst |Δ|/max(KL, 1e-3) = " << worst
            << "\n";
}

}  // namespace

TEST(CudaEngine, DeviceKlMatchesHostKl) {
  ABL_REQUIRE_GPU();
  expect_device_kl_matches_host_kl(fixture_dir() + "/organism");
}

// Gemma 2 soft-caps the final logits before the log-softmax the KL reads.
TEST(CudaEngine, DeviceKlMatchesHostKlWithFinalSoftcap) {
  ABL_REQUIRE_GPU();
  expect_device_kl_matches_host_kl(fixture_dir() + "/golden/gemma2-softcap");
}

