// The options of the driver phases (residuals, directions, baseline, sweep, run), declared per
// section and parsed once, right after the command line and config file are read, into one typed
// struct per section. Each parse function reads its options from the variables_map and checks
// them; nothing after it reads the variables_map.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "abl/app/cli.h"
#include "abl/app/dist_options.h"
#include "abl/app/model_options.h"
#include "abl/engine/ablation_table.h"
#include "abl/io/prompt_dataset.h"

namespace abl::app {

// Sections: [output] out; [prompts] the direction sets; [residuals]; [directions]; [evaluation] KL
// and refusal prompt sets, markers, response length; [sweep]. `run` declares them all; model,
// engine and dist options are declared by model_options.h and dist_options.h.
void declare_output_options(OptionSet& o);
void declare_prompt_set_options(OptionSet& o);  // --good, --bad and their splits
void declare_residuals_options(OptionSet& o);
void declare_directions_options(OptionSet& o);
void declare_evaluation_options(OptionSet& o);
void declare_sweep_options(OptionSet& o);

// [output] --out, --rerun (and `run`'s --redo).
struct OutputOptions {
  std::string out;
  bool redo = false;
};
OutputOptions parse_output_options(const po::variables_map& vm);

// One prompt set as options name it: the file, its slice and the JSONL column, with the option
// names an error mentions (--kl-prompts falls back to the --good file, but errors still say
// --kl-prompts).
struct PromptSetSpec {
  io::PromptSource source;
  std::string file_option;   // e.g. "kl-prompts"
  std::string split_option;  // e.g. "kl-split"
  std::string column_option = "column";  // e.g. "kl-column"
};

// [prompts] --good, --bad, --good-split, --bad-split, --column, --good-column, --bad-column.
struct PromptSetOptions {
  PromptSetSpec good, bad;
};
PromptSetOptions parse_prompt_set_options(const po::variables_map& vm);

// [residuals] --winsorize-quantile in (0, 1], --no-full-residuals.
struct ResidualsOptions {
  double winsorize_quantile = 1.0;
  bool full_residuals = true;
};
ResidualsOptions parse_residuals_options(const po::variables_map& vm);

// [directions] --projected.
struct DirectionsOptions {
  bool projected = true;
};
DirectionsOptions parse_directions_options(const po::variables_map& vm);

// [evaluation] the KL and refusal prompt sets (their files default to `prompts`' good and bad files
// when the command has them), --refusal-markers, --max-response-length (> 0).
struct EvaluationOptions {
  PromptSetSpec kl, eval;
  std::string refusal_markers = "builtin";
  int64_t max_response_length = 100;
  bool max_response_length_given = false;  // not the default (sweep compares it with baseline.h5)
};
EvaluationOptions parse_evaluation_options(const po::variables_map& vm, const PromptSetOptions* prompts);

// [sweep], checked without reading any file (sweep_settings reads the grid).
struct SweepOptions {
  std::string search = "tpe";  // tpe, sobol, grid
  std::string grid;            // file, only with grid
  int64_t trials = 200;
  int64_t startup_trials = 60;
  int64_t per_batch = 0;  // --trials-per-batch, 0 = auto
  uint64_t seed = 1;
  engine::RowNorm row_norm = engine::RowNorm::full;
  bool ablate_experts = true;
  bool early_exit = true;
  bool store_responses = false;
  bool restart = false;
  std::string slice;  // I/N as given, "" = the whole sweep
  int64_t slice_i = 0, slice_n = 1;
};
SweepOptions parse_sweep_options(const po::variables_map& vm);

// Every option group a driver command declared, parsed (a group the command does not declare is
// absent). What Session and the phases read.
struct DriverOptions {
  std::optional<ModelOptions> model;
  std::optional<EngineOptions> engine;
  std::optional<DistOptions> dist;
  std::optional<OutputOptions> output;
  std::optional<PromptSetOptions> prompts;
  std::optional<ResidualsOptions> residuals;
  std::optional<DirectionsOptions> directions;
  std::optional<EvaluationOptions> evaluation;
  std::optional<SweepOptions> sweep;
  // Every option as resolved (provenance.h: options_json), for run.json.
  nlohmann::ordered_json options;
  // --rerun FILE: the run.json whose options these are ("" = none).
  std::string rerun;
};
DriverOptions parse_driver_options(const po::variables_map& vm);

// The group `opt` of a command that must have declared it (an error naming `what` otherwise).
[[noreturn]] void throw_missing_group(const char* what);
template <typename T>
const T& need(const std::optional<T>& opt, const char* what) {
  if (!opt) throw_missing_group(what);
  return *opt;
}

}  // namespace abl::app
