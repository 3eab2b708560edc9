// The Jinja built-ins chat templates use: filters, tests, the methods of str, dict and list
// that Python would find on them (the sandbox's view: nothing that changes a value), and the
// globals transformers adds (raise_exception, strftime_now). An unknown filter or test is an
// error naming it, never a silent pass-through.
#include <algorithm>
#include <cmath>
#include <ctime>

#include <utf8proc.h>

#include "abl/text/jinja.h"
#include "jinja_parts.h"

namespace abl::text::jinja {

[[noreturn]] void undefined_error(const Value& v) {
  throw EvalError(v.undefined_hint().empty() ? std::string("a value is undefined") : v.undefined_hint());
}

std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    n = std::min(n, s.size() - i);
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

bool less_than(const Value& a, const Value& b) {
  const auto numeric = [](const Value& v) { return v.is_number() || v.kind() == Value::Kind::boolean; };
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  if (numeric(a) && numeric(b)) return a.as_double() < b.as_double();
  if (a.is_string() && b.is_string()) return a.str() < b.str();
  if (a.is_list() && b.is_list()) {
    const List &x = a.list(), &y = b.list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (less_than(x[i], y[i])) return true;
      if (less_than(y[i], x[i])) return false;
    }
    return x.size() < y.size();
  }
  throw EvalError(fmt::format("'<' not supported between instances of '{}' and '{}'", a.type_name(), b.type_name()));
}

List iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: return {};
    case Value::Kind::list: return v.list();
    case Value::Kind::string: {
      List out;
      for (auto& c : code_points(v.str())) out.emplace_back(std::move(c));
      return out;
    }
    case Value::Kind::dict: {
      if (v.is_namespace()) break;
      List out;
      for (const auto& kv : v.dict()) out.push_back(key_of(kv.first));
      return out;
    }
    default: break;
  }
  throw EvalError(fmt::format("'{}' object is not iterable", v.type_name()));
}

