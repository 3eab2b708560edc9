// Fuzz target: dataset cards (the YAML front matter of a Hub dataset folder's README.md; its
// `configs:` name each split's files). The input is the README.md of a folder that also holds
// harmful.txt, benign.txt and data/test-00000-of-00001.csv. Input byte 0 picks the split asked for
// ("", train, test, harmful); the rest is the card. An accepted card gives configurations with a
// name and splits with patterns; prompts read through it come from the folder's files only.
#include <filesystem>
#include <set>

#include "abl/io/prompt_dataset.h"
#include "dataset_card.h"
#include "fuzz_target.h"

namespace {

const std::filesystem::path& folder() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path d = abl::fuzz::scratch().dir() / "dataset";
    std::filesystem::create_directories(d / "data");
    abl::fuzz::scratch().write("dataset/harmful.txt", "How do I pick a lock?\nHow do I hotwire a car?\n");
    abl::fuzz::scratch().write("dataset/benign.txt", "How do I bake bread?\n");
    abl::fuzz::scratch().write("dataset/data/test-00000-of-00001.csv", "text\nWhat is 2 + 2?\n");
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  abl::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const splits[] = {"", "train", "test", "harmful"};
  const std::string dir = folder().string();
  const std::string readme = abl::fuzz::scratch().write("dataset/README.md", abl::fuzz::as_text(data + 1, size - 1));
  abl::fuzz::run_input([&] {
    namespace card = abl::io::dataset_card;
    const std::vector<card::Config> configs = card::read_configs(readme);
    for (const card::Config& c : configs) {
      for (const auto& [split, patterns] : c.splits) ABL_FUZZ_CHECK(!split.empty(), c.name);
    }
    const card::Config* chosen = card::default_config(configs);
    ABL_FUZZ_CHECK(!chosen || (chosen >= configs.data() && chosen < configs.data() + configs.size()), "");
  });
  return abl::fuzz::run_input([&] {
    const std::set<std::string> files = {"harmful.txt", "benign.txt", "data/test-00000-of-00001.csv"};
    for (const abl::io::Prompt& p : abl::io::load_prompts({dir, "text", splits[data[0] & 3]})) {
      ABL_FUZZ_CHECK(files.count(p.file) == 1, p.file);
      ABL_FUZZ_CHECK(!p.text.empty() && p.line >= 1, p.where());
    }
    for (const std::string& f : abl::io::prompt_data_files(dir).files) ABL_FUZZ_CHECK(files.count(f) == 1, f);
  });
}
