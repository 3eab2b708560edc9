// The Session of the driver phases and their options. Defaults mirror the reference tool
// (DESIGN.md §1): 400 + 400 direction prompts, 100 KL prompts, 100 evaluation prompts,
// max_response_length 100, projected directions, 200 trials of which 60 start-up.
#include <algorithm>
#include <filesystem>

#include "abl/app/dist_options.h"
#include "abl/app/driver.h"
#include "abl/app/model_options.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/watchdog.h"
#include "abl/parallel/agree.h"
#include "abl/parallel/lockstep.h"
#include "abl/io/driver_files.h"

namespace abl::app {
namespace fs = std::filesystem;

void declare_output_options(OptionSet& o) {
  o.group("output", "Run folder")
      ("out", po::value<std::string>()->required()->value_name("DIR"),
       "run folder: each phase reads the files of the previous ones here and writes its own");
}

void declare_prompt_set_options(OptionSet& o) {
  o.group("prompts", "Direction prompts")
      ("good", po::value<std::string>()->required()->value_name("FILE"), "harmless prompts (text or JSONL)")
      ("bad", po::value<std::string>()->required()->value_name("FILE"), "harmful prompts (text or JSONL)")
      ("good-split", po::value<std::string>()->default_value("[:400]"), "slice of the good prompts for directions")
      ("bad-split", po::value<std::string>()->default_value("[:400]"), "slice of the bad prompts for directions")
      ("column", po::value<std::string>()->default_value("text"), "JSONL field holding the prompt");
}

void declare_residuals_options(OptionSet& o) {
  o.group("residuals", "Residuals")
      ("winsorize-quantile", po::value<double>()->default_value(1.0),
       "clamp each residual's components to ±this quantile of their magnitudes (1 = off)")
      ("no-full-residuals", po::bool_switch(), "write only the class means, not every prompt's residuals");
}

void declare_directions_options(OptionSet& o) {
  o.group("directions", "Directions")
      ("projected", po::value<bool>()->default_value(true),
       "remove from each direction its component along the good mean (true/false)");
}

void declare_evaluation_options(OptionSet& o) {
  o.group("evaluation", "Evaluation prompts and refusal detection")
      ("kl-prompts", po::value<std::string>()->default_value("")->value_name("FILE"),
       "harmless prompts for the KL divergence (default: the --good file)")
      ("kl-split", po::value<std::string>()->default_value("[400:500]"), "slice of the KL prompts")
      ("eval-prompts", po::value<std::string>()->default_value("")->value_name("FILE"),
       "harmful prompts whose refusals are counted (default: the --bad file)")
      ("eval-split", po::value<std::string>()->default_value("[400:500]"), "slice of the evaluation prompts")
      ("refusal-markers", po::value<std::string>()->default_value("builtin")->value_name("FILE"),
       "marker list, one per line, or builtin (the list of inputs/refusal_markers.txt)")
      ("max-response-length", po::value<int64_t>()->default_value(100),
       "tokens generated per evaluation prompt at most");
}

void declare_sweep_options(OptionSet& o) {
  o.group("sweep", "Trial search")
      ("search", po::value<std::string>()->default_value("tpe"),
       "tpe (Sobol start-up, then batched multi-objective TPE), sobol, or grid (--grid FILE)")
      ("grid", po::value<std::string>()->default_value("")->value_name("FILE"),
       "grid file (inputs/grids/): values or ranges per parameter")
      ("trials", po::value<int64_t>()->default_value(200), "trials to evaluate in total (grid: at most)")
      ("startup-trials", po::value<int64_t>()->default_value(60), "Sobol trials before TPE starts")
      ("trials-per-batch", po::value<std::string>()->default_value("auto"),
       "trials evaluated together in one set of forward passes, or auto (fill every rank's passes)")
      ("seed", po::value<int64_t>()->default_value(1), "seed of the Sobol shift and of TPE (>= 0)")
      ("row-normalization", po::value<std::string>()->default_value("full"), "none, pre or full")
      ("early-exit", po::value<bool>()->default_value(true),
       "stop a response at its first refusal marker (the count is the same; only time is saved)")
      ("store-responses", po::bool_switch(), "keep every trial's responses in trials.h5")
      ("restart", po::bool_switch(), "discard an existing trials.h5 whose settings differ instead of failing")
      ("slice", po::value<std::string>()->default_value("")->value_name("I/N"),
       "evaluate only slice I (0-based) of N of the trials (sobol, grid) into trials.slice-I-of-N.h5; "
       "`abliterate merge` combines the slices");
}

std::vector<io::Prompt> load_prompt_set(parallel::Comm& comm, const po::variables_map& vm, const std::string& file_option,
                                        const std::string& fallback_option, const std::string& split_option) {
  io::PromptSource src;
  src.path = vm[file_option].as<std::string>();
  if (src.path.empty()) src.path = vm[fallback_option].as<std::string>();
  src.column = vm["column"].as<std::string>();
  src.split = vm[split_option].as<std::string>();
  // Rank 0 reads the file; every rank gets (line, text) pairs.
  const std::vector<std::string> flat = parallel::root_strings(comm, [&] {
    const auto prompts = io::load_prompts(src);
    ABL_CHECK(!prompts.empty(), "--{} {} with --{} {} selects no prompts", file_option, src.path, split_option,
              src.split);
    std::vector<std::string> out;
    for (const auto& p : prompts) {
      out.push_back(std::to_string(p.line));
      out.push_back(p.text);
    }
    return out;
  });
  std::vector<io::Prompt> prompts;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) prompts.push_back({flat[i + 1], std::stoll(flat[i])});
  return prompts;
}

