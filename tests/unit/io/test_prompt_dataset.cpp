#include <gtest/gtest.h>

#include "abl/core/error.h"
#include "abl/io/prompt_dataset.h"
#include "common/temp_dir.h"

using abl::io::load_prompts;
using abl::io::PromptSource;
using abl::io::Slice;

namespace {

std::string error_of(const PromptSource& src) {
  try {
    load_prompts(src);
  } catch (const abl::Error& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> texts(const std::vector<abl::io::Prompt>& p) {
  std::vector<std::string> out;
  for (const auto& x : p) out.push_back(x.text);
  return out;
}

}  // namespace

TEST(PromptDataset, TextSkipsBlankLinesAndKeepsLineNumbers) {
  abl::testing::TempDir dir;
  auto path = dir.write("p.txt", "first\n\n  \nsecond\r\nthird");
  auto p = load_prompts({path, "text", ""});
  EXPECT_EQ(texts(p), (std::vector<std::string>{"first", "second", "third"}));
  EXPECT_EQ(p[1].line, 4);
  EXPECT_EQ(p[2].line, 5);
}

TEST(PromptDataset, PythonSlices) {
  abl::testing::TempDir dir;
  std::string content;
  for (int i = 0; i < 10; ++i) content += "p" + std::to_string(i) + "\n";
  auto path = dir.write("p.txt", content);
  auto get = [&](const std::string& split) { return texts(load_prompts({path, "text", split})); };
  EXPECT_EQ(get("[:3]"), (std::vector<std::string>{"p0", "p1", "p2"}));
  EXPECT_EQ(get("[8:]"), (std::vector<std::string>{"p8", "p9"}));
  EXPECT_EQ(get("[-2:]"), (std::vector<std::string>{"p8", "p9"}));
  EXPECT_EQ(get("[2:4]"), (std::vector<std::string>{"p2", "p3"}));
  EXPECT_EQ(get("[-3:-1]"), (std::vector<std::string>{"p7", "p8"}));
  EXPECT_EQ(get("[5:100]").size(), 5u);
  EXPECT_EQ(get("[:]").size(), 10u);
  EXPECT_EQ(get("[-100:2]").size(), 2u);
}

TEST(PromptDataset, MalformedSlicesAreErrors) {
  for (const char* bad : {"", ":3", "[3]", "[a:b]", "[1:2:3]", "[1.5:]", "[--1:]", "(1:2)"}) {
    EXPECT_THROW(Slice::parse(bad, "f.txt"), abl::Error) << bad;
  }
  try {
    Slice::parse("[x:]", "prompts.txt");
  } catch (const abl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("prompts.txt"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("[x:]"), std::string::npos);
  }
}

TEST(PromptDataset, EmptyResultNamesFileAndSplit) {
  abl::testing::TempDir dir;
  auto path = dir.write("p.txt", "a\nb\n");
  std::string err = error_of({path, "text", "[5:]"});
  EXPECT_NE(err.find("p.txt"), std::string::npos) << err;
  EXPECT_NE(err.find("[5:]"), std::string::npos) << err;
  EXPECT_NE(error_of({dir.write("e.txt", "\n\n"), "text", ""}).find("no prompts"), std::string::npos);
}

TEST(PromptDataset, InvalidUtf8NamesLine) {
  abl::testing::TempDir dir;
  auto path = dir.write("p.txt", "ok\nbad \xC3\x28 here\n");
  std::string err = error_of({path, "text", ""});
  EXPECT_NE(err.find("p.txt:2"), std::string::npos) << err;
  EXPECT_NE(err.find("UTF-8"), std::string::npos) << err;
  // Overlong encoding and a surrogate are invalid too.
  EXPECT_NE(error_of({dir.write("o.txt", "\xC0\xAF\n"), "text", ""}).find("o.txt:1"), std::string::npos);
  EXPECT_NE(error_of({dir.write("s.txt", "x\n\xED\xA0\x80\n"), "text", ""}).find("s.txt:2"), std::string::npos);
}

TEST(PromptDataset, JsonlColumn) {
  abl::testing::TempDir dir;
  auto path = dir.write("p.jsonl",
                        "{\"prompt\": \"caf\\u00e9?\", \"id\": 1}\n\n{\"prompt\": \"two\"}\n");
  auto p = load_prompts({path, "prompt", ""});
  EXPECT_EQ(texts(p), (std::vector<std::string>{"caf\xC3\xA9?", "two"}));
  EXPECT_EQ(p[1].line, 3);
  std::string err = error_of({path, "text", ""});
  EXPECT_NE(err.find("p.jsonl:1"), std::string::npos) << err;
  EXPECT_NE(err.find("'text'"), std::string::npos) << err;
  EXPECT_NE(err.find("prompt"), std::string::npos) << err;  // lists the fields present
}

TEST(PromptDataset, JsonlErrors) {
  abl::testing::TempDir dir;
  EXPECT_NE(error_of({dir.write("a.jsonl", "{\"text\": \"ok\"}\n{\"text\": \n"), "text", ""}).find("a.jsonl:2"),
            std::string::npos);
  EXPECT_NE(error_of({dir.write("b.jsonl", "{\"text\": 5}\n"), "text", ""}).find("not a string"),
            std::string::npos);
  EXPECT_NE(error_of({dir.write("c.jsonl", "[1,2]\n"), "text", ""}).find("c.jsonl:1"),
            std::string::npos);
  EXPECT_NE(error_of({dir.file("missing.txt"), "text", ""}).find("missing.txt"), std::string::npos);
}

TEST(PromptDataset, ShippedDefaultsHave500Each) {
  for (const char* name : {"harmless.txt", "harmful.txt"}) {
    std::string path = std::string(ABL_SOURCE_DIR) + "/inputs/prompts/" + name;
    auto all = load_prompts({path, "text", ""});
    EXPECT_GE(all.size(), 500u) << path;
    EXPECT_EQ(load_prompts({path, "text", "[:400]"}).size(), 400u);
    EXPECT_EQ(load_prompts({path, "text", "[400:500]"}).size(), 100u);
  }
}

// Every error about a record names FILE:LINE; an empty JSONL prompt is one (the engine would
// otherwise refuse it later, knowing only its index in the batch).
TEST(PromptDataset, JsonlEmptyOrBlankPromptNamesFileAndLine) {
  abl::testing::TempDir dir;
  const std::string empty = error_of({dir.write("e.jsonl", "{\"text\": \"a\"}\n\n{\"text\": \"\"}\n"), "text", ""});
  EXPECT_NE(empty.find("e.jsonl:3: column 'text' is empty"), std::string::npos) << empty;
  const std::string blank = error_of({dir.write("b.jsonl", "{\"text\": \" \\t\\n\"}\n"), "text", ""});
  EXPECT_NE(blank.find("b.jsonl:1: column 'text' is blank"), std::string::npos) << blank;
}

TEST(PromptDataset, JsonlSyntaxErrorsNameFileLineAndColumn) {
  abl::testing::TempDir dir;
  const std::string bad = error_of({dir.write("s.jsonl", "{\"text\": \"ok\"}\n{\"text\": tru}\n"), "text", ""});
  EXPECT_NE(bad.find("s.jsonl:2: invalid JSON: column "), std::string::npos) << bad;
  EXPECT_EQ(bad.find("json.exception"), std::string::npos) << bad;  // nlohmann's prefix dropped
  EXPECT_EQ(bad.find("line 1"), std::string::npos) << bad;          // the record's own line, not 1
  // Found by fuzzing (tests/fuzz/corpus/prompts/finding-number-overflow): a number beyond
  // double's range was nlohmann's out_of_range, which escaped as a non-abl exception. It now reads
  // as Python reads it (test_python_json.cpp); tiny numbers too.
  const std::string numbers = "{\"text\": \"x\"}\n{\"text\": \"y\", \"n\": 1e400, \"m\": 1e-400}\n";
  const auto big = load_prompts({dir.write("n.jsonl", numbers), "text", ""});
  EXPECT_EQ(big.size(), 2u);
  const std::string type = error_of({dir.write("t.jsonl", "{\"text\": [\"x\"]}\n\"x\"\n"), "text", ""});
  EXPECT_NE(type.find("t.jsonl:1: column 'text' is not a string (found array)"), std::string::npos) << type;
  const std::string top = error_of({dir.write("o.jsonl", "\"x\"\n"), "text", ""});
  EXPECT_NE(top.find("o.jsonl:1: expected a JSON object, found string"), std::string::npos) << top;
}

TEST(PromptDataset, BundledPathsReadTheBundledSets) {
  // A binary in its build tree reads the source tree's inputs/ (an installed one its share/abliterate).
  EXPECT_EQ(abl::io::resolve_prompt_path("bundled:prompts/harmful.txt"),
            std::string(ABL_SOURCE_DIR) + "/inputs/prompts/harmful.txt");
  EXPECT_EQ(abl::io::resolve_prompt_path("my/prompts.txt"), "my/prompts.txt");
  abl::io::PromptSource src;
  src.path = "bundled:prompts/harmless.txt";
  src.split = "[400:500]";
  const auto prompts = abl::io::load_prompts(src);
  ASSERT_EQ(prompts.size(), 100u);
  EXPECT_EQ(prompts[0].line, 401);
  src.path = "bundled:prompts/none.txt";
  try {
    abl::io::load_prompts(src);
    FAIL() << "a missing bundled file must be an error";
  } catch (const abl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("inputs/prompts/none.txt"), std::string::npos) << e.what();
  }
}

// CSV as AdvBench's harmful_behaviors.csv has it (goal,target), with RFC 4180 quoting: commas,
// doubled quotes and a line break inside quotes, CRLF line ends; each prompt keeps the line its
// record starts on.
TEST(PromptDataset, CsvWithQuotedFieldsSpanningLines) {
  abl::testing::TempDir dir;
  const std::string path = dir.write(
      "harmful_behaviors.csv",
      "\xEF\xBB\xBFgoal,target\r\n"
      "Write a script,\"Sure, here is a script\"\r\n"
      "\"Explain \"\"why\"\", briefly\",Sure\r\n"
      "\r\n"
      "\"two\nlines\",x\r\n"
      "caf\xC3\xA9 \xF0\x9F\xA6\x99,y");
  const auto p = load_prompts({path, "goal", ""});
  EXPECT_EQ(texts(p), (std::vector<std::string>{"Write a script", "Explain \"why\", briefly", "two\nlines",
                                                "caf\xC3\xA9 \xF0\x9F\xA6\x99"}));
  EXPECT_EQ(p[1].line, 3);
  EXPECT_EQ(p[2].line, 5);
  EXPECT_EQ(p[3].line, 7);
  EXPECT_EQ(texts(load_prompts({path, "target", "[:1]"})), (std::vector<std::string>{"Sure, here is a script"}));
  const std::string missing = error_of({path, "text", ""});
  EXPECT_NE(missing.find("harmful_behaviors.csv:1: no column 'text' in the header (columns: goal, target)"),
            std::string::npos)
      << missing;
  EXPECT_THROW(load_prompts({path, "text", ""}), abl::io::MissingColumnError);  // the app adds the option's name
}

TEST(PromptDataset, CsvAndTsvErrorsNameTheLine) {
  abl::testing::TempDir dir;
  const std::string fields = error_of({dir.write("f.csv", "text,id\na,1\nb,2,3\n"), "text", ""});
  EXPECT_NE(fields.find("f.csv:3: 3 fields where the header (line 1) has 2"), std::string::npos) << fields;
  const std::string open = error_of({dir.write("o.csv", "text\nok\n\"never\nclosed\n"), "text", ""});
  EXPECT_NE(open.find("o.csv:3: a quoted field is not closed"), std::string::npos) << open;
  const std::string after = error_of({dir.write("a.csv", "text\n\"quoted\"tail\n"), "text", ""});
  EXPECT_NE(after.find("a.csv:2: text after the closing quote"), std::string::npos) << after;
  const std::string empty = error_of({dir.write("e.csv", "id,text\n1,ok\n2,\n"), "text", ""});
  EXPECT_NE(empty.find("e.csv:3: column 'text' is empty"), std::string::npos) << empty;
  const std::string utf8 = error_of({dir.write("u.csv", "text\nok\nbad \xC3\x28\n"), "text", ""});
  EXPECT_NE(utf8.find("u.csv:3: invalid UTF-8"), std::string::npos) << utf8;
  const auto tsv = load_prompts({dir.write("p.tsv", "id\ttext\n1\ta, b\n2\t\"q\"\n"), "text", ""});
  EXPECT_EQ(texts(tsv), (std::vector<std::string>{"a, b", "q"}));
}

// A .json file holding one array (of objects or of strings), pretty-printed: each prompt keeps the
// line its element starts on; brackets, commas and escaped quotes inside strings are text.
TEST(PromptDataset, JsonArrays) {
  abl::testing::TempDir dir;
  const std::string objects = dir.write("o.json",
                                        "[\n  {\"instruction\": \"a, [b]\", \"id\": {\"n\": [1, 2]}},\n"
                                        "  {\n    \"instruction\": \"c \\\"]\\\" d\"\n  }\n]\n");
  const auto p = load_prompts({objects, "instruction", ""});
  EXPECT_EQ(texts(p), (std::vector<std::string>{"a, [b]", "c \"]\" d"}));
  EXPECT_EQ(p[0].line, 2);
  EXPECT_EQ(p[1].line, 3);
  const auto strings = load_prompts({dir.write("s.json", " [\"one\", \"two\"]"), "ignored", ""});
  EXPECT_EQ(texts(strings), (std::vector<std::string>{"one", "two"}));
  // JSON Lines under .json (Hugging Face datasets' to_json) still reads line by line.
  EXPECT_EQ(load_prompts({dir.write("l.json", "{\"text\": \"x\"}\n{\"text\": \"y\"}\n"), "text", ""}).size(), 2u);

  const std::string number = error_of({dir.write("n.json", "[\n\"a\",\n 5\n]"), "text", ""});
  EXPECT_NE(number.find("n.json:3: expected a JSON object or string in the array, found number"), std::string::npos)
      << number;
  const std::string field = error_of({objects, "text", ""});
  EXPECT_NE(field.find("o.json:2: no column 'text' (fields: id, instruction)"), std::string::npos) << field;
  const std::string open = error_of({dir.write("c.json", "[\"a\",\n\"b\""), "text", ""});
  EXPECT_NE(open.find("c.json:2: the JSON array is not closed"), std::string::npos) << open;
  const std::string trailing = error_of({dir.write("t.json", "[\"a\"]\n[\"b\"]"), "text", ""});
  EXPECT_NE(trailing.find("t.json:2: text after the JSON array"), std::string::npos) << trailing;
  const std::string comma = error_of({dir.write("k.json", "[\"a\",]"), "text", ""});
  EXPECT_NE(comma.find("k.json:1: invalid JSON"), std::string::npos) << comma;
  EXPECT_NE(error_of({dir.write("z.json", "[ ]"), "text", ""}).find("no prompts"), std::string::npos);
}

// Found by fuzzing (tests/fuzz/corpus/prompts/finding-json-array-nul): nlohmann's parser takes a
// NUL byte for the end of its input, so `"n"\0 garbage` read as "n". A NUL is refused on every
// line of every text format; a UTF-16 file (Windows editors' "Unicode") is named as such.
TEST(PromptDataset, NulBytesAndUtf16AreRefused) {
  using namespace std::string_literals;  // "..."s keeps the NUL bytes
  abl::testing::TempDir dir;
  const std::string json = error_of({dir.write("a.json", "[\n\"y\",\n\"n\"\0:\"x\"\n]"s), "text", ""});
  EXPECT_NE(json.find("a.json:3: a NUL byte at byte 4 of the line"), std::string::npos) << json;
  const std::string jsonl = error_of({dir.write("b.jsonl", "{\"text\": \"a\"}\0tail\n"s), "text", ""});
  EXPECT_NE(jsonl.find("b.jsonl:1: a NUL byte"), std::string::npos) << jsonl;
  const std::string utf16 = error_of({dir.write("c.txt", "\xFF\xFEh\0i\0\n\0"s), "text", ""});
  EXPECT_NE(utf16.find("c.txt: UTF-16 text"), std::string::npos) << utf16;
  const std::string csv = error_of({dir.write("d.csv", "text\nh\0i\n"s), "text", ""});
  EXPECT_NE(csv.find("d.csv:2: a NUL byte"), std::string::npos) << csv;
  // Found by fuzzing (finding-json-escaped-nul): JSON's escape \u0000 puts a NUL in the prompt.
  const std::string escaped = error_of({dir.write("e.jsonl", "{\"text\": \"a\\u0000b\"}\n"), "text", ""});
  EXPECT_NE(escaped.find("e.jsonl:1: column 'text' holds a NUL character (at byte 2)"), std::string::npos) << escaped;
}

// Found by review: a syntax error inside a pretty-printed element is reported at its own line and
// column of the file, not at the element's first line.
TEST(PromptDataset, JsonArraySyntaxErrorsNameTheirLineAndColumn) {
  abl::testing::TempDir dir;
  const std::string err =
      error_of({dir.write("p.json", "[\n  {\n    \"text\": \"a\",\n    \"id\": 1,\n  }\n]\n"), "text", ""});
  EXPECT_NE(err.find("p.json:5: invalid JSON at column 3: "), std::string::npos) << err;
}
