#include "prompt_formats.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/utf8.h"
#include "abl/io/parquet.h"
#include "python_json.h"

namespace abl::io::prompt_formats {
namespace {

constexpr char kBom[] = "\xEF\xBB\xBF";

bool is_blank(const std::string& s) { return s.find_first_not_of(" \t\r\n\v\f") == std::string::npos; }

// An empty or blank prompt would only fail later, in the engine, known by its index in a batch; a
// NUL character (a JSON \u0000, a Parquet value) is no text a chat template or tokenizer expects.
void check_prompt(const std::string& text, const std::string& where, const std::string& column) {
  ABL_CHECK(!is_blank(text), "{}: column '{}' is {}", where, column, text.empty() ? "empty" : "blank");
  const size_t nul = text.find('\0');
  ABL_CHECK(nul == std::string::npos, "{}: column '{}' holds a NUL character (at byte {})", where, column, nul + 1);
}

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, column 9: <detail>";
// the line is that of the parsed text, not of the file, so keep the column and the detail.
std::string json_error_detail(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const size_t column = what.find("column ");
  if (column != std::string::npos) return what.substr(column);
  const size_t bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
    fail("{}: invalid JSON: {}", where, json_error_detail(e));
  }
}

// Lone surrogate escapes replaced in a file (accept_python_json), said once per file.
void warn_lone_surrogates(const std::string& path, size_t count, int64_t first_line) {
  if (count == 0) return;
  log::warn("{}:{}: {} escaped lone UTF-16 surrogate{} (\\ud800 without its pair) read as U+FFFD, the "
            "replacement character: no UTF-8 text can hold one", path, first_line, count, count == 1 ? "" : "s");
}

// The prompt of a JSON object: its `column`, a non-blank string.
std::string object_prompt(const nlohmann::json& obj, const std::string& where, const std::string& column) {
  const auto field = obj.find(column);
  if (field == obj.end()) {
    std::string keys;
    for (const auto& kv : obj.items()) keys += (keys.empty() ? "" : ", ") + kv.key();
    throw MissingColumnError(fmt::format("{}: no column '{}' (fields: {})", where, column, keys));
  }
  ABL_CHECK(field->is_string(), "{}: column '{}' is not a string (found {})", where, column, field->type_name());
  std::string text = field->get<std::string>();
  check_prompt(text, where, column);
  return text;
}

// Valid UTF-8 without NUL bytes: a NUL in a prompt file means UTF-16 text or a binary file, and
// would cut the prompt short in JSON parsing and tokenization.
void check_line_text(std::string_view line, const std::string& path, int64_t lineno) {
  if (lineno == 1 && line.size() >= 2 &&
      ((line[0] == '\xFF' && line[1] == '\xFE') || (line[0] == '\xFE' && line[1] == '\xFF'))) {
    fail("{}: UTF-16 text (it starts with a UTF-16 byte order mark); save the file as UTF-8", path);
  }
  size_t bad = 0;
  ABL_CHECK(valid_utf8(line, &bad), "{}:{}: invalid UTF-8 at byte {} of the line", path, lineno, bad + 1);
  const size_t nul = line.find('\0');
  ABL_CHECK(nul == std::string_view::npos, "{}:{}: a NUL byte at byte {} of the line (is the file UTF-16 or "
            "binary? prompt files are UTF-8 text)", path, lineno, nul + 1);
}

}  // namespace

std::string read_utf8_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ABL_CHECK(in.good(), "cannot open prompt file {}", path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  ABL_CHECK(!in.bad(), "error reading prompt file {}", path);
  std::string content = buffer.str();
  if (content.compare(0, 3, kBom) == 0) content.erase(0, 3);
  size_t start = 0;
  for (int64_t line = 1; start <= content.size(); ++line) {
    const size_t end = std::min(content.find('\n', start), content.size());
    check_line_text(std::string_view(content).substr(start, end - start), path, line);
    start = end + 1;
  }
  return content;
}

