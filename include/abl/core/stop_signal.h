// A graceful stop on SIGTERM or SIGUSR1 (Slurm's preemption and `--signal` warnings): the handler
// only records the signal; long loops poll stop_requested() at a safe point (the sweep after each
// batch), finish what they hold and exit with kExitResumable, so a requeued job resumes.
#pragma once

namespace abl {

// Exit status of a run stopped by a signal at a safe point: its outputs are complete up to that
// point and running the same command again continues it (EX_TEMPFAIL of sysexits.h).
inline constexpr int kExitResumable = 75;

// Installs the handlers for SIGTERM and SIGUSR1 (idempotent).
void install_stop_handlers();
bool stop_requested();
int stop_signal();  // the signal received, 0 if none
// Forgets a received signal (tests).
void clear_stop_request();

}  // namespace abl
