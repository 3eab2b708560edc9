// residuals.h5 written by every rank of the world with uneven row counts (rank 0 has no bad
// rows when there are several ranks), in batches, then read back and checked value by value.
// Values are a known function of (set, row, depth, h), so every rank knows the whole answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "abl/core/error.h"
#include "abl/io/output_schema.h"
#include "mpi_test_env.h"

namespace abl::testing {
namespace {

using io::schema::PromptSet;
using io::schema::ResidualsMeta;
using io::schema::ResidualsReader;
using io::schema::ResidualsWriter;
namespace fs = std::filesystem;

constexpr int64_t kGood = 7, kBad = 5, kDepths = 4, kHidden = 6, kBatch = 2;

float value(PromptSet s, int64_t row, int64_t d, int64_t h) {
  int64_t sign = s == PromptSet::good ? 1 : -1;
  return static_cast<float>((sign * (row + 1) * 1000 + d * 37 + h) * 0.125);
}

int64_t tokens(PromptSet s, int64_t row) { return 3 + 2 * row + (s == PromptSet::bad ? 1 : 0); }

std::string prompt(PromptSet s, int64_t row) {
  std::string name(io::schema::set_name(s));
  switch (row % 4) {
    case 0: return row == 0 ? "" : "plain " + name + " " + std::to_string(row);
    case 1: return "¿Cómo estás? 日本語 — " + name + " " + std::to_string(row);
    case 2: return std::string(300, 'x') + " " + name + " " + std::to_string(row);
    default: return "emoji 🙂 " + name + " " + std::to_string(row);
  }
}

// Rows per rank: later ranks get more; with skip_rank0 (and several ranks) rank 0 gets none.
std::vector<int64_t> split(int64_t n, int size, bool skip_rank0) {
  std::vector<int64_t> w(static_cast<size_t>(size)), counts(static_cast<size_t>(size), 0);
  for (int r = 0; r < size; ++r)
    w[static_cast<size_t>(r)] = (skip_rank0 && size > 1 && r == 0) ? 0 : r + 1;
  int64_t total_w = 0, given = 0;
  for (int64_t x : w) total_w += x;
  for (int r = 0; r < size; ++r) {
    counts[static_cast<size_t>(r)] = n * w[static_cast<size_t>(r)] / total_w;
    given += counts[static_cast<size_t>(r)];
  }
  counts.back() += n - given;
  return counts;
}

struct Part {
  int64_t first = 0, count = 0;
};

Part my_part(int64_t n, bool skip_rank0) {
  std::vector<int64_t> c = split(n, world_size(), skip_rank0);
  Part p;
  for (int r = 0; r < world_rank(); ++r) p.first += c[static_cast<size_t>(r)];
  p.count = c[static_cast<size_t>(world_rank())];
  return p;
}

int64_t max_batches(int64_t n, bool skip_rank0) {
  int64_t m = 0;
  for (int64_t c : split(n, world_size(), skip_rank0)) m = std::max(m, (c + kBatch - 1) / kBatch);
  return m;
}

ResidualsMeta test_meta(const std::string& model) {
  ResidualsMeta m;
  m.model = model;
  m.architecture = "LlamaForCausalLM";
  m.dtype = "BF16";
  m.chat_template = "llama3";
  m.sharding = "HYBRID_SHARD";
  m.abliterate_version = "0.1.0-test";
  m.winsorize_quantile = 0.995;
  return m;
}

// Writes `batch` (0-based) of this rank's rows of `set` (possibly none).
void write_batch(ResidualsWriter& w, PromptSet set, const Part& part, int64_t batch) {
  int64_t first = part.first + batch * kBatch;
  int64_t n = std::clamp<int64_t>(part.first + part.count - first, 0, kBatch);
  std::vector<float> res(static_cast<size_t>(n * kDepths * kHidden));
  std::vector<int64_t> tok(static_cast<size_t>(n));
  std::vector<std::string> prompts;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t d = 0; d < kDepths; ++d) {
      for (int64_t h = 0; h < kHidden; ++h) {
        res[static_cast<size_t>((i * kDepths + d) * kHidden + h)] = value(set, first + i, d, h);
      }
    }
    tok[static_cast<size_t>(i)] = tokens(set, first + i);
    prompts.push_back(prompt(set, first + i));
  }
  w.write(set, n > 0 ? first : 0, n, res.data(), tok.data(), prompts);
}

// Every row of both sets, in batches interleaved between the sets; all ranks make every call.
void write_all(ResidualsWriter& w) {
  Part good = my_part(kGood, false), bad = my_part(kBad, true);
  int64_t batches = std::max(max_batches(kGood, false), max_batches(kBad, true));
  for (int64_t b = 0; b < batches; ++b) {
    write_batch(w, PromptSet::good, good, b);
    write_batch(w, PromptSet::bad, bad, b);
  }
}

