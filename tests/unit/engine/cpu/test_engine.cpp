// Forward-pass invariants on synthetic models of every family feature: incremental decoding over
// the KV cache equals a full prefill, packing sequences equals running them one at a time, the
// captures follow HF's hidden_states meaning, and generation stops as asked.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "abl/engine/cpu/weights.h"
#include "abl/engine/cpu/forward_pass.h"
#include "abl/backend/cpu/ops.h"
#include "abl/core/error.h"
#include "abl/engine/cpu/engine.h"
#include "abl/engine/forward_pass.h"
#include "abl/engine/cpu/forward_pass.h"
#include "abl/model/model_spec.h"
#include "abl/text/synthetic_tokenizer.h"

using namespace abl;
using engine::Batch;
using engine::Engine;
using engine::HostWeights;
using engine::KvCache;
using engine::Outputs;

namespace {

struct Variant {
  const char* name;
  void (*apply)(model::ModelSpec&);
};

const Variant kVariants[] = {
    {"llama", [](model::ModelSpec&) {}},
    {"qkv_bias", [](model::ModelSpec& s) { s.qkv_bias = true; }},
    {"qk_norm_head_dim", [](model::ModelSpec& s) { s.qk_norm = true; s.head_dim = 24; }},
    {"sliding_window", [](model::ModelSpec& s) { s.sliding_window = 3; }},
    {"rope_llama3", [](model::ModelSpec& s) {
       s.rope_scaling.type = model::RopeScaling::Type::llama3;
       s.rope_scaling.factor = 8.0;
       s.rope_scaling.original_max_position_embeddings = 16;
     }},
    {"tied_mha", [](model::ModelSpec& s) { s.tied_embeddings = true; s.num_kv_heads = 4; }},
    {"gqa4", [](model::ModelSpec& s) { s.num_kv_heads = 1; }},
};

model::ModelSpec variant_spec(const Variant& v) {
  model::ModelSpec s = model::synthetic_model_spec("tiny-llama");
  v.apply(s);
  model::validate_model_spec(s);
  return s;
}

std::vector<int32_t> tokens(int64_t n, int32_t seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = (seed * 131 + static_cast<int32_t>(i) * 37) % 500;
  return t;
}

// Three prompts of first_len, first_len+1, first_len+2 tokens at cache rows 0, 16, 32.
Batch three_prompts(int64_t first_len, int32_t seed) {
  Batch b;
  for (int32_t s = 0; s < 3; ++s) {
    const auto toks = tokens(first_len + s, s + seed);
    b.add(toks.data(), static_cast<int64_t>(toks.size()), 16 * s, 0);
  }
  return b;
}

void expect_close(const float* a, const float* b, int64_t n, float atol, const std::string& what) {
  int shown = 0;
  float worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float d = std::fabs(a[i] - b[i]);
    worst = std::max(worst, d);
    if (d > atol + 1e-5f * std::fabs(b[i]) && shown++ < 5) ADD_FAILURE() << what << "[" << i << "]: " << a[i] << " vs " << b[i];
  }
  if (shown) ADD_FAILURE() << what << ": max abs error " << worst;
}

}  // namespace

class EngineVariants : public ::testing::TestWithParam<Variant> {};

TEST_P(EngineVariants, DecodeStepsEqualFullPrefill) {
  const model::ModelSpec spec = variant_spec(GetParam());
  auto w = HostWeights::load(spec, "");
  Engine eng(*w, {64, 8});
  const int64_t n = 10, split = 4, V = spec.vocab_size;
  const auto toks = tokens(n, 3);

  KvCache c1(spec, 32);
  Batch full;
  full.add(toks.data(), n, 0, 0);
  std::vector<float> all(static_cast<size_t>(n * V));
  Outputs o1;
  o1.all_logits = all.data();
  eng.forward(full, c1, o1);

  KvCache c2(spec, 32);
  Batch pre;
  pre.add(toks.data(), split, 5, 0);  // cache rows need not start at 0
  std::vector<float> logits(static_cast<size_t>(V));
  Outputs o2;
  o2.logits = logits.data();
  eng.forward(pre, c2, o2);
  expect_close(logits.data(), all.data() + (split - 1) * V, V, 1e-5f, "prefill last");
  for (int64_t i = split; i < n; ++i) {
    Batch step;
    step.add(&toks[static_cast<size_t>(i)], 1, 5, i);
    eng.forward(step, c2, o2);
    expect_close(logits.data(), all.data() + i * V, V, 1e-5f, "decode step " + std::to_string(i));
  }
}

