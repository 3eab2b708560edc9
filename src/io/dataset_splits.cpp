// Split discovery in a dataset folder; the rules are listed in dataset_splits.h.
#include "dataset_splits.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "abl/core/error.h"
#include "abl/io/prompt_dataset.h"
#include "dataset_card.h"

namespace fs = std::filesystem;

namespace abl::io::dataset_splits {
namespace {

constexpr size_t kMaxEntries = 100000;

// The keywords of the three default splits (data_files.py, SPLIT_KEYWORDS).
const std::vector<std::pair<std::string, std::vector<std::string>>>& default_splits() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> splits = {
      {"train", {"train", "training"}},
      {"validation", {"validation", "valid", "dev", "val"}},
      {"test", {"test", "testing", "eval", "evaluation"}},
  };
  return splits;
}

bool is_data_extension(const std::string& ext) {
  static const std::set<std::string> data = {".parquet", ".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".txt"};
  return data.count(ext) > 0;
}

bool is_compressed_extension(const std::string& ext) {
  static const std::set<std::string> packed = {".gz", ".zst", ".bz2", ".xz", ".zip", ".lz4", ".tar", ".7z"};
  return packed.count(ext) > 0;
}

// The dataset card and metadata files datasets skips (data_files.py, FILES_TO_IGNORE).
bool is_ignored_name(const std::string& name) {
  static const std::set<std::string> ignored = {"README.md",         "config.json",    "dataset_info.json",
                                                "dataset_infos.json", "dummy_data.zip", "dataset_dict.json"};
  return ignored.count(name) > 0;
}

std::string lower_extension(const fs::path& p) {
  std::string ext = p.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// The "-._ 0-9" characters that may stand around a split keyword (NON_WORDS_CHARS).
bool is_separator(char c) { return c == '-' || c == '.' || c == '_' || c == ' ' || (c >= '0' && c <= '9'); }

// `keyword` stands alone in `name`: at its start or after a separator, and at its end or before one
// (`need_after`: a separator must follow, as in a file name's "{keyword}[sep]*").
bool keyword_in(const std::string& name, const std::string& keyword, bool need_after) {
  for (size_t at = name.find(keyword); at != std::string::npos; at = name.find(keyword, at + 1)) {
    const size_t next = at + keyword.size();
    const bool before = at == 0 || is_separator(name[at - 1]);
    const bool after = next < name.size() ? is_separator(name[next]) : !need_after;
    if (before && after) return true;
  }
  return false;
}

std::vector<std::string> components(const std::string& relative) {
  std::vector<std::string> parts;
  for (const auto& part : fs::path(relative)) parts.push_back(part.string());
  return parts;
}

bool in_split_folder(const std::string& relative, const std::vector<std::string>& keywords) {
  const auto parts = components(relative);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    for (const auto& k : keywords) {
      if (keyword_in(parts[i], k, false)) return true;
    }
  }
  return false;
}

bool split_named_file(const std::string& relative, const std::vector<std::string>& keywords) {
  const std::string name = fs::path(relative).filename().string();
  for (const auto& k : keywords) {
    if (keyword_in(name, k, true)) return true;
  }
  return false;
}

// If `folder` is a repository folder of the Hub cache (datasets--org--name: blobs/, refs/,
// snapshots/), the snapshot refs/main names, or its only snapshot; else `folder`.
std::string snapshot_of(const std::string& folder) {
  const fs::path snapshots = fs::path(folder) / "snapshots";
  std::error_code ec;
  if (!fs::is_directory(snapshots, ec) || !fs::is_directory(fs::path(folder) / "blobs", ec)) return folder;
  std::ifstream ref(fs::path(folder) / "refs" / "main");
  std::string hash;
  if (ref && std::getline(ref, hash)) {
    hash.erase(hash.find_last_not_of(" \t\r\n") + 1);
    if (!hash.empty() && fs::is_directory(snapshots / hash, ec)) return (snapshots / hash).string();
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(snapshots, ec)) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  if (names.size() == 1) return (snapshots / names[0]).string();
  fail("{} is a Hugging Face cache folder {}; pass the snapshot to read ({}/<snapshot>)", folder,
       names.empty() ? "without snapshots" : fmt::format("of {} snapshots ({}) and no refs/main naming one of them",
                                                         names.size(), fmt::join(names, ", ")),
       snapshots.string());
}

struct Listing {
  std::vector<std::string> data;    // data files, relative, sorted
  std::vector<std::string> others;  // the rest (not hidden), for the message when there is no data file
  std::vector<std::string> arrow;   // datasets' save_to_disk files
};

Listing list_files(const std::string& root) {
  Listing l;
  std::set<fs::path> arrow_dirs;
  std::vector<fs::path> json;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  ABL_CHECK(!ec, "cannot list the dataset folder {}: {}", root, ec.message());
  size_t entries = 0;
  for (; it != end; it.increment(ec)) {
    ABL_CHECK(!ec, "cannot list the dataset folder {}: {}", root, ec.message());
    ABL_CHECK(++entries <= kMaxEntries, "{} holds more than {} files and folders; is it a dataset folder?", root,
              kMaxEntries);
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (it->is_directory(ec)) {
      if (name[0] == '.' || name.compare(0, 2, "__") == 0) it.disable_recursion_pending();
      continue;
    }
    if (name[0] == '.' || is_ignored_name(name) || !it->is_regular_file(ec)) continue;  // symlinks to files count
    const std::string ext = lower_extension(path);
    const std::string relative = path.lexically_relative(root).generic_string();
    if (ext == ".arrow") {
      l.arrow.push_back(relative);
      arrow_dirs.insert(path.parent_path());
    } else if (ext == ".json") {
      json.push_back(path);  // state.json beside save_to_disk's Arrow files is no data file
    } else if (is_data_extension(ext)) {
      l.data.push_back(relative);
    } else {
      l.others.push_back(relative);
    }
  }
  for (const auto& p : json) {
    (arrow_dirs.count(p.parent_path()) ? l.others : l.data).push_back(p.lexically_relative(root).generic_string());
  }
  std::sort(l.data.begin(), l.data.end());
  std::sort(l.others.begin(), l.others.end());
  std::sort(l.arrow.begin(), l.arrow.end());
  return l;
}

std::string some(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 6; ++i) out += (i ? ", " : "") + names[i];
  return names.size() > 6 ? out + ", ..." : out;
}

// "-NNNNN-of-NNNNN" at `at` of `name`.
bool shard_counter_at(const std::string& name, size_t at) {
  static const std::string shape = "-00000-of-00000";
  if (at + shape.size() > name.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const char c = name[at + i];
    if (shape[i] == '0' ? !(c >= '0' && c <= '9') : c != shape[i]) return false;
  }
  return true;
}

// The split of a file named data/{split}-NNNNN-of-NNNNN*.* (SPLIT_PATTERN_SHARDED, the split as
// long as the glob lets it be), or "" when the file is not named so.
std::string shard_split(const std::string& relative) {
  if (relative.compare(0, 5, "data/") != 0) return "";
  const std::string name = relative.substr(5);
  if (name.find('/') != std::string::npos) return "";
  for (size_t at = name.size(); at-- > 1;) {
    if (shard_counter_at(name, at) && name.find('.', at + 15) != std::string::npos) return name.substr(0, at);
  }
  return "";
}

// Rule 1; empty when no file is named so.
std::map<std::string, std::vector<std::string>> sharded_splits(const std::vector<std::string>& files,
                                                               const std::string& root) {
  std::map<std::string, std::vector<std::string>> splits;
  for (const auto& f : files) {
    const std::string name = shard_split(f);
    if (name.empty()) continue;
    ABL_CHECK(is_split_name(name),
              "{}: the shard {} names the split '{}', which is no split name (letters, digits and _, parts joined "
              "by '.')",
              root, f, name);
    splits[name].push_back(f);
  }
  return splits;
}

// Rules 1 to 4 on `files` (relative to the folder `base` names, "" or ending in '/').
void infer_splits(const std::vector<std::string>& files, const std::string& base, Folder& out) {
  const auto add = [&out, &base](std::map<std::string, std::vector<std::string>> found) {
    for (auto& [name, list] : found) {
      for (auto& f : list) f = base + f;
    }
    for (const auto& [name, keywords] : default_splits()) {
      (void)keywords;
      auto it = found.find(name);
      if (it == found.end()) continue;
      out.splits.push_back({name, std::move(it->second)});
      found.erase(it);
    }
    for (auto& [name, list] : found) out.splits.push_back({name, std::move(list)});
  };
  auto sharded = sharded_splits(files, out.root);
  if (!sharded.empty()) {
    out.layout = "shards named data/{split}-NNNNN-of-NNNNN";
    add(std::move(sharded));
    return;
  }
  for (const bool folders : {true, false}) {
    std::map<std::string, std::vector<std::string>> found;
    for (const auto& [name, keywords] : default_splits()) {
      for (const auto& f : files) {
        if (folders ? in_split_folder(f, keywords) : split_named_file(f, keywords)) found[name].push_back(f);
      }
    }
    if (!found.empty()) {
      out.layout = folders ? "folders named for their split" : "files named for their split";
      add(std::move(found));
      return;
    }
  }
  out.layout = "no file or folder named for a split: every prompt file is the split 'train'";
  add({{"train", files}});
}

}  // namespace

