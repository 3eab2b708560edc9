// What the GPU benchmarks share (bench_cuda.cpp, bench_cuda_kernels.cpp): the device and its peaks,
// timing, JSON lines, random data, the benchmark's weights and the model arithmetic.
#pragma once
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

namespace abl::bench_cuda {


using bf16 = __nv_bfloat16;

// ---- device, peaks, output ------------------------------------------------------------------

struct Device {
  std::string name;
  int sm_count = 0;
  size_t l2_bytes = 0;
  double peak_tflops = 0;  // dense BF16; 0 = unknown device (figures without %)
  double hbm_tbs = 0;      // TB/s; 0 = unknown
};

inline Device detect_device() {
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
inline double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : NAN; }
inline std::string pct_text(double p, const char* what) {
  return std::isfinite(p) ? fmt::format("  {:5.1f} % of {}", p, what) : std::string();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median over `reps` of the event time of `body()` on `s` (ms), after `warmup` untimed runs.
template <typename F>
inline double time_ms(cudaStream_t s, int warmup, int reps, F&& body) {
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
inline double graph_ms_per_call(cudaStream_t s, int calls, int reps, F&& launch) {
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

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform values with mean 0 and standard deviation `stddev` (counter-based: value i of stream
// `seed` is fixed).
inline void fill_uniform(float* x, int64_t n, double stddev, uint64_t seed) {
  const double half_width = stddev * std::sqrt(3.0);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = splitmix64(seed * 0x100000001b3ull + static_cast<uint64_t>(i));
    const double u = static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
    x[i] = static_cast<float>((2.0 * u - 1.0) * half_width);
  }
}

// Device bf16 buffer of n values: a random block of up to 4 Mi values uploaded once, then copied
// over the rest (repeats are harmless for timing).
inline void fill_device_bf16(bf16* d, int64_t n, double stddev, uint64_t seed, cudaStream_t s) {
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

inline std::vector<int32_t> random_tokens(int64_t n, int64_t V, uint64_t seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = static_cast<int32_t>(splitmix64(seed + static_cast<uint64_t>(i)) % static_cast<uint64_t>(V));
  return t;
}

// ---- the benchmark's weights ----------------------------------------------------------------

// Every layer returns the same random unit (generated once); the embedding and lm_head are one
// random (V, H) table. Matrices and biases ~ U with std 0.02 (the usual init scale), norms 1.
class RepeatedLayerSource final : public engine::WeightSource {
 public:
  explicit RepeatedLayerSource(const model::ModelSpec& spec) : spec_(spec), layout_(engine::layer_unit_layout(spec, 0)) {
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

inline std::unique_ptr<Model> load_model(const std::string& preset, cudaStream_t s) {
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
inline double layer_matmul_flops(const model::ModelSpec& m) {
  const double H = static_cast<double>(m.hidden_size), F = static_cast<double>(m.intermediate_size);
  const double QD = static_cast<double>(m.q_dim()), KVD = static_cast<double>(m.kv_dim());
  return 2.0 * static_cast<double>(m.num_layers) * (H * QD + 2.0 * H * KVD + QD * H + 3.0 * H * F);
}
inline double head_flops(const model::ModelSpec& m) {
  return 2.0 * static_cast<double>(m.hidden_size) * static_cast<double>(m.vocab_size);
}
// QKᵀ and PV of one query row against kv_len keys, all layers.
inline double attention_row_flops(const model::ModelSpec& m, int64_t kv_len) {
  return 4.0 * static_cast<double>(m.num_layers * m.num_heads * m.head_dim) * static_cast<double>(kv_len);
}
// Causal prefill of one n-token prompt: Σ_{i=1..n} 4·NH·HD·i = 2·NH·HD·n(n+1) per layer.
inline double attention_prefill_flops(const model::ModelSpec& m, int64_t n) {
  return 2.0 * static_cast<double>(m.num_layers * m.num_heads * m.head_dim) * static_cast<double>(n) *
         static_cast<double>(n + 1);
}
// bf16 bytes of the L layer units (every tensor a pass reads).
inline double layer_weight_bytes(const model::ModelSpec& m) {
  return 2.0 * static_cast<double>(engine::layer_unit_layout(m, 0).total) * static_cast<double>(m.num_layers);
}
// KV cache bytes of one token row, all layers, K and V.
inline double kv_row_bytes(const model::ModelSpec& m) {
  return 2.0 * 2.0 * static_cast<double>(m.num_layers * m.num_kv_heads * cuda::attention_head_dim(m));
}

// bench_cuda_kernels.cpp: 3. our GEMM calls against the best cuBLASLt algorithm; 4. attention.
void bench_gemm(const Device& dev, const std::string& model_name, const model::ModelSpec& m, cudaStream_t s);
void bench_attention(const Device& dev, const model::ModelSpec& m, const std::string& model_name, cudaStream_t s);
void bench_moe(const Device& dev, const std::string& model_name, const model::ModelSpec& m, cudaStream_t s);

}  // namespace abl::bench_cuda
