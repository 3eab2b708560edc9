// residuals.h5: the collective writer and the serial reader. The means are reduced with MPI
// (f64 sums and counts) rather than recomputed from the stored rows, so a run with
// --no-full-residuals still records them; the reader validates every shape up front.
#include "abl/io/output_schema.h"

#include "abl/core/error.h"
#include "schema_common.h"

namespace abl::io::schema {
namespace {

std::string set_path(PromptSet s, const char* leaf) {
  return fmt::format("/{}/{}", set_name(s), leaf);
}

// The same arguments on every rank, so this fails on every rank alike, before any file exists.
const std::string& checked_path(const std::string& path, int64_t n_good, int64_t n_bad,
                                int64_t depths, int64_t hidden) {
  ABL_CHECK(n_good > 0 && n_bad > 0 && depths > 0 && hidden > 0,
            "{}: residuals need at least one prompt per set and positive dimensions "
            "(good {}, bad {}, depths {}, hidden {})",
            path, n_good, n_bad, depths, hidden);
  return path;
}

constexpr PromptSet kSets[] = {PromptSet::good, PromptSet::bad};

}  // namespace

std::string_view set_name(PromptSet s) { return s == PromptSet::good ? "good" : "bad"; }

namespace trials {
std::string slice_file(int64_t i, int64_t n) { return fmt::format("trials.slice-{}-of-{}.h5", i, n); }
}  // namespace trials

namespace residuals {
std::string residuals(PromptSet s) { return set_path(s, "residuals"); }
std::string prompts(PromptSet s) { return set_path(s, "prompts"); }
std::string n_tokens(PromptSet s) { return set_path(s, "n_tokens"); }
std::string mean(PromptSet s) { return set_path(s, "mean"); }
}  // namespace residuals

// ---- writer ----

ResidualsWriter::ResidualsWriter(const std::string& path, MPI_Comm comm, const ResidualsMeta& meta,
                                 int64_t n_good, int64_t n_bad, int64_t depths, int64_t hidden,
                                 bool full_residuals)
    : out_(h5::OutputFile::create(checked_path(path, n_good, n_bad, depths, hidden), comm)),
      comm_(comm),
      depths_(depths),
      hidden_(hidden),
      full_(full_residuals) {
  namespace r = residuals;
  // The collective part of the file (residuals, n_tokens, means) and room for its metadata.
  out_.reserve((full_residuals ? (n_good + n_bad) * depths * hidden * 4 : 0) + 2 * depths * hidden * 8 +
               (n_good + n_bad) * 8 + (int64_t{1} << 20));
  h5::File& f = out_.file();
  sets_[0].rows = n_good;
  sets_[1].rows = n_bad;
  for (PromptSet s : kSets) {
    SetState& st = sets_[static_cast<int>(s)];
    st.sum.assign(static_cast<size_t>(depths * hidden), 0.0);
    if (full_) f.create_dataset(r::residuals(s), h5::Type::f32, {st.rows, depths, hidden});
    f.create_dataset(r::n_tokens(s), h5::Type::i64, {st.rows});
    f.create_dataset(r::mean(s), h5::Type::f64, {depths, hidden});
    out_.declare_strings(r::prompts(s), st.rows);
  }

  int64_t world = meta.world_size;
  if (world <= 0) {
    int size = 1;
    if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &size);
    world = size;
  }
  f.set_attr_string("/", kSchemaAttr, r::kSchema);
  f.set_attr_int("/", kSchemaVersionAttr, r::kVersion);
  f.set_attr_string("/", r::kAttrModel, meta.model);
  f.set_attr_string("/", r::kAttrArchitecture, meta.architecture);
  f.set_attr_string("/", r::kAttrDtype, meta.dtype);
  f.set_attr_string("/", r::kAttrChatTemplate, meta.chat_template);
  f.set_attr_int("/", r::kAttrWorldSize, world);
  f.set_attr_string("/", r::kAttrSharding, meta.sharding);
  f.set_attr_string("/", r::kAttrVersion, meta.abliterate_version);
  f.set_attr_double("/", r::kAttrWinsorizeQuantile, meta.winsorize_quantile);
  f.set_attr_string("/", r::kAttrResponsePrefix, meta.response_prefix);
  f.set_attr_string("/", kInputsAttr, meta.inputs);
  f.set_attr_string("/", r::kAttrCreated, detail::from_rank0(comm, utc_now_iso8601()));
}

