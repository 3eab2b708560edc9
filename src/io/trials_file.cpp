// trials.h5: the sweep's table of trials, appended a batch at a time by rank 0 and kept on disk
// after every batch, so that a killed job resumes where it stopped. The root attribute n_trials
// is the commit mark: it is updated (and flushed) only after a batch's rows are flushed, so rows
// of an append that a killed process did not finish are ignored by readers and cut on resume.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>

#include "abl/core/error.h"
#include "abl/io/driver_files.h"
#include "schema_common.h"

namespace abl::io::schema {
namespace {

namespace tr = trials;
namespace fs = std::filesystem;

// How to start over, for every message about a file that cannot be continued.
constexpr const char* kRestartHint =
    "to start over, run the sweep with --restart (the file is replaced), or move the file away";

// Scalar tables grow by whole batches: 1024 rows of 8 bytes are 8 KiB chunks, so a sweep of a
// few hundred trials stays small and a long one does not pay a chunk per batch.
constexpr int64_t kChunkRows = 1024;

// The (T) datasets besides the compound, with their element types.
struct Column {
  const char* path;
  h5::Type type;
};
constexpr Column kColumns[] = {
    {tr::kKl, h5::Type::f64},
    {tr::kRefusals, h5::Type::i64},
    {tr::kBatch, h5::Type::i64},
    {tr::kElapsed, h5::Type::f64},
};

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void check_meta(const std::string& path, const TrialsMeta& m) {
  ABL_CHECK(!m.param_names.empty(), "{}: a trials table needs at least one parameter", path);
  for (size_t i = 0; i < m.param_names.size(); ++i) {
    ABL_CHECK(!m.param_names[i].empty(), "{}: parameter {} has an empty name", path, i);
    for (size_t j = 0; j < i; ++j) {
      ABL_CHECK(m.param_names[i] != m.param_names[j], "{}: parameter '{}' is named twice", path,
                m.param_names[i]);
    }
  }
  ABL_CHECK(m.n_kl >= 0 && m.n_refusal >= 0 && m.trials_per_batch >= 0,
            "{}: negative counts in the trials settings (n_kl {}, n_refusal {}, per batch {})", path,
            m.n_kl, m.n_refusal, m.trials_per_batch);
  ABL_CHECK(!m.store_responses || m.n_refusal > 0,
            "{}: storing responses needs at least one refusal prompt", path);
}

// Overwrites an existing i64 attribute in place: unlike delete-and-create (h5::File's setters),
// a process killed at any moment leaves the attribute there with its old or its new value.
void update_int_attr(const h5::File& f, const char* name, int64_t value) {
  h5::Id attr(H5_CHECK(H5Aopen_by_name(f.id(), "/", name, H5P_DEFAULT, H5P_DEFAULT), f.path(),
                       std::string("/") + name));
  H5_CHECK(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), f.path(), std::string("/") + name);
}

void write_meta(h5::File& f, const TrialsMeta& m) {
  f.set_attr_string("/", kSchemaAttr, tr::kSchema);
  f.set_attr_int("/", kSchemaVersionAttr, tr::kVersion);
  f.set_attr_string("/", tr::kAttrConfigHash, m.config_hash);
  f.set_attr_string("/", tr::kAttrConfigJson, m.config_json);
  f.set_attr_string("/", tr::kAttrSearch, m.search);
  f.set_attr_int("/", tr::kAttrTrialsPerBatch, m.trials_per_batch);
  f.set_attr_int("/", tr::kAttrNKl, m.n_kl);
  f.set_attr_int("/", tr::kAttrNRefusal, m.n_refusal);
  f.set_attr_int("/", tr::kAttrBaselineRefusals, m.baseline_refusals);
  f.set_attr_int("/", tr::kAttrStoreResponses, m.store_responses ? 1 : 0);
  f.set_attr_string("/", tr::kAttrModel, m.model);
  f.set_attr_string("/", tr::kAttrVersion, m.abliterate_version);
  f.set_attr_string("/", tr::kAttrCreated, m.created);
  f.set_attr_int("/", tr::kAttrTrials, 0);
  f.set_attr_int("/", tr::kAttrFirstTrial, m.first_trial);
  f.set_attr_int("/", tr::kAttrSliceIndex, m.slice_index);
  f.set_attr_int("/", tr::kAttrSliceCount, m.slice_count);
}

// The stored settings, after checking the schema and the shape and type of every dataset.
// `rows` gets the committed row count (n_trials); every dataset holds at least that many.
TrialsMeta read_meta(const h5::File& f, int64_t* rows) {
  const std::string& path = f.path();
  detail::check_schema(f, tr::kSchema, tr::kVersion, "a trials file");
  TrialsMeta m;
  m.config_hash = f.attr_string("/", tr::kAttrConfigHash);
  m.config_json = f.attr_string("/", tr::kAttrConfigJson);
  m.search = f.attr_string("/", tr::kAttrSearch);
  m.trials_per_batch = f.attr_int("/", tr::kAttrTrialsPerBatch);
  m.n_kl = f.attr_int("/", tr::kAttrNKl);
  m.n_refusal = f.attr_int("/", tr::kAttrNRefusal);
  m.baseline_refusals = f.attr_int("/", tr::kAttrBaselineRefusals);
  m.store_responses = f.attr_int("/", tr::kAttrStoreResponses) != 0;
  m.model = f.attr_string("/", tr::kAttrModel);
  m.abliterate_version = f.attr_string("/", tr::kAttrVersion);
  m.created = f.attr_string("/", tr::kAttrCreated);
  const int64_t n = f.attr_int("/", tr::kAttrTrials);
  ABL_CHECK(n >= 0, "{}: root attribute {} is {}", path, tr::kAttrTrials, n);
  if (f.has_attr("/", tr::kAttrSliceCount)) {  // absent in files of the first sweeps: a whole sweep
    m.first_trial = f.attr_int("/", tr::kAttrFirstTrial);
    m.slice_index = f.attr_int("/", tr::kAttrSliceIndex);
    m.slice_count = f.attr_int("/", tr::kAttrSliceCount);
    ABL_CHECK(m.first_trial >= 0 && m.slice_count >= 1 && m.slice_index >= 0 && m.slice_index < m.slice_count,
              "{}: invalid slice attributes (first trial {}, slice {} of {})", path, m.first_trial, m.slice_index,
              m.slice_count);
  }

  h5::Dataset params = f.open_dataset(tr::kParams);
  m.param_names = params.compound_fields();
  ABL_CHECK(!m.param_names.empty() && params.dims().size() == 1 && params.rows() >= n,
            "{}: {} must be a (T >= {}) compound of reals", path, tr::kParams, n);
  for (const Column& c : kColumns) {
    h5::Dataset ds = f.open_dataset(c.path);
    ABL_CHECK(!ds.is_string() && ds.dims().size() == 1 && ds.type() == c.type && ds.rows() >= n,
              "{}: {} must be (T >= {}) {}", path, c.path, n, h5::type_name(c.type));
  }
  ABL_CHECK(f.exists(tr::kResponses) == m.store_responses,
            "{}: {} must be present exactly when the root attribute {} is 1", path, tr::kResponses,
            tr::kAttrStoreResponses);
  if (m.store_responses) {
    h5::Dataset ds = f.open_dataset(tr::kResponses);
    const std::vector<int64_t> dims = ds.dims();
    ABL_CHECK(ds.is_string() && dims.size() == 2 && dims[0] >= n && dims[1] == m.n_refusal,
              "{}: {} must be (T >= {}, {}) strings", path, tr::kResponses, n, m.n_refusal);
  }
  *rows = n;
  return m;
}

std::vector<TrialRow> read_rows(const h5::File& f, const TrialsMeta& m, int64_t n,
                                bool with_responses) {
  std::vector<TrialRow> rows(static_cast<size_t>(n));
  if (n == 0) return rows;
  const size_t p = m.param_names.size();
  // Read by name in the stored order, which is the order of param_names by construction.
  const std::vector<double> params = f.open_dataset(tr::kParams).read_compound_rows(0, n);
  std::vector<double> kl(rows.size()), elapsed(rows.size());
  std::vector<int64_t> refusals(rows.size()), batch(rows.size());
  f.open_dataset(tr::kKl).read_rows(0, n, kl.data());
  f.open_dataset(tr::kRefusals).read_rows(0, n, refusals.data());
  f.open_dataset(tr::kBatch).read_rows(0, n, batch.data());
  f.open_dataset(tr::kElapsed).read_rows(0, n, elapsed.data());
  std::vector<std::string> responses;
  if (with_responses && m.store_responses) {
    responses = f.open_dataset(tr::kResponses).read_strings(0, n);
  }
  const size_t r = static_cast<size_t>(m.n_refusal);
  for (size_t i = 0; i < rows.size(); ++i) {
    TrialRow& row = rows[i];
    row.params.assign(params.begin() + static_cast<ptrdiff_t>(i * p),
                      params.begin() + static_cast<ptrdiff_t>((i + 1) * p));
    row.kl = kl[i];
    row.refusals = refusals[i];
    row.batch = batch[i];
    row.elapsed_s = elapsed[i];
    if (!responses.empty()) {
      row.responses.assign(std::make_move_iterator(responses.begin() + static_cast<ptrdiff_t>(i * r)),
                           std::make_move_iterator(responses.begin() +
                                                   static_cast<ptrdiff_t>((i + 1) * r)));
    }
  }
  return rows;
}

// Every dataset cut to `rows`: drops what an unfinished append left beyond the commit mark.
void truncate_to(h5::File& f, const TrialsMeta& m, int64_t rows) {
  f.open_dataset(tr::kParams).extend(rows);
  for (const Column& c : kColumns) f.open_dataset(c.path).extend(rows);
  if (m.store_responses) f.open_dataset(tr::kResponses).extend(rows);
}

h5::File create_file(const std::string& partial, TrialsMeta& m) {
  h5::File f = h5::File::create(partial, MPI_COMM_NULL);
  h5::DatasetOptions rows_opts;
  rows_opts.extendible = true;
  rows_opts.chunk = {kChunkRows};
  f.create_f64_compound_dataset(tr::kParams, m.param_names, 0, rows_opts);
  for (const Column& c : kColumns) f.create_dataset(c.path, c.type, {0}, rows_opts);
  if (m.store_responses) {
    h5::DatasetOptions opts;  // about 64 KiB of heap references per chunk
    opts.extendible = true;
    f.create_vlen_string_dataset(tr::kResponses, {0, m.n_refusal}, opts);
  }
  m.created = utc_now_iso8601();
  write_meta(f, m);
  f.flush();
  return f;
}

void rename_or_fail(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    fail("{}: cannot rename {} to it: {}", to, from, std::strerror(errno));
  }
}

