// Regrouping a Q4_K matrix sixteen rows at a time, once at load, so the integer kernels read
// each 64-byte line as sixteen rows' next values instead of unpacking one row's block: on an
// AVX-512 EPYC a 768x768 matrix against one activation row ran 2.7 times as fast from cache.
//
// A group's block b (the 16 x 144 bytes its rows' blocks b held, in the same place):
//   [0, 32)      d of rows 0-15 (f16)
//   [32, 64)     dmin of rows 0-15 (f16)
//   [64, 256)    each row's twelve packed scale bytes as three 32-bit words: word k of row r at
//                64 + 64k + 4r
//   [256, 2304)  32 parts of 64 bytes: in part p, byte 4r + i holds row r's value 4p + i in its
//                low nibble and value 128 + 4p + i in its high one (i < 4)
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/weight_view.h"

namespace snapstream::kernels {

inline constexpr int64_t kRowGroupRows = 16;

// Whether this CPU's integer kernels read w's rows in groups, whatever its layout: Q4_K rows of
// whole blocks, packed, in whole groups.
bool row_groups_readable(const WeightView& w);
// Whether `w` is stored as rows and row_groups_readable: what write_row_groups takes.
bool row_groups_supported(const WeightView& w);

// Writes w's bytes regrouped to `out` (w.total_bytes() of them) and returns the view that reads
// them. w must be row_groups_supported.
WeightView write_row_groups(const WeightView& w, std::byte* out);

}  // namespace snapstream::kernels
