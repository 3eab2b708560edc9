// Safetensors reading: header validation, mmapped tensor access, sharded model folders.
// Validation mirrors the reference implementation (data section fully covered, no overlaps,
// sizes consistent) and adds checked arithmetic so that no header value can cause an
// out-of-bounds read; every message starts with the file's path.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>

#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/io/json_file.h"
#include "abl/io/safetensors.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian; this reader maps it without byte swapping"
#endif

namespace abl::io {

namespace fs = std::filesystem;

namespace {

// The reference format caps the header at 100 MB; a larger length is a corrupt file.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeEntry {
  std::string_view name;
  int bits;
};

// Every dtype of the safetensors format, so that "unknown" and "unsupported" can be told apart.
constexpr DTypeEntry kSafetensorsDTypes[] = {
    {"BOOL", 8},     {"U8", 8},       {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8},
    {"F8_E8M0", 8},  {"I16", 16},     {"U16", 16}, {"F16", 16},    {"BF16", 16},
    {"I32", 32},     {"U32", 32},     {"F32", 32}, {"F64", 64},    {"I64", 64},
    {"U64", 64},     {"C64", 64},     {"F4", 4},   {"F6_E2M3", 6}, {"F6_E3M2", 6},
};

// Non-negative JSON integer -> uint64_t; false for anything else.
bool json_u64(const nlohmann::json& j, uint64_t* out) {
  if (!j.is_number_unsigned()) return false;
  *out = j.get<uint64_t>();
  return true;
}

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string format_shape(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string supported_dtypes() { return "F32, F16, BF16"; }

bool is_safetensors_dtype(std::string_view name, int* bits) {
  for (const DTypeEntry& e : kSafetensorsDTypes) {
    if (e.name == name) {
      if (bits) *bits = e.bits;
      return true;
    }
  }
  return false;
}

DType TensorInfo::require_dtype() const {
  if (!dtype) {
    fail("{}: tensor '{}' has dtype {}, which is unsupported (supported: {})", file, name,
         dtype_name, supported_dtypes());
  }
  return *dtype;
}

// ---- SafetensorsFile ----

struct SafetensorsFile::Mapping {
  void* addr = nullptr;
  size_t len = 0;
  ~Mapping() {
    if (addr) ::munmap(addr, len);
  }
};

namespace {

struct ParsedHeader {
  std::vector<TensorInfo> tensors;
  std::map<std::string, std::string> metadata;
};

// Validates the header of the file `path` (size `file_size`, mapped at `base`) and returns the
// tensor table. Nothing outside [base, base + 8 + header length) is read here.
ParsedHeader parse_header(const std::string& path, size_t file_index, const unsigned char* base,
                          uint64_t file_size) {
  uint64_t header_len = 0;
  std::memcpy(&header_len, base, 8);  // little-endian u64 (checked at compile time above)
  if (header_len > file_size - 8) {
    fail("{}: header length {} exceeds the {} bytes that follow the length field "
         "(truncated, or not a safetensors file)",
         path, header_len, file_size - 8);
  }
  if (header_len > kMaxHeaderBytes) {
    fail("{}: header length {} is above the format's limit of {} bytes (corrupt file?)", path,
         header_len, kMaxHeaderBytes);
  }
  const uint64_t data_begin = 8 + header_len;
  const uint64_t data_size = file_size - data_begin;
  std::string_view text(reinterpret_cast<const char*>(base + 8), header_len);

  JsonParseOptions strict;
  strict.reject_duplicate_keys = true;
  JsonValue header = parse_json(text, fmt::format("{} (JSON header)", path), strict);
  if (!header.is_object()) {
    fail("{}: header must be a JSON object, found {}", path, header.type_name());
  }

  ParsedHeader out;
  for (auto it = header.json().begin(); it != header.json().end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& entry = it.value();
    if (name == "__metadata__") {
      if (!entry.is_object()) fail("{}: __metadata__ must be an object of strings", path);
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        if (!m.value().is_string()) {
          fail("{}: __metadata__ value of '{}' must be a string, found {}", path, m.key(),
               m.value().dump());
        }
        out.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    if (name.empty()) fail("{}: header has a tensor with an empty name", path);
    if (!entry.is_object()) {
      fail("{}: tensor '{}': entry must be an object with dtype, shape and data_offsets, found {}",
           path, name, entry.dump());
    }
    for (const char* key : {"dtype", "shape", "data_offsets"}) {
      if (!entry.contains(key)) fail("{}: tensor '{}': entry has no '{}'", path, name, key);
    }

    TensorInfo t;
    t.name = name;
    t.file = path;
    t.file_index = file_index;

    const nlohmann::json& dt = entry["dtype"];
    if (!dt.is_string()) fail("{}: tensor '{}': dtype must be a string, found {}", path, name, dt.dump());
    t.dtype_name = dt.get<std::string>();
    int bits = 0;
    if (!is_safetensors_dtype(t.dtype_name, &bits)) {
      fail("{}: tensor '{}': unknown dtype '{}' (supported: {})", path, name, t.dtype_name,
           supported_dtypes());
    }
    DType parsed;
    if (parse_dtype(t.dtype_name, &parsed)) t.dtype = parsed;

    const nlohmann::json& shape = entry["shape"];
    if (!shape.is_array()) {
      fail("{}: tensor '{}': shape must be a list of integers, found {}", path, name, shape.dump());
    }
    uint64_t numel = 1;
    for (const nlohmann::json& d : shape) {
      uint64_t dim = 0;
      if (!json_u64(d, &dim)) {
        if (d.is_number_integer()) {
          fail("{}: tensor '{}': shape {} has a negative dimension", path, name, shape.dump());
        }
        fail("{}: tensor '{}': shape {} must hold non-negative integers", path, name, shape.dump());
      }
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          __builtin_mul_overflow(numel, dim, &numel) ||
          numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail("{}: tensor '{}': shape {} has too many elements (overflow)", path, name, shape.dump());
      }
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    t.numel = static_cast<int64_t>(numel);
    uint64_t nbits = 0;
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(bits), &nbits)) {
      fail("{}: tensor '{}': {} {} is too large (overflow)", path, name, t.dtype_name, shape.dump());
    }
    if (nbits % 8 != 0) {
      fail("{}: tensor '{}': {} {} is not a whole number of bytes", path, name, t.dtype_name,
           shape.dump());
    }
    const uint64_t expected_bytes = nbits / 8;

    const nlohmann::json& offs = entry["data_offsets"];
    uint64_t b = 0, e = 0;
    if (!offs.is_array() || offs.size() != 2 || !json_u64(offs[0], &b) || !json_u64(offs[1], &e)) {
      fail("{}: tensor '{}': data_offsets must be [begin, end] with non-negative integers, found {}",
           path, name, offs.dump());
    }
    if (b > e) fail("{}: tensor '{}': data_offsets [{}, {}] begin after end", path, name, b, e);
    if (e > data_size) {
      fail("{}: tensor '{}': data_offsets [{}, {}] end beyond the data section ({} bytes)", path,
           name, b, e, data_size);
    }
    if (e - b != expected_bytes) {
      fail("{}: tensor '{}': {} {} needs {} bytes but data_offsets [{}, {}] span {}", path, name,
           t.dtype_name, shape.dump(), expected_bytes, b, e, e - b);
    }
    t.begin = data_begin + b;
    t.end = data_begin + e;
    out.tensors.push_back(std::move(t));
  }

  // The data section must be tiled exactly: sorted by offset, each tensor starts where the
  // previous ended and the last ends at the end of the file.
  std::vector<const TensorInfo*> by_offset;
  for (const TensorInfo& t : out.tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* x, const TensorInfo* y) {
    return x->begin != y->begin ? x->begin < y->begin : x->end < y->end;
  });
  uint64_t covered = data_begin;
  const TensorInfo* prev = nullptr;
  for (const TensorInfo* t : by_offset) {
    if (t->begin < covered) {
      fail("{}: tensors '{}' (data_offsets [{}, {}]) and '{}' (data_offsets [{}, {}]) overlap", path,
           prev->name, prev->begin - data_begin, prev->end - data_begin, t->name,
           t->begin - data_begin, t->end - data_begin);
    }
    if (t->begin > covered) {
      fail("{}: bytes [{}, {}) of the data section (before tensor '{}') belong to no tensor; "
           "the format requires the data section to be fully covered",
           path, covered - data_begin, t->begin - data_begin, t->name);
    }
    covered = t->end;
    prev = t;
  }
  if (covered != file_size) {
    fail("{}: the last {} bytes of the data section belong to no tensor; "
         "the format requires the data section to be fully covered",
         path, file_size - covered);
  }
  return out;
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path, size_t file_index) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("{}: cannot stat: {}", path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail("{}: not a regular file", path);
  file_size_ = static_cast<uint64_t>(st.st_size);
  if (file_size_ < 8) {
    fail("{}: file is {} bytes, too short for a safetensors file (it starts with an 8-byte "
         "header length)",
         path, file_size_);
  }
  void* addr = ::mmap(nullptr, file_size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (addr == MAP_FAILED) fail("{}: cannot map: {}", path, std::strerror(errno));
  map_ = std::make_unique<Mapping>();
  map_->addr = addr;
  map_->len = file_size_;

  ParsedHeader h = parse_header(path, file_index, static_cast<const unsigned char*>(addr), file_size_);
  tensors_ = std::move(h.tensors);
  metadata_ = std::move(h.metadata);
  uint64_t header_len = 0;
  std::memcpy(&header_len, addr, 8);
  data_begin_ = 8 + header_len;
}

SafetensorsFile::~SafetensorsFile() = default;
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                             [](const TensorInfo& t, std::string_view n) { return t.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

const TensorInfo& SafetensorsFile::tensor(std::string_view name) const {
  const TensorInfo* t = find(name);
  if (!t) fail("{}: no tensor named '{}'", path_, name);
  return *t;
}

void SafetensorsFile::check_owned(const TensorInfo& t) const {
  // A TensorInfo from another file would index past this mapping.
  if (t.file != path_ || t.end > file_size_ || t.begin > t.end) {
    fail("{}: tensor '{}' belongs to {}, not to this file", path_, t.name, t.file);
  }
}

const unsigned char* SafetensorsFile::bytes(const TensorInfo& t) const {
  check_owned(t);
  return static_cast<const unsigned char*>(map_->addr) + t.begin;
}

void SafetensorsFile::read_bytes(const TensorInfo& t, uint64_t offset, uint64_t nbytes,
                                 void* dst) const {
  check_owned(t);
  if (offset > t.nbytes() || nbytes > t.nbytes() - offset) {
    fail("{}: tensor '{}': byte range [{}, {}+{}) is outside its {} bytes", path_, t.name, offset,
         offset, nbytes, t.nbytes());
  }
  if (nbytes) std::memcpy(dst, bytes(t) + offset, nbytes);
}

void SafetensorsFile::read_f32(const TensorInfo& t, int64_t first, int64_t count, float* dst) const {
  check_owned(t);
  DType dt = t.require_dtype();
  if (first < 0 || count < 0 || first > t.numel || count > t.numel - first) {
    fail("{}: tensor '{}': element range [{}, {}+{}) is outside its {} elements {}", path_, t.name,
         first, first, count, t.numel, format_shape(t.shape));
  }
  // Nothing to copy; `dst` may be the null data() of an empty vector, which memcpy must not see
  // (found by fuzzing with UBSan: a zero-element F32 tensor read into an empty vector).
  if (count == 0) return;
  convert_to_f32(dt, bytes(t) + static_cast<uint64_t>(first) * dtype_size(dt), dst,
                 static_cast<size_t>(count));
  // NaN or Inf in a weight poisons every later number (directions, KL) without an error: refuse
  // it here, where every weight of every backend passes, naming the tensor and the element.
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(dst[i])) {
      fail("{}: tensor '{}' holds a non-finite value ({}) at element {} of {}: the weights are corrupt", path_,
           t.name, dst[i], first + i, format_shape(t.shape));
    }
  }
}

// ---- SafetensorsReader ----

namespace {
constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
}  // namespace

SafetensorsReader::SafetensorsReader(const std::string& path) : path_(path) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) fail("{}: no such file or directory", path);
  if (fs::is_directory(st)) {
    fs::path dir(path);
    // transformers prefers the single file when both are present; so do we.
    if (fs::is_regular_file(dir / kSingleFile, ec)) {
      open_single((dir / kSingleFile).string());
    } else if (fs::is_regular_file(dir / kIndexFile, ec)) {
      open_index((dir / kIndexFile).string());
    } else {
      fail("{}: no {} or {} in this folder", path, kSingleFile, kIndexFile);
    }
  } else if (ends_with(path, ".index.json")) {
    open_index(path);
  } else {
    open_single(path);
  }
  build_table();
}