void remove_or_fail(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  ABL_CHECK(!ec, "{}: cannot remove it to start over: {}", path, ec.message());
}

bool lock_error(const Error& e) {
  return std::string(e.what()).find("unable to lock file") != std::string::npos;
}

// `report` may read the .partial of a sweep still running in another process, which holds
// HDF5's lock on it: then the file is opened without the lock. Not always, because within one
// process HDF5 refuses to open a file again with other locking settings than it is open with.
h5::File open_for_reading(const std::string& path) {
  try {
    return h5::File::open(path);
  } catch (const Error& e) {
    if (!lock_error(e)) throw;
  }
  return h5::File::open_unlocked(path);
}

}  // namespace

TrialsStore TrialsStore::open(const std::string& path, const TrialsMeta& meta, Resume resume) {
  check_meta(path, meta);
  const std::string partial = h5::OutputFile::partial_path_for(path);
  const bool have_final = fs::exists(path), have_partial = fs::exists(partial);
  TrialsStore s;
  s.final_path_ = path;
  s.meta_ = meta;

  if (resume == Resume::restart) {
    if (have_final) remove_or_fail(path);
    if (have_partial) remove_or_fail(partial);
    s.file_ = create_file(partial, s.meta_);
    return s;
  }
  ABL_CHECK(!(have_final && have_partial),
            "{} and {} both exist, so it is unclear which one to continue: remove one of them, or "
            "run the sweep with --restart to replace both",
            path, partial);
  if (!have_final && !have_partial) {
    s.file_ = create_file(partial, s.meta_);
    return s;
  }

  // Check the existing file read-only before touching it: a mismatch leaves it as it was.
  const std::string existing = have_partial ? partial : path;
  {
    TrialsMeta stored;
    try {
      const h5::File f = h5::File::open(existing);
      int64_t rows = 0;
      stored = read_meta(f, &rows);
    } catch (const Error& e) {
      // HDF5 locks a file open for writing: the likely cause is a sweep still running on it.
      if (lock_error(e)) {
        fail("{}; is another sweep still writing it?", e.what());
      }
      fail("{}; cannot continue that file: {}", e.what(), kRestartHint);
    }
    ABL_CHECK(stored.config_hash == meta.config_hash,
              "{}: written by a sweep with another configuration (stored config_hash {}, this "
              "sweep's {}); {}",
              existing, stored.config_hash, meta.config_hash, kRestartHint);
    ABL_CHECK(stored.param_names == meta.param_names,
              "{}: its trials have the parameters ({}), this sweep's are ({}); {}", existing,
              join(stored.param_names), join(meta.param_names), kRestartHint);
  }
  if (!have_partial) rename_or_fail(path, partial);  // running again: not complete any more
  s.file_ = h5::File::open(partial, MPI_COMM_NULL, true);
  s.meta_ = read_meta(s.file_, &s.rows_);
  truncate_to(s.file_, s.meta_, s.rows_);
  s.file_.flush();
  s.resumed_ = s.rows_ > 0;
  return s;
}

