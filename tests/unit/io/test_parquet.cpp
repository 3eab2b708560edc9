// The Parquet reader on files written by arrow-rs (tests/fixtures/prompts, made by
// tools/fixtures/parquet/make_parquet_fixtures.mjs): every page version, encoding and codec a
// writer uses for a string column reads the same prompts as prompts.jsonl; the decoders on
// hand-made streams; and damaged files fail with abl::Error, never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "abl/core/error.h"
#include "abl/io/parquet.h"
#include "abl/io/prompt_dataset.h"
#include "common/temp_dir.h"
#include "parquet_codecs.h"
#include "parquet_metadata.h"
#include "parquet_values.h"

namespace {

using abl::io::load_prompts;
using abl::io::Prompt;
using abl::io::PromptSource;

const std::string kDir = std::string(ABL_FIXTURE_DIR) + "/prompts/";

std::vector<std::string> texts(const std::vector<Prompt>& p) {
  std::vector<std::string> out;
  for (const auto& x : p) out.push_back(x.text);
  return out;
}

std::string error_of(const std::string& path, const std::string& column = "text") {
  try {
    load_prompts({path, column, ""});
  } catch (const abl::Error& e) {
    return e.what();
  }
  return "";
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(Parquet, EveryLayoutReadsThePromptsOfTheJsonLines) {
  const std::vector<std::string> expected = texts(load_prompts({kDir + "prompts.jsonl", "text", ""}));
  ASSERT_EQ(expected.size(), 240u);
  for (const char* name : {"dict-v1-snappy", "dict-v2-zstd", "dict-fallback-v1-gzip", "plain-v1-uncompressed",
                           "plain-required-v2-snappy", "delta-length-v2-snappy", "delta-byte-array-v1-zstd",
                           "delta-byte-array-v2-uncompressed", "one-page-snappy"}) {
    SCOPED_TRACE(name);
    const std::vector<Prompt> got = load_prompts({kDir + name + ".parquet", "text", ""});
    EXPECT_EQ(texts(got), expected);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].row, static_cast<int64_t>(i));
      ASSERT_EQ(got[i].line, 0);
    }
  }
}

TEST(Parquet, SplitsCountRowsAndMessagesNameThem) {
  const std::vector<Prompt> tail = load_prompts({kDir + "dict-v1-snappy.parquet", "text", "[230:]"});
  ASSERT_EQ(tail.size(), 10u);
  EXPECT_EQ(tail[0].row, 230);
  EXPECT_EQ(tail[0].where(), "row 230");
  EXPECT_EQ((Prompt{"x", 12}.where()), "line 12");
}

TEST(Parquet, AFileWithoutExtensionIsReadByItsMagic) {
  // The Hugging Face Hub's cache keeps files as blobs/<hash>, with no extension.
  abl::testing::TempDir dir;
  const std::string blob = dir.write("0123abcd", read_all(kDir + "dict-v2-zstd.parquet"));
  EXPECT_TRUE(abl::io::is_parquet_file(blob));
  EXPECT_FALSE(abl::io::is_parquet_file(kDir + "prompts.jsonl"));
  EXPECT_EQ(load_prompts({blob, "text", "[:3]"}).size(), 3u);
}

TEST(Parquet, ErrorsNameTheFileTheRowAndTheColumn) {
  EXPECT_NE(error_of(kDir + "null-at-row-7.parquet").find("null-at-row-7.parquet row 7: column 'text' is null"),
            std::string::npos);
  EXPECT_NE(error_of(kDir + "empty-at-row-3.parquet").find("empty-at-row-3.parquet row 3: column 'text' is empty"),
            std::string::npos);
  const std::string missing = error_of(kDir + "dict-v1-snappy.parquet", "prompt");
  EXPECT_NE(missing.find("no column 'prompt' (columns: id, text)"), std::string::npos)
      << missing;
  const std::string ints = error_of(kDir + "dict-v1-snappy.parquet", "id");
  EXPECT_NE(ints.find("column 'id' holds INT32 values, not strings"), std::string::npos) << ints;
  const std::string nested = error_of(kDir + "list-column.parquet");
  EXPECT_NE(nested.find("column 'text' is nested"), std::string::npos) << nested;
  const std::string lz4 = error_of(kDir + "lz4-raw.parquet");
  EXPECT_NE(lz4.find("compressed with LZ4_RAW, which abliterate does not read"), std::string::npos) << lz4;
  EXPECT_NE(lz4.find("lz4-raw.parquet: row group 0 of 1, column 'text'"), std::string::npos) << lz4;
}

// Every truncation and thousands of random byte changes of a real file end in abl::Error (or,
// where the change missed what is read, in prompts): no crash, no other exception.
TEST(Parquet, DamagedFilesFailWithAnError) {
  abl::testing::TempDir dir;
  const std::string good = read_all(kDir + "dict-v1-snappy.parquet");
  auto outcome = [&](const std::string& bytes) {
    const std::string path = dir.write("damaged.parquet", bytes);
    try {
      load_prompts({path, "text", ""});
      return 0;
    } catch (const abl::Error&) {
      return 1;
    }
  };
  for (size_t n = 0; n < good.size(); n += 7) {
    std::string cut = good.substr(0, n);
    EXPECT_EQ(outcome(cut), 1) << "truncated to " << n << " bytes";
  }
  std::mt19937 rng(20261125);
  int errors = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    std::string bytes = good;
    const int changes = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < changes; ++c) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    errors += outcome(bytes);
  }
  EXPECT_GT(errors, 0);
}

