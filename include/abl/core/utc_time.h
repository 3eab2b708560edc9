// The time of day as the output files and run records write it.
#pragma once
#include <string>

namespace abl {

// Now, UTC, ISO 8601: "2026-01-31T12:00:00Z".
std::string utc_now_iso8601();

}  // namespace abl
