// INI parsing kept deliberately small: no escapes or continuation lines, values are trimmed,
// and a value may be wrapped in double quotes to keep leading/trailing spaces.
#include "abl/io/ini.h"

#include <fstream>

#include "abl/core/error.h"

namespace abl::io {
namespace {

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

}  // namespace

std::vector<IniEntry> read_ini(const std::string& path) {
  std::ifstream in(path);
  ABL_CHECK(in.good(), "cannot open config file {}", path);
  std::vector<IniEntry> out;
  std::string section, raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    std::string s = trim(raw);
    if (s.empty() || s[0] == '#' || s[0] == ';') continue;
    if (s[0] == '[') {
      ABL_CHECK(s.back() == ']', "{}:{}: malformed section header '{}'", path, line, s);
      section = trim(s.substr(1, s.size() - 2));
      ABL_CHECK(!section.empty(), "{}:{}: empty section name", path, line);
      continue;
    }
    size_t eq = s.find('=');
    ABL_CHECK(eq != std::string::npos, "{}:{}: expected 'key = value', got '{}'", path, line, s);
    IniEntry e;
    e.section = section;
    e.key = trim(s.substr(0, eq));
    e.value = trim(s.substr(eq + 1));
    e.line = line;
    ABL_CHECK(!e.key.empty(), "{}:{}: missing key before '='", path, line);
    if (e.value.size() >= 2 && e.value.front() == '"' && e.value.back() == '"') {
      e.value = e.value.substr(1, e.value.size() - 2);
    }
    out.push_back(std::move(e));
  }
  ABL_CHECK(!in.bad(), "error reading config file {}", path);
  return out;
}

}  // namespace abl::io
