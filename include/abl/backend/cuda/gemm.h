// Linear layers on the GPU through cuBLASLt: y(T,out) = x(T,in) · W(out,in)ᵀ (+ bias(out)), bf16
// inputs in Hugging Face's row-major layout, fp32 accumulation, bf16 or fp32 output. The
// row-major → column-major mapping lives in one pure function (linear_layout) that is tested on
// the CPU; descriptors and the chosen algorithm are cached per shape, so a call allocates nothing.
#pragma once
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "abl/backend/cuda/memory.h"

namespace abl::cuda {

// One column-major GEMM as BLAS states it: C(m,n) = op(A)(m,k) · op(B)(k,n), where op(X) is X
// or Xᵀ and every matrix is stored column-major with the given leading dimension (the stride
// between columns). The matrices as stored (before op) are (a_rows × a_cols) etc.
struct GemmLayout {
  int64_t m = 0, n = 0, k = 0;
  bool transa = false, transb = false;
  int64_t lda = 0, ldb = 0, ldc = 0;

  int64_t a_rows() const { return transa ? k : m; }
  int64_t a_cols() const { return transa ? m : k; }
  int64_t b_rows() const { return transb ? n : k; }
  int64_t b_cols() const { return transb ? k : n; }
};

// The column-major GEMM that computes the row-major linear layer y(T,out) = x(T,in)·W(out,in)ᵀ
// with A = W and B = x (pointers unchanged). A row-major (r × c) matrix is, read column-major,
// its transpose (c × r) with leading dimension c. So y is yᵀ (out × T, ld out), W is Wᵀ
// (in × out, ld in) and x is xᵀ (in × T, ld in), and y = x·Wᵀ ⇔ yᵀ = W·xᵀ = op(Wᵀ)·xᵀ with
// op = transpose: m = out, n = T, k = in, transa = true, transb = false, lda = ldb = in,
// ldc = out ("TN", the layout cuBLASLt's fastest kernels want). The bias (out) is then a
// per-row (m) vector of C, which is what CUBLASLT_EPILOGUE_BIAS broadcasts.
GemmLayout linear_layout(int64_t T, int64_t in, int64_t out);

// Largest power of two (at most 256) that divides the address: what cuBLASLt's heuristics are
// told about each buffer, so carved, offset buffers get an algorithm that accepts them.
uint32_t pointer_alignment(const void* p);

enum class GemmOut : uint8_t { bf16, f32 };

class Gemm {
 public:
  static constexpr size_t kDefaultWorkspaceBytes = size_t{32} << 20;  // what the buffer plan counts

  // Owns a workspace of `workspace_bytes` (allocated here, once).
  explicit Gemm(size_t workspace_bytes = kDefaultWorkspaceBytes);
  // Uses a workspace carved from the caller's buffer plan; it must outlive this object.
  Gemm(void* workspace, size_t workspace_bytes);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  size_t workspace_bytes() const { return workspace_bytes_; }

  // y(T,out) = x(T,in) · w(out,in)ᵀ (+ bias(out) when non-null), row-major, fp32 accumulation.
  // T = 0 does nothing. The first call of a shape (and pointer alignments) builds its plan;
  // later calls only launch, so they can be captured in a CUDA graph.
  // The bias has the output's type, as cuBLASLt's bias epilogue requires (it rejects a bf16 bias
  // with fp32 output). With bf16 output the epilogue rounds x·wᵀ to bf16 before adding the
  // bias, so an element's error is up to one bf16 ulp of max(|x·wᵀ|, |bias|) (as in PyTorch's
  // fused addmm); the fp32 output adds the bias in fp32.
  void linear(const __nv_bfloat16* x, const __nv_bfloat16* w, const __nv_bfloat16* bias, __nv_bfloat16* y,
              int64_t T, int64_t in, int64_t out, cudaStream_t stream);
  void linear(const __nv_bfloat16* x, const __nv_bfloat16* w, const float* bias, float* y, int64_t T, int64_t in,
              int64_t out, cudaStream_t stream);

  size_t num_plans() const { return plans_.size(); }

 private:
  // (T, in, out, output dtype, has bias, alignments of x, w, y, bias)
  using Key = std::tuple<int64_t, int64_t, int64_t, GemmOut, bool, uint32_t, uint32_t, uint32_t, uint32_t>;
  struct Plan;
  void run(const void* x, const void* w, const void* bias, void* y, GemmOut out_type, int64_t T, int64_t in,
           int64_t out, cudaStream_t stream);
  const Plan& plan(const Key& key, const void* bias);

  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer owned_workspace_;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::map<Key, std::unique_ptr<Plan>> plans_;
};

}  // namespace abl::cuda
