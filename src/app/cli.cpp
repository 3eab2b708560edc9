// Subcommand dispatch and option parsing. Config files are read with our own INI reader so
// every error names FILE:LINE; a key that belongs to another subcommand is skipped, so one
// config file serves every phase of `run`, while a key no subcommand knows is an error.
#include "abl/app/cli.h"

#include <hdf5.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "abl/app/command_line.h"
#include "abl/app/commands.h"
#include "abl/app/run_folder.h"
#include "abl/core/build_info.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/parallel/runtime.h"
#include "abl/io/h5.h"
#include "abl/io/ini.h"
#ifdef ABL_WITH_CUDA
#include "abl/backend/cuda/device.h"
#endif

namespace abl::app {

OptionSet::OptionSet(const std::string& command) : command_(command) {}

const po::options_description& OptionSet::all() const {
  if (!all_) {
    all_ = std::make_unique<po::options_description>("Options of '" + command_ + "'");
    for (const auto& g : groups_) all_->add(g.second);
  }
  return *all_;
}

po::options_description_easy_init OptionSet::group(const std::string& section,
                                                   const std::string& caption) {
  all_.reset();
  groups_.emplace_back(section, po::options_description(caption));
  return groups_.back().second.add_options();
}

std::string OptionSet::section_of(const std::string& name) const {
  for (const auto& [section, desc] : groups_) {
    if (desc.find_nothrow(name, false)) return section;
  }
  return "";
}

bool OptionSet::has(const std::string& name) const { return !section_of(name).empty(); }

std::string OptionSet::help_text() const {
  std::ostringstream os;
  for (const auto& [section, desc] : groups_) os << desc << "\n";
  return os.str();
}

void declare_common_options(OptionSet& opts) {
  opts.group("general", "General")
      ("help,h", "show this help")
      ("config", po::value<std::string>()->value_name("FILE"),
       "INI config file; command-line options take precedence")
      ("log-level", po::value<std::string>()->default_value("info")->value_name("LEVEL"),
       "error, warn, info or debug")
      ("log-all-ranks", po::bool_switch(), "log from every rank, not only rank 0")
      ("quiet,q", po::bool_switch(), "only warnings and errors");
}

LogOptions parse_log_options(const po::variables_map& vm) {
  LogOptions o;
  o.level = vm["log-level"].as<std::string>();
  o.all_ranks = vm["log-all-ranks"].as<bool>();
  o.quiet = vm["quiet"].as<bool>();
  return o;
}

namespace {

// Rank and size as the launcher exports them, so logs are prefixed before MPI starts.
int env_int(std::initializer_list<const char*> names, int fallback) {
  for (const char* n : names) {
    if (const char* v = std::getenv(n)) return std::atoi(v);
  }
  return fallback;
}

std::string normalize_key(std::string key) {
  for (char& c : key) {
    if (c == '_') c = '-';
  }
  return key;
}

// An [fsdp] section in the vocabulary of PyTorch/Accelerate FSDP configs (DESIGN.md §3),
// translated to our options; an unsupported FSDP setting is an error, never silently dropped.
bool translate_fsdp(io::IniEntry& e, const std::string& where) {
  std::string key = e.key;
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string value = e.value;
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool truthy = value == "true" || value == "1" || value == "yes";
  if (key == "use_fsdp") {
    if (truthy) return false;  // the default: nothing to set
    e.key = "sharding";
    e.value = "NO_SHARD";
  } else if (key == "fsdp_sharding_strategy") {
    e.key = "sharding";
  } else if (key == "fsdp_offload_params" || key == "fsdp_cpu_offload") {
    e.key = "offload-params";
  } else if (key == "fsdp_auto_wrap_policy") {
    ABL_CHECK(value == "transformer_based_wrap" || value == "layer",
              "{}: fsdp_auto_wrap_policy '{}' is not supported: every decoder layer is one unit "
              "(TRANSFORMER_BASED_WRAP)", where, e.value);
    return false;
  } else if (key == "fsdp_min_num_params") {
    fail("{}: fsdp_min_num_params (size-based wrapping) is not supported: every decoder layer is one unit", where);
  } else {
    fail("{}: unknown [fsdp] key '{}' (known: use_fsdp, fsdp_sharding_strategy, fsdp_offload_params, "
         "fsdp_cpu_offload, fsdp_auto_wrap_policy)", where, e.key);
  }
  e.section = "dist";
  return true;
}

void store_config_file(const std::string& path, const Command& cmd, const OptionSet& opts,
                       po::variables_map& vm) {
  std::map<std::string, int> seen;
  for (io::IniEntry e : io::read_ini(path)) {
    if (e.section == "fsdp" && !translate_fsdp(e, fmt::format("{}:{}", path, e.line))) continue;
    const std::string name = normalize_key(e.key);
    const std::string where = fmt::format("{}:{}", path, e.line);
    ABL_CHECK(name != "config" && name != "help", "{}: '{}' cannot be set in a config file",
              where, e.key);
    // Whether another command declares this key (in this section, when one is given).
    const auto other_command_has = [&](bool same_section) {
      for (const Command& c : commands()) {
        if (c.name == cmd.name) continue;
        OptionSet o(c.name);
        c.declare(o);
        if (o.has(name) && (!same_section || o.section_of(name) == e.section)) return true;
      }
      return false;
    };
    if (!opts.has(name)) {
      ABL_CHECK(other_command_has(false), "{}: unknown option '{}'{}", where, e.key,
                e.section.empty() ? "" : fmt::format(" in section [{}]", e.section));
      log::debug("{}: '{}' is not an option of '{}', skipped", where, e.key, cmd.name);
      continue;
    }
    const std::string section = opts.section_of(name);
    if (!e.section.empty() && e.section != section && other_command_has(true)) {
      // e.g. [export] out = DIR in a file that also configures the run folder ([output] out).
      log::debug("{}: [{}] {} belongs to another command, skipped", where, e.section, e.key);
      continue;
    }
    ABL_CHECK(e.section.empty() || e.section == section,
              "{}: option '{}' belongs in section [{}], not [{}]", where, e.key, section,
              e.section);
    auto [it, fresh] = seen.emplace(name, e.line);
    ABL_CHECK(fresh, "{}: option '{}' is set twice (first on line {})", where, e.key, it->second);
    po::option o;
    o.string_key = name;
    o.value = {e.value};
    o.original_tokens = {e.key, e.value};
    po::parsed_options parsed(&opts.all());
    parsed.options.push_back(o);
    try {
      po::store(parsed, vm);
    } catch (const po::error& err) {
      fail("{}: {}", where, err.what());
    }
  }
}

}  // namespace

po::variables_map parse_command_line(const Command& cmd, const OptionSet& opts,
                                     const std::vector<std::string>& args) {
  po::variables_map vm;
  const po::options_description& desc = opts.all();
  try {
    const int style = po::command_line_style::default_style &
                      ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(desc).style(style).run(), vm);
  } catch (const po::error& err) {
    fail("{}: {} (see 'abliterate {} --help')", cmd.name, err.what(), cmd.name);
  }
  if (vm.count("help")) return vm;
  if (vm.count("config")) store_config_file(vm["config"].as<std::string>(), cmd, opts, vm);
  try {
    po::notify(vm);
  } catch (const po::error& err) {
    fail("{}: {}", cmd.name, err.what());
  }
  return vm;
}

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {
      info_command(),      tokenize_command(),   prompts_command(), generate_command(),
      run_command(),       residuals_command(),  directions_command(), baseline_command(),
      sweep_command(),     merge_command(),      report_command(),  export_command(),
      plan_command()};
  return all;
}

