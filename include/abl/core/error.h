// Errors: one exception type for everything a user or a file can get wrong.
// Messages name the file, line, tensor or option at fault; the app prints them once and exits.
#pragma once
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace abl {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// An error that every rank of the job throws at the same point with the same message: a decision
// or check taken once and broadcast (dist/agree.h). The job then ends in order (every rank
// finalizes, exit status 1, the message printed once) instead of with MPI_Abort.
class AgreedError : public Error {
 public:
  using Error::Error;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace abl

// Checks a condition that depends on input; throws abl::Error with a formatted message.
#define ABL_CHECK(cond, ...)              \
  do {                                    \
    if (!(cond)) ::abl::fail(__VA_ARGS__); \
  } while (0)
