// The driver phases' files without MPI: directions.h5 and baseline.h5 round trips and every
// error path, and trials.h5's append / resume / restart semantics, including files whose
// process died (destroyed without finish(), a copy taken mid-sweep, an append cut short).
// Also the HDF5 layer's compound and multi-dimensional variable-length string datasets.
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

using abl::testing::error_of;
namespace abl::io {
namespace {

using abl::testing::TempDir;
using namespace schema;  // NOLINT: the types under test
namespace fs = std::filesystem;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

ssize_t open_ids() { return H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL); }

std::string partial(const std::string& path) { return h5::OutputFile::partial_path_for(path); }

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

DirectionsData sample_directions(int64_t depths = 3, int64_t hidden = 4) {
  DirectionsData d;
  d.model = "org/model";
  d.architecture = "LlamaForCausalLM";
  d.residuals_created = "2025-01-31T12:00:00Z";
  d.projected = false;
  d.depths = depths;
  d.hidden = hidden;
  for (int64_t i = 0; i < depths * hidden; ++i) {
    d.directions.push_back(0.25 * static_cast<double>(i) - 1);
    d.good_mean.push_back(static_cast<double>(i) + 0.5);
    d.bad_mean.push_back(-static_cast<double>(i) * 1e-3);
  }
  for (int64_t i = 0; i < depths; ++i) {
    d.good_norm.push_back(static_cast<double>(i) + 1);
    d.bad_norm.push_back(static_cast<double>(i) + 2);
    d.direction_norm.push_back(static_cast<double>(i) + 3);
    d.cosine_good_bad.push_back(0.1 * static_cast<double>(i));
    d.separation.push_back(i == 1 ? std::nan("") : 2.5 * static_cast<double>(i));
  }
  return d;
}

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

// ---- trials.h5 ----

TrialsMeta sample_trials_meta(bool store_responses = false) {
  TrialsMeta m;
  m.config_hash = "sha256:abc123";
  m.config_json = R"({"kl_prompts": 3, "refusal_prompts": 2})";
  m.param_names = {"direction_index", "attn.max_weight", "mlp.max_weight"};
  m.search = "sobol";
  m.trials_per_batch = 2;
  m.n_kl = 3;
  m.n_refusal = 2;
  m.baseline_refusals = 2;
  m.store_responses = store_responses;
  m.model = "org/model";
  m.abliterate_version = "0.1.0-test";
  return m;
}

// Trial i of the sweep, fully determined by i.
TrialRow trial(int64_t i, bool responses = false) {
  TrialRow r;
  const double x = static_cast<double>(i);
  r.params = {x, 0.5 + x, -x * 0.25};
  r.kl = 0.01 * x + 0.001;
  r.refusals = i % 3;
  r.batch = i / 2;
  r.elapsed_s = 1.5 * static_cast<double>(i / 2 + 1);
  if (responses) r.responses = {"no " + std::to_string(i), "sí 🙂 " + std::to_string(i)};
  return r;
}

std::vector<TrialRow> trials_range(int64_t first, int64_t n, bool responses = false) {
  std::vector<TrialRow> v;
  for (int64_t i = first; i < first + n; ++i) v.push_back(trial(i, responses));
  return v;
}

void expect_rows(const std::vector<TrialRow>& got, int64_t n, bool responses = false) {
  ASSERT_EQ(static_cast<int64_t>(got.size()), n);
  for (int64_t i = 0; i < n; ++i) {
    const TrialRow& g = got[static_cast<size_t>(i)];
    const TrialRow w = trial(i, responses);
    EXPECT_EQ(g.params, w.params) << i;
    EXPECT_EQ(g.kl, w.kl) << i;
    EXPECT_EQ(g.refusals, w.refusals) << i;
    EXPECT_EQ(g.batch, w.batch) << i;
    EXPECT_EQ(g.elapsed_s, w.elapsed_s) << i;
    EXPECT_EQ(g.responses, w.responses) << i;
  }
}

void expect_meta(const TrialsMeta& got, const TrialsMeta& want) {
  EXPECT_EQ(got.config_hash, want.config_hash);
  EXPECT_EQ(got.config_json, want.config_json);
  EXPECT_EQ(got.param_names, want.param_names);
  EXPECT_EQ(got.search, want.search);
  EXPECT_EQ(got.trials_per_batch, want.trials_per_batch);
  EXPECT_EQ(got.n_kl, want.n_kl);
  EXPECT_EQ(got.n_refusal, want.n_refusal);
  EXPECT_EQ(got.baseline_refusals, want.baseline_refusals);
  EXPECT_EQ(got.store_responses, want.store_responses);
  EXPECT_EQ(got.model, want.model);
  EXPECT_EQ(got.abliterate_version, want.abliterate_version);
}

TEST(TrialsFile, AppendFinishAndReadBack) {
  TempDir dir;
  const std::string path = dir.file("trials.h5");
  const TrialsMeta meta = sample_trials_meta();
  {
    TrialsStore s = TrialsStore::open(path, meta, TrialsStore::Resume::allowed);
    EXPECT_FALSE(s.resumed());
    EXPECT_EQ(s.size(), 0);
    EXPECT_EQ(s.final_path(), path);
    EXPECT_TRUE(fs::exists(partial(path)));
    EXPECT_FALSE(fs::exists(path));
    expect_meta(s.meta(), meta);
    EXPECT_EQ(s.meta().created.size(), 20u);
    s.append(trials_range(0, 2));
    s.append({});
    s.append(trials_range(2, 3));
    EXPECT_EQ(s.size(), 5);
    expect_rows(s.read_all(), 5);
    s.finish();
    EXPECT_TRUE(fs::exists(path));
    EXPECT_FALSE(fs::exists(partial(path)));
    expect_rows(s.read_all(), 5);  // from the final file
    std::string e = error_of([&] { s.append(trials_range(5, 1)); });
    EXPECT_HAS(e, path);
    EXPECT_HAS(e, "after finish()");
  }
  TrialsContents c = read_trials(path);
  EXPECT_EQ(c.path, path);
  EXPECT_TRUE(c.complete);
  expect_meta(c.meta, meta);
  EXPECT_EQ(c.meta.created.size(), 20u);
  expect_rows(c.rows, 5);
  EXPECT_EQ(open_ids(), 0);
}

TEST(TrialsFile, ResponsesAreStoredAndOptionallyRead) {
  TempDir dir;
  const std::string path = dir.file("trials.h5");
  const TrialsMeta meta = sample_trials_meta(true);
  {
    TrialsStore s = TrialsStore::open(path, meta, TrialsStore::Resume::allowed);
    s.append(trials_range(0, 3, true));
    expect_rows(s.read_all(), 3, true);
    std::vector<TrialRow> bad = trials_range(3, 1, true);
    bad[0].responses.pop_back();
    std::string e = error_of([&] { s.append(bad); });
    EXPECT_HAS(e, partial(path));
    EXPECT_HAS(e, "1 responses, expected one per refusal prompt (2)");
    EXPECT_EQ(s.size(), 3);
    s.finish();
  }
  {
    h5::File f = h5::File::open(path);
    EXPECT_EQ(f.open_dataset(trials::kResponses).dims(), (std::vector<int64_t>{3, 2}));
  }
  expect_rows(read_trials(path, true).rows, 3, true);
  TrialsContents c = read_trials(path);  // without responses
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_TRUE(c.rows[1].responses.empty());
  EXPECT_EQ(c.rows[1].kl, trial(1).kl);

  // Without store_responses, responses given with the rows are not stored.
  const std::string plain = dir.file("plain.h5");
  {
    TrialsStore s = TrialsStore::open(plain, sample_trials_meta(false),
                                      TrialsStore::Resume::allowed);
    s.append(trials_range(0, 2, true));
    s.finish();
  }
  EXPECT_FALSE(h5::File::open(plain).exists(trials::kResponses));
  expect_rows(read_trials(plain, true).rows, 2, false);
  EXPECT_EQ(open_ids(), 0);
}

TEST(TrialsFile, ResumeAcrossOpensKeepsEveryRowInOrder) {
  TempDir dir;
  const std::string path = dir.file("trials.h5");
  const TrialsMeta meta = sample_trials_meta(true);
  std::string created;
  {
    TrialsStore s = TrialsStore::open(path, meta, TrialsStore::Resume::allowed);
    created = s.meta().created;
    s.append(trials_range(0, 2, true));
    s.append(trials_range(2, 2, true));
  }  // killed: no finish()
  EXPECT_TRUE(fs::exists(partial(path)));
  EXPECT_FALSE(fs::exists(path));
  TrialsMeta later = meta;
  later.config_json = "(not compared)";
  later.search = "tpe";
  {
    TrialsStore s = TrialsStore::open(path, later, TrialsStore::Resume::allowed);
    EXPECT_TRUE(s.resumed());
    EXPECT_EQ(s.size(), 4);
    expect_meta(s.meta(), meta);  // the stored settings, not this call's
    EXPECT_EQ(s.meta().created, created);
    s.append(trials_range(4, 1, true));
    s.finish();
  }
  // A complete file is continued too: it goes back to .partial until finish().
  {
    TrialsStore s = TrialsStore::open(path, meta, TrialsStore::Resume::allowed);
    EXPECT_TRUE(s.resumed());
    EXPECT_EQ(s.size(), 5);
    EXPECT_FALSE(fs::exists(path));
    EXPECT_TRUE(fs::exists(partial(path)));
    s.append(trials_range(5, 2, true));
    s.finish();
  }
  TrialsContents c = read_trials(path, true);
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(c.meta.created, created);
  expect_rows(c.rows, 7, true);
  EXPECT_EQ(open_ids(), 0);
}

TEST(TrialsFile, DeadProcessLeavesEveryAppendedRowReadable) {
  TempDir dir;
  const std::string path = dir.file("trials.h5");
  const std::string copy = dir.file("copy.h5");
  const TrialsMeta meta = sample_trials_meta(true);
  {
    TrialsStore s = TrialsStore::open(path, meta, TrialsStore::Resume::allowed);
    s.append(trials_range(0, 2, true));
    s.append(trials_range(2, 1, true));
    // What a process killed right now would leave: the file as it is on disk.
    fs::copy_file(partial(path), partial(copy));
    s.append(trials_range(3, 1, true));
  }
  TrialsContents c = read_trials(copy, true);
  EXPECT_EQ(c.path, partial(copy));
  EXPECT_FALSE(c.complete);
  expect_meta(c.meta, meta);
  expect_rows(c.rows, 3, true);

  c = read_trials(path, true);  // destroyed without finish()
  EXPECT_EQ(c.path, partial(path));
  EXPECT_FALSE(c.complete);
  expect_rows(c.rows, 4, true);

  // The copy resumes like the original.
  TrialsStore s = TrialsStore::open(copy, meta, TrialsStore::Resume::allowed);
  EXPECT_EQ(s.size(), 3);
  s.append(trials_range(3, 2, true));
  s.finish();
  expect_rows(read_trials(copy, true).rows, 5, true);
}

// Another process holds the .partial open (HDF5 locks it): read_trials still reads what it
// flushed, and a second sweep on the same file is refused with a hint instead of corrupting it.
TEST(TrialsFile, RunningSweepInAnotherProcess) {
  TempDir dir;
  const std::string path = dir.file("trials.h5");
  const TrialsMeta meta = sample_trials_meta(true);
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the running sweep: never returns into the test framework
    int status = 0;
    try {
      TrialsStore s = TrialsStore::open(path, meta, TrialsStore::Resume::allowed);
      s.append(trials_range(0, 3, true));
      char c = 1;
      if (write(ready[1], &c, 1) != 1) status = 2;
      if (read(done[0], &c, 1) != 1) status = 3;
    } catch (...) {
      status = 1;
    }
    _exit(status);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  TrialsContents got = read_trials(path, true);
  EXPECT_FALSE(got.complete);
  expect_rows(got.rows, 3, true);
  std::string e = error_of([&] { TrialsStore::open(path, meta, TrialsStore::Resume::allowed); });
  EXPECT_HAS(e, partial(path));
  EXPECT_HAS(e, "another sweep still writing it");
  ASSERT_EQ(write(done[1], &c, 1), 1);
  int status = -1;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
  expect_rows(TrialsStore::open(path, meta, TrialsStore::Resume::allowed).read_all(), 3, true);
}

TEST(TrialsFile, RowsOfAnUnfinishedAppendAreIgnoredAndCut) {
  TempDir dir;
  const std::string path = dir.file("trials.h5");
  const TrialsMeta meta = sample_trials_meta(true);
  {
    TrialsStore s = TrialsStore::open(path, meta, TrialsStore::Resume::allowed);
    s.append(trials_range(0, 2, true));
  }
  {  // an append killed after growing some datasets and writing part of a row
    h5::File f = h5::File::open(partial(path), MPI_COMM_NULL, true);
    h5::Dataset kl = f.open_dataset(trials::kKl);
    kl.extend(5);
    std::vector<double> junk = {99, 99, 99};
    kl.write_rows(2, 3, junk.data());
    f.open_dataset(trials::kResponses).extend(3);
  }
  expect_rows(read_trials(path, true).rows, 2, true);
  {
    TrialsStore s = TrialsStore::open(path, meta, TrialsStore::Resume::allowed);
    EXPECT_EQ(s.size(), 2);
    s.append(trials_range(2, 1, true));
  }
  h5::File f = h5::File::open(partial(path));
  EXPECT_EQ(f.open_dataset(trials::kKl).rows(), 3);
  EXPECT_EQ(f.open_dataset(trials::kResponses).rows(), 3);
  EXPECT_EQ(f.attr_int("/", trials::kAttrTrials), 3);
  expect_rows(read_trials(path, true).rows, 3, true);
}

TEST(TrialsFile, AnotherConfigurationIsRefusedUnlessRestarting) {
  TempDir dir;
  const std::string path = dir.file("trials.h5");
  const TrialsMeta meta = sample_trials_meta();
  {
    TrialsStore s = TrialsStore::open(path, meta, TrialsStore::Resume::allowed);
    s.append(trials_range(0, 3));
  }
  TrialsMeta other = meta;
  other.config_hash = "sha256:def456";
  std::string e = error_of([&] { TrialsStore::open(path, other, TrialsStore::Resume::allowed); });
  EXPECT_HAS(e, partial(path));
  EXPECT_HAS(e, "sha256:abc123");
  EXPECT_HAS(e, "sha256:def456");
  EXPECT_HAS(e, "--restart");
  expect_rows(read_trials(path).rows, 3);  // untouched

  TrialsMeta renamed = meta;
  renamed.param_names[1] = "attn.min_weight";
  e = error_of([&] { TrialsStore::open(path, renamed, TrialsStore::Resume::allowed); });
  EXPECT_HAS(e, partial(path));
  EXPECT_HAS(e, "direction_index, attn.max_weight, mlp.max_weight");
  EXPECT_HAS(e, "attn.min_weight");
  EXPECT_HAS(e, "--restart");

  // A complete file with another hash: refused, and left complete.
  {
    TrialsStore s = TrialsStore::open(path, meta, TrialsStore::Resume::allowed);
    s.finish();
  }
  e = error_of([&] { TrialsStore::open(path, other, TrialsStore::Resume::allowed); });
  EXPECT_HAS(e, path);
  EXPECT_HAS(e, "sha256:def456");
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(partial(path)));

