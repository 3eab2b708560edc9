// Progress of a long phase, printed by the ranks that log (rank 0 unless --log-all-ranks): on a
// terminal one bar redrawn in place (at most 5 times a second); otherwise — Slurm logs — one
// timestamped line per interval (default 30 s, ABL_PROGRESS_INTERVAL), the first update always,
// and never a carriage return. --quiet silences it. The phases' one-line summaries stay
// ordinary log lines.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace abl {

class Progress {
 public:
  // `unit` names what `done` counts ("trials", "prompts"); `total` of them are expected.
  Progress(std::string label, int64_t total, std::string unit);
  ~Progress();  // ends a terminal bar's line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // done: units finished so far in this run; tokens: tokens processed so far (for tokens/s), or
  // -1; what: where it is ("batch 3", printed after the label); note: appended after a '|'.
  void update(int64_t done, int64_t tokens = -1, std::string_view what = "", std::string_view note = "");

  // The text of one report (no timestamp), e.g.
  // "sweep: batch 3: 32/200 trials (16%), 10684 trials/h, 26105 tokens/s, ETA 0m56s | front: ...".
  static std::string line(std::string_view label, std::string_view what, int64_t done, int64_t total,
                          std::string_view unit, double seconds, int64_t tokens, std::string_view note);
  // "[########------------]" of `width` cells for a fraction in [0, 1].
  static std::string bar(double fraction, int width);
  // "1h02m", "3m07s"; "?" for a negative or infinite value.
  static std::string duration(double seconds);
  static double interval_seconds();  // ABL_PROGRESS_INTERVAL, default 30

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_, unit_;
  int64_t total_;
  Clock::time_point start_, last_print_;
  bool printed_ = false, terminal_, on_;
  bool bar_open_ = false;
};

}  // namespace abl