namespace {

// Python's str.isspace() characters.
bool py_space(const std::string& cp) {
  if (cp.size() == 1) {
    const unsigned char c = static_cast<unsigned char>(cp[0]);
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  }
  static const char* const wide[] = {"\u0085", "\u00a0", "\u1680", "\u2000", "\u2001", "\u2002", "\u2003",
                                     "\u2004", "\u2005", "\u2006", "\u2007", "\u2008", "\u2009", "\u200a",
                                     "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"};
  return std::any_of(std::begin(wide), std::end(wide), [&](const char* w) { return cp == w; });
}

// str.strip / lstrip / rstrip: `chars` (a string's code points) or Python's whitespace.
std::string strip(const std::string& s, const Value& chars, bool left, bool right) {
  const std::vector<std::string> cps = code_points(s);
  std::vector<std::string> set;
  const bool ws = chars.is_undefined() || chars.is_none();
  if (!ws) {
    if (!chars.is_string()) throw EvalError(fmt::format("strip arg must be None or str, not {}", chars.type_name()));
    set = code_points(chars.str());
  }
  auto strippable = [&](const std::string& c) { return ws ? py_space(c) : std::find(set.begin(), set.end(), c) != set.end(); };
  size_t b = 0, e = cps.size();
  if (left) while (b < e && strippable(cps[b])) ++b;
  if (right) while (e > b && strippable(cps[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) out += cps[i];
  return out;
}

std::string map_case(const std::string& s, int mode) {  // 0 lower, 1 upper, 2 title, 3 capitalize
  std::string out;
  bool prev_cased = false;
  bool first = true;
  for (const std::string& cp : code_points(s)) {
    utf8proc_int32_t c;
    if (utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(cp.data()), static_cast<utf8proc_ssize_t>(cp.size()), &c) < 0) {
      out += cp;
      prev_cased = false;
      continue;
    }
    const bool cased = utf8proc_tolower(c) != c || utf8proc_toupper(c) != c;
    utf8proc_int32_t m = c;
    if (mode == 0) m = utf8proc_tolower(c);
    if (mode == 1) m = utf8proc_toupper(c);
    if (mode == 2) m = prev_cased ? utf8proc_tolower(c) : utf8proc_toupper(c);
    if (mode == 3) m = first ? utf8proc_toupper(c) : utf8proc_tolower(c);
    utf8proc_uint8_t buf[4];
    const auto n = utf8proc_encode_char(m, buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
    prev_cased = cased;
    first = false;
  }
  return out;
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  if (from.empty()) {  // Python inserts `to` between every character
    std::string out;
    int64_t done = 0;
    for (const std::string& cp : code_points(s)) {
      if (count < 0 || done < count) {
        out += to;
        ++done;
      }
      out += cp;
    }
    if (count < 0 || done < count) out += to;
    return out;
  }
  std::string out;
  size_t pos = 0;
  int64_t done = 0;
  for (size_t at = s.find(from); at != std::string::npos && (count < 0 || done < count); at = s.find(from, pos)) {
    out.append(s, pos, at - pos);
    out += to;
    pos = at + from.size();
    ++done;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

List split(const std::string& s, const Value& sep, int64_t maxsplit) {
  List out;
  if (sep.is_undefined() || sep.is_none()) {  // runs of whitespace, none empty
    std::string cur;
    bool in_word = false;
    int64_t splits = 0;
    const std::vector<std::string> cps = code_points(s);
    for (size_t i = 0; i < cps.size(); ++i) {
      if (py_space(cps[i]) && (maxsplit < 0 || splits < maxsplit || !in_word)) {
        if (in_word) {
          out.emplace_back(cur);
          cur.clear();
          in_word = false;
          ++splits;
        }
        continue;
      }
      if (maxsplit >= 0 && splits >= maxsplit && !in_word) {  // the rest, right-stripped
        std::string rest;
        for (size_t j = i; j < cps.size(); ++j) rest += cps[j];
        out.emplace_back(strip(rest, Value(), false, true));
        return out;
      }
      cur += cps[i];
      in_word = true;
    }
    if (in_word) out.emplace_back(cur);
    return out;
  }
  if (!sep.is_string()) throw EvalError(fmt::format("must be str or None, not {}", sep.type_name()));
  if (sep.str().empty()) throw EvalError("empty separator");
  size_t pos = 0;
  int64_t splits = 0;
  for (size_t at = s.find(sep.str()); at != std::string::npos && (maxsplit < 0 || splits < maxsplit);
       at = s.find(sep.str(), pos)) {
    out.emplace_back(s.substr(pos, at - pos));
    pos = at + sep.str().size();
    ++splits;
  }
  out.emplace_back(s.substr(pos));
  return out;
}

// Arguments by position or keyword, as Python binds them; absent: undefined.
struct Params {
  const List& args;
  const Kwargs& kwargs;
  const char* fn;
  Value get(size_t i, const char* name) const {
    if (i < args.size()) return args[i];
    for (const auto& [k, v] : kwargs) {
      if (k == name) return v;
    }
    return {};
  }
  void at_most(size_t n) const {
    if (args.size() > n) throw EvalError(fmt::format("{}() takes at most {} arguments ({} given)", fn, n, args.size()));
  }
};

// Python's int(float): truncation; a value no int64 holds is an error.
int64_t double_to_int(double d) {
  if (!(d > -9.2e18 && d < 9.2e18)) throw EvalError(fmt::format("cannot convert float {} to integer", d));
  return static_cast<int64_t>(d);
}

int64_t int_arg(const Value& v, int64_t fallback, const char* what) {
  if (v.is_undefined() || v.is_none()) return fallback;
  if (v.kind() != Value::Kind::integer && v.kind() != Value::Kind::boolean) {
    throw EvalError(fmt::format("{}: an integer is required, not {}", what, v.type_name()));
  }
  return v.as_int();
}

const std::string& str_arg(const Value& v, const char* what) {
  if (!v.is_string()) throw EvalError(fmt::format("{}: a str is required, not {}", what, v.type_name()));
  return v.str();
}

Value string_method(const std::string& s, const std::string& name) {
  auto m = [&](auto f) { return Value::function("str." + name, f); };
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    return m([s, name](const List& a, const Kwargs& k) {
      Params p{a, k, name.c_str()};
      p.at_most(1);
      return Value(strip(s, p.get(0, "chars"), name != "rstrip", name != "lstrip"));
    });
  }
  if (name == "split") {
    return m([s](const List& a, const Kwargs& k) {
      Params p{a, k, "split"};
      p.at_most(2);
      return Value(split(s, p.get(0, "sep"), int_arg(p.get(1, "maxsplit"), -1, "split")));
    });
  }
  if (name == "startswith" || name == "endswith") {
    const bool starts = name == "startswith";
    return m([s, starts](const List& a, const Kwargs& k) {
      Params p{a, k, starts ? "startswith" : "endswith"};
      p.at_most(1);
      const Value arg = p.get(0, "prefix");
      List options = arg.is_list() ? arg.list() : List{arg};
      for (const Value& o : options) {
        const std::string& x = str_arg(o, starts ? "startswith" : "endswith");
        if (x.size() <= s.size() && (starts ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0)) {
          return Value(true);
        }
      }
      return Value(false);
    });
  }
  if (name == "replace") {
    return m([s](const List& a, const Kwargs& k) {
      Params p{a, k, "replace"};
      p.at_most(3);
      return Value(replace_all(s, str_arg(p.get(0, "old"), "replace"), str_arg(p.get(1, "new"), "replace"),
                               int_arg(p.get(2, "count"), -1, "replace")));
    });
  }
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
    const int mode = name == "lower" ? 0 : name == "upper" ? 1 : name == "title" ? 2 : 3;
    return m([s, mode](const List&, const Kwargs&) { return Value(map_case(s, mode)); });
  }
  if (name == "find" || name == "count") {
    const bool find = name == "find";
    return m([s, find](const List& a, const Kwargs& k) {
      Params p{a, k, find ? "find" : "count"};
      p.at_most(1);
      const std::string& x = str_arg(p.get(0, "sub"), find ? "find" : "count");
      if (find) {
        const size_t at = s.find(x);
        return Value(at == std::string::npos ? int64_t{-1} : static_cast<int64_t>(code_points(s.substr(0, at)).size()));
      }
      if (x.empty()) return Value(static_cast<int64_t>(code_points(s).size() + 1));
      int64_t n = 0;
      for (size_t at = s.find(x); at != std::string::npos; at = s.find(x, at + x.size())) ++n;
      return Value(n);
    });
  }
  if (name == "join") {
    return m([s](const List& a, const Kwargs& k) {
      Params p{a, k, "join"};
      p.at_most(1);
      std::string out;
      const List items = iterate(p.get(0, "iterable"));
      for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].is_string()) throw EvalError(fmt::format("sequence item {}: expected str instance, {} found", i, items[i].type_name()));
        out += (i ? s : "") + items[i].str();
      }
      return Value(std::move(out));
    });
  }
  if (name == "splitlines") {
    return m([s](const List&, const Kwargs&) {
      List out;
      std::string cur;
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\n' || s[i] == '\r') {
          out.emplace_back(cur);
          cur.clear();
          if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
        } else {
          cur += s[i];
        }
      }
      if (!cur.empty()) out.emplace_back(cur);
      return Value(std::move(out));
    });
  }
  if (name == "isdigit" || name == "isspace" || name == "isalpha" || name == "islower" || name == "isupper") {
    return m([s, name](const List&, const Kwargs&) {
      if (s.empty()) return Value(false);
      if (name == "islower" || name == "isupper") {
        const std::string other = map_case(s, name == "islower" ? 0 : 1);
        return Value(other == s && map_case(s, name == "islower" ? 1 : 0) != s);
      }
      for (const std::string& cp : code_points(s)) {
        const unsigned char c = static_cast<unsigned char>(cp[0]);
        const bool ok = name == "isspace" ? py_space(cp)
                        : name == "isdigit" ? (cp.size() == 1 && c >= '0' && c <= '9')
                                            : (cp.size() > 1 || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'));
        if (!ok) return Value(false);
      }
      return Value(true);
    });
  }
  return Value::undefined(fmt::format("'str object' has no attribute '{}'", name));
}

