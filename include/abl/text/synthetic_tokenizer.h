// The tokenizer of synthetic models: byte-level (every UTF-8 byte is a token, no merges), ChatML
// special tokens at the top of the vocabulary, and filler tokens "<synthetic_N>" for every other
// id so that any id a random model emits decodes to text.
#pragma once
#include <cstdint>
#include <string>

namespace abl::text {

// A genuine tokenizer.json text (V ≥ 259) for Tokenizer::from_json_text.
std::string synthetic_tokenizer_json(int64_t vocab_size);

}  // namespace abl::text
