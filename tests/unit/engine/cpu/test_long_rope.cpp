// LongRoPE past original_max_position_embeddings (tests/fixtures/golden/phi3-longrope-long, where it
// is 32): which table each token rotates with, and generation that reruns a sequence whole when
// it crosses over — also when several cross on one step and the pass cannot hold them all.
// (That the results equal transformers' is the golden test's job: test_golden.cpp.)
#include <gtest/gtest.h>

#include "abl/core/error.h"
#include "abl/engine/batch.h"
#include "abl/engine/cpu/engine.h"
#include "abl/engine/cpu/forward_pass.h"
#include "abl/engine/cpu/weights.h"
#include "abl/io/json_file.h"
#include "abl/text/tokenizer.h"

using namespace abl;

namespace {

const std::string kDir = std::string(ABL_FIXTURE_DIR) + "/golden/phi3-longrope-long";

std::vector<int32_t> ids_of(const io::JsonValue& list) {
  std::vector<int32_t> out;
  for (int64_t id : list.as_int_list()) out.push_back(static_cast<int32_t>(id));
  return out;
}

class LongRope : public ::testing::Test {
 protected:
  std::unique_ptr<engine::HostWeights> w = engine::HostWeights::load(kDir);
  const model::ModelSpec& spec = w->spec();
  text::Tokenizer tok = text::Tokenizer::from_file(kDir + "/tokenizer.json");
  io::JsonValue golden = io::read_json_file(kDir + "/golden.json");

  // The golden prompts that cross over while decoding (shorter than 33 tokens), in order.
  std::vector<size_t> crossing() {
    std::vector<size_t> out;
    const io::JsonValue prompts = golden.at("prompts");
    for (size_t p = 0; p < prompts.size(); ++p) {
      if (static_cast<int64_t>(prompts.at(p).at("input_ids").size()) <= spec.long_rope_after()) out.push_back(p);
    }
    return out;
  }
};

}  // namespace

TEST_F(LongRope, TableRowPerSequenceFromItsLastPosition) {
  ASSERT_EQ(spec.long_rope_after(), 32);
  const std::vector<int32_t> toks(40, 7);
  engine::Batch b;
  b.add(toks.data(), 32, 0, 0);    // positions 0..31: 32 tokens, short
  b.add(toks.data(), 33, 100, 0);  // 0..32: 33 tokens, long for every one of them
  b.add(toks.data(), 1, 200, 31);  // decode at position 31: short
  b.add(toks.data(), 1, 300, 32);  // decode at position 32: long
  const std::vector<int32_t> table = engine::rope_tables(spec, b);
  ASSERT_EQ(table.size(), static_cast<size_t>(b.num_tokens()));
  for (int64_t s = 0; s < b.num_seqs(); ++s) {
    const auto& q = b.seqs[static_cast<size_t>(s)];
    for (int64_t t = q.q_begin; t < q.q_begin + q.q_len; ++t) {
      EXPECT_EQ(table[static_cast<size_t>(t)], s % 2) << "sequence " << s << ", token " << t;
    }
  }
  EXPECT_TRUE(engine::rope_tables(model::synthetic_model_spec("tiny-llama"), b).empty());
}

// Each crossing prompt twice, so that two sequences cross over on the same step: two reruns of 33
// tokens and a pass of 40 — they take turns (one waits a pass), and every sequence still gets the
// golden tokens; the same with room for all.
TEST_F(LongRope, RerunsThatDoNotFitOnePassTakeTurns) {
  std::vector<size_t> ps;
  for (size_t p : crossing()) ps.insert(ps.end(), {p, p});
  ASSERT_GE(ps.size(), 6u);
  std::vector<engine::GenerateRequest> reqs;
  for (size_t p : ps) reqs.push_back({ids_of(golden.at("prompts").at(p).at("input_ids")), -1});
  engine::GenerateOptions opts;
  opts.max_new_tokens = golden.get_int("max_new_tokens");
  for (const engine::Limits lim : {engine::Limits{40, 8}, engine::Limits{512, 8}}) {
    engine::Engine eng(*w, lim);
    engine::KvCache cache(spec, 512);
    const auto results = engine::generate(eng, cache, tok, reqs, opts);
    for (size_t i = 0; i < ps.size(); ++i) {
      EXPECT_EQ(results[i].ids, ids_of(golden.at("prompts").at(ps[i]).at("greedy_ids")))
          << "prompt " << ps[i] << " with " << lim.max_tokens << " tokens per pass";
    }
  }
}

TEST_F(LongRope, ARerunLargerThanAPassIsAnErrorNamingIt) {
  const size_t p = crossing().at(0);
  const std::vector<engine::GenerateRequest> reqs = {{ids_of(golden.at("prompts").at(p).at("input_ids")), -1}};
  engine::Engine eng(*w, {32, 4});  // the prompt fits; its rerun of 33 tokens would not
  engine::KvCache cache(spec, 128);
  engine::GenerateOptions opts;
  opts.max_new_tokens = 16;
  try {
    engine::generate(eng, cache, tok, reqs, opts);
    FAIL() << "no error";
  } catch (const Error& e) {
    for (const char* part : {"prompt 0", "LongRoPE", "33 tokens", "32 tokens"}) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << part << " in: " << e.what();
    }
  }
  opts.max_new_tokens = 2;  // never grows past 32 tokens: no rerun, no error
  EXPECT_EQ(engine::generate(eng, cache, tok, reqs, opts).at(0).ids.size(), 2u);
}
