// Fuzz target: the tokenizer on fuzzed text and fuzzed ids, with the two real tokenizers of the
// fixtures (tiny-llama, the organism: byte-level BPE with NFC) and a SentencePiece-style one
// built here (Prepend/Replace "▁", byte fallback, the Llama 2 decoder chain). Input byte 0: bits
// 0-1 pick the tokenizer, bit 2 add_special_tokens, bit 3 text (0) or ids (1); the rest is the
// text, or little-endian 16-bit ids. Properties, for text without added-token strings:
//   decode(encode(x)) == NFC(x) (byte-level) or x with "▁" read as " " (SentencePiece-style),
//   encode(decode(encode(x))) == encode(x);
// for any text: ids inside the vocabulary and incremental decoding that agrees with decode
// (for any ids too, with the byte-level tokenizers);
// for any ids: decode gives valid UTF-8 (ids without a token are skipped), or abl::Error for a
// negative id.
#include <utf8proc.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "abl/core/utf8.h"
#include "abl/text/incremental_decoder.h"
#include "abl/text/tokenizer.h"
#include "fuzz_target.h"

namespace {

using Ids = std::vector<int32_t>;
const std::string kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's word boundary

// A small Llama 2 / Mistral style tokenizer.json: every byte has a <0xXX> fallback token.
std::string sentencepiece_json() {
  nlohmann::ordered_json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) vocab[fmt::format("<0x{:02X}>", b)] = 3 + b;
  int next = 259;
  for (const char* piece : {"h", "e", "l", "o", "w", "r", "d", "a"}) vocab[piece] = next++;
  vocab[kSpace] = next++;
  const std::vector<std::pair<std::string, std::string>> merges = {
      {kSpace, "h"}, {"h", "e"}, {"l", "l"}, {kSpace + "h", "e"}, {"ll", "o"}, {kSpace + "he", "llo"},
      {kSpace, "w"}, {"o", "r"}, {kSpace + "w", "or"}, {"l", "d"}};
  nlohmann::ordered_json merge_list = nlohmann::ordered_json::array();
  for (const auto& [a, b] : merges) {
    if (!vocab.contains(a + b)) vocab[a + b] = next++;
    merge_list.push_back(a + " " + b);
  }
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
  for (int id = 0; id < 3; ++id) {
    const char* content[] = {"<unk>", "<s>", "</s>"};
    added.push_back({{"id", id}, {"content", content[id]}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", true}});
  }
  const nlohmann::ordered_json doc = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Prepend"}, {"prepend", kSpace}},
          {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kSpace}}}}}},
      {"pre_tokenizer", nullptr},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single",
         {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"pair",
         {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
          {{"SpecialToken", {{"id", "<s>"}, {"type_id", 1}}}},
          {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         {{{"type", "Replace"}, {"pattern", {{"String", kSpace}}}, {"content", " "}},
          {{"type", "ByteFallback"}},
          {{"type", "Fuse"}},
          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", "<unk>"},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", true},
        {"byte_fallback", true},
        {"vocab", vocab},
        {"merges", merge_list}}}};
  return doc.dump();
}

struct Subject {
  abl::text::Tokenizer tok;
  bool sentencepiece;
  std::vector<std::string> added;  // contents of the added tokens
};

std::vector<Subject>& subjects() {
  static std::vector<Subject> s;
  return s;
}

Subject make_subject(abl::text::Tokenizer tok, bool sentencepiece) {
  Subject s{std::move(tok), sentencepiece, {}};
  for (int32_t id = 0; id < s.tok.vocab_size(); ++id) {
    if (s.tok.is_special(id)) s.added.push_back(s.tok.id_to_token(id));
  }
  return s;
}

std::string nfc(const std::string& s) {
  utf8proc_uint8_t* dst = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()), static_cast<utf8proc_ssize_t>(s.size()),
                   &dst, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  ABL_FUZZ_CHECK(n >= 0, "utf8proc refused valid UTF-8");
  std::string out(reinterpret_cast<const char*>(dst), static_cast<size_t>(n));
  std::free(dst);
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

std::string show(const Ids& ids) {
  std::string s;
  for (int32_t id : ids) s += std::to_string(id) + " ";
  return s;
}

