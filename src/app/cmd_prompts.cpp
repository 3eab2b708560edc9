// `abliterate prompts`: load a prompt set, render it with the chat template, tokenize it and
// print what a run would feed the model — a check of prompt files before spending GPU hours.
#include <algorithm>
#include <iostream>

#include "abl/app/commands.h"
#include "abl/app/driver.h"
#include "abl/app/model_options.h"
#include "abl/core/log.h"
#include "abl/io/prompt_dataset.h"
#include "abl/text/chat_template.h"
#include "abl/text/tokenizer.h"

namespace abl::app {
namespace {

// The options of `prompts`, parsed once.
struct PromptsOptions {
  ModelOptions model;
  io::PromptSource source;
  int64_t show = 0;
};

PromptsOptions parse_prompts_options(const po::variables_map& vm) {
  PromptsOptions o;
  o.model = parse_model_options(vm);
  o.source = parse_prompt_options(vm);
  o.show = vm["show"].as<int64_t>();
  return o;
}

int show_prompts(const PromptsOptions& opts) {
  const std::string& model = opts.model.model;
  const io::PromptSource& src = opts.source;
  const auto prompts = read_prompt_set({src, "prompts", "split"});
  const auto tmpl = load_chat_template(opts.model);
  const auto tok = load_tokenizer(model);
  const std::string& system = opts.model.system_prompt;
  const std::string prefix = fixed_response_prefix(opts.model);
  const int64_t show = opts.show;

  std::vector<int64_t> lengths;
  lengths.reserve(prompts.size());
  size_t longest = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::string rendered = tmpl.render(system, prompts[i].text, prefix);
    const auto ids = tok.encode(rendered, false);
    lengths.push_back(static_cast<int64_t>(ids.size()));
    if (lengths[i] > lengths[longest]) longest = i;
    if (static_cast<int64_t>(i) < show) {
      std::cout << fmt::format("--- prompt {} ({}, {} tokens)\n{}\n", i, prompts[i].where(),
                               ids.size(), rendered);
    }
  }
  std::vector<int64_t> sorted = lengths;
  std::sort(sorted.begin(), sorted.end());
  int64_t total = 0;
  for (int64_t n : lengths) total += n;
  std::cout << fmt::format(
      "{}{}: {} prompts, chat template {}, tokens per prompt min {} / median {} / max {} "
      "({}), {} tokens in all\n",
      src.path, src.split.empty() ? "" : " " + src.split, prompts.size(), tmpl.name(),
      sorted.front(), sorted[sorted.size() / 2], sorted.back(), prompts[longest].where(), total);
  return 0;
}

}  // namespace

Command prompts_command() {
  Command c;
  c.name = "prompts";
  c.summary = "render and tokenize a prompt set as a run would, and print its statistics";
  c.usage = "--model DIR --prompts FILE|DIR [--split 'train[:400]'] [--show N]";
  c.declare = [](OptionSet& o) {
    declare_model_options(o);
    declare_prompt_options(o, "prompts");
    o.group("prompts", "Output")("show", po::value<int64_t>()->default_value(0), "print the first N rendered prompts");
  };
  c.run = [](const po::variables_map& vm) { return show_prompts(parse_prompts_options(vm)); };
  return c;
}

}  // namespace abl::app
