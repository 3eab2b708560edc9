// Tokenizer: loads tokenizer.json and runs the reference pipeline — added tokens cut out of the
// raw text (leftmost-longest), normalizer on each remaining stretch, normalized added tokens,
// pre-tokenizer, BPE, post-processor. Added-token ids are assigned as the reference assigns them
// (vocabulary id if the content is a model token, else the next free id), not read from the file.
#include "abl/text/tokenizer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/utf8.h"
#include "tokenizer_parts.h"

namespace abl::text {

namespace fs = std::filesystem;
using tok::Piece;

namespace {

struct AddedToken {
  std::string content;
  bool single_word = false, lstrip = false, rstrip = false, normalized = false, special = false;
  bool operator==(const AddedToken& o) const {
    return content == o.content && single_word == o.single_word && lstrip == o.lstrip &&
           rstrip == o.rstrip && normalized == o.normalized && special == o.special;
  }
};

// Leftmost-longest, non-overlapping matching of a set of strings (a byte trie).
class AddedMatcher {
 public:
  struct Match {
    size_t start, end;
    int32_t id;
  };

  void add(const std::string& pattern, int32_t id) {
    if (pattern.empty()) return;
    if (terminal_.empty()) terminal_.push_back(-1);
    int32_t node = 0;
    for (char c : pattern) {
      const uint64_t key = edge_key(node, c);
      auto it = edges_.find(key);
      if (it == edges_.end()) {
        terminal_.push_back(-1);
        it = edges_.emplace(key, static_cast<int32_t>(terminal_.size() - 1)).first;
      }
      node = it->second;
    }
    if (terminal_[static_cast<size_t>(node)] < 0) terminal_[static_cast<size_t>(node)] = id;
    first_[static_cast<unsigned char>(pattern[0])] = true;
  }

  std::vector<Match> find_all(std::string_view s) const {
    std::vector<Match> out;
    if (terminal_.empty()) return out;
    for (size_t i = 0; i < s.size();) {
      if (!first_[static_cast<unsigned char>(s[i])]) {
        ++i;
        continue;
      }
      int32_t node = 0;
      size_t best_end = 0;
      int32_t best_id = -1;
      for (size_t k = i; k < s.size(); ++k) {
        auto it = edges_.find(edge_key(node, s[k]));
        if (it == edges_.end()) break;
        node = it->second;
        if (terminal_[static_cast<size_t>(node)] >= 0) {
          best_end = k + 1;
          best_id = terminal_[static_cast<size_t>(node)];
        }
      }
      if (best_id < 0) {
        ++i;
        continue;
      }
      out.push_back({i, best_end, best_id});
      i = best_end;
    }
    return out;
  }

 private:
  static uint64_t edge_key(int32_t node, char c) {
    return (static_cast<uint64_t>(node) << 8) | static_cast<unsigned char>(c);
  }
  std::vector<int32_t> terminal_;  // per trie node: token id, or -1
  std::unordered_map<uint64_t, int32_t> edges_;
  std::array<bool, 256> first_{};
};

// A stretch of text between added tokens, or an added token (id >= 0).
struct Segment {
  std::string text;
  int32_t id = -1;
  bool at_start = false;
};

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    abl::fail("{}: is a directory, expected tokenizer.json", path);
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) abl::fail("{}: cannot open: {}", path, std::strerror(errno));
  std::string text;
  if (std::fseek(f.get(), 0, SEEK_END) == 0) {
    const long size = std::ftell(f.get());
    if (size > 0) text.reserve(static_cast<size_t>(size));
    std::rewind(f.get());
  }
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) text.append(buf, n);
  if (std::ferror(f.get())) abl::fail("{}: read error: {}", path, std::strerror(errno));
  return text;
}

}  // namespace

struct Tokenizer::Impl {
  std::string path;
  std::unique_ptr<tok::BpeModel> model;
  std::unique_ptr<tok::Normalizer> normalizer;
  std::unique_ptr<tok::PreTokenizer> pre_tokenizer;
  std::unique_ptr<tok::PostProcessor> post_processor;
  std::unique_ptr<tok::Decoder> decoder;

