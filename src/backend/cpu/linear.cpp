// y = x Wᵀ (+ b) through Eigen's blocked GEMM, which is multithreaded with OpenMP.
#include <Eigen/Core>

#include "abl/backend/ops.h"

namespace abl::cpu {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void linear(const float* x, const float* w, const float* bias, float* y, int64_t T, int64_t in,
            int64_t out) {
  if (T == 0) return;
  Eigen::Map<const RowMat> X(x, T, in);
  Eigen::Map<const RowMat> W(w, out, in);
  Eigen::Map<RowMat> Y(y, T, out);
  Y.noalias() = X * W.transpose();
  if (bias) Y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias, out);
}

}  // namespace abl::cpu
