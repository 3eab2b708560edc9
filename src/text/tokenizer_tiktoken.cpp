// A tiktoken tokenizer folder (Kimi-K2, Moonlight): tiktoken.model holds the ranked byte
// vocabulary, the remote tokenizer code named by tokenizer_config.json's auto_map holds the
// split pattern (pat_str) and the number of reserved special tokens, and tokenizer_config.json's
// added_tokens_decoder names some of those special ids. transformers runs that code with
// trust_remote_code; here its two constants are read out of the file, never executed.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "abl/core/error.h"
#include "abl/core/utf8.h"
#include "tokenizer_parts.h"

namespace abl::text::tok {
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) abl::fail("{}: cannot open", path.string());
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) abl::fail("{}: read error", path.string());
  return text.str();
}

// Standard base64 with '=' padding, as tiktoken's load_tiktoken_bpe decodes it; nullopt when
// `s` is not that.
std::optional<std::string> base64_decode(std::string_view s) {
  static const std::array<int8_t, 256> kValue = [] {
    std::array<int8_t, 256> v{};
    v.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) v[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
    return v;
  }();
  if (s.empty() || s.size() % 4 != 0) return std::nullopt;
  size_t pad = 0;
  while (pad < 2 && s[s.size() - 1 - pad] == '=') ++pad;
  std::string out;
  uint32_t acc = 0;
  for (size_t i = 0; i < s.size() - pad; ++i) {
    const int8_t v = kValue[static_cast<unsigned char>(s[i])];
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    if (i % 4 == 3) {
      out += static_cast<char>((acc >> 16) & 0xff);
      out += static_cast<char>((acc >> 8) & 0xff);
      out += static_cast<char>(acc & 0xff);
      acc = 0;
    }
  }
  if (pad == 1) {  // 3 symbols left: 18 bits, 2 bytes
    out += static_cast<char>((acc >> 10) & 0xff);
    out += static_cast<char>((acc >> 2) & 0xff);
  } else if (pad == 2) {  // 2 symbols left: 12 bits, 1 byte
    out += static_cast<char>((acc >> 4) & 0xff);
  }
  return out;
}

// tiktoken.model: "<base64 token bytes> <rank>" per non-empty line; rank = token id. The ranks
// must be 0..N-1 (the remote code numbers the special tokens from N).
std::vector<std::string> read_ranks(const fs::path& path) {
  const std::string text = read_text(path);
  std::vector<std::string> tokens;
  std::vector<size_t> line_of;  // line of each rank, for the duplicate message
  std::istringstream in(text);
  std::string line;
  std::vector<std::pair<int64_t, std::string>> entries;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string b64, rank_text, extra;
    fields >> b64 >> rank_text;
    if (rank_text.empty() || (fields >> extra)) {
      abl::fail("{}:{}: expected '<base64 token> <rank>', found '{}'", path.string(), number, line);
    }
    const auto bytes = base64_decode(b64);
    if (!bytes) abl::fail("{}:{}: '{}' is not base64", path.string(), number, b64);
    char* end = nullptr;
    const long long rank = std::strtoll(rank_text.c_str(), &end, 10);
    if (*end != '\0' || rank < 0 || !std::all_of(rank_text.begin(), rank_text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      abl::fail("{}:{}: rank '{}' is not a non-negative integer", path.string(), number, rank_text);
    }
    entries.emplace_back(rank, *bytes);
    line_of.push_back(number);
  }
  if (entries.empty()) abl::fail("{}: no tokens", path.string());
  std::vector<size_t> where(entries.size(), 0);  // rank -> line + 1
  tokens.resize(entries.size());
  for (size_t k = 0; k < entries.size(); ++k) {
    const auto rank = static_cast<uint64_t>(entries[k].first);
    if (rank >= entries.size()) {
      abl::fail("{}:{}: rank {} is out of 0..{}: the ranks of the {} tokens must be 0..{} (the special tokens are "
                "numbered after them)",
                path.string(), line_of[k], rank, entries.size() - 1, entries.size(), entries.size() - 1);
    }
    if (where[rank] != 0) {
      abl::fail("{}:{}: rank {} is also on line {}", path.string(), line_of[k], rank, where[rank]);
    }
    where[rank] = line_of[k];
    tokens[rank] = std::move(entries[k].second);
  }
  std::vector<bool> single(256, false);
  for (const std::string& t : tokens) {
    if (t.size() == 1) single[static_cast<unsigned char>(t[0])] = true;
  }
  for (int b = 0; b < 256; ++b) {
    if (!single[static_cast<size_t>(b)]) {
      abl::fail("{}: byte 0x{:02X} is not a token; tiktoken needs every single byte in the vocabulary", path.string(), b);
    }
  }
  return tokens;
}

// ---- the two constants of the remote code -----------------------------------------------------

size_t line_at(std::string_view text, size_t offset) {
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(offset), '\n'));
}

