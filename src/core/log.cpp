// Logger state is set once at start-up (after the rank is known) and read afterwards.
#include "abl/core/log.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "abl/core/error.h"

namespace abl::log {
namespace {

struct State {
  Config cfg;
  bool timestamps = !isatty(STDERR_FILENO);
  std::mutex mu;
};

State& state() {
  static State s;
  return s;
}

const char* level_name(Level l) {
  switch (l) {
    case Level::error: return "error";
    case Level::warn: return "warn";
    case Level::info: return "info";
    case Level::debug: return "debug";
  }
  return "?";
}

}  // namespace

void configure(const Config& cfg) { state().cfg = cfg; }
const Config& config() { return state().cfg; }

Level parse_level(std::string_view name) {
  if (name == "error") return Level::error;
  if (name == "warn" || name == "warning") return Level::warn;
  if (name == "info") return Level::info;
  if (name == "debug") return Level::debug;
  fail("invalid log level '{}' (expected error, warn, info or debug)", name);
}

bool enabled(Level lvl) {
  const Config& c = state().cfg;
  if (c.quiet && lvl > Level::warn) return false;
  if (lvl > c.level) return false;
  // Errors are printed by every rank: a failure on rank 3 must not vanish.
  return c.all_ranks || c.rank == 0 || lvl == Level::error;
}

void write(Level lvl, std::string_view msg) {
  State& s = state();
  std::string prefix;
  if (s.timestamps) {
    auto now = std::chrono::system_clock::now();
    std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    prefix = fmt::format("{} ", buf);
  }
  if (s.cfg.world > 1 || s.cfg.all_ranks) prefix += fmt::format("[rank {}] ", s.cfg.rank);
  if (lvl != Level::info) prefix += fmt::format("{}: ", level_name(lvl));
  std::lock_guard<std::mutex> lock(s.mu);
  std::fprintf(stderr, "%s%.*s\n", prefix.c_str(), static_cast<int>(msg.size()), msg.data());
  std::fflush(stderr);
}

}  // namespace abl::log
