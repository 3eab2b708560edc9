// Jinja evaluation: expressions with Python's arithmetic and comparison rules, statements with
// Jinja's scoping (a loop iteration and a macro call have their own variables; `set` at the top
// level or in an `if` is seen after it), and Undefined as Jinja's default: it prints as nothing,
// is false and iterates as empty, but using it in arithmetic or taking its attribute is an error.
#include <algorithm>
#include <cmath>
#include <optional>

#include "abl/text/jinja.h"
#include "jinja_parts.h"

namespace abl::text::jinja {

// ---- context ---------------------------------------------------------------------------------

Value Context::lookup(const std::string& name) const {
  for (auto f = frames_.rbegin(); f != frames_.rend(); ++f) {
    for (const auto& [k, v] : **f) {
      if (k == name) return v;
    }
  }
  return Value::undefined("'" + name + "' is undefined");
}

void Context::assign(const std::string& name, Value v) {
  Dict& f = *frames_.back();
  for (auto& [k, old] : f) {
    if (k == name) {
      old = std::move(v);
      return;
    }
  }
  f.emplace_back(name, std::move(v));
}

void Context::step() {
  if (++steps_ > kMaxSteps) throw EvalError("the template takes too many steps (a loop without end?)");
}

void Context::enter() {
  if (++depth_ > kMaxDepth) {
    --depth_;
    throw EvalError("the template recurses too deeply");
  }
}

void Context::check_output(const std::string& out) const {
  if (out.size() > kMaxOutput) throw EvalError(fmt::format("the template renders more than {} MiB", kMaxOutput >> 20));
}

// ---- expressions -----------------------------------------------------------------------------

namespace {

void check_defined(const Value& v) {
  if (v.is_undefined()) undefined_error(v);
}

struct Arguments {
  List positional;
  Kwargs keyword;
};

Arguments eval_args(Context& ctx, const CallArgs& a) {
  Arguments out;
  for (const auto& e : a.positional) out.positional.push_back(e->eval(ctx));
  for (const auto& [k, e] : a.keyword) out.keyword.emplace_back(k, e->eval(ctx));
  return out;
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

[[noreturn]] void bad_operands(const std::string& op, const Value& a, const Value& b) {
  throw EvalError(fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op, a.type_name(), b.type_name()));
}

bool is_numeric(const Value& v) { return v.is_number() || v.kind() == Value::Kind::boolean; }

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  check_defined(a);
  check_defined(b);
  if (op == "+") {
    if (a.is_string() && b.is_string()) return Value(a.str() + b.str());
    if (a.is_list() && b.is_list()) {
      List l = a.list();
      l.insert(l.end(), b.list().begin(), b.list().end());
      return Value(std::move(l));
    }
    if (a.is_string() || b.is_string()) {
      throw EvalError(fmt::format("can only concatenate str (not \"{}\") to str", (a.is_string() ? b : a).type_name()));
    }
  }
  if (op == "*") {
    const Value* seq = a.is_string() || a.is_list() ? &a : b.is_string() || b.is_list() ? &b : nullptr;
    const Value* n = seq == &a ? &b : &a;
    if (seq && (n->kind() == Value::Kind::integer || n->kind() == Value::Kind::boolean)) {
      const int64_t times = std::max<int64_t>(0, n->as_int());
      const size_t unit = seq->is_string() ? seq->str().size() : seq->list().size();
      const size_t limit = seq->is_string() ? kMaxOutput : size_t{1'000'000};
      if (unit && static_cast<uint64_t>(times) > limit / unit) throw EvalError("repetition too large");
      if (seq->is_string()) {
        std::string s;
        for (int64_t i = 0; i < times; ++i) s += seq->str();
        return Value(std::move(s));
      }
      List l;
      for (int64_t i = 0; i < times; ++i) l.insert(l.end(), seq->list().begin(), seq->list().end());
      return Value(std::move(l));
    }
  }
  if (!is_numeric(a) || !is_numeric(b)) bad_operands(op, a, b);
  const bool ints = a.kind() != Value::Kind::real && b.kind() != Value::Kind::real;
  const double x = a.as_double(), y = b.as_double();
  if (op == "/") {
    if (y == 0) throw EvalError("division by zero");
    return Value(x / y);
  }
  if (ints) {  // Python's ints do not overflow; ours are 64-bit and say so when they would
    const int64_t i = a.as_int(), j = b.as_int();
    int64_t r = 0;
    bool overflow = false;
    if (op == "+") overflow = __builtin_add_overflow(i, j, &r);
    if (op == "-") overflow = __builtin_sub_overflow(i, j, &r);
    if (op == "*") overflow = __builtin_mul_overflow(i, j, &r);
    if (op == "//" || op == "%") {
      if (j == 0) throw EvalError("integer division or modulo by zero");
      if (i == INT64_MIN && j == -1) overflow = true;
      else r = op == "//" ? floor_div(i, j) : floor_mod(i, j);
    }
    if (op == "**") {
      if (j < 0) return Value(std::pow(x, y));
      if (i == 0 || i == 1 || i == -1) {
        r = j == 0 ? 1 : (i == -1 && j % 2 == 0) ? 1 : i;
      } else {
        r = 1;
        for (int64_t k = 0; k < j && !overflow; ++k) overflow = __builtin_mul_overflow(r, i, &r);
      }
    }
    if (overflow) throw EvalError(fmt::format("integer overflow in {} {} {}", i, op, j));
    return Value(r);
  }
  if (op == "+") return Value(x + y);
  if (op == "-") return Value(x - y);
  if (op == "*") return Value(x * y);
  if (op == "//" || op == "%") {
    if (y == 0) throw EvalError("float division or modulo by zero");
    const double q = std::floor(x / y);
    return Value(op == "//" ? q : x - q * y);
  }
  if (op == "**") return Value(std::pow(x, y));
  bad_operands(op, a, b);
}

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string()) throw EvalError(fmt::format("'in <string>' requires string as left operand, not {}", item.type_name()));
    return container.str().find(item.str()) != std::string::npos;
  }
  if (container.is_dict()) {
    const std::optional<std::string> stored = dict_key(item);
    return stored && container.find(*stored);
  }
  if (container.is_undefined()) return false;
  for (const Value& v : iterate(container)) {
    if (v.equals(item)) return true;
  }
  return false;
}

}  // namespace