std::vector<Prompt> read_lines(const std::string& path, bool json_lines, const std::string& column) {
  std::ifstream in(path, std::ios::binary);
  ABL_CHECK(in.good(), "cannot open prompt file {}", path);
  std::vector<Prompt> all;
  std::string line;
  int64_t lineno = 0, first_lone = 0;
  size_t lone = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (lineno == 1 && line.compare(0, 3, kBom) == 0) line.erase(0, 3);
    check_line_text(line, path, lineno);
    if (is_blank(line)) continue;
    if (!json_lines) {
      all.push_back({line, lineno});
      continue;
    }
    const std::string where = fmt::format("{}:{}", path, lineno);
    const size_t replaced = accept_python_json(line);
    if (replaced > 0 && lone == 0) first_lone = lineno;
    lone += replaced;
    const nlohmann::json obj = parse_json(line, where);
    ABL_CHECK(obj.is_object(), "{}: expected a JSON object, found {}{}", where, obj.type_name(),
              lineno == 1 && obj.is_array() ? " (a .json file holding one array must start with '[')" : "");
    all.push_back({object_prompt(obj, where, column), lineno});
  }
  ABL_CHECK(!in.bad(), "error reading prompt file {}", path);
  warn_lone_surrogates(path, lone, first_lone);
  return all;
}

std::vector<Prompt> read_json_array(const std::string& path, const std::string& file_text,
                                    const std::string& column) {
  std::string content = file_text;
  size_t first = 0;
  const size_t lone = accept_python_json(content, &first);
  const auto first_at = content.begin() + static_cast<std::ptrdiff_t>(first);
  warn_lone_surrogates(path, lone, 1 + std::count(content.begin(), first_at, '\n'));
  std::vector<Prompt> all;
  size_t i = content.find('[') + 1;  // the caller saw it first after white space
  int64_t line = 1 + static_cast<int64_t>(std::count(content.begin(), content.begin() + i, '\n'));
  auto skip_space = [&] {
    for (; i < content.size() && std::isspace(static_cast<unsigned char>(content[i])); ++i) line += content[i] == '\n';
  };
  skip_space();
  bool closed = i < content.size() && content[i] == ']';
  if (closed) ++i;
  while (!closed) {
    skip_space();
    ABL_CHECK(i < content.size(), "{}: the JSON array is not closed", path);
    // Scan one element: up to the ',' or ']' outside strings and brackets.
    const size_t start = i;
    const int64_t start_line = line;
    int depth = 0;
    bool in_string = false, escaped = false;
    for (; i < content.size(); ++i) {
      const char c = content[i];
      line += c == '\n';
      if (in_string) {
        if (escaped) escaped = false;
        else if (c == '\\') escaped = true;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && depth > 0) {
        --depth;
      } else if (depth == 0 && (c == ',' || c == ']')) {
        break;
      }
    }
    const std::string where = fmt::format("{}:{}", path, start_line);
    ABL_CHECK(i < content.size(), "{}: the JSON array is not closed after this element", where);
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(content.substr(start, i - start));
    } catch (const nlohmann::json::parse_error& e) {  // its byte counts from the element's start
      const size_t at = start + std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, i - start);
      const size_t line_start = content.rfind('\n', at == 0 ? 0 : at - 1);
      const int64_t at_line = start_line + std::count(content.begin() + static_cast<std::ptrdiff_t>(start),
                                                       content.begin() + static_cast<std::ptrdiff_t>(at), '\n');
      const std::string detail = json_error_detail(e);
      const size_t colon = detail.find(": ");
      fail("{}:{}: invalid JSON at column {}: {}", path, at_line,
           at - (line_start == std::string::npos || line_start >= at ? 0 : line_start + 1) + 1,
           colon == std::string::npos ? detail : detail.substr(colon + 2));
    } catch (const nlohmann::json::exception& e) {  // out_of_range, e.g. 1e400
      fail("{}: invalid JSON: {}", where, json_error_detail(e));
    }
    if (value.is_string()) {
      std::string text = value.get<std::string>();
      check_prompt(text, where, "the string");
      all.push_back({std::move(text), start_line});
    } else {
      ABL_CHECK(value.is_object(), "{}: expected a JSON object or string in the array, found {}", where,
                value.type_name());
      all.push_back({object_prompt(value, where, column), start_line});
    }
    closed = content[i++] == ']';
  }
  const size_t rest = content.find_first_not_of(" \t\r\n", i);
  ABL_CHECK(rest == std::string::npos, "{}:{}: text after the JSON array", path,
            line + std::count(content.begin() + static_cast<std::ptrdiff_t>(i),
                              content.begin() + static_cast<std::ptrdiff_t>(std::min(rest, content.size())), '\n'));
  return all;
}

