// SHA-256 (FIPS 180-4): a streaming hasher and a file helper that reads in chunks. On x86 CPUs
// with the SHA extensions the rounds run on them (several times faster), else portably.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace abl {

class Sha256 {
 public:
  Sha256();
  // Feed more bytes; any split of the message gives the same digest.
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // The 32-byte digest. Finishes the hash: call once, then reset() before hashing again.
  std::array<uint8_t, 32> digest();
  // The digest as 64 lowercase hex characters (as sha256sum prints it).
  std::string hex_digest();
  void reset();

 private:
  void block(const uint8_t* p);                       // the portable rounds
  void blocks(const uint8_t* p, size_t nblocks);      // SHA-NI when the CPU has it, else block()
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_;
  size_t buf_len_ = 0;
  uint64_t total_ = 0;  // bytes fed so far
  bool finished_ = false;
};

namespace detail {
// Whether this CPU has the x86 SHA extensions, which Sha256 then uses; tests switch them off to
// check the portable rounds too (on only takes effect where available). Not thread-safe.
bool sha256_hardware_available();
void sha256_use_hardware(bool on);
}  // namespace detail

// Hex SHA-256 of a byte string.
std::string sha256_hex(std::string_view s);
// Hex SHA-256 of a file's contents, read in chunks; throws abl::Error if it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace abl
