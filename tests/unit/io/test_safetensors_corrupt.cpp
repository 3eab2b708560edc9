// Every way a safetensors file or a sharded index can be wrong gives an abl::Error that names the
// file and the specific problem (and never a crash or a silent misread). Files are built here by
// hand or by patching a valid file.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "abl/io/json_file.h"
#include "abl/io/safetensors.h"
#include "common/temp_dir.h"
#include "io/safetensors_test_util.h"

namespace {

namespace fs = std::filesystem;
using abl::io::SafetensorsFile;
using abl::io::SafetensorsReader;
using abl::testing::encode_raw;
using abl::testing::encode_safetensors;
using abl::testing::RawTensor;

class Corrupt : public ::testing::Test {
 protected:
  // Writes `content` and returns the error message of opening it.
  std::string open_error(const std::string& content) {
    path_ = dir_.write("bad.safetensors", content);
    return abl::testing::thrown_error_of([&] { SafetensorsFile f(path_); });
  }
  // A header (as JSON text) over `data_bytes` zero bytes of data.
  std::string open_header_error(const std::string& header, size_t data_bytes) {
    return open_error(encode_raw(header, std::string(data_bytes, '\0')));
  }
  abl::testing::TempDir dir_;
  std::string path_;
};

TEST_F(Corrupt, FileShorterThanTheLengthField) {
  EXPECT_TRUE(abl::testing::contains_all(open_error(""), {"bad.safetensors", "file is 0 bytes", "too short"}));
  EXPECT_TRUE(abl::testing::contains_all(open_error("abcde"), {path_, "file is 5 bytes", "too short"}));
}

TEST_F(Corrupt, HeaderLengthBeyondTheFile) {
  std::string file = encode_safetensors({{"x", "F32", {2}, std::string(8, '\0')}});
  uint64_t huge = 1000;
  std::memcpy(file.data(), &huge, 8);
  EXPECT_TRUE(abl::testing::contains_all(open_error(file), {path_, "header length 1000 exceeds"}));
  huge = ~uint64_t{0};
  std::memcpy(file.data(), &huge, 8);
  EXPECT_TRUE(abl::testing::contains_all(open_error(file), {path_, "header length 18446744073709551615 exceeds"}));
}

TEST_F(Corrupt, AbsurdHeaderLength) {
  // A sparse 100 MB file: the length fits in the file but is above the format's limit.
  path_ = dir_.file("huge.safetensors");
  uint64_t n = 100'000'001;
  {
    std::ofstream out(path_, std::ios::binary);
    out.write(reinterpret_cast<const char*>(&n), 8);
  }
  fs::resize_file(path_, 8 + n + 8);
  std::string msg = abl::testing::thrown_error_of([&] { SafetensorsFile f(path_); });
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "header length 100000001", "limit"}));
}

TEST_F(Corrupt, HeaderIsNotJson) {
  std::string msg = open_header_error("{\"x\": {\"dtype\": \"F32\", oops}}", 0);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "(JSON header):1:", "invalid JSON"}));
  msg = open_header_error("{\"x\": \"\xc3\x28\"}", 0);  // invalid UTF-8
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "invalid JSON", "UTF-8"}));
  msg = open_header_error("", 0);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "invalid JSON"}));
  msg = open_header_error(std::string("{}\0\0\0\0\0\0", 8), 0);  // NUL padding is not whitespace
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "invalid JSON"}));
}

TEST_F(Corrupt, HeaderIsNotAnObject) {
  EXPECT_TRUE(abl::testing::contains_all(open_header_error("[1, 2]", 0),
                                         {path_, "header must be a JSON object, found array"}));
}