Value dict_method(const Value& d, const std::string& name) {
  auto m = [&](auto f) { return Value::function("dict." + name, f); };
  if (name == "items") {
    return m([d](const List&, const Kwargs&) {
      List out;
      for (const auto& [k, v] : d.dict()) out.push_back(Value::make_tuple(List{key_of(k), v}));
      return Value(std::move(out));
    });
  }
  if (name == "keys" || name == "values") {
    const bool keys = name == "keys";
    return m([d, keys](const List&, const Kwargs&) {
      List out;
      for (const auto& [k, v] : d.dict()) out.push_back(keys ? key_of(k) : v);
      return Value(std::move(out));
    });
  }
  if (name == "get") {
    return m([d](const List& a, const Kwargs& k) {
      Params p{a, k, "get"};
      p.at_most(2);
      const Value key = p.get(0, "key");
      const std::optional<std::string> stored = dict_key(key);
      const Value* v = stored ? d.find(*stored) : nullptr;
      if (v) return *v;
      const Value def = p.get(1, "default");
      return def.is_undefined() ? Value::none() : def;
    });
  }
  if (name == "copy") return m([d](const List&, const Kwargs&) { return Value(d.dict()); });
  return {};
}

bool is_mutating_method(const std::string& name) {
  static const char* const names[] = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                                      "update", "setdefault", "popitem", "add", "discard"};
  return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return name == n; });
}

