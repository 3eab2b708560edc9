// Reader for INI config files (`[section]`, `key = value`, `#`/`;` comments).
// Every entry keeps its line number so that errors can point at FILE:LINE.
#pragma once
#include <string>
#include <vector>

namespace abl::io {

struct IniEntry {
  std::string section;  // "" before the first [section]
  std::string key;
  std::string value;
  int line = 0;
};

// Throws abl::Error naming the file and line for unreadable files and malformed lines.
std::vector<IniEntry> read_ini(const std::string& path);

}  // namespace abl::io
