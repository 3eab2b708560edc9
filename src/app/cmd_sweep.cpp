// `abliterate sweep`: proposes ablation trials in batches of K (grid, Sobol or TPE, on rank 0,
// which holds the history), evaluates each batch on every rank (trial_evaluator.h), appends it to
// trials.h5 and flushes it; run again, the sweep continues after the last complete batch, unless
// the settings the config hash covers changed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "abl/ablation/directions.h"
#include "abl/ablation/search.h"
#include "abl/ablation/trial.h"
#include "abl/app/commands.h"
#include "abl/app/dist_options.h"
#include "abl/app/driver.h"
#include "abl/app/model_options.h"
#include "abl/app/report.h"
#include "abl/app/trial_evaluator.h"
#include "abl/core/build_info.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/watchdog.h"
#include "abl/core/progress.h"
#include "abl/core/stop_signal.h"
#include "abl/parallel/agree.h"
#include "abl/io/driver_files.h"
#include "abl/io/safetensors.h"

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

SweepSettings sweep_settings(parallel::Comm& comm, const po::variables_map& vm, int64_t num_layers) {
  SweepSettings set;
  set.search = vm["search"].as<std::string>();
  ABL_CHECK(set.search == "tpe" || set.search == "sobol" || set.search == "grid",
            "--search must be tpe, sobol or grid, got '{}'", set.search);
  set.mode = engine::parse_row_norm(vm["row-normalization"].as<std::string>());
  const int64_t seed = vm["seed"].as<int64_t>();
  ABL_CHECK(seed >= 0, "--seed must be >= 0, got {}", seed);
  set.seed = static_cast<uint64_t>(seed);
  set.n_trials = vm["trials"].as<int64_t>();
  set.startup = vm["startup-trials"].as<int64_t>();
  ABL_CHECK(set.n_trials >= 0, "--trials must be >= 0, got {}", set.n_trials);
  ABL_CHECK(set.startup >= 0, "--startup-trials must be >= 0, got {}", set.startup);
  if (set.search == "grid") {
    const std::string gpath = vm["grid"].as<std::string>();
    ABL_CHECK(!gpath.empty(), "--search grid needs --grid FILE (see inputs/grids/)");
    set.grid_text = parallel::read_file_on_root(comm, gpath);
    set.grid = ablation::parse_grid_text(set.grid_text, gpath, num_layers);
    set.n_trials = static_cast<int64_t>(set.grid.size());
  } else {
    ABL_CHECK(vm["grid"].as<std::string>().empty(), "--grid is only used with --search grid");
  }
  // A slice of the sweep (a job-array task): trials [first, first + n_trials) of the whole.
  set.slice = vm["slice"].as<std::string>();
  if (!set.slice.empty()) {
    char sep = 0;
    std::istringstream in(set.slice);
    in >> set.slice_i >> sep >> set.slice_n;
    ABL_CHECK(!in.fail() && in.peek() == EOF && sep == '/' && set.slice_n >= 1 && set.slice_i >= 0 &&
                  set.slice_i < set.slice_n,
              "--slice must be I/N with 0 <= I < N, got '{}'", set.slice);
    ABL_CHECK(set.search != "tpe", "--slice needs --search sobol or grid: TPE proposes each batch from the previous ones");
    const int64_t total = set.n_trials;
    set.first = set.slice_i * total / set.slice_n;
    set.n_trials = (set.slice_i + 1) * total / set.slice_n - set.first;
    ABL_CHECK(set.n_trials > 0, "--slice {} of {} trials is empty; use fewer slices", set.slice, total);
  }
  const std::string tpb = vm["trials-per-batch"].as<std::string>();
  if (tpb != "auto") {
    size_t used = 0;
    try {
      set.per_batch = std::stoll(tpb, &used);
    } catch (const std::exception&) {
      set.per_batch = 0;
    }
    if (used != tpb.size()) set.per_batch = 0;
    ABL_CHECK(set.per_batch > 0, "--trials-per-batch must be 'auto' or a positive number, got '{}'", tpb);
  }
  return set;
}

