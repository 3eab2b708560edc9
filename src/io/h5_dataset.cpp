// Row blocks of a dataset: collective writes (a rank with no rows selects nothing but still
// takes part), independent reads, collective growth of extendible datasets, fixed-width strings.
// Arguments are checked with mpi::agree() before any collective call, so one rank's bad row range
// fails every rank with the same message instead of leaving the others waiting.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "abl/core/error.h"
#include "abl/core/watchdog.h"
#include "abl/core/utf8.h"
#include "abl/io/h5.h"

namespace abl::io::h5 {
namespace {

// The transfer property list of row writes: collective on parallel files.
Id write_transfer(const FileContext& ctx, const std::string& path) {
  Id dxpl(H5_CHECK(H5Pcreate(H5P_DATASET_XFER), ctx.path, path));
  if (ctx.parallel()) {
    H5_CHECK(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), ctx.path, path);
  }
  return dxpl;
}

std::string rows_text(int64_t first, int64_t n) {
  return fmt::format("rows [{}, {})", first, first + n);
}

}  // namespace

Dataset::Dataset(Id id, std::shared_ptr<const FileContext> ctx, std::string path)
    : id_(std::move(id)), ctx_(std::move(ctx)), path_(std::move(path)) {}

std::vector<int64_t> Dataset::dims() const {
  Id space(H5_CHECK(H5Dget_space(id_.get()), ctx_->path, path_));
  int rank = H5_CHECK(H5Sget_simple_extent_ndims(space.get()), ctx_->path, path_);
  std::vector<hsize_t> d(static_cast<size_t>(rank));
  H5_CHECK(H5Sget_simple_extent_dims(space.get(), d.data(), nullptr), ctx_->path, path_);
  return std::vector<int64_t>(d.begin(), d.end());
}

int64_t Dataset::rows() const {
  std::vector<int64_t> d = dims();
  return d.empty() ? 1 : d[0];
}

