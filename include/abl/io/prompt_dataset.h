// Prompt datasets, one file or a Hugging Face dataset folder, cut with a split as the datasets
// library writes one: a split name and/or a Python-style slice, "train[:400]", "test", "[400:500]",
// "[-100:]". Files are text (one prompt per line), JSON Lines (.jsonl, .ndjson, or .json with one
// object per line), a JSON array (.json: of objects, or of strings), CSV (.csv) or TSV (.tsv) with a
// header row, or Parquet (any file that starts with PAR1: what the Hugging Face Hub serves datasets
// as). A folder's splits are found from its file names (dataset_splits.h); a single file is the
// split "train". `column` names the field of the objects or the column of the table.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "abl/core/error.h"

namespace abl::io {

struct PromptSource {
  // A file, or "bundled:<file>" for a file of the data bundled with abliterate (core/data_dir.h),
  // e.g. "bundled:prompts/harmful.txt", resolved when the prompts are read.
  std::string path;
  std::string column = "text";  // JSON, CSV/TSV and Parquet
  std::string split;            // "" = everything; see SplitSpec
};

inline constexpr const char* kBundledPrefix = "bundled:";
// The file a PromptSource path names (a bundled: path resolved to the bundled data folder).
std::string resolve_prompt_path(const std::string& path);

struct Slice {
  std::optional<int64_t> start, stop;
  // Parses "[a:b]" with optional, possibly negative a and b; errors name `where`.
  static Slice parse(const std::string& text, const std::string& where);
  // Python semantics: negative indices count from the end, out-of-range bounds are clamped.
  void resolve(int64_t n, int64_t* begin, int64_t* end) const;
};

// "train[:400]": the split's name (may be empty: the file, or a folder's only split) and slice.
struct SplitSpec {
  std::string name;
  std::optional<Slice> slice;
  // Errors name `where` and show the accepted forms; percentages ("train[:10%]") are refused.
  static SplitSpec parse(const std::string& text, const std::string& where);
};

struct Prompt {
  std::string text;
  int64_t line = 0;  // 1-based line where the prompt's record starts; 0 for a Parquet row
  int64_t row = -1;  // 0-based row of a Parquet file; -1 elsewhere
  std::string file = {};  // the file of a dataset folder it came from (relative); "" for a single file
  // "line 12", "row 11" or "data/train-00000-of-00001.parquet row 11", for messages.
  std::string where() const;
};

// A prompt file without the field or column asked for; the message lists those there are.
class MissingColumnError : public Error {
 public:
  using Error::Error;
};

// A dataset folder of several splits without a split name, or a split name it lacks; the message
// lists its splits.
class SplitChoiceError : public Error {
 public:
  using Error::Error;
};

// The files `path` (a PromptSource path, bundled: resolved) reads from: itself, or every prompt file
// of a dataset folder, all splits (relative to the folder read: a Hub cache folder's snapshot),
// sorted. For provenance: what a run records the SHA-256 of.
struct DataFiles {
  std::string root;                // "" for a single file
  std::vector<std::string> files;  // the file, or the folder's files relative to root
};
DataFiles prompt_data_files(const std::string& path);

// Loads a dataset and cuts its split. Errors (missing file, invalid UTF-8, bad JSON or CSV, missing
// or non-string column, an empty or null prompt, malformed split, empty result) name the file and
// the line (the row of a Parquet file); a missing column lists the columns there are.
std::vector<Prompt> load_prompts(const PromptSource& src);

}  // namespace abl::io
