// Export in four collective steps, each closed by a verdict every rank shares (parallel::agree_all), so
// that a failure on one rank fails all of them with its message instead of leaving the others
// waiting in a barrier:
//   1. every rank checks the arguments and plans the shards (headers only, no tensor data);
//   2. rank 0 creates "<out_dir>.partial/";
//   3. each rank writes the shard files assigned to it (round-robin), reading only their tensors;
//   4. rank 0 writes the index, config.json and tokenizer files and renames the folder into place.
// The weights go into a folder that only gets its final name once complete, so an interrupted
// export never leaves behind something that looks like a model.
#include "abl/ablation/export.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/sha256.h"
#include "abl/io/json_file.h"
#include "abl/io/safetensors.h"
#include "abl/model/model_spec.h"
#include "abl/model/weights.h"
#include "abl/parallel/agree.h"
#include "export_parts.h"

namespace abl::ablation {

namespace fs = std::filesystem;

namespace {

using export_parts::Item;
using export_parts::Job;

// Files that travel with the weights, copied when the source has them.
constexpr const char* kSideFiles[] = {
    "tokenizer.json",   "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "tokenizer.model",  "vocab.json",            "merges.txt",              "chat_template.jinja",
    "chat_template.json", "generation_config.json", "tiktoken.model",
    // Multimodal checkpoints (Gemma 3): the image processor's settings.
    "preprocessor_config.json", "processor_config.json",
};

// The side files the model folder has, and its remote code (*.py: the modeling, configuration
// and tokenizer modules config.json's and tokenizer_config.json's auto_map name, which
// transformers loads with trust_remote_code).
std::vector<fs::path> side_files(const std::string& model_dir) {
  std::vector<fs::path> out;
  for (const char* name : kSideFiles) {
    if (fs::is_regular_file(fs::path(model_dir) / name)) out.push_back(fs::path(model_dir) / name);
  }
  std::vector<fs::path> code;
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) return out;
  for (const fs::directory_entry& e : fs::directory_iterator(model_dir)) {
    if (e.is_regular_file() && e.path().extension() == ".py") code.push_back(e.path());
  }
  std::sort(code.begin(), code.end());
  out.insert(out.end(), code.begin(), code.end());
  return out;
}

// Elements converted per step when a tensor changes dtype: bounds the memory of a large embedding.
constexpr int64_t kConvertChunk = int64_t{1} << 24;

// config.json's spelling of a dtype.
const char* torch_dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f16: return "float16";
    case DType::bf16: return "bfloat16";
  }
  return "?";
}

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Runs `step` and shares the verdict with every rank of comm (null: just the step).
template <typename F>
void collectively(parallel::Comm* comm, F&& step) {
  std::string message;
  bool ok = true;
  try {
    step();
  } catch (const std::exception& e) {
    ok = false;
    message = e.what();
  }
  if (comm) {
    parallel::agree_all(*comm, ok, message);
  } else if (!ok) {
    throw Error(message);
  }
}

// `path` without a trailing separator, so "<path>.partial" is a sibling, not a child.
fs::path folder_path(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.filename().empty() && p.has_parent_path()) p = p.parent_path();
  return p;
}

bool is_within(const fs::path& inner, const fs::path& outer) {
  const fs::path rel = inner.lexically_relative(outer);
  return !rel.empty() && *rel.begin() != "..";
}

void check_trial(const model::ModelSpec& spec, const std::vector<std::vector<float>>& directions,
                 const engine::TrialAblation& trial, const std::string& where) {
  const size_t L = static_cast<size_t>(spec.num_layers);
  ABL_CHECK(trial.direction.size() == L && trial.lambda[0].size() == L && trial.lambda[1].size() == L,
            "{}: the trial gives {} directions and {}/{} weights (o_proj/down_proj) for a model of {} layers",
            where, trial.direction.size(), trial.lambda[0].size(), trial.lambda[1].size(), L);
  for (size_t i = 0; i < directions.size(); ++i) {
    ABL_CHECK(static_cast<int64_t>(directions[i].size()) == spec.hidden_size,
              "{}: direction {} has length {} for hidden size {}", where, i, directions[i].size(),
              spec.hidden_size);
  }
  for (size_t l = 0; l < L; ++l) {
    const int32_t d = trial.direction[l];
    ABL_CHECK(d >= 0 && static_cast<size_t>(d) < directions.size(),
              "{}: layer {} names direction {} but there are {}", where, l, d, directions.size());
    for (int c = 0; c < 2; ++c) {
      ABL_CHECK(std::isfinite(trial.lambda[static_cast<size_t>(c)][l]),
                "{}: layer {} has a non-finite weight", where, l);
    }
  }
}

