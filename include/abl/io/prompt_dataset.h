// Prompt datasets: a text file (one prompt per line) or JSONL (one object per line, `column`
// names the field), cut with a Python-style slice such as "[:400]", "[400:500]" or "[-100:]".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace abl::io {

struct PromptSource {
  // A file, or "bundled:<file>" for a file of the data bundled with abliterate (core/data_dir.h),
  // e.g. "bundled:prompts/harmful.txt", resolved when the prompts are read.
  std::string path;
  std::string column = "text";  // JSONL only
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
  int64_t line = 0;  // 1-based line in the source file
};

// Loads and slices a dataset. Errors (missing file, invalid UTF-8, bad JSON, missing or
// non-string column, malformed slice, empty result) name the file and the line.
std::vector<Prompt> load_prompts(const PromptSource& src);

}  // namespace abl::io
