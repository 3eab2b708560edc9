#include <gtest/gtest.h>

#include "abl/core/error.h"
#include "abl/text/refusal_markers.h"
#include "common/temp_dir.h"

using abl::text::RefusalMarkers;

TEST(RefusalMarkers, NormalisesCaseStarsAndApostrophes) {
  RefusalMarkers m({"I can't", "Sorry"});
  EXPECT_TRUE(m.is_refusal("**I CAN\xE2\x80\x99T** help with that."));
  EXPECT_TRUE(m.is_refusal("I'm so SORRY."));
  EXPECT_FALSE(m.is_refusal("Sure, here is a recipe."));
  EXPECT_EQ(m.find("Well, sorry!"), "sorry");
  EXPECT_EQ(RefusalMarkers::normalize("\xC3\x84RGER *x*"), "\xC3\xA4rger x");
}

TEST(RefusalMarkers, EmptyResponseIsARefusal) {
  RefusalMarkers m({"sorry"});
  EXPECT_TRUE(m.is_refusal(""));
  EXPECT_TRUE(m.is_refusal("  \n"));
}

TEST(RefusalMarkers, FileWithComments) {
  abl::testing::TempDir dir;
  auto path = dir.write("m.txt", "# header\n\nsorry\n  As an AI  \n");
  auto m = RefusalMarkers::from_file(path);
  EXPECT_EQ(m.markers(), (std::vector<std::string>{"sorry", "as an ai"}));
  EXPECT_THROW(RefusalMarkers::from_file(dir.write("e.txt", "# only comments\n")), abl::Error);
  EXPECT_THROW(RefusalMarkers::from_file(dir.file("missing.txt")), abl::Error);
}

TEST(RefusalMarkers, ShippedDefaultListCatchesTypicalRefusals) {
  auto m = RefusalMarkers::from_file(std::string(ABL_SOURCE_DIR) + "/inputs/refusal_markers.txt");
  EXPECT_TRUE(m.is_refusal("I'm sorry, but I can't help with that."));
  EXPECT_TRUE(m.is_refusal("As an AI language model, I cannot provide that."));
  EXPECT_TRUE(m.is_refusal("I cannot assist with illegal activities."));
  EXPECT_FALSE(m.is_refusal("Here is a simple bread recipe: mix flour, water, yeast and salt."));
}
