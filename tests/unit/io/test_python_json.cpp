// Prompt files written by Python's json module: NaN, Infinity, -Infinity and out-of-range numbers
// in other columns, and lone surrogate escapes, read as Python reads them (values nobody uses)
// instead of failing the file; the rewrite keeps every offset, so later errors keep their columns.
#include <gtest/gtest.h>

#include "abl/core/error.h"
#include "abl/io/prompt_dataset.h"
#include "common/temp_dir.h"
#include "python_json.h"

namespace {

using abl::io::accept_python_json;
using abl::io::load_prompts;

std::string rewritten(std::string s, size_t* lone = nullptr) {
  const size_t n = accept_python_json(s);
  if (lone) *lone = n;
  return s;
}

std::string error_of(const std::string& path) {
  try {
    load_prompts({path, "text", ""});
  } catch (const abl::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(PythonJson, NonFiniteNumbersBecomeZeroOfTheSameLength) {
  EXPECT_EQ(rewritten(R"({"a": NaN, "b": Infinity, "c": -Infinity})"), R"({"a": 0  , "b": 0       , "c": 0        })");
  EXPECT_EQ(rewritten(R"([1e400, -1E+999, 1e308, 2.5e-400, 12])"), R"([0    , 0      , 1e308, 2.5e-400, 12])");
  // Inside strings, and as part of longer words, they are text.
  EXPECT_EQ(rewritten(R"({"NaN": "Infinity 1e400", "x": NaNa})"), R"({"NaN": "Infinity 1e400", "x": NaNa})");
  EXPECT_EQ(rewritten(R"({"q": "say \"NaN\"", "n": NaN})"), R"({"q": "say \"NaN\"", "n": 0  })");
}

TEST(PythonJson, LoneSurrogatesBecomeTheReplacementCharacter) {
  size_t lone = 0;
  EXPECT_EQ(rewritten(R"(["a\ud800b", "\udc00", "\ud83d\ude00", "\uD83D"])", &lone),
            R"(["a\ufffdb", "\ufffd", "\ud83d\ude00", "\ufffd"])");
  EXPECT_EQ(lone, 3u);
  EXPECT_EQ(rewritten(R"(["\\ud800"])", &lone), R"(["\\ud800"])");  // an escaped backslash, then text
  EXPECT_EQ(lone, 0u);
  EXPECT_EQ(rewritten(R"(["\ud800\ud800\udc00"])", &lone), R"(["\ufffd\ud800\udc00"])");
  EXPECT_EQ(lone, 1u);
  EXPECT_EQ(rewritten(R"(["\u12"])"), R"(["\u12"])");  // malformed escapes are left for the parser
}

TEST(PythonJson, PromptFilesWithPythonValuesRead) {
  abl::testing::TempDir dir;
  // json.dumps({"text": ..., "score": float("nan")}) per line; json.dumps("\ud800 x") keeps the escape.
  const auto jsonl = dir.write("p.jsonl", "{\"text\": \"first\", \"score\": NaN}\n"
                                          "{\"text\": \"second\", \"score\": -Infinity, \"n\": 1e999}\n"
                                          "{\"text\": \"odd \\ud800 one\", \"score\": 0.5}\n");
  const auto p = load_prompts({jsonl, "text", ""});
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[1].text, "second");
  EXPECT_EQ(p[2].text, "odd \xEF\xBF\xBD one");
  const auto array =
      dir.write("a.json", "[\n  {\"text\": \"one\", \"score\": NaN},\n  {\"text\": \"two\", \"s\": Infinity}\n]\n");
  EXPECT_EQ(load_prompts({array, "text", ""}).size(), 2u);
  // A NaN prompt is no prompt; an error after a rewritten value keeps its column (the '}' at 30).
  EXPECT_NE(error_of(dir.write("nan.jsonl", "{\"text\": NaN}\n")).find("nan.jsonl:1: column 'text' is not a string"),
            std::string::npos);
  const std::string err = error_of(dir.write("col.json", "[{\"s\": Infinity, \"text\": \"x\",}]\n"));
  EXPECT_NE(err.find("col.json:1: invalid JSON at column 30"), std::string::npos) << err;
}