void SafetensorsReader::open_single(const std::string& file) { files_.emplace_back(file, 0); }

void SafetensorsReader::open_index(const std::string& index) {
  index_path_ = index;
  JsonValue doc = read_json_file(index);
  if (!doc.is_object()) doc.fail(fmt::format("must be a JSON object, found {}", doc.type_name()));
  JsonValue weight_map = doc.at("weight_map");
  if (!weight_map.is_object()) {
    weight_map.fail(fmt::format("must be an object of tensor name -> shard file, found {}",
                                weight_map.type_name()));
  }
  fs::path dir = fs::path(index).parent_path();

  std::map<std::string, std::string> tensor_to_shard;
  std::set<std::string> shard_names;
  for (const std::string& name : weight_map.keys()) {
    JsonValue v = weight_map.at(name);
    const std::string& shard = v.as_string();
    // The OS would read the name only up to a NUL ("\u0000" in JSON): a different file than named.
    if (shard.find('\0') != std::string::npos) {
      fail("{}: weight_map entry '{}' names a shard whose name holds a NUL byte", index, name);
    }
    fs::path rel(shard);
    bool escapes = shard.empty() || rel.is_absolute() ||
                   std::any_of(rel.begin(), rel.end(), [](const fs::path& p) { return p == ".."; });
    if (escapes) {
      fail("{}: weight_map entry '{}' names shard '{}', which is not a file inside {}", index, name,
           shard, dir.string());
    }
    tensor_to_shard[name] = shard;
    shard_names.insert(shard);
  }
  if (shard_names.empty()) fail("{}: weight_map is empty", index);

  std::map<std::string, size_t> shard_index;
  for (const std::string& shard : shard_names) {
    fs::path p = dir / shard;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      auto first = std::find_if(tensor_to_shard.begin(), tensor_to_shard.end(),
                                [&](const auto& kv) { return kv.second == shard; });
      fail("{}: shard file {} (holding '{}' and others) does not exist", index, p.string(),
           first->first);
    }
    shard_index[shard] = files_.size();
    files_.emplace_back(p.string(), files_.size());
  }

  for (const auto& [name, shard] : tensor_to_shard) {
    const SafetensorsFile& f = files_[shard_index[shard]];
    if (!f.find(name)) {
      fail("{}: tensor '{}' is mapped to {} but that file does not contain it", index, name,
           f.path());
    }
  }
  std::vector<std::string> unlisted;
  for (const SafetensorsFile& f : files_) {
    for (const TensorInfo& t : f.tensors()) {
      if (!tensor_to_shard.count(t.name)) unlisted.push_back(t.name);
    }
  }
  if (!unlisted.empty()) {
    log::warn("{}: {} tensor(s) in the shards are not listed in weight_map (first: '{}'); "
              "they are read anyway",
              index, unlisted.size(), unlisted.front());
  }
  if (auto meta = doc.find("metadata"); meta && meta->is_object()) {
    if (auto total = meta->find("total_size"); total && total->is_integer()) {
      uint64_t sum = 0;
      for (const SafetensorsFile& f : files_) {
        for (const TensorInfo& t : f.tensors()) sum += t.nbytes();
      }
      if (static_cast<uint64_t>(total->as_int()) != sum) {
        log::debug("{}: metadata.total_size {} differs from the {} tensor bytes in the shards",
                   index, total->as_int(), sum);
      }
    }
  }
}