text::RefusalMarkers load_refusal_markers(parallel::Comm& comm, const std::string& option) {
  if (option == "builtin") return text::RefusalMarkers::builtin();
  return text::RefusalMarkers::from_text(parallel::read_file_on_root(comm, option), option);
}

std::vector<int64_t> prompt_costs(const std::vector<std::vector<int32_t>>& prompts) {
  std::vector<int64_t> cost;
  for (const auto& p : prompts) cost.push_back(static_cast<int64_t>(p.size()));
  return cost;
}

std::pair<size_t, size_t> rank_block(const std::vector<int64_t>& cost, parallel::Runtime& rt) {
  // Every rank splits the same costs, or their blocks would overlap: they tokenized the same
  // prompts with the tokenizer files each one read (a model folder that differs between nodes).
  const auto h = static_cast<int64_t>(fnv1a(cost.data(), cost.size() * sizeof(int64_t)) >> 1);
  if (parallel::all_min(rt.world(), h) != parallel::all_max(rt.world(), h)) {
    throw AgreedError("the ranks tokenized the same prompts into different lengths: the model folder's tokenizer or "
                      "chat template differs between the nodes of this job");
  }
  const auto bounds = parallel::split_contiguous(cost, rt.world_size());
  return {bounds[static_cast<size_t>(rt.world_rank())], bounds[static_cast<size_t>(rt.world_rank()) + 1]};
}

int64_t longest_prompt(const std::vector<std::vector<int32_t>>& prompts) {
  int64_t n = 0;
  for (const auto& p : prompts) n = std::max<int64_t>(n, static_cast<int64_t>(p.size()));
  return n;
}

Session::Session(const po::variables_map& vm, const std::string& command) : vm_(vm) {
  start_watchdog(rt_, vm);
  if (vm.count("out")) {
    out_dir_ = vm["out"].as<std::string>();
    // A sweep slice writes only its slice file: slices of one sweep run side by side (job arrays).
    std::string part;
    if (vm.count("slice") && !vm["slice"].as<std::string>().empty()) {
      part = "slice-" + vm["slice"].as<std::string>();
      std::replace(part.begin(), part.end(), '/', '-');
    }
    lock_ = RunFolderLock::acquire(rt_.world(), out_dir_, command, part);
  }
  if (!vm.count("model")) return;  // the driver-only phases (directions)
  model_ = vm["model"].as<std::string>();
  spec_ = is_synthetic(model_) ? model::synthetic_model_spec(model_) : model::load_model_spec(model_);
  if (vm.count("batch-tokens")) limits_ = engine_limits(vm, rt_.node_size());
  if (vm.count("backend")) backend_kind_ = agree_backend(rt_, vm["backend"].as<std::string>());  // fails early
  tok_ = std::make_unique<text::Tokenizer>(load_tokenizer(model_));
  tmpl_ = std::make_unique<text::ChatTemplate>(load_chat_template(vm));
  system_ = vm["system-prompt"].as<std::string>();
  const std::string prefix = vm["response-prefix"].as<std::string>();
  if (prefix != "auto") set_response_prefix(prefix, "given");
}

Session::~Session() = default;

std::string Session::out_path(const std::string& file) const {
  ABL_CHECK(!out_dir_.empty(), "no run folder (--out)");
  return (fs::path(out_dir_) / file).string();
}

