// Pre-tokenizers of tokenizer.json: Split (string or regex, five delimiter behaviours, invert),
// ByteLevel (optional GPT-2 regex, then bytes to their printable stand-ins), Metaspace, Sequence.
// As in the reference, empty pieces are dropped after every split.
#include <algorithm>

#include "abl/core/error.h"
#include "tokenizer_parts.h"

namespace abl::text::tok {
namespace {

enum class Behavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

Behavior parse_behavior(const io::JsonValue& j) {
  const std::string& b = j.as_string();
  if (b == "Removed") return Behavior::removed;
  if (b == "Isolated") return Behavior::isolated;
  if (b == "MergedWithPrevious") return Behavior::merged_with_previous;
  if (b == "MergedWithNext") return Behavior::merged_with_next;
  if (b == "Contiguous") return Behavior::contiguous;
  j.fail(fmt::format("unsupported split behavior '{}'", b));
}

struct Span {
  size_t start, end;
  bool is_match;
};

// Matches plus the gaps between them, covering the whole text.
std::vector<Span> cover(std::string_view s, const std::vector<std::pair<size_t, size_t>>& matches,
                        bool invert) {
  std::vector<Span> spans;
  if (s.empty()) return spans;
  size_t prev = 0;
  for (const auto& [start, end] : matches) {
    if (prev != start) spans.push_back({prev, start, invert});
    spans.push_back({start, end, !invert});
    prev = end;
  }
  if (prev != s.size()) spans.push_back({prev, s.size(), invert});
  return spans;
}

// Appends the pieces of `piece` after splitting at `spans` with `behavior`.
void split_piece(const Piece& piece, const std::vector<Span>& spans, Behavior behavior,
                 std::vector<Piece>& out) {
  std::vector<std::pair<size_t, size_t>> parts;  // kept [start, end)
  bool previous_match = false;
  switch (behavior) {
    case Behavior::removed:
      for (const Span& sp : spans) {
        if (!sp.is_match) parts.emplace_back(sp.start, sp.end);
      }
      break;
    case Behavior::isolated:
      for (const Span& sp : spans) parts.emplace_back(sp.start, sp.end);
      break;
    case Behavior::contiguous:
      for (const Span& sp : spans) {
        if (sp.is_match == previous_match && !parts.empty()) {
          parts.back().second = sp.end;
        } else {
          parts.emplace_back(sp.start, sp.end);
        }
        previous_match = sp.is_match;
      }
      break;
    case Behavior::merged_with_previous:
      for (const Span& sp : spans) {
        if (sp.is_match && !previous_match && !parts.empty()) {
          parts.back().second = sp.end;
        } else {
          parts.emplace_back(sp.start, sp.end);
        }
        previous_match = sp.is_match;
      }
      break;
    case Behavior::merged_with_next:
      for (size_t k = spans.size(); k-- > 0;) {
        const Span& sp = spans[k];
        if (sp.is_match && !previous_match && !parts.empty()) {
          parts.back().first = sp.start;
        } else {
          parts.emplace_back(sp.start, sp.end);
        }
        previous_match = sp.is_match;
      }
      std::reverse(parts.begin(), parts.end());
      break;
  }
  for (const auto& [start, end] : parts) {
    if (end == start) continue;
    out.push_back({piece.text.substr(start, end - start), piece.at_start && start == 0});
  }
}

class SplitPreTokenizer final : public PreTokenizer {
 public:
  SplitPreTokenizer(Pattern pattern, Behavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    out.reserve(pieces.size());
    for (const Piece& p : pieces) {
      split_piece(p, cover(p.text, pattern_.find_all(p.text), invert_), behavior_, out);
    }
    pieces = std::move(out);
  }