void ResidualsWriter::write(PromptSet set, int64_t first_row, int64_t n_rows,
                            const float* residuals, const int64_t* n_tokens,
                            const std::vector<std::string>& prompts) {
  SetState& st = sets_[static_cast<int>(set)];
  std::string problem;
  if (first_row < 0 || n_rows < 0 || first_row + n_rows > st.rows) {
    problem = fmt::format("rows [{}, {}) outside the {} {} prompts", first_row, first_row + n_rows,
                          st.rows, set_name(set));
  } else if (static_cast<int64_t>(prompts.size()) != n_rows) {
    problem = fmt::format("{} prompts for {} rows", prompts.size(), n_rows);
  } else if (n_rows > 0 && (residuals == nullptr || n_tokens == nullptr)) {
    problem = "no residuals or token counts";
  }
  mpi::agree(comm_, problem.empty(), fmt::format("{}: {}", path(), problem));

  h5::File& f = out_.file();
  if (full_) f.open_dataset(residuals::residuals(set)).write_rows(first_row, n_rows, residuals);
  f.open_dataset(residuals::n_tokens(set)).write_rows(first_row, n_rows, n_tokens);
  out_.write_strings(residuals::prompts(set), first_row, prompts);

  const size_t block = static_cast<size_t>(depths_ * hidden_);
  for (int64_t row = 0; row < n_rows; ++row) {
    const float* x = residuals + static_cast<size_t>(row) * block;
    for (size_t i = 0; i < block; ++i) st.sum[i] += x[i];
  }
  st.count += n_rows;
}

void ResidualsWriter::write_mean_rows(PromptSet set, const double* mean) {
  int rank = 0;
  if (comm_ != MPI_COMM_NULL) MPI_Comm_rank(comm_, &rank);
  // Rank 0 writes the whole (depths, hidden) block, the others join with no rows.
  out_.file().open_dataset(residuals::mean(set)).write_rows(0, rank == 0 ? depths_ : 0, mean);
}

void ResidualsWriter::write_means(PromptSet set, const double* mean) {
  int rank = 0;
  if (comm_ != MPI_COMM_NULL) MPI_Comm_rank(comm_, &rank);
  mpi::agree(comm_, rank != 0 || mean != nullptr,
            fmt::format("{}: write_means without data", path()));
  write_mean_rows(set, mean);
  sets_[static_cast<int>(set)].mean_given = true;
}

void ResidualsWriter::commit() {
  for (PromptSet s : kSets) {
    SetState& st = sets_[static_cast<int>(s)];
    if (st.mean_given) continue;
    std::vector<double> sum = st.sum;
    int64_t count = st.count;
    if (comm_ != MPI_COMM_NULL) {
      MPI_Allreduce(st.sum.data(), sum.data(), static_cast<int>(sum.size()), MPI_DOUBLE, MPI_SUM,
                    comm_);
      MPI_Allreduce(&st.count, &count, 1, MPI_INT64_T, MPI_SUM, comm_);
    }
    mpi::agree(comm_, count == st.rows,
              fmt::format("{}: {} rows of {} written, the set has {}", path(), count, set_name(s),
                          st.rows));
    for (double& v : sum) v /= static_cast<double>(count);
    write_mean_rows(s, sum.data());
  }
  out_.commit();
}

// ---- reader ----