  {
    TrialsStore s = TrialsStore::open(path, other, TrialsStore::Resume::restart);
    EXPECT_FALSE(s.resumed());
    EXPECT_EQ(s.size(), 0);
    EXPECT_EQ(s.meta().config_hash, "sha256:def456");
    EXPECT_FALSE(fs::exists(path));
    s.append(trials_range(0, 1));
    s.finish();
  }
  TrialsContents c = read_trials(path);
  EXPECT_EQ(c.meta.config_hash, "sha256:def456");
  expect_rows(c.rows, 1);
  EXPECT_EQ(open_ids(), 0);
}

TEST(TrialsFile, AmbiguousOrUnreadableFiles) {
  TempDir dir;
  const std::string path = dir.file("trials.h5");
  const TrialsMeta meta = sample_trials_meta();
  {
    TrialsStore s = TrialsStore::open(path, meta, TrialsStore::Resume::allowed);
    s.append(trials_range(0, 2));
    s.finish();
  }
  fs::copy_file(path, partial(path));
  std::string e = error_of([&] { TrialsStore::open(path, meta, TrialsStore::Resume::allowed); });
  EXPECT_HAS(e, path + " and " + partial(path) + " both exist");
  EXPECT_HAS(e, "--restart");
  {  // restarting replaces both
    TrialsStore s = TrialsStore::open(path, meta, TrialsStore::Resume::restart);
    EXPECT_EQ(s.size(), 0);
    EXPECT_FALSE(fs::exists(path));
  }
  EXPECT_EQ(read_trials(path).rows.size(), 0u);
  EXPECT_FALSE(read_trials(path).complete);

  // A file that is not a trials file: named, with the way out.
  fs::remove(partial(path));
  write_directions(path, sample_directions());
  e = error_of([&] { TrialsStore::open(path, meta, TrialsStore::Resume::allowed); });
  EXPECT_HAS(e, path);
  EXPECT_HAS(e, "not a trials file");
  EXPECT_HAS(e, "--restart");
  EXPECT_TRUE(fs::exists(path));
  const std::string garbage = dir.write("garbage.h5.partial", "not HDF5 at all");
  e = error_of([&] {
    TrialsStore::open(dir.file("garbage.h5"), meta, TrialsStore::Resume::allowed);
  });
  EXPECT_HAS(e, garbage);
  EXPECT_HAS(e, "--restart");

  const std::string none = dir.file("none.h5");
  e = error_of([&] { read_trials(none); });
  EXPECT_HAS(e, none);
  EXPECT_HAS(e, "no such file");
  EXPECT_EQ(open_ids(), 0);
}

