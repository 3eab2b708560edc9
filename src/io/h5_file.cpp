// Files, groups, dataset creation and attributes. Data are stored little-endian with the
// standard HDF5 types whatever the host, and groups along a path are created on demand, so a
// dataset path such as "/good/residuals" is all a writer has to name.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>

#include "abl/core/error.h"
#include "abl/core/watchdog.h"
#include "abl/io/h5.h"

namespace abl::io::h5 {
namespace {

// HDF5 prints every error stack to stderr by default; we report through abl::Error instead.
void quiet_hdf5() {
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

hid_t file_type(Type t) {
  switch (t) {
    case Type::f32: return H5T_IEEE_F32LE;
    case Type::f64: return H5T_IEEE_F64LE;
    case Type::i64: return H5T_STD_I64LE;
    case Type::i32: return H5T_STD_I32LE;
    case Type::u8: return H5T_STD_U8LE;
  }
  return H5I_INVALID_HID;
}

std::string join(const std::string& object, const std::string& name) {
  return object == "/" ? "/" + name : object + "/" + name;
}

}  // namespace

File::File(Id id, std::shared_ptr<const FileContext> ctx)
    : id_(std::move(id)), ctx_(std::move(ctx)), uncaught_at_open_(std::uncaught_exceptions()) {}

File::~File() {
  if (parallel() && std::uncaught_exceptions() > uncaught_at_open_) abandon();
}

// File access properties: the MPI-IO driver on a communicator, sec2 (serial) without one.
static Id file_access(const std::string& path, MPI_Comm comm) {
  Id fapl(H5_CHECK(H5Pcreate(H5P_FILE_ACCESS), path, "/"));
  if (comm != MPI_COMM_NULL) {
    H5_CHECK(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL), path, "/");
  } else {
    H5_CHECK(H5Pset_fapl_sec2(fapl.get()), path, "/");
  }
  return fapl;
}

File File::open_unlocked(const std::string& path) {
  quiet_hdf5();
  auto ctx = std::make_shared<FileContext>(FileContext{path, MPI_COMM_NULL});
  Id fapl = file_access(path, MPI_COMM_NULL);
#if H5_VERSION_GE(1, 10, 7)
  H5_CHECK(H5Pset_file_locking(fapl.get(), false, true), path, "/");
#endif
  Id file(H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), path, "/"));
  return File(std::move(file), std::move(ctx));
}

File File::create(const std::string& path, MPI_Comm comm) {
  watchdog::Scope at("HDF5 create (H5Fcreate)");
  quiet_hdf5();
  auto ctx = std::make_shared<FileContext>(FileContext{path, comm});
  Id fapl = file_access(path, comm);
  Id file(H5_CHECK(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), path, "/"));
  return File(std::move(file), std::move(ctx));
}

File File::open(const std::string& path, MPI_Comm comm, bool writable) {
  watchdog::Scope at("HDF5 open (H5Fopen)");
  quiet_hdf5();
  auto ctx = std::make_shared<FileContext>(FileContext{path, comm});
  Id fapl = file_access(path, comm);
  unsigned flags = writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY;
  Id file(H5_CHECK(H5Fopen(path.c_str(), flags, fapl.get()), path, "/"));
  return File(std::move(file), std::move(ctx));
}

void File::close() {
  watchdog::Scope at("HDF5 close (H5Fclose)");
  if (!id_.valid()) return;
  ssize_t open = H5Fget_obj_count(
      id_.get(), H5F_OBJ_DATASET | H5F_OBJ_GROUP | H5F_OBJ_DATATYPE | H5F_OBJ_ATTR | H5F_OBJ_LOCAL);
  mpi::agree(ctx_->comm, open == 0,
        fmt::format("{}: cannot close the file: {} datasets, groups or attributes are still open",
                    path(), open));
  hid_t id = id_.release();
  H5_CHECK(H5Fclose(id), path(), "/");
}

void File::abandon() { id_.release(); }

