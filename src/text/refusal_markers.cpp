// Marker matching as the reference tool does it: substring search on a normalised response.
// Lower-casing uses utf8proc so that "SORRY" and "Sorry" match, and so do non-ASCII markers.
#include "abl/text/refusal_markers.h"

#include <fstream>
#include <sstream>

#include <utf8proc.h>

#include "abl/core/error.h"
#include "abl/core/utf8.h"
#include "abl/text/default_refusal_markers.h"

namespace abl::text {

RefusalMarkers::RefusalMarkers(std::vector<std::string> markers) {
  for (const std::string& m : markers) {
    std::string n = normalize(m);
    if (!n.empty()) markers_.push_back(std::move(n));
  }
}

RefusalMarkers RefusalMarkers::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ABL_CHECK(in.good(), "cannot open refusal marker file {}", path);
  std::stringstream text;
  text << in.rdbuf();
  return from_text(text.str(), path);
}

RefusalMarkers RefusalMarkers::from_text(std::string_view text, const std::string& name) {
  std::vector<std::string> markers;
  int lineno = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(pos, end - pos));
    pos = end + 1;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ABL_CHECK(valid_utf8(line), "{}:{}: invalid UTF-8", name, lineno);
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '#') continue;
    size_t e = line.find_last_not_of(" \t");
    markers.push_back(line.substr(b, e - b + 1));
  }
  ABL_CHECK(!markers.empty(), "{}: no refusal markers", name);
  return RefusalMarkers(std::move(markers));
}

RefusalMarkers RefusalMarkers::builtin() {
  return from_text(kDefaultRefusalMarkers, "built-in refusal markers (inputs/refusal_markers.txt)");
}

RefusalMarkers RefusalMarkers::from_option(const std::string& value) {
  return value == "builtin" ? builtin() : from_file(value);
}

std::string RefusalMarkers::normalize(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(text.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t len = utf8proc_iterate(p, left, &cp);
    if (len <= 0) {  // invalid byte: keep it, skip one
      out += static_cast<char>(*p);
      ++p;
      --left;
      continue;
    }
    p += len;
    left -= len;
    if (cp == '*') continue;
    if (cp == 0x2019) cp = '\'';
    cp = utf8proc_tolower(cp);
    utf8proc_uint8_t buf[4];
    utf8proc_ssize_t n = utf8proc_encode_char(cp, buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
  }
  return out;
}

std::string RefusalMarkers::find(std::string_view response) const {
  const std::string n = normalize(response);
  for (const std::string& m : markers_) {
    if (n.find(m) != std::string::npos) return m;
  }
  return "";
}

bool RefusalMarkers::is_refusal(std::string_view response) const {
  if (response.find_first_not_of(" \t\r\n") == std::string_view::npos) return true;
  return !find(response).empty();
}

}  // namespace abl::text
