// The output schema as code: every HDF5 file, dataset and root attribute the phases write, with
// its dimensions and a schema version per file; docs/outputs.md describes the same layout.
// Dimensions: N prompts of a set, L layers (depths L+1: embeddings, every layer, final norm),
// H hidden, V vocabulary, T trials. residuals.h5 is written and read here; directions.h5,
// baseline.h5 and trials.h5 by driver_files.h.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "abl/io/h5.h"

namespace abl::io::schema {

// Root attributes of every output file: which schema and which version of it.
inline constexpr const char* kSchemaAttr = "schema";
inline constexpr const char* kSchemaVersionAttr = "schema_version";
// Root attribute of residuals.h5, directions.h5 and baseline.h5: the inputs the file was computed
// from, as JSON (model fingerprint, prompt sets, template, options); `run` reuses a file only when
// they equal the current ones. Absent in files of older versions.
inline constexpr const char* kInputsAttr = "inputs";
// Files are written as "<name>.partial" and renamed when complete (h5::OutputFile).

enum class PromptSet { good, bad };
std::string_view set_name(PromptSet s);  // "good", "bad"

namespace residuals {
inline constexpr const char* kFile = "residuals.h5";
inline constexpr const char* kSchema = "abliterate-residuals";
inline constexpr int64_t kVersion = 1;
// Per set ("/good/...", "/bad/..."):
std::string residuals(PromptSet s);  // (N, L+1, H) f32; absent with --no-full-residuals
std::string prompts(PromptSet s);    // (N) variable-length UTF-8: the prompt as given
std::string n_tokens(PromptSet s);   // (N) i64: tokens of the rendered prompt
std::string mean(PromptSet s);       // (L+1, H) f64: mean residual over the N prompts
// Root attributes.
inline constexpr const char* kAttrModel = "model";                           // string
inline constexpr const char* kAttrArchitecture = "architecture";             // string
inline constexpr const char* kAttrDtype = "dtype";                           // string
inline constexpr const char* kAttrChatTemplate = "chat_template";            // string
inline constexpr const char* kAttrWorldSize = "world_size";                  // i64
inline constexpr const char* kAttrSharding = "sharding";                     // string
inline constexpr const char* kAttrVersion = "abliterate_version";            // string
inline constexpr const char* kAttrWinsorizeQuantile = "winsorize_quantile";  // f64
inline constexpr const char* kAttrResponsePrefix = "response_prefix";        // string
inline constexpr const char* kAttrCreated = "created";                       // ISO 8601 UTC
}  // namespace residuals

namespace directions {  // written by the directions phase (driver_files.h)
inline constexpr const char* kFile = "directions.h5";
inline constexpr const char* kSchema = "abliterate-directions";
inline constexpr int64_t kVersion = 1;
inline constexpr const char* kDirections = "/directions";  // (L+1, H) f64, unit rows
inline constexpr const char* kGoodMean = "/good_mean";     // (L+1, H) f64
inline constexpr const char* kBadMean = "/bad_mean";       // (L+1, H) f64
inline constexpr const char* kStats = "/stats";            // group of (L+1) f64 per depth:
inline constexpr const char* kStatsGoodNorm = "/stats/good_norm";
inline constexpr const char* kStatsBadNorm = "/stats/bad_norm";
inline constexpr const char* kStatsDirectionNorm = "/stats/direction_norm";  // before normalizing
inline constexpr const char* kStatsCosineGoodBad = "/stats/cosine_good_bad";
inline constexpr const char* kStatsSeparation = "/stats/separation";
// Root attributes.
inline constexpr const char* kAttrModel = "model";                         // string
inline constexpr const char* kAttrArchitecture = "architecture";           // string
inline constexpr const char* kAttrResidualsCreated = "residuals_created";  // string
inline constexpr const char* kAttrProjected = "projected";                 // i64 0/1
inline constexpr const char* kAttrCreated = "created";                     // ISO 8601 UTC
}  // namespace directions

namespace baseline {  // written by the baseline phase (driver_files.h)
inline constexpr const char* kFile = "baseline.h5";
inline constexpr const char* kSchema = "abliterate-baseline";
inline constexpr int64_t kVersion = 1;
inline constexpr const char* kKlLogprobs = "/kl/logprobs";               // (N_kl, V) f32
inline constexpr const char* kKlPrompts = "/kl/prompts";                 // (N_kl) UTF-8
inline constexpr const char* kRefusalPrompts = "/refusal/prompts";       // (N_ref) UTF-8
inline constexpr const char* kRefusalResponses = "/refusal/responses";   // (N_ref) UTF-8
inline constexpr const char* kRefusalIsRefusal = "/refusal/is_refusal";  // (N_ref) u8
// Root attributes.
inline constexpr const char* kAttrModel = "model";                                  // string
inline constexpr const char* kAttrArchitecture = "architecture";                    // string
inline constexpr const char* kAttrChatTemplate = "chat_template";                   // string
inline constexpr const char* kAttrSystemPrompt = "system_prompt";                   // string
inline constexpr const char* kAttrResponsePrefix = "response_prefix";               // string
inline constexpr const char* kAttrResponsePrefixSource = "response_prefix_source";  // string
inline constexpr const char* kAttrMaxResponseLength = "max_response_length";        // i64
inline constexpr const char* kAttrWorldSize = "world_size";                         // i64
inline constexpr const char* kAttrVersion = "abliterate_version";                   // string
inline constexpr const char* kAttrCreated = "created";                              // ISO 8601
}  // namespace baseline

namespace evaluate {  // written by `abliterate evaluate` (driver_files.h): a model scored against its base
inline constexpr const char* kFile = "evaluate.h5";
inline constexpr const char* kSchema = "abliterate-evaluate";
inline constexpr int64_t kVersion = 1;
inline constexpr const char* kKl = "/kl/kl";                              // (N_kl) f64: KL(base ‖ model) per prompt
inline constexpr const char* kKlPrompts = "/kl/prompts";                  // (N_kl) UTF-8
inline constexpr const char* kRefusalPrompts = "/refusal/prompts";        // (N_ref) UTF-8
inline constexpr const char* kRefusalResponses = "/refusal/responses";    // (N_ref) UTF-8: the model's
inline constexpr const char* kRefusalIsRefusal = "/refusal/is_refusal";   // (N_ref) u8
// Root attributes.
inline constexpr const char* kAttrModel = "model";                                  // string: the model scored
inline constexpr const char* kAttrBase = "base";                                    // string: its base
inline constexpr const char* kAttrModelFingerprint = "model_fingerprint";           // string
inline constexpr const char* kAttrBaseFingerprint = "base_fingerprint";             // string
inline constexpr const char* kAttrKl = "kl";                                        // f64: mean over the prompts
inline constexpr const char* kAttrRefusals = "refusals";                            // i64
inline constexpr const char* kAttrArchitecture = "architecture";                    // string
inline constexpr const char* kAttrChatTemplate = "chat_template";                   // string
inline constexpr const char* kAttrSystemPrompt = "system_prompt";                   // string
inline constexpr const char* kAttrResponsePrefix = "response_prefix";               // string
inline constexpr const char* kAttrResponsePrefixSource = "response_prefix_source";  // string
inline constexpr const char* kAttrMaxResponseLength = "max_response_length";        // i64
inline constexpr const char* kAttrWorldSize = "world_size";                         // i64
inline constexpr const char* kAttrVersion = "abliterate_version";                   // string
inline constexpr const char* kAttrCreated = "created";                              // ISO 8601
}  // namespace evaluate

namespace trials {  // written by the sweep phase (driver_files.h); extendible, chunked
inline constexpr const char* kFile = "trials.h5";
inline constexpr const char* kSchema = "abliterate-trials";
inline constexpr int64_t kVersion = 1;
inline constexpr const char* kParams = "/trials/params";        // (T) compound, one per trial
inline constexpr const char* kKl = "/trials/kl";                // (T) f64
inline constexpr const char* kRefusals = "/trials/refusals";    // (T) i64
inline constexpr const char* kResponses = "/trials/responses";  // (T, N_ref) UTF-8, optional
inline constexpr const char* kElapsed = "/trials/elapsed_s";    // (T) f64
inline constexpr const char* kBatch = "/trials/batch";          // (T) i64: sweep batch
// Root attributes.
inline constexpr const char* kAttrConfigHash = "config_hash";              // string: guards resume
inline constexpr const char* kAttrConfigJson = "config_json";              // string
inline constexpr const char* kAttrSearch = "search";                       // string
inline constexpr const char* kAttrTrialsPerBatch = "trials_per_batch";     // i64
inline constexpr const char* kAttrNKl = "n_kl";                            // i64
inline constexpr const char* kAttrNRefusal = "n_refusal";                  // i64
inline constexpr const char* kAttrBaselineRefusals = "baseline_refusals";  // i64
inline constexpr const char* kAttrStoreResponses = "store_responses";      // i64 0/1
inline constexpr const char* kAttrModel = "model";                         // string
inline constexpr const char* kAttrVersion = "abliterate_version";          // string
inline constexpr const char* kAttrCreated = "created";                     // ISO 8601 UTC
// i64: rows T of the last complete append. Written after the rows and flushed after them, so
// rows beyond it (an append a killed process did not finish) are ignored and cut on resume.
inline constexpr const char* kAttrTrials = "n_trials";
// i64: a slice of a sweep split over jobs (sweep --slice I/N): rows are trials first_trial,
// first_trial+1, ... of the whole sweep; 0, 0, 1 for a whole sweep. Absent in older files.
inline constexpr const char* kAttrFirstTrial = "first_trial";
inline constexpr const char* kAttrSliceIndex = "slice_index";
inline constexpr const char* kAttrSliceCount = "slice_count";
// File of slice i of n in the run folder: "trials.slice-<i>-of-<n>.h5" (merge combines them).
std::string slice_file(int64_t i, int64_t n);
}  // namespace trials

// What residuals.h5 records about the run (root attributes).
struct ResidualsMeta {
  std::string model;          // model path or synthetic:<preset>
  std::string architecture;   // e.g. "LlamaForCausalLM"
  std::string dtype;          // weights in the files: "BF16", "F16", "F32"
  std::string chat_template;  // renderer name
  int64_t world_size = 0;     // 0: the size of the writer's communicator
  std::string sharding;       // resolved strategy and layout
  std::string abliterate_version;
  double winsorize_quantile = 1.0;
  std::string response_prefix;  // appended to every rendered prompt
  std::string inputs;   // kInputsAttr ("" when absent)
  std::string created;  // set by the writer (rank 0's clock); read back by the reader
};

// Writes residuals.h5 collectively. Every call is collective over `comm` (MPI_COMM_NULL: a
// serial writer, no MPI needed) and takes the same arguments on every rank except the rows.
// Means: write() adds its rows to per-rank f64 sums; commit() all-reduces sums and counts and
// writes /<set>/mean, unless write_means() gave that set's mean already. With
// full_residuals == false the (N, L+1, H) datasets are not created but the means still are.
class ResidualsWriter {
 public:
  ResidualsWriter(const std::string& path, MPI_Comm comm, const ResidualsMeta& meta, int64_t n_good,
                  int64_t n_bad, int64_t depths, int64_t hidden, bool full_residuals);

