// Safetensors: a reader (one mmapped file or a sharded HF folder) and writers (one file or HF shards).
// Headers are fully validated at open, so a corrupt file fails naming itself before any data is
// touched; reads take byte or element ranges so that a rank loads only its slice of a tensor.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "abl/core/dtype.h"

namespace abl::io {

// Where and what one tensor is. Tensors of any safetensors dtype are listed (so `info` can show
// them and a check can say what is wrong); only F32/F16/BF16 ones can be converted to fp32.
struct TensorInfo {
  std::string name;
  std::string dtype_name;       // as written in the header: "BF16", "I8", "F8_E4M3", ...
  std::optional<DType> dtype;   // set when dtype_name is F32, F16 or BF16
  std::vector<int64_t> shape;   // empty for a scalar
  int64_t numel = 0;
  std::string file;             // path of the file that holds the data
  size_t file_index = 0;        // position of `file` in the reader's file list
  uint64_t begin = 0;           // absolute byte offsets of the data in `file`: [begin, end)
  uint64_t end = 0;

  uint64_t nbytes() const { return end - begin; }
  // The dtype, or abl::Error "<file>: tensor '<name>' has unsupported dtype I8 (supported: ...)".
  DType require_dtype() const;
};

// "[4096, 14336]"
std::string format_shape(const std::vector<int64_t>& shape);
// "F32, F16, BF16": the dtypes this program reads and writes.
std::string supported_dtypes();
// True for every dtype string of the safetensors format (also the unsupported ones);
// *bits receives the element size in bits (4 and 6 for the sub-byte float formats).
bool is_safetensors_dtype(std::string_view name, int* bits);

// One .safetensors file, mapped read-only for the lifetime of the object.
class SafetensorsFile {
 public:
  // Opens, maps and validates the file; throws abl::Error naming `path` on any problem.
  // `file_index` is copied into every TensorInfo (used by SafetensorsReader).
  explicit SafetensorsFile(const std::string& path, size_t file_index = 0);
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t file_size() const { return file_size_; }
  uint64_t data_begin() const { return data_begin_; }  // 8 + header length
  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // sorted by name
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  const TensorInfo* find(std::string_view name) const;  // nullptr when absent
  const TensorInfo& tensor(std::string_view name) const;  // throws naming the file

  // The tensor's bytes inside the mapping (no alignment guarantee).
  const unsigned char* bytes(const TensorInfo& t) const;
  // Copies bytes [offset, offset + nbytes) of tensor `t`; a range outside it is an error.
  void read_bytes(const TensorInfo& t, uint64_t offset, uint64_t nbytes, void* dst) const;
  // Converts elements [first, first + count) (row-major) of `t` to fp32.
  void read_f32(const TensorInfo& t, int64_t first, int64_t count, float* dst) const;

 private:
  struct Mapping;
  void check_owned(const TensorInfo& t) const;

  std::string path_;
  std::unique_ptr<Mapping> map_;
  uint64_t file_size_ = 0;
  uint64_t data_begin_ = 0;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

// The tensors of a model: a folder with model.safetensors (preferred, as in transformers) or
// model.safetensors.index.json plus its shards, an index file, or a single .safetensors file.
// Each shard is opened once; the index must agree with the shards' contents.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::string& path);

  const std::string& path() const { return path_; }              // as given
  const std::string& index_path() const { return index_path_; }  // "" unless sharded
  size_t num_files() const { return files_.size(); }
  const SafetensorsFile& file(size_t i) const { return files_[i]; }
  std::vector<std::string> file_paths() const;
  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // all files, by name

  const TensorInfo* find(std::string_view name) const;
  const TensorInfo& tensor(std::string_view name) const;  // throws naming the files searched

  void read_bytes(const TensorInfo& t, uint64_t offset, uint64_t nbytes, void* dst) const;
  void read_f32(const TensorInfo& t, int64_t first, int64_t count, float* dst) const;
  std::vector<float> read_f32(std::string_view name) const;  // the whole tensor

 private:
  void open_single(const std::string& file);
  void open_index(const std::string& index);
  void build_table();

