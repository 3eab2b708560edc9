// Built as tokenizer.json text and loaded through the normal path, so synthetic models exercise
// the same tokenizer code as downloaded ones. Specials: V-3 <|endoftext|>, V-2 <|im_start|>,
// V-1 <|im_end|>.
#include "abl/text/synthetic_tokenizer.h"

#include <nlohmann/json.hpp>

#include "abl/core/error.h"

namespace abl::text {

std::string synthetic_tokenizer_json(int64_t V) {
  ABL_CHECK(V >= 259, "a synthetic tokenizer needs a vocabulary of at least 259 tokens, got {}", V);
  // The byte-level alphabet: printable bytes stand for themselves, the rest map to U+0100 + k.
  std::vector<uint32_t> byte_char(256);
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
    byte_char[b] = printable ? b : next++;
  }
  auto utf8 = [](uint32_t cp) {
    std::string s;
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
  };
  // A std::map-backed object: ordered_json's linear lookups make 150k insertions quadratic.
  nlohmann::json vocab = nlohmann::json::object();
  for (uint32_t b = 0; b < 256; ++b) vocab[utf8(byte_char[b])] = b;
  for (int64_t id = 256; id < V - 3; ++id) vocab["<synthetic_" + std::to_string(id) + ">"] = id;
  const char* specials[3] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
  for (int i = 0; i < 3; ++i) {
    added.push_back({{"id", V - 3 + i}, {"content", specials[i]}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", true}});
  }
  nlohmann::ordered_json j = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model", {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
                 {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false},
                 {"ignore_merges", false}, {"vocab", vocab}, {"merges", nlohmann::ordered_json::array()}}},
  };
  return j.dump();
}

}  // namespace abl::text
