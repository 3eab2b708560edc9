// `abliterate generate`: greedy responses of the model to a prompt set, rendered with the chat
// template, as JSONL {prompt, response, n_tokens, stop, prompt_ids, ids}. The first pass of a run
// prints the memory the engine will use.
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "abl/app/backend.h"
#include "abl/app/commands.h"
#include "abl/app/driver.h"
#include "abl/app/model_options.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/engine/cpu/engine.h"
#include "abl/engine/generate.h"
#include "abl/model/weights.h"
#include "abl/text/refusal_markers.h"

namespace abl::app {
namespace {

// The options of `generate`, parsed and checked once.
struct GenerateOptions {
  ModelOptions model;
  io::PromptSource prompts;
  EngineOptions engine;
  int64_t max_new_tokens = 100;
  std::optional<std::string> output;  // none: stdout
  std::string refusal_markers;        // "" = none
  bool stop_at_refusal = false;
};

GenerateOptions parse_generate_options(const po::variables_map& vm) {
  GenerateOptions o;
  o.model = parse_model_options(vm);
  o.prompts = parse_prompt_options(vm);
  o.engine = parse_engine_options(vm);
  o.max_new_tokens = vm["max-new-tokens"].as<int64_t>();
  ABL_CHECK(o.max_new_tokens >= 0, "--max-new-tokens must be >= 0, got {}", o.max_new_tokens);
  if (vm.count("output")) o.output = vm["output"].as<std::string>();
  o.refusal_markers = vm["refusal-markers"].as<std::string>();
  o.stop_at_refusal = vm["stop-at-refusal"].as<bool>();
  return o;
}

int run_generate(const GenerateOptions& go) {
  const std::string& model = go.model.model;
  const BackendKind kind = resolve_backend(go.engine.backend);
  const engine::Limits limits = engine_limits(go.engine);
  const int64_t max_new = go.max_new_tokens;
  const auto prompts = read_prompt_set({go.prompts, "prompts", "split"});
  const auto tmpl = load_chat_template(go.model);
  const auto tok = load_tokenizer(model);
  const std::string& system = go.model.system_prompt;
  const std::string prefix = fixed_response_prefix(go.model);

  const model::ModelSpec spec = is_synthetic(model) ? model::synthetic_model_spec(model) : model::load_model_spec(model);
  std::vector<engine::GenerateRequest> reqs;
  int64_t longest = 0;
  for (const auto& p : prompts) {
    engine::GenerateRequest r;
    r.prompt = tok.encode(tmpl.render(system, p.text, prefix), false);
    longest = std::max<int64_t>(longest, static_cast<int64_t>(r.prompt.size()));
    reqs.push_back(std::move(r));
  }
  {
    std::vector<std::vector<int32_t>> ids;
    for (const auto& r : reqs) ids.push_back(r.prompt);
    check_prompts_fit(prompts, ids, {go.prompts, "prompts", "split"}, max_new, spec.context_length(), model,
                      "max-new-tokens");
  }
  // Enough cache for the longest prompt plus its response, or a whole pass of sequences.
  const int64_t cache_rows = std::max<int64_t>(longest + max_new, limits.max_tokens + limits.max_seqs * max_new);
  log::info("model {}: {}; {} backend", model, model::describe(spec), backend_kind_name(kind));
  if (kind == BackendKind::cpu) {
    engine::BufferPlan plan = engine::Engine::plan_for(spec, limits);
    plan.add("KV cache", engine::KvCache::bytes_for(spec, cache_rows));
    if (!spec.linear_layers.empty()) {
      plan.add("recurrent states", engine::KvCache::state_bytes_for(spec, limits.max_seqs));
    }
    plan.add("weights (fp32)", static_cast<int64_t>(model::weight_bytes(spec, DType::f32)));
    log::info("memory plan ({} tokens, {} sequences per pass, {} cache rows):\n{}", limits.max_tokens,
              limits.max_seqs, cache_rows, plan.table());
  }

  // One rank, one full copy of the weights.
  parallel::Runtime rt;
  ABL_CHECK(rt.world_size() == 1, "generate runs on one rank, not {} (the driver phases use many)", rt.world_size());
  parallel::TopologyRequest topo;
  topo.sharding = parallel::Sharding::no_shard;
  rt.configure(topo);
  BackendSetup setup;
  setup.model = model;
  setup.limits = limits;
  const auto backend = make_backend(kind, setup, rt);
  engine::GenerateOptions opts;
  opts.max_new_tokens = max_new;
  opts.eos_ids = spec.eos_token_ids;
  std::unique_ptr<text::RefusalMarkers> markers;
  if (!go.refusal_markers.empty()) {
    markers = std::make_unique<text::RefusalMarkers>(text::RefusalMarkers::from_option(go.refusal_markers));
    if (go.stop_at_refusal) {
      opts.stop_when = [&](std::string_view t) { return !markers->find(t).empty(); };
    }
  } else {
    ABL_CHECK(!go.stop_at_refusal, "--stop-at-refusal needs --refusal-markers");
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto results = engine::generate(backend->pass(cache_rows), tok, reqs, opts);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::ofstream file;
  std::ostream* out = &std::cout;
  if (go.output) {
    file.open(*go.output);
    ABL_CHECK(file.good(), "cannot write {}", *go.output);
    out = &file;
  }
  int64_t generated = 0, refusals = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    nlohmann::json j;
    j["prompt"] = prompts[i].text;
    j["response"] = results[i].text;
    j["n_tokens"] = results[i].ids.size();
    j["stop"] = std::string(engine::stop_reason_name(results[i].reason));
    j["prompt_ids"] = reqs[i].prompt;  // the rendered prompt's token ids, as the engine ran them
    j["ids"] = results[i].ids;         // the generated ids (an eos that stopped it left out)
    if (markers) {
      const bool refused = markers->is_refusal(results[i].text);
      j["refusal"] = refused;
      refusals += refused ? 1 : 0;
    }
    *out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    generated += static_cast<int64_t>(results[i].ids.size());
  }
  log::info("generate: {} prompts, {} new tokens in {:.2f} s ({:.1f} tokens/s)", results.size(), generated,
            secs, secs > 0 ? static_cast<double>(generated) / secs : 0.0);
  if (markers) log::info("generate: {}/{} responses are refusals", refusals, results.size());
  return 0;
}

}  // namespace

Command generate_command() {
  Command c;
  c.name = "generate";
  c.summary = "greedy responses to a prompt set, as JSONL {prompt, response, n_tokens, stop, prompt_ids, ids}";
  c.usage = "--model DIR|synthetic:PRESET --prompts FILE [--max-new-tokens N] [--output FILE]";
  c.declare = [](OptionSet& o) {
    declare_model_options(o);
    declare_prompt_options(o, "prompts");
    declare_engine_options(o);
    o.group("generate", "Generation")
        ("max-new-tokens", po::value<int64_t>()->default_value(100), "tokens generated per prompt at most")
        ("output,o", po::value<std::string>()->value_name("FILE"), "write JSONL here instead of stdout")
        ("refusal-markers", po::value<std::string>()->default_value(""),
         "marker file, or builtin (inputs/refusal_markers.txt compiled in): adds \"refusal\" to each line and counts them")
        ("stop-at-refusal", po::bool_switch(), "end a response at its first refusal marker");
  };
  c.run = [](const po::variables_map& vm) { return run_generate(parse_generate_options(vm)); };
  return c;
}

}  // namespace abl::app
