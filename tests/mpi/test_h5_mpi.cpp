// The generic collective layer: extendible datasets grown by collective appends, fixed-width
// strings written collectively, deferred variable-length strings, attributes, independent reads
// of a file open on every rank, and errors that fail every rank together.
#include <gtest/gtest.h>

#include <fstream>

#include "abl/core/error.h"
#include "abl/io/h5.h"
#include "mpi_test_env.h"

namespace abl::testing {
namespace {

namespace h5 = io::h5;

// Rows appended by `rank` in append number `batch`: 0, 1 or 2, some ranks none.
int64_t appended(int rank, int batch) { return (rank + batch) % 3; }

double kl(int batch, int rank, int64_t i, int64_t j) {
  return batch * 100.0 + rank * 10.0 + static_cast<double>(i) + 0.25 * static_cast<double>(j);
}

template <typename F>
void expect_throws_naming(F&& f, const std::string& file, const std::string& also = "") {
  try {
    f();
    ADD_FAILURE() << "expected an abl::Error naming " << file;
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(file), std::string::npos) << msg;
    if (!also.empty()) {
      EXPECT_NE(msg.find(also), std::string::npos) << msg;
    }
  }
}

TEST(H5Mpi, ExtendibleDatasetGrowsOverThreeAppends) {
  const std::string path = out_file("appends.h5");
  const int rank = world_rank(), size = world_size();
  {
    auto out = h5::OutputFile::create(path, MPI_COMM_WORLD);
    {  // datasets must be closed before commit()
      h5::Dataset values =
          out.file().create_dataset("/trials/kl", h5::Type::f64, {0, 3}, {{}, /*extendible=*/true});
      h5::Dataset ids =
          out.file().create_dataset("/trials/id", h5::Type::i64, {0}, {{4}, /*extendible=*/true});
      for (int batch = 0; batch < 3; ++batch) {
        int64_t n = appended(rank, batch);
        std::vector<double> v;
        std::vector<int64_t> id;
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < 3; ++j) v.push_back(kl(batch, rank, i, j));
          id.push_back(batch * 1000 + rank * 10 + i);
        }
        int64_t first = values.append_rows(n, v.data());
        EXPECT_EQ(ids.append_rows(n, id.data()), first);
        int64_t expect_first = 0;
        for (int b = 0; b <= batch; ++b) {
          for (int r = 0; r < size; ++r) {
            if (b < batch || r < rank) expect_first += appended(r, b);
          }
        }
        EXPECT_EQ(first, expect_first) << "batch " << batch;
      }
    }
    out.commit();
  }
  // Every rank reads the whole file back, independently and serially.
  h5::File f = h5::File::open(path);
  std::vector<double> v = f.open_dataset("/trials/kl").read_all<double>();
  std::vector<int64_t> id = f.open_dataset("/trials/id").read_all<int64_t>();
  size_t row = 0;
  for (int batch = 0; batch < 3; ++batch) {
    for (int r = 0; r < size; ++r) {
      for (int64_t i = 0; i < appended(r, batch); ++i, ++row) {
        ASSERT_LT(row, id.size());
        EXPECT_EQ(id[row], batch * 1000 + r * 10 + i);
        for (int64_t j = 0; j < 3; ++j)
          EXPECT_EQ(v[row * 3 + static_cast<size_t>(j)], kl(batch, r, i, j));
      }
    }
  }
  EXPECT_EQ(row, id.size());
  EXPECT_EQ(f.open_dataset("/trials/kl").dims(),
            (std::vector<int64_t>{static_cast<int64_t>(row), 3}));
}

