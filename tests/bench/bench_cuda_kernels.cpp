// GPU figures 3, 4 and 6 of `make bench` (bench_cuda.cpp prints them): our GEMM calls against the
// best cuBLASLt algorithm at the model's shapes, attention throughput, and the MoE experts as grouped
// GEMMs against one cuBLASLt call per expert.
#include "bench_cuda_common.h"

#include "abl/backend/cuda/grouped_gemm.h"

namespace abl::bench_cuda {

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
      {"o_proj", m.o_dim(), H, true, false},
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
                      NKV, HD, 0, {}, scratch_bytes ? scratch.get() : nullptr, scratch_bytes, s);
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

// ---- 6. MoE experts: grouped GEMMs vs one cuBLASLt call per expert ----------------------------

// One MoE layer's experts (gate, up, down; no router, no activation) over T tokens routed uniformly
// at random: the grouped GEMMs the engine runs (three launches, sizes on the device, timed as a
// graph) against the per-expert cuBLASLt calls it ran before (3 per active expert with the sizes on
// the host, timed eagerly as the engine launched them, host-side call cost included).
void bench_moe(const Device& dev, const std::string& model_name, const model::ModelSpec& m, cudaStream_t s) {
  const int64_t H = m.hidden_size, E = m.num_experts, k = m.experts_per_token, Fm = m.moe_intermediate_size;
  const int64_t per = Fm * H;  // elements of one expert tensor (Fm·H is a multiple of 128: no padding)
  const int64_t stride = 3 * per;
  cuda::DeviceBuffer w(static_cast<size_t>(E * stride) * sizeof(bf16));
  fill_device_bf16(w.as<bf16>(), E * stride, 0.02, 61, s);
  const bf16* gate = w.as<bf16>();
  const bf16* up = gate + per;
  const bf16* down = gate + 2 * per;
  cuda::Gemm gemm;
  for (const int64_t T : {int64_t{64}, int64_t{512}, int64_t{4096}}) {
    const int64_t rows = T * k;
    std::vector<int32_t> counts(static_cast<size_t>(E), 0);
    uint64_t state = 99 + static_cast<uint64_t>(T);
    for (int64_t t = 0; t < T; ++t) {  // k distinct experts per token
      std::vector<int64_t> chosen;
      while (static_cast<int64_t>(chosen.size()) < k) {
        state = splitmix64(state);
        const auto e = static_cast<int64_t>(state % static_cast<uint64_t>(E));
        if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
      }
      for (int64_t e : chosen) ++counts[static_cast<size_t>(e)];
    }
    std::vector<int64_t> offsets(static_cast<size_t>(E + 1), 0);
    int64_t active = 0;
    for (int64_t e = 0; e < E; ++e) {
      offsets[static_cast<size_t>(e + 1)] = offsets[static_cast<size_t>(e)] + counts[static_cast<size_t>(e)];
      active += counts[static_cast<size_t>(e)] > 0 ? 1 : 0;
    }
    const int64_t tile_rows = cuda::grouped_tile_rows(rows, E);
    cuda::DeviceBuffer dcounts(static_cast<size_t>(E) * sizeof(int32_t));
    cuda::copy_to_device(dcounts.get(), counts.data(), dcounts.bytes(), s);
    cuda::DeviceBuffer doff(static_cast<size_t>(E + 1) * sizeof(int64_t)), dtiles(static_cast<size_t>(E + 1) * 4);
    cuda::group_offsets(dcounts.as<int32_t>(), E, tile_rows, doff.as<int64_t>(), dtiles.as<int32_t>(), s);
    const cuda::RowGroups groups{doff.as<int64_t>(), dtiles.as<int32_t>(), E, rows, tile_rows};
    cuda::DeviceBuffer x(static_cast<size_t>(rows * H) * sizeof(bf16)), g(static_cast<size_t>(rows * Fm) * sizeof(bf16));
    cuda::DeviceBuffer u(g.bytes()), y(static_cast<size_t>(rows * H) * sizeof(float));
    fill_device_bf16(x.as<bf16>(), rows * H, 1.0, 63, s);
    fill_device_bf16(g.as<bf16>(), rows * Fm, 1.0, 65, s);

    auto grouped = [&](int) {
      cuda::grouped_linear(x.as<bf16>(), gate, stride, groups, H, Fm, g.as<bf16>(), s);
      cuda::grouped_linear(x.as<bf16>(), up, stride, groups, H, Fm, u.as<bf16>(), s);
      cuda::grouped_linear(g.as<bf16>(), down, stride, groups, Fm, H, y.as<float>(), s);
    };
    auto per_expert = [&] {
      for (int64_t e = 0; e < E; ++e) {
        const int64_t o = offsets[static_cast<size_t>(e)], n = counts[static_cast<size_t>(e)];
        if (n == 0) continue;
        const bf16* we = gate + e * stride;
        gemm.linear(x.as<bf16>() + o * H, we, static_cast<const bf16*>(nullptr), g.as<bf16>() + o * Fm, n, H, Fm, s);
        gemm.linear(x.as<bf16>() + o * H, we + per, static_cast<const bf16*>(nullptr), u.as<bf16>() + o * Fm, n, H, Fm,
                    s);
        gemm.linear(g.as<bf16>() + o * Fm, we + 2 * per, static_cast<const float*>(nullptr), y.as<float>() + o * H, n,
                    Fm, H, s);
      }
    };
    grouped(0);
    const double grouped_ms = graph_ms_per_call(s, 1, 10, grouped);
    const double per_expert_ms = time_ms(s, 2, 10, per_expert);
    const double flops = 2.0 * static_cast<double>(rows) * 3.0 * static_cast<double>(per);
    const double bytes = static_cast<double>(active) * 3.0 * static_cast<double>(per) * sizeof(bf16);
    const double tflops = flops / (grouped_ms * 1e-3) / 1e12, tbs = bytes / (grouped_ms * 1e-3) / 1e12;
    std::printf("moe      %-13s T=%4lld (%5lld rows, %3lld of %3lld experts, tiles of %2lld): grouped %8.1f us "
                "%6.1f TFLOP/s%s %5.2f TB/s of expert weights%s; per-expert cuBLASLt %8.1f us; grouped/per-expert "
                "speed %5.2fx\n",
                model_name.c_str(), static_cast<long long>(T), static_cast<long long>(rows),
                static_cast<long long>(active), static_cast<long long>(E), static_cast<long long>(tile_rows),
                grouped_ms * 1e3, tflops, pct_text(pct(tflops, dev.peak_tflops), "peak").c_str(), tbs,
                pct_text(pct(tbs, dev.hbm_tbs), "HBM").c_str(), per_expert_ms * 1e3, per_expert_ms / grouped_ms);
    Json("moe")
        .str("model", model_name)
        .integer("tokens", T)
        .integer("rows", rows)
        .integer("active_experts", active)
        .integer("tile_rows", tile_rows)
        .num("grouped_us", grouped_ms * 1e3)
        .num("grouped_tflops", tflops)
        .num("grouped_weight_tbs", tbs)
        .num("per_expert_us", per_expert_ms * 1e3)
        .num("speedup_vs_per_expert", per_expert_ms / grouped_ms)
        .print();
  }
}

}  // namespace abl::bench_cuda
