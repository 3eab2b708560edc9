// Safetensors round trips (all dtypes, odd shapes), range reads, streaming and sharded writing.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>

#include "abl/io/json_file.h"
#include "abl/io/safetensors.h"
#include "common/temp_dir.h"
#include "io/safetensors_test_util.h"

namespace {

namespace fs = std::filesystem;
using abl::DType;
using abl::io::SafetensorsFile;
using abl::io::SafetensorsReader;
using abl::io::TensorData;
using abl::io::TensorSpec;

// A tensor with deterministic values, stored as `dtype`.
struct Owned {
  TensorSpec spec;
  std::vector<float> values;             // what reading back as fp32 must give
  std::vector<unsigned char> bytes;      // encoded
  TensorData data() const { return TensorData{spec, bytes.data()}; }
};

Owned make(const std::string& name, DType dtype, std::vector<int64_t> shape, float seed) {
  Owned o;
  o.spec = TensorSpec{name, dtype, std::move(shape)};
  int64_t n = 1;
  for (int64_t d : o.spec.shape) n *= d;
  std::vector<float> raw(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) raw[static_cast<size_t>(i)] = seed + 0.37f * static_cast<float>(i) - 0.011f * static_cast<float>(i * i % 97);
  o.bytes.resize(static_cast<size_t>(n) * abl::dtype_size(dtype));
  abl::convert_from_f32(raw.data(), dtype, o.bytes.data(), raw.size());
  o.values.resize(raw.size());
  abl::convert_to_f32(dtype, o.bytes.data(), o.values.data(), raw.size());
  return o;
}

std::vector<TensorData> views(const std::vector<Owned>& ts) {
  std::vector<TensorData> v;
  for (const Owned& t : ts) v.push_back(t.data());
  return v;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<Owned> sample_tensors() {
  std::vector<Owned> ts;
  ts.push_back(make("b.f16", DType::f16, {3, 5}, 1.0f));
  ts.push_back(make("a.bf16", DType::bf16, {7}, -2.0f));
  ts.push_back(make("c.f32", DType::f32, {2, 3, 4}, 0.5f));
  ts.push_back(make("d.scalar", DType::f32, {}, 3.0f));
  ts.push_back(make("e.empty", DType::bf16, {0, 4}, 0.0f));
  ts.push_back(make("f.odd", DType::f16, {1}, 9.0f));  // 2 bytes: tests alignment of what follows
  return ts;
}

TEST(Safetensors, RoundTripAllDtypes) {
  abl::testing::TempDir dir;
  std::vector<Owned> ts = sample_tensors();
  std::string path = dir.file("t.safetensors");
  abl::io::write_safetensors(path, views(ts), {{"format", "pt"}, {"note", "héllo"}});

  SafetensorsFile f(path);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.metadata().at("note"), "héllo");
  ASSERT_EQ(f.tensors().size(), ts.size());
  for (const Owned& o : ts) {
    const abl::io::TensorInfo& t = f.tensor(o.spec.name);
    EXPECT_EQ(t.shape, o.spec.shape);
    ASSERT_TRUE(t.dtype.has_value());
    EXPECT_EQ(*t.dtype, o.spec.dtype);
    EXPECT_EQ(t.dtype_name, abl::dtype_name(o.spec.dtype));
    EXPECT_EQ(t.nbytes(), o.bytes.size());
    EXPECT_EQ(t.file, path);
    EXPECT_EQ(t.begin % abl::dtype_size(o.spec.dtype), 0u) << o.spec.name << " is misaligned";
    std::vector<unsigned char> raw(o.bytes.size());
    f.read_bytes(t, 0, raw.size(), raw.data());
    EXPECT_EQ(raw, o.bytes) << o.spec.name;
    std::vector<float> vals(o.values.size());
    f.read_f32(t, 0, t.numel, vals.data());
    EXPECT_EQ(vals, o.values) << o.spec.name;
  }
  // Tensors are listed by name.
  for (size_t i = 1; i < f.tensors().size(); ++i) {
    EXPECT_LT(f.tensors()[i - 1].name, f.tensors()[i].name);
  }
}

TEST(Safetensors, HeaderLayoutFollowsTheReference) {
  abl::testing::TempDir dir;
  std::vector<Owned> ts = sample_tensors();
  std::string path = dir.file("t.safetensors");
  abl::io::write_safetensors(path, views(ts), {{"format", "pt"}});
  std::string file = slurp(path);
  uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  std::string header = file.substr(8, n);
  // Padding is spaces; the JSON itself is compact with __metadata__ first, then names sorted.
  std::string trimmed = header.substr(0, header.find_last_not_of(' ') + 1);
  EXPECT_EQ(header.substr(trimmed.size()), std::string(header.size() - trimmed.size(), ' '));
  EXPECT_EQ(trimmed.rfind("{\"__metadata__\":{\"format\":\"pt\"},\"a.bf16\":{\"dtype\":\"BF16\",", 0), 0u)
      << trimmed;
  size_t last = 0;
  for (const char* name : {"\"a.bf16\"", "\"b.f16\"", "\"c.f32\"", "\"d.scalar\"", "\"e.empty\"", "\"f.odd\""}) {
    size_t at = trimmed.find(name);
    ASSERT_NE(at, std::string::npos);
    EXPECT_GT(at, last);
    last = at;
  }
  // 4-byte tensors come first in the data section.
  SafetensorsFile f(path);
  EXPECT_EQ(f.tensor("c.f32").begin, f.data_begin());
}

TEST(Safetensors, EmptyFileOfNoTensors) {
  abl::testing::TempDir dir;
  std::string path = dir.file("none.safetensors");
  abl::io::write_safetensors(path, {});
  SafetensorsFile f(path);
  EXPECT_TRUE(f.tensors().empty());
  EXPECT_EQ(f.file_size(), f.data_begin());
}

TEST(Safetensors, ReadsRangesOfATensor) {
  abl::testing::TempDir dir;
  std::vector<Owned> ts = {make("w", DType::bf16, {6, 10}, 0.25f), make("x", DType::f32, {13}, 1.0f)};
  std::string path = dir.file("t.safetensors");
  abl::io::write_safetensors(path, views(ts));
  SafetensorsReader r(path);
  const abl::io::TensorInfo& w = r.tensor("w");
  // Row 2..4 of a (6, 10) tensor: what a rank reads for its slice.
  std::vector<float> rows(30);
  r.read_f32(w, 20, 30, rows.data());
  EXPECT_EQ(rows, std::vector<float>(ts[0].values.begin() + 20, ts[0].values.begin() + 50));
  // An odd byte offset.
  std::vector<unsigned char> part(5);
  r.read_bytes(w, 3, 5, part.data());
  EXPECT_EQ(part, std::vector<unsigned char>(ts[0].bytes.begin() + 3, ts[0].bytes.begin() + 8));
  // Zero-length reads at the end are fine.
  r.read_f32(w, 60, 0, rows.data());
  r.read_bytes(w, 120, 0, part.data());
  EXPECT_EQ(r.read_f32("x"), ts[1].values);

  EXPECT_ABL_ERROR(r.read_f32(w, 50, 11, rows.data()), path, "'w'", "element range [50, 50+11)",
                   "outside its 60 elements");
  EXPECT_ABL_ERROR(r.read_f32(w, -1, 2, rows.data()), path, "element range");
  EXPECT_ABL_ERROR(r.read_f32(w, 1, std::numeric_limits<int64_t>::max(), rows.data()), "element range");
  EXPECT_ABL_ERROR(r.read_bytes(w, 119, 2, part.data()), path, "byte range", "outside its 120 bytes");
  EXPECT_ABL_ERROR(r.read_bytes(w, std::numeric_limits<uint64_t>::max(), 2, part.data()), "byte range");
  EXPECT_ABL_ERROR(r.tensor("nope"), path, "no tensor named 'nope'");
}

TEST(Safetensors, ReadsUnalignedData) {
  // A header of odd length (no padding) puts the data at an odd file offset.
  abl::testing::TempDir dir;
  std::vector<float> v = {1.5f, -2.25f, 3.0f};
  std::string bytes = abl::testing::bytes_of(v);
  std::string file = abl::testing::encode_safetensors({{"x", "F32", {3}, bytes}}, /*pad=*/false);
  ASSERT_NE(file.size() % 2, 0u);
  std::string path = dir.write("odd.safetensors", file);
  SafetensorsFile f(path);
  EXPECT_EQ(f.tensor("x").begin % 2, 1u);
  std::vector<float> back(3);
  f.read_f32(f.tensor("x"), 0, 3, back.data());
  EXPECT_EQ(back, v);
}

TEST(Safetensors, UnsupportedDtypesAreListedButNotConverted) {
  abl::testing::TempDir dir;
  std::string file = abl::testing::encode_safetensors({
      {"i8", "I8", {4}, std::string("\x01\x02\x03\x04", 4)},
      {"f64", "F64", {1}, std::string(8, '\0')},
      {"fp8", "F8_E4M3", {2}, std::string(2, '\0')},
      {"f4", "F4", {4}, std::string(2, '\0')},  // sub-byte: 4 elements in 2 bytes
  });
  std::string path = dir.write("mixed.safetensors", file);
  SafetensorsFile f(path);
  const abl::io::TensorInfo& t = f.tensor("i8");
  EXPECT_FALSE(t.dtype.has_value());
  EXPECT_EQ(t.dtype_name, "I8");
  unsigned char raw[4];
  f.read_bytes(t, 0, 4, raw);  // raw bytes are fine
  EXPECT_EQ(raw[3], 4);
  float out[4];
  for (const char* name : {"i8", "f64", "fp8"}) {
    const abl::io::TensorInfo& u = f.tensor(name);
    EXPECT_ABL_ERROR(f.read_f32(u, 0, 1, out), path, std::string("'") + name + "'", "unsupported",
                     "F32, F16, BF16");
  }
  EXPECT_ABL_ERROR(t.require_dtype(), path, "'i8'", "dtype I8, which is unsupported");
}

TEST(Safetensors, StreamingWriterAcceptsPartsInAnyOrder) {
  abl::testing::TempDir dir;
  Owned a = make("a", DType::bf16, {4, 8}, 1.0f), b = make("b", DType::f32, {5}, 2.0f);
  std::string path = dir.file("s.safetensors");
  {
    abl::io::SafetensorsWriter w(path, {a.spec, b.spec});
    EXPECT_TRUE(w.has("a"));
    w.write("b", b.bytes.data(), b.bytes.size());
    w.write_part("a", 32, a.bytes.data() + 32, 32);  // second half first
    EXPECT_FALSE(fs::exists(path));                  // nothing under the final name yet
    w.write_part("a", 0, a.bytes.data(), 32);
    w.finish();
  }
  SafetensorsReader r(path);
  EXPECT_EQ(r.read_f32("a"), a.values);
  EXPECT_EQ(r.read_f32("b"), b.values);
}

TEST(Safetensors, UnfinishedWriterLeavesNoFile) {
  abl::testing::TempDir dir;
  Owned a = make("a", DType::f16, {4}, 1.0f), b = make("b", DType::f16, {4}, 2.0f);
  std::string path = dir.file("s.safetensors");
  {
    abl::io::SafetensorsWriter w(path, {a.spec, b.spec});
    w.write("a", a.bytes.data(), a.bytes.size());
    EXPECT_ABL_ERROR(w.finish(), path, "tensor 'b' got 0 of its 8 bytes");
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::is_empty(dir.path())) << "temp file left behind";
}

TEST(Safetensors, WriterRejectsBadInput) {
  abl::testing::TempDir dir;
  std::string path = dir.file("bad.safetensors");
  Owned a = make("a", DType::f32, {2}, 0.0f);
  EXPECT_ABL_ERROR(abl::io::SafetensorsWriter(path, {a.spec, a.spec}), "tensor 'a' given twice");
  EXPECT_ABL_ERROR(abl::io::SafetensorsWriter(path, {TensorSpec{"__metadata__", DType::f32, {1}}}),
                   "invalid tensor name");
  EXPECT_ABL_ERROR(abl::io::SafetensorsWriter(path, {TensorSpec{"n", DType::f32, {2, -1}}}),
                   "negative dimension");
  EXPECT_ABL_ERROR(abl::io::SafetensorsWriter(path, {TensorSpec{"n", DType::f32, {int64_t{1} << 62, 8}}}),
                   "overflow");
  abl::io::SafetensorsWriter w(path, {a.spec});
  EXPECT_ABL_ERROR(w.write("a", a.bytes.data(), 4), "tensor 'a' is F32 [2] = 8 bytes, got 4");
  EXPECT_ABL_ERROR(w.write("zz", a.bytes.data(), 8), "'zz' was not declared");
  EXPECT_ABL_ERROR(w.write_part("a", 6, a.bytes.data(), 4), "byte range");
  EXPECT_ABL_ERROR(abl::io::SafetensorsWriter(dir.file("no/such/dir/x.safetensors"), {a.spec}),
                   "cannot create");
}

TEST(Safetensors, ShardedWriterSplitsLikeTransformers) {
  abl::testing::TempDir dir;
  // 4 tensors of 400, 400, 1000, 200 bytes with a 1000-byte limit: [a b] [c] [d].
  std::vector<Owned> ts = {make("a", DType::f32, {100}, 1), make("b", DType::bf16, {200}, 2),
                           make("c", DType::f32, {250}, 3), make("d", DType::f16, {100}, 4)};
  std::string out = dir.file("model");
  std::vector<std::string> names =
      abl::io::write_safetensors_sharded(out, views(ts), 1000, {{"origin", "test"}});
  ASSERT_EQ(names, (std::vector<std::string>{"model-00001-of-00003.safetensors",
                                             "model-00002-of-00003.safetensors",
                                             "model-00003-of-00003.safetensors"}));
  abl::io::JsonValue index = abl::io::read_json_file(out + "/model.safetensors.index.json");
  EXPECT_EQ(index.at("metadata").get_int("total_size"), 400 + 400 + 1000 + 200);
  EXPECT_EQ(index.at("weight_map").get_string("a"), names[0]);
  EXPECT_EQ(index.at("weight_map").get_string("b"), names[0]);
  EXPECT_EQ(index.at("weight_map").get_string("c"), names[1]);
  EXPECT_EQ(index.at("weight_map").get_string("d"), names[2]);

  SafetensorsReader r(out);
  EXPECT_EQ(r.num_files(), 3u);
  EXPECT_EQ(r.index_path(), out + "/model.safetensors.index.json");
  EXPECT_EQ(r.file(0).metadata().at("format"), "pt");  // added for transformers
  EXPECT_EQ(r.file(0).metadata().at("origin"), "test");
  for (const Owned& o : ts) EXPECT_EQ(r.read_f32(o.spec.name), o.values) << o.spec.name;
  EXPECT_EQ(fs::path(r.tensor("c").file).filename(), names[1]);
}

TEST(Safetensors, ShardPlanIsWhatTheShardedWriterWrites) {
  // Ranks that write different shards of one folder each compute the plan; it must be the
  // writer's. Same tensors as above: [a b] [c] [d] with a 1000-byte limit.
  std::vector<TensorSpec> specs = {{"a", DType::f32, {100}}, {"b", DType::bf16, {200}},
                                   {"c", DType::f32, {250}}, {"d", DType::f16, {100}}};
  abl::io::ShardPlan plan = abl::io::plan_shards("m", specs, 1000);
  ASSERT_EQ(plan.num_shards(), 3u);
  EXPECT_EQ(plan.file_names[1], "model-00002-of-00003.safetensors");
  EXPECT_EQ(plan.bytes, (std::vector<uint64_t>{800, 1000, 200}));
  EXPECT_EQ(plan.total_bytes, 2000u);
  ASSERT_EQ(plan.tensors[0].size(), 2u);
  EXPECT_EQ(plan.tensors[0][1].name, "b");
  EXPECT_EQ(plan.tensors[2][0].name, "d");
  EXPECT_EQ(abl::io::plan_shards("m", specs, 1u << 20).file_names,
            std::vector<std::string>{"model.safetensors"});
  EXPECT_EQ(abl::io::plan_shards("m", {}, 10).num_shards(), 1u);
  EXPECT_ABL_ERROR(abl::io::plan_shards("m", specs, 0), "m: the maximum shard size must be positive");
  specs.push_back(specs[0]);
  EXPECT_ABL_ERROR(abl::io::plan_shards("m", specs, 1000), "m: tensor 'a' given twice");

  abl::testing::TempDir dir;
  abl::io::write_shard_index(dir.path().string(), abl::io::plan_shards("m", {specs[0]}, 10));
  EXPECT_TRUE(fs::is_empty(dir.path())) << "one shard needs no index";
}

TEST(Safetensors, ShardedWriterWithOneShardWritesModelSafetensors) {
  abl::testing::TempDir dir;
  std::vector<Owned> ts = {make("a", DType::f32, {10}, 1), make("b", DType::bf16, {10}, 2)};
  std::string out = dir.file("m");
  auto names = abl::io::write_safetensors_sharded(out, views(ts), abl::io::parse_byte_size("5GB"));
  EXPECT_EQ(names, std::vector<std::string>{"model.safetensors"});
  EXPECT_FALSE(fs::exists(out + "/model.safetensors.index.json"));
  SafetensorsReader r(out);
  EXPECT_TRUE(r.index_path().empty());
  EXPECT_EQ(r.read_f32("b"), ts[1].values);
}

TEST(Safetensors, ReaderPrefersTheSingleFileLikeTransformers) {
  abl::testing::TempDir dir;
  std::vector<Owned> ts = {make("a", DType::f32, {10}, 1), make("b", DType::f32, {10}, 2)};
  std::string out = dir.file("m");
  abl::io::write_safetensors_sharded(out, views(ts), 40);
  ASSERT_TRUE(fs::exists(out + "/model.safetensors.index.json"));
  abl::io::write_safetensors(out + "/model.safetensors", {ts[0].data()});
  SafetensorsReader r(out);
  EXPECT_EQ(r.num_files(), 1u);
  EXPECT_EQ(r.find("b"), nullptr);
  // Naming the index explicitly reads the shards.
  SafetensorsReader by_index(out + "/model.safetensors.index.json");
  EXPECT_EQ(by_index.num_files(), 2u);
}

TEST(Safetensors, ParseByteSize) {
  using abl::io::parse_byte_size;
  EXPECT_EQ(parse_byte_size("5GB"), 5'000'000'000u);
  EXPECT_EQ(parse_byte_size("5gb"), 5'000'000'000u);
  EXPECT_EQ(parse_byte_size("2GiB"), 2u << 30);
  EXPECT_EQ(parse_byte_size("500MB"), 500'000'000u);
  EXPECT_EQ(parse_byte_size("1.5 KiB"), 1536u);
  EXPECT_EQ(parse_byte_size("4096"), 4096u);
  EXPECT_EQ(parse_byte_size("10B"), 10u);
  for (const char* bad : {"", "GB", "5XB", "-1GB", "0", "1e3", "5 G B x"}) {
    EXPECT_ABL_ERROR(parse_byte_size(bad), "invalid size");
  }
}

}  // namespace
