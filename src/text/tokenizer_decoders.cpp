// Decoders (tokens -> text) and post-processors (special tokens around a sequence) of
// tokenizer.json. Decoders transform the whole token list in a chain, as the reference does, so
// Strip after Fuse trims the joined text once and invalid byte runs become U+FFFD.
#include "abl/core/error.h"
#include "abl/core/utf8.h"
#include "tokenizer_parts.h"

namespace abl::text::tok {
namespace {

const char kReplacementChar[] = "\xef\xbf\xbd";

class ByteLevelDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    std::string mapped;
    for (const std::string& t : tokens) {
      // A token whose characters are all byte stand-ins becomes those bytes; any other token
      // (an added token with other characters) is kept as it is.
      mapped.clear();
      bool all = true;
      for (size_t i = 0; i < t.size() && all;) {
        size_t len = 0;
        const int b = byte_level_byte(decode_utf8(t, i, &len));
        all = b >= 0;
        mapped += static_cast<char>(b);
        i += len;
      }
      bytes += all ? mapped : t;
    }
    tokens.assign(1, utf8_lossy(bytes));
  }
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "<0xAB>" -> 0xAB, or -1. Like Rust's u8::from_str_radix, a leading '+' is accepted.
int byte_token_value(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  if (t[3] == '+') return hex_value(t[4]);
  const int hi = hex_value(t[3]), lo = hex_value(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

class ByteFallbackDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    out.reserve(tokens.size());
    std::string run;  // consecutive byte tokens
    auto flush = [&]() {
      if (run.empty()) return;
      if (abl::valid_utf8(run)) {
        out.push_back(run);
      } else {
        for (size_t k = 0; k < run.size(); ++k) out.emplace_back(kReplacementChar);
      }
      run.clear();
    };
    for (std::string& t : tokens) {
      const int b = byte_token_value(t);
      if (b >= 0) {
        run += static_cast<char>(b);
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens = std::move(out);
  }
};

class FuseDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string joined;
    for (const std::string& t : tokens) joined += t;
    tokens.assign(1, std::move(joined));
  }
};

class StripDecoder final : public Decoder {
 public:
  StripDecoder(char32_t content, size_t start, size_t stop)
      : content_(content), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      std::vector<std::pair<size_t, char32_t>> chars;  // (byte offset, code point)
      for (size_t i = 0; i < t.size();) {
        size_t len = 0;
        chars.emplace_back(i, decode_utf8(t, i, &len));
        i += len;
      }
      size_t begin = 0;
      while (begin < start_ && begin < chars.size() && chars[begin].second == content_) ++begin;
      size_t end = chars.size();
      for (size_t k = 0; k < stop_ && end > 0 && chars[end - 1].second == content_; ++k) --end;
      if (end < begin) end = begin;
      const size_t b0 = begin < chars.size() ? chars[begin].first : t.size();
      const size_t b1 = end < chars.size() ? chars[end].first : t.size();
      t = t.substr(b0, b1 - b0);
    }
  }

 private:
  char32_t content_;
  size_t start_, stop_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(Pattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) t = replace_all(t, pattern_, content_);
  }

 private:
  Pattern pattern_;
  std::string content_;
};

// Replacement character back to spaces; the first token loses its replacement characters
// unless the pre-tokenizer never prepends one.
class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(char32_t replacement, bool strip_first)
      : replacement_(replacement), strip_first_(strip_first) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t k = 0; k < tokens.size(); ++k) {
      std::string out;
      const std::string& t = tokens[k];
      for (size_t i = 0; i < t.size();) {
        size_t len = 0;
        const char32_t cp = decode_utf8(t, i, &len);
        if (cp != replacement_) {
          out.append(t, i, len);
        } else if (!(k == 0 && strip_first_)) {
          out += ' ';
        }
        i += len;
      }
      tokens[k] = std::move(out);
    }
  }

 private:
  char32_t replacement_;
  bool strip_first_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> parts)
      : parts_(std::move(parts)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& p : parts_) p->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

char32_t single_char(const io::JsonValue& j) {
  const std::string& s = j.as_string();
  size_t len = 0;
  if (s.empty() || (decode_utf8(s, 0, &len), len != s.size())) j.fail("must be a single character");
  return decode_utf8(s, 0, &len);
}

size_t count(const io::JsonValue& j, std::string_view key) {
  const int64_t n = j.get_int(key, 0);
  if (n < 0) j.at(key).fail("must not be negative");
  return static_cast<size_t>(n);
}

// ---- Post-processors -----------------------------------------------------------------------

class TemplateProcessor final : public PostProcessor {
 public:
  // Each element: the ids of a special token, or empty for the sequence itself.
  explicit TemplateProcessor(std::vector<std::optional<std::vector<int32_t>>> items)
      : items_(std::move(items)) {}
  void process(std::vector<int32_t>& ids) const override {
    std::vector<int32_t> out;
    out.reserve(ids.size() + 8);
    for (const auto& item : items_) {
      if (item) {
        out.insert(out.end(), item->begin(), item->end());
      } else {
        out.insert(out.end(), ids.begin(), ids.end());
      }
    }
    ids = std::move(out);
  }

