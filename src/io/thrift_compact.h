// A reader of Apache Thrift's compact protocol, the encoding of Parquet's footer and page headers
// (thrift/doc/specs/thrift-compact-protocol.md). It reads structs field by field: the caller
// takes the fields it knows and the reader skips the rest, so newer writers' extra fields are
// harmless. Every read is bounds-checked and nesting is limited; a malformed buffer throws
// abl::Error naming `what` (the file and the structure being read) and the byte offset.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace abl::io::thrift {

// Compact-protocol type ids (the low nibble of a field header or list header).
enum Type : int {
  kStop = 0,
  kBoolTrue = 1,
  kBoolFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

class CompactReader {
 public:
  CompactReader(const uint8_t* data, size_t size, std::string what);

  // Reads one struct: `field(id, type)` is called for each field and returns true when it read
  // the value (with the read_* calls below), false to have it skipped.
  void read_struct(const std::function<bool(int16_t id, int type)>& field);
  // The same for a field of type `type` (checked to be a struct).
  void read_struct(int type, const std::function<bool(int16_t id, int type)>& field);

  bool read_bool(int type);  // a struct field's boolean lives in its type id
  int64_t read_int(int type);  // byte, i16, i32 or i64 (zigzag varints)
  int32_t read_i32(int type);  // read_int, checked to fit 32 bits
  std::string read_binary(int type);
  // A list header: returns the element count and sets *element_type.
  int64_t read_list(int type, int* element_type);
  void skip(int type);

  size_t position() const { return pos_; }
  const std::string& what() const { return what_; }
  [[noreturn]] void corrupt(const std::string& detail) const;

 private:
  uint64_t varint();
  uint8_t byte();
  void expect(int type, int wanted, const char* name) const;
  void skip_at_depth(int type, int depth);
  void skip_element(int type, int depth);
  void read_struct_at_depth(const std::function<bool(int16_t, int)>& field, int depth);

  const uint8_t* data_;
  size_t size_, pos_ = 0;
  std::string what_;
  int depth_ = 0;
};

}  // namespace abl::io::thrift
