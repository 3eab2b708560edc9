// Rotary embedding in the rotate-half layout of Hugging Face: pairs are (i, i + R/2), so q/k
// weights need no permutation; R = HD, or the rotary dims of a partial rotary model (Phi-4-mini,
// GLM), whose other dims pass unchanged. GLM pairs adjacent dims (2i, 2i + 1) instead (its
// rotate_half interleaves), each pair still turning with frequency i. The angle is rounded to
// fp32 first, as torch computes position * inv_freq in fp32, and then cos/sin are taken of that
// fp32 angle.
#include <cmath>

#include "abl/backend/cpu/ops.h"

namespace abl::cpu {

void rope(float* x, const int64_t* positions, int64_t T, int64_t heads, int64_t HD, const float* inv_freq,
          float attention_factor, const int32_t* table, int64_t rotary_dim, bool interleaved) {
  const int64_t half = (rotary_dim > 0 ? rotary_dim : HD) / 2;
  // pair i: dims (a, b) = (i, i + half), or (2i, 2i + 1) interleaved
  const int64_t a_step = interleaved ? 2 : 1, b_offset = interleaved ? 1 : half;
#pragma omp parallel for schedule(static) if (T * heads * HD > 65536)
  for (int64_t t = 0; t < T; ++t) {
    const float pos = static_cast<float>(positions[t]);
    const float* freq = inv_freq + (table ? table[t] : 0) * half;
    for (int64_t i = 0; i < half; ++i) {
      const float angle = pos * freq[i];
      const float c = static_cast<float>(std::cos(static_cast<double>(angle))) * attention_factor;
      const float s = static_cast<float>(std::sin(static_cast<double>(angle))) * attention_factor;
      for (int64_t h = 0; h < heads; ++h) {
        float* xh = x + (t * heads + h) * HD;
        float* pa = xh + i * a_step;
        float* pb = pa + b_offset;
        const float x1 = *pa, x2 = *pb;
        *pa = x1 * c - x2 * s;
        *pb = x2 * c + x1 * s;
      }
    }
  }
}

}  // namespace abl::cpu
