// The driver phases' options: declared per config-file section, parsed and checked once into
// the structs of driver_options.h. Defaults mirror the reference tool (DESIGN.md §1): 400 + 400
// direction prompts, 100 KL prompts, 100 evaluation prompts, max_response_length 100, projected
// directions, 200 trials of which 60 start-up.
#include "abl/app/driver_options.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "abl/app/provenance.h"
#include "abl/core/error.h"

namespace abl::app {

void declare_output_options(OptionSet& o) {
  o.group("output", "Run folder")
      ("out", po::value<std::string>()->required()->value_name("DIR"),
       "run folder: each phase reads the files of the previous ones here and writes its own")
      ("rerun", po::value<std::string>()->value_name("RUN_JSON"),
       "the options of the run recorded in RUN_JSON (a run folder's run.json), checked against its inputs' "
       "SHA-256; options given here override them (e.g. --out NEW_DIR)");
}

void declare_prompt_set_options(OptionSet& o) {
  o.group("prompts", "Direction prompts")
      ("good", po::value<std::string>()->default_value("bundled:prompts/harmless.txt")->value_name("FILE|DIR"),
       "harmless prompts (text, JSON Lines, JSON, CSV, TSV or Parquet), or a Hugging Face dataset folder (a "
       "download or a Hub cache folder; --good-split names its split); bundled:FILE names a file of the bundled "
       "data (share/abliterate)")
      ("bad", po::value<std::string>()->default_value("bundled:prompts/harmful.txt")->value_name("FILE|DIR"),
       "harmful prompts (any format of --good); default: the bundled set, as --good")
      ("good-split", po::value<std::string>()->default_value("[:400]"), "the good prompts for directions: a slice, a dataset folder's split, or both (train[:400])")
      ("bad-split", po::value<std::string>()->default_value("[:400]"), "the bad prompts for directions (as --good-split)")
      ("column", po::value<std::string>()->default_value("text"),
       "the field (JSON) or column (CSV, TSV, Parquet) holding the prompt, in every prompt file")
      ("good-column", po::value<std::string>()->default_value("")->value_name("NAME"),
       "the column of the --good file (default: --column)")
      ("bad-column", po::value<std::string>()->default_value("")->value_name("NAME"),
       "the column of the --bad file (default: --column)");
}

void declare_residuals_options(OptionSet& o) {
  o.group("residuals", "Residuals")
      ("winsorize-quantile", po::value<double>()->default_value(1.0),
       "clamp each residual's components to ±this quantile of their magnitudes (1 = off)")
      ("no-full-residuals", po::bool_switch(), "write only the class means, not every prompt's residuals");
}

void declare_directions_options(OptionSet& o) {
  o.group("directions", "Directions")
      ("projected", po::value<bool>()->default_value(true),
       "remove from each direction its component along the good mean (true/false)");
}

void declare_evaluation_options(OptionSet& o) {
  o.group("evaluation", "Evaluation prompts and refusal detection")
      ("kl-prompts", po::value<std::string>()->default_value("")->value_name("FILE|DIR"),
       "harmless prompts for the KL divergence (default: the --good file; evaluate: the bundled set)")
      ("kl-split", po::value<std::string>()->default_value("[400:500]"), "the KL prompts (as --good-split; test[:100] for a folder's test split)")
      ("kl-column", po::value<std::string>()->default_value("")->value_name("NAME"),
       "the column of the KL prompt file (default: that of the --good file when it is the same, else --column)")
      ("eval-prompts", po::value<std::string>()->default_value("")->value_name("FILE|DIR"),
       "harmful prompts whose refusals are counted (default: the --bad file; evaluate: the bundled set)")
      ("eval-split", po::value<std::string>()->default_value("[400:500]"), "the evaluation prompts (as --kl-split)")
      ("eval-column", po::value<std::string>()->default_value("")->value_name("NAME"),
       "the column of the evaluation prompt file (default: that of the --bad file when it is the same, else --column)")
      ("refusal-markers", po::value<std::string>()->default_value("builtin")->value_name("FILE"),
       "marker list, one per line, or builtin (the list of inputs/refusal_markers.txt)")
      ("max-response-length", po::value<int64_t>()->default_value(100),
       "tokens generated per evaluation prompt at most");
}

void declare_sweep_options(OptionSet& o) {
  o.group("sweep", "Trial search")
      ("search", po::value<std::string>()->default_value("tpe"),
       "tpe (Sobol start-up, then batched multi-objective TPE), sobol, or grid (--grid FILE)")
      ("grid", po::value<std::string>()->default_value("")->value_name("FILE"),
       "grid file (inputs/grids/): values or ranges per parameter")
      ("trials", po::value<int64_t>()->default_value(200), "trials to evaluate in total (grid: at most)")
      ("startup-trials", po::value<int64_t>()->default_value(60), "Sobol trials before TPE starts")
      ("trials-per-batch", po::value<std::string>()->default_value("auto"),
       "trials evaluated together in one set of forward passes, or auto (fill every rank's passes)")
      ("seed", po::value<int64_t>()->default_value(1), "seed of the Sobol shift and of TPE (>= 0)")
      ("row-normalization", po::value<std::string>()->default_value("full"), "none, pre or full")
      ("ablate-experts", po::value<bool>()->default_value(true),
       "mixture-of-experts models: ablate every routed expert's down projection (a LatentMoE: fc2_latent_proj) "
       "with the shared expert's and the dense MLPs' (false: only those, as tools that skip fused expert tensors do)")
      ("early-exit", po::value<bool>()->default_value(true),
       "stop a response at its first refusal marker (the count is the same; only time is saved)")
      ("store-responses", po::bool_switch(), "keep every trial's responses in trials.h5")
      ("restart", po::bool_switch(), "discard an existing trials.h5 whose settings differ instead of failing")
      ("slice", po::value<std::string>()->default_value("")->value_name("I/N"),
       "evaluate only slice I (0-based) of N of the trials (sobol, grid) into trials.slice-I-of-N.h5; "
       "`abliterate merge` combines the slices");
}

void throw_missing_group(const char* what) { fail("this command has no {} options", what); }

OutputOptions parse_output_options(const po::variables_map& vm) {
  OutputOptions o;
  o.out = vm["out"].as<std::string>();
  if (vm.count("redo")) o.redo = vm["redo"].as<bool>();
  return o;
}

namespace {

PromptSetSpec prompt_set_spec(std::string path, std::string split, std::string column, std::string file_option,
                              std::string split_option, std::string column_option) {
  PromptSetSpec p;
  p.column_option = std::move(column_option);
  p.source.path = std::move(path);
  p.source.split = std::move(split);
  p.source.column = std::move(column);
  p.file_option = std::move(file_option);
  p.split_option = std::move(split_option);
  return p;
}

// A positive count or "auto" (0); anything else is an error with `message`.
int64_t count_or_auto(const std::string& text, const char* message) {
  if (text == "auto") return 0;
  size_t used = 0;
  int64_t n = 0;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
    n = 0;
  }
  if (used != text.size()) n = 0;
  ABL_CHECK(n > 0, "{} must be 'auto' or a positive number, got '{}'", message, text);
  return n;
}

// The --X-column option when given, else `fallback`.
std::string column_option(const po::variables_map& vm, const char* name, const std::string& fallback) {
  const std::string given = vm.count(name) ? vm[name].as<std::string>() : "";
  return given.empty() ? fallback : given;
}

}  // namespace

