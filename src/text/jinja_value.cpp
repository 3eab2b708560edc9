// Jinja values with Python's semantics where a template can see them: str() and repr() (floats
// in their shortest round-trip form, quotes chosen as Python chooses them), truth, ==, and the
// json.dumps(ensure_ascii=False) that transformers' tojson filter calls.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "abl/text/jinja.h"
#include "jinja_parts.h"

namespace abl::text::jinja {

Value::Value(List l) : kind_(Kind::list), list_(std::make_shared<List>(std::move(l))) {
  for (const Value& v : *list_) depth_ = std::max(depth_, v.depth_ + 1);
  if (depth_ > kMaxDepth) throw EvalError("values nested too deeply");
}

Value::Value(Dict d) : kind_(Kind::dict), dict_(std::make_shared<Dict>(std::move(d))) {
  for (const auto& kv : *dict_) depth_ = std::max(depth_, kv.second.depth_ + 1);
  if (depth_ > kMaxDepth) throw EvalError("values nested too deeply");
}

bool Value::holds_namespace() const {
  if (is_namespace_) return true;
  if (kind_ == Kind::list) return std::any_of(list_->begin(), list_->end(), [](const Value& v) { return v.holds_namespace(); });
  if (kind_ == Kind::dict) return std::any_of(dict_->begin(), dict_->end(), [](const auto& kv) { return kv.second.holds_namespace(); });
  return false;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::none;
  return v;
}

Value Value::undefined(std::string hint) {
  Value v;
  v.str_ = std::make_shared<std::string>(std::move(hint));
  return v;
}

Value Value::function(std::string name, Function f) {
  Value v;
  v.kind_ = Kind::function;
  v.str_ = std::make_shared<std::string>(std::move(name));
  v.fn_ = std::make_shared<Function>(std::move(f));
  return v;
}

Value Value::make_tuple(List items) {
  Value v(std::move(items));
  v.is_tuple_ = true;
  return v;
}

Value Value::make_namespace(Dict attributes) {
  Value v(std::move(attributes));
  v.is_namespace_ = true;
  return v;
}

const std::string& Value::undefined_hint() const {
  static const std::string empty;
  return str_ ? *str_ : empty;
}

const std::string& Value::function_name() const { return *str_; }

Value Value::call(const List& args, const Kwargs& kwargs) const { return (*fn_)(args, kwargs); }

std::optional<std::string> dict_key(const Value& key) {
  if (key.is_string()) return key.str();
  if (key.kind() == Value::Kind::integer) return "\xff" + std::to_string(key.as_int());
  return std::nullopt;
}

Value key_of(const std::string& stored) {
  if (stored.empty() || stored[0] != '\xff') return Value(stored);
  return Value(static_cast<int64_t>(std::stoll(stored.substr(1))));
}

const Value* Value::find(std::string_view key) const {
  if (kind_ != Kind::dict) return nullptr;
  for (const auto& [k, v] : *dict_) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::undefined:
    case Kind::none:
      return false;
    case Kind::boolean:
    case Kind::integer:
      return int_ != 0;
    case Kind::real:
      return real_ != 0;
    case Kind::string:
      return !str_->empty();
    case Kind::list:
      return !list_->empty();
    case Kind::dict:
      return !dict_->empty();
    case Kind::function:
      return true;
  }
  return false;
}

namespace {

// Python's repr(float): the shortest string that reads back to the same double, in fixed notation
// for exponents -4..15 (with ".0" when integral), else as 1e+20 / 1.5e-05.
std::string python_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // d.ddde[+-]XX
  const size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exp = std::stoi(sci.substr(e + 1));
  const bool neg = mantissa[0] == '-';
  if (neg) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out;
  if (exp >= -4 && exp < 16) {
    const int point = exp + 1;  // digits before the decimal point
    if (point <= 0) {
      out = "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    } else if (static_cast<size_t>(point) >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(point) - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
    }
    return (neg ? "-" : "") + out;
  }
  out = digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
  return (neg ? "-" : "") + out + ebuf;
}

// Python's repr(str): single quotes unless the text holds ' and no ", escapes for the quote,
// backslash and control characters; other characters (non-ASCII included) as they are.
std::string python_str_repr(const std::string& s) {
  const bool dq = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == static_cast<unsigned char>(q)) {
          out += '\\';
          out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + q;
}

void json_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

struct JsonWriter {
  int indent;
  std::string_view item_sep, key_sep;
  bool sort_keys;
  std::string out;
  int depth = 0;