Job prepare(const std::string& model_dir, const std::vector<std::vector<float>>& directions,
            const engine::TrialAblation& trial, const ExportOptions& opts, const fs::path& out,
            const fs::path& partial) {
  ABL_CHECK(!opts.out_dir.empty(), "export: no output folder given");
  ABL_CHECK(fs::is_directory(model_dir), "{}: not a model folder", model_dir);
  const fs::path src = fs::weakly_canonical(fs::absolute(folder_path(model_dir)));
  const fs::path dst = fs::weakly_canonical(fs::absolute(out));
  ABL_CHECK(src != dst, "{}: the output folder is the model folder being exported", out.string());
  // With --overwrite the output folder is removed at the end: it must not hold the source.
  ABL_CHECK(!is_within(src, dst), "{}: the output folder contains the model folder {}", out.string(),
            model_dir);
  const fs::path tmp = fs::weakly_canonical(fs::absolute(partial));
  ABL_CHECK(src != tmp && !is_within(src, tmp),
            "{}: the model folder is where export writes its partial output", model_dir);
  ABL_CHECK(opts.overwrite || !fs::exists(fs::symlink_status(out)),
            "{}: the output folder already exists (overwrite it with --overwrite)", out.string());
  ABL_CHECK(opts.max_shard_bytes > 0, "{}: the maximum shard size must be positive", out.string());

  Job job;
  job.spec = model::load_model_spec(model_dir);
  check_trial(job.spec, directions, trial, model_dir);
  if (opts.dtype && job.spec.norm_plus_one && job.spec.embed_scale != 1.0 && job.spec.torch_dtype &&
      *opts.dtype != *job.spec.torch_dtype) {
    // Gemma (the (1 + w) norms mark it) multiplies the embeddings by sqrt(H) in the model's dtype:
    // another dtype, another factor. (Granite's embedding_multiplier is a Python float: no rounding.)
    log::warn("export: {} scales its embeddings by sqrt(hidden_size) rounded to the model's dtype; written as "
              "{}, the factor transformers applies changes slightly",
              model_dir, dtype_name(*opts.dtype));
  }
  job.reader = std::make_unique<io::SafetensorsReader>(model_dir);
  const model::WeightCheck check = model::inspect_weights(job.spec, *job.reader);
  if (!check.problems.empty()) {
    std::string list;
    for (const std::string& p : check.problems) list += "\n  " + p;
    fail("{}: cannot export, the weights do not match config.json:{}", model_dir, list);
  }
  if (!check.unexpected.empty()) {
    log::info("export: {} tensor{} not used by {} copied unchanged", check.unexpected.size(),
              check.unexpected.size() == 1 ? "" : "s", job.spec.architecture);
  }

  // Output order: the model's module order (as transformers saves it), then any extra tensors by
  // name, so that shards hold consecutive layers. An MXFP4 tensor (its _blocks and _scales in the
  // files) is written dequantized under its plain name.
  std::vector<std::string> order;
  std::set<std::string, std::less<>> taken;
  // FP8 tensors (their "_scale_inv" beside them), the model's and any other (an MTP layer's): written
  // dequantized under their own names, the scales consumed.
  for (const io::TensorInfo& t : job.reader->tensors()) {
    const io::TensorInfo* scale = model::is_fp8(t) ? job.reader->find(model::fp8_scale_name(t.name)) : nullptr;
    if (!scale || job.spec.fp8_block_rows <= 0) continue;
    job.items[t.name].fp8_scale = scale;
    taken.insert(scale->name);
    job.dequantized = true;
  }
  for (const model::ExpectedWeight& w : model::expected_weights(job.spec)) {
    const io::TensorInfo* t = w.mxfp4 ? nullptr : job.reader->find(w.name);
    if ((!t && !w.mxfp4) || !taken.insert(w.name).second) continue;
    order.push_back(w.name);
    job.weights.emplace_back(w.name, w.layer);
    if (w.mxfp4) {
      Item& it = job.items[w.name];
      it.mxfp4_blocks = &job.reader->tensor(model::mxfp4_blocks_name(w.name));
      it.mxfp4_scales = &job.reader->tensor(model::mxfp4_scales_name(w.name));
      it.mxfp4_shape = w.file_shape;
      taken.insert(it.mxfp4_blocks->name);
      taken.insert(it.mxfp4_scales->name);
      job.dequantized = true;
    }
    // attn.o_proj, and mlp.down_proj: the dense MLP's, every expert's (a LatentMoE's fc2_latent_proj) and the
    // shared expert's.
    const int component =
        w.role == model::WeightRole::o_proj ? 0 : model::is_down_projection(job.spec, w.role) ? 1 : -1;
    if (component < 0) continue;
    ++job.num_ablatable;
    if (model::is_routed_down_projection(job.spec, w.role) && !trial.routed_experts) continue;
    if (trial.lambda[static_cast<size_t>(component)][static_cast<size_t>(w.layer)] != 0.0f) {
      if (opts.format == ExportFormat::adapter && t && model::is_fp8(*t)) {
        fail("export --format adapter: '{}' is FP8 (block-scaled): a LoRA adapter over an FP8 base is not written; "
             "export it merged (--format merged), which writes the whole model dequantized",
             w.name);
      }
      if (opts.format == ExportFormat::adapter && (w.mxfp4 || t->shape.size() == 3)) {
        fail("export --format adapter: '{}' holds the down projections of {} experts in one tensor (the fused "
             "layouts of transformers 5, gpt-oss and Qwen3-VL-MoE as released), which no PEFT LoRA module "
             "targets; export it merged (--format merged), or sweep with --ablate-experts false",
             w.name, w.file_shape[0]);
      }
      Item& it = job.items[w.name];
      it.component = component;
      it.layer = w.layer;
      it.transposed = model::is_transposed(w);
      ++job.num_ablated;
      job.ablated.push_back(w.name);
    }
  }
  for (const io::TensorInfo& t : job.reader->tensors()) {
    if (taken.insert(t.name).second) order.push_back(t.name);
  }

  std::vector<io::TensorSpec> specs;
  for (const std::string& name : order) {
    Item& it = job.items[name];
    if (!it.mxfp4_shape.empty()) {
      // transformers' dequantized layout: (E, in, out); BF16 unless --dtype says otherwise (BF16 holds
      // every MXFP4 value exactly).
      const std::vector<int64_t>& d = it.mxfp4_shape;
      it.dtype = opts.dtype.value_or(DType::bf16);
      specs.push_back(io::TensorSpec{name, it.dtype, {d[0], d[2], d[1]}});
      continue;
    }
    const io::TensorInfo* t = &job.reader->tensor(name);
    if (it.fp8_scale) {  // dequantized: BF16 unless --dtype says otherwise (what transformers' dequantize holds)
      it.src = t;
      it.dtype = opts.dtype.value_or(DType::bf16);
      specs.push_back(io::TensorSpec{t->name, it.dtype, t->shape});
      continue;
    }
    if (!t->dtype) {
      fail("{}: tensor '{}' has dtype {}, which export cannot write (supported: {})", t->file, t->name,
           t->dtype_name, io::supported_dtypes());
    }
    it.src = t;
    it.dtype = opts.dtype.value_or(*t->dtype);
    specs.push_back(io::TensorSpec{t->name, it.dtype, t->shape});
  }
  if (job.dequantized) {
    log::info("export: {} holds quantized weights (MXFP4 experts or FP8 blocks); they are written dequantized as {} "
              "(config.json without quantization_config)",
              model_dir, dtype_name(opts.dtype.value_or(DType::bf16)));
  }
  job.plan = io::plan_shards(partial.string(), std::move(specs), opts.max_shard_bytes);
  return job;
}