void skip_blank(std::string_view s, size_t& i) {
  while (i < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      ++i;
    } else if (s[i] == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {
      i += 2;
    } else {
      break;
    }
  }
}

// A Python string literal at s[i]: r"""...""", """...""", r"...", "..." (or with single quotes).
// A literal that is not raw must be free of backslashes (Python's escapes are not interpreted).
std::optional<std::string> string_literal(std::string_view s, size_t& i, const std::string& file) {
  size_t k = i;
  const bool raw = k < s.size() && (s[k] == 'r' || s[k] == 'R');
  if (raw) ++k;
  if (k >= s.size() || (s[k] != '"' && s[k] != '\'')) return std::nullopt;
  const std::string quote = s.compare(k, 3, std::string(3, s[k])) == 0 ? std::string(3, s[k]) : std::string(1, s[k]);
  k += quote.size();
  size_t end = k;
  while (true) {
    end = s.find(quote, end);
    if (end == std::string_view::npos) abl::fail("{}:{}: a string literal is not closed", file, line_at(s, i));
    // A quote escaped by an odd number of backslashes does not close the literal.
    size_t slashes = 0;
    while (end - slashes > k && s[end - slashes - 1] == '\\') ++slashes;
    if (slashes % 2 == 0) break;
    ++end;
  }
  std::string value(s.substr(k, end - k));
  if (!raw && value.find('\\') != std::string::npos) {
    abl::fail("{}:{}: pat_str has a string literal with escapes that is not raw (r\"...\"); it cannot be read here",
              file, line_at(s, i));
  }
  i = end + quote.size();
  return value;
}

// pat_str = "|".join([r"""...""", ...]) or pat_str = r"..." — the class attribute the remote code
// hands to tiktoken.Encoding.
std::string read_pat_str(std::string_view s, const std::string& file) {
  for (size_t at = s.find("pat_str"); at != std::string_view::npos; at = s.find("pat_str", at + 1)) {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(s[at - 1])) || s[at - 1] == '_' || s[at - 1] == '.'))
      continue;
    size_t i = at + 7;
    skip_blank(s, i);
    if (i >= s.size() || s[i] != '=' || (i + 1 < s.size() && s[i + 1] == '=')) continue;
    ++i;
    skip_blank(s, i);
    const auto first = string_literal(s, i, file);
    if (!first) continue;                                // pat_str=self.pat_str and the like
    if (s.compare(i, 6, ".join(") != 0) return *first;  // pat_str = r"..."
    const std::string separator = *first;
    i += 6;
    skip_blank(s, i);
    if (i >= s.size() || (s[i] != '[' && s[i] != '(')) {
      abl::fail("{}:{}: pat_str's join(...) must take a list of string literals", file, line_at(s, i));
    }
    const char close = s[i] == '[' ? ']' : ')';
    ++i;
    std::vector<std::string> parts;
    while (true) {
      skip_blank(s, i);
      if (i < s.size() && s[i] == close) break;
      auto part = string_literal(s, i, file);
      if (!part) abl::fail("{}:{}: pat_str's list holds something other than a string literal", file, line_at(s, i));
      parts.push_back(std::move(*part));
      skip_blank(s, i);
      if (i < s.size() && s[i] == ',') ++i;
    }
    if (parts.empty()) abl::fail("{}:{}: pat_str joins an empty list", file, line_at(s, at));
    std::string pattern;
    for (size_t k = 0; k < parts.size(); ++k) pattern += (k ? separator : std::string()) + parts[k];
    return pattern;
  }
  abl::fail("{}: has no pat_str = \"|\".join([...]) or pat_str = r\"...\" (the split pattern tiktoken is given)",
            file);
}

// `name = <integer>` (an assignment, not a comparison); nullopt when the file has none.
std::optional<int64_t> integer_assignment(std::string_view s, std::string_view name) {
  for (size_t at = s.find(name); at != std::string_view::npos; at = s.find(name, at + 1)) {
    size_t i = at + name.size();
    skip_blank(s, i);
    if (i >= s.size() || s[i] != '=' || (i + 1 < s.size() && s[i + 1] == '=')) continue;
    ++i;
    skip_blank(s, i);
    size_t digits = i;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
    if (digits > i && digits - i < 10) return std::stoll(std::string(s.substr(i, digits - i)));
  }
  return std::nullopt;
}

// The `+ K` in `range(num_base_tokens, num_base_tokens + self.num_reserved_special_tokens + K)`
// (Kimi-K2's remote code numbers 256 + 2 special ids); 0 when the sum has no such term.
int64_t extra_special_ids(std::string_view s) {
  const std::string_view name = "num_reserved_special_tokens";
  for (size_t at = s.find(name); at != std::string_view::npos; at = s.find(name, at + 1)) {
    size_t i = at + name.size();
    skip_blank(s, i);
    if (i >= s.size() || s[i] != '+') continue;
    ++i;
    skip_blank(s, i);
    size_t digits = i;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
    if (digits > i && digits - i < 6) return std::stoll(std::string(s.substr(i, digits - i)));
  }
  return 0;
}

