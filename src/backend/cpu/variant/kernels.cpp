// The hot CPU kernels (abl::cpu::Kernels, isa.h), compiled once per instruction-set variant:
// CMakeLists.txt builds this file with each variant's -march and -DABL_CPU_VARIANT=<name>.
//
// Everything compiled here must stay private to its variant. Inline and template functions are
// emitted into every object that uses them and the linker keeps one copy of each; if an AVX-512
// copy of, say, an Eigen template were the one kept, every variant would run it and the baseline
// path would die with SIGILL on an older CPU. So Eigen is renamed per variant (namespace
// abl_eigen_<name>), our code lives in abl::cpu::isa_<name>, and no other header whose inline
// functions this code uses is included. tests/isa/check_isa_code.sh checks the objects and binary.
#ifndef ABL_CPU_VARIANT
#error "built by CMakeLists.txt once per variant, with -DABL_CPU_VARIANT=<name>"
#endif

#define ABL_CAT2(a, b) a##b
#define ABL_CAT(a, b) ABL_CAT2(a, b)
#define Eigen ABL_CAT(abl_eigen_, ABL_CPU_VARIANT)
#include <Eigen/Core>

#include <cmath>

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

// The loops of attention.cpp's op; the scratch rows come from new[] (no std::vector: its
// instantiations would be shared with the rest of the program).
void attention(const float* q, const float* k_cache, const float* v_cache, float* out, const AttnSeq* seqs,
               const AttnRow* rows, int64_t n_rows, int64_t max_keys, int64_t NH, int64_t NKV, int64_t HD,
               int64_t HDv, int64_t window, float scale, float cap, const float* sinks, bool parallel) {
  const int64_t group = NH / NKV;
  const int64_t kv_dim = NKV * HD, v_dim = NKV * HDv;
#pragma omp parallel if (parallel)
  {
    float* scores = new float[static_cast<size_t>(max_keys)];
    double* acc = new double[static_cast<size_t>(HDv)];
#pragma omp for schedule(dynamic, 4)
    for (int64_t r = 0; r < n_rows; ++r) {
      const AttnSeq& sq = seqs[rows[r].seq];
      const int64_t j = rows[r].j;
      const int64_t pos = sq.kv_len - sq.q_len + j;  // position of this query
      const int64_t first = window > 0 && pos - window + 1 > 0 ? pos - window + 1 : 0;
      const int64_t n_keys = pos - first + 1;
      for (int64_t h = 0; h < NH; ++h) {
        const float* qv = q + ((sq.q_begin + j) * NH + h) * HD;
        const int64_t kvh = h / group;
        float mx = -INFINITY;
        for (int64_t kk = 0; kk < n_keys; ++kk) {
          const float* kv = k_cache + (sq.kv_begin + first + kk) * kv_dim + kvh * HD;
          float dot = 0.0f;
          for (int64_t d = 0; d < HD; ++d) dot += qv[d] * kv[d];
          scores[kk] = cap > 0.0f ? cap * std::tanh(dot * scale / cap) : dot * scale;
          if (scores[kk] > mx) mx = scores[kk];
        }
        // A sink is one more logit in the max and the normaliser, with a zero value row.
        if (sinks && sinks[h] > mx) mx = sinks[h];
        double denom = sinks ? std::exp(static_cast<double>(sinks[h] - mx)) : 0.0;
        for (int64_t d = 0; d < HDv; ++d) acc[d] = 0.0;
        for (int64_t kk = 0; kk < n_keys; ++kk) {
          const double p = std::exp(static_cast<double>(scores[kk] - mx));
          denom += p;
          const float* vv = v_cache + (sq.kv_begin + first + kk) * v_dim + kvh * HDv;
          for (int64_t d = 0; d < HDv; ++d) acc[d] += p * vv[d];
        }
        float* o = out + ((sq.q_begin + j) * NH + h) * HDv;
        for (int64_t d = 0; d < HDv; ++d) o[d] = static_cast<float>(acc[d] / denom);
      }
    }
    delete[] scores;
    delete[] acc;
  }
}

}  // namespace

extern const Kernels kernels;
const Kernels kernels = {&linear, &attention};

}  // namespace abl::cpu::ABL_CAT(isa_, ABL_CPU_VARIANT)
