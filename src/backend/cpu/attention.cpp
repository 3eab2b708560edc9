// Causal GQA attention over the KV cache, one (sequence, query, head) row at a time with an
// exact softmax (max-subtracted, fp32 scores, double accumulation of the normaliser). The same
// op serves prefill (q_len = kv_len) and decode (q_len = 1): only the positions differ.
#include <algorithm>
#include <cmath>
#include <vector>

#include "abl/backend/cpu/ops.h"

namespace abl::cpu {

void attention(const float* q, const float* k_cache, const float* v_cache, float* out,
               const AttnSeq* seqs, int64_t B, int64_t NH, int64_t NKV, int64_t HD, int64_t window,
               AttnScores how) {
  const int64_t group = NH / NKV;
  const int64_t kv_dim = NKV * HD;
  const float scale = how.scale > 0.0f ? how.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(HD)));
  const float cap = how.softcap;
  // Flatten (sequence, query) so threads share work across short and long sequences alike.
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (int64_t s = 0; s < B; ++s) {
    for (int64_t j = 0; j < seqs[s].q_len; ++j) rows.emplace_back(s, j);
  }
  const int64_t n_rows = static_cast<int64_t>(rows.size());
  // Threads only pay off beyond a few thousand query-key products; below, the fork costs more.
  int64_t work = 0;
  for (int64_t s = 0; s < B; ++s) work += seqs[s].q_len * seqs[s].kv_len;
#pragma omp parallel if (work * NH * HD > 262144)
  {
    std::vector<float> scores;
    std::vector<double> acc(HD);
#pragma omp for schedule(dynamic, 4)
    for (int64_t r = 0; r < n_rows; ++r) {
      const AttnSeq& sq = seqs[rows[r].first];
      const int64_t j = rows[r].second;
      const int64_t pos = sq.kv_len - sq.q_len + j;  // position of this query
      const int64_t first = window > 0 ? std::max<int64_t>(0, pos - window + 1) : 0;
      const int64_t n_keys = pos - first + 1;
      scores.resize(n_keys);
      for (int64_t h = 0; h < NH; ++h) {
        const float* qv = q + ((sq.q_begin + j) * NH + h) * HD;
        const int64_t kvh = h / group;
        float mx = -INFINITY;
        for (int64_t kk = 0; kk < n_keys; ++kk) {
          const float* kv = k_cache + (sq.kv_begin + first + kk) * kv_dim + kvh * HD;
          float dot = 0.0f;
          for (int64_t d = 0; d < HD; ++d) dot += qv[d] * kv[d];
          scores[kk] = cap > 0.0f ? cap * std::tanh(dot * scale / cap) : dot * scale;
          mx = std::max(mx, scores[kk]);
        }
        double denom = 0.0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t kk = 0; kk < n_keys; ++kk) {
          const double p = std::exp(static_cast<double>(scores[kk] - mx));
          denom += p;
          const float* vv = v_cache + (sq.kv_begin + first + kk) * kv_dim + kvh * HD;
          for (int64_t d = 0; d < HD; ++d) acc[d] += p * vv[d];
        }
        float* o = out + ((sq.q_begin + j) * NH + h) * HD;
        for (int64_t d = 0; d < HD; ++d) o[d] = static_cast<float>(acc[d] / denom);
      }
    }
  }
}

}  // namespace abl::cpu
