// Test helper: gpt-oss's experts as the released checkpoints hold them, in MXFP4. From a gpt-oss
// folder with plain experts (mlp.experts.gate_up_proj (E, H, 2*Fm), down_proj (E, Fm, H)), writes
// two folders:
//   `mxfp4`: each expert's (out, in) matrix (the plain tensors transposed back: (2*Fm, H) with gate
//            and up interleaved rows, (H, Fm)) quantized to MXFP4 blocks of 32 values as
//            mlp.experts.*_blocks (U8 (E, out, in/32, 16), the low nibble first) and *_scales (U8
//            (E, out, in/32), E8M0 with bias 127), and config.json with a quantization_config;
//   `plain`: the same quantized values dequantized, in the plain layout as BF16 (which holds every
//            MXFP4 value exactly), and the source's config.json.
// So `mxfp4` and `plain` are one model in two layouts. The expert width is first padded with zero
// units to a multiple of 32 (MXFP4 blocks the in dim; a unit with zero weights and biases adds
// nothing: gate 0 gives 0 · σ(0) = 0), intermediate_size in both configs with it. The other tensors
// and files are copied.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "abl/core/dtype.h"
#include "abl/io/safetensors.h"
#include "io/safetensors_test_util.h"

namespace abl::testing {

// Nearest E2M1 code of v (|v| <= 6 after scaling): 0-7 the magnitudes 0, .5, 1, 1.5, 2, 3, 4, 6, bit 3 the sign.
inline uint8_t e2m1_code(float v) {
  static const float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  uint8_t best = 0;
  for (uint8_t c = 1; c < 8; ++c) {
    if (std::fabs(std::fabs(v) - kMagnitude[c]) < std::fabs(std::fabs(v) - kMagnitude[best])) best = c;
  }
  return static_cast<uint8_t>(best | (v < 0 ? 8 : 0));
}

inline float model_value(uint8_t code, int e) {
  static const float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float m = std::ldexp(kMagnitude[code & 7], e);
  return code & 8 ? -m : m;
}

// Quantizes (rows, cols) row-major `w` (cols a multiple of 32); appends the packed bytes and scales and
// returns the dequantized values.
inline std::vector<float> quantize_mxfp4(const std::vector<float>& w, int64_t rows, int64_t cols, std::string& blocks,
                                         std::string& scales) {
  std::vector<float> back(w.size());
  for (int64_t b = 0; b < rows * cols / 32; ++b) {
    const float* x = w.data() + b * 32;
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[i]));
    const int e = amax > 0 ? static_cast<int>(std::ceil(std::log2(amax / 6.0f))) : 0;
    scales.push_back(static_cast<char>(e + 127));
    for (int i = 0; i < 32; i += 2) {
      const uint8_t lo = e2m1_code(std::ldexp(x[i], -e)), hi = e2m1_code(std::ldexp(x[i + 1], -e));
      blocks.push_back(static_cast<char>(lo | (hi << 4)));
      back[static_cast<size_t>(b * 32 + i)] = model_value(lo, e);
      back[static_cast<size_t>(b * 32 + i + 1)] = model_value(hi, e);
    }
  }
  return back;
}

inline std::string bf16_bytes(const std::vector<float>& v) {
  std::string out(v.size() * 2, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    const uint16_t b = f32_to_bf16(v[i]);
    std::memcpy(&out[i * 2], &b, 2);
  }
  return out;
}

inline bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Returns the number of expert tensors quantized.
inline int quantize_gpt_oss_experts(const std::string& src, const std::string& mxfp4, const std::string& plain) {
  namespace fs = std::filesystem;
  for (const std::string& dst : {mxfp4, plain}) {
    fs::create_directories(dst);
    for (const auto& e : fs::directory_iterator(src)) {
      if (e.is_regular_file() && e.path().extension() != ".safetensors") {
        fs::copy_file(e.path(), fs::path(dst) / e.path().filename(), fs::copy_options::overwrite_existing);
      }
    }
  }
  nlohmann::ordered_json config = nlohmann::ordered_json::parse(std::ifstream(fs::path(src) / "config.json"));
  const int64_t F = config["intermediate_size"].get<int64_t>(), Fp = (F + 31) / 32 * 32;
  config["intermediate_size"] = Fp;
  std::ofstream(fs::path(plain) / "config.json") << config.dump(2);
  config["quantization_config"] = {{"modules_to_not_convert", {"model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                               "model.embed_tokens", "lm_head"}},
                                   {"quant_method", "mxfp4"}};
  std::ofstream(fs::path(mxfp4) / "config.json") << config.dump(2);
  std::vector<RawTensor> q, p;
  io::SafetensorsReader r(src);
  int n = 0;
  for (const io::TensorInfo& t : r.tensors()) {
    std::string bytes(t.nbytes(), '\0');
    r.read_bytes(t, 0, t.nbytes(), bytes.data());
    const bool gate_up = ends_with(t.name, "mlp.experts.gate_up_proj"), down = ends_with(t.name, "mlp.experts.down_proj");
    if (ends_with(t.name, "mlp.experts.gate_up_proj_bias")) {
      // (E, 2F) -> (E, 2Fp): the padded units' biases are 0
      const int64_t E = t.shape[0];
      const std::vector<float> b = r.read_f32(t.name);
      std::vector<float> padded(static_cast<size_t>(E * 2 * Fp), 0.0f);
      for (int64_t e = 0; e < E; ++e) std::copy_n(b.begin() + e * 2 * F, 2 * F, padded.begin() + e * 2 * Fp);
      q.push_back({t.name, "BF16", {E, 2 * Fp}, bf16_bytes(padded)});
      p.push_back(q.back());
      continue;
    }
    if (!gate_up && !down) {
      q.push_back({t.name, t.dtype_name, t.shape, bytes});
      p.push_back({t.name, t.dtype_name, t.shape, std::move(bytes)});
      continue;
    }
    ++n;
    // plain (E, in, out) -> per expert (out, in), padded, quantized, dequantized back into (E, in, out)
    const int64_t E = t.shape[0], in0 = t.shape[1], out0 = t.shape[2];
    const int64_t in = down ? Fp : in0, out = gate_up ? 2 * Fp : out0;
    const std::vector<float> w = r.read_f32(t.name);
    std::string blocks, scales;
    std::vector<float> deq(static_cast<size_t>(E * in * out));
    for (int64_t e = 0; e < E; ++e) {
      std::vector<float> m(static_cast<size_t>(out * in), 0.0f);
      for (int64_t i = 0; i < in0; ++i) {
        for (int64_t o = 0; o < out0; ++o) {
          m[static_cast<size_t>(o * in + i)] = w[static_cast<size_t>((e * in0 + i) * out0 + o)];
        }
      }
      const std::vector<float> back = quantize_mxfp4(m, out, in, blocks, scales);
      for (int64_t i = 0; i < in; ++i) {
        for (int64_t o = 0; o < out; ++o) {
          deq[static_cast<size_t>((e * in + i) * out + o)] = back[static_cast<size_t>(o * in + i)];
        }
      }
    }
    q.push_back({t.name + "_blocks", "U8", {E, out, in / 32, 16}, std::move(blocks)});
    q.push_back({t.name + "_scales", "U8", {E, out, in / 32}, std::move(scales)});
    p.push_back({t.name, "BF16", {E, in, out}, bf16_bytes(deq)});
  }
  std::ofstream(fs::path(mxfp4) / "model.safetensors", std::ios::binary) << encode_safetensors(q);
  std::ofstream(fs::path(plain) / "model.safetensors", std::ios::binary) << encode_safetensors(p);
  return n;
}

}  // namespace abl::testing
