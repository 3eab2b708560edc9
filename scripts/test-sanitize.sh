#!/usr/bin/env bash
# The unit and MPI tests again, built with AddressSanitizer and UBSan (CPU-only, in BUILD_DIR):
# any memory error, leak in our code or undefined behaviour fails the test that hit it. Warnings do
# not fail this build: GCC 12 reports false maybe-uninitialized ones inside std::regex and
# std::function under -O1 with the sanitizers; the release build keeps -Werror.
# usage: scripts/test-sanitize.sh BUILD_DIR [JOBS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-sanitize}
jobs=${2:-$(nproc)}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DABL_SANITIZE=ON -DABL_CUDA=OFF -DABL_NATIVE=OFF -DABL_WERROR=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" > /dev/null
cmake --build "$build" -j"$jobs"
# The unit tests and the fuzz corpora replayed, then the MPI tests.
# UB ends a test. Leaks are checked in the unit tests; not under MPI, where Open MPI's plugins
# (dlopen'ed and closed again at MPI_Finalize, so their stacks cannot even be named) keep
# allocations until exit. tests/sanitize.supp lists the libraries whose start-up allocations live
# until exit in the unit tests too.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitize.supp:print_suppressions=0"
cd "$build"
status=0
ASAN_OPTIONS="detect_leaks=1:detect_odr_violation=0" ctest --output-on-failure -j"$jobs" --timeout 1500 -L "unit|fuzz" || status=1
ASAN_OPTIONS="detect_leaks=0:detect_odr_violation=0" ctest --output-on-failure -j"$jobs" --timeout 1500 -L mpi || status=1
exit $status
