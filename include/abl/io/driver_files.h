// The driver phases' files: directions.h5 (serial), baseline.h5 (collective writer, serial
// reader) and trials.h5 (serial, extendible, resumable). Dataset names and root attributes are
// in output_schema.h; docs/outputs.md describes the layout. Every file is written under a
// ".partial" name and renamed when complete (h5::OutputFile); every reader checks the schema
// name, the version and every shape in its constructor and names the file in its errors.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "abl/io/h5.h"
#include "abl/io/output_schema.h"

namespace abl::io::schema {

// ---- directions.h5 ----------------------------------------------------------------------
// Everything (L+1, H) is row-major f64; per-depth statistics are (L+1) f64.
struct DirectionsData {
  std::string model;            // as in residuals.h5
  std::string architecture;
  std::string residuals_created;  // the `created` attribute of the residuals.h5 used
  bool projected = true;          // r had its component along normalize(good_mean) removed
  int64_t depths = 0, hidden = 0;
  std::vector<double> directions;  // unit rows (a zero row where the means are equal)
  std::vector<double> good_mean, bad_mean;
  // Per depth: ‖good_mean‖, ‖bad_mean‖, ‖bad_mean − good_mean‖ (before projection or
  // normalization), cosine(good_mean, bad_mean), and the separation of the two classes along
  // the direction (Cohen's d of the per-prompt projections; NaN without full residuals).
  std::vector<double> good_norm, bad_norm, direction_norm, cosine_good_bad, separation;
  std::string inputs;   // kInputsAttr ("" when absent)
  std::string created;  // set by the writer
};
// Serial; writes path + ".partial" then renames. Checks every vector's size against depths/hidden.
void write_directions(const std::string& path, const DirectionsData& d);
DirectionsData read_directions(const std::string& path);

// ---- baseline.h5 ------------------------------------------------------------------------
struct BaselineMeta {
  std::string model;
  std::string architecture;
  std::string chat_template;
  std::string system_prompt;
  std::string response_prefix;         // used for every prompt of the run
  std::string response_prefix_source;  // "detected" or "given"
  int64_t max_response_length = 0;
  int64_t world_size = 0;  // 0: the size of the writer's communicator
  std::string abliterate_version;
  std::string inputs;   // kInputsAttr ("" when absent)
  std::string created;  // set by the writer
};

// Collective over comm (MPI_COMM_NULL: serial), like ResidualsWriter: every rank writes its own
// rows; commit() checks that every row was written once.
class BaselineWriter {
 public:
  BaselineWriter(const std::string& path, MPI_Comm comm, const BaselineMeta& meta, int64_t n_kl,
                 int64_t n_refusal, int64_t vocab);
  // Rows [first_row, first_row + n_rows) of /kl/logprobs (n_rows, V) and /kl/prompts.
  void write_kl(int64_t first_row, int64_t n_rows, const float* logprobs,
                const std::vector<std::string>& prompts);
  // Rows [first_row, first_row + prompts.size()) of /refusal/{prompts,responses,is_refusal}.
  void write_refusals(int64_t first_row, const std::vector<std::string>& prompts,
                      const std::vector<std::string>& responses,
                      const std::vector<uint8_t>& is_refusal);
  void commit();
  const std::string& path() const;

 private:
  h5::OutputFile out_;
  MPI_Comm comm_;
  int64_t n_kl_, n_refusal_, vocab_;
  int64_t kl_rows_ = 0, refusal_rows_ = 0;  // this rank's, summed at commit
};

class BaselineReader {
 public:
  explicit BaselineReader(const std::string& path);  // serial, no MPI needed
  const std::string& path() const { return file_.path(); }
  const BaselineMeta& meta() const { return meta_; }
  int64_t n_kl() const { return n_kl_; }
  int64_t n_refusal() const { return n_refusal_; }
  int64_t vocab() const { return vocab_; }
  std::vector<float> kl_logprobs(int64_t first_row = 0, int64_t n_rows = -1) const;  // (n, V)
  std::vector<std::string> kl_prompts() const;
  std::vector<std::string> refusal_prompts() const;
  std::vector<std::string> refusal_responses() const;
  std::vector<uint8_t> is_refusal() const;
  int64_t refusals() const;  // sum of is_refusal

 private:
  h5::File file_;
  BaselineMeta meta_;
  int64_t n_kl_ = 0, n_refusal_ = 0, vocab_ = 0;
};

// ---- evaluate.h5 ------------------------------------------------------------------------
struct EvaluateMeta {
  std::string model, base;                          // as given
  std::string model_fingerprint, base_fingerprint;  // app::model_fingerprint
  double kl = 0;                                    // mean of /kl/kl
  int64_t refusals = 0;                             // sum of /refusal/is_refusal
  std::string architecture;
  std::string chat_template;
  std::string system_prompt;
  std::string response_prefix;
  std::string response_prefix_source;
  int64_t max_response_length = 0;
  int64_t world_size = 0;  // 0: the size of the writer's communicator
  std::string abliterate_version;
  std::string inputs;  // kInputsAttr
};

// Collective over comm like BaselineWriter: every rank writes its own rows, commit() checks that
// every row was written once.
class EvaluateWriter {
 public:
  EvaluateWriter(const std::string& path, MPI_Comm comm, const EvaluateMeta& meta, int64_t n_kl, int64_t n_refusal);
  // Rows [first_row, first_row + kl.size()) of /kl/{kl,prompts}.
  void write_kl(int64_t first_row, const std::vector<double>& kl, const std::vector<std::string>& prompts);
  // Rows [first_row, first_row + prompts.size()) of /refusal/{prompts,responses,is_refusal}.
  void write_refusals(int64_t first_row, const std::vector<std::string>& prompts,
                      const std::vector<std::string>& responses, const std::vector<uint8_t>& is_refusal);
  void commit();
  const std::string& path() const { return out_.final_path(); }

