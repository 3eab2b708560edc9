#include "abl/engine/batch.h"

#include <algorithm>

namespace abl::engine {

void Batch::add(const int32_t* toks, int64_t n, int64_t kv_begin, int64_t cached, int32_t trial_id,
                int64_t state_slot) {
  cpu::AttnSeq s;
  s.q_begin = num_tokens();
  s.q_len = n;
  s.kv_begin = kv_begin;
  s.kv_len = cached + n;
  const int64_t seq = num_seqs();
  for (int64_t i = 0; i < n; ++i) {
    tokens.push_back(toks[i]);
    positions.push_back(cached + i);
    cache_rows.push_back(kv_begin + cached + i);
    row_seq.push_back(seq);
  }
  seqs.push_back(s);
  trial.push_back(trial_id);
  state_slots.push_back(state_slot >= 0 ? state_slot : seq);
}

std::vector<int32_t> rope_tables(const model::ModelSpec& spec, const Batch& batch) {
  const int64_t after = spec.long_rope_after();
  if (after <= 0) return {};
  std::vector<int32_t> table(batch.tokens.size(), 0);
  for (int64_t s = 0; s < batch.num_seqs(); ++s) {
    const cpu::AttnSeq& q = batch.seqs[static_cast<size_t>(s)];
    if (batch.positions[static_cast<size_t>(batch.last_row(s))] < after) continue;
    std::fill(table.begin() + q.q_begin, table.begin() + q.q_begin + q.q_len, 1);
  }
  return table;
}

}  // namespace abl::engine