// Incremental decoding must end where decode does and never emit what decode later replaces
// (byte-fallback runs are held back until they end: corpus/tokenizer_encode/
// finding-bytefallback-incremental).
void check_incremental(const abl::text::Tokenizer& tok, const Ids& ids, bool skip) {
  abl::text::IncrementalDecoder inc(tok, skip);
  std::string emitted;
  for (int32_t id : ids) emitted += inc.push(id);
  const std::string full = tok.decode(ids, skip);
  ABL_FUZZ_CHECK(emitted == inc.text() && inc.finish() == full, show(ids));
  ABL_FUZZ_CHECK(full.compare(0, emitted.size(), emitted) == 0,
                 "emitted '" + emitted + "', decode '" + full + "' for ids " + show(ids));
}

void check_text(const Subject& s, const std::string& text, bool add_special) {
  if (!abl::valid_utf8(text)) {
    try {
      s.tok.encode(text, add_special);
    } catch (const abl::Error&) {
      return;
    }
    abl::fuzz::violated("invalid UTF-8 was encoded", __FILE__, __LINE__, "");
  }
  const Ids ids = s.tok.encode(text, add_special);
  for (int32_t id : ids) ABL_FUZZ_CHECK(id >= 0 && id < s.tok.vocab_size(), show(ids));
  const std::string with_special = s.tok.decode(ids, false);
  ABL_FUZZ_CHECK(abl::valid_utf8(with_special), show(ids));
  const std::string decoded = s.tok.decode(ids, true);
  check_incremental(s.tok, ids, true);
  for (const std::string& a : s.added) {
    if (text.find(a) != std::string::npos) return;  // added tokens split the text before normalizing
  }
  const std::string expected = s.sentencepiece ? replace_all(text, kSpace, " ") : nfc(text);
  ABL_FUZZ_CHECK(decoded == expected, "decoded '" + decoded + "' from ids " + show(ids));
  ABL_FUZZ_CHECK(s.tok.encode(decoded, add_special) == ids, show(ids));
}

void check_ids(const Subject& s, const uint8_t* data, size_t size, bool skip) {
  Ids ids;
  // -1 .. vocab_size: a negative id, every token, and an id past the vocabulary.
  const int64_t span = int64_t{s.tok.vocab_size()} + 2;
  for (size_t i = 0; i + 1 < size; i += 2) {
    ids.push_back(static_cast<int32_t>((data[i] | (int64_t{data[i + 1]} << 8)) % span - 1));
  }
  // As the reference, decode skips ids without a token (a padded vocabulary's extra rows) and
  // refuses negative ones.
  bool negative = false;
  for (int32_t id : ids) negative = negative || id < 0;
  std::string text;
  try {
    text = s.tok.decode(ids, skip);
  } catch (const abl::Error& e) {
    ABL_FUZZ_CHECK(negative, std::string("decode refused non-negative ids: ") + e.what());
    return;
  }
  ABL_FUZZ_CHECK(!negative, "decode accepted a negative id: " + show(ids));
  ABL_FUZZ_CHECK(abl::valid_utf8(text), show(ids));
  check_incremental(s.tok, ids, skip);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  abl::fuzz::quiet_logs();
  const std::string fixtures = ABL_FIXTURE_DIR;
  subjects().push_back(make_subject(abl::text::Tokenizer::from_file(fixtures + "/tiny-llama/tokenizer.json"), false));
  subjects().push_back(make_subject(abl::text::Tokenizer::from_file(fixtures + "/organism/tokenizer.json"), false));
  subjects().push_back(
      make_subject(abl::text::Tokenizer::from_json_text(sentencepiece_json(), "sentencepiece-style tokenizer.json"), true));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Subject& s = subjects()[data[0] % 4 % subjects().size()];
  const bool add_special = data[0] & 4;
  return abl::fuzz::run_input([&] {
    if (data[0] & 8) {
      check_ids(s, data + 1, size - 1, add_special);
      return;
    }
    try {
      check_text(s, std::string(abl::fuzz::as_text(data + 1, size - 1)), add_special);
    } catch (const abl::Error& e) {
      // Valid text and the ids of its encoding are never an error with these tokenizers.
      abl::fuzz::violated("the tokenizer refused valid input", __FILE__, __LINE__, e.what());
    }
  });
}