 private:
  std::vector<std::optional<std::vector<int32_t>>> items_;
};

class WrapProcessor final : public PostProcessor {  // BertProcessing / RobertaProcessing
 public:
  WrapProcessor(int32_t cls, int32_t sep) : cls_(cls), sep_(sep) {}
  void process(std::vector<int32_t>& ids) const override {
    ids.insert(ids.begin(), cls_);
    ids.push_back(sep_);
  }

 private:
  int32_t cls_, sep_;
};

class NoOpProcessor final : public PostProcessor {  // ByteLevel: only offsets change
 public:
  void process(std::vector<int32_t>&) const override {}
};

class SequenceProcessor final : public PostProcessor {
 public:
  explicit SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> parts)
      : parts_(std::move(parts)) {}
  void process(std::vector<int32_t>& ids) const override {
    for (const auto& p : parts_) p->process(ids);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

int32_t token_pair_id(const io::JsonValue& j) {  // ["[CLS]", 101]
  if (!j.is_array() || j.size() != 2) j.fail("must be [token, id]");
  const int64_t id = j.at(1).as_int();
  if (id < 0 || id > INT32_MAX) j.at(1).fail("id out of range");
  return static_cast<int32_t>(id);
}

std::unique_ptr<PostProcessor> make_template(const io::JsonValue& j) {
  const io::JsonValue single = j.at("single");
  if (!single.is_array())
    single.fail("must be a list of {\"SpecialToken\"} and {\"Sequence\"} items");
  std::optional<io::JsonValue> specials = j.find("special_tokens");
  std::vector<std::optional<std::vector<int32_t>>> items;
  for (size_t i = 0; i < single.size(); ++i) {
    const io::JsonValue item = single.at(i);
    if (auto seq = item.find("Sequence")) {
      if (seq->get_string("id") != "A") seq->fail("a single-sequence template can only use A");
      items.emplace_back(std::nullopt);
    } else if (auto sp = item.find("SpecialToken")) {
      const std::string name = sp->get_string("id");
      std::optional<io::JsonValue> entry = specials ? specials->find(name) : std::nullopt;
      if (!entry) sp->fail(fmt::format("special token '{}' is not in special_tokens", name));
      std::vector<int32_t> ids;
      for (int64_t v : entry->at("ids").as_int_list()) {
        if (v < 0 || v > INT32_MAX) entry->at("ids").fail("id out of range");
        ids.push_back(static_cast<int32_t>(v));
      }
      items.emplace_back(std::move(ids));
    } else {
      item.fail("must be {\"SpecialToken\": ...} or {\"Sequence\": ...}");
    }
  }
  return std::make_unique<TemplateProcessor>(std::move(items));
}

}  // namespace

std::unique_ptr<Decoder> make_decoder(const io::JsonValue& j) {
  const std::string type = component_type(j);
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip") {
    return std::make_unique<StripDecoder>(single_char(j.at("content")), count(j, "start"),
                                          count(j, "stop"));
  }
  if (type == "Replace") {
    return std::make_unique<ReplaceDecoder>(Pattern::from_json(j.at("pattern")),
                                            j.get_string("content"));
  }
  if (type == "Metaspace") {
    bool strip_first = j.get_bool("add_prefix_space", true);
    if (auto s = j.find("prepend_scheme")) strip_first = s->as_string() != "never";
    return std::make_unique<MetaspaceDecoder>(single_char(j.at("replacement")), strip_first);
  }
  if (type == "Sequence") {
    const io::JsonValue list = j.at("decoders");
    std::vector<std::unique_ptr<Decoder>> parts;
    for (size_t i = 0; i < list.size(); ++i) parts.push_back(make_decoder(list.at(i)));
    return std::make_unique<SequenceDecoder>(std::move(parts));
  }
  unsupported(j, "decoder", type);
}

std::unique_ptr<PostProcessor> make_post_processor(const io::JsonValue& j) {
  const std::string type = component_type(j);
  if (type == "TemplateProcessing") return make_template(j);
  if (type == "ByteLevel") return std::make_unique<NoOpProcessor>();
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    return std::make_unique<WrapProcessor>(token_pair_id(j.at("cls")), token_pair_id(j.at("sep")));
  }
  if (type == "Sequence") {
    const io::JsonValue list = j.at("processors");
    std::vector<std::unique_ptr<PostProcessor>> parts;
    for (size_t i = 0; i < list.size(); ++i) parts.push_back(make_post_processor(list.at(i)));
    return std::make_unique<SequenceProcessor>(std::move(parts));
  }
  unsupported(j, "post_processor", type);
}

}  // namespace abl::text::tok
