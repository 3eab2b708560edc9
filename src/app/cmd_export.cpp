// `abliterate export`: one trial of a sweep written as a Hugging Face model folder with the
// ablated weights W', or as a PEFT adapter for the base model (ablation/export.h), with a model
// card and SHA256SUMS. The trial's parameters come from trials.h5, its directions from
// directions.h5, its row normalization from the sweep's settings.
#include <filesystem>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "abl/ablation/directions.h"
#include "abl/ablation/export.h"
#include "abl/ablation/trial.h"
#include "abl/app/command_line.h"
#include "abl/app/commands.h"
#include "abl/app/dist_options.h"
#include "abl/app/model_options.h"
#include "abl/app/run_folder.h"
#include "abl/core/build_info.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/sha256.h"
#include "abl/parallel/agree.h"
#include "abl/parallel/runtime.h"
#include "abl/io/driver_files.h"
#include "abl/io/safetensors.h"

namespace abl::app {
namespace {
namespace fs = std::filesystem;

// The options of `export`, parsed and checked once.
struct ExportCommandOptions {
  std::string run_dir;
  int64_t trial = 0;
  std::optional<std::string> model;  // none: the sweep's
  double hang_timeout = 1800;
  ablation::ExportOptions out;  // folder, overwrite, shard size, dtype
};

ExportCommandOptions parse_export_options(const po::variables_map& vm) {
  ExportCommandOptions o;
  o.run_dir = vm["run-dir"].as<std::string>();
  o.trial = vm["trial"].as<int64_t>();
  if (vm.count("model")) o.model = vm["model"].as<std::string>();
  o.out.out_dir = vm["out"].as<std::string>();
  o.out.overwrite = vm["overwrite"].as<bool>();
  const std::string format = vm["format"].as<std::string>();
  ABL_CHECK(format == "merged" || format == "adapter", "--format must be merged or adapter, got '{}'", format);
  o.out.format = format == "adapter" ? ablation::ExportFormat::adapter : ablation::ExportFormat::merged;
  o.out.adapter_rank = vm["adapter-rank"].as<int64_t>();
  ABL_CHECK(vm["adapter-rank"].defaulted() || o.out.format == ablation::ExportFormat::adapter,
            "--adapter-rank applies to --format adapter only");
  ABL_CHECK(o.out.adapter_rank >= 0, "--adapter-rank must be 0 (exact) or a positive rank, got {}", o.out.adapter_rank);
  o.out.max_shard_bytes = io::parse_byte_size(vm["max-shard-size"].as<std::string>());
  const std::string dtype = vm["dtype"].as<std::string>();
  if (dtype != "keep") {
    DType t{};
    std::string upper;
    for (char c : dtype) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    ABL_CHECK(parse_dtype(upper, &t), "--dtype must be keep, bf16, f16 or f32, got '{}'", dtype);
    o.out.dtype = t;
  }
  o.hang_timeout = checked_hang_timeout(vm["hang-timeout"].as<double>());
  return o;
}

// The base model's name for the model card and adapter_config.json: config.json's _name_or_path
// when it has one (a Hub id, usually), else the model folder as given.
std::string base_model_name(const std::string& model) {
  std::ifstream in(fs::path(model) / "config.json", std::ios::binary);
  const auto cfg = nlohmann::json::parse(in, nullptr, false);
  if (cfg.is_object() && cfg.contains("_name_or_path") && cfg["_name_or_path"].is_string()) {
    const std::string name = cfg["_name_or_path"].get<std::string>();
    if (!name.empty()) return name;
  }
  fs::path p = fs::absolute(model).lexically_normal();
  if (p.filename().empty() && p.has_parent_path()) p = p.parent_path();  // "dir/" names "dir"
  return p.string();
}

// README.md of the export: a Hugging Face model card (YAML front matter, then what was ablated and
// how to reproduce it).
struct CardFacts {
  std::string base_model, run_dir, directions_sha256;
  int64_t trial = 0, refusals = 0, n_refusal = 0, ranks = 1;
  double kl = 0;
  ablation::TrialParams params;
  engine::RowNorm mode = engine::RowNorm::full;
  bool routed_experts = true;
  ablation::ExportOptions opts;
};

std::string model_card(const CardFacts& c, const ablation::ExportResult& r) {
  const bool adapter = c.opts.format == ablation::ExportFormat::adapter;
  const bool dora = adapter && c.mode == engine::RowNorm::full && c.opts.adapter_rank == 0;
  std::string s = "---\n";
  s += "base_model: " + nlohmann::json(c.base_model).dump() + "\n";
  s += "tags:\n- abliterated\n- abliterate\n";
  s += fmt::format("library_name: {}\n", adapter ? "peft" : "transformers");
  s += "---\n\n";
  s += fmt::format("# {} (abliterated, trial {})\n\n", fs::path(c.base_model).filename().string(), c.trial);
  if (adapter) {
    s += fmt::format("A PEFT {} adapter for `{}` that removes the refusal direction the way "
                     "`abliterate` trial {} does: applied to the base model, it gives the ablated weights of the "
                     "merged export ({}).\n\n",
                     dora ? "DoRA (LoRA with use_dora)" : "LoRA", c.base_model, c.trial,
                     c.mode == engine::RowNorm::full && !dora ? "approximately: a truncated SVD, see below"
                                                               : "exactly, up to floating-point rounding");
  } else {
    s += fmt::format("`{}` with the refusal direction ablated from its weights by `abliterate` (trial {}).\n\n",
                     c.base_model, c.trial);
  }
  s += "## Trial\n\n| | |\n|---|---|\n";
  s += fmt::format("| trial | {} |\n", c.trial);
  s += fmt::format("| refusals | {}/{} |\n", c.refusals, c.n_refusal);
  s += fmt::format("| KL divergence | {:.6g} |\n", c.kl);
  s += fmt::format("| parameters | {} |\n", ablation::describe(c.params));
  s += fmt::format("| row normalization | {} |\n", engine::row_norm_name(c.mode));
  s += fmt::format("| ablate_experts | {} |\n", c.routed_experts ? "true" : "false");
  s += fmt::format("| directions | `{}` (directions.h5 SHA-256 `{}`) |\n\n", c.run_dir, c.directions_sha256);
  s += "| parameter | value |\n|---|---|\n";
  const auto values = ablation::param_values(c.params);
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string value = i == 0 ? std::string(ablation::direction_scope_name(c.params.scope))
                                     : fmt::format("{:.6g}", values[i]);
    s += fmt::format("| {} | {} |\n", ablation::kParamNames[i], value);
  }
  if (adapter) {
    s += "\n## Adapter\n\n";
    s += fmt::format("{}, r = lora_alpha = {} (scaling 1), factors in {}. Error against the ablated weights W' "
                     "(fp32), over every adapted module: relative ‖W' − W_eff‖_F / ‖W' − W‖_F = {:.3e}, largest "
                     "absolute {:.3e} (per module: abliterate_adapter.json).\n",
                     dora ? "DoRA" : "LoRA", c.mode == engine::RowNorm::full && !dora ? c.opts.adapter_rank : 1,
                     dtype_name(c.opts.dtype.value_or(DType::f32)), r.adapter_rel_error, r.adapter_max_abs_error);
  }
  s += "\n## Provenance\n\n";
  s += fmt::format("abliterate {}; exported{} with:\n\n```sh\n{}\n```\n\n", abl::build::version,
                   c.ranks > 1 ? fmt::format(" by {} MPI ranks", c.ranks) : std::string(), command_line());
  s += "`SHA256SUMS` lists the SHA-256 of every file here: `sha256sum -c SHA256SUMS`.\n";
  return s;
}

int export_trial(const ExportCommandOptions& eo) {
  const std::string& run_dir = eo.run_dir;
  const int64_t k = eo.trial;
  ablation::ExportOptions opts = eo.out;
  // Everything is checked before the weights, by rank 0 for every rank (a rank must never decide
  // alone, e.g. whether the output folder exists, while another already writes it): the trial, the
  // files, that directions.h5 is the one the sweep used, the folder.
  parallel::Runtime rt;
  start_watchdog(rt, eo.hang_timeout);
  const std::string tpath = (fs::path(run_dir) / io::schema::trials::kFile).string();
  const std::string dpath = (fs::path(run_dir) / io::schema::directions::kFile).string();
  const std::string model = parallel::root_string(rt.world(), [&] {
    const auto trials = io::schema::read_trials(tpath);
    ABL_CHECK(!trials.rows.empty(), "{} holds no trials", trials.path);
    ABL_CHECK(k >= 0 && k < static_cast<int64_t>(trials.rows.size()),
              "--trial {} is out of range: {} holds trials 0 to {}", k, trials.path, trials.rows.size() - 1);
    const auto dirs = io::schema::read_directions(dpath);
    const auto cfg = nlohmann::json::parse(trials.meta.config_json);
    const std::string used = cfg.value("directions", "");
    const std::string here = hex64(fnv1a(dirs.directions.data(), dirs.directions.size() * sizeof(double)));
    ABL_CHECK(used.empty() || used == here,
              "{} is not the directions.h5 the sweep of {} used (directions hash {}, the sweep's {}); export with the "
              "run folder whose directions the trials were evaluated with",
              dpath, trials.path, here, used);
    const std::string m = eo.model ? *eo.model : trials.meta.model;
    ABL_CHECK(!is_synthetic(m), "export needs a model folder, not {}", m);
    ABL_CHECK(!fs::exists(opts.out_dir) || opts.overwrite, "{} already exists (--overwrite replaces it)", opts.out_dir);
    const model::ModelSpec spec = model::load_model_spec(m);
    ABL_CHECK(dirs.depths == spec.num_layers + 1 && dirs.hidden == spec.hidden_size,
              "{} holds directions of {} depths x {}, but {} has {} layers of hidden size {}", run_dir, dirs.depths,
              dirs.hidden, m, spec.num_layers, spec.hidden_size);
    const std::string fp = cfg.value("model", "");
    ABL_CHECK(fp.empty() || fp == model_fingerprint(m),
              "{} is not the model the sweep of {} evaluated (its fingerprint differs; or an older abliterate made the "
              "sweep); give --model the sweep's model",
              m, trials.path);
    ABL_CHECK(trials.meta.param_names.size() == ablation::kParamNames.size(), "{}: unexpected parameters", trials.path);
    return m;
  });
  const auto trials = io::schema::read_trials(tpath);
  const auto dirs = io::schema::read_directions(dpath);
  const auto cfg = nlohmann::json::parse(trials.meta.config_json);
  const engine::RowNorm mode = engine::parse_row_norm(cfg.value("row_normalization", "full"));
  std::array<double, ablation::kParamNames.size()> v{};
  std::copy(trials.rows[static_cast<size_t>(k)].params.begin(), trials.rows[static_cast<size_t>(k)].params.end(), v.begin());
  const ablation::TrialParams params = ablation::params_from_values(v);
  const bool routed_experts = cfg.value("ablate_experts", true);
  const auto table = ablation::build_trial_table({params}, ablation::direction_rows(dirs), mode, routed_experts);

  log::info("export: trial {} ({} refusals, KL {:.4f}): {} ({} rows)", k, trials.rows[static_cast<size_t>(k)].refusals,
            trials.rows[static_cast<size_t>(k)].kl, ablation::describe(params), engine::row_norm_name(mode));
  opts.metadata.emplace_back("abliterate_trial", std::to_string(k));
  opts.metadata.emplace_back("abliterate_params", ablation::describe(params));
  CardFacts facts;
  facts.base_model = base_model_name(model);
  facts.run_dir = fs::absolute(run_dir).lexically_normal().string();
  facts.directions_sha256 = parallel::root_string(rt.world(), [&] { return sha256_file(dpath); });
  facts.trial = k;
  facts.ranks = rt.world().size();
  facts.refusals = trials.rows[static_cast<size_t>(k)].refusals;
  facts.n_refusal = trials.meta.n_refusal;
  facts.kl = trials.rows[static_cast<size_t>(k)].kl;
  facts.params = params;
  facts.mode = mode;
  facts.routed_experts = routed_experts;
  facts.opts = opts;
  opts.base_model_name = facts.base_model;
  opts.model_card = [facts](const ablation::ExportResult& r) { return model_card(facts, r); };
  const ablation::ExportResult r = ablation::export_model(model, table.directions, table.ablations[0], opts, &rt.world());
  if (opts.format == ablation::ExportFormat::adapter) {
    log::info("export: adapter error against the ablated weights: relative {:.3e}, max abs {:.3e}",
              r.adapter_rel_error, r.adapter_max_abs_error);
  }
  log::info("export: wrote {}", opts.out_dir);
  return 0;
}

}  // namespace