// The value at `path` ("a.b") of an item, as selectattr and map read it.
Value attribute_path(const Value& v, const std::string& path) {
  Value cur = v;
  size_t pos = 0;
  while (true) {
    const size_t dot = path.find('.', pos);
    const std::string part = path.substr(pos, dot - pos);
    const bool index = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    int64_t i = 0;
    if (index) {
      for (char c : part) i = i > (INT64_MAX - 9) / 10 ? INT64_MAX : i * 10 + (c - '0');
    }
    cur = index ? get_item(cur, Value(i)) : get_item(cur, Value(part));
    if (dot == std::string::npos) return cur;
    pos = dot + 1;
  }
}

Value select(Context& ctx, const Value& seq, const List& args, bool by_attr, bool keep) {
  if (by_attr && args.empty()) throw EvalError("selectattr/rejectattr need an attribute");
  List out;
  const std::string attr = by_attr ? str_arg(args[0], "selectattr") : "";
  const size_t test_at = by_attr ? 1 : 0;
  for (const Value& item : iterate(seq)) {
    const Value v = by_attr ? attribute_path(item, attr) : item;
    bool r;
    if (args.size() > test_at) {
      const List test_args(args.begin() + static_cast<std::ptrdiff_t>(test_at) + 1, args.end());
      r = apply_test(ctx, str_arg(args[test_at], "select"), v, test_args);
    } else {
      r = v.truthy();
    }
    if (r == keep) out.push_back(item);
  }
  return Value(std::move(out));
}

// The items of dict(...) and namespace(...): mappings given by position, then keyword arguments.
Dict mapping_arguments(const char* fn, const List& args, const Kwargs& kwargs) {
  Dict d;
  for (const Value& x : args) {
    if (!x.is_dict()) throw EvalError(fmt::format("{}() takes a mapping or keyword arguments", fn));
    for (const auto& kv : x.dict()) d.push_back(kv);
  }
  for (const auto& kv : kwargs) d.push_back(kv);
  return d;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

int64_t length(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: return 0;
    case Value::Kind::string: return static_cast<int64_t>(code_points(v.str()).size());
    case Value::Kind::list: return static_cast<int64_t>(v.list().size());
    case Value::Kind::dict: return static_cast<int64_t>(v.dict().size());
    default: throw EvalError(fmt::format("object of type '{}' has no len()", v.type_name()));
  }
}

}  // namespace

