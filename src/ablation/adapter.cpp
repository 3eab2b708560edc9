// Adapter factors of the weight ablation (adapter.h), their application as PEFT does it and the
// error against the merged ablation.
#include "abl/ablation/adapter.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <Eigen/Dense>

#include "abl/ablation/export.h"
#include "abl/core/error.h"

namespace abl::ablation {
namespace {

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<double> row_norms(const float* w, int64_t out, int64_t in) {
  std::vector<double> n(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < in; ++j) ss += static_cast<double>(w[i * in + j]) * w[i * in + j];
    n[static_cast<size_t>(i)] = std::sqrt(ss);
  }
  return n;
}

// Deterministic standard normals (splitmix64 + Box-Muller): the SVD's starting subspace.
class Gaussian {
 public:
  explicit Gaussian(uint64_t seed) : s_(seed) {}
  double next() {
    const double u1 = (static_cast<double>(bits() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = static_cast<double>(bits() >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t bits() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t s_;
};

// An orthonormal basis of the columns of y (thin Householder QR).
MatD orth(const MatD& y) {
  Eigen::HouseholderQR<MatD> qr(y);
  return qr.householderQ() * MatD::Identity(y.rows(), y.cols());
}

// Rank-r truncated SVD of d (out, in) as B = U_r S_r (out, r), A = V_rᵀ (r, in): randomized
// subspace iteration (Halko, Martinsson, Tropp 2011, alg. 4.4) with 8 extra columns, 6 power
// iterations and a fixed seed.
void truncated_svd(const MatD& d, int64_t r, AdapterFactors& f) {
  // Eigen's products choose their blocking, hence their summation order, by thread count: one
  // thread makes the factors the same bits whatever OMP_NUM_THREADS says.
  struct OneEigenThread {
    int saved = Eigen::nbThreads();
    OneEigenThread() { Eigen::setNbThreads(1); }
    ~OneEigenThread() { Eigen::setNbThreads(saved); }
  } one_thread;
  const int64_t m = d.rows(), n = d.cols();
  const int64_t k = std::min<int64_t>(std::min(m, n), r + 8);
  Gaussian g(0x5EEDu);
  MatD omega(n, k);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) omega(i, j) = g.next();
  }
  MatD q = orth(d * omega);
  for (int it = 0; it < 6; ++it) {
    const MatD z = orth(d.transpose() * q);
    q = orth(d * z);
  }
  const MatD small = q.transpose() * d;  // (k, n)
  Eigen::JacobiSVD<MatD> svd(small, Eigen::ComputeThinU | Eigen::ComputeThinV);
  const MatD u = q * svd.matrixU();  // (m, k)
  const int64_t keep = std::min(r, k);
  for (int64_t c = 0; c < keep; ++c) {
    const double s = svd.singularValues()(c);
    for (int64_t i = 0; i < m; ++i) f.b[static_cast<size_t>(i * r + c)] = static_cast<float>(u(i, c) * s);
    for (int64_t j = 0; j < n; ++j) f.a[static_cast<size_t>(c * n + j)] = static_cast<float>(svd.matrixV()(j, c));
  }
}

}  // namespace

AdapterFactors adapter_factors(const float* w, int64_t out, int64_t in, const float* v, float lambda,
                               engine::RowNorm mode, int64_t approx_rank) {
  ABL_CHECK(approx_rank >= 0, "adapter rank must be non-negative, got {}", approx_rank);
  AdapterFactors f;
  f.out = out;
  f.in = in;
  if (mode == engine::RowNorm::full && approx_rank > 0) {
    // Plain LoRA of the full-mode delta: approximate.
    std::vector<float> ablated(w, w + out * in);
    ablate_weight(ablated.data(), out, in, v, lambda, mode);
    MatD d(out, in);
    for (int64_t i = 0; i < out * in; ++i) d.data()[i] = static_cast<double>(ablated[static_cast<size_t>(i)]) - w[i];
    f.rank = approx_rank;
    f.a.assign(static_cast<size_t>(approx_rank * in), 0.0f);
    f.b.assign(static_cast<size_t>(out * approx_rank), 0.0f);
    truncated_svd(d, approx_rank, f);
    return f;
  }
  // Rank 1: B = −λ v (none) or −λ (n⊙v) (pre, full); A = vᵀW (none) or vᵀŴ (pre, full), as
  // ablate_weight computes them.
  const std::vector<double> n = row_norms(w, out, in);
  std::vector<double> u(static_cast<size_t>(in), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    const double ni = n[static_cast<size_t>(i)];
    const double scale = mode == engine::RowNorm::none ? 1.0 : (ni > 0 ? 1.0 / ni : 0.0);
    for (int64_t j = 0; j < in; ++j) u[static_cast<size_t>(j)] += v[i] * scale * w[i * in + j];
  }
  f.rank = 1;
  f.a.resize(static_cast<size_t>(in));
  f.b.resize(static_cast<size_t>(out));
  for (int64_t j = 0; j < in; ++j) f.a[static_cast<size_t>(j)] = static_cast<float>(u[static_cast<size_t>(j)]);
  for (int64_t i = 0; i < out; ++i) {
    const double ni = mode == engine::RowNorm::none ? 1.0 : n[static_cast<size_t>(i)];
    f.b[static_cast<size_t>(i)] = static_cast<float>(-static_cast<double>(lambda) * ni * v[i]);
  }
  if (mode == engine::RowNorm::full) {
    f.magnitude.resize(static_cast<size_t>(out));
    for (int64_t i = 0; i < out; ++i) f.magnitude[static_cast<size_t>(i)] = static_cast<float>(n[static_cast<size_t>(i)]);
  }
  return f;
}

namespace {

// W + B·A, or DoRA's m ⊙ (W + B·A) / ‖W + B·A‖_row, in double from the stored (float) values.
std::vector<double> effective_weight(const float* w, const AdapterFactors& f) {
  std::vector<double> e(static_cast<size_t>(f.out * f.in));
  for (int64_t i = 0; i < f.out; ++i) {
    double* row = e.data() + i * f.in;
    double ss = 0;
    for (int64_t j = 0; j < f.in; ++j) {
      double x = w[i * f.in + j];
      for (int64_t c = 0; c < f.rank; ++c) {
        x += static_cast<double>(f.b[static_cast<size_t>(i * f.rank + c)]) * f.a[static_cast<size_t>(c * f.in + j)];
      }
      row[j] = x;
      ss += x * x;
    }
    if (f.magnitude.empty()) continue;
    // DoRA: m / ‖W + BA‖ per row (a zero row gives 0/0 in PEFT; kept zero here).
    const double scale = ss > 0 ? f.magnitude[static_cast<size_t>(i)] / std::sqrt(ss) : 0.0;
    for (int64_t j = 0; j < f.in; ++j) row[j] *= scale;
  }
  return e;
}

}  // namespace

void apply_adapter(float* w, const AdapterFactors& f) {
  const std::vector<double> e = effective_weight(w, f);
  for (size_t i = 0; i < e.size(); ++i) w[i] = static_cast<float>(e[i]);
}

double AdapterError::rel_fro() const { return delta_sq > 0 ? std::sqrt(err_sq / delta_sq) : 0.0; }

void AdapterError::add(const AdapterError& o) {
  err_sq += o.err_sq;
  delta_sq += o.delta_sq;
  max_abs = std::max(max_abs, o.max_abs);
}

AdapterError adapter_error(const float* w, const float* ablated, const AdapterFactors& f) {
  const std::vector<double> eff = effective_weight(w, f);
  AdapterError e;
  for (int64_t i = 0; i < f.out * f.in; ++i) {
    const double target = ablated[i];
    const double err = target - eff[static_cast<size_t>(i)];
    const double delta = target - w[i];
    e.err_sq += err * err;
    e.delta_sq += delta * delta;
    e.max_abs = std::max(e.max_abs, std::abs(err));
  }
  return e;
}

}  // namespace abl::ablation
