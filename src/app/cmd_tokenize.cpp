// `abliterate tokenize`: JSONL in ({"text": ...} per line), JSONL out ({"ids": [...]}), with the
// model's own tokenizer. Used for inspection and by the peer test against the reference library.
#include <fstream>
#include <optional>
#include <iostream>

#include <nlohmann/json.hpp>

#include "abl/app/commands.h"
#include "abl/app/model_options.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/text/tokenizer.h"

namespace abl::app {
namespace {

// The options of `tokenize`, parsed once.
struct TokenizeOptions {
  std::string model;
  bool special = false;
  bool decode = false;
  std::optional<std::string> input;  // none = stdin
};

TokenizeOptions parse_tokenize_options(const po::variables_map& vm) {
  TokenizeOptions o;
  o.model = parse_model_options(vm).model;
  o.special = vm["special"].as<bool>();
  o.decode = vm["decode"].as<bool>();
  if (vm.count("input")) o.input = vm["input"].as<std::string>();
  return o;
}

int tokenize_lines(const TokenizeOptions& opts) {
  const text::Tokenizer tok = load_tokenizer(opts.model);
  const bool special = opts.special;
  const bool decode = opts.decode;

  std::ifstream file;
  std::istream* in = &std::cin;
  std::string in_name = "<stdin>";
  if (opts.input) {
    in_name = *opts.input;
    file.open(in_name);
    ABL_CHECK(file.good(), "cannot open input file {}", in_name);
    in = &file;
  }
  std::string line;
  int64_t n = 0, lineno = 0, tokens = 0;
  while (std::getline(*in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json obj;
    try {
      obj = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e400
      fail("{}:{}: invalid JSON: {}", in_name, lineno, e.what());
    }
    ABL_CHECK(obj.is_object() && obj.contains("text") && obj["text"].is_string(),
              "{}:{}: expected an object with a string field \"text\"", in_name, lineno);
    const std::vector<int32_t> ids = tok.encode(obj["text"].get<std::string>(), special);
    nlohmann::json out;
    out["ids"] = ids;
    if (decode) out["decoded"] = tok.decode(ids, false);
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    ++n;
    tokens += static_cast<int64_t>(ids.size());
  }
  log::debug("tokenize: {} lines, {} tokens", n, tokens);
  return 0;
}

}  // namespace

Command tokenize_command() {
  Command c;
  c.name = "tokenize";
  c.summary = "turn {\"text\": ...} JSONL lines into {\"ids\": [...]} with the model's tokenizer";
  c.usage = "--model DIR [--special] [--decode] [--input FILE] < lines.jsonl";
  c.declare = [](OptionSet& o) {
    declare_model_path_option(o);
    o.group("tokenize", "Tokenize")
        ("special", po::bool_switch(), "add the model's special tokens (e.g. BOS) like the tokenizer's post-processor")
        ("decode", po::bool_switch(), "also write the decoded text of the ids as \"decoded\"")
        ("input", po::value<std::string>()->value_name("FILE"), "read this file instead of stdin");
  };
  c.run = [](const po::variables_map& vm) { return tokenize_lines(parse_tokenize_options(vm)); };
  return c;
}

}  // namespace abl::app
