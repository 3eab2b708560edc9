// `abliterate baseline`: what the unablated model does, the reference every trial is scored
// against — first-token log-probabilities of the KL prompts over the whole vocabulary and the
// greedy responses (and refusals) to the evaluation prompts — plus the response prefix the run
// uses. Prompts are split over every rank, results written collectively into baseline.h5.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <tuple>

#include "abl/app/commands.h"
#include "abl/app/dist_options.h"
#include "abl/app/driver.h"
#include "abl/app/model_options.h"
#include "abl/backend/cpu/ops.h"
#include "abl/core/build_info.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/watchdog.h"
#include "abl/core/progress.h"
#include "abl/core/utf8.h"
#include "abl/parallel/agree.h"
#include "abl/parallel/lockstep.h"
#include "abl/engine/generate.h"
#include "abl/io/driver_files.h"

namespace abl::app {

std::string common_response_prefix(const std::vector<std::string>& responses) {
  if (responses.empty()) return "";
  std::string prefix = responses[0];
  for (const std::string& r : responses) {
    size_t n = 0;
    while (n < prefix.size() && n < r.size() && prefix[n] == r[n]) ++n;
    prefix.resize(n);
  }
  // Never end inside a UTF-8 sequence.
  while (!prefix.empty() && !valid_utf8(prefix)) prefix.pop_back();
  while (!prefix.empty() && prefix.back() == ' ') prefix.pop_back();
  // A prefix that opens a reasoning block would make every prompt start thinking: close it empty.
  static const std::pair<const char*, const char*> kBlocks[] = {
      {"<think>", "<think></think>"},
      {"<thought>", "<thought></thought>"},
      {"[THINK]", "[THINK][/THINK]"},
      {"<|channel|>analysis<|message|>",
       "<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final<|message|>"},
  };
  for (const auto& [open, closed] : kBlocks) {
    if (prefix.rfind(open, 0) == 0) return closed;
  }
  return prefix;
}

namespace {

// Greedy responses to this rank's block [begin, end) of `ids` (rank_block); the ranks of a shard
// group run their passes in lockstep. `what` names a progress line, or null for none.
struct BlockResults {
  size_t begin = 0, end = 0;
  std::vector<engine::GenerateResult> results;  // of ids[begin..end)
};
BlockResults generate_rank_block(Session& ses, const std::vector<std::vector<int32_t>>& ids, int64_t max_new,
                                 const char* what) {
  parallel::Runtime& rt = ses.rt();
  BlockResults out;
  std::tie(out.begin, out.end) = rank_block(prompt_costs(ids), rt);
  std::vector<engine::GenerateRequest> reqs;
  for (size_t i = out.begin; i < out.end; ++i) reqs.push_back({ids[i], -1});
  engine::GenerateOptions opts;
  opts.max_new_tokens = max_new;
  opts.eos_ids = ses.spec().eos_token_ids;
  opts.any_work = parallel::group_any_work(rt.shard_group());
  std::unique_ptr<Progress> progress;
  if (what) {
    progress = std::make_unique<Progress>(what, static_cast<int64_t>(reqs.size()), "responses");
    opts.on_progress = [&](size_t finished, int64_t generated) {
      progress->update(static_cast<int64_t>(finished), generated, rt.world_size() > 1 ? "rank 0's share" : "");
    };
  }
  out.results = engine::generate(ses.pass(longest_prompt(ids), max_new), ses.tokenizer(), reqs, opts);
  return out;
}

}  // namespace

std::string detect_response_prefix(Session& s, const std::vector<std::string>& prompts) {
  // A prefix shows in the first tokens; 32 are enough to see one and to close a reasoning block.
  constexpr int64_t kTokens = 32;
  parallel::Runtime& rt = s.rt();
  std::vector<std::vector<int32_t>> ids;
  for (const std::string& p : prompts) {
    ids.push_back(s.tokenizer().encode(s.chat_template().render(s.system_prompt(), p, ""), false));
  }
  // A model with a short context: as many tokens as its longest sample prompt leaves room for
  // (the prompt sets were checked to fit it: check_phase_options).
  const int64_t context = s.spec().context_length();
  const int64_t room = context > 0 ? context - longest_prompt(ids) : kTokens;
  const int64_t tokens = std::clamp<int64_t>(room, 1, kTokens);
  std::vector<std::string> texts;
  for (const auto& r : generate_rank_block(s, ids, tokens, nullptr).results) texts.push_back(r.text);
  const auto all = rt.world().gather_strings(texts, 0);
  return parallel::root_string(rt.world(), [&] { return common_response_prefix(all); });
}

RefusalBlock greedy_refusals(Session& ses, const std::vector<std::vector<int32_t>>& ids,
                             const std::vector<io::Prompt>& prompts, const text::RefusalMarkers& markers,
                             int64_t max_new, const char* what) {
  parallel::Runtime& rt = ses.rt();
  const BlockResults block = generate_rank_block(ses, ids, max_new, what);
  RefusalBlock r;
  r.first = block.begin;
  for (size_t i = block.begin; i < block.end; ++i) {
    r.prompts.push_back(prompts[i].text);
    r.responses.push_back(block.results[i - block.begin].text);
    r.refused.push_back(markers.is_refusal(r.responses.back()) ? 1 : 0);
    r.refusals += r.refused.back();
  }
  rt.world().all_reduce_sum(&r.refusals, 1);
  return r;
}

void phase_baseline(Session& ses) {
  watchdog::set_phase("baseline");
  const EvaluationOptions& ev = need(ses.options().evaluation, "[evaluation]");
  parallel::Runtime& rt = ses.rt();
  const int64_t max_new = ev.max_response_length;
  const auto markers = load_refusal_markers(rt.world(), ev.refusal_markers);
  const auto kl_prompts = load_prompt_set(rt.world(), ev.kl);
  const auto eval_prompts = load_prompt_set(rt.world(), ev.eval);
  const int64_t V_ = ses.spec().vocab_size;
  // The file's size, checked before the work: (N_kl, V) f32 log-probabilities and the responses.
  const auto bytes = static_cast<int64_t>(kl_prompts.size()) * V_ * 4 + static_cast<int64_t>(eval_prompts.size()) * 4096;
  parallel::root_decides(rt.world(), [&] {
    check_free_space(ses.out_dir(), bytes, "baseline.h5");
    return true;
  });

  ses.backend();  // loaded before the prefix is detected with it
  const std::string& prefix = ses.response_prefix();
  const int64_t V = ses.spec().vocab_size;
  const auto kl_ids = ses.encode_prompt_set(kl_prompts, ev.kl, 0);
  const auto eval_ids = ses.encode_prompt_set(eval_prompts, ev.eval, max_new);
  const auto t0 = std::chrono::steady_clock::now();

  // KL reference: first-token log-probabilities of this rank's block.
  const auto [kb, ke] = rank_block(prompt_costs(kl_ids), rt);
  std::vector<std::vector<int32_t>> mine(kl_ids.begin() + static_cast<std::ptrdiff_t>(kb),
                                         kl_ids.begin() + static_cast<std::ptrdiff_t>(ke));
  std::vector<float> logprobs((ke - kb) * static_cast<size_t>(V));
  parallel::PrefillOptions popts;
  popts.residuals = false;
  parallel::prefill_lockstep(
      ses.pass(longest_prompt(kl_ids), 0), mine, rt.shard_group(),
      [&](size_t k, const float* logits, const float*) {
        cpu::log_softmax(logits, logprobs.data() + k * static_cast<size_t>(V), 1, V);
      },
      popts);

  // Unablated responses to this rank's block of the evaluation prompts.
  const RefusalBlock r = greedy_refusals(ses, eval_ids, eval_prompts, markers, max_new, "baseline");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  io::schema::BaselineMeta meta;
  meta.model = ses.model();
  meta.architecture = ses.spec().architecture;
  meta.chat_template = ses.chat_template().name();
  meta.system_prompt = ses.system_prompt();
  meta.response_prefix = prefix;
  meta.response_prefix_source = ses.response_prefix_source() == "given" ? "given" : "detected";
  meta.max_response_length = max_new;
  meta.abliterate_version = build::version;
  meta.inputs = phase_inputs(ses, Phase::baseline).dump();
  const std::string path = ses.out_path(io::schema::baseline::kFile);
  io::schema::BaselineWriter w(path, rt.world().handle(), meta, static_cast<int64_t>(kl_prompts.size()),
                               static_cast<int64_t>(eval_prompts.size()), V);
  std::vector<std::string> kl_texts;
  for (size_t i = kb; i < ke; ++i) kl_texts.push_back(kl_prompts[i].text);
  w.write_kl(static_cast<int64_t>(kb), static_cast<int64_t>(ke - kb), logprobs.data(), kl_texts);
  w.write_refusals(static_cast<int64_t>(r.first), r.prompts, r.responses, r.refused);
  w.commit();
  log::info("baseline: {}/{} evaluation prompts refused, {} KL prompts, in {:.1f} s -> {}", r.refusals,
            eval_prompts.size(), kl_prompts.size(), secs, path);
  ses.log_device_memory("baseline");
  if (ses.is_root() && !r.responses.empty()) {
    log::info("baseline: first response: {} -> {}", r.prompts[0], r.responses[0]);
  }
}

namespace {

int run_baseline(const po::variables_map& vm) {
  Session ses(parse_driver_options(vm), "baseline");
  check_phase_options(ses);
  phase_baseline(ses);
  return 0;
}

}  // namespace

Command baseline_command() {
  Command c;
  c.name = "baseline";
  c.summary = "first-token log-probabilities of the KL prompts and unablated refusals -> baseline.h5";
  c.usage = "--model DIR --good FILE --bad FILE --out DIR [--kl-split S] [--eval-split S]";
  c.declare = [](OptionSet& o) {
    declare_model_options(o);
    declare_prompt_set_options(o);
    declare_evaluation_options(o);
    declare_output_options(o);
    declare_engine_options(o);
    declare_dist_options(o);
  };
  c.run = run_baseline;
  return c;
}

}  // namespace abl::app
