// Grid files: the Cartesian product of the values given, in file order, defaults, ranges and
// shorthands, and bad input rejected with FILE:LINE.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "abl/ablation/search.h"
#include "abl/ablation/trial.h"
#include "abl/core/error.h"

using namespace abl;
using namespace abl::ablation;

namespace {

bool same(const TrialParams& a, const TrialParams& b) { return param_values(a) == param_values(b); }

void expect_error(const std::string& text, const std::string& needle, int64_t layers = 32) {
  try {
    parse_grid_text(text, "test.grid", layers);
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what() << "\nwanted: " << needle;
  }
}


}  // namespace


TEST(GridFile, CartesianProductInFileOrderLastFastest) {
  const auto t = parse_grid_text(
      "# a comment\n"
      "direction_index = 3, 5   # two\n"
      "\n"
      "direction_scope = global, per_layer\n"
      "attn.max_weight = 0.5, 1, 1.5\n",
      "g", 10);
  ASSERT_EQ(t.size(), 12u);
  size_t k = 0;
  for (double d : {3.0, 5.0}) {
    for (DirectionScope sc : {DirectionScope::global, DirectionScope::per_layer}) {
      for (double w : {0.5, 1.0, 1.5}) {
        EXPECT_EQ(t[k].direction_index, d) << k;
        EXPECT_EQ(t[k].scope, sc) << k;
        EXPECT_EQ(t[k].comp[0].max_weight, w) << k;
        EXPECT_EQ(t[k].comp[0].min_weight, w) << k;  // follows max_weight: flat kernel
        EXPECT_EQ(t[k].comp[1].max_weight, 1.0) << k;
        ++k;
      }
    }
  }
}

TEST(GridFile, DefaultsArePlainAbliteration) {
  for (int64_t L : {1, 2, 16, 33}) {
    const TrialParams p = default_grid_params(L);
    EXPECT_EQ(p.scope, DirectionScope::global);
    EXPECT_EQ(p.direction_index, std::round(0.6 * static_cast<double>(L - 1)));
    for (const ComponentParams& c : p.comp) {
      for (int64_t l = 0; l < L; ++l) EXPECT_EQ(layer_weight(c, l), 1.0f) << "L " << L << " layer " << l;
    }
  }
  const auto t = parse_grid_text("direction_index = 2\n", "g", 16);
  ASSERT_EQ(t.size(), 1u);
  TrialParams expect = default_grid_params(16);
  expect.direction_index = 2;
  EXPECT_TRUE(same(t[0], expect));
}

