// Row-wise log-softmax over the vocabulary and the per-row KL divergence against stored
// log-probabilities, one block per row (V up to 262,144). Max subtracted before exp; the softmax
// sum and the KL sum are fp64, as on the CPU (so that identical logits give the CPU's log-probs and
// a KL of exactly 0, not an fp32 rounding of either sign).
#include <climits>
#include <cmath>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "kernel_utils.cuh"

namespace abl::cuda {
namespace {

// No __restrict__: out may alias logits. Each thread reads the elements it later writes, and the
// two block reductions finish every read of the max/sum passes before the first write.
__global__ void log_softmax_kernel(const float* logits, float* out, int64_t V) {
  const float* x = logits + static_cast<int64_t>(blockIdx.x) * V;
  float* o = out + static_cast<int64_t>(blockIdx.x) * V;
  float mx = -INFINITY;
  for (int64_t i = threadIdx.x; i < V; i += blockDim.x) mx = fmaxf(mx, x[i]);
  mx = detail::block_reduce(mx, detail::MaxOp{}, -INFINITY);
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < V; i += blockDim.x) sum += exp(static_cast<double>(x[i] - mx));
  sum = detail::block_reduce(sum, detail::SumOp{}, 0.0);
  const float lse = mx + static_cast<float>(log(sum));
  for (int64_t i = threadIdx.x; i < V; i += blockDim.x) o[i] = x[i] - lse;
}

// Same terms as the CPU evaluator: exp in fp64 of log p times the fp32 difference log p − log q.
__global__ void kl_rows_kernel(const float* __restrict__ ref, const float* __restrict__ lp, double* __restrict__ out,
                               int64_t V) {
  const float* r = ref + static_cast<int64_t>(blockIdx.x) * V;
  const float* q = lp + static_cast<int64_t>(blockIdx.x) * V;
  double acc = 0.0;
  for (int64_t i = threadIdx.x; i < V; i += blockDim.x) {
    acc += exp(static_cast<double>(r[i])) * static_cast<double>(r[i] - q[i]);
  }
  acc = detail::block_reduce(acc, detail::SumOp{}, 0.0);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

void check_rows(const char* name, int64_t rows, int64_t V) {
  ABL_CHECK(rows >= 0 && V >= 0, "{}: negative extent (rows = {}, V = {})", name, rows, V);
  ABL_CHECK(rows <= INT_MAX, "{}: {} rows exceed one grid (one block per row)", name, rows);
}

}  // namespace

void log_softmax(const float* logits, float* out, int64_t rows, int64_t V, cudaStream_t s) {
  check_rows("log_softmax", rows, V);
  if (rows == 0 || V == 0) return;
  log_softmax_kernel<<<static_cast<unsigned>(rows), detail::row_threads(V), 0, s>>>(logits, out, V);
  CUDA_CHECK_LAUNCH();
}

void kl_rows(const float* ref, const float* lp, double* out, int64_t rows, int64_t V, cudaStream_t s) {
  check_rows("kl_rows", rows, V);
  ABL_CHECK(V > 0 || rows == 0, "kl_rows: empty rows (V = 0)");
  if (rows == 0) return;
  kl_rows_kernel<<<static_cast<unsigned>(rows), detail::row_threads(V), 0, s>>>(ref, lp, out, V);
  CUDA_CHECK_LAUNCH();
}

}  // namespace abl::cuda