// Writes an MXFP4 tensor dequantized, in transformers' (E, in, out) layout; each (out, in) block
// ablated first when the trial ablates it (gpt-oss's down_proj: the block is the (H, Fm) matrix).
void write_mxfp4_tensor(const Job& job, const std::string& name, const Item& it,
                        const std::vector<std::vector<float>>& directions, const engine::TrialAblation& trial,
                        io::SafetensorsWriter& w) {
  const int64_t blocks = it.mxfp4_shape[0], rows = it.mxfp4_shape[1], cols = it.mxfp4_shape[2], n = rows * cols;
  const size_t out_size = dtype_size(it.dtype);
  std::vector<uint8_t> packed(static_cast<size_t>(n / 2)), scales(static_cast<size_t>(n / 32));
  std::vector<float> wf(static_cast<size_t>(n)), wt(wf.size());
  std::vector<unsigned char> bytes(wf.size() * out_size);
  for (int64_t b = 0; b < blocks; ++b) {
    job.reader->read_bytes(*it.mxfp4_blocks, static_cast<uint64_t>(b * n / 2), packed.size(), packed.data());
    job.reader->read_bytes(*it.mxfp4_scales, static_cast<uint64_t>(b * n / 32), scales.size(), scales.data());
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t byte = packed[static_cast<size_t>(i / 2)];
      wf[static_cast<size_t>(i)] = model::mxfp4_value(i % 2 == 0 ? byte & 0x0F : byte >> 4,
                                                       scales[static_cast<size_t>(i / 32)]);
    }
    if (it.component >= 0) {
      const size_t l = static_cast<size_t>(it.layer);
      ablate_weight(wf.data(), rows, cols, directions[static_cast<size_t>(trial.direction[l])].data(),
                    trial.lambda[static_cast<size_t>(it.component)][l], trial.mode);
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) wt[static_cast<size_t>(c * rows + r)] = wf[static_cast<size_t>(r * cols + c)];
    }
    convert_from_f32(wt.data(), it.dtype, bytes.data(), wt.size());
    w.write_part(name, static_cast<uint64_t>(b * n) * out_size, bytes.data(), bytes.size());
  }
}

