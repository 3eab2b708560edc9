// The tokenizer's character classes, pinned against the reference (tokenizers 0.23.2): the
// whitespace of regex \s and of the normalizers, Unicode 16 letters and numbers, word splitting.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

}  // namespace

// ---- whitespace and word classification (pinned against the reference, tokenizers 0.23.2) -------

namespace {

// UTF-8 of one code point.
std::string utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return out;
}

// Unicode White_Space: what the reference's regex \s (Oniguruma), Strip normalizer and
// added-token lstrip/rstrip (Rust char::is_whitespace) all treat as whitespace. Measured by
// running the reference over every code point.
bool reference_whitespace(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0d) || cp == 0x20 || cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f ||
         cp == 0x205f || cp == 0x3000;
}

// A model that knows "a" and "b" (ids 1, 2) and maps everything else to [UNK] (id 0).
std::string unk_model_json(const std::string& normalizer, const std::string& pre_tokenizer,
                           const std::string& added_tokens = "[]") {
  return R"({"version": "1.0", "truncation": null, "padding": null, "added_tokens": )" +
         added_tokens + R"(, "normalizer": )" + normalizer + R"(, "pre_tokenizer": )" +
         pre_tokenizer + R"(, "post_processor": null, "decoder": null,
         "model": {"type": "BPE", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "a": 1, "b": 2},
                   "merges": []}})";
}

// The code points that sit on the boundary; others are checked over a whole range below.
const char32_t kBoundary[] = {0x180e, 0x0085, 0xfeff, 0x2028, 0x2029, 0x200b, 0x00a0, 0x3000,
                              0x1680, 0x180d, 0x180f, 0x0084, 0x0086, 0x001c, 0x001f, 0x200a,
                              0x200c, 0x200d, 0x2060, 0x202f, 0x205f, 0x00ad, 0x0301, 0xfffd,
                              0xfffe, 0xffff, 0x10000, 0x1f130};

std::vector<char32_t> classified_code_points() {
  std::vector<char32_t> cps(std::begin(kBoundary), std::end(kBoundary));
  for (char32_t cp = 0; cp < 0x3100; ++cp) cps.push_back(cp);  // all White_Space is below U+3100
  return cps;
}

}  // namespace

TEST(TokenizerClassification, ReferenceWhitespaceTable) {
  // The measured facts the rest of this section relies on.
  for (char32_t cp : {0x85, 0x2028, 0x2029, 0xa0, 0x3000, 0x1680}) EXPECT_TRUE(reference_whitespace(cp));
  for (char32_t cp : {0x180e, 0xfeff, 0x200b, 0x1c, 0x1f, 0x180d, 0x180f, 0x84, 0x86, 0xfffe})
    EXPECT_FALSE(reference_whitespace(cp));
}

