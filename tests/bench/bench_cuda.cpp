// GPU figures of the CUDA backend (issue #6), printed by `make bench`: prefill tokens/s and % of
// the dense BF16 peak, decode step time and % of the HBM roofline, our GEMM calls against the best
// cuBLASLt algorithm at the same shapes, attention throughput, and trials/hour of the default
// workflow with K trials per pass. Synthetic llama-3.1-8b and qwen2.5-7b: every layer holds the
// same random weights (timing does not depend on their values), so nothing near 16 GB of fp32 is
// generated on the host. Each figure is one human line and one JSON line ({"bench":"cuda",...}).
// Without a device it prints one "skipped" line and exits 0.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "abl/engine/cpu/forward_pass.h"
#include "abl/ablation/trial.h"
#include "abl/backend/cuda/attention.h"
#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/device.h"
#include "abl/engine/cuda/engine.h"
#include "abl/engine/cuda/forward_pass.h"
#include "abl/backend/cuda/gemm.h"
#include "abl/backend/cuda/memory.h"
#include "abl/backend/cpu/ops.h"
#include "abl/core/error.h"
#include "abl/engine/cpu/engine.h"
#include "abl/engine/forward_pass.h"
#include "abl/engine/generate.h"
#include "abl/engine/weights.h"
#include "abl/model/model_spec.h"
#include "abl/model/weights.h"
#include "abl/text/synthetic_tokenizer.h"
#include "abl/text/tokenizer.h"

using namespace abl;

namespace {

using bf16 = __nv_bfloat16;

// ---- device, peaks, output ------------------------------------------------------------------

struct Device {
  std::string name;
  int sm_count = 0;
  size_t l2_bytes = 0;
  double peak_tflops = 0;  // dense BF16; 0 = unknown device (figures without %)
  double hbm_tbs = 0;      // TB/s; 0 = unknown
};

Device detect_device() {
  Device d;
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  // NVL and PCIe parts, and the GH200 superchips, have other peaks: figures without % there.
  const bool other = d.name.find("NVL") != std::string::npos || d.name.find("GH200") != std::string::npos;
  if (d.name.find("H200") != std::string::npos && !other) {
    d.peak_tflops = 989;
    d.hbm_tbs = 4.8;
  } else if (d.name.find("H100") != std::string::npos && d.name.find("HBM3") != std::string::npos && !other) {
    d.peak_tflops = 989;  // H100 SXM: "NVIDIA H100 80GB HBM3"
    d.hbm_tbs = 3.35;
  }
  return d;
}

// A JSON object on one line: {"bench":"cuda","section":...,...}.
class Json {
 public:
  explicit Json(const std::string& section) : s_("{\"bench\":\"cuda\",\"section\":\"" + section + "\"") {}
  Json& str(const char* k, const std::string& v) {
    std::string e;
    for (char c : v) {
      if (c == '"' || c == '\\') e += '\\';
      e += c;
    }
    s_ += fmt::format(",\"{}\":\"{}\"", k, e);
    return *this;
  }
  Json& num(const char* k, double v) {
    s_ += std::isfinite(v) ? fmt::format(",\"{}\":{:.6g}", k, v) : fmt::format(",\"{}\":null", k);
    return *this;
  }
  Json& integer(const char* k, int64_t v) {
    s_ += fmt::format(",\"{}\":{}", k, v);
    return *this;
  }
  void print() const { std::printf("%s}\n", s_.c_str()); }

 private:
  std::string s_;
};

// "53.1 % of peak" or "" on an unknown device; NaN in JSON.
double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : NAN; }
std::string pct_text(double p, const char* what) {
  return std::isfinite(p) ? fmt::format("  {:5.1f} % of {}", p, what) : std::string();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median over `reps` of the event time of `body()` on `s` (ms), after `warmup` untimed runs.
template <typename F>
double time_ms(cudaStream_t s, int warmup, int reps, F&& body) {
  for (int i = 0; i < warmup; ++i) body();
  CUDA_CHECK(cudaStreamSynchronize(s));
  cuda::Event a(true), b(true);
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    a.record(s);
    body();
    b.record(s);
    t.push_back(b.elapsed_ms(a));
  }
  return median(t);
}

