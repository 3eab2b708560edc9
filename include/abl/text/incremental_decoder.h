// Incremental detokenization: text grows token by token and a multi-byte character split across
// tokens appears only once complete. It decodes a short window of recent ids and emits the part
// beyond what the window's start already produced, so decoders that treat the first token
// specially (SentencePiece's leading-space strip) stay exact.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "abl/text/tokenizer.h"

namespace abl::text {

class IncrementalDecoder {
 public:
  explicit IncrementalDecoder(const Tokenizer& tok, bool skip_special_tokens = true);
  // Adds one id; returns the text that became final with it (may be empty). An id the tokenizer
  // has no token for adds nothing (as in Tokenizer::decode); a negative id throws and is not added.
  std::string push(int32_t id);
  // All text emitted so far (may lag the ids by an incomplete character).
  const std::string& text() const { return text_; }
  const std::vector<int32_t>& ids() const { return ids_; }
  // The exact decoding of every id pushed (what a final decode returns).
  std::string finish() const;

 private:
  const Tokenizer* tok_;
  bool skip_special_;
  std::vector<int32_t> ids_;
  size_t prefix_ = 0;  // window start
  size_t read_ = 0;    // ids already turned into emitted text
  std::string text_;
};

}  // namespace abl::text
