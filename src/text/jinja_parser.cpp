// Jinja lexer and parser. Whitespace is controlled as transformers compiles chat templates:
// trim_blocks (the newline after a block or comment tag goes), lstrip_blocks (spaces and tabs
// before a block or comment tag at the start of a line go), and the tags' own - and + marks.
// Operator precedence and the places where tests and filters bind follow Jinja2's parser.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "abl/text/jinja.h"
#include "jinja_parts.h"
#include "tokenizer_parts.h"

namespace abl::text::jinja {
namespace {

enum class Tok { text, var_begin, var_end, block_begin, block_end, name, string, integer, real, op, end };

struct Token {
  Tok type;
  std::string value;
  int line;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  Lexer(std::string_view src, const std::string& where) : src_(src), where_(where) {}

  std::vector<Token> run() {
    bool line_starting = true;  // the text that follows starts a line (for lstrip_blocks)
    while (pos_ < src_.size()) {
      const size_t open = find_tag(pos_);
      std::string text(src_.substr(pos_, (open == std::string_view::npos ? src_.size() : open) - pos_));
      if (open == std::string_view::npos) {
        emit_text(std::move(text));
        count_lines(pos_, src_.size());
        break;
      }
      const char kind = src_[open + 1];
      const char mark = open + 2 < src_.size() ? src_[open + 2] : '\0';
      if (mark == '-') {
        text.erase(text.find_last_not_of(" \t\n\r\f\v") + 1);
      } else if (kind != '{' && mark != '+') {  // lstrip_blocks
        const size_t l = text.rfind('\n') + 1;  // 0 when there is none
        if ((l > 0 || line_starting) && text.find_first_not_of(" \t\r\f\v", l) == std::string::npos) text.erase(l);
      }
      emit_text(std::move(text));
      count_lines(pos_, open);
      pos_ = open + 2 + ((mark == '-' || mark == '+') ? 1 : 0);
      size_t end_at;  // where the tag's closing delimiter (and its mark) starts
      if (kind == '#') {
        const size_t close = src_.find("#}", pos_);
        if (close == std::string_view::npos) fail_at(line_, "unclosed comment");
        end_at = close > pos_ && (src_[close - 1] == '-' || src_[close - 1] == '+') ? close - 1 : close;
        count_lines(pos_, close + 2);
        pos_ = close + 2;
      } else {
        const int tag_line = line_;
        tokens_.push_back({kind == '{' ? Tok::var_begin : Tok::block_begin, "", line_});
        end_at = lex_expression(kind == '{' ? '}' : '%');
        tokens_.push_back({kind == '{' ? Tok::var_end : Tok::block_end, "", line_});
        if (kind == '%' && is_raw_start()) {
          lex_raw(tag_line);
          line_starting = false;
          continue;
        }
      }
      const char end_mark = src_[end_at];
      if (end_mark == '-') {
        while (pos_ < src_.size() && is_space(src_[pos_])) {
          if (src_[pos_] == '\n') ++line_;
          ++pos_;
        }
      } else if (kind != '{' && end_mark != '+' && pos_ < src_.size() && src_[pos_] == '\n') {  // trim_blocks
        ++pos_;
        ++line_;
      }
      line_starting = pos_ > 0 && src_[pos_ - 1] == '\n';
    }
    tokens_.push_back({Tok::end, "", line_});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail_at(int line, const std::string& msg) const {
    throw TemplateError(fmt::format("{}:{}: {}", where_, line, msg));
  }

  size_t find_tag(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string_view::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string_view::npos;
  }

  void count_lines(size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) line_ += src_[i] == '\n';
  }

  void emit_text(std::string text) {
    if (!text.empty()) tokens_.push_back({Tok::text, std::move(text), line_});
  }

