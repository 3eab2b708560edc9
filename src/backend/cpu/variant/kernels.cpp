// The hot CPU kernels (abl::cpu::Kernels, isa.h), compiled once per instruction-set variant:
// CMakeLists.txt builds this file with each variant's -march and -DABL_CPU_VARIANT=<name>.
//
// Everything compiled here must stay private to its variant. Inline and template functions are
// emitted into every object that uses them and the linker keeps one copy of each; if an AVX-512
// copy of, say, an Eigen template were the one kept, every variant would run it and the baseline
// path would die with SIGILL on an older CPU. So Eigen is renamed per variant (namespace
// abl_eigen_<name>), our code lives in abl::cpu::isa_<name>, and no other header whose inline
// functions this code uses is included. tests/isa/check_variant_objects.sh checks the objects.
#ifndef ABL_CPU_VARIANT
#error "built by CMakeLists.txt once per variant, with -DABL_CPU_VARIANT=<name>"
#endif

#define ABL_CAT2(a, b) a##b
#define ABL_CAT(a, b) ABL_CAT2(a, b)
#define Eigen ABL_CAT(abl_eigen_, ABL_CPU_VARIANT)
#include <Eigen/Core>

#include "abl/backend/cpu/isa.h"

namespace abl::cpu::ABL_CAT(isa_, ABL_CPU_VARIANT) {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void linear(const float* x, const float* w, const float* bias, float* y, int64_t T, int64_t in, int64_t out,
            int threads) {
  Eigen::Map<const RowMat> X(x, T, in);
  Eigen::Map<const RowMat> W(w, out, in);
  Eigen::Map<RowMat> Y(y, T, out);
  Eigen::setNbThreads(threads);
  Y.noalias() = X * W.transpose();
  if (bias) Y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias, out);
}

}  // namespace

extern const Kernels kernels;
const Kernels kernels = {&linear};

}  // namespace abl::cpu::ABL_CAT(isa_, ABL_CPU_VARIANT)