Value NameRef::eval(Context& ctx) const {
  ctx.line = line;
  return ctx.lookup(name);
}

Value ListExpr::eval(Context& ctx) const {
  List l;
  for (const auto& e : items) l.push_back(e->eval(ctx));
  return tuple ? Value::make_tuple(std::move(l)) : Value(std::move(l));
}

Value DictExpr::eval(Context& ctx) const {
  Dict d;
  for (const auto& [ke, ve] : items) {
    const Value k = ke->eval(ctx);
    ctx.line = line;
    const std::optional<std::string> stored = dict_key(k);
    if (!stored) throw EvalError(fmt::format("dict keys must be strings or integers here, not {}", k.type_name()));
    Value v = ve->eval(ctx);
    bool replaced = false;
    for (auto& [dk, dv] : d) {
      if (dk == *stored) {
        dv = v;
        replaced = true;
      }
    }
    if (!replaced) d.emplace_back(*stored, std::move(v));
  }
  return Value(std::move(d));
}

Value Getattr::eval(Context& ctx) const {
  const Value o = obj->eval(ctx);
  ctx.line = line;
  if (!name.empty() && name[0] >= '0' && name[0] <= '9') {  // a.0 is a[0]
    int64_t i = 0;
    for (char c : name) i = i > (INT64_MAX - 9) / 10 ? INT64_MAX : i * 10 + (c - '0');
    return get_item(o, Value(i));
  }
  return get_attribute(o, name);
}

Value Getitem::eval(Context& ctx) const {
  const Value o = obj->eval(ctx);
  const Value k = key->eval(ctx);
  ctx.line = line;
  return get_item(o, k);
}