int64_t Dataset::row_elems() const {
  std::vector<int64_t> d = dims();
  return std::accumulate(d.begin() + (d.empty() ? 0 : 1), d.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

bool Dataset::is_string() const {
  Id type(H5_CHECK(H5Dget_type(id_.get()), ctx_->path, path_));
  return H5Tget_class(type.get()) == H5T_STRING;
}

Type Dataset::type() const {
  Id type(H5_CHECK(H5Dget_type(id_.get()), ctx_->path, path_));
  H5T_class_t cls = H5Tget_class(type.get());
  size_t size = H5Tget_size(type.get());
  if (cls == H5T_FLOAT && size == 4) return Type::f32;
  if (cls == H5T_FLOAT && size == 8) return Type::f64;
  if (cls == H5T_INTEGER) {
    bool is_signed = H5Tget_sign(type.get()) == H5T_SGN_2;
    if (is_signed && size == 8) return Type::i64;
    if (is_signed && size == 4) return Type::i32;
    if (!is_signed && size == 1) return Type::u8;
  }
  fail("{}: {}: element type is none of f32, f64, i64, i32, u8", ctx_->path, path_);
}

int64_t Dataset::string_width() const {
  Id type(H5_CHECK(H5Dget_type(id_.get()), ctx_->path, path_));
  ABL_CHECK(H5Tget_class(type.get()) == H5T_STRING, "{}: {}: not a string dataset", ctx_->path,
            path_);
  if (H5_CHECK(H5Tis_variable_str(type.get()), ctx_->path, path_) > 0) return 0;
  return static_cast<int64_t>(H5Tget_size(type.get()));
}

std::string Dataset::row_range_problem(int64_t first_row, int64_t n_rows) const {
  if (first_row >= 0 && n_rows >= 0 && first_row + n_rows <= rows()) return "";
  return fmt::format("{} outside the {} rows of the dataset", rows_text(first_row, n_rows), rows());
}

std::pair<Id, Id> Dataset::select_rows(int64_t first_row, int64_t n_rows) const {
  const std::string& file = ctx_->path;
  Id file_space(H5_CHECK(H5Dget_space(id_.get()), file, path_));
  if (n_rows == 0) {
    hsize_t one = 1;
    H5_CHECK(H5Sselect_none(file_space.get()), file, path_);
    Id mem_space(H5_CHECK(H5Screate_simple(1, &one, nullptr), file, path_));
    H5_CHECK(H5Sselect_none(mem_space.get()), file, path_);
    return {std::move(file_space), std::move(mem_space)};
  }
  const std::vector<int64_t> d = dims();
  std::vector<hsize_t> start(d.size(), 0), count(d.begin(), d.end());
  start[0] = static_cast<hsize_t>(first_row);
  count[0] = static_cast<hsize_t>(n_rows);
  H5_CHECK(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
           file, path_);
  Id mem_space(H5_CHECK(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), file, path_));
  return {std::move(file_space), std::move(mem_space)};
}

void Dataset::write_block(hid_t mem_type, int64_t first_row, int64_t n_rows, const void* data) {
  watchdog::Scope at("HDF5 write (H5Dwrite)");
  const std::string& file = ctx_->path;
  const auto [file_space, mem_space] = select_rows(first_row, n_rows);
  static const char dummy = 0;  // HDF5 rejects a null buffer even for an empty selection
  Id dxpl = write_transfer(*ctx_, path_);
  H5_CHECK(H5Dwrite(id_.get(), mem_type, mem_space.get(), file_space.get(), dxpl.get(),
                    data ? data : &dummy),
           file, path_);
}

void Dataset::write_rows_raw(Type t, int64_t first_row, int64_t n_rows, const void* data) {
  std::string problem;
  if (is_string()) {
    problem = "is a string dataset";
  } else if (type() != t) {
    problem = fmt::format("holds {}, the data are {}", type_name(type()), type_name(t));
  } else {
    problem = row_range_problem(first_row, n_rows);
  }
  if (problem.empty() && n_rows > 0 && data == nullptr) problem = "no data";
  mpi::agree(ctx_->comm, problem.empty(), fmt::format("{}: {}: {}", ctx_->path, path_, problem));
  write_block(native_type(t), first_row, n_rows, data);
}

void Dataset::read_rows_raw(Type t, int64_t first_row, int64_t n_rows, void* out) const {
  const std::string& file = ctx_->path;
  ABL_CHECK(!is_string(), "{}: {}: is a string dataset", file, path_);
  ABL_CHECK(type() == t, "{}: {}: holds {}, asked for {}", file, path_, type_name(type()),
            type_name(t));
  const std::string range = row_range_problem(first_row, n_rows);
  ABL_CHECK(range.empty(), "{}: {}: {}", file, path_, range);
  if (n_rows == 0 || row_elems() == 0) return;
  const auto [file_space, mem_space] = select_rows(first_row, n_rows);
  H5_CHECK(H5Dread(id_.get(), native_type(t), mem_space.get(), file_space.get(), H5P_DEFAULT, out),
           file, path_);
}

void Dataset::flush() {
  watchdog::Scope at("HDF5 flush (H5Dflush)");
  H5_CHECK(H5Dflush(id_.get()), ctx_->path, path_);
}

void Dataset::extend(int64_t new_rows) {
  watchdog::Scope at("HDF5 extend (H5Dset_extent)");
  const std::string& file = ctx_->path;
  Id space(H5_CHECK(H5Dget_space(id_.get()), file, path_));
  int rank = H5_CHECK(H5Sget_simple_extent_ndims(space.get()), file, path_);
  std::vector<hsize_t> cur(static_cast<size_t>(rank)), max(static_cast<size_t>(rank));
  H5_CHECK(H5Sget_simple_extent_dims(space.get(), cur.data(), max.data()), file, path_);
  bool ok = rank > 0 && new_rows >= 0 &&
            (max[0] == H5S_UNLIMITED || static_cast<hsize_t>(new_rows) <= max[0]);
  mpi::agree(ctx_->comm, ok,
        fmt::format("{}: {}: cannot extend to {} rows (not extendible that far)", file, path_,
                    new_rows));
  cur[0] = static_cast<hsize_t>(new_rows);
  H5_CHECK(H5Dset_extent(id_.get(), cur.data()), file, path_);
}

int64_t Dataset::append_rows_raw(Type t, int64_t n_rows, const void* data) {
  const std::string& file = ctx_->path;
  bool ok = n_rows >= 0 && !is_string() && type() == t;
  mpi::agree(ctx_->comm, ok,
        fmt::format("{}: {}: cannot append {} rows of {}", file, path_, n_rows, type_name(t)));
  int64_t before = 0, total = n_rows;
  if (ctx_->parallel()) {
    MPI_Exscan(&n_rows, &before, 1, MPI_INT64_T, MPI_SUM, ctx_->comm);
    int rank = 0;
    MPI_Comm_rank(ctx_->comm, &rank);
    if (rank == 0) before = 0;  // MPI_Exscan leaves rank 0's result undefined
    MPI_Allreduce(&n_rows, &total, 1, MPI_INT64_T, MPI_SUM, ctx_->comm);
  }
  int64_t first = rows() + before;
  extend(rows() + total);
  write_block(native_type(t), first, n_rows, data);
  return first;
}

void Dataset::write_string_rows(int64_t first_row, const std::vector<std::string>& rows_in) {
  const std::string& file = ctx_->path;
  const int64_t n = static_cast<int64_t>(rows_in.size());
  int64_t width = 0;
  std::string problem;
  if (!is_string() || (width = string_width()) == 0) {
    problem = "is not a fixed-width string dataset";
  } else {
    problem = row_range_problem(first_row, n);
    for (int64_t i = 0; i < n && problem.empty(); ++i) {
      const std::string& s = rows_in[static_cast<size_t>(i)];
      if (static_cast<int64_t>(s.size()) > width) {
        problem =
            fmt::format("row {} has {} bytes, the width is {}", first_row + i, s.size(), width);
      } else if (!valid_utf8(s)) {
        problem = fmt::format("row {} is not valid UTF-8", first_row + i);
      }
    }
  }
  mpi::agree(ctx_->comm, problem.empty(), fmt::format("{}: {}: {}", file, path_, problem));

  std::string buffer(static_cast<size_t>(n * width), '\0');
  for (int64_t i = 0; i < n; ++i) {
    const std::string& s = rows_in[static_cast<size_t>(i)];
    std::memcpy(buffer.data() + i * width, s.data(), s.size());
  }
  Id type(H5_CHECK(H5Dget_type(id_.get()), file, path_));
  write_block(type.get(), first_row, n, buffer.data());
}

std::vector<std::string> Dataset::read_strings(int64_t first_row, int64_t n_rows) const {
  const std::string& file = ctx_->path;
  Id type(H5_CHECK(H5Dget_type(id_.get()), file, path_));
  ABL_CHECK(H5Tget_class(type.get()) == H5T_STRING, "{}: {}: not a string dataset", file, path_);
  const std::vector<int64_t> d = dims();
  ABL_CHECK(!d.empty(), "{}: {}: a string dataset must have at least one dimension", file, path_);
  if (n_rows < 0) n_rows = rows() - first_row;
  const std::string range = row_range_problem(first_row, n_rows);
  ABL_CHECK(range.empty(), "{}: {}: {}", file, path_, range);
  std::vector<std::string> out;
  const int64_t n = n_rows * row_elems();
  if (n == 0) return out;
  const auto [file_space, mem_space] = select_rows(first_row, n_rows);
  out.reserve(static_cast<size_t>(n));

  if (H5_CHECK(H5Tis_variable_str(type.get()), file, path_) > 0) {
    Id mem(H5_CHECK(H5Tcopy(H5T_C_S1), file, path_));
    H5_CHECK(H5Tset_size(mem.get(), H5T_VARIABLE), file, path_);
    H5_CHECK(H5Tset_cset(mem.get(), H5Tget_cset(type.get())), file, path_);
    std::vector<char*> ptrs(static_cast<size_t>(n), nullptr);
    H5_CHECK(
        H5Dread(id_.get(), mem.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, ptrs.data()),
        file, path_);
    for (char* p : ptrs) out.emplace_back(p ? p : "");
    H5Dvlen_reclaim(mem.get(), mem_space.get(), H5P_DEFAULT, ptrs.data());
    return out;
  }
  size_t width = H5Tget_size(type.get());
  std::string buffer(width * static_cast<size_t>(n), '\0');
  H5_CHECK(
      H5Dread(id_.get(), type.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, buffer.data()),
      file, path_);
  for (int64_t i = 0; i < n; ++i) {
    std::string s = buffer.substr(static_cast<size_t>(i) * width, width);
    while (!s.empty() && s.back() == '\0') s.pop_back();
    out.push_back(std::move(s));
  }
  return out;
}

void Dataset::write_vlen_string_rows(int64_t first_row, const std::vector<std::string>& strings) {
  const std::string& file = ctx_->path;
  const int64_t per_row = row_elems();
  const int64_t n = static_cast<int64_t>(strings.size());
  std::string problem;
  if (ctx_->parallel()) {
    problem = "variable-length strings cannot be written through MPI-IO";
  } else if (!is_string() || string_width() != 0) {
    problem = "is not a variable-length string dataset";
  } else if (per_row == 0 ? n != 0 : n % per_row != 0) {
    problem = fmt::format("{} strings are not whole rows of {}", n, per_row);
  } else {
    problem = row_range_problem(first_row, per_row ? n / per_row : 0);
    for (int64_t i = 0; i < n && problem.empty(); ++i) {
      if (!valid_utf8(strings[static_cast<size_t>(i)])) {
        problem = fmt::format("string {} of row {} is not valid UTF-8", i % per_row,
                              first_row + i / per_row);
      }
    }
  }
  ABL_CHECK(problem.empty(), "{}: {}: {}", file, path_, problem);
  if (n == 0) return;
  std::vector<const char*> ptrs(strings.size());
  for (size_t i = 0; i < strings.size(); ++i) ptrs[i] = strings[i].c_str();
  Id mem(H5_CHECK(H5Tcopy(H5T_C_S1), file, path_));
  H5_CHECK(H5Tset_size(mem.get(), H5T_VARIABLE), file, path_);
  H5_CHECK(H5Tset_cset(mem.get(), H5T_CSET_UTF8), file, path_);
  write_block(mem.get(), first_row, n / per_row, ptrs.data());
}

// ---- compound datasets of reals ----

std::vector<std::string> Dataset::compound_fields() const {
  const std::string& file = ctx_->path;
  Id type(H5_CHECK(H5Dget_type(id_.get()), file, path_));
  ABL_CHECK(H5Tget_class(type.get()) == H5T_COMPOUND, "{}: {}: not a compound dataset", file,
            path_);
  const int n = H5_CHECK(H5Tget_nmembers(type.get()), file, path_);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    char* name = H5Tget_member_name(type.get(), static_cast<unsigned>(i));
    ABL_CHECK(name != nullptr, "{}: {}: cannot read the name of field {}", file, path_, i);
    out.emplace_back(name);
    H5free_memory(name);
    ABL_CHECK(H5Tget_member_class(type.get(), static_cast<unsigned>(i)) == H5T_FLOAT,
              "{}: {}: field '{}' is not a real number", file, path_, out.back());
  }
  return out;
}