TEST_P(EngineVariants, PackedEqualsOneAtATime) {
  const model::ModelSpec spec = variant_spec(GetParam());
  auto w = HostWeights::load(spec, "");
  Engine eng(*w, {64, 8});
  const int64_t V = spec.vocab_size, D = spec.num_layers + 1, H = spec.hidden_size;
  const int64_t lens[3] = {5, 9, 1};
  Batch packed;
  int64_t row = 0;
  std::vector<std::vector<int32_t>> toks;
  for (int s = 0; s < 3; ++s) {
    toks.push_back(tokens(lens[s], s + 1));
    packed.add(toks.back().data(), lens[s], row, 0);
    row += lens[s];
  }
  KvCache cache(spec, 32);
  std::vector<float> logits(static_cast<size_t>(3 * V)), res(static_cast<size_t>(3 * D * H));
  eng.forward(packed, cache, {logits.data(), res.data(), nullptr});
  for (int s = 0; s < 3; ++s) {
    Batch one;
    one.add(toks[static_cast<size_t>(s)].data(), lens[s], 0, 0);
    KvCache c(spec, 16);
    std::vector<float> l1(static_cast<size_t>(V)), r1(static_cast<size_t>(D * H));
    eng.forward(one, c, {l1.data(), r1.data(), nullptr});
    expect_close(logits.data() + s * V, l1.data(), V, 1e-5f, "logits seq " + std::to_string(s));
    expect_close(res.data() + s * D * H, r1.data(), D * H, 1e-5f, "residuals seq " + std::to_string(s));
  }
}

