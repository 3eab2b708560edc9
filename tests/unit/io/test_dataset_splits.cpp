// Dataset folders read as `datasets.load_dataset(folder, split="train[:400]")` reads them: the
// splits found from file and folder names (data_files.py's rules, in their order), a Hub cache
// folder resolved to its snapshot, the split's files read one after the other, and the folders
// it cannot read (Arrow, compressed, several splits and none named) refused with the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "abl/core/error.h"
#include "abl/io/prompt_dataset.h"
#include "common/temp_dir.h"
#include "dataset_splits.h"

namespace {

namespace fs = std::filesystem;
using abl::io::load_prompts;
using abl::io::Prompt;
using abl::io::SplitSpec;
using abl::io::dataset_splits::find_splits;

const std::string kParquet = std::string(ABL_FIXTURE_DIR) + "/prompts/one-page-snappy.parquet";  // 240 rows

std::string lines(const std::string& tag, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += tag + std::to_string(i) + "\n";
  return out;
}

std::vector<std::string> texts(const std::vector<Prompt>& p) {
  std::vector<std::string> out;
  for (const auto& x : p) out.push_back(x.text);
  return out;
}

std::vector<std::string> load(const abl::testing::TempDir& dir, const std::string& split) {
  return texts(load_prompts({dir.path().string(), "text", split}));
}

std::string error_of(const std::string& path, const std::string& split) {
  try {
    load_prompts({path, "text", split});
  } catch (const abl::Error& e) {
    return e.what();
  }
  return "";
}

// "name: file, file | name: file"
std::string layout_of(const abl::testing::TempDir& dir) {
  std::string out;
  for (const auto& s : find_splits(dir.path().string()).splits) {
    out += (out.empty() ? "" : " | ") + s.name + ":";
    for (const auto& f : s.files) out += " " + f;
  }
  return out;
}

}  // namespace

TEST(SplitSpec, NamesAndSlices) {
  const SplitSpec a = SplitSpec::parse("train[:400]", "--good-split");
  EXPECT_EQ(a.name, "train");
  ASSERT_TRUE(a.slice.has_value());
  EXPECT_FALSE(a.slice->start.has_value());
  EXPECT_EQ(*a.slice->stop, 400);
  const SplitSpec b = SplitSpec::parse("test", "w");
  EXPECT_EQ(b.name, "test");
  EXPECT_FALSE(b.slice.has_value());
  const SplitSpec c = SplitSpec::parse("[-100:]", "w");
  EXPECT_EQ(c.name, "");
  EXPECT_EQ(*c.slice->start, -100);
  EXPECT_EQ(SplitSpec::parse("validation.en[5:]", "w").name, "validation.en");
  EXPECT_FALSE(SplitSpec::parse("", "w").slice.has_value());
  for (const char* bad : {"train[", "tr ain[:3]", "train[3]", "train+test", "train[:3]x", ":3", "[:]]"}) {
    EXPECT_THROW(SplitSpec::parse(bad, "w"), abl::Error) << bad;
  }
  try {
    SplitSpec::parse("train[:10%]", "--bad-split");
    FAIL();
  } catch (const abl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("--bad-split: the split 'train[:10%]' slices by percent"), std::string::npos)
        << e.what();
  }
}

