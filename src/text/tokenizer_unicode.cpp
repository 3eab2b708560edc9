// Unicode helpers, the byte-level alphabet and PCRE2 patterns for the tokenizer.
// The reference matches with Oniguruma, whose \s is exactly Unicode White_Space and whose \w
// includes marks; patterns are rewritten so PCRE2 (UTF + UCP) gives the same classes.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <utf8proc.h>

#include "abl/core/error.h"
#include "tokenizer_parts.h"

namespace abl::text::tok {

char32_t decode_utf8(std::string_view s, size_t i, size_t* len) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    *len = 1;
    return c;
  }
  size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
  if (i + n > s.size()) n = s.size() - i;  // never read past the end of malformed text
  char32_t cp = c & (0x3f >> (n - 1));
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  *len = n;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

bool is_whitespace(char32_t cp) {
  if (cp >= 0x09 && cp <= 0x0d) return true;
  switch (cp) {
    case 0x20:
    case 0x85:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200a;
  }
}

bool is_word_char(char32_t cp) {
  if (cp == '_' || cp == 0x200c || cp == 0x200d) return true;
  // Alphabetic symbols (So with Other_Alphabetic): circled and squared Latin letters.
  if ((cp >= 0x24b6 && cp <= 0x24e9) || (cp >= 0x1f130 && cp <= 0x1f149) ||
      (cp >= 0x1f150 && cp <= 0x1f169) || (cp >= 0x1f170 && cp <= 0x1f189)) {
    return true;
  }
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

std::string utf8_lossy(std::string_view bytes) {
  static const char kReplacement[] = "\xef\xbf\xbd";
  std::string out;
  out.reserve(bytes.size());
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    size_t need = 0;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    }
    // Consume the longest prefix of a well-formed sequence; an incomplete one is one error.
    size_t k = 1;
    bool ok = need > 0;
    for (; ok && k <= need; ++k) {
      if (i + k >= n) {
        ok = false;
        break;
      }
      const unsigned char b = p[i + k];
      const bool in_range = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xbf);
      if (!in_range) {
        ok = false;
        break;
      }
    }
    if (ok) {
      out.append(bytes.data() + i, need + 1);
      i += need + 1;
    } else {
      out += kReplacement;
      i += k;  // the bytes that formed a valid prefix (at least the lead byte)
    }
  }
  return out;
}

std::string unicode_normalize(std::string_view s, NormalForm form) {
  bool ascii = true;
  for (char c : s) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(s);  // ASCII is invariant under every normal form
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::nfc:
      options |= UTF8PROC_COMPOSE;
      break;
    case NormalForm::nfd:
      options |= UTF8PROC_DECOMPOSE;
      break;
    case NormalForm::nfkc:
      options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
      break;
    case NormalForm::nfkd:
      options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
      break;
  }
  utf8proc_uint8_t* dst = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                          static_cast<utf8proc_ssize_t>(s.size()), &dst,
                                          static_cast<utf8proc_option_t>(options));
  if (n < 0) abl::fail("Unicode normalization failed: {}", utf8proc_errmsg(n));
  std::string out(reinterpret_cast<const char*>(dst), static_cast<size_t>(n));
  std::free(dst);
  return out;
}

namespace {

struct ByteLevelTables {
  std::array<std::string, 256> chars;
  std::array<char32_t, 256> code_points{};
  ByteLevelTables() {
    // Printable Latin-1 bytes stand for themselves; the rest take U+0100.. in byte order.
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
      code_points[b] = printable ? static_cast<char32_t>(b) : next++;
      append_utf8(chars[b], code_points[b]);
    }
  }
};

const ByteLevelTables& byte_level_tables() {
  static const ByteLevelTables tables;
  return tables;
}

}  // namespace

const std::array<std::string, 256>& byte_level_chars() { return byte_level_tables().chars; }

int byte_level_byte(char32_t cp) {
  if (cp < 256) {
    const bool printable = (cp >= 0x21 && cp <= 0x7e) || (cp >= 0xa1 && cp <= 0xac) || cp >= 0xae;
    return printable ? static_cast<int>(cp) : -1;
  }
  if (cp >= 256 + 68) return -1;  // 68 bytes are not printable
  const auto& cps = byte_level_tables().code_points;
  for (int b = 0; b < 256; ++b) {
    if (cps[b] == cp) return b;
  }
  return -1;
}

// ---- Regex -------------------------------------------------------------------------------------

