// Regroups Q4_K, Q8_0, f32 and f16 rows sixteen at a time (layouts in row_groups.h).
#include "kernels/row_groups.h"

#include <cstring>

#include "kernels/cpu/float_group_dots.h"
#include "kernels/cpu/integer_dots.h"
#include "kernels/errors.h"

namespace snapstream::kernels {
namespace {

constexpr int64_t kScalesAt = 4, kQsAt = 16;
constexpr int64_t kGroupScalesAt = 64, kGroupPartsAt = 256;
constexpr int64_t kQ8_0PartsAt = 32, kQ8_0Parts = 8;

// Value v (0-255) of a Q4_K block: chunk v / 64's 32 bytes hold its first 32 values in low
// nibbles and the next 32 in high ones.
uint8_t q4_k_value(const std::byte* block, int64_t v) {
  const int64_t chunk = v / 64, within = v % 64;
  const auto packed = static_cast<uint8_t>(block[kQsAt + 32 * chunk + within % 32]);
  return within < 32 ? packed & 0x0F : packed >> 4;
}

void regroup_q4_k_block(const std::byte* first_row_block, int64_t row_stride, std::byte* out) {
  for (int64_t r = 0; r < kRowGroupRows; ++r) {
    const std::byte* block = first_row_block + r * row_stride;
    std::memcpy(out + 2 * r, block, 2);
    std::memcpy(out + 32 + 2 * r, block + 2, 2);
    for (int64_t k = 0; k < 3; ++k) std::memcpy(out + kGroupScalesAt + 64 * k + 4 * r, block + kScalesAt + 4 * k, 4);
    for (int64_t p = 0; p < 32; ++p)
      for (int64_t i = 0; i < 4; ++i)
        out[kGroupPartsAt + 64 * p + 4 * r + i] =
            static_cast<std::byte>(q4_k_value(block, 4 * p + i) | (q4_k_value(block, 128 + 4 * p + i) << 4));
  }
}

void regroup_q8_0_block(const std::byte* first_row_block, int64_t row_stride, std::byte* out) {
  for (int64_t r = 0; r < kRowGroupRows; ++r) {
    const std::byte* block = first_row_block + r * row_stride;
    std::memcpy(out + 2 * r, block, 2);
    for (int64_t p = 0; p < kQ8_0Parts; ++p)
      for (int64_t i = 0; i < 4; ++i) out[kQ8_0PartsAt + 64 * p + 4 * r + i] = block[2 + 4 * p + i] ^ std::byte{0x80};
  }
}

// f32 or f16 (T: uint16_t) rows: group g's column c holds its sixteen rows' values c.
template <typename T>
void write_float_groups(const WeightView& w, std::byte* out) {
  const int64_t groups = (w.rows + kRowGroupRows - 1) / kRowGroupRows;
  auto* columns = reinterpret_cast<T*>(out);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t r = 0; r < kRowGroupRows; ++r) {
      const int64_t row = g * kRowGroupRows + r;
      T* lane = columns + g * w.cols * kRowGroupRows + r;
      const auto* values = row < w.rows ? reinterpret_cast<const T*>(w.row(row)) : nullptr;
      for (int64_t c = 0; c < w.cols; ++c) lane[c * kRowGroupRows] = values != nullptr ? values[c] : T{0};
    }
}

}  // namespace

bool row_groups_readable(const WeightView& w) {
  if (cpu::float_group_dots(w.dtype) != nullptr) return w.packed() && w.rows > 0 && w.cols > 0;
  return cpu::integer_group_dots(cpu::integer_dot_kernels(), w.dtype) != nullptr && w.packed() && w.rows > 0 &&
         w.rows % kRowGroupRows == 0 && row_length_supported(w.dtype, w.cols);
}

bool row_groups_supported(const WeightView& w) { return w.layout == WeightLayout::Rows && row_groups_readable(w); }

int64_t row_groups_bytes(const WeightView& w) {
  if (cpu::float_group_dots(w.dtype) == nullptr) return w.total_bytes();
  return (w.rows + kRowGroupRows - 1) / kRowGroupRows * kRowGroupRows * w.row_stride();
}

WeightView write_row_groups(const WeightView& w, std::byte* out) {
  require(row_groups_supported(w), "write_row_groups", "not a matrix this CPU's kernels read in row groups");
  WeightView grouped = w;
  grouped.data = out;
  grouped.layout = WeightLayout::RowGroups;
  if (w.dtype == DType::F32 || w.dtype == DType::F16) {
    w.dtype == DType::F32 ? write_float_groups<float>(w, out) : write_float_groups<uint16_t>(w, out);
    return grouped;
  }
  const BlockLayout block = block_layout(w.dtype);
  const int64_t blocks = w.cols / block.elements, row_stride = w.row_stride();
  const auto regroup_block = w.dtype == DType::Q4_K ? regroup_q4_k_block : regroup_q8_0_block;
  for (int64_t g = 0; g < w.rows / kRowGroupRows; ++g)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t at = g * kRowGroupRows * row_stride + b * kRowGroupRows * block.bytes;
      regroup_block(w.data + g * kRowGroupRows * row_stride + b * block.bytes, row_stride, out + at);
    }
  return grouped;
}

}  // namespace snapstream::kernels