PromptSetOptions parse_prompt_set_options(const po::variables_map& vm) {
  PromptSetOptions o;
  const std::string column = vm["column"].as<std::string>();
  o.good = prompt_set_spec(vm["good"].as<std::string>(), vm["good-split"].as<std::string>(),
                           column_option(vm, "good-column", column), "good", "good-split",
                           "good-column");
  o.bad = prompt_set_spec(vm["bad"].as<std::string>(), vm["bad-split"].as<std::string>(),
                          column_option(vm, "bad-column", column), "bad", "bad-split",
                          "bad-column");
  return o;
}

ResidualsOptions parse_residuals_options(const po::variables_map& vm) {
  ResidualsOptions o;
  o.winsorize_quantile = vm["winsorize-quantile"].as<double>();
  ABL_CHECK(o.winsorize_quantile > 0.0 && o.winsorize_quantile <= 1.0, "--winsorize-quantile must be in (0, 1], got {}",
            o.winsorize_quantile);
  o.full_residuals = !vm["no-full-residuals"].as<bool>();
  return o;
}

DirectionsOptions parse_directions_options(const po::variables_map& vm) {
  DirectionsOptions o;
  o.projected = vm["projected"].as<bool>();
  return o;
}

EvaluationOptions parse_evaluation_options(const po::variables_map& vm, const PromptSetOptions* prompts) {
  EvaluationOptions o;
  std::string kl = vm["kl-prompts"].as<std::string>();
  std::string eval = vm["eval-prompts"].as<std::string>();
  // A file given on its own takes --column; the default file (or the same file named again) that
  // of its direction set.
  const std::string column = vm.count("column") ? vm["column"].as<std::string>() : "text";
  std::string kl_column = column, eval_column = column;
  if (prompts) {
    if (kl.empty()) kl = prompts->good.source.path;
    if (eval.empty()) eval = prompts->bad.source.path;
    if (kl == prompts->good.source.path) kl_column = prompts->good.source.column;
    if (eval == prompts->bad.source.path) eval_column = prompts->bad.source.column;
  }
  o.kl = prompt_set_spec(kl, vm["kl-split"].as<std::string>(), column_option(vm, "kl-column", kl_column),
                         "kl-prompts", "kl-split", "kl-column");
  o.eval = prompt_set_spec(eval, vm["eval-split"].as<std::string>(), column_option(vm, "eval-column", eval_column),
                           "eval-prompts", "eval-split", "eval-column");
  o.refusal_markers = vm["refusal-markers"].as<std::string>();
  o.max_response_length = vm["max-response-length"].as<int64_t>();
  o.max_response_length_given = !vm["max-response-length"].defaulted();
  ABL_CHECK(o.max_response_length > 0, "--max-response-length must be positive, got {}", o.max_response_length);
  return o;
}

