// What every fuzz target shares: the contract (an input may only fail as abl::Error; anything
// else — another exception, a crash, a sanitizer report, a broken property — is a finding) and
// a scratch folder for the parsers that read files. One source per surface defines
// LLVMFuzzerTestOneInput; libFuzzer drives it under ABL_FUZZ, replay_main.cpp everywhere else.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>

#include "abl/core/error.h"
#include "abl/core/log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace abl::fuzz {

// A broken property: print it and abort, so that libFuzzer saves the input as a crash.
[[noreturn]] inline void violated(const char* what, const char* file, int line,
                                  const std::string& detail = "") {
  std::fprintf(stderr, "fuzz property violated at %s:%d: %s%s%s\n", file, line, what,
               detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}
// ABL_FUZZ_CHECK(cond, detail): `detail` (a string, only built on failure) says what was seen.
#define ABL_FUZZ_CHECK(cond, detail)                                        \
  do {                                                                      \
    if (!(cond)) ::abl::fuzz::violated(#cond, __FILE__, __LINE__, (detail)); \
  } while (0)

// Runs one input through `body`: abl::Error is the parsers' only legitimate way to refuse an
// input; any other exception aborts with its type and message.
template <typename Body>
int run_input(Body&& body) {
  try {
    body();
  } catch (const abl::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "uncaught exception that is not abl::Error: %s: %s\n", typeid(e).name(),
                 e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "uncaught exception of a non-std type\n");
    std::abort();
  }
  return 0;
}

// Warnings for odd but accepted inputs would flood the fuzzer's output; errors still show.
inline void quiet_logs() {
  log::Config cfg;
  cfg.level = log::Level::error;
  log::configure(cfg);
}

// A folder of this process (on tmpfs when there is one), removed at exit; parsers that take
// paths read the input from a file in it.
class Scratch {
 public:
  Scratch() {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::is_directory("/dev/shm", ec)
                                     ? std::filesystem::path("/dev/shm")
                                     : std::filesystem::temp_directory_path();
    dir_ = base / ("abl-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::string write(const std::string& name, std::string_view content) const {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      std::fprintf(stderr, "fuzz scratch: cannot write %s\n", path.c_str());
      std::abort();
    }
    return path;
  }

 private:
  std::filesystem::path dir_;
};

// One per process: a function-local static, created on first use.
inline const Scratch& scratch() {
  static const Scratch s;
  return s;
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace abl::fuzz
