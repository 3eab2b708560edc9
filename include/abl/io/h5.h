// Small RAII layer over the HDF5 C API. Every id is owned by an `Id` and closed once; every call
// goes through H5_CHECK, which throws abl::Error naming the file, the object and the call, with
// the top of HDF5's own error stack (HDF5's automatic printing is switched off).
// A file opened on a communicator uses the MPI-IO driver: writes of rows are collective
// (H5FD_MPIO_COLLECTIVE, every rank writes its own rows, possibly none), reads are independent.
// A file opened without one (MPI_COMM_NULL) uses the sec2 driver and needs no MPI at all.
//
// Strings: HDF5 1.10 cannot write variable-length data through the MPI-IO driver ("Parallel IO
// does not support writing VL ... datatypes yet"). Two ways around it are offered:
//   - fixed-width UTF-8 datasets (`File::create_string_dataset` + `Dataset::write_string_rows`),
//     written collectively; the width must be known when the dataset is created
//     (`mpi::collective_max_bytes` agrees on one);
//   - deferred variable-length datasets (`OutputFile::declare_strings` / `write_strings`): each
//     write gathers the rows to rank 0, which writes them in a serial reopen at commit().
#pragma once
#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "abl/io/mpi_collectives.h"

namespace abl::io::h5 {

// True once a write, flush or close failed (a full disk, say). HDF5's own state may then be broken
// (closing that file again at exit crashes inside HDF5 1.10), so an error exit must not shut HDF5
// down — neither H5close() nor MPI_Finalize, which calls it — but end the process directly.
bool write_failed();

// Reserves `bytes` of disk space after the current end of the file at `path` (fallocate with
// FALLOC_FL_KEEP_SIZE: the size stays, the blocks are the file's), so writes that grow the file into
// them cannot fail for a full disk. Returns "" when reserved or when the file system cannot reserve
// (then nothing is promised), else the reason ("No space left on device").
std::string reserve_space(const std::string& path, int64_t bytes);
// Gives back blocks reserved beyond the end of the file (truncate to its own size).
void release_reserved_space(const std::string& path);
// fsync of a closed file, and of the folder holding it (after a rename): a file renamed to its
// final name is on the disk with its name. Errors are thrown, naming the path.
void sync_path(const std::string& path);
void sync_parent_folder(const std::string& path);

// Throws abl::Error "<file>: <object>: <call> failed: <HDF5 message> (<source>:<line>)".
[[noreturn]] void raise(const char* call, std::string_view file, std::string_view object,
                        const char* source, int line);

// Every HDF5 return value (hid_t, herr_t, htri_t, ssize_t) is negative on failure.
template <typename T>
T check(T ret, const char* call, std::string_view file, std::string_view object, const char* source,
        int line) {
  if (ret < 0) raise(call, file, object, source, line);
  return ret;
}

#define H5_CHECK(call, file, object) \
  ::abl::io::h5::check((call), #call, (file), (object), __FILE__, __LINE__)

// Owns one HDF5 id and closes it with the matching H5?close (file, group, dataset, dataspace,
// datatype, attribute, property list). Never wrap the predefined H5T_NATIVE_* types.
class Id {
 public:
  Id() = default;
  explicit Id(hid_t id) : id_(id) {}
  ~Id() { reset(); }
  Id(Id&& other) noexcept : id_(other.release()) {}
  Id& operator=(Id&& other) noexcept;
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset();     // closes (errors ignored: use File::close() where a failure matters)
  hid_t release();  // gives up ownership without closing

 private:
  hid_t id_ = H5I_INVALID_HID;
};

// Element types of numeric datasets.
enum class Type : uint8_t { f32, f64, i64, i32, u8 };
std::string_view type_name(Type t);  // "f32", ...
size_t type_size(Type t);
hid_t native_type(Type t);  // H5T_NATIVE_FLOAT, ... (predefined, not to be closed)

template <typename T>
constexpr Type type_of() {
  if constexpr (std::is_same_v<T, float>) return Type::f32;
  else if constexpr (std::is_same_v<T, double>) return Type::f64;
  else if constexpr (std::is_same_v<T, int64_t>) return Type::i64;
  else if constexpr (std::is_same_v<T, int32_t>) return Type::i32;
  else if constexpr (std::is_same_v<T, uint8_t>) return Type::u8;
  else static_assert(sizeof(T) == 0, "element type must be float, double, int64, int32 or uint8");
}

struct DatasetOptions {
  std::vector<int64_t> chunk;  // empty: contiguous, or ~64 KiB row chunks when extendible
  bool extendible = false;     // unlimited first dimension (requires chunking)
};

// What every object of one open file shares: its path (for messages) and its communicator.
struct FileContext {
  std::string path;
  MPI_Comm comm = MPI_COMM_NULL;  // not owned; MPI_COMM_NULL for serial files
  bool parallel() const { return comm != MPI_COMM_NULL; }
};

class Dataset {
 public:
  Dataset() = default;
  Dataset(Id id, std::shared_ptr<const FileContext> ctx, std::string path);

  const std::string& path() const { return path_; }
  hid_t id() const { return id_.get(); }
  std::vector<int64_t> dims() const;  // current extent
  int64_t rows() const;               // dims()[0]
  int64_t row_elems() const;          // product of dims()[1:]
  // Writes the dataset's cached chunks (H5Dflush) and throws if that fails: closing a dataset
  // (Id::reset) ignores errors, so a write whose chunk reaches the disk only at close must be
  // flushed first where a failure matters.
  void flush();
  bool is_string() const;
  Type type() const;  // numeric datasets only

  // Rows [first_row, first_row + n_rows) from a row-major block of n_rows * row_elems()
  // values. Collective on parallel files: every rank calls, n_rows may be 0.
  template <typename T>
  void write_rows(int64_t first_row, int64_t n_rows, const T* data) {
    write_rows_raw(type_of<T>(), first_row, n_rows, data);
  }
  // Independent read of rows into `out` (n_rows * row_elems() values); any rank, any time.
  template <typename T>
  void read_rows(int64_t first_row, int64_t n_rows, T* out) const {
    read_rows_raw(type_of<T>(), first_row, n_rows, out);
  }
  template <typename T>
  std::vector<T> read_all() const {
    std::vector<T> out(static_cast<size_t>(rows() * row_elems()));
    read_rows(0, rows(), out.data());
    return out;
  }

  // Sets the first dimension to `new_rows` (extendible datasets; collective, same value).
  void extend(int64_t new_rows);
  // Collective append: grows the dataset by the sum of every rank's n_rows and writes this
  // rank's rows after those of lower ranks. Returns the first row written by this rank.
  template <typename T>
  int64_t append_rows(int64_t n_rows, const T* data) {
    return append_rows_raw(type_of<T>(), n_rows, data);
  }

  // Fixed-width string datasets: writes rows [first_row, first_row + rows.size()), collective
  // on parallel files; a string longer than the width is an error (on every rank).
  void write_string_rows(int64_t first_row, const std::vector<std::string>& rows);
  // Fixed-width or variable-length; n_rows < 0: to the end. Trailing NULs are stripped. A
  // dataset of rank > 1 gives n_rows * row_elems() strings, row-major.
  std::vector<std::string> read_strings(int64_t first_row = 0, int64_t n_rows = -1) const;
  int64_t string_width() const;  // bytes per row of a fixed-width dataset, 0 for variable
  // Variable-length UTF-8 datasets of any rank (File::create_vlen_string_dataset; serial files
  // only): rows [first_row, first_row + n) from n * row_elems() strings, row-major.
  void write_vlen_string_rows(int64_t first_row, const std::vector<std::string>& strings);

  // Compound datasets whose members are all reals (File::create_f64_compound_dataset).
  std::vector<std::string> compound_fields() const;  // member names in file order
  // Rows [first_row, first_row + n_rows) from n_rows * compound_fields().size() values,
  // row-major in member order. Collective on parallel files like write_rows.
  void write_compound_rows(int64_t first_row, int64_t n_rows, const double* data);
  // n_rows < 0: to the end. Values row-major in compound_fields() order.
  std::vector<double> read_compound_rows(int64_t first_row = 0, int64_t n_rows = -1) const;

 private:
  void write_rows_raw(Type t, int64_t first_row, int64_t n_rows, const void* data);
  void read_rows_raw(Type t, int64_t first_row, int64_t n_rows, void* out) const;
  int64_t append_rows_raw(Type t, int64_t n_rows, const void* data);
  void write_block(hid_t mem_type, int64_t first_row, int64_t n_rows, const void* data);
  // "" when rows [first_row, first_row + n_rows) lie inside the dataset, else why not.
  std::string row_range_problem(int64_t first_row, int64_t n_rows) const;
  // File and memory dataspaces selecting those rows (whole rows of every other dimension); an
  // empty selection of both for n_rows == 0 (a rank joining a collective transfer with nothing).
  std::pair<Id, Id> select_rows(int64_t first_row, int64_t n_rows) const;

  Id id_;
  std::shared_ptr<const FileContext> ctx_;
  std::string path_;
};

// Closed by its destructor like every id, except a parallel file destroyed while an exception
// is in flight: it is abandoned (see abandon()), since a collective close on a rank that fails
// alone would wait forever for the others.
class File {
 public:
  File() = default;
  ~File();
  File(File&&) noexcept = default;
  File& operator=(File&&) noexcept = default;
  // Truncates or creates. comm != MPI_COMM_NULL: MPI-IO driver, collective over comm.
  static File create(const std::string& path, MPI_Comm comm);
  // Opens an existing file; serial (sec2) when comm == MPI_COMM_NULL.
  static File open(const std::string& path, MPI_Comm comm = MPI_COMM_NULL, bool writable = false);
  // Serial and read-only, without HDF5's file lock: for a file that another process holds
  // open for writing (the trials.h5.partial of a running sweep), which File::open refuses
  // ("unable to lock file"). It sees what that process last flushed (File::flush). Use it only
  // after File::open failed to lock: HDF5 refuses to open a file again in the same process
  // with other locking settings than it is open with ("file locking flag values don't match").
  static File open_unlocked(const std::string& path);

  const std::string& path() const { return ctx_->path; }
  MPI_Comm comm() const { return ctx_->comm; }
  bool parallel() const { return ctx_ && ctx_->parallel(); }
  bool is_open() const { return id_.valid(); }
  hid_t id() const { return id_.get(); }
  // Closes the file (collective on parallel files). Every dataset, group and attribute of the
  // file must be closed first; otherwise the error lists how many are still open.
  void close();
  // Writes everything HDF5 buffers for the file to the operating system (H5Fflush, collective
  // on parallel files): a process killed afterwards leaves a file that opens and reads back
  // what was written so far.
  void flush();
  // flush(), then the operating system's buffers to the disk (fsync; serial files): what a commit
  // mark promises is on the disk before the mark is written. Errors (a full disk) are thrown.
  void sync();
  // Drops the id without closing it: for a parallel file on an error path, where a collective
  // close could wait forever for ranks that are not closing. HDF5 closes it at exit.
  void abandon();

  bool exists(const std::string& path) const;  // every link along the path exists
  void create_group(const std::string& path);  // with missing parents (collective in parallel)
  Dataset create_dataset(const std::string& path, Type type, const std::vector<int64_t>& dims,
                         const DatasetOptions& options = {});
  // Fixed-width UTF-8 strings (NUL-padded) of `width` bytes per row, `rows` rows.
  Dataset create_string_dataset(const std::string& path, int64_t rows, int64_t width,
                                const DatasetOptions& options = {});
  // Creates and fills a variable-length UTF-8 string dataset (serial files only).
  void write_vlen_strings(const std::string& path, const std::vector<std::string>& strings);
  // An empty variable-length UTF-8 string dataset of shape `dims` (serial files only), filled
  // with Dataset::write_vlen_string_rows; extendible like any other (unwritten elements read
  // as empty strings).
  Dataset create_vlen_string_dataset(const std::string& path, const std::vector<int64_t>& dims,
                                     const DatasetOptions& options = {});
  // A compound dataset of `rows` records whose members are `fields` (f64 each, in that order):
  // one named column per value, which h5py shows as a structured array.
  Dataset create_f64_compound_dataset(const std::string& path,
                                      const std::vector<std::string>& fields, int64_t rows,
                                      const DatasetOptions& options = {});
  Dataset open_dataset(const std::string& path) const;

  // Attributes of the object at `object` ("/" for the root group). Writing is collective on
  // parallel files: every rank passes the same value. Strings are variable-length UTF-8.
  void set_attr_string(const std::string& object, const std::string& name,
                       const std::string& value);
  void set_attr_int(const std::string& object, const std::string& name, int64_t value);
  void set_attr_double(const std::string& object, const std::string& name, double value);
  void set_attr_ints(const std::string& object, const std::string& name,
                     const std::vector<int64_t>& values);
  void set_attr_doubles(const std::string& object, const std::string& name,
                        const std::vector<double>& values);
  bool has_attr(const std::string& object, const std::string& name) const;
  std::string attr_string(const std::string& object, const std::string& name) const;
  int64_t attr_int(const std::string& object, const std::string& name) const;
  double attr_double(const std::string& object, const std::string& name) const;
  std::vector<int64_t> attr_ints(const std::string& object, const std::string& name) const;
  std::vector<double> attr_doubles(const std::string& object, const std::string& name) const;

 private:
  File(Id id, std::shared_ptr<const FileContext> ctx);
  Id vlen_utf8_type(const std::string& path) const;
  Dataset create_dataset_typed(const std::string& path, hid_t file_type, size_t elem_bytes,
                               const std::vector<int64_t>& dims, const DatasetOptions& options);
  void write_attr(const std::string& object, const std::string& name, hid_t type,
                  const std::vector<hsize_t>& dims, const void* data);
  Id open_attr(const std::string& object, const std::string& name) const;
  std::vector<int64_t> attr_dims(const Id& attr, const std::string& where) const;

  Id id_;
  std::shared_ptr<const FileContext> ctx_;
  int uncaught_at_open_ = 0;
};

// An output file that only gets its final name when complete. It is written as
// `final_path + ".partial"`; commit() closes it (collectively), writes the deferred string
// datasets from rank 0 and renames it to `final_path`, replacing any previous file there only
// at that moment. Destroyed without commit() the file keeps its ".partial" name, so a
// half-written file never looks finished. If the destruction happens while an exception is in
// flight, a parallel file is abandoned (File::abandon) instead of closed: the other ranks may
// not be closing, and the job is expected to end (MPI_Abort) rather than wait.
class OutputFile {
 public:
  // comm == MPI_COMM_NULL: a serial file (no MPI needed).
  static OutputFile create(const std::string& final_path, MPI_Comm comm);
  static std::string partial_path_for(const std::string& final_path);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  File& file() { return file_; }
  const std::string& final_path() const { return final_path_; }
  const std::string& partial_path() const { return file_.path(); }
  bool committed() const { return committed_; }

  // A variable-length UTF-8 string dataset of `rows` rows, written at commit (collective).
  void declare_strings(const std::string& path, int64_t rows);
  // Collective: this rank's rows [first_row, first_row + rows.size()) of a declared dataset,
  // gathered to rank 0. commit() fails unless every row was given exactly once.
  void write_strings(const std::string& path, int64_t first_row,
                     const std::vector<std::string>& rows);

  // Collective: reserves `bytes` of disk for the file before any data is written (reserve_space,
  // by rank 0), so a full disk is an error on every rank here — not a failure inside a collective
  // write, from which HDF5 cannot recover all ranks alike.
  void reserve(int64_t bytes);

  // Collective. Every Dataset of the file must be destroyed (or reset) first. Throws on every
  // rank if anything fails; the file then keeps its partial name.
  void commit();

 private:
  OutputFile(std::string final_path, File file);
  void write_deferred_strings() const;  // rank 0, after the parallel close

  struct Strings {
    int64_t n = 0;                  // rows of the dataset
    std::vector<std::string> rows;  // rank 0 only
    std::vector<uint8_t> given;     // rank 0 only: times each row was written
  };
  std::string final_path_;
  File file_;
  int rank_ = 0;
  std::map<std::string, Strings> strings_;
  bool committed_ = false;
  int uncaught_at_create_ = 0;
};

}  // namespace abl::io::h5
