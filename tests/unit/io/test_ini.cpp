#include <gtest/gtest.h>

#include "abl/core/error.h"
#include "abl/io/ini.h"
#include "common/temp_dir.h"

using abl::io::read_ini;

TEST(Ini, SectionsKeysCommentsAndQuotes) {
  abl::testing::TempDir dir;
  auto path = dir.write("a.ini",
                        "# comment\n"
                        "top = 1\n"
                        "[model]\n"
                        "  chat-template =  chatml  \n"
                        "; other comment\n\n"
                        "[ sweep ]\r\n"
                        "system_prompt = \"  spaced  \"\n");
  auto e = read_ini(path);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].section, "");
  EXPECT_EQ(e[0].key, "top");
  EXPECT_EQ(e[0].value, "1");
  EXPECT_EQ(e[0].line, 2);
  EXPECT_EQ(e[1].section, "model");
  EXPECT_EQ(e[1].key, "chat-template");
  EXPECT_EQ(e[1].value, "chatml");
  EXPECT_EQ(e[2].section, "sweep");
  EXPECT_EQ(e[2].value, "  spaced  ");
  EXPECT_EQ(e[2].line, 8);
}

TEST(Ini, MalformedLinesNameFileAndLine) {
  abl::testing::TempDir dir;
  auto path = dir.write("bad.ini", "[model]\nthis is not a key value\n");
  try {
    read_ini(path);
    FAIL() << "expected an error";
  } catch (const abl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.ini:2"), std::string::npos) << e.what();
  }
  auto path2 = dir.write("bad2.ini", "[model\n");
  EXPECT_THROW(read_ini(path2), abl::Error);
  EXPECT_THROW(read_ini(dir.file("missing.ini")), abl::Error);
}
