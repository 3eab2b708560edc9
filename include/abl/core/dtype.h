// Element types of model files and their exact conversions to and from fp32.
// bf16/f16 -> f32 is exact; f32 -> bf16/f16 rounds to nearest even and keeps NaN a NaN.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace abl {

enum class DType : uint8_t { f32, f16, bf16 };

size_t dtype_size(DType t);
std::string_view dtype_name(DType t);        // safetensors spelling: "F32", "F16", "BF16"
bool parse_dtype(std::string_view name, DType* out);

float bf16_to_f32(uint16_t h);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);
uint16_t f32_to_f16(float f);

// Converts n elements of type `src_type` at `src` (any alignment) to fp32.
void convert_to_f32(DType src_type, const void* src, float* dst, size_t n);
// Converts n fp32 values to `dst_type` at `dst` (any alignment).
void convert_from_f32(const float* src, DType dst_type, void* dst, size_t n);

}  // namespace abl