namespace {

// Rewrites the classes whose meaning differs between Oniguruma and PCRE2 (UCP), so that the
// result does not depend on PCRE2's own (older or newer) notion of them:
// - \s and [:space:] are Unicode White_Space, spelled out: PCRE2's \s also matches U+180E (in
//   its horizontal-space list), Oniguruma's does not (U+180E has not been White_Space since
//   Unicode 6.3). U+0085 is in both, U+FEFF and U+200B in neither.
// - \w is Oniguruma's Unicode word class: Alphabetic (letters, Nl, the circled and squared
//   letter symbols), marks, Nd, Pc, and the Latin-1 superscripts and fractions of its Latin-1
//   ctype table (²³¹¼½¾); PCRE2's lacks marks (before 10.43), Nl and those symbols.
// - \h is a hex digit in Oniguruma (horizontal space in PCRE2).
// - \v is the vertical tab alone and \V a literal V in Oniguruma (vertical space and its
//   complement in PCRE2).
// - \p{X} for a general category X (L, Lu, Ll, Lm, Lo, M, Mn, Mc, N, Nd, No, P, Pd, Po, S, Sm, So,
//   Cf) gains the code points Unicode 15.0 to 16.0 put in it, which the reference's Oniguruma
//   (Unicode 16) has and PCRE2 builds with older tables (10.42: Unicode 14) lack; a newer PCRE2
//   already has them, and adding them again changes nothing. Every category gets them, not only
//   \p{L} and \p{N}: a pattern that spells letters as \p{Lu}|\p{Ll}|\p{Lo}... (o200k's, Tekken's)
//   and excludes them as [^\p{L}\p{N}] would otherwise match a new letter nowhere and drop it.
//   \P{X} inside a bracket is left to PCRE2's tables. (One code point moved between categories:
//   U+1171E is Mn in PCRE2 10.42 and Mc in Unicode 16; \p{Mn} keeps it.)
// Negated forms inside a bracket cannot be rewritten and are refused.

// The code points the reference's \p{X} has and PCRE2 10.42's has not, for every general
// category where they differ, measured over every code point (tests/tokpeer/categories.js
// prints the reference's sets).
struct CategoryAdditions {
  const char* name;
  const char* added;
};
constexpr CategoryAdditions kUnicode16Additions[] = {
    {"L",
      "\\x{1c89}-\\x{1c8a}\\x{a7cb}-\\x{a7cd}\\x{a7da}-\\x{a7dc}\\x{105c0}-\\x{105f3}\\x{10d4a}-"
      "\\x{10d65}\\x{10d6f}-\\x{10d85}\\x{10ec2}-\\x{10ec4}\\x{1123f}-\\x{11240}\\x{11380}-"
      "\\x{11389}\\x{1138b}\\x{1138e}\\x{11390}-\\x{113b5}\\x{113b7}\\x{113d1}\\x{113d3}\\x{11bc0}-"
      "\\x{11be0}\\x{11f02}\\x{11f04}-\\x{11f10}\\x{11f12}-\\x{11f33}\\x{1342f}\\x{13441}-"
      "\\x{13446}\\x{13460}-\\x{143fa}\\x{16100}-\\x{1611d}\\x{16d40}-\\x{16d6c}\\x{18cff}"
      "\\x{1b132}\\x{1b155}\\x{1df25}-\\x{1df2a}\\x{1e030}-\\x{1e06d}\\x{1e4d0}-\\x{1e4eb}"
      "\\x{1e5d0}-\\x{1e5ed}\\x{1e5f0}\\x{2b739}\\x{2ebf0}-\\x{2ee5d}\\x{31350}-\\x{323af}"},
    {"Lu",
      "\\x{1c89}\\x{a7cb}-\\x{a7cc}\\x{a7da}\\x{a7dc}\\x{10d50}-\\x{10d65}"},
    {"Ll",
      "\\x{1c8a}\\x{a7cd}\\x{a7db}\\x{10d70}-\\x{10d85}\\x{1df25}-\\x{1df2a}"},
    {"Lm",
      "\\x{10d4e}\\x{10d6f}\\x{16d40}-\\x{16d42}\\x{16d6b}-\\x{16d6c}\\x{1e030}-\\x{1e06d}"
      "\\x{1e4eb}"},
    {"Lo",
      "\\x{105c0}-\\x{105f3}\\x{10d4a}-\\x{10d4d}\\x{10d4f}\\x{10ec2}-\\x{10ec4}\\x{1123f}-"
      "\\x{11240}\\x{11380}-\\x{11389}\\x{1138b}\\x{1138e}\\x{11390}-\\x{113b5}\\x{113b7}\\x{113d1}"
      "\\x{113d3}\\x{11bc0}-\\x{11be0}\\x{11f02}\\x{11f04}-\\x{11f10}\\x{11f12}-\\x{11f33}"
      "\\x{1342f}\\x{13441}-\\x{13446}\\x{13460}-\\x{143fa}\\x{16100}-\\x{1611d}\\x{16d43}-"
      "\\x{16d6a}\\x{18cff}\\x{1b132}\\x{1b155}\\x{1e4d0}-\\x{1e4ea}\\x{1e5d0}-\\x{1e5ed}\\x{1e5f0}"
      "\\x{2b739}\\x{2ebf0}-\\x{2ee5d}\\x{31350}-\\x{323af}"},
    {"M",
      "\\x{897}\\x{cf3}\\x{ece}\\x{10d69}-\\x{10d6d}\\x{10efc}-\\x{10eff}\\x{11241}\\x{113b8}-"
      "\\x{113c0}\\x{113c2}\\x{113c5}\\x{113c7}-\\x{113ca}\\x{113cc}-\\x{113d0}\\x{113d2}"
      "\\x{113e1}-\\x{113e2}\\x{11f00}-\\x{11f01}\\x{11f03}\\x{11f34}-\\x{11f3a}\\x{11f3e}-"
      "\\x{11f42}\\x{11f5a}\\x{13440}\\x{13447}-\\x{13455}\\x{1611e}-\\x{1612f}\\x{1e08f}"
      "\\x{1e4ec}-\\x{1e4ef}\\x{1e5ee}-\\x{1e5ef}"},
    {"Mn",
      "\\x{897}\\x{ece}\\x{10d69}-\\x{10d6d}\\x{10efc}-\\x{10eff}\\x{11241}\\x{113bb}-\\x{113c0}"
      "\\x{113ce}\\x{113d0}\\x{113d2}\\x{113e1}-\\x{113e2}\\x{11f00}-\\x{11f01}\\x{11f36}-"
      "\\x{11f3a}\\x{11f40}\\x{11f42}\\x{11f5a}\\x{13440}\\x{13447}-\\x{13455}\\x{1611e}-\\x{16129}"
      "\\x{1612d}-\\x{1612f}\\x{1e08f}\\x{1e4ec}-\\x{1e4ef}\\x{1e5ee}-\\x{1e5ef}"},
    {"Mc",
      "\\x{cf3}\\x{113b8}-\\x{113ba}\\x{113c2}\\x{113c5}\\x{113c7}-\\x{113ca}\\x{113cc}-\\x{113cd}"
      "\\x{113cf}\\x{1171e}\\x{11f03}\\x{11f34}-\\x{11f35}\\x{11f3e}-\\x{11f3f}\\x{11f41}"
      "\\x{1612a}-\\x{1612c}"},
    {"N",
      "\\x{10d40}-\\x{10d49}\\x{116d0}-\\x{116e3}\\x{11bf0}-\\x{11bf9}\\x{11f50}-\\x{11f59}"
      "\\x{16130}-\\x{16139}\\x{16d70}-\\x{16d79}\\x{1ccf0}-\\x{1ccf9}\\x{1d2c0}-\\x{1d2d3}"
      "\\x{1e4f0}-\\x{1e4f9}\\x{1e5f1}-\\x{1e5fa}"},
    {"Nd",
      "\\x{10d40}-\\x{10d49}\\x{116d0}-\\x{116e3}\\x{11bf0}-\\x{11bf9}\\x{11f50}-\\x{11f59}"
      "\\x{16130}-\\x{16139}\\x{16d70}-\\x{16d79}\\x{1ccf0}-\\x{1ccf9}\\x{1e4f0}-\\x{1e4f9}"
      "\\x{1e5f1}-\\x{1e5fa}"},
    {"No",
      "\\x{1d2c0}-\\x{1d2d3}"},
    {"P",
      "\\x{1b4e}-\\x{1b4f}\\x{1b7f}\\x{10d6e}\\x{113d4}-\\x{113d5}\\x{113d7}-\\x{113d8}\\x{11b00}-"
      "\\x{11b09}\\x{11be1}\\x{11f43}-\\x{11f4f}\\x{16d6d}-\\x{16d6f}\\x{1e5ff}"},
    {"Pd",
      "\\x{10d6e}"},
    {"Po",
      "\\x{1b4e}-\\x{1b4f}\\x{1b7f}\\x{113d4}-\\x{113d5}\\x{113d7}-\\x{113d8}\\x{11b00}-\\x{11b09}"
      "\\x{11be1}\\x{11f43}-\\x{11f4f}\\x{16d6d}-\\x{16d6f}\\x{1e5ff}"},
    {"S",
      "\\x{2427}-\\x{2429}\\x{2ffc}-\\x{2fff}\\x{31e4}-\\x{31e5}\\x{31ef}\\x{10d8e}-\\x{10d8f}"
      "\\x{1cc00}-\\x{1ccef}\\x{1cd00}-\\x{1ceb3}\\x{1f6dc}\\x{1f774}-\\x{1f776}\\x{1f77b}-"
      "\\x{1f77f}\\x{1f7d9}\\x{1f8b2}-\\x{1f8bb}\\x{1f8c0}-\\x{1f8c1}\\x{1fa75}-\\x{1fa77}"
      "\\x{1fa87}-\\x{1fa89}\\x{1fa8f}\\x{1faad}-\\x{1faaf}\\x{1fabb}-\\x{1fabf}\\x{1fac6}"
      "\\x{1face}-\\x{1facf}\\x{1fada}-\\x{1fadc}\\x{1fadf}\\x{1fae8}-\\x{1fae9}\\x{1faf7}-"
      "\\x{1faf8}\\x{1fbcb}-\\x{1fbef}"},
    {"Sm",
      "\\x{10d8e}-\\x{10d8f}"},
    {"So",
      "\\x{2427}-\\x{2429}\\x{2ffc}-\\x{2fff}\\x{31e4}-\\x{31e5}\\x{31ef}\\x{1cc00}-\\x{1ccef}"
      "\\x{1cd00}-\\x{1ceb3}\\x{1f6dc}\\x{1f774}-\\x{1f776}\\x{1f77b}-\\x{1f77f}\\x{1f7d9}"
      "\\x{1f8b2}-\\x{1f8bb}\\x{1f8c0}-\\x{1f8c1}\\x{1fa75}-\\x{1fa77}\\x{1fa87}-\\x{1fa89}"
      "\\x{1fa8f}\\x{1faad}-\\x{1faaf}\\x{1fabb}-\\x{1fabf}\\x{1fac6}\\x{1face}-\\x{1facf}"
      "\\x{1fada}-\\x{1fadc}\\x{1fadf}\\x{1fae8}-\\x{1fae9}\\x{1faf7}-\\x{1faf8}\\x{1fbcb}-"
      "\\x{1fbef}"},
    {"Cf",
      "\\x{13439}-\\x{1343f}"},
};

const char* unicode16_additions(std::string_view category) {
  for (const CategoryAdditions& c : kUnicode16Additions) {
    if (category == c.name) return c.added;
  }
  return nullptr;
}

// Index of the ']' that closes the character class opening at p[open], or npos when it is not
// closed (or nests deeper than any real pattern does). Escapes, POSIX [:name:] and nested classes
// are skipped; a ']' right after '[' or '[^' is a literal.
size_t class_end(std::string_view p, size_t open, int depth = 0) {
  if (depth > 32) return std::string_view::npos;
  size_t i = open + 1;
  if (i < p.size() && p[i] == '^') ++i;
  if (i < p.size() && p[i] == ']') ++i;
  while (i < p.size()) {
    if (p[i] == '\\') {
      i += 2;
    } else if (p[i] == '[' && p.compare(i, 2, "[:") == 0 && p.find(":]", i + 2) != std::string_view::npos) {
      i = p.find(":]", i + 2) + 2;
    } else if (p[i] == '[') {
      const size_t inner = class_end(p, i, depth + 1);
      if (inner == std::string_view::npos) return inner;
      i = inner + 1;
    } else if (p[i] == ']') {
      return i;
    } else {
      ++i;
    }
  }
  return std::string_view::npos;
}

// Oniguruma and Rust's regex (tiktoken's patterns, Kimi-K2's among them) intersect character
// classes with `&&`: [\p{Lu}\p{Lo}&&[^\p{Han}]] is the upper-case and other letters that are not
// Han; juxtaposition binds tighter, so [A B && C] is (A | B) & C. PCRE2 before 10.45 has no such
// operator, so each class with a top-level `&&` becomes lookaheads for the later operands in front
// of the first: (?:(?=[C])[AB]), which matches one character in every operand.
std::string rewrite_class_intersections(const std::string& p, const io::JsonValue& where) {
  std::string out;
  out.reserve(p.size());
  for (size_t i = 0; i < p.size();) {
    if (p[i] == '\\') {
      out.append(p, i, 2);
      i += 2;
      continue;
    }
    const size_t end = p[i] == '[' ? class_end(p, i) : std::string::npos;
    if (end == std::string::npos) {  // not a class, or an unclosed one PCRE2 will report
      out += p[i++];
      continue;
    }
    // The top-level `&&` of this class split its body into operands.
    std::vector<std::string> operands;
    size_t start = i + 1;
    if (p[start] == '^') ++start;
    if (p[start] == ']') ++start;  // a literal ']'
    size_t from = i + 1;
    for (size_t k = start; k < end;) {
      if (p[k] == '\\') {
        k += 2;
      } else if (p[k] == '[') {
        k = std::min(class_end(p, k), end) + 1;  // nested classes are closed: their parent is
      } else if (p.compare(k, 2, "&&") == 0) {
        operands.push_back(p.substr(from, k - from));
        from = k += 2;
      } else {
        ++k;
      }
    }
    if (operands.empty()) {
      out.append(p, i, end + 1 - i);
      i = end + 1;
      continue;
    }
    operands.push_back(p.substr(from, end - from));
    if (p[i + 1] == '^')
      where.fail(fmt::format("regex '{}': a negated class with && ([^...&&...]) is not supported", p));
    std::vector<std::string> classes;
    for (const std::string& op : operands) {
      if (op.empty()) where.fail(fmt::format("regex '{}': a class has an empty operand of &&", p));
      const bool one_class = op[0] == '[' && class_end(op, 0) == op.size() - 1;
      classes.push_back(rewrite_class_intersections(one_class ? op : "[" + op + "]", where));
    }
    out += "(?:";
    for (size_t k = 1; k < classes.size(); ++k) out += "(?=" + classes[k] + ")";
    out += classes[0] + ")";
    i = end + 1;
  }
  return out;
}

std::string oniguruma_to_pcre2(const std::string& p, const io::JsonValue& where) {
  static constexpr const char kSpace[] =
      "\\x{09}-\\x{0d}\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}"
      "\\x{205f}\\x{3000}";
  static const std::string kWord = std::string("\\p{L}") + unicode16_additions("L") + "\\p{Nl}\\p{M}" +
                                   unicode16_additions("M") + "\\p{Nd}" + unicode16_additions("Nd") +
                                   "\\p{Pc}\\x{b2}\\x{b3}\\x{b9}\\x{bc}-\\x{be}\\x{24b6}-\\x{24e9}"
                                   "\\x{1f130}-\\x{1f149}\\x{1f150}-\\x{1f169}\\x{1f170}-\\x{1f189}";
  static constexpr const char kHex[] = "0-9a-fA-F";
  static constexpr const char kVerticalTab[] = "\\x{0b}";
  static constexpr const char kPosixSpace[] = "[:space:]";
  static constexpr const char kPosixNotSpace[] = "[:^space:]";
  std::string out;
  out.reserve(p.size() + 16);
  int class_depth = 0;  // nesting of [...] (POSIX [:x:] inside counts too)
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char e = p[i + 1];
      ++i;
      if (e == 'V') {  // not an escape in Oniguruma: the letter itself
        out += 'V';
        continue;
      }
      const size_t close = (e == 'p' || e == 'P') && i + 1 < p.size() && p[i + 1] == '{' ? p.find('}', i + 2)
                                                                                      : std::string::npos;
      const char* added = close != std::string::npos ? unicode16_additions(std::string_view(p).substr(i + 2, close - i - 2))
                                                     : nullptr;
      if (added) {
        const std::string property = "\\p{" + p.substr(i + 2, close - i - 2) + "}";
        i = close;
        if (class_depth == 0) {
          out += e == 'P' ? "[^" : "[";
          out += property;
          out += added;
          out += ']';
        } else if (e == 'p') {
          out += property;
          out += added;
        } else {
          out += "\\P";
          out += property.substr(2);
        }
        continue;
      }
      const char* cls = e == 's' || e == 'S'   ? kSpace
                        : e == 'w' || e == 'W' ? kWord.c_str()
                        : e == 'h' || e == 'H' ? kHex
                        : e == 'v'             ? kVerticalTab
                                               : nullptr;
      if (!cls) {
        out += c;
        out += e;
        continue;
      }
      const bool negated = e == 'S' || e == 'W' || e == 'H';
      if (class_depth > 0) {
        if (negated)
          where.fail(fmt::format("regex '{}': \\{} inside [...] is not supported", p, e));
        out += cls;
      } else {
        out += negated ? "[^" : "[";
        out += cls;
        out += ']';
      }
      continue;
    }
    if (c == '[' && class_depth > 0) {
      if (p.compare(i, sizeof kPosixSpace - 1, kPosixSpace) == 0) {
        out += kSpace;
        i += sizeof kPosixSpace - 2;
        continue;
      }
      if (p.compare(i, sizeof kPosixNotSpace - 1, kPosixNotSpace) == 0)
        where.fail(fmt::format("regex '{}': [:^space:] inside [...] is not supported", p));
    }
    if (c == '[') {
      ++class_depth;
      out += c;
      // A ']' right after '[' or '[^' is a literal.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (c == ']' && class_depth > 0) --class_depth;
    out += c;
  }
  return out;
}

}  // namespace