TEST(TrialsFile, BadSettingsAndRowsAreRefused) {
  TempDir dir;
  const std::string path = dir.file("trials.h5");
  TrialsMeta meta = sample_trials_meta();
  meta.param_names.clear();
  std::string e = error_of([&] { TrialsStore::open(path, meta, TrialsStore::Resume::allowed); });
  EXPECT_HAS(e, path);
  EXPECT_HAS(e, "at least one parameter");
  meta = sample_trials_meta();
  meta.param_names.push_back("attn.max_weight");
  e = error_of([&] { TrialsStore::open(path, meta, TrialsStore::Resume::allowed); });
  EXPECT_HAS(e, "'attn.max_weight' is named twice");
  meta = sample_trials_meta(true);
  meta.n_refusal = 0;
  e = error_of([&] { TrialsStore::open(path, meta, TrialsStore::Resume::allowed); });
  EXPECT_HAS(e, "at least one refusal prompt");
  EXPECT_FALSE(fs::exists(partial(path)));

  TrialsStore s = TrialsStore::open(path, sample_trials_meta(), TrialsStore::Resume::allowed);
  std::vector<TrialRow> rows = trials_range(0, 2);
  rows[1].params.push_back(1);
  e = error_of([&] { s.append(rows); });
  EXPECT_HAS(e, partial(path));
  EXPECT_HAS(e, "trial 1 of the batch has 4 parameters, the table has 3");
  EXPECT_EQ(s.size(), 0);
  EXPECT_EQ(read_trials(path).rows.size(), 0u);

  // A moved store owns the file; the moved-from one does nothing when destroyed.
  TrialsStore moved(std::move(s));
  moved.append(trials_range(0, 1));
  moved.finish();
  expect_rows(read_trials(path).rows, 1);
}