TrialsStore::TrialsStore(TrialsStore&&) noexcept = default;

TrialsStore::~TrialsStore() {
  if (!file_.is_open()) return;
  if (broken_) {
    file_.abandon();  // a failed write: closing would retry it (the process ends without HDF5's shutdown)
    return;
  }
  try {
    file_.close();
  } catch (const std::exception&) {
    // Nothing more can be done in a destructor; every flushed batch is on disk already.
  }
}

std::vector<TrialRow> TrialsStore::read_all() const {
  if (finished_) return read_trials(final_path_, true).rows;
  ABL_CHECK(file_.is_open(), "{}: the trials store is closed", final_path_);
  return read_rows(file_, meta_, rows_, true);
}

void TrialsStore::append(const std::vector<TrialRow>& rows) {
  const std::string& file = file_.is_open() ? file_.path() : final_path_;
  ABL_CHECK(file_.is_open() && !finished_, "{}: append() after finish()", file);
  const size_t p = meta_.param_names.size();
  const size_t r = static_cast<size_t>(meta_.n_refusal);
  for (size_t i = 0; i < rows.size(); ++i) {
    ABL_CHECK(rows[i].params.size() == p, "{}: trial {} of the batch has {} parameters, the "
              "table has {} ({})", file, i, rows[i].params.size(), p, join(meta_.param_names));
    ABL_CHECK(!meta_.store_responses || rows[i].responses.size() == r,
              "{}: trial {} of the batch has {} responses, expected one per refusal prompt ({})",
              file, i, rows[i].responses.size(), r);
  }
  if (rows.empty()) return;

  const int64_t n = static_cast<int64_t>(rows.size()), end = rows_ + n;
  std::vector<double> params, kl, elapsed;
  std::vector<int64_t> refusals, batch;
  std::vector<std::string> responses;
  params.reserve(rows.size() * p);
  for (const TrialRow& row : rows) {
    params.insert(params.end(), row.params.begin(), row.params.end());
    kl.push_back(row.kl);
    refusals.push_back(row.refusals);
    batch.push_back(row.batch);
    elapsed.push_back(row.elapsed_s);
    if (meta_.store_responses) responses.insert(responses.end(), row.responses.begin(),
                                                row.responses.end());
  }
  ABL_CHECK(!broken_, "{}: an earlier append failed; the store takes no more rows", file);
  // The disk space the append can take is reserved first: a full disk fails here, before the file
  // is touched, and the stored trials stay as they are.
  const std::string full = h5::reserve_space(file_.path(), append_bytes(rows));
  ABL_CHECK(full.empty(),
            "disk full: {}: no room for the {} trials of this batch ({}); the {} trials stored before are kept (run "
            "the same command again to resume once there is space)",
            file, n, full, rows_);
  // Written at rows_ (the commit mark), not at the datasets' ends: after a failed append they
  // may be longer, and the rows beyond the mark are overwritten. Every dataset is flushed while
  // open (its close would swallow a failed chunk write), then the file is synced to the disk, and
  // only then the mark moves (and is synced): a mark never counts rows that are not on the disk.
  try {
    auto write = [&](const char* name, const auto& fill) {
      h5::Dataset ds = file_.open_dataset(name);
      ds.extend(end);
      fill(ds);
      ds.flush();
    };
    write(tr::kParams, [&](h5::Dataset& ds) { ds.write_compound_rows(rows_, n, params.data()); });
    write(tr::kKl, [&](h5::Dataset& ds) { ds.write_rows(rows_, n, kl.data()); });
    write(tr::kRefusals, [&](h5::Dataset& ds) { ds.write_rows(rows_, n, refusals.data()); });
    write(tr::kBatch, [&](h5::Dataset& ds) { ds.write_rows(rows_, n, batch.data()); });
    write(tr::kElapsed, [&](h5::Dataset& ds) { ds.write_rows(rows_, n, elapsed.data()); });
    if (meta_.store_responses) {
      write(tr::kResponses, [&](h5::Dataset& ds) { ds.write_vlen_string_rows(rows_, responses); });
    }
    file_.sync();
    update_int_attr(file_, tr::kAttrTrials, end);
    file_.sync();
  } catch (const Error& e) {
    broken_ = true;
    fail("{}\nthe batch of {} trials was not stored; the {} trials stored before it are kept (run the same command "
         "again to resume once the cause, e.g. a full disk, is fixed)",
         e.what(), n, rows_);
  }
  rows_ = end;
}

