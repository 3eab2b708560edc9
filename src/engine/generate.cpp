// Continuous batching for greedy generation. Requests are admitted in order while their cache
// rows (prompt + max_new_tokens, first fit in a free list) and the pass limits allow; each pass
// carries one decode token per running sequence plus whole prompts of new ones, so short and
// long responses never wait for each other. A LongRoPE sequence that grows past
// original_max_position_embeddings tokens is run again whole on that step, with the long factors
// (see Running::reruns).
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
  int64_t state_slot;  // its recurrent state (hybrid models), one of [0, max_seqs) while it runs
  int64_t cached = 0;
  int32_t next = 0;
  bool prefilled = false;
  text::IncrementalDecoder decoder;

  // Whether this step crosses LongRoPE's switch (`after` = spec.long_rope_after(), 0 for other
  // ropes): the sequence grows to after + 1 tokens, so all of them now rotate with the long
  // factors while its cache holds the short ones. It is run again whole, prompt and response
  // (Phi3ForCausalLM.prepare_inputs_for_generation drops the cache on exactly this step).
  bool reruns(int64_t after) const { return after > 0 && prefilled && cached == after; }
  // Tokens of this sequence in the next pass.
  int64_t step_tokens(int64_t after, int64_t prompt_tokens) const {
    return !prefilled ? prompt_tokens : reruns(after) ? cached + 1 : 1;
  }
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
    // Decode steps feed positions n .. n + max_new - 2; feeding position `after` reruns the whole
    // sequence (Running::reruns), after + 1 tokens in one pass.
    const int64_t after = pass.spec().long_rope_after();
    ABL_CHECK(after <= 0 || !(n <= after && after <= n + max_new - 2) || after + 1 <= pass.limits().max_tokens,
              "prompt {} with {} tokens plus {} new tokens grows past the {} tokens after which LongRoPE "
              "switches to its long factors; the whole sequence ({} tokens) is then run again in one pass, "
              "more than a pass holds ({} tokens; raise the batch-token limit)",
              i, n, max_new, after, after + 1, pass.limits().max_tokens);
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
  std::vector<int64_t> free_slots;  // state slots not held by a running sequence (at most max_seqs run)
  for (int64_t s = lim.max_seqs; s-- > 0;) free_slots.push_back(s);
  std::vector<Running> running;
  size_t finished = 0;     // requests done (progress)
  int64_t generated = 0;   // next-token picks so far (progress)
  size_t next_request = opts.max_new_tokens > 0 ? 0 : requests.size();
  std::vector<float> logits;  // (B, V) on passes that start a sequence whose log-probs are kept
  std::vector<int32_t> next_ids;

  const int64_t after = pass.spec().long_rope_after();
  auto step_tokens = [&](const Running& r) {
    return r.step_tokens(after, static_cast<int64_t>(requests[r.request].prompt.size()));
  };

  for (;;) {
    // Admit new sequences while rows and the pass limits allow.
    int64_t tokens = 0;
    for (const Running& r : running) tokens += step_tokens(r);
    while (next_request < requests.size() && static_cast<int64_t>(running.size()) < lim.max_seqs) {
      const int64_t n = static_cast<int64_t>(requests[next_request].prompt.size());
      if (tokens + n > lim.max_tokens) break;
      const int64_t start = rows.take(n + opts.max_new_tokens);
      if (start < 0) break;
      running.push_back(Running{next_request, start, n + opts.max_new_tokens, free_slots.back(), 0, 0, false,
                                text::IncrementalDecoder(tok)});
      free_slots.pop_back();
      tokens += n;
      ++next_request;
    }
    const bool local_work = !running.empty();
    if (!(opts.any_work ? opts.any_work(local_work) : local_work)) break;

    // The pass: whole reruns first (each fits a pass alone, check_fits), then prompts and decode
    // steps. Only several reruns on one step can overflow the pass; a sequence left out waits.
    Batch b;
    std::vector<int64_t> slot(running.size(), -1);  // each running sequence's index in the pass
    int64_t room = lim.max_tokens;
    for (const bool whole : {true, false}) {
      for (size_t i = 0; i < running.size(); ++i) {
        Running& r = running[i];
        const int64_t n = step_tokens(r);
        if (slot[i] >= 0 || r.reruns(after) != whole || n > room) continue;
        const GenerateRequest& q = requests[r.request];
        slot[i] = b.num_seqs();
        room -= n;
        if (whole) {
          std::vector<int32_t> seq = q.prompt;
          const std::vector<int32_t>& ids = results[r.request].ids;  // ends with r.next
          seq.insert(seq.end(), ids.begin(), ids.end());
          b.add(seq.data(), n, r.kv_begin, 0, q.trial, r.state_slot);
        } else if (r.prefilled) {
          b.add(&r.next, 1, r.kv_begin, r.cached, q.trial, r.state_slot);
        } else {
          b.add(q.prompt.data(), n, r.kv_begin, 0, q.trial, r.state_slot);
        }
        r.cached = whole || !r.prefilled ? n : r.cached + 1;
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
    generated += b.num_seqs();
    std::vector<Running> still;
    for (size_t i = 0; i < running.size(); ++i) {
      Running& r = running[i];
      if (slot[i] < 0) {  // waits for the next pass
        still.push_back(std::move(r));
        continue;
      }
      const auto j = static_cast<size_t>(slot[i]);
      GenerateResult& res = results[r.request];
      if (opts.keep_first_logprobs && res.first_logprobs.empty()) {
        res.first_logprobs.resize(static_cast<size_t>(V));
        cpu::log_softmax(logits.data() + j * static_cast<size_t>(V), res.first_logprobs.data(), 1, V);
      }
      const int32_t next = next_ids[j];
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
        free_slots.push_back(r.state_slot);
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
