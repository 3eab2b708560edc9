// Fuzz target: Parquet prompt files (read_parquet_column, the footer's Thrift, pages, levels,
// encodings and the Snappy/gzip/zstd codecs). The input is the file; column "text" is read.
// Accepted rows come in order from 0, each a value or a null, never more than the footer allows.
#include "abl/io/parquet.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  abl::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = abl::fuzz::scratch().write("prompts.parquet", abl::fuzz::as_text(data, size));
  return abl::fuzz::run_input([&] {
    int64_t next = 0;
    abl::io::read_parquet_column(path, "text", [&](int64_t row, const std::string*) {
      ABL_FUZZ_CHECK(row == next, std::to_string(row));
      ++next;
    });
    // The reader bounds the rows by the file's size (16 a byte, plus 65,536).
    ABL_FUZZ_CHECK(next <= 16 * static_cast<int64_t>(size) + 65536, std::to_string(next));
  });
}