// Median ms per call of launch(i), i < calls, captured into one CUDA graph (no host launch cost
// in the figure): one warm-up launch of the graph, then `reps` timed launches.
template <typename F>
double graph_ms_per_call(cudaStream_t s, int calls, int reps, F&& launch) {
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < calls; ++i) launch(i);
  } catch (...) {
    cudaStreamEndCapture(s, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_CHECK(inst);
  const double ms = time_ms(s, 1, reps, [&] { CUDA_CHECK(cudaGraphLaunch(exec, s)); });
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  return ms / calls;
}

// ---- random data ----------------------------------------------------------------------------

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform values with mean 0 and standard deviation `stddev` (counter-based: value i of stream
// `seed` is fixed).
void fill_uniform(float* x, int64_t n, double stddev, uint64_t seed) {
  const double half_width = stddev * std::sqrt(3.0);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = splitmix64(seed * 0x100000001b3ull + static_cast<uint64_t>(i));
    const double u = static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
    x[i] = static_cast<float>((2.0 * u - 1.0) * half_width);
  }
}

// Device bf16 buffer of n values: a random block of up to 4 Mi values uploaded once, then copied
// over the rest (repeats are harmless for timing).
void fill_device_bf16(bf16* d, int64_t n, double stddev, uint64_t seed, cudaStream_t s) {
  const int64_t block = std::min<int64_t>(n, int64_t{4} << 20);
  std::vector<float> f(static_cast<size_t>(block));
  fill_uniform(f.data(), block, stddev, seed);
  std::vector<bf16> h(f.size());
  for (size_t i = 0; i < f.size(); ++i) h[i] = __float2bfloat16(f[i]);
  cuda::copy_to_device(d, h.data(), h.size() * sizeof(bf16), s);
  for (int64_t done = block; done < n;) {
    const int64_t m = std::min(done, n - done);
    CUDA_CHECK(cudaMemcpyAsync(d + done, d, static_cast<size_t>(m) * sizeof(bf16), cudaMemcpyDeviceToDevice, s));
    done += m;
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
}

std::vector<int32_t> random_tokens(int64_t n, int64_t V, uint64_t seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = static_cast<int32_t>(splitmix64(seed + static_cast<uint64_t>(i)) % static_cast<uint64_t>(V));
  return t;
}

// ---- the benchmark's weights ----------------------------------------------------------------

// Every layer returns the same random unit (generated once); the embedding and lm_head are one
// random (V, H) table. Matrices and biases ~ U with std 0.02 (the usual init scale), norms 1.
class RepeatedLayerSource final : public engine::WeightSource {
 public:
  explicit RepeatedLayerSource(const model::ModelSpec& spec) : spec_(spec), layout_(engine::layer_unit_layout(spec)) {
    unit_.resize(static_cast<size_t>(layout_.total));
    for (size_t i = 0; i < layout_.slots.size(); ++i) {
      float* p = unit_.data() + layout_.offsets[i];
      const int64_t n = layout_.sizes[i];
      using R = model::WeightRole;
      const R role = layout_.slots[i].role;
      if (role == R::attn_norm || role == R::mlp_norm || role == R::q_norm || role == R::k_norm) {
        std::fill(p, p + n, 1.0f);
      } else {
        fill_uniform(p, n, 0.02, 100 + i);
      }
    }
    const int64_t VH = spec.vocab_size * spec.hidden_size;
    table_.resize(static_cast<size_t>(VH));
    fill_uniform(table_.data(), VH, 0.02, 7);
    final_norm_.assign(static_cast<size_t>(spec.hidden_size), 1.0f);
  }
  const model::ModelSpec& spec() const override { return spec_; }
  const float* embedding() override { return table_.data(); }
  engine::LayerWeights layer(int64_t) override { return engine::layer_views(spec_, layout_, unit_.data()); }
  engine::HeadWeights head() override { return {final_norm_.data(), table_.data()}; }

 private:
  model::ModelSpec spec_;
  engine::UnitLayout layout_;
  std::vector<float> unit_, table_, final_norm_;
};

struct Model {
  std::string name;  // preset
  model::ModelSpec spec;
  std::unique_ptr<cuda::DeviceWeights> weights;
  double load_s = 0;
};

std::unique_ptr<Model> load_model(const std::string& preset, cudaStream_t s) {
  auto m = std::make_unique<Model>();
  m->name = preset;
  m->spec = model::synthetic_model_spec("synthetic:" + preset);
  const auto t0 = std::chrono::steady_clock::now();
  {
    RepeatedLayerSource src(m->spec);
    m->weights = std::make_unique<cuda::DeviceWeights>(src, s);
  }
  m->load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

// ---- model arithmetic -----------------------------------------------------------------------

// Multiply-add FLOPs of one token through the layer matmuls (all L layers).
double layer_matmul_flops(const model::ModelSpec& m) {
  const double H = static_cast<double>(m.hidden_size), F = static_cast<double>(m.intermediate_size);
  const double QD = static_cast<double>(m.q_dim()), KVD = static_cast<double>(m.kv_dim());
  return 2.0 * static_cast<double>(m.num_layers) * (H * QD + 2.0 * H * KVD + QD * H + 3.0 * H * F);
}
double head_flops(const model::ModelSpec& m) {
  return 2.0 * static_cast<double>(m.hidden_size) * static_cast<double>(m.vocab_size);
}
// QKᵀ and PV of one query row against kv_len keys, all layers.
double attention_row_flops(const model::ModelSpec& m, int64_t kv_len) {
  return 4.0 * static_cast<double>(m.num_layers * m.num_heads * m.head_dim) * static_cast<double>(kv_len);
}
// Causal prefill of one n-token prompt: Σ_{i=1..n} 4·NH·HD·i = 2·NH·HD·n(n+1) per layer.
double attention_prefill_flops(const model::ModelSpec& m, int64_t n) {
  return 2.0 * static_cast<double>(m.num_layers * m.num_heads * m.head_dim) * static_cast<double>(n) *
         static_cast<double>(n + 1);
}
// bf16 bytes of the L layer units (every tensor a pass reads).
double layer_weight_bytes(const model::ModelSpec& m) {
  return 2.0 * static_cast<double>(engine::layer_unit_layout(m).total) * static_cast<double>(m.num_layers);
}
// KV cache bytes of one token row, all layers, K and V.
double kv_row_bytes(const model::ModelSpec& m) {
  return 2.0 * 2.0 * static_cast<double>(m.num_layers * m.num_kv_heads * cuda::attention_head_dim(m.head_dim));
}

// ---- 1. prefill -----------------------------------------------------------------------------

void bench_prefill(const Device& dev, Model& md, cuda::CudaEngine& eng, cuda::DeviceKvCache& cache, int64_t P,
                   int64_t n) {
  const model::ModelSpec& m = md.spec;
  const int64_t V = m.vocab_size;
  const std::vector<int32_t> toks = random_tokens(P * n, V, 11);
  engine::Batch b;
  for (int64_t p = 0; p < P; ++p) b.add(toks.data() + p * n, n, p * n, 0);
  std::vector<float> logits(static_cast<size_t>(P * V));
  engine::Outputs out;
  out.logits = logits.data();  // the KL phase's output: logits at each prompt's last token
  const double ms = time_ms(eng.stream(), 1, 5, [&] { eng.forward(b, cache, out); });
  const double tokens = static_cast<double>(P * n);
  const double flops = tokens * layer_matmul_flops(m) + static_cast<double>(P) * head_flops(m) +
                       static_cast<double>(P) * attention_prefill_flops(m, n);
  const double tflops = flops / (ms * 1e-3) / 1e12;
  const double p = pct(tflops, dev.peak_tflops);
  std::printf("prefill  %-13s %3lld x %4lld tokens: %8.2f ms  %9.0f tokens/s  %6.1f TFLOP/s%s\n", md.name.c_str(),
              static_cast<long long>(P), static_cast<long long>(n), ms, tokens / (ms * 1e-3), tflops,
              pct_text(p, "dense BF16 peak").c_str());
  Json("prefill")
      .str("model", md.name)
      .integer("prompts", P)
      .integer("prompt_len", n)
      .num("ms", ms)
      .num("tokens_per_s", tokens / (ms * 1e-3))
      .num("tflop", flops / 1e12)
      .num("tflops", tflops)
      .num("pct_peak", p)
      .print();
}

// ---- 2. decode ------------------------------------------------------------------------------

// One decode step of B sequences with `ctx` cached tokens each (kv length ctx + 1). The step is
// repeated at the same position (it rewrites the same cache row), so every timed step reads the
// same bytes. The cached rows are the zeros of a fresh cache: attention time does not depend on
// the values.
void bench_decode(const Device& dev, Model& md, cuda::CudaEngine& eng, cuda::DeviceKvCache& cache, int64_t B,
                  int64_t ctx) {
  const model::ModelSpec& m = md.spec;
  const int64_t rows = ctx + 1;
  const std::vector<int32_t> toks = random_tokens(B, m.vocab_size, 23);
  engine::Batch b;
  for (int64_t s = 0; s < B; ++s) b.add(&toks[static_cast<size_t>(s)], 1, s * rows, ctx);
  std::vector<int32_t> ids(static_cast<size_t>(B));

  struct Variant {
    const char* name;
    bool head;
    bool graph;
  };
  // Generation asks a decode pass for greedy ids only, which runs as a CUDA graph; the eager
  // variants show the launch overhead the graph removes.
  for (const Variant& v : {Variant{"layers only", false, false}, Variant{"+ lm_head, ids, eager", true, false},
                           Variant{"+ lm_head, ids, graph", true, true}}) {
    engine::Outputs out;
    if (v.head) out.next_ids = ids.data();
    eng.set_decode_graphs(v.graph);
    const double ms = time_ms(eng.stream(), 2, 10, [&] { eng.forward(b, cache, out); });
    const double wbytes = layer_weight_bytes(m) + (v.head ? 2.0 * static_cast<double>(m.hidden_size * m.vocab_size) : 0.0) +
                          2.0 * static_cast<double>(B * m.hidden_size);  // embedding rows
    const double kvbytes = static_cast<double>(B * rows) * kv_row_bytes(m);
    const double bytes = wbytes + kvbytes;
    const double flops = static_cast<double>(B) * (layer_matmul_flops(m) + (v.head ? head_flops(m) : 0.0) +
                                                   attention_row_flops(m, rows));
    const double mem_ms = dev.hbm_tbs > 0 ? bytes / (dev.hbm_tbs * 1e12) * 1e3 : NAN;
    const double flop_ms = dev.peak_tflops > 0 ? flops / (dev.peak_tflops * 1e12) * 1e3 : NAN;
    const double p_hbm = pct(mem_ms, ms);
    const double p_roof = pct(std::max(mem_ms, flop_ms), ms);
    std::string roof;
    if (std::isfinite(p_hbm)) {
      roof = fmt::format("  {:5.1f} % of HBM roofline ({:.2f} ms at {} TB/s)", p_hbm, mem_ms, dev.hbm_tbs);
      if (flop_ms > mem_ms) roof += fmt::format(", compute floor {:.2f} ms: {:.1f} % of roofline", flop_ms, p_roof);
    }
    std::printf("decode   %-13s batch %4lld ctx %lld (%-22s): %7.2f ms/step  %8.0f tokens/s  %5.2f GB weights + %5.2f GB KV%s\n",
                md.name.c_str(), static_cast<long long>(B), static_cast<long long>(ctx), v.name, ms,
                static_cast<double>(B) / (ms * 1e-3), wbytes / 1e9, kvbytes / 1e9, roof.c_str());
    Json("decode")
        .str("model", md.name)
        .str("variant", !v.head ? "layers" : v.graph ? "head_graph" : "head_eager")
        .integer("batch", B)
        .integer("ctx", ctx)
        .num("ms_per_step", ms)
        .num("tokens_per_s", static_cast<double>(B) / (ms * 1e-3))
        .num("weight_gb", wbytes / 1e9)
        .num("kv_gb", kvbytes / 1e9)
        .num("hbm_floor_ms", mem_ms)
        .num("compute_floor_ms", flop_ms)
        .num("pct_hbm_roofline", p_hbm)
        .num("pct_roofline", p_roof)
        .print();
  }
}

// ---- 3. GEMM: ours vs the best cuBLASLt algorithm -------------------------------------------

struct GemmShape {
  const char* name;
  int64_t in, out;
  bool f32_out;  // o_proj, down_proj, lm_head write fp32
  bool bias;     // q/k/v of qkv_bias models
};

std::vector<GemmShape> gemm_shapes(const model::ModelSpec& m) {
  const int64_t H = m.hidden_size, F = m.intermediate_size;
  return {
      {"q_proj", H, m.q_dim(), false, m.qkv_bias},
      {"k/v_proj", H, m.kv_dim(), false, m.qkv_bias},
      {"o_proj", m.q_dim(), H, true, false},
      {"gate/up", H, F, false, false},
      {"down_proj", F, H, true, false},
      {"lm_head", H, m.vocab_size, true, false},
  };
}

// cuBLASLt with the same problem as Gemm::linear (TN, bf16 in, fp32 compute, same output type,
// bias epilogue, same workspace budget): every algorithm of the heuristic (up to 16), timed.
class LtSearch {
 public:
  explicit LtSearch(size_t workspace_bytes) : ws_(workspace_bytes) { CUBLAS_CHECK(cublasLtCreate(&h_)); }
  ~LtSearch() { cublasLtDestroy(h_); }
  LtSearch(const LtSearch&) = delete;
  LtSearch& operator=(const LtSearch&) = delete;

  struct Best {
    double ms = INFINITY;
    int index = -1;  // heuristic rank of the fastest
    int tried = 0;   // algorithms that ran
    int offered = 0;
  };

  // weights(i): the weight copy call i reads (rotated to keep it out of L2).
  template <typename W>
  Best best(const GemmShape& g, int64_t T, const bf16* x, W&& weights, const void* bias, void* y, int calls,
            cudaStream_t s) {
    const cuda::GemmLayout l = cuda::linear_layout(T, g.in, g.out);
    const cudaDataType_t ct = g.f32_out ? CUDA_R_32F : CUDA_R_16BF;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    if (bias) {
      const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
      const int32_t bt = ct;
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt)));
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    }
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, static_cast<uint64_t>(l.a_rows()),
                                            static_cast<uint64_t>(l.a_cols()), l.lda));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, static_cast<uint64_t>(l.b_rows()),
                                            static_cast<uint64_t>(l.b_cols()), l.ldb));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c, ct, static_cast<uint64_t>(l.m), static_cast<uint64_t>(l.n), l.ldc));
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t wsb = ws_.bytes();
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof(wsb)));
    cublasLtMatmulHeuristicResult_t res[16] = {};
    int found = 0;
    const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(h_, desc, a, b, c, c, pref, 16, res, &found);
    Best best;
    best.offered = hs == CUBLAS_STATUS_SUCCESS ? found : 0;
    const float alpha = 1.0f, beta = 0.0f;
    for (int i = 0; i < best.offered; ++i) {
      if (res[i].state != CUBLAS_STATUS_SUCCESS || res[i].workspaceSize > wsb) continue;
      const cublasLtMatmulAlgo_t* algo = &res[i].algo;
      auto call = [&](int k) {
        return cublasLtMatmul(h_, desc, &alpha, weights(k), a, x, b, &beta, y, c, y, c, algo, ws_.get(), wsb, s);
      };
      if (call(0) != CUBLAS_STATUS_SUCCESS) continue;  // an algorithm that does not run here
      CUDA_CHECK(cudaStreamSynchronize(s));
      const double ms = graph_ms_per_call(s, calls, 5, [&](int k) { CUBLAS_CHECK(call(k)); });
      ++best.tried;
      if (ms < best.ms) {
        best.ms = ms;
        best.index = i;
      }
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(c);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatmulDescDestroy(desc);
    return best;
  }

 private:
  cublasLtHandle_t h_ = nullptr;
  cuda::DeviceBuffer ws_;
};