struct Regex::Code {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Code() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pattern, const io::JsonValue& where) : code_(new Code) {
  const std::string translated = oniguruma_to_pcre2(rewrite_class_intersections(pattern, where), where);
  int err = 0;
  PCRE2_SIZE err_offset = 0;
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                              PCRE2_UTF | PCRE2_UCP, &err, &err_offset, nullptr);
  if (!code_->code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    where.fail(fmt::format("regex '{}' does not compile: {} (at offset {})", pattern,
                           reinterpret_cast<const char*>(msg), err_offset));
  }
  code_->jit = pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() = default;

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view s) const {
  std::vector<std::pair<size_t, size_t>> out;
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> md(
      pcre2_match_data_create_from_pattern(code_->code, nullptr), pcre2_match_data_free);
  ABL_CHECK(md, "out of memory for regex match data");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(s.data());
  // The text was validated once; checking it again on every call would be quadratic.
  uint32_t options = PCRE2_NO_UTF_CHECK | (code_->jit ? 0 : PCRE2_NO_JIT);
  size_t pos = 0;
  while (pos <= s.size()) {
    int rc = pcre2_match(code_->code, subject, s.size(), pos, options, md.get(), nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      options |= PCRE2_NO_JIT;
      continue;
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof msg);
      abl::fail("regex match failed: {}", reinterpret_cast<const char*>(msg));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    out.emplace_back(ov[0], ov[1]);
    if (ov[1] > ov[0]) {
      pos = ov[1];
    } else {
      if (ov[1] >= s.size()) break;
      size_t len = 0;
      decode_utf8(s, ov[1], &len);
      pos = ov[1] + len;
    }
  }
  return out;
}