std::vector<Prompt> read_delimited(const std::string& path, const std::string& content, char delimiter,
                                   const std::string& column) {
  struct Record {
    std::vector<std::string> fields;
    int64_t line;
  };
  std::vector<Record> records;
  size_t i = 0;
  int64_t line = 1;
  const size_t n = content.size();
  auto at_line_end = [&](size_t k) { return k >= n || content[k] == '\n' || (content[k] == '\r' && (k + 1 >= n || content[k + 1] == '\n')); };
  while (i < n) {
    if (at_line_end(i)) {  // a blank line
      i += content[i] == '\r' ? 2 : 1;
      ++line;
      continue;
    }
    Record rec{{}, line};
    for (;;) {
      std::string field;
      if (i < n && content[i] == '"') {  // quoted: "" is a quote; delimiters and newlines are text
        const int64_t opened = line;
        for (++i;; ++i) {
          ABL_CHECK(i < n, "{}:{}: a quoted field is not closed", path, opened);
          if (content[i] == '"') {
            if (i + 1 < n && content[i + 1] == '"') {
              field += '"';
              ++i;
              continue;
            }
            ++i;
            break;
          }
          line += content[i] == '\n';
          field += content[i];
        }
        ABL_CHECK(i >= n || content[i] == delimiter || at_line_end(i),
                  "{}:{}: text after the closing quote of a field (a quote inside a quoted field is written \"\")",
                  path, line);
      } else {
        for (; i < n && content[i] != delimiter && !at_line_end(i); ++i) field += content[i];
      }
      rec.fields.push_back(std::move(field));
      if (i < n && content[i] == delimiter) {
        ++i;
        continue;
      }
      if (i < n) {  // the record's line end
        i += content[i] == '\r' ? 2 : 1;
        ++line;
      }
      break;
    }
    records.push_back(std::move(rec));
  }
  ABL_CHECK(!records.empty(), "{}: no header row", path);
  const std::vector<std::string>& header = records[0].fields;
  size_t col = 0;
  while (col < header.size() && header[col] != column) ++col;
  if (col == header.size()) {
    std::string names;
    for (const std::string& h : header) names += (names.empty() ? "" : ", ") + h;
    throw MissingColumnError(
        fmt::format("{}:{}: no column '{}' in the header (columns: {})", path, records[0].line, column, names));
  }
  std::vector<Prompt> all;
  for (size_t r = 1; r < records.size(); ++r) {
    const std::string where = fmt::format("{}:{}", path, records[r].line);
    ABL_CHECK(records[r].fields.size() == header.size(), "{}: {} fields where the header (line {}) has {}", where,
              records[r].fields.size(), records[0].line, header.size());
    check_prompt(records[r].fields[col], where, column);
    all.push_back({std::move(records[r].fields[col]), records[r].line});
  }
  return all;
}

std::vector<Prompt> read_parquet(const std::string& path, const std::string& column) {
  std::vector<Prompt> all;
  read_parquet_column(path, column, [&](int64_t row, const std::string* value) {
    const std::string where = fmt::format("{} row {}", path, row);
    ABL_CHECK(value, "{}: column '{}' is null", where, column);
    size_t bad = 0;
    ABL_CHECK(valid_utf8(*value, &bad), "{}: column '{}' is not valid UTF-8 (byte {})", where, column, bad + 1);
    check_prompt(*value, where, column);
    Prompt p{*value, 0};
    p.row = row;
    all.push_back(std::move(p));
  });
  return all;
}

}  // namespace abl::io::prompt_formats
