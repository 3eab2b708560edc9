// The sweep phase (sweep.h): proposes ablation trials in batches of K (a Proposer on rank 0, which
// holds the history), evaluates each batch on every rank (trial_evaluator.h), appends it to
// trials.h5 and flushes it; run again, the sweep continues after the last complete batch, unless
// the settings the config hash covers changed.
#include "abl/app/sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>

#include <nlohmann/json.hpp>

#include "abl/ablation/directions.h"
#include "abl/ablation/search.h"
#include "abl/app/report.h"
#include "abl/app/run_folder.h"
#include "abl/app/trial_evaluator.h"
#include "abl/core/build_info.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/progress.h"
#include "abl/core/stop_signal.h"
#include "abl/core/watchdog.h"
#include "abl/parallel/agree.h"

namespace abl::app {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Proposals are made on rank 0 (it holds the history) and sent to every rank as values.
std::vector<ablation::TrialParams> broadcast_trials(parallel::Comm& comm, std::vector<ablation::TrialParams> trials,
                                                    int64_t count) {
  constexpr size_t P = ablation::kParamNames.size();
  std::vector<double> flat(static_cast<size_t>(count) * P);
  for (size_t i = 0; i < trials.size(); ++i) {
    const auto v = ablation::param_values(trials[i]);
    std::copy(v.begin(), v.end(), flat.begin() + static_cast<std::ptrdiff_t>(i * P));
  }
  comm.broadcast(flat.data(), flat.size() * sizeof(double), 0);
  trials.clear();
  for (int64_t i = 0; i < count; ++i) {
    std::array<double, P> v{};
    std::copy(flat.begin() + static_cast<std::ptrdiff_t>(i * P), flat.begin() + static_cast<std::ptrdiff_t>((i + 1) * P), v.begin());
    trials.push_back(ablation::params_from_values(v));
  }
  return trials;
}

}  // namespace

SweepSettings sweep_settings(parallel::Comm& comm, const SweepOptions& opts, int64_t num_layers) {
  SweepSettings set;
  set.search = opts.search;
  set.mode = opts.row_norm;
  set.routed_experts = opts.ablate_experts;
  set.seed = opts.seed;
  set.n_trials = opts.trials;
  set.startup = opts.startup_trials;
  set.per_batch = opts.per_batch;
  set.early_exit = opts.early_exit;
  set.store_responses = opts.store_responses;
  set.restart = opts.restart;
  if (set.search == "grid") {
    set.grid_text = parallel::read_file_on_root(comm, opts.grid);
    set.grid = ablation::parse_grid_text(set.grid_text, opts.grid, num_layers);
    set.n_trials = static_cast<int64_t>(set.grid.size());
  }
  // A slice of the sweep (a job-array task): trials [first, first + n_trials) of the whole.
  set.slice = opts.slice;
  set.slice_i = opts.slice_i;
  set.slice_n = opts.slice_n;
  if (!set.slice.empty()) {
    const int64_t total = set.n_trials;
    set.first = set.slice_i * total / set.slice_n;
    set.n_trials = (set.slice_i + 1) * total / set.slice_n - set.first;
    ABL_CHECK(set.n_trials > 0, "--slice {} of {} trials is empty; use fewer slices", set.slice, total);
  }
  return set;
}

std::unique_ptr<ablation::Proposer> make_proposer(const SweepSettings& set, int64_t num_layers) {
  const ablation::SearchSpace space = ablation::default_search_space(num_layers);
  if (set.search == "grid") return std::make_unique<ablation::GridProposer>(set.grid, set.first);
  if (set.search == "sobol") return std::make_unique<ablation::SobolProposer>(space, set.seed, set.first);
  ABL_CHECK(set.search == "tpe", "unknown search '{}'", set.search);
  return std::make_unique<ablation::TpeProposer>(space, set.seed, set.startup);
}

Sweep::Sweep(Session& ses) : ses_(ses) {}
Sweep::~Sweep() = default;

SweepEnd Sweep::run() {
  check_inputs();
  set_ = sweep_settings(ses_.rt().world(), need(ses_.options().sweep, "[sweep]"), ses_.spec().num_layers);
  if (set_.n_trials == 0) {
    log::info("sweep: --trials 0: nothing to evaluate");
    return SweepEnd::complete;
  }
  n_trials_ = set_.n_trials;
  encode_prompts();
  choose_batch_size();
  hash_config();
  tpath_ = ses_.out_path(set_.slice_n > 1 || !set_.slice.empty() ? io::schema::trials::slice_file(set_.slice_i, set_.slice_n)
                                                                   : io::schema::trials::kFile);
  // The engine (topology, memory, backend) before the trials file exists: an error there leaves no
  // empty file behind.
  ses_.backend();
  open_trials_file();
  proposer_ = make_proposer(set_, ses_.spec().num_layers);
  TrialEvaluator eval(ses_, ablation::direction_rows(dirs_), set_.mode, set_.routed_experts, std::move(kl_ids_), std::move(base_logprobs_),
                      std::move(eval_ids_), *markers_, max_new_, set_.early_exit, set_.store_responses);
  log::info("sweep: {} search, {} trials ({} done), {} per batch, {} KL + {} evaluation prompts, baseline {}/{} refusals",
            set_.search, n_trials_, n_done_, per_batch_, kl_texts_.size(), n_eval_, base_->refusals(), n_eval_);
  return evaluate_batches(eval);
}