Pattern Pattern::from_json(const io::JsonValue& j) {
  Pattern p;
  if (auto lit = j.find("String")) {
    p.literal_ = lit->as_string();
    if (p.literal_.empty()) lit->fail("an empty pattern is not supported");
  } else if (auto re = j.find("Regex")) {
    p.regex_ = std::make_shared<const Regex>(re->as_string(), *re);
  } else {
    j.fail("pattern must be {\"String\": ...} or {\"Regex\": ...}");
  }
  return p;
}

std::vector<std::pair<size_t, size_t>> Pattern::find_all(std::string_view s) const {
  if (regex_) return regex_->find_all(s);
  std::vector<std::pair<size_t, size_t>> out;
  size_t pos = 0;
  while ((pos = s.find(literal_, pos)) != std::string_view::npos) {
    out.emplace_back(pos, pos + literal_.size());
    pos += literal_.size();
  }
  return out;
}

std::string replace_all(std::string_view s, const Pattern& pattern, std::string_view content) {
  std::string out;
  out.reserve(s.size());
  size_t prev = 0;
  for (const auto& [start, end] : pattern.find_all(s)) {
    out.append(s.substr(prev, start - prev));
    out.append(content);
    prev = end;
  }
  out.append(s.substr(prev));
  return out;
}

}  // namespace abl::text::tok
