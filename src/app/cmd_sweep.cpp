// `abliterate sweep`: evaluates ablation trials in batches of K. One batch is two sets of
// forward passes over every rank: the KL prompts of all K trials (prefill only: first-token
// log-probabilities against baseline.h5) and the evaluation prompts of all K trials (greedy
// generation that stops at EOS, at max_response_length or — early exit — at the first refusal
// marker). Each sequence carries its trial id, so one pass serves many trials (DESIGN.md §2).
// The (trial, prompt) items are split over all ranks; per-item results are summed into arrays
// where every item has exactly one owner, so the scores do not depend on the layout. Rank 0
// proposes the trials, appends each batch to trials.h5 and flushes it; run again, the sweep
// continues after the last complete batch.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
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
#include "abl/backend/ops.h"
#include "abl/core/build_info.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/dist/lockstep.h"
#include "abl/engine/generate.h"
#include "abl/io/driver_files.h"
#include "abl/io/safetensors.h"

namespace abl::app {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

uint64_t fnv1a(const void* data, size_t n, uint64_t h = 1469598103934665603ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) { return fnv1a(s.data(), s.size(), h); }

std::string hex(uint64_t h) { return fmt::format("{:016x}", h); }

// What identifies the model's weights without reading them: config.json and the tensor table.
std::string model_fingerprint(const std::string& model) {
  if (is_synthetic(model)) return model;
  std::ifstream in(fs::path(model) / "config.json", std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  uint64_t h = fnv1a(text.str());
  io::SafetensorsReader st(model);
  for (const auto& t : st.tensors()) {
    h = fnv1a(t.name, h);
    h = fnv1a(fmt::format("{}:{}:{}", t.dtype_name, fmt::join(t.shape, "x"), t.nbytes()), h);
  }
  return hex(h);
}

int64_t longest(const std::vector<std::vector<int32_t>>& prompts) {
  int64_t n = 0;
  for (const auto& p : prompts) n = std::max<int64_t>(n, static_cast<int64_t>(p.size()));
  return n;
}

// The ablation trials of one batch evaluated on every rank (collective over the world).
struct BatchResult {
  std::vector<double> kl;          // (K)
  std::vector<int64_t> refusals;   // (K)
  std::vector<std::vector<std::string>> responses;  // (K, N_eval) on rank 0 when kept
  int64_t decode_tokens = 0;       // generated tokens, all ranks
  int64_t prompt_tokens = 0;       // prefilled tokens, all ranks
};

class TrialEvaluator {
 public:
  TrialEvaluator(Session& ses, std::vector<std::vector<float>> directions, ablation::RowNorm mode,
                 std::vector<std::vector<int32_t>> kl_ids, std::vector<float> base_logprobs,
                 std::vector<std::vector<int32_t>> eval_ids, const text::RefusalMarkers& markers, int64_t max_new,
                 bool early_exit, bool keep_responses)
      : ses_(ses), directions_(std::move(directions)), mode_(mode), kl_ids_(std::move(kl_ids)),
        base_(std::move(base_logprobs)), eval_ids_(std::move(eval_ids)), markers_(markers), max_new_(max_new),
        early_exit_(early_exit), keep_responses_(keep_responses) {}

  BatchResult evaluate(const std::vector<ablation::TrialParams>& trials) {
    dist::Runtime& rt = ses_.rt();
    const auto K = static_cast<int64_t>(trials.size());
    const auto table = ablation::build_trial_table(trials, directions_, mode_);
    ablation::AblationEpilogue epi(ses_.spec(), table.directions, table.ablations);
    engine::Engine& eng = ses_.engine();
    BatchResult res;

    // KL: items (trial t, prompt p) in t-major order, a contiguous block per rank.
    const auto n_kl = static_cast<int64_t>(kl_ids_.size());
    const int64_t V = ses_.spec().vocab_size;
    {
      std::vector<int64_t> cost;
      for (int64_t i = 0; i < K * n_kl; ++i) cost.push_back(static_cast<int64_t>(kl_ids_[static_cast<size_t>(i % n_kl)].size()));
      const auto [b, e] = block(cost);
      std::vector<std::vector<int32_t>> prompts;
      std::vector<int32_t> trial_ids;
      for (size_t i = b; i < e; ++i) {
        prompts.push_back(kl_ids_[i % static_cast<size_t>(n_kl)]);
        trial_ids.push_back(static_cast<int32_t>(i / static_cast<size_t>(n_kl)));
        res.prompt_tokens += static_cast<int64_t>(prompts.back().size());
      }
      std::vector<double> item_kl(static_cast<size_t>(K * n_kl), 0.0);
      std::vector<float> lp(static_cast<size_t>(V));
      dist::PrefillOptions opts;
      opts.residuals = false;
      opts.trials = &trial_ids;
      opts.epilogue = &epi;
      dist::prefill_lockstep(
          eng, ses_.cache(longest(kl_ids_), 0), prompts, rt.shard_group(),
          [&](size_t k, const float* logits, const float*) {
            const size_t item = b + k;
            cpu::log_softmax(logits, lp.data(), 1, V);
            const float* ref = base_.data() + (item % static_cast<size_t>(n_kl)) * static_cast<size_t>(V);
            double kl = 0;  // KL(original ‖ ablated) = Σ p (log p − log q)
            for (int64_t v = 0; v < V; ++v) kl += std::exp(static_cast<double>(ref[v])) * (ref[v] - lp[static_cast<size_t>(v)]);
            item_kl[item] = kl;
          },
          opts);
      rt.world().all_reduce_sum(item_kl.data(), item_kl.size());  // one owner per item: exact
      res.kl.assign(static_cast<size_t>(K), 0.0);
      for (int64_t t = 0; t < K; ++t) {
        double sum = 0;
        for (int64_t p = 0; p < n_kl; ++p) sum += item_kl[static_cast<size_t>(t * n_kl + p)];
        res.kl[static_cast<size_t>(t)] = sum / static_cast<double>(n_kl);  // batchmean
      }
    }

    // Refusals: items (trial t, evaluation prompt p), greedy generation with the trial's ablation.
    const auto n_ev = static_cast<int64_t>(eval_ids_.size());
    {
      std::vector<int64_t> cost;
      for (int64_t i = 0; i < K * n_ev; ++i) {
        cost.push_back(static_cast<int64_t>(eval_ids_[static_cast<size_t>(i % n_ev)].size()) + max_new_);
      }
      const auto [b, e] = block(cost);
      std::vector<engine::GenerateRequest> reqs;
      for (size_t i = b; i < e; ++i) {
        reqs.push_back({eval_ids_[i % static_cast<size_t>(n_ev)], static_cast<int32_t>(i / static_cast<size_t>(n_ev))});
        res.prompt_tokens += static_cast<int64_t>(reqs.back().prompt.size());
      }
      engine::GenerateOptions opts;
      opts.max_new_tokens = max_new_;
      opts.eos_ids = ses_.spec().eos_token_ids;
      if (early_exit_) opts.stop_when = [this](std::string_view t) { return !markers_.find(t).empty(); };
      opts.any_work = dist::group_any_work(rt.shard_group());
      const auto out = engine::generate(eng, ses_.cache(longest(eval_ids_), max_new_), ses_.tokenizer(), reqs, opts, &epi);
      std::vector<int64_t> refused(static_cast<size_t>(K * n_ev), 0);
      std::vector<std::string> texts;
      for (size_t i = b; i < e; ++i) {
        const auto& r = out[i - b];
        refused[i] = markers_.is_refusal(r.text) ? 1 : 0;
        res.decode_tokens += static_cast<int64_t>(r.ids.size());
        if (keep_responses_) texts.push_back(r.text);
      }
      rt.world().all_reduce_sum(refused.data(), refused.size());
      res.refusals.assign(static_cast<size_t>(K), 0);
      for (int64_t i = 0; i < K * n_ev; ++i) res.refusals[static_cast<size_t>(i / n_ev)] += refused[static_cast<size_t>(i)];
      if (keep_responses_) {
        const auto all = io::h5::gather_strings(rt.world().handle(), texts, 0);
        if (rt.world_rank() == 0) {
          res.responses.assign(static_cast<size_t>(K), {});
          for (size_t i = 0; i < all.size(); ++i) res.responses[i / static_cast<size_t>(n_ev)].push_back(all[i]);
        }
      }
    }
    int64_t counts[2] = {res.decode_tokens, res.prompt_tokens};
    rt.world().all_reduce_sum(counts, 2);
    res.decode_tokens = counts[0];
    res.prompt_tokens = counts[1];
    return res;
  }

 private:
  std::pair<size_t, size_t> block(const std::vector<int64_t>& cost) const {
    dist::Runtime& rt = ses_.rt();
    const auto bounds = dist::split_contiguous(cost, rt.world_size());
    return {bounds[static_cast<size_t>(rt.world_rank())], bounds[static_cast<size_t>(rt.world_rank()) + 1]};
  }

  Session& ses_;
  std::vector<std::vector<float>> directions_;
  ablation::RowNorm mode_;
  std::vector<std::vector<int32_t>> kl_ids_;
  std::vector<float> base_;
  std::vector<std::vector<int32_t>> eval_ids_;
  const text::RefusalMarkers& markers_;
  int64_t max_new_;
  bool early_exit_, keep_responses_;
};

// Proposals are made on rank 0 (it holds the history) and sent to every rank as values.
std::vector<ablation::TrialParams> broadcast_trials(dist::Comm& comm, std::vector<ablation::TrialParams> trials,
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

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const auto t = static_cast<int64_t>(s + 0.5);
  return t >= 3600 ? fmt::format("{}h{:02}m", t / 3600, t / 60 % 60) : fmt::format("{}m{:02}s", t / 60, t % 60);
}

}  // namespace

void phase_sweep(Session& ses) {
  const po::variables_map& vm = ses.vm();
  dist::Runtime& rt = ses.rt();
  const model::ModelSpec& spec = ses.spec();
  const int64_t L = spec.num_layers;

  // ---- inputs, checked before any heavy work ----
  const std::string dpath = ses.out_path(io::schema::directions::kFile);
  const std::string bpath = ses.out_path(io::schema::baseline::kFile);
  ABL_CHECK(fs::exists(dpath), "{} does not exist: run the directions phase first", dpath);
  ABL_CHECK(fs::exists(bpath), "{} does not exist: run the baseline phase first", bpath);
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
  const auto markers = text::RefusalMarkers::from_option(vm["refusal-markers"].as<std::string>());
  const int64_t max_new = base.meta().max_response_length;
  ABL_CHECK(vm["max-response-length"].defaulted() || vm["max-response-length"].as<int64_t>() == max_new,
            "--max-response-length {} differs from the {} that {} was measured with; rerun baseline",
            vm["max-response-length"].as<int64_t>(), max_new, bpath);

  const std::string search = vm["search"].as<std::string>();
  ABL_CHECK(search == "tpe" || search == "sobol" || search == "grid", "--search must be tpe, sobol or grid, got '{}'",
            search);
  const ablation::RowNorm mode = ablation::parse_row_norm(vm["row-normalization"].as<std::string>());
  const uint64_t seed = vm["seed"].as<uint64_t>();
  int64_t n_trials = vm["trials"].as<int64_t>();
  const int64_t startup = vm["startup-trials"].as<int64_t>();
  ABL_CHECK(n_trials > 0, "--trials must be positive, got {}", n_trials);
  ABL_CHECK(startup >= 0, "--startup-trials must be >= 0, got {}", startup);
  std::vector<ablation::TrialParams> grid;
  std::string grid_text;
  if (search == "grid") {
    const std::string gpath = vm["grid"].as<std::string>();
    ABL_CHECK(!gpath.empty(), "--search grid needs --grid FILE (see inputs/grids/)");
    grid = ablation::parse_grid_file(gpath, L);
    std::ifstream in(gpath, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    grid_text = text.str();
    n_trials = static_cast<int64_t>(grid.size());
  } else {
    ABL_CHECK(vm["grid"].as<std::string>().empty(), "--grid is only used with --search grid");
  }
  const ablation::SearchSpace space = ablation::default_search_space(L);

  const auto kl_texts = base.kl_prompts();
  const auto eval_texts = base.refusal_prompts();
  std::vector<std::vector<int32_t>> kl_ids, eval_ids;
  for (const auto& t : kl_texts) kl_ids.push_back(ses.encode_prompt(t));
  for (const auto& t : eval_texts) eval_ids.push_back(ses.encode_prompt(t));
  const auto n_eval = static_cast<int64_t>(eval_texts.size());

  int64_t per_batch = 0;
  const std::string tpb = vm["trials-per-batch"].as<std::string>();
  if (tpb == "auto") {
    // Enough sequences to fill every rank's passes, within reason for the search.
    per_batch = (rt.world_size() * ses.limits().max_seqs + n_eval - 1) / n_eval;
    per_batch = std::clamp<int64_t>(per_batch, 1, 64);
  } else {
    try {
      per_batch = std::stoll(tpb);
    } catch (const std::exception&) {
      per_batch = 0;
    }
    ABL_CHECK(per_batch > 0, "--trials-per-batch must be 'auto' or a positive number, got '{}'", tpb);
  }

  // ---- the settings a resumed sweep must share ----
  nlohmann::ordered_json cfg;
  cfg["model"] = model_fingerprint(ses.model());
  cfg["directions"] = hex(fnv1a(dirs.directions.data(), dirs.directions.size() * sizeof(double)));
  {
    const auto lp = base.kl_logprobs();
    cfg["baseline_logprobs"] = hex(fnv1a(lp.data(), lp.size() * sizeof(float)));
  }
  cfg["kl_prompts"] = hex(fnv1a(nlohmann::json(kl_texts).dump()));
  cfg["eval_prompts"] = hex(fnv1a(nlohmann::json(eval_texts).dump()));
  cfg["chat_template"] = ses.chat_template().name();
  cfg["system_prompt"] = ses.system_prompt();
  cfg["response_prefix"] = ses.response_prefix();
  cfg["refusal_markers"] = hex(fnv1a(nlohmann::json(markers.markers()).dump()));
  cfg["max_response_length"] = max_new;
  cfg["row_normalization"] = std::string(ablation::row_norm_name(mode));
  cfg["search"] = search;
  cfg["seed"] = seed;
  if (search == "tpe") cfg["startup_trials"] = startup;
  if (search == "grid") cfg["grid"] = hex(fnv1a(grid_text));
  cfg["store_responses"] = vm["store-responses"].as<bool>();
  const std::string cfg_json = cfg.dump();
  const std::string hash = hex(fnv1a(cfg_json));

  // ---- the trials file (rank 0) and the history every proposal depends on ----
  const std::string tpath = ses.out_path(io::schema::trials::kFile);
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
  if (n_done > 0) log::info("sweep: resuming {} after {} trials", tpath, n_done);

  TrialEvaluator eval(ses, ablation::direction_rows(dirs), mode, kl_ids, base.kl_logprobs(), eval_ids, markers,
                      max_new, vm["early-exit"].as<bool>(), vm["store-responses"].as<bool>());
  log::info("sweep: {} search, {} trials ({} done), {} per batch, {} KL + {} evaluation prompts, baseline {}/{} refusals",
            search, n_trials, n_done, per_batch, kl_texts.size(), n_eval, base.refusals(), n_eval);

  const auto t0 = Clock::now();
  const int64_t first_new = n_done;
  int64_t decode_tokens = 0, prompt_tokens = 0;
  while (n_done < n_trials) {
    const int64_t k = std::min(per_batch, n_trials - n_done);
    const int64_t batch = n_done / per_batch;  // batches have per_batch trials until the last
    std::vector<ablation::TrialParams> proposal;
    if (ses.is_root()) {
      if (search == "grid") {
        proposal.assign(grid.begin() + n_done, grid.begin() + n_done + k);
      } else if (search == "sobol") {
        proposal = ablation::sobol_trials(space, seed, n_done, k);
      } else {
        const int64_t n_sobol = std::clamp<int64_t>(startup - n_done, 0, k);
        proposal = ablation::sobol_trials(space, seed, n_done, n_sobol);
        if (k > n_sobol) {
          const auto more = ablation::tpe_propose(space, done, scores, k - n_sobol,
                                                  seed * 1000003ull + static_cast<uint64_t>(batch));
          proposal.insert(proposal.end(), more.begin(), more.end());
        }
      }
    }
    proposal = broadcast_trials(rt.world(), proposal, k);
    const BatchResult r = eval.evaluate(proposal);
    decode_tokens += r.decode_tokens;
    prompt_tokens += r.prompt_tokens;
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    if (ses.is_root()) {
      std::vector<io::schema::TrialRow> rows;
      for (int64_t t = 0; t < k; ++t) {
        io::schema::TrialRow row;
        const auto v = ablation::param_values(proposal[static_cast<size_t>(t)]);
        row.params.assign(v.begin(), v.end());
        row.kl = r.kl[static_cast<size_t>(t)];
        row.refusals = r.refusals[static_cast<size_t>(t)];
        row.batch = batch;
        row.elapsed_s = elapsed_before + secs;
        if (!r.responses.empty()) row.responses = r.responses[static_cast<size_t>(t)];
        rows.push_back(std::move(row));
        done.push_back(proposal[static_cast<size_t>(t)]);
        scores.push_back({static_cast<double>(row.refusals), row.kl});
      }
      store->append(rows);
    }
    n_done += k;
    if (ses.is_root()) {
      const auto front = ablation::pareto_front(scores);
      std::string best;
      for (size_t i = 0; i < std::min<size_t>(front.size(), 3); ++i) {
        best += fmt::format("{}{}/{} @ KL {:.3f}", i ? ", " : "", scores[front[i]].refusals, n_eval, scores[front[i]].kl);
      }
      const double rate = static_cast<double>(n_done - first_new) / secs;
      log::info("sweep: batch {}: {}/{} trials, {:.0f} trials/h, {:.0f} tokens/s, ETA {} | front: {}", batch, n_done,
                n_trials, rate * 3600.0, static_cast<double>(decode_tokens + prompt_tokens) / secs,
                format_duration(static_cast<double>(n_trials - n_done) / rate), best);
    }
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (ses.is_root()) {
    store->finish();
    const int64_t evaluated = n_trials - first_new;
    log::info("sweep: {} trials in {:.1f} s ({:.0f} trials/h; {} decode + {} prompt tokens) -> {}", evaluated, secs,
              secs > 0 ? static_cast<double>(evaluated) * 3600.0 / secs : 0.0, decode_tokens, prompt_tokens, tpath);
    print_report(io::schema::read_trials(tpath), std::cout);
  }
  rt.world().barrier();
}

namespace {

int run_sweep(const po::variables_map& vm) {
  Session ses(vm);
  phase_sweep(ses);
  return 0;
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
