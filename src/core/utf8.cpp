// Strict UTF-8 validation following the well-formed byte sequences table of Unicode §3.9.
#include "abl/core/utf8.h"

#include <cstdint>

namespace abl {

bool valid_utf8(std::string_view s, size_t* bad_offset) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const uint8_t c = p[i];
    size_t len = 0;
    uint8_t lo = 0x80, hi = 0xbf;  // allowed range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;  // no overlong
      if (c == 0xed) hi = 0x9f;  // no surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;  // no overlong
      if (c == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
    } else {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    bool ok = i + len <= n && p[i + 1] >= lo && p[i + 1] <= hi;
    for (size_t k = 2; ok && k < len; ++k) ok = p[i + k] >= 0x80 && p[i + k] <= 0xbf;
    if (!ok) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    i += len;
  }
  return true;
}

}  // namespace abl
