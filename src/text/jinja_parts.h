// Internal parts of the Jinja interpreter (jinja.h): the syntax tree, the lexer and parser that
// build it (jinja_parser.cpp), the rendering context (jinja_render.cpp) and the built-in filters,
// tests, methods and globals (jinja_builtins.cpp).
#pragma once
#include <memory>
#include <stdexcept>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "abl/text/jinja.h"

namespace abl::text::jinja {

// Bounds on what an untrusted template may cost: nesting of expressions, calls and values,
// evaluation steps, and the size of what it renders.
constexpr int kMaxDepth = 256;
constexpr int64_t kMaxSteps = 200'000;  // a chat template's render takes hundreds
constexpr size_t kMaxOutput = size_t{64} << 20;

// A failure while rendering, without its place: Template::render adds the template and line.
class EvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failure of raise_exception(message).
class RaiseCalled : public EvalError {
 public:
  using EvalError::EvalError;
};

class Context;

struct Expr {
  int line = 0;
  virtual ~Expr() = default;
  virtual Value eval(Context& ctx) const = 0;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Node {
  int line = 0;
  virtual ~Node() = default;
  virtual void render(Context& ctx, std::string& out) const = 0;
};
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

// ---- expressions -----------------------------------------------------------------------------

struct Literal : Expr {
  Value value;
  Value eval(Context&) const override { return value; }
};
struct NameRef : Expr {
  std::string name;
  Value eval(Context& ctx) const override;
};
struct ListExpr : Expr {  // [a, b], and (a, b) as a tuple
  std::vector<ExprPtr> items;
  bool tuple = false;
  Value eval(Context& ctx) const override;
};
struct DictExpr : Expr {
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
  Value eval(Context& ctx) const override;
};
struct Getattr : Expr {  // obj.name
  ExprPtr obj;
  std::string name;
  Value eval(Context& ctx) const override;
};
struct Getitem : Expr {  // obj[key]
  ExprPtr obj, key;
  Value eval(Context& ctx) const override;
};
struct SliceExpr : Expr {  // obj[start:stop:step], each part optional
  ExprPtr obj, start, stop, step;
  Value eval(Context& ctx) const override;
};
struct CallArgs {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};
struct Call : Expr {
  ExprPtr callee;
  CallArgs args;
  Value eval(Context& ctx) const override;
};
struct FilterExpr : Expr {  // subject | name(args)
  ExprPtr subject;
  std::string name;
  CallArgs args;
  Value eval(Context& ctx) const override;
};
struct TestExpr : Expr {  // subject is [not] name(args)
  ExprPtr subject;
  std::string name;
  CallArgs args;
  bool negated = false;
  Value eval(Context& ctx) const override;
};
struct Unary : Expr {  // - + not
  char op;
  ExprPtr operand;
  Value eval(Context& ctx) const override;
};
struct Binary : Expr {  // + - * / // % ** ~
  std::string op;
  ExprPtr lhs, rhs;
  Value eval(Context& ctx) const override;
};
struct Logical : Expr {  // and, or (short-circuit, the deciding operand is the value)
  bool is_and;
  ExprPtr lhs, rhs;
  Value eval(Context& ctx) const override;
};
struct Compare : Expr {  // a op b [op c ...]: == != < <= > >= in, "not in"
  ExprPtr first;
  std::vector<std::pair<std::string, ExprPtr>> rest;
  Value eval(Context& ctx) const override;
};
struct CondExpr : Expr {  // then if cond else otherwise (otherwise optional: undefined)
  ExprPtr then, cond, otherwise;
  Value eval(Context& ctx) const override;
};

// ---- statements ------------------------------------------------------------------------------

struct TextNode : Node {
  std::string text;
  void render(Context&, std::string& out) const override;
};
struct OutputNode : Node {  // {{ expr }}
  ExprPtr expr;
  void render(Context& ctx, std::string& out) const override;
};
struct IfNode : Node {
  std::vector<std::pair<ExprPtr, Body>> branches;  // if and elif
  Body otherwise;
  void render(Context& ctx, std::string& out) const override;
};
struct ForNode : Node {
  std::vector<std::string> targets;  // for a, b in ...
  ExprPtr iter, filter;
  Body body, otherwise;
  void render(Context& ctx, std::string& out) const override;
};
struct SetNode : Node {  // set a = ..., set a, b = ..., set ns.attr = ...
  std::vector<std::string> targets;
  std::string attribute;  // set targets[0].attribute
  ExprPtr value;
  void render(Context& ctx, std::string& out) const override;
};
struct SetBlockNode : Node {  // set name %}...{% endset
  std::string target;
  Body body;
  void render(Context& ctx, std::string& out) const override;
};
struct MacroNode : Node {
  std::string name;
  std::vector<std::pair<std::string, ExprPtr>> params;  // default may be null
  Body body;
  void render(Context& ctx, std::string& out) const override;
};
struct LoopControlNode : Node {  // break, continue
  bool is_break;
  void render(Context& ctx, std::string& out) const override;
};
struct FilterBlockNode : Node {  // filter name(args) %}...{% endfilter
  std::string name;
  CallArgs args;
  Body body;
  void render(Context& ctx, std::string& out) const override;
};
struct BodyNode : Node {  // the template, and {% generation %} blocks
  Body body;
  void render(Context& ctx, std::string& out) const override;
};

// Parses a template into its body (jinja_parser.cpp).
std::unique_ptr<BodyNode> parse_template(std::string_view source, const std::string& where);

// ---- rendering context -----------------------------------------------------------------------

using Frame = std::shared_ptr<Dict>;

class Context {
 public:
  explicit Context(std::string date) : date_(std::move(date)) {}

