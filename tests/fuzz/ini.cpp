// Fuzz target: INI config files (read_ini). An accepted file gives entries with a key, trimmed
// keys and values, and line numbers that increase from 1.
#include "abl/io/ini.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  abl::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = abl::fuzz::scratch().write("config.ini", abl::fuzz::as_text(data, size));
  return abl::fuzz::run_input([&] {
    int last_line = 0;
    for (const abl::io::IniEntry& e : abl::io::read_ini(path)) {
      ABL_FUZZ_CHECK(!e.key.empty() && e.key.find('=') == std::string::npos, e.key);
      ABL_FUZZ_CHECK(e.line > last_line, e.key);
      const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
      ABL_FUZZ_CHECK(!space(e.key.front()) && !space(e.key.back()), e.key);
      ABL_FUZZ_CHECK(e.section.find('\n') == std::string::npos, e.section);
      last_line = e.line;
    }
  });
}
