// Fuzz target: config.json -> ModelSpec (parse_json, then parse_model_spec). An accepted config
// must satisfy what the engine relies on without checking again: positive sizes, heads divisible
// by kv heads, an even head_dim, products of dimensions that fit int64_t, token ids inside the
// vocabulary, finite positive RoPE and norm constants.
#include <cmath>

#include "abl/io/json_file.h"
#include "abl/model/model_spec.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  abl::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return abl::fuzz::run_input([&] {
    const abl::io::JsonValue config = abl::io::parse_json(abl::fuzz::as_text(data, size), "config.json");
    const abl::model::ModelSpec s = abl::model::parse_model_spec(config);
    const int64_t dims[] = {s.vocab_size, s.hidden_size, s.intermediate_size, s.num_layers,
                            s.num_heads,  s.num_kv_heads, s.head_dim, s.max_position_embeddings};
    for (int64_t d : dims) ABL_FUZZ_CHECK(d > 0 && d <= (int64_t{1} << 31), abl::model::describe(s));
    ABL_FUZZ_CHECK(s.num_heads % s.num_kv_heads == 0 && s.group_size() >= 1, abl::model::describe(s));
    ABL_FUZZ_CHECK(s.head_dim % 2 == 0 && s.q_dim() <= (int64_t{1} << 31), abl::model::describe(s));
    ABL_FUZZ_CHECK(s.rotary_dim() % 2 == 0 && s.rotary_dim() >= 2 && s.rotary_dim() <= s.head_dim,
                   abl::model::describe(s));
    ABL_FUZZ_CHECK(std::isfinite(s.rms_norm_eps) && s.rms_norm_eps > 0, abl::model::describe(s));
    ABL_FUZZ_CHECK(std::isfinite(s.rope_theta) && s.rope_theta > 0, abl::model::describe(s));
    if (s.rope_scaling.type == abl::model::RopeScaling::Type::llama3) {
      const abl::model::RopeScaling& r = s.rope_scaling;
      ABL_FUZZ_CHECK(std::isfinite(r.factor) && r.factor > 0 && r.low_freq_factor > 0 &&
                         std::isfinite(r.high_freq_factor) && r.high_freq_factor >= r.low_freq_factor &&
                         r.original_max_position_embeddings > 0,
                     abl::model::describe(s));
    }
    ABL_FUZZ_CHECK(s.sliding_window >= 0 && (s.sliding_layers.empty() ||
                                             static_cast<int64_t>(s.sliding_layers.size()) == s.num_layers),
                   abl::model::describe(s));
    if (s.rope_scaling.type == abl::model::RopeScaling::Type::longrope) {
      ABL_FUZZ_CHECK(static_cast<int64_t>(s.rope_scaling.short_factor.size()) == s.rotary_dim() / 2 &&
                         s.context_length() > 0,
                     abl::model::describe(s));
    }
    if (s.rope_scaling.type == abl::model::RopeScaling::Type::yarn) {
      const abl::model::RopeScaling& r = s.rope_scaling;
      ABL_FUZZ_CHECK(std::isfinite(r.factor) && r.factor > 0 && std::isfinite(r.beta_fast) && r.beta_slow > 0 &&
                         r.beta_fast > r.beta_slow && std::isfinite(r.attention_factor) && r.attention_factor > 0 &&
                         r.original_max_position_embeddings > 0 && s.rope_theta > 1,
                     abl::model::describe(s));
    }
    const auto in_vocab = [&](int64_t id) { return id >= 0 && id < s.vocab_size; };
    if (s.bos_token_id) ABL_FUZZ_CHECK(in_vocab(*s.bos_token_id), "bos");
    if (s.pad_token_id) ABL_FUZZ_CHECK(in_vocab(*s.pad_token_id), "pad");
    for (int64_t id : s.eos_token_ids) ABL_FUZZ_CHECK(in_vocab(id), "eos");
    ABL_FUZZ_CHECK(!s.architecture.empty(), "");
  });
}
