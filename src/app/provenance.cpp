// run.json (provenance.h): the record of what produced a run folder, and --rerun.
#include "abl/app/provenance.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "abl/app/command_line.h"
#include "abl/app/driver_options.h"
#include "abl/app/model_options.h"
#include "abl/backend/cpu/isa.h"
#include "abl/core/build_info.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/sha256.h"
#include "abl/core/utc_time.h"
#include "abl/core/watchdog.h"
#include "abl/io/prompt_dataset.h"
#include "abl/parallel/agree.h"
#include "abl/parallel/lockstep.h"

namespace abl::app {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

nlohmann::ordered_json options_json(const po::variables_map& vm) {
  Json out = Json::object();
  for (const auto& [name, value] : vm) {
    if (name == "help" || name == "config" || name == "rerun") continue;
    const boost::any& v = value.value();
    if (const auto* s = boost::any_cast<std::string>(&v)) {
      out[name] = *s;
    } else if (const auto* b = boost::any_cast<bool>(&v)) {
      out[name] = *b;
    } else if (const auto* i = boost::any_cast<int64_t>(&v)) {
      out[name] = *i;
    } else if (const auto* u = boost::any_cast<uint64_t>(&v)) {
      out[name] = *u;
    } else if (const auto* n = boost::any_cast<int>(&v)) {
      out[name] = *n;
    } else if (const auto* d = boost::any_cast<double>(&v)) {
      out[name] = *d;  // written with enough digits to read back the same double
    } else {
      fail("option --{} has a type run.json cannot record", name);
    }
  }
  return out;
}

namespace {

Json read_record_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ABL_CHECK(in.good(), "cannot read {}", path);
  Json j;
  try {
    j = Json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not a JSON file: {}", path, e.what());
  }
  ABL_CHECK(j.is_object() && j.value("schema", "") == kRunRecordSchema,
            "{} is not a run record (its \"schema\" is not \"{}\")", path, kRunRecordSchema);
  return j;
}

// The latest record of `command` in a run.json: the file's own, else the latest of its history.
const Json* find_record(const Json& file, const std::string& command) {
  if (file.value("command", "") == command) return &file;
  if (file.contains("history") && file["history"].is_array()) {
    const Json& h = file["history"];
    for (auto it = h.rbegin(); it != h.rend(); ++it) {
      if (it->is_object() && it->value("command", "") == command) return &*it;
    }
  }
  return nullptr;
}

Json build_json() {
  Json b;
  b["version"] = build::version;
  b["git_commit"] = build::git_commit();
  b["build_type"] = build::build_type;
  b["compiler"] = build::cxx_compiler;
  b["cxx_flags"] = build::cxx_flags;
  b["options"] = build::build_options;
  b["cuda"] = build::cuda ? std::string(build::cuda_version) : std::string("no");
  b["nccl"] = build::nccl;
  b["hdf5"] = build::hdf5_version;
  b["cpu_kernels"] = cpu::isa_summary();  // rank 0's (docs/cluster.md: nodes of other CPUs may pick others)
  return b;
}

// A file of the model folder: its size and modification time decide whether a recorded hash holds.
struct FileStat {
  std::string name;
  int64_t bytes = 0;
  int64_t mtime_ns = 0;
};

FileStat stat_file(const fs::path& p) {
  struct stat st{};
  ABL_CHECK(::stat(p.c_str(), &st) == 0, "cannot stat {}", p.string());
  return {p.filename().string(), static_cast<int64_t>(st.st_size),
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

// The model's files (every regular file of its folder, by name) with their SHA-256. Rank 0 lists
// them and takes the hashes of unchanged files from `previous` (the folder's earlier record); the
// rest are split over the ranks by size and hashed in parallel. Collective.
Json model_files_json(parallel::Runtime& rt, const std::string& model, const Json& previous, const char* key) {
  // Rank 0's list: name, bytes, mtime, and the hash when the previous record has it for an unchanged file.
  const std::vector<std::string> listed = parallel::root_strings(rt.world(), [&] {
    std::vector<FileStat> files;
    for (const auto& e : fs::directory_iterator(model)) {
      if (e.is_regular_file()) files.push_back(stat_file(e.path()));
    }
    std::sort(files.begin(), files.end(), [](const FileStat& a, const FileStat& b) { return a.name < b.name; });
    const Json* old = nullptr;
    if (previous.is_object() && previous.contains("inputs") && previous["inputs"].contains(key) &&
        previous["inputs"][key].value("path", "") == model && previous["inputs"][key].contains("files")) {
      old = &previous["inputs"][key]["files"];
    }
    std::vector<std::string> out;
    for (const FileStat& f : files) {
      std::string known;
      if (old && old->contains(f.name)) {
        const Json& o = (*old)[f.name];
        if (o.value("bytes", int64_t{-1}) == f.bytes && o.value("mtime_ns", int64_t{-1}) == f.mtime_ns) {
          known = o.value("sha256", "");
        }
      }
      out.insert(out.end(), {f.name, std::to_string(f.bytes), std::to_string(f.mtime_ns), known});
    }
    return out;
  });
  std::vector<FileStat> files;
  std::vector<std::string> hashes;
  std::vector<int64_t> cost;  // bytes still to hash
  for (size_t i = 0; i + 3 < listed.size(); i += 4) {
    files.push_back({listed[i], std::stoll(listed[i + 1]), std::stoll(listed[i + 2])});
    hashes.push_back(listed[i + 3]);
    cost.push_back(hashes.back().empty() ? files.back().bytes + 1 : 0);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto bounds = parallel::split_contiguous(cost, rt.world_size());
  std::vector<std::string> mine;  // index, hash pairs
  {
    watchdog::Scope scope("hashing the model files for run.json");
    for (size_t i = bounds[static_cast<size_t>(rt.world_rank())]; i < bounds[static_cast<size_t>(rt.world_rank()) + 1]; ++i) {
      if (!hashes[i].empty()) continue;
      mine.push_back(std::to_string(i));
      mine.push_back(sha256_file((fs::path(model) / files[i].name).string()));
    }
  }
  const std::vector<std::string> all = rt.world().gather_strings(mine, 0);
  int64_t hashed = 0;
  for (size_t i = 0; i + 1 < all.size(); i += 2) {
    const auto k = static_cast<size_t>(std::stoll(all[i]));
    hashes[k] = all[i + 1];
    hashed += files[k].bytes;
  }
  Json out = Json::object();
  for (size_t i = 0; i < files.size(); ++i) {
    out[files[i].name] = {{"bytes", files[i].bytes}, {"mtime_ns", files[i].mtime_ns}, {"sha256", hashes[i]}};
  }
  if (hashed > 0 && rt.world_rank() == 0) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    log::info("run.json: SHA-256 of {:.2f} GB of model files in {:.1f} s on {} rank(s)", static_cast<double>(hashed) / 1e9,
              secs, rt.world_size());
  }
  return out;
}

// The options with every file or folder absolute, so that a rerun works from any directory.
Json absolute_paths(Json options) {
  static const char* const kPathOptions[] = {"model", "base", "good", "bad", "kl-prompts", "eval-prompts",
                                             "refusal-markers", "grid", "out"};
  for (const char* name : kPathOptions) {
    if (!options.contains(name) || !options[name].is_string()) continue;
    const std::string v = options[name].get<std::string>();
    if (v.empty() || v == "builtin" || is_synthetic(v) || v.rfind(io::kBundledPrefix, 0) == 0) continue;
    options[name] = fs::absolute(v).lexically_normal().string();
  }
  if (options.contains("chat-template") && options["chat-template"].is_string()) {
    const std::string t = options["chat-template"].get<std::string>();
    if (t.rfind("file:", 0) == 0) options["chat-template"] = "file:" + fs::absolute(t.substr(5)).lexically_normal().string();
  }
  return options;
}

// A prompt file's SHA-256; a dataset folder's is that of its manifest, the "<sha256>  <file>" lines
// of its prompt files (as sha256sum prints them, sorted), so a changed, added or removed shard shows.
Json file_json(const std::string& given) {
  const std::string path = io::resolve_prompt_path(given);
  Json j = {{"path", given}, {"file", fs::absolute(path).lexically_normal().string()}};
  if (!fs::is_directory(path)) {
    j["sha256"] = sha256_file(path);
    return j;
  }
  const io::DataFiles data = io::prompt_data_files(path);
  std::string manifest;
  for (const auto& f : data.files) manifest += sha256_file((fs::path(data.root) / f).string()) + "  " + f + "\n";
  Sha256 h;
  h.update(manifest);
  j["sha256"] = h.hex_digest();
  j["data_files"] = data.files.size();
  return j;
}

// The prompt, marker and grid files the options name (rank 0).
Json input_files_json(const DriverOptions& opts) {
  Json in = Json::object();
  if (opts.prompts) {
    in["good"] = file_json(opts.prompts->good.source.path);
    in["bad"] = file_json(opts.prompts->bad.source.path);
  }
  if (opts.evaluation) {
    if (!opts.evaluation->kl.source.path.empty()) in["kl_prompts"] = file_json(opts.evaluation->kl.source.path);
    if (!opts.evaluation->eval.source.path.empty()) in["eval_prompts"] = file_json(opts.evaluation->eval.source.path);
    if (opts.evaluation->refusal_markers != "builtin") in["refusal_markers"] = file_json(opts.evaluation->refusal_markers);
  }
  if (opts.sweep && !opts.sweep->grid.empty()) in["grid"] = file_json(opts.sweep->grid);
  return in;
}

// What differs between the recorded inputs of a run and this one's (the SHA-256 of each file).
std::string input_differences(const Json& recorded, const Json& now) {
  std::string out;
  const auto differ = [&](const std::string& what, const Json& a, const Json& b) {
    if (a.value("sha256", "") != b.value("sha256", "")) {
      out += fmt::format("\n  {}: the run used SHA-256 {}, this one {}", what, a.value("sha256", "(none)"),
                         b.value("sha256", "(none)"));
    }
  };
  const Json empty = Json::object();
  const auto member = [&](const Json& j, const std::string& k) -> const Json& {
    return j.is_object() && j.contains(k) ? j[k] : empty;
  };
  for (const char* key : {"model", "base"}) {
    const Json& rm = member(member(recorded, key), "files");
    const Json& nm = member(member(now, key), "files");
    for (const auto& [name, r] : rm.items()) differ(fmt::format("{} file {}", key, name), r, member(nm, name));
    for (const auto& [name, n] : nm.items()) {
      if (!rm.contains(name)) differ(fmt::format("{} file {} (not in the recorded run)", key, name), empty, n);
    }
  }
  const Json& rf = member(recorded, "files");
  const Json& nf = member(now, "files");
  for (const auto& [role, r] : rf.items()) differ(role + " " + member(nf, role).value("path", "(none)"), r, member(nf, role));
  return out;
}

// This process's name on the cluster: what its record carries, so the process finds its own record
// again among those of other processes writing to the same folder (the slices of one sweep).
std::string process_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("{}:{}", host[0] ? host : "unknown-host", static_cast<long>(getpid()));
}

// Serialises the read-modify-write of a run record between processes (the slices of a sweep start
// at once in one folder): an exclusive POSIX lock on `.run.json.lock` beside it (left in place: an
// empty file), which the kernel drops when
// the process ends, so no lock outlives a crash. Waits up to two minutes, then fails naming the
// file; on a file system without POSIX locks it warns once and goes on unlocked.
class RecordLock {
 public:
  explicit RecordLock(const std::string& record)
      : path_((fs::path(record).parent_path() / ("." + fs::path(record).filename().string() + ".lock")).string()) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ABL_CHECK(fd_ >= 0, "cannot open {}: {}", path_, std::strerror(errno));
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (::fcntl(fd_, F_SETLK, &fl) != 0) {
      const int err = errno;
      if (err != EACCES && err != EAGAIN && err != EINTR) {
        static bool warned = false;
        if (!warned) log::warn("{}: no POSIX lock on this file system ({}); run records written unlocked", path_,
                               std::strerror(err));
        warned = true;
        return;
      }
      if (std::chrono::steady_clock::now() > give_up) {
        ::close(fd_);
        fail("{}: still locked by another abliterate process after 120 s", path_);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~RecordLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  RecordLock(const RecordLock&) = delete;
  RecordLock& operator=(const RecordLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

// Called under RecordLock; the temporary file is this process's own.
void write_json_atomically(const std::string& path, const Json& j) {
  const std::string tmp = path + ".tmp." + process_name();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    ABL_CHECK(out.good(), "cannot write {}", tmp);
    out << j.dump(2) << "\n";
    out.flush();
    ABL_CHECK(out.good(), "error writing {}", tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp);
  ABL_CHECK(!ec, "cannot rename {} to {}: {}", tmp, path, ec.message());
}

}  // namespace

std::vector<std::pair<std::string, std::string>> rerun_options(const std::string& path, const std::string& command) {
  const Json file = read_record_file(path);
  const Json* rec = find_record(file, command);
  ABL_CHECK(rec != nullptr, "{} holds no record of `abliterate {}` (it records `{}`)", path, command,
            file.value("command", "?"));
  ABL_CHECK(rec->contains("options") && (*rec)["options"].is_object(), "{}: the record of `{}` has no options", path,
            command);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, v] : (*rec)["options"].items()) {
    if (v.is_string()) {
      out.emplace_back(name, v.get<std::string>());
    } else if (v.is_boolean()) {
      out.emplace_back(name, v.get<bool>() ? "true" : "false");
    } else if (v.is_number()) {
      out.emplace_back(name, v.dump());
    } else {
      fail("{}: option '{}' of the record of `{}` is not a string, number or boolean", path, name, command);
    }
  }
  return out;
}

void write_run_record(parallel::Runtime& rt, const std::string& out_dir, const std::string& command,
                      const DriverOptions& opts) {
  const std::string path = (fs::path(out_dir) / kRunRecordFile).string();
  // The folder's earlier record (rank 0 reads it; the others need only whether hashes may be reused).
  Json previous;
  const std::string previous_text = parallel::root_string(rt.world(), [&]() -> std::string {
    if (!fs::exists(path)) return "";
    try {
      return read_record_file(path).dump();
    } catch (const Error& e) {
      log::warn("{}: replaced ({})", path, e.what());
      return "";
    }
  });
  if (!previous_text.empty()) previous = Json::parse(previous_text);

  // The model as the options name it (evaluate: the model scored, and its base).
  Json inputs = Json::object();
  for (const char* key : {"model", "base"}) {
    const std::string model = opts.options.value(key, "");
    if (model.empty()) continue;
    inputs[key] = {{"path", model}};
    if (!is_synthetic(model)) inputs[key]["files"] = model_files_json(rt, model, previous, key);
  }
  const std::vector<std::string> hosts = rt.world().gather_strings({rt.host()}, 0);

  const std::string problem = parallel::root_string(rt.world(), [&]() -> std::string {
    inputs["files"] = input_files_json(opts);
    Json rec;
    rec["schema"] = kRunRecordSchema;
    rec["schema_version"] = 1;
    rec["command"] = command;
    rec["command_line"] = command_line();
    rec["started"] = utc_now_iso8601();
    rec["working_directory"] = fs::current_path().string();
    rec["abliterate"] = build_json();
    rec["options"] = absolute_paths(opts.options);
    if (opts.sweep) rec["seed"] = opts.sweep->seed;
    std::map<std::string, int> per_host;
    for (const std::string& h : hosts) ++per_host[h];
    rec["ranks"] = {{"world", rt.world_size()}, {"hosts", per_host}};
    rec["inputs"] = inputs;
    if (!opts.rerun.empty()) {
      const Json from = read_record_file(opts.rerun);
      const Json* recorded = find_record(from, command);
      ABL_CHECK(recorded != nullptr, "{} holds no record of `abliterate {}`", opts.rerun, command);
      const std::string diff = input_differences((*recorded)["inputs"], inputs);
      if (!diff.empty()) {
        return fmt::format("--rerun {}: the inputs differ from the recorded run's, so it would not be reproduced:{}",
                           opts.rerun, diff);
      }
      const Json& b = (*recorded)["abliterate"];
      if (b.value("git_commit", "") != build::git_commit()) {
        log::warn("--rerun {}: recorded by abliterate {} (commit {}), rerun by {} (commit {}): results may differ",
                  opts.rerun, b.value("version", "?"), b.value("git_commit", "?"), build::version, build::git_commit());
      }
      rec["rerun_of"] = fs::absolute(opts.rerun).lexically_normal().string();
    }
    rec["process"] = process_name();
    // The folder's record as it is now: another process (a slice of the same sweep) may have
    // written it since it was read above.
    const RecordLock lock(path);
    Json current = previous;
    if (fs::exists(path)) {
      try {
        current = read_record_file(path);
      } catch (const Error&) {  // warned about above, or written unreadable since: replaced
      }
    }
    Json history = current.is_object() && current.contains("history") ? current["history"] : Json::array();
    if (current.is_object()) {
      Json earlier = current;
      earlier.erase("history");
      history.push_back(earlier);
    }
    rec["history"] = history;
    write_json_atomically(path, rec);
    return "";
  });
  if (!problem.empty()) throw AgreedError(problem);
}

void add_to_run_record(const std::string& out_dir, const std::string& key, const nlohmann::ordered_json& value) {
  const std::string path = (fs::path(out_dir) / kRunRecordFile).string();
  if (!fs::exists(path)) return;  // a command that records nothing
  const RecordLock lock(path);
  Json rec = read_record_file(path);
  const std::string me = process_name();
  if (rec.value("process", "") != me) {
    // Another process recorded itself since (a slice of the same sweep): this one's record is in
    // the history now.
    if (rec.contains("history") && rec["history"].is_array()) {
      for (Json& h : rec["history"]) {
        if (h.is_object() && h.value("process", "") == me) h[key] = value;
      }
    }
    write_json_atomically(path, rec);
    return;
  }
  // Before the history, which stays last for whoever reads the file.
  Json history = rec.contains("history") ? rec["history"] : Json::array();
  rec.erase("history");
  rec[key] = value;
  rec["history"] = history;
  write_json_atomically(path, rec);
}

}  // namespace abl::app
