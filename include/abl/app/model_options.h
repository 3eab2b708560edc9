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
// --prompts, --column, --split (section given, e.g. [prompts]).
void declare_prompt_options(OptionSet& o, const std::string& section);
io::PromptSource prompt_source(const po::variables_map& vm);
// --threads, --batch-tokens, --max-seqs, --backend (section [engine]).
void declare_engine_options(OptionSet& o);
// `local_ranks`: the ranks of this host, which share its cores (threads below).
engine::Limits engine_limits(const po::variables_map& vm, int local_ranks = 1);

// CPU threads of one rank for --threads `requested` (0 = automatic): never more than the cores the
// rank may use — its CPU affinity set (Slurm's binding or cgroup), at most SLURM_CPUS_PER_TASK —
// and, when the ranks of a host are not bound to their own cores, that host's cores divided among
// its `local_ranks` ranks (OMP_NUM_THREADS, when set, replaces that share). An explicit request
// beyond the rank's cores is an error.
int rank_threads(int requested, int local_ranks);

bool is_synthetic(const std::string& model);
// DIR/tokenizer.json, or the path itself when it names a .json file; errors name the folder.
std::string tokenizer_path(const std::string& model);
// The model's tokenizer; synthetic models get the built-in byte-level one.
text::Tokenizer load_tokenizer(const std::string& model);
// --response-prefix for the commands outside a run (generate, prompts): "auto" means none.
std::string fixed_response_prefix(const po::variables_map& vm);
// --chat-template resolved for the model (synthetic models use ChatML under "auto").
text::ChatTemplate load_chat_template(const po::variables_map& vm);

}  // namespace abl::app