bool File::exists(const std::string& path) const {
  if (path.empty() || path == "/") return true;
  size_t at = 0;
  while (at != std::string::npos) {
    at = path.find('/', at + 1);
    std::string prefix = path.substr(0, at);
    if (prefix.empty() || prefix == "/") continue;
    if (H5_CHECK(H5Lexists(id_.get(), prefix.c_str(), H5P_DEFAULT), this->path(), prefix) <= 0) {
      return false;
    }
  }
  return true;
}

void File::create_group(const std::string& path) {
  Id lcpl(H5_CHECK(H5Pcreate(H5P_LINK_CREATE), this->path(), path));
  H5_CHECK(H5Pset_create_intermediate_group(lcpl.get(), 1), this->path(), path);
  Id group(H5_CHECK(H5Gcreate2(id_.get(), path.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                    this->path(), path));
}

Dataset File::create_dataset(const std::string& path, Type type, const std::vector<int64_t>& dims,
                             const DatasetOptions& options) {
  return create_dataset_typed(path, file_type(type), type_size(type), dims, options);
}

Dataset File::create_string_dataset(const std::string& path, int64_t rows, int64_t width,
                                    const DatasetOptions& options) {
  ABL_CHECK(width > 0, "{}: {}: string width must be positive, got {}", this->path(), path, width);
  Id type(H5_CHECK(H5Tcopy(H5T_C_S1), this->path(), path));
  H5_CHECK(H5Tset_size(type.get(), static_cast<size_t>(width)), this->path(), path);
  H5_CHECK(H5Tset_cset(type.get(), H5T_CSET_UTF8), this->path(), path);
  H5_CHECK(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), this->path(), path);
  return create_dataset_typed(path, type.get(), static_cast<size_t>(width), {rows}, options);
}

Dataset File::create_dataset_typed(const std::string& path, hid_t type, size_t elem_bytes,
                                   const std::vector<int64_t>& dims,
                                   const DatasetOptions& options) {
  const std::string& file = this->path();
  ABL_CHECK(!dims.empty(), "{}: {}: a dataset needs at least one dimension", file, path);
  std::vector<hsize_t> cur(dims.size()), max(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    ABL_CHECK(dims[i] >= 0, "{}: {}: negative dimension {}", file, path, dims[i]);
    cur[i] = max[i] = static_cast<hsize_t>(dims[i]);
  }
  if (options.extendible) max[0] = H5S_UNLIMITED;
  Id space(H5_CHECK(H5Screate_simple(static_cast<int>(dims.size()), cur.data(), max.data()), file,
                    path));

  Id dcpl(H5_CHECK(H5Pcreate(H5P_DATASET_CREATE), file, path));
  std::vector<hsize_t> chunk;
  if (!options.chunk.empty()) {
    ABL_CHECK(options.chunk.size() == dims.size(), "{}: {}: chunk has {} dimensions, dataset {}",
              file, path, options.chunk.size(), dims.size());
    for (int64_t c : options.chunk) {
      ABL_CHECK(c > 0, "{}: {}: chunk dimensions must be positive", file, path);
      chunk.push_back(static_cast<hsize_t>(c));
    }
  } else if (options.extendible) {
    // About 64 KiB per chunk (whole rows): small tables such as trials.h5 stay small, and
    // wide rows (a vocabulary of log-probabilities) get one row per chunk.
    size_t row_bytes = elem_bytes;
    chunk.push_back(1);
    for (size_t i = 1; i < dims.size(); ++i) {
      chunk.push_back(std::max<hsize_t>(cur[i], 1));
      row_bytes *= chunk.back();
    }
    chunk[0] = std::max<hsize_t>(1, (size_t{64} << 10) / std::max<size_t>(row_bytes, 1));
  }
  if (!chunk.empty()) {
    H5_CHECK(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), file, path);
  }
  // Rows are always written before they are read: no fill pass over freshly allocated space.
  // Variable-length data keep HDF5's default (empty) fill: HDF5 refuses "never" for them, and
  // an unwritten element must read as an empty string, not as a stray heap reference.
  const bool variable = H5_CHECK(H5Tis_variable_str(type), file, path) > 0 ||
                        H5_CHECK(H5Tdetect_class(type, H5T_VLEN), file, path) > 0;
  if (!variable) H5_CHECK(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), file, path);

  Id lcpl(H5_CHECK(H5Pcreate(H5P_LINK_CREATE), file, path));
  H5_CHECK(H5Pset_create_intermediate_group(lcpl.get(), 1), file, path);
  Id ds(H5_CHECK(
      H5Dcreate2(id_.get(), path.c_str(), type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
      file, path));
  return Dataset(std::move(ds), ctx_, path);
}

