// The page compressions of Parquet files that abliterate reads: none, Snappy (raw block format,
// decoded here), gzip (zlib) and zstd (libzstd). Others are refused by name.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace abl::io::parquet {

// parquet.thrift CompressionCodec.
enum class Codec : int { uncompressed = 0, snappy = 1, gzip = 2, lzo = 3, brotli = 4, lz4 = 5, zstd = 6, lz4_raw = 7 };

std::string codec_name(int codec);

// Decompresses `n` bytes into exactly `out_size` bytes at `out`; a stream that does not decode
// to exactly that size throws abl::Error naming `what`.
void decompress(int codec, const uint8_t* src, size_t n, uint8_t* out, size_t out_size, const std::string& what);

// Snappy's raw block format (google/snappy format_description.txt): the decoded length as a
// varint, then literals and back-references. Exposed for its tests.
void snappy_decompress(const uint8_t* src, size_t n, uint8_t* out, size_t out_size, const std::string& what);

}  // namespace abl::io::parquet
