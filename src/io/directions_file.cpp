// directions.h5: written serially by the driver (the directions are small: (L+1, H) f64), read
// back by the sweep and export phases. Every size is checked before the file is created, so a
// bad call leaves no ".partial" behind; the reader checks every shape before returning.
#include "abl/core/error.h"
#include "abl/io/driver_files.h"
#include "schema_common.h"

namespace abl::io::schema {
namespace {

namespace dn = directions;

// The (L+1, H) and (L+1) datasets, with the member that holds each.
struct Matrix {
  const char* path;
  std::vector<double> DirectionsData::*data;
};
constexpr Matrix kMatrices[] = {
    {dn::kDirections, &DirectionsData::directions},
    {dn::kGoodMean, &DirectionsData::good_mean},
    {dn::kBadMean, &DirectionsData::bad_mean},
};
constexpr Matrix kStats[] = {
    {dn::kStatsGoodNorm, &DirectionsData::good_norm},
    {dn::kStatsBadNorm, &DirectionsData::bad_norm},
    {dn::kStatsDirectionNorm, &DirectionsData::direction_norm},
    {dn::kStatsCosineGoodBad, &DirectionsData::cosine_good_bad},
    {dn::kStatsSeparation, &DirectionsData::separation},
};

void check_sizes(const std::string& path, const DirectionsData& d) {
  ABL_CHECK(d.depths > 0 && d.hidden > 0, "{}: directions need positive dimensions (depths {}, "
            "hidden {})", path, d.depths, d.hidden);
  for (const Matrix& m : kMatrices) {
    const size_t n = (d.*m.data).size();
    ABL_CHECK(static_cast<int64_t>(n) == d.depths * d.hidden,
              "{}: {} has {} values, expected {} x {} = {}", path, m.path, n, d.depths, d.hidden,
              d.depths * d.hidden);
  }
  for (const Matrix& m : kStats) {
    const size_t n = (d.*m.data).size();
    ABL_CHECK(static_cast<int64_t>(n) == d.depths, "{}: {} has {} values, expected {} (depths)",
              path, m.path, n, d.depths);
  }
}

}  // namespace

void write_directions(const std::string& path, const DirectionsData& d) {
  check_sizes(path, d);
  h5::OutputFile out = h5::OutputFile::create(path, MPI_COMM_NULL);
  h5::File& f = out.file();
  for (const Matrix& m : kMatrices) {
    f.create_dataset(m.path, h5::Type::f64, {d.depths, d.hidden})
        .write_rows(0, d.depths, (d.*m.data).data());
  }
  for (const Matrix& m : kStats) {
    f.create_dataset(m.path, h5::Type::f64, {d.depths}).write_rows(0, d.depths, (d.*m.data).data());
  }
  f.set_attr_string("/", kSchemaAttr, dn::kSchema);
  f.set_attr_int("/", kSchemaVersionAttr, dn::kVersion);
  f.set_attr_string("/", dn::kAttrModel, d.model);
  f.set_attr_string("/", dn::kAttrArchitecture, d.architecture);
  f.set_attr_string("/", dn::kAttrResidualsCreated, d.residuals_created);
  f.set_attr_int("/", dn::kAttrProjected, d.projected ? 1 : 0);
  f.set_attr_string("/", kInputsAttr, d.inputs);
  f.set_attr_string("/", dn::kAttrCreated, utc_now_iso8601());
  out.commit();
}

DirectionsData read_directions(const std::string& path) {
  const h5::File f = h5::File::open(path);
  detail::check_schema(f, dn::kSchema, dn::kVersion, "a directions file");
  DirectionsData d;
  d.model = f.attr_string("/", dn::kAttrModel);
  d.architecture = f.attr_string("/", dn::kAttrArchitecture);
  d.residuals_created = f.attr_string("/", dn::kAttrResidualsCreated);
  d.projected = f.attr_int("/", dn::kAttrProjected) != 0;
  if (f.has_attr("/", kInputsAttr)) d.inputs = f.attr_string("/", kInputsAttr);
  d.created = f.attr_string("/", dn::kAttrCreated);

  const std::vector<int64_t> dims = f.open_dataset(dn::kDirections).dims();
  ABL_CHECK(dims.size() == 2 && dims[0] > 0 && dims[1] > 0, "{}: {} must be (depths, hidden)",
            path, dn::kDirections);
  d.depths = dims[0];
  d.hidden = dims[1];
  for (const Matrix& m : kMatrices) {
    h5::Dataset ds = f.open_dataset(m.path);
    ABL_CHECK(!ds.is_string() && ds.dims() == dims && ds.type() == h5::Type::f64,
              "{}: {} must be ({}, {}) f64", path, m.path, d.depths, d.hidden);
    d.*m.data = ds.read_all<double>();
  }
  for (const Matrix& m : kStats) {
    h5::Dataset ds = f.open_dataset(m.path);
    ABL_CHECK(!ds.is_string() && ds.dims() == std::vector<int64_t>{d.depths} &&
                  ds.type() == h5::Type::f64,
              "{}: {} must be ({}) f64", path, m.path, d.depths);
    d.*m.data = ds.read_all<double>();
  }
  return d;
}

}  // namespace abl::io::schema
