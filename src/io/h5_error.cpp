// The one error helper behind H5_CHECK, id ownership and element types. HDF5's message is read from its error stack (outermost and
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

}  // namespace abl::io::h5
