// Causal GQA attention over the KV cache, one (sequence, query, head) row at a time with an
// exact softmax (max-subtracted, fp32 scores, double accumulation of the normaliser). The same
// op serves prefill (q_len = kv_len) and decode (q_len = 1): only the positions differ. The loops
// are in the kernel variant chosen for this CPU (isa.h, variant/kernels.cpp).
#include <algorithm>
#include <cmath>
#include <vector>

#include "abl/backend/cpu/isa.h"
#include "abl/backend/cpu/ops.h"

namespace abl::cpu {

void attention(const float* q, const float* k_cache, const float* v_cache, float* out,
               const AttnSeq* seqs, int64_t B, int64_t NH, int64_t NKV, int64_t HD, int64_t window,
               AttnScores how, int64_t HDv) {
  const float scale = how.scale > 0.0f ? how.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(HD)));
  // Flatten (sequence, query) so threads share work across short and long sequences alike.
  std::vector<AttnRow> rows;
  int64_t work = 0, max_keys = 0;
  for (int64_t s = 0; s < B; ++s) {
    for (int64_t j = 0; j < seqs[s].q_len; ++j) rows.push_back({s, j});
    work += seqs[s].q_len * seqs[s].kv_len;
    max_keys = std::max(max_keys, window > 0 ? std::min(window, seqs[s].kv_len) : seqs[s].kv_len);
  }
  if (rows.empty()) return;
  // Threads only pay off beyond a few thousand query-key products; below, the fork costs more.
  kernels().attention(q, k_cache, v_cache, out, seqs, rows.data(), static_cast<int64_t>(rows.size()), max_keys, NH,
                      NKV, HD, HDv > 0 ? HDv : HD, window, scale, how.softcap, how.sinks, work * NH * HD > 262144);
}

}  // namespace abl::cpu
