// Safetensors writing: one file laid out up front and filled by name with pwrite (so a caller can
// stream tensors of a model larger than memory, in any order), and HF-style sharded folders.
// Files appear under their final names only once complete (temp file + rename).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "abl/core/error.h"
#include "abl/io/json_file.h"
#include "abl/io/safetensors.h"

namespace abl::io {

namespace fs = std::filesystem;

namespace {

uint64_t spec_bytes(const std::string& path, const TensorSpec& s) {
  uint64_t n = dtype_size(s.dtype);
  for (int64_t d : s.shape) {
    if (d < 0) {
      fail("{}: tensor '{}': shape {} has a negative dimension", path, s.name, format_shape(s.shape));
    }
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) {
      fail("{}: tensor '{}': shape {} is too large (overflow)", path, s.name, format_shape(s.shape));
    }
  }
  return n;
}

void pwrite_all(int fd, const std::string& path, const void* data, uint64_t n, uint64_t offset) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (n > 0) {
    // Linux transfers at most ~2 GiB per call; loop for partial writes and EINTR.
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, uint64_t{1} << 30));
    ssize_t w = ::pwrite(fd, p, chunk, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("{}: write failed: {}", path, std::strerror(errno));
    }
    p += w;
    n -= static_cast<uint64_t>(w);
    offset += static_cast<uint64_t>(w);
  }
}

}  // namespace

SafetensorsWriter::SafetensorsWriter(std::string path, std::vector<TensorSpec> tensors,
                                     std::map<std::string, std::string> metadata)
    : path_(std::move(path)) {
  for (TensorSpec& s : tensors) {
    if (s.name.empty() || s.name == "__metadata__") {
      fail("{}: invalid tensor name '{}'", path_, s.name);
    }
    if (by_name_.count(s.name)) fail("{}: tensor '{}' given twice", path_, s.name);
    by_name_.emplace(s.name, slots_.size());
    Slot slot;
    slot.nbytes = spec_bytes(path_, s);
    slot.spec = std::move(s);
    slots_.push_back(std::move(slot));
  }

  // Data order: larger elements first, then by name, so every tensor is aligned to its element
  // size given the 8-byte aligned data section.
  std::vector<size_t> order(slots_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    size_t sa = dtype_size(slots_[a].spec.dtype), sb = dtype_size(slots_[b].spec.dtype);
    return sa != sb ? sa > sb : slots_[a].spec.name < slots_[b].spec.name;
  });
  uint64_t offset = 0;
  for (size_t i : order) {
    slots_[i].offset = offset;
    if (__builtin_add_overflow(offset, slots_[i].nbytes, &offset)) {
      fail("{}: total tensor size overflows", path_);
    }
  }

  // Header: __metadata__ first, then tensors by name.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  std::vector<size_t> by_name(slots_.size());
  for (size_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
  std::sort(by_name.begin(), by_name.end(),
            [&](size_t a, size_t b) { return slots_[a].spec.name < slots_[b].spec.name; });
  for (size_t i : by_name) {
    const Slot& s = slots_[i];
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["dtype"] = std::string(dtype_name(s.spec.dtype));
    entry["shape"] = s.spec.shape;
    entry["data_offsets"] = {s.offset, s.offset + s.nbytes};
    header[s.spec.name] = std::move(entry);
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    fail("{}: cannot encode the header (tensor names and metadata must be UTF-8): {}", path_,
         e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t header_len = text.size();
  data_begin_ = 8 + header_len;
  file_size_ = data_begin_ + offset;

  tmp_path_ = fmt::format("{}.tmp.{}", path_, static_cast<long>(::getpid()));
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("{}: cannot create: {}", tmp_path_, std::strerror(errno));
  unsigned char len_bytes[8];
  std::memcpy(len_bytes, &header_len, 8);  // little-endian host (checked in the reader)
  pwrite_all(fd_, tmp_path_, len_bytes, 8, 0);
  pwrite_all(fd_, tmp_path_, text.data(), text.size(), 8);
  // Size the file now, so parts can be written in any order.
  if (::ftruncate(fd_, static_cast<off_t>(file_size_)) != 0) {
    fail("{}: cannot size to {} bytes: {}", tmp_path_, file_size_, std::strerror(errno));
  }
}

SafetensorsWriter::~SafetensorsWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!finished_ && !tmp_path_.empty()) std::remove(tmp_path_.c_str());
}

