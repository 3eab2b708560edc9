// Internal parts of the tokenizer.json pipeline: Unicode helpers, patterns, normalizers,
// pre-tokenizers, the BPE model, decoders and post-processors. Each part is built from its JSON
// node (an io::JsonValue, so errors name the file and the key) and mirrors the reference semantics.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "abl/io/json_file.h"

namespace abl::text::tok {

// ---- Unicode helpers (tokenizer_unicode.cpp) --------------------------------------------------

// Code point starting at byte i of valid UTF-8 text; *len receives its byte length.
char32_t decode_utf8(std::string_view s, size_t i, size_t* len);
void append_utf8(std::string& out, char32_t cp);
// Unicode White_Space: Rust's char::is_whitespace, which the reference's Strip normalizer and
// added-token lstrip/rstrip use, and Oniguruma's \s (the Regex below spells it out the same).
// U+0085 and U+3000 are whitespace; U+180E, U+FEFF, U+200B and U+001C..U+001F are not.
bool is_whitespace(char32_t cp);
// Word character as in the reference's added-token single_word check (Rust regex \w: Alphabetic,
// marks, Nd, Pc, ZWNJ/ZWJ; Alphabetic includes Nl and the circled/squared letter symbols).
bool is_word_char(char32_t cp);
// Bytes to text, each maximal invalid subsequence replaced by one U+FFFD (Rust from_utf8_lossy).
std::string utf8_lossy(std::string_view bytes);

enum class NormalForm { nfc, nfd, nfkc, nfkd };
std::string unicode_normalize(std::string_view s, NormalForm form);

// The byte-level alphabet: each byte has a printable stand-in character.
const std::array<std::string, 256>& byte_level_chars();  // byte -> UTF-8 of its stand-in
int byte_level_byte(char32_t cp);                        // stand-in -> byte, or -1

// A PCRE2 regex with the reference's (Oniguruma's) meaning of \s, \w, \h, \v and their
// negations (see oniguruma_to_pcre2 in tokenizer_unicode.cpp). Immutable after
// construction; matching is thread-safe (match data is per call).
class Regex {
 public:
  Regex(const std::string& pattern, const io::JsonValue& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  // Non-overlapping matches [start, end) left to right; an empty match advances by one character.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view s) const;

 private:
  struct Code;
  std::unique_ptr<Code> code_;
};

// {"String": "..."} or {"Regex": "..."}, as in Split, Replace and their decoder twin.
class Pattern {
 public:
  static Pattern from_json(const io::JsonValue& j);
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view s) const;

 private:
  std::string literal_;
  std::shared_ptr<const Regex> regex_;
};
std::string replace_all(std::string_view s, const Pattern& pattern, std::string_view content);

// ---- Normalizers (tokenizer_normalizers.cpp) --------------------------------------------------

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& s) const = 0;
};
std::unique_ptr<Normalizer> make_normalizer(const io::JsonValue& j);

// ---- Pre-tokenizers (tokenizer_pretokenizers.cpp) ---------------------------------------------

// A stretch of normalized text; at_start marks the one that begins at offset 0 of the input
// (Metaspace's prepend_scheme "first" looks at it).
struct Piece {
  std::string text;
  bool at_start = false;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void pre_tokenize(std::vector<Piece>& pieces) const = 0;
};
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const io::JsonValue& j);

// ---- BPE model (tokenizer_bpe.cpp) -------------------------------------------------------------

// String -> id table with string_view lookups: open addressing over token strings stored back to
// back in one arena (a 262k vocabulary would otherwise be 262k small allocations).
class VocabIndex {
 public:
  void add(std::string_view token, int32_t id);  // a repeated token keeps the last id
  std::optional<int32_t> find(std::string_view token) const;
  std::string_view key(size_t k) const {
    return std::string_view(arena_).substr(offsets_[k], offsets_[k + 1] - offsets_[k]);
  }
  size_t size() const { return ids_.size(); }
  int32_t id(size_t k) const { return ids_[k]; }
  void reserve(size_t n, size_t bytes);

