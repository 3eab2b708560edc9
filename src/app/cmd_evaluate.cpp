// `abliterate evaluate`: a model scored against its base, the reference tool's --evaluate-model and
// how published abliterated models are compared: the refusals of --model on the evaluation prompts
// and the first-token KL divergence KL(base ‖ model) on the KL prompts, each as the sweep scores a
// trial (the same prompt sets and splits, markers, response-prefix rule and formula), on any
// number of ranks, written to <out>/evaluate.h5 and printed. The base is loaded first: its
// log-probabilities are the reference and it fixes the response prefix (as the baseline phase does;
// a baseline.h5 in the --out folder gives its recorded prefix instead); then the model replaces it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

#include "abl/app/commands.h"
#include "abl/app/dist_options.h"
#include "abl/app/driver.h"
#include "abl/app/model_options.h"
#include "abl/backend/cpu/ops.h"
#include "abl/core/build_info.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/progress.h"
#include "abl/core/watchdog.h"
#include "abl/engine/cpu/forward_pass.h"
#include "abl/engine/generate.h"
#include "abl/io/driver_files.h"
#include "abl/parallel/agree.h"
#include "abl/parallel/lockstep.h"

namespace abl::app {
namespace {

// Calls `row(k, logits)` with the first-token logits of prompts [begin, end) of `ids` (k from 0).
void first_token_logits(Session& ses, const std::vector<std::vector<int32_t>>& ids, size_t begin, size_t end,
                        const std::function<void(size_t, const float*)>& row) {
  std::vector<std::vector<int32_t>> mine(ids.begin() + static_cast<std::ptrdiff_t>(begin),
                                         ids.begin() + static_cast<std::ptrdiff_t>(end));
  parallel::PrefillOptions popts;
  popts.residuals = false;
  parallel::prefill_lockstep(
      ses.pass(longest_prompt(ids), 0), mine, ses.rt().shard_group(),
      [&](size_t k, const float* logits, const float*) { row(k, logits); }, popts);
}

int evaluate_model(const po::variables_map& vm) {
  DriverOptions opts = parse_driver_options(vm);
  const std::string model = need(opts.model, "[model]").model;
  const std::string base = vm["base"].as<std::string>();
  // The KL and evaluation sets default to the --good and --bad files (the bundled sets) with the
  // held-out splits, as `run` scores its trials: a run's config file gives the run's sets.
  const EvaluationOptions ev = need(opts.evaluation, "[evaluation]");
  opts.model->model = base;  // the base first: the reference log-probabilities and the response prefix
  Session ses(std::move(opts), "evaluate");
  check_phase_options(ses);
  watchdog::set_phase("evaluate");
  parallel::Runtime& rt = ses.rt();
  const auto markers = load_refusal_markers(rt.world(), ev.refusal_markers);
  const auto kl_prompts = load_prompt_set(rt.world(), ev.kl);
  const auto eval_prompts = load_prompt_set(rt.world(), ev.eval);
  const std::string path = ses.out_path(io::schema::evaluate::kFile);
  parallel::root_decides(rt.world(), [&] {
    check_free_space(ses.out_dir(), static_cast<int64_t>(kl_prompts.size()) * 64 +
                                        static_cast<int64_t>(eval_prompts.size()) * 4096, "evaluate.h5");
    return true;
  });

  // The base: first-token log-probabilities of this rank's block of the KL prompts.
  ses.backend();  // loaded before the response prefix is detected with it
  const std::string prefix = ses.response_prefix();
  const std::string prefix_source = ses.response_prefix_source();
  const auto base_kl_ids = ses.encode_prompt_set(kl_prompts, ev.kl, 0);
  const auto base_eval_ids = ses.encode_prompt_set(eval_prompts, ev.eval, ev.max_response_length);
  const int64_t V = ses.spec().vocab_size;
  const auto [kb, ke] = rank_block(prompt_costs(base_kl_ids), rt);
  std::vector<float> base_logprobs((ke - kb) * static_cast<size_t>(V));
  first_token_logits(ses, base_kl_ids, kb, ke, [&](size_t k, const float* logits) {
    cpu::log_softmax(logits, base_logprobs.data() + k * static_cast<size_t>(V), 1, V);
  });
  const std::string base_fingerprint = ses.model_fingerprint();
  log::info("evaluate: base {}: log-probabilities of {} KL prompts", base, kl_prompts.size());

  // The model, on the same tokens: a model whose tokenizer or chat template renders the prompts
  // otherwise is not comparable token by token.
  ses.switch_model(model);
  const auto kl_ids = ses.encode_prompt_set(kl_prompts, ev.kl, 0);
  const auto eval_ids = ses.encode_prompt_set(eval_prompts, ev.eval, ev.max_response_length);
  if (kl_ids != base_kl_ids || eval_ids != base_eval_ids) {  // the same verdict on every rank (rank_block)
    throw AgreedError(fmt::format("{} renders the prompts into other tokens than {} (its tokenizer or chat template "
                                  "differs): the KL divergence compares the first token after the same prompt",
                                  model, base));
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<double> kl(kl_prompts.size(), 0.0);
  std::vector<float> scratch;
  first_token_logits(ses, kl_ids, kb, ke, [&](size_t k, const float* logits) {
    kl[kb + k] = engine::kl_from_logits(base_logprobs.data() + k * static_cast<size_t>(V), logits, V, scratch);
  });
  rt.world().all_reduce_sum(kl.data(), kl.size());  // one owner per prompt: exact
  double kl_sum = 0;
  for (double x : kl) kl_sum += x;
  const double kl_mean = kl_sum / static_cast<double>(kl.size());  // batchmean, as the sweep

  // The model's greedy responses to this rank's block of the evaluation prompts.
  const RefusalBlock r = greedy_refusals(ses, eval_ids, eval_prompts, markers, ev.max_response_length, "evaluate");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  io::schema::EvaluateMeta meta;
  meta.model = model;
  meta.base = base;
  meta.model_fingerprint = ses.model_fingerprint();
  meta.base_fingerprint = base_fingerprint;
  meta.kl = kl_mean;
  meta.refusals = r.refusals;
  meta.architecture = ses.spec().architecture;
  meta.chat_template = ses.chat_template().name();
  meta.system_prompt = ses.system_prompt();
  meta.response_prefix = prefix;
  meta.response_prefix_source = prefix_source;
  meta.max_response_length = ev.max_response_length;
  meta.abliterate_version = build::version;
  meta.inputs = phase_inputs(ses, Phase::baseline).dump();  // the prompt sets, markers and length used
  io::schema::EvaluateWriter w(path, rt.world().handle(), meta, static_cast<int64_t>(kl_prompts.size()),
                               static_cast<int64_t>(eval_prompts.size()));
  std::vector<double> my_kl(kl.begin() + static_cast<std::ptrdiff_t>(kb), kl.begin() + static_cast<std::ptrdiff_t>(ke));
  std::vector<std::string> kl_texts;
  for (size_t i = kb; i < ke; ++i) kl_texts.push_back(kl_prompts[i].text);
  w.write_kl(static_cast<int64_t>(kb), my_kl, kl_texts);
  w.write_refusals(static_cast<int64_t>(r.first), r.prompts, r.responses, r.refused);
  w.commit();
  log::info("evaluate: {} in {:.1f} s -> {}", model, secs, path);
  ses.log_device_memory("evaluate");
  if (ses.is_root()) {
    std::printf("model:       %s\nbase:        %s\nrefusals:    %lld/%zu\nKL divergence: %.6g\n", model.c_str(),
                base.c_str(), static_cast<long long>(r.refusals), eval_prompts.size(), kl_mean);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

Command evaluate_command() {
  Command c;
  c.name = "evaluate";
  c.summary = "score a model against its base: refusals and first-token KL divergence -> evaluate.h5";
  c.usage = "--model DIR --base DIR --out DIR [--kl-prompts FILE --eval-prompts FILE]";
  c.declare = [](OptionSet& o) {
    declare_model_options(o);
    o.group("evaluate", "Evaluated against")
        ("base", po::value<std::string>()->required()->value_name("DIR"),
         "the model --model is compared with (the reference of the KL divergence; it fixes the response prefix)");
    declare_prompt_set_options(o);  // only their files count: the defaults of --kl-prompts and --eval-prompts
    declare_evaluation_options(o);
    declare_output_options(o);
    declare_engine_options(o);
    declare_dist_options(o);
  };
  c.run = evaluate_model;
  return c;
}

}  // namespace abl::app