// The file type of variable-length UTF-8 string datasets, which only serial files can write.
Id File::vlen_utf8_type(const std::string& path) const {
  const std::string& file = this->path();
  ABL_CHECK(!parallel(), "{}: {}: variable-length strings cannot be written through MPI-IO", file,
            path);
  Id type(H5_CHECK(H5Tcopy(H5T_C_S1), file, path));
  H5_CHECK(H5Tset_size(type.get(), H5T_VARIABLE), file, path);
  H5_CHECK(H5Tset_cset(type.get(), H5T_CSET_UTF8), file, path);
  return type;
}

void File::write_vlen_strings(const std::string& path, const std::vector<std::string>& strings) {
  const std::string& file = this->path();
  Id type = vlen_utf8_type(path);
  hsize_t n = strings.size();
  Id space(H5_CHECK(H5Screate_simple(1, &n, nullptr), file, path));
  Id lcpl(H5_CHECK(H5Pcreate(H5P_LINK_CREATE), file, path));
  H5_CHECK(H5Pset_create_intermediate_group(lcpl.get(), 1), file, path);
  Id ds(H5_CHECK(H5Dcreate2(id_.get(), path.c_str(), type.get(), space.get(), lcpl.get(),
                            H5P_DEFAULT, H5P_DEFAULT),
                 file, path));
  if (strings.empty()) return;
  std::vector<const char*> ptrs(strings.size());
  for (size_t i = 0; i < strings.size(); ++i) ptrs[i] = strings[i].c_str();
  H5_CHECK(H5Dwrite(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), file, path);
}

Dataset File::create_vlen_string_dataset(const std::string& path, const std::vector<int64_t>& dims,
                                         const DatasetOptions& options) {
  Id type = vlen_utf8_type(path);
  // Chunk sizing counts the 16-byte heap reference each element keeps in the dataset itself.
  return create_dataset_typed(path, type.get(), 16, dims, options);
}

Dataset File::create_f64_compound_dataset(const std::string& path,
                                          const std::vector<std::string>& fields, int64_t rows,
                                          const DatasetOptions& options) {
  const std::string& file = this->path();
  ABL_CHECK(!fields.empty(), "{}: {}: a compound dataset needs at least one field", file, path);
  for (size_t i = 0; i < fields.size(); ++i) {
    ABL_CHECK(!fields[i].empty(), "{}: {}: field {} has an empty name", file, path, i);
    for (size_t j = 0; j < i; ++j) {
      ABL_CHECK(fields[i] != fields[j], "{}: {}: field '{}' appears twice", file, path, fields[i]);
    }
  }
  const size_t bytes = 8 * fields.size();
  Id type(H5_CHECK(H5Tcreate(H5T_COMPOUND, bytes), file, path));
  for (size_t i = 0; i < fields.size(); ++i) {
    H5_CHECK(H5Tinsert(type.get(), fields[i].c_str(), 8 * i, H5T_IEEE_F64LE), file, path);
  }
  return create_dataset_typed(path, type.get(), bytes, {rows}, options);
}

std::string reserve_space(const std::string& path, int64_t bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return std::strerror(errno);
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (bytes > 0 && ::fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, bytes) != 0) {
    // A file system that cannot reserve (EOPNOTSUPP: some network and parallel file systems) is
    // left to the free-space checks; a full one is the error.
    if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL) why = std::strerror(errno);
  }
  ::close(fd);
  return why;
}

void release_reserved_space(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (::truncate(path.c_str(), st.st_size) != 0) {
      // Best effort: the blocks stay reserved until the file is removed.
    }
  }
}