  Value lookup(const std::string& name) const;
  void assign(const std::string& name, Value v);  // in the innermost frame
  void push(Frame f) { frames_.push_back(std::move(f)); }
  void pop() { frames_.pop_back(); }
  std::vector<Frame>& frames() { return frames_; }

  // One unit of work; throws past kMaxSteps.
  void step();
  // Entered/left around every nested evaluation; throws past kMaxDepth.
  void enter();
  void leave() { --depth_; }
  void check_output(const std::string& out) const;

  int line = 0;                   // of the node being evaluated, for messages
  enum class Jump { none, break_loop, continue_loop } jump = Jump::none;
  const std::string& date() const { return date_; }

 private:
  std::vector<Frame> frames_;  // [0] globals and the caller's variables, [1] the template's own
  std::string date_;
  int64_t steps_ = 0;
  int depth_ = 0;
};

// RAII for Context::enter/leave.
class DepthGuard {
 public:
  explicit DepthGuard(Context& ctx) : ctx_(ctx) { ctx_.enter(); }
  ~DepthGuard() { ctx_.leave(); }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  Context& ctx_;
};

// ---- built-ins (jinja_builtins.cpp) ----------------------------------------------------------

// The globals transformers gives chat templates (and range, dict, namespace from Jinja).
Dict make_globals(const Context& ctx);
Value apply_filter(Context& ctx, const std::string& name, const Value& subject, const List& args,
                   const Kwargs& kwargs);
bool apply_test(Context& ctx, const std::string& name, const Value& subject, const List& args);
// obj.name: a dict's item or method, a string's or list's method, a namespace's attribute.
Value get_attribute(const Value& obj, const std::string& name);
// obj[key]: an item, then an attribute (Jinja's order); undefined when neither.
Value get_item(const Value& obj, const Value& key);
// Iterating a value as a for loop does: list items, dict keys, string characters.
List iterate(const Value& v);
[[noreturn]] void undefined_error(const Value& v);
// Python's len() of a string in code points, and its code points.
std::vector<std::string> code_points(const std::string& s);
// Python's `a < b` for numbers and strings.
bool less_than(const Value& a, const Value& b);
// Dict keys as Dict stores them: a str as it is, an int (Python's dicts take any hashable; chat
// templates use ints, as Seed-OSS's table of thinking budgets) as the byte 0xff and its decimal digits:
// no UTF-8 string holds that byte, so the two never meet. nullopt for kinds not taken as keys here.
std::optional<std::string> dict_key(const Value& key);
// The key a stored Dict key stands for (a str or an int).
Value key_of(const std::string& stored);

}  // namespace abl::text::jinja
