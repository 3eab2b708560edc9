// Terminal or log: decided once from stderr. Rates count from the first update's clock start
// (construction), so a resumed sweep reports the rate of this run, not of the stored trials.
#include "abl/core/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "abl/core/log.h"

namespace abl {

Progress::Progress(std::string label, int64_t total, std::string unit)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), start_(Clock::now()),
      last_print_(start_), terminal_(isatty(STDERR_FILENO) != 0), on_(log::enabled(log::Level::info)) {}

Progress::~Progress() {
  if (bar_open_) std::fputc('\n', stderr);
}

double Progress::interval_seconds() {
  const char* env = std::getenv("ABL_PROGRESS_INTERVAL");
  const double v = env ? std::atof(env) : 0.0;
  return v > 0 ? v : 30.0;
}

std::string Progress::duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const auto t = static_cast<int64_t>(s + 0.5);
  return t >= 3600 ? fmt::format("{}h{:02}m", t / 3600, t / 60 % 60) : fmt::format("{}m{:02}s", t / 60, t % 60);
}

std::string Progress::bar(double fraction, int width) {
  const double f = std::isfinite(fraction) ? std::fmin(std::fmax(fraction, 0.0), 1.0) : 0.0;
  const int full = static_cast<int>(f * width + 0.5);
  return "[" + std::string(static_cast<size_t>(full), '#') + std::string(static_cast<size_t>(width - full), '-') + "]";
}

std::string Progress::line(std::string_view label, std::string_view what, int64_t done, int64_t total,
                           std::string_view unit, double seconds, int64_t tokens, std::string_view note) {
  std::string s(label);
  if (!what.empty()) s += fmt::format(": {}", what);
  s += fmt::format(": {}/{} {}", done, total, unit);
  if (total > 0) s += fmt::format(" ({:.0f}%)", 100.0 * static_cast<double>(done) / static_cast<double>(total));
  if (seconds > 0 && done > 0) {
    const double rate = static_cast<double>(done) / seconds;
    s += fmt::format(", {:.0f} {}/h", rate * 3600.0, unit);
    if (tokens >= 0) s += fmt::format(", {:.0f} tokens/s", static_cast<double>(tokens) / seconds);
    s += fmt::format(", ETA {}", duration(static_cast<double>(total - done) / rate));
  }
  if (!note.empty()) s += fmt::format(" | {}", note);
  return s;
}

void Progress::update(int64_t done, int64_t tokens, std::string_view what, std::string_view note) {
  if (!on_) return;
  const auto now = Clock::now();
  const double since_print = std::chrono::duration<double>(now - last_print_).count();
  const bool last = done >= total_;
  const double secs = std::chrono::duration<double>(now - start_).count();
  if (terminal_) {
    if (printed_ && !last && since_print < 0.2) return;
    std::string text = line(label_, what, done, total_, unit_, secs, tokens, note);
    // One screen line, or the carriage return would redraw only the wrapped tail.
    winsize ws{};
    const size_t columns = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 120;
    if (columns > 24 && text.size() > columns - 24) text.resize(columns - 24);
    const double f = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1.0;
    // Clear to the end of the line: a shorter text must not leave the tail of a longer one.
    std::fprintf(stderr, "\r%s %s\x1b[K", bar(f, 20).c_str(), text.c_str());
    std::fflush(stderr);
    bar_open_ = !last;
    if (last) std::fputc('\n', stderr);
  } else {
    if (printed_ && !last && since_print < interval_seconds()) return;
    log::info("{}", line(label_, what, done, total_, unit_, secs, tokens, note));
  }
  printed_ = true;
  last_print_ = now;
}

}  // namespace abl