void Session::set_response_prefix(std::string prefix, std::string source) {
  prefix_ = std::move(prefix);
  prefix_source_ = std::move(source);
}

const std::string& Session::response_prefix() {
  if (!prefix_) {
    // Whether a baseline recorded one is decided by rank 0 (a collective detection follows if not).
    const std::string baseline = out_dir_.empty() ? "" : out_path(io::schema::baseline::kFile);
    const std::vector<std::string> recorded = parallel::root_strings(rt_.world(), [&]() -> std::vector<std::string> {
      if (baseline.empty() || !fs::exists(baseline)) return {};
      return {io::schema::BaselineReader(baseline).meta().response_prefix};
    });
    if (!recorded.empty()) {
      set_response_prefix(recorded[0], "baseline.h5");
    } else {
      // Up to 100 good and 100 bad prompts, as the reference tool; the evaluation sets when
      // this command has them, else the direction sets.
      std::vector<std::string> sample;
      const auto take = [&sample](const std::vector<io::Prompt>& set) {
        for (size_t i = 0; i < std::min<size_t>(100, set.size()); ++i) sample.push_back(set[i].text);
      };
      if (vm_.count("kl-split") && vm_.count("good")) {
        take(load_prompt_set(rt_.world(), vm_, "kl-prompts", "good", "kl-split"));
        take(load_prompt_set(rt_.world(), vm_, "eval-prompts", "bad", "eval-split"));
      } else if (vm_.count("good")) {
        take(load_prompt_set(rt_.world(), vm_, "good", "good", "good-split"));
        take(load_prompt_set(rt_.world(), vm_, "bad", "bad", "bad-split"));
      }
      ABL_CHECK(!sample.empty(), "--response-prefix auto needs prompts to detect it from; give --response-prefix");
      set_response_prefix(detect_response_prefix(*this, sample), "detected");
    }
    log::info("response prefix ({}): \"{}\"", prefix_source_, *prefix_);
  }
  return *prefix_;
}

const std::string& Session::response_prefix_source() {
  response_prefix();
  return prefix_source_;
}

std::vector<int32_t> Session::encode_prompt(const std::string& user) {
  return tok_->encode(tmpl_->render(system_, user, response_prefix()), false);
}

Backend& Session::backend() {
  if (!backend_) {
    ABL_CHECK(!model_.empty(), "this phase needs --model");
    if (!topology_done_) {
      const parallel::Topology& topo = configure_topology(rt_, vm_, spec_, limits_, backend_kind_);
      log::info("model {}: {}; {}; {} backend", model_, model::describe(spec_), topo.describe(),
                backend_kind_name(backend_kind_));
      topology_done_ = true;
    }
    BackendSetup setup;
    setup.model = model_;
    setup.limits = limits_;
    setup.comm = parse_gpu_comm(vm_["comm"].as<std::string>());
    setup.offload_params = vm_["offload-params"].as<bool>();
    backend_ = make_backend(backend_kind_, setup, rt_);
  }
  return *backend_;
}

const std::string& Session::model_fingerprint() {
  if (fingerprint_.empty()) {
    fingerprint_ = parallel::root_string(rt_.world(), [&] { return app::model_fingerprint(model_); });
  }
  return fingerprint_;
}

engine::ForwardPass& Session::pass(int64_t longest, int64_t max_new) {
  const int64_t context = spec_.max_position_embeddings;
  if (context > 0 && longest + max_new > context) {  // the same numbers on every rank
    throw AgreedError(fmt::format(
        "a prompt of {} tokens (chat template included) plus {} response tokens exceeds the {} positions of {} "
        "(max_position_embeddings); use shorter prompts or a smaller --max-response-length",
        longest, max_new, context, model_));
  }
  // Enough rows for the longest prompt plus its response, and for a full pass of sequences.
  return backend().pass(std::max(longest + max_new, limits_.max_tokens + limits_.max_seqs * max_new));
}

}  // namespace abl::app