void bench_gemm(const Device& dev, const std::string& model_name, const model::ModelSpec& m, cudaStream_t s) {
  const int64_t Ms[] = {64, 256, 1024, 4096};
  cuda::Gemm ours;  // its own workspace of the default size, as the engine plans it
  LtSearch lt(ours.workspace_bytes());
  for (const GemmShape& g : gemm_shapes(m)) {
    const size_t out_elem = g.f32_out ? sizeof(float) : sizeof(bf16);
    const int64_t w_elems = g.in * g.out;
    const size_t w_stride = (static_cast<size_t>(w_elems) * sizeof(bf16) + 255) / 256 * 256;
    // Enough weight copies that the calls of one graph read them from HBM, not L2, as the
    // layers of a real pass do (up to 16).
    const int copies = static_cast<int>(std::clamp<size_t>((4 * dev.l2_bytes + w_stride - 1) / w_stride, 1, 16));
    cuda::DeviceBuffer w(w_stride * static_cast<size_t>(copies));
    fill_device_bf16(w.as<bf16>(), static_cast<int64_t>(w_stride / sizeof(bf16)) * copies, 0.02, 3, s);
    auto weight = [&](int k) {
      return reinterpret_cast<const bf16*>(w.as<char>() + static_cast<size_t>(k % copies) * w_stride);
    };
    cuda::DeviceBuffer bias(g.bias ? static_cast<size_t>(g.out) * out_elem : 0);
    if (g.bias) fill_device_bf16(bias.as<bf16>(), g.out, 0.02, 5, s);  // bf16 output: bf16 bias
    for (int64_t M : Ms) {
      cuda::DeviceBuffer x(static_cast<size_t>(M * g.in) * sizeof(bf16));
      cuda::DeviceBuffer y(static_cast<size_t>(M * g.out) * out_elem);
      fill_device_bf16(x.as<bf16>(), M * g.in, 1.0, 9, s);
      auto our_call = [&](int k) {
        if (g.f32_out) {
          ours.linear(x.as<bf16>(), weight(k), static_cast<const float*>(nullptr), y.as<float>(), M, g.in, g.out, s);
        } else {
          ours.linear(x.as<bf16>(), weight(k), g.bias ? bias.as<bf16>() : nullptr, y.as<bf16>(), M, g.in, g.out, s);
        }
      };
      // Calls per graph: at least one per weight copy and ≈ 2 ms of work.
      const double one = time_ms(s, 2, 3, [&] { our_call(0); });
      const int calls = std::max(copies, static_cast<int>(std::clamp(2.0 / std::max(one, 1e-3), 1.0, 64.0)));
      const double ours_ms = graph_ms_per_call(s, calls, 5, our_call);
      const LtSearch::Best best = lt.best(g, M, x.as<bf16>(), weight, g.bias ? bias.get() : nullptr, y.get(), calls, s);
      const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(g.in) * static_cast<double>(g.out);
      const double ratio = 100.0 * best.ms / ours_ms;  // ≥ 100: ours is as fast as the best
      std::printf("gemm     %-13s %-9s M=%4lld %5lld->%-6lld %s%s: ours %8.1f us %6.1f TFLOP/s  best %8.1f us (heuristic #%d, %d of %d ran)  ours/best %5.1f %%\n",
                  model_name.c_str(), g.name, static_cast<long long>(M), static_cast<long long>(g.in),
                  static_cast<long long>(g.out), g.f32_out ? "f32" : "bf16", g.bias ? "+bias" : "", ours_ms * 1e3,
                  flops / (ours_ms * 1e-3) / 1e12, best.ms * 1e3, best.index, best.tried, best.offered, ratio);
      Json("gemm")
          .str("model", model_name)
          .str("op", g.name)
          .integer("m", M)
          .integer("in", g.in)
          .integer("out", g.out)
          .str("out_dtype", g.f32_out ? "f32" : "bf16")
          .integer("bias", g.bias ? 1 : 0)
          .num("ours_us", ours_ms * 1e3)
          .num("best_us", best.ms * 1e3)
          .integer("best_heuristic_index", best.index)
          .integer("algos_timed", best.tried)
          .num("ours_tflops", flops / (ours_ms * 1e-3) / 1e12)
          .num("pct_ours_of_best", ratio)
          .print();
    }
  }
}