  // Tokens up to the closing `}}` or `%}` at bracket depth 0; returns the index of the closing
  // delimiter's first character, or of its - or + mark.
  size_t lex_expression(char close) {
    int depth = 0;
    const int start_line = line_;
    while (true) {
      while (pos_ < src_.size() && is_space(src_[pos_])) {
        if (src_[pos_] == '\n') ++line_;
        ++pos_;
      }
      if (pos_ >= src_.size()) fail_at(start_line, std::string("unclosed tag: missing '") + close + "}'");
      const char c = src_[pos_];
      if (depth == 0) {
        const bool marked = (c == '-' || c == '+') && pos_ + 2 < src_.size() && src_[pos_ + 1] == close &&
                            src_[pos_ + 2] == '}';
        if (marked || (c == close && pos_ + 1 < src_.size() && src_[pos_ + 1] == '}')) {
          const size_t at = pos_;
          pos_ += marked ? 3 : 2;
          return at;
        }
      }
      if (is_name_start(c)) {
        const size_t b = pos_;
        while (pos_ < src_.size() && (is_name_start(src_[pos_]) || is_digit(src_[pos_]))) ++pos_;
        tokens_.push_back({Tok::name, std::string(src_.substr(b, pos_ - b)), line_});
      } else if (is_digit(c)) {
        lex_number();
      } else if (c == '\'' || c == '"') {
        lex_string(c);
      } else {
        static const char* const ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<",
                                          ">", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|", "="};
        const char* match = nullptr;
        for (const char* op : ops) {
          if (src_.compare(pos_, std::strlen(op), op) == 0) {
            match = op;
            break;
          }
        }
        if (!match) fail_at(line_, fmt::format("unexpected character '{}'", c));
        if (std::strchr("([{", match[0]) && match[1] == '\0') ++depth;
        if (std::strchr(")]}", match[0]) && match[1] == '\0') {
          if (depth == 0) fail_at(line_, fmt::format("unexpected '{}'", match));
          --depth;
        }
        tokens_.push_back({Tok::op, match, line_});
        pos_ += std::strlen(match);
      }
    }
  }

  void lex_number() {
    const size_t b = pos_;
    bool real = false;
    auto digits = [&] {
      while (pos_ < src_.size() && (is_digit(src_[pos_]) || src_[pos_] == '_')) ++pos_;
    };
    digits();
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
      real = true;
      ++pos_;
      digits();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && is_digit(src_[p])) {
        real = true;
        pos_ = p;
        digits();
      }
    }
    std::string text;
    for (size_t i = b; i < pos_; ++i) {
      if (src_[i] != '_') text += src_[i];
    }
    tokens_.push_back({real ? Tok::real : Tok::integer, text, line_});
  }

