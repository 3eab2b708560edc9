// Normalizers of tokenizer.json: Unicode forms (utf8proc), Prepend, Replace, Strip and Sequence.
// They run on each stretch of text between added tokens, so Prepend marks every such stretch.
#include "abl/core/error.h"
#include "tokenizer_parts.h"

namespace abl::text::tok {

std::string component_type(const io::JsonValue& j) {
  if (!j.is_object()) j.fail(fmt::format("must be an object, found {}", j.type_name()));
  return j.get_string("type");
}

void unsupported(const io::JsonValue& j, std::string_view kind, std::string_view type) {
  j.fail(fmt::format("unsupported {} type '{}'", kind, type));
}

namespace {

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(NormalForm form) : form_(form) {}
  void normalize(std::string& s) const override { s = unicode_normalize(s, form_); }

 private:
  NormalForm form_;
};

class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string& s) const override {
    if (!s.empty()) s.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(Pattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void normalize(std::string& s) const override { s = replace_all(s, pattern_, content_); }

 private:
  Pattern pattern_;
  std::string content_;
};

class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string& s) const override {
    size_t begin = 0, end = s.size();
    if (left_) {
      while (begin < end) {
        size_t len = 0;
        if (!is_whitespace(decode_utf8(s, begin, &len))) break;
        begin += len;
      }
    }
    if (right_) {
      while (end > begin) {
        size_t start = end - 1;
        while (start > begin && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80) --start;
        size_t len = 0;
        if (!is_whitespace(decode_utf8(s, start, &len))) break;
        end = start;
      }
    }
    s = s.substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> parts)
      : parts_(std::move(parts)) {}
  void normalize(std::string& s) const override {
    for (const auto& p : parts_) p->normalize(s);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const io::JsonValue& j) {
  const std::string type = component_type(j);
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(NormalForm::nfc);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(NormalForm::nfd);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(NormalForm::nfkc);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(NormalForm::nfkd);
  if (type == "Prepend") return std::make_unique<PrependNormalizer>(j.get_string("prepend"));
  if (type == "Replace") {
    return std::make_unique<ReplaceNormalizer>(Pattern::from_json(j.at("pattern")),
                                               j.get_string("content"));
  }
  if (type == "Strip") {
    return std::make_unique<StripNormalizer>(j.get_bool("strip_left", false),
                                             j.get_bool("strip_right", false));
  }
  if (type == "Sequence") {
    const io::JsonValue list = j.at("normalizers");
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (size_t i = 0; i < list.size(); ++i) parts.push_back(make_normalizer(list.at(i)));
    return std::make_unique<SequenceNormalizer>(std::move(parts));
  }
  unsupported(j, "normalizer", type);
}

}  // namespace abl::text::tok
