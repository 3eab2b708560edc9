// The configs block of a dataset card, read with the small part of YAML that cards use.
#include "dataset_card.h"

#include <fstream>

#include <fmt/format.h>

#include "abl/core/error.h"

namespace abl::io::dataset_card {
namespace {

struct Line {
  size_t indent;
  std::string text;  // without indentation, comment and trailing space
  int64_t number;    // 1-based, in the file
};

struct Node {
  enum class Kind { scalar, list, map } kind = Kind::scalar;
  std::string text;  // a scalar
  std::vector<Node> items;
  std::vector<std::pair<std::string, Node>> fields;
  int64_t line = 0;

  const Node* field(const std::string& key) const {
    for (const auto& [k, v] : fields) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

// The text before a " #" comment outside quotes.
std::string strip_comment(const std::string& s) {
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return s.substr(0, i);
    }
  }
  return s;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

bool is_list_item(const std::string& text) { return text == "-" || text.compare(0, 2, "- ") == 0; }

class Parser {
 public:
  Parser(std::vector<Line> lines, std::string file) : lines_(std::move(lines)), file_(std::move(file)) {}

  Node parse(size_t indent) {
    Node node;
    if (at_ >= lines_.size() || lines_[at_].indent < indent) return node;
    node.line = lines_[at_].number;
    if (is_list_item(lines_[at_].text)) return parse_list(lines_[at_].indent);
    if (key_end(lines_[at_].text) != std::string::npos) return parse_map(lines_[at_].indent);
    node.text = unquote(lines_[at_].text, lines_[at_].number);
    ++at_;
    return node;
  }

 private:
  Node parse_list(size_t indent) {
    Node list;
    list.kind = Node::Kind::list;
    list.line = lines_[at_].number;
    while (at_ < lines_.size() && lines_[at_].indent == indent && is_list_item(lines_[at_].text)) {
      Line& l = lines_[at_];
      const size_t offset = l.text.find_first_not_of(' ', 1);
      if (offset == std::string::npos) {  // "-" alone: the item on the lines below
        ++at_;
        list.items.push_back(at_ < lines_.size() && lines_[at_].indent > indent ? parse(lines_[at_].indent) : Node{});
        continue;
      }
      l.text = l.text.substr(offset);  // the item's first line, as if indented past the dash
      l.indent += offset;
      list.items.push_back(parse(l.indent));
    }
    return list;
  }

  Node parse_map(size_t indent) {
    Node map;
    map.kind = Node::Kind::map;
    map.line = lines_[at_].number;
    while (at_ < lines_.size() && lines_[at_].indent == indent && !is_list_item(lines_[at_].text)) {
      const Line& l = lines_[at_];
      const size_t end = key_end(l.text);
      ABL_CHECK(end != std::string::npos, "{}:{}: expected 'key: value' in the dataset card's configs", file_,
                l.number);
      const std::string key = unquote(trim(l.text.substr(0, end)), l.number);
      const std::string value = trim(l.text.substr(end + 1));
      const int64_t number = l.number;
      ++at_;
      Node child;
      child.line = number;
      if (!value.empty()) {
        child = value[0] == '[' ? flow_list(value, number) : scalar(value, number);
      } else if (at_ < lines_.size() && (lines_[at_].indent > indent ||
                                         (lines_[at_].indent == indent && is_list_item(lines_[at_].text)))) {
        child = parse(lines_[at_].indent);
      }
      map.fields.emplace_back(key, std::move(child));
    }
    return map;
  }

  // The ':' ending a mapping key: followed by a space or the end of the line, outside quotes.
  static size_t key_end(const std::string& s) {
    char quote = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (quote) {
        if (s[i] == quote) quote = 0;
      } else if (i == 0 && (s[i] == '"' || s[i] == '\'')) {
        quote = s[i];
      } else if (s[i] == ':' && (i + 1 == s.size() || s[i + 1] == ' ')) {
        return i;
      }
    }
    return std::string::npos;
  }

  Node scalar(const std::string& text, int64_t number) const {
    Node n;
    n.text = unquote(text, number);
    n.line = number;
    return n;
  }

  // [a, "b", 'c'] on one line.
  Node flow_list(const std::string& text, int64_t number) const {
    ABL_CHECK(text.back() == ']', "{}:{}: a [list] of the dataset card's configs must close on its line", file_,
              number);
    Node list;
    list.kind = Node::Kind::list;
    list.line = number;
    std::string item;
    char quote = 0;
    for (size_t i = 1; i + 1 < text.size(); ++i) {
      const char c = text[i];
      if (quote) {
        quote = c == quote ? 0 : quote;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == ',') {
        list.items.push_back(scalar(trim(item), number));
        item.clear();
        continue;
      }
      item += c;
    }
    if (!trim(item).empty() || !list.items.empty()) list.items.push_back(scalar(trim(item), number));
    return list;
  }

  std::string unquote(const std::string& text, int64_t number) const {
    if (text.size() < 2 || (text[0] != '"' && text[0] != '\'')) return text;
    ABL_CHECK(text.back() == text[0], "{}:{}: unterminated quoted string in the dataset card's configs", file_, number);
    std::string out;
    for (size_t i = 1; i + 1 < text.size(); ++i) {
      if (text[0] == '\'' && text[i] == '\'' && text[i + 1] == '\'') {
        out += '\'';
        ++i;
      } else if (text[0] == '"' && text[i] == '\\' && i + 2 < text.size()) {
        out += text[++i];
      } else {
        out += text[i];
      }
    }
    return out;
  }

