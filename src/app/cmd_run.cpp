// `abliterate run`: every phase in one MPI job, sharing the loaded weights — baseline (which also
// fixes the response prefix every later prompt uses), residuals, directions, sweep. A phase whose
// file is already complete in the run folder is reused (the sweep resumes), so a requeued or
// repeated run continues where it stopped; --redo recomputes them.
#include <filesystem>

#include "abl/app/commands.h"
#include "abl/app/dist_options.h"
#include "abl/app/driver.h"
#include "abl/app/model_options.h"
#include "abl/core/log.h"
#include "abl/core/stop_signal.h"
#include "abl/io/output_schema.h"

namespace abl::app {
namespace {

int run_all(const po::variables_map& vm) {
  Session ses(vm);
  const bool redo = vm["redo"].as<bool>();
  std::filesystem::create_directories(ses.out_dir());
  const auto reuse = [&](const char* file) {
    const std::string path = ses.out_path(file);
    if (redo || !std::filesystem::exists(path)) return false;
    log::info("run: reusing {} (--redo recomputes it)", path);
    return true;
  };
  if (!reuse(io::schema::baseline::kFile)) phase_baseline(ses);
  if (!reuse(io::schema::residuals::kFile)) phase_residuals(ses);
  if (!reuse(io::schema::directions::kFile)) phase_directions(ses);
  return phase_sweep(ses) == SweepEnd::complete ? 0 : kExitResumable;
}

}  // namespace

Command run_command() {
  Command c;
  c.name = "run";
  c.summary = "the whole chain: baseline, residuals, directions, sweep (what slurm/abliterate.sh runs)";
  c.usage = "--config inputs/default.ini --model DIR --good FILE --bad FILE --out DIR";
  c.declare = [](OptionSet& o) {
    declare_model_options(o);
    declare_prompt_set_options(o);
    declare_residuals_options(o);
    declare_directions_options(o);
    declare_evaluation_options(o);
    declare_sweep_options(o);
    declare_output_options(o);
    o.group("output", "Run folder")
        ("redo", po::bool_switch(), "recompute baseline, residuals and directions even when their files exist");
    declare_engine_options(o);
    declare_dist_options(o);
  };
  c.run = run_all;
  return c;
}

}  // namespace abl::app