  std::string path_;
  std::string index_path_;
  std::vector<SafetensorsFile> files_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> by_name_;
};

// ---- writing ----

// A tensor to lay out in a file; the data comes later (streaming) or with it (TensorData).
struct TensorSpec {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
};

struct TensorData {
  TensorSpec spec;
  const void* data = nullptr;  // numel * dtype_size bytes, row-major
};

// Writes one file: the header is laid out at construction, data arrives by name in any order
// (whole tensors or parts), and finish() renames the temp file into place. A writer destroyed
// before finish() removes its temp file, so a half-written file never has the final name.
// Layout as the reference implementation: data ordered by element size (largest first, so every
// tensor is aligned to its element size) then name; header keys sorted by name, padded with
// spaces to a multiple of 8 bytes.
class SafetensorsWriter {
 public:
  SafetensorsWriter(std::string path, std::vector<TensorSpec> tensors,
                    std::map<std::string, std::string> metadata = {});
  ~SafetensorsWriter();
  SafetensorsWriter(const SafetensorsWriter&) = delete;
  SafetensorsWriter& operator=(const SafetensorsWriter&) = delete;

  const std::string& path() const { return path_; }
  uint64_t file_size() const { return file_size_; }
  bool has(std::string_view name) const;

  void write(std::string_view name, const void* data, uint64_t nbytes);  // the whole tensor
  void write_part(std::string_view name, uint64_t offset, const void* data, uint64_t nbytes);
  // Checks every tensor was written completely, flushes to disk and renames into place.
  void finish();

 private:
  struct Slot {
    TensorSpec spec;
    uint64_t offset = 0;  // in the data section
    uint64_t nbytes = 0;
    uint64_t written = 0;
  };
  Slot& slot(std::string_view name);

  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  uint64_t data_begin_ = 0;
  uint64_t file_size_ = 0;
  bool finished_ = false;
  std::vector<Slot> slots_;
  std::map<std::string, size_t, std::less<>> by_name_;
};

// Convenience: the whole file from tensors in memory.
void write_safetensors(const std::string& path, const std::vector<TensorData>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// The shard files of an HF-style model folder and the tensors each holds. Tensors are assigned
// in the given order, a new shard starting when the next tensor would push the current one past
// `max_shard_bytes` (a tensor larger than the limit gets a shard of its own), as transformers'
// split_torch_state_dict_into_shards. One shard is named model.safetensors; N > 1 are
// model-0000i-of-0000N.safetensors. The plan is a pure function of its arguments, so ranks that
// write different shards of one folder can each compute it and agree without communicating.
struct ShardPlan {
  std::vector<std::string> file_names;           // one per shard
  std::vector<std::vector<TensorSpec>> tensors;  // of each shard, in the given order
  std::vector<uint64_t> bytes;                   // data bytes of each shard
  uint64_t total_bytes = 0;                      // of all tensors ("total_size" of the index)

  size_t num_shards() const { return file_names.size(); }
};
// `dir` only names the folder in errors (a tensor given twice, a bad shape, a zero limit).
// No tensors at all still give one (empty) shard.
ShardPlan plan_shards(const std::string& dir, std::vector<TensorSpec> tensors,
                      uint64_t max_shard_bytes);

// Writes <dir>/model.safetensors.index.json ({"metadata": {"total_size"}, "weight_map"}) for a
// plan of more than one shard; does nothing for a single shard. Callers write it after every
// shard is complete, so a folder with an index has all its shards.
void write_shard_index(const std::string& dir, const ShardPlan& plan);

// HF-style model weights in `dir`, laid out by plan_shards, each shard written by a
// SafetensorsWriter; the index (N > 1) is written last by finish(). Each shard's metadata gets
// "format": "pt" unless given, as transformers expects.
class ShardedSafetensorsWriter {
 public:
  ShardedSafetensorsWriter(std::string dir, std::vector<TensorSpec> tensors,
                           uint64_t max_shard_bytes,
                           std::map<std::string, std::string> metadata = {});
  ~ShardedSafetensorsWriter();

  const std::vector<std::string>& shard_names() const { return plan_.file_names; }
  void write(std::string_view name, const void* data, uint64_t nbytes);
  void write_part(std::string_view name, uint64_t offset, const void* data, uint64_t nbytes);
  void finish();

 private:
  std::string dir_;
  ShardPlan plan_;
  std::vector<std::unique_ptr<SafetensorsWriter>> shards_;
  std::map<std::string, size_t, std::less<>> shard_of_;
  bool finished_ = false;
};

// Returns the shard file names written.
std::vector<std::string> write_safetensors_sharded(
    const std::string& dir, const std::vector<TensorData>& tensors, uint64_t max_shard_bytes,
    const std::map<std::string, std::string>& metadata = {});

// "5GB" (10^9, as in transformers), "500MB", "2GiB" (2^30), "123456" (bytes); case-insensitive.
uint64_t parse_byte_size(std::string_view text);

}  // namespace abl::io
