#include "python_json.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace abl::io {
namespace {

// The code unit of a \uXXXX escape starting at `at` (the backslash), or -1.
long escape_unit(const std::string& s, size_t at) {
  if (at + 6 > s.size() || s[at] != '\\' || s[at + 1] != 'u') return -1;
  long unit = 0;
  for (size_t k = at + 2; k < at + 6; ++k) {
    const char h = s[k];
    if (!std::isxdigit(static_cast<unsigned char>(h))) return -1;
    unit = unit * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
  }
  return unit;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `word` stands at `at` outside strings, not part of a longer word.
bool literal_at(const std::string& s, size_t at, const std::string& word) {
  if (s.compare(at, word.size(), word) != 0) return false;
  const size_t end = at + word.size();
  return (at == 0 || !is_word_char(s[at - 1])) && (end == s.size() || !is_word_char(s[end]));
}

void blank_to_zero(std::string& s, size_t at, size_t n) {
  s[at] = '0';
  for (size_t k = at + 1; k < at + n; ++k) s[k] = ' ';
}

}  // namespace

size_t accept_python_json(std::string& s, size_t* first) {
  size_t lone = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (in_string) {
      if (c == '"') {
        in_string = false;
        ++i;
      } else if (c != '\\') {
        ++i;
      } else {
        const long unit = escape_unit(s, i);
        if (unit < 0xD800 || unit > 0xDFFF) {
          i += unit < 0 ? 2 : 6;
          continue;
        }
        const long next = escape_unit(s, i + 6);
        if (unit <= 0xDBFF && next >= 0xDC00 && next <= 0xDFFF) {  // a pair: one character
          i += 12;
          continue;
        }
        s.replace(i, 6, "\\ufffd");
        if (lone++ == 0 && first) *first = i;
        i += 6;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      ++i;
    } else if (literal_at(s, i, "-Infinity") || literal_at(s, i, "Infinity") || literal_at(s, i, "NaN")) {
      const size_t n = s[i] == '-' ? 9 : s[i] == 'I' ? 8 : 3;
      blank_to_zero(s, i, n);
      i += n;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t end = i + 1;
      while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.' || s[end] == 'e' ||
                                s[end] == 'E' || s[end] == '+' || s[end] == '-')) {
        ++end;
      }
      if (std::isinf(std::strtod(s.substr(i, end - i).c_str(), nullptr))) blank_to_zero(s, i, end - i);
      i = end;
    } else {
      ++i;
    }
  }
  return lone;
}

size_t mark_python_infinities(std::string& s) {
  size_t n = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character (a \" does not end the string)
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (literal_at(s, i, "Infinity") || literal_at(s, i, "-Infinity")) {
      const bool negative = c == '-';
      const std::string number = negative ? "-1e308" : "1e308";
      const size_t width = negative ? 9 : 8;
      s.replace(i, width, number + std::string(width - number.size(), ' '));
      i += width - 1;
      ++n;
    }
  }
  return n;
}

}  // namespace abl::io