  std::unordered_map<std::string, int32_t> added_ids;   // content -> id
  std::unordered_map<int32_t, AddedToken> added_by_id;  // id -> token
  std::unordered_set<std::string> special_contents;
  AddedMatcher raw_matcher, normalized_matcher;
  int32_t vocab_size = 0;

  std::optional<int32_t> token_id(std::string_view token) const {
    auto it = added_ids.find(std::string(token));
    if (it != added_ids.end()) return it->second;
    return model->token_to_id(token);
  }
  std::optional<std::string_view> token_text(int32_t id) const {
    auto it = added_by_id.find(id);
    if (it != added_by_id.end()) return std::string_view(it->second.content);
    return model->id_to_token(id);
  }

  void load_added_tokens(const io::JsonValue& list);
  void finish();
  void split_added(const Segment& seg, const AddedMatcher& matcher,
                   std::vector<Segment>& out) const;
};

void Tokenizer::Impl::load_added_tokens(const io::JsonValue& list) {
  if (!list.is_array()) list.fail(fmt::format("must be an array, found {}", list.type_name()));
  std::vector<AddedToken> tokens;
  std::vector<int64_t> file_ids;
  for (size_t i = 0; i < list.size(); ++i) {
    const io::JsonValue e = list.at(i);
    AddedToken t;
    t.content = e.get_string("content");
    t.special = e.get_bool("special", false);
    t.single_word = e.get_bool("single_word", false);
    t.lstrip = e.get_bool("lstrip", false);
    t.rstrip = e.get_bool("rstrip", false);
    t.normalized = e.get_bool("normalized", !t.special);
    tokens.push_back(std::move(t));
    file_ids.push_back(e.get_int("id", -1));
  }
  // The reference's order: special tokens are registered first, then every token gets its id.
  std::vector<const AddedToken*> specials, classics;
  for (const AddedToken& t : tokens) {
    if (t.special && !t.content.empty() && special_contents.insert(t.content).second) {
      specials.push_back(&t);
    }
  }
  int32_t max_added = -1;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const AddedToken& t = tokens[i];
    if (t.content.empty()) continue;
    // Skip an exact repeat of a token already added (the reference compares all fields).
    auto same = added_ids.find(t.content);
    if (same != added_ids.end() && added_by_id.at(same->second) == t) continue;
    int32_t id = 0;
    if (auto existing = token_id(t.content)) {
      id = *existing;
    } else {
      const auto model_size = static_cast<int32_t>(model->size());
      id = max_added < 0                                  ? model_size
           : (max_added >= model_size || model_size == 0) ? max_added + 1
                                                          : model_size;
    }
    if (file_ids[i] >= 0 && file_ids[i] != id) {
      log::warn("{}: added token '{}' has id {} in the file but gets id {} (as in the reference)",
                path, t.content, file_ids[i], id);
    }
    added_ids[t.content] = id;
    added_by_id[id] = t;
    max_added = std::max(max_added, id);
    if (!special_contents.count(t.content)) classics.push_back(&t);
  }
  for (const auto* group : {&specials, &classics}) {
    for (const AddedToken* t : *group) {
      const int32_t id = *token_id(t->content);
      if (!t->normalized) {
        raw_matcher.add(t->content, id);
      } else {
        std::string pattern = t->content;
        if (normalizer) normalizer->normalize(pattern);
        normalized_matcher.add(pattern, id);
      }
    }
  }
}

