// Exhaustive checks of the 16-bit float conversions: every one of the 65536 bit patterns of
// f16 and bf16, plus round-to-nearest-even at every midpoint between neighbouring values.
// Reference values are computed independently with ldexp, not with the code under test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "abl/core/dtype.h"

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
bool f16_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool bf16_is_nan(uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0; }

// The value of an f16 pattern from its definition.
double f16_reference(uint16_t h) {
  int sign = (h & 0x8000u) ? -1 : 1;
  int exp = (h >> 10) & 0x1f;
  int man = h & 0x3ff;
  if (exp == 0x1f) return man ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(man, -24);
  return sign * std::ldexp(1024 + man, exp - 25);
}

TEST(DType, NamesAndSizes) {
  EXPECT_EQ(abl::dtype_size(abl::DType::f32), 4u);
  EXPECT_EQ(abl::dtype_size(abl::DType::f16), 2u);
  EXPECT_EQ(abl::dtype_size(abl::DType::bf16), 2u);
  for (abl::DType t : {abl::DType::f32, abl::DType::f16, abl::DType::bf16}) {
    abl::DType back;
    ASSERT_TRUE(abl::parse_dtype(abl::dtype_name(t), &back));
    EXPECT_EQ(back, t);
  }
  abl::DType out;
  EXPECT_FALSE(abl::parse_dtype("f32", &out));  // the safetensors spelling is upper case
  EXPECT_FALSE(abl::parse_dtype("I8", &out));
  EXPECT_FALSE(abl::parse_dtype("", &out));
}

TEST(DType, F16ToF32IsExactForAllPatterns) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t h = static_cast<uint16_t>(i);
    float f = abl::f16_to_f32(h);
    double ref = f16_reference(h);
    if (f16_is_nan(h)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << i;
      EXPECT_EQ(std::signbit(f), (h & 0x8000u) != 0) << std::hex << i;
    } else {
      ASSERT_EQ(static_cast<double>(f), ref) << std::hex << i;
      EXPECT_EQ(std::signbit(f), (h & 0x8000u) != 0) << std::hex << i;  // -0 stays -0
    }
  }
}

TEST(DType, F16RoundTripsForAllPatterns) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t h = static_cast<uint16_t>(i);
    uint16_t back = abl::f32_to_f16(abl::f16_to_f32(h));
    if (f16_is_nan(h)) {
      ASSERT_TRUE(f16_is_nan(back)) << std::hex << i;
      EXPECT_EQ(back & 0x8000u, h & 0x8000u) << std::hex << i;
      EXPECT_EQ(back, h | 0x200u) << std::hex << i;  // payload kept, quiet bit set
    } else {
      ASSERT_EQ(back, h) << std::hex << i;
    }
  }
}

TEST(DType, Bf16ToF32IsExactAndRoundTripsForAllPatterns) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t h = static_cast<uint16_t>(i);
    float f = abl::bf16_to_f32(h);
    ASSERT_EQ(bits_of(f), i << 16) << std::hex << i;
    uint16_t back = abl::f32_to_bf16(f);
    if (bf16_is_nan(h)) {
      ASSERT_TRUE(bf16_is_nan(back)) << std::hex << i;
      EXPECT_EQ(back, h | 0x40u) << std::hex << i;
    } else {
      ASSERT_EQ(back, h) << std::hex << i;
    }
  }
}

// For every pair of neighbouring finite values a < b of the same sign, the exact midpoint
// rounds to the one with an even pattern, and the floats just beside it to the nearer one.
TEST(DType, F16RoundsToNearestEvenAtEveryMidpoint) {
  for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
    for (uint32_t m = 0; m < 0x7c00; ++m) {  // a = m, b = m + 1 (0x7c00 = inf included as b)
      uint16_t a = static_cast<uint16_t>(sign | m), b = static_cast<uint16_t>(sign | (m + 1));
      // Past the largest finite value (65504) the next step would be 65536, which rounds to inf.
      double vb = (m + 1 == 0x7c00) ? (sign ? -65536.0 : 65536.0) : f16_reference(b);
      double mid = (f16_reference(a) + vb) / 2;  // exact in double and in float
      float fmid = static_cast<float>(mid);
      ASSERT_EQ(static_cast<double>(fmid), mid);
      uint16_t even = (m % 2 == 0) ? a : b;
      ASSERT_EQ(abl::f32_to_f16(fmid), even) << std::hex << a;
      float toward_a = std::nextafter(fmid, sign ? INFINITY : -INFINITY);
      float toward_b = std::nextafter(fmid, sign ? -INFINITY : INFINITY);
      ASSERT_EQ(abl::f32_to_f16(toward_a), a) << std::hex << a;
      ASSERT_EQ(abl::f32_to_f16(toward_b), b) << std::hex << a;
    }
  }
}

TEST(DType, Bf16RoundsToNearestEvenAtEveryMidpoint) {
  for (uint32_t sign : {0u, 0x8000u}) {
    for (uint32_t m = 0; m < 0x7f80; ++m) {  // up to a = largest finite, b = inf
      uint32_t a = sign | m, b = sign | (m + 1);
      uint32_t mid = (a << 16) | 0x8000u;  // the f32 exactly halfway between a and b
      uint32_t even = (m % 2 == 0) ? a : b;
      ASSERT_EQ(abl::f32_to_bf16(float_of(mid)), even) << std::hex << a;
      ASSERT_EQ(abl::f32_to_bf16(float_of(mid - 1)), a) << std::hex << a;
      ASSERT_EQ(abl::f32_to_bf16(float_of(mid + 1)), b) << std::hex << a;
    }
  }
}