void Sweep::check_inputs() {
  const model::ModelSpec& spec = ses_.spec();
  const int64_t L = spec.num_layers;
  dpath_ = ses_.out_path(io::schema::directions::kFile);
  bpath_ = ses_.out_path(io::schema::baseline::kFile);
  parallel::root_decides(ses_.rt().world(), [&] {
    ABL_CHECK(fs::exists(dpath_), "{} does not exist: run the directions phase first", dpath_);
    ABL_CHECK(fs::exists(bpath_), "{} does not exist: run the baseline phase first", bpath_);
    return true;
  });
  dirs_ = io::schema::read_directions(dpath_);
  ABL_CHECK(dirs_.depths == L + 1 && dirs_.hidden == spec.hidden_size,
            "{} holds directions of {} depths x {} (model {}), but --model {} has {} layers of hidden size {}", dpath_,
            dirs_.depths, dirs_.hidden, dirs_.model, ses_.model(), L, spec.hidden_size);
  ABL_CHECK(dirs_.architecture.empty() || dirs_.architecture == spec.architecture,
            "{} was computed for a {} ({}), but --model {} is a {}", dpath_, dirs_.architecture, dirs_.model,
            ses_.model(), spec.architecture);
  base_ = std::make_unique<io::schema::BaselineReader>(bpath_);
  const io::schema::BaselineReader& base = *base_;
  ABL_CHECK(base.vocab() == spec.vocab_size && base.meta().architecture == spec.architecture,
            "{} is the baseline of {} ({}, vocabulary {}), but --model {} is a {} with vocabulary {}", bpath_,
            base.meta().model, base.meta().architecture, base.vocab(), ses_.model(), spec.architecture,
            spec.vocab_size);
  const std::string& given_prefix = need(ses_.options().model, "[model]").response_prefix;
  ABL_CHECK(given_prefix == "auto" || given_prefix == base.meta().response_prefix,
            "--response-prefix \"{}\" differs from the \"{}\" that {} was measured with; rerun baseline", given_prefix,
            base.meta().response_prefix, bpath_);
  ses_.set_response_prefix(base.meta().response_prefix, "baseline.h5");
  const std::string rpath = ses_.out_path(io::schema::residuals::kFile);
  if (fs::exists(rpath)) {
    // The directions and the scores must see the same rendered prompts.
    const io::schema::ResidualsReader res(rpath);
    ABL_CHECK(res.meta().response_prefix == base.meta().response_prefix,
              "{} was computed with the response prefix \"{}\" but {} with \"{}\"; rerun residuals and directions",
              rpath, res.meta().response_prefix, bpath_, base.meta().response_prefix);
  }
  const EvaluationOptions& ev = need(ses_.options().evaluation, "[evaluation]");
  markers_ = std::make_unique<text::RefusalMarkers>(load_refusal_markers(ses_.rt().world(), ev.refusal_markers));
  max_new_ = base.meta().max_response_length;
  ABL_CHECK(!ev.max_response_length_given || ev.max_response_length == max_new_,
            "--max-response-length {} differs from the {} that {} was measured with; rerun baseline",
            ev.max_response_length, max_new_, bpath_);
}

void Sweep::encode_prompts() {
  kl_texts_ = base_->kl_prompts();
  eval_texts_ = base_->refusal_prompts();
  for (const auto& t : kl_texts_) kl_ids_.push_back(ses_.encode_prompt(t));
  for (const auto& t : eval_texts_) eval_ids_.push_back(ses_.encode_prompt(t));
  n_eval_ = static_cast<int64_t>(eval_texts_.size());
}

void Sweep::choose_batch_size() {
  per_batch_ = set_.per_batch;
  if (per_batch_ == 0) {
    // auto: enough sequences to fill every rank's passes, within reason for the search.
    per_batch_ = (ses_.rt().world_size() * ses_.limits().max_seqs + n_eval_ - 1) / n_eval_;
    per_batch_ = std::clamp<int64_t>(per_batch_, 1, 64);
  }
}

