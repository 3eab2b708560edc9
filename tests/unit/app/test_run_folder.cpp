// The run folder: its lock, the provenance of phase files, free-space checks, the model
// fingerprint and the threads a rank may use.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "abl/app/model_options.h"
#include "abl/app/run_folder.h"
#include "abl/core/error.h"
#include "abl/parallel/comm.h"
#include "common/error_of.h"

using abl::testing::error_of;
using namespace abl;
namespace fs = std::filesystem;

namespace {

// A group of one: every collective is a no-op.
class SoloComm final : public parallel::Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_gather(const void* send, void* recv, size_t bytes) override { std::memcpy(recv, send, bytes); }
  std::unique_ptr<parallel::Pending> start_all_gather(const void* send, void* recv, size_t bytes) override {
    all_gather(send, recv, bytes);
    return nullptr;
  }
  void all_reduce_sum(double*, size_t) override {}
  void all_reduce_sum(int64_t*, size_t) override {}
  void all_reduce_max(int64_t*, size_t) override {}
  void broadcast(void*, size_t, int) override {}
  void barrier() override {}
};

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("abl-run-folder-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  return d;
}

std::string organism() { return std::string(ABL_FIXTURE_DIR) + "/organism"; }

}  // namespace

TEST(RunFolderLock, OneHolderAtATime) {
  SoloComm comm;
  const fs::path dir = fresh_dir("lock");
  {
    auto lock = app::RunFolderLock::acquire(comm, dir.string(), "run");
    ASSERT_TRUE(fs::exists(app::RunFolderLock::lock_path(dir.string())));
    // This process is alive: a second job on the folder is refused, naming the holder.
    const std::string e = error_of([&] { app::RunFolderLock::acquire(comm, dir.string(), "sweep"); });
    EXPECT_NE(e.find("is in use by run on"), std::string::npos) << e;
    EXPECT_NE(e.find("pid " + std::to_string(getpid())), std::string::npos) << e;
  }
  EXPECT_FALSE(fs::exists(app::RunFolderLock::lock_path(dir.string())));  // released with the holder
  fs::remove_all(dir);
}

TEST(RunFolderLock, ALockOfAProcessThatIsGoneIsTakenOver) {
  SoloComm comm;
  const fs::path dir = fresh_dir("stale");
  fs::create_directories(dir);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::ofstream(app::RunFolderLock::lock_path(dir.string()))
      << R"({"slurm_job_id":"","host":")" << host << R"(","pid":999999999,"command":"run","started":"then"})";
  EXPECT_NO_THROW(app::RunFolderLock::acquire(comm, dir.string(), "run"));
  // On another host, whose processes cannot be seen, the lock stands.
  std::ofstream(app::RunFolderLock::lock_path(dir.string()))
      << R"({"slurm_job_id":"","host":"elsewhere","pid":1,"command":"sweep","started":"then"})";
  const std::string e = error_of([&] { app::RunFolderLock::acquire(comm, dir.string(), "run"); });
  EXPECT_NE(e.find("in use by sweep on elsewhere (pid 1"), std::string::npos) << e;
  fs::remove_all(dir);
}

// A rank of an aborted job can stay a zombie for a moment (its parent, mpirun, gone or not yet
// reaping): kill(pid, 0) still finds it, but it has ended and its lock is taken over.
TEST(RunFolderLock, ALockOfAZombieIsTakenOver) {
  SoloComm comm;
  const fs::path dir = fresh_dir("zombie");
  fs::create_directories(dir);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  // Wait until it is a zombie (not reaped: waitid with WNOWAIT leaves it so).
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::ofstream(app::RunFolderLock::lock_path(dir.string()))
      << R"({"slurm_job_id":"","host":")" << host << R"(","pid":)" << child << R"(,"command":"run","started":"then"})";
  EXPECT_NO_THROW(app::RunFolderLock::acquire(comm, dir.string(), "run"));
  waitpid(child, nullptr, 0);
  fs::remove_all(dir);
}

TEST(RunFolderLock, AnUnwritableFolderIsAnError) {
  SoloComm comm;
  const std::string e = error_of([&] { app::RunFolderLock::acquire(comm, "/proc/self/no-folder-here", "run"); });
  EXPECT_NE(e.find("/proc/self/no-folder-here"), std::string::npos) << e;
}

TEST(Provenance, ReuseOnlyWhenTheInputsAreEqual) {
  nlohmann::ordered_json now;
  now["model"] = "abc";
  now["system_prompt"] = "You are a helpful assistant.";
  EXPECT_TRUE(app::reusable_phase_file("baseline.h5", now.dump(), now));
  nlohmann::ordered_json other = now;
  other["system_prompt"] = "Be terse.";
  other["extra"] = 1;
  const std::string e = error_of([&] { app::reusable_phase_file("baseline.h5", other.dump(), now); });
  EXPECT_NE(e.find("they differ in: system_prompt, extra"), std::string::npos) << e;
  EXPECT_NE(e.find("--redo"), std::string::npos) << e;
  const std::string old = error_of([&] { app::reusable_phase_file("baseline.h5", "", now); });
  EXPECT_NE(old.find("records no inputs"), std::string::npos) << old;
}

TEST(Fingerprint, SeesWeightsOfTheSameShape) {
  const fs::path dir = fresh_dir("fingerprint");
  fs::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(organism() + "/" + f, dir / f);
  const std::string original = app::model_fingerprint(organism());
  EXPECT_EQ(app::model_fingerprint(dir.string()), original);
  {
    // One byte deep inside the data of the last tensor (the sample covers every tensor's ends
    // and 14 points between; a byte at the very end is one of them).
    std::fstream f(dir / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    char c = 0;
    f.seekg(-1, std::ios::end);
    f.get(c);
    f.seekp(-1, std::ios::end);
    f.put(static_cast<char>(c ^ 1));
  }
  EXPECT_NE(app::model_fingerprint(dir.string()), original);
  EXPECT_EQ(app::model_fingerprint("synthetic:tiny-llama"), "synthetic:tiny-llama");
  fs::remove_all(dir);
}

TEST(FreeSpace, TooLittleIsAnErrorThatSaysWhatToDo) {
  const std::string e = error_of([] { app::check_free_space("/", int64_t{1} << 62, "trials.h5"); });
  EXPECT_NE(e.find("disk full: trials.h5 needs about"), std::string::npos) << e;
  EXPECT_NE(e.find("run the same command again"), std::string::npos) << e;
  EXPECT_NO_THROW(app::check_free_space(::testing::TempDir(), 1, "a byte"));
}

TEST(Threads, BoundedByTheCoresOfTheRank) {
  unsetenv("OMP_NUM_THREADS");
  const int all = app::rank_threads(0, 1);
  EXPECT_GE(all, 1);
  EXPECT_EQ(app::rank_threads(1, 4), 1);
  EXPECT_LE(app::rank_threads(0, 4), all);  // a share of the cores unless the launcher bound the rank
  const std::string e = error_of([] { app::rank_threads(100000, 1); });
  EXPECT_NE(e.find("--threads 100000 is more than the"), std::string::npos) << e;
  setenv("OMP_NUM_THREADS", "1", 1);
  EXPECT_EQ(app::rank_threads(0, 1), 1);
}