INSTANTIATE_TEST_SUITE_P(Families, EngineVariants, ::testing::ValuesIn(kVariants),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(Engine, CapturesFollowHiddenStatesMeaning) {
  const model::ModelSpec spec = model::synthetic_model_spec("tiny-llama");
  auto w = HostWeights::load(spec, "");
  Engine eng(*w, {32, 4});
  const int64_t V = spec.vocab_size, H = spec.hidden_size, L = spec.num_layers;
  const auto toks = tokens(6, 9);
  Batch b;
  b.add(toks.data(), 6, 0, 0);
  KvCache cache(spec, 8);
  std::vector<float> logits(static_cast<size_t>(V)), res(static_cast<size_t>((L + 1) * H));
  eng.forward(b, cache, {logits.data(), res.data(), nullptr});
  // Depth 0 is the embedding row of the last token.
  expect_close(res.data(), w->embedding() + toks.back() * H, H, 0.0f, "depth 0");
  const auto g = w->head();
  // Depth L is after the final norm: logits = lm_head · residual[L].
  std::vector<float> again(static_cast<size_t>(V));
  cpu::linear(res.data() + L * H, g.lm_head, nullptr, again.data(), 1, H, V);
  expect_close(again.data(), logits.data(), V, 1e-5f, "lm_head(residual L)");
}

TEST(Engine, GreedyIdsAreTheArgmaxOfTheLogits) {
  const model::ModelSpec spec = model::synthetic_model_spec("tiny-llama");
  auto w = HostWeights::load(spec, "");
  Engine eng(*w, {64, 4});
  const int64_t V = spec.vocab_size;
  const Batch b = three_prompts(4, 3);
  KvCache cache(spec, 48);
  std::vector<float> logits(static_cast<size_t>(3 * V));
  std::vector<int32_t> ids(3, -1), want(3, -2), alone(3, -3);
  Outputs out;
  out.logits = logits.data();
  out.next_ids = ids.data();
  eng.forward(b, cache, out);
  cpu::argmax(logits.data(), 3, V, want.data());
  EXPECT_EQ(ids, want);
  // Without the caller's logits (what generation asks for on most passes).
  KvCache fresh(spec, 48);
  Outputs only_ids;
  only_ids.next_ids = alone.data();
  eng.forward(b, fresh, only_ids);
  EXPECT_EQ(alone, want);
}

TEST(Engine, HostPassKlIsTheSweepsKlAgainstTheReferenceRows) {
  const model::ModelSpec spec = model::synthetic_model_spec("tiny-llama");
  auto w = HostWeights::load(spec, "");
  Engine eng(*w, {64, 4});
  const int64_t V = spec.vocab_size;
  const Batch b = three_prompts(5, 11);
  // The reference: log-probabilities of two other prompts' next tokens.
  std::vector<float> ref(static_cast<size_t>(2 * V));
  {
    Batch r;
    for (int32_t s = 0; s < 2; ++s) {
      const auto toks = tokens(4, s + 40);
      r.add(toks.data(), 4, 16 * s, 0);
    }
    KvCache c(spec, 48);
    std::vector<float> logits(static_cast<size_t>(2 * V));
    eng.forward(r, c, {logits.data(), nullptr, nullptr});
    cpu::log_softmax(logits.data(), ref.data(), 2, V);
  }
  KvCache cache(spec, 48);
  std::vector<float> logits(static_cast<size_t>(3 * V));
  eng.forward(b, cache, {logits.data(), nullptr, nullptr});
  const std::vector<int32_t> rows = {1, 0, 1};
  std::vector<double> kl(3, -1.0);
  KvCache cache2(spec, 48);
  engine::HostPass pass(eng, cache2, nullptr, {ref.data(), 2});
  Outputs out;
  out.kl_rows = rows.data();
  out.kl = kl.data();
  pass.forward(b, out);
  std::vector<float> scratch;
  for (size_t s = 0; s < 3; ++s) {
    const double want = engine::kl_from_logits(ref.data() + rows[s] * V, logits.data() + s * static_cast<size_t>(V), V, scratch);
    EXPECT_EQ(kl[s], want) << s;
    EXPECT_GT(kl[s], 0.0) << s;
  }
  // The reference against itself: zero up to rounding.
  std::vector<float> own(static_cast<size_t>(3 * V));
  cpu::log_softmax(logits.data(), own.data(), 3, V);
  EXPECT_NEAR(engine::kl_from_logits(own.data(), logits.data(), V, scratch), 0.0, 1e-6);
  // A row outside the reference is an error naming it.
  const std::vector<int32_t> bad = {0, 2, 0};
  out.kl_rows = bad.data();
  KvCache cache3(spec, 48);
  engine::HostPass pass3(eng, cache3, nullptr, {ref.data(), 2});
  EXPECT_THROW(pass3.forward(b, out), Error);
}

TEST(Engine, LimitsAreEnforced) {
  const model::ModelSpec spec = model::synthetic_model_spec("tiny-llama");
  auto w = HostWeights::load(spec, "");
  Engine eng(*w, {8, 2});
  const auto toks = tokens(9, 1);
  Batch b;
  b.add(toks.data(), 9, 0, 0);
  KvCache cache(spec, 16);
  EXPECT_THROW(eng.forward(b, cache, {}), Error);
  Batch c;
  c.add(toks.data(), 4, 14, 0);  // rows 14..17 of a 16-row cache
  EXPECT_THROW(eng.forward(c, cache, {}), Error);
  EXPECT_GT(eng.plan().total(), 0);
}

class Generation : public ::testing::Test {
 protected:
  model::ModelSpec spec = model::synthetic_model_spec("tiny-llama");
  std::unique_ptr<HostWeights> w = HostWeights::load(spec, "");
  text::Tokenizer tok = text::Tokenizer::from_json_text(text::synthetic_tokenizer_json(spec.vocab_size), "synthetic");
  std::vector<engine::GenerateRequest> reqs() {
    std::vector<engine::GenerateRequest> r(5);
    for (int i = 0; i < 5; ++i) r[static_cast<size_t>(i)].prompt = tokens(3 + 2 * i, i + 1);
    return r;
  }
};

TEST_F(Generation, MaxTokensEosAndPredicate) {
  Engine eng(*w, {64, 8});
  KvCache cache(spec, 256);
  engine::GenerateOptions opts;
  opts.max_new_tokens = 6;
  const auto base = engine::generate(eng, cache, tok, reqs(), opts);
  for (const auto& r : base) {
    EXPECT_EQ(r.ids.size(), 6u);
    EXPECT_EQ(r.reason, engine::StopReason::max_tokens);
    EXPECT_EQ(r.text, tok.decode(r.ids, true));
  }
  // EOS: the third token of sequence 0 becomes an EOS id; it stops there, without the EOS.
  opts.eos_ids = {base[0].ids[2]};
  const auto eos = engine::generate(eng, cache, tok, reqs(), opts);
  EXPECT_EQ(eos[0].reason, engine::StopReason::eos);
  EXPECT_EQ(eos[0].ids, std::vector<int32_t>(base[0].ids.begin(), base[0].ids.begin() + 2));
  // Predicate: stop as soon as the text has at least 2 tokens' worth.
  opts.eos_ids.clear();
  size_t calls = 0;
  opts.stop_when = [&](std::string_view) { return ++calls % 2 == 0; };
  const auto pred = engine::generate(eng, cache, tok, {reqs()[1]}, opts);
  EXPECT_EQ(pred[0].reason, engine::StopReason::predicate);
  EXPECT_EQ(pred[0].ids.size(), 2u);
}

TEST_F(Generation, WavesAndSmallPassesGiveTheSameTokens) {
  engine::GenerateOptions opts;
  opts.max_new_tokens = 5;
  opts.keep_first_logprobs = true;
  Engine big(*w, {128, 16});
  KvCache big_cache(spec, 512);
  const auto ref = engine::generate(big, big_cache, tok, reqs(), opts);
  // One sequence per pass, a cache that holds two requests at a time.
  Engine small(*w, {16, 1});
  KvCache small_cache(spec, 30);
  const auto got = engine::generate(small, small_cache, tok, reqs(), opts);
  // Two sequences per pass: prompts join while others decode, so passes mix both kinds.
  Engine two(*w, {16, 2});
  KvCache two_cache(spec, 64);
  const auto mixed = engine::generate(two, two_cache, tok, reqs(), opts);
  for (const auto* run : {&got, &mixed}) {
    for (size_t i = 0; i < ref.size(); ++i) {
      EXPECT_EQ((*run)[i].ids, ref[i].ids) << i;
      ASSERT_EQ((*run)[i].first_logprobs.size(), static_cast<size_t>(spec.vocab_size));
      expect_close((*run)[i].first_logprobs.data(), ref[i].first_logprobs.data(), spec.vocab_size, 1e-5f, "logprobs");
    }
  }
}

TEST_F(Generation, OverlongPromptIsAnErrorNamingIt) {
  Engine eng(*w, {8, 4});
  KvCache cache(spec, 64);
  engine::GenerateOptions opts;
  opts.max_new_tokens = 4;
  auto r = reqs();  // prompt 3 has 9 tokens > 8 per pass
  try {
    engine::generate(eng, cache, tok, r, opts);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("prompt 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("8 tokens"), std::string::npos) << e.what();
  }
  Engine eng2(*w, {64, 4});
  KvCache tiny(spec, 10);  // prompt 2 (7 tokens) + 4 new > 10 rows
  EXPECT_THROW(engine::generate(eng2, tiny, tok, r, opts), Error);
}