Value SliceExpr::eval(Context& ctx) const {
  const Value o = obj->eval(ctx);
  auto part = [&](const ExprPtr& e) -> std::optional<int64_t> {
    if (!e) return std::nullopt;
    const Value v = e->eval(ctx);
    if (v.is_none()) return std::nullopt;
    if (v.kind() != Value::Kind::integer && v.kind() != Value::Kind::boolean) {
      throw EvalError(fmt::format("slice indices must be integers or None, not {}", v.type_name()));
    }
    return v.as_int();
  };
  const auto b = part(start), e = part(stop), s = part(step);
  ctx.line = line;
  check_defined(o);
  std::vector<std::string> chars;
  const List* items = nullptr;
  if (o.is_string()) {
    chars = code_points(o.str());
  } else if (o.is_list()) {
    items = &o.list();
  } else {
    throw EvalError(fmt::format("'{}' object is not subscriptable", o.type_name()));
  }
  const int64_t n = static_cast<int64_t>(items ? items->size() : chars.size());
  const int64_t st = s.value_or(1);
  if (st == 0) throw EvalError("slice step cannot be zero");
  // Python's slice.indices
  auto clamp = [&](std::optional<int64_t> v, int64_t def, bool is_start) {
    if (!v) return def;
    int64_t x = *v < 0 ? *v + n : *v;
    if (st > 0) return std::clamp<int64_t>(x, 0, n);
    (void)is_start;
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  const int64_t lo = clamp(b, st > 0 ? 0 : n - 1, true), hi = clamp(e, st > 0 ? n : -1, false);
  List out_list;
  std::string out_str;
  for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) {
    if (items) {
      out_list.push_back((*items)[static_cast<size_t>(i)]);
    } else {
      out_str += chars[static_cast<size_t>(i)];
    }
  }
  return items ? Value(std::move(out_list)) : Value(std::move(out_str));
}

Value Call::eval(Context& ctx) const {
  const Value f = callee->eval(ctx);
  const Arguments a = eval_args(ctx, args);
  ctx.line = line;
  ctx.step();
  check_defined(f);
  if (!f.is_function()) throw EvalError(fmt::format("'{}' object is not callable", f.type_name()));
  DepthGuard g(ctx);
  return f.call(a.positional, a.keyword);
}

Value FilterExpr::eval(Context& ctx) const {
  const Value s = subject->eval(ctx);
  const Arguments a = eval_args(ctx, args);
  ctx.line = line;
  ctx.step();
  return apply_filter(ctx, name, s, a.positional, a.keyword);
}

Value TestExpr::eval(Context& ctx) const {
  const Value s = subject->eval(ctx);
  const Arguments a = eval_args(ctx, args);
  ctx.line = line;
  if (!a.keyword.empty()) throw EvalError(fmt::format("the test '{}' takes no keyword arguments", name));
  return Value(apply_test(ctx, name, s, a.positional) != negated);
}

Value Unary::eval(Context& ctx) const {
  const Value v = operand->eval(ctx);
  ctx.line = line;
  if (op == '!') return Value(!v.truthy());
  check_defined(v);
  if (!is_numeric(v)) throw EvalError(fmt::format("bad operand type for unary {}: '{}'", op, v.type_name()));
  if (op == '+') return v.kind() == Value::Kind::boolean ? Value(v.as_int()) : v;
  if (v.kind() == Value::Kind::real) return Value(-v.as_double());
  if (v.as_int() == INT64_MIN) throw EvalError("integer overflow in unary -");
  return Value(-v.as_int());
}

Value Binary::eval(Context& ctx) const {
  const Value a = lhs->eval(ctx);
  const Value b = rhs->eval(ctx);
  ctx.line = line;
  ctx.step();
  if (op == "~") {
    std::string s = a.to_string() + b.to_string();
    ctx.check_output(s);
    return Value(std::move(s));
  }
  if (op == "%" && a.is_string()) throw EvalError("string formatting with % is not supported in chat templates");
  Value r = arithmetic(op, a, b);
  if (r.is_string()) ctx.check_output(r.str());
  return r;
}

Value Logical::eval(Context& ctx) const {
  Value a = lhs->eval(ctx);
  if (is_and ? !a.truthy() : a.truthy()) return a;
  return rhs->eval(ctx);
}

Value Compare::eval(Context& ctx) const {
  Value a = first->eval(ctx);
  for (const auto& [op, e] : rest) {
    const Value b = e->eval(ctx);
    ctx.line = line;
    bool r;
    if (op == "==") {
      r = a.equals(b);
    } else if (op == "!=") {
      r = !a.equals(b);
    } else if (op == "in") {
      r = contains(b, a);
    } else if (op == "not in") {
      r = !contains(b, a);
    } else if (op == "<") {
      r = less_than(a, b);
    } else if (op == ">") {
      r = less_than(b, a);
    } else if (op == "<=") {
      r = !less_than(b, a);
    } else {
      r = !less_than(a, b);
    }
    if (!r) return Value(false);
    a = b;
  }
  return Value(true);
}

Value CondExpr::eval(Context& ctx) const {
  if (cond->eval(ctx).truthy()) return then->eval(ctx);
  if (otherwise) return otherwise->eval(ctx);
  return Value::undefined("the conditional expression has no else branch");
}

