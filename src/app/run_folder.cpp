// The run folder's lock, the provenance of its phase files, free-space checks and fingerprints
// (run_folder.h).
#include "abl/app/run_folder.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "abl/app/model_options.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/utc_time.h"
#include "abl/parallel/agree.h"
#include "abl/io/safetensors.h"

namespace abl::app {
namespace fs = std::filesystem;

uint64_t fnv1a(const void* data, size_t n, uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

uint64_t fnv1a(const std::string& s, uint64_t h) { return fnv1a(s.data(), s.size(), h); }

std::string hex64(uint64_t h) { return fmt::format("{:016x}", h); }

std::string model_fingerprint(const std::string& model) {
  if (is_synthetic(model)) return model;
  std::ifstream in(fs::path(model) / "config.json", std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  uint64_t h = fnv1a(text.str());
  io::SafetensorsReader st(model);
  constexpr uint64_t kBlock = 4096, kBlocks = 16;
  std::vector<unsigned char> buf(kBlock);
  for (const auto& t : st.tensors()) {
    h = fnv1a(t.name, h);
    h = fnv1a(fmt::format("{}:{}:{}", t.dtype_name, fmt::join(t.shape, "x"), t.nbytes()), h);
    const uint64_t n = t.nbytes();
    if (n <= kBlock * kBlocks) {
      buf.resize(n);
      st.read_bytes(t, 0, n, buf.data());
      h = fnv1a(buf.data(), buf.size(), h);
      buf.resize(kBlock);
      continue;
    }
    for (uint64_t b = 0; b < kBlocks; ++b) {
      const uint64_t at = b * (n - kBlock) / (kBlocks - 1);
      st.read_bytes(t, at, kBlock, buf.data());
      h = fnv1a(buf.data(), kBlock, h);
    }
  }
  return hex64(h);
}

// ---- the lock --------------------------------------------------------------------------------
namespace {

std::string g_held_lock;  // the lock this process holds ("" if none)

std::string env_or(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

std::string host_name() {
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  return name;
}

// Whether Slurm still knows job `id`: 1 yes, 0 no, -1 cannot tell (no squeue).
int slurm_job_alive(const std::string& id) {
  if (id.empty() || id.find_first_not_of("0123456789_") != std::string::npos) return -1;
  const std::string cmd = "squeue -h -j " + id + " -o %T 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[256];
  std::string out;
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int rc = pclose(p);
  if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) == 127) return -1;
  return out.find_first_not_of(" \n") == std::string::npos ? 0 : 1;
}

// Whether process `pid` of this host has ended: gone, or a zombie its parent has not reaped yet (the
// ranks of an aborted mpirun linger so for a moment; kill(pid, 0) still succeeds on them).
bool process_ended(long pid) {
  if (kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');  // the command name may hold spaces and parentheses
  return close != std::string::npos && close + 2 < line.size() && (line[close + 2] == 'Z' || line[close + 2] == 'X');
}

// Why the lock described by `holder` may be taken over ("" when it may not).
std::string stale_reason(const nlohmann::json& holder) {
  const std::string host = holder.value("host", ""), job = holder.value("slurm_job_id", "");
  const long pid = holder.value("pid", 0L);
  if (host == host_name() && pid > 0 && process_ended(pid)) {
    return fmt::format("process {} on {} has ended", pid, host);
  }
  if (!job.empty() && job == env_or("SLURM_JOB_ID") &&
      holder.value("slurm_restart_count", "0") != env_or("SLURM_RESTART_COUNT", "0")) {
    return fmt::format("Slurm job {} was requeued", job);
  }
  if (!job.empty() && job != env_or("SLURM_JOB_ID") && slurm_job_alive(job) == 0) {
    return fmt::format("Slurm job {} has ended", job);
  }
  return "";
}

}  // namespace

std::string RunFolderLock::lock_path(const std::string& dir, const std::string& part) {
  return (fs::path(dir) / (part.empty() ? ".abliterate.lock" : ".abliterate." + part + ".lock")).string();
}

std::unique_ptr<RunFolderLock> RunFolderLock::acquire(parallel::Comm& world, const std::string& dir,
                                                      const std::string& command, const std::string& part) {
  std::unique_ptr<RunFolderLock> lock(new RunFolderLock());
  const std::string path = lock_path(dir, part);
  parallel::root_decides(world, [&] {
    std::error_code ec;
    fs::create_directories(dir, ec);
    ABL_CHECK(!ec, "cannot create the run folder {}: {}", dir, ec.message());
    nlohmann::ordered_json me;
    me["slurm_job_id"] = env_or("SLURM_JOB_ID");
    me["slurm_restart_count"] = env_or("SLURM_RESTART_COUNT", "0");
    me["host"] = host_name();
    me["pid"] = static_cast<long>(getpid());
    me["command"] = command;
    me["started"] = utc_now_iso8601();
    const std::string text = me.dump() + "\n";
    for (int attempt = 0; attempt < 2; ++attempt) {
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
      if (fd >= 0) {
        const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        ::close(fd);
        ABL_CHECK(ok, "cannot write the lock {} of the run folder: {}", path, std::strerror(errno));
        lock->path_ = path;
        g_held_lock = path;
        return true;
      }
      ABL_CHECK(errno == EEXIST, "the run folder {} is not writable: cannot create {}: {}", dir, path,
                std::strerror(errno));
      std::ifstream in(path);
      std::stringstream held;
      held << in.rdbuf();
      const nlohmann::json holder = nlohmann::json::parse(held.str(), nullptr, false);
      const std::string why = holder.is_object() ? stale_reason(holder) : "the lock file is unreadable";
      if (why.empty()) {
        const std::string job = holder.value("slurm_job_id", "");
        fail("the run folder {} is in use by {}{} on {} (pid {}, since {}): two jobs must not share a run "
             "folder; give this one another --out, or remove {} if that job has ended",
             dir, holder.value("command", std::string("abliterate")), job.empty() ? "" : " of Slurm job " + job,
             holder.value("host", std::string("?")), holder.value("pid", 0L), holder.value("started", std::string("?")),
             path);
      }
      log::warn("run folder {}: taking over the lock of {} ({})", dir, path, why);
      std::remove(path.c_str());
    }
    fail("cannot take the lock {} of the run folder (another job took it first?)", path);
  });
  return lock;
}

RunFolderLock::~RunFolderLock() {
  if (path_.empty()) return;
  std::remove(path_.c_str());
  if (g_held_lock == path_) g_held_lock.clear();
}

void release_run_folder_lock_on_abort() {
  if (!g_held_lock.empty()) std::remove(g_held_lock.c_str());
  g_held_lock.clear();
}

// ---- provenance ------------------------------------------------------------------------------

std::string differing_keys(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b) {
  std::string out;
  const auto add = [&out](const std::string& k) {
    if (out.find(k) == std::string::npos) out += (out.empty() ? "" : ", ") + k;
  };
  for (auto it = a.begin(); it != a.end(); ++it) {
    if (!b.contains(it.key()) || b.at(it.key()) != it.value()) add(it.key());
  }
  for (auto it = b.begin(); it != b.end(); ++it) {
    if (!a.contains(it.key())) add(it.key());
  }
  return out;
}

bool reusable_phase_file(const std::string& path, const std::string& recorded_inputs,
                         const nlohmann::ordered_json& inputs) {
  ABL_CHECK(!recorded_inputs.empty(),
            "{} records no inputs (written by an older version of abliterate), so it cannot be checked against "
            "this run; run with --redo to recompute it, or use another --out",
            path);
  const auto recorded = nlohmann::ordered_json::parse(recorded_inputs, nullptr, false);
  ABL_CHECK(!recorded.is_discarded(), "{}: its inputs attribute is not valid JSON; run with --redo", path);
  if (recorded == inputs) return true;
  fail("{} was computed from other inputs than this run's (they differ in: {}); run with --redo to recompute "
       "it, or use another --out",
       path, differing_keys(recorded, inputs));
}

// ---- free space ------------------------------------------------------------------------------

int64_t free_bytes(const std::string& dir) {
  struct statvfs st {};
  ABL_CHECK(statvfs(dir.c_str(), &st) == 0, "cannot read the free space of {}: {}", dir, std::strerror(errno));
  return static_cast<int64_t>(st.f_bavail) * static_cast<int64_t>(st.f_frsize);
}

void check_free_space(const std::string& dir, int64_t bytes, const std::string& what) {
  int64_t reserve = int64_t{16} << 20;
  if (const char* v = std::getenv("ABL_DISK_RESERVE_MB"); v && *v) {
    char* end = nullptr;
    const long long mb = std::strtoll(v, &end, 10);
    ABL_CHECK(end && *end == '\0' && mb >= 0, "ABL_DISK_RESERVE_MB must be a number of MiB, got '{}'", v);
    reserve = static_cast<int64_t>(mb) << 20;
  }
  const int64_t free = free_bytes(dir);
  const auto size = [](int64_t b) {
    return b < (int64_t{1} << 20) ? fmt::format("{} KiB", (b + 1023) / 1024)
                                  : fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
  };
  ABL_CHECK(free >= bytes + reserve,
            "disk full: {} needs about {} in {} (plus a reserve of {}, ABL_DISK_RESERVE_MB), but only {} are free; "
            "free some space and run the same command again (finished work is kept)",
            what, size(bytes), dir, size(reserve), size(free));
}

}  // namespace abl::app