void Sweep::hash_config() {
  nlohmann::ordered_json cfg;
  cfg["model"] = ses_.model_fingerprint();
  cfg["directions"] = hex64(fnv1a(dirs_.directions.data(), dirs_.directions.size() * sizeof(double)));
  base_logprobs_ = base_->kl_logprobs();  // (N_kl, V): hashed here, scored against later
  cfg["baseline_logprobs"] = hex64(fnv1a(base_logprobs_.data(), base_logprobs_.size() * sizeof(float)));
  cfg["kl_prompts"] = hex64(fnv1a(nlohmann::json(kl_texts_).dump()));
  cfg["eval_prompts"] = hex64(fnv1a(nlohmann::json(eval_texts_).dump()));
  cfg["chat_template"] = ses_.chat_template().name();
  cfg["system_prompt"] = ses_.system_prompt();
  cfg["response_prefix"] = ses_.response_prefix();
  cfg["refusal_markers"] = hex64(fnv1a(nlohmann::json(markers_->markers()).dump()));
  cfg["max_response_length"] = max_new_;
  cfg["row_normalization"] = std::string(engine::row_norm_name(set_.mode));
  if (!set_.routed_experts) cfg["ablate_experts"] = false;  // absent: true (older files too)
  cfg["search"] = set_.search;
  cfg["seed"] = set_.seed;
  if (set_.search == "tpe") cfg["startup_trials"] = set_.startup;
  if (set_.search == "grid") cfg["grid"] = hex64(fnv1a(set_.grid_text));
  cfg["store_responses"] = set_.store_responses;
  cfg_json_ = cfg.dump();
  hash_ = hex64(fnv1a(cfg_json_));
}

void Sweep::open_trials_file() {
  int64_t header[2] = {0, per_batch_};  // trials done, trials per batch
  if (ses_.is_root()) {
    io::schema::TrialsMeta meta;
    meta.config_hash = hash_;
    meta.config_json = cfg_json_;
    for (const char* n : ablation::kParamNames) meta.param_names.emplace_back(n);
    meta.search = set_.search;
    meta.trials_per_batch = per_batch_;
    meta.n_kl = static_cast<int64_t>(kl_texts_.size());
    meta.n_refusal = n_eval_;
    meta.baseline_refusals = base_->refusals();
    meta.store_responses = set_.store_responses;
    meta.model = ses_.model();
    meta.abliterate_version = build::version;
    meta.first_trial = set_.first;
    meta.slice_index = set_.slice_i;
    meta.slice_count = set_.slice_n;
    store_ = std::make_unique<io::schema::TrialsStore>(io::schema::TrialsStore::open(
        tpath_, meta, set_.restart ? io::schema::TrialsStore::Resume::restart : io::schema::TrialsStore::Resume::allowed));
    for (const auto& row : store_->read_all()) {
      std::array<double, ablation::kParamNames.size()> v{};
      std::copy(row.params.begin(), row.params.end(), v.begin());
      done_.push_back(ablation::params_from_values(v));
      scores_.push_back({static_cast<double>(row.refusals), row.kl});
      elapsed_before_ = row.elapsed_s;
    }
    header[0] = static_cast<int64_t>(done_.size());
    if (store_->resumed() && store_->meta().trials_per_batch != per_batch_) {
      log::info("sweep: continuing with the {} trials per batch of the stored sweep (not {})",
                store_->meta().trials_per_batch, per_batch_);
    }
    header[1] = store_->meta().trials_per_batch;
  }
  ses_.rt().world().broadcast(header, sizeof header, 0);
  n_done_ = header[0];
  per_batch_ = header[1];
  if (n_done_ >= n_trials_) {
    log::info("sweep: {} already holds {} trials (--trials {}): nothing to evaluate", tpath_, n_done_, n_trials_);
    n_trials_ = n_done_;
  } else if (n_done_ > 0) {
    log::info("sweep: resuming {} after {} trials", tpath_, n_done_);
  }
}

SweepEnd Sweep::evaluate_batches(TrialEvaluator& eval) {
  install_stop_handlers();
  const auto t0 = Clock::now();
  first_new_ = n_done_;
  Progress progress("sweep", n_trials_ - first_new_, "trials");
  while (n_done_ < n_trials_) {
    const ablation::BatchRequest batch = next_batch();
    watchdog::set_phase(fmt::format("sweep batch {}", batch.index));
    const std::vector<ablation::TrialParams> proposal = propose(batch);
    const BatchResult r = eval.evaluate(proposal);
    decode_tokens_ += r.decode_tokens;
    prompt_tokens_ += r.prompt_tokens;
    store_batch(batch, proposal, r, std::chrono::duration<double>(Clock::now() - t0).count());
    n_done_ = batch.end;
    report_progress(progress, batch);
    if (stop_requested()) return SweepEnd::interrupted;
  }
  finish(std::chrono::duration<double>(Clock::now() - t0).count());
  return SweepEnd::complete;
}

