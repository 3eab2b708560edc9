// What the driver files' writers and readers share (internal to src/io): rank 0's value of a
// string on every rank, and the schema check every reader starts with (the creation time they
// write is core/utc_time.h's).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>

#include "abl/core/error.h"
#include "abl/core/utc_time.h"
#include "abl/io/h5.h"
#include "abl/io/output_schema.h"

namespace abl::io::schema::detail {

// Rank 0's value of `s` on every rank (attributes are written collectively with one value).
inline std::string from_rank0(MPI_Comm comm, std::string s) {
  if (comm == MPI_COMM_NULL) return s;
  uint64_t len = s.size();
  MPI_Bcast(&len, 1, MPI_UINT64_T, 0, comm);
  s.resize(len);
  MPI_Bcast(s.data(), static_cast<int>(len), MPI_CHAR, 0, comm);
  return s;
}

// The file's schema_version, after checking that its schema is `schema` (`what` names the kind
// of file in the message, e.g. "a trials file") and that this build reads that version.
inline int64_t check_schema(const h5::File& f, const char* schema, int64_t newest,
                            const char* what) {
  ABL_CHECK(f.has_attr("/", kSchemaAttr) && f.attr_string("/", kSchemaAttr) == schema,
            "{}: not {} (root attribute '{}' is not '{}')", f.path(), what, kSchemaAttr, schema);
  const int64_t version = f.attr_int("/", kSchemaVersionAttr);
  ABL_CHECK(version >= 1 && version <= newest,
            "{}: schema version {} is not one this build reads (1 to {})", f.path(), version,
            newest);
  return version;
}

}  // namespace abl::io::schema::detail
