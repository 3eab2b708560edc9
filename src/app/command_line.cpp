#include "abl/app/command_line.h"

#include <string_view>

namespace abl::app {
namespace {

std::string& recorded() {
  static std::string line;
  return line;
}

bool safe_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
}

}  // namespace

std::string shell_quote(const std::string& arg) {
  bool safe = !arg.empty();
  for (char c : arg) safe = safe && safe_char(c);
  if (safe) return arg;
  std::string q = "'";
  for (char c : arg) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

void record_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) line += ' ';
    line += shell_quote(argv[i]);
  }
  recorded() = line;
}

const std::string& command_line() { return recorded(); }

}  // namespace abl::app
