// Reads one flat string column of a Parquet file: the footer (FileMetaData), then for each row
// group that column's chunk, page by page (a dictionary page, then data pages v1 or v2).
// Layout: apache/parquet-format README.md ("File Format", "Data Pages", "Nested Encoding").
#include <algorithm>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "abl/core/error.h"
#include "abl/io/parquet.h"
#include "abl/io/prompt_dataset.h"
#include "parquet_codecs.h"
#include "parquet_metadata.h"
#include "parquet_values.h"

namespace abl::io {
namespace {

using namespace parquet;

constexpr char kMagic[] = "PAR1";
constexpr int64_t kMaxPageValues = int64_t{1} << 20;  // real writers stop a page at 20,000 rows or 1 MiB
constexpr int64_t kMaxExpansion = 4096;               // decoded bytes per compressed byte, at most

class ParquetFile {
 public:
  explicit ParquetFile(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    ABL_CHECK(in_.good(), "cannot open prompt file {}", path);
    in_.seekg(0, std::ios::end);
    size_ = static_cast<int64_t>(in_.tellg());
  }

  std::vector<uint8_t> read(int64_t offset, int64_t n, const std::string& what) {
    ABL_CHECK(offset >= 0 && n >= 0 && offset <= size_ && n <= size_ - offset,
              "{}: corrupt Parquet file ({} bytes at byte {} lie outside its {} bytes)", what, n, offset, size_);
    std::vector<uint8_t> bytes(static_cast<size_t>(n));
    in_.seekg(offset);
    in_.read(reinterpret_cast<char*>(bytes.data()), n);
    ABL_CHECK(in_.good(), "{}: error reading {} bytes at byte {}", what, n, offset);
    return bytes;
  }

  FileMetaData footer() {
    ABL_CHECK(size_ >= 12, "{}: not a Parquet file (only {} bytes)", path_, size_);
    const std::vector<uint8_t> head = read(0, 4, path_), tail = read(size_ - 8, 8, path_);
    ABL_CHECK(std::memcmp(tail.data() + 4, "PARE", 4) != 0, "{}: an encrypted Parquet file, which abliterate "
              "does not read", path_);
    ABL_CHECK(std::memcmp(head.data(), kMagic, 4) == 0 && std::memcmp(tail.data() + 4, kMagic, 4) == 0,
              "{}: not a Parquet file (no PAR1 at its start and end)", path_);
    int64_t length = 0;
    for (int i = 0; i < 4; ++i) length |= static_cast<int64_t>(tail[i]) << (8 * i);
    ABL_CHECK(length <= size_ - 12, "{}: corrupt Parquet file (a footer of {} bytes in a file of {})", path_,
              length, size_);
    const std::vector<uint8_t> bytes = read(size_ - 8 - length, length, path_);
    thrift::CompactReader r(bytes.data(), bytes.size(), path_ + ": Parquet footer");
    FileMetaData m = read_file_metadata(r);
    int64_t rows = 0;
    for (const RowGroup& g : m.row_groups) {
      ABL_CHECK(g.num_rows >= 0 && g.num_rows <= m.num_rows - rows, "{}: corrupt Parquet footer (row groups of "
                "more rows than the file's {})", path_, m.num_rows);
      rows += g.num_rows;
    }
    ABL_CHECK(rows == m.num_rows, "{}: corrupt Parquet footer ({} rows in its row groups, {} in the file)", path_,
              rows, m.num_rows);
    // Bounds what a few bytes can make us allocate: no real prompt file stores 16 rows in a byte.
    ABL_CHECK(m.num_rows <= 16 * size_ + 65536, "{}: {} rows in {} bytes, more than abliterate reads (16 rows a byte, "
              "plus 65,536)", path_, m.num_rows, size_);
    return m;
  }

  int64_t size() const { return size_; }