// ---- statements ------------------------------------------------------------------------------

namespace {

void render_body(Context& ctx, const Body& body, std::string& out) {
  for (const auto& n : body) {
    n->render(ctx, out);
    if (ctx.jump != Context::Jump::none) return;
  }
}

void assign_targets(Context& ctx, const std::vector<std::string>& targets, const Value& v) {
  if (targets.size() == 1) {
    ctx.assign(targets[0], v);
    return;
  }
  const List items = iterate(v);
  if (items.size() != targets.size()) {
    throw EvalError(fmt::format("cannot unpack {} values into {} names", items.size(), targets.size()));
  }
  for (size_t i = 0; i < targets.size(); ++i) ctx.assign(targets[i], items[i]);
}

}  // namespace

void TextNode::render(Context& ctx, std::string& out) const {
  out += text;
  ctx.check_output(out);
}

void OutputNode::render(Context& ctx, std::string& out) const {
  ctx.line = line;
  ctx.step();
  out += expr->eval(ctx).to_string();
  ctx.check_output(out);
}

void IfNode::render(Context& ctx, std::string& out) const {
  for (const auto& [cond, body] : branches) {
    ctx.line = cond->line;
    if (cond->eval(ctx).truthy()) {
      render_body(ctx, body, out);
      return;
    }
  }
  render_body(ctx, otherwise, out);
}

