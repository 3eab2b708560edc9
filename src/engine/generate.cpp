// Continuous batching for greedy generation. Requests are admitted in order while their cache
// rows (prompt + max_new_tokens, first fit in a free list) and the pass limits allow; each pass
// carries one decode token per running sequence plus whole prompts of new ones, so short and
// long responses never wait for each other.
#include "abl/engine/generate.h"

#include <algorithm>
#include <map>

#include "abl/backend/cpu/ops.h"
#include "abl/core/error.h"
#include "abl/core/watchdog.h"
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

// First-fit allocation of contiguous KV-cache row ranges.
class RowAllocator {
 public:
  explicit RowAllocator(int64_t rows) { free_[0] = rows; }
  // Start row of a free range of n rows, or -1.
  int64_t take(int64_t n) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < n) continue;
      const int64_t start = it->first, len = it->second;
      free_.erase(it);
      if (len > n) free_[start + n] = len - n;
      return start;
    }
    return -1;
  }
  void give(int64_t start, int64_t n) {
    auto it = free_.emplace(start, n).first;
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }

 private:
  std::map<int64_t, int64_t> free_;  // start -> length
};

struct Running {
  size_t request;
  int64_t kv_begin;
  int64_t rows;
  int64_t cached = 0;
  int32_t next = 0;
  bool prefilled = false;
  text::IncrementalDecoder decoder;
};

void check_fits(const std::vector<GenerateRequest>& reqs, const ForwardPass& pass, int64_t max_new) {
  const int64_t max_pos = pass.spec().context_length();
  for (size_t i = 0; i < reqs.size(); ++i) {
    const int64_t n = static_cast<int64_t>(reqs[i].prompt.size());
    ABL_CHECK(n > 0, "prompt {} is empty", i);
    ABL_CHECK(n <= pass.limits().max_tokens,
              "prompt {} has {} tokens, more than a forward pass holds ({} tokens; raise the batch-token limit)",
              i, n, pass.limits().max_tokens);
    ABL_CHECK(n + max_new <= pass.cache_rows(),
              "prompt {} needs {} KV-cache rows ({} prompt + {} new tokens) but the cache has {}", i,
              n + max_new, n, max_new, pass.cache_rows());
    ABL_CHECK(max_pos <= 0 || n + max_new <= max_pos,
              "prompt {} with {} tokens plus {} new tokens exceeds the model's {} positions", i, n,
              max_new, max_pos);
  }
}

}  // namespace

std::vector<GenerateResult> generate(ForwardPass& pass, const text::Tokenizer& tok,
                                     const std::vector<GenerateRequest>& requests, const GenerateOptions& opts) {
  check_fits(requests, pass, opts.max_new_tokens);
  const int64_t V = pass.spec().vocab_size;
  const Limits& lim = pass.limits();
  std::vector<GenerateResult> results(requests.size());
  auto is_eos = [&](int32_t id) {
    return std::find(opts.eos_ids.begin(), opts.eos_ids.end(), static_cast<int64_t>(id)) != opts.eos_ids.end();
  };
  RowAllocator rows(pass.cache_rows());
  std::vector<Running> running;
  size_t finished = 0;     // requests done (progress)
  int64_t generated = 0;   // next-token picks so far (progress)
  size_t next_request = opts.max_new_tokens > 0 ? 0 : requests.size();
  std::vector<float> logits;  // (B, V) on passes that start a sequence whose log-probs are kept
  std::vector<int32_t> next_ids;

  for (;;) {
    // Admit new sequences while rows and the pass limits allow.
    int64_t tokens = 0;
    for (const Running& r : running) tokens += r.prefilled ? 1 : static_cast<int64_t>(requests[r.request].prompt.size());
    while (next_request < requests.size() && static_cast<int64_t>(running.size()) < lim.max_seqs) {
      const int64_t n = static_cast<int64_t>(requests[next_request].prompt.size());
      if (tokens + n > lim.max_tokens) break;
      const int64_t start = rows.take(n + opts.max_new_tokens);
      if (start < 0) break;
      running.push_back(Running{next_request, start, n + opts.max_new_tokens, 0, 0, false, text::IncrementalDecoder(tok)});
      tokens += n;
      ++next_request;
    }
    const bool local_work = !running.empty();
    if (!(opts.any_work ? opts.any_work(local_work) : local_work)) break;

    Batch b;
    for (Running& r : running) {
      const GenerateRequest& q = requests[r.request];
      if (r.prefilled) {
        b.add(&r.next, 1, r.kv_begin, r.cached, q.trial);
        r.cached += 1;
      } else {
        b.add(q.prompt.data(), static_cast<int64_t>(q.prompt.size()), r.kv_begin, 0, q.trial);
        r.cached = static_cast<int64_t>(q.prompt.size());
        r.prefilled = true;
      }
    }
    // Only the greedy ids come back on most passes (B ints, not B·V floats from a GPU).
    bool want_logits = false;
    for (const Running& r : running) want_logits |= opts.keep_first_logprobs && results[r.request].first_logprobs.empty();
    next_ids.resize(static_cast<size_t>(std::max<int64_t>(b.num_seqs(), 1)));
    Outputs out;
    out.next_ids = next_ids.data();
    if (want_logits) {
      logits.resize(static_cast<size_t>(std::max<int64_t>(b.num_seqs(), 1) * V));
      out.logits = logits.data();
    }
    watchdog::mark("forward pass (generation)");
    pass.forward(b, out);

    // Pick each sequence's next token; retire the ones that stop.
    const auto before = static_cast<int64_t>(running.size());
    generated += before;
    std::vector<Running> still;
    for (size_t i = 0; i < running.size(); ++i) {
      Running& r = running[i];
      GenerateResult& res = results[r.request];
      if (opts.keep_first_logprobs && res.first_logprobs.empty()) {
        res.first_logprobs.resize(static_cast<size_t>(V));
        cpu::log_softmax(logits.data() + i * static_cast<size_t>(V), res.first_logprobs.data(), 1, V);
      }
      const int32_t next = next_ids[i];
      bool done = false;
      if (is_eos(next)) {
        done = true;
        res.reason = StopReason::eos;
      } else {
        res.ids.push_back(next);
        r.decoder.push(next);
        r.next = next;
        if (opts.stop_when && opts.stop_when(r.decoder.text())) {
          done = true;
          res.reason = StopReason::predicate;
        } else if (static_cast<int64_t>(res.ids.size()) >= opts.max_new_tokens) {
          done = true;
          res.reason = StopReason::max_tokens;
        }
      }
      if (done) {
        res.text = r.decoder.finish();
        rows.give(r.kv_begin, r.rows);
      } else {
        still.push_back(std::move(r));
      }
    }
    running = std::move(still);
    if (opts.on_progress) {
      finished += static_cast<size_t>(before - static_cast<int64_t>(running.size()));
      opts.on_progress(finished, generated);
    }
  }
  return results;
}

}  // namespace abl::engine