TEST_F(Corrupt, EntriesWithMissingOrWronglyTypedFields) {
  struct Case {
    std::string header;
    std::vector<std::string> expect;
  };
  const std::vector<Case> cases = {
      {R"({"w": 5})", {"tensor 'w'", "entry must be an object"}},
      {R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", {"tensor 'w'", "no 'dtype'"}},
      {R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", {"tensor 'w'", "no 'shape'"}},
      {R"({"w": {"dtype": "F32", "shape": [1]}})", {"tensor 'w'", "no 'data_offsets'"}},
      {R"({"w": {"dtype": 32, "shape": [1], "data_offsets": [0, 4]}})", {"tensor 'w'", "dtype must be a string"}},
      {R"({"w": {"dtype": "F32", "shape": 1, "data_offsets": [0, 4]}})", {"tensor 'w'", "shape must be a list"}},
      {R"({"w": {"dtype": "F32", "shape": ["1"], "data_offsets": [0, 4]}})", {"tensor 'w'", "non-negative integers"}},
      {R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", {"tensor 'w'", "non-negative integers"}},
      {R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0]}})", {"tensor 'w'", "data_offsets must be [begin, end]"}},
      {R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, -4]}})", {"tensor 'w'", "data_offsets must be"}},
      {R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": "0-4"}})", {"tensor 'w'", "data_offsets must be"}},
      {R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}})", {"tensor 'w'", "data_offsets must be"}},
      {R"({"": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", {"empty name"}},
  };
  for (const Case& c : cases) {
    std::string msg = open_header_error(c.header, 4);
    EXPECT_TRUE(abl::testing::contains_all(msg, {path_})) << c.header;
    for (const std::string& e : c.expect) {
      EXPECT_TRUE(abl::testing::contains_all(msg, {e})) << c.header;
    }
  }
}

TEST_F(Corrupt, UnknownDtype) {
  std::string msg = open_error(encode_safetensors({{"w", "Q4_K", {4}, std::string(4, '\0')}}));
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "tensor 'w'", "unknown dtype 'Q4_K'", "F32, F16, BF16"}));
  msg = open_error(encode_safetensors({{"w", "f32", {1}, std::string(4, '\0')}}));  // case matters
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "unknown dtype 'f32'"}));
}

TEST_F(Corrupt, ShapeAndByteLengthDisagree) {
  std::string msg = open_error(encode_safetensors({{"w", "F32", {2, 3}, std::string(20, '\0')}}));
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "tensor 'w'", "F32 [2,3] needs 24 bytes", "span 20"}));
  msg = open_error(encode_safetensors({{"w", "F6_E2M3", {3}, std::string(3, '\0')}}));
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "not a whole number of bytes"}));
}

TEST_F(Corrupt, NegativeOrOverflowingShape) {
  std::string msg = open_header_error(
      R"({"w": {"dtype": "F32", "shape": [2, -3], "data_offsets": [0, 0]}})", 0);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "tensor 'w'", "negative dimension"}));
  // Element count overflows 64 bits.
  msg = open_header_error(
      R"({"w": {"dtype": "F32", "shape": [4611686018427387904, 16], "data_offsets": [0, 0]}})", 0);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "tensor 'w'", "overflow"}));
  // Element count fits, size in bits does not.
  msg = open_header_error(
      R"({"w": {"dtype": "F64", "shape": [2305843009213693952], "data_offsets": [0, 0]}})", 0);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "tensor 'w'", "overflow"}));
  // A dimension above INT64_MAX.
  msg = open_header_error(
      R"({"w": {"dtype": "U8", "shape": [18446744073709551615], "data_offsets": [0, 0]}})", 0);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "tensor 'w'", "overflow"}));
  // Product that wraps around to exactly the byte count must not pass: 2^32 * 2^32 * 4 bytes.
  msg = open_header_error(
      R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})", 0);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "overflow"}));
}

TEST_F(Corrupt, OffsetsOutOfOrderOrBeyondTheData) {
  std::string msg = open_header_error(
      R"({"w": {"dtype": "U8", "shape": [4], "data_offsets": [8, 4]}})", 8);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "tensor 'w'", "[8, 4] begin after end"}));
  msg = open_header_error(R"({"w": {"dtype": "U8", "shape": [8], "data_offsets": [0, 8]}})", 4);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "tensor 'w'", "end beyond the data section (4 bytes)"}));
  msg = open_header_error(
      R"({"w": {"dtype": "U8", "shape": [8], "data_offsets": [18446744073709551608, 18446744073709551615]}})", 4);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "tensor 'w'", "beyond the data section"}));
}

