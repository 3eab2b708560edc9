// Parquet's footer and page headers as parquet.thrift (apache/parquet-format) defines them, only
// the fields a reader of one flat string column needs; decoded with thrift_compact.h.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "thrift_compact.h"

namespace abl::io::parquet {

enum PhysicalType : int { kBoolean = 0, kInt32 = 1, kInt64 = 2, kInt96 = 3, kFloat = 4, kDouble = 5,
                          kByteArray = 6, kFixedLenByteArray = 7 };
enum Repetition : int { kRequired = 0, kOptional = 1, kRepeated = 2 };
enum PageType : int { kDataPage = 0, kIndexPage = 1, kDictionaryPage = 2, kDataPageV2 = 3 };
enum Encoding : int { kPlain = 0, kPlainDictionary = 2, kRle = 3, kBitPacked = 4, kDeltaBinaryPacked = 5,
                      kDeltaLengthByteArray = 6, kDeltaByteArray = 7, kRleDictionary = 8, kByteStreamSplit = 9 };

const char* physical_type_name(int type);
std::string encoding_name(int encoding);

struct SchemaElement {
  std::string name;
  int type = -1;  // PhysicalType; -1 for a group
  int repetition = kRequired;
  int32_t num_children = 0;
};

struct ColumnChunk {
  int type = -1;
  int codec = 0;
  std::vector<std::string> path;
  int64_t num_values = 0;
  int64_t total_compressed_size = 0;
  int64_t data_page_offset = -1;
  std::optional<int64_t> dictionary_page_offset;
  // Where the chunk's first page starts: the dictionary page when there is one.
  int64_t start() const;
};

struct RowGroup {
  int64_t num_rows = 0;
  std::vector<ColumnChunk> columns;
};

struct FileMetaData {
  int64_t num_rows = 0;
  std::vector<SchemaElement> schema;  // depth first; [0] is the root
  std::vector<RowGroup> row_groups;
  std::string created_by;
};

struct PageHeader {
  int type = -1;
  int32_t uncompressed_size = 0, compressed_size = 0;
  int32_t num_values = 0;
  int encoding = kPlain;
  int definition_level_encoding = kRle;
  // Data page v2 only.
  int32_t num_nulls = 0, definition_levels_bytes = 0, repetition_levels_bytes = 0;
  bool is_compressed = true;
};

FileMetaData read_file_metadata(thrift::CompactReader& r);
PageHeader read_page_header(thrift::CompactReader& r);

}  // namespace abl::io::parquet
