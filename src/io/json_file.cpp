// JSON file reading with positioned parse errors and key-path-aware typed getters.
// Duplicate keys are found with nlohmann's parser callback (a stack of key sets, one per open
// object), because the DOM it builds has already dropped them.
#include "abl/io/json_file.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "abl/core/error.h"
#include "python_json.h"

namespace abl::io {

namespace fs = std::filesystem;

JsonValue::JsonValue(std::shared_ptr<const nlohmann::json> doc, std::string origin)
    : doc_(std::move(doc)),
      node_(doc_.get()),
      origin_(std::make_shared<const std::string>(std::move(origin))) {}

JsonValue::JsonValue(std::shared_ptr<const nlohmann::json> doc, const nlohmann::json* node,
                     std::shared_ptr<const std::string> origin, std::string path)
    : doc_(std::move(doc)), node_(node), origin_(std::move(origin)), path_(std::move(path)) {}

std::string JsonValue::describe() const {
  return path_.empty() ? std::string("the top level") : fmt::format("key '{}'", path_);
}

void JsonValue::fail(std::string_view message) const {
  if (path_.empty()) abl::fail("{}: {}", *origin_, message);
  abl::fail("{}: key '{}': {}", *origin_, path_, message);
}

std::string_view JsonValue::type_name() const {
  switch (node_->type()) {
    case nlohmann::json::value_t::object: return "object";
    case nlohmann::json::value_t::array: return "array";
    case nlohmann::json::value_t::string: return "string";
    case nlohmann::json::value_t::boolean: return "boolean";
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float: return "number";
    default: return "unsupported value";
  }
}

void JsonValue::fail_type(std::string_view expected) const {
  if (node_->is_number()) fail(fmt::format("must be {}, found {}", expected, node_->dump()));
  fail(fmt::format("must be {}, found {}", expected, type_name()));
}

bool JsonValue::is_integer() const {
  if (node_->is_number_integer()) {
    // number_unsigned above INT64_MAX cannot be represented as int64_t.
    return !node_->is_number_unsigned() ||
           node_->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  }
  if (node_->is_number_float()) {
    double d = node_->get<double>();
    // 2^63 is exactly representable; anything at or above it does not fit.
    return std::isfinite(d) && std::trunc(d) == d && d >= -9223372036854775808.0 &&
           d < 9223372036854775808.0;
  }
  return false;
}

int64_t JsonValue::as_int() const {
  if (!node_->is_number()) fail_type("an integer");
  if (!is_integer()) {
    if (node_->is_number_float()) fail_type("an integer");
    fail(fmt::format("integer {} is out of range", node_->dump()));
  }
  if (node_->is_number_float()) return static_cast<int64_t>(node_->get<double>());
  return node_->get<int64_t>();
}

double JsonValue::as_double() const {
  if (!node_->is_number()) fail_type("a number");
  return node_->get<double>();
}

bool JsonValue::as_bool() const {
  if (!node_->is_boolean()) fail_type("true or false");
  return node_->get<bool>();
}

const std::string& JsonValue::as_string() const {
  if (!node_->is_string()) fail_type("a string");
  return node_->get_ref<const std::string&>();
}

std::vector<int64_t> JsonValue::as_int_list() const {
  if (node_->is_number()) return {as_int()};
  if (!node_->is_array()) fail_type("an integer or a list of integers");
  std::vector<int64_t> out;
  out.reserve(node_->size());
  for (size_t i = 0; i < node_->size(); ++i) out.push_back(at(i).as_int());
  return out;
}

void JsonValue::expect_object() const {
  if (!node_->is_object()) fail_type("an object");
}

bool JsonValue::contains(std::string_view key) const {
  expect_object();
  return node_->find(key) != node_->end();
}

std::optional<JsonValue> JsonValue::find(std::string_view key) const {
  expect_object();
  auto it = node_->find(key);
  if (it == node_->end() || it->is_null()) return std::nullopt;
  std::string child = path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  return JsonValue(doc_, &*it, origin_, std::move(child));
}

std::optional<JsonValue> JsonValue::member(std::string_view key) const {
  expect_object();
  auto it = node_->find(key);
  if (it == node_->end()) return std::nullopt;
  std::string child = path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  return JsonValue(doc_, &*it, origin_, std::move(child));
}

JsonValue JsonValue::at(std::string_view key) const {
  std::optional<JsonValue> v = find(key);
  if (!v) {
    std::string child = path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
    bool present = node_->find(key) != node_->end();
    abl::fail("{}: key '{}' is {}", *origin_, child, present ? "null but required" : "missing");
  }
  return *v;
}

std::vector<std::string> JsonValue::keys() const {
  expect_object();
  std::vector<std::string> out;
  for (auto it = node_->begin(); it != node_->end(); ++it) out.push_back(it.key());
  return out;
}

size_t JsonValue::size() const {
  if (!node_->is_array() && !node_->is_object()) fail_type("an array or an object");
  return node_->size();
}

JsonValue JsonValue::at(size_t index) const {
  if (!node_->is_array()) fail_type("an array");
  if (index >= node_->size()) {
    fail(fmt::format("needs at least {} elements, has {}", index + 1, node_->size()));
  }
  return JsonValue(doc_, &(*node_)[index], origin_, fmt::format("{}[{}]", path_, index));
}

int64_t JsonValue::get_int(std::string_view key) const { return at(key).as_int(); }
int64_t JsonValue::get_int(std::string_view key, int64_t fallback) const {
  auto v = find(key);
  return v ? v->as_int() : fallback;
}
double JsonValue::get_double(std::string_view key) const { return at(key).as_double(); }
double JsonValue::get_double(std::string_view key, double fallback) const {
  auto v = find(key);
  return v ? v->as_double() : fallback;
}
bool JsonValue::get_bool(std::string_view key) const { return at(key).as_bool(); }
bool JsonValue::get_bool(std::string_view key, bool fallback) const {
  auto v = find(key);
  return v ? v->as_bool() : fallback;
}
std::string JsonValue::get_string(std::string_view key) const { return at(key).as_string(); }
std::string JsonValue::get_string(std::string_view key, std::string_view fallback) const {
  auto v = find(key);
  return v ? v->as_string() : std::string(fallback);
}

void text_position(std::string_view text, size_t offset, size_t* line, size_t* column) {
  size_t l = 1, c = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++l;
      c = 1;
    } else {
      ++c;
    }
  }
  *line = l;
  *column = c;
}