 private:
  std::string path_;
  std::ifstream in_;
  int64_t size_ = 0;
};

struct Field {
  const SchemaElement* element;
  size_t leaf;  // its first leaf column: the index of its chunk in every row group
  bool group;
};

// The top-level fields of the schema, walking each one's subtree to count leaves.
std::vector<Field> top_level_fields(const FileMetaData& m, size_t* leaves, const std::string& path) {
  auto corrupt = [&](const char* detail) { fail("{}: corrupt Parquet schema ({})", path, detail); };
  if (m.schema.empty()) corrupt("no root");
  std::vector<Field> out;
  size_t i = 1;
  *leaves = 0;
  for (int32_t f = 0; f < m.schema[0].num_children; ++f) {
    if (i >= m.schema.size()) corrupt("fewer fields than the root says");
    out.push_back({&m.schema[i], *leaves, m.schema[i].num_children > 0});
    for (int64_t pending = 1; pending > 0; --pending) {
      if (i >= m.schema.size()) corrupt("a group with fewer fields than it says");
      const SchemaElement& e = m.schema[i++];
      if (e.num_children < 0) corrupt("a negative field count");
      if (e.num_children > 0) pending += e.num_children;
      else ++*leaves;
    }
  }
  return out;
}

const Field& find_field(const std::vector<Field>& fields, const std::string& column, const std::string& path) {
  std::string names;
  for (const Field& f : fields) {
    if (f.element->name == column) {
      ABL_CHECK(!f.group, "{}: column '{}' is nested (a list, map or struct); a prompt column holds strings", path,
                column);
      ABL_CHECK(f.element->repetition != kRepeated, "{}: column '{}' is a repeated field; a prompt column holds "
                "one string per row", path, column);
      ABL_CHECK(f.element->type == kByteArray, "{}: column '{}' holds {} values, not strings", path, column,
                physical_type_name(f.element->type));
      return f;
    }
    names += (names.empty() ? "" : ", ") + f.element->name;
  }
  throw MissingColumnError(
      fmt::format("{}: no column '{}' (columns: {})", path, column, names.empty() ? "none" : names));
}

// Decodes one column chunk page by page and hands each row to `row`.
class ChunkDecoder {
 public:
  ChunkDecoder(const ColumnChunk& chunk, bool optional, DecodeBudget* budget, std::string what)
      : chunk_(chunk), optional_(optional), budget_(budget), what_(std::move(what)) {}

  void decode(const std::vector<uint8_t>& bytes, int64_t first_row,
              const std::function<void(int64_t, const std::string*)>& row) {
    size_t pos = 0;
    int64_t done = 0;
    while (done < chunk_.num_values) {
      ABL_CHECK(pos < bytes.size(), "{}: corrupt Parquet column chunk (it ends after {} of its {} values)", what_,
                done, chunk_.num_values);
      const std::string where = fmt::format("{}, page at byte {}", what_, chunk_.start() + static_cast<int64_t>(pos));
      thrift::CompactReader r(bytes.data() + pos, bytes.size() - pos, where + ": page header");
      const PageHeader h = read_page_header(r);
      pos += r.position();
      ABL_CHECK(h.compressed_size >= 0 && static_cast<size_t>(h.compressed_size) <= bytes.size() - pos &&
                    h.uncompressed_size >= 0 && h.uncompressed_size <= kMaxExpansion * h.compressed_size + (1 << 20),
                "{}: corrupt page header ({} bytes compressed, {} uncompressed, {} left in the chunk)", where,
                h.compressed_size, h.uncompressed_size, bytes.size() - pos);
      const Bytes page{bytes.data() + pos, static_cast<size_t>(h.compressed_size)};
      pos += static_cast<size_t>(h.compressed_size);
      if (h.type == kDictionaryPage) {
        read_dictionary(h, page, where);
      } else if (h.type == kDataPage || h.type == kDataPageV2) {
        ABL_CHECK(h.num_values >= 0 && h.num_values <= chunk_.num_values - done,
                  "{}: corrupt page header ({} values; the chunk has {} left)", where, h.num_values,
                  chunk_.num_values - done);
        ABL_CHECK(h.num_values <= kMaxPageValues, "{}: a page of {} values, more than abliterate reads in one page "
                  "({}); rewrite the file with smaller pages", where, h.num_values, kMaxPageValues);
        read_data_page(h, page, where, first_row + done, row);
        done += h.num_values;
      }  // index pages and future page types hold no values
    }
  }

