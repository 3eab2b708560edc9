// ULEB128 varints, as Thrift's compact protocol, Parquet's RLE and delta encodings and Snappy's
// length header write them: 7 bits a byte, least significant first, the high bit set on all but
// the last byte.
#pragma once
#include <cstddef>
#include <cstdint>

namespace abl::io {

// Reads the varint at data[*pos], advancing *pos; false when it runs past `size` or past 10 bytes.
inline bool read_varint(const uint8_t* data, size_t size, size_t* pos, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && *pos < size; shift += 7) {
    const uint8_t b = data[(*pos)++];
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *value = v;
      return true;
    }
  }
  return false;
}

inline int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

}  // namespace abl::io
