// Prompt files: the format from the content (Parquet's magic bytes) and the extension, the
// reading in prompt_formats.cpp; a dataset folder's split files (dataset_splits.cpp) one after the
// other; then the slice. Every record remembers where it was (file, line or Parquet row) for
// messages.
#include "abl/io/prompt_dataset.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "abl/core/data_dir.h"
#include "abl/core/error.h"
#include "abl/io/parquet.h"
#include "dataset_splits.h"
#include "prompt_formats.h"

namespace abl::io {
namespace {

std::optional<int64_t> parse_bound(const std::string& s, const std::string& text, const std::string& where) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  if (b == std::string::npos) return std::nullopt;
  std::string t = s.substr(b, e - b + 1);
  size_t i = (t[0] == '-' || t[0] == '+') ? 1 : 0;
  bool ok = i < t.size() && t.size() - i <= 18;
  for (size_t k = i; ok && k < t.size(); ++k) ok = std::isdigit(static_cast<unsigned char>(t[k]));
  ABL_CHECK(ok, "{}: malformed split '{}' (expected a slice like [:400], [400:500] or [-100:])",
            where, text);
  return std::stoll(t);
}

// Whether the first character after white space (and a byte order mark) is '['.
bool starts_array(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.compare(0, 3, "\xEF\xBB\xBF") == 0) head.erase(0, 3);
  const size_t first = head.find_first_not_of(" \t\r\n");
  return first != std::string::npos && head[first] == '[';
}

}  // namespace

Slice Slice::parse(const std::string& text, const std::string& where) {
  const std::string msg = "(expected a slice like [:400], [400:500] or [-100:])";
  ABL_CHECK(text.size() >= 3 && text.front() == '[' && text.back() == ']',
            "{}: malformed split '{}' {}", where, text, msg);
  const std::string inner = text.substr(1, text.size() - 2);
  const size_t colon = inner.find(':');
  ABL_CHECK(colon != std::string::npos && inner.find(':', colon + 1) == std::string::npos,
            "{}: malformed split '{}' {}", where, text, msg);
  Slice s;
  s.start = parse_bound(inner.substr(0, colon), text, where);
  s.stop = parse_bound(inner.substr(colon + 1), text, where);
  return s;
}

void Slice::resolve(int64_t n, int64_t* begin, int64_t* end) const {
  auto fix = [n](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    return x < 0 ? int64_t{0} : (x > n ? n : x);
  };
  *begin = fix(start, 0);
  *end = fix(stop, n);
  if (*end < *begin) *end = *begin;
}

std::string resolve_prompt_path(const std::string& path) {
  const std::string prefix = kBundledPrefix;
  return path.compare(0, prefix.size(), prefix) == 0 ? bundled_file(path.substr(prefix.size())) : path;
}

std::string Prompt::where() const {
  const std::string at = row >= 0 ? fmt::format("row {}", row) : fmt::format("line {}", line);
  return file.empty() ? at : file + " " + at;
}

SplitSpec SplitSpec::parse(const std::string& text, const std::string& where) {
  SplitSpec spec;
  const size_t bracket = text.find('[');
  spec.name = text.substr(0, bracket);
  const bool percent = text.find('%') != std::string::npos;
  ABL_CHECK(!percent, "{}: the split '{}' slices by percent, which abliterate does not; give counts as in "
            "train[:400] or [-100:]", where, text);
  ABL_CHECK(spec.name.empty() || dataset_splits::is_split_name(spec.name),
            "{}: malformed split '{}' (expected a split name and/or a slice, like train[:400], test, [400:500] or "
            "[-100:])", where, text);
  if (bracket != std::string::npos) spec.slice = Slice::parse(text.substr(bracket), where);
  return spec;
}

namespace {

// One file of any format, whole.
std::vector<Prompt> read_file(const std::string& path, const std::string& column) {
  ABL_CHECK(std::ifstream(path).good(), "cannot open prompt file {}", path);
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (is_parquet_file(path)) return prompt_formats::read_parquet(path, column);  // by content: the Hub's cache
  if (ext == ".csv" || ext == ".tsv") {
    return prompt_formats::read_delimited(path, prompt_formats::read_utf8_file(path), ext == ".csv" ? ',' : '\t',
                                          column);
  }
  if (ext == ".json" && starts_array(path)) {
    return prompt_formats::read_json_array(path, prompt_formats::read_utf8_file(path), column);
  }
  // .json holding one object per line is JSON Lines too (Hugging Face datasets' to_json writes it)
  return prompt_formats::read_lines(path, ext == ".jsonl" || ext == ".ndjson" || ext == ".json", column);
}

// The files of the split `name` of a dataset folder, read one after the other.
std::vector<Prompt> read_folder_split(const std::string& folder, const std::string& name, const std::string& column) {
  const dataset_splits::Folder found = dataset_splits::find_splits(folder);
  const dataset_splits::Split* split = nullptr;
  for (const auto& s : found.splits) {
    if (s.name == name || (name.empty() && found.splits.size() == 1)) split = &s;
  }
  if (!split) {
    const std::string example = found.splits[0].name + "[:400]";
    throw SplitChoiceError(fmt::format(
        "{} is a dataset folder of the splits {} ({}); {}", folder, dataset_splits::describe_splits(found),
        found.layout, name.empty() ? "name one, as in " + example : "it has no split '" + name + "'"));
  }
  std::vector<Prompt> all;
  for (const auto& file : split->files) {
    auto part = read_file((std::filesystem::path(found.root) / file).string(), column);
    for (auto& p : part) {
      p.file = file;
      all.push_back(std::move(p));
    }
  }
  return all;
}

}  // namespace

DataFiles prompt_data_files(const std::string& given) {
  const std::string path = resolve_prompt_path(given);
  if (!std::filesystem::is_directory(path)) return {"", {path}};
  const dataset_splits::Folder found = dataset_splits::find_splits(path);
  DataFiles out{found.root, {}};
  for (const auto& s : found.splits) out.files.insert(out.files.end(), s.files.begin(), s.files.end());
  std::sort(out.files.begin(), out.files.end());
  out.files.erase(std::unique(out.files.begin(), out.files.end()), out.files.end());
  return out;
}

std::vector<Prompt> load_prompts(const PromptSource& given) {
  PromptSource src = given;
  src.path = resolve_prompt_path(given.path);
  const SplitSpec split = SplitSpec::parse(src.split, src.path);
  std::vector<Prompt> all;
  if (std::filesystem::is_directory(src.path)) {
    all = read_folder_split(src.path, split.name, src.column);
  } else {
    if (!split.name.empty() && split.name != "train") {
      throw SplitChoiceError(fmt::format("{} is one file, which is the split 'train' (as the datasets library reads a "
                                         "file); the split '{}' needs a dataset folder",
                                         src.path, split.name));
    }
    all = read_file(src.path, src.column);
  }
  const size_t total = all.size();
  if (split.slice) {
    int64_t b = 0, e = 0;
    split.slice->resolve(static_cast<int64_t>(all.size()), &b, &e);
    all = std::vector<Prompt>(all.begin() + b, all.begin() + e);
  }
  ABL_CHECK(!all.empty(), "{}: no prompts{} (the {} holds {})", src.path,
            src.split.empty() ? "" : " in split " + src.split,
            std::filesystem::is_directory(src.path) ? "split" : "file", total);
  return all;
}

}  // namespace abl::io