TEST_F(Corrupt, OverlappingTensors) {
  std::string msg = open_header_error(
      R"({"a": {"dtype": "U8", "shape": [6], "data_offsets": [0, 6]},
          "b": {"dtype": "U8", "shape": [6], "data_offsets": [4, 10]}})",
      10);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "'a'", "'b'", "overlap"}));
  // The same bytes claimed twice.
  msg = open_header_error(
      R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
          "b": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})",
      4);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "overlap"}));
}

TEST_F(Corrupt, HolesInTheDataSection) {
  std::string msg = open_header_error(
      R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
          "b": {"dtype": "U8", "shape": [4], "data_offsets": [6, 10]}})",
      10);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "bytes [4, 6)", "before tensor 'b'", "belong to no tensor"}));
  msg = open_header_error(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}})", 6);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "bytes [0, 2)"}));
  // Trailing bytes after the last tensor (a truncated header would look like this).
  msg = open_header_error(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})", 7);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "last 3 bytes", "belong to no tensor"}));
  msg = open_header_error("{}", 5);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "last 5 bytes"}));
}

TEST_F(Corrupt, ZeroSizedTensorsAreFine) {
  path_ = dir_.write("ok.safetensors", encode_raw(
      R"({"e": {"dtype": "F32", "shape": [0], "data_offsets": [4, 4]},
          "a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
          "z": {"dtype": "F32", "shape": [3, 0], "data_offsets": [4, 4]}})",
      std::string(4, '\0')));
  SafetensorsFile f(path_);
  EXPECT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(f.tensor("z").numel, 0);
  // Reading no elements into no memory (an empty vector's data() may be null) is fine; UBSan
  // caught the memcpy(nullptr, ..., 0) this used to do (tests/fuzz/corpus/safetensors_header).
  f.read_f32(f.tensor("z"), 0, 0, nullptr);
  f.read_bytes(f.tensor("e"), 0, 0, nullptr);
  EXPECT_TRUE(SafetensorsReader(path_).read_f32("z").empty());
}

TEST_F(Corrupt, DuplicateNames) {
  std::string msg = open_header_error(
      R"({"w": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]},
          "w": {"dtype": "U8", "shape": [2], "data_offsets": [2, 4]}})",
      4);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "duplicate key 'w'"}));
}

TEST_F(Corrupt, MetadataMustMapStringsToStrings) {
  std::string msg = open_header_error(R"({"__metadata__": {"format": "pt", "n": 3}})", 0);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "__metadata__ value of 'n' must be a string"}));
  msg = open_header_error(R"({"__metadata__": ["pt"]})", 0);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "__metadata__ must be an object"}));
  msg = open_header_error(R"({"__metadata__": {"nested": {"a": "b"}}})", 0);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "__metadata__ value of 'nested'"}));
}

TEST_F(Corrupt, PatchedValidFileIsCaught) {
  // Flip a digit of a data offset inside a file written by the library writer.
  std::vector<float> v(16, 1.0f);
  std::string good_path = dir_.file("good.safetensors");
  abl::io::write_safetensors(good_path, {{{"a", abl::DType::f32, {16}}, v.data()},
                                         {{"b", abl::DType::f32, {16}}, v.data()}});
  std::ifstream in(good_path, std::ios::binary);
  std::string file(std::istreambuf_iterator<char>(in), {});
  size_t at = file.find("\"data_offsets\":[64,128]");
  ASSERT_NE(at, std::string::npos) << file.substr(0, 200);
  file.replace(at, 23, "\"data_offsets\":[60,128]");
  std::string msg = open_error(file);
  EXPECT_TRUE(abl::testing::contains_all(msg, {path_, "tensor 'b'", "needs 64 bytes", "span 68"}));
}

// ---- sharded folders ----

class CorruptIndex : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("model");
    fs::create_directories(model_);
    write_shard("model-00001-of-00002.safetensors", {{"a", "F32", {1}, std::string(4, '\0')}});
    write_shard("model-00002-of-00002.safetensors", {{"b", "F32", {1}, std::string(4, '\0')}});
  }
  void write_shard(const std::string& name, const std::vector<RawTensor>& ts) {
    std::ofstream(model_ + "/" + name, std::ios::binary) << encode_safetensors(ts);
  }
  std::string write_index(const std::string& text) {
    std::string p = model_ + "/model.safetensors.index.json";
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  abl::testing::TempDir dir_;
  std::string model_;
};

