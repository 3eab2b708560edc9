// The `configs:` of a dataset card (the YAML front matter of a Hub dataset's README.md), which
// names each configuration's data files per split, as the datasets library reads it
// (datasets/utils/metadata.py, MetadataConfigs):
//   configs:
//   - config_name: default
//     data_files:
//     - split: train
//       path: data/train-*
//     - split: test
//       path: [data/test-a.csv, data/test-b.csv]
// data_files may also be one pattern or a list of patterns (the split "train"); data_dir is the
// folder they are relative to. Only this block of the card is read, with the part of YAML that
// cards use (block and flow lists, maps, plain and quoted scalars, comments).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace abl::io::dataset_card {

struct Config {
  std::string name;
  bool is_default = false;  // `default: true`
  std::string data_dir;     // "" = the dataset folder
  // split -> glob patterns relative to data_dir, in the card's order
  std::vector<std::pair<std::string, std::vector<std::string>>> splits;
};

// The configurations of the card `readme` (a README.md path); empty when the file does not exist
// or its front matter has no configs. Errors name the file and line of what cannot be read.
std::vector<Config> read_configs(const std::string& readme);

// The configuration datasets loads when none is named: the only one, the one named "default" or
// the one marked `default: true`; nullptr when there is none (then one must be chosen).
const Config* default_config(const std::vector<Config>& configs);

// fsspec's glob on '/'-separated relative paths: * and ? within a name, [...] classes, ** across
// folders (a whole "**/" also matching no folder).
bool glob_match(const std::string& pattern, const std::string& path);

}  // namespace abl::io::dataset_card
