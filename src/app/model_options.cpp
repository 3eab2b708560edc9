// Model-folder options in one place so every subcommand spells and documents them the same way.
#include "abl/app/model_options.h"

#include <filesystem>

#include "abl/core/error.h"

namespace abl::app {
namespace fs = std::filesystem;

void declare_model_path_option(OptionSet& o) {
  o.group("model", "Model")
      ("model,m", po::value<std::string>()->required()->value_name("DIR"),
       "Hugging Face model folder (config.json, *.safetensors, tokenizer.json)");
}

void declare_model_options(OptionSet& o) {
  o.group("model", "Model")
      ("model,m", po::value<std::string>()->required()->value_name("DIR"),
       "Hugging Face model folder (config.json, *.safetensors, tokenizer.json)")
      ("chat-template", po::value<std::string>()->default_value("auto")->value_name("NAME"),
       "auto (from tokenizer_config.json), raw, chatml, llama3, llama3.1, mistral, mistral-v3, "
       "llama2, gemma, phi3, or file:PATH with {system} and {user} placeholders")
      ("system-prompt", po::value<std::string>()->default_value("You are a helpful assistant."),
       "system prompt rendered into every chat prompt")
      ("response-prefix", po::value<std::string>()->default_value(""),
       "text appended after the generation prompt");
}

std::string tokenizer_path(const std::string& model) {
  fs::path p(model);
  if (p.extension() == ".json" && fs::is_regular_file(p)) return p.string();
  ABL_CHECK(fs::is_directory(p), "model folder {} does not exist", model);
  fs::path t = p / "tokenizer.json";
  ABL_CHECK(fs::is_regular_file(t), "no tokenizer.json in model folder {}", model);
  return t.string();
}

}  // namespace abl::app
