// baseline.h5: the original model's first-token log-probabilities on the KL prompts and its
// responses to the refusal prompts. Written collectively like residuals.h5 (each rank its own
// rows; the strings gathered to rank 0 and written at commit), read serially by the sweep.
#include <numeric>

#include "abl/core/error.h"
#include "abl/io/driver_files.h"
#include "schema_common.h"

namespace abl::io::schema {
namespace {

namespace bl = baseline;

// The same arguments on every rank, so this fails on every rank alike, before any file exists.
const std::string& checked_path(const std::string& path, int64_t n_kl, int64_t n_refusal,
                                int64_t vocab) {
  ABL_CHECK(n_kl > 0 && n_refusal > 0 && vocab > 0,
            "{}: a baseline needs at least one KL prompt, one refusal prompt and a vocabulary "
            "(KL prompts {}, refusal prompts {}, vocabulary {})",
            path, n_kl, n_refusal, vocab);
  return path;
}

std::string rows_text(int64_t first, int64_t n) {
  return fmt::format("rows [{}, {})", first, first + n);
}

}  // namespace

// ---- writer ----

BaselineWriter::BaselineWriter(const std::string& path, MPI_Comm comm, const BaselineMeta& meta,
                               int64_t n_kl, int64_t n_refusal, int64_t vocab)
    : out_(h5::OutputFile::create(checked_path(path, n_kl, n_refusal, vocab), comm)),
      comm_(comm),
      n_kl_(n_kl),
      n_refusal_(n_refusal),
      vocab_(vocab) {
  out_.reserve(n_kl * vocab * 4 + n_refusal + (int64_t{1} << 20));  // the collective datasets
  h5::File& f = out_.file();
  f.create_dataset(bl::kKlLogprobs, h5::Type::f32, {n_kl, vocab});
  f.create_dataset(bl::kRefusalIsRefusal, h5::Type::u8, {n_refusal});
  out_.declare_strings(bl::kKlPrompts, n_kl);
  out_.declare_strings(bl::kRefusalPrompts, n_refusal);
  out_.declare_strings(bl::kRefusalResponses, n_refusal);

  int64_t world = meta.world_size;
  if (world <= 0) {
    int size = 1;
    if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &size);
    world = size;
  }
  f.set_attr_string("/", kSchemaAttr, bl::kSchema);
  f.set_attr_int("/", kSchemaVersionAttr, bl::kVersion);
  f.set_attr_string("/", bl::kAttrModel, meta.model);
  f.set_attr_string("/", bl::kAttrArchitecture, meta.architecture);
  f.set_attr_string("/", bl::kAttrChatTemplate, meta.chat_template);
  f.set_attr_string("/", bl::kAttrSystemPrompt, meta.system_prompt);
  f.set_attr_string("/", bl::kAttrResponsePrefix, meta.response_prefix);
  f.set_attr_string("/", bl::kAttrResponsePrefixSource, meta.response_prefix_source);
  f.set_attr_string("/", kInputsAttr, meta.inputs);
  f.set_attr_int("/", bl::kAttrMaxResponseLength, meta.max_response_length);
  f.set_attr_int("/", bl::kAttrWorldSize, world);
  f.set_attr_string("/", bl::kAttrVersion, meta.abliterate_version);
  f.set_attr_string("/", bl::kAttrCreated, detail::from_rank0(comm, utc_now_iso8601()));
}

const std::string& BaselineWriter::path() const { return out_.final_path(); }

void BaselineWriter::write_kl(int64_t first_row, int64_t n_rows, const float* logprobs,
                              const std::vector<std::string>& prompts) {
  std::string problem;
  if (first_row < 0 || n_rows < 0 || first_row + n_rows > n_kl_) {
    problem = fmt::format("{} outside the {} KL prompts", rows_text(first_row, n_rows), n_kl_);
  } else if (static_cast<int64_t>(prompts.size()) != n_rows) {
    problem = fmt::format("{} KL prompts for {} rows of log-probabilities", prompts.size(), n_rows);
  } else if (n_rows > 0 && logprobs == nullptr) {
    problem = "no log-probabilities";
  }
  mpi::agree(comm_, problem.empty(), fmt::format("{}: {}", path(), problem));
  out_.file().open_dataset(bl::kKlLogprobs).write_rows(first_row, n_rows, logprobs);
  out_.write_strings(bl::kKlPrompts, first_row, prompts);
  kl_rows_ += n_rows;
}

void BaselineWriter::write_refusals(int64_t first_row, const std::vector<std::string>& prompts,
                                    const std::vector<std::string>& responses,
                                    const std::vector<uint8_t>& is_refusal) {
  const int64_t n = static_cast<int64_t>(prompts.size());
  std::string problem;
  if (responses.size() != prompts.size() || is_refusal.size() != prompts.size()) {
    problem = fmt::format("{} refusal prompts, {} responses and {} verdicts (expected as many)",
                          prompts.size(), responses.size(), is_refusal.size());
  } else if (first_row < 0 || first_row + n > n_refusal_) {
    problem = fmt::format("{} outside the {} refusal prompts", rows_text(first_row, n), n_refusal_);
  } else {
    for (size_t i = 0; i < is_refusal.size() && problem.empty(); ++i) {
      if (is_refusal[i] > 1) {
        problem = fmt::format("is_refusal of row {} is {} (0 or 1)", first_row + static_cast<int64_t>(i),
                              is_refusal[i]);
      }
    }
  }
  mpi::agree(comm_, problem.empty(), fmt::format("{}: {}", path(), problem));
  out_.file().open_dataset(bl::kRefusalIsRefusal).write_rows(first_row, n, is_refusal.data());
  out_.write_strings(bl::kRefusalPrompts, first_row, prompts);
  out_.write_strings(bl::kRefusalResponses, first_row, responses);
  refusal_rows_ += n;
}