Command export_command() {
  Command c;
  c.name = "export";
  c.summary = "write the model ablated by one trial as a Hugging Face folder, or as a PEFT adapter";
  c.usage = "--run-dir DIR --trial K --out DIR [--format merged|adapter] [--adapter-rank R] [--max-shard-size 5GB] "
            "[--dtype keep|bf16|f16|f32]";
  c.declare = [](OptionSet& o) {
    o.group("model", "Model")
        ("model,m", po::value<std::string>()->value_name("DIR"), "source model folder (default: the sweep's)");
    o.group("export", "Export")
        ("hang-timeout", po::value<double>()->default_value(1800),
         "seconds a rank may make no progress before the job is ended with a report (0 = off)")
        ("run-dir", po::value<std::string>()->required()->value_name("DIR"), "run folder with trials.h5 and directions.h5")
        ("trial", po::value<int64_t>()->required(), "trial index (as `report` lists them)")
        ("out", po::value<std::string>()->required()->value_name("DIR"), "model folder to write")
        ("max-shard-size", po::value<std::string>()->default_value("5GB"), "largest safetensors shard (e.g. 2GB, 500MB)")
        ("format", po::value<std::string>()->default_value("merged"),
         "merged (the ablated model) or adapter (a PEFT LoRA/DoRA adapter for the base model)")
        ("adapter-rank", po::value<int64_t>()->default_value(0),
         "adapter, row normalization full: 0 = exact rank-1 DoRA; R > 0 = plain rank-R LoRA (truncated SVD, approximate)")
        ("dtype", po::value<std::string>()->default_value("keep"),
         "keep (each tensor's source dtype; adapter: f32), bf16, f16 or f32")
        ("overwrite", po::bool_switch(), "replace an existing output folder");
  };
  c.run = [](const po::variables_map& vm) { return export_trial(parse_export_options(vm)); };
  return c;
}

}  // namespace abl::app