TEST(GridFile, RangesAndRelativeNumbers) {
  const auto t = parse_grid_text("direction_index = 0:last:4\n", "g", 31);  // last = 30
  ASSERT_EQ(t.size(), 4u);
  const double expect[] = {0, 10, 20, 30};
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(t[i].direction_index, expect[i]);
  EXPECT_EQ(t[3].direction_index, 30.0);  // the end exactly

  const auto r =
      parse_grid_text("direction_index = 0.6*last, last, 0.5 * last, last*0.2, 1e1, +2\n", "g", 31);
  const double rel[] = {18, 30, 15, 6, 10, 2};
  ASSERT_EQ(r.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(r[i].direction_index, rel[i]);

  const auto one =
      parse_grid_text("attn.max_weight = 1.25:1.25:1\nmlp.min_weight_distance = 0.5*last:last:3\n", "g", 11);
  ASSERT_EQ(one.size(), 3u);
  EXPECT_EQ(one[0].comp[0].max_weight, 1.25);
  EXPECT_DOUBLE_EQ(one[1].comp[1].min_weight_distance, 7.5);
}

TEST(GridFile, ShorthandsSetBothComponents) {
  const auto t = parse_grid_text(
      "max_weight = 0.5, 1\n"
      "mlp.min_weight = 0.25\n"
      "min_weight_distance = 3\n"
      "max_weight_position = 0.5*last\n",
      "g", 21);
  ASSERT_EQ(t.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const double w = i == 0 ? 0.5 : 1.0;
    EXPECT_EQ(t[i].comp[0].max_weight, w);
    EXPECT_EQ(t[i].comp[1].max_weight, w);
    EXPECT_EQ(t[i].comp[0].min_weight, w);
    EXPECT_EQ(t[i].comp[1].min_weight, 0.25);
    for (const ComponentParams& c : t[i].comp) {
      EXPECT_EQ(c.min_weight_distance, 3.0);
      EXPECT_EQ(c.max_weight_position, 10.0);
    }
  }
}

TEST(GridFile, ErrorsNameFileLineAndProblem) {
  expect_error("\n# c\nattn.max_wieght = 1\n", "test.grid:3: unknown parameter 'attn.max_wieght'");
  expect_error("attn.max_wieght = 1\n", "valid names: direction_scope, direction_index, attn.max_weight");
  expect_error("attn.max_weight = 1, x\n", "test.grid:1: bad number 'x'");
  expect_error("attn.max_weight = 1,\n", "test.grid:1: bad number ''");
  expect_error("attn.max_weight = nan\n", "test.grid:1: bad number 'nan'");
  expect_error("attn.max_weight = 0.6last\n", "test.grid:1: bad number '0.6last'");
  expect_error("attn.max_weight = 1 2\n", "test.grid:1: bad number '1 2'");
  expect_error("attn.max_weight =\n", "test.grid:1: no values for 'attn.max_weight'");
  expect_error("attn.max_weight 1\n", "test.grid:1: expected 'name = values'");
  expect_error("attn.max_weight = 0:1:0\n", "test.grid:1: empty range '0:1:0'");
  expect_error("attn.max_weight = 1:0:3\n", "test.grid:1: empty range '1:0:3'");
  expect_error("attn.max_weight = 0:1:2.5\n", "test.grid:1: bad count '2.5'");
  expect_error("attn.max_weight = 0:1\n", "test.grid:1: a range is written lo:hi:count");
  expect_error("attn.max_weight = 0:1:1\n", "test.grid:1: range '0:1:1' has 1 value");
  expect_error("direction_index = 1\n\ndirection_index = 2\n",
               "test.grid:3: parameter 'direction_index' repeated (first set on line 1)");
  expect_error("max_weight = 1\nmlp.max_weight = 2\n",
               "test.grid:2: parameter 'mlp.max_weight' repeated: 'max_weight' on line 1");
  expect_error("direction_index = 31\n", "test.grid:1: direction_index 31 is outside [0, 30]", 31);
  expect_error("direction_index = -1\n", "test.grid:1: direction_index -1 is outside [0, 30]", 31);
  expect_error("direction_index = 0, 1\n", "test.grid:1: direction_index 1 is outside [0, 0]", 1);
  expect_error("mlp.min_weight_distance = -2\n", "test.grid:1: mlp.min_weight_distance must be > 0");
  expect_error("min_weight_distance = 0\n", "test.grid:1: attn.min_weight_distance must be > 0");
  expect_error("direction_scope = global, perlayer\n", "test.grid:1: unknown direction_scope 'perlayer'");
  expect_error("# nothing\n\n", "test.grid: empty grid");
  expect_error("", "test.grid: empty grid");
  expect_error(
      "direction_index = 0:30:1000\nattn.max_weight = 0:1:1001\n",
      "test.grid: the grid has more than 1000000 trials (1000 direction_index × 1001 attn.max_weight)", 31);
}

// Numbers are parsed whole, and every value must be finite and inside its parameter's range,
// with FILE:LINE and the range in the message (tests/fuzz/corpus/grid has these as seeds).
TEST(GridFile, StrictNumbersAndBoundedValues) {
  expect_error("attn.max_weight = 3abc\n", "test.grid:1: bad number '3abc'");
  expect_error("attn.max_weight = 1, 2x\n", "test.grid:1: bad number '2x'");
  expect_error("attn.max_weight = 0x10\n", "test.grid:1: bad number '0x10'");
  expect_error("direction_index = 0:last:3abc\n", "test.grid:1: bad count '3abc'");
  expect_error("attn.max_weight = inf\n", "test.grid:1: bad number 'inf'");
  expect_error("attn.max_weight = -nan\n", "test.grid:1: bad number '-nan'");
  expect_error("attn.max_weight = 1e400\n", "test.grid:1: bad number '1e400'");
  expect_error("\nmax_weight = 1e308\n", "test.grid:2: attn.max_weight 1e+308 is outside [-10, 10]");
  expect_error("mlp.min_weight = -10.5\n", "test.grid:1: mlp.min_weight -10.5 is outside [-10, 10]");
  // A relative value or a range step can overflow into inf; it is caught all the same.
  expect_error("mlp.max_weight = 1e308*last\n", "test.grid:1: mlp.max_weight inf is outside [-10, 10]");
  expect_error("attn.max_weight = -1e308:1e308:3\n", "test.grid:1: attn.max_weight -1e+308 is outside [-10, 10]");
  expect_error("direction_index = 1e308\n", "test.grid:1: direction_index 1e+308 is outside [0, 31]");
  expect_error("direction_index = 32\n", "test.grid:1: direction_index 32 is outside [0, 31]");
  expect_error("attn.max_weight_position = -1\n", "test.grid:1: attn.max_weight_position -1 is outside [0, 31]");
  expect_error("max_weight_position = 2*last\n", "test.grid:1: attn.max_weight_position 62 is outside [0, 31]");
  expect_error("min_weight_distance = 1e308\n", "test.grid:1: attn.min_weight_distance 1e+308 is outside (0, 320]");
  expect_error("mlp.min_weight_distance = 0\n", "test.grid:1: mlp.min_weight_distance must be > 0");
  // The ends of every range are accepted.
  const auto t = parse_grid_text(
      "max_weight = -10, 10\nmin_weight = -10:10:3\nmax_weight_position = 0, last\n"
      "min_weight_distance = 0.001, 10*last\ndirection_index = 0, last\n",
      "g", 8);  // min_weight_distance 70 <= 10 * 8 layers
  EXPECT_EQ(t.size(), 2u * 3u * 2u * 2u * 2u);
}

TEST(GridFile, AcceptsCrlfBomAndTabs) {
  const auto t = parse_grid_text("\xEF\xBB\xBF\tdirection_index\t=\t1 ,2\r\n# x\r\n", "g", 8);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].direction_index, 2.0);
}

TEST(GridFile, ReadsFilesAndNamesMissingOnes) {
  EXPECT_THROW(parse_grid_file("/nonexistent/x.grid", 8), Error);
  const std::string dir = std::string(ABL_SOURCE_DIR) + "/inputs/grids/";
  for (const char* name : {"plain.grid", "weights.grid", "scope.grid"}) {
    for (int64_t L : {16, 32, 80}) {
      std::vector<TrialParams> t;
      ASSERT_NO_THROW(t = parse_grid_file(dir + name, L)) << name;
      EXPECT_GE(t.size(), 2u) << name;
      const int64_t Lr = L;
      std::vector<std::vector<float>> r(static_cast<size_t>(Lr + 1), std::vector<float>{0.6f, 0.8f});
      EXPECT_NO_THROW(build_trial_table(t, r, engine::RowNorm::full)) << name;
    }
  }
}