  std::vector<Line> lines_;
  std::string file_;
  size_t at_ = 0;
};

// The lines of the front matter's top-level `configs:` entry (the key line first); empty if none.
std::vector<Line> configs_block(std::ifstream& in) {
  std::vector<Line> block;
  std::string raw;
  int64_t number = 0;
  bool in_front = false, in_configs = false;
  while (std::getline(in, raw)) {
    ++number;
    const std::string bare = trim(raw);
    if (number == 1) {
      if (bare != "---") return {};
      in_front = true;
      continue;
    }
    if (in_front && bare == "---" && raw.find_first_not_of(" \t") == 0) break;
    const std::string text = trim(strip_comment(raw));
    if (text.empty()) continue;
    const size_t indent = raw.find_first_not_of(' ');
    if (indent == 0 && !is_list_item(text)) in_configs = text == "configs:";
    if (in_configs) block.push_back({indent, text, number});
  }
  return block;
}

std::vector<std::string> patterns_of(const Node& n, const std::string& file) {
  if (n.kind == Node::Kind::scalar) return {n.text};
  ABL_CHECK(n.kind == Node::Kind::list, "{}:{}: expected a path or a list of paths", file, n.line);
  std::vector<std::string> out;
  for (const auto& item : n.items) {
    ABL_CHECK(item.kind == Node::Kind::scalar, "{}:{}: expected a path", file, item.line);
    out.push_back(item.text);
  }
  return out;
}

Config config_of(const Node& n, const std::string& file) {
  ABL_CHECK(n.kind == Node::Kind::map, "{}:{}: each of the card's configs must be a map with config_name", file,
            n.line);
  Config c;
  const Node* name = n.field("config_name");
  ABL_CHECK(name && name->kind == Node::Kind::scalar && !name->text.empty(), "{}:{}: a config without config_name",
            file, n.line);
  c.name = name->text;
  if (const Node* d = n.field("default")) c.is_default = d->text == "true" || d->text == "True";
  if (const Node* d = n.field("data_dir")) c.data_dir = d->text;
  const Node* files = n.field("data_files");
  if (!files) return c;
  if (files->kind == Node::Kind::scalar) {
    c.splits.push_back({"train", {files->text}});
    return c;
  }
  ABL_CHECK(files->kind == Node::Kind::list, "{}:{}: data_files must be a path, a list of paths or a list of "
            "{{split, path}}", file, files->line);
  for (const auto& item : files->items) {
    if (item.kind == Node::Kind::scalar) {
      if (c.splits.empty() || c.splits.back().first != "train") c.splits.push_back({"train", {}});
      c.splits.back().second.push_back(item.text);
      continue;
    }
    const Node* split = item.field("split");
    const Node* path = item.field("path");
    ABL_CHECK(item.kind == Node::Kind::map && split && path, "{}:{}: each item of data_files needs split and path",
              file, item.line);
    c.splits.push_back({split->text, patterns_of(*path, file)});
  }
  return c;
}

bool match(const char* p, const char* s) {
  for (; *p; ++p) {
    if (p[0] == '*' && p[1] == '*') {
      const char* rest = p + 2;
      if (*rest == '/' && match(rest + 1, s)) return true;  // "**/": no folder at all
      for (const char* t = s;; ++t) {
        if (match(rest, t)) return true;
        if (!*t) return false;
      }
    }
    if (*p == '*') {
      for (const char* t = s;; ++t) {
        if (match(p + 1, t)) return true;
        if (!*t || *t == '/') return false;
      }
    }
    if (!*s) return false;
    if (*p == '[') {
      const char* q = p + 1;
      const bool negate = *q == '!' || *q == '^';
      if (negate) ++q;
      const char* close = q + 1;  // a ']' right after '[' or '[!' is a member
      while (*close && *close != ']') ++close;
      if (*close == ']') {
        bool found = false;
        for (const char* m = q; m < close; ++m) {
          if (m + 2 < close && m[1] == '-') {
            found = found || (*s >= m[0] && *s <= m[2]);
            m += 2;
          } else {
            found = found || *s == *m;
          }
        }
        if (found == negate || *s == '/') return false;
        p = close;
        ++s;
        continue;
      }
    }
    if (*p == '?' ? *s == '/' : *p != *s) return false;
    ++s;
  }
  return !*s;
}

}  // namespace

std::vector<Config> read_configs(const std::string& readme) {
  std::ifstream in(readme, std::ios::binary);
  if (!in) return {};
  std::vector<Line> block = configs_block(in);
  if (block.empty()) return {};
  const int64_t key_line = block.front().number;
  block.erase(block.begin());
  if (block.empty()) return {};
  Parser parser(std::move(block), readme);
  const Node configs = parser.parse(0);
  ABL_CHECK(configs.kind == Node::Kind::list, "{}:{}: configs must be a list", readme, key_line);
  std::vector<Config> out;
  for (const auto& item : configs.items) out.push_back(config_of(item, readme));
  return out;
}

const Config* default_config(const std::vector<Config>& configs) {
  for (const auto& c : configs) {
    if (configs.size() == 1 || c.is_default || c.name == "default") return &c;
  }
  return nullptr;
}

bool glob_match(const std::string& pattern, const std::string& path) { return match(pattern.c_str(), path.c_str()); }

}  // namespace abl::io::dataset_card