  // This rank's rows [first_row, first_row + n_rows) of `set`: residuals (n_rows, depths,
  // hidden), n_tokens (n_rows), prompts (n_rows). n_rows may be 0.
  void write(PromptSet set, int64_t first_row, int64_t n_rows, const float* residuals,
             const int64_t* n_tokens, const std::vector<std::string>& prompts);
  // (depths, hidden) from rank 0 replaces the accumulated mean of `set`.
  void write_means(PromptSet set, const double* mean);
  // Writes the means, checks that every row was written once, closes and renames.
  void commit();

  const std::string& path() const { return out_.final_path(); }

 private:
  void write_mean_rows(PromptSet set, const double* mean);

  struct SetState {
    int64_t rows = 0;
    std::vector<double> sum;  // (depths, hidden): this rank's rows
    int64_t count = 0;
    bool mean_given = false;
  };
  h5::OutputFile out_;
  MPI_Comm comm_;
  int64_t depths_, hidden_;
  bool full_;
  SetState sets_[2];
};

// Reads a residuals.h5 serially (no MPI). The constructor checks the schema name, version and
// every shape, so later reads only fail on I/O.
class ResidualsReader {
 public:
  explicit ResidualsReader(const std::string& path);

  const std::string& path() const { return file_.path(); }
  const ResidualsMeta& meta() const { return meta_; }
  int64_t schema_version() const { return version_; }
  int64_t rows(PromptSet s) const { return rows_[static_cast<int>(s)]; }
  int64_t depths() const { return depths_; }  // L+1
  int64_t hidden() const { return hidden_; }
  bool has_full_residuals() const { return full_; }

  // (n_rows, depths, hidden); n_rows < 0: to the end. Error if written without them.
  std::vector<float> residuals(PromptSet s, int64_t first_row = 0, int64_t n_rows = -1) const;
  std::vector<int64_t> n_tokens(PromptSet s) const;
  std::vector<std::string> prompts(PromptSet s) const;
  std::vector<double> mean(PromptSet s) const;  // (depths, hidden)

 private:
  h5::File file_;
  ResidualsMeta meta_;
  int64_t version_ = 0;
  int64_t rows_[2] = {0, 0};
  int64_t depths_ = 0, hidden_ = 0;
  bool full_ = false;
};

}  // namespace abl::io::schema
