// Fuzz target: one .safetensors file (length field, JSON header, data section) opened by
// SafetensorsFile and SafetensorsReader. Input byte 0 picks the encoding: even = the file's bytes
// as they are; odd = bytes 1-2 give the data length d (little-endian, capped), then the header
// text and d data bytes, with the length field computed, so that mutations of the JSON reach the
// validation behind the length check. An accepted file must keep every tensor inside the data
// section and be readable whole, as bytes and (F32/F16/BF16) as fp32.
#include <algorithm>
#include <cstring>
#include <vector>

#include "abl/io/safetensors.h"
#include "fuzz_target.h"

namespace {

std::string file_bytes(const uint8_t* data, size_t size) {
  if (size == 0 || data[0] % 2 == 0) return std::string(abl::fuzz::as_text(data, size));
  if (size < 3) return {};
  const size_t rest = size - 3;
  const size_t d = std::min<size_t>(data[1] | (size_t{data[2]} << 8), rest);
  const uint64_t header_len = rest - d;
  std::string out(8, '\0');
  std::memcpy(out.data(), &header_len, 8);
  out.append(reinterpret_cast<const char*>(data + 3), rest);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  abl::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = abl::fuzz::scratch().write("model.safetensors", file_bytes(data, size));
  return abl::fuzz::run_input([&] {
    const abl::io::SafetensorsFile f(path);
    ABL_FUZZ_CHECK(f.data_begin() >= 8 && f.data_begin() <= f.file_size(), "");
    uint64_t covered = 0;
    std::vector<unsigned char> buf;
    std::vector<float> values;
    for (const abl::io::TensorInfo& t : f.tensors()) {
      ABL_FUZZ_CHECK(t.begin >= f.data_begin() && t.begin <= t.end && t.end <= f.file_size(), t.name);
      ABL_FUZZ_CHECK(f.find(t.name) == &t, t.name);
      int bits = 0;
      ABL_FUZZ_CHECK(abl::io::is_safetensors_dtype(t.dtype_name, &bits), t.dtype_name);
      ABL_FUZZ_CHECK(static_cast<uint64_t>(t.numel) * static_cast<uint64_t>(bits) == t.nbytes() * 8,
                     t.name);
      covered += t.nbytes();
      buf.resize(t.nbytes());
      f.read_bytes(t, 0, t.nbytes(), buf.data());
      if (t.dtype) {
        values.resize(static_cast<size_t>(t.numel));
        f.read_f32(t, 0, t.numel, values.data());
      }
    }
    // The data section is tiled exactly by the tensors.
    ABL_FUZZ_CHECK(covered == f.file_size() - f.data_begin(), "");
    const abl::io::SafetensorsReader reader(path);
    ABL_FUZZ_CHECK(reader.tensors().size() == f.tensors().size(), "");
  });
}
