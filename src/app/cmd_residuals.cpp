// `abliterate residuals`: the first phase. Good and bad prompts are rendered and tokenized
// identically on every rank, split into contiguous blocks balanced by tokens, run in lockstep
// within each shard group, and every rank writes its own rows of residuals.h5 collectively.
#include <chrono>
#include <filesystem>

#include "abl/ablation/winsorize.h"
#include "abl/app/commands.h"
#include "abl/app/dist_options.h"
#include "abl/app/model_options.h"
#include "abl/core/build_info.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/dist/lockstep.h"
#include "abl/dist/sharded_weights.h"
#include "abl/io/output_schema.h"

namespace abl::app {
namespace {

struct PromptSetData {
  io::schema::PromptSet set;
  std::vector<io::Prompt> prompts;
  std::vector<std::vector<int32_t>> ids;
  size_t begin = 0, end = 0;  // this rank's rows
};

int run_residuals(const po::variables_map& vm) {
  const std::string model = vm["model"].as<std::string>();
  const engine::Limits limits = engine_limits(vm);
  const double q = vm["winsorize-quantile"].as<double>();
  ABL_CHECK(q > 0.0 && q <= 1.0, "--winsorize-quantile must be in (0, 1], got {}", q);
  const bool full = !vm["no-full-residuals"].as<bool>();
  const std::string out_dir = vm["out"].as<std::string>();

  dist::Runtime rt;
  const model::ModelSpec spec = is_synthetic(model) ? model::synthetic_model_spec(model) : model::load_model_spec(model);
  const dist::Topology& topo = configure_topology(rt, vm, spec, limits);
  const auto tmpl = load_chat_template(vm);
  const auto tok = load_tokenizer(model);
  const std::string system = vm["system-prompt"].as<std::string>();
  const std::string prefix = vm["response-prefix"].as<std::string>();

  PromptSetData sets[2];
  const char* names[2] = {"good", "bad"};
  for (int s = 0; s < 2; ++s) {
    sets[s].set = s == 0 ? io::schema::PromptSet::good : io::schema::PromptSet::bad;
    io::PromptSource src;
    src.path = vm[names[s]].as<std::string>();
    src.column = vm["column"].as<std::string>();
    src.split = vm[std::string(names[s]) + "-split"].as<std::string>();
    sets[s].prompts = io::load_prompts(src);
    std::vector<int64_t> cost;
    for (const auto& p : sets[s].prompts) {
      sets[s].ids.push_back(tok.encode(tmpl.render(system, p.text, prefix), false));
      cost.push_back(static_cast<int64_t>(sets[s].ids.back().size()));
    }
    const auto bounds = dist::split_contiguous(cost, rt.world_size());
    sets[s].begin = bounds[static_cast<size_t>(rt.world_rank())];
    sets[s].end = bounds[static_cast<size_t>(rt.world_rank()) + 1];
  }
  log::info("residuals: {} good and {} bad prompts on {}", sets[0].prompts.size(), sets[1].prompts.size(),
            topo.describe());

  auto weights = dist::ShardedWeights::load(model, rt.shard_group_weights());
  engine::Engine eng(*weights, limits);
  engine::KvCache cache(spec, limits.max_tokens);
  const int64_t D = spec.num_layers + 1, H = spec.hidden_size;

  // This rank's prompts of both sets in one list, results into per-set row buffers.
  std::vector<std::vector<int32_t>> mine;
  std::vector<std::pair<int, size_t>> where;  // (set, row within the rank's block)
  std::vector<float> rows[2];
  for (int s = 0; s < 2; ++s) {
    rows[s].assign((sets[s].end - sets[s].begin) * static_cast<size_t>(D * H), 0.0f);
    for (size_t i = sets[s].begin; i < sets[s].end; ++i) {
      mine.push_back(sets[s].ids[i]);
      where.emplace_back(s, i - sets[s].begin);
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  dist::prefill_lockstep(eng, cache, mine, rt.shard_group(), [&](size_t k, const float*, const float* res) {
    float* dst = rows[where[k].first].data() + where[k].second * static_cast<size_t>(D * H);
    std::copy(res, res + D * H, dst);
    for (int64_t d = 0; d < D; ++d) ablation::winsorize(dst + d * H, H, q);
  });
  int64_t tokens = 0;
  for (const auto& p : mine) tokens += static_cast<int64_t>(p.size());
  rt.world().all_reduce_sum(&tokens, 1);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::filesystem::create_directories(out_dir);
  io::schema::ResidualsMeta meta;
  meta.model = model;
  meta.architecture = spec.architecture;
  meta.dtype = spec.torch_dtype ? std::string(dtype_name(*spec.torch_dtype)) : "";
  meta.chat_template = tmpl.name();
  meta.world_size = rt.world_size();
  meta.sharding = topo.describe().substr(0, topo.describe().find("; rank"));  // the layout, not this rank
  meta.abliterate_version = build::version;
  meta.winsorize_quantile = q;
  const std::string path = (std::filesystem::path(out_dir) / io::schema::residuals::kFile).string();
  io::schema::ResidualsWriter w(path, rt.world().handle(), meta, static_cast<int64_t>(sets[0].prompts.size()),
                                static_cast<int64_t>(sets[1].prompts.size()), D, H, full);
  for (int s = 0; s < 2; ++s) {
    std::vector<int64_t> n_tokens;
    std::vector<std::string> texts;
    for (size_t i = sets[s].begin; i < sets[s].end; ++i) {
      n_tokens.push_back(static_cast<int64_t>(sets[s].ids[i].size()));
      texts.push_back(sets[s].prompts[i].text);
    }
    w.write(sets[s].set, static_cast<int64_t>(sets[s].begin), static_cast<int64_t>(sets[s].end - sets[s].begin),
            rows[s].data(), n_tokens.data(), texts);
  }
  w.commit();
  log::info("residuals: {} prompts, {} tokens in {:.2f} s ({:.0f} tokens/s) -> {}",
            sets[0].prompts.size() + sets[1].prompts.size(), tokens, secs, secs > 0 ? tokens / secs : 0.0, path);
  return 0;
}

}  // namespace

Command residuals_command() {
  Command c;
  c.name = "residuals";
  c.summary = "run good and bad prompts, capture the residual stream at every depth -> residuals.h5";
  c.usage = "--model DIR --good FILE --bad FILE [--good-split S] [--bad-split S] --out DIR";
  c.declare = [](OptionSet& o) {
    declare_model_options(o);
    o.group("prompts", "Prompt sets")
        ("good", po::value<std::string>()->required()->value_name("FILE"), "harmless prompts (text or JSONL)")
        ("bad", po::value<std::string>()->required()->value_name("FILE"), "harmful prompts (text or JSONL)")
        ("good-split", po::value<std::string>()->default_value("[:400]"), "slice of the good prompts")
        ("bad-split", po::value<std::string>()->default_value("[:400]"), "slice of the bad prompts")
        ("column", po::value<std::string>()->default_value("text"), "JSONL field holding the prompt");
    o.group("residuals", "Residuals")
        ("out", po::value<std::string>()->required()->value_name("DIR"), "output folder (residuals.h5)")
        ("winsorize-quantile", po::value<double>()->default_value(1.0),
         "clamp each residual's components to ±this quantile of their magnitudes (1 = off)")
        ("no-full-residuals", po::bool_switch(), "write only the class means, not every prompt's residuals");
    declare_engine_options(o);
    declare_dist_options(o);
  };
  c.run = run_residuals;
  return c;
}

}  // namespace abl::app
