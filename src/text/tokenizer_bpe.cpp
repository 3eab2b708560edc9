// The BPE model of tokenizer.json: vocabulary, ranked merges applied with a priority queue over a
// linked list of symbols (lowest rank first, leftmost on ties), byte fallback, unk fusing,
// ignore_merges. Stale queue entries are recognised by their result id, as in the reference.
#include <algorithm>
#include <functional>
#include <queue>

#include "abl/core/error.h"
#include "tokenizer_parts.h"

namespace abl::text::tok {
namespace {

uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

uint64_t hash_text(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, then mixed
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return mix64(h);
}

size_t table_size(size_t n) {
  size_t cap = 16;
  while (cap < 2 * n) cap <<= 1;
  return cap;
}

constexpr int32_t kMaxTokenId = (1 << 26) - 1;  // guards the id-indexed tables against junk ids

}  // namespace

void VocabIndex::reserve(size_t n, size_t bytes) {
  arena_.reserve(bytes);
  offsets_.reserve(n + 1);
  ids_.reserve(n);
  if (2 * n > slots_.size()) {
    slots_.assign(table_size(n), 0);
    slot_hash_.assign(slots_.size(), 0);
    mask_ = slots_.size() - 1;
    for (size_t k = 0; k < ids_.size(); ++k) {  // re-insert existing keys
      const uint64_t h = hash_text(key(k));
      size_t slot = h & mask_;
      while (slots_[slot] != 0) slot = (slot + 1) & mask_;
      slots_[slot] = static_cast<uint32_t>(k + 1);
      slot_hash_[slot] = static_cast<uint32_t>(h >> 32);
    }
  }
}

void VocabIndex::grow() { reserve(std::max<size_t>(16, 2 * ids_.size()), arena_.size()); }

void VocabIndex::add(std::string_view token, int32_t id) {
  if (2 * (ids_.size() + 1) > slots_.size()) grow();
  const uint64_t h = hash_text(token);
  const auto tag = static_cast<uint32_t>(h >> 32);
  size_t slot = h & mask_;
  for (; slots_[slot] != 0; slot = (slot + 1) & mask_) {
    if (slot_hash_[slot] == tag && key(slots_[slot] - 1) == token) {
      ids_[slots_[slot] - 1] = id;
      return;
    }
  }
  ABL_CHECK(arena_.size() + token.size() < UINT32_MAX, "vocabulary too large");
  arena_.append(token);
  offsets_.push_back(static_cast<uint32_t>(arena_.size()));
  ids_.push_back(id);
  slots_[slot] = static_cast<uint32_t>(ids_.size());
  slot_hash_[slot] = tag;
}

std::optional<int32_t> VocabIndex::find(std::string_view token) const {
  if (slots_.empty()) return std::nullopt;
  const uint64_t h = hash_text(token);
  const auto tag = static_cast<uint32_t>(h >> 32);
  for (size_t slot = h & mask_;; slot = (slot + 1) & mask_) {
    const uint32_t k = slots_[slot];
    if (k == 0) return std::nullopt;
    if (slot_hash_[slot] == tag && key(k - 1) == token) return ids_[k - 1];
  }
}

std::unique_ptr<BpeModel> BpeModel::from_json(const io::JsonValue& model) {
  auto m = std::unique_ptr<BpeModel>(new BpeModel);
  if (auto d = model.find("dropout")) {
    if (d->as_double() != 0.0) d->fail("BPE dropout is not supported (it makes encoding random)");
  }
  m->continuing_subword_prefix_ = model.get_string("continuing_subword_prefix", "");
  m->end_of_word_suffix_ = model.get_string("end_of_word_suffix", "");
  m->fuse_unk_ = model.get_bool("fuse_unk", false);
  m->byte_fallback_ = model.get_bool("byte_fallback", false);
  m->ignore_merges_ = model.get_bool("ignore_merges", false);

  // Vocabulary: token -> id.
  const io::JsonValue vocab = model.at("vocab");
  if (!vocab.is_object()) vocab.fail(fmt::format("must be an object, found {}", vocab.type_name()));
  m->vocab_.reserve(vocab.size(), 8 * vocab.size());
  int32_t max_id = -1;
  for (auto it = vocab.json().begin(); it != vocab.json().end(); ++it) {
    const nlohmann::json& v = it.value();
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxTokenId) {
      vocab.fail(fmt::format("token '{}' has id {}, expected an integer in [0, {}]", it.key(),
                             v.dump(), kMaxTokenId));
    }
    const auto id = static_cast<int32_t>(v.get<int64_t>());
    m->vocab_.add(it.key(), id);
    max_id = std::max(max_id, id);
  }
  m->n_tokens_ = m->vocab_.size();
  m->token_key_.assign(static_cast<size_t>(max_id + 1), -1);
  for (size_t k = 0; k < m->vocab_.size(); ++k) {
    m->token_key_[static_cast<size_t>(m->vocab_.id(k))] = static_cast<int32_t>(k);
  }

