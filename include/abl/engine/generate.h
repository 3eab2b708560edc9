// Greedy generation for many sequences at once: prompts are prefilled in packed passes, then
// every active sequence advances one token per decode pass until it stops — at an EOS id, at
// max_new_tokens, or when the caller's predicate accepts its decoded text (the refusal check).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "abl/engine/engine.h"
#include "abl/text/tokenizer.h"

namespace abl::engine {

struct GenerateRequest {
  std::vector<int32_t> prompt;  // token ids of the rendered prompt
  int32_t trial = -1;           // ablation trial, -1 = none
};

enum class StopReason { eos, max_tokens, predicate };
std::string_view stop_reason_name(StopReason r);

struct GenerateOptions {
  int64_t max_new_tokens = 100;
  std::vector<int64_t> eos_ids;
  // Called with a sequence's decoded response so far after each token; true stops it.
  std::function<bool(std::string_view text)> stop_when;
  // Keep the log-probabilities of the first generated position (B, V) — KL needs them.
  bool keep_first_logprobs = false;
};

struct GenerateResult {
  std::vector<int32_t> ids;  // generated ids, without the EOS that stopped it
  std::string text;          // decode(ids), special tokens skipped
  StopReason reason = StopReason::max_tokens;
  std::vector<float> first_logprobs;  // (V) when asked for
};

// Runs every request; requests are grouped into waves that fit the engine limits and the cache.
// A prompt that cannot fit (longer than the pass limit, the cache, or the model's positions) is
// an error naming its index and the limit.
std::vector<GenerateResult> generate(Engine& engine, KvCache& cache, const text::Tokenizer& tok,
                                     const std::vector<GenerateRequest>& requests,
                                     const GenerateOptions& opts, Epilogue* epilogue = nullptr);

}  // namespace abl::engine