std::vector<double> expected_mean(PromptSet s, int64_t n) {
  std::vector<double> m(static_cast<size_t>(kDepths * kHidden), 0.0);
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t d = 0; d < kDepths; ++d) {
      for (int64_t h = 0; h < kHidden; ++h)
        m[static_cast<size_t>(d * kHidden + h)] += value(s, row, d, h);
    }
  }
  for (double& x : m) x /= static_cast<double>(n);
  return m;
}

void expect_means(const ResidualsReader& r, PromptSet s, int64_t n) {
  std::vector<double> got = r.mean(s), want = expected_mean(s, n);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-9 * (1 + std::abs(want[i])))
        << io::schema::set_name(s) << " " << i;
  }
}

void expect_rows(const ResidualsReader& r, PromptSet s, int64_t n) {
  ASSERT_EQ(r.rows(s), n);
  std::vector<std::string> prompts = r.prompts(s);
  std::vector<int64_t> tok = r.n_tokens(s);
  ASSERT_EQ(static_cast<int64_t>(prompts.size()), n);
  ASSERT_EQ(static_cast<int64_t>(tok.size()), n);
  for (int64_t row = 0; row < n; ++row) {
    EXPECT_EQ(prompts[static_cast<size_t>(row)], prompt(s, row)) << row;
    EXPECT_EQ(tok[static_cast<size_t>(row)], tokens(s, row)) << row;
  }
  if (!r.has_full_residuals()) return;
  std::vector<float> res = r.residuals(s);
  ASSERT_EQ(static_cast<int64_t>(res.size()), n * kDepths * kHidden);
  int64_t mismatches = 0;
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t d = 0; d < kDepths; ++d) {
      for (int64_t h = 0; h < kHidden; ++h) {
        float got = res[static_cast<size_t>((row * kDepths + d) * kHidden + h)];
        if (got != value(s, row, d, h) && ++mismatches <= 5) {
          ADD_FAILURE() << io::schema::set_name(s) << " row " << row << " depth " << d << " h " << h
                        << ": " << got << " != " << value(s, row, d, h);
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
  // A row range in the middle.
  std::vector<float> mid = r.residuals(s, 2, 2);
  EXPECT_EQ(mid[0], value(s, 2, 0, 0));
  EXPECT_EQ(mid.back(), value(s, 3, kDepths - 1, kHidden - 1));
}

void expect_meta(const ResidualsReader& r, const std::string& model) {
  const ResidualsMeta& m = r.meta();
  EXPECT_EQ(r.schema_version(), io::schema::residuals::kVersion);
  EXPECT_EQ(m.model, model);
  EXPECT_EQ(m.architecture, "LlamaForCausalLM");
  EXPECT_EQ(m.dtype, "BF16");
  EXPECT_EQ(m.chat_template, "llama3");
  EXPECT_EQ(m.world_size, world_size());
  EXPECT_EQ(m.sharding, "HYBRID_SHARD");
  EXPECT_EQ(m.abliterate_version, "0.1.0-test");
  EXPECT_DOUBLE_EQ(m.winsorize_quantile, 0.995);
  EXPECT_EQ(m.created.size(), 20u) << m.created;  // 2025-01-31T12:00:00Z
  EXPECT_EQ(m.created.back(), 'Z');
  EXPECT_EQ(r.depths(), kDepths);
  EXPECT_EQ(r.hidden(), kHidden);
}

bool exists(const std::string& path) { return fs::exists(path); }

TEST(ResidualsMpi, FullResidualsRoundTrip) {
  const std::string path = out_file("residuals.h5");  // kept for the h5py check
  {
    ResidualsWriter w(path, MPI_COMM_WORLD, test_meta("org/model"), kGood, kBad, kDepths, kHidden,
                      true);
    write_all(w);
    w.commit();
  }
  EXPECT_TRUE(exists(path));
  EXPECT_FALSE(exists(io::h5::OutputFile::partial_path_for(path)));
  ResidualsReader r(path);
  EXPECT_TRUE(r.has_full_residuals());
  expect_meta(r, "org/model");
  expect_rows(r, PromptSet::good, kGood);
  expect_rows(r, PromptSet::bad, kBad);
  expect_means(r, PromptSet::good, kGood);
  expect_means(r, PromptSet::bad, kBad);
}

TEST(ResidualsMpi, MeansOnlyWithoutFullResiduals) {
  const std::string path = out_file("residuals_means_only.h5");  // kept for the h5py check
  {
    ResidualsWriter w(path, MPI_COMM_WORLD, test_meta("m"), kGood, kBad, kDepths, kHidden, false);
    write_all(w);
    w.commit();
  }
  ResidualsReader r(path);
  EXPECT_FALSE(r.has_full_residuals());
  expect_rows(r, PromptSet::good, kGood);
  expect_rows(r, PromptSet::bad, kBad);
  expect_means(r, PromptSet::good, kGood);
  expect_means(r, PromptSet::bad, kBad);
  try {
    r.residuals(PromptSet::good);
    ADD_FAILURE() << "residuals() should fail without full residuals";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(ResidualsMpi, WriteMeansReplacesTheAccumulatedMean) {
  const std::string path = out_file("residuals_given_mean.h5");
  std::vector<double> given(static_cast<size_t>(kDepths * kHidden));
  for (size_t i = 0; i < given.size(); ++i) given[i] = 0.5 * static_cast<double>(i) - 3;
  {
    ResidualsWriter w(path, MPI_COMM_WORLD, test_meta("m"), kGood, kBad, kDepths, kHidden, true);
    write_all(w);
    w.write_means(PromptSet::good, given.data());
    w.commit();
  }
  ResidualsReader r(path);
  EXPECT_EQ(r.mean(PromptSet::good), given);
  expect_means(r, PromptSet::bad, kBad);
}

TEST(ResidualsMpi, NotCommittedLeavesOnlyThePartialFile) {
  const std::string path = out_file("uncommitted.h5");
  {
    ResidualsWriter w(path, MPI_COMM_WORLD, test_meta("m"), kGood, kBad, kDepths, kHidden, true);
    write_all(w);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(exists(path));
  EXPECT_TRUE(exists(io::h5::OutputFile::partial_path_for(path)));
}

TEST(ResidualsMpi, ExceptionBeforeCommitLeavesOnlyThePartialFile) {
  const std::string path = out_file("exception.h5");
  try {
    ResidualsWriter w(path, MPI_COMM_WORLD, test_meta("m"), kGood, kBad, kDepths, kHidden, true);
    write_all(w);
    throw Error("simulated failure in the forward pass");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "simulated failure in the forward pass");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(exists(path));
  EXPECT_TRUE(exists(io::h5::OutputFile::partial_path_for(path)));
}

TEST(ResidualsMpi, PreviousFileIsReplacedOnlyAtCommit) {
  const std::string path = out_file("replace.h5");
  {
    ResidualsWriter w(path, MPI_COMM_WORLD, test_meta("first"), kGood, kBad, kDepths, kHidden,
                      false);
    write_all(w);
    w.commit();
  }
  {
    ResidualsWriter w(path, MPI_COMM_WORLD, test_meta("second"), kGood, kBad, kDepths, kHidden,
                      false);
    write_all(w);
    EXPECT_EQ(ResidualsReader(path).meta().model, "first");
    MPI_Barrier(MPI_COMM_WORLD);  // every rank has read before rank 0 renames
    w.commit();
  }
  EXPECT_EQ(ResidualsReader(path).meta().model, "second");
}

TEST(ResidualsMpi, MissingRowsFailTheCommitOnEveryRank) {
  const std::string path = out_file("missing_rows.h5");
  ResidualsWriter w(path, MPI_COMM_WORLD, test_meta("m"), kGood, kBad, kDepths, kHidden, true);
  write_batch(w, PromptSet::good, my_part(kGood, false), 0);  // only the first batch
  try {
    w.commit();
    ADD_FAILURE() << "commit() should fail";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("rows"), std::string::npos) << msg;
  }
  EXPECT_FALSE(exists(path));
}

TEST(ResidualsMpi, BadRowsOnOneRankFailEveryRankNamingTheFile) {
  const std::string path = out_file("bad_rows.h5");
  ResidualsWriter w(path, MPI_COMM_WORLD, test_meta("m"), kGood, kBad, kDepths, kHidden, true);
  const int last = world_size() - 1;
  std::vector<float> res(static_cast<size_t>(kDepths * kHidden), 1.0f);
  std::vector<int64_t> tok = {1};
  std::vector<std::string> prompts = {"p"};
  try {
    // The last rank asks for a row past the end; the others write nothing.
    bool me = world_rank() == last;
    w.write(PromptSet::good, me ? kGood : 0, me ? 1 : 0, res.data(), tok.data(),
            me ? prompts : std::vector<std::string>{});
    ADD_FAILURE() << "write() should fail on every rank";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    if (world_size() > 1) {
      EXPECT_NE(msg.find("rank " + std::to_string(last)), std::string::npos) << msg;
    }
  }
}

TEST(ResidualsMpi, ReaderErrorsNameTheFile) {
  const std::string missing = out_file("does_not_exist.h5");
  try {
    ResidualsReader r(missing);
    ADD_FAILURE() << "opening a missing file should fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  const std::string text = out_file("not_hdf5_rank" + std::to_string(world_rank()) + ".h5");
  std::ofstream(text) << "not an HDF5 file\n";
  try {
    ResidualsReader r(text);
    ADD_FAILURE() << "opening a text file should fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace abl::testing
