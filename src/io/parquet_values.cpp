#include "parquet_values.h"

#include <algorithm>

#include <fmt/format.h>

#include "abl/core/error.h"
#include "parquet_metadata.h"
#include "varint.h"

namespace abl::io::parquet {
namespace {

// A bounds-checked cursor over a page's bytes.
class Cursor {
 public:
  Cursor(Bytes in, const std::string& what) : in_(in), what_(what) {}

  [[noreturn]] void corrupt(const std::string& detail) const {
    fail("{}: corrupt values ({} at byte {})", what_, detail, pos_);
  }
  uint64_t varint() {
    uint64_t v = 0;
    if (!read_varint(in_.data, in_.size, &pos_, &v)) corrupt("a varint past the end or longer than 10 bytes");
    return v;
  }
  int64_t zigzag() { return unzigzag(varint()); }
  uint8_t byte() {
    if (pos_ >= in_.size) corrupt("ends early");
    return in_.data[pos_++];
  }
  const uint8_t* take(size_t n) {
    if (n > in_.size - pos_) corrupt(fmt::format("{} bytes wanted, {} left", n, in_.size - pos_));
    const uint8_t* p = in_.data + pos_;
    pos_ += n;
    return p;
  }
  uint64_t little_endian(size_t n) {
    const uint8_t* p = take(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
  }
  size_t position() const { return pos_; }
  size_t left() const { return in_.size - pos_; }

 private:
  Bytes in_;
  const std::string& what_;
  size_t pos_ = 0;
};

// Appends `n` values of `width` bits, packed least significant bit first, from `p`.
template <typename T>
void unpack_bits(const uint8_t* p, int width, int64_t n, std::vector<T>* out) {
  uint64_t bit = 0;
  for (int64_t i = 0; i < n; ++i, bit += width) {
    uint64_t v = 0;
    for (int b = 0; b < width; ++b) {
      const uint64_t at = bit + b;
      v |= static_cast<uint64_t>((p[at >> 3] >> (at & 7)) & 1) << b;
    }
    out->push_back(static_cast<T>(v));
  }
}

}  // namespace

void DecodeBudget::spend(size_t n, const std::string& what) {
  if (static_cast<int64_t>(n) > left) {
    fail("{}: the values add up to more than the {} MiB of text abliterate reads from this file (1024 bytes for each "
         "byte of it, plus 256 MiB)", what, total >> 20);
  }
  left -= static_cast<int64_t>(n);
}

std::vector<uint32_t> decode_rle_hybrid(Bytes in, int bit_width, int64_t count, const std::string& what) {
  Cursor c(in, what);
  if (bit_width < 0 || bit_width > 32) c.corrupt(fmt::format("a bit width of {}", bit_width));
  std::vector<uint32_t> out;
  out.reserve(static_cast<size_t>(count));
  while (static_cast<int64_t>(out.size()) < count) {
    const uint64_t header = c.varint();
    const int64_t want = count - static_cast<int64_t>(out.size());
    if (header & 1) {  // bit-packed: (header >> 1) groups of 8 values
      const uint64_t groups = header >> 1;
      // At width 0 a run has no bytes (polars writes a page of one dictionary key so); `want` bounds it.
      if (groups == 0 || (bit_width > 0 && groups > c.left() / static_cast<uint64_t>(bit_width) + 1)) {
        c.corrupt("a bit-packed run past the end");
      }
      // A writer may end the last run short of its padding: take the bytes the needed values use.
      const int64_t needed = groups >= static_cast<uint64_t>(want) / 8 + 1 ? want : static_cast<int64_t>(groups * 8);
      const size_t bytes = static_cast<size_t>((needed * bit_width + 7) / 8);
      const uint8_t* p = c.take(bytes);
      unpack_bits(p, bit_width, needed, &out);
      const size_t full = static_cast<size_t>(groups) * static_cast<size_t>(bit_width);
      c.take(std::min(full - bytes, c.left()));
    } else {  // RLE: (header >> 1) repeats of one value in ceil(bit_width / 8) bytes
      const uint64_t run = header >> 1;
      const uint64_t value = c.little_endian(static_cast<size_t>((bit_width + 7) / 8));
      if (bit_width < 32 && value >> bit_width) c.corrupt(fmt::format("a value of {} in {} bits", value, bit_width));
      if (run == 0) c.corrupt("an empty run");
      out.insert(out.end(), static_cast<size_t>(std::min<uint64_t>(run, static_cast<uint64_t>(want))),
                 static_cast<uint32_t>(value));
    }
  }
  return out;
}

std::vector<int64_t> decode_delta_binary_packed(Bytes in, int64_t count, size_t* used, const std::string& what) {
  Cursor c(in, what);
  const uint64_t block = c.varint(), miniblocks = c.varint(), total = c.varint();
  int64_t value = c.zigzag();
  // Writers use blocks of 128 (parquet-mr, Arrow) or 256 values; 2^16 bounds what a block may cost.
  if (block == 0 || block % 128 || block > (1u << 16) || miniblocks == 0 || block % miniblocks ||
      (block / miniblocks) % 32) {
    c.corrupt(fmt::format("a DELTA_BINARY_PACKED block of {} values in {} miniblocks", block, miniblocks));
  }
  if (total != static_cast<uint64_t>(count)) {
    c.corrupt(fmt::format("{} delta-encoded values where the page has {}", total, count));
  }
  const int64_t per_miniblock = static_cast<int64_t>(block / miniblocks);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(count));
  if (count > 0) out.push_back(value);
  std::vector<uint64_t> packed;
  while (static_cast<int64_t>(out.size()) < count) {
    const int64_t min_delta = c.zigzag();
    const uint8_t* widths = c.take(static_cast<size_t>(miniblocks));
    for (uint64_t m = 0; m < miniblocks && static_cast<int64_t>(out.size()) < count; ++m) {
      const int width = widths[m];
      if (width > 64) c.corrupt(fmt::format("a miniblock of {}-bit deltas", width));
      // The miniblock is stored whole (padded); unpack only the values still wanted.
      const int64_t wanted = std::min(per_miniblock, count - static_cast<int64_t>(out.size()));
      packed.clear();
      unpack_bits(c.take(static_cast<size_t>(per_miniblock * width / 8)), width, wanted, &packed);
      for (int64_t i = 0; i < wanted; ++i) {
        // Deltas wrap in two's complement, as the format defines them.
        value = static_cast<int64_t>(static_cast<uint64_t>(value) + static_cast<uint64_t>(min_delta) + packed[i]);
        out.push_back(value);
      }
    }
  }
  *used = c.position();
  return out;
}

namespace {

// Splits `in` into `count` strings of the given lengths, taken one after another.
std::vector<std::string> split_by_lengths(Cursor& c, const std::vector<int64_t>& lengths, DecodeBudget* budget,
                                          const std::string& what) {
  std::vector<std::string> out;
  out.reserve(lengths.size());
  for (int64_t n : lengths) {
    if (n < 0) c.corrupt(fmt::format("a byte array of length {}", n));
    budget->spend(static_cast<size_t>(n), what);
    const uint8_t* p = c.take(static_cast<size_t>(n));
    out.emplace_back(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

std::vector<std::string> decode_byte_arrays(int encoding, Bytes in, int64_t count, DecodeBudget* budget,
                                            const std::string& what) {
  Cursor c(in, what);
  if (encoding == kPlain) {
    std::vector<std::string> out;
    out.reserve(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      const size_t n = static_cast<size_t>(c.little_endian(4));
      const uint8_t* p = c.take(n);
      budget->spend(n, what);
      out.emplace_back(reinterpret_cast<const char*>(p), n);
    }
    return out;
  }
  if (encoding == kDeltaLengthByteArray) {
    size_t used = 0;
    const std::vector<int64_t> lengths = decode_delta_binary_packed(in, count, &used, what);
    c.take(used);
    return split_by_lengths(c, lengths, budget, what);
  }
  if (encoding == kDeltaByteArray) {
    size_t used = 0;
    const std::vector<int64_t> prefixes = decode_delta_binary_packed(in, count, &used, what);
    std::vector<std::string> out =
        decode_byte_arrays(kDeltaLengthByteArray, {in.data + used, in.size - used}, count, budget, what);
    for (size_t i = 0; i < out.size(); ++i) {
      const int64_t keep = prefixes[i];
      const size_t before = i == 0 ? 0 : out[i - 1].size();
      if (keep < 0 || static_cast<size_t>(keep) > before) {
        c.corrupt(fmt::format("value {} shares {} bytes with a value of {}", i, keep, before));
      }
      budget->spend(static_cast<size_t>(keep), what);
      if (keep > 0) out[i].insert(0, out[i - 1], 0, static_cast<size_t>(keep));
    }
    return out;
  }
  fail("{}: string values in the {} encoding, which abliterate does not read (it reads PLAIN, dictionary, "
       "DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY)",
       what, encoding_name(encoding));
}

}  // namespace abl::io::parquet
