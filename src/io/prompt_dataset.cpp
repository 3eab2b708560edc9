// Prompt files. The format follows the extension (.jsonl/.json = JSON Lines, anything else =
// text); blank lines are skipped in both, and every record remembers its line for messages.
// Every error about the file's content names FILE:LINE; a JSONL record whose prompt is empty is
// one of them, since an empty prompt would otherwise fail much later, known only by its index.
#include "abl/io/prompt_dataset.h"

#include <cctype>
#include <fstream>

#include <nlohmann/json.hpp>

#include "abl/core/data_dir.h"
#include "abl/core/error.h"
#include "abl/core/utf8.h"

namespace abl::io {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_blank(const std::string& s) {
  for (char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

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

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, column 9: <detail>";
// the line is always 1 (one record per line), so keep the column and the detail.
std::string json_error_detail(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const size_t column = what.find("column ");
  if (column != std::string::npos) return what.substr(column);
  const size_t bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
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

std::vector<Prompt> load_prompts(const PromptSource& given) {
  PromptSource src = given;
  src.path = resolve_prompt_path(given.path);
  std::ifstream in(src.path, std::ios::binary);
  ABL_CHECK(in.good(), "cannot open prompt file {}", src.path);
  const bool jsonl = ends_with(src.path, ".jsonl") || ends_with(src.path, ".json");
  std::vector<Prompt> all;
  std::string line;
  int64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (lineno == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);  // BOM
    size_t bad = 0;
    ABL_CHECK(valid_utf8(line, &bad), "{}:{}: invalid UTF-8 at byte {} of the line", src.path,
              lineno, bad + 1);
    if (is_blank(line)) continue;
    if (!jsonl) {
      all.push_back({line, lineno});
      continue;
    }
    nlohmann::json obj;
    try {
      obj = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
      fail("{}:{}: invalid JSON: {}", src.path, lineno, json_error_detail(e));
    }
    ABL_CHECK(obj.is_object(), "{}:{}: expected a JSON object, found {}", src.path, lineno, obj.type_name());
    const auto field = obj.find(src.column);
    if (field == obj.end()) {
      std::string keys;
      for (const auto& kv : obj.items()) keys += (keys.empty() ? "" : ", ") + kv.key();
      fail("{}:{}: no column '{}' (fields: {})", src.path, lineno, src.column, keys);
    }
    ABL_CHECK(field->is_string(), "{}:{}: column '{}' is not a string (found {})", src.path, lineno,
              src.column, field->type_name());
    std::string text = field->get<std::string>();
    // An empty prompt would only fail later, in the engine, by its index in the batch.
    ABL_CHECK(!is_blank(text), "{}:{}: column '{}' is {}", src.path, lineno, src.column,
              text.empty() ? "empty" : "blank");
    all.push_back({std::move(text), lineno});
  }
  ABL_CHECK(!in.bad(), "error reading prompt file {}", src.path);
  if (!src.split.empty()) {
    const Slice s = Slice::parse(src.split, src.path);
    int64_t b = 0, e = 0;
    s.resolve(static_cast<int64_t>(all.size()), &b, &e);
    all = std::vector<Prompt>(all.begin() + b, all.begin() + e);
  }
  ABL_CHECK(!all.empty(), "{}: no prompts{} ({} lines read)", src.path,
            src.split.empty() ? "" : " in split " + src.split, lineno);
  return all;
}

}  // namespace abl::io
