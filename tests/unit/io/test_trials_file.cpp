// trials.h5 without MPI: append / resume / restart semantics, including files whose process died
// (destroyed without finish(), a copy taken mid-sweep, an append cut short), refused settings and
// the space an append reserves.
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