TEST(DType, SubnormalsAndZeros) {
  // f16 subnormals: smallest 2^-24, largest 1023 * 2^-24.
  EXPECT_EQ(abl::f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(abl::f32_to_f16(std::ldexp(1023.0f, -24)), 0x03ff);
  EXPECT_EQ(abl::f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);        // tie -> even (zero)
  EXPECT_EQ(abl::f32_to_f16(std::ldexp(3.0f, -26)), 0x0001);        // 0.75 ulp -> up
  EXPECT_EQ(abl::f32_to_f16(std::ldexp(1.0f, -26)), 0x0000);        // 0.25 ulp -> zero
  EXPECT_EQ(abl::f32_to_f16(-std::ldexp(1.0f, -24)), 0x8001);
  EXPECT_EQ(abl::f32_to_f16(std::ldexp(2047.0f, -25)), 0x0400);     // rounds up into the normals
  EXPECT_EQ(abl::f32_to_f16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(abl::f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(abl::f32_to_f16(0.0f), 0x0000);
  // bf16 keeps f32's exponent range: f32 subnormals map to bf16 subnormals.
  EXPECT_EQ(abl::f32_to_bf16(std::numeric_limits<float>::denorm_min()), 0x0000);  // below half
  EXPECT_EQ(abl::f32_to_bf16(float_of(0x00010000u)), 0x0001);
  EXPECT_EQ(abl::bf16_to_f32(0x0001), float_of(0x00010000u));
  EXPECT_EQ(abl::f32_to_bf16(-0.0f), 0x8000);
}

TEST(DType, OverflowGoesToInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(abl::f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(abl::f32_to_f16(65519.996f), 0x7bff);
  EXPECT_EQ(abl::f32_to_f16(65520.0f), 0x7c00);  // tie with an odd mantissa -> inf
  EXPECT_EQ(abl::f32_to_f16(1e6f), 0x7c00);
  EXPECT_EQ(abl::f32_to_f16(-1e6f), 0xfc00);
  EXPECT_EQ(abl::f32_to_f16(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(abl::f32_to_f16(inf), 0x7c00);
  EXPECT_EQ(abl::f32_to_f16(-inf), 0xfc00);
  EXPECT_EQ(abl::f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(abl::f32_to_bf16(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(abl::f32_to_bf16(inf), 0x7f80);
  EXPECT_EQ(abl::f32_to_bf16(-inf), 0xff80);
  EXPECT_EQ(abl::f32_to_bf16(float_of(0x7f7f7fffu)), 0x7f7f);  // just below the midpoint
}

TEST(DType, NanStaysNanFromF32) {
  // Payloads only in the low bits must not collapse into infinity.
  for (uint32_t u : {0x7f800001u, 0x7fc00000u, 0x7fffffffu, 0xff800001u, 0xffc00000u, 0x7f80ffffu}) {
    float f = float_of(u);
    ASSERT_TRUE(std::isnan(f));
    uint16_t h = abl::f32_to_f16(f);
    EXPECT_TRUE(f16_is_nan(h)) << std::hex << u;
    EXPECT_EQ((h & 0x8000u) != 0, (u >> 31) != 0) << std::hex << u;
    uint16_t b = abl::f32_to_bf16(f);
    EXPECT_TRUE(bf16_is_nan(b)) << std::hex << u;
    EXPECT_EQ((b & 0x8000u) != 0, (u >> 31) != 0) << std::hex << u;
  }
}

TEST(DType, BulkConversionsMatchScalarOnesAtAnyAlignment) {
  std::vector<float> values;
  for (uint32_t i = 0; i < 65536; i += 7) values.push_back(abl::bf16_to_f32(static_cast<uint16_t>(i)));
  values.push_back(1.0f / 3.0f);
  values.push_back(-65520.0f);
  const size_t n = values.size();
  for (abl::DType t : {abl::DType::f32, abl::DType::f16, abl::DType::bf16}) {
    const size_t es = abl::dtype_size(t);
    std::vector<unsigned char> buf(n * es + 1);
    unsigned char* odd = buf.data() + 1;  // deliberately misaligned
    abl::convert_from_f32(values.data(), t, odd, n);
    std::vector<float> back(n);
    abl::convert_to_f32(t, odd, back.data(), n);
    for (size_t i = 0; i < n; ++i) {
      float expect = values[i];
      if (t == abl::DType::f16) expect = abl::f16_to_f32(abl::f32_to_f16(values[i]));
      if (t == abl::DType::bf16) expect = abl::bf16_to_f32(abl::f32_to_bf16(values[i]));
      if (std::isnan(expect)) {
        ASSERT_TRUE(std::isnan(back[i])) << i;
      } else {
        ASSERT_EQ(bits_of(back[i]), bits_of(expect)) << abl::dtype_name(t) << " " << i;
      }
    }
  }
}

}  // namespace
