// The one error helper behind H5_CHECK, id ownership, element types and the small MPI helpers
// the collective writes need. HDF5's message is read from its error stack (outermost and
// innermost entries), because the automatic printer is off and stderr would be the wrong place.
#include <climits>
#include <cstring>
#include <numeric>

#include "abl/core/error.h"
#include "abl/core/watchdog.h"
#include "abl/io/h5.h"

namespace abl::io::h5 {
namespace {

herr_t collect_entry(unsigned /*depth*/, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::vector<std::string>*>(data);
  if (err->desc && *err->desc) out->emplace_back(err->desc);
  return 0;
}

// One line: HDF5's messages may hold newlines (a ctime() string in write errors).
std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

// "outer (inner)" from the current HDF5 error stack, which is then cleared.
std::string hdf5_message() {
  std::vector<std::string> entries;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_entry, &entries);
  H5Eclear2(H5E_DEFAULT);
  if (entries.empty()) return "no HDF5 error message";
  if (entries.size() == 1 || entries.front() == entries.back()) return one_line(entries.front());
  return one_line(entries.front() + " (" + entries.back() + ")");
}

bool g_write_failed = false;

std::string_view call_name(const char* call) {
  std::string_view s(call);
  size_t paren = s.find('(');
  return paren == std::string_view::npos ? s : s.substr(0, paren);
}

std::string_view base_name(const char* source) {
  std::string_view s(source);
  size_t slash = s.rfind('/');
  return slash == std::string_view::npos ? s : s.substr(slash + 1);
}

}  // namespace

bool write_failed() { return g_write_failed; }

void raise(const char* call, std::string_view file, std::string_view object, const char* source,
           int line) {
  static constexpr std::string_view kWrites[] = {"H5Fclose", "H5Fflush", "H5Dflush", "H5Dwrite",
                                                 "H5Dset_extent", "H5Awrite", "H5Dcreate2", "H5Fget_vfd_handle"};
  for (std::string_view w : kWrites) {
    if (call_name(call) == w) g_write_failed = true;
  }
  fail("{}: {}: {} failed: {} ({}:{})", file, object, call_name(call), hdf5_message(),
       base_name(source), line);
}

Id& Id::operator=(Id&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.release();
  }
  return *this;
}

void Id::reset() {
  if (id_ < 0) return;
  herr_t r = -1;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: r = H5Fclose(id_); break;
    case H5I_GROUP: r = H5Gclose(id_); break;
    case H5I_DATASET: r = H5Dclose(id_); break;
    case H5I_DATASPACE: r = H5Sclose(id_); break;
    case H5I_DATATYPE: r = H5Tclose(id_); break;
    case H5I_ATTR: r = H5Aclose(id_); break;
    case H5I_GENPROP_LST: r = H5Pclose(id_); break;
    default: r = H5Idec_ref(id_); break;
  }
  if (r < 0) H5Eclear2(H5E_DEFAULT);
  id_ = H5I_INVALID_HID;
}

hid_t Id::release() {
  hid_t id = id_;
  id_ = H5I_INVALID_HID;
  return id;
}

std::string_view type_name(Type t) {
  switch (t) {
    case Type::f32: return "f32";
    case Type::f64: return "f64";
    case Type::i64: return "i64";
    case Type::i32: return "i32";
    case Type::u8: return "u8";
  }
  return "?";
}

size_t type_size(Type t) {
  switch (t) {
    case Type::f32: return 4;
    case Type::f64: return 8;
    case Type::i64: return 8;
    case Type::i32: return 4;
    case Type::u8: return 1;
  }
  return 0;
}

hid_t native_type(Type t) {
  switch (t) {
    case Type::f32: return H5T_NATIVE_FLOAT;
    case Type::f64: return H5T_NATIVE_DOUBLE;
    case Type::i64: return H5T_NATIVE_INT64;
    case Type::i32: return H5T_NATIVE_INT32;
    case Type::u8: return H5T_NATIVE_UINT8;
  }
  return H5I_INVALID_HID;
}

