// `abliterate info`: what a model folder holds and whether this program can run it — the
// architecture, parameter count, bytes per dtype, the tensors, the weight check, the tokenizer
// and chat template — reading headers only, never tensor data.
#include <filesystem>
#include <iostream>

#include "abl/app/commands.h"
#include "abl/app/model_options.h"
#include "abl/core/error.h"
#include "abl/io/safetensors.h"
#include "abl/model/model_spec.h"
#include "abl/model/weights.h"
#include "abl/text/chat_template.h"
#include "abl/text/tokenizer.h"

namespace abl::app {
namespace {

std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.2f} {}", v, units[u]);
}

std::string human_count(int64_t n) {
  if (n >= 1'000'000'000) return fmt::format("{:.2f} B", static_cast<double>(n) / 1e9);
  if (n >= 1'000'000) return fmt::format("{:.2f} M", static_cast<double>(n) / 1e6);
  if (n >= 1'000) return fmt::format("{:.1f} K", static_cast<double>(n) / 1e3);
  return std::to_string(n);
}

void print_tokenizer(const std::string& model, const model::ModelSpec& spec) {
  namespace fs = std::filesystem;
  if (!has_tokenizer(model)) {
    std::cout << "tokenizer:     none (no tokenizer.json or tiktoken.model)\n";
    return;
  }
  const auto tok = load_tokenizer(model);
  auto token_text = [&](int64_t id) {
    if (id < 0 || id >= tok.vocab_size()) return std::string("<out of range>");
    try {
      return tok.id_to_token(static_cast<int32_t>(id));
    } catch (const Error&) {
      return std::string("<no token>");  // a hole in the vocabulary
    }
  };
  const bool tiktoken = !fs::is_regular_file(fs::path(model) / "tokenizer.json");
  std::cout << fmt::format("tokenizer:     {} tokens{}", tok.vocab_size(), tiktoken ? " (tiktoken.model)" : "");
  if (tok.vocab_size() > spec.vocab_size) {
    std::cout << fmt::format(" (more than the model's vocab_size {}!)", spec.vocab_size);
  }
  std::cout << "\n";
  if (spec.bos_token_id) std::cout << fmt::format("  bos:         {} {}\n", *spec.bos_token_id, token_text(*spec.bos_token_id));
  for (int64_t id : spec.eos_token_ids) std::cout << fmt::format("  eos:         {} {}\n", id, token_text(id));
  try {
    const auto tmpl = text::ChatTemplate::resolve("auto", model);
    std::cout << "chat template: " << tmpl.describe() << "\n";
    if (tmpl.refuses_system_role()) {
      std::cout << fmt::format("  it refuses a system turn (\"{}\"): the system prompt joins the user turn\n",
                               tmpl.system_refusal());
    }
  } catch (const Error& e) {
    std::cout << "chat template: cannot be used (" << e.what() << ")\n";
  }
}

// The options of `info`, parsed once.
struct InfoOptions {
  std::string model;
  bool brief = false;
};

InfoOptions parse_info_options(const po::variables_map& vm) {
  InfoOptions o;
  o.model = parse_model_options(vm).model;
  o.brief = vm["brief"].as<bool>();
  return o;
}

// "235.09 B (235093634560), 22.14 B active per token" (the active part only for MoE models).
std::string parameters_line(const model::ModelSpec& spec) {
  const int64_t n = model::parameter_count(spec), active = model::active_parameter_count(spec);
  std::string line = fmt::format("{} ({})", human_count(n), n);
  if (active != n) line += fmt::format(", {} active per token", human_count(active));
  return line;
}

int show_info(const InfoOptions& opts) {
  const std::string& model = opts.model;
  if (is_synthetic(model)) {
    // A preset has no files: its shape, and what the engine generates for it.
    const model::ModelSpec spec = model::synthetic_model_spec(model);
    std::cout << "model:         " << model << "\n"
              << "architecture:  " << model::describe(spec) << "\n"
              << "parameters:    " << parameters_line(spec) << "\n"
              << "weights:       synthetic: deterministic random values generated at load, no files\n"
              << "tokenizer:     built-in byte-level tokenizer, ChatML template\n";
    return 0;
  }
  const model::ModelSpec spec = model::load_model_spec(model);
  const io::SafetensorsReader reader(model);
  const model::FileSummary files = model::summarize_files(reader);

  std::cout << "model:         " << model << "\n"
            << "architecture:  " << model::describe(spec) << "\n"
            << "parameters:    " << parameters_line(spec) << "\n"
            << fmt::format("files:         {} safetensors file{}, {} tensors, {} elements, {}\n",
                           reader.num_files(), reader.num_files() == 1 ? "" : "s",
                           files.num_tensors, files.num_params, human_bytes(files.total_bytes));
  for (const auto& [dtype, bytes] : files.bytes_by_dtype) {
    std::cout << fmt::format("  {:<5}        {} tensors, {}\n", dtype, files.tensors_by_dtype.at(dtype),
                             human_bytes(bytes));
  }
  print_tokenizer(model, spec);

  const model::WeightCheck check = model::inspect_weights(spec, reader);
  if (!opts.brief) std::cout << "\n" << model::format_tensor_table(reader) << "\n";
  for (const auto& name : check.unexpected) std::cout << "unexpected tensor (not used): " << name << "\n";
  if (!check.problems.empty()) {
    std::cout << "weights:       NOT loadable, " << check.problems.size() << " problem(s):\n";
    for (const auto& p : check.problems) std::cout << "  " << p << "\n";
    return 1;
  }
  std::cout << "weights:       all " << model::expected_weights(spec).size()
            << " expected tensors present with matching dtypes and shapes\n";
  return 0;
}

}  // namespace

Command info_command() {
  Command c;
  c.name = "info";
  c.summary = "describe a model folder: architecture, parameters, bytes per dtype, tensors, checks";
  c.usage = "--model DIR [--brief]";
  c.declare = [](OptionSet& o) {
    declare_model_path_option(o);
    o.group("info", "Info")("brief", po::bool_switch(), "omit the table of tensors (name, dtype, shape, file)");
  };
  c.run = [](const po::variables_map& vm) { return show_info(parse_info_options(vm)); };
  return c;
}

}  // namespace abl::app