// ---- 4. attention ---------------------------------------------------------------------------

void bench_attention(const Device& dev, const model::ModelSpec& m, const std::string& model_name, cudaStream_t s) {
  const int64_t NH = m.num_heads, NKV = m.num_kv_heads, HD = m.head_dim;
  struct Case {
    int64_t B, q_len, kv_len;
  };
  for (const Case& c : {Case{8, 1024, 1024}, Case{4, 2048, 2048}, Case{256, 1, 1024}}) {
    const bool decode = c.q_len == 1;
    const int64_t T = c.B * c.q_len, C = c.B * c.kv_len;
    cuda::DeviceBuffer q(static_cast<size_t>(T * NH * HD) * sizeof(bf16));
    cuda::DeviceBuffer o(q.bytes());
    cuda::DeviceBuffer k(static_cast<size_t>(C * NKV * HD) * sizeof(bf16)), v(k.bytes());
    fill_device_bf16(q.as<bf16>(), T * NH * HD, 1.0, 31, s);
    fill_device_bf16(k.as<bf16>(), C * NKV * HD, 1.0, 37, s);
    fill_device_bf16(v.as<bf16>(), C * NKV * HD, 1.0, 41, s);
    std::vector<cuda::AttnSeq> seqs(static_cast<size_t>(c.B));
    for (int64_t i = 0; i < c.B; ++i) seqs[static_cast<size_t>(i)] = {i * c.q_len, c.q_len, i * c.kv_len, c.kv_len};
    cuda::DeviceBuffer dseqs(seqs.size() * sizeof(cuda::AttnSeq));
    cuda::copy_to_device(dseqs.get(), seqs.data(), dseqs.bytes(), s);
    cuda::AttnBounds bounds;
    bounds.B = c.B;
    bounds.max_q_len = c.q_len;
    bounds.max_kv_len = c.kv_len;
    const size_t scratch_bytes = cuda::attention_scratch_bytes(bounds, NH, NKV, HD, 0, dev.sm_count);
    cuda::DeviceBuffer scratch(scratch_bytes);
    auto run = [&] {
      cuda::attention(q.as<bf16>(), k.as<bf16>(), v.as<bf16>(), o.as<bf16>(), dseqs.as<cuda::AttnSeq>(), bounds, NH,
                      NKV, HD, 0, scratch_bytes ? scratch.get() : nullptr, scratch_bytes, s);
    };
    const double ms = time_ms(s, 3, 10, run);
    // Decode: bytes of the K and V rows read. Prefill (causal): row i sees i+1 keys, QKᵀ and PV are
    // 2·HD FLOPs per (query head, key) each.
    const double rate =
        decode ? 2.0 * static_cast<double>(C * NKV * HD) * sizeof(bf16) / (ms * 1e-3) / 1e12
               : static_cast<double>(c.B) * 2.0 * static_cast<double>(NH * HD) * static_cast<double>(c.q_len) *
                     static_cast<double>(c.q_len + 1) / (ms * 1e-3) / 1e12;
    const double p = pct(rate, decode ? dev.hbm_tbs : dev.peak_tflops);
    std::printf("attention %-12s %-7s %4lld x %4lld %s (NH %lld, NKV %lld, HD %lld): %7.3f ms  %6.2f %s%s\n",
                model_name.c_str(), decode ? "decode" : "prefill", static_cast<long long>(c.B),
                static_cast<long long>(c.kv_len), decode ? "ctx   " : "causal", static_cast<long long>(NH),
                static_cast<long long>(NKV), static_cast<long long>(HD), ms, rate,
                decode ? "TB/s of KV read" : "TFLOP/s", pct_text(p, decode ? "HBM bandwidth" : "dense BF16 peak").c_str());
    Json("attention")
        .str("model", model_name)
        .str("phase", decode ? "decode" : "prefill")
        .integer("seqs", c.B)
        .integer("q_len", c.q_len)
        .integer("kv_len", c.kv_len)
        .num("ms", ms)
        .num(decode ? "kv_tbs" : "tflops", rate)
        .num(decode ? "pct_hbm" : "pct_peak", p)
        .print();
  }
}

