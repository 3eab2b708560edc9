// Tokenizer read from a Hugging Face tokenizer.json: BPE (byte-level or SentencePiece-style with
// byte fallback), added tokens, normalizers, pre-tokenizers, post-processors and decoders, with
// the reference library's exact semantics; or from a tiktoken folder, run by the same pipeline.
// Unsupported components are load errors, never ignored.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace abl::text {

class Tokenizer {
 public:
  // Errors (unreadable file, invalid JSON, unsupported component) name the file and the fault.
  static Tokenizer from_file(const std::string& tokenizer_json_path);
  // The same from the text of a tokenizer.json; `origin` names it in errors.
  static Tokenizer from_json_text(std::string_view json_text, const std::string& origin);
  // A tiktoken folder (Kimi-K2, Moonlight): tiktoken.model, the split pattern and the number of
  // special ids read from the remote tokenizer code tokenizer_config.json's auto_map names, the
  // special names from its added_tokens_decoder. Encodes and decodes as tiktoken does.
  static Tokenizer from_tiktoken(const std::string& folder);
  // tokenizer.json when the folder has one, else tiktoken.model; errors name the folder.
  static Tokenizer from_model_folder(const std::string& folder);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Literal added-token strings in `text` are always matched as those tokens. add_special_tokens
  // applies the post-processor (e.g. BOS). `text` must be valid UTF-8. Thread-safe.
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens) const;
  // The tokenizer.json decoder chain (no clean_up_tokenization_spaces). Ids without a token (a
  // padded vocabulary's extra rows, holes in the vocabulary) are skipped, as the reference does;
  // a negative id throws.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const;

  // Max id + 1, added tokens included. A model's vocab_size (config.json) may be larger.
  int32_t vocab_size() const;
  std::optional<int32_t> token_to_id(std::string_view token) const;
  std::string id_to_token(int32_t id) const;  // throws on an id without a token
  bool is_special(int32_t id) const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace abl::text