Value get_attribute(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case Value::Kind::undefined: undefined_error(obj);
    case Value::Kind::string: return string_method(obj.str(), name);
    case Value::Kind::dict: {
      if (!obj.is_namespace()) {
        if (Value m = dict_method(obj, name); !m.is_undefined()) return m;
        if (is_mutating_method(name)) throw EvalError(fmt::format("dict.{} cannot be called in a chat template", name));
      }
      if (const Value* v = obj.find(name)) return *v;
      return Value::undefined(fmt::format("'{}' has no attribute '{}'", obj.is_namespace() ? "Namespace" : "dict object", name));
    }
    case Value::Kind::list:
      if (is_mutating_method(name)) throw EvalError(fmt::format("list.{} cannot be called in a chat template", name));
      break;
    default: break;
  }
  return Value::undefined(fmt::format("'{} object' has no attribute '{}'", obj.type_name(), name));
}

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) undefined_error(obj);
  if (key.kind() == Value::Kind::integer || key.kind() == Value::Kind::boolean) {
    if (obj.is_list() || obj.is_string()) {
      std::vector<std::string> cps;
      if (obj.is_string()) cps = code_points(obj.str());
      const int64_t n = static_cast<int64_t>(obj.is_list() ? obj.list().size() : cps.size());
      int64_t i = key.as_int();
      if (i < 0) i += n;
      if (i < 0 || i >= n) return Value::undefined(fmt::format("{} index out of range", obj.type_name()));
      return obj.is_list() ? obj.list()[static_cast<size_t>(i)] : Value(cps[static_cast<size_t>(i)]);
    }
  }
  if (obj.is_dict() && !key.is_string()) {  // an int key (a str key falls through to the attributes)
    const std::optional<std::string> stored = dict_key(key);
    if (const Value* v = stored ? obj.find(*stored) : nullptr) return *v;
  }
  if (key.is_string()) {
    if (obj.is_dict()) {
      if (const Value* v = obj.find(key.str())) return *v;
    }
    return get_attribute(obj, key.str());
  }
  return Value::undefined(fmt::format("'{} object' has no item {}", obj.type_name(), key.repr()));
}

bool apply_test(Context& ctx, const std::string& name, const Value& v, const List& args) {
  (void)ctx;
  const auto arg = [&](size_t i) -> const Value& {
    if (i >= args.size()) throw EvalError(fmt::format("the test '{}' needs an argument", name));
    return args[i];
  };
  using K = Value::Kind;
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number() || v.kind() == K::boolean;
  if (name == "integer") return v.kind() == K::integer;
  if (name == "float") return v.kind() == K::real;
  if (name == "boolean") return v.kind() == K::boolean;
  if (name == "true") return v.kind() == K::boolean && v.as_bool();
  if (name == "false") return v.kind() == K::boolean && !v.as_bool();
  if (name == "mapping") return v.is_dict();
  if (name == "iterable") return v.is_undefined() || v.is_string() || v.is_list() || (v.is_dict() && !v.is_namespace());
  if (name == "sequence") return v.is_string() || v.is_list() || v.is_dict();
  if (name == "callable") return v.is_function();
  if (name == "odd" || name == "even") {
    if (v.kind() != K::integer && v.kind() != K::boolean) throw EvalError(fmt::format("the test '{}' needs an integer", name));
    return (v.as_int() % 2 != 0) == (name == "odd");
  }
  if (name == "divisibleby") {
    const int64_t d = int_arg(arg(0), 0, "divisibleby");
    if (d == 0) throw EvalError("divisibleby 0");
    return int_arg(v, 0, "divisibleby") % d == 0;
  }
  if (name == "eq" || name == "equalto" || name == "==") return v.equals(arg(0));
  if (name == "ne" || name == "!=") return !v.equals(arg(0));
  if (name == "lt" || name == "lessthan" || name == "<") return less_than(v, arg(0));
  if (name == "gt" || name == "greaterthan" || name == ">") return less_than(arg(0), v);
  if (name == "le" || name == "<=") return !less_than(arg(0), v);
  if (name == "ge" || name == ">=") return !less_than(v, arg(0));
  if (name == "in") {
    for (const Value& x : iterate(arg(0))) {
      if (x.equals(v)) return true;
    }
    return arg(0).is_string() && v.is_string() && arg(0).str().find(v.str()) != std::string::npos;
  }
  if (name == "sameas") {
    const Value& o = arg(0);
    if (v.kind() != o.kind()) return false;
    return v.is_none() || v.is_undefined() || (v.kind() == K::boolean && v.as_bool() == o.as_bool());
  }
  if (name == "lower" || name == "upper") {
    if (!v.is_string()) return false;
    return map_case(v.str(), name == "lower" ? 0 : 1) == v.str() && map_case(v.str(), name == "lower" ? 1 : 0) != v.str();
  }
  throw EvalError(fmt::format("the test '{}' is not supported in chat templates", name));
}