bool SafetensorsWriter::has(std::string_view name) const { return by_name_.count(name) != 0; }

SafetensorsWriter::Slot& SafetensorsWriter::slot(std::string_view name) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) fail("{}: tensor '{}' was not declared to the writer", path_, name);
  return slots_[it->second];
}

void SafetensorsWriter::write(std::string_view name, const void* data, uint64_t nbytes) {
  Slot& s = slot(name);
  if (nbytes != s.nbytes) {
    fail("{}: tensor '{}' is {} {} = {} bytes, got {}", path_, name, dtype_name(s.spec.dtype),
         format_shape(s.spec.shape), s.nbytes, nbytes);
  }
  write_part(name, 0, data, nbytes);
}

void SafetensorsWriter::write_part(std::string_view name, uint64_t offset, const void* data,
                                   uint64_t nbytes) {
  ABL_CHECK(!finished_, "{}: write after finish()", path_);
  Slot& s = slot(name);
  if (offset > s.nbytes || nbytes > s.nbytes - offset) {
    fail("{}: tensor '{}': byte range [{}, {}+{}) is outside its {} bytes", path_, name, offset,
         offset, nbytes, s.nbytes);
  }
  pwrite_all(fd_, tmp_path_, data, nbytes, data_begin_ + s.offset + offset);
  s.written += nbytes;
}

void SafetensorsWriter::finish() {
  ABL_CHECK(!finished_, "{}: finish() called twice", path_);
  for (const Slot& s : slots_) {
    if (s.written != s.nbytes) {
      fail("{}: tensor '{}' got {} of its {} bytes before finish()", path_, s.spec.name, s.written,
           s.nbytes);
    }
  }
  if (::fsync(fd_) != 0) fail("{}: fsync failed: {}", tmp_path_, std::strerror(errno));
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) fail("{}: close failed: {}", tmp_path_, std::strerror(errno));
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    fail("{}: cannot rename {} into place: {}", path_, tmp_path_, std::strerror(errno));
  }
  finished_ = true;
}

void write_safetensors(const std::string& path, const std::vector<TensorData>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<TensorSpec> specs;
  for (const TensorData& t : tensors) specs.push_back(t.spec);
  SafetensorsWriter w(path, std::move(specs), metadata);
  for (const TensorData& t : tensors) {
    w.write(t.spec.name, t.data, spec_bytes(path, t.spec));
  }
  w.finish();
}

// ---- sharded ----

namespace {
constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";
}  // namespace

ShardPlan plan_shards(const std::string& dir, std::vector<TensorSpec> tensors, uint64_t max_shard_bytes) {
  ABL_CHECK(max_shard_bytes > 0, "{}: the maximum shard size must be positive", dir);
  ShardPlan plan;
  uint64_t current = 0;
  std::set<std::string, std::less<>> seen;
  for (TensorSpec& s : tensors) {
    if (!seen.insert(s.name).second) fail("{}: tensor '{}' given twice", dir, s.name);
    const uint64_t n = spec_bytes(dir, s);
    const bool full = current > 0 && (current > max_shard_bytes || n > max_shard_bytes - current);
    if (plan.tensors.empty() || full) {
      plan.tensors.emplace_back();
      plan.bytes.push_back(0);
      current = 0;
    }
    current += n;
    plan.bytes.back() += n;
    if (__builtin_add_overflow(plan.total_bytes, n, &plan.total_bytes)) {
      fail("{}: total tensor size overflows", dir);
    }
    plan.tensors.back().push_back(std::move(s));
  }
  if (plan.tensors.empty()) {
    plan.tensors.emplace_back();
    plan.bytes.push_back(0);
  }
  const size_t n_shards = plan.tensors.size();
  for (size_t i = 0; i < n_shards; ++i) {
    plan.file_names.push_back(n_shards == 1
                                  ? std::string(kSingleFile)
                                  : fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, n_shards));
  }
  return plan;
}