SweepOptions parse_sweep_options(const po::variables_map& vm) {
  SweepOptions o;
  o.search = vm["search"].as<std::string>();
  ABL_CHECK(o.search == "tpe" || o.search == "sobol" || o.search == "grid",
            "--search must be tpe, sobol or grid, got '{}'", o.search);
  o.row_norm = engine::parse_row_norm(vm["row-normalization"].as<std::string>());
  o.ablate_experts = vm["ablate-experts"].as<bool>();
  const int64_t seed = vm["seed"].as<int64_t>();
  ABL_CHECK(seed >= 0, "--seed must be >= 0, got {}", seed);
  o.seed = static_cast<uint64_t>(seed);
  o.trials = vm["trials"].as<int64_t>();
  o.startup_trials = vm["startup-trials"].as<int64_t>();
  ABL_CHECK(o.trials >= 0, "--trials must be >= 0, got {}", o.trials);
  ABL_CHECK(o.startup_trials >= 0, "--startup-trials must be >= 0, got {}", o.startup_trials);
  o.grid = vm["grid"].as<std::string>();
  if (o.search == "grid") {
    ABL_CHECK(!o.grid.empty(), "--search grid needs --grid FILE (see inputs/grids/)");
  } else {
    ABL_CHECK(o.grid.empty(), "--grid is only used with --search grid");
  }
  o.slice = vm["slice"].as<std::string>();
  if (!o.slice.empty()) {
    char sep = 0;
    std::istringstream in(o.slice);
    in >> o.slice_i >> sep >> o.slice_n;
    ABL_CHECK(!in.fail() && in.peek() == EOF && sep == '/' && o.slice_n >= 1 && o.slice_i >= 0 && o.slice_i < o.slice_n,
              "--slice must be I/N with 0 <= I < N, got '{}'", o.slice);
    ABL_CHECK(o.search != "tpe", "--slice needs --search sobol or grid: TPE proposes each batch from the previous ones");
  }
  o.per_batch = count_or_auto(vm["trials-per-batch"].as<std::string>(), "--trials-per-batch");
  o.early_exit = vm["early-exit"].as<bool>();
  o.store_responses = vm["store-responses"].as<bool>();
  o.restart = vm["restart"].as<bool>();
  return o;
}

DriverOptions parse_driver_options(const po::variables_map& vm) {
  // A group is declared when its first option is in the map (each has a default or is required).
  DriverOptions o;
  if (vm.count("model")) o.model = parse_model_options(vm);
  if (vm.count("batch-tokens")) o.engine = parse_engine_options(vm);
  if (vm.count("sharding")) o.dist = parse_dist_options(vm);
  if (vm.count("out")) o.output = parse_output_options(vm);
  if (vm.count("good-split")) o.prompts = parse_prompt_set_options(vm);
  if (vm.count("winsorize-quantile")) o.residuals = parse_residuals_options(vm);
  if (vm.count("projected")) o.directions = parse_directions_options(vm);
  if (vm.count("kl-split")) o.evaluation = parse_evaluation_options(vm, o.prompts ? &*o.prompts : nullptr);
  if (vm.count("search")) o.sweep = parse_sweep_options(vm);
  o.options = options_json(vm);
  if (vm.count("rerun")) o.rerun = vm["rerun"].as<std::string>();
  return o;
}

}  // namespace abl::app
