// UTF-8 validation (strict: no overlong forms, no surrogates, nothing above U+10FFFF).
#pragma once
#include <cstddef>
#include <string_view>

namespace abl {

// True if `s` is valid UTF-8; otherwise false and *bad_offset (if given) is the first bad byte.
bool valid_utf8(std::string_view s, size_t* bad_offset = nullptr);

}  // namespace abl
