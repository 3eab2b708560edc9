// Reading one string column of a Parquet file: what a prompt set downloaded from the Hugging Face
// Hub is (`huggingface-cli download --repo-type dataset ...` gives data/train-*.parquet). Flat
// BYTE_ARRAY columns, required or optional, in any number of row groups and pages (data pages v1
// and v2; PLAIN, dictionary, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY values; uncompressed,
// Snappy, gzip or zstd pages) — what pyarrow, Hugging Face datasets, polars, DuckDB, Spark and
// arrow-rs write. Everything else is refused with a message naming the file and what it holds.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace abl::io {

// True when the file starts with Parquet's magic bytes "PAR1" (whatever its name).
bool is_parquet_file(const std::string& path);

// Calls `row(index, value)` for each row of the top-level string column `column`, in file order
// (index from 0; value null for a null). Errors name the file; a missing column lists the
// file's columns, a nested or non-string column says what it holds.
void read_parquet_column(const std::string& path, const std::string& column,
                         const std::function<void(int64_t index, const std::string* value)>& row);

}  // namespace abl::io