TEST(TokenizerClassification, RegexBackslashSIsWhiteSpace) {
  // Split on \s+ (removed): "a" X "b" is [a, b] when X is \s, else [a, [UNK], b]. PCRE2's own \s
  // also matches U+180E; the reference's (Oniguruma) does not.
  abl::testing::TempDir dir;
  const Tokenizer t = Tokenizer::from_file(dir.write(
      "tokenizer.json",
      unk_model_json("null",
                     R"({"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Removed",
                         "invert": false})")));
  for (char32_t cp : classified_code_points()) {
    if (cp == 'a' || cp == 'b') continue;
    const Ids want = reference_whitespace(cp) ? Ids{1, 2} : Ids{1, 0, 2};
    EXPECT_EQ(t.encode("a" + utf8(cp) + "b", false), want) << "U+" << std::hex << uint32_t(cp);
  }
  // \S and [[:space:]] are the same class.
  const Tokenizer not_space = Tokenizer::from_file(dir.write(
      "tokenizer.json",
      unk_model_json("null",
                     R"({"type": "Split", "pattern": {"Regex": "\\S"}, "behavior": "Removed",
                         "invert": false})")));
  const Tokenizer posix = Tokenizer::from_file(dir.write(
      "tokenizer.json",
      unk_model_json("null",
                     R"({"type": "Split", "pattern": {"Regex": "[[:space:]b]"},
                         "behavior": "Removed", "invert": false})")));
  for (char32_t cp : kBoundary) {
    const std::string x = utf8(cp);
    const bool ws = reference_whitespace(cp);
    EXPECT_EQ(not_space.encode(x, false), ws ? Ids{0} : Ids()) << "U+" << std::hex << uint32_t(cp);
    const Ids want = ws ? Ids{1} : Ids{1, 0};
    EXPECT_EQ(posix.encode("a" + x + "b", false), want) << "U+" << std::hex << uint32_t(cp);
  }
  // \v is the vertical tab alone in Oniguruma (PCRE2: any vertical space).
  const Tokenizer vt = Tokenizer::from_file(dir.write(
      "tokenizer.json",
      unk_model_json("null",
                     R"({"type": "Split", "pattern": {"Regex": "\\v"}, "behavior": "Removed",
                         "invert": false})")));
  EXPECT_EQ(vt.encode("a\vb", false), (Ids{1, 2}));
  EXPECT_EQ(vt.encode("a\nb", false), (Ids{1, 0, 2}));
  EXPECT_EQ(vt.encode("a\xc2\x85" "b", false), (Ids{1, 0, 2}));
  // \V is not an escape there: the letter V.
  const Tokenizer letter_v = Tokenizer::from_file(dir.write(
      "tokenizer.json",
      unk_model_json("null",
                     R"({"type": "Split", "pattern": {"Regex": "\\V"}, "behavior": "Removed",
                         "invert": false})")));
  EXPECT_EQ(letter_v.encode("aVb", false), (Ids{1, 2}));
  EXPECT_EQ(letter_v.encode("a\nb", false), (Ids{1, 0, 2}));
}

TEST(TokenizerClassification, LettersAndNumbersOfUnicode16) {
  // The reference's Oniguruma has Unicode 16 tables; \p{L} and \p{N} must include what Unicode
  // 15.0-16.0 assigned even where PCRE2's tables are older (10.42: Unicode 14).
  abl::testing::TempDir dir;
  auto removing = [&](const std::string& regex) {
    return Tokenizer::from_file(dir.write(
        "tokenizer.json",
        unk_model_json("null", R"({"type": "Split", "pattern": {"Regex": ")" + regex +
                                   R"("}, "behavior": "Removed", "invert": false})")));
  };
  const Tokenizer letters = removing("\\\\p{L}"), not_letters = removing("\\\\P{L}");
  const Tokenizer numbers = removing("\\\\p{N}"), others = removing("[^\\\\s\\\\p{L}\\\\p{N}]");
  for (char32_t cp : {0x1c89, 0xa7cb, 0x105c0, 0x11f04, 0x13460, 0x1e5f0, 0x2ebf0, 0x31350}) {
    EXPECT_EQ(letters.encode(utf8(cp), false), Ids()) << "U+" << std::hex << uint32_t(cp);
    EXPECT_EQ(not_letters.encode(utf8(cp), false), Ids{0}) << "U+" << std::hex << uint32_t(cp);
    EXPECT_EQ(numbers.encode(utf8(cp), false), Ids{0}) << "U+" << std::hex << uint32_t(cp);
    EXPECT_EQ(others.encode(utf8(cp), false), Ids{0}) << "U+" << std::hex << uint32_t(cp);
  }
  for (char32_t cp : {0x10d40, 0x116d0, 0x11f50, 0x16d70, 0x1ccf0, 0x1d2c0, 0x1e5fa}) {
    EXPECT_EQ(numbers.encode(utf8(cp), false), Ids()) << "U+" << std::hex << uint32_t(cp);
    EXPECT_EQ(letters.encode(utf8(cp), false), Ids{0}) << "U+" << std::hex << uint32_t(cp);
    EXPECT_EQ(others.encode(utf8(cp), false), Ids{0}) << "U+" << std::hex << uint32_t(cp);
  }
  // Still unassigned in Unicode 16: neither.
  EXPECT_EQ(letters.encode(utf8(0x323b0), false), Ids{0});
  EXPECT_EQ(others.encode(utf8(0x323b0), false), Ids());
}

// The same for every general category a split regex may name: o200k's and Tekken's spell letters
// as \p{Lu}|\p{Ll}|\p{Lt}|\p{Lm}|\p{Lo}|\p{M} and exclude them as [^\p{L}\p{N}], so a category left
// at PCRE2's Unicode 14 made a new letter match nothing and vanish from the ids (seen against the
// reference on GPT-4o's o200k tokenizer.json: Todhri, Kawi and CJK extension letters dropped).
TEST(TokenizerClassification, EveryCategoryHasItsUnicode16Members) {
  abl::testing::TempDir dir;
  auto removing = [&](const std::string& category) {
    return Tokenizer::from_file(dir.write(
        "tokenizer.json",
        unk_model_json("null", R"({"type": "Split", "pattern": {"Regex": "\\p{)" + category +
                                   R"(}"}, "behavior": "Removed", "invert": false})")));
  };
  // One code point per category that Unicode 15.0-16.0 assigned (measured with
  // tests/tokpeer/categories.js), removed by its category's pattern and kept by the others'.
  const std::pair<const char*, std::vector<char32_t>> members[] = {
      {"Lu", {0x1c89, 0x10d50}}, {"Ll", {0x1c8a, 0x10d70}},  {"Lm", {0x10d4e, 0x16d40}},
      {"Lo", {0x105c0, 0x11f04, 0x31350}}, {"Mn", {0x10d69}}, {"Mc", {0x1171e, 0x113b8}},
      {"Nd", {0x10d40, 0x11f50}}, {"Po", {0x113d4}}, {"So", {0x1cc00}}};
  for (const auto& [category, cps] : members) {
    const Tokenizer mine = removing(category);
    const std::string major(1, category[0]);
    const Tokenizer parent = removing(major);
    for (char32_t cp : cps) {
      EXPECT_EQ(mine.encode(utf8(cp), false), Ids()) << category << " U+" << std::hex << uint32_t(cp);
      EXPECT_EQ(parent.encode(utf8(cp), false), Ids()) << major << " U+" << std::hex << uint32_t(cp);
      for (const char* other : {"Lu", "Ll", "Lo", "Nd", "So"}) {
        if (std::string(other) == category) continue;
        EXPECT_EQ(removing(other).encode(utf8(cp), false), Ids{0}) << other << " U+" << std::hex << uint32_t(cp);
      }
    }
  }
}

TEST(TokenizerClassification, StripNormalizerAndAddedTokenStrips) {
  abl::testing::TempDir dir;
  const Tokenizer strip = Tokenizer::from_file(dir.write(
      "tokenizer.json",
      unk_model_json(R"({"type": "Strip", "strip_left": true, "strip_right": true})", "null")));
  const Tokenizer flags = Tokenizer::from_file(dir.write(
      "tokenizer.json",
      unk_model_json("null", "null", R"([
        {"id": 3, "content": "<L>", "single_word": false, "lstrip": true, "rstrip": false,
         "normalized": false, "special": true},
        {"id": 4, "content": "<R>", "single_word": false, "lstrip": false, "rstrip": true,
         "normalized": false, "special": true}])")));
  for (char32_t cp : classified_code_points()) {
    if (cp == 'a' || cp == 'b' || cp == '<') continue;
    const std::string x = utf8(cp);
    const bool ws = reference_whitespace(cp);
    const Ids stripped = ws ? Ids{1} : Ids{0, 1, 0};
    const Ids left = ws ? Ids{1, 3} : Ids{1, 0, 3};
    const Ids right = ws ? Ids{4, 2} : Ids{4, 0, 2};
    EXPECT_EQ(strip.encode(x + "a" + x, false), stripped) << "U+" << std::hex << uint32_t(cp);
    EXPECT_EQ(flags.encode("a" + x + "<L>", false), left) << "U+" << std::hex << uint32_t(cp);
    EXPECT_EQ(flags.encode("<R>" + x + "b", false), right) << "U+" << std::hex << uint32_t(cp);
  }
}

TEST(TokenizerClassification, SingleWordUsesAlphabetic) {
  // single_word's word characters are Rust regex \w: Alphabetic (so the circled and squared
  // letter symbols and Nl), marks, Nd, Pc; not No such as U+00B2. Ids from the reference.
  abl::testing::TempDir dir;
  const Tokenizer t = Tokenizer::from_file(dir.write(
      "tokenizer.json", unk_model_json("null", "null", R"([
        {"id": 3, "content": "ab", "single_word": true, "lstrip": false, "rstrip": false,
         "normalized": false, "special": false}])")));
  EXPECT_EQ(t.encode("\u24b6" "ab", false), (Ids{0, 1, 2}));      // circled A
  EXPECT_EQ(t.encode("ab\u24e9", false), (Ids{1, 2, 0}));          // circled z
  EXPECT_EQ(t.encode("\U0001F130" "ab", false), (Ids{0, 1, 2}));  // squared A
  EXPECT_EQ(t.encode("\u2160" "ab", false), (Ids{0, 1, 2}));      // Roman numeral one (Nl)
  EXPECT_EQ(t.encode("\u0301" "ab", false), (Ids{0, 1, 2}));      // combining acute
  EXPECT_EQ(t.encode("\u00b2" "ab", false), (Ids{0, 3}));         // superscript two (No)
  EXPECT_EQ(t.encode(" ab", false), (Ids{0, 3}));
}

TEST(TokenizerClassification, GptSplitRegexAroundSeparators) {
  // The Llama 3 style split regex in the tiny fixture (\s+(?!\S), \s*[\r\n]+ ...) next to
  // U+180E, U+0085, U+FEFF and U+3000; ids produced by the reference.
  const Tokenizer& t = tiny();
  EXPECT_EQ(t.encode("  \u180e  x", false), (Ids{220, 220, 157, 254, 236, 220, 220, 87}));
  EXPECT_EQ(t.encode("a \u180e\n", false), (Ids{64, 220, 157, 254, 236, 198}));
  EXPECT_EQ(t.encode("1\u180e" "2", false), (Ids{16, 157, 254, 236, 17}));
  EXPECT_EQ(t.encode("x \u0085 y", false), (Ids{87, 220, 126, 227, 220, 88}));
  EXPECT_EQ(t.encode("x \ufeff y", false), (Ids{87, 220, 171, 119, 123, 220, 88}));
  EXPECT_EQ(t.encode("a\u3000 \u180e b", false), (Ids{64, 159, 222, 222, 220, 157, 254, 236, 299}));
}


TEST(TokenizerClassification, O200kSplitRegexOfPhi4Mini) {
  // Phi-4-mini's (GPT-4o's) split regex: case runs (HTTPServer, camelCase), contractions after
  // capitals, numbers by three, punctuation that keeps a trailing slash or newline. A BPE with
  // ignore_merges and one token per expected piece shows where the regex cut.
  const std::string regex =
      R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
      R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
      R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  const std::vector<std::string> pieces = {
      "HTTPServer", " camel", "Case", " I'M",   " he's", " ", "123",  "45",   "e\u0301", " a",        "/b",
      "\n\n",       " ",      " x",   " \u00c9t\u00e9", " \u4e2d\u6587", " ...//\n", "x"};
  nlohmann::json vocab = {{"[UNK]", 0}};
  for (const auto& p : pieces) vocab.emplace(p, static_cast<int>(vocab.size()));
  const nlohmann::json j = {
      {"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr}, {"added_tokens", nlohmann::json::array()},
      {"normalizer", nullptr}, {"post_processor", nullptr}, {"decoder", nullptr},
      {"pre_tokenizer",
       {{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}}},
      {"model",
       {{"type", "BPE"}, {"unk_token", "[UNK]"}, {"ignore_merges", true}, {"vocab", vocab},
        {"merges", nlohmann::json::array()}}}};
  const Tokenizer t = Tokenizer::from_json_text(j.dump(), "o200k");
  std::string text;
  for (const auto& p : pieces) text += p;
  std::vector<std::string> got;
  for (int32_t id : t.encode(text, false)) got.push_back(t.id_to_token(id));
  EXPECT_EQ(got, pieces);
}
