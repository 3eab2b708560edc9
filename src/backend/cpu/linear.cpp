// y = x Wᵀ (+ b) through Eigen's blocked GEMM, multithreaded with OpenMP for large products only:
// below a few million multiply-adds the thread hand-off costs more than it saves, badly so on a
// busy node.
#include <Eigen/Core>

#include "abl/backend/cpu/ops.h"

namespace abl::cpu {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void linear(const float* x, const float* w, const float* bias, float* y, int64_t T, int64_t in,
            int64_t out) {
  if (T == 0) return;
  Eigen::Map<const RowMat> X(x, T, in);
  Eigen::Map<const RowMat> W(w, out, in);
  Eigen::Map<RowMat> Y(y, T, out);
  const int threads = Eigen::nbThreads();
  const bool small = T * in * out < (int64_t{1} << 22);
  if (small) Eigen::setNbThreads(1);
  Y.noalias() = X * W.transpose();
  if (small) Eigen::setNbThreads(threads);
  if (bias) Y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias, out);
}

}  // namespace abl::cpu
