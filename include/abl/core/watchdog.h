// The hang watchdog (--hang-timeout): every rank records where it is — the collective, HDF5 call or
// pass it is in, and the phase — whenever that changes; a thread ends the whole job when a rank has
// stayed in one place longer than the timeout, so a hang that no test found costs minutes of an
// allocation, not all of it. Marking is lock-free (two atomic stores) and cheap enough for every
// collective.
//
// Fault hooks for the fault-injection tests, read once from the environment:
//   ABL_FAULT_DELAY_MS=N    sleep a random 0..N ms (seeded by rank and ABL_FAULT_SEED) before
//                           every collective, so ranks reach collectives in random order;
//   ABL_FAULT_HANG=R:WHERE  rank R stops forever the first time it marks a place whose name
//                           starts with WHERE (e.g. "1:MPI_Allreduce"): a hang for the watchdog;
//   ABL_FAULT_FAIL=R:WHERE  rank R throws an abl::Error (once) where it would mark such a place:
//                           an error on one rank alone, which must end the job (MPI_Abort).
#pragma once
#include <functional>
#include <string>

namespace abl::watchdog {

// Records that this process is now at `where` (a string literal or other static string). Throws
// only under ABL_FAULT_FAIL.
void mark(const char* where);

// Marks `where` for the lifetime of the scope and the previous place again when it ends.
class Scope {
 public:
  explicit Scope(const char* where);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* previous_;
};

// The phase this rank is in ("sweep batch 3"), shown when the watchdog fires.
void set_phase(std::string phase);

// What this rank reports when the watchdog fires: where it is and for how long, and the phase.
std::string where_now();

// Starts the watchdog thread (once; later calls change the timeout). `seconds` <= 0 disables it.
// `fire` receives the report and must end the job (MPI_Abort); the watchdog waits `grace` seconds
// after printing before calling it, so that the other ranks' watchdogs print where they are too.
void start(double seconds, std::function<void(const std::string& report)> fire, double grace = 5.0);
double timeout_seconds();  // 0 when not running

// Fault hooks (see the file comment). `rank` seeds the delays; call once at start-up.
void configure_faults(int rank);
void fault_delay();  // before a collective: sleeps when ABL_FAULT_DELAY_MS is set

}  // namespace abl::watchdog
