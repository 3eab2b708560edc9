// Logging to stderr with a rank prefix: rank 0 only unless all ranks are asked for,
// timestamps when stderr is not a terminal (Slurm logs), a level threshold.
#pragma once
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace abl::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3 };

struct Config {
  int rank = 0;
  int world = 1;
  bool all_ranks = false;
  Level level = Level::info;
  bool quiet = false;  // only warnings and errors
};

void configure(const Config& cfg);
const Config& config();
Level parse_level(std::string_view name);  // throws abl::Error naming the value
bool enabled(Level lvl);
void write(Level lvl, std::string_view msg);

template <typename... A>
void error(fmt::format_string<A...> f, A&&... a) {
  if (enabled(Level::error)) write(Level::error, fmt::format(f, std::forward<A>(a)...));
}
template <typename... A>
void warn(fmt::format_string<A...> f, A&&... a) {
  if (enabled(Level::warn)) write(Level::warn, fmt::format(f, std::forward<A>(a)...));
}
template <typename... A>
void info(fmt::format_string<A...> f, A&&... a) {
  if (enabled(Level::info)) write(Level::info, fmt::format(f, std::forward<A>(a)...));
}
template <typename... A>
void debug(fmt::format_string<A...> f, A&&... a) {
  if (enabled(Level::debug)) write(Level::debug, fmt::format(f, std::forward<A>(a)...));
}

}  // namespace abl::log