// The output bytes of one tensor, written through `w`.
void write_tensor(const Job& job, const std::string& name, const Item& it,
                  const std::vector<std::vector<float>>& directions, const engine::TrialAblation& trial,
                  io::SafetensorsWriter& w) {
  if (it.mxfp4_blocks) {
    write_mxfp4_tensor(job, name, it, directions, trial, w);
    return;
  }
  const io::TensorInfo& t = *it.src;
  const size_t out_size = dtype_size(it.dtype);
  const auto read = [&](int64_t first, int64_t n, float* out) {
    if (it.fp8_scale) {
      model::read_fp8(*job.reader, t, job.spec.fp8_block_rows, job.spec.fp8_block_cols, first, n, out);
    } else {
      job.reader->read_f32(t, first, n, out);
    }
  };
  if (it.component >= 0) {
    // W' in fp32 from the source values, rounded once to the output dtype. A (E, H, Fm) tensor is
    // the down projections of E fused experts: each is ablated on its own, as when stored apart,
    // one at a time (a 235B model's stack holds 805 M values). gpt-oss stores each block
    // transposed, (Fm, H): it is ablated as its transpose, the (H, Fm) matrix it is.
    const bool stacked = t.shape.size() == 3;
    const int64_t blocks = stacked ? t.shape[0] : 1, stored_rows = stacked ? t.shape[1] : t.shape[0];
    const int64_t n = t.numel / std::max<int64_t>(blocks, 1), stored_cols = n / std::max<int64_t>(stored_rows, 1);
    const int64_t rows = it.transposed ? stored_cols : stored_rows, cols = n / std::max<int64_t>(rows, 1);
    const size_t l = static_cast<size_t>(it.layer);
    const float* v = directions[static_cast<size_t>(trial.direction[l])].data();
    std::vector<float> wf(static_cast<size_t>(n)), wt(it.transposed ? wf.size() : 0);
    std::vector<unsigned char> bytes(wf.size() * out_size);
    const auto transpose = [](const float* a, int64_t r, int64_t c, float* out) {
      for (int64_t i = 0; i < r; ++i) {
        for (int64_t j = 0; j < c; ++j) out[j * r + i] = a[i * c + j];
      }
    };
    for (int64_t b = 0; b < blocks; ++b) {
      read(b * n, n, wf.data());
      if (it.transposed) transpose(wf.data(), stored_rows, stored_cols, wt.data());
      float* w_out = it.transposed ? wt.data() : wf.data();
      ablate_weight(w_out, rows, cols, v, trial.lambda[static_cast<size_t>(it.component)][l], trial.mode);
      if (it.transposed) transpose(wt.data(), rows, cols, wf.data());
      convert_from_f32(wf.data(), it.dtype, bytes.data(), wf.size());
      w.write_part(t.name, static_cast<uint64_t>(b * n) * out_size, bytes.data(), bytes.size());
    }
  } else if (!it.fp8_scale && it.dtype == *t.dtype) {
    // Straight from the mapping: the bytes are the source's, bit for bit.
    w.write(t.name, job.reader->file(t.file_index).bytes(t), t.nbytes());
  } else {
    std::vector<float> f;
    std::vector<unsigned char> bytes;
    for (int64_t first = 0; first < t.numel; first += kConvertChunk) {
      const int64_t n = std::min(kConvertChunk, t.numel - first);
      f.resize(static_cast<size_t>(n));
      bytes.resize(static_cast<size_t>(n) * out_size);
      read(first, n, f.data());
      convert_from_f32(f.data(), it.dtype, bytes.data(), f.size());
      w.write_part(t.name, static_cast<uint64_t>(first) * out_size, bytes.data(), bytes.size());
    }
  }
}

