// Prompt datasets, cut with a Python-style slice such as "[:400]", "[400:500]" or "[-100:]":
//   text (one prompt per line), JSON Lines (.jsonl, .ndjson, or .json with one object per line),
//   a JSON array (.json: of objects, or of strings), CSV (.csv) or TSV (.tsv) with a header row,
//   or Parquet (any file that starts with PAR1: what the Hugging Face Hub serves datasets as).
// `column` names the field of the objects or the column of the table.
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
  std::string split;            // "" = everything
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

struct Prompt {
  std::string text;
  int64_t line = 0;  // 1-based line where the prompt's record starts; 0 for a Parquet row
  int64_t row = -1;  // 0-based row of a Parquet file (as a split counts); -1 elsewhere
  // "line 12" or "row 11", for messages.
  std::string where() const;
};

// A prompt file without the field or column asked for; the message lists those there are.
class MissingColumnError : public Error {
 public:
  using Error::Error;
};

// Loads and slices a dataset. Errors (missing file, invalid UTF-8, bad JSON or CSV, missing or
// non-string column, an empty or null prompt, malformed slice, empty result) name the file and
// the line (the row of a Parquet file); a missing column lists the columns there are.
std::vector<Prompt> load_prompts(const PromptSource& src);

}  // namespace abl::io
