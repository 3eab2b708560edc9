// JSON documents read from files, with errors that say where: "config.json: key 'rope_scaling.factor'
// must be a number, found string". A JsonValue keeps its document alive and remembers its key path,
// so a getter deep inside a document can still name the file and the full key in its message.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace abl::io {

struct JsonParseOptions {
  // nlohmann keeps the last of duplicate keys silently; strict formats (safetensors headers)
  // must refuse them instead.
  bool reject_duplicate_keys = false;
};

class JsonValue {
 public:
  // A value owned by a document whose errors are attributed to `origin` (usually a file path).
  JsonValue(std::shared_ptr<const nlohmann::json> doc, std::string origin);

  const nlohmann::json& json() const { return *node_; }
  const std::string& origin() const { return *origin_; }
  const std::string& key_path() const { return path_; }  // "" for the root, "a.b[2]" below
  std::string describe() const;                           // "'a.b[2]'" or "the top level"

  bool is_null() const { return node_->is_null(); }
  bool is_object() const { return node_->is_object(); }
  bool is_array() const { return node_->is_array(); }
  bool is_string() const { return node_->is_string(); }
  bool is_number() const { return node_->is_number(); }
  bool is_integer() const;  // integer literal, or a float with an integral value
  bool is_bool() const { return node_->is_boolean(); }
  std::string_view type_name() const;  // "object", "array", "string", "number", "boolean", "null"

  // Conversions of this value; wrong type or out of range -> abl::Error naming origin and key.
  int64_t as_int() const;
  double as_double() const;  // accepts integers too
  bool as_bool() const;
  const std::string& as_string() const;
  std::vector<int64_t> as_int_list() const;  // an integer, or an array of integers

  // Object access. `contains` is true for a present key even when its value is null;
  // `find` treats null like absent, which is how HF configs spell "not set".
  bool contains(std::string_view key) const;
  std::optional<JsonValue> find(std::string_view key) const;
  std::optional<JsonValue> member(std::string_view key) const;  // like find, null included
  JsonValue at(std::string_view key) const;  // required, non-null
  std::vector<std::string> keys() const;     // object keys, sorted (nlohmann::json keeps a std::map)

  // Array access.
  size_t size() const;  // elements of an array or members of an object
  JsonValue at(size_t index) const;

  // Typed getters on an object: required (missing or null -> error) and with a default.
  int64_t get_int(std::string_view key) const;
  int64_t get_int(std::string_view key, int64_t fallback) const;
  double get_double(std::string_view key) const;
  double get_double(std::string_view key, double fallback) const;
  bool get_bool(std::string_view key) const;
  bool get_bool(std::string_view key, bool fallback) const;
  std::string get_string(std::string_view key) const;
  std::string get_string(std::string_view key, std::string_view fallback) const;

  // Throws abl::Error "<origin>: key '<path>': <message>" (or "<origin>: <message>" at the root).
  [[noreturn]] void fail(std::string_view message) const;

 private:
  JsonValue(std::shared_ptr<const nlohmann::json> doc, const nlohmann::json* node,
            std::shared_ptr<const std::string> origin, std::string path);
  void expect_object() const;
  [[noreturn]] void fail_type(std::string_view expected) const;

  std::shared_ptr<const nlohmann::json> doc_;
  const nlohmann::json* node_;
  std::shared_ptr<const std::string> origin_;
  std::string path_;
};

// Parses `text`; a syntax error becomes "<origin>:<line>:<column>: invalid JSON: <detail>".
JsonValue parse_json(std::string_view text, const std::string& origin,
                     const JsonParseOptions& options = {});
// Reads and parses a whole file; errors name the path (unreadable file, syntax error position).
JsonValue read_json_file(const std::string& path, const JsonParseOptions& options = {});

// The file's JSON with its key order (for rewriting a config.json), Python's Infinity read as ±inf; errors as
// read_json_file's.
nlohmann::ordered_json read_ordered_json_file(const std::string& path);

// 1-based line and column of byte `offset` (0-based) in `text`, for error messages.
void text_position(std::string_view text, size_t offset, size_t* line, size_t* column);

// Writes `value` to `path` atomically (temp file + rename), pretty-printed with `indent` spaces
// and a final newline, the way HF tools write config.json and index files; ±inf as Python's json writes it
// (Infinity, -Infinity).
void write_json_file(const std::string& path, const nlohmann::json& value, int indent = 2);
void write_json_file(const std::string& path, const nlohmann::ordered_json& value, int indent = 2);

}  // namespace abl::io