void ForNode::render(Context& ctx, std::string& out) const {
  ctx.line = line;
  const Value seq = iter->eval(ctx);
  ctx.line = line;
  if (seq.is_none() || seq.is_number() || seq.kind() == Value::Kind::boolean || seq.is_function()) {
    throw EvalError(fmt::format("'{}' object is not iterable", seq.type_name()));
  }
  List items = iterate(seq);
  if (filter) {  // {% for x in xs if cond %}: loop counts only the items kept
    List kept;
    for (const Value& item : items) {
      ctx.push(std::make_shared<Dict>());
      assign_targets(ctx, targets, item);
      const bool keep = filter->eval(ctx).truthy();
      ctx.pop();
      if (keep) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    render_body(ctx, otherwise, out);
    return;
  }
  DepthGuard g(ctx);
  const int64_t n = static_cast<int64_t>(items.size());
  for (int64_t i = 0; i < n; ++i) {
    ctx.step();
    Dict loop{{"index", Value(i + 1)},
              {"index0", Value(i)},
              {"revindex", Value(n - i)},
              {"revindex0", Value(n - i - 1)},
              {"first", Value(i == 0)},
              {"last", Value(i == n - 1)},
              {"length", Value(n)},
              {"depth", Value(1)},
              {"depth0", Value(0)},
              {"previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item")},
              {"nextitem", i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item")}};
    loop.emplace_back("cycle", Value::function("loop.cycle", [i](const List& args, const Kwargs&) {
                        if (args.empty()) throw EvalError("loop.cycle() needs at least one argument");
                        return args[static_cast<size_t>(i) % args.size()];
                      }));
    ctx.push(std::make_shared<Dict>());
    ctx.assign("loop", Value(std::move(loop)));
    assign_targets(ctx, targets, items[static_cast<size_t>(i)]);
    render_body(ctx, body, out);
    ctx.pop();
    const Context::Jump jump = ctx.jump;
    ctx.jump = Context::Jump::none;
    if (jump == Context::Jump::break_loop) break;
  }
}

void SetNode::render(Context& ctx, std::string& out) const {
  (void)out;
  const Value v = value->eval(ctx);
  ctx.line = line;
  if (attribute.empty()) {
    assign_targets(ctx, targets, v);
    return;
  }
  const Value ns = ctx.lookup(targets[0]);
  if (!ns.is_namespace()) {
    throw EvalError(fmt::format("cannot assign attribute on non-namespace object '{}'", targets[0]));
  }
  // (a namespace holding a namespace could hold itself: a cycle that repr and memory never end)
  if (v.holds_namespace()) throw EvalError("a namespace attribute cannot hold a namespace");
  Dict& attrs = ns.namespace_attributes();
  for (auto& [k, old] : attrs) {
    if (k == attribute) {
      old = v;
      return;
    }
  }
  attrs.emplace_back(attribute, v);
}

void SetBlockNode::render(Context& ctx, std::string& out) const {
  (void)out;
  std::string captured;
  render_body(ctx, body, captured);
  ctx.assign(target, Value(std::move(captured)));
}

void MacroNode::render(Context& ctx, std::string& out) const {
  (void)out;
  // A macro sees the caller's globals and the template's top-level variables at the time of the
  // call (frames 0 and 1), plus its own arguments. It holds those frames weakly: it is stored in
  // one of them, and a strong hold would be a cycle that outlives the render.
  const std::weak_ptr<Dict> globals = ctx.frames()[0], top = ctx.frames()[1];
  const MacroNode* self = this;
  Context* c = &ctx;
  ctx.assign(name, Value::function(name, [self, c, globals, top](const List& args, const Kwargs& kwargs) {
    if (args.size() > self->params.size()) {
      throw EvalError(fmt::format("macro '{}' takes {} arguments, {} given", self->name, self->params.size(), args.size()));
    }
    std::vector<Frame> defined_in{globals.lock(), top.lock()};
    if (!defined_in[0] || !defined_in[1]) throw EvalError(fmt::format("macro '{}' called after its render", self->name));
    auto locals = std::make_shared<Dict>();
    std::vector<Frame> saved = std::move(c->frames());
    c->frames() = std::move(defined_in);
    c->push(locals);
    try {
      for (size_t i = 0; i < self->params.size(); ++i) {
        const auto& [pname, def] = self->params[i];
        Value v;
        if (i < args.size()) {
          v = args[i];
        } else {
          bool found = false;
          for (const auto& [k, kv] : kwargs) {
            if (k == pname) {
              v = kv;
              found = true;
            }
          }
          if (!found) v = def ? def->eval(*c) : Value::undefined("'" + pname + "' is undefined");
        }
        c->assign(pname, v);
      }
      for (const auto& [k, kv] : kwargs) {
        bool known = false;
        for (const auto& p : self->params) known |= p.first == k;
        if (!known) throw EvalError(fmt::format("macro '{}' has no argument '{}'", self->name, k));
      }
      std::string rendered;
      render_body(*c, self->body, rendered);
      c->jump = Context::Jump::none;
      c->frames() = std::move(saved);
      return Value(std::move(rendered));
    } catch (...) {
      c->frames() = std::move(saved);
      throw;
    }
  }));
}

void LoopControlNode::render(Context& ctx, std::string& out) const {
  (void)out;
  ctx.jump = is_break ? Context::Jump::break_loop : Context::Jump::continue_loop;
}

void FilterBlockNode::render(Context& ctx, std::string& out) const {
  std::string captured;
  render_body(ctx, body, captured);
  const Arguments a = eval_args(ctx, args);
  ctx.line = line;
  out += apply_filter(ctx, name, Value(std::move(captured)), a.positional, a.keyword).to_string();
  ctx.check_output(out);
}

void BodyNode::render(Context& ctx, std::string& out) const { render_body(ctx, body, out); }

// ---- Template --------------------------------------------------------------------------------

// Jinja drops one newline at the end of a template (keep_trailing_newline is off).
std::string_view without_trailing_newline(std::string_view s) {
  if (!s.empty() && s.back() == '\n') s.remove_suffix(s.size() >= 2 && s[s.size() - 2] == '\r' ? 2 : 1);
  return s;
}

Template::Template(std::string_view source, std::string where)
    : where_(std::move(where)), root_(parse_template(without_trailing_newline(source), where_)) {}
Template::~Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

std::string Template::render(const Value& context, std::string_view date) const {
  Context ctx{std::string(date)};
  auto globals = std::make_shared<Dict>(make_globals(ctx));
  if (context.is_dict()) {
    for (const auto& [k, v] : context.dict()) {
      bool replaced = false;
      for (auto& [gk, gv] : *globals) {
        if (gk == k) {
          gv = v;
          replaced = true;
        }
      }
      if (!replaced) globals->emplace_back(k, v);
    }
  }
  ctx.push(globals);
  ctx.push(std::make_shared<Dict>());
  std::string out;
  try {
    root_->render(ctx, out);
  } catch (const RaiseCalled& e) {
    throw RaisedError(fmt::format("{}:{}: the chat template raised an exception: {}", where_, ctx.line, e.what()),
                      e.what());
  } catch (const EvalError& e) {
    throw TemplateError(fmt::format("{}:{}: {}", where_, ctx.line, e.what()));
  }
  return out;
}

}  // namespace abl::text::jinja
