// The one rule of a multi-rank job: every decision that steers a collective (skip a phase, reuse a
// file, stop, the batch plan, the topology) is taken once, on rank 0, and broadcast — or agreed
// with an all-reduce — never taken by each rank from its own look at files, clocks or the
// environment. These helpers are the only ways the app takes such decisions
// (docs/architecture.md, "Collective decisions").
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "abl/parallel/comm.h"

namespace abl::parallel {

// Runs `decide` on rank 0 only and returns its result on every rank. If it throws abl::Error on
// rank 0, every rank throws an abl::Error with the same message, so an input error found by rank 0
// fails the whole job at once and the same way (exit status 1 everywhere, no MPI_Abort needed).
bool root_decides(Comm& comm, const std::function<bool()>& decide);
int64_t root_value(Comm& comm, const std::function<int64_t()>& value);
std::string root_string(Comm& comm, const std::function<std::string()>& value);
std::vector<std::string> root_strings(Comm& comm, const std::function<std::vector<std::string>()>& value);

// Every rank passes its own verdict; if any rank's is false, every rank throws abl::Error with the
// message of the lowest failing rank ("rank R: ..." on more than one rank).
void agree_all(Comm& comm, bool ok, const std::string& message);

// The smallest and largest of every rank's value.
int64_t all_min(Comm& comm, int64_t value);
int64_t all_max(Comm& comm, int64_t value);

// The bytes of a small file as rank 0 read them (inputs every rank needs: grids, prompt sets,
// marker lists), so ranks never act on different versions of one file; errors name the file.
std::string read_file_on_root(Comm& comm, const std::string& path);

}  // namespace abl::parallel
