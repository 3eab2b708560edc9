// Decisions taken once and broadcast (agree.h). Results travel as one length-prefixed byte string
// with a status flag, so every helper is a broadcast of a header and then of the payload.
#include "abl/parallel/agree.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "abl/core/error.h"

namespace abl::parallel {
namespace {

// Rank 0 runs `produce` (its payload, or its error message with ok = false) and every rank gets
// the same outcome; an error becomes an abl::Error on every rank.
std::string root_payload(Comm& comm, const std::function<std::string()>& produce) {
  int64_t header[2] = {1, 0};  // ok, bytes
  std::string payload;
  if (comm.rank() == 0) {
    try {
      payload = produce();
    } catch (const Error& e) {
      header[0] = 0;
      payload = e.what();
    }
    header[1] = static_cast<int64_t>(payload.size());
  }
  if (comm.size() > 1) {
    comm.broadcast(header, sizeof header, 0);
    payload.resize(static_cast<size_t>(header[1]));
    if (header[1] > 0) comm.broadcast(payload.data(), payload.size(), 0);
  }
  if (header[0] == 0) throw AgreedError(payload);
  return payload;
}

}  // namespace

bool root_decides(Comm& comm, const std::function<bool()>& decide) {
  return root_payload(comm, [&] { return std::string(decide() ? "1" : "0"); }) == "1";
}

int64_t root_value(Comm& comm, const std::function<int64_t()>& value) {
  const std::string s = root_payload(comm, [&] {
    const int64_t v = value();
    return std::string(reinterpret_cast<const char*>(&v), sizeof v);
  });
  int64_t v = 0;
  std::memcpy(&v, s.data(), sizeof v);
  return v;
}

std::string root_string(Comm& comm, const std::function<std::string()>& value) { return root_payload(comm, value); }

std::vector<std::string> root_strings(Comm& comm, const std::function<std::vector<std::string>()>& value) {
  // Each string as 8 bytes of length and its bytes.
  const std::string packed = root_payload(comm, [&] {
    std::string out;
    for (const std::string& s : value()) {
      const uint64_t n = s.size();
      out.append(reinterpret_cast<const char*>(&n), sizeof n);
      out += s;
    }
    return out;
  });
  std::vector<std::string> out;
  for (size_t at = 0; at < packed.size();) {
    uint64_t n = 0;
    std::memcpy(&n, packed.data() + at, sizeof n);
    at += sizeof n;
    out.emplace_back(packed, at, static_cast<size_t>(n));
    at += static_cast<size_t>(n);
  }
  return out;
}

void agree_all(Comm& comm, bool ok, const std::string& message) {
  if (comm.size() == 1) {
    if (!ok) throw AgreedError(message);
    return;
  }
  // The lowest failing rank r contributes size - r; the maximum names it (0: nobody failed).
  int64_t first = ok ? 0 : comm.size() - comm.rank();
  comm.all_reduce_max(&first, 1);
  if (first == 0) return;
  const int failing = comm.size() - static_cast<int>(first);
  int64_t len = comm.rank() == failing ? static_cast<int64_t>(message.size()) : 0;
  comm.broadcast(&len, sizeof len, failing);
  std::string text = comm.rank() == failing ? message : std::string(static_cast<size_t>(len), '\0');
  if (len > 0) comm.broadcast(text.data(), text.size(), failing);
  throw AgreedError(fmt::format("rank {}: {}", failing, text));
}

int64_t all_min(Comm& comm, int64_t value) {
  int64_t v = -value;
  comm.all_reduce_max(&v, 1);
  return -v;
}

int64_t all_max(Comm& comm, int64_t value) {
  comm.all_reduce_max(&value, 1);
  return value;
}

std::string read_file_on_root(Comm& comm, const std::string& path) {
  return root_string(comm, [&] {
    std::ifstream in(path, std::ios::binary);
    ABL_CHECK(in.good(), "cannot read {}: no such file or not readable", path);
    std::stringstream text;
    text << in.rdbuf();
    ABL_CHECK(!in.bad(), "{}: read error", path);
    return text.str();
  });
}

}  // namespace abl::parallel
