// Test helper: a copy of a per-expert MoE checkpoint with its experts stacked the way transformers 5
// holds them and saves them with save_original_format=False (conversion_mapping.py: the experts'
// gate and up weights merged along a new dim 0, then concatenated along dim 1; the down weights
// merged along dim 0; Mixtral's router renamed from block_sparse_moe.gate to mlp.gate, MiniMax-M2's
// block_sparse_moe.e_score_correction_bias to mlp.e_score_correction_bias).
#pragma once
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "abl/core/error.h"
#include "abl/io/safetensors.h"
#include "io/safetensors_test_util.h"

namespace abl::testing {

// Creates `dst` with every file of model folder `src` but its safetensors (config, tokenizer).
inline void copy_model_files_but_weights(const std::string& src, const std::string& dst) {
  namespace fs = std::filesystem;
  fs::create_directories(dst);
  for (const auto& e : fs::directory_iterator(src)) {
    if (e.is_regular_file() && e.path().extension() != ".safetensors" &&
        e.path().filename() != "model.safetensors.index.json") {
      fs::copy_file(e.path(), fs::path(dst) / e.path().filename(), fs::copy_options::overwrite_existing);
    }
  }
}

// Writes `dst`/model.safetensors with every MoE layer's experts as mlp.experts.gate_up_proj
// (E, 2*Fm, H) and mlp.experts.down_proj (E, H, Fm), in the place of the layer's first expert
// tensor, and copies the other files of `src` (config, tokenizer) but its other safetensors.
// `transpose_gate_up` writes gate_up_proj as (E, H, 2*Fm) instead (a layout we refuse). Returns
// the number of layers fused.
inline int fuse_experts(const std::string& src, const std::string& dst, bool transpose_gate_up = false) {
  namespace fs = std::filesystem;
  copy_model_files_but_weights(src, dst);
  static const std::regex kExpert(
      R"((.*layers\.\d+\.)(mlp|block_sparse_moe)\.experts\.(\d+)\.(gate_proj|w1|up_proj|w3|down_proj|w2)\.weight)");
  struct Layer {
    size_t at = 0;  // its two tensors' place in `out`
    std::string dtype;
    std::vector<int64_t> gate_shape, down_shape;  // (Fm, H), (H, Fm)
    std::map<int, std::string> gate, up, down;    // bytes by expert
  };
  std::map<std::string, Layer> layers;  // by "<prefix>layers.<n>."
  std::vector<RawTensor> out;
  io::SafetensorsReader r(src);
  for (const io::TensorInfo& t : r.tensors()) {
    std::string bytes(t.nbytes(), '\0');
    r.read_bytes(t, 0, t.nbytes(), bytes.data());
    std::smatch m;
    if (!std::regex_match(t.name, m, kExpert)) {
      // Mixtral's and MiniMax-M2's router (and MiniMax-M2's correction bias) move from block_sparse_moe. to mlp.
      std::string name = t.name;
      for (const std::string tail : {"gate.weight", "e_score_correction_bias"}) {
        const std::string from = ".block_sparse_moe." + tail;
        if (name.size() > from.size() && name.compare(name.size() - from.size(), from.size(), from) == 0) {
          name.replace(name.size() - from.size(), from.size(), ".mlp." + tail);
        }
      }
      out.push_back({name, t.dtype_name, t.shape, std::move(bytes)});
      continue;
    }
    auto [it, fresh] = layers.try_emplace(m[1].str());
    Layer& layer = it->second;
    if (fresh) {
      layer.at = out.size();
      out.resize(out.size() + 2);
      layer.dtype = t.dtype_name;
    }
    const int e = std::stoi(m[3].str());
    const std::string proj = m[4].str();
    if (proj == "gate_proj" || proj == "w1") {
      layer.gate[e] = std::move(bytes);
      layer.gate_shape = t.shape;
    } else if (proj == "up_proj" || proj == "w3") {
      layer.up[e] = std::move(bytes);
    } else {
      layer.down[e] = std::move(bytes);
      layer.down_shape = t.shape;
    }
  }
  for (auto& [prefix, layer] : layers) {
    const auto E = static_cast<int64_t>(layer.gate.size());
    ABL_CHECK(E > 0 && layer.up.size() == layer.gate.size() && layer.down.size() == layer.gate.size(),
              "{}: {} layer {} has an incomplete set of experts", __func__, src, prefix);
    const int64_t Fm = layer.gate_shape[0], H = layer.gate_shape[1];
    std::string gate_up, down;
    for (int e = 0; e < E; ++e) {
      gate_up += layer.gate.at(e) + layer.up.at(e);
      down += layer.down.at(e);
    }
    if (transpose_gate_up) {
      // (E, 2Fm, H) -> (E, H, 2Fm), element by element.
      const size_t es = gate_up.size() / static_cast<size_t>(E * 2 * Fm * H);
      std::string t(gate_up.size(), '\0');
      for (int64_t e = 0; e < E; ++e) {
        for (int64_t i = 0; i < 2 * Fm; ++i) {
          for (int64_t j = 0; j < H; ++j) {
            const size_t from = static_cast<size_t>((e * 2 * Fm + i) * H + j) * es;
            const size_t to = static_cast<size_t>((e * H + j) * 2 * Fm + i) * es;
            t.replace(to, es, gate_up, from, es);
          }
        }
      }
      gate_up = std::move(t);
    }
    const std::vector<int64_t> gate_up_shape =
        transpose_gate_up ? std::vector<int64_t>{E, H, 2 * Fm} : std::vector<int64_t>{E, 2 * Fm, H};
    out[layer.at] = {prefix + "mlp.experts.gate_up_proj", layer.dtype, gate_up_shape, std::move(gate_up)};
    out[layer.at + 1] = {prefix + "mlp.experts.down_proj", layer.dtype,
                         {E, layer.down_shape[0], layer.down_shape[1]}, std::move(down)};
  }
  std::ofstream(fs::path(dst) / "model.safetensors", std::ios::binary) << encode_safetensors(out);
  return static_cast<int>(layers.size());
}

// Writes `dst` with the experts of `src` (Qwen3-VL-MoE as released: per layer mlp.experts.gate_up_proj
// (E, H, 2*Fm) and mlp.experts.down_proj (E, Fm, H), transposed for x @ W) laid out again: stacked as
// transformers 5 holds them ((E, 2*Fm, H) and (E, H, Fm)), or, with `per_expert`, one tensor each
// (mlp.experts.{e}.gate_proj / up_proj / down_proj.weight, as the FP8 release names them). Copies the
// other files of `src`. Returns the number of layers laid out again.
inline int untranspose_experts(const std::string& src, const std::string& dst, bool per_expert) {
  namespace fs = std::filesystem;
  copy_model_files_but_weights(src, dst);
  // (E, a, b) -> (E, b, a), element by element.
  auto transpose = [](const std::string& x, int64_t E, int64_t a, int64_t b) {
    const size_t es = x.size() / static_cast<size_t>(E * a * b);
    std::string t(x.size(), '\0');
    for (int64_t e = 0; e < E; ++e) {
      for (int64_t i = 0; i < a; ++i) {
        for (int64_t j = 0; j < b; ++j) {
          t.replace(static_cast<size_t>((e * b + j) * a + i) * es, es, x, static_cast<size_t>((e * a + i) * b + j) * es,
                    es);
        }
      }
    }
    return t;
  };
  static const std::string kGateUp = "mlp.experts.gate_up_proj", kDown = "mlp.experts.down_proj";
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  std::vector<RawTensor> out;
  int layers = 0;
  io::SafetensorsReader r(src);
  for (const io::TensorInfo& t : r.tensors()) {
    if (ends_with(t.name, kDown)) continue;  // written with its gate_up_proj
    std::string bytes(t.nbytes(), '\0');
    r.read_bytes(t, 0, t.nbytes(), bytes.data());
    if (!ends_with(t.name, kGateUp)) {
      out.push_back({t.name, t.dtype_name, t.shape, std::move(bytes)});
      continue;
    }
    const std::string prefix = t.name.substr(0, t.name.size() - kGateUp.size());
    const io::TensorInfo& d = r.tensor(prefix + kDown);
    const int64_t E = t.shape[0], H = t.shape[1], Fm = t.shape[2] / 2;
    ABL_CHECK(d.shape == (std::vector<int64_t>{E, Fm, H}), "{}: {} is not (E, Fm, H)", __func__, d.name);
    std::string down(d.nbytes(), '\0');
    r.read_bytes(d, 0, d.nbytes(), down.data());
    const std::string gate_up = transpose(bytes, E, H, 2 * Fm);  // (E, 2Fm, H)
    down = transpose(down, E, Fm, H);                             // (E, H, Fm)
    ++layers;
    if (!per_expert) {
      out.push_back({prefix + kGateUp, t.dtype_name, {E, 2 * Fm, H}, gate_up});
      out.push_back({prefix + kDown, d.dtype_name, {E, H, Fm}, down});
      continue;
    }
    const size_t block = gate_up.size() / static_cast<size_t>(2 * E);  // one expert's (Fm, H)
    for (int64_t e = 0; e < E; ++e) {
      const std::string p = prefix + "mlp.experts." + std::to_string(e) + ".";
      out.push_back({p + "gate_proj.weight", t.dtype_name, {Fm, H}, gate_up.substr(2 * static_cast<size_t>(e) * block, block)});
      out.push_back({p + "up_proj.weight", t.dtype_name, {Fm, H}, gate_up.substr((2 * static_cast<size_t>(e) + 1) * block, block)});
      out.push_back({p + "down_proj.weight", d.dtype_name, {H, Fm}, down.substr(static_cast<size_t>(e) * block, block)});
    }
  }
  std::ofstream(fs::path(dst) / "model.safetensors", std::ios::binary) << encode_safetensors(out);
  return layers;
}

// Writes `dst` with Nemotron-H's tensors of `src` (backbone.*, experts one module each) as transformers 5 may write
// them: `stacked` — save_original_format=False: model.* and every MoE layer's experts as mixer.experts.up_proj
// (E, Fm, H) / down_proj (E, H, Fm) (no ".weight"); else — the reversed conversion mapping of a new model:
// backbone.embedding.weight (singular), experts one module each. Returns the number of MoE layers stacked.
inline int nemotron_h_transformers5_layout(const std::string& src, const std::string& dst, bool stacked) {
  namespace fs = std::filesystem;
  copy_model_files_but_weights(src, dst);
  static const std::regex kExpert(R"((.*layers\.\d+\.)mixer\.experts\.(\d+)\.(up_proj|down_proj)\.weight)");
  std::vector<RawTensor> out;
  std::map<std::string, std::map<std::string, std::pair<RawTensor, std::map<int, std::string>>>> stacks;
  io::SafetensorsReader r(src);
  for (const io::TensorInfo& t : r.tensors()) {
    std::string bytes(t.nbytes(), '\0');
    r.read_bytes(t, 0, t.nbytes(), bytes.data());
    std::string name = t.name;
    if (stacked && name.rfind("backbone.", 0) == 0) name.replace(0, 9, "model.");
    if (!stacked && name == "backbone.embeddings.weight") name = "backbone.embedding.weight";
    std::smatch m;
    if (!stacked || !std::regex_match(name, m, kExpert)) {
      out.push_back({name, t.dtype_name, t.shape, std::move(bytes)});
      continue;
    }
    auto& [head, experts] = stacks[m[1].str()][m[3].str()];
    if (experts.empty()) {
      head = {m[1].str() + "mixer.experts." + m[3].str(), t.dtype_name, t.shape, ""};
      out.push_back({});  // its place: after the tensors before the layer's first expert
      head.bytes = std::to_string(out.size() - 1);
    }
    experts[std::stoi(m[2].str())] = std::move(bytes);
  }
  for (auto& [prefix, projections] : stacks) {
    for (auto& [proj, stack] : projections) {
      RawTensor& t = stack.first;
      const size_t at = std::stoul(t.bytes);
      t.bytes.clear();
      for (const auto& [e, bytes] : stack.second) t.bytes += bytes;
      t.shape.insert(t.shape.begin(), static_cast<int64_t>(stack.second.size()));
      out[at] = std::move(t);
    }
  }
  std::ofstream(fs::path(dst) / "model.safetensors", std::ios::binary) << encode_safetensors(out);
  return static_cast<int>(stacks.size());
}

}  // namespace abl::testing