TEST(H5Mpi, FixedWidthStringsAreWrittenCollectively) {
  const std::string path = out_file("fixed_strings.h5");
  const int rank = world_rank(), size = world_size();
  // Rank r owns r + 1 rows (rank 0: one), after the rows of lower ranks.
  std::vector<std::string> mine;
  int64_t first = 0, total = 0;
  for (int r = 0; r < size; ++r) (r < rank ? first : total) += r + 1;
  total += first;
  for (int i = 0; i <= rank; ++i)
    mine.push_back("résumé " + std::string(static_cast<size_t>(rank * 7 + i), 'z'));
  {
    auto out = h5::OutputFile::create(path, MPI_COMM_WORLD);
    int64_t width = io::mpi::collective_max_bytes(MPI_COMM_WORLD, mine);
    h5::Dataset ds = out.file().create_string_dataset("/responses", total, width);
    EXPECT_EQ(ds.string_width(), width);
    ds.write_string_rows(first, mine);
    // Too long for the width on the last rank only: every rank fails, naming the file.
    std::vector<std::string> long_row;
    if (rank == size - 1) long_row.push_back(std::string(static_cast<size_t>(width + 1), 'a'));
    expect_throws_naming([&] { ds.write_string_rows(0, long_row); }, out.partial_path(), "width");
    ds = h5::Dataset();
    out.commit();
  }
  h5::File f = h5::File::open(path);
  std::vector<std::string> all = f.open_dataset("/responses").read_strings();
  ASSERT_EQ(static_cast<int64_t>(all.size()), total);
  size_t k = 0;
  for (int r = 0; r < size; ++r) {
    for (int i = 0; i <= r; ++i, ++k) {
      EXPECT_EQ(all[k], "résumé " + std::string(static_cast<size_t>(r * 7 + i), 'z'));
    }
  }
  EXPECT_EQ(f.open_dataset("/responses").read_strings(total - 1, 1).at(0), all.back());
}

TEST(H5Mpi, DeferredStringsAreGatheredAndWrittenAtCommit) {
  const std::string path = out_file("deferred_strings.h5");
  const int rank = world_rank(), size = world_size();
  const int64_t n = 3 * size + 1;
  {
    auto out = h5::OutputFile::create(path, MPI_COMM_WORLD);
    out.declare_strings("/refusal/responses", n);
    // Two rounds: rank r writes row r, then rows size + 2r and size + 2r + 1 (the last rank
    // also the final row).
    out.write_strings("/refusal/responses", rank, {"first ✓ " + std::to_string(rank)});
    std::vector<std::string> second = {"second " + std::to_string(2 * rank),
                                       "second " + std::to_string(2 * rank + 1)};
    if (rank == size - 1) second.push_back("last");
    out.write_strings("/refusal/responses", size + 2 * rank, second);
    out.commit();
  }
  h5::File f = h5::File::open(path);
  std::vector<std::string> all = f.open_dataset("/refusal/responses").read_strings();
  ASSERT_EQ(static_cast<int64_t>(all.size()), n);
  for (int r = 0; r < size; ++r) {
    EXPECT_EQ(all[static_cast<size_t>(r)], "first ✓ " + std::to_string(r));
    EXPECT_EQ(all[static_cast<size_t>(size + 2 * r)], "second " + std::to_string(2 * r));
  }
  EXPECT_EQ(all.back(), "last");
  EXPECT_EQ(f.open_dataset("/refusal/responses").string_width(), 0);  // variable length
}

TEST(H5Mpi, DeferredStringsWrittenTwiceOrNeverFailTheCommit) {
  const int rank = world_rank(), size = world_size();
  {
    const std::string path = out_file("strings_twice.h5");
    auto out = h5::OutputFile::create(path, MPI_COMM_WORLD);
    out.declare_strings("/s", size);
    out.write_strings("/s", rank, {"a"});
    out.write_strings("/s", 0,
                      rank == 0 ? std::vector<std::string>{"again"} : std::vector<std::string>{});
    expect_throws_naming([&] { out.commit(); }, path, "row 0 was written 2 times");
  }
  {
    const std::string path = out_file("strings_missing.h5");
    auto out = h5::OutputFile::create(path, MPI_COMM_WORLD);
    out.declare_strings("/s", size + 1);
    out.write_strings("/s", rank, {"a"});
    expect_throws_naming([&] { out.commit(); }, path, "written 0 times");
    EXPECT_FALSE(std::ifstream(path).good());
  }
}