// ---- 5. trials/hour of the default workflow --------------------------------------------------

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<float> unit_vector(int64_t H, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(H));
  fill_uniform(v.data(), H, 1.0, seed);
  double n = 0;
  for (float x : v) n += static_cast<double>(x) * x;
  for (float& x : v) x = static_cast<float>(x / std::sqrt(n));
  return v;
}

// Plausible sweep trials: a global direction somewhere in the middle layers, both components
// ablated over about half the layers.
std::vector<ablation::TrialParams> random_trials(int64_t K, int64_t L, uint64_t seed) {
  auto u = [&](uint64_t i) { return static_cast<double>(splitmix64(seed * 1000 + i) >> 11) * (1.0 / 9007199254740992.0); };
  std::vector<ablation::TrialParams> t(static_cast<size_t>(K));
  const auto Ld = static_cast<double>(L);
  for (int64_t k = 0; k < K; ++k) {
    ablation::TrialParams& p = t[static_cast<size_t>(k)];
    const auto b = static_cast<uint64_t>(k) * 16;
    p.scope = ablation::DirectionScope::global;
    p.direction_index = (0.3 + 0.5 * u(b)) * (Ld - 1);
    for (size_t c = 0; c < 2; ++c) {
      p.comp[c].max_weight = 0.8 + 0.7 * u(b + 1 + c * 4);
      p.comp[c].max_weight_position = (0.4 + 0.5 * u(b + 2 + c * 4)) * (Ld - 1);
      p.comp[c].min_weight = u(b + 3 + c * 4) * p.comp[c].max_weight;
      p.comp[c].min_weight_distance = (0.2 + 0.4 * u(b + 4 + c * 4)) * Ld;
    }
  }
  return t;
}