namespace {

void print_version() {
  char mpi_lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(mpi_lib, &len);
  std::string mpi(mpi_lib, static_cast<size_t>(len));
  if (size_t nl = mpi.find_first_of(",\n"); nl != std::string::npos) mpi.resize(nl);
  std::cout << "abliterate " << build::version << " (" << build::build_type << " build, "
            << build::cxx_compiler << ")\n";
  std::cout << "  CUDA:          "
            << (build::cuda ? fmt::format("yes (toolkit {})", build::cuda_version) : "no") << "\n";
#ifdef ABL_WITH_CUDA
  std::cout << "  CUDA devices:  " << cuda::device_summary() << "\n";
#endif
  std::cout << "  NCCL:          " << (build::nccl ? "yes" : "no") << "\n";
  std::cout << "  MPI:           yes (" << mpi << ")\n";
  std::cout << "  HDF5:          " << build::hdf5_version
            << (build::hdf5_parallel ? " (parallel, MPI-IO)" : " (serial)") << "\n";
}

// After an error that every rank (or the only rank) reached: HDF5 is shut down while MPI still runs
// (MPI_Finalize would do it from inside MPI), then MPI is finalized. When a write to a file failed,
// HDF5 cannot be shut down safely (it crashes closing that file again), so the process ends at once
// with status 1; the launcher sees the same status either way.
void end_after_error() {
  release_run_folder_lock_on_abort();
  if (io::h5::write_failed()) {
    std::cout.flush();
    std::fflush(nullptr);
    std::_Exit(1);
  }
  H5close();
  parallel::finalize_if_needed();
}

void print_overview() {
  std::cout << "abliterate " << build::version
            << " — find and remove refusal directions of decoder LLMs, at cluster scale\n\n"
            << "Usage: abliterate <command> [options]   (abliterate <command> --help)\n\n"
            << "Commands:\n";
  for (const Command& c : commands()) std::cout << fmt::format("  {:<10} {}\n", c.name, c.summary);
  std::cout << "\nGlobal options:\n  --version  print version and compiled-in features\n"
            << "  --help     this overview\n";
}

}  // namespace