// The remote tokenizer module of tokenizer_config.json's auto_map: "tokenization_kimi.TikTokenTokenizer"
// -> <dir>/tokenization_kimi.py.
fs::path remote_code_file(const fs::path& dir, const io::JsonValue& config) {
  const auto auto_map = config.find("auto_map");
  const auto entry = auto_map ? auto_map->find("AutoTokenizer") : std::nullopt;
  std::string reference;
  if (entry && entry->is_string()) reference = entry->as_string();
  if (entry && entry->is_array()) {
    for (size_t k = 0; k < entry->size() && reference.empty(); ++k) {
      if (entry->at(k).is_string()) reference = entry->at(k).as_string();
    }
  }
  if (reference.empty()) {
    config.fail("has no auto_map.AutoTokenizer: a folder with tiktoken.model and no tokenizer.json needs the remote "
                "tokenizer code it names (its split pattern is there)");
  }
  if (reference.find("--") != std::string::npos) {
    entry->fail(fmt::format("'{}' names code in another repository; copy that tokenizer file into the model folder",
                            reference));
  }
  const size_t dot = reference.rfind('.');
  if (dot == std::string::npos || dot == 0) entry->fail(fmt::format("'{}' is not module.Class", reference));
  std::string module = reference.substr(0, dot);
  std::replace(module.begin(), module.end(), '.', '/');
  const fs::path file = dir / (module + ".py");
  if (!fs::is_regular_file(file)) {
    entry->fail(fmt::format("names {}, which is not in the model folder", file.string()));
  }
  return file;
}

}  // namespace

TiktokenFolder read_tiktoken_folder(const std::string& folder) {
  const fs::path dir(folder);
  TiktokenFolder out;
  out.vocab_path = (dir / "tiktoken.model").string();
  out.token_bytes = read_ranks(out.vocab_path);

  const fs::path config_path = dir / "tokenizer_config.json";
  if (!fs::is_regular_file(config_path)) {
    abl::fail("{} has tiktoken.model but no tokenizer_config.json (it names the remote tokenizer code and the special "
              "tokens)",
              folder);
  }
  const io::JsonValue config = io::read_json_file(config_path.string());
  const fs::path code = remote_code_file(dir, config);
  out.code_path = code.string();
  const std::string source = read_text(code);
  out.pattern = read_pat_str(source, out.code_path);
  size_t bad = 0;
  if (!abl::valid_utf8(out.pattern, &bad)) {
    abl::fail("{}: pat_str is not valid UTF-8 (byte {} of the pattern; found by fuzzing)", out.code_path, bad);
  }
  const auto reserved = integer_assignment(source, "num_reserved_special_tokens");
  if (!reserved) {
    abl::fail("{}: has no num_reserved_special_tokens = <count> (the special ids follow the {} tokens of {})",
              out.code_path, out.token_bytes.size(), out.vocab_path);
  }
  const int64_t n_base = static_cast<int64_t>(out.token_bytes.size());
  const int64_t n_special = *reserved + extra_special_ids(source);

  // Special id i is named by added_tokens_decoder["i"], else <|reserved_token_i|>.
  std::map<int64_t, io::JsonValue> named;
  if (const auto decoder = config.find("added_tokens_decoder")) {
    if (!decoder->is_object()) decoder->fail(fmt::format("must be an object, found {}", decoder->type_name()));
    for (const std::string& key : decoder->keys()) {
      const io::JsonValue entry = decoder->at(key);
      char* end = nullptr;
      const long long id = std::strtoll(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0' || id < n_base || id >= n_base + n_special) {
        entry.fail(fmt::format("is not one of the special ids {}..{} that {} numbers after the {} tokens of {}", n_base,
                               n_base + n_special - 1, out.code_path, n_base, out.vocab_path));
      }
      named.emplace(id, entry);
    }
  }
  out.added_tokens = nlohmann::json::array();
  for (int64_t id = n_base; id < n_base + n_special; ++id) {
    nlohmann::json t = {{"id", id}, {"content", fmt::format("<|reserved_token_{}|>", id)}, {"single_word", false},
                        {"lstrip", false}, {"rstrip", false}, {"normalized", false}, {"special", true}};
    if (const auto it = named.find(id); it != named.end()) {
      const io::JsonValue& e = it->second;
      t["content"] = e.get_string("content");
      for (const char* flag : {"single_word", "lstrip", "rstrip", "normalized"}) t[flag] = e.get_bool(flag, false);
      t["special"] = e.get_bool("special", true);
    }
    out.added_tokens.push_back(std::move(t));
  }
  return out;
}

}  // namespace abl::text::tok
