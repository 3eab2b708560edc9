// Prompt files: the format from the content (Parquet's magic bytes) and the extension, the
// reading in prompt_formats.cpp, then the split. Every record remembers where it was (line, or
// Parquet row) for messages.
#include "abl/io/prompt_dataset.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "abl/core/data_dir.h"
#include "abl/core/error.h"
#include "abl/io/parquet.h"
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
  return row >= 0 ? fmt::format("row {}", row) : fmt::format("line {}", line);
}

std::vector<Prompt> load_prompts(const PromptSource& given) {
  PromptSource src = given;
  src.path = resolve_prompt_path(given.path);
  if (std::filesystem::is_directory(src.path)) {
    // A Hugging Face dataset folder: name the files, so the error says which to pass.
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(src.path)) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && name[0] != '.') files.push_back(e.path().lexically_relative(src.path).string());
    }
    std::sort(files.begin(), files.end());
    std::string some;
    for (size_t i = 0; i < files.size() && i < 6; ++i) some += (i ? ", " : "") + files[i];
    fail("{} is a folder; a prompt set is one file of it{}", src.path,
         files.empty() ? " (it holds none)" : fmt::format(" ({}{})", some, files.size() > 6 ? ", ..." : ""));
  }
  ABL_CHECK(std::ifstream(src.path).good(), "cannot open prompt file {}", src.path);
  std::vector<Prompt> all;
  std::string ext = std::filesystem::path(src.path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (is_parquet_file(src.path)) {  // by content: files in the Hub's cache have no extension
    all = prompt_formats::read_parquet(src.path, src.column);
  } else if (ext == ".csv" || ext == ".tsv") {
    all = prompt_formats::read_delimited(src.path, prompt_formats::read_utf8_file(src.path), ext == ".csv" ? ',' : '\t',
                                         src.column);
  } else if (ext == ".json" && starts_array(src.path)) {
    all = prompt_formats::read_json_array(src.path, prompt_formats::read_utf8_file(src.path), src.column);
  } else {  // .json holding one object per line is JSON Lines too (Hugging Face datasets' to_json writes it)
    all = prompt_formats::read_lines(src.path, ext == ".jsonl" || ext == ".ndjson" || ext == ".json", src.column);
  }
  const size_t total = all.size();
  if (!src.split.empty()) {
    const Slice s = Slice::parse(src.split, src.path);
    int64_t b = 0, e = 0;
    s.resolve(static_cast<int64_t>(all.size()), &b, &e);
    all = std::vector<Prompt>(all.begin() + b, all.begin() + e);
  }
  ABL_CHECK(!all.empty(), "{}: no prompts{} (the file holds {})", src.path,
            src.split.empty() ? "" : " in split " + src.split, total);
  return all;
}

}  // namespace abl::io
