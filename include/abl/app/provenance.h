// run.json: what produced a run folder. Every command that works in a run folder (run, baseline,
// residuals, directions, sweep, evaluate) records there, once its inputs are checked, the abliterate version,
// build commit and flags, the command line, every option of the command as resolved (given or
// defaulted), the seed, the ranks and hosts, and the SHA-256 of the model's files and of the prompt,
// marker and grid files; the topology and backend are added once the engine is set up. An earlier
// record of the folder (a requeued job, an earlier phase) moves into its "history". `--rerun
// run.json` starts the same command with the recorded options (the command line still overrides
// them, e.g. --out) and refuses to run when a model or prompt file no longer has the recorded
// SHA-256; on the CPU backend with the same ranks the rerun gives the same trials (docs/phases.md).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "abl/app/cli.h"
#include "abl/parallel/runtime.h"

namespace abl::app {

struct DriverOptions;

inline constexpr const char* kRunRecordFile = "run.json";
inline constexpr const char* kRunRecordSchema = "abliterate-run";

// Every option in `vm` (given or defaulted) as name → JSON value, except --help, --config and
// --rerun: what a rerun gives back to the parser.
nlohmann::ordered_json options_json(const po::variables_map& vm);

// The options of the latest record of `command` in the run.json at `path` (the file's own record
// or one of its history), as name → text for the option parser. Errors name the file.
std::vector<std::pair<std::string, std::string>> rerun_options(const std::string& path, const std::string& command);

// Writes <out_dir>/run.json for `command` (collective over the world: the model's files are hashed
// by every rank, each a share; files whose size and modification time equal the folder's previous
// record keep their recorded hash). With opts.rerun, an error on every rank when a model or input
// file's SHA-256 differs from the rerun record's.
void write_run_record(parallel::Runtime& rt, const std::string& out_dir, const std::string& command,
                      const DriverOptions& opts);

// Rank 0 only: adds `key` = `value` to the record in <out_dir>/run.json (the topology and backend,
// known once the engine is set up).
void add_to_run_record(const std::string& out_dir, const std::string& key, const nlohmann::ordered_json& value);

}  // namespace abl::app
