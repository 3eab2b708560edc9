#include <gtest/gtest.h>

#include "abl/core/utf8.h"

TEST(Utf8, AcceptsWellFormed) {
  EXPECT_TRUE(abl::valid_utf8(""));
  EXPECT_TRUE(abl::valid_utf8("plain ascii"));
  EXPECT_TRUE(abl::valid_utf8("caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"));
}

TEST(Utf8, RejectsMalformedAndReportsOffset) {
  size_t off = 99;
  EXPECT_FALSE(abl::valid_utf8("ab\x80", &off));
  EXPECT_EQ(off, 2u);
  EXPECT_FALSE(abl::valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(abl::valid_utf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(abl::valid_utf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(abl::valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(abl::valid_utf8("\xF5\x80\x80\x80"));
  EXPECT_FALSE(abl::valid_utf8("x\xE4\xB8", &off));   // truncated
  EXPECT_EQ(off, 1u);
  EXPECT_FALSE(abl::valid_utf8("\xFF"));
}