bool is_split_name(const std::string& name) {
  // datasets.naming._split_re, ^\w+(\.\w+)*$: words of letters, digits and _, joined by single dots
  bool word = false;
  for (const char c : name) {
    if (c == '.') {
      if (!word) return false;
      word = false;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word = true;
    } else {
      return false;
    }
  }
  return word;
}

Folder find_splits(const std::string& folder) {
  Folder out;
  out.root = snapshot_of(folder);
  const Listing files = list_files(out.root);
  if (files.data.empty()) {
    if (!files.arrow.empty()) {
      fail("{} holds Arrow files ({}) as datasets' save_to_disk writes them, which abliterate does not read: write "
           "the split with Dataset.to_parquet or to_json and pass that file or folder",
           out.root, some(files.arrow));
    }
    std::vector<std::string> packed;
    for (const auto& f : files.others) {
      if (is_compressed_extension(lower_extension(f))) packed.push_back(f);
    }
    fail("{} holds no prompt file (.parquet, .jsonl, .json, .csv, .tsv or .txt){}", out.root,
         !packed.empty() ? fmt::format("; decompress its compressed files ({}) first", some(packed))
         : files.others.empty() ? "" : fmt::format("; it holds {}", some(files.others)));
  }
  const std::string readme = (fs::path(out.root) / "README.md").string();
  const std::vector<dataset_card::Config> configs = dataset_card::read_configs(readme);
  if (configs.empty()) {
    infer_splits(files.data, "", out);
    return out;
  }
  const dataset_card::Config* config = dataset_card::default_config(configs);
  if (!config) {
    std::string names;
    for (const auto& c : configs) {
      std::string splits;
      for (const auto& [split, patterns] : c.splits) splits += (splits.empty() ? "" : ", ") + split;
      names += fmt::format("{}{}{}", names.empty() ? "" : "; ", c.name, splits.empty() ? "" : " (" + splits + ")");
    }
    throw SplitChoiceError(fmt::format(
        "{}: the dataset card names the configurations {} and none is the default; pass the folder (data_dir) or "
        "file of the configuration and split to read", readme, names));
  }
  const std::string base =
      config->data_dir.empty() ? "" : fs::path(config->data_dir).lexically_normal().generic_string() + "/";
  out.layout = fmt::format("the dataset card's configuration '{}'", config->name);
  if (config->splits.empty()) {  // a data_dir alone: its files by the rules
    std::vector<std::string> inside;
    for (const auto& f : files.data) {
      if (f.compare(0, base.size(), base) == 0) inside.push_back(f.substr(base.size()));
    }
    ABL_CHECK(!inside.empty(), "{}: configuration '{}': data_dir {} holds no prompt file", readme, config->name,
              config->data_dir);
    infer_splits(inside, base, out);
    out.layout = fmt::format("the dataset card's configuration '{}' (data_dir {}), {}", config->name,
                             config->data_dir, out.layout);
    return out;
  }
  for (const auto& [split, patterns] : config->splits) {
    std::vector<std::string> matched;
    for (const auto& f : files.data) {
      for (const auto& pattern : patterns) {
        if (dataset_card::glob_match(base + pattern, f)) {
          matched.push_back(f);
          break;
        }
      }
    }
    ABL_CHECK(!matched.empty(), "{}: configuration '{}', split '{}': {} matches no prompt file of {}", readme,
              config->name, split, fmt::join(patterns, ", "), out.root);
    out.splits.push_back({split, std::move(matched)});
  }
  return out;
}

std::string describe_splits(const Folder& folder) {
  std::string out;
  for (const auto& s : folder.splits) {
    out += (out.empty() ? "" : ", ") + s.name +
           (s.files.size() == 1 ? " (" + s.files[0] + ")" : fmt::format(" ({} files)", s.files.size()));
  }
  return out;
}

}  // namespace abl::io::dataset_splits
