#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "abl/core/error.h"
#include "abl/core/sha256.h"

// Every test runs with the portable rounds and, where the CPU has them, the SHA extensions.
class Sha256 : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam() && !abl::detail::sha256_hardware_available()) GTEST_SKIP() << "no SHA extensions on this CPU";
    abl::detail::sha256_use_hardware(GetParam());
  }
  void TearDown() override { abl::detail::sha256_use_hardware(true); }
};

INSTANTIATE_TEST_SUITE_P(Rounds, Sha256, ::testing::Bool(),
                         [](const auto& i) { return std::string(i.param ? "hardware" : "portable"); });

// FIPS 180-4 / NIST CSRC example vectors for SHA-256.
TEST_P(Sha256, FipsVectors) {
  EXPECT_EQ(abl::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(abl::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(abl::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string million(1000000, 'a');
  EXPECT_EQ(abl::sha256_hex(million), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_P(Sha256, StreamingSplitsGiveTheSameDigest) {
  std::string msg;
  for (int i = 0; i < 300; ++i) msg.push_back(char(i * 7 + 3));
  const std::string whole = abl::sha256_hex(msg);
  // Every split point, including around the 55/56/64-byte padding edges.
  for (size_t cut = 0; cut <= msg.size(); cut += 1) {
    abl::Sha256 h;
    h.update(msg.substr(0, cut));
    h.update(msg.substr(cut));
    ASSERT_EQ(h.hex_digest(), whole) << "cut at " << cut;
  }
  // One-byte feeds of the million 'a'.
  abl::Sha256 h;
  for (int i = 0; i < 1000000; ++i) h.update("a", 1);
  EXPECT_EQ(h.hex_digest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // reset() starts a new message.
  h.reset();
  h.update("abc");
  EXPECT_EQ(h.hex_digest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_P(Sha256, PaddingEdgeLengths) {
  // Lengths 55, 56, 63, 64 and 65 of 'a' (sha256sum's values).
  EXPECT_EQ(abl::sha256_hex(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(abl::sha256_hex(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(abl::sha256_hex(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST_P(Sha256, FileHelperReadsInChunks) {
  const auto dir = std::filesystem::temp_directory_path() / ("abl_test_sha256_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / "blob.bin").string();
  std::string data(3 * 1024 * 1024 + 17, '\0');  // spans several 1 MiB chunks
  for (size_t i = 0; i < data.size(); ++i) data[i] = char((i * 2654435761u) >> 13);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(data.data(), std::streamsize(data.size()));
  }
  EXPECT_EQ(abl::sha256_file(path), abl::sha256_hex(data));
  EXPECT_THROW(abl::sha256_file((dir / "missing").string()), abl::Error);
  std::filesystem::remove_all(dir);
}

// The two round implementations agree on messages of every length up to a few blocks.
TEST(Sha256Rounds, HardwareAndPortableAgree) {
  if (!abl::detail::sha256_hardware_available()) GTEST_SKIP() << "no SHA extensions on this CPU";
  std::string msg;
  uint32_t x = 12345;
  for (size_t len = 0; len < 300; ++len) {
    abl::detail::sha256_use_hardware(false);
    const std::string portable = abl::sha256_hex(msg);
    abl::detail::sha256_use_hardware(true);
    ASSERT_EQ(abl::sha256_hex(msg), portable) << "length " << len;
    x = x * 1664525u + 1013904223u;
    msg.push_back(static_cast<char>(x >> 24));
  }
}
