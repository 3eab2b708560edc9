// A run folder that proves what it holds: a lock so that two jobs never share one, the inputs every
// phase file was computed from (so `run` reuses a file only when they match), the checks of free
// space before a phase writes, and the fingerprints these use. Everything here that reads the
// folder runs on rank 0; the callers broadcast its verdicts (dist/agree.h).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "abl/parallel/comm.h"

namespace abl::app {

// FNV-1a (64 bit) over bytes or a string, chained through `h`; hex64 writes 16 hex digits.
inline constexpr uint64_t kFnvOffset = 1469598103934665603ull;
uint64_t fnv1a(const void* data, size_t n, uint64_t h = kFnvOffset);
uint64_t fnv1a(const std::string& s, uint64_t h = kFnvOffset);
std::string hex64(uint64_t h);

// What identifies a model without reading all of it: config.json, the tensor table (names, dtypes,
// shapes) and a sample of every tensor's bytes (up to 16 blocks of 4 KiB spread over it), so a model
// of the same shape with other weights has another fingerprint. synthetic:<preset>: the name.
std::string model_fingerprint(const std::string& model);

// <dir>/.abliterate.lock, held by rank 0 of the job that uses the folder. It records the Slurm job
// id (if any), host, pid, command and start time. acquire() is collective over `world`: rank 0
// creates the folder (an unwritable one is an error here, before any work) and the lock; a lock
// held by a live process, or by a job on another host, is an error on every rank that names the
// holder. A lock left by a process that is gone (same host, no such pid), or by the same Slurm job
// (a requeued job), is taken over. The destructor removes it (rank 0). `part` names a part of the
// folder that jobs may work on side by side — a sweep slice ("slice-2-of-8") writes only its own
// slice file — and gives it a lock of its own (<dir>/.abliterate.<part>.lock).
class RunFolderLock {
 public:
  static std::unique_ptr<RunFolderLock> acquire(parallel::Comm& world, const std::string& dir, const std::string& command,
                                                const std::string& part = "");
  ~RunFolderLock();
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;
  static std::string lock_path(const std::string& dir, const std::string& part = "");

 private:
  RunFolderLock() = default;
  std::string path_;  // "" on ranks other than 0
};
// Removes the lock this process holds, if any (the error path, before MPI_Abort).
void release_run_folder_lock_on_abort();

// Provenance of a phase file: `inputs` is the JSON of what the phase reads (phase_inputs in
// driver.h). Rank 0 only: true when `path` exists and records the same inputs; false when it does
// not exist; an error when it exists with other inputs (or none), naming the keys that differ and
// pointing at --redo.
bool reusable_phase_file(const std::string& path, const std::string& recorded_inputs,
                         const nlohmann::ordered_json& inputs);
// The keys whose values differ between two inputs objects ("model, system_prompt").
std::string differing_keys(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b);

// Rank 0 only: an error, before anything is written, when the file system of `dir` has less than
// `bytes` + a reserve free (ABL_DISK_RESERVE_MB, default 16 MiB) for `what`.
void check_free_space(const std::string& dir, int64_t bytes, const std::string& what);
// Bytes free for an unprivileged writer on the file system of `dir`.
int64_t free_bytes(const std::string& dir);

}  // namespace abl::app
