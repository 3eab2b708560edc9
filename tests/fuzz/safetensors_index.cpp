// Fuzz target: model.safetensors.index.json of a sharded model folder, read by SafetensorsReader.
// The folder holds fixed shards written at start-up (two good ones, a third that repeats a tensor
// of the first, and one that is not a safetensors file); the input is the index. An accepted
// index must give a table in which every tensor is found by name and readable from its shard.
#include <vector>

#include "abl/io/safetensors.h"
#include "fuzz_target.h"

namespace {

void write_shards() {
  using abl::DType;
  using abl::io::TensorData;
  const abl::fuzz::Scratch& s = abl::fuzz::scratch();
  const std::vector<float> a = {1.0f, -2.0f};
  const std::vector<uint16_t> b = {0x3f80, 0x4000, 0xc040};  // bf16 1, 2, -3
  const std::vector<uint16_t> c = {0x3c00, 0x4000, 0x4200, 0x4400};  // f16 1, 2, 3, 4
  abl::io::write_safetensors((s.dir() / "model-00001-of-00002.safetensors").string(),
                             {TensorData{{"a", DType::f32, {2}}, a.data()},
                              TensorData{{"b", DType::bf16, {3}}, b.data()}});
  abl::io::write_safetensors((s.dir() / "model-00002-of-00002.safetensors").string(),
                             {TensorData{{"c", DType::f16, {2, 2}}, c.data()}});
  abl::io::write_safetensors((s.dir() / "extra.safetensors").string(),
                             {TensorData{{"a", DType::f32, {2}}, a.data()}});
  s.write("notes.txt", "not a safetensors file\n");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  abl::fuzz::quiet_logs();
  write_shards();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  abl::fuzz::scratch().write("model.safetensors.index.json", abl::fuzz::as_text(data, size));
  return abl::fuzz::run_input([&] {
    const abl::io::SafetensorsReader reader(abl::fuzz::scratch().dir().string());
    ABL_FUZZ_CHECK(!reader.index_path().empty(), reader.path());
    ABL_FUZZ_CHECK(reader.num_files() >= 1 && reader.num_files() <= 4, "");
    for (const abl::io::TensorInfo& t : reader.tensors()) {
      ABL_FUZZ_CHECK(reader.find(t.name) != nullptr && reader.find(t.name)->file == t.file, t.name);
      ABL_FUZZ_CHECK(t.file_index < reader.num_files() && reader.file(t.file_index).path() == t.file,
                     t.name);
      const std::vector<float> v = reader.read_f32(t.name);
      ABL_FUZZ_CHECK(static_cast<int64_t>(v.size()) == t.numel, t.name);
    }
  });
}