  // A string literal with Python's escapes (Jinja decodes them with unicode-escape); an unknown
  // escape keeps its backslash.
  void lex_string(char quote) {
    const int start_line = line_;
    std::string out;
    ++pos_;
    while (true) {
      if (pos_ >= src_.size()) fail_at(start_line, "unclosed string literal");
      const char c = src_[pos_++];
      if (c == quote) break;
      if (c == '\n') ++line_;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= src_.size()) fail_at(start_line, "unclosed string literal");
      const char e = src_[pos_++];
      auto hex = [&](int n) {
        uint32_t cp = 0;
        for (int i = 0; i < n; ++i) {
          if (pos_ >= src_.size() || !std::isxdigit(static_cast<unsigned char>(src_[pos_]))) {
            fail_at(line_, "truncated \\x, \\u or \\U escape in a string literal");
          }
          const char h = src_[pos_++];
          cp = cp * 16 + static_cast<uint32_t>(is_digit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) fail_at(line_, "invalid code point in a string escape");
        tok::append_utf8(out, static_cast<char32_t>(cp));
      };
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case '0': out += '\0'; break;
        case '\n': ++line_; break;  // a backslash-newline continues the line
        case 'x': hex(2); break;
        case 'u': hex(4); break;
        case 'U': hex(8); break;
        default:
          out += '\\';
          out += e;
      }
    }
    tokens_.push_back({Tok::string, std::move(out), start_line});
  }

  // The block just lexed is `{% raw %}`: its tokens are replaced by the text up to {% endraw %}.
  bool is_raw_start() const {
    const size_t n = tokens_.size();
    return n >= 3 && tokens_[n - 3].type == Tok::block_begin && tokens_[n - 2].type == Tok::name &&
           tokens_[n - 2].value == "raw" && tokens_[n - 1].type == Tok::block_end;
  }

  void lex_raw(int line) {
    tokens_.resize(tokens_.size() - 3);
    for (size_t i = src_.find("{%", pos_); i != std::string_view::npos; i = src_.find("{%", i + 2)) {
      size_t p = i + 2;
      const bool strip_before = p < src_.size() && src_[p] == '-';
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
      while (p < src_.size() && is_space(src_[p])) ++p;
      if (src_.compare(p, 6, "endraw") != 0) continue;
      p += 6;
      while (p < src_.size() && is_space(src_[p])) ++p;
      const bool strip_after = p < src_.size() && src_[p] == '-';
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
      if (src_.compare(p, 2, "%}") != 0) continue;
      std::string text(src_.substr(pos_, i - pos_));
      if (strip_before) text.erase(text.find_last_not_of(" \t\n\r\f\v") + 1);
      emit_text(std::move(text));
      count_lines(pos_, p + 2);
      pos_ = p + 2;
      if (strip_after) {
        while (pos_ < src_.size() && is_space(src_[pos_])) {
          if (src_[pos_] == '\n') ++line_;
          ++pos_;
        }
      } else if (pos_ < src_.size() && src_[pos_] == '\n') {
        ++pos_;
        ++line_;
      }
      return;
    }
    fail_at(line, "{% raw %} without {% endraw %}");
  }

  std::string_view src_;
  const std::string& where_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

