#include "thrift_compact.h"

#include <fmt/format.h>

#include "abl/core/error.h"
#include "varint.h"

namespace abl::io::thrift {
namespace {

constexpr int kMaxDepth = 32;  // Parquet's deepest struct nests 4 levels; more is an attack or garbage

}  // namespace

CompactReader::CompactReader(const uint8_t* data, size_t size, std::string what)
    : data_(data), size_(size), what_(std::move(what)) {}

void CompactReader::corrupt(const std::string& detail) const {
  fail("{}: corrupt ({} at byte {})", what_, detail, pos_);
}

uint8_t CompactReader::byte() {
  if (pos_ >= size_) corrupt("ends early");
  return data_[pos_++];
}

uint64_t CompactReader::varint() {
  uint64_t v = 0;
  if (!read_varint(data_, size_, &pos_, &v)) corrupt("a varint past the end or longer than 10 bytes");
  return v;
}

void CompactReader::expect(int type, int wanted, const char* name) const {
  if (type != wanted) corrupt(fmt::format("a {} field has type {}", name, type));
}

void CompactReader::read_struct(const std::function<bool(int16_t, int)>& field) {
  read_struct_at_depth(field, depth_);
}

void CompactReader::read_struct(int type, const std::function<bool(int16_t, int)>& field) {
  expect(type, kStruct, "struct");
  read_struct_at_depth(field, depth_);
}

void CompactReader::read_struct_at_depth(const std::function<bool(int16_t, int)>& field, int depth) {
  if (depth >= kMaxDepth) corrupt("structs nested too deep");
  const int saved = depth_;
  depth_ = depth + 1;
  int16_t last = 0;
  for (;;) {
    const uint8_t header = byte();
    const int type = header & 0x0f;
    if (type == kStop) break;
    const int delta = header >> 4;
    int64_t id = delta ? last + delta : unzigzag(varint());
    if (id < INT16_MIN || id > INT16_MAX) corrupt("a field id out of range");
    last = static_cast<int16_t>(id);
    if (!field(last, type)) skip_at_depth(type, depth_);
  }
  depth_ = saved;
}

bool CompactReader::read_bool(int type) {
  if (type != kBoolTrue && type != kBoolFalse) corrupt(fmt::format("a boolean field has type {}", type));
  return type == kBoolTrue;
}

int64_t CompactReader::read_int(int type) {
  if (type == kByte) return static_cast<int8_t>(byte());
  if (type != kI16 && type != kI32 && type != kI64) corrupt(fmt::format("an integer field has type {}", type));
  return unzigzag(varint());
}

int32_t CompactReader::read_i32(int type) {
  const int64_t v = read_int(type);
  if (v < INT32_MIN || v > INT32_MAX) corrupt("a 32-bit field out of range");
  return static_cast<int32_t>(v);
}

std::string CompactReader::read_binary(int type) {
  expect(type, kBinary, "binary");
  const uint64_t n = varint();
  if (n > size_ - pos_) corrupt(fmt::format("a string of {} bytes past the end", n));
  std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
  pos_ += n;
  return s;
}

int64_t CompactReader::read_list(int type, int* element_type) {
  if (type != kList && type != kSet) corrupt(fmt::format("a list field has type {}", type));
  const uint8_t header = byte();
  *element_type = header & 0x0f;
  uint64_t n = header >> 4;
  if (n == 15) n = varint();
  // Every element takes at least one byte (booleans in a list too), so this bounds the count.
  if (n > size_ - pos_) corrupt(fmt::format("a list of {} elements past the end", n));
  return static_cast<int64_t>(n);
}

void CompactReader::skip(int type) { skip_at_depth(type, depth_); }

void CompactReader::skip_element(int type, int depth) {
  if (type == kBoolTrue || type == kBoolFalse) byte();  // inside a list or map a boolean is one byte
  else skip_at_depth(type, depth);
}

void CompactReader::skip_at_depth(int type, int depth) {
  if (depth >= kMaxDepth) corrupt("values nested too deep");
  switch (type) {
    case kBoolTrue:
    case kBoolFalse:
      return;
    case kByte:
      byte();
      return;
    case kI16:
    case kI32:
    case kI64:
      varint();
      return;
    case kDouble:
      if (size_ - pos_ < 8) corrupt("ends early");
      pos_ += 8;
      return;
    case kBinary:
      read_binary(type);
      return;
    case kList:
    case kSet: {
      int element = 0;
      const int64_t n = read_list(type, &element);
      for (int64_t i = 0; i < n; ++i) skip_element(element, depth + 1);
      return;
    }
    case kMap: {
      const uint64_t n = varint();
      if (n == 0) return;
      if (n > size_ - pos_) corrupt(fmt::format("a map of {} entries past the end", n));
      const uint8_t kv = byte();
      for (uint64_t i = 0; i < n; ++i) {
        skip_element(kv >> 4, depth + 1);
        skip_element(kv & 0x0f, depth + 1);
      }
      return;
    }
    case kStruct:
      read_struct_at_depth([](int16_t, int) { return false; }, depth);
      return;
    default:
      corrupt(fmt::format("unknown type {}", type));
  }
}

}  // namespace abl::io::thrift