// config.json as the source has it, byte for byte, unless --dtype changes its dtype or MXFP4 tensors
// were written dequantized (quantization_config goes); then it is rewritten with its key order and
// every other key kept.
void write_config(const std::string& model_dir, const fs::path& partial, const std::optional<DType>& dtype,
                  bool dequantized) {
  const fs::path path = fs::path(model_dir) / "config.json";
  const fs::path dest = partial / "config.json";
  nlohmann::ordered_json config;
  if (dtype || dequantized) {
    config = io::read_ordered_json_file(path.string());  // Nemotron-H's Infinity kept
    ABL_CHECK(config.is_object(), "{}: not a JSON object", path.string());
  }
  nlohmann::ordered_json updated = config;
  if (dequantized) updated.erase("quantization_config");
  if (dtype) {
    // Newer transformers write "dtype", older "torch_dtype": update whichever is there.
    const char* name = torch_dtype_name(*dtype);
    if (updated.contains("dtype")) updated["dtype"] = name;
    if (updated.contains("torch_dtype") || !updated.contains("dtype")) updated["torch_dtype"] = name;
  }
  if (updated != config) {
    io::write_json_file(dest.string(), updated, 2);
    return;
  }
  std::error_code ec;
  fs::copy_file(path, dest, fs::copy_options::overwrite_existing, ec);
  if (ec) fail("{}: cannot copy to {}: {}", path.string(), partial.string(), ec.message());
}

// Moves the finished folder into place; an old out_dir (overwrite) is set aside first and only
// removed once the new one has its name, so a failure leaves the old one in place.
void move_into_place(const fs::path& partial, const fs::path& out) {
  std::error_code ec;
  fs::path old;
  if (fs::exists(fs::symlink_status(out))) {
    old = out;
    old += fmt::format(".replaced.{}", static_cast<long>(::getpid()));
    fs::rename(out, old, ec);
    if (ec) fail("{}: cannot move the existing folder aside: {}", out.string(), ec.message());
  }
  fs::rename(partial, out, ec);
  if (ec) {
    std::error_code ignore;
    if (!old.empty()) fs::rename(old, out, ignore);
    fail("{}: cannot rename {} into place: {}", out.string(), partial.string(), ec.message());
  }
  if (!old.empty()) {
    fs::remove_all(old, ec);
    if (ec) {
      log::warn("{}: could not remove the replaced folder {}: {}", out.string(), old.string(), ec.message());
    }
  }
}

// README.md when there is a model card, then SHA256SUMS over every file in the folder (sorted;
// digests already known, the shards', are not computed again).
void write_card_and_checksums(const fs::path& partial, const std::string& card,
                              const std::map<std::string, std::string>& known) {
  if (!card.empty()) {
    std::ofstream out(partial / "README.md", std::ios::binary);
    out << card;
    out.close();
    ABL_CHECK(out, "{}: cannot write", (partial / "README.md").string());
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(partial)) {
    if (e.is_regular_file() && e.path().filename() != "SHA256SUMS") names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::string sums;
  for (const std::string& name : names) {
    const auto k = known.find(name);
    sums += (k != known.end() ? k->second : sha256_file((partial / name).string())) + "  " + name + "\n";
  }
  const fs::path path = partial / "SHA256SUMS";
  std::ofstream out(path, std::ios::binary);
  out << sums;
  out.close();
  ABL_CHECK(out, "{}: cannot write", path.string());
}

}  // namespace