 private:
  std::vector<uint8_t> decompressed(Bytes in, int32_t size, const std::string& where) const {
    std::vector<uint8_t> out(static_cast<size_t>(size));
    decompress(chunk_.codec, in.data, in.size, out.data(), out.size(), where);
    return out;
  }

  void read_dictionary(const PageHeader& h, Bytes page, const std::string& where) {
    ABL_CHECK(!has_dictionary_, "{}: a second dictionary page in one column chunk", where);
    ABL_CHECK(h.encoding == kPlain || h.encoding == kPlainDictionary, "{}: a dictionary page in the {} encoding",
              where, encoding_name(h.encoding));
    ABL_CHECK(h.num_values >= 0 && h.num_values <= kMaxPageValues, "{}: a dictionary of {} values", where,
              h.num_values);
    const std::vector<uint8_t> bytes = decompressed(page, h.uncompressed_size, where);
    dictionary_ = decode_byte_arrays(kPlain, {bytes.data(), bytes.size()}, h.num_values, budget_, where);
    has_dictionary_ = true;
  }

  void read_data_page(const PageHeader& h, Bytes page, const std::string& where, int64_t first_row,
                      const std::function<void(int64_t, const std::string*)>& row) {
    std::vector<uint8_t> storage;
    Bytes levels, values;
    if (h.type == kDataPage) {  // levels and values compressed together; levels prefixed by their length
      storage = decompressed(page, h.uncompressed_size, where);
      values = {storage.data(), storage.size()};
      if (optional_) {
        ABL_CHECK(h.definition_level_encoding == kRle, "{}: definition levels in the {} encoding", where,
                  encoding_name(h.definition_level_encoding));
        ABL_CHECK(values.size >= 4, "{}: corrupt data page (no definition levels)", where);
        size_t n = 0;
        for (int i = 0; i < 4; ++i) n |= static_cast<size_t>(values.data[i]) << (8 * i);
        ABL_CHECK(n <= values.size - 4, "{}: corrupt data page (definition levels of {} bytes)", where, n);
        levels = {values.data + 4, n};
        values = {values.data + 4 + n, values.size - 4 - n};
      }
    } else {  // v2: repetition and definition levels uncompressed first, then the (compressed) values
      const int64_t level_bytes = int64_t{h.repetition_levels_bytes} + h.definition_levels_bytes;
      ABL_CHECK(h.repetition_levels_bytes == 0 && h.definition_levels_bytes >= 0 && level_bytes <= h.compressed_size &&
                    level_bytes <= h.uncompressed_size,
                "{}: corrupt data page v2 ({} bytes of repetition and {} of definition levels in a flat column "
                "page of {})", where, h.repetition_levels_bytes, h.definition_levels_bytes, h.compressed_size);
      levels = {page.data, static_cast<size_t>(h.definition_levels_bytes)};
      const Bytes rest{page.data + level_bytes, page.size - static_cast<size_t>(level_bytes)};
      const int32_t rest_size = h.uncompressed_size - static_cast<int32_t>(level_bytes);
      // parquet-mr writes an all-null v2 page as "compressed" with no value bytes at all.
      if (h.is_compressed && chunk_.codec != static_cast<int>(Codec::uncompressed) && rest_size > 0) {
        storage = decompressed(rest, rest_size, where);
        values = {storage.data(), storage.size()};
      } else {
        ABL_CHECK(rest.size == static_cast<size_t>(rest_size), "{}: corrupt data page v2 ({} value bytes, {} in "
                  "its header)", where, rest.size, rest_size);
        values = rest;
      }
    }
    std::vector<uint32_t> defined;
    int64_t present = h.num_values;
    if (optional_) {
      defined = decode_rle_hybrid(levels, 1, h.num_values, where + ": definition levels");
      present = std::count(defined.begin(), defined.end(), 1u);
    }
    // Dictionary-encoded rows point into the dictionary: a value repeated by a run is not copied.
    const bool dictionary = h.encoding == kPlainDictionary || h.encoding == kRleDictionary;
    const std::vector<std::string> strings =
        dictionary ? std::vector<std::string>() : decode_byte_arrays(h.encoding, values, present, budget_, where);
    const std::vector<uint32_t> ids = dictionary ? dictionary_ids(values, present, where) : std::vector<uint32_t>();
    for (int64_t i = 0, k = 0; i < h.num_values; ++i) {
      if (optional_ && !defined[static_cast<size_t>(i)]) {
        row(first_row + i, nullptr);
        continue;
      }
      const size_t at = static_cast<size_t>(k++);
      const std::string& value = dictionary ? dictionary_[ids[at]] : strings[at];
      if (dictionary) budget_->spend(value.size(), where);
      row(first_row + i, &value);
    }
  }

