// `abliterate merge`: the slices of a sweep split over jobs (sweep --slice I/N, e.g. one per
// Slurm array task) combined into one trials.h5, in trial order. Every slice must be complete,
// present once, and written with the same settings (config hash), so no trial is lost or
// duplicated; the result is what one job evaluating all trials writes. No MPI, no model.
#include <filesystem>
#include <regex>

#include "abl/app/commands.h"
#include "abl/app/report.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/io/driver_files.h"

namespace abl::app {
namespace {
namespace fs = std::filesystem;

// The options of `merge`, parsed once.
struct MergeOptions {
  std::string out;  // the run folder
  bool overwrite = false;
};

MergeOptions parse_merge_options(const po::variables_map& vm) {
  MergeOptions o;
  o.out = vm["out"].as<std::string>();
  o.overwrite = vm["overwrite"].as<bool>();
  return o;
}

int merge_slices(const MergeOptions& opts) {
  const std::string& dir = opts.out;
  ABL_CHECK(fs::is_directory(dir), "run folder {} does not exist", dir);
  // The slice files present, complete or not: trials.slice-I-of-N.h5[.partial].
  const std::regex pattern(R"(trials\.slice-(\d+)-of-(\d+)\.h5(\.partial)?)");
  std::map<int64_t, std::string> complete;
  std::vector<std::string> unfinished;
  int64_t n = -1;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!std::regex_match(name, m, pattern)) continue;
    const int64_t count = std::stoll(m[2]);
    ABL_CHECK(n < 0 || n == count, "{} holds slices of a split into {} and into {} jobs; keep one split", dir, n, count);
    n = count;
    if (m[3].matched) {
      unfinished.push_back(name);
    } else {
      complete[std::stoll(m[1])] = e.path().string();
    }
  }
  ABL_CHECK(n > 0, "no trials.slice-I-of-N.h5 files in {} (written by sweep --slice I/N)", dir);
  ABL_CHECK(unfinished.empty(), "{}: unfinished slice(s) {}: run those sweeps again to complete them", dir,
            fmt::join(unfinished, ", "));
  std::vector<int64_t> missing;
  for (int64_t i = 0; i < n; ++i) {
    if (!complete.count(i)) missing.push_back(i);
  }
  ABL_CHECK(missing.empty(), "{}: slice(s) {} of {} missing", dir, fmt::join(missing, ", "), n);

  const std::string out = (fs::path(dir) / io::schema::trials::kFile).string();
  ABL_CHECK(!fs::exists(out) || opts.overwrite, "{} already exists (--overwrite replaces it)", out);
  std::vector<io::schema::TrialsContents> parts;
  int64_t next = 0;
  for (const auto& [i, path] : complete) {
    parts.push_back(io::schema::read_trials(path, true));
    const auto& p = parts.back();
    const auto& m0 = parts.front().meta;
    ABL_CHECK(p.meta.slice_index == i && p.meta.slice_count == n, "{} says it is slice {} of {}", path,
              p.meta.slice_index, p.meta.slice_count);
    ABL_CHECK(p.meta.config_hash == m0.config_hash && p.meta.param_names == m0.param_names,
              "{} was written with other settings than {} (config hash {} vs {})", path, parts.front().path,
              p.meta.config_hash, m0.config_hash);
    ABL_CHECK(p.meta.first_trial == next, "{} starts at trial {}, but the previous slices end at {}", path,
              p.meta.first_trial, next);
    next += static_cast<int64_t>(p.rows.size());
  }

  io::schema::TrialsMeta meta = parts.front().meta;
  meta.first_trial = 0;
  meta.slice_index = 0;
  meta.slice_count = 1;
  if (fs::exists(out)) fs::remove(out);
  auto store = io::schema::TrialsStore::open(out, meta, io::schema::TrialsStore::Resume::restart);
  int64_t batch_offset = 0;
  for (const auto& p : parts) {
    std::vector<io::schema::TrialRow> rows = p.rows;
    int64_t last_batch = -1;
    for (auto& r : rows) {
      last_batch = std::max(last_batch, r.batch);
      r.batch += batch_offset;  // batches stay distinct across slices
    }
    batch_offset += last_batch + 1;
    store.append(rows);
  }
  store.finish();
  log::info("merge: {} slices, {} trials -> {}", n, next, out);
  print_report(io::schema::read_trials(out), std::cout);
  return 0;
}

}  // namespace

Command merge_command() {
  Command c;
  c.name = "merge";
  c.summary = "combine the slices of a sweep (sweep --slice I/N) into one trials.h5, in trial order";
  c.usage = "--out DIR [--overwrite]";
  c.declare = [](OptionSet& o) {
    o.group("output", "Run folder")
        ("out", po::value<std::string>()->required()->value_name("DIR"), "run folder holding trials.slice-I-of-N.h5");
    o.group("merge", "Merge")("overwrite", po::bool_switch(), "replace an existing trials.h5");
  };
  c.run = [](const po::variables_map& vm) { return merge_slices(parse_merge_options(vm)); };
  return c;
}

}  // namespace abl::app
