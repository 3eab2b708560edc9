// Test helpers: a second, deliberately naive safetensors encoder (so tests can build files the
// library writer would refuse: odd dtypes, unpadded headers, corrupt headers) and error checks.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "abl/core/error.h"
#include "common/error_of.h"

namespace abl::testing {

struct RawTensor {
  std::string name;
  std::string dtype;  // any string, e.g. "I8"
  std::vector<int64_t> shape;
  std::string bytes;
};

// 8-byte little-endian length + header text + data.
inline std::string encode_raw(const std::string& header, const std::string& data) {
  uint64_t n = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

// Tensors in the given order; `pad` pads the header with spaces to a multiple of 8.
inline std::string encode_safetensors(const std::vector<RawTensor>& tensors, bool pad = true,
                                      const nlohmann::json& metadata = nullptr) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.is_null()) header["__metadata__"] = metadata;
  std::string data;
  for (const RawTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data += t.bytes;
  }
  std::string text = header.dump();
  if (pad) text.append((8 - text.size() % 8) % 8, ' ');
  return encode_raw(text, data);
}

template <typename T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

inline ::testing::AssertionResult contains_all(const std::string& msg,
                                               std::initializer_list<std::string> parts) {
  for (const std::string& p : parts) {
    if (msg.find(p) == std::string::npos) {
      return ::testing::AssertionFailure() << "message \"" << msg << "\" lacks \"" << p << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace abl::testing

// The statement throws abl::Error and its message contains every listed substring.
#define EXPECT_ABL_ERROR(stmt, ...) \
  EXPECT_TRUE(::abl::testing::contains_all(::abl::testing::thrown_error_of([&] { stmt; }), {__VA_ARGS__}))
