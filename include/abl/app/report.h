// The Pareto front of a sweep, as `report` prints it and the sweep shows at its end; also the
// CSV and JSON exports of every trial. Needs no MPI.
#pragma once
#include <ostream>
#include <string>

#include "abl/io/driver_files.h"

namespace abl::app {

// Summary line, then one row per front trial: index, refusals, KL, parameters.
void print_report(const io::schema::TrialsContents& t, std::ostream& out);
// Every trial: trial, batch, refusals, refusal_rate, kl, on_front, the parameters, elapsed_s.
void write_trials_csv(const io::schema::TrialsContents& t, const std::string& path);
// {"file", "complete", "meta": {...}, "front": [indices], "trials": [{...}]}.
void write_trials_json(const io::schema::TrialsContents& t, const std::string& path);

}  // namespace abl::app
