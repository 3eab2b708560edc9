// evaluate.h5: a model scored against its base (`abliterate evaluate`): per KL prompt the
// first-token KL divergence of the model from the base, per evaluation prompt the model's response
// and verdict, and the two totals as root attributes. Written collectively like baseline.h5.
#include "abl/core/error.h"
#include "abl/io/driver_files.h"
#include "schema_common.h"

namespace abl::io::schema {
namespace {

namespace ev = evaluate;

const std::string& checked_path(const std::string& path, int64_t n_kl, int64_t n_refusal) {
  ABL_CHECK(n_kl > 0 && n_refusal > 0, "{}: an evaluation needs at least one KL prompt and one refusal prompt "
            "(KL prompts {}, refusal prompts {})", path, n_kl, n_refusal);
  return path;
}

// The problem with rows [first, first + n) of a dataset of `total` rows given `sizes` entries each.
std::string rows_problem(int64_t first, int64_t n, int64_t total, std::initializer_list<size_t> sizes) {
  for (size_t s : sizes) {
    if (static_cast<int64_t>(s) != n) return fmt::format("{} values for {} rows", s, n);
  }
  if (first < 0 || first + n > total) return fmt::format("rows [{}, {}) outside the {} rows", first, first + n, total);
  return "";
}

}  // namespace

EvaluateWriter::EvaluateWriter(const std::string& path, MPI_Comm comm, const EvaluateMeta& meta, int64_t n_kl,
                               int64_t n_refusal)
    : out_(h5::OutputFile::create(checked_path(path, n_kl, n_refusal), comm)),
      comm_(comm),
      n_kl_(n_kl),
      n_refusal_(n_refusal) {
  out_.reserve(n_kl * 8 + n_refusal + (int64_t{1} << 20));
  h5::File& f = out_.file();
  f.create_dataset(ev::kKl, h5::Type::f64, {n_kl});
  f.create_dataset(ev::kRefusalIsRefusal, h5::Type::u8, {n_refusal});
  out_.declare_strings(ev::kKlPrompts, n_kl);
  out_.declare_strings(ev::kRefusalPrompts, n_refusal);
  out_.declare_strings(ev::kRefusalResponses, n_refusal);
  int64_t world = meta.world_size;
  if (world <= 0) {
    int size = 1;
    if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &size);
    world = size;
  }
  f.set_attr_string("/", kSchemaAttr, ev::kSchema);
  f.set_attr_int("/", kSchemaVersionAttr, ev::kVersion);
  f.set_attr_string("/", ev::kAttrModel, meta.model);
  f.set_attr_string("/", ev::kAttrBase, meta.base);
  f.set_attr_string("/", ev::kAttrModelFingerprint, meta.model_fingerprint);
  f.set_attr_string("/", ev::kAttrBaseFingerprint, meta.base_fingerprint);
  f.set_attr_double("/", ev::kAttrKl, meta.kl);
  f.set_attr_int("/", ev::kAttrRefusals, meta.refusals);
  f.set_attr_string("/", ev::kAttrArchitecture, meta.architecture);
  f.set_attr_string("/", ev::kAttrChatTemplate, meta.chat_template);
  f.set_attr_string("/", ev::kAttrSystemPrompt, meta.system_prompt);
  f.set_attr_string("/", ev::kAttrResponsePrefix, meta.response_prefix);
  f.set_attr_string("/", ev::kAttrResponsePrefixSource, meta.response_prefix_source);
  f.set_attr_int("/", ev::kAttrMaxResponseLength, meta.max_response_length);
  f.set_attr_int("/", ev::kAttrWorldSize, world);
  f.set_attr_string("/", ev::kAttrVersion, meta.abliterate_version);
  f.set_attr_string("/", kInputsAttr, meta.inputs);
  f.set_attr_string("/", ev::kAttrCreated, detail::from_rank0(comm, utc_now_iso8601()));
}

void EvaluateWriter::write_kl(int64_t first_row, const std::vector<double>& kl, const std::vector<std::string>& prompts) {
  const auto n = static_cast<int64_t>(prompts.size());
  const std::string problem = rows_problem(first_row, n, n_kl_, {kl.size()});
  mpi::agree(comm_, problem.empty(), fmt::format("{}: {}: {}", path(), ev::kKl, problem));
  out_.file().open_dataset(ev::kKl).write_rows(first_row, n, kl.data());
  out_.write_strings(ev::kKlPrompts, first_row, prompts);
  kl_rows_ += n;
}

void EvaluateWriter::write_refusals(int64_t first_row, const std::vector<std::string>& prompts,
                                    const std::vector<std::string>& responses, const std::vector<uint8_t>& is_refusal) {
  const auto n = static_cast<int64_t>(prompts.size());
  const std::string problem = rows_problem(first_row, n, n_refusal_, {responses.size(), is_refusal.size()});
  mpi::agree(comm_, problem.empty(), fmt::format("{}: {}: {}", path(), ev::kRefusalResponses, problem));
  out_.file().open_dataset(ev::kRefusalIsRefusal).write_rows(first_row, n, is_refusal.data());
  out_.write_strings(ev::kRefusalPrompts, first_row, prompts);
  out_.write_strings(ev::kRefusalResponses, first_row, responses);
  refusal_rows_ += n;
}

void EvaluateWriter::commit() {
  int64_t mine[2] = {kl_rows_, refusal_rows_}, all[2] = {kl_rows_, refusal_rows_};
  if (comm_ != MPI_COMM_NULL) MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_SUM, comm_);
  mpi::agree(comm_, all[0] == n_kl_ && all[1] == n_refusal_,
             fmt::format("{}: {} rows of {} and {} rows of {} written, expected {} and {}", path(), all[0], ev::kKl,
                         all[1], ev::kRefusalResponses, n_kl_, n_refusal_));
  out_.commit();
}

}  // namespace abl::io::schema