void SafetensorsReader::build_table() {
  for (const SafetensorsFile& f : files_) {
    for (const TensorInfo& t : f.tensors()) {
      auto [it, inserted] = by_name_.emplace(t.name, tensors_.size());
      if (!inserted) {
        fail("{}: tensor '{}' is stored twice, in {} and in {}", path_, t.name,
             tensors_[it->second].file, t.file);
      }
      tensors_.push_back(t);
    }
  }
  std::sort(tensors_.begin(), tensors_.end(),
            [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
  for (size_t i = 0; i < tensors_.size(); ++i) by_name_[tensors_[i].name] = i;
}

std::vector<std::string> SafetensorsReader::file_paths() const {
  std::vector<std::string> out;
  for (const SafetensorsFile& f : files_) out.push_back(f.path());
  return out;
}

const TensorInfo* SafetensorsReader::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& SafetensorsReader::tensor(std::string_view name) const {
  const TensorInfo* t = find(name);
  if (!t) {
    std::string where = index_path_.empty() ? files_.front().path() : index_path_;
    fail("{}: no tensor named '{}'", where, name);
  }
  return *t;
}

void SafetensorsReader::read_bytes(const TensorInfo& t, uint64_t offset, uint64_t nbytes,
                                   void* dst) const {
  if (t.file_index >= files_.size()) fail("{}: tensor '{}' is not from this model", path_, t.name);
  files_[t.file_index].read_bytes(t, offset, nbytes, dst);
}

void SafetensorsReader::read_f32(const TensorInfo& t, int64_t first, int64_t count,
                                 float* dst) const {
  if (t.file_index >= files_.size()) fail("{}: tensor '{}' is not from this model", path_, t.name);
  files_[t.file_index].read_f32(t, first, count, dst);
}

std::vector<float> SafetensorsReader::read_f32(std::string_view name) const {
  const TensorInfo& t = tensor(name);
  std::vector<float> out(static_cast<size_t>(t.numel));
  read_f32(t, 0, t.numel, out.data());
  return out;
}

}  // namespace abl::io