TEST(ParquetDecoders, SnappyLiteralsAndOverlappingCopies) {
  // "ab", then a copy of length 6 from 2 back (overlapping itself): "abababab".
  const uint8_t stream[] = {8, 1 << 2, 'a', 'b', (6 - 1) << 2 | 2, 2, 0};
  std::string out(8, '\0');
  abl::io::parquet::snappy_decompress(stream, sizeof stream, reinterpret_cast<uint8_t*>(out.data()), out.size(), "t");
  EXPECT_EQ(out, "abababab");
  // A copy from before the start, and a stream shorter than its header says, are errors.
  const uint8_t before[] = {4, 0 << 2, 'a', (3 - 1) << 2 | 2, 2, 0};
  EXPECT_THROW(abl::io::parquet::snappy_decompress(before, sizeof before, reinterpret_cast<uint8_t*>(out.data()), 4,
                                                   "t"),
               abl::Error);
  EXPECT_THROW(abl::io::parquet::snappy_decompress(stream, 4, reinterpret_cast<uint8_t*>(out.data()), 8, "t"),
               abl::Error);
}

TEST(ParquetDecoders, RleHybridRunsAndDeltaBinaryPacked) {
  using abl::io::parquet::Bytes;
  // An RLE run of 3 fives (width 3), then one bit-packed group of 8 values 0..7.
  const uint8_t rle[] = {3 << 1, 5, 1 << 1 | 1, 0x88, 0xC6, 0xFA};
  EXPECT_EQ(abl::io::parquet::decode_rle_hybrid({rle, sizeof rle}, 3, 11, "t"),
            (std::vector<uint32_t>{5, 5, 5, 0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_THROW(abl::io::parquet::decode_rle_hybrid({rle, 2}, 3, 4, "t"), abl::Error);
  // The format's own example: 1 2 3 4 5 as block 128, 4 miniblocks, 5 values, first 1, min delta 1,
  // widths 0 (apache/parquet-format Encodings.md, DELTA_BINARY_PACKED).
  const uint8_t delta[] = {0x80, 0x01, 4, 5, 2, 2, 0, 0, 0, 0};
  size_t used = 0;
  EXPECT_EQ(abl::io::parquet::decode_delta_binary_packed({delta, sizeof delta}, 5, &used, "t"),
            (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(used, sizeof delta);
  EXPECT_THROW(abl::io::parquet::decode_delta_binary_packed({delta, sizeof delta}, 6, &used, "t"), abl::Error);
}

TEST(Parquet, ADownloadedDatasetFolderIsReadAsItsSplits) {
  // `huggingface-cli download --repo-type dataset X --local-dir D` gives D/data/train-*.parquet.
  abl::testing::TempDir dir;
  std::filesystem::create_directories(dir.path() / "data");
  dir.write("data/train-00000-of-00001.parquet", read_all(kDir + "one-page-snappy.parquet"));
  dir.write("README.md", "# a dataset card\n");
  const auto all = load_prompts({dir.path().string(), "text", ""});
  EXPECT_EQ(texts(all), texts(load_prompts({dir.file("data/train-00000-of-00001.parquet"), "text", ""})));
  EXPECT_EQ(load_prompts({dir.path().string(), "text", "train[:10]"}).size(), 10u);
  EXPECT_EQ(all[7].where(), "data/train-00000-of-00001.parquet row 7");
}

// Found by review: a few bytes must not decode to gigabytes (a DELTA_BYTE_ARRAY prefix repeated,
// a dictionary entry repeated by an RLE run, a delta block of 2^61 values), and polars' width-0
// bit-packed dictionary runs (a page of one key) have no bytes to bound them.
TEST(ParquetDecoders, BudgetsAndWidthZeroRuns) {
  using abl::io::parquet::Bytes;
  using abl::io::parquet::DecodeBudget;
  // DELTA_BYTE_ARRAY of "abcde" three times: prefixes 0 5 5, suffixes "abcde" "" "".
  std::vector<uint8_t> bytes = {0x80, 0x01, 4, 3, 0x00, 0x00, 3, 0, 0, 0, 0x05};
  bytes.resize(bytes.size() + 11, 0);
  for (uint8_t b : {0x80, 0x01, 4, 3, 0x0A, 0x09, 3, 0, 0, 0, 0x28}) bytes.push_back(b);
  bytes.resize(bytes.size() + 11, 0);
  for (char c : std::string("abcde")) bytes.push_back(static_cast<uint8_t>(c));
  DecodeBudget plenty{100, 100};
  EXPECT_EQ(abl::io::parquet::decode_byte_arrays(abl::io::parquet::kDeltaByteArray, {bytes.data(), bytes.size()}, 3,
                                                 &plenty, "t"),
            (std::vector<std::string>{"abcde", "abcde", "abcde"}));
  EXPECT_EQ(plenty.left, 85);
  DecodeBudget small{10, 10};
  EXPECT_THROW(abl::io::parquet::decode_byte_arrays(abl::io::parquet::kDeltaByteArray, {bytes.data(), bytes.size()},
                                                    3, &small, "t"),
               abl::Error);
  // A delta block of 2^61 values is refused before anything is unpacked.
  const uint8_t huge[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 1, 2, 0, 0, 8};
  size_t used = 0;
  EXPECT_THROW(abl::io::parquet::decode_delta_binary_packed({huge, sizeof huge}, 2, &used, "t"), abl::Error);
  // Width 0: a bit-packed run of 100 groups in no bytes gives zeros.
  const uint8_t zeros[] = {0xC9, 0x01};  // varint (100 << 1) | 1
  EXPECT_EQ(abl::io::parquet::decode_rle_hybrid({zeros, 2}, 0, 9, "t"), std::vector<uint32_t>(9, 0));
}
