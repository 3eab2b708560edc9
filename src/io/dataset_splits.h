// The splits of a Hugging Face dataset folder (`huggingface-cli download --repo-type dataset`,
// a Hub cache folder, `push_to_hub`'s layout, a folder of train.csv and test.csv), found from the
// file names by the rules `datasets.load_dataset(folder)` follows (datasets/data_files.py,
// _get_data_files_patterns), so that "train[:400]" and "test[:100]" select what they select there:
//   1. data/{split}-NNNNN-of-NNNNN.* shards: any split name;
//   2. else folders named for train, validation or test (training; valid, dev, val; testing, eval,
//      evaluation), the keyword standing alone or between "-._ 0-9" characters: train/, data/train-x/;
//   3. else files named so: train.jsonl, harmful_test.csv, test-00000.parquet;
//   4. else every data file is the split "train".
// Data files are those of the formats prompt files come in (.parquet .jsonl .ndjson .json .csv
// .tsv .txt); hidden files and folders, "__" folders and the dataset card (README.md,
// dataset_info.json, ...) are not.
#pragma once
#include <string>
#include <vector>

namespace abl::io::dataset_splits {

struct Split {
  std::string name;                // "train", "validation", "test", or a shard name's split
  std::vector<std::string> files;  // relative to Folder::root, '/'-separated, sorted
};

struct Folder {
  std::string root;           // the folder read: the given one, or a Hub cache folder's snapshot
  std::vector<Split> splits;  // train, validation, test, then the others by name
  std::string layout;         // which rule found them, for messages
};

// Errors name the folder: no data files (the files it holds instead, Arrow files from
// save_to_disk named as such), a split name datasets would refuse, more than 100,000 entries.
Folder find_splits(const std::string& folder);

// A name the datasets library accepts for a split: words of letters, digits and _, joined by '.'.
bool is_split_name(const std::string& name);

// "train (2 files), test (data/test-00000-of-00001.parquet)"
std::string describe_splits(const Folder& folder);

}  // namespace abl::io::dataset_splits
