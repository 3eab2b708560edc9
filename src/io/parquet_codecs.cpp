#include "parquet_codecs.h"

#include <cstring>

#include <zlib.h>
#include <zstd.h>

#include "abl/core/error.h"
#include "varint.h"

namespace abl::io::parquet {

std::string codec_name(int codec) {
  static const char* const names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
  return codec >= 0 && codec < 8 ? names[codec] : fmt::format("codec {}", codec);
}

void snappy_decompress(const uint8_t* src, size_t n, uint8_t* out, size_t out_size, const std::string& what) {
  size_t in = 0, len = 0;
  auto corrupt = [&](const char* detail) { fail("{}: corrupt Snappy data ({} at byte {})", what, detail, in); };
  uint64_t declared = 0;
  if (!read_varint(src, n, &in, &declared)) corrupt("a bad length header");
  if (declared != out_size) {
    fail("{}: Snappy data decodes to {} bytes where the page header says {}", what, declared, out_size);
  }
  while (in < n) {
    const uint8_t tag = src[in++];
    size_t length = 0, offset = 0;
    if ((tag & 3) == 0) {  // literal: length - 1 in the tag, or in the next 1-4 bytes
      length = tag >> 2;
      if (length >= 60) {
        const size_t bytes = length - 59;
        if (n - in < bytes) corrupt("a literal length past the end");
        length = 0;
        for (size_t b = 0; b < bytes; ++b) length |= static_cast<size_t>(src[in + b]) << (8 * b);
        in += bytes;
      }
      ++length;
      if (n - in < length) corrupt("a literal past the end");
      if (out_size - len < length) corrupt("a literal past the decoded length");
      std::memcpy(out + len, src + in, length);
      in += length;
      len += length;
      continue;
    }
    if ((tag & 3) == 1) {  // copy, 1-byte offset: length 4-11, offset 11 bits
      if (n - in < 1) corrupt("a copy past the end");
      length = 4 + ((tag >> 2) & 7);
      offset = (static_cast<size_t>(tag >> 5) << 8) | src[in++];
    } else {  // copy, 2- or 4-byte little-endian offset: length 1-64
      const size_t bytes = (tag & 3) == 2 ? 2 : 4;
      if (n - in < bytes) corrupt("a copy past the end");
      length = (tag >> 2) + 1;
      for (size_t b = 0; b < bytes; ++b) offset |= static_cast<size_t>(src[in + b]) << (8 * b);
      in += bytes;
    }
    if (offset == 0 || offset > len) corrupt("a copy from before the start");
    if (out_size - len < length) corrupt("a copy past the decoded length");
    for (size_t i = 0; i < length; ++i, ++len) out[len] = out[len - offset];  // may overlap itself
  }
  if (len != out_size) fail("{}: Snappy data ends after {} of its {} bytes", what, len, out_size);
}

namespace {

void gzip_decompress(const uint8_t* src, size_t n, uint8_t* out, size_t out_size, const std::string& what) {
  z_stream z{};
  ABL_CHECK(inflateInit2(&z, 32 + MAX_WBITS) == Z_OK, "{}: cannot start zlib", what);  // gzip or zlib header
  z.next_in = const_cast<Bytef*>(src);
  z.avail_in = static_cast<uInt>(n);
  z.next_out = out;
  z.avail_out = static_cast<uInt>(out_size);
  const int rc = inflate(&z, Z_FINISH);
  const size_t produced = out_size - z.avail_out;
  const std::string msg = z.msg ? z.msg : z.avail_out == 0 ? "more data than the page header says" : "truncated";
  inflateEnd(&z);
  ABL_CHECK(rc == Z_STREAM_END && produced == out_size, "{}: corrupt gzip data ({}; {} of {} bytes decoded)", what,
            msg, produced, out_size);
}

void zstd_decompress(const uint8_t* src, size_t n, uint8_t* out, size_t out_size, const std::string& what) {
  const size_t got = ZSTD_decompress(out, out_size, src, n);
  ABL_CHECK(!ZSTD_isError(got), "{}: corrupt zstd data ({})", what, ZSTD_getErrorName(got));
  ABL_CHECK(got == out_size, "{}: zstd data decodes to {} bytes where the page header says {}", what, got, out_size);
}

}  // namespace

void decompress(int codec, const uint8_t* src, size_t n, uint8_t* out, size_t out_size, const std::string& what) {
  // zlib counts in 32 bits; a Parquet page's sizes are i32, so this holds for every valid file.
  ABL_CHECK(n <= UINT32_MAX && out_size <= UINT32_MAX, "{}: a page of more than 4 GiB", what);
  switch (static_cast<Codec>(codec)) {
    case Codec::uncompressed:
      ABL_CHECK(n == out_size, "{}: an uncompressed page of {} bytes where the header says {}", what, n, out_size);
      if (n) std::memcpy(out, src, n);
      return;
    case Codec::snappy:
      return snappy_decompress(src, n, out, out_size, what);
    case Codec::gzip:
      return gzip_decompress(src, n, out, out_size, what);
    case Codec::zstd:
      return zstd_decompress(src, n, out, out_size, what);
    default:
      fail("{}: compressed with {}, which abliterate does not read (it reads uncompressed, SNAPPY, GZIP and ZSTD "
           "pages); rewrite the file, e.g. pyarrow.parquet.write_table(table, path, compression='zstd')",
           what, codec_name(codec));
  }
}

}  // namespace abl::io::parquet