namespace {

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 2, column 10: <detail>";
// keep only the detail, since we report the position ourselves relative to `origin`.
std::string parse_error_detail(const char* what) {
  std::string s(what);
  size_t col = s.find("column ");
  if (col != std::string::npos) {
    size_t colon = s.find(": ", col);
    if (colon != std::string::npos) return s.substr(colon + 2);
  }
  size_t bracket = s.find("] ");
  return bracket == std::string::npos ? s : s.substr(bracket + 2);
}

// A parser callback that reads mark_python_infinities' sentinels back as ±inf, then runs `inner` (when set).
template <typename Json>
typename Json::parser_callback_t restore_infinities(typename Json::parser_callback_t inner) {
  return [inner](int depth, typename Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::value && parsed.is_number_float() &&
        std::fabs(parsed.template get<double>()) == kInfinitySentinel) {
      parsed = parsed.template get<double>() > 0 ? std::numeric_limits<double>::infinity()
                                                 : -std::numeric_limits<double>::infinity();
    }
    return inner ? inner(depth, event, parsed) : true;
  };
}

}  // namespace

JsonValue parse_json(std::string_view text, const std::string& origin,
                     const JsonParseOptions& options) {
  using Event = nlohmann::json::parse_event_t;
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  nlohmann::json::parser_callback_t callback = nullptr;
  if (options.reject_duplicate_keys) {
    callback = [&](int /*depth*/, Event event, nlohmann::json& parsed) {
      if (event == Event::object_start) {
        open_objects.emplace_back();
      } else if (event == Event::object_end) {
        if (!open_objects.empty()) open_objects.pop_back();
      } else if (event == Event::key && duplicate.empty() && !open_objects.empty()) {
        const std::string& key = parsed.get_ref<const std::string&>();
        if (!open_objects.back().insert(key).second) duplicate = key;
      }
      return true;
    };
  }
  // nlohmann takes a NUL byte for the end of input and would silently ignore what follows.
  if (size_t nul = text.find('\0'); nul != std::string_view::npos) {
    size_t line = 0, column = 0;
    text_position(text, nul, &line, &column);
    abl::fail("{}:{}:{}: invalid JSON: NUL byte", origin, line, column);
  }
  // Python's Infinity (json.dump of a float('inf')), which nlohmann refuses: read as ±inf.
  std::string python;
  if (text.find("Infinity") != std::string_view::npos) {
    python.assign(text);
    if (mark_python_infinities(python) > 0) {
      text = python;
      callback = restore_infinities<nlohmann::json>(callback);
    }
  }
  auto doc = std::make_shared<nlohmann::json>();
  try {
    *doc = nlohmann::json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true,
                                 /*ignore_comments=*/false);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points at the last character read.
    size_t line = 0, column = 0;
    text_position(text, e.byte > 0 ? e.byte - 1 : 0, &line, &column);
    abl::fail("{}:{}:{}: invalid JSON: {}", origin, line, column, parse_error_detail(e.what()));
  } catch (const nlohmann::json::exception& e) {
    // A number beyond double's range ("1e400") is out_of_range.406, which carries no position;
    // the message quotes the literal.
    abl::fail("{}: invalid JSON: {}", origin, parse_error_detail(e.what()));
  }
  if (!duplicate.empty()) abl::fail("{}: duplicate key '{}'", origin, duplicate);
  return JsonValue(std::move(doc), origin);
}

