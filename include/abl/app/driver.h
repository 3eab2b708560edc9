// The phases of an abliteration run (DESIGN.md §6) as functions over one Session, so that a
// phase subcommand and `run` (all phases in one MPI job) share the same code and the weights are
// loaded once. Every phase reads its inputs from the run folder (--out) and writes its file there.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "abl/engine/cpu/ablation_epilogue.h"
#include "abl/ablation/trial.h"
#include "abl/app/backend.h"
#include "abl/app/cli.h"
#include "abl/app/driver_options.h"
#include "abl/app/run_folder.h"
#include "abl/parallel/runtime.h"
#include "abl/engine/forward_pass.h"
#include "abl/io/prompt_dataset.h"
#include "abl/text/chat_template.h"
#include "abl/text/refusal_markers.h"
#include "abl/text/tokenizer.h"

namespace abl::app {

// The phases' options are declared and parsed in driver_options.h.

// What the phases of one process share. The runtime, model, tokenizer and chat template are set
// up on construction (cheap), the hang watchdog is started, the backend is agreed by every rank and
// the run folder is locked (when the command has --out); the weights and the engine are loaded on
// first use.
class Session {
 public:
  // `command` names the job in the run folder's lock.
  Session(DriverOptions opts, const std::string& command);
  ~Session();

  // The command's options (parse_driver_options); a phase reads the groups it needs with need().
  const DriverOptions& options() const { return opts_; }
  const std::string& command() const { return command_; }
  parallel::Runtime& rt() { return rt_; }
  bool is_root() const { return rt_.world_rank() == 0; }
  const std::string& model() const { return model_; }
  const model::ModelSpec& spec() const { return spec_; }
  const engine::Limits& limits() const { return limits_; }
  const text::Tokenizer& tokenizer() const { return *tok_; }
  const text::ChatTemplate& chat_template() const { return *tmpl_; }
  const std::string& system_prompt() const { return system_; }
  const std::string& out_dir() const { return out_dir_; }
  std::string out_path(const std::string& file) const;

  // The response prefix every rendered prompt ends with: --response-prefix when given, else the
  // one the run folder's baseline.h5 records, else detected (DESIGN.md §1; see baseline).
  const std::string& response_prefix();
  const std::string& response_prefix_source();  // "given", "baseline.h5", "detected"
  void set_response_prefix(std::string prefix, std::string source);

  std::vector<int32_t> encode_prompt(const std::string& user);  // rendered with the prefix
  // Every prompt of `set` (loaded as `prompts`) encoded with encode_prompt. A prompt that with
  // `max_new` response tokens does not fit the model's context is an error that names the option,
  // file and line of the longest one and counts the others; every rank encodes the same prompts
  // and throws the same AgreedError.
  std::vector<std::vector<int32_t>> encode_prompt_set(const std::vector<io::Prompt>& prompts,
                                                      const PromptSetSpec& set, int64_t max_new);

  // The engine (--backend), loaded on first use (collective over the world: every rank must call).
  Backend& backend();
  // A forward pass whose cache holds generation of up to `max_new` tokens after prompts of up to
  // `longest` tokens, with the backend's current ablation (AblationScope). A prompt plus its
  // response beyond the model's max_position_embeddings is an error.
  engine::ForwardPass& pass(int64_t longest, int64_t max_new);
  // Logs `phase`'s GPU memory of this rank (peak and current bytes of the engine's buffers, the
  // device's use) and restarts the peak for the next phase; nothing on the CPU backend or before
  // the engine is loaded. Local: no collective.
  void log_device_memory(const char* phase);

  // The model's fingerprint (run_folder.h), computed once by rank 0 and broadcast.
  const std::string& model_fingerprint();

  // Replaces the model by another of the same shape (`evaluate` scores a model against its base
  // in one job): the engine and its weights are dropped, the other model's spec, tokenizer and chat
  // template loaded; the response prefix and the topology stay. Different shapes are an error.
  void switch_model(const std::string& model);