ExportResult export_model(const std::string& model_dir, const std::vector<std::vector<float>>& directions,
                  const engine::TrialAblation& trial, const ExportOptions& opts, parallel::Comm* comm) {
  const auto t0 = std::chrono::steady_clock::now();
  const int rank = comm ? comm->rank() : 0, size = comm ? comm->size() : 1;
  const fs::path out = folder_path(opts.out_dir);
  fs::path partial = out;
  partial += ".partial";

  Job job;
  collectively(comm, [&] { job = prepare(model_dir, directions, trial, opts, out, partial); });
  const size_t n_shards = job.plan.num_shards();
  const bool adapter = opts.format == ExportFormat::adapter;
  if (adapter) {
    log::info("export: {} -> {}: adapter of the {} ablated o_proj/down_proj tensors (mode {})", model_dir,
              out.string(), job.num_ablated, engine::row_norm_name(trial.mode));
  } else {
    log::info("export: {} -> {}: {} of {} o_proj/down_proj tensors ablated (mode {}), {} tensors, {:.1f} MiB "
              "in {} shard{}{}",
              model_dir, out.string(), job.num_ablated, job.num_ablatable, engine::row_norm_name(trial.mode),
              job.items.size(), mib(job.plan.total_bytes), n_shards, n_shards == 1 ? "" : "s",
              opts.dtype ? fmt::format(", as {}", dtype_name(*opts.dtype)) : std::string());
  }

  // A stale .partial folder is what an earlier failed export left; it is never a result.
  collectively(comm, [&] {
    if (rank != 0) return;
    std::error_code ec;
    fs::remove_all(partial, ec);
    if (ec) fail("{}: cannot remove: {}", partial.string(), ec.message());
    fs::create_directories(partial, ec);
    if (ec) fail("{}: cannot create folder: {}", partial.string(), ec.message());
  });

  // Any failure from here on: rank 0 removes the partial folder once every rank has stopped.
  auto cleanup_and_rethrow = [&](const Error& e) {
    if (rank == 0) {
      std::error_code ec;
      fs::remove_all(partial, ec);
    }
    throw e;
  };

  std::map<std::string, std::string> metadata(opts.metadata.begin(), opts.metadata.end());
  metadata.emplace("format", "pt");  // transformers refuses safetensors files without it
  ExportResult result;
  if (adapter) {
    // Rank 0 computes and writes the whole adapter (small: rank × (in + out) values a module); the
    // other ranks wait for its verdict.
    try {
      collectively(comm, [&] {
        if (rank != 0) return;
        result = export_parts::write_adapter(job, directions, trial, opts, partial, metadata);
        write_card_and_checksums(partial, opts.model_card ? opts.model_card(result) : std::string(), {});
        move_into_place(partial, out);
      });
    } catch (const Error& e) {
      cleanup_and_rethrow(e);
    }
    // Every rank returns the same numbers.
    if (comm) {
      double errs[2] = {result.adapter_rel_error, result.adapter_max_abs_error};
      comm->broadcast(errs, sizeof(errs), 0);
      result.adapter_rel_error = errs[0];
      result.adapter_max_abs_error = errs[1];
    }
    log::info("export: wrote {} in {:.2f} s", out.string(), seconds_since(t0));
    return result;
  }

  uint64_t my_bytes = 0;
  size_t my_shards = 0;
  // Each rank hashes the shards it wrote (while they are in the page cache): 64 hex digits a
  // shard, gathered to every rank for SHA256SUMS.
  std::vector<char> my_digests(n_shards * 64, '0');
  try {
    collectively(comm, [&] {
      for (size_t s = static_cast<size_t>(rank); s < n_shards; s += static_cast<size_t>(size)) {
        const auto ts = std::chrono::steady_clock::now();
        io::SafetensorsWriter w((partial / job.plan.file_names[s]).string(), job.plan.tensors[s], metadata);
        for (const io::TensorSpec& spec : job.plan.tensors[s]) {
          write_tensor(job, spec.name, job.items.at(spec.name), directions, trial, w);
        }
        w.finish();
        const std::string hex = sha256_file((partial / job.plan.file_names[s]).string());
        std::copy(hex.begin(), hex.end(), my_digests.begin() + static_cast<std::ptrdiff_t>(s * 64));
        my_bytes += w.file_size();
        ++my_shards;
        log::debug("export: wrote {} ({} tensors, {:.1f} MiB) in {:.2f} s", job.plan.file_names[s],
                   job.plan.tensors[s].size(), mib(w.file_size()), seconds_since(ts));
      }
    });
  } catch (const Error& e) {
    cleanup_and_rethrow(e);
  }
  log::info("export: rank {} wrote {} shard{}, {:.1f} MiB in {:.2f} s", rank, my_shards,
            my_shards == 1 ? "" : "s", mib(my_bytes), seconds_since(t0));

  // Shard s was hashed by rank s mod size.
  std::vector<char> all_digests = my_digests;
  if (comm && size > 1 && n_shards > 0) {
    all_digests.resize(my_digests.size() * static_cast<size_t>(size));
    comm->all_gather(my_digests.data(), all_digests.data(), my_digests.size());
  }
  std::map<std::string, std::string> shard_sums;
  for (size_t s = 0; s < n_shards; ++s) {
    const char* d = all_digests.data() + (s % static_cast<size_t>(size)) * my_digests.size() + s * 64;
    shard_sums[job.plan.file_names[s]] = std::string(d, 64);
  }

  // Every shard is complete (the verdict above is the barrier): the small files, then the name.
  try {
    collectively(comm, [&] {
      if (rank != 0) return;
      io::write_shard_index(partial.string(), job.plan);
      write_config(model_dir, partial, opts.dtype, job.dequantized);
      for (const fs::path& from : side_files(model_dir)) {
        std::error_code ec;
        fs::copy_file(from, partial / from.filename(), fs::copy_options::overwrite_existing, ec);
        if (ec) fail("{}: cannot copy to {}: {}", from.string(), partial.string(), ec.message());
      }
      write_card_and_checksums(partial, opts.model_card ? opts.model_card(result) : std::string(), shard_sums);
      move_into_place(partial, out);
    });
  } catch (const Error& e) {
    cleanup_and_rethrow(e);
  }
  log::info("export: wrote {} ({:.1f} MiB in {} shard{}) in {:.2f} s", out.string(),
            mib(job.plan.total_bytes), n_shards, n_shards == 1 ? "" : "s", seconds_since(t0));
  return result;
}