struct WorkflowTimes {
  double setup_s = 0, kl_pass_s = 0, kl_score_s = 0, gen_s = 0;
  int64_t kl_passes = 0, prompt_tokens = 0, decode_tokens = 0;
  double total() const { return setup_s + kl_pass_s + kl_score_s + gen_s; }
};

// One batch of K trials as the sweep evaluates it (app/trial_evaluator.cpp): the DeviceAblation of
// the K trials; the K × N_kl KL prompts prefilled in passes packed as parallel::prefill_lockstep packs
// them, logits at each prompt's last token to the host, log-softmax and KL against the baseline
// row on the host; then the K × N_eval evaluation prompts generated greedily (engine::generate
// over the DevicePass), max_new tokens each — EOS ids are not passed and there is no refusal
// check, so every response runs to max_new tokens.
WorkflowTimes run_trial_batch(Model& md, cuda::CudaEngine& eng, cuda::DeviceKvCache& cache, const text::Tokenizer& tok,
                              const std::vector<std::vector<float>>& r, const std::vector<std::vector<int32_t>>& kl_prompts,
                              const std::vector<std::vector<int32_t>>& eval_prompts, const std::vector<float>& base_lp,
                              const engine::KlReference& device_ref, bool device_kl, int64_t K, int64_t max_new,
                              uint64_t seed) {
  const model::ModelSpec& m = md.spec;
  const int64_t V = m.vocab_size;
  WorkflowTimes w;
  auto t0 = std::chrono::steady_clock::now();
  const engine::AblationTable table =
      ablation::build_trial_table(random_trials(K, m.num_layers, seed), r, engine::RowNorm::full);
  cuda::DeviceAblation abl(*md.weights, table, eng.stream());
  cuda::DevicePass pass(eng, cache, &abl, device_ref);
  w.setup_s = seconds_since(t0);

  // KL prompts: items (trial, prompt) in trial-major order.
  const auto n_kl = static_cast<int64_t>(kl_prompts.size());
  const engine::Limits& lim = pass.limits();
  std::vector<float> logits, lp(static_cast<size_t>(V));
  std::vector<int32_t> ref_rows(static_cast<size_t>(lim.max_seqs), 0);  // one baseline row serves every prompt
  std::vector<double> kl(static_cast<size_t>(lim.max_seqs));
  double kl_sum = 0;
  for (int64_t i = 0; i < K * n_kl;) {
    t0 = std::chrono::steady_clock::now();
    engine::Batch b;
    int64_t row = 0;
    for (; i < K * n_kl && b.num_seqs() < lim.max_seqs; ++i) {
      const std::vector<int32_t>& p = kl_prompts[static_cast<size_t>(i % n_kl)];
      const auto n = static_cast<int64_t>(p.size());
      if (row + n > std::min(lim.max_tokens, pass.cache_rows())) break;
      b.add(p.data(), n, row, 0, static_cast<int32_t>(i / n_kl));
      row += n;
    }
    engine::Outputs out;
    if (device_kl) {  // what the sweep does: KL where the logits are
      out.kl_rows = ref_rows.data();
      out.kl = kl.data();
    } else {  // the straightforward way: logits to the host, scored there
      logits.resize(static_cast<size_t>(b.num_seqs() * V));
      out.logits = logits.data();
    }
    pass.forward(b, out);
    w.prompt_tokens += b.num_tokens();
    ++w.kl_passes;
    w.kl_pass_s += seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    if (device_kl) {
      for (int64_t s = 0; s < b.num_seqs(); ++s) kl_sum += kl[static_cast<size_t>(s)];
      w.kl_score_s += seconds_since(t0);
      continue;
    }
    for (int64_t s = 0; s < b.num_seqs(); ++s) kl_sum += engine::kl_from_logits(base_lp.data(), logits.data() + s * V, V, lp);
    w.kl_score_s += seconds_since(t0);
  }
  if (!std::isfinite(kl_sum)) std::printf("note: non-finite KL sum (random weights)\n");

  t0 = std::chrono::steady_clock::now();
  std::vector<engine::GenerateRequest> reqs;
  for (int64_t k = 0; k < K; ++k) {
    for (const auto& p : eval_prompts) {
      reqs.push_back({p, static_cast<int32_t>(k)});
      w.prompt_tokens += static_cast<int64_t>(p.size());
    }
  }
  engine::GenerateOptions opts;
  opts.max_new_tokens = max_new;
  const std::vector<engine::GenerateResult> res = engine::generate(pass, tok, reqs, opts);
  for (const auto& g : res) w.decode_tokens += static_cast<int64_t>(g.ids.size());
  w.gen_s = seconds_since(t0);
  return w;
}