 private:
  h5::OutputFile out_;
  MPI_Comm comm_;
  int64_t n_kl_, n_refusal_;
  int64_t kl_rows_ = 0, refusal_rows_ = 0;  // this rank's, summed at commit
};

// ---- trials.h5 --------------------------------------------------------------------------
// One row per trial, appended a batch at a time by rank 0 and flushed after every batch. The
// parameters are stored as a compound dataset whose members are `param_names` (f64 each) plus
// the scores in their own datasets. The file is "<path>.partial" while a sweep runs and is
// renamed to <path> by finish(); a later sweep that wants more trials reopens either. The root
// attribute n_trials counts the rows of complete appends; rows beyond it (an append that a
// killed process did not finish) are ignored by readers and cut when the file is reopened.
struct TrialsMeta {
  std::string config_hash;  // guards resume: model, prompts, directions, settings
  std::string config_json;  // the settings the hash covers, human-readable
  std::vector<std::string> param_names;  // compound members, in order
  std::string search;                    // "grid", "sobol", "tpe"
  int64_t trials_per_batch = 0;
  int64_t n_kl = 0, n_refusal = 0;
  int64_t baseline_refusals = 0;
  bool store_responses = false;  // /trials/responses (T, N_refusal) variable-length UTF-8
  std::string model;
  std::string abliterate_version;
  std::string created;  // set when the file is first created
  // A slice of a sweep split over jobs: its rows are trials first_trial.. of the whole sweep.
  int64_t first_trial = 0;
  int64_t slice_index = 0, slice_count = 1;
};

struct TrialRow {
  std::vector<double> params;  // param_names.size() values
  double kl = 0;
  int64_t refusals = 0;
  int64_t batch = 0;         // sweep batch that evaluated it
  double elapsed_s = 0;      // wall time of its batch since the sweep started, cumulative
  std::vector<std::string> responses;  // n_refusal when store_responses, else ignored
};

class TrialsStore {
 public:
  enum class Resume { allowed, restart };
  // Creates "<path>.partial", or continues an existing "<path>.partial" or "<path>" when its
  // config_hash and param_names equal meta's (a complete <path> is renamed back to .partial).
  // A mismatch (or a file that is not a readable trials file) is an error naming the file and
  // both hashes and pointing at the sweep's --restart; `restart` replaces the file instead.
  // Errors also when both <path> and <path>.partial exist (ambiguous; names both), unless
  // `restart`, which removes both. A file another process has open (a sweep still running on
  // it: HDF5 locks it) is refused with that hint.
  static TrialsStore open(const std::string& path, const TrialsMeta& meta, Resume resume);

  TrialsStore(TrialsStore&&) noexcept;
  TrialsStore& operator=(TrialsStore&&) = delete;
  ~TrialsStore();  // closes; the file keeps its .partial name unless finish() ran

  const TrialsMeta& meta() const { return meta_; }  // of the file (created as stored)
  int64_t size() const { return rows_; }
  bool resumed() const { return resumed_; }  // rows existed when opened
  std::vector<TrialRow> read_all() const;  // with responses; after finish(): of the final file
  // Appends the rows (extending every dataset), flushes, then records the new n_trials and
  // flushes again. Checks every row's sizes first (an error appends nothing).
  void append(const std::vector<TrialRow>& rows);
  // Closes and renames "<path>.partial" to "<path>".
  void finish();
  // An upper bound of the bytes append(rows) adds to the file (its disk space is reserved first).
  int64_t append_bytes(const std::vector<TrialRow>& rows) const;
  const std::string& final_path() const { return final_path_; }

 private:
  TrialsStore() = default;
  std::string final_path_;
  h5::File file_;
  TrialsMeta meta_;
  int64_t rows_ = 0;
  bool resumed_ = false;
  bool finished_ = false;
  bool broken_ = false;  // an append failed: no more rows are taken
};

// Serial reader for report and tools: <path>, or "<path>.partial" (complete false) when only
// that exists, up to its last complete append. A .partial that a running sweep in another
// process holds locked is read without the lock. with_responses false leaves them empty.
struct TrialsContents {
  std::string path;  // the file actually read
  bool complete = false;
  TrialsMeta meta;
  std::vector<TrialRow> rows;
};
TrialsContents read_trials(const std::string& path, bool with_responses = false);

}  // namespace abl::io::schema