Value apply_filter(Context& ctx, const std::string& name, const Value& v, const List& args, const Kwargs& kwargs) {
  const Params p{args, kwargs, name.c_str()};
  auto text = [&] { return v.to_string(); };
  if (name == "trim") return Value(strip(text(), p.get(0, "chars"), true, true));
  if (name == "lower") return Value(map_case(text(), 0));
  if (name == "upper") return Value(map_case(text(), 1));
  if (name == "title") return Value(map_case(text(), 2));
  if (name == "capitalize") return Value(map_case(text(), 3));
  if (name == "string") return Value(text());
  if (name == "safe") return v;
  if (name == "e" || name == "escape") return Value(html_escape(text()));
  if (name == "length" || name == "count") return Value(length(v));
  if (name == "default" || name == "d") {
    const bool boolean = p.get(1, "boolean").truthy();
    if (v.is_undefined() || (boolean && !v.truthy())) {
      const Value def = p.get(0, "default_value");
      return def.is_undefined() ? Value("") : def;
    }
    return v;
  }
  if (name == "tojson") {
    int indent = -1;
    const Value ind = p.get(0, "indent");
    if (!ind.is_undefined() && !ind.is_none()) indent = static_cast<int>(std::clamp<int64_t>(int_arg(ind, 0, "tojson"), 0, 64));
    std::string item_sep = indent >= 0 ? "," : ", ", key_sep = ": ";
    const Value seps = p.get(1, "separators");
    if (seps.is_list() && seps.list().size() == 2) {
      item_sep = str_arg(seps.list()[0], "tojson separators");
      key_sep = str_arg(seps.list()[1], "tojson separators");
    }
    return Value(v.to_json(indent, item_sep, key_sep, p.get(2, "sort_keys").truthy()));
  }
  if (name == "join") {
    const Value sep = p.get(0, "d");
    const Value attr = p.get(1, "attribute");
    std::string out;
    const List items = iterate(v);
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += sep.is_undefined() ? "" : sep.to_string();
      out += (attr.is_undefined() ? items[i] : attribute_path(items[i], attr.to_string())).to_string();
      ctx.check_output(out);
    }
    return Value(std::move(out));
  }
  if (name == "first" || name == "last") {
    const List items = iterate(v);
    if (items.empty()) return Value::undefined(fmt::format("no {} item, sequence was empty", name));
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") return Value(iterate(v));
  if (name == "reverse") {
    if (v.is_string()) {
      auto cps = code_points(v.str());
      std::string out;
      for (auto it = cps.rbegin(); it != cps.rend(); ++it) out += *it;
      return Value(std::move(out));
    }
    List items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value(std::move(items));
  }
  if (name == "items") {
    if (v.is_undefined()) return Value(List{});
    if (!v.is_dict()) throw EvalError(fmt::format("can only get item pairs from a mapping, not {}", v.type_name()));
    return dict_method(v, "items").call({}, {});
  }
  if (name == "dictsort") {
    if (!v.is_dict()) throw EvalError("dictsort needs a mapping");
    // Jinja's dictsort: by key, strings compared case-insensitively (case_sensitive=False), ints as numbers.
    List out;
    for (const auto& [k, x] : v.dict()) out.push_back(Value::make_tuple(List{key_of(k), x}));
    const auto folded = [](const Value& k) { return k.is_string() ? Value(map_case(k.str(), 0)) : k; };
    std::stable_sort(out.begin(), out.end(), [&](const Value& a, const Value& b) {
      return less_than(folded(a.list()[0]), folded(b.list()[0]));
    });
    return Value(std::move(out));
  }
  if (name == "replace") {
    return Value(replace_all(text(), p.get(0, "old").to_string(), p.get(1, "new").to_string(),
                             int_arg(p.get(2, "count"), -1, "replace")));
  }
  if (name == "int") {
    const Value def = p.get(0, "default");
    if (v.kind() == Value::Kind::integer || v.kind() == Value::Kind::boolean) return Value(v.as_int());
    if (v.kind() == Value::Kind::real) return Value(double_to_int(v.as_double()));
    if (v.is_string()) {
      try {
        size_t used = 0;
        const std::string s = strip(v.str(), Value(), true, true);
        const int64_t i = std::stoll(s, &used);
        if (used == s.size()) return Value(i);
        return Value(double_to_int(std::stod(s)));
      } catch (const std::logic_error&) {  // not a number (stoll, stod)
      }
    }
    return def.is_undefined() ? Value(int64_t{0}) : def;
  }
  if (name == "float") {
    if (v.is_number() || v.kind() == Value::Kind::boolean) return Value(v.as_double());
    if (v.is_string()) {
      try {
        return Value(std::stod(v.str()));
      } catch (const std::exception&) {
      }
    }
    const Value def = p.get(0, "default");
    return def.is_undefined() ? Value(0.0) : def;
  }
  if (name == "abs") {
    if (v.kind() == Value::Kind::real) return Value(std::fabs(v.as_double()));
    const int64_t i = int_arg(v, 0, "abs");
    if (i == INT64_MIN) throw EvalError("integer overflow in abs");
    return Value(i < 0 ? -i : i);
  }
  if (name == "round") {
    const int64_t digits = int_arg(p.get(0, "precision"), 0, "round");
    const double scale = std::pow(10.0, static_cast<double>(digits));
    const std::string method = p.get(1, "method").is_undefined() ? "common" : p.get(1, "method").to_string();
    const double x = v.as_double() * scale;
    const double r = method == "floor" ? std::floor(x) : method == "ceil" ? std::ceil(x) : std::round(x);
    return Value(r / scale);
  }
  if (name == "sum") {
    Value total = p.get(1, "start").is_undefined() ? Value(int64_t{0}) : p.get(1, "start");
    const Value attr = p.get(0, "attribute");
    for (const Value& x : iterate(v)) {
      const Value item = attr.is_undefined() ? x : attribute_path(x, attr.to_string());
      if (!(item.is_number() || item.kind() == Value::Kind::boolean)) throw EvalError("sum of values that are not numbers");
      total = total.kind() == Value::Kind::real || item.kind() == Value::Kind::real
                  ? Value(total.as_double() + item.as_double())
                  : Value(total.as_int() + item.as_int());
    }
    return total;
  }
  if (name == "min" || name == "max" || name == "sort" || name == "unique") {
    List items = iterate(v);
    const Value attr = p.get(name == "sort" ? 2 : 1, "attribute");
    auto key = [&](const Value& x) { return attr.is_undefined() ? x : attribute_path(x, attr.to_string()); };
    if (name == "unique") {
      List out;
      for (const Value& x : items) {
        if (std::none_of(out.begin(), out.end(), [&](const Value& y) { return key(y).equals(key(x)); })) out.push_back(x);
      }
      return Value(std::move(out));
    }
    std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) { return less_than(key(a), key(b)); });
    if (name == "sort") {
      if (p.get(0, "reverse").truthy()) std::reverse(items.begin(), items.end());
      return Value(std::move(items));
    }
    if (items.empty()) return Value::undefined(fmt::format("no {} item, sequence was empty", name));
    return name == "min" ? items.front() : items.back();
  }
  if (name == "selectattr" || name == "rejectattr") return select(ctx, v, args, true, name == "selectattr");
  if (name == "select" || name == "reject") return select(ctx, v, args, false, name == "select");
  if (name == "map") {
    List out;
    const Value attr = p.get(99, "attribute");
    if (!attr.is_undefined()) {
      const Value def = p.get(99, "default");
      for (const Value& x : iterate(v)) {
        Value y = attribute_path(x, attr.to_string());
        out.push_back(y.is_undefined() && !def.is_undefined() ? def : y);
      }
      return Value(std::move(out));
    }
    if (args.empty()) throw EvalError("map needs a filter name or attribute=");
    const std::string filter = str_arg(args[0], "map");
    const List rest(args.begin() + 1, args.end());
    for (const Value& x : iterate(v)) out.push_back(apply_filter(ctx, filter, x, rest, {}));
    return Value(std::move(out));
  }
  if (name == "indent") {
    const Value w = p.get(0, "width");
    const std::string pad = w.is_string() ? w.str() : std::string(static_cast<size_t>(std::clamp<int64_t>(int_arg(w, 4, "indent"), 0, 256)), ' ');
    const bool first = p.get(1, "first").truthy(), blank = p.get(2, "blank").truthy();
    std::string out;
    const std::string s = text();
    size_t pos = 0;
    bool is_first = true;
    while (pos <= s.size()) {
      const size_t nl = s.find('\n', pos);
      const std::string line = s.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      if (!is_first || first) {
        if (!line.empty() || blank) out += pad;
      }
      out += line;
      if (nl == std::string::npos) break;
      out += '\n';
      pos = nl + 1;
      is_first = false;
    }
    return Value(std::move(out));
  }
  throw EvalError(fmt::format("the filter '{}' is not supported in chat templates", name));
}