namespace {

// The in-memory layout of a compound of reals: the fields as consecutive doubles. HDF5 matches
// members by name, so the file may store them in any order or precision.
Id compound_memory_type(const std::vector<std::string>& fields, const std::string& file,
                        const std::string& path) {
  Id type(H5_CHECK(H5Tcreate(H5T_COMPOUND, 8 * std::max<size_t>(fields.size(), 1)), file, path));
  for (size_t i = 0; i < fields.size(); ++i) {
    H5_CHECK(H5Tinsert(type.get(), fields[i].c_str(), 8 * i, H5T_NATIVE_DOUBLE), file, path);
  }
  return type;
}

}  // namespace

void Dataset::write_compound_rows(int64_t first_row, int64_t n_rows, const double* data) {
  std::vector<std::string> fields;
  std::string problem;
  try {
    fields = compound_fields();
  } catch (const Error& e) {
    problem = e.what();
  }
  if (problem.empty()) {
    problem = row_range_problem(first_row, n_rows);
    if (problem.empty() && n_rows > 0 && data == nullptr) problem = "no data";
    if (!problem.empty()) problem = fmt::format("{}: {}: {}", ctx_->path, path_, problem);
  }
  mpi::agree(ctx_->comm, problem.empty(), problem);
  Id mem = compound_memory_type(fields, ctx_->path, path_);
  write_block(mem.get(), first_row, n_rows, data);
}

std::vector<double> Dataset::read_compound_rows(int64_t first_row, int64_t n_rows) const {
  const std::string& file = ctx_->path;
  const std::vector<std::string> fields = compound_fields();
  ABL_CHECK(dims().size() == 1, "{}: {}: a compound table must be one-dimensional", file, path_);
  if (n_rows < 0) n_rows = rows() - first_row;
  const std::string range = row_range_problem(first_row, n_rows);
  ABL_CHECK(range.empty(), "{}: {}: {}", file, path_, range);
  std::vector<double> out(static_cast<size_t>(n_rows) * fields.size());
  if (n_rows == 0) return out;
  const auto [file_space, mem_space] = select_rows(first_row, n_rows);
  Id mem = compound_memory_type(fields, file, path_);
  H5_CHECK(H5Dread(id_.get(), mem.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, out.data()),
           file, path_);
  return out;
}

}  // namespace abl::io::h5
