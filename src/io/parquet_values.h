// The value and level encodings of Parquet data pages (apache/parquet-format Encodings.md) that
// a string column uses: the RLE / bit-packing hybrid (levels, dictionary indices),
// DELTA_BINARY_PACKED integers and the byte-array encodings built on it. Every decoder checks its
// bounds and throws abl::Error naming `what` on malformed input.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace abl::io::parquet {

struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// The bytes of text a file's values may add up to. Decoding fails past it, so that a few bytes
// (a long dictionary entry repeated by an RLE run, DELTA_BYTE_ARRAY prefixes) cannot ask for
// gigabytes.
struct DecodeBudget {
  int64_t left = 0;
  int64_t total = 0;
  void spend(size_t n, const std::string& what);
};

// Decodes `count` values of the RLE / bit-packing hybrid of width `bit_width` (0-32) from `in`.
std::vector<uint32_t> decode_rle_hybrid(Bytes in, int bit_width, int64_t count, const std::string& what);

// Decodes `count` DELTA_BINARY_PACKED integers from the start of `in`; *used is set to the bytes
// they took, so that what follows them can be found.
std::vector<int64_t> decode_delta_binary_packed(Bytes in, int64_t count, size_t* used, const std::string& what);

// `count` byte arrays in the given encoding (PLAIN, DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY).
std::vector<std::string> decode_byte_arrays(int encoding, Bytes in, int64_t count, DecodeBudget* budget,
                                            const std::string& what);

}  // namespace abl::io::parquet
