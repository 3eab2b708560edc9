// The message of the abl::Error that `f` throws, or "" when it throws none; any other exception
// is a test failure (every error a user can cause must be an abl::Error naming what is wrong).
#pragma once
#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>

#include "abl/core/error.h"

namespace abl::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const abl::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-abl exception: " << e.what();
    return "";
  }
  return "";
}

// The same, where `f` must throw: no abl::Error is a test failure too.
inline std::string thrown_error_of(const std::function<void()>& f) {
  bool thrown = true;
  const std::string message = error_of([&] {
    f();
    thrown = false;
  });
  if (!thrown) ADD_FAILURE() << "no abl::Error thrown";
  return message;
}

}  // namespace abl::testing
