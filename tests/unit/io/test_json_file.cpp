// JSON helper: parse errors carry file:line:column, getters name the file and the key path.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

#include "abl/io/json_file.h"
#include "common/temp_dir.h"
#include "io/safetensors_test_util.h"

namespace {

using abl::io::JsonValue;
using abl::io::parse_json;
using abl::io::read_json_file;

TEST(JsonFile, ParseErrorNamesFileLineAndColumn) {
  abl::testing::TempDir dir;
  std::string path = dir.write("config.json", "{\n  \"a\": 1,\n  \"b\": tru\n}\n");
  EXPECT_ABL_ERROR(read_json_file(path), path + ":3:", "invalid JSON", "invalid literal");
  std::string msg = abl::testing::thrown_error_of([&] { read_json_file(path); });
  EXPECT_EQ(msg.find("json.exception"), std::string::npos) << msg;  // nlohmann's prefix dropped
}

TEST(JsonFile, ReadErrorsNameThePath) {
  abl::testing::TempDir dir;
  EXPECT_ABL_ERROR(read_json_file(dir.file("nope.json")), dir.file("nope.json"), "cannot open");
  EXPECT_ABL_ERROR(read_json_file(dir.path().string()), "is a directory");
  std::string empty = dir.write("empty.json", "");
  EXPECT_ABL_ERROR(read_json_file(empty), empty + ":1:1", "invalid JSON");
  std::string bad_utf8 = dir.write("u.json", "{\"a\": \"\xff\"}");
  EXPECT_ABL_ERROR(read_json_file(bad_utf8), bad_utf8, "UTF-8");
  // nlohmann alone would stop at a NUL and accept the text before it.
  std::string nul = dir.write("nul.json", std::string("{\"a\": 1}\n\0garbage", 17));
  EXPECT_ABL_ERROR(read_json_file(nul), nul + ":2:1", "NUL byte");
}

// Found by fuzzing (tests/fuzz/corpus/*/finding-number-overflow*): nlohmann reports a number
// beyond double's range as out_of_range, not parse_error; it must still be an abl::Error.
TEST(JsonFile, NumberOverflowIsAnInvalidJsonError) {
  EXPECT_ABL_ERROR(parse_json(R"({"a": [1, 1e400]})", "config.json"), "config.json: invalid JSON",
                   "number overflow", "1e400");
  EXPECT_ABL_ERROR(parse_json("-1e999", "x.json"), "x.json: invalid JSON", "-1e999");
  std::string msg = abl::testing::thrown_error_of([] { parse_json("1e400", "x.json"); });
  EXPECT_EQ(msg.find("json.exception"), std::string::npos) << msg;
  // Large integers are not an overflow: they become doubles.
  EXPECT_NO_THROW(parse_json("[18446744073709551616, 1e308]", "ok.json"));
}

// Python's json writes float('inf') as Infinity (Nemotron-H's config.json: "time_step_limit": [0.0, Infinity]).
TEST(JsonFile, PythonInfinityReadsAsInfinity) {
  const JsonValue v = parse_json(R"({"limit": [0.0, Infinity], "low": -Infinity, "s": "Infinity and -Infinity",
    "e": "\"Infinity"})", "config.json");
  EXPECT_EQ(v.at("limit").at(size_t{1}).as_double(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(v.at("limit").at(size_t{0}).as_double(), 0.0);
  EXPECT_EQ(v.get_double("low"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(v.get_string("s"), "Infinity and -Infinity");  // strings are left alone
  EXPECT_EQ(v.get_string("e"), "\"Infinity");
  // with duplicate keys refused as well; a word only beginning like it is no literal; errors keep their column
  abl::io::JsonParseOptions strict;
  strict.reject_duplicate_keys = true;
  EXPECT_EQ(parse_json("[Infinity]", "x.json", strict).at(size_t{0}).as_double(), std::numeric_limits<double>::infinity());
  EXPECT_ABL_ERROR(parse_json("[Infinityx]", "x.json"), "x.json:1:", "invalid JSON");
  EXPECT_ABL_ERROR(parse_json("[Infinity, NaN]", "x.json"), "x.json:1:12", "invalid JSON");
  // written back as Python writes it, key order kept (export --dtype rewrites such a config.json)
  abl::testing::TempDir dir;
  const std::string path = dir.write("config.json", R"({"z": 1, "time_step_limit": [0.0, Infinity], "a": -Infinity})");
  nlohmann::ordered_json config = abl::io::read_ordered_json_file(path);
  EXPECT_EQ(config.begin().key(), "z");
  EXPECT_TRUE(std::isinf(config["time_step_limit"][1].get<double>()));
  abl::io::write_json_file(path, config, -1);  // compact
  std::ifstream in(path, std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, "{\"z\":1,\"time_step_limit\":[0.0,Infinity],\"a\":-Infinity}\n");
  EXPECT_EQ(read_json_file(path).get_double("a"), -std::numeric_limits<double>::infinity());
}

TEST(JsonFile, TypedGettersNameFileAndKey) {
  JsonValue v = parse_json(R"({"n": 3, "f": 2.5, "i": 4.0, "s": "x", "b": true, "z": null,
      "big": 18446744073709551615, "o": {"inner": {"k": "v"}}, "arr": [1, [2, "x"]]})",
                           "conf.json");
  EXPECT_EQ(v.get_int("n"), 3);
  EXPECT_EQ(v.get_int("i"), 4);  // an integral float is accepted as an integer
  EXPECT_DOUBLE_EQ(v.get_double("f"), 2.5);
  EXPECT_DOUBLE_EQ(v.get_double("n"), 3.0);
  EXPECT_EQ(v.get_string("s"), "x");
  EXPECT_TRUE(v.get_bool("b"));
  EXPECT_EQ(v.get_int("missing", 7), 7);
  EXPECT_EQ(v.get_int("z", 9), 9);  // null means "not set"
  EXPECT_TRUE(v.contains("z"));
  EXPECT_FALSE(v.find("z").has_value());
  EXPECT_EQ(v.at("o").at("inner").get_string("k"), "v");

  EXPECT_ABL_ERROR(v.get_int("missing"), "conf.json", "key 'missing' is missing");
  EXPECT_ABL_ERROR(v.get_int("z"), "conf.json", "key 'z' is null");
  EXPECT_ABL_ERROR(v.get_int("f"), "conf.json", "key 'f'", "must be an integer", "2.5");
  EXPECT_ABL_ERROR(v.get_int("s"), "conf.json", "key 's'", "must be an integer, found string");
  EXPECT_ABL_ERROR(v.get_bool("n"), "key 'n'", "true or false");
  EXPECT_ABL_ERROR(v.get_string("b"), "key 'b'", "must be a string, found boolean");
  EXPECT_ABL_ERROR(v.get_int("big"), "key 'big'", "out of range");
  EXPECT_ABL_ERROR(v.at("o").at("inner").get_int("k"), "conf.json", "key 'o.inner.k'");
  EXPECT_ABL_ERROR(v.at("o").at("inner").get_int("q"), "key 'o.inner.q' is missing");
  EXPECT_ABL_ERROR(v.at("arr").at(size_t{1}).at(size_t{1}).as_int(), "key 'arr[1][1]'");
  EXPECT_ABL_ERROR(v.at("arr").at(size_t{5}), "key 'arr'", "at least 6 elements");
  EXPECT_ABL_ERROR(v.at("s").get_int("x"), "key 's'", "must be an object, found string");
  EXPECT_ABL_ERROR(parse_json("[1]", "top.json").get_int("x"), "top.json: must be an object");
}

TEST(JsonFile, IntLists) {
  JsonValue v = parse_json(R"({"one": 5, "many": [1, 2, 3], "bad": [1, "2"]})", "c.json");
  EXPECT_EQ(v.at("one").as_int_list(), std::vector<int64_t>{5});
  EXPECT_EQ(v.at("many").as_int_list(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_ABL_ERROR(v.at("bad").as_int_list(), "key 'bad[1]'", "must be an integer");
}

TEST(JsonFile, DuplicateKeysAreRejectedOnRequest) {
  const char* text = R"({"a": {"x": 1, "y": 2}, "b": {"x": 1, "x": 2}})";
  EXPECT_EQ(parse_json(text, "lenient.json").at("b").get_int("x"), 2);  // last one wins
  abl::io::JsonParseOptions strict;
  strict.reject_duplicate_keys = true;
  EXPECT_ABL_ERROR(parse_json(text, "strict.json", strict), "strict.json", "duplicate key 'x'");
  // The same key in different objects is fine.
  EXPECT_NO_THROW(parse_json(R"({"a": {"x": 1}, "b": {"x": 1}})", "ok.json", strict));
}

TEST(JsonFile, ValuesOutliveTheirDocumentHandle) {
  JsonValue inner = parse_json(R"({"a": {"b": 3}})", "c.json").at("a");
  EXPECT_EQ(inner.get_int("b"), 3);
  EXPECT_EQ(inner.origin(), "c.json");
  EXPECT_EQ(inner.key_path(), "a");
}

TEST(JsonFile, WriteIsAtomicAndReadable) {
  abl::testing::TempDir dir;
  std::string path = dir.file("out.json");
  nlohmann::json j = {{"b", 1}, {"a", {1, 2}}};
  abl::io::write_json_file(path, j);
  EXPECT_EQ(read_json_file(path).json(), j);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "out.json");  // no temp file left behind
  }
}

}  // namespace