int64_t TrialsStore::append_bytes(const std::vector<TrialRow>& rows) const {
  const auto n = static_cast<int64_t>(rows.size());
  const auto chunks = [](int64_t r) { return (r + kChunkRows - 1) / kChunkRows; };
  const int64_t new_chunks = chunks(rows_ + n) - chunks(rows_);  // chunks are rewritten in place
  const auto p = static_cast<int64_t>(meta_.param_names.size());
  int64_t bytes = new_chunks * kChunkRows * 8 * (p + 4) + (int64_t{32} << 10);  // + metadata
  if (meta_.store_responses) {
    // Heap references in about 64 KiB chunks, and the strings in global-heap collections.
    bytes += (n * meta_.n_refusal * 16 / (int64_t{64} << 10) + 1) * (int64_t{64} << 10);
    for (const TrialRow& row : rows) {
      for (const std::string& s : row.responses) bytes += 2 * static_cast<int64_t>(s.size()) + 32;
    }
  }
  return bytes;
}

void TrialsStore::finish() {
  ABL_CHECK(file_.is_open() && !finished_, "{}: finish() on a trials store that is not open",
            final_path_);
  const std::string partial = file_.path();
  file_.close();
  h5::release_reserved_space(partial);
  h5::sync_path(partial);
  rename_or_fail(partial, final_path_);
  h5::sync_parent_folder(final_path_);
  finished_ = true;
}

TrialsContents read_trials(const std::string& path, bool with_responses) {
  TrialsContents out;
  const std::string partial = h5::OutputFile::partial_path_for(path);
  if (fs::exists(path)) {
    out.path = path;
    out.complete = true;
  } else {
    ABL_CHECK(fs::exists(partial), "{}: no such file (nor {} of a sweep still running)", path,
              partial);
    out.path = partial;
  }
  const h5::File f = open_for_reading(out.path);
  int64_t rows = 0;
  out.meta = read_meta(f, &rows);
  out.rows = read_rows(f, out.meta, rows, with_responses);
  return out;
}

}  // namespace abl::io::schema