void bench_workflow(Model& md) {
  const model::ModelSpec& m = md.spec;
  constexpr int64_t kPrompts = 100, kMaxNew = 100;
  const engine::Limits limits{8192, 1024};
  // Prompt lengths 32..96 tokens (mean 64), about what the default prompt sets are with a chat template.
  std::vector<std::vector<int32_t>> kl_prompts, eval_prompts;
  int64_t longest = 0;
  for (int64_t p = 0; p < kPrompts; ++p) {
    const int64_t n1 = 32 + static_cast<int64_t>(splitmix64(1000 + p) % 65);
    const int64_t n2 = 32 + static_cast<int64_t>(splitmix64(2000 + p) % 65);
    kl_prompts.push_back(random_tokens(n1, m.vocab_size, 100000 + 1000 * p));
    eval_prompts.push_back(random_tokens(n2, m.vocab_size, 200000 + 1000 * p));
    longest = std::max({longest, n1, n2});
  }
  // The cache the app plans for generation (app/session.cpp).
  const int64_t rows = std::max(longest + kMaxNew, limits.max_tokens + limits.max_seqs * kMaxNew);
  cuda::CudaEngine eng(*md.weights, limits);
  cuda::DeviceKvCache cache(m, rows, eng.stream());
  const text::Tokenizer tok = text::Tokenizer::from_json_text(text::synthetic_tokenizer_json(m.vocab_size), "synthetic");
  std::vector<std::vector<float>> r;  // the directions file: L+1 unit vectors
  for (int64_t d = 0; d <= m.num_layers; ++d) r.push_back(unit_vector(m.hidden_size, 500 + static_cast<uint64_t>(d)));
  std::vector<float> base_lp(static_cast<size_t>(m.vocab_size));  // one baseline row serves every prompt
  {
    std::vector<float> x(base_lp.size());
    fill_uniform(x.data(), m.vocab_size, 2.0, 77);
    cpu::log_softmax(x.data(), base_lp.data(), 1, m.vocab_size);
  }
  std::printf("workflow %-13s per trial: %lld KL prompts (prefill, KL at the last token) + %lld evaluation prompts x %lld greedy tokens; prompts of 32-96 tokens; engine limits %lld tokens / %lld sequences per pass, %lld cache rows; row normalization full\n",
              md.name.c_str(), static_cast<long long>(kPrompts), static_cast<long long>(kPrompts),
              static_cast<long long>(kMaxNew), static_cast<long long>(limits.max_tokens),
              static_cast<long long>(limits.max_seqs), static_cast<long long>(rows));
  std::printf("workflow %-13s no EOS and no early exit: EOS ids are not passed to generate (a random model stops nowhere meaningful), so all %lld tokens of every response run\n",
              md.name.c_str(), static_cast<long long>(kMaxNew));
  cuda::DeviceBuffer base_dev(base_lp.size() * sizeof(float));
  cuda::copy_to_device(base_dev.get(), base_lp.data(), base_lp.size() * sizeof(float), eng.stream());
  const engine::KlReference device_ref{base_dev.as<float>(), 1};
  run_trial_batch(md, eng, cache, tok, r, kl_prompts, eval_prompts, base_lp, device_ref, true, 1, kMaxNew, 1);  // warm-up: GEMM plans

  // The straightforward baseline first: one trial per pass, every decode step launched eagerly,
  // logits copied to the host and scored there.
  double base_rate = 0;
  for (int64_t K : {int64_t{0}, int64_t{1}, int64_t{4}, int64_t{8}, int64_t{16}}) {
    const bool baseline = K == 0;
    eng.set_decode_graphs(!baseline);
    if (baseline) K = 1;
    WorkflowTimes best;
    for (int rep = 0; rep < 2; ++rep) {
      const WorkflowTimes w = run_trial_batch(md, eng, cache, tok, r, kl_prompts, eval_prompts, base_lp, device_ref,
                                              !baseline, K, kMaxNew, 10 + static_cast<uint64_t>(K * 10 + rep));
      if (rep == 0 || w.total() < best.total()) best = w;
    }
    const double rate = static_cast<double>(K) * 3600.0 / best.total();
    if (baseline) base_rate = rate;
    std::printf("workflow %-13s K=%2lld trials per pass, %-8s: %6.2f s per %lld trials (ablation set-up %.2f s, KL %lld passes %.2f s + scoring on the host %.2f s, generation %.2f s: %lld decode tokens, %lld prompt tokens) -> %7.0f trials/h, %.2fx of the baseline\n",
                md.name.c_str(), static_cast<long long>(K), baseline ? "baseline" : "ours", best.total(), static_cast<long long>(K), best.setup_s,
                static_cast<long long>(best.kl_passes), best.kl_pass_s, best.kl_score_s, best.gen_s,
                static_cast<long long>(best.decode_tokens), static_cast<long long>(best.prompt_tokens), rate,
                rate / base_rate);
    Json("workflow")
        .str("model", md.name)
        .integer("trials_per_pass", K)
        .str("decode", baseline ? "eager" : "graph")
        .str("kl", baseline ? "host" : "device")
        .integer("kl_prompts", kPrompts)
        .integer("eval_prompts", kPrompts)
        .integer("max_new_tokens", kMaxNew)
        .num("seconds", best.total())
        .num("setup_s", best.setup_s)
        .num("kl_pass_s", best.kl_pass_s)
        .num("kl_score_s", best.kl_score_s)
        .num("generate_s", best.gen_s)
        .integer("decode_tokens", best.decode_tokens)
        .integer("prompt_tokens", best.prompt_tokens)
        .num("trials_per_hour", rate)
        .num("speedup_vs_baseline", rate / base_rate)
        .print();
  }
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (cuda::device_count() == 0) {
    std::printf("bench_cuda skipped: no CUDA device (%s)\n", cuda::device_summary().c_str());
    return 0;
  }
  try {
    const Device dev = detect_device();
    int driver = 0, runtime = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    char date[32] = {};
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::printf("device %s (%d SMs, L2 %zu MiB), driver %d.%d, runtime %d.%d, cuBLASLt %zu, %s\n", dev.name.c_str(),
                dev.sm_count, dev.l2_bytes >> 20, driver / 1000, driver % 1000 / 10, runtime / 1000,
                runtime % 1000 / 10, cublasLtGetVersion(), date);
    if (dev.peak_tflops > 0) {
      std::printf("peaks: %.0f TFLOP/s dense BF16, %.2f TB/s HBM\n", dev.peak_tflops, dev.hbm_tbs);
    } else {
      std::printf("peaks: unknown for this device, figures without %%\n");
    }
    Json("device")
        .str("name", dev.name)
        .integer("driver", driver)
        .integer("runtime", runtime)
        .integer("cublaslt", static_cast<int64_t>(cublasLtGetVersion()))
        .str("date", date)
        .num("peak_tflops", dev.peak_tflops > 0 ? dev.peak_tflops : NAN)
        .num("hbm_tbs", dev.hbm_tbs > 0 ? dev.hbm_tbs : NAN)
        .print();

    cuda::Stream stream;
    const cudaStream_t s = stream.get();
    const std::vector<std::string> presets = {"llama-3.1-8b", "qwen2.5-7b"};
    constexpr int64_t kCtx = 256;
    const int64_t decode_batches[] = {64, 256, 1024};
    const engine::Limits limits{8192, 1024};
    std::unique_ptr<Model> first;  // llama-3.1-8b, kept for the workflow section

    std::printf("notes: prefill FLOPs = 2·(layer matmul weights)·tokens + 2·H·V per prompt (lm_head on each prompt's last\n"
                "       token, as the KL pass computes it) + causal attention 2·L·NH·HD·n(n+1) per n-token prompt; decode\n"
                "       bytes = bf16 layer weights (+ lm_head with ids) + B embedding rows + K/V rows read (B·(ctx+1) rows,\n"
                "       all layers); GEMM and attention timed as CUDA graphs / event pairs, medians; every layer of the\n"
                "       synthetic models holds the same random weights\n");
    // 1 and 2 per model.
    for (const std::string& preset : presets) {
      std::unique_ptr<Model> md = load_model(preset, s);
      std::printf("model    %-13s %s: %.2f GB bf16 on the device, loaded in %.1f s (same random layer %lld times)\n",
                  preset.c_str(), model::describe(md->spec).c_str(), static_cast<double>(md->weights->bytes()) / 1e9,
                  md->load_s, static_cast<long long>(md->spec.num_layers));
      {
        cuda::CudaEngine eng(*md->weights, limits);
        const int64_t rows = std::max(limits.max_tokens, decode_batches[2] * (kCtx + 1));
        cuda::DeviceKvCache cache(md->spec, rows, eng.stream());
        bench_prefill(dev, *md, eng, cache, 64, 128);
        bench_prefill(dev, *md, eng, cache, 16, 512);
        for (int64_t B : decode_batches) bench_decode(dev, *md, eng, cache, B, kCtx);
      }
      if (!first) first = std::move(md);
    }
    // 3.
    for (const std::string& preset : presets) bench_gemm(dev, preset, model::synthetic_model_spec(preset), s);
    // 4. (attention shapes of the 8B model)
    bench_attention(dev, first->spec, first->name, s);
    // 5.
    bench_workflow(*first);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda: %s\n", e.what());
    return 1;
  }
  return 0;
}