Dict make_globals(const Context& ctx) {
  Dict g;
  g.emplace_back("raise_exception", Value::function("raise_exception", [](const List& a, const Kwargs&) -> Value {
                   throw RaiseCalled(a.empty() ? std::string() : a[0].to_string());
                 }));
  const std::string date = ctx.date();
  g.emplace_back("strftime_now", Value::function("strftime_now", [date](const List& a, const Kwargs&) {
                   if (a.empty() || !a[0].is_string()) throw EvalError("strftime_now(format) needs a format string");
                   std::tm tm{};
                   if (std::sscanf(date.c_str(), "%d-%d-%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday) != 3) {
                     throw EvalError("the chat template date is not YYYY-MM-DD: " + date);
                   }
                   tm.tm_year -= 1900;
                   tm.tm_mon -= 1;
                   const std::time_t t = timegm(&tm);  // fills in the weekday and day of the year
                   gmtime_r(&t, &tm);
                   char buf[512];
                   const size_t n = std::strftime(buf, sizeof buf, a[0].str().c_str(), &tm);
                   return Value(std::string(buf, n));
                 }));
  g.emplace_back("namespace", Value::function("namespace", [](const List& a, const Kwargs& k) {
                   return Value::make_namespace(mapping_arguments("namespace", a, k));
                 }));
  g.emplace_back("dict", Value::function("dict", [](const List& a, const Kwargs& k) {
                   return Value(mapping_arguments("dict", a, k));
                 }));
  g.emplace_back("range", Value::function("range", [](const List& a, const Kwargs&) {
                   if (a.empty() || a.size() > 3) throw EvalError("range() takes 1 to 3 arguments");
                   int64_t start = 0, stop, step = 1;
                   if (a.size() == 1) {
                     stop = int_arg(a[0], 0, "range");
                   } else {
                     start = int_arg(a[0], 0, "range");
                     stop = int_arg(a[1], 0, "range");
                     if (a.size() == 3) step = int_arg(a[2], 1, "range");
                   }
                   if (step == 0) throw EvalError("range() arg 3 must not be zero");
                   List out;
                   for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
                     if (out.size() >= 1'000'000) throw EvalError("range() too large for a chat template");
                     out.emplace_back(i);
                   }
                   return Value(std::move(out));
                 }));
  return g;
}

}  // namespace abl::text::jinja
