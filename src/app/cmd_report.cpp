// `abliterate report`: reads trials.h5 (no MPI job, no model) and prints the Pareto front of
// refusals and KL divergence with each front trial's parameters; --csv / --json export every trial.
#include "abl/app/report.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "abl/ablation/search.h"
#include "abl/ablation/trial.h"
#include "abl/app/commands.h"
#include "abl/core/error.h"
#include "abl/core/log.h"

namespace abl::app {
namespace {

std::vector<size_t> front_of(const io::schema::TrialsContents& t) {
  std::vector<ablation::Scores> scores;
  for (const auto& r : t.rows) scores.push_back({static_cast<double>(r.refusals), r.kl});
  return ablation::pareto_front(scores);
}

std::string param_text(const std::vector<std::string>& names, const std::vector<double>& v, size_t i) {
  if (names[i] == "direction_scope") return v[i] == 0.0 ? "global" : "per_layer";
  return fmt::format("{:.4g}", v[i]);
}

std::ofstream open_out(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  ABL_CHECK(out.good(), "cannot write {}", path);
  return out;
}

}  // namespace

void print_report(const io::schema::TrialsContents& t, std::ostream& out) {
  const auto& m = t.meta;
  out << fmt::format("{}: {} trials{}, search {}, {} per batch; baseline {}/{} refusals; KL on {} prompts\n", t.path,
                     t.rows.size(), t.complete ? "" : " (sweep not finished)", m.search, m.trials_per_batch,
                     m.baseline_refusals, m.n_refusal, m.n_kl);
  if (t.rows.empty()) return;
  std::vector<size_t> failed;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    if (!std::isfinite(t.rows[i].kl)) failed.push_back(i);
  }
  if (!failed.empty()) {
    out << fmt::format("{} trials failed (non-finite KL divergence; never on the front): {}\n", failed.size(),
                       fmt::join(failed, ", "));
  }
  const auto front = front_of(t);
  out << fmt::format("Pareto front ({} trials), refusals then KL divergence:\n", front.size());
  out << fmt::format("{:>6} {:>9} {:>9}", "trial", "refusals", "KL");
  const std::string short_names[] = {"scope", "dir", "a.max", "a.pos", "a.min", "a.dist",
                                     "m.max", "m.pos", "m.min", "m.dist"};
  const bool standard = m.param_names.size() == ablation::kParamNames.size();
  for (size_t i = 0; i < m.param_names.size(); ++i) {
    out << fmt::format(" {:>9}", standard ? short_names[i] : m.param_names[i]);
  }
  out << '\n';
  for (size_t i : front) {
    const auto& r = t.rows[i];
    out << fmt::format("{:>6} {:>5}/{:<3} {:>9.4f}", i, r.refusals, m.n_refusal, r.kl);
    for (size_t p = 0; p < r.params.size(); ++p) out << fmt::format(" {:>9}", param_text(m.param_names, r.params, p));
    out << '\n';
  }
}

void write_trials_csv(const io::schema::TrialsContents& t, const std::string& path) {
  const auto front = front_of(t);
  std::vector<bool> on(t.rows.size(), false);
  for (size_t i : front) on[i] = true;
  std::ofstream out = open_out(path);
  out << "trial,batch,refusals,refusal_rate,kl,on_front";
  for (const auto& n : t.meta.param_names) out << ',' << n;
  out << ",elapsed_s\n";
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = t.rows[i];
    out << fmt::format("{},{},{},{:.6g},{:.9g},{}", i, r.batch, r.refusals,
                       t.meta.n_refusal > 0 ? static_cast<double>(r.refusals) / static_cast<double>(t.meta.n_refusal) : 0.0,
                       r.kl, on[i] ? 1 : 0);
    for (size_t p = 0; p < r.params.size(); ++p) out << ',' << param_text(t.meta.param_names, r.params, p);
    out << fmt::format(",{:.3f}\n", r.elapsed_s);
  }
  ABL_CHECK(out.good(), "error writing {}", path);
}

void write_trials_json(const io::schema::TrialsContents& t, const std::string& path) {
  nlohmann::ordered_json j;
  j["file"] = t.path;
  j["complete"] = t.complete;
  j["meta"] = {{"search", t.meta.search},
               {"trials_per_batch", t.meta.trials_per_batch},
               {"n_kl", t.meta.n_kl},
               {"n_refusal", t.meta.n_refusal},
               {"baseline_refusals", t.meta.baseline_refusals},
               {"model", t.meta.model},
               {"config_hash", t.meta.config_hash},
               {"abliterate_version", t.meta.abliterate_version},
               {"created", t.meta.created}};
  j["front"] = front_of(t);
  auto& trials = j["trials"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = t.rows[i];
    nlohmann::ordered_json row;
    row["trial"] = i;
    row["batch"] = r.batch;
    row["refusals"] = r.refusals;
    row["kl"] = r.kl;
    for (size_t p = 0; p < r.params.size(); ++p) {
      if (t.meta.param_names[p] == "direction_scope") {
        row[t.meta.param_names[p]] = r.params[p] == 0.0 ? "global" : "per_layer";
      } else {
        row[t.meta.param_names[p]] = r.params[p];
      }
    }
    row["elapsed_s"] = r.elapsed_s;
    trials.push_back(std::move(row));
  }
  std::ofstream out = open_out(path);
  out << j.dump(1) << '\n';
  ABL_CHECK(out.good(), "error writing {}", path);
}

namespace {

// The options of `report`, parsed once.
struct ReportOptions {
  std::string trials;     // folder or file
  std::optional<std::string> csv, json;  // none = not written
};

ReportOptions parse_report_options(const po::variables_map& vm) {
  ReportOptions o;
  o.trials = vm["trials"].as<std::string>();
  if (vm.count("csv")) o.csv = vm["csv"].as<std::string>();
  if (vm.count("json")) o.json = vm["json"].as<std::string>();
  return o;
}

int write_report(const ReportOptions& opts) {
  std::string path = opts.trials;
  if (std::filesystem::is_directory(path)) path = (std::filesystem::path(path) / io::schema::trials::kFile).string();
  const auto t = io::schema::read_trials(path);
  print_report(t, std::cout);
  if (opts.csv) {
    write_trials_csv(t, *opts.csv);
    log::info("report: {} trials -> {}", t.rows.size(), *opts.csv);
  }
  if (opts.json) {
    write_trials_json(t, *opts.json);
    log::info("report: {} trials -> {}", t.rows.size(), *opts.json);
  }
  return 0;
}

}  // namespace

Command report_command() {
  Command c;
  c.name = "report";
  c.summary = "Pareto front and trial table of trials.h5 (no MPI needed), CSV/JSON export";
  c.usage = "--trials DIR|FILE [--csv FILE] [--json FILE]";
  c.declare = [](OptionSet& o) {
    o.group("report", "Report")
        ("trials", po::value<std::string>()->required()->value_name("DIR|FILE"),
         "run folder or trials.h5 (an unfinished sweep's trials.h5.partial is read too)")
        ("csv", po::value<std::string>()->value_name("FILE"), "write every trial as CSV")
        ("json", po::value<std::string>()->value_name("FILE"), "write every trial and the front as JSON");
  };
  c.run = [](const po::variables_map& vm) { return write_report(parse_report_options(vm)); };
  return c;
}

}  // namespace abl::app
