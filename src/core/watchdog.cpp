// The hang watchdog and the fault hooks (watchdog.h).
#include "abl/core/watchdog.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "abl/core/error.h"

namespace abl::watchdog {
namespace {

using Clock = std::chrono::steady_clock;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

std::atomic<const char*> g_where{"start-up"};
std::atomic<int64_t> g_since{now_ns()};
std::mutex g_phase_mutex;
std::string g_phase;

std::atomic<double> g_timeout{0.0};
std::once_flag g_thread_once;

// Fault hooks.
int g_fault_delay_ms = 0;
std::mt19937_64 g_fault_rng;
int g_hang_rank = -1;
std::string g_hang_where;
int g_fail_rank = -1;
std::string g_fail_where;
bool g_failed = false;
int g_rank = 0;

[[noreturn]] void hang_forever(const char* where) {
  std::fprintf(stderr, "[rank %d] ABL_FAULT_HANG: stopping forever at %s\n", g_rank, where);
  std::fflush(stderr);
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

bool starts_with(const char* where, const std::string& prefix) {
  return !prefix.empty() && std::strncmp(where, prefix.c_str(), prefix.size()) == 0;
}

void set_place(const char* where) {
  g_where.store(where, std::memory_order_relaxed);
  g_since.store(now_ns(), std::memory_order_relaxed);
}

}  // namespace

void mark(const char* where) {
  set_place(where);
  if (g_hang_rank == g_rank && starts_with(where, g_hang_where)) hang_forever(where);
  if (g_fail_rank == g_rank && !g_failed && starts_with(where, g_fail_where)) {
    g_failed = true;
    fail("ABL_FAULT_FAIL: an error injected on rank {} at {}", g_rank, where);
  }
}

Scope::Scope(const char* where) : previous_(g_where.load(std::memory_order_relaxed)) { mark(where); }
Scope::~Scope() { set_place(previous_); }  // no fault hooks: a destructor must not throw

void set_phase(std::string phase) {
  std::lock_guard<std::mutex> lock(g_phase_mutex);
  g_phase = std::move(phase);
}

std::string where_now() {
  const double secs = static_cast<double>(now_ns() - g_since.load(std::memory_order_relaxed)) * 1e-9;
  std::string phase;
  {
    std::lock_guard<std::mutex> lock(g_phase_mutex);
    phase = g_phase;
  }
  return fmt::format("in {} for {:.0f} s{}", g_where.load(std::memory_order_relaxed), secs,
                     phase.empty() ? std::string() : fmt::format(" (phase: {})", phase));
}

double timeout_seconds() { return g_timeout.load(); }

void start(double seconds, std::function<void(const std::string&)> fire, double grace) {
  g_timeout.store(seconds > 0 ? seconds : 0.0);
  if (seconds <= 0) return;
  std::call_once(g_thread_once, [fire = std::move(fire), grace] {
    std::thread([fire, grace] {
      for (;;) {
        const double timeout = g_timeout.load();
        const double poll = timeout > 0 ? std::clamp(timeout / 10.0, 0.05, 5.0) : 1.0;
        std::this_thread::sleep_for(std::chrono::duration<double>(poll));
        if (timeout <= 0) continue;
        const double idle = static_cast<double>(now_ns() - g_since.load(std::memory_order_relaxed)) * 1e-9;
        if (idle < timeout) continue;
        char host[256] = {0};
        gethostname(host, sizeof host - 1);
        const std::string report =
            fmt::format("[rank {} on {}] hang watchdog: no progress for {:.0f} s (--hang-timeout {:g}); this rank is {}",
                        g_rank, host, idle, timeout, where_now());
        std::fprintf(stderr, "%s\n", report.c_str());
        std::fflush(stderr);
        std::this_thread::sleep_for(std::chrono::duration<double>(grace));
        fire(report);
        std::_Exit(1);  // if `fire` returned
      }
    }).detach();
  });
}

void configure_faults(int rank) {
  g_rank = rank;
  if (const char* v = std::getenv("ABL_FAULT_DELAY_MS"); v && *v) {
    char* end = nullptr;
    const long ms = std::strtol(v, &end, 10);
    ABL_CHECK(end && *end == '\0' && ms >= 0, "ABL_FAULT_DELAY_MS must be a number of milliseconds, got '{}'", v);
    g_fault_delay_ms = static_cast<int>(ms);
    uint64_t seed = 0;
    if (const char* s = std::getenv("ABL_FAULT_SEED"); s && *s) seed = std::strtoull(s, nullptr, 10);
    g_fault_rng.seed(seed * 1000003ull + static_cast<uint64_t>(rank) + 1);
  }
  if (const char* v = std::getenv("ABL_FAULT_HANG"); v && *v) {
    const char* colon = std::strchr(v, ':');
    ABL_CHECK(colon && colon != v && colon[1] != '\0', "ABL_FAULT_HANG must be RANK:WHERE, got '{}'", v);
    g_hang_rank = std::atoi(std::string(v, colon).c_str());
    g_hang_where = colon + 1;
  }
  if (const char* v = std::getenv("ABL_FAULT_FAIL"); v && *v) {
    const char* colon = std::strchr(v, ':');
    ABL_CHECK(colon && colon != v && colon[1] != '\0', "ABL_FAULT_FAIL must be RANK:WHERE, got '{}'", v);
    g_fail_rank = std::atoi(std::string(v, colon).c_str());
    g_fail_where = colon + 1;
  }
}

void fault_delay() {
  if (g_fault_delay_ms <= 0) return;
  std::uniform_int_distribution<int> ms(0, g_fault_delay_ms);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms(g_fault_rng)));
}

}  // namespace abl::watchdog