// MPI errors are fatal (MPI_ERRORS_ARE_FATAL, the default), so return codes are not checked.
void agree(MPI_Comm comm, bool ok, const std::string& message) {
  watchdog::fault_delay();
  watchdog::Scope at("HDF5 agree (MPI_Allreduce)");
  if (comm == MPI_COMM_NULL) {
    if (!ok) throw Error(message);
    return;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = ok ? size : rank, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  std::string text = rank == first ? message : std::string();
  uint64_t len = text.size();
  MPI_Bcast(&len, 1, MPI_UINT64_T, first, comm);
  text.resize(len);
  MPI_Bcast(text.data(), static_cast<int>(len), MPI_CHAR, first, comm);
  throw Error(size > 1 ? fmt::format("rank {}: {}", first, text) : text);
}

int64_t collective_max_bytes(MPI_Comm comm, const std::vector<std::string>& strings) {
  int64_t mine = 0;
  for (const auto& s : strings) mine = std::max<int64_t>(mine, static_cast<int64_t>(s.size()));
  if (comm == MPI_COMM_NULL) return mine;
  int64_t all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_MAX, comm);
  return all;
}

std::vector<std::string> gather_strings(MPI_Comm comm, const std::vector<std::string>& local,
                                        int root) {
  if (comm == MPI_COMM_NULL) return local;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  // Sizes first, agreed by every rank, so that the int counts of MPI_Gatherv cannot overflow.
  int64_t my_bytes = 0;
  for (const auto& s : local) my_bytes += static_cast<int64_t>(s.size());
  int64_t totals[2] = {0, 0}, mine[2] = {my_bytes, static_cast<int64_t>(local.size())};
  MPI_Allreduce(mine, totals, 2, MPI_INT64_T, MPI_SUM, comm);
  agree(comm, totals[0] <= INT_MAX && totals[1] <= INT_MAX,
        fmt::format("gather_strings: {} strings of {} bytes exceed one MPI message", totals[1],
                    totals[0]));

  int counts[2] = {static_cast<int>(local.size()), static_cast<int>(my_bytes)};
  std::vector<int> all_counts(rank == root ? 2 * size : 0);
  MPI_Gather(counts, 2, MPI_INT, all_counts.data(), 2, MPI_INT, root, comm);

  std::vector<int64_t> lengths(local.size());
  std::string bytes;
  bytes.reserve(static_cast<size_t>(my_bytes));
  for (size_t i = 0; i < local.size(); ++i) {
    lengths[i] = static_cast<int64_t>(local[i].size());
    bytes += local[i];
  }

  std::vector<int> n_strings(size), n_bytes(size), string_displs(size), byte_displs(size);
  std::vector<int64_t> all_lengths;
  std::string all_bytes;
  if (rank == root) {
    for (int r = 0; r < size; ++r) {
      n_strings[r] = all_counts[2 * r];
      n_bytes[r] = all_counts[2 * r + 1];
    }
    std::exclusive_scan(n_strings.begin(), n_strings.end(), string_displs.begin(), 0);
    std::exclusive_scan(n_bytes.begin(), n_bytes.end(), byte_displs.begin(), 0);
    all_lengths.resize(static_cast<size_t>(totals[1]));
    all_bytes.resize(static_cast<size_t>(totals[0]));
  }
  MPI_Gatherv(lengths.data(), counts[0], MPI_INT64_T, all_lengths.data(), n_strings.data(),
              string_displs.data(), MPI_INT64_T, root, comm);
  MPI_Gatherv(bytes.data(), counts[1], MPI_CHAR, all_bytes.data(), n_bytes.data(),
              byte_displs.data(), MPI_CHAR, root, comm);

  std::vector<std::string> out;
  if (rank != root) return out;
  out.reserve(all_lengths.size());
  size_t at = 0;
  for (int64_t len : all_lengths) {
    out.emplace_back(all_bytes, at, static_cast<size_t>(len));
    at += static_cast<size_t>(len);
  }
  return out;
}

}  // namespace abl::io::h5
