// `abliterate run`: every phase in one MPI job, sharing the loaded weights — baseline (which also
// fixes the response prefix every later prompt uses), residuals, directions, sweep. Every input is
// checked before the first phase runs. A phase whose file is already complete in the run folder and
// records the same inputs as this run is reused (the sweep resumes), so a requeued or repeated run
// continues where it stopped; a file computed from other inputs is an error; --redo recomputes.
// Rank 0 takes each of these decisions and broadcasts it (dist/agree.h). --trials 0 runs the phases
// only (a job that prepares a run folder for sweep slices). SIGTERM/SIGUSR1 stop it between
// phases or after a sweep batch with exit status 75.
#include "abl/app/commands.h"
#include "abl/app/dist_options.h"
#include "abl/app/driver.h"
#include "abl/app/model_options.h"
#include "abl/core/log.h"
#include "abl/core/stop_signal.h"
#include "abl/io/output_schema.h"

namespace abl::app {
namespace {

// True on every rank when a stop signal reached any rank: checked between phases, whose outputs
// are complete at that point, so the next run reuses them.
bool stop_between_phases(Session& ses, const char* next) {
  int64_t stop = stop_signal();
  ses.rt().world().all_reduce_max(&stop, 1);
  if (stop != 0) log::info("run: stopping on signal {} before {}; run the same command again to continue", stop, next);
  return stop != 0;
}

int run_all(const po::variables_map& vm) {
  // A stop signal during the first phases is acted on between phases (the sweep checks after
  // every batch), so a time-limit warning never loses a finished phase.
  install_stop_handlers();
  Session ses(parse_driver_options(vm), "run");  // locks the run folder
  check_phase_options(ses);  // bad options, prompt sets, markers or grids fail now, not after a phase
  if (!reuse_phase_file(ses, Phase::baseline)) phase_baseline(ses);
  if (stop_between_phases(ses, "residuals")) return kExitResumable;
  if (!reuse_phase_file(ses, Phase::residuals)) phase_residuals(ses);
  if (stop_between_phases(ses, "directions")) return kExitResumable;
  if (!reuse_phase_file(ses, Phase::directions)) phase_directions(ses);
  if (stop_between_phases(ses, "the sweep")) return kExitResumable;
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