TEST_F(CorruptIndex, ValidIndexReads) {
  write_index(R"({"metadata": {"total_size": 8}, "weight_map": {
      "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}})");
  SafetensorsReader r(model_);
  EXPECT_EQ(r.num_files(), 2u);
  EXPECT_EQ(r.tensor("b").file_index, 1u);
}

TEST_F(CorruptIndex, MissingShardFile) {
  std::string idx = write_index(R"({"weight_map": {"a": "model-00001-of-00002.safetensors",
      "b": "model-00002-of-00002.safetensors", "c": "model-00003-of-00002.safetensors"}})");
  EXPECT_ABL_ERROR(SafetensorsReader r(model_), idx, "model-00003-of-00002.safetensors", "'c'",
                   "does not exist");
}

TEST_F(CorruptIndex, TensorMissingFromItsShard) {
  std::string idx = write_index(R"({"weight_map": {"a": "model-00001-of-00002.safetensors",
      "b": "model-00001-of-00002.safetensors"}})");
  EXPECT_ABL_ERROR(SafetensorsReader r(model_), idx, "tensor 'b'",
                   "model-00001-of-00002.safetensors but that file does not contain it");
}

TEST_F(CorruptIndex, BadIndexDocuments) {
  std::string idx = write_index("{\"weight_map\": {\"a\": }");
  EXPECT_ABL_ERROR(SafetensorsReader r(model_), idx + ":1:", "invalid JSON");
  write_index(R"({"metadata": {}})");
  EXPECT_ABL_ERROR(SafetensorsReader r(model_), idx, "key 'weight_map' is missing");
  write_index(R"({"weight_map": ["a"]})");
  EXPECT_ABL_ERROR(SafetensorsReader r(model_), idx, "key 'weight_map'", "must be an object");
  write_index(R"({"weight_map": {"a": 1}})");
  EXPECT_ABL_ERROR(SafetensorsReader r(model_), idx, "key 'weight_map.a'", "must be a string");
  write_index(R"({"weight_map": {}})");
  EXPECT_ABL_ERROR(SafetensorsReader r(model_), idx, "weight_map is empty");
  write_index(R"({"weight_map": {"a": "../model-00001-of-00002.safetensors"}})");
  EXPECT_ABL_ERROR(SafetensorsReader r(model_), idx, "not a file inside");
  write_index(R"({"weight_map": {"a": "/etc/passwd"}})");
  EXPECT_ABL_ERROR(SafetensorsReader r(model_), idx, "not a file inside");
  // Opened as "model-00001-of-00002.safetensors", the name up to the NUL, this was accepted.
  write_index("{\"weight_map\": {\"a\": \"model-00001-of-00002.safetensors\\u0000../x\"}}");
  EXPECT_ABL_ERROR(SafetensorsReader r(model_), idx, "entry 'a'", "NUL byte");
}

TEST_F(CorruptIndex, CorruptShardNamesTheShard) {
  std::ofstream(model_ + "/model-00002-of-00002.safetensors", std::ios::binary) << "xyz";
  write_index(R"({"weight_map": {"a": "model-00001-of-00002.safetensors",
      "b": "model-00002-of-00002.safetensors"}})");
  EXPECT_ABL_ERROR(SafetensorsReader r(model_), "model-00002-of-00002.safetensors", "too short");
}

TEST_F(CorruptIndex, TensorStoredInTwoShards) {
  write_shard("model-00002-of-00002.safetensors",
              {{"a", "F32", {1}, std::string(4, '\0')}, {"b", "F32", {1}, std::string(4, '\0')}});
  write_index(R"({"weight_map": {"a": "model-00001-of-00002.safetensors",
      "b": "model-00002-of-00002.safetensors"}})");
  EXPECT_ABL_ERROR(SafetensorsReader r(model_), "tensor 'a' is stored twice",
                   "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors");
}

TEST_F(CorruptIndex, FolderWithoutWeights) {
  std::string empty = dir_.file("empty");
  fs::create_directories(empty);
  EXPECT_ABL_ERROR(SafetensorsReader r(empty), empty, "no model.safetensors or model.safetensors.index.json");
  EXPECT_ABL_ERROR(SafetensorsReader r(dir_.file("absent")), "absent", "no such file");
}

}  // namespace
