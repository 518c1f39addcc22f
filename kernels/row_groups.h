// Regrouping a Q4_K, Q8_0, f32 or f16 matrix sixteen rows at a time, once at load, so the kernels
// read each 64-byte line as sixteen rows' next values instead of unpacking one row's block: on
// an AVX-512 EPYC a Q4_K 768x768 matrix against one activation row ran 2.7 times as fast from
// cache. A group's block b holds the bytes its rows' blocks b held, in the same place:
//
// Q4_K (16 x 144 bytes):
//   [0, 32)      d of rows 0-15 (f16)
//   [32, 64)     dmin of rows 0-15 (f16)
//   [64, 256)    each row's twelve packed scale bytes as three 32-bit words: word k of row r at
//                64 + 64k + 4r
//   [256, 2304)  32 parts of 64 bytes: in part p, byte 4r + i holds row r's value 4p + i in its
//                low nibble and value 128 + 4p + i in its high one (i < 4)
// Q8_0 (16 x 34 bytes):
//   [0, 32)      d of rows 0-15 (f16)
//   [32, 544)    8 parts of 64 bytes: in part p, byte 4r + i holds row r's value 4p + i plus 128
//                (i < 4), an unsigned byte
// f32 and f16 (16 x 4 or 16 x 2 bytes, one column):
//   [0, 64)      column b of rows 0-15 (f16: [0, 32)); a matrix whose rows are not a multiple of
//                sixteen ends in a group padded with zero rows, so its copy is row_groups_bytes long
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/weight_view.h"

namespace snapstream::kernels {

inline constexpr int64_t kRowGroupRows = 16;

// Whether this CPU's kernels read w's rows in groups, whatever its layout: Q4_K or Q8_0 rows of
// whole blocks, packed, in whole groups, or packed f32 or f16 rows of any count.
bool row_groups_readable(const WeightView& w);
// Whether `w` is stored as rows and row_groups_readable: what write_row_groups takes.
bool row_groups_supported(const WeightView& w);

// The bytes w's regrouped copy takes: w.total_bytes(), and more for a padded last f32 or f16 group.
int64_t row_groups_bytes(const WeightView& w);

// Writes w's bytes regrouped to `out` (row_groups_bytes(w) of them) and returns the view that
// reads them. w must be row_groups_supported.
WeightView write_row_groups(const WeightView& w, std::byte* out);

}  // namespace snapstream::kernels
