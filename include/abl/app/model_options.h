// Options shared by the subcommands that read a model, a prompt set or run the engine, and how a
// `--model` value (a folder or synthetic:<preset>) turns into a tokenizer and a chat template.
#pragma once
#include <string>

#include "abl/app/cli.h"
#include "abl/engine/batch.h"
#include "abl/io/prompt_dataset.h"
#include "abl/text/chat_template.h"
#include "abl/text/tokenizer.h"

namespace abl::app {

// --model (section [model]).
void declare_model_path_option(OptionSet& o);
// --model, --chat-template, --system-prompt, --response-prefix (section [model]).
void declare_model_options(OptionSet& o);
// The [model] options as parsed. A command that declares --model alone keeps the defaults of the
// others.
struct ModelOptions {
  std::string model;  // folder or synthetic:<preset>
  std::string chat_template = "auto";
  std::string system_prompt = "You are a helpful assistant.";
  std::string response_prefix = "auto";  // "auto" or the prefix as given
};
ModelOptions parse_model_options(const po::variables_map& vm);

// --prompts, --column, --split (section given, e.g. [prompts]).
void declare_prompt_options(OptionSet& o, const std::string& section);
io::PromptSource parse_prompt_options(const po::variables_map& vm);

// --threads, --batch-tokens, --max-seqs, --backend (section [engine]).
void declare_engine_options(OptionSet& o);
// The [engine] options, checked: --batch-tokens a positive number or auto (4096), --max-seqs
// positive, --threads 0 (automatic) or positive.
struct EngineOptions {
  int threads = 0;  // 0 = automatic (rank_threads)
  int64_t batch_tokens = 4096;
  int64_t max_seqs = 256;
  std::string backend = "auto";  // cpu, cuda, auto (resolve_backend / agree_backend)
};
EngineOptions parse_engine_options(const po::variables_map& vm);
// The engine's limits; sets this rank's CPU threads. `local_ranks`: the ranks of this host, which
// share its cores (rank_threads).
engine::Limits engine_limits(const EngineOptions& opts, int local_ranks = 1);

// CPU threads of one rank for --threads `requested` (0 = automatic): never more than the cores the
// rank may use — its CPU affinity set (Slurm's binding or cgroup), at most SLURM_CPUS_PER_TASK —
// and, when the ranks of a host are not bound to their own cores, that host's cores divided among
// its `local_ranks` ranks (OMP_NUM_THREADS, when set, replaces that share). An explicit request
// beyond the rank's cores is an error.
int rank_threads(int requested, int local_ranks);

bool is_synthetic(const std::string& model);
// The folder has a tokenizer.json or a tiktoken.model.
bool has_tokenizer(const std::string& model);
// The model's tokenizer: the folder's tokenizer.json, else its tiktoken.model (Kimi-K2,
// Moonlight), or a tokenizer.json named directly; synthetic models get the built-in byte-level
// one. Errors name the folder.
text::Tokenizer load_tokenizer(const std::string& model);
// --response-prefix for the commands outside a run (generate, prompts): "auto" means none.
std::string fixed_response_prefix(const ModelOptions& opts);
// --chat-template resolved for the model (synthetic models use ChatML under "auto").
text::ChatTemplate load_chat_template(const ModelOptions& opts);

}  // namespace abl::app