// The disk space a batch reserves before it is written bounds what it adds: more than the file
// grows (so a full disk fails before the file is touched), a new chunk's worth when the batch
// starts a chunk, and room for the responses' strings.
TEST(TrialsFile, AppendReservesWhatTheBatchCanAdd) {
  TempDir dir;
  const std::string path = dir.file("trials.h5");
  TrialsStore s = TrialsStore::open(path, sample_trials_meta(true), TrialsStore::Resume::allowed);
  const auto batch = trials_range(0, 2, true);
  const int64_t first = s.append_bytes(batch);
  const auto size_before = static_cast<int64_t>(fs::file_size(partial(path)));
  s.append(batch);
  const auto size_after = static_cast<int64_t>(fs::file_size(partial(path)));
  EXPECT_GE(first, size_after - size_before);
  // Within the first 1024-row chunk a batch needs no new chunk: less than the first batch.
  EXPECT_LT(s.append_bytes(trials_range(2, 2, true)), first);
  // Long responses need room for their strings.
  auto longer = trials_range(2, 2, true);
  for (auto& r : longer) r.responses = {std::string(100000, 'a'), std::string(100000, 'b')};
  EXPECT_GE(s.append_bytes(longer), 400000);
  EXPECT_EQ(open_ids(), 1);  // the store's file
}

}  // namespace
}  // namespace abl::io
