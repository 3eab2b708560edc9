// Wave scheduling for greedy generation. A wave is the longest run of requests whose cache rows
// (prompt + max_new_tokens each) and count fit; its prompts are prefilled in packed passes of at
// most Limits::max_tokens, then decoded in passes of at most Limits::max_seqs sequences.
#include "abl/engine/generate.h"

#include <algorithm>

#include "abl/backend/ops.h"
#include "abl/core/error.h"
#include "abl/text/incremental_decoder.h"

namespace abl::engine {

std::string_view stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::eos: return "eos";
    case StopReason::max_tokens: return "max_tokens";
    case StopReason::predicate: return "predicate";
  }
  return "?";
}

namespace {

struct Live {
  size_t request = 0;
  int64_t kv_begin = 0;
  int64_t cached = 0;      // tokens in the cache
  int32_t next = 0;        // token to feed next
  bool done = false;
  text::IncrementalDecoder decoder;
};

void check_fits(const std::vector<GenerateRequest>& reqs, const Engine& engine, const KvCache& cache,
                int64_t max_new) {
  const int64_t max_pos = engine.spec().max_position_embeddings;
  for (size_t i = 0; i < reqs.size(); ++i) {
    const int64_t n = static_cast<int64_t>(reqs[i].prompt.size());
    ABL_CHECK(n > 0, "prompt {} is empty", i);
    ABL_CHECK(n <= engine.limits().max_tokens,
              "prompt {} has {} tokens, more than a forward pass holds ({} tokens; raise the batch-token limit)",
              i, n, engine.limits().max_tokens);
    ABL_CHECK(n + max_new <= cache.rows(),
              "prompt {} needs {} KV-cache rows ({} prompt + {} new tokens) but the cache has {}", i,
              n + max_new, n, max_new, cache.rows());
    ABL_CHECK(max_pos <= 0 || n + max_new <= max_pos,
              "prompt {} with {} tokens plus {} new tokens exceeds the model's {} positions", i, n,
              max_new, max_pos);
  }
}

// Feeds `live[idx]`'s pending tokens through the engine in passes within the limits and picks
// the next token of each from the last-position logits.
void run_passes(Engine& engine, KvCache& cache, const std::vector<GenerateRequest>& reqs,
                std::vector<Live>& live, const std::vector<size_t>& idx, bool prefill,
                std::vector<float>& logits, Epilogue* epilogue,
                const std::function<void(size_t live_index, const float* logits)>& on_logits) {
  const Limits& lim = engine.limits();
  const int64_t V = engine.spec().vocab_size;
  size_t pos = 0;
  while (pos < idx.size()) {
    Batch b;
    std::vector<size_t> members;
    while (pos < idx.size() && b.num_seqs() < lim.max_seqs) {
      Live& s = live[idx[pos]];
      const GenerateRequest& r = reqs[s.request];
      const int64_t n = prefill ? static_cast<int64_t>(r.prompt.size()) : 1;
      if (b.num_tokens() + n > lim.max_tokens) break;
      if (prefill) {
        b.add(r.prompt.data(), n, s.kv_begin, 0, r.trial);
      } else {
        b.add(&s.next, 1, s.kv_begin, s.cached, r.trial);
      }
      s.cached += n;
      members.push_back(idx[pos]);
      ++pos;
    }
    logits.resize(static_cast<size_t>(b.num_seqs() * V));
    Outputs out;
    out.logits = logits.data();
    engine.forward(b, cache, out, epilogue);
    for (size_t m = 0; m < members.size(); ++m) on_logits(members[m], logits.data() + m * V);
  }
}

}  // namespace

std::vector<GenerateResult> generate(Engine& engine, KvCache& cache, const text::Tokenizer& tok,
                                     const std::vector<GenerateRequest>& requests,
                                     const GenerateOptions& opts, Epilogue* epilogue) {
  check_fits(requests, engine, cache, opts.max_new_tokens);
  const int64_t V = engine.spec().vocab_size;
  std::vector<GenerateResult> results(requests.size());
  std::vector<float> logits;
  auto is_eos = [&](int32_t id) {
    return std::find(opts.eos_ids.begin(), opts.eos_ids.end(), static_cast<int64_t>(id)) != opts.eos_ids.end();
  };

  size_t start = 0;
  while (start < requests.size()) {
    // Form a wave.
    std::vector<Live> live;
    int64_t rows = 0;
    size_t end = start;
    while (end < requests.size()) {
      const int64_t need = static_cast<int64_t>(requests[end].prompt.size()) + opts.max_new_tokens;
      if (rows + need > cache.rows()) break;
      Live s{end, rows, 0, 0, false, text::IncrementalDecoder(tok)};
      live.push_back(std::move(s));
      rows += need;
      ++end;
    }
    // Accepts the token chosen for live[i]; returns false when the sequence stops.
    auto accept = [&](size_t i, const float* row) {
      Live& s = live[i];
      GenerateResult& res = results[s.request];
      if (opts.keep_first_logprobs && res.first_logprobs.empty()) {
        res.first_logprobs.resize(static_cast<size_t>(V));
        cpu::log_softmax(row, res.first_logprobs.data(), 1, V);
      }
      int32_t next = 0;
      cpu::argmax(row, 1, V, &next);
      if (is_eos(next)) {
        s.done = true;
        res.reason = StopReason::eos;
        return;
      }
      res.ids.push_back(next);
      s.decoder.push(next);
      s.next = next;
      if (opts.stop_when && opts.stop_when(s.decoder.text())) {
        s.done = true;
        res.reason = StopReason::predicate;
      } else if (static_cast<int64_t>(res.ids.size()) >= opts.max_new_tokens) {
        s.done = true;
        res.reason = StopReason::max_tokens;
      }
    };
    std::vector<size_t> active(live.size());
    for (size_t i = 0; i < live.size(); ++i) active[i] = i;
    if (opts.max_new_tokens > 0) {
      run_passes(engine, cache, requests, live, active, true, logits, epilogue, accept);
    } else {
      for (auto& s : live) s.done = true;
    }
    for (;;) {
      active.clear();
      for (size_t i = 0; i < live.size(); ++i) {
        if (!live[i].done) active.push_back(i);
      }
      if (active.empty()) break;
      run_passes(engine, cache, requests, live, active, false, logits, epilogue, accept);
    }
    for (auto& s : live) results[s.request].text = s.decoder.finish();
    start = end;
  }
  return results;
}

}  // namespace abl::engine