  for (int b = 0; b < 256; ++b) {
    m->byte_ids_[static_cast<size_t>(b)] =
        m->vocab_.find(fmt::format("<0x{:02X}>", b)).value_or(-1);
  }
  if (auto unk = model.find("unk_token")) {
    m->unk_token_ = unk->as_string();
    m->unk_id_ = m->vocab_.find(m->unk_token_);
  }

  // Merges: "a b" strings or [a, b] pairs; the rank is the position, a repeated pair keeps the
  // last rank, and "#version" lines are skipped as in the reference.
  const io::JsonValue merges = model.at("merges");
  if (!merges.is_array())
    merges.fail(fmt::format("must be an array, found {}", merges.type_name()));
  const nlohmann::json& list = merges.json();
  m->merge_keys_.assign(table_size(list.size()), ~uint64_t{0});
  m->merge_vals_.assign(m->merge_keys_.size(), Merge{0, -1});
  m->merge_mask_ = m->merge_keys_.size() - 1;
  const size_t prefix_len = m->continuing_subword_prefix_.size();
  uint32_t rank = 0;
  std::string_view left, right;
  std::string joined;
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& e = list[i];
    if (e.is_string()) {
      const std::string& line = e.get_ref<const std::string&>();
      if (line.rfind("#version", 0) == 0) continue;
      const size_t sp = line.find(' ');
      if (sp == std::string::npos || line.find(' ', sp + 1) != std::string::npos) {
        merges.at(i).fail(
            fmt::format("merge '{}' must be two tokens separated by one space", line));
      }
      left = std::string_view(line).substr(0, sp);
      right = std::string_view(line).substr(sp + 1);
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      left = e[0].get_ref<const std::string&>();
      right = e[1].get_ref<const std::string&>();
    } else {
      merges.at(i).fail("a merge must be \"a b\" or [\"a\", \"b\"]");
    }
    const auto a = m->vocab_.find(left);
    const auto b = m->vocab_.find(right);
    joined.assign(left);
    joined.append(right.substr(std::min(prefix_len, right.size())));
    const auto c = m->vocab_.find(joined);
    if (!a || !b || !c) {
      const std::string_view missing = !a ? left : !b ? right : std::string_view(joined);
      merges.at(i).fail(fmt::format("merge token '{}' is not in the vocabulary", missing));
    }
    m->add_merge(*a, *b, Merge{rank++, *c});
  }
  return m;
}

std::unique_ptr<BpeModel> BpeModel::from_ranks(const std::vector<std::string>& token_bytes,
                                               const std::string& origin) {
  ABL_CHECK(token_bytes.size() <= static_cast<size_t>(kMaxTokenId), "{}: {} tokens are too many",
            origin, token_bytes.size());
  auto m = std::unique_ptr<BpeModel>(new BpeModel);
  m->ignore_merges_ = true;  // tiktoken looks a whole piece up before it merges bytes
  const auto& chars = byte_level_chars();
  size_t bytes = 0;
  for (const std::string& t : token_bytes) bytes += t.size();
  VocabIndex raw;  // the same tokens by their bytes, for finding the merges
  raw.reserve(token_bytes.size(), bytes);
  m->vocab_.reserve(token_bytes.size(), 2 * bytes);
  std::string key;
  for (size_t id = 0; id < token_bytes.size(); ++id) {
    const std::string& t = token_bytes[id];
    if (t.empty()) abl::fail("{}: token {} is empty", origin, id);
    if (auto seen = raw.find(t)) abl::fail("{}: tokens {} and {} have the same bytes", origin, *seen, id);
    raw.add(t, static_cast<int32_t>(id));
    key.clear();
    for (char c : t) key += chars[static_cast<unsigned char>(c)];
    m->vocab_.add(key, static_cast<int32_t>(id));
  }
  m->n_tokens_ = m->vocab_.size();
  m->token_key_.resize(token_bytes.size());
  for (size_t k = 0; k < m->vocab_.size(); ++k) m->token_key_[static_cast<size_t>(m->vocab_.id(k))] = static_cast<int32_t>(k);

  // Every split of a token into two tokens is a merge at the token's rank: tiktoken merges the
  // adjacent pair whose concatenation has the lowest rank, leftmost first, as merge_word does.
  std::vector<std::pair<std::pair<int32_t, int32_t>, int32_t>> merges;
  for (size_t id = 0; id < token_bytes.size(); ++id) {
    const std::string_view t = token_bytes[id];
    for (size_t cut = 1; cut < t.size(); ++cut) {
      const auto left = raw.find(t.substr(0, cut));
      const auto right = left ? raw.find(t.substr(cut)) : std::nullopt;
      if (right) merges.push_back({{*left, *right}, static_cast<int32_t>(id)});
    }
  }
  m->merge_keys_.assign(table_size(merges.size()), ~uint64_t{0});
  m->merge_vals_.assign(m->merge_keys_.size(), Merge{0, -1});
  m->merge_mask_ = m->merge_keys_.size() - 1;
  for (const auto& [pair, id] : merges) m->add_merge(pair.first, pair.second, Merge{static_cast<uint32_t>(id), id});
  return m;
}

