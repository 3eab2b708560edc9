// y = x Wᵀ (+ b) through Eigen's blocked GEMM in the kernel variant chosen for this CPU (isa.h),
// multithreaded with OpenMP for large products only: below a few million multiply-adds the thread
// hand-off costs more than it saves, badly so on a busy node.
#include "abl/backend/cpu/isa.h"
#include "abl/backend/cpu/ops.h"

namespace abl::cpu {

void linear(const float* x, const float* w, const float* bias, float* y, int64_t T, int64_t in,
            int64_t out) {
  if (T == 0) return;
  const bool small = T * in * out < (int64_t{1} << 22);
  kernels().linear(x, w, bias, y, T, in, out, small ? 1 : num_threads());
}

}  // namespace abl::cpu
