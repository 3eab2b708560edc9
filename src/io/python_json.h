// JSON as Python's json module writes and reads it. json.dump writes NaN, Infinity and -Infinity
// for non-finite floats (allow_nan, its default), json.load reads numbers beyond the double range
// as inf and keeps the escape of a lone UTF-16 surrogate (\ud800 without its pair); nlohmann
// refuses all of them. A prompt file whose other columns hold such values is a valid dataset.
#pragma once
#include <cstddef>
#include <string>

namespace abl::io {

// Rewrites `text` in place as standard JSON of the same length, so that the lines and columns of
// later parse errors stay right: NaN, Infinity, -Infinity and numbers beyond the double range
// outside strings become 0 (padded with spaces), a lone surrogate escape inside a string becomes
// \ufffd (U+FFFD, the replacement character). Returns the number of lone surrogates replaced, and
// in `first` (when given) the offset of the first one.
size_t accept_python_json(std::string& text, size_t* first = nullptr);

// config.json as Python's json module writes a float('inf') (Nemotron-H's "time_step_limit": [0.0, Infinity]):
// Infinity and -Infinity outside strings become ±kInfinitySentinel (padded with spaces to the same length),
// which the reader turns back into ±inf. Returns how many were rewritten.
inline constexpr double kInfinitySentinel = 1e308;
size_t mark_python_infinities(std::string& text);

}  // namespace abl::io