ResidualsReader::ResidualsReader(const std::string& path) : file_(h5::File::open(path)) {
  namespace r = residuals;
  const h5::File& f = file_;
  version_ = detail::check_schema(f, r::kSchema, r::kVersion, "a residuals file");

  meta_.model = f.attr_string("/", r::kAttrModel);
  meta_.architecture = f.attr_string("/", r::kAttrArchitecture);
  meta_.dtype = f.attr_string("/", r::kAttrDtype);
  meta_.chat_template = f.attr_string("/", r::kAttrChatTemplate);
  meta_.world_size = f.attr_int("/", r::kAttrWorldSize);
  meta_.sharding = f.attr_string("/", r::kAttrSharding);
  meta_.abliterate_version = f.attr_string("/", r::kAttrVersion);
  meta_.winsorize_quantile = f.attr_double("/", r::kAttrWinsorizeQuantile);
  // Files of the first schema version may lack it (written before the baseline phase existed).
  if (f.has_attr("/", r::kAttrResponsePrefix)) meta_.response_prefix = f.attr_string("/", r::kAttrResponsePrefix);
  if (f.has_attr("/", kInputsAttr)) meta_.inputs = f.attr_string("/", kInputsAttr);
  meta_.created = f.attr_string("/", r::kAttrCreated);

  std::vector<int64_t> mean_dims = f.open_dataset(r::mean(PromptSet::good)).dims();
  ABL_CHECK(mean_dims.size() == 2, "{}: {} must be (depths, hidden)", path,
            r::mean(PromptSet::good));
  depths_ = mean_dims[0];
  hidden_ = mean_dims[1];
  full_ = f.exists(r::residuals(PromptSet::good));
  for (PromptSet s : kSets) {
    h5::Dataset tokens = f.open_dataset(r::n_tokens(s));
    ABL_CHECK(tokens.dims().size() == 1 && tokens.type() == h5::Type::i64, "{}: {} must be (N) i64",
              path, r::n_tokens(s));
    const int64_t n = tokens.rows();
    rows_[static_cast<int>(s)] = n;
    h5::Dataset mean = f.open_dataset(r::mean(s));
    ABL_CHECK(
        mean.dims() == std::vector<int64_t>({depths_, hidden_}) && mean.type() == h5::Type::f64,
        "{}: {} must be ({}, {}) f64", path, r::mean(s), depths_, hidden_);
    h5::Dataset prompts = f.open_dataset(r::prompts(s));
    ABL_CHECK(prompts.is_string() && prompts.dims() == std::vector<int64_t>({n}),
              "{}: {} must be ({}) strings", path, r::prompts(s), n);
    ABL_CHECK(f.exists(r::residuals(s)) == full_,
              "{}: {} and {} must both be present or both absent", path,
              r::residuals(PromptSet::good), r::residuals(PromptSet::bad));
    if (full_) {
      h5::Dataset res = f.open_dataset(r::residuals(s));
      ABL_CHECK(
          res.dims() == std::vector<int64_t>({n, depths_, hidden_}) && res.type() == h5::Type::f32,
          "{}: {} must be ({}, {}, {}) f32", path, r::residuals(s), n, depths_, hidden_);
    }
  }
}

std::vector<float> ResidualsReader::residuals(PromptSet s, int64_t first_row,
                                              int64_t n_rows) const {
  ABL_CHECK(full_, "{}: written with --no-full-residuals: only the means are stored", path());
  if (n_rows < 0) n_rows = rows(s) - first_row;
  h5::Dataset ds = file_.open_dataset(residuals::residuals(s));
  std::vector<float> out(static_cast<size_t>(std::max<int64_t>(n_rows, 0) * depths_ * hidden_));
  ds.read_rows(first_row, n_rows, out.data());
  return out;
}

std::vector<int64_t> ResidualsReader::n_tokens(PromptSet s) const {
  return file_.open_dataset(residuals::n_tokens(s)).read_all<int64_t>();
}

std::vector<std::string> ResidualsReader::prompts(PromptSet s) const {
  return file_.open_dataset(residuals::prompts(s)).read_strings();
}

std::vector<double> ResidualsReader::mean(PromptSet s) const {
  return file_.open_dataset(residuals::mean(s)).read_all<double>();
}

}  // namespace abl::io::schema
