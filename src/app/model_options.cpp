// Model, prompt and engine options in one place so every subcommand spells and documents them
// the same way.
#include "abl/app/model_options.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "abl/backend/cpu/ops.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/model/model_spec.h"
#include "abl/text/synthetic_tokenizer.h"

namespace abl::app {
namespace fs = std::filesystem;

void declare_model_path_option(OptionSet& o) {
  o.group("model", "Model")
      ("model,m", po::value<std::string>()->required()->value_name("DIR"),
       "Hugging Face model folder (config.json, *.safetensors, tokenizer.json or tiktoken.model) or synthetic:<preset>");
}

void declare_model_options(OptionSet& o) {
  declare_model_path_option(o);
  o.group("model", "Chat rendering")
      ("chat-template", po::value<std::string>()->default_value("auto")->value_name("NAME"),
       "auto (the model's own Jinja template, run as transformers runs it), or a built-in: raw, chatml, "
       "llama3, llama3.1, mistral, mistral-v3, llama2, gemma, phi3, phi4, phi4-mini, or file:PATH with "
       "{system} and {user} placeholders")
      ("system-prompt", po::value<std::string>()->default_value("You are a helpful assistant."),
       "system prompt rendered into every chat prompt")
      ("response-prefix", po::value<std::string>()->default_value("auto"),
       "text appended after the generation prompt; auto: the run's detected prefix (baseline.h5) in "
       "the driver phases, none in generate and prompts");
}

void declare_prompt_options(OptionSet& o, const std::string& section) {
  o.group(section, "Prompt set")
      ("prompts,p", po::value<std::string>()->required()->value_name("FILE|DIR"),
       "text file (one prompt per line), JSON Lines, JSON, CSV, TSV or Parquet, or a Hugging Face dataset folder")
      ("column", po::value<std::string>()->default_value("text"), "the field (JSON) or column (CSV, TSV, Parquet) holding the prompt")
      ("split", po::value<std::string>()->default_value(""),
       "Python-style slice of the prompts and/or a dataset folder's split, e.g. [:400], [-100:], train[:400], test");
}

ModelOptions parse_model_options(const po::variables_map& vm) {
  ModelOptions o;
  o.model = vm["model"].as<std::string>();
  if (vm.count("chat-template")) o.chat_template = vm["chat-template"].as<std::string>();
  if (vm.count("system-prompt")) o.system_prompt = vm["system-prompt"].as<std::string>();
  if (vm.count("response-prefix")) o.response_prefix = vm["response-prefix"].as<std::string>();
  return o;
}

io::PromptSource parse_prompt_options(const po::variables_map& vm) {
  io::PromptSource src;
  src.path = vm["prompts"].as<std::string>();
  src.column = vm["column"].as<std::string>();
  src.split = vm["split"].as<std::string>();
  return src;
}

void declare_engine_options(OptionSet& o) {
  o.group("engine", "Engine")
      ("threads", po::value<int>()->default_value(0),
       "CPU threads per rank (0 = automatic: OMP_NUM_THREADS when set, else the rank's share of the cores it may use)")
      ("batch-tokens", po::value<std::string>()->default_value("auto"),
       "tokens per forward pass, or auto (4096)")
      ("max-seqs", po::value<int64_t>()->default_value(256), "sequences per forward pass")
      ("backend", po::value<std::string>()->default_value("auto"),
       "cpu, cuda, or auto (cuda when this binary has it and a GPU is visible)");
}

namespace {

// A positive integer environment variable, or 0 when unset or not one.
int env_count(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end && *end == '\0' && n > 0 && n < (1 << 20) ? static_cast<int>(n) : 0;
}

}  // namespace

int rank_threads(int requested, int local_ranks) {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores <= 0) cores = online > 0 ? static_cast<int>(online) : 1;
  const bool bound = online > 0 && cores < online;  // the launcher gave this rank its own cores
  if (const int per_task = env_count("SLURM_CPUS_PER_TASK")) cores = std::min(cores, per_task);
  ABL_CHECK(requested <= cores,
            "--threads {} is more than the {} cores this rank may use (its CPU affinity{}); use at most {}, or 0 "
            "for automatic",
            requested, cores, env_count("SLURM_CPUS_PER_TASK") ? " and SLURM_CPUS_PER_TASK" : "", cores);
  if (requested > 0) return requested;
  if (const int omp = env_count("OMP_NUM_THREADS")) return std::min(omp, cores);
  if (!bound && !env_count("SLURM_CPUS_PER_TASK")) cores = std::max(1, cores / std::max(1, local_ranks));
  return cores;
}

EngineOptions parse_engine_options(const po::variables_map& vm) {
  EngineOptions o;
  const std::string bt = vm["batch-tokens"].as<std::string>();
  if (bt != "auto") {
    size_t used = 0;
    try {
      o.batch_tokens = std::stoll(bt, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    ABL_CHECK(used == bt.size(), "--batch-tokens must be 'auto' or a number, got '{}'", bt);
  }
  o.max_seqs = vm["max-seqs"].as<int64_t>();
  ABL_CHECK(o.batch_tokens > 0, "--batch-tokens must be positive, got {}", o.batch_tokens);
  ABL_CHECK(o.max_seqs > 0, "--max-seqs must be positive, got {}", o.max_seqs);
  o.threads = vm["threads"].as<int>();
  ABL_CHECK(o.threads >= 0, "--threads must be 0 (automatic) or positive, got {}", o.threads);
  o.backend = vm["backend"].as<std::string>();
  return o;
}

engine::Limits engine_limits(const EngineOptions& opts, int local_ranks) {
  engine::Limits lim;
  lim.max_tokens = opts.batch_tokens;
  lim.max_seqs = opts.max_seqs;
  cpu::set_num_threads(rank_threads(opts.threads, local_ranks));
  return lim;
}

bool is_synthetic(const std::string& model) { return model.rfind("synthetic:", 0) == 0; }

bool has_tokenizer(const std::string& model) {
  const fs::path p(model);
  return fs::is_regular_file(p / "tokenizer.json") || fs::is_regular_file(p / "tiktoken.model");
}

text::Tokenizer load_tokenizer(const std::string& model) {
  if (is_synthetic(model)) {
    const model::ModelSpec spec = model::synthetic_model_spec(model);
    return text::Tokenizer::from_json_text(text::synthetic_tokenizer_json(spec.vocab_size),
                                           model + " tokenizer");
  }
  const fs::path p(model);
  if (p.extension() == ".json" && fs::is_regular_file(p)) return text::Tokenizer::from_file(p.string());
  ABL_CHECK(fs::is_directory(p), "model folder {} does not exist", model);
  return text::Tokenizer::from_model_folder(model);
}

std::string fixed_response_prefix(const ModelOptions& opts) {
  return opts.response_prefix == "auto" ? std::string() : opts.response_prefix;
}

text::ChatTemplate load_chat_template(const ModelOptions& opts) {
  const std::string& model = opts.model;
  const std::string& option = opts.chat_template;
  if (is_synthetic(model) && option == "auto") return text::ChatTemplate::from_option("chatml");
  text::ChatTemplate t = text::ChatTemplate::resolve(option, model);
  if (t.refuses_system_role() && !opts.system_prompt.empty()) {
    log::warn("{}: the model's chat template refuses a system turn (\"{}\"); the system prompt is prepended "
              "to the user turn, as Gemma 3's template does. Pass --system-prompt '' to render exactly what the "
              "model's template renders",
              model, t.system_refusal().empty() ? "System role not supported" : t.system_refusal());
  }
  return t;
}

}  // namespace abl::app