void sync_path(const std::string& path) {
  watchdog::Scope at("fsync");
  const int fd = ::open(path.c_str(), O_RDONLY);
  ABL_CHECK(fd >= 0, "{}: cannot open it to sync it: {}", path, std::strerror(errno));
  const bool ok = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  ABL_CHECK(ok, "{}: fsync failed: {}", path, std::strerror(err));
}

void sync_parent_folder(const std::string& path) {
  const size_t slash = path.rfind('/');
  sync_path(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash));
}

void File::sync() {
  flush();
  if (parallel()) return;  // the MPI-IO driver syncs in H5Fflush
  watchdog::Scope at("fsync");
  void* handle = nullptr;
  H5_CHECK(H5Fget_vfd_handle(id_.get(), H5P_DEFAULT, &handle), path(), "/");
  const int fd = *static_cast<int*>(handle);
  ABL_CHECK(::fsync(fd) == 0, "{}: fsync failed: {}", path(), std::strerror(errno));
}

void File::flush() {
  watchdog::Scope at("HDF5 flush (H5Fflush)");
  H5_CHECK(H5Fflush(id_.get(), H5F_SCOPE_GLOBAL), path(), "/");
}

Dataset File::open_dataset(const std::string& path) const {
  ABL_CHECK(exists(path), "{}: no dataset {}", this->path(), path);
  Id ds(H5_CHECK(H5Dopen2(id_.get(), path.c_str(), H5P_DEFAULT), this->path(), path));
  return Dataset(std::move(ds), ctx_, path);
}

// ---- attributes ----

void File::write_attr(const std::string& object, const std::string& name, hid_t type,
                      const std::vector<hsize_t>& dims, const void* data) {
  const std::string where = join(object, name);
  Id obj(H5_CHECK(H5Oopen(id_.get(), object.c_str(), H5P_DEFAULT), path(), object));
  if (H5_CHECK(H5Aexists(obj.get(), name.c_str()), path(), where) > 0) {
    H5_CHECK(H5Adelete(obj.get(), name.c_str()), path(), where);
  }
  Id space(dims.empty()
               ? H5_CHECK(H5Screate(H5S_SCALAR), path(), where)
               : H5_CHECK(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                          path(), where));
  Id attr(H5_CHECK(H5Acreate2(obj.get(), name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                   path(), where));
  H5_CHECK(H5Awrite(attr.get(), type, data), path(), where);
}

void File::set_attr_string(const std::string& object, const std::string& name,
                           const std::string& value) {
  Id type(H5_CHECK(H5Tcopy(H5T_C_S1), path(), object));
  H5_CHECK(H5Tset_size(type.get(), H5T_VARIABLE), path(), object);
  H5_CHECK(H5Tset_cset(type.get(), H5T_CSET_UTF8), path(), object);
  const char* ptr = value.c_str();
  write_attr(object, name, type.get(), {}, &ptr);
}

void File::set_attr_int(const std::string& object, const std::string& name, int64_t value) {
  write_attr(object, name, H5T_NATIVE_INT64, {}, &value);
}

void File::set_attr_double(const std::string& object, const std::string& name, double value) {
  write_attr(object, name, H5T_NATIVE_DOUBLE, {}, &value);
}

void File::set_attr_ints(const std::string& object, const std::string& name,
                         const std::vector<int64_t>& values) {
  ABL_CHECK(!values.empty(), "{}: {}: empty attribute array", path(), join(object, name));
  write_attr(object, name, H5T_NATIVE_INT64, {values.size()}, values.data());
}

void File::set_attr_doubles(const std::string& object, const std::string& name,
                            const std::vector<double>& values) {
  ABL_CHECK(!values.empty(), "{}: {}: empty attribute array", path(), join(object, name));
  write_attr(object, name, H5T_NATIVE_DOUBLE, {values.size()}, values.data());
}

bool File::has_attr(const std::string& object, const std::string& name) const {
  if (!exists(object)) return false;
  return H5_CHECK(H5Aexists_by_name(id_.get(), object.c_str(), name.c_str(), H5P_DEFAULT), path(),
                  join(object, name)) > 0;
}

Id File::open_attr(const std::string& object, const std::string& name) const {
  const std::string where = join(object, name);
  ABL_CHECK(has_attr(object, name), "{}: missing attribute {}", path(), where);
  return Id(
      H5_CHECK(H5Aopen_by_name(id_.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
               path(), where));
}

std::vector<int64_t> File::attr_dims(const Id& attr, const std::string& where) const {
  Id space(H5_CHECK(H5Aget_space(attr.get()), path(), where));
  int rank = H5_CHECK(H5Sget_simple_extent_ndims(space.get()), path(), where);
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), path(), where);
  return std::vector<int64_t>(dims.begin(), dims.end());
}

