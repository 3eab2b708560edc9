// `abliterate export`: one trial of a sweep written as a Hugging Face model folder with the
// ablated weights W' (ablation/export.h). The trial's parameters come from trials.h5, its
// directions from directions.h5, its row normalization from the sweep's settings.
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "abl/ablation/directions.h"
#include "abl/ablation/export.h"
#include "abl/ablation/trial.h"
#include "abl/app/commands.h"
#include "abl/app/dist_options.h"
#include "abl/app/model_options.h"
#include "abl/app/run_folder.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
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
  ablation::export_model(model, table.directions, table.ablations[0], opts, &rt.world());
  log::info("export: wrote {}", opts.out_dir);
  return 0;
}

}  // namespace

Command export_command() {
  Command c;
  c.name = "export";
  c.summary = "write the model ablated by one trial as a Hugging Face folder (safetensors shards)";
  c.usage = "--run-dir DIR --trial K --out DIR [--max-shard-size 5GB] [--dtype keep|bf16|f16|f32]";
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
        ("dtype", po::value<std::string>()->default_value("keep"), "keep (each tensor's source dtype), bf16, f16 or f32")
        ("overwrite", po::bool_switch(), "replace an existing output folder");
  };
  c.run = [](const po::variables_map& vm) { return export_trial(parse_export_options(vm)); };
  return c;
}

}  // namespace abl::app
