// The Session of the driver phases: runtime, model, tokenizer, chat template, run folder lock and
// the engine, over the options parsed by driver_options.h.
#include <algorithm>
#include <exception>
#include <filesystem>

#include "abl/app/dist_options.h"
#include "abl/app/driver.h"
#include "abl/app/model_options.h"
#include "abl/app/provenance.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/watchdog.h"
#include "abl/parallel/agree.h"
#include "abl/parallel/lockstep.h"
#include "abl/io/driver_files.h"

namespace abl::app {
namespace fs = std::filesystem;

std::vector<io::Prompt> read_prompt_set(const PromptSetSpec& set) {
  const io::SplitSpec split = io::SplitSpec::parse(set.source.split, "--" + set.split_option);
  io::PromptSource whole = set.source;
  whole.split = split.name;
  std::vector<io::Prompt> all;
  try {
    all = io::load_prompts(whole);
  } catch (const io::MissingColumnError& e) {
    fail("{}; name the prompt column with --{}", e.what(), set.column_option);
  } catch (const io::SplitChoiceError& e) {
    fail("{} (--{} '{}')", e.what(), set.split_option, set.source.split);
  }
  if (!split.slice) return all;
  int64_t begin = 0, end = 0;
  split.slice->resolve(static_cast<int64_t>(all.size()), &begin, &end);
  // The default splits ([:400] for directions, [400:500] held out) assume files of 500 prompts.
  ABL_CHECK(end > begin,
            "--{} {}: --{} {} selects none of its {} prompts; choose a slice of them (e.g. --{} '{}[-{}:]') "
            "or another --{} file", set.file_option, set.source.path, set.split_option, set.source.split, all.size(),
            set.split_option, split.name, std::max<size_t>(1, all.size() / 5), set.file_option);
  return {all.begin() + begin, all.begin() + end};
}

std::vector<io::Prompt> load_prompt_set(parallel::Comm& comm, const PromptSetSpec& set) {
  // Rank 0 reads the file; every rank gets (line, row, file, text) records.
  const std::vector<std::string> flat = parallel::root_strings(comm, [&] {
    const auto prompts = read_prompt_set(set);
    std::vector<std::string> out;
    for (const auto& p : prompts) {
      out.push_back(std::to_string(p.line));
      out.push_back(std::to_string(p.row));
      out.push_back(p.file);
      out.push_back(p.text);
    }
    return out;
  });
  std::vector<io::Prompt> prompts;
  for (size_t i = 0; i + 3 < flat.size(); i += 4) {
    prompts.push_back({flat[i + 3], std::stoll(flat[i]), std::stoll(flat[i + 1]), flat[i + 2]});
  }
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

Session::Session(DriverOptions opts, const std::string& command) : opts_(std::move(opts)), command_(command) {
  if (opts_.dist) start_watchdog(rt_, opts_.dist->hang_timeout);
  if (opts_.output) {
    out_dir_ = opts_.output->out;
    // A sweep slice writes only its slice file: slices of one sweep run side by side (job arrays).
    std::string part;
    if (opts_.sweep && !opts_.sweep->slice.empty()) {
      part = "slice-" + opts_.sweep->slice;
      std::replace(part.begin(), part.end(), '/', '-');
    }
    lock_ = RunFolderLock::acquire(rt_.world(), out_dir_, command, part);
  }
  if (!opts_.model) return;  // the driver-only phases (directions)
  const ModelOptions& m = *opts_.model;
  model_ = m.model;
  spec_ = is_synthetic(model_) ? model::synthetic_model_spec(model_) : model::load_model_spec(model_);
  check_same_spec_on_every_rank();
  if (opts_.engine) {
    limits_ = engine_limits(*opts_.engine, rt_.node_size());
    backend_kind_ = agree_backend(rt_, opts_.engine->backend);  // fails early
  }
  load_text_on_every_rank(m);
  system_ = m.system_prompt;
  if (m.response_prefix != "auto") set_response_prefix(m.response_prefix, "given");
}

void Session::load_text_on_every_rank(const ModelOptions& m) {
  // Every rank reads the tokenizer and runs the chat template itself; a rank that fails alone (a
  // file missing on one node) must fail the others too, not leave them in the next collective, and
  // ranks that read different templates would render different prompts: refused together.
  std::string error;
  try {
    tok_ = std::make_unique<text::Tokenizer>(load_tokenizer(model_));
    tmpl_ = std::make_unique<text::ChatTemplate>(load_chat_template(m));
  } catch (const Error& e) {
    error = e.what();
  }
  parallel::agree_all(rt_.world(), error.empty(), error);
  if (rt_.world_size() == 1) return;
  const std::string mine = tmpl_->name();
  const auto h = static_cast<int64_t>(fnv1a(mine.data(), mine.size()) >> 1);
  if (parallel::all_min(rt_.world(), h) != parallel::all_max(rt_.world(), h)) {
    throw AgreedError(fmt::format("the ranks read different chat templates from {}: its tokenizer_config.json or "
                                  "chat_template.jinja differs between the nodes of this job (rank {} read {})",
                                  model_, rt_.world_rank(), mine));
  }
}

void Session::check_same_spec_on_every_rank() {
  // Every rank read config.json and the weight files' names itself; shapes that differ between
  // ranks would hang the first collective that depends on them (a model folder copied unevenly to
  // the nodes' local disks, a config edited while the job started).
  if (rt_.world_size() == 1) return;
  const std::string mine = model::fingerprint(spec_);
  const auto h = static_cast<int64_t>(fnv1a(mine.data(), mine.size()) >> 1);
  if (parallel::all_min(rt_.world(), h) != parallel::all_max(rt_.world(), h)) {
    throw AgreedError(fmt::format("the ranks read different models from {}: its config.json or weight files differ "
                                  "between the nodes of this job (rank {} read {})",
                                  model_, rt_.world_rank(), model::describe(spec_)));
  }
}

Session::~Session() {
  // Unwinding from an error that may be this rank's alone: the top-level handler ends the job next
  // (MPI_Abort), and the engine's teardown could wait for the other ranks first — a weight gather
  // in flight, ncclCommDestroy (collective within a node), a device synchronize behind a collective
  // kernel. The process is ending: leave the engine as it is.
  if (std::uncaught_exceptions() > 0 && rt_.world_size() > 1) (void)backend_.release();
}

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
      if (opts_.evaluation && !opts_.evaluation->kl.source.path.empty()) {
        take(load_prompt_set(rt_.world(), opts_.evaluation->kl));
        take(load_prompt_set(rt_.world(), opts_.evaluation->eval));
      } else if (opts_.prompts) {
        take(load_prompt_set(rt_.world(), opts_.prompts->good));
        take(load_prompt_set(rt_.world(), opts_.prompts->bad));
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

void check_prompts_fit(const std::vector<io::Prompt>& prompts, const std::vector<std::vector<int32_t>>& ids,
                       const PromptSetSpec& set, int64_t max_new, int64_t context, const std::string& model,
                       const char* max_new_option) {
  if (context <= 0) return;
  size_t longest = 0, too_long = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (static_cast<int64_t>(ids[i].size()) + max_new > context) ++too_long;
    if (ids[i].size() > ids[longest].size()) longest = i;
  }
  if (too_long == 0) return;
  const std::string response = max_new > 0 ? fmt::format(" plus {} response tokens", max_new) : "";
  throw AgreedError(fmt::format(
      "--{} {} {}: a prompt of {} tokens (chat template included){} exceeds the {} positions of {} (its "
      "context length); {} of the {} prompts selected by --{} {} do not fit: use shorter prompts{}",
      set.file_option, set.source.path, prompts[longest].where(), ids[longest].size(), response, context, model,
      too_long, prompts.size(), set.split_option, set.source.split.empty() ? "[:]" : set.source.split,
      max_new > 0 ? fmt::format(" or a smaller --{}", max_new_option) : ""));
}

std::vector<std::vector<int32_t>> Session::encode_prompt_set(const std::vector<io::Prompt>& prompts,
                                                             const PromptSetSpec& set, int64_t max_new) {
  std::vector<std::vector<int32_t>> ids;
  ids.reserve(prompts.size());
  for (const auto& p : prompts) ids.push_back(encode_prompt(p.text));
  check_prompts_fit(prompts, ids, set, max_new, spec_.context_length(), model_);
  return ids;
}

void Session::log_device_memory(const char* phase) {
  Backend::DeviceMemory m;
  if (!backend_ || !backend_->take_device_memory(&m)) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  log::info("{}: GPU memory of this rank: peak {:.2f} GiB in the engine's buffers (now {:.2f}); the device has {:.2f} of "
            "{:.2f} GiB in use", phase, static_cast<double>(m.peak) / kGiB, static_cast<double>(m.held) / kGiB,
            static_cast<double>(m.device_used) / kGiB, static_cast<double>(m.device_total) / kGiB);
}

Backend& Session::backend() {
  if (!backend_) {
    ABL_CHECK(!model_.empty(), "this phase needs --model");
    const DistOptions& dist = need(opts_.dist, "[dist]");
    if (!topology_done_) {
      const parallel::Topology& topo = configure_topology(rt_, dist, spec_, limits_, backend_kind_);
      log::info("model {}: {}; {}; {} backend", model_, model::describe(spec_), topo.describe(),
                backend_kind_name(backend_kind_));
      topology_done_ = true;
      if (is_root() && !out_dir_.empty()) {
        add_to_run_record(out_dir_, "engine", {{"backend", backend_kind_name(backend_kind_)}, {"topology", topo.describe()}});
      }
    }
    BackendSetup setup;
    setup.model = model_;
    setup.limits = limits_;
    setup.comm = parse_gpu_comm(dist.comm);
    setup.offload_params = dist.offload_params;
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

void Session::switch_model(const std::string& model) {
  ABL_CHECK(opts_.model, "this command has no model");
  model::ModelSpec spec = is_synthetic(model) ? model::synthetic_model_spec(model) : model::load_model_spec(model);
  const auto shape = [](const model::ModelSpec& m) {
    return fmt::format("{} ({} layers, hidden {}, vocabulary {})", m.architecture, m.num_layers, m.hidden_size,
                       m.vocab_size);
  };
  ABL_CHECK(shape(spec) == shape(spec_), "{} is a {}, but {} is a {}: a model is scored against a base of its shape",
            model, shape(spec), model_, shape(spec_));
  backend_.reset();  // the old weights go before the new ones come
  opts_.model->model = model;
  model_ = model;
  spec_ = std::move(spec);
  check_same_spec_on_every_rank();
  load_text_on_every_rank(*opts_.model);
  fingerprint_.clear();
}

engine::ForwardPass& Session::pass(int64_t longest, int64_t max_new) {
  const int64_t context = spec_.context_length();
  if (context > 0 && longest + max_new > context) {  // the same numbers on every rank
    throw AgreedError(fmt::format(
        "a prompt of {} tokens (chat template included) plus {} response tokens exceeds the {} positions of {} "
        "(its context length); use shorter prompts or a smaller --max-response-length",
        longest, max_new, context, model_));
  }
  // LongRoPE: a sequence that grows past long_rope_after() tokens while generating is run again
  // whole in one pass (engine::generate); say so here, on every rank, rather than in a pass.
  const int64_t after = spec_.long_rope_after();
  if (after > 0 && max_new > 1 && longest + max_new - 2 >= after && after + 1 > limits_.max_tokens) {
    throw AgreedError(fmt::format(
        "a prompt of up to {} tokens plus {} response tokens may grow past the {} tokens after which {} switches "
        "to its LongRoPE long factors; the whole sequence ({} tokens) is then run again in one pass, more than "
        "--batch-tokens {} holds: raise --batch-tokens to at least {}",
        longest, max_new, after, model_, after + 1, limits_.max_tokens, after + 1));
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
  const DriverOptions& opts = s.options();
  nlohmann::ordered_json in;
  if (phase == Phase::directions) {
    // The residuals it is computed from (their own inputs) and the option of this phase.
    const std::string rpath = s.out_path(io::schema::residuals::kFile);
    in["residuals"] = parallel::root_string(s.rt().world(), [&] {
      ABL_CHECK(fs::exists(rpath), "{} does not exist: run the residuals phase first", rpath);
      const io::schema::ResidualsReader res(rpath);
      return hex64(fnv1a(res.meta().inputs + res.meta().created));
    });
    in["projected"] = need(opts.directions, "[directions]").projected;
    return in;
  }
  in["model"] = s.model_fingerprint();
  in["architecture"] = s.spec().architecture;
  in["chat_template"] = s.chat_template().name();
  in["system_prompt"] = s.system_prompt();
  in["response_prefix_option"] = need(opts.model, "[model]").response_prefix;
  if (phase == Phase::baseline) {
    const EvaluationOptions& ev = need(opts.evaluation, "[evaluation]");
    in["kl_prompts"] = prompts_hash(load_prompt_set(s.rt().world(), ev.kl));
    in["eval_prompts"] = prompts_hash(load_prompt_set(s.rt().world(), ev.eval));
    in["refusal_markers"] =
        hex64(fnv1a(nlohmann::json(load_refusal_markers(s.rt().world(), ev.refusal_markers).markers()).dump()));
    in["max_response_length"] = ev.max_response_length;
  } else {
    const PromptSetOptions& ps = need(opts.prompts, "[prompts]");
    const ResidualsOptions& res = need(opts.residuals, "[residuals]");
    in["good_prompts"] = prompts_hash(load_prompt_set(s.rt().world(), ps.good));
    in["bad_prompts"] = prompts_hash(load_prompt_set(s.rt().world(), ps.bad));
    in["winsorize_quantile"] = res.winsorize_quantile;
    in["full_residuals"] = res.full_residuals;
    in["response_prefix"] = s.response_prefix();
  }
  return in;
}

bool reuse_phase_file(Session& s, Phase phase) {
  const char* file = phase == Phase::baseline    ? io::schema::baseline::kFile
                     : phase == Phase::residuals ? io::schema::residuals::kFile
                                                 : io::schema::directions::kFile;
  const std::string path = s.out_path(file);
  const bool redo = s.options().output && s.options().output->redo;
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
  // The options themselves were checked when they were parsed (driver_options.h); here the files.
  const DriverOptions& opts = s.options();
  parallel::Comm& world = s.rt().world();
  // A prompt set that does not fit the model's context fails now too, counted without the response
  // prefix, which may not be known yet (each phase checks again with it: encode_prompt_set).
  const auto check_set = [&](const PromptSetSpec& set, int64_t max_new) {
    const std::vector<io::Prompt> prompts = load_prompt_set(world, set);
    if (s.model().empty()) return;
    std::vector<std::vector<int32_t>> ids;
    for (const auto& p : prompts) {
      ids.push_back(s.tokenizer().encode(s.chat_template().render(s.system_prompt(), p.text, ""), false));
    }
    check_prompts_fit(prompts, ids, set, max_new, s.spec().context_length(), s.model());
  };
  if (opts.prompts) {
    check_set(opts.prompts->good, 0);
    check_set(opts.prompts->bad, 0);
  }
  if (opts.evaluation && opts.prompts) {
    check_set(opts.evaluation->kl, 0);
    check_set(opts.evaluation->eval, opts.evaluation->max_response_length);
  }
  if (opts.evaluation) load_refusal_markers(world, opts.evaluation->refusal_markers);
  if (opts.sweep && !s.model().empty()) sweep_settings(world, *opts.sweep, s.spec().num_layers);
  // The inputs are good: the folder records what this command runs on (provenance.h).
  if (!s.out_dir().empty()) write_run_record(s.rt(), s.out_dir(), s.command(), opts);
}

}  // namespace abl::app