TEST(H5Mpi, AttributesAreWrittenCollectivelyAndReadBack) {
  const std::string path = out_file("attributes.h5");
  {
    auto out = h5::OutputFile::create(path, MPI_COMM_WORLD);
    h5::File& f = out.file();
    f.create_group("/stats");
    f.set_attr_string("/", "schema", "abliterate-test");
    f.set_attr_string("/", "unicode", "naïve ✓");
    f.set_attr_int("/", "version", 7);
    f.set_attr_double("/", "quantile", 0.995);
    f.set_attr_ints("/stats", "dims", {3, 4, 5});
    f.set_attr_doubles("/stats", "range", {-1.5, 2.25});
    f.set_attr_int("/", "version", 8);  // overwrite
    out.commit();
  }
  h5::File f = h5::File::open(path);
  EXPECT_EQ(f.attr_string("/", "schema"), "abliterate-test");
  EXPECT_EQ(f.attr_string("/", "unicode"), "naïve ✓");
  EXPECT_EQ(f.attr_int("/", "version"), 8);
  EXPECT_DOUBLE_EQ(f.attr_double("/", "quantile"), 0.995);
  EXPECT_EQ(f.attr_ints("/stats", "dims"), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(f.attr_doubles("/stats", "range"), (std::vector<double>{-1.5, 2.25}));
  EXPECT_FALSE(f.has_attr("/", "nope"));
  expect_throws_naming([&] { f.attr_int("/", "schema"); }, path, "/schema");
  expect_throws_naming([&] { f.attr_string("/", "nope"); }, path, "missing attribute /nope");
}

TEST(H5Mpi, RowsOfEveryTypeAndIndependentReadsOfAnOpenFile) {
  const std::string path = out_file("types.h5");
  const int rank = world_rank(), size = world_size();
  // Rank r writes rows [r*2, r*2+2) except the last rank, which writes none.
  const int64_t rows = 2 * size;
  const bool writes = rank != size - 1 || size == 1;
  {
    auto out = h5::OutputFile::create(path, MPI_COMM_WORLD);
    h5::File& f = out.file();
    auto f32 = f.create_dataset("/f32", h5::Type::f32, {rows, 2});
    auto i32 = f.create_dataset("/i32", h5::Type::i32, {rows, 2});
    auto u8 = f.create_dataset("/u8", h5::Type::u8, {rows, 2});
    std::vector<float> a;
    std::vector<int32_t> b;
    std::vector<uint8_t> c;
    for (int64_t i = 0; i < 4; ++i) {
      a.push_back(static_cast<float>(rank * 4 + i) + 0.5f);
      b.push_back(-(rank * 4 + static_cast<int32_t>(i)));
      c.push_back(static_cast<uint8_t>(rank * 4 + i));
    }
    int64_t n = writes ? 2 : 0;
    f32.write_rows(2 * rank, n, a.data());
    i32.write_rows(2 * rank, n, b.data());
    u8.write_rows(2 * rank, n, c.data());
    // Wrong element type: every rank fails, naming file and dataset.
    expect_throws_naming([&] { f32.write_rows(0, 0, b.data()); }, out.partial_path(), "/f32");
  }
  // The partial file, reopened read-only on every rank; reads are independent.
  const std::string partial = h5::OutputFile::partial_path_for(path);
  h5::File f = h5::File::open(partial, MPI_COMM_WORLD);
  EXPECT_TRUE(f.parallel());
  int src = (rank + 1) % size;
  if (src != size - 1 || size == 1) {
    std::vector<float> a(4);
    std::vector<int32_t> b(4);
    std::vector<uint8_t> c(4);
    f.open_dataset("/f32").read_rows(2 * src, 2, a.data());
    f.open_dataset("/i32").read_rows(2 * src, 2, b.data());
    f.open_dataset("/u8").read_rows(2 * src, 2, c.data());
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(a[static_cast<size_t>(i)], static_cast<float>(src * 4 + i) + 0.5f);
      EXPECT_EQ(b[static_cast<size_t>(i)], -(src * 4 + i));
      EXPECT_EQ(c[static_cast<size_t>(i)], src * 4 + i);
    }
  }
  std::vector<float> a(2);
  expect_throws_naming([&] { f.open_dataset("/f32").read_rows(rows, 1, a.data()); }, partial,
                       "outside");
  expect_throws_naming([&] { f.open_dataset("/missing"); }, partial, "/missing");
  f.close();
}

TEST(H5Mpi, OpeningAMissingFileOnEveryRankNamesIt) {
  const std::string path = out_file("missing_parallel.h5");
  expect_throws_naming([&] { h5::File::open(path, MPI_COMM_WORLD); }, path, "H5Fopen");
}

}  // namespace
}  // namespace abl::testing