int main_entry(int argc, char** argv) {
  record_command_line(argc, argv);
  std::vector<std::string> args(argv + 1, argv + argc);
  log::Config lc;
  lc.rank = env_int({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}, 0);
  lc.world = env_int({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}, 1);
  log::configure(lc);

  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    if (args.size() >= 2 && args[0] == "help") {
      args = {args[1], "--help"};
    } else {
      print_overview();
      return args.empty() ? 2 : 0;
    }
  }
  if (args[0] == "--version" || args[0] == "version") {
    print_version();
    return 0;
  }
  const Command* cmd = nullptr;
  for (const Command& c : commands()) {
    if (c.name == args[0]) cmd = &c;
  }
  if (!cmd) {
    log::error("unknown command '{}' (run 'abliterate --help' for the list)", args[0]);
    return 2;
  }
  OptionSet opts(cmd->name);
  declare_common_options(opts);
  cmd->declare(opts);
  po::variables_map vm;
  try {
    vm = parse_command_line(*cmd, opts, {args.begin() + 1, args.end()});
    if (vm.count("help")) {
      std::cout << "Usage: abliterate " << cmd->name << " " << cmd->usage << "\n"
                << cmd->summary << "\n\n"
                << opts.help_text();
      return 0;
    }
    const LogOptions lo = parse_log_options(vm);
    lc.level = log::parse_level(lo.level);
    lc.all_ranks = lo.all_ranks;
    lc.quiet = lo.quiet;
    log::configure(lc);
  } catch (const Error& e) {
    log::error("{}", e.what());
    return 2;
  }
  // A rank that fails alone must not leave the others waiting in a collective: in a multi-rank
  // job the error ends the whole job (MPI_Abort) after naming the rank and host.
  std::string failure;
  try {
    return cmd->run(vm);
  } catch (const AgreedError& e) {
    // Every rank stopped here with the same message: end in order, report once.
    if (log::config().rank == 0 || log::config().all_ranks) log::error("{}", e.what());
    end_after_error();
    return 1;
  } catch (const Error& e) {
    failure = e.what();
  } catch (const std::bad_alloc&) {
    failure = fmt::format("{}: out of memory", cmd->name);
  } catch (const std::exception& e) {
    failure = fmt::format("{}: unexpected failure: {}", cmd->name, e.what());
  }
  release_run_folder_lock_on_abort();
  parallel::abort_job_if_parallel(failure);
  log::error("{}", failure);
  end_after_error();
  return 1;
}

}  // namespace abl::app