  void newline() {
    out += '\n';
    out.append(static_cast<size_t>(indent * depth), ' ');
  }
  void write(const Value& v) {
    if (depth > kMaxDepth) throw TemplateError("tojson: value nested too deeply");
    switch (v.kind()) {
      case Value::Kind::none: out += "null"; return;
      case Value::Kind::boolean: out += v.as_bool() ? "true" : "false"; return;
      case Value::Kind::integer: out += std::to_string(v.as_int()); return;
      case Value::Kind::real: {
        const double d = v.as_double();
        out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : python_float(d);
        return;
      }
      case Value::Kind::string: json_string(out, v.str()); return;
      case Value::Kind::list: {
        const List& l = v.list();
        if (l.empty()) { out += "[]"; return; }
        out += '[';
        ++depth;
        for (size_t i = 0; i < l.size(); ++i) {
          if (i) out += indent >= 0 ? "," : std::string(item_sep);
          if (indent >= 0) newline();
          write(l[i]);
        }
        --depth;
        if (indent >= 0) newline();
        out += ']';
        return;
      }
      case Value::Kind::dict: {
        Dict d = v.dict();
        if (d.empty()) { out += "{}"; return; }
        if (sort_keys) std::stable_sort(d.begin(), d.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        out += '{';
        ++depth;
        for (size_t i = 0; i < d.size(); ++i) {
          if (i) out += indent >= 0 ? "," : std::string(item_sep);
          if (indent >= 0) newline();
          json_string(out, key_of(d[i].first).to_string());  // json.dumps writes int keys as strings
          out += key_sep;
          write(d[i].second);
        }
        --depth;
        if (indent >= 0) newline();
        out += '}';
        return;
      }
      case Value::Kind::undefined:
      case Value::Kind::function:
        throw TemplateError(fmt::format("tojson: Object of type {} is not JSON serializable", v.type_name()));
    }
  }
};

}  // namespace

std::string Value::to_string() const {
  switch (kind_) {
    case Kind::undefined: return "";
    case Kind::string: return *str_;
    default: return repr();
  }
}

std::string Value::repr() const {
  switch (kind_) {
    case Kind::undefined: return "";
    case Kind::none: return "None";
    case Kind::boolean: return int_ ? "True" : "False";
    case Kind::integer: return std::to_string(int_);
    case Kind::real: return python_float(real_);
    case Kind::string: return python_str_repr(*str_);
    case Kind::list: {
      std::string out = is_tuple_ ? "(" : "[";
      for (size_t i = 0; i < list_->size(); ++i) out += (i ? ", " : "") + (*list_)[i].repr();
      if (is_tuple_) return out + (list_->size() == 1 ? ",)" : ")");
      return out + "]";
    }
    case Kind::dict: {
      std::string out = is_namespace_ ? "<Namespace {" : "{";
      for (size_t i = 0; i < dict_->size(); ++i) {
        out += (i ? ", " : "") + key_of((*dict_)[i].first).repr() + ": " + (*dict_)[i].second.repr();
      }
      return out + (is_namespace_ ? "}>" : "}");
    }
    case Kind::function: return "<function " + *str_ + ">";
  }
  return "";
}

std::string Value::to_json(int indent, std::string_view item_sep, std::string_view key_sep, bool sort_keys) const {
  JsonWriter w{indent, item_sep, key_sep, sort_keys, {}};
  w.write(*this);
  return w.out;
}

bool Value::equals(const Value& o) const {
  if (is_number() && o.is_number()) {
    if (kind_ == Kind::real || o.kind_ == Kind::real) return as_double() == o.as_double();
    return int_ == o.int_;
  }
  // bool is an int in Python: True == 1
  if ((kind_ == Kind::boolean && o.is_number()) || (is_number() && o.kind_ == Kind::boolean)) {
    return as_double() == o.as_double();
  }
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::undefined:
    case Kind::none: return true;
    case Kind::boolean: return int_ == o.int_;
    case Kind::string: return *str_ == *o.str_;
    case Kind::list: {
      // a tuple never equals a list in Python: (1, 2) != [1, 2]
      if (is_tuple_ != o.is_tuple_ || list_->size() != o.list_->size()) return false;
      for (size_t i = 0; i < list_->size(); ++i) {
        if (!(*list_)[i].equals((*o.list_)[i])) return false;
      }
      return true;
    }
    case Kind::dict: {
      if (dict_->size() != o.dict_->size()) return false;
      for (const auto& [k, v] : *dict_) {
        const Value* w = o.find(k);
        if (!w || !v.equals(*w)) return false;
      }
      return true;
    }
    case Kind::function: return fn_ == o.fn_;
    default: return false;
  }
}

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::undefined: return "Undefined";
    case Kind::none: return "NoneType";
    case Kind::boolean: return "bool";
    case Kind::integer: return "int";
    case Kind::real: return "float";
    case Kind::string: return "str";
    case Kind::list: return "list";
    case Kind::dict: return is_namespace_ ? "Namespace" : "dict";
    case Kind::function: return "function";
  }
  return "?";
}

}  // namespace abl::text::jinja
