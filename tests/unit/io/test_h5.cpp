// The HDF5 layer without MPI (sec2 driver, MPI_COMM_NULL): what `report` and the offline
// readers use. Also checks that the RAII wrappers leave no HDF5 id open and that errors name
// the file, the object and the call.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "abl/core/error.h"
#include "abl/io/h5.h"
#include "abl/io/output_schema.h"
#include "common/temp_dir.h"
#include "common/error_of.h"

using abl::testing::error_of;
namespace abl::io {
namespace {

using abl::testing::TempDir;

// Every id opened by a test must be closed again by the wrappers.
ssize_t open_ids() { return H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL); }

TEST(H5, NumericRowsRoundTripInEveryType) {
  TempDir dir;
  const std::string path = dir.file("types.h5");
  {
    h5::File f = h5::File::create(path, MPI_COMM_NULL);
    EXPECT_FALSE(f.parallel());
    std::vector<double> d = {1.5, -2.25, 3, 4, 5, 6};
    std::vector<int64_t> i = {1, -2, int64_t{1} << 40, 4, 5, 6};
    std::vector<uint8_t> u = {0, 255, 7, 8, 9, 10};
    f.create_dataset("/a/f64", h5::Type::f64, {3, 2}).write_rows(0, 3, d.data());
    f.create_dataset("/a/i64", h5::Type::i64, {3, 2}).write_rows(0, 3, i.data());
    auto u8 = f.create_dataset("/b/u8", h5::Type::u8, {3, 2});
    u8.write_rows(1, 2, u.data() + 2);  // rows 1..2 only, then row 0
    u8.write_rows(0, 1, u.data());
    auto f32 = f.create_dataset("/f32", h5::Type::f32, {2, 2, 3});
    std::vector<float> x(12);
    for (size_t k = 0; k < x.size(); ++k) x[k] = 0.5f * static_cast<float>(k);
    f32.write_rows(0, 2, x.data());
    auto i32 = f.create_dataset("/i32", h5::Type::i32, {4});
    std::vector<int32_t> y = {-1, 2, -3, 4};
    i32.write_rows(0, 4, y.data());
    EXPECT_TRUE(f.exists("/a/f64"));
    EXPECT_FALSE(f.exists("/a/nope"));
    EXPECT_FALSE(f.exists("/zzz/nope"));
  }
  EXPECT_EQ(open_ids(), 0);
  h5::File f = h5::File::open(path);
  EXPECT_EQ(f.open_dataset("/a/f64").read_all<double>(),
            (std::vector<double>{1.5, -2.25, 3, 4, 5, 6}));
  EXPECT_EQ(f.open_dataset("/a/i64").read_all<int64_t>()[2], int64_t{1} << 40);
  EXPECT_EQ(f.open_dataset("/b/u8").read_all<uint8_t>(),
            (std::vector<uint8_t>{0, 255, 7, 8, 9, 10}));
  h5::Dataset f32 = f.open_dataset("/f32");
  EXPECT_EQ(f32.dims(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(f32.row_elems(), 6);
  EXPECT_EQ(f32.type(), h5::Type::f32);
  std::vector<float> row1(6);
  f32.read_rows(1, 1, row1.data());
  EXPECT_EQ(row1[0], 3.0f);
  EXPECT_EQ(row1[5], 5.5f);
  EXPECT_EQ(f.open_dataset("/i32").read_all<int32_t>(), (std::vector<int32_t>{-1, 2, -3, 4}));
}

TEST(H5, AttributesRoundTrip) {
  TempDir dir;
  const std::string path = dir.file("attrs.h5");
  {
    h5::File f = h5::File::create(path, MPI_COMM_NULL);
    f.create_dataset("/d", h5::Type::f32, {1});
    f.set_attr_string("/", "s", "ü ✓");
    f.set_attr_string("/", "empty", "");
    f.set_attr_int("/d", "n", -5);
    f.set_attr_double("/d", "x", 0.125);
    f.set_attr_ints("/", "v", {1, 2});
    f.set_attr_doubles("/", "w", {0.5});
    f.set_attr_string("/", "s", "replaced");
  }
  h5::File f = h5::File::open(path);
  EXPECT_EQ(f.attr_string("/", "s"), "replaced");
  EXPECT_EQ(f.attr_string("/", "empty"), "");
  EXPECT_EQ(f.attr_int("/d", "n"), -5);
  EXPECT_EQ(f.attr_double("/d", "x"), 0.125);
  EXPECT_EQ(f.attr_ints("/", "v"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(f.attr_double("/", "w"), 0.5);
  EXPECT_TRUE(f.has_attr("/d", "n"));
  EXPECT_FALSE(f.has_attr("/nope", "n"));
  std::string e = error_of([&] { f.attr_int("/", "v"); });
  EXPECT_NE(e.find("holds 2 values"), std::string::npos) << e;
  e = error_of([&] { f.attr_double("/d", "n"); });
  EXPECT_NE(e.find(path + ": attribute /d/n is not a floating-point value"), std::string::npos)
      << e;
}

TEST(H5, StringsFixedAndVariable) {
  TempDir dir;
  const std::string path = dir.file("strings.h5");
  std::vector<std::string> rows = {"", "日本語", "a longer row"};
  {
    h5::File f = h5::File::create(path, MPI_COMM_NULL);
    auto fixed =
        f.create_string_dataset("/fixed", 3, mpi::collective_max_bytes(MPI_COMM_NULL, rows));
    fixed.write_string_rows(0, rows);
    f.write_vlen_strings("/vlen", rows);
    f.write_vlen_strings("/none", {});
    std::string e = error_of([&] { fixed.write_string_rows(0, {std::string(13, 'x')}); });
    EXPECT_NE(e.find("row 0 has 13 bytes, the width is 12"), std::string::npos) << e;
    e = error_of([&] { fixed.write_string_rows(0, {"\xff"}); });
    EXPECT_NE(e.find("not valid UTF-8"), std::string::npos) << e;
  }
  h5::File f = h5::File::open(path);
  EXPECT_EQ(f.open_dataset("/fixed").read_strings(), rows);
  EXPECT_EQ(f.open_dataset("/fixed").string_width(), 12);
  EXPECT_EQ(f.open_dataset("/vlen").read_strings(), rows);
  EXPECT_EQ(f.open_dataset("/vlen").read_strings(1, 2),
            (std::vector<std::string>{"日本語", "a longer row"}));
  EXPECT_TRUE(f.open_dataset("/none").read_strings().empty());
}

TEST(H5, ExtendibleSerialAppends) {
  TempDir dir;
  h5::File f = h5::File::create(dir.file("ext.h5"), MPI_COMM_NULL);
  auto ds = f.create_dataset("/t", h5::Type::i64, {0}, {{}, true});
  std::vector<int64_t> a = {1, 2, 3};
  EXPECT_EQ(ds.append_rows(2, a.data()), 0);
  EXPECT_EQ(ds.append_rows(0, a.data()), 2);
  EXPECT_EQ(ds.append_rows(3, a.data()), 2);
  EXPECT_EQ(ds.read_all<int64_t>(), (std::vector<int64_t>{1, 2, 1, 2, 3}));
  auto fixed = f.create_dataset("/fixed", h5::Type::i64, {2});
  std::string e = error_of([&] { fixed.append_rows(1, a.data()); });
  EXPECT_NE(e.find("cannot extend to 3 rows"), std::string::npos) << e;
}

TEST(H5, ErrorsNameTheFileTheObjectAndTheCall) {
  TempDir dir;
  const std::string missing = dir.file("missing.h5");
  std::string e = error_of([&] { h5::File::open(missing); });
  EXPECT_NE(e.find(missing + ": /: H5Fopen failed: "), std::string::npos) << e;
  EXPECT_NE(e.find("unable to open file"), std::string::npos) << e;  // HDF5's own message

  const std::string text = dir.write("text.h5", "not HDF5\n");
  e = error_of([&] { h5::File::open(text); });
  EXPECT_NE(e.find(text), std::string::npos) << e;
  EXPECT_NE(e.find("H5Fopen"), std::string::npos) << e;

  const std::string path = dir.file("e.h5");
  h5::File f = h5::File::create(path, MPI_COMM_NULL);
  auto ds = f.create_dataset("/g/d", h5::Type::f32, {2, 2});
  std::vector<float> x(4);
  std::vector<double> y(4);
  e = error_of([&] { ds.write_rows(1, 2, x.data()); });
  EXPECT_EQ(e, path + ": /g/d: rows [1, 3) outside the 2 rows of the dataset");
  e = error_of([&] { ds.write_rows(0, 1, y.data()); });
  EXPECT_EQ(e, path + ": /g/d: holds f32, the data are f64");
  e = error_of([&] { f.create_dataset("/g/d", h5::Type::f32, {1}); });
  EXPECT_NE(e.find(path + ": /g/d: H5Dcreate2 failed: "), std::string::npos) << e;
  e = error_of([&] { f.open_dataset("/g/zz"); });
  EXPECT_EQ(e, path + ": no dataset /g/zz");
  e = error_of([&] { f.close(); });
  EXPECT_NE(e.find("1 datasets, groups or attributes are still open"), std::string::npos) << e;
}

TEST(H5, IdsAreClosedByTheirOwners) {
  TempDir dir;
  {
    h5::File f = h5::File::create(dir.file("ids.h5"), MPI_COMM_NULL);
    auto a = f.create_dataset("/a", h5::Type::f32, {1});
    h5::Dataset b = std::move(a);
    h5::Id space(H5Dget_space(b.id()));
    EXPECT_EQ(H5Fget_obj_count(f.id(), H5F_OBJ_DATASET), 1);
    EXPECT_GT(open_ids(), 0);
  }
  EXPECT_EQ(open_ids(), 0);
}

TEST(H5, OutputFileGetsItsNameOnlyAtCommit) {
  TempDir dir;
  const std::string path = dir.file("out.h5");
  const std::string partial = h5::OutputFile::partial_path_for(path);
  {
    auto out = h5::OutputFile::create(path, MPI_COMM_NULL);
    EXPECT_EQ(out.partial_path(), partial);
    out.file().set_attr_int("/", "generation", 1);
    out.declare_strings("/s", 2);
    out.write_strings("/s", 0, {"a", "b"});
    out.commit();
    EXPECT_TRUE(out.committed());
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(partial));
  {
    auto out = h5::OutputFile::create(path, MPI_COMM_NULL);
    out.file().set_attr_int("/", "generation", 2);
    EXPECT_EQ(h5::File::open(path).attr_int("/", "generation"), 1);  // the old one until commit
  }
  EXPECT_EQ(h5::File::open(path).attr_int("/", "generation"), 1);
  EXPECT_TRUE(std::filesystem::exists(partial));
  try {
    auto out = h5::OutputFile::create(path, MPI_COMM_NULL);
    out.file().set_attr_int("/", "generation", 3);
    throw Error("interrupted");
  } catch (const Error&) {
  }
  EXPECT_EQ(h5::File::open(path).attr_int("/", "generation"), 1);
  EXPECT_EQ(h5::File::open(partial).attr_int("/", "generation"), 3);
  {
    auto out = h5::OutputFile::create(path, MPI_COMM_NULL);
    out.file().set_attr_int("/", "generation", 4);
    out.commit();
  }
  EXPECT_EQ(h5::File::open(path).attr_int("/", "generation"), 4);
  EXPECT_EQ(open_ids(), 0);
}

TEST(H5, ResidualsSerialWriterAndReader) {
  using schema::PromptSet;
  TempDir dir;
  const std::string path = dir.file("residuals.h5");
  schema::ResidualsMeta meta;
  meta.model = "tiny";
  {
    schema::ResidualsWriter w(path, MPI_COMM_NULL, meta, 2, 1, 2, 3, true);
    std::vector<float> good = {1, 2, 3, 4, 5, 6, 3, 4, 5, 6, 7, 8};
    std::vector<float> bad = {-1, -1, -1, -1, -1, -1};
    std::vector<int64_t> tg = {4, 5}, tb = {6};
    w.write(PromptSet::good, 0, 2, good.data(), tg.data(), {"g0", "g1"});
    w.write(PromptSet::bad, 0, 1, bad.data(), tb.data(), {"b0"});
    w.commit();
  }
  schema::ResidualsReader r(path);
  EXPECT_EQ(r.meta().model, "tiny");
  EXPECT_EQ(r.meta().world_size, 1);
  EXPECT_EQ(r.rows(PromptSet::good), 2);
  EXPECT_EQ(r.depths(), 2);
  EXPECT_EQ(r.hidden(), 3);
  EXPECT_EQ(r.mean(PromptSet::good), (std::vector<double>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(r.mean(PromptSet::bad), (std::vector<double>(6, -1.0)));
  EXPECT_EQ(r.prompts(PromptSet::good), (std::vector<std::string>{"g0", "g1"}));
  EXPECT_EQ(r.n_tokens(PromptSet::bad), (std::vector<int64_t>{6}));
  EXPECT_EQ(r.residuals(PromptSet::good, 1, 1), (std::vector<float>{3, 4, 5, 6, 7, 8}));

  std::string e = error_of([&] { schema::ResidualsReader bad(dir.write("x.h5", "")); });
  EXPECT_NE(e.find(dir.file("x.h5")), std::string::npos) << e;
  {
    h5::File other = h5::File::create(dir.file("other.h5"), MPI_COMM_NULL);
    other.set_attr_string("/", "schema", "abliterate-trials");
  }
  e = error_of([&] { schema::ResidualsReader bad(dir.file("other.h5")); });
  EXPECT_NE(e.find("not a residuals file"), std::string::npos) << e;
  e = error_of(
      [&] { schema::ResidualsWriter w(dir.file("y.h5"), MPI_COMM_NULL, meta, 0, 1, 2, 3, true); });
  EXPECT_NE(e.find("at least one prompt per set"), std::string::npos) << e;
  EXPECT_FALSE(std::filesystem::exists(dir.file("y.h5.partial")));
}

}  // namespace
}  // namespace abl::io
