// cuBLASLt linear layers (gemm.h). A plan (matmul descriptor, three layouts, the heuristic's
// algorithm) is built on the first call of a shape and reused, so steady-state calls only set
// the bias pointer and launch — nothing is allocated, and the call can be graph-captured.
#include "abl/backend/cuda/gemm.h"

#include "abl/backend/cuda/check.h"
#include "abl/core/error.h"

namespace abl::cuda {

GemmLayout linear_layout(int64_t T, int64_t in, int64_t out) {
  GemmLayout g;
  g.m = out;
  g.n = T;
  g.k = in;
  g.transa = true;   // A = W stored as Wᵀ (in × out); op(A) = W (out × in)
  g.transb = false;  // B = x stored as xᵀ (in × T)
  g.lda = in;
  g.ldb = in;
  g.ldc = out;  // C = y stored as yᵀ (out × T)
  return g;
}

uint32_t pointer_alignment(const void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 1;
  while (a < 256 && (addr & (2 * uintptr_t{a} - 1)) == 0) a *= 2;
  return a;
}

struct Gemm::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

Gemm::Gemm(size_t workspace_bytes) : owned_workspace_(workspace_bytes) {
  workspace_ = owned_workspace_.get();
  workspace_bytes_ = workspace_bytes;
  CUBLAS_CHECK(cublasLtCreate(&handle_));
}

Gemm::Gemm(void* workspace, size_t workspace_bytes) : workspace_(workspace), workspace_bytes_(workspace_bytes) {
  ABL_CHECK(workspace != nullptr || workspace_bytes == 0, "Gemm: a workspace of {} bytes at a null pointer",
            workspace_bytes);
  CUBLAS_CHECK(cublasLtCreate(&handle_));
}

Gemm::~Gemm() {
  plans_.clear();
  if (handle_) cublasLtDestroy(handle_);
}

const Gemm::Plan& Gemm::plan(const Key& key, const void* bias) {
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;

  const auto [T, in, out, out_type, has_bias, align_x, align_w, align_y, align_bias] = key;
  const GemmLayout g = linear_layout(T, in, out);
  const cudaDataType_t ab_type = CUDA_R_16BF;
  const cudaDataType_t c_type = out_type == GemmOut::bf16 ? CUDA_R_16BF : CUDA_R_32F;

  auto p = std::make_unique<Plan>();
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t opa = g.transa ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opb = g.transb ? CUBLAS_OP_T : CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)));
  if (has_bias) {
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    // The bias has the output's type (cuBLASLt's default; it rejects bf16 bias with fp32 output).
    const int32_t bias_type = c_type;
    CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)));
    // The heuristic reads the pointer's alignment from here.
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->a, ab_type, static_cast<uint64_t>(g.a_rows()),
                                          static_cast<uint64_t>(g.a_cols()), g.lda));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->b, ab_type, static_cast<uint64_t>(g.b_rows()),
                                          static_cast<uint64_t>(g.b_cols()), g.ldb));
  CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&p->c, c_type, static_cast<uint64_t>(g.m), static_cast<uint64_t>(g.n), g.ldc));

  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  struct PrefGuard {
    cublasLtMatmulPreference_t p;
    ~PrefGuard() { cublasLtMatmulPreferenceDestroy(p); }
  } guard{pref};
  const uint64_t ws = workspace_bytes_;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  // A = w, B = x, C = D = y.
  const uint32_t aligns[4] = {align_w, align_x, align_y, align_y};
  const cublasLtMatmulPreferenceAttributes_t align_attrs[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; i < 4; ++i) {
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, align_attrs[i], &aligns[i], sizeof(aligns[i])));
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle_, p->desc, p->a, p->b, p->c, p->c, pref, 1, &result, &found));
  ABL_CHECK(found > 0,
            "cuBLASLt has no algorithm for y({},{}) = x({},{})·W({},{})ᵀ with {} output{} (alignments x {}, w {}, "
            "y {}, bias {}; workspace {} bytes)",
            T, out, T, in, out, in, out_type == GemmOut::bf16 ? "bf16" : "fp32", has_bias ? " and bias" : "",
            align_x, align_w, align_y, align_bias, workspace_bytes_);
  p->algo = result.algo;
  return *plans_.emplace(key, std::move(p)).first->second;
}

void Gemm::run(const void* x, const void* w, const void* bias, void* y, GemmOut out_type, int64_t T, int64_t in,
               int64_t out, cudaStream_t stream) {
  ABL_CHECK(T >= 0 && in > 0 && out > 0, "Gemm::linear: invalid shape T={} in={} out={}", T, in, out);
  if (T == 0) return;
  const Key key{T,
                in,
                out,
                out_type,
                bias != nullptr,
                pointer_alignment(x),
                pointer_alignment(w),
                pointer_alignment(y),
                bias ? pointer_alignment(bias) : 0u};
  const Plan& p = plan(key, bias);
  if (bias) {
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(handle_, p.desc, &alpha, w, p.a, x, p.b, &beta, y, p.c, y, p.c, &p.algo, workspace_,
                              workspace_bytes_, stream));
}

void Gemm::linear(const __nv_bfloat16* x, const __nv_bfloat16* w, const __nv_bfloat16* bias, __nv_bfloat16* y,
                  int64_t T, int64_t in, int64_t out, cudaStream_t stream) {
  run(x, w, bias, y, GemmOut::bf16, T, in, out, stream);
}

void Gemm::linear(const __nv_bfloat16* x, const __nv_bfloat16* w, const float* bias, float* y, int64_t T, int64_t in,
                  int64_t out, cudaStream_t stream) {
  run(x, w, bias, y, GemmOut::f32, T, in, out, stream);
}

}  // namespace abl::cuda