 private:
  void grow();
  std::string arena_;
  std::vector<uint32_t> offsets_{0};  // key k is arena_[offsets_[k], offsets_[k + 1])
  std::vector<int32_t> ids_;
  std::vector<uint32_t> slots_;  // key index + 1, 0 for an empty slot
  std::vector<uint32_t> slot_hash_;
  size_t mask_ = 0;
};

class BpeModel {
 public:
  static std::unique_ptr<BpeModel> from_json(const io::JsonValue& model);
  // A tiktoken vocabulary: the bytes of token id k at [k] (its rank). The keys become byte-level
  // characters (a ByteLevel pre-tokenizer and decoder go with it), any two tokens whose
  // concatenation is a token merge at that token's rank, and a piece that is a token is taken
  // whole before merging, which is tiktoken's byte-pair merge exactly (given every single byte is
  // a token: read_tiktoken_folder checks it).
  static std::unique_ptr<BpeModel> from_ranks(const std::vector<std::string>& token_bytes,
                                              const std::string& origin);

  // Appends the ids of one pre-token. Thread-safe (the word cache is locked per shard).
  void tokenize(std::string_view word, std::vector<int32_t>& out) const;

  std::optional<int32_t> token_to_id(std::string_view token) const { return vocab_.find(token); }
  std::optional<std::string_view> id_to_token(int32_t id) const;
  size_t size() const { return n_tokens_; }  // vocabulary entries (the reference's model size)
  int32_t max_id() const { return static_cast<int32_t>(token_key_.size()) - 1; }

 private:
  struct Merge {
    uint32_t rank;
    int32_t new_id;
  };
  std::optional<Merge> find_merge(int32_t left, int32_t right) const;
  void add_merge(int32_t left, int32_t right, Merge merge);
  void merge_word(std::string_view word, std::vector<int32_t>& out) const;

  std::vector<int32_t> token_key_;  // id -> key index in vocab_, or -1
  size_t n_tokens_ = 0;
  VocabIndex vocab_;
  // Merge table: open addressing keyed by (left id, right id).
  std::vector<uint64_t> merge_keys_;
  std::vector<Merge> merge_vals_;
  size_t merge_mask_ = 0;

  std::string unk_token_;
  std::optional<int32_t> unk_id_;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  std::array<int32_t, 256> byte_ids_{};  // <0xXX> token ids, -1 where absent

  struct CacheShard {
    std::mutex mu;
    std::unordered_map<std::string, std::vector<int32_t>> words;
  };
  static constexpr size_t kCacheShards = 32;
  static constexpr size_t kCacheWordsPerShard = 4096;
  static constexpr size_t kCacheMaxWordBytes = 256;
  mutable std::array<CacheShard, kCacheShards> cache_;
};

// ---- tiktoken folders (tokenizer_tiktoken.cpp) -----------------------------------------------

// What a folder with tiktoken.model (and no tokenizer.json) holds: the token bytes by rank, the
// remote code's split pattern, and the special tokens after the ranks in tokenizer.json's
// added_tokens form. Errors name the file and line.
struct TiktokenFolder {
  std::string vocab_path, code_path;    // tiktoken.model, the remote tokenizer module
  std::vector<std::string> token_bytes;  // token id (rank) -> bytes
  std::string pattern;                   // pat_str
  nlohmann::json added_tokens;           // every special id, in id order
};
TiktokenFolder read_tiktoken_folder(const std::string& folder);

// ---- Decoders and post-processors (tokenizer_decoders.cpp) ------------------------------------

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};
std::unique_ptr<Decoder> make_decoder(const io::JsonValue& j);

// Adds special tokens around the ids; applied only when add_special_tokens is set.
class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  virtual void process(std::vector<int32_t>& ids) const = 0;
};
std::unique_ptr<PostProcessor> make_post_processor(const io::JsonValue& j);

// "type" of a component, required; errors name the key.
std::string component_type(const io::JsonValue& j);
[[noreturn]] void unsupported(const io::JsonValue& j, std::string_view kind, std::string_view type);

}  // namespace abl::text::tok