SweepEnd phase_sweep(Session& ses) {
  const po::variables_map& vm = ses.vm();
  parallel::Runtime& rt = ses.rt();
  const model::ModelSpec& spec = ses.spec();
  const int64_t L = spec.num_layers;

  // ---- inputs, checked before any heavy work ----
  const std::string dpath = ses.out_path(io::schema::directions::kFile);
  const std::string bpath = ses.out_path(io::schema::baseline::kFile);
  parallel::root_decides(rt.world(), [&] {
    ABL_CHECK(fs::exists(dpath), "{} does not exist: run the directions phase first", dpath);
    ABL_CHECK(fs::exists(bpath), "{} does not exist: run the baseline phase first", bpath);
    return true;
  });
  const io::schema::DirectionsData dirs = io::schema::read_directions(dpath);
  ABL_CHECK(dirs.depths == L + 1 && dirs.hidden == spec.hidden_size,
            "{} holds directions of {} depths x {} (model {}), but --model {} has {} layers of hidden size {}", dpath,
            dirs.depths, dirs.hidden, dirs.model, ses.model(), L, spec.hidden_size);
  ABL_CHECK(dirs.architecture.empty() || dirs.architecture == spec.architecture,
            "{} was computed for a {} ({}), but --model {} is a {}", dpath, dirs.architecture, dirs.model,
            ses.model(), spec.architecture);
  io::schema::BaselineReader base(bpath);
  ABL_CHECK(base.vocab() == spec.vocab_size && base.meta().architecture == spec.architecture,
            "{} is the baseline of {} ({}, vocabulary {}), but --model {} is a {} with vocabulary {}", bpath,
            base.meta().model, base.meta().architecture, base.vocab(), ses.model(), spec.architecture,
            spec.vocab_size);
  const std::string given_prefix = vm["response-prefix"].as<std::string>();
  ABL_CHECK(given_prefix == "auto" || given_prefix == base.meta().response_prefix,
            "--response-prefix \"{}\" differs from the \"{}\" that {} was measured with; rerun baseline", given_prefix,
            base.meta().response_prefix, bpath);
  ses.set_response_prefix(base.meta().response_prefix, "baseline.h5");
  const std::string rpath = ses.out_path(io::schema::residuals::kFile);
  if (fs::exists(rpath)) {
    // The directions and the scores must see the same rendered prompts.
    const io::schema::ResidualsReader res(rpath);
    ABL_CHECK(res.meta().response_prefix == base.meta().response_prefix,
              "{} was computed with the response prefix \"{}\" but {} with \"{}\"; rerun residuals and directions",
              rpath, res.meta().response_prefix, bpath, base.meta().response_prefix);
  }
  const auto markers = load_refusal_markers(rt.world(), vm["refusal-markers"].as<std::string>());
  const int64_t max_new = base.meta().max_response_length;
  ABL_CHECK(vm["max-response-length"].defaulted() || vm["max-response-length"].as<int64_t>() == max_new,
            "--max-response-length {} differs from the {} that {} was measured with; rerun baseline",
            vm["max-response-length"].as<int64_t>(), max_new, bpath);

  const SweepSettings set = sweep_settings(rt.world(), vm, L);
  if (set.n_trials == 0) {
    log::info("sweep: --trials 0: nothing to evaluate");
    return SweepEnd::complete;
  }
  const std::string& search = set.search;
  const engine::RowNorm mode = set.mode;
  const uint64_t seed = set.seed;
  const int64_t startup = set.startup;
  const std::vector<ablation::TrialParams>& grid = set.grid;
  const std::string& grid_text = set.grid_text;
  const std::string& slice = set.slice;
  const int64_t first = set.first, slice_i = set.slice_i, slice_n = set.slice_n;
  int64_t n_trials = set.n_trials;
  const ablation::SearchSpace space = ablation::default_search_space(L);

  const auto kl_texts = base.kl_prompts();
  const auto eval_texts = base.refusal_prompts();
  std::vector<std::vector<int32_t>> kl_ids, eval_ids;
  for (const auto& t : kl_texts) kl_ids.push_back(ses.encode_prompt(t));
  for (const auto& t : eval_texts) eval_ids.push_back(ses.encode_prompt(t));
  const auto n_eval = static_cast<int64_t>(eval_texts.size());

  int64_t per_batch = set.per_batch;
  if (per_batch == 0) {
    // auto: enough sequences to fill every rank's passes, within reason for the search.
    per_batch = (rt.world_size() * ses.limits().max_seqs + n_eval - 1) / n_eval;
    per_batch = std::clamp<int64_t>(per_batch, 1, 64);
  }

  // ---- the settings a resumed sweep must share ----
  nlohmann::ordered_json cfg;
  cfg["model"] = ses.model_fingerprint();
  cfg["directions"] = hex64(fnv1a(dirs.directions.data(), dirs.directions.size() * sizeof(double)));
  std::vector<float> base_logprobs = base.kl_logprobs();  // (N_kl, V): hashed here, scored against later
  cfg["baseline_logprobs"] = hex64(fnv1a(base_logprobs.data(), base_logprobs.size() * sizeof(float)));
  cfg["kl_prompts"] = hex64(fnv1a(nlohmann::json(kl_texts).dump()));
  cfg["eval_prompts"] = hex64(fnv1a(nlohmann::json(eval_texts).dump()));
  cfg["chat_template"] = ses.chat_template().name();
  cfg["system_prompt"] = ses.system_prompt();
  cfg["response_prefix"] = ses.response_prefix();
  cfg["refusal_markers"] = hex64(fnv1a(nlohmann::json(markers.markers()).dump()));
  cfg["max_response_length"] = max_new;
  cfg["row_normalization"] = std::string(engine::row_norm_name(mode));
  cfg["search"] = search;
  cfg["seed"] = seed;
  if (search == "tpe") cfg["startup_trials"] = startup;
  if (search == "grid") cfg["grid"] = hex64(fnv1a(grid_text));
  cfg["store_responses"] = vm["store-responses"].as<bool>();
  const std::string cfg_json = cfg.dump();
  const std::string hash = hex64(fnv1a(cfg_json));

  // ---- the trials file (rank 0) and the history every proposal depends on ----
  const std::string tpath =
      ses.out_path(slice_n > 1 || !slice.empty() ? io::schema::trials::slice_file(slice_i, slice_n) : io::schema::trials::kFile);
  // The engine (topology, memory, backend) before the trials file exists: an error there leaves no
  // empty file behind.
  ses.backend();
  std::unique_ptr<io::schema::TrialsStore> store;
  std::vector<ablation::TrialParams> done;
  std::vector<ablation::Scores> scores;
  double elapsed_before = 0;
  int64_t header[2] = {0, per_batch};  // trials done, trials per batch
  if (ses.is_root()) {
    io::schema::TrialsMeta meta;
    meta.config_hash = hash;
    meta.config_json = cfg_json;
    for (const char* n : ablation::kParamNames) meta.param_names.emplace_back(n);
    meta.search = search;
    meta.trials_per_batch = per_batch;
    meta.n_kl = static_cast<int64_t>(kl_texts.size());
    meta.n_refusal = n_eval;
    meta.baseline_refusals = base.refusals();
    meta.store_responses = vm["store-responses"].as<bool>();
    meta.model = ses.model();
    meta.abliterate_version = build::version;
    meta.first_trial = first;
    meta.slice_index = slice_i;
    meta.slice_count = slice_n;
    store = std::make_unique<io::schema::TrialsStore>(io::schema::TrialsStore::open(
        tpath, meta, vm["restart"].as<bool>() ? io::schema::TrialsStore::Resume::restart
                                              : io::schema::TrialsStore::Resume::allowed));
    for (const auto& row : store->read_all()) {
      std::array<double, ablation::kParamNames.size()> v{};
      std::copy(row.params.begin(), row.params.end(), v.begin());
      done.push_back(ablation::params_from_values(v));
      scores.push_back({static_cast<double>(row.refusals), row.kl});
      elapsed_before = row.elapsed_s;
    }
    header[0] = static_cast<int64_t>(done.size());
    if (store->resumed() && store->meta().trials_per_batch != per_batch) {
      log::info("sweep: continuing with the {} trials per batch of the stored sweep (not {})",
                store->meta().trials_per_batch, per_batch);
    }
    header[1] = store->meta().trials_per_batch;
  }
  rt.world().broadcast(header, sizeof header, 0);
  int64_t n_done = header[0];
  per_batch = header[1];
  if (n_done >= n_trials) {
    log::info("sweep: {} already holds {} trials (--trials {}): nothing to evaluate", tpath, n_done, n_trials);
    n_trials = n_done;
  } else if (n_done > 0) {
    log::info("sweep: resuming {} after {} trials", tpath, n_done);
  }

  TrialEvaluator eval(ses, ablation::direction_rows(dirs), mode, std::move(kl_ids), std::move(base_logprobs), std::move(eval_ids), markers,
                      max_new, vm["early-exit"].as<bool>(), vm["store-responses"].as<bool>());
  log::info("sweep: {} search, {} trials ({} done), {} per batch, {} KL + {} evaluation prompts, baseline {}/{} refusals",
            search, n_trials, n_done, per_batch, kl_texts.size(), n_eval, base.refusals(), n_eval);

  install_stop_handlers();
  const auto t0 = Clock::now();
  const int64_t first_new = n_done;
  Progress progress("sweep", n_trials - first_new, "trials");
  int64_t decode_tokens = 0, prompt_tokens = 0;
  while (n_done < n_trials) {
    // Batch b holds trials [b * per_batch, (b + 1) * per_batch). A sweep that ended inside a batch
    // (fewer trials asked) and is now extended completes that batch first, with the proposals an
    // uninterrupted sweep would have made: TPE proposes the whole batch from the history before it
    // (its proposals are a prefix-stable stream) and the trials already stored are skipped.
    const int64_t batch = n_done / per_batch;
    const int64_t batch_start = batch * per_batch;
    const int64_t batch_end = std::min(batch_start + per_batch, n_trials);
    const int64_t k = batch_end - n_done;
    watchdog::set_phase(fmt::format("sweep batch {}", batch));
    std::vector<ablation::TrialParams> proposal;
    if (ses.is_root()) {
      if (search == "grid") {
        proposal.assign(grid.begin() + first + n_done, grid.begin() + first + n_done + k);
      } else if (search == "sobol") {
        proposal = ablation::sobol_trials(space, seed, first + n_done, k);
      } else {
        const int64_t full = batch_end - batch_start;
        const int64_t n_sobol = std::clamp<int64_t>(startup - batch_start, 0, full);
        proposal = ablation::sobol_trials(space, seed, batch_start, n_sobol);
        if (full > n_sobol) {
          const std::vector<ablation::TrialParams> history(done.begin(), done.begin() + batch_start);
          const std::vector<ablation::Scores> history_scores(scores.begin(), scores.begin() + batch_start);
          const auto more = ablation::tpe_propose(space, history, history_scores, full - n_sobol,
                                                  seed * 1000003ull + static_cast<uint64_t>(batch));
          proposal.insert(proposal.end(), more.begin(), more.end());
        }
        proposal.erase(proposal.begin(), proposal.begin() + (n_done - batch_start));
      }
    }
    proposal = broadcast_trials(rt.world(), proposal, k);
    const BatchResult r = eval.evaluate(proposal);
    decode_tokens += r.decode_tokens;
    prompt_tokens += r.prompt_tokens;
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    // Rank 0 stores the batch; every rank learns whether that worked (a full disk ends the job
    // with exit status 1 on every rank, the trials of earlier batches kept).
    parallel::root_decides(rt.world(), [&] {
      std::vector<io::schema::TrialRow> rows;
      for (int64_t t = 0; t < k; ++t) {
        io::schema::TrialRow row;
        const auto v = ablation::param_values(proposal[static_cast<size_t>(t)]);
        row.params.assign(v.begin(), v.end());
        row.kl = r.kl[static_cast<size_t>(t)];
        if (!std::isfinite(row.kl)) {
          // NaN weights, an overflowing parameter: the trial failed; stored as NaN, never on the front.
          log::warn("sweep: trial {} ({}) has a non-finite KL divergence ({}); it is stored as failed (KL NaN)",
                    n_done + t, ablation::describe(proposal[static_cast<size_t>(t)]), row.kl);
          row.kl = std::numeric_limits<double>::quiet_NaN();
        }
        row.refusals = r.refusals[static_cast<size_t>(t)];
        row.batch = batch;
        row.elapsed_s = elapsed_before + secs;
        if (!r.responses.empty()) row.responses = r.responses[static_cast<size_t>(t)];
        rows.push_back(std::move(row));
      }
      check_free_space(ses.out_dir(), store->append_bytes(rows), fmt::format("storing the {} trials of batch {}", k, batch));
      store->append(rows);
      for (int64_t t = 0; t < k; ++t) {
        done.push_back(proposal[static_cast<size_t>(t)]);
        scores.push_back({static_cast<double>(rows[static_cast<size_t>(t)].refusals), rows[static_cast<size_t>(t)].kl});
      }
      return true;
    });
    n_done += k;
    if (ses.is_root()) {
      const auto front = ablation::pareto_front(scores);
      std::string best;
      for (size_t i = 0; i < std::min<size_t>(front.size(), 3); ++i) {
        best += fmt::format("{}{}/{} @ KL {:.3f}", i ? ", " : "", scores[front[i]].refusals, n_eval, scores[front[i]].kl);
      }
      const std::string stored = first_new > 0 ? fmt::format("{}/{} in the file, ", n_done, n_trials) : "";
      progress.update(n_done - first_new, decode_tokens + prompt_tokens, fmt::format("batch {}", batch),
                      fmt::format("{}front: {}", stored, best));
    }
    // A signal on any rank stops every rank after this batch, which is already in trials.h5.
    int64_t stop = stop_signal();
    rt.world().all_reduce_max(&stop, 1);
    if (stop != 0 && n_done < n_trials) {
      log::info("sweep: stopping on signal {} after {}/{} trials, all in {}; run the same command again to resume",
                stop, n_done, n_trials, io::h5::OutputFile::partial_path_for(tpath));
      rt.world().barrier();
      return SweepEnd::interrupted;
    }
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  parallel::root_decides(rt.world(), [&] {
    store->finish();
    const int64_t evaluated = n_trials - first_new;
    log::info("sweep: {} trials in {:.1f} s ({:.0f} trials/h; {} decode + {} prompt tokens) -> {}", evaluated, secs,
              evaluated > 0 && secs > 0 ? static_cast<double>(evaluated) * 3600.0 / secs : 0.0, decode_tokens,
              prompt_tokens, tpath);
    print_report(io::schema::read_trials(tpath), std::cout);
    return true;
  });
  return SweepEnd::complete;
}

namespace {

int run_sweep(const po::variables_map& vm) {
  Session ses(vm, "sweep");
  check_phase_options(ses);
  return phase_sweep(ses) == SweepEnd::complete ? 0 : kExitResumable;
}

}  // namespace

Command sweep_command() {
  Command c;
  c.name = "sweep";
  c.summary = "evaluate ablation trials (grid, Sobol or TPE), K per forward pass, resumable -> trials.h5";
  c.usage = "--model DIR --out DIR [--search tpe|sobol|grid] [--trials N] [--grid FILE]";
  c.declare = [](OptionSet& o) {
    declare_model_options(o);
    declare_evaluation_options(o);
    declare_sweep_options(o);
    declare_output_options(o);
    declare_engine_options(o);
    declare_dist_options(o);
  };
  c.run = run_sweep;
  return c;
}

}  // namespace abl::app