template <typename T>
std::unique_ptr<T> make(int line) {
  auto p = std::make_unique<T>();
  p->line = line;
  return p;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, const std::string& where) : t_(std::move(tokens)), where_(where) {}

  std::unique_ptr<BodyNode> run() {
    auto root = make<BodyNode>(1);
    std::string stop;
    root->body = parse_body({}, &stop);
    return root;
  }

 private:
  [[noreturn]] void fail_at(int line, const std::string& msg) const {
    throw TemplateError(fmt::format("{}:{}: {}", where_, line, msg));
  }
  const Token& cur() const { return t_[i_]; }
  const Token& peek(size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  bool at_op(const char* op) const { return cur().type == Tok::op && cur().value == op; }
  bool at_name(const char* n) const { return cur().type == Tok::name && cur().value == n; }
  std::string describe(const Token& t) const {
    switch (t.type) {
      case Tok::end: return "the end of the template";
      case Tok::var_end: return "'}}'";
      case Tok::block_end: return "'%}'";
      case Tok::text: return "text";
      default: return "'" + t.value + "'";
    }
  }
  void expect_op(const char* op) {
    if (!at_op(op)) fail_at(cur().line, fmt::format("expected '{}', found {}", op, describe(cur())));
    ++i_;
  }
  std::string expect_name() {
    if (cur().type != Tok::name) fail_at(cur().line, fmt::format("expected a name, found {}", describe(cur())));
    return t_[i_++].value;
  }
  void expect_block_end() {
    if (cur().type != Tok::block_end) fail_at(cur().line, fmt::format("expected '%}}', found {}", describe(cur())));
    ++i_;
  }
  void enter(int line) {
    if (++depth_ > kMaxDepth) fail_at(line, "template nested too deeply");
  }

  // Statements up to a block tag named in `ends` (its name consumed, stored in *stop) or the end.
  Body parse_body(std::initializer_list<const char*> ends, std::string* stop) {
    Body body;
    while (true) {
      const Token& tok = cur();
      if (tok.type == Tok::end) {
        if (ends.size()) fail_at(tok.line, fmt::format("missing {{% {} %}}", *(ends.end() - 1)));
        return body;
      }
      if (tok.type == Tok::text) {
        auto n = make<TextNode>(tok.line);
        n->text = tok.value;
        body.push_back(std::move(n));
        ++i_;
      } else if (tok.type == Tok::var_begin) {
        ++i_;
        auto n = make<OutputNode>(tok.line);
        n->expr = parse_expression();
        if (cur().type != Tok::var_end) fail_at(cur().line, fmt::format("expected '}}}}', found {}", describe(cur())));
        ++i_;
        body.push_back(std::move(n));
      } else if (tok.type == Tok::block_begin) {
        ++i_;
        const int line = cur().line;
        const std::string name = expect_name();
        for (const char* e : ends) {
          if (name == e) {
            *stop = name;
            return body;
          }
        }
        body.push_back(parse_statement(name, line));
      } else {
        fail_at(tok.line, fmt::format("unexpected {}", describe(tok)));
      }
    }
  }

  // item() for each element of a comma-separated list up to `close` (a trailing comma allowed),
  // `close` consumed.
  template <typename F>
  void comma_separated(const char* close, F&& item) {
    while (!at_op(close)) {
      item();
      if (!at_op(close)) expect_op(",");
    }
    ++i_;
  }

  // A [...] or {...} literal from its opening bracket: `item` parses each element into the node.
  template <typename T, typename F>
  ExprPtr bracketed(int line, const char* close, F&& item) {
    ++i_;
    enter(line);
    auto n = make<T>(line);
    comma_separated(close, [&] { item(*n); });
    --depth_;
    return n;
  }

  // A block's body up to {% END %}, the end tag consumed.
  Body parse_until(const char* end) {
    std::string stop;
    Body body = parse_body({end}, &stop);
    expect_block_end();
    return body;
  }

  NodePtr parse_statement(const std::string& name, int line) {
    enter(line);
    NodePtr n;
    if (name == "if") {
      n = parse_if(line);
    } else if (name == "for") {
      n = parse_for(line);
    } else if (name == "set") {
      n = parse_set(line);
    } else if (name == "macro") {
      n = parse_macro(line);
    } else if (name == "break" || name == "continue") {
      auto c = make<LoopControlNode>(line);
      c->is_break = name == "break";
      expect_block_end();
      n = std::move(c);
    } else if (name == "filter") {
      auto f = make<FilterBlockNode>(line);
      f->name = expect_name();
      if (at_op("(")) f->args = parse_call_args();
      expect_block_end();
      f->body = parse_until("endfilter");
      n = std::move(f);
    } else if (name == "generation") {  // transformers' assistant-mask extension: renders its body
      expect_block_end();
      auto g = make<BodyNode>(line);
      g->body = parse_until("endgeneration");
      n = std::move(g);
    } else if (name == "elif" || name == "else" || name.rfind("end", 0) == 0) {
      fail_at(line, fmt::format("unexpected {{% {} %}}", name));
    } else {
      fail_at(line, fmt::format("the tag {{% {} %}} is not supported in chat templates", name));
    }
    --depth_;
    return n;
  }

  NodePtr parse_if(int line) {
    auto n = make<IfNode>(line);
    ExprPtr cond = parse_expression();
    expect_block_end();
    while (true) {
      std::string stop;
      Body body = parse_body({"elif", "else", "endif"}, &stop);
      n->branches.emplace_back(std::move(cond), std::move(body));
      if (stop == "elif") {
        cond = parse_expression();
        expect_block_end();
        continue;
      }
      expect_block_end();
      if (stop == "else") n->otherwise = parse_until("endif");
      return n;
    }
  }

  NodePtr parse_for(int line) {
    auto n = make<ForNode>(line);
    n->targets.push_back(expect_name());
    while (at_op(",")) {
      ++i_;
      n->targets.push_back(expect_name());
    }
    if (!at_name("in")) fail_at(cur().line, fmt::format("expected 'in', found {}", describe(cur())));
    ++i_;
    n->iter = parse_tuple(false);
    if (at_name("if")) {
      ++i_;
      n->filter = parse_expression();
    }
    if (at_name("recursive")) fail_at(cur().line, "recursive loops are not supported in chat templates");
    expect_block_end();
    std::string stop;
    n->body = parse_body({"else", "endfor"}, &stop);
    expect_block_end();
    if (stop == "else") n->otherwise = parse_until("endfor");
    return n;
  }

  NodePtr parse_set(int line) {
    std::vector<std::string> targets{expect_name()};
    std::string attribute;
    if (at_op(".")) {
      ++i_;
      attribute = expect_name();
    }
    while (attribute.empty() && at_op(",")) {
      ++i_;
      targets.push_back(expect_name());
    }
    if (at_op("=")) {
      ++i_;
      auto n = make<SetNode>(line);
      n->targets = std::move(targets);
      n->attribute = std::move(attribute);
      n->value = parse_tuple(true);
      expect_block_end();
      return n;
    }
    if (targets.size() != 1 || !attribute.empty()) fail_at(line, "a {% set %} block assigns one name");
    expect_block_end();
    auto n = make<SetBlockNode>(line);
    n->target = targets[0];
    n->body = parse_until("endset");
    return n;
  }

  NodePtr parse_macro(int line) {
    auto n = make<MacroNode>(line);
    n->name = expect_name();
    expect_op("(");
    comma_separated(")", [&] {
      std::string param = expect_name();
      ExprPtr def;
      if (at_op("=")) {
        ++i_;
        def = parse_expression();
      }
      n->params.emplace_back(std::move(param), std::move(def));
    });
    expect_block_end();
    std::string stop;
    n->body = parse_body({"endmacro"}, &stop);
    if (cur().type == Tok::name) ++i_;  // {% endmacro name %}
    expect_block_end();
    return n;
  }

  // expr, expr, ... as a tuple (a list value); one expression without a comma as itself.
  ExprPtr parse_tuple(bool allow_cond) {
    const int line = cur().line;
    ExprPtr first = allow_cond ? parse_expression() : parse_or();
    if (!at_op(",")) return first;
    auto list = make<ListExpr>(line);
    list->tuple = true;
    list->items.push_back(std::move(first));
    while (at_op(",")) {
      ++i_;
      if (cur().type == Tok::block_end || cur().type == Tok::var_end || at_name("if")) break;
      list->items.push_back(allow_cond ? parse_expression() : parse_or());
    }
    return list;
  }

  ExprPtr parse_expression() {
    enter(cur().line);
    ExprPtr e = parse_or();
    while (at_name("if")) {
      auto c = make<CondExpr>(cur().line);
      ++i_;
      c->then = std::move(e);
      c->cond = parse_or();
      if (at_name("else")) {
        ++i_;
        c->otherwise = parse_expression();
      }
      e = std::move(c);
    }
    --depth_;
    return e;
  }

  // `a or b or ...` and `a and b and ...`: `next` parses the operands.
  ExprPtr logical(const char* word, ExprPtr (Parser::*next)()) {
    ExprPtr e = (this->*next)();
    while (at_name(word)) {
      auto n = make<Logical>(cur().line);
      ++i_;
      n->is_and = std::strcmp(word, "and") == 0;
      n->lhs = std::move(e);
      n->rhs = (this->*next)();
      e = std::move(n);
    }
    return e;
  }
  ExprPtr parse_or() { return logical("or", &Parser::parse_and); }
  ExprPtr parse_and() { return logical("and", &Parser::parse_not); }

  ExprPtr parse_not() {
    if (at_name("not")) {
      auto n = make<Unary>(cur().line);
      ++i_;
      enter(n->line);
      n->op = '!';
      n->operand = parse_not();
      --depth_;
      return n;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const int line = cur().line;
    ExprPtr e = parse_math1();
    std::unique_ptr<Compare> cmp;
    while (true) {
      std::string op;
      if (cur().type == Tok::op && (cur().value == "==" || cur().value == "!=" || cur().value == "<" ||
                                    cur().value == "<=" || cur().value == ">" || cur().value == ">=")) {
        op = cur().value;
        ++i_;
      } else if (at_name("in")) {
        op = "in";
        ++i_;
      } else if (at_name("not") && peek().type == Tok::name && peek().value == "in") {
        op = "not in";
        i_ += 2;
      } else {
        break;
      }
      if (!cmp) {
        cmp = make<Compare>(line);
        cmp->first = std::move(e);
      }
      cmp->rest.emplace_back(op, parse_math1());
    }
    if (cmp) return cmp;
    return e;
  }

  // Left-associative operators of one precedence level (Jinja2's parse_math1, parse_concat,
  // parse_math2, parse_pow, lowest first): `next` parses the operands.
  ExprPtr left_assoc(std::initializer_list<const char*> ops, ExprPtr (Parser::*next)()) {
    ExprPtr e = (this->*next)();
    while (cur().type == Tok::op &&
           std::any_of(ops.begin(), ops.end(), [&](const char* op) { return cur().value == op; })) {
      auto n = make<Binary>(cur().line);
      n->op = t_[i_++].value;
      n->lhs = std::move(e);
      n->rhs = (this->*next)();
      e = std::move(n);
    }
    return e;
  }
  ExprPtr parse_math1() { return left_assoc({"+", "-"}, &Parser::parse_concat); }
  ExprPtr parse_concat() { return left_assoc({"~"}, &Parser::parse_math2); }
  ExprPtr parse_math2() { return left_assoc({"*", "/", "//", "%"}, &Parser::parse_pow); }
  ExprPtr parse_pow() { return left_assoc({"**"}, &Parser::parse_filtered_unary); }
  ExprPtr parse_filtered_unary() { return parse_unary(true); }

  ExprPtr parse_unary(bool with_filter) {
    const Token& tok = cur();
    ExprPtr e;
    if (at_op("-") || at_op("+")) {
      auto n = make<Unary>(tok.line);
      n->op = tok.value[0];
      ++i_;
      enter(n->line);
      n->operand = parse_unary(false);
      --depth_;
      e = std::move(n);
    } else {
      e = parse_postfix(parse_primary());
    }
    return with_filter ? parse_filters(std::move(e)) : std::move(e);
  }

  ExprPtr parse_primary() {
    const Token& tok = cur();
    const int line = tok.line;
    auto literal = [&](Value v) {
      auto n = make<Literal>(line);
      n->value = std::move(v);
      return n;
    };
    switch (tok.type) {
      case Tok::name: {
        ++i_;
        if (tok.value == "true" || tok.value == "True") return literal(Value(true));
        if (tok.value == "false" || tok.value == "False") return literal(Value(false));
        if (tok.value == "none" || tok.value == "None") return literal(Value::none());
        auto n = make<NameRef>(line);
        n->name = tok.value;
        return n;
      }
      case Tok::string: {
        std::string s;
        while (cur().type == Tok::string) s += t_[i_++].value;  // adjacent literals join
        return literal(Value(std::move(s)));
      }
      case Tok::integer: {
        ++i_;
        try {
          return literal(Value(static_cast<int64_t>(std::stoll(tok.value))));
        } catch (const std::out_of_range&) {
          fail_at(line, "integer literal out of range");
        }
      }
      case Tok::real:
        ++i_;
        return literal(Value(std::strtod(tok.value.c_str(), nullptr)));
      case Tok::op:
        if (tok.value == "(") {
          ++i_;
          enter(line);
          if (at_op(")")) {  // ()
            ++i_;
            --depth_;
            auto empty = make<ListExpr>(line);
            empty->tuple = true;
            return empty;
          }
          ExprPtr first = parse_expression();
          if (at_op(")")) {
            ++i_;
            --depth_;
            return first;
          }
          auto list = make<ListExpr>(line);  // (a,) and (a, b, ...): a tuple
          list->tuple = true;
          list->items.push_back(std::move(first));
          expect_op(",");
          comma_separated(")", [&] { list->items.push_back(parse_expression()); });
          --depth_;
          return list;
        }
        if (tok.value == "[") {
          return bracketed<ListExpr>(line, "]", [&](ListExpr& list) { list.items.push_back(parse_expression()); });
        }
        if (tok.value == "{") {
          return bracketed<DictExpr>(line, "}", [&](DictExpr& dict) {
            ExprPtr key = parse_expression();
            expect_op(":");
            dict.items.emplace_back(std::move(key), parse_expression());
          });
        }
        break;
      default:
        break;
    }
    fail_at(line, fmt::format("unexpected {}", describe(tok)));
  }

  // callee(args...), at its '('.
  ExprPtr parse_call(ExprPtr callee, int line) {
    auto n = make<Call>(line);
    n->callee = std::move(callee);
    n->args = parse_call_args();
    return n;
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      const int line = cur().line;
      if (at_op(".")) {
        ++i_;
        auto n = make<Getattr>(line);
        n->obj = std::move(e);
        if (cur().type == Tok::integer) {
          n->name = t_[i_++].value;  // a.0 is a[0]
        } else {
          n->name = expect_name();
        }
        e = std::move(n);
      } else if (at_op("[")) {
        ++i_;
        enter(line);
        e = parse_subscript(std::move(e), line);
        --depth_;
      } else if (at_op("(")) {
        e = parse_call(std::move(e), line);
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr obj, int line) {
    ExprPtr parts[3];
    int part = 0;
    bool is_slice = false;
    while (!at_op("]")) {
      if (at_op(":")) {
        ++i_;
        is_slice = true;
        if (++part > 2) fail_at(line, "a slice has at most three parts");
        continue;
      }
      if (parts[part]) fail_at(cur().line, fmt::format("expected ']', found {}", describe(cur())));
      parts[part] = parse_expression();
    }
    ++i_;
    if (!is_slice) {
      if (!parts[0]) fail_at(line, "empty subscript");
      auto n = make<Getitem>(line);
      n->obj = std::move(obj);
      n->key = std::move(parts[0]);
      return n;
    }
    auto n = make<SliceExpr>(line);
    n->obj = std::move(obj);
    n->start = std::move(parts[0]);
    n->stop = std::move(parts[1]);
    n->step = std::move(parts[2]);
    return n;
  }

  CallArgs parse_call_args() {
    expect_op("(");
    enter(cur().line);
    CallArgs args;
    comma_separated(")", [&] {
      if (cur().type == Tok::name && peek().type == Tok::op && peek().value == "=") {
        std::string key = t_[i_].value;
        i_ += 2;
        args.keyword.emplace_back(std::move(key), parse_expression());
      } else {
        if (!args.keyword.empty()) fail_at(cur().line, "a positional argument follows a keyword argument");
        args.positional.push_back(parse_expression());
      }
    });
    --depth_;
    return args;
  }

  ExprPtr parse_filters(ExprPtr e) {
    while (true) {
      const int line = cur().line;
      if (at_op("|")) {
        ++i_;
        auto n = make<FilterExpr>(line);
        n->subject = std::move(e);
        n->name = expect_name();
        if (at_op("(")) n->args = parse_call_args();
        e = std::move(n);
      } else if (at_name("is")) {
        ++i_;
        auto n = make<TestExpr>(line);
        n->subject = std::move(e);
        if (at_name("not")) {
          ++i_;
          n->negated = true;
        }
        n->name = expect_name();
        if (at_op("(")) {
          n->args = parse_call_args();
        } else if ((cur().type == Tok::name || cur().type == Tok::string || cur().type == Tok::integer ||
                    cur().type == Tok::real || at_op("[") || at_op("{")) &&
                   !at_name("else") && !at_name("or") && !at_name("and") && !at_name("if") && !at_name("is")) {
          n->args.positional.push_back(parse_postfix(parse_primary()));  // `is divisibleby 3`
        }
        e = std::move(n);
      } else if (at_op("(")) {
        e = parse_call(std::move(e), line);
      } else {
        return e;
      }
    }
  }

  std::vector<Token> t_;
  const std::string& where_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

std::unique_ptr<BodyNode> parse_template(std::string_view source, const std::string& where) {
  return Parser(Lexer(source, where).run(), where).run();
}

}  // namespace abl::text::jinja