TEST(DatasetSplits, ShardsNamedForTheirSplitAreReadInOrder) {
  // push_to_hub's layout: data/{split}-NNNNN-of-NNNNN.parquet, here as JSON Lines and Parquet.
  abl::testing::TempDir dir;
  dir.write("README.md", "---\nconfigs: []\n---\n# card\n");
  dir.write("data/train-00001-of-00002.jsonl", "{\"text\": \"b0\"}\n{\"text\": \"b1\"}\n");
  dir.write("data/train-00000-of-00002.jsonl", "{\"text\": \"a0\"}\n");
  dir.write("data/test-00000-of-00001.jsonl", "{\"text\": \"t0\"}\n{\"text\": \"t1\"}\n{\"text\": \"t2\"}\n");
  dir.write("data/harmful_extra-00000-of-00001.jsonl", "{\"text\": \"h0\"}\n");
  EXPECT_EQ(layout_of(dir),
            "train: data/train-00000-of-00002.jsonl data/train-00001-of-00002.jsonl | test: "
            "data/test-00000-of-00001.jsonl | harmful_extra: data/harmful_extra-00000-of-00001.jsonl");
  EXPECT_EQ(load(dir, "train"), (std::vector<std::string>{"a0", "b0", "b1"}));
  EXPECT_EQ(load(dir, "train[1:]"), (std::vector<std::string>{"b0", "b1"}));
  EXPECT_EQ(load(dir, "test[-2:]"), (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(load(dir, "harmful_extra"), (std::vector<std::string>{"h0"}));
  const auto p = load_prompts({dir.path().string(), "text", "train[2:]"});
  EXPECT_EQ(p[0].where(), "data/train-00001-of-00002.jsonl line 2");
}

TEST(DatasetSplits, SeveralSplitsNeedAName) {
  abl::testing::TempDir dir;
  dir.write("data/train-00000-of-00001.jsonl", "{\"text\": \"a\"}\n");
  dir.write("data/test-00000-of-00001.jsonl", "{\"text\": \"b\"}\n");
  const std::string none = error_of(dir.path().string(), "[:400]");
  EXPECT_NE(none.find("is a dataset folder of the splits train (data/train-00000-of-00001.jsonl), test "
                      "(data/test-00000-of-00001.jsonl) (shards named data/{split}-NNNNN-of-NNNNN); name one, as in "
                      "train[:400]"),
            std::string::npos)
      << none;
  const std::string missing = error_of(dir.path().string(), "validation[:10]");
  EXPECT_NE(missing.find("it has no split 'validation'"), std::string::npos) << missing;
  EXPECT_THROW(load_prompts({dir.path().string(), "text", "val"}), abl::io::SplitChoiceError);
}

TEST(DatasetSplits, FoldersNamedForTheirSplitComeBeforeFileNames) {
  abl::testing::TempDir dir;
  dir.write("train/b.csv", "text\nb\n");
  dir.write("train/a.csv", "text\na\n");
  dir.write("data/dev-2024/x.csv", "text\nx\n");     // validation: "dev" then a separator
  dir.write("my.eval/y.csv", "text\ny\n");           // test: a separator then "eval"
  dir.write("test.csv", "text\nnot read\n");         // a folder name decided, so file names do not count
  dir.write("pretraining/z.csv", "text\nnot read\n");  // "training" without a separator before it
  EXPECT_EQ(layout_of(dir), "train: train/a.csv train/b.csv | validation: data/dev-2024/x.csv | test: my.eval/y.csv");
  EXPECT_EQ(load(dir, "train"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(load(dir, "validation"), (std::vector<std::string>{"x"}));
}

TEST(DatasetSplits, FilesNamedForTheirSplit) {
  abl::testing::TempDir dir;
  dir.write("harmful_train.jsonl", "{\"text\": \"tr\"}\n");
  dir.write("harmful_test.jsonl", "{\"text\": \"te\"}\n");
  dir.write("validation0.txt", "v\n");
  dir.write("trainer.txt", "not read\n");  // "train" followed by a letter
  dir.write("test", "not read\n");         // no separator after the keyword, and not a prompt file
  EXPECT_EQ(layout_of(dir), "train: harmful_train.jsonl | validation: validation0.txt | test: harmful_test.jsonl");
  EXPECT_EQ(load(dir, "test"), (std::vector<std::string>{"te"}));
}

TEST(DatasetSplits, WithoutSplitNamesEveryFileIsTrain) {
  abl::testing::TempDir dir;
  dir.write("b.txt", lines("b", 2));
  dir.write("a/prompts.txt", lines("a", 2));
  dir.write("README.md", "# card\n");
  dir.write("dataset_info.json", "{}\n");
  dir.write(".cache/train.txt", "hidden\n");
  dir.write("__pycache__/x.txt", "special\n");
  EXPECT_EQ(layout_of(dir), "train: a/prompts.txt b.txt");
  EXPECT_EQ(load(dir, "[1:3]"), (std::vector<std::string>{"a1", "b0"}));  // the only split needs no name
  EXPECT_EQ(load(dir, "train").size(), 4u);
  EXPECT_EQ(load(dir, "").size(), 4u);
}

TEST(DatasetSplits, HubCacheFolderReadsItsSnapshot) {
  // ~/.cache/huggingface/hub/datasets--org--name: the snapshot's files are links into blobs/.
  abl::testing::TempDir dir;
  std::ifstream in(kParquet, std::ios::binary);
  const std::string parquet((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  dir.write("blobs/9f86d081884c7d65", parquet);
  dir.write("refs/main", "c0ffee\n");
  fs::create_directories(dir.path() / "snapshots/c0ffee/data");
  fs::create_directories(dir.path() / "snapshots/0ld/data");
  fs::create_symlink("../../../blobs/9f86d081884c7d65",
                     dir.path() / "snapshots/c0ffee/data/train-00000-of-00001.parquet");
  dir.write("snapshots/0ld/data/train-00000-of-00001.jsonl", "{\"text\": \"old\"}\n");
  const auto p = load_prompts({dir.path().string(), "text", "train[3:5]"});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].where(), "data/train-00000-of-00001.parquet row 3");
  EXPECT_EQ(load(dir, "").size(), 240u);
  // Without refs/main, two snapshots are a choice for the user.
  fs::remove(dir.path() / "refs/main");
  const std::string err = error_of(dir.path().string(), "train");
  EXPECT_NE(err.find("is a Hugging Face cache folder of 2 snapshots (0ld, c0ffee)"), std::string::npos) << err;
}

TEST(DatasetSplits, FoldersItCannotReadSayWhy) {
  abl::testing::TempDir arrow;  // Dataset.save_to_disk
  arrow.write("dataset_dict.json", "{\"splits\": [\"train\"]}");
  arrow.write("train/data-00000-of-00001.arrow", "arrow bytes");
  arrow.write("train/state.json", "{}");
  arrow.write("train/dataset_info.json", "{}");
  std::string err = error_of(arrow.path().string(), "train");
  EXPECT_NE(err.find("holds Arrow files (train/data-00000-of-00001.arrow) as datasets' save_to_disk writes them"),
            std::string::npos)
      << err;
  abl::testing::TempDir packed;
  packed.write("train.jsonl.gz", "gzip bytes");
  packed.write("LICENSE", "text");
  err = error_of(packed.path().string(), "train");
  EXPECT_NE(err.find("holds no prompt file (.parquet, .jsonl, .json, .csv, .tsv or .txt); decompress its compressed "
                     "files (train.jsonl.gz) first"),
            std::string::npos)
      << err;
  abl::testing::TempDir empty;
  err = error_of(empty.path().string(), "");
  EXPECT_NE(err.find("holds no prompt file"), std::string::npos) << err;
  abl::testing::TempDir bad_name;
  bad_name.write("data/my split-00000-of-00001.csv", "text\na\n");
  err = error_of(bad_name.path().string(), "train");
  EXPECT_NE(err.find("names the split 'my split', which is no split name"), std::string::npos) << err;
}

TEST(DatasetSplits, OneFileIsTheSplitTrain) {
  abl::testing::TempDir dir;
  const std::string file = dir.write("prompts.txt", lines("p", 5));
  EXPECT_EQ(texts(load_prompts({file, "text", "train[:2]"})), (std::vector<std::string>{"p0", "p1"}));
  EXPECT_EQ(texts(load_prompts({file, "text", "[-1:]"})), (std::vector<std::string>{"p4"}));
  const std::string err = error_of(file, "test[:2]");
  EXPECT_NE(err.find("is one file, which is the split 'train' (as the datasets library reads a file); the split "
                     "'test' needs a dataset folder"),
            std::string::npos)
      << err;
  EXPECT_EQ(load_prompts({file, "text", "train[2:]"})[0].where(), "line 3");
}