  std::vector<uint32_t> dictionary_ids(Bytes in, int64_t count, const std::string& where) const {
    ABL_CHECK(has_dictionary_, "{}: dictionary-encoded values without a dictionary page", where);
    ABL_CHECK(in.size >= 1, "{}: corrupt data page (no dictionary index width)", where);
    const std::vector<uint32_t> ids = decode_rle_hybrid({in.data + 1, in.size - 1}, in.data[0], count, where);
    for (uint32_t id : ids) {
      ABL_CHECK(id < dictionary_.size(), "{}: dictionary index {} of a dictionary of {}", where, id,
                dictionary_.size());
    }
    return ids;
  }

  const ColumnChunk& chunk_;
  bool optional_;
  DecodeBudget* budget_;
  std::string what_;
  std::vector<std::string> dictionary_;
  bool has_dictionary_ = false;
};

}  // namespace

bool is_parquet_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[4] = {};
  // "PARE" starts a file with an encrypted footer: recognised, so that the reader names it.
  return in.read(head, 4) && (std::memcmp(head, kMagic, 4) == 0 || std::memcmp(head, "PARE", 4) == 0);
}

void read_parquet_column(const std::string& path, const std::string& column,
                         const std::function<void(int64_t index, const std::string* value)>& row) {
  ParquetFile file(path);
  const FileMetaData meta = file.footer();
  size_t leaves = 0;
  const std::vector<Field> fields = top_level_fields(meta, &leaves, path);
  const Field& field = find_field(fields, column, path);
  DecodeBudget budget;
  budget.total = budget.left = 1024 * file.size() + (int64_t{256} << 20);
  int64_t first_row = 0;
  for (size_t g = 0; g < meta.row_groups.size(); ++g) {
    const RowGroup& group = meta.row_groups[g];
    const std::string what = fmt::format("{}: row group {} of {}, column '{}'", path, g, meta.row_groups.size(), column);
    ABL_CHECK(group.columns.size() == leaves, "{}: corrupt Parquet footer ({} column chunks for {} columns)", what,
              group.columns.size(), leaves);
    const ColumnChunk& chunk = group.columns[field.leaf];
    ABL_CHECK(chunk.path.empty() || (chunk.path.size() == 1 && chunk.path[0] == column),
              "{}: corrupt Parquet footer (the chunk is of another column)", what);
    ABL_CHECK(chunk.type == kByteArray && chunk.num_values == group.num_rows,
              "{}: corrupt Parquet footer (a chunk of {} {} values in a row group of {} rows)", what, chunk.num_values,
              physical_type_name(chunk.type), group.num_rows);
    const std::vector<uint8_t> bytes = file.read(chunk.start(), chunk.total_compressed_size, what);
    ChunkDecoder(chunk, field.element->repetition == kOptional, &budget, what).decode(bytes, first_row, row);
    first_row += group.num_rows;
  }
}

}  // namespace abl::io