void Tokenizer::Impl::split_added(const Segment& seg, const AddedMatcher& matcher,
                                  std::vector<Segment>& out) const {
  const std::string& s = seg.text;
  if (s.empty()) return;
  auto char_before = [&s](size_t pos) {  // code point ending at byte pos (pos > 0)
    size_t start = pos - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80) --start;
    size_t len = 0;
    return std::pair<char32_t, size_t>(tok::decode_utf8(s, start, &len), start);
  };
  size_t done = 0;  // end of the last emitted segment
  for (const AddedMatcher::Match& m : matcher.find_all(s)) {
    size_t start = m.start, stop = m.end;
    const AddedToken& t = added_by_id.at(m.id);
    if (t.single_word) {
      size_t len = 0;
      const bool word_before = start > 0 && tok::is_word_char(char_before(start).first);
      const bool word_after = stop < s.size() && tok::is_word_char(tok::decode_utf8(s, stop, &len));
      if (word_before || word_after) continue;
    }
    if (t.lstrip) {
      size_t ws_start = start;
      while (ws_start > 0) {
        const auto [cp, at] = char_before(ws_start);
        if (!tok::is_whitespace(cp)) break;
        ws_start = at;
      }
      start = std::max(ws_start, done);
    }
    if (t.rstrip) {
      while (stop < s.size()) {
        size_t len = 0;
        if (!tok::is_whitespace(tok::decode_utf8(s, stop, &len))) break;
        stop += len;
      }
    }
    if (done < start) out.push_back({s.substr(done, start - done), -1, seg.at_start && done == 0});
    out.push_back({s.substr(start, stop - start), m.id, false});
    done = stop;
  }
  if (done < s.size()) out.push_back({s.substr(done), -1, seg.at_start && done == 0});
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::from_file(const std::string& tokenizer_json_path) {
  return from_json_text(read_file(tokenizer_json_path), tokenizer_json_path);
}

Tokenizer Tokenizer::from_json_text(std::string_view json_text, const std::string& tokenizer_json_path) {
  auto im = std::make_unique<Impl>();
  im->path = tokenizer_json_path;
  const io::JsonValue root = io::parse_json(json_text, tokenizer_json_path);
  if (!root.is_object()) root.fail(fmt::format("must be an object, found {}", root.type_name()));
  for (const char* key : {"truncation", "padding"}) {
    if (auto v = root.find(key)) v->fail("is set; truncation and padding are not supported");
  }

  const io::JsonValue model = root.at("model");
  if (!model.is_object()) model.fail(fmt::format("must be an object, found {}", model.type_name()));
  const std::string type = model.get_string("type", model.contains("merges") ? "BPE" : "");
  if (type.empty()) model.fail("has no \"type\"");
  if (type != "BPE") tok::unsupported(model, "model", type);
  im->model = tok::BpeModel::from_json(model);

  if (auto j = root.find("normalizer")) im->normalizer = tok::make_normalizer(*j);
  if (auto j = root.find("pre_tokenizer")) im->pre_tokenizer = tok::make_pre_tokenizer(*j);
  if (auto j = root.find("post_processor")) im->post_processor = tok::make_post_processor(*j);
  if (auto j = root.find("decoder")) im->decoder = tok::make_decoder(*j);
  if (auto j = root.find("added_tokens")) im->load_added_tokens(*j);
  im->finish();
  return Tokenizer(std::move(im));
}

void Tokenizer::Impl::finish() {
  int32_t max_id = model->max_id();
  for (const auto& kv : added_by_id) max_id = std::max(max_id, kv.first);
  vocab_size = max_id + 1;
  if (vocab_size == 0) abl::fail("{}: the vocabulary is empty", path);
  if (post_processor) {
    // The special tokens the post-processor adds must be tokens of this vocabulary: an id it does
    // not have would reach the model as an embedding row that may not exist (found by fuzzing).
    std::vector<int32_t> added;
    post_processor->process(added);
    for (int32_t id : added) {
      if (!token_text(id)) abl::fail("{}: post_processor adds token id {}, which is not in the vocabulary", path, id);
    }
  }
}