namespace {

// Elements of an attribute that must be of `cls` (H5T_INTEGER or H5T_FLOAT).
int64_t numeric_count(const Id& attr, H5T_class_t cls, const std::string& file,
                      const std::string& where, const char* what) {
  Id type(H5_CHECK(H5Aget_type(attr.get()), file, where));
  ABL_CHECK(H5Tget_class(type.get()) == cls, "{}: attribute {} is not {}", file, where, what);
  Id space(H5_CHECK(H5Aget_space(attr.get()), file, where));
  return H5_CHECK(H5Sget_simple_extent_npoints(space.get()), file, where);
}

}  // namespace

std::string File::attr_string(const std::string& object, const std::string& name) const {
  const std::string where = join(object, name);
  Id attr = open_attr(object, name);
  Id type(H5_CHECK(H5Aget_type(attr.get()), path(), where));
  ABL_CHECK(H5Tget_class(type.get()) == H5T_STRING, "{}: attribute {} is not a string", path(),
            where);
  ABL_CHECK(attr_dims(attr, where).empty(), "{}: attribute {} is not a single string", path(),
            where);
  if (H5_CHECK(H5Tis_variable_str(type.get()), path(), where) > 0) {
    Id mem(H5_CHECK(H5Tcopy(H5T_C_S1), path(), where));
    H5_CHECK(H5Tset_size(mem.get(), H5T_VARIABLE), path(), where);
    H5_CHECK(H5Tset_cset(mem.get(), H5Tget_cset(type.get())), path(), where);
    char* ptr = nullptr;
    H5_CHECK(H5Aread(attr.get(), mem.get(), &ptr), path(), where);
    std::string value = ptr ? ptr : "";
    H5free_memory(ptr);
    return value;
  }
  std::string value(H5Tget_size(type.get()), '\0');
  H5_CHECK(H5Aread(attr.get(), type.get(), value.data()), path(), where);
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

int64_t File::attr_int(const std::string& object, const std::string& name) const {
  std::vector<int64_t> v = attr_ints(object, name);
  ABL_CHECK(v.size() == 1, "{}: attribute {} holds {} values, expected one", path(),
            join(object, name), v.size());
  return v[0];
}

double File::attr_double(const std::string& object, const std::string& name) const {
  std::vector<double> v = attr_doubles(object, name);
  ABL_CHECK(v.size() == 1, "{}: attribute {} holds {} values, expected one", path(),
            join(object, name), v.size());
  return v[0];
}

std::vector<int64_t> File::attr_ints(const std::string& object, const std::string& name) const {
  const std::string where = join(object, name);
  Id attr = open_attr(object, name);
  std::vector<int64_t> out(
      static_cast<size_t>(numeric_count(attr, H5T_INTEGER, path(), where, "an integer")));
  H5_CHECK(H5Aread(attr.get(), H5T_NATIVE_INT64, out.data()), path(), where);
  return out;
}

std::vector<double> File::attr_doubles(const std::string& object, const std::string& name) const {
  const std::string where = join(object, name);
  Id attr = open_attr(object, name);
  std::vector<double> out(
      static_cast<size_t>(numeric_count(attr, H5T_FLOAT, path(), where, "a floating-point value")));
  H5_CHECK(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, out.data()), path(), where);
  return out;
}

}  // namespace abl::io::h5