void write_shard_index(const std::string& dir, const ShardPlan& plan) {
  if (plan.num_shards() <= 1) return;
  nlohmann::json index;
  index["metadata"]["total_size"] = plan.total_bytes;
  nlohmann::json weight_map = nlohmann::json::object();  // sorted by name, as transformers writes it
  for (size_t i = 0; i < plan.num_shards(); ++i) {
    for (const TensorSpec& s : plan.tensors[i]) weight_map[s.name] = plan.file_names[i];
  }
  index["weight_map"] = std::move(weight_map);
  write_json_file((fs::path(dir) / kIndexFile).string(), index, 2);
}

ShardedSafetensorsWriter::ShardedSafetensorsWriter(std::string dir, std::vector<TensorSpec> tensors,
                                                   uint64_t max_shard_bytes,
                                                   std::map<std::string, std::string> metadata)
    : dir_(std::move(dir)), plan_(plan_shards(dir_, std::move(tensors), max_shard_bytes)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) fail("{}: cannot create folder: {}", dir_, ec.message());
  metadata.emplace("format", "pt");
  for (size_t i = 0; i < plan_.num_shards(); ++i) {
    for (const TensorSpec& s : plan_.tensors[i]) shard_of_.emplace(s.name, i);
    shards_.push_back(std::make_unique<SafetensorsWriter>((fs::path(dir_) / plan_.file_names[i]).string(),
                                                          plan_.tensors[i], metadata));
  }
}

ShardedSafetensorsWriter::~ShardedSafetensorsWriter() = default;

void ShardedSafetensorsWriter::write(std::string_view name, const void* data, uint64_t nbytes) {
  auto it = shard_of_.find(name);
  if (it == shard_of_.end()) fail("{}: tensor '{}' was not declared to the writer", dir_, name);
  shards_[it->second]->write(name, data, nbytes);
}

void ShardedSafetensorsWriter::write_part(std::string_view name, uint64_t offset, const void* data,
                                          uint64_t nbytes) {
  auto it = shard_of_.find(name);
  if (it == shard_of_.end()) fail("{}: tensor '{}' was not declared to the writer", dir_, name);
  shards_[it->second]->write_part(name, offset, data, nbytes);
}

void ShardedSafetensorsWriter::finish() {
  ABL_CHECK(!finished_, "{}: finish() called twice", dir_);
  for (auto& s : shards_) s->finish();
  write_shard_index(dir_, plan_);  // last: a folder with an index has all its shards
  finished_ = true;
}

std::vector<std::string> write_safetensors_sharded(const std::string& dir,
                                                   const std::vector<TensorData>& tensors,
                                                   uint64_t max_shard_bytes,
                                                   const std::map<std::string, std::string>& metadata) {
  std::vector<TensorSpec> specs;
  for (const TensorData& t : tensors) specs.push_back(t.spec);
  ShardedSafetensorsWriter w(dir, std::move(specs), max_shard_bytes, metadata);
  for (const TensorData& t : tensors) w.write(t.spec.name, t.data, spec_bytes(dir, t.spec));
  w.finish();
  return w.shard_names();
}

uint64_t parse_byte_size(std::string_view text) {
  std::string s;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  size_t digits = 0;
  while (digits < s.size() && (std::isdigit(static_cast<unsigned char>(s[digits])) || s[digits] == '.')) {
    ++digits;
  }
  std::string number = s.substr(0, digits), unit = s.substr(digits);
  struct Unit {
    const char* name;
    double scale;
  };
  // transformers: "GB" is 10^9, "GiB" is 2^30 (same for K/M/T).
  static constexpr Unit kUnits[] = {
      {"", 1.0},           {"B", 1.0},           {"KB", 1e3},        {"MB", 1e6},
      {"GB", 1e9},         {"TB", 1e12},         {"KIB", 1024.0},    {"MIB", 1048576.0},
      {"GIB", 1073741824.0}, {"TIB", 1099511627776.0},
  };
  const Unit* found = nullptr;
  for (const Unit& u : kUnits) {
    if (unit == u.name) found = &u;
  }
  char* end = nullptr;
  double value = number.empty() ? -1.0 : std::strtod(number.c_str(), &end);
  if (!found || number.empty() || end != number.c_str() + number.size() || !(value > 0)) {
    fail("invalid size '{}' (expected e.g. 5GB, 500MB, 2GiB or a number of bytes)", text);
  }
  double bytes = value * found->scale;
  if (bytes >= 1.8e19) fail("size '{}' is too large", text);
  return static_cast<uint64_t>(bytes);
}

}  // namespace abl::io
