// tiktoken folders (Kimi-K2, Moonlight): tests/fixtures/tiktoken holds a self-made vocabulary
// with Kimi's split pattern, and the ids an independent Python reference of tiktoken's algorithm
// gives for 51 texts (tools/fixtures/make_tiktoken_fixture.py, with Python's `regex` for the
// pattern's class intersections). Also the `&&` class intersection of regexes in tokenizer.json,
// the remote-code reading and every named load error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "abl/core/error.h"
#include "abl/text/chat_template.h"
#include "abl/text/tokenizer.h"
#include "common/temp_dir.h"

using abl::text::Tokenizer;
using Ids = std::vector<int32_t>;
namespace fs = std::filesystem;

namespace {

const std::string kFixture = std::string(ABL_FIXTURE_DIR) + "/tiktoken";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const nlohmann::json& expected() {
  static const nlohmann::json j = nlohmann::json::parse(slurp(kFixture + "/expected.json"));
  return j;
}

const Tokenizer& kimi() {
  static const Tokenizer tok = Tokenizer::from_model_folder(kFixture);
  return tok;
}

// A copy of the fixture folder in `dir` with `name` replaced by `content` ("" removes it).
std::string fixture_with(const abl::testing::TempDir& dir, const std::string& name, const std::string& content) {
  for (const char* f : {"tiktoken.model", "tokenizer_config.json", "tokenization_kimi.py"}) {
    dir.write(f, slurp(kFixture + "/" + f));
  }
  if (content.empty()) {
    fs::remove(dir.path() / name);
  } else {
    dir.write(name, content);
  }
  return dir.path().string();
}

std::string load_error(const std::string& folder) {
  try {
    Tokenizer::from_model_folder(folder);
  } catch (const abl::Error& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

TEST(Tiktoken, EncodesAsTiktoken) {
  const Tokenizer& tok = kimi();
  const int64_t n_base = expected().at("num_base_tokens").get<int64_t>();
  EXPECT_EQ(tok.vocab_size(), n_base + expected().at("num_special_tokens").get<int64_t>());
  size_t checked = 0;
  for (const auto& c : expected().at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    const Ids want = c.at("ids").get<Ids>();
    // tiktoken's encode adds nothing around the ids, with or without special tokens asked for.
    EXPECT_EQ(tok.encode(text, false), want) << "text: " << text;
    EXPECT_EQ(tok.encode(text, true), want) << "text: " << text;
    EXPECT_EQ(tok.decode(want, false), c.at("decoded").get<std::string>()) << "text: " << text;
    ++checked;
  }
  EXPECT_EQ(checked, 51u);
  for (const auto& c : expected().at("decode_cases")) {
    EXPECT_EQ(tok.decode(c.at("ids").get<Ids>(), false), c.at("decoded").get<std::string>());
  }
}

TEST(Tiktoken, WholePiecesAndSpecialTokens) {
  const Tokenizer& tok = kimi();
  // A piece that is a token is taken whole even where merging its bytes never reaches it.
  for (const auto& [id, text] : expected().at("unreachable_tokens").items()) {
    EXPECT_EQ(tok.encode(text.get<std::string>(), false), Ids{std::stoi(id)}) << text;
    EXPECT_EQ(tok.id_to_token(std::stoi(id)).empty(), false);
  }
  // Ids 1500..1517: named by added_tokens_decoder, else <|reserved_token_N|>; all special.
  for (const auto& [name, id] : expected().at("special_tokens").items()) {
    EXPECT_EQ(tok.token_to_id(name), id.get<int32_t>()) << name;
    EXPECT_TRUE(tok.is_special(id.get<int32_t>())) << name;
    EXPECT_EQ(tok.decode({id.get<int32_t>()}, true), "") << name;
  }
  EXPECT_EQ(tok.token_to_id("<|reserved_token_1500|>"), std::nullopt);  // id 1500 is [BOS]
  // The single bytes are not at rank == byte: 'A' is not id 65.
  EXPECT_NE(tok.encode("A", false), Ids{65});
}

TEST(Tiktoken, ChatTemplateRendersAndTokenizes) {
  const auto tmpl = abl::text::ChatTemplate::resolve("auto", kFixture);
  const std::string rendered = tmpl.render("You are a terse assistant.", "What's 2+2?", "");
  EXPECT_EQ(rendered,
            "<|im_system|>system<|im_middle|>You are a terse assistant.<|im_end|><|im_user|>user<|im_middle|>"
            "What's 2+2?<|im_end|><|im_assistant|>assistant<|im_middle|>");
  const Ids ids = kimi().encode(rendered, false);
  EXPECT_EQ(ids.front(), 1510);  // <|im_system|>
  EXPECT_EQ(ids.back(), 1512);   // <|im_middle|>
  EXPECT_EQ(kimi().decode(ids, false), rendered);
}

TEST(Tiktoken, TokenizerJsonComesFirst) {
  abl::testing::TempDir dir;
  const std::string folder = fixture_with(dir, "tokenizer.json", slurp(std::string(ABL_FIXTURE_DIR) + "/tiny-llama/tokenizer.json"));
  EXPECT_EQ(Tokenizer::from_model_folder(folder).vocab_size(),
            Tokenizer::from_file(std::string(ABL_FIXTURE_DIR) + "/tiny-llama/tokenizer.json").vocab_size());
  abl::testing::TempDir empty;
  EXPECT_NE(load_error(empty.path().string()).find("has no tokenizer.json (nor a tiktoken.model)"), std::string::npos);
}

TEST(Tiktoken, RemoteCodeLayouts) {
  // The pattern as one raw string, the join over several lines with comments, and the range sum
  // spread over lines as Kimi's own file has it.
  const std::string py = slurp(kFixture + "/tokenization_kimi.py");
  const size_t from = py.find("    pat_str = ");
  const size_t to = py.find("\n    )\n", from) + 7;
  ASSERT_NE(from, std::string::npos);
  abl::testing::TempDir a;
  std::string joined = py.substr(from, to - from);
  std::string one = py;
  one.replace(from, to - from,
              "    pat_str = r\"\"\"[\\p{Han}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*"
              "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?"
              "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*"
              "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+\"\"\"\n"
              "    # used as pat_str=self.pat_str below\n");
  const size_t range = one.find("range(num_base_tokens, num_base_tokens + self.num_reserved_special_tokens + 2)");
  ASSERT_NE(range, std::string::npos);
  one.replace(range, 78, "range(\n                num_base_tokens, num_base_tokens + self.num_reserved_special_tokens + 2\n            )");
  const Tokenizer t = Tokenizer::from_model_folder(fixture_with(a, "tokenization_kimi.py", one));
  for (const auto& c : expected().at("cases")) {
    EXPECT_EQ(t.encode(c.at("text").get<std::string>(), false), c.at("ids").get<Ids>());
  }
  EXPECT_EQ(t.vocab_size(), kimi().vocab_size());
}

TEST(Tiktoken, LoadErrorsNameTheFileAndLine) {
  const std::string ranks = slurp(kFixture + "/tiktoken.model");
  const std::string config = slurp(kFixture + "/tokenizer_config.json");
  const std::string py = slurp(kFixture + "/tokenization_kimi.py");
  struct Case {
    std::string file, content, message;
  };
  const size_t second_line = ranks.find('\n') + 1;
  std::string gap = ranks;  // rank 1 on line 2 becomes 5000
  gap.replace(gap.find(' ', second_line) + 1, gap.find('\n', second_line) - gap.find(' ', second_line) - 1, "5000");
  std::string dup = ranks;
  dup.replace(dup.find(' ', second_line) + 1, dup.find('\n', second_line) - dup.find(' ', second_line) - 1, "0");
  std::string bad64 = ranks;
  bad64.replace(second_line, 1, "!");
  std::string same = ranks;  // the last token's bytes become those of the one before (both merged)
  const size_t last = ranks.rfind('\n', ranks.size() - 2) + 1, before = ranks.rfind('\n', last - 2) + 1;
  same.replace(last, same.find(' ', last) - last, ranks.substr(before, ranks.find(' ', before) - before));
  nlohmann::json out_of_range = nlohmann::json::parse(config);
  out_of_range["added_tokens_decoder"]["1518"] = out_of_range["added_tokens_decoder"]["1500"];
  out_of_range["added_tokens_decoder"]["1518"]["content"] = "<|extra|>";
  nlohmann::json no_map = nlohmann::json::parse(config);
  no_map.erase("auto_map");
  nlohmann::json remote = nlohmann::json::parse(config);
  remote["auto_map"]["AutoTokenizer"][0] = "moonshotai/Kimi-K2-Instruct--tokenization_kimi.TikTokenTokenizer";
  nlohmann::json twice = nlohmann::json::parse(config);
  twice["added_tokens_decoder"]["1501"]["content"] = "[BOS]";
  std::string no_pat = py;
  no_pat.replace(no_pat.find("pat_str ="), 9, "pattern =");
  std::string escaped = py;
  escaped.replace(escaped.find("r\"\"\"[\\p{Han}]+\"\"\""), 17, "\"[\\\\p{Han}]+\"");
  std::string negated = py;
  negated.replace(negated.find("[\\p{Han}]+"), 10, "[^\\p{Lu}&&[^\\p{Han}]]+");
  std::string no_reserved = py;
  no_reserved.replace(no_reserved.find("num_reserved_special_tokens = 16"), 32, "");
  const std::vector<Case> cases = {
      {"tiktoken.model", gap, "tiktoken.model:2: rank 5000 is out of 0..1499"},
      {"tiktoken.model", dup, "tiktoken.model:2: rank 0 is also on line 1"},
      {"tiktoken.model", bad64, "tiktoken.model:2: '"},
      {"tiktoken.model", ranks + "QUJD\n", "tiktoken.model:1501: expected '<base64 token> <rank>', found 'QUJD'"},
      {"tiktoken.model", same, "tokens 1498 and 1499 have the same bytes"},
      {"tiktoken.model", "QUI= 0\n", "tiktoken.model: byte 0x00 is not a token"},
      {"tokenizer_config.json", "", "has tiktoken.model but no tokenizer_config.json"},
      {"tokenizer_config.json", out_of_range.dump(), "'added_tokens_decoder.1518': is not one of the special ids 1500..1517"},
      {"tokenizer_config.json", no_map.dump(), "has no auto_map.AutoTokenizer"},
      {"tokenizer_config.json", remote.dump(), "names code in another repository"},
      {"tokenizer_config.json", twice.dump(), "special token '[BOS]' (id 1501) would get id 1500"},
      {"tokenization_kimi.py", "", "tokenization_kimi.py, which is not in the model folder"},
      {"tokenization_kimi.py", no_pat, "tokenization_kimi.py: has no pat_str"},
      {"tokenization_kimi.py", escaped, "tokenization_kimi.py:17: pat_str has a string literal with escapes that is not raw"},
      {"tokenization_kimi.py", negated, "a negated class with && ([^...&&...]) is not supported"},
      {"tokenization_kimi.py", no_reserved, "tokenization_kimi.py: has no num_reserved_special_tokens"},
  };
  for (const Case& c : cases) {
    abl::testing::TempDir dir;
    const std::string message = load_error(fixture_with(dir, c.file, c.content));
    EXPECT_NE(message.find(c.message), std::string::npos) << c.file << ": " << message << "\nwanted: " << c.message;
    EXPECT_NE(message.find(dir.path().string()), std::string::npos) << "names no file: " << message;
  }
}

// ---- `&&` in the regexes of tokenizer.json (Oniguruma has it too) ------------------------------

namespace {

// Characters the Split removes vanish; the rest are [UNK] (0), 'a' (1) or 'b' (2).
Tokenizer removing(const abl::testing::TempDir& dir, const std::string& regex) {
  return Tokenizer::from_file(dir.write(
      "tokenizer.json",
      R"({"version": "1.0", "added_tokens": [], "normalizer": null, "post_processor": null, "decoder": null,
          "pre_tokenizer": {"type": "Split", "pattern": {"Regex": )" +
          nlohmann::json(regex).dump() + R"(}, "behavior": "Removed", "invert": false},
          "model": {"type": "BPE", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "a": 1, "b": 2}, "merges": []}})"));
}

}  // namespace

TEST(RegexClassIntersection, MeansCharactersInEveryOperand) {
  abl::testing::TempDir dir;
  // Letters that are not Han: a and b go, 中 stays (as [UNK]).
  EXPECT_EQ(removing(dir, "[\\p{L}&&[^\\p{Han}]]+").encode("a中b", false), Ids{0});
  // Juxtaposition binds tighter than &&: [ab&&b] is b alone.
  EXPECT_EQ(removing(dir, "[ab&&b]").encode("ab", false), Ids{1});
  // Three operands, nested classes as operands, a quantifier on the whole.
  EXPECT_EQ(removing(dir, "[[a-c]&&[b-d]&&\\p{Ll}]{1,2}").encode("abba", false), (Ids{1, 1}));
  // Without && the class is unchanged, brackets inside it included.
  EXPECT_EQ(removing(dir, "[]a]").encode("ab]", false), Ids{2});
  try {
    removing(dir, "[^a&&b]");
    ADD_FAILURE() << "a negated intersection loaded";
  } catch (const abl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("a negated class with &&"), std::string::npos) << e.what();
  }
}
