// Async-signal-safe: the handler stores into a lock-free atomic and nothing else.
#include "abl/core/stop_signal.h"

#include <atomic>
#include <csignal>

namespace abl {
namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the stop flag must be lock-free for a signal handler");

extern "C" void on_stop_signal(int sig) { g_signal.store(sig, std::memory_order_relaxed); }

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
}

bool stop_requested() { return g_signal.load(std::memory_order_relaxed) != 0; }
int stop_signal() { return g_signal.load(std::memory_order_relaxed); }
void clear_stop_request() { g_signal.store(0, std::memory_order_relaxed); }

}  // namespace abl
