// Greedy generation for many sequences at once with continuous batching: every pass packs one
// decode token of each running sequence with the prompts of newly admitted ones, until each
// stops — at an EOS id, at max_new_tokens, or when the caller's predicate accepts its decoded
// text (the refusal check). A sequence holds prompt + max_new_tokens cache rows while it runs.
// LongRoPE models: a sequence that grows past original_max_position_embeddings is run again whole
// on that step (transformers' Phi-3 does the same); when several such reruns do not fit one pass,
// they take turns and the others wait a pass.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "abl/engine/batch.h"
#include "abl/engine/forward_pass.h"
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
  // Ranks that share weight gathers must run the same number of passes: called before each pass
  // with whether this rank still has work; the pass runs (possibly empty) while it returns true.
  // Default: this rank's own answer.
  std::function<bool(bool local_work)> any_work;
  // Called after each pass with the number of requests finished so far and the tokens generated
  // so far (progress reports).
  std::function<void(size_t finished, int64_t generated)> on_progress;
};

struct GenerateResult {
  std::vector<int32_t> ids;  // generated ids, without the EOS that stopped it
  std::string text;          // decode(ids), special tokens skipped
  StopReason reason = StopReason::max_tokens;
  std::vector<float> first_logprobs;  // (V) when asked for
};

// Runs every request (in order of admission: request order). A prompt that cannot fit (longer
// than the pass limit, the cache, or the model's positions) is an error naming its index and the
// limit, raised before any pass runs.
std::vector<GenerateResult> generate(ForwardPass& pass, const text::Tokenizer& tok,
                                     const std::vector<GenerateRequest>& requests, const GenerateOptions& opts);
}  // namespace abl::engine
