// Dataset cards: the configs block of README.md read as the datasets library reads it (the
// configuration loaded without a name, each split's data_files patterns, data_dir), and a
// folder whose card names its splits read by the card, not by the file-name rules.
#include <gtest/gtest.h>

#include "abl/core/error.h"
#include "abl/io/prompt_dataset.h"
#include "common/temp_dir.h"
#include "dataset_card.h"

namespace {

using abl::io::dataset_card::Config;
using abl::io::dataset_card::glob_match;
using abl::io::dataset_card::read_configs;

std::vector<std::string> texts(const abl::testing::TempDir& dir, const std::string& split) {
  std::vector<std::string> out;
  for (const auto& p : abl::io::load_prompts({dir.path().string(), "goal", split})) out.push_back(p.text);
  return out;
}

std::string error_of(const abl::testing::TempDir& dir, const std::string& split) {
  try {
    abl::io::load_prompts({dir.path().string(), "goal", split});
  } catch (const abl::Error& e) {
    return e.what();
  }
  return "";
}

// As huggingface_hub writes a card, with what else cards hold around the configs.
const char* kCard = R"(---
license: mit
dataset_info:
  features:
  - name: goal
    dtype: string
  splits:
  - name: harmful
    num_examples: 2
configs:  # the configurations
- config_name: behaviors
  data_files:
  - split: harmful
    path: "data/harmful-behaviors.csv"
  - split: benign
    path: [data/benign-*.csv, 'data/extra benign.csv']
- config_name: judge_comparison
  data_files:
  - split: test
    path:
    - data/judge-comparison.csv
task_categories:
- text-generation
---
# JBB-style behaviors

configs: in the text below the card is not read
)";

}  // namespace

TEST(DatasetCard, ReadsTheConfigsBlock) {
  abl::testing::TempDir dir;
  dir.write("README.md", kCard);
  const std::vector<Config> c = read_configs(dir.file("README.md"));
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].name, "behaviors");
  ASSERT_EQ(c[0].splits.size(), 2u);
  EXPECT_EQ(c[0].splits[0].first, "harmful");
  EXPECT_EQ(c[0].splits[0].second, (std::vector<std::string>{"data/harmful-behaviors.csv"}));
  EXPECT_EQ(c[0].splits[1].second, (std::vector<std::string>{"data/benign-*.csv", "data/extra benign.csv"}));
  EXPECT_EQ(c[1].splits[0].second, (std::vector<std::string>{"data/judge-comparison.csv"}));
  EXPECT_EQ(abl::io::dataset_card::default_config(c), nullptr);
  dir.write("other.md",
      "---\nconfigs:\n  - config_name: default\n    data_files: all/*.jsonl\n    default: true\n---\n");
  const auto d = read_configs(dir.file("other.md"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0].is_default);
  EXPECT_EQ(d[0].splits, (std::vector<std::pair<std::string, std::vector<std::string>>>{{"train", {"all/*.jsonl"}}}));
  EXPECT_TRUE(read_configs(dir.file("missing.md")).empty());
  dir.write("plain.md", "# no front matter\nconfigs:\n- config_name: x\n");
  EXPECT_TRUE(read_configs(dir.file("plain.md")).empty());
  dir.write("bad.md", "---\nconfigs:\n- config_name: x\n  data_files:\n  - split: train\n---\n");
  EXPECT_THROW(read_configs(dir.file("bad.md")), abl::Error);  // an item without its path
}

TEST(DatasetCard, GlobsAsFsspecDoes) {
  EXPECT_TRUE(glob_match("data/train-*", "data/train-00000-of-00001.parquet"));
  EXPECT_FALSE(glob_match("data/train-*", "data/x/train-0.parquet"));
  EXPECT_FALSE(glob_match("*.csv", "data/a.csv"));
  EXPECT_TRUE(glob_match("**/*.csv", "a.csv"));
  EXPECT_TRUE(glob_match("**/*.csv", "data/deep/a.csv"));
  EXPECT_TRUE(glob_match("data/**", "data/deep/a.csv"));
  EXPECT_TRUE(glob_match("data/part[0-9].json?", "data/part7.jsonl"));
  EXPECT_FALSE(glob_match("data/part[!0-9].jsonl", "data/part7.jsonl"));
  EXPECT_TRUE(glob_match("data/harmful-behaviors.csv", "data/harmful-behaviors.csv"));
  EXPECT_FALSE(glob_match("data/harmful-behaviors.csv", "data/harmful-behaviors.csv.bak"));
}

TEST(DatasetCard, AFolderWithACardIsReadByIt) {
  abl::testing::TempDir dir;
  dir.write("data/harmful-behaviors.csv", "goal\nh0\nh1\n");
  dir.write("data/benign-behaviors.csv", "goal\nb0\n");
  dir.write("data/extra benign.csv", "goal\nb1\n");
  dir.write("data/judge-comparison.csv", "goal\nj0\n");
  // Without a card every file would be 'train', harmful and benign mixed; with it, none is the default.
  dir.write("README.md", kCard);
  const std::string err = error_of(dir, "harmful");
  EXPECT_NE(err.find("README.md: the dataset card names the configurations behaviors (harmful, benign); "
                     "judge_comparison (test) and none is the default"),
            std::string::npos)
      << err;
  std::string card = kCard;
  card.replace(card.find("- config_name: behaviors\n"), 25, "- config_name: behaviors\n  default: true\n");
  dir.write("README.md", card);
  EXPECT_EQ(texts(dir, "harmful"), (std::vector<std::string>{"h0", "h1"}));
  EXPECT_EQ(texts(dir, "benign[-1:]"), (std::vector<std::string>{"b1"}));
  EXPECT_THROW(texts(dir, "test"), abl::io::SplitChoiceError);  // judge_comparison's, not the default's
  dir.write("README.md",
      "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: gone/*\n---\n");
  const std::string none = error_of(dir, "train");
  EXPECT_NE(none.find("configuration 'default', split 'train': gone/* matches no prompt file"), std::string::npos)
      << none;
}

TEST(DatasetCard, DataDirAloneIsReadByTheFileNameRules) {
  abl::testing::TempDir dir;
  dir.write("README.md", "---\nconfigs:\n- config_name: en\n  data_dir: en\n---\n");
  dir.write("en/train.csv", "goal\ne0\n");
  dir.write("en/test.csv", "goal\ne1\n");
  dir.write("fr/train.csv", "goal\nf0\n");
  EXPECT_EQ(texts(dir, "test"), (std::vector<std::string>{"e1"}));
  const auto p = abl::io::load_prompts({dir.path().string(), "goal", "train"});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].where(), "en/train.csv line 2");
}
