// A Jinja interpreter for chat templates: the subset of Jinja2 that Hugging Face chat templates
// use, evaluated as transformers evaluates them (trim_blocks and lstrip_blocks on, the
// loopcontrols and {% generation %} extensions, its tojson, raise_exception and strftime_now),
// so that a model's own template renders our prompts exactly as it renders them in Python.
// Values follow Python's semantics where templates can see them (str(), truthiness, slices,
// comparisons); templates are untrusted input, so rendering is bounded in steps, depth and size.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "abl/core/error.h"

namespace abl::text::jinja {

class Value;
using List = std::vector<Value>;
using Dict = std::vector<std::pair<std::string, Value>>;  // insertion order, as Python's dict
using Kwargs = std::vector<std::pair<std::string, Value>>;
using Function = std::function<Value(const List& args, const Kwargs& kwargs)>;

// A Jinja value: undefined, None, bool, int, float, str, list, dict (str or int keys, stored as
// jinja_parts.h's dict_key says) or a callable.
// Lists and dicts are shared on copy (templates cannot change them, except a namespace's
// attributes, which `set ns.x = ...` changes for every holder, as in Jinja).
class Value {
 public:
  enum class Kind { undefined, none, boolean, integer, real, string, list, dict, function };

  Value() = default;  // undefined
  Value(bool b) : kind_(Kind::boolean), int_(b) {}
  Value(int i) : kind_(Kind::integer), int_(i) {}
  Value(int64_t i) : kind_(Kind::integer), int_(i) {}
  Value(double d) : kind_(Kind::real), real_(d) {}
  Value(std::string s) : kind_(Kind::string), str_(std::make_shared<std::string>(std::move(s))) {}
  Value(const char* s) : Value(std::string(s)) {}
  // Lists and dicts nested deeper than the interpreter's bound are refused (TemplateError).
  Value(List l);
  Value(Dict d);
  static Value none();
  // An undefined value that remembers what it stands for ("'x' is undefined" when used).
  static Value undefined(std::string hint);
  static Value function(std::string name, Function f);
  // Jinja's namespace(): a dict whose attributes `set ns.attr = ...` may change.
  static Value make_namespace(Dict attributes);
  // A tuple: a list that Python prints as (a, b) (and (a,)).
  static Value make_tuple(List items);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::undefined; }
  bool is_none() const { return kind_ == Kind::none; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_number() const { return kind_ == Kind::integer || kind_ == Kind::real; }
  bool is_list() const { return kind_ == Kind::list; }
  bool is_dict() const { return kind_ == Kind::dict; }
  bool is_namespace() const { return kind_ == Kind::dict && is_namespace_; }
  bool is_function() const { return kind_ == Kind::function; }

  bool as_bool() const { return int_ != 0; }
  int64_t as_int() const { return int_; }
  double as_double() const { return kind_ == Kind::real ? real_ : static_cast<double>(int_); }
  const std::string& str() const { return *str_; }
  const List& list() const { return *list_; }
  const Dict& dict() const { return *dict_; }
  Dict& namespace_attributes() const { return *dict_; }
  const std::string& undefined_hint() const;
  const std::string& function_name() const;
  Value call(const List& args, const Kwargs& kwargs) const;

  // The value under `key` of a dict; nullptr when absent.
  const Value* find(std::string_view key) const;
  // Python's truth value (undefined is false).
  bool truthy() const;
  // Python's str() and repr(); undefined prints as nothing.
  std::string to_string() const;
  std::string repr() const;
  // Python's json.dumps(ensure_ascii=False), with indent (< 0: none) and the two separators.
  std::string to_json(int indent = -1, std::string_view item_sep = ", ", std::string_view key_sep = ": ",
                      bool sort_keys = false) const;
  // Python's ==.
  bool equals(const Value& other) const;
  // True when this value is or holds a namespace (a namespace may not hold one: no cycles).
  bool holds_namespace() const;
  // "str", "int", "dict", ... as Python names the type, for messages.
  std::string type_name() const;

 private:
  Kind kind_ = Kind::undefined;
  bool is_namespace_ = false;
  bool is_tuple_ = false;
  int depth_ = 0;  // of nested lists and dicts
  int64_t int_ = 0;
  double real_ = 0;
  std::shared_ptr<std::string> str_;  // string; the hint of an undefined; a function's name
  std::shared_ptr<List> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<Function> fn_;
};

// A template that cannot be parsed or rendered: the message names the template and the line.
class TemplateError : public Error {
 public:
  using Error::Error;
};

// raise_exception(message) called by the template itself (it refuses the conversation).
class RaisedError : public TemplateError {
 public:
  RaisedError(const std::string& what, std::string message)
      : TemplateError(what), message_(std::move(message)) {}
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

struct Node;

class Template {
 public:
  // Parses `source`; `where` names the template in every message (a file and key).
  explicit Template(std::string_view source, std::string where = "template");
  ~Template();
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;

  // Renders with `context` (a dict) as the template's variables, on top of the globals that
  // transformers gives chat templates: raise_exception, strftime_now (which formats `date`, a
  // fixed day so that renders are reproducible: YYYY-MM-DD), namespace and range.
  std::string render(const Value& context, std::string_view date = "2024-07-26") const;

  const std::string& where() const { return where_; }

 private:
  std::string where_;
  std::unique_ptr<Node> root_;
};

}  // namespace abl::text::jinja
