// The process-wide MPI runtime of the distributed tests (configured in main.cpp).
#pragma once
#include "abl/dist/runtime.h"

namespace abl::testing {
dist::Runtime& runtime();
}  // namespace abl::testing