void BaselineWriter::commit() {
  int64_t mine[2] = {kl_rows_, refusal_rows_}, all[2] = {kl_rows_, refusal_rows_};
  if (comm_ != MPI_COMM_NULL) MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_SUM, comm_);
  mpi::agree(comm_, all[0] == n_kl_ && all[1] == n_refusal_,
            fmt::format("{}: {} rows of {} and {} rows of {} written, expected {} and {}", path(),
                        all[0], bl::kKlLogprobs, all[1], bl::kRefusalResponses, n_kl_,
                        n_refusal_));
  // A row written twice (and another never) passes the counts; the string check at commit
  // catches it, since every row's prompt is written with its data.
  out_.commit();
}

// ---- reader ----

BaselineReader::BaselineReader(const std::string& path) : file_(h5::File::open(path)) {
  const h5::File& f = file_;
  detail::check_schema(f, bl::kSchema, bl::kVersion, "a baseline file");
  meta_.model = f.attr_string("/", bl::kAttrModel);
  meta_.architecture = f.attr_string("/", bl::kAttrArchitecture);
  meta_.chat_template = f.attr_string("/", bl::kAttrChatTemplate);
  meta_.system_prompt = f.attr_string("/", bl::kAttrSystemPrompt);
  meta_.response_prefix = f.attr_string("/", bl::kAttrResponsePrefix);
  meta_.response_prefix_source = f.attr_string("/", bl::kAttrResponsePrefixSource);
  meta_.max_response_length = f.attr_int("/", bl::kAttrMaxResponseLength);
  meta_.world_size = f.attr_int("/", bl::kAttrWorldSize);
  meta_.abliterate_version = f.attr_string("/", bl::kAttrVersion);
  if (f.has_attr("/", kInputsAttr)) meta_.inputs = f.attr_string("/", kInputsAttr);
  meta_.created = f.attr_string("/", bl::kAttrCreated);

  h5::Dataset logprobs = f.open_dataset(bl::kKlLogprobs);
  const std::vector<int64_t> dims = logprobs.dims();
  ABL_CHECK(!logprobs.is_string() && dims.size() == 2 && logprobs.type() == h5::Type::f32,
            "{}: {} must be (prompts, vocabulary) f32", path, bl::kKlLogprobs);
  n_kl_ = dims[0];
  vocab_ = dims[1];
  h5::Dataset verdicts = f.open_dataset(bl::kRefusalIsRefusal);
  ABL_CHECK(!verdicts.is_string() && verdicts.dims().size() == 1 &&
                verdicts.type() == h5::Type::u8,
            "{}: {} must be (prompts) u8", path, bl::kRefusalIsRefusal);
  n_refusal_ = verdicts.rows();
  const std::pair<const char*, int64_t> strings[] = {{bl::kKlPrompts, n_kl_},
                                                     {bl::kRefusalPrompts, n_refusal_},
                                                     {bl::kRefusalResponses, n_refusal_}};
  for (const auto& [name, n] : strings) {
    h5::Dataset ds = f.open_dataset(name);
    ABL_CHECK(ds.is_string() && ds.dims() == std::vector<int64_t>{n},
              "{}: {} must be ({}) strings", path, name, n);
  }
}

std::vector<float> BaselineReader::kl_logprobs(int64_t first_row, int64_t n_rows) const {
  if (n_rows < 0) n_rows = n_kl_ - first_row;
  ABL_CHECK(first_row >= 0 && n_rows >= 0 && first_row + n_rows <= n_kl_,
            "{}: {}: {} outside the {} KL prompts", path(), bl::kKlLogprobs,
            rows_text(first_row, n_rows), n_kl_);
  std::vector<float> out(static_cast<size_t>(n_rows * vocab_));
  file_.open_dataset(bl::kKlLogprobs).read_rows(first_row, n_rows, out.data());
  return out;
}

std::vector<std::string> BaselineReader::kl_prompts() const {
  return file_.open_dataset(bl::kKlPrompts).read_strings();
}

std::vector<std::string> BaselineReader::refusal_prompts() const {
  return file_.open_dataset(bl::kRefusalPrompts).read_strings();
}

std::vector<std::string> BaselineReader::refusal_responses() const {
  return file_.open_dataset(bl::kRefusalResponses).read_strings();
}

std::vector<uint8_t> BaselineReader::is_refusal() const {
  return file_.open_dataset(bl::kRefusalIsRefusal).read_all<uint8_t>();
}

int64_t BaselineReader::refusals() const {
  std::vector<uint8_t> v = is_refusal();
  return std::accumulate(v.begin(), v.end(), int64_t{0},
                         [](int64_t s, uint8_t x) { return s + (x != 0 ? 1 : 0); });
}

}  // namespace abl::io::schema
