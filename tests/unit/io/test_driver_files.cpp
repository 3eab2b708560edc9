// The driver phases' files without MPI: directions.h5 and baseline.h5 round trips and every
// error path (trials.h5: test_trials_file.cpp). Also the HDF5 layer's compound and
// multi-dimensional variable-length string datasets.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "abl/core/error.h"
#include "abl/io/driver_files.h"
#include "abl/io/h5.h"
#include "common/temp_dir.h"
#include "common/error_of.h"
#include "io/driver_files_test_util.h"

using abl::testing::error_of;
namespace abl::io {
namespace {

using abl::testing::TempDir;
using namespace schema;  // NOLINT: the types under test
namespace fs = std::filesystem;

// ---- HDF5 layer: compound tables and (T, N) variable-length strings ----

TEST(H5DriverSupport, CompoundTableExtendsAndReadsByName) {
  TempDir dir;
  const std::string path = dir.file("c.h5");
  {
    h5::File f = h5::File::create(path, MPI_COMM_NULL);
    h5::DatasetOptions opts;
    opts.extendible = true;
    h5::Dataset ds = f.create_f64_compound_dataset("/t/params", {"a", "b", "c"}, 0, opts);
    EXPECT_EQ(ds.compound_fields(), (std::vector<std::string>{"a", "b", "c"}));
    std::vector<double> rows = {1, 2, 3, 4, 5, 6};
    ds.extend(2);
    ds.write_compound_rows(0, 2, rows.data());
    ds.extend(3);
    std::vector<double> more = {7, 8, 9};
    ds.write_compound_rows(2, 1, more.data());
    EXPECT_HAS(error_of([&] { ds.write_compound_rows(3, 1, more.data()); }), "rows [3, 4)");
    EXPECT_HAS(error_of([&] { f.create_f64_compound_dataset("/x", {"a", "a"}, 1); }), "twice");
    EXPECT_HAS(error_of([&] { f.create_f64_compound_dataset("/y", {}, 1); }), "at least one");
    f.flush();
  }
  h5::File f = h5::File::open(path);
  h5::Dataset ds = f.open_dataset("/t/params");
  EXPECT_EQ(ds.rows(), 3);
  EXPECT_EQ(ds.read_compound_rows(), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(ds.read_compound_rows(1, 1), (std::vector<double>{4, 5, 6}));
  EXPECT_HAS(error_of([&] { f.open_dataset("/t/params").type(); }), "/t/params");
}

TEST(H5DriverSupport, TwoDimensionalVariableLengthStrings) {
  TempDir dir;
  const std::string path = dir.file("s.h5");
  {
    h5::File f = h5::File::create(path, MPI_COMM_NULL);
    h5::DatasetOptions opts;
    opts.extendible = true;
    h5::Dataset ds = f.create_vlen_string_dataset("/r", {0, 2}, opts);
    EXPECT_EQ(ds.string_width(), 0);
    ds.extend(2);
    ds.write_vlen_string_rows(0, {"a", "", "¿qué? 🙂", std::string(1000, 'x')});
    ds.extend(3);  // row 2 never written: reads as empty strings
    EXPECT_HAS(error_of([&] { ds.write_vlen_string_rows(2, {"odd"}); }), "whole rows");
    EXPECT_HAS(error_of([&] { ds.write_vlen_string_rows(3, {"a", "b"}); }), "outside");
    EXPECT_HAS(error_of([&] { ds.write_vlen_string_rows(2, {"\xff", "b"}); }), "UTF-8");
  }
  h5::File f = h5::File::open(path);
  h5::Dataset ds = f.open_dataset("/r");
  EXPECT_EQ(ds.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(ds.read_strings(1, 1), (std::vector<std::string>{"¿qué? 🙂", std::string(1000, 'x')}));
  EXPECT_EQ(ds.read_strings(2, 1), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(ds.read_strings().size(), 6u);
}

// ---- directions.h5 ----


TEST(DirectionsFile, RoundTrip) {
  TempDir dir;
  const std::string path = dir.file("directions.h5");
  const DirectionsData d = sample_directions();
  write_directions(path, d);
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(partial(path)));
  const DirectionsData r = read_directions(path);
  EXPECT_EQ(r.model, d.model);
  EXPECT_EQ(r.architecture, d.architecture);
  EXPECT_EQ(r.residuals_created, d.residuals_created);
  EXPECT_FALSE(r.projected);
  EXPECT_EQ(r.depths, 3);
  EXPECT_EQ(r.hidden, 4);
  EXPECT_EQ(r.directions, d.directions);
  EXPECT_EQ(r.good_mean, d.good_mean);
  EXPECT_EQ(r.bad_mean, d.bad_mean);
  EXPECT_EQ(r.good_norm, d.good_norm);
  EXPECT_EQ(r.bad_norm, d.bad_norm);
  EXPECT_EQ(r.direction_norm, d.direction_norm);
  EXPECT_EQ(r.cosine_good_bad, d.cosine_good_bad);
  ASSERT_EQ(r.separation.size(), 3u);
  EXPECT_EQ(r.separation[0], 0);
  EXPECT_TRUE(std::isnan(r.separation[1]));
  EXPECT_EQ(r.separation[2], 5);
  EXPECT_EQ(r.created.size(), 20u) << r.created;
  EXPECT_EQ(r.created.back(), 'Z');

  DirectionsData p = sample_directions(1, 1);
  p.projected = true;
  write_directions(path, p);  // replaces the previous file
  EXPECT_TRUE(read_directions(path).projected);
  EXPECT_EQ(read_directions(path).hidden, 1);
  EXPECT_EQ(open_ids(), 0);
}

TEST(DirectionsFile, WrongSizesFailBeforeAnyFileExists) {
  TempDir dir;
  const std::string path = dir.file("directions.h5");
  DirectionsData d = sample_directions();
  d.bad_mean.pop_back();
  std::string e = error_of([&] { write_directions(path, d); });
  EXPECT_HAS(e, path);
  EXPECT_HAS(e, "/bad_mean has 11 values, expected 3 x 4 = 12");
  d = sample_directions();
  d.separation.push_back(0);
  e = error_of([&] { write_directions(path, d); });
  EXPECT_HAS(e, "/stats/separation has 4 values, expected 3");
  d = sample_directions();
  d.depths = 0;
  EXPECT_HAS(error_of([&] { write_directions(path, d); }), "positive dimensions");
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(partial(path)));
}

TEST(DirectionsFile, ReaderChecksSchemaAndShapes) {
  TempDir dir;
  const std::string missing = dir.file("missing.h5");
  EXPECT_HAS(error_of([&] { read_directions(missing); }), missing);
  const std::string text = dir.write("text.h5", "not HDF5");
  EXPECT_HAS(error_of([&] { read_directions(text); }), text);

  const std::string other = dir.file("other.h5");
  {
    h5::File f = h5::File::create(other, MPI_COMM_NULL);
    f.set_attr_string("/", kSchemaAttr, baseline::kSchema);
    f.set_attr_int("/", kSchemaVersionAttr, 1);
  }
  std::string e = error_of([&] { read_directions(other); });
  EXPECT_HAS(e, other);
  EXPECT_HAS(e, "not a directions file");

  // A newer version, then a dataset of the wrong shape, written over a valid file.
  const std::string path = dir.file("directions.h5");
  write_directions(path, sample_directions());
  {
    h5::File f = h5::File::open(path, MPI_COMM_NULL, true);
    f.set_attr_int("/", kSchemaVersionAttr, directions::kVersion + 1);
  }
  EXPECT_HAS(error_of([&] { read_directions(path); }), "schema version 2");
  {
    h5::File f = h5::File::open(path, MPI_COMM_NULL, true);
    f.set_attr_int("/", kSchemaVersionAttr, directions::kVersion);
    H5Ldelete(f.id(), directions::kStatsCosineGoodBad, H5P_DEFAULT);
    f.create_dataset(directions::kStatsCosineGoodBad, h5::Type::f64, {2});
  }
  e = error_of([&] { read_directions(path); });
  EXPECT_HAS(e, path);
  EXPECT_HAS(e, "/stats/cosine_good_bad must be (3) f64");
  EXPECT_EQ(open_ids(), 0);
}

// ---- baseline.h5 ----

BaselineMeta sample_baseline_meta() {
  BaselineMeta m;
  m.model = "org/model";
  m.architecture = "Qwen2ForCausalLM";
  m.chat_template = "chatml";
  m.system_prompt = "You are a helpful assistant.";
  m.response_prefix = "<think>\n\n</think>\n\n";
  m.response_prefix_source = "detected";
  m.max_response_length = 96;
  m.abliterate_version = "0.1.0-test";
  return m;
}

constexpr int64_t kKl = 3, kRef = 4, kVocab = 5;

std::vector<float> logprob_rows(int64_t first, int64_t n) {
  std::vector<float> v;
  for (int64_t r = first; r < first + n; ++r) {
    for (int64_t t = 0; t < kVocab; ++t) v.push_back(-0.5f * static_cast<float>(r * kVocab + t));
  }
  return v;
}

TEST(BaselineFile, SerialWriterRoundTrip) {
  TempDir dir;
  const std::string path = dir.file("baseline.h5");
  {
    BaselineWriter w(path, MPI_COMM_NULL, sample_baseline_meta(), kKl, kRef, kVocab);
    EXPECT_EQ(w.path(), path);
    w.write_kl(2, 1, logprob_rows(2, 1).data(), {"kl two"});
    w.write_kl(0, 2, logprob_rows(0, 2).data(), {"kl zero", "kl one — ünïcode"});
    w.write_kl(0, 0, nullptr, {});  // a rank with nothing to write
    w.write_refusals(2, {"r2", "r3"}, {"I can't help with that.", ""}, {1, 0});
    w.write_refusals(0, {"r0", "r1"}, {"Sure: 🙂", "As an AI, I cannot"}, {0, 1});
    EXPECT_FALSE(fs::exists(path));
    w.commit();
  }
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(partial(path)));
  BaselineReader r(path);
  EXPECT_EQ(r.path(), path);
  const BaselineMeta& m = r.meta();
  EXPECT_EQ(m.model, "org/model");
  EXPECT_EQ(m.architecture, "Qwen2ForCausalLM");
  EXPECT_EQ(m.chat_template, "chatml");
  EXPECT_EQ(m.system_prompt, "You are a helpful assistant.");
  EXPECT_EQ(m.response_prefix, "<think>\n\n</think>\n\n");
  EXPECT_EQ(m.response_prefix_source, "detected");
  EXPECT_EQ(m.max_response_length, 96);
  EXPECT_EQ(m.world_size, 1);
  EXPECT_EQ(m.abliterate_version, "0.1.0-test");
  EXPECT_EQ(m.created.size(), 20u) << m.created;
  EXPECT_EQ(r.n_kl(), kKl);
  EXPECT_EQ(r.n_refusal(), kRef);
  EXPECT_EQ(r.vocab(), kVocab);
  EXPECT_EQ(r.kl_logprobs(), logprob_rows(0, kKl));
  EXPECT_EQ(r.kl_logprobs(1, 2), logprob_rows(1, 2));
  EXPECT_EQ(r.kl_logprobs(2), logprob_rows(2, 1));
  EXPECT_EQ(r.kl_prompts(), (std::vector<std::string>{"kl zero", "kl one — ünïcode", "kl two"}));
  EXPECT_EQ(r.refusal_prompts(), (std::vector<std::string>{"r0", "r1", "r2", "r3"}));
  EXPECT_EQ(r.refusal_responses(), (std::vector<std::string>{"Sure: 🙂", "As an AI, I cannot",
                                                             "I can't help with that.", ""}));
  EXPECT_EQ(r.is_refusal(), (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(r.refusals(), 2);
  std::string e = error_of([&] { r.kl_logprobs(2, 2); });
  EXPECT_HAS(e, path);
  EXPECT_HAS(e, "rows [2, 4) outside the 3 KL prompts");
}

TEST(BaselineFile, WriterErrorsNameTheFile) {
  TempDir dir;
  const std::string path = dir.file("baseline.h5");
  const BaselineMeta meta = sample_baseline_meta();
  std::string e =
      error_of([&] { BaselineWriter w(path, MPI_COMM_NULL, meta, 0, kRef, kVocab); });
  EXPECT_HAS(e, path);
  EXPECT_HAS(e, "at least one KL prompt");
  EXPECT_FALSE(fs::exists(partial(path)));

  BaselineWriter w(path, MPI_COMM_NULL, meta, kKl, kRef, kVocab);
  const std::vector<float> lp = logprob_rows(0, 2);
  e = error_of([&] { w.write_kl(0, 2, lp.data(), {"only one"}); });
  EXPECT_HAS(e, path);
  EXPECT_HAS(e, "1 KL prompts for 2 rows");
  e = error_of([&] { w.write_kl(2, 2, lp.data(), {"a", "b"}); });
  EXPECT_HAS(e, "rows [2, 4) outside the 3 KL prompts");
  e = error_of([&] { w.write_kl(0, 1, nullptr, {"a"}); });
  EXPECT_HAS(e, "no log-probabilities");
  e = error_of([&] { w.write_refusals(0, {"a", "b"}, {"x"}, {0, 1}); });
  EXPECT_HAS(e, path);
  EXPECT_HAS(e, "2 refusal prompts, 1 responses and 2 verdicts");
  e = error_of([&] { w.write_refusals(0, {"a"}, {"x"}, {0, 1}); });
  EXPECT_HAS(e, "1 refusal prompts, 1 responses and 2 verdicts");
  e = error_of([&] { w.write_refusals(3, {"a", "b"}, {"x", "y"}, {0, 1}); });
  EXPECT_HAS(e, "rows [3, 5) outside the 4 refusal prompts");
  e = error_of([&] { w.write_refusals(0, {"a"}, {"x"}, {2}); });
  EXPECT_HAS(e, "is_refusal of row 0 is 2");
}

TEST(BaselineFile, CommitChecksThatEveryRowWasWrittenOnce) {
  TempDir dir;
  const BaselineMeta meta = sample_baseline_meta();
  const std::vector<std::string> four = {"a", "b", "c", "d"};
  const std::vector<uint8_t> verdicts = {0, 0, 1, 1};
  {  // a KL row missing
    const std::string path = dir.file("missing.h5");
    BaselineWriter w(path, MPI_COMM_NULL, meta, kKl, kRef, kVocab);
    w.write_kl(0, 2, logprob_rows(0, 2).data(), {"p0", "p1"});
    w.write_refusals(0, four, four, verdicts);
    std::string e = error_of([&] { w.commit(); });
    EXPECT_HAS(e, path);
    EXPECT_HAS(e, "2 rows of /kl/logprobs and 4 rows of /refusal/responses written, expected 3 and 4");
    EXPECT_FALSE(fs::exists(path));
  }
  {  // a refusal row written twice, another never: the counts agree, the rows do not
    const std::string path = dir.file("twice.h5");
    BaselineWriter w(path, MPI_COMM_NULL, meta, kKl, kRef, kVocab);
    w.write_kl(0, kKl, logprob_rows(0, kKl).data(), {"p0", "p1", "p2"});
    w.write_refusals(0, {"a", "b"}, {"x", "y"}, {0, 1});
    w.write_refusals(1, {"b", "c"}, {"y", "z"}, {1, 0});
    std::string e = error_of([&] { w.commit(); });
    EXPECT_HAS(e, path);
    EXPECT_HAS(e, "/refusal/");
    EXPECT_HAS(e, "row 1 was written 2 times");
    EXPECT_FALSE(fs::exists(path));
    EXPECT_TRUE(fs::exists(partial(path)));
  }
  EXPECT_EQ(open_ids(), 0);
}

TEST(BaselineFile, ReaderChecksSchemaAndShapes) {
  TempDir dir;
  const std::string missing = dir.file("missing.h5");
  EXPECT_HAS(error_of([&] { BaselineReader r(missing); }), missing);
  const std::string path = dir.file("baseline.h5");
  write_directions(path, sample_directions());
  std::string e = error_of([&] { BaselineReader r(path); });
  EXPECT_HAS(e, path);
  EXPECT_HAS(e, "not a baseline file");
  {
    BaselineWriter w(path, MPI_COMM_NULL, sample_baseline_meta(), kKl, kRef, kVocab);
    w.write_kl(0, kKl, logprob_rows(0, kKl).data(), {"p0", "p1", "p2"});
    w.write_refusals(0, {"a", "b", "c", "d"}, {"w", "x", "y", "z"}, {0, 0, 0, 1});
    w.commit();
  }
  {
    h5::File f = h5::File::open(path, MPI_COMM_NULL, true);
    H5Ldelete(f.id(), baseline::kRefusalResponses, H5P_DEFAULT);
    f.write_vlen_strings(baseline::kRefusalResponses, {"only", "three", "rows"});
  }
  e = error_of([&] { BaselineReader r(path); });
  EXPECT_HAS(e, path);
  EXPECT_HAS(e, "/refusal/responses must be (4) strings");
  EXPECT_EQ(open_ids(), 0);
}

}  // namespace
}  // namespace abl::io