void ablate_weight(float* w, int64_t out, int64_t in, const float* v, float lambda, engine::RowNorm mode) {
  std::vector<double> n(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < in; ++j) ss += static_cast<double>(w[i * in + j]) * w[i * in + j];
    n[static_cast<size_t>(i)] = std::sqrt(ss);
  }
  // u = vᵀW (none) or vᵀŴ (pre, full), a row vector of length `in`.
  std::vector<double> u(static_cast<size_t>(in), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    const double scale = mode == engine::RowNorm::none ? 1.0 : (n[static_cast<size_t>(i)] > 0 ? 1.0 / n[static_cast<size_t>(i)] : 0.0);
    for (int64_t j = 0; j < in; ++j) u[static_cast<size_t>(j)] += v[i] * scale * w[i * in + j];
  }
  for (int64_t i = 0; i < out; ++i) {
    float* row = w + i * in;
    const double ni = n[static_cast<size_t>(i)];
    switch (mode) {
      case engine::RowNorm::none:
        for (int64_t j = 0; j < in; ++j) row[j] = static_cast<float>(row[j] - lambda * v[i] * u[static_cast<size_t>(j)]);
        break;
      case engine::RowNorm::pre:
        for (int64_t j = 0; j < in; ++j) row[j] = static_cast<float>(row[j] - lambda * ni * v[i] * u[static_cast<size_t>(j)]);
        break;
      case engine::RowNorm::full: {
        if (ni == 0) break;
        std::vector<double> m(static_cast<size_t>(in));
        double ss = 0;
        for (int64_t j = 0; j < in; ++j) {
          m[static_cast<size_t>(j)] = row[j] / ni - lambda * v[i] * u[static_cast<size_t>(j)];
          ss += m[static_cast<size_t>(j)] * m[static_cast<size_t>(j)];
        }
        const double s = std::sqrt(ss);
        for (int64_t j = 0; j < in; ++j) row[j] = static_cast<float>(s > 0 ? m[static_cast<size_t>(j)] / s * ni : 0.0);
        break;
      }
    }
  }
}


}  // namespace abl::ablation