ablation::BatchRequest Sweep::next_batch() const {
  // Batch b holds trials [b * per_batch, (b + 1) * per_batch). A sweep that ended inside a batch
  // (fewer trials asked) and is now extended completes that batch first, with the proposals an
  // uninterrupted sweep would have made: the proposer proposes the whole batch from the history
  // before it (its proposals are a prefix-stable stream) and the trials already stored are skipped.
  ablation::BatchRequest b;
  b.index = n_done_ / per_batch_;
  b.start = b.index * per_batch_;
  b.end = std::min(b.start + per_batch_, n_trials_);
  b.from = n_done_;
  return b;
}

std::vector<ablation::TrialParams> Sweep::propose(const ablation::BatchRequest& batch) {
  std::vector<ablation::TrialParams> proposal;
  if (ses_.is_root()) proposal = proposer_->propose(batch, {done_, scores_});
  return broadcast_trials(ses_.rt().world(), proposal, batch.end - batch.from);
}

void Sweep::store_batch(const ablation::BatchRequest& batch, const std::vector<ablation::TrialParams>& trials,
                        const BatchResult& r, double secs) {
  // Rank 0 stores the batch; every rank learns whether that worked (a full disk ends the job
  // with exit status 1 on every rank, the trials of earlier batches kept).
  const int64_t k = batch.end - batch.from;
  parallel::root_decides(ses_.rt().world(), [&] {
    std::vector<io::schema::TrialRow> rows;
    for (int64_t t = 0; t < k; ++t) {
      const auto i = static_cast<size_t>(t);
      io::schema::TrialRow row;
      const auto v = ablation::param_values(trials[i]);
      row.params.assign(v.begin(), v.end());
      row.kl = r.kl[i];
      if (!std::isfinite(row.kl)) {
        // NaN weights, an overflowing parameter: the trial failed; stored as NaN, never on the front.
        log::warn("sweep: trial {} ({}) has a non-finite KL divergence ({}); it is stored as failed (KL NaN)",
                  batch.from + t, ablation::describe(trials[i]), row.kl);
        row.kl = std::numeric_limits<double>::quiet_NaN();
      }
      row.refusals = r.refusals[i];
      row.batch = batch.index;
      row.elapsed_s = elapsed_before_ + secs;
      if (!r.responses.empty()) row.responses = r.responses[i];
      rows.push_back(std::move(row));
    }
    check_free_space(ses_.out_dir(), store_->append_bytes(rows),
                     fmt::format("storing the {} trials of batch {}", k, batch.index));
    store_->append(rows);
    for (int64_t t = 0; t < k; ++t) {
      const auto i = static_cast<size_t>(t);
      done_.push_back(trials[i]);
      scores_.push_back({static_cast<double>(rows[i].refusals), rows[i].kl});
    }
    return true;
  });
}

void Sweep::report_progress(Progress& progress, const ablation::BatchRequest& batch) {
  if (!ses_.is_root()) return;
  const auto front = ablation::pareto_front(scores_);
  std::string best;
  for (size_t i = 0; i < std::min<size_t>(front.size(), 3); ++i) {
    best += fmt::format("{}{}/{} @ KL {:.3f}", i ? ", " : "", scores_[front[i]].refusals, n_eval_, scores_[front[i]].kl);
  }
  const std::string stored = first_new_ > 0 ? fmt::format("{}/{} in the file, ", n_done_, n_trials_) : "";
  progress.update(n_done_ - first_new_, decode_tokens_ + prompt_tokens_, fmt::format("batch {}", batch.index),
                  fmt::format("{}front: {}", stored, best));
}

bool Sweep::stop_requested() {
  // A signal on any rank stops every rank after this batch, which is already in trials.h5.
  int64_t stop = stop_signal();
  ses_.rt().world().all_reduce_max(&stop, 1);
  if (stop == 0 || n_done_ >= n_trials_) return false;
  log::info("sweep: stopping on signal {} after {}/{} trials, all in {}; run the same command again to resume", stop,
            n_done_, n_trials_, io::h5::OutputFile::partial_path_for(tpath_));
  ses_.rt().world().barrier();
  return true;
}

void Sweep::finish(double secs) {
  parallel::root_decides(ses_.rt().world(), [&] {
    store_->finish();
    const int64_t evaluated = n_trials_ - first_new_;
    log::info("sweep: {} trials in {:.1f} s ({:.0f} trials/h; {} decode + {} prompt tokens) -> {}", evaluated, secs,
              evaluated > 0 && secs > 0 ? static_cast<double>(evaluated) * 3600.0 / secs : 0.0, decode_tokens_,
              prompt_tokens_, tpath_);
    print_report(io::schema::read_trials(tpath_), std::cout);
    return true;
  });
  ses_.log_device_memory("sweep");
}

SweepEnd phase_sweep(Session& s) { return Sweep(s).run(); }

}  // namespace abl::app
