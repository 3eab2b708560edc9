// Output files that appear under their final name only when complete (write to ".partial",
// rename at commit), and the variable-length string datasets that MPI-IO cannot write: their
// rows are gathered to rank 0 as they come and written by rank 0 in a serial reopen at commit.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/core/utf8.h"
#include "abl/io/h5.h"

namespace abl::io::h5 {

std::string OutputFile::partial_path_for(const std::string& final_path) {
  return final_path + ".partial";
}

OutputFile OutputFile::create(const std::string& final_path, MPI_Comm comm) {
  return OutputFile(final_path, File::create(partial_path_for(final_path), comm));
}

OutputFile::OutputFile(std::string final_path, File file)
    : final_path_(std::move(final_path)),
      file_(std::move(file)),
      uncaught_at_create_(std::uncaught_exceptions()) {
  if (file_.parallel()) MPI_Comm_rank(file_.comm(), &rank_);
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : final_path_(std::move(other.final_path_)),
      file_(std::move(other.file_)),
      rank_(other.rank_),
      strings_(std::move(other.strings_)),
      committed_(other.committed_),
      uncaught_at_create_(other.uncaught_at_create_) {
  other.committed_ = true;
}

OutputFile::~OutputFile() {
  if (committed_ || !file_.is_open()) return;
  try {
    if (file_.parallel() && std::uncaught_exceptions() > uncaught_at_create_) {
      file_.abandon();  // see the class comment
    } else {
      file_.close();
    }
    log::warn("{}: not committed; the incomplete file is left as {}", final_path_, partial_path());
  } catch (const std::exception&) {
    // Nothing more can be done in a destructor; the file keeps its partial name either way.
  }
}

void OutputFile::declare_strings(const std::string& path, int64_t rows) {
  ABL_CHECK(rows >= 0 && strings_.count(path) == 0,
            "{}: {}: string dataset declared twice or with {} rows", final_path_, path, rows);
  Strings& s = strings_[path];
  s.rows.resize(rank_ == 0 ? static_cast<size_t>(rows) : 0);
  s.given.assign(rank_ == 0 ? static_cast<size_t>(rows) : 0, 0);
  s.n = rows;
}

void OutputFile::write_strings(const std::string& path, int64_t first_row,
                               const std::vector<std::string>& rows) {
  auto it = strings_.find(path);
  const int64_t n = static_cast<int64_t>(rows.size());
  std::string problem;
  if (it == strings_.end()) {
    problem = "was not declared with declare_strings()";
  } else if (first_row < 0 || first_row + n > it->second.n) {
    problem = fmt::format("rows [{}, {}) outside the {} rows of the dataset", first_row,
                          first_row + n, it->second.n);
  } else {
    for (int64_t i = 0; i < n && problem.empty(); ++i) {
      if (!valid_utf8(rows[static_cast<size_t>(i)])) {
        problem = fmt::format("row {} is not valid UTF-8", first_row + i);
      }
    }
  }
  mpi::agree(file_.comm(), problem.empty(), fmt::format("{}: {}: {}", final_path_, path, problem));

  // Rank 0 learns every rank's (first row, count), then the strings in rank order.
  int64_t mine[2] = {first_row, n};
  std::vector<int64_t> ranges(2);
  if (file_.parallel()) {
    int size = 1;
    MPI_Comm_size(file_.comm(), &size);
    ranges.resize(rank_ == 0 ? 2 * static_cast<size_t>(size) : 0);
    MPI_Gather(mine, 2, MPI_INT64_T, ranges.data(), 2, MPI_INT64_T, 0, file_.comm());
  } else {
    ranges = {mine[0], mine[1]};
  }
  std::vector<std::string> all = mpi::gather_strings(file_.comm(), rows, 0);
  if (rank_ != 0) return;
  Strings& s = it->second;
  size_t k = 0;
  for (size_t r = 0; r + 1 < ranges.size(); r += 2) {
    for (int64_t i = 0; i < ranges[r + 1]; ++i) {
      auto row = static_cast<size_t>(ranges[r] + i);
      s.rows[row] = std::move(all[k++]);
      if (s.given[row] < 255) ++s.given[row];
    }
  }
}

void OutputFile::write_deferred_strings() const {
  for (const auto& [path, s] : strings_) {
    for (size_t i = 0; i < s.given.size(); ++i) {
      ABL_CHECK(s.given[i] == 1, "{}: {}: row {} was written {} times (expected once)", final_path_,
                path, i, s.given[i]);
    }
  }
  if (strings_.empty()) return;
  File serial = File::open(partial_path(), MPI_COMM_NULL, true);
  for (const auto& [path, s] : strings_) serial.write_vlen_strings(path, s.rows);
  serial.close();
}

void OutputFile::reserve(int64_t bytes) {
  std::string problem;
  if (rank_ == 0) {
    const std::string why = reserve_space(partial_path(), bytes);
    if (!why.empty()) {
      problem = fmt::format("disk full: {} needs about {} MiB and they cannot be reserved: {}; free some space and "
                            "run the same command again (finished work is kept)",
                            final_path_, (bytes + (1 << 20) - 1) >> 20, why);
    }
  }
  mpi::agree(file_.comm(), problem.empty(), problem);
}

void OutputFile::commit() {
  ABL_CHECK(!committed_ && file_.is_open(), "{}: commit() on a file that is not open", final_path_);
  bool ok = true;
  std::string problem;
  try {
    file_.close();
  } catch (const Error& e) {
    ok = false;
    problem = e.what();
  }
  mpi::agree(file_.comm(), ok, problem);

  if (rank_ == 0) {
    try {
      write_deferred_strings();
      release_reserved_space(partial_path());
      sync_path(partial_path());  // the data is on the disk before the name says it is complete
      if (std::rename(partial_path().c_str(), final_path_.c_str()) != 0) {
        fail("{}: cannot rename {} to it: {}", final_path_, partial_path(), std::strerror(errno));
      }
      sync_parent_folder(final_path_);
    } catch (const Error& e) {
      ok = false;
      problem = e.what();
    }
  }
  // Also the barrier: no rank returns before the file has its final name.
  mpi::agree(file_.comm(), ok, problem);
  committed_ = true;
}

}  // namespace abl::io::h5
