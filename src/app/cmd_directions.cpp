// `abliterate directions`: the driver's first step. Rank 0 reads residuals.h5 from the run folder,
// computes the refusal direction of every depth and its statistics, writes directions.h5 and
// prints the table; no model or MPI job is needed, but under mpirun the other ranks wait for it.
#include <cmath>
#include <filesystem>

#include "abl/ablation/directions.h"
#include "abl/app/commands.h"
#include "abl/app/driver.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/watchdog.h"
#include "abl/parallel/agree.h"
#include "abl/io/driver_files.h"

namespace abl::app {
namespace {

// Non-finite residuals (NaN weights, an overflow) make non-finite directions: an error naming the
// depth, never a silent NaN in every later trial.
void check_finite_directions(const io::schema::DirectionsData& d, const std::string& residuals) {
  for (int64_t i = 0; i < d.depths; ++i) {
    for (int64_t j = 0; j < d.hidden; ++j) {
      const auto at = static_cast<size_t>(i * d.hidden + j);
      ABL_CHECK(std::isfinite(d.directions[at]) && std::isfinite(d.good_mean[at]) && std::isfinite(d.bad_mean[at]),
                "the refusal direction of depth {} is not finite (component {}: direction {}, good mean {}, bad mean "
                "{}): {} holds non-finite residuals; check the model's weights",
                i, j, d.directions[at], d.good_mean[at], d.bad_mean[at], residuals);
    }
  }
}

}  // namespace

void phase_directions(Session& ses) {
  watchdog::set_phase("directions");
  const bool projected = need(ses.options().directions, "[directions]").projected;
  const std::string in = ses.out_path(io::schema::residuals::kFile);
  const std::string out = ses.out_path(io::schema::directions::kFile);
  const std::string inputs = phase_inputs(ses, Phase::directions).dump();
  // Rank 0 computes and writes; an error there is an error on every rank.
  parallel::root_decides(ses.rt().world(), [&] {
    ABL_CHECK(std::filesystem::exists(in), "{} does not exist: run the residuals phase first", in);
    io::schema::ResidualsReader res(in);
    if (!ses.model().empty()) {
      // Directions are only meaningful for the model the residuals came from.
      ABL_CHECK(res.depths() == ses.spec().num_layers + 1 && res.hidden() == ses.spec().hidden_size,
                "{} holds residuals of {} depths x {} (model {}), but --model {} has {} layers of {}", in,
                res.depths(), res.hidden(), res.meta().model, ses.model(), ses.spec().num_layers,
                ses.spec().hidden_size);
    }
    io::schema::DirectionsData d = ablation::compute_directions(res, projected);
    check_finite_directions(d, in);
    d.inputs = inputs;
    check_free_space(ses.out_dir(), 8 * d.depths * (3 * d.hidden + 5) + (1 << 16), "directions.h5");
    io::schema::write_directions(out, d);
    log::info("directions ({}) of {} depths from {} good and {} bad prompts -> {}\n{}",
              projected ? "projected" : "plain", d.depths, res.rows(io::schema::PromptSet::good),
              res.rows(io::schema::PromptSet::bad), out, ablation::directions_table(d));
    return true;
  });
}

namespace {

int run_directions(const po::variables_map& vm) {
  Session ses(parse_driver_options(vm), "directions");
  check_phase_options(ses);
  phase_directions(ses);
  return 0;
}

}  // namespace

Command directions_command() {
  Command c;
  c.name = "directions";
  c.summary = "refusal directions and per-depth statistics from residuals.h5 -> directions.h5";
  c.usage = "--out DIR [--projected true|false]";
  c.declare = [](OptionSet& o) {
    declare_output_options(o);
    declare_directions_options(o);
  };
  c.run = run_directions;
  return c;
}

}  // namespace abl::app
