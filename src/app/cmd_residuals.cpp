// `abliterate residuals`: the first phase. Good and bad prompts are rendered and tokenized
// identically on every rank, split into contiguous blocks balanced by tokens, run in lockstep
// within each shard group, and every rank writes its own rows of residuals.h5 collectively.
#include <chrono>
#include <filesystem>

#include "abl/ablation/winsorize.h"
#include "abl/app/commands.h"
#include "abl/app/dist_options.h"
#include "abl/app/driver.h"
#include "abl/app/model_options.h"
#include "abl/core/build_info.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/watchdog.h"
#include "abl/core/progress.h"
#include "abl/parallel/agree.h"
#include "abl/parallel/lockstep.h"
#include "abl/parallel/sharded_weights.h"
#include "abl/io/output_schema.h"

namespace abl::app {
namespace {

struct PromptSetData {
  io::schema::PromptSet set;
  std::vector<io::Prompt> prompts;
  std::vector<std::vector<int32_t>> ids;
  size_t begin = 0, end = 0;  // this rank's rows
};

}  // namespace

void phase_residuals(Session& ses) {
  watchdog::set_phase("residuals");
  const ResidualsOptions& ropts = need(ses.options().residuals, "[residuals]");
  const PromptSetOptions& ps = need(ses.options().prompts, "[prompts]");
  const double q = ropts.winsorize_quantile;
  const bool full = ropts.full_residuals;
  parallel::Runtime& rt = ses.rt();
  const model::ModelSpec& spec = ses.spec();

  PromptSetData sets[2];
  for (int s = 0; s < 2; ++s) {
    sets[s].set = s == 0 ? io::schema::PromptSet::good : io::schema::PromptSet::bad;
    sets[s].prompts = load_prompt_set(rt.world(), s == 0 ? ps.good : ps.bad);
  }
  const int64_t n_prompts = static_cast<int64_t>(sets[0].prompts.size() + sets[1].prompts.size());
  const int64_t row_bytes = (spec.num_layers + 1) * spec.hidden_size * 4;
  parallel::root_decides(rt.world(), [&] {
    check_free_space(ses.out_dir(), (full ? n_prompts : 2) * row_bytes + n_prompts * 1024, "residuals.h5");
    return true;
  });
  ses.backend();  // loaded before the prefix is detected with it
  for (int s = 0; s < 2; ++s) {
    sets[s].ids = ses.encode_prompt_set(sets[s].prompts, s == 0 ? ps.good : ps.bad, 0);
    std::tie(sets[s].begin, sets[s].end) = rank_block(prompt_costs(sets[s].ids), rt);
  }
  log::info("residuals: {} good and {} bad prompts", sets[0].prompts.size(), sets[1].prompts.size());
  const parallel::Topology& topo = rt.topology();
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
  Progress progress("residuals", static_cast<int64_t>(mine.size()), "prompts");
  int64_t done_tokens = 0;
  parallel::prefill_lockstep(ses.pass(0, 0), mine, rt.shard_group(), [&](size_t k, const float*, const float* res) {
    done_tokens += static_cast<int64_t>(mine[k].size());
    progress.update(static_cast<int64_t>(k) + 1, done_tokens, rt.world_size() > 1 ? "rank 0's share" : "");
    float* dst = rows[where[k].first].data() + where[k].second * static_cast<size_t>(D * H);
    std::copy(res, res + D * H, dst);
    for (int64_t d = 0; d < D; ++d) ablation::winsorize(dst + d * H, H, q);
  });
  int64_t tokens = 0;
  for (const auto& p : mine) tokens += static_cast<int64_t>(p.size());
  rt.world().all_reduce_sum(&tokens, 1);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  io::schema::ResidualsMeta meta;
  meta.model = ses.model();
  meta.architecture = spec.architecture;
  meta.dtype = spec.torch_dtype ? std::string(dtype_name(*spec.torch_dtype)) : "";
  meta.chat_template = ses.chat_template().name();
  meta.world_size = rt.world_size();
  meta.sharding = topo.describe().substr(0, topo.describe().find("; rank"));  // the layout, not this rank
  meta.abliterate_version = build::version;
  meta.winsorize_quantile = q;
  meta.response_prefix = ses.response_prefix();
  meta.inputs = phase_inputs(ses, Phase::residuals).dump();
  const std::string path = ses.out_path(io::schema::residuals::kFile);
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
  ses.log_device_memory("residuals");
}

namespace {

int run_residuals(const po::variables_map& vm) {
  Session ses(parse_driver_options(vm), "residuals");
  check_phase_options(ses);
  phase_residuals(ses);
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
    declare_prompt_set_options(o);
    declare_residuals_options(o);
    declare_output_options(o);
    declare_engine_options(o);
    declare_dist_options(o);
  };
  c.run = run_residuals;
  return c;
}

}  // namespace abl::app