namespace abl::app {
namespace {

std::string prompts_hash(const std::vector<io::Prompt>& prompts) {
  uint64_t h = kFnvOffset;
  for (const auto& p : prompts) h = fnv1a(p.text + '\n', h);
  return hex64(h);
}

}  // namespace

nlohmann::ordered_json phase_inputs(Session& s, Phase phase) {
  const po::variables_map& vm = s.vm();
  nlohmann::ordered_json in;
  if (phase == Phase::directions) {
    // The residuals it is computed from (their own inputs) and the option of this phase.
    const std::string rpath = s.out_path(io::schema::residuals::kFile);
    in["residuals"] = parallel::root_string(s.rt().world(), [&] {
      ABL_CHECK(fs::exists(rpath), "{} does not exist: run the residuals phase first", rpath);
      const io::schema::ResidualsReader res(rpath);
      return hex64(fnv1a(res.meta().inputs + res.meta().created));
    });
    in["projected"] = vm["projected"].as<bool>();
    return in;
  }
  in["model"] = s.model_fingerprint();
  in["architecture"] = s.spec().architecture;
  in["chat_template"] = s.chat_template().name();
  in["system_prompt"] = s.system_prompt();
  in["response_prefix_option"] = vm["response-prefix"].as<std::string>();
  if (phase == Phase::baseline) {
    in["kl_prompts"] = prompts_hash(load_prompt_set(s.rt().world(), vm, "kl-prompts", "good", "kl-split"));
    in["eval_prompts"] = prompts_hash(load_prompt_set(s.rt().world(), vm, "eval-prompts", "bad", "eval-split"));
    in["refusal_markers"] =
        hex64(fnv1a(nlohmann::json(load_refusal_markers(s.rt().world(), vm["refusal-markers"].as<std::string>()).markers())
                        .dump()));
    in["max_response_length"] = vm["max-response-length"].as<int64_t>();
  } else {
    in["good_prompts"] = prompts_hash(load_prompt_set(s.rt().world(), vm, "good", "good", "good-split"));
    in["bad_prompts"] = prompts_hash(load_prompt_set(s.rt().world(), vm, "bad", "bad", "bad-split"));
    in["winsorize_quantile"] = vm["winsorize-quantile"].as<double>();
    in["full_residuals"] = !vm["no-full-residuals"].as<bool>();
    in["response_prefix"] = s.response_prefix();
  }
  return in;
}

bool reuse_phase_file(Session& s, Phase phase) {
  const char* file = phase == Phase::baseline    ? io::schema::baseline::kFile
                     : phase == Phase::residuals ? io::schema::residuals::kFile
                                                 : io::schema::directions::kFile;
  const std::string path = s.out_path(file);
  const bool redo = s.vm().count("redo") && s.vm()["redo"].as<bool>();
  const bool exists = parallel::root_decides(s.rt().world(), [&] { return fs::exists(path); });
  if (redo || !exists) return false;
  const nlohmann::ordered_json inputs = phase_inputs(s, phase);
  const bool reuse = parallel::root_decides(s.rt().world(), [&] {
    std::string recorded;
    if (phase == Phase::baseline) recorded = io::schema::BaselineReader(path).meta().inputs;
    if (phase == Phase::residuals) recorded = io::schema::ResidualsReader(path).meta().inputs;
    if (phase == Phase::directions) recorded = io::schema::read_directions(path).inputs;
    return reusable_phase_file(path, recorded, inputs);
  });
  if (reuse) log::info("run: reusing {}: its recorded inputs are this run's (--redo recomputes it)", path);
  return reuse;
}

}  // namespace abl::app

namespace abl::app {

void check_phase_options(Session& s) {
  const po::variables_map& vm = s.vm();
  parallel::Comm& world = s.rt().world();
  if (vm.count("winsorize-quantile")) {
    const double q = vm["winsorize-quantile"].as<double>();
    ABL_CHECK(q > 0.0 && q <= 1.0, "--winsorize-quantile must be in (0, 1], got {}", q);
  }
  if (vm.count("max-response-length")) {
    const int64_t n = vm["max-response-length"].as<int64_t>();
    ABL_CHECK(n > 0, "--max-response-length must be positive, got {}", n);
  }
  if (vm.count("good-split")) {
    load_prompt_set(world, vm, "good", "good", "good-split");
    load_prompt_set(world, vm, "bad", "bad", "bad-split");
  }
  if (vm.count("kl-split") && vm.count("good")) {
    load_prompt_set(world, vm, "kl-prompts", "good", "kl-split");
    load_prompt_set(world, vm, "eval-prompts", "bad", "eval-split");
  }
  if (vm.count("refusal-markers")) load_refusal_markers(world, vm["refusal-markers"].as<std::string>());
  if (vm.count("search") && !s.model().empty()) sweep_settings(world, vm, s.spec().num_layers);
}

}  // namespace abl::app