 private:
  Pattern pattern_;
  Behavior behavior_;
  bool invert_;
};

// The GPT-2 pattern that ByteLevel applies when use_regex is set.
constexpr const char kGpt2Pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

class ByteLevelPreTokenizer final : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex, const io::JsonValue& where)
      : add_prefix_space_(add_prefix_space) {
    if (use_regex) regex_ = std::make_unique<Regex>(kGpt2Pattern, where);
  }
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    std::vector<Piece> split;
    split.reserve(pieces.size());
    for (Piece& p : pieces) {
      if (add_prefix_space_ && (p.text.empty() || p.text[0] != ' ')) p.text.insert(0, " ");
      if (regex_) {
        split_piece(p, cover(p.text, regex_->find_all(p.text), false), Behavior::isolated, split);
      } else if (!p.text.empty()) {
        split.push_back(std::move(p));
      }
    }
    const auto& chars = byte_level_chars();
    for (Piece& p : split) {
      std::string mapped;
      mapped.reserve(p.text.size() * 2);
      for (char c : p.text) mapped += chars[static_cast<unsigned char>(c)];
      p.text = std::move(mapped);
    }
    pieces = std::move(split);
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Regex> regex_;
};

enum class PrependScheme { always, never, first };

class MetaspacePreTokenizer final : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    out.reserve(pieces.size());
    for (Piece& p : pieces) {
      std::string text;
      text.reserve(p.text.size() + replacement_.size());
      for (char c : p.text) {
        if (c == ' ') {
          text += replacement_;
        } else {
          text += c;
        }
      }
      const bool starts = text.compare(0, replacement_.size(), replacement_) == 0;
      if (!starts &&
          (scheme_ == PrependScheme::always || (scheme_ == PrependScheme::first && p.at_start))) {
        text.insert(0, replacement_);
      }
      Piece replaced{std::move(text), p.at_start};
      if (!split_) {
        if (!replaced.text.empty()) out.push_back(std::move(replaced));
        continue;
      }
      std::vector<std::pair<size_t, size_t>> matches;
      for (size_t pos = 0; (pos = replaced.text.find(replacement_, pos)) != std::string::npos;
           pos += replacement_.size()) {
        matches.emplace_back(pos, pos + replacement_.size());
      }
      split_piece(replaced, cover(replaced.text, matches, false), Behavior::merged_with_next, out);
    }
    pieces = std::move(out);
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> parts)
      : parts_(std::move(parts)) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    for (const auto& p : parts_) p->pre_tokenize(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const io::JsonValue& j) {
  const std::string type = component_type(j);
  if (type == "Split") {
    return std::make_unique<SplitPreTokenizer>(Pattern::from_json(j.at("pattern")),
                                               parse_behavior(j.at("behavior")),
                                               j.get_bool("invert", false));
  }
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevelPreTokenizer>(j.get_bool("add_prefix_space", true),
                                                   j.get_bool("use_regex", true), j);
  }
  if (type == "Metaspace") {
    const std::string replacement = j.get_string("replacement");
    size_t len = 0;
    if (replacement.empty() || (decode_utf8(replacement, 0, &len), len != replacement.size())) {
      j.at("replacement").fail("must be a single character");
    }
    PrependScheme scheme = PrependScheme::always;
    if (auto s = j.find("prepend_scheme")) {
      const std::string& name = s->as_string();
      if (name == "always") {
        scheme = PrependScheme::always;
      } else if (name == "never") {
        scheme = PrependScheme::never;
      } else if (name == "first") {
        scheme = PrependScheme::first;
      } else {
        s->fail(fmt::format("unsupported prepend_scheme '{}'", name));
      }
    } else if (!j.get_bool("add_prefix_space", true)) {
      scheme = PrependScheme::never;
    }
    return std::make_unique<MetaspacePreTokenizer>(replacement, scheme, j.get_bool("split", true));
  }
  if (type == "Sequence") {
    const io::JsonValue list = j.at("pretokenizers");
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (size_t i = 0; i < list.size(); ++i) parts.push_back(make_pre_tokenizer(list.at(i)));
    return std::make_unique<SequencePreTokenizer>(std::move(parts));
  }
  unsupported(j, "pre_tokenizer", type);
}

}  // namespace abl::text::tok
