// `abliterate sweep`: the sweep phase (sweep.h) as a command of its own.
#include "abl/app/commands.h"
#include "abl/app/dist_options.h"
#include "abl/app/driver.h"
#include "abl/app/model_options.h"
#include "abl/core/stop_signal.h"

namespace abl::app {
namespace {

int run_sweep(const po::variables_map& vm) {
  Session ses(parse_driver_options(vm), "sweep");
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