Tokenizer Tokenizer::from_tiktoken(const std::string& folder) {
  const tok::TiktokenFolder f = tok::read_tiktoken_folder(folder);
  auto im = std::make_unique<Impl>();
  im->path = f.vocab_path;
  im->model = tok::BpeModel::from_ranks(f.token_bytes, f.vocab_path);
  // What tiktoken does, in tokenizer.json's terms (transformers' TikTokenConverter writes the
  // same): split with the remote code's pattern, then bytes as byte-level characters for the
  // BPE, and back to bytes in the decoder. The special tokens are matched in the raw text first,
  // as tiktoken's encode with allowed_special="all" and transformers' added-token split do.
  const nlohmann::json byte_level = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
  nlohmann::json split = {{"type", "Split"}, {"behavior", "Isolated"}, {"invert", false}};
  split["pattern"] = {{"Regex", f.pattern}};
  nlohmann::json pipeline;
  pipeline["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", nlohmann::json::array({split, byte_level})}};
  pipeline["decoder"] = byte_level;
  pipeline["added_tokens"] = f.added_tokens;
  for (nlohmann::json& t : pipeline["added_tokens"]) t.erase("id");  // checked below, without a warning each
  const io::JsonValue root = io::parse_json(pipeline.dump(), f.code_path + " with tokenizer_config.json");
  im->pre_tokenizer = tok::make_pre_tokenizer(root.at("pre_tokenizer"));
  im->decoder = tok::make_decoder(root.at("decoder"));
  im->load_added_tokens(root.at("added_tokens"));
  // Special id k is the k-th after the ranks; two with one name, or a name that is also a token
  // of tiktoken.model, would shift them.
  for (const nlohmann::json& t : f.added_tokens) {
    const auto id = im->token_id(t.at("content").get<std::string>());
    if (!id || *id != t.at("id").get<int32_t>()) {
      abl::fail("{}: special token '{}' (id {}) would get id {}: two special ids share the name, or the name is also a "
                "token of {}",
                folder, t.at("content").get<std::string>(), t.at("id").get<int32_t>(), id.value_or(-1), f.vocab_path);
    }
  }
  im->finish();
  return Tokenizer(std::move(im));
}

Tokenizer Tokenizer::from_model_folder(const std::string& folder) {
  const fs::path dir(folder);
  if (fs::is_regular_file(dir / "tokenizer.json")) return from_file((dir / "tokenizer.json").string());
  if (fs::is_regular_file(dir / "tiktoken.model")) return from_tiktoken(folder);
  abl::fail("model folder {} has no tokenizer.json (nor a tiktoken.model)", folder);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  const Impl& im = *impl_;
  size_t bad = 0;
  if (!abl::valid_utf8(text, &bad))
    abl::fail("cannot tokenize text: invalid UTF-8 at byte {}", bad);
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  std::vector<Segment> raw, normalized;
  std::vector<Piece> pieces;
  im.split_added(Segment{std::string(text), -1, true}, im.raw_matcher, raw);
  for (Segment& seg : raw) {
    if (seg.id >= 0) {
      ids.push_back(seg.id);
      continue;
    }
    if (im.normalizer) im.normalizer->normalize(seg.text);
    normalized.clear();
    im.split_added(seg, im.normalized_matcher, normalized);
    for (Segment& ns : normalized) {
      if (ns.id >= 0) {
        ids.push_back(ns.id);
        continue;
      }
      pieces.clear();
      pieces.push_back(Piece{std::move(ns.text), ns.at_start});
      if (im.pre_tokenizer) im.pre_tokenizer->pre_tokenize(pieces);
      for (const Piece& p : pieces) im.model->tokenize(p.text, ids);
    }
  }
  if (add_special_tokens && im.post_processor) im.post_processor->process(ids);
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  const Impl& im = *impl_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0) abl::fail("cannot decode token id {}: token ids are never negative", id);
    const auto t = im.token_text(id);
    // An id without a token decodes to nothing, before the decoder chain sees the others, as in
    // the reference (its id_to_token gives None and decode drops the id): a model whose padded
    // embedding matrix is larger than the tokenizer's vocabulary can generate such ids.
    if (!t) continue;
    if (skip_special_tokens && im.special_contents.count(std::string(*t))) continue;
    tokens.emplace_back(*t);
  }
  std::string out;
  if (!im.decoder) {
    for (size_t k = 0; k < tokens.size(); ++k) {
      if (k > 0) out += ' ';
      out += tokens[k];
    }
    return out;
  }
  im.decoder->decode_chain(tokens);
  for (const std::string& t : tokens) out += t;
  return out;
}

int32_t Tokenizer::vocab_size() const { return impl_->vocab_size; }

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  return impl_->token_id(token);
}

std::string Tokenizer::id_to_token(int32_t id) const {
  const auto t = impl_->token_text(id);
  if (!t) abl::fail("token id {} is not in the vocabulary of {}", id, impl_->path);
  return std::string(*t);
}

bool Tokenizer::is_special(int32_t id) const {
  const auto t = impl_->token_text(id);
  return t && impl_->special_contents.count(std::string(*t)) > 0;
}

}  // namespace abl::text