 private:
  // An AgreedError on every rank unless all ranks derived the same ModelSpec.
  void check_same_spec_on_every_rank();
  void load_text_on_every_rank(const ModelOptions& m);
  DriverOptions opts_;
  std::string command_;
  parallel::Runtime rt_;
  std::string model_;
  model::ModelSpec spec_;
  engine::Limits limits_;
  std::unique_ptr<text::Tokenizer> tok_;
  std::unique_ptr<text::ChatTemplate> tmpl_;
  std::string system_;
  std::string out_dir_;
  std::optional<std::string> prefix_;
  std::string prefix_source_;
  std::unique_ptr<RunFolderLock> lock_;
  std::string fingerprint_;
  bool topology_done_ = false;
  BackendKind backend_kind_ = BackendKind::cpu;
  std::unique_ptr<Backend> backend_;
};

// Reads a prompt set on this process; a missing column's message names the set's column option.
std::vector<io::Prompt> read_prompt_set(const PromptSetSpec& set);
// The prompts of a set named by options, read by rank 0 and broadcast (every rank works on the
// same prompts; an error names the file and line on every rank).
std::vector<io::Prompt> load_prompt_set(parallel::Comm& comm, const PromptSetSpec& set);
// An AgreedError when a prompt of `set` (`prompts`, encoded as `ids`) plus `max_new` response tokens
// exceeds the model's `context` positions (none when context <= 0): it names the option, file and
// line of the longest prompt and counts the prompts that do not fit. Local: every rank decides alike.
void check_prompts_fit(const std::vector<io::Prompt>& prompts, const std::vector<std::vector<int32_t>>& ids,
                       const PromptSetSpec& set, int64_t max_new, int64_t context, const std::string& model,
                       const char* max_new_option = "max-response-length");
// --refusal-markers: builtin, or a file read by rank 0 and broadcast.
text::RefusalMarkers load_refusal_markers(parallel::Comm& comm, const std::string& option);

// Detects the common response prefix (DESIGN.md §1, the reference tool's rule): the common prefix
// of greedy responses to `prompts` (without any prefix), trailing spaces removed; one that opens a
// chain-of-thought block (<think>, <thought>, [THINK], <|channel|>analysis) is replaced by the
// closed empty block. Collective over the world.
std::string detect_response_prefix(Session& s, const std::vector<std::string>& prompts);
// The prefix rule alone, on given responses (tests).
std::string common_response_prefix(const std::vector<std::string>& responses);

// Greedy responses of the session's model (with the backend's current ablation) to this rank's
// block of `prompts` (encoded as `ids`), with their refusal verdicts; `refusals` is the sum over
// the world. `what` names the progress lines. Collective (baseline, evaluate).
struct RefusalBlock {
  size_t first = 0;  // this rank's first prompt
  std::vector<std::string> prompts, responses;
  std::vector<uint8_t> refused;
  int64_t refusals = 0;
};
RefusalBlock greedy_refusals(Session& s, const std::vector<std::vector<int32_t>>& ids,
                             const std::vector<io::Prompt>& prompts, const text::RefusalMarkers& markers,
                             int64_t max_new, const char* what);

// Work split helpers: the tokens of each prompt; this rank's contiguous block [begin, end) of
// items balanced by cost (parallel::split_contiguous over the world); the longest prompt.
std::vector<int64_t> prompt_costs(const std::vector<std::vector<int32_t>>& prompts);
std::pair<size_t, size_t> rank_block(const std::vector<int64_t>& cost, parallel::Runtime& rt);
int64_t longest_prompt(const std::vector<std::vector<int32_t>>& prompts);

// The inputs a phase file depends on, recorded in it (output_schema.h kInputsAttr): `run` reuses a
// file only when they equal the current ones. Collective (prompt sets are read by rank 0).
enum class Phase { baseline, residuals, directions };
nlohmann::ordered_json phase_inputs(Session& s, Phase phase);
// Rank 0 decides for every rank whether `phase`'s file in the run folder can be reused: false when
// absent or with --redo, true when its recorded inputs are this run's, else an error (--redo).
bool reuse_phase_file(Session& s, Phase phase);

// Every option and input file of the phases this command runs, checked before any of them runs
// (prompt sets and marker files read, ranges, the sweep's settings and grid). Collective.
void check_phase_options(Session& s);

void phase_residuals(Session& s);
void phase_directions(Session& s);
void phase_baseline(Session& s);
// The sweep's settings resolved from its options (driver_options.h) and the grid file (read by
// rank 0 and broadcast, parsed for the model's layers), without touching the run folder, so `run`
// can reject bad ones before any heavy work.
struct SweepSettings {
  std::string search;  // tpe, sobol, grid
  engine::RowNorm mode = engine::RowNorm::full;
  bool routed_experts = true;  // --ablate-experts
  uint64_t seed = 0;
  int64_t n_trials = 0;  // of this slice (grid: its trials); 0 = nothing to evaluate
  int64_t startup = 0;
  std::vector<ablation::TrialParams> grid;
  std::string grid_text;
  std::string slice;  // as given, "" = whole sweep
  int64_t first = 0, slice_i = 0, slice_n = 1;
  int64_t per_batch = 0;  // 0 = auto
  bool early_exit = true;
  bool store_responses = false;
  bool restart = false;
};
SweepSettings sweep_settings(parallel::Comm& comm, const SweepOptions& opts, int64_t num_layers);

// complete: every trial is in trials.h5 (renamed from .partial); interrupted: SIGTERM/SIGUSR1
// stopped it after a batch (exit with kExitResumable; the same command resumes it).
enum class SweepEnd { complete, interrupted };
// Sweep(s).run() (sweep.h).
SweepEnd phase_sweep(Session& s);

}  // namespace abl::app
