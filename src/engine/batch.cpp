#include "abl/engine/batch.h"

#include "abl/core/error.h"

namespace abl::engine {

void Batch::add(const int32_t* toks, int64_t n, int64_t kv_begin, int64_t cached, int32_t trial_id) {
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
}

void check_positions(const model::ModelSpec& spec, const Batch& batch) {
  if (spec.rope_scaling.type != model::RopeScaling::Type::longrope) return;
  const int64_t limit = spec.context_length();
  for (int64_t p : batch.positions) {
    ABL_CHECK(p < limit,
              "position {} is beyond the {} positions {} runs faithfully (original_max_position_embeddings "
              "of its LongRoPE scaling; longer sequences would need the long factors)",
              p, limit, spec.source);
  }
}

}  // namespace abl::engine
