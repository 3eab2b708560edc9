// Field ids follow parquet.thrift (apache/parquet-format, src/main/thrift/parquet.thrift).
#include "parquet_metadata.h"

#include <fmt/format.h>

#include "abl/core/error.h"

namespace abl::io::parquet {
namespace {

using thrift::CompactReader;

// Reads a list of structs, one `element(r)` call each.
template <typename F>
void read_struct_list(CompactReader& r, int type, F element) {
  int element_type = 0;
  const int64_t n = r.read_list(type, &element_type);
  if (n > 0 && element_type != thrift::kStruct) r.corrupt(fmt::format("a list of structs holds type {}", element_type));
  for (int64_t i = 0; i < n; ++i) element();
}

SchemaElement read_schema_element(CompactReader& r) {  // a list element: its type is checked
  SchemaElement e;
  r.read_struct([&](int16_t id, int type) {
    switch (id) {
      case 1: e.type = r.read_i32(type); return true;
      case 3: e.repetition = r.read_i32(type); return true;
      case 4: e.name = r.read_binary(type); return true;
      case 5: e.num_children = r.read_i32(type); return true;
      default: return false;
    }
  });
  return e;
}

ColumnChunk read_column_metadata(CompactReader& r, int type) {
  ColumnChunk c;
  r.read_struct(type, [&](int16_t id, int t) {
    switch (id) {
      case 1: c.type = r.read_i32(t); return true;
      case 3: {
        int element_type = 0;
        const int64_t n = r.read_list(t, &element_type);
        for (int64_t i = 0; i < n; ++i) c.path.push_back(r.read_binary(element_type));
        return true;
      }
      case 4: c.codec = r.read_i32(t); return true;
      case 5: c.num_values = r.read_int(t); return true;
      case 7: c.total_compressed_size = r.read_int(t); return true;
      case 9: c.data_page_offset = r.read_int(t); return true;
      case 11: c.dictionary_page_offset = r.read_int(t); return true;
      default: return false;
    }
  });
  return c;
}

RowGroup read_row_group(CompactReader& r) {
  RowGroup g;
  r.read_struct([&](int16_t id, int type) {
    switch (id) {
      case 1:
        read_struct_list(r, type, [&] {
          ColumnChunk c;
          bool has_meta = false;
          r.read_struct([&](int16_t cid, int ctype) {
            if (cid == 1) {  // an empty file_path is this file
              const std::string file = r.read_binary(ctype);
              if (!file.empty()) {
                fail("{}: its columns are stored in another file ({}), which abliterate does not follow", r.what(),
                     file);
              }
              return true;
            }
            if (cid != 3) return false;
            c = read_column_metadata(r, ctype);
            has_meta = true;
            return true;
          });
          if (!has_meta) r.corrupt("a column chunk without its metadata");
          g.columns.push_back(std::move(c));
        });
        return true;
      case 3: g.num_rows = r.read_int(type); return true;
      default: return false;
    }
  });
  return g;
}

}  // namespace

int64_t ColumnChunk::start() const {
  // Some writers put the dictionary page first but leave dictionary_page_offset unset or 0.
  if (dictionary_page_offset && *dictionary_page_offset > 0 && *dictionary_page_offset < data_page_offset) {
    return *dictionary_page_offset;
  }
  return data_page_offset;
}

const char* physical_type_name(int type) {
  static const char* const names[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                                      "FIXED_LEN_BYTE_ARRAY"};
  return type >= 0 && type < 8 ? names[type] : "an unknown type";
}

std::string encoding_name(int encoding) {
  static const char* const names[] = {"PLAIN", "1", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED", "DELTA_BINARY_PACKED",
                                      "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "RLE_DICTIONARY",
                                      "BYTE_STREAM_SPLIT"};
  return encoding >= 0 && encoding < 10 && encoding != 1 ? names[encoding] : fmt::format("encoding {}", encoding);
}

FileMetaData read_file_metadata(CompactReader& r) {
  FileMetaData m;
  r.read_struct([&](int16_t id, int type) {
    switch (id) {
      case 2: read_struct_list(r, type, [&] { m.schema.push_back(read_schema_element(r)); }); return true;
      case 3: m.num_rows = r.read_int(type); return true;
      case 4: read_struct_list(r, type, [&] { m.row_groups.push_back(read_row_group(r)); }); return true;
      case 6: m.created_by = r.read_binary(type); return true;
      default: return false;
    }
  });
  return m;
}

PageHeader read_page_header(CompactReader& r) {
  PageHeader h;
  r.read_struct([&](int16_t id, int type) {
    switch (id) {
      case 1: h.type = r.read_i32(type); return true;
      case 2: h.uncompressed_size = r.read_i32(type); return true;
      case 3: h.compressed_size = r.read_i32(type); return true;
      case 5:  // DataPageHeader
        r.read_struct(type, [&](int16_t f, int t) {
          switch (f) {
            case 1: h.num_values = r.read_i32(t); return true;
            case 2: h.encoding = r.read_i32(t); return true;
            case 3: h.definition_level_encoding = r.read_i32(t); return true;
            default: return false;
          }
        });
        return true;
      case 7:  // DictionaryPageHeader
        r.read_struct(type, [&](int16_t f, int t) {
          switch (f) {
            case 1: h.num_values = r.read_i32(t); return true;
            case 2: h.encoding = r.read_i32(t); return true;
            default: return false;
          }
        });
        return true;
      case 8:  // DataPageHeaderV2
        r.read_struct(type, [&](int16_t f, int t) {
          switch (f) {
            case 1: h.num_values = r.read_i32(t); return true;
            case 2: h.num_nulls = r.read_i32(t); return true;
            case 4: h.encoding = r.read_i32(t); return true;
            case 5: h.definition_levels_bytes = r.read_i32(t); return true;
            case 6: h.repetition_levels_bytes = r.read_i32(t); return true;
            case 7: h.is_compressed = r.read_bool(t); return true;
            default: return false;
          }
        });
        return true;
      default: return false;
    }
  });
  return h;
}

}  // namespace abl::io::parquet