nlohmann::ordered_json read_ordered_json_file(const std::string& path) {
  const JsonValue checked = read_json_file(path);  // errors with the position, Infinity accepted
  (void)checked;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();
  nlohmann::ordered_json::parser_callback_t callback = nullptr;
  if (mark_python_infinities(text) > 0) callback = restore_infinities<nlohmann::ordered_json>(nullptr);
  return nlohmann::ordered_json::parse(text, callback);
}

JsonValue read_json_file(const std::string& path, const JsonParseOptions& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) abl::fail("{}: is a directory, expected a JSON file", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) abl::fail("{}: cannot open: {}", path, std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) abl::fail("{}: read error: {}", path, std::strerror(errno));
  return parse_json(buf.str(), path, options);
}

namespace {

void write_text_atomic(const std::string& path, const std::string& text) {
  std::string tmp = fmt::format("{}.tmp.{}", path, static_cast<long>(getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) abl::fail("{}: cannot create: {}", tmp, std::strerror(errno));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      abl::fail("{}: write failed: {}", tmp, std::strerror(errno));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    abl::fail("{}: cannot rename {} into place: {}", path, tmp, std::strerror(err));
  }
}

// ±inf as the sentinel (in place); whether there was one.
template <typename Json>
bool infinities_to_sentinel(Json& v) {
  bool any = false;
  if (v.is_structured()) {
    for (auto& item : v) any |= infinities_to_sentinel(item);
  } else if (v.is_number_float() && std::isinf(v.template get<double>())) {
    v = v.template get<double>() > 0 ? kInfinitySentinel : -kInfinitySentinel;
    any = true;
  }
  return any;
}

// Pretty-printed; ±inf written as Python's json writes it (Infinity; nlohmann alone would write null).
template <typename Json>
std::string dump_or_fail(const std::string& path, const Json& value, int indent) {
  try {
    Json copy = value;
    if (!infinities_to_sentinel(copy)) return value.dump(indent) + "\n";
    std::string text = copy.dump(indent) + "\n";
    const std::string sentinel = Json(kInfinitySentinel).dump();  // "1e+308"
    for (size_t at = text.find(sentinel); at != std::string::npos; at = text.find(sentinel, at)) {
      text.replace(at, sentinel.size(), "Infinity");
    }
    return text;
  } catch (const nlohmann::json::exception& e) {
    // Only invalid UTF-8 in a string gets here.
    abl::fail("{}: cannot write JSON: {}", path, parse_error_detail(e.what()));
  }
}

}  // namespace

void write_json_file(const std::string& path, const nlohmann::json& value, int indent) {
  write_text_atomic(path, dump_or_fail(path, value, indent));
}

void write_json_file(const std::string& path, const nlohmann::ordered_json& value, int indent) {
  write_text_atomic(path, dump_or_fail(path, value, indent));
}

}  // namespace abl::io