void BpeModel::add_merge(int32_t left, int32_t right, Merge merge) {
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  size_t h = mix64(key) & merge_mask_;
  while (merge_keys_[h] != ~uint64_t{0} && merge_keys_[h] != key) h = (h + 1) & merge_mask_;
  merge_keys_[h] = key;
  merge_vals_[h] = merge;
}

std::optional<std::string_view> BpeModel::id_to_token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= token_key_.size() ||
      token_key_[static_cast<size_t>(id)] < 0) {
    return std::nullopt;
  }
  return vocab_.key(static_cast<size_t>(token_key_[static_cast<size_t>(id)]));
}

std::optional<BpeModel::Merge> BpeModel::find_merge(int32_t left, int32_t right) const {
  const uint64_t key =
      (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  for (size_t h = mix64(key) & merge_mask_;; h = (h + 1) & merge_mask_) {
    if (merge_keys_[h] == key) return merge_vals_[h];
    if (merge_keys_[h] == ~uint64_t{0}) return std::nullopt;
  }
}

void BpeModel::tokenize(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (auto id = vocab_.find(word)) {
      out.push_back(*id);
      return;
    }
  }
  if (word.size() >= kCacheMaxWordBytes) {
    merge_word(word, out);
    return;
  }
  CacheShard& shard = cache_[hash_text(word) % kCacheShards];
  const std::string key(word);
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    auto it = shard.words.find(key);
    if (it != shard.words.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t first = out.size();
  merge_word(word, out);
  std::lock_guard<std::mutex> lock(shard.mu);
  if (shard.words.size() < kCacheWordsPerShard) {
    shard.words.emplace(
        key, std::vector<int32_t>(out.begin() + static_cast<ptrdiff_t>(first), out.end()));
  }
}

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& out) const {
  struct Symbol {
    int32_t id;
    int32_t prev, next;
    bool removed;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  auto add = [&symbols](int32_t id) {
    const auto n = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, n - 1, -1, false});
    if (n > 0) symbols[static_cast<size_t>(n - 1)].next = n;
  };

  // One symbol per character; unknown characters become byte tokens, or unk (fused if asked).
  bool pending_unk = false;
  std::string piece;
  for (size_t i = 0; i < word.size();) {
    size_t len = 0;
    decode_utf8(word, i, &len);
    piece.clear();
    if (i > 0) piece += continuing_subword_prefix_;
    piece.append(word.substr(i, len));
    if (i + len >= word.size()) piece += end_of_word_suffix_;
    i += len;
    if (auto id = vocab_.find(piece)) {
      if (pending_unk) add(*unk_id_);
      pending_unk = false;
      add(*id);
      continue;
    }
    if (byte_fallback_) {
      const bool all = std::all_of(piece.begin(), piece.end(), [this](char c) {
        return byte_ids_[static_cast<unsigned char>(c)] >= 0;
      });
      if (all) {
        for (char c : piece) add(byte_ids_[static_cast<unsigned char>(c)]);
        continue;
      }
    }
    if (!unk_token_.empty()) {
      if (!unk_id_) abl::fail("BPE unk_token '{}' is not in the vocabulary", unk_token_);
      if (pending_unk && !fuse_unk_) add(*unk_id_);
      pending_unk = true;
    }
    // Without unk_token an unknown character is dropped, as in the reference.
  }
  if (pending_unk) add(*unk_id_);

  struct Candidate {
    uint32_t rank;
    int32_t pos;
    int32_t new_id;
  };
  auto later = [](const Candidate& x, const Candidate& y) {
    return x.rank != y.rank ? x.rank > y.rank : x.pos > y.pos;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
  for (size_t k = 0; k + 1 < symbols.size(); ++k) {
    if (auto mg = find_merge(symbols[k].id, symbols[k + 1].id)) {
      queue.push({mg->rank, static_cast<int32_t>(k), mg->new_id});
    }
  }
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& cur = symbols[static_cast<size_t>(top.pos)];
    if (cur.removed || cur.next < 0) continue;
    Symbol& right = symbols[static_cast<size_t>(cur.next)];
    const auto current = find_merge(cur.id, right.id);
    if (!current || current->new_id != top.new_id) continue;  // stale entry
    cur.id = top.new_id;
    right.removed = true;
    cur.next = right.next;
    if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = top.pos;
    if (cur.prev >= 0) {
      if (auto mg = find_merge(symbols[static_cast<size_t>(cur.prev)].id, cur.id)) {
        queue.push({mg->rank, cur.prev, mg->new_id});
      }
    }
    if (cur.next >= 0) {
      if (auto mg = find_merge(cur.id, symbols[static_cast<size_t>(cur.next)].id)) {
        queue.push({mg->rank, top.pos, mg->new_id});
      }
    }
  }
  for (const Symbol& s : symbols) {
    if (!s.removed) out.push_back(s.id);
  }
}

}  // namespace abl::text::tok
