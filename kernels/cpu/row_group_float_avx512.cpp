// f32 and f16 rows regrouped sixteen at a time against f32 activation rows, on AVX-512: a tile of
// up to three groups (48 weight rows) and eight activation rows keeps 24 running sums in
// registers, so each column costs three weight loads and eight broadcasts for 24 fused
// multiply-adds. f16 columns are widened as they are loaded: the tiles are bound by the bytes
// they stream from cache, not by arithmetic, so f16 tiles run faster than f32 ones (512
// activation rows: 1.2-1.4 times on this project's Cascade Lake) and faster than f16 widened
// once into an f32 buffer.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "kernels/cpu/float_group_dots.h"
#include "kernels/row_groups.h"

namespace snapstream::kernels::cpu {
namespace {

constexpr int kTileGroups = 3;
constexpr int kTileRows = 8;

__m512 column_of(const float* w) { return _mm512_loadu_ps(w); }
__m512 column_of(const uint16_t* w) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w))); }

// G groups from w against J activation rows from x; the last group stores only `last_lanes` rows.
template <typename T, int G, int J>
void tile(const T* w, int64_t cols, const float* x, float* y, int64_t y_stride, __mmask16 last_lanes) {
  __m512 sums[G][J];
  for (auto& group : sums)
    for (auto& sum : group) sum = _mm512_setzero_ps();
  for (int64_t c = 0; c < cols; ++c) {
    __m512 column[G];
    for (int g = 0; g < G; ++g) column[g] = column_of(w + (g * cols + c) * kRowGroupRows);
    for (int j = 0; j < J; ++j) {
      const __m512 value = _mm512_set1_ps(x[j * cols + c]);
      for (int g = 0; g < G; ++g) sums[g][j] = _mm512_fmadd_ps(column[g], value, sums[g][j]);
    }
  }
  for (int j = 0; j < J; ++j) {
    for (int g = 0; g + 1 < G; ++g) _mm512_storeu_ps(y + j * y_stride + g * kRowGroupRows, sums[g][j]);
    _mm512_mask_storeu_ps(y + j * y_stride + (G - 1) * kRowGroupRows, last_lanes, sums[G - 1][j]);
  }
}

template <typename T>
using Tile = void (*)(const T*, int64_t, const float*, float*, int64_t, __mmask16);
template <typename T>
using TileTable = std::array<std::array<Tile<T>, kTileRows>, kTileGroups>;

template <typename T, int G, int... J>
constexpr std::array<Tile<T>, kTileRows> tiles_of(std::integer_sequence<int, J...>) {
  return {&tile<T, G, J + 1>...};
}
template <typename T>
constexpr TileTable<T> tiles() {
  return {tiles_of<T, 1>(std::make_integer_sequence<int, kTileRows>{}), tiles_of<T, 2>(std::make_integer_sequence<int, kTileRows>{}),
          tiles_of<T, 3>(std::make_integer_sequence<int, kTileRows>{})};
}

// Every run of activation rows against `groups` groups from w (at most kTileGroups).
template <typename T>
void tile_rows(const T* w, int64_t groups, int64_t last_rows, int64_t cols, const float* x, int64_t m, float* y,
               int64_t y_stride) {
  static constexpr TileTable<T> kTiles = tiles<T>();
  const auto last_lanes = static_cast<__mmask16>((1u << last_rows) - 1u);
  for (int64_t i = 0; i < m; i += kTileRows) {
    const int64_t rows = std::min<int64_t>(kTileRows, m - i);
    kTiles[groups - 1][rows - 1](w, cols, x + i * cols, y + i * y_stride, y_stride, last_lanes);
  }
}

// Groups outside, activation rows inside: a tile's groups are read from memory once and from
// cache for every further run of activation rows.
template <typename T>
void group_dots(const T* w, int64_t rows, int64_t cols, const float* x, int64_t m, float* y, int64_t y_stride) {
  const int64_t groups = (rows + kRowGroupRows - 1) / kRowGroupRows;
  for (int64_t g = 0; g < groups; g += kTileGroups) {
    const int64_t tile_groups = std::min<int64_t>(kTileGroups, groups - g);
    const int64_t last_rows = std::min<int64_t>(kRowGroupRows, rows - (g + tile_groups - 1) * kRowGroupRows);
    const T* tile_w = w + g * cols * kRowGroupRows;
    float* tile_y = y + g * kRowGroupRows;
    tile_rows<T>(tile_w, tile_groups, last_rows, cols, x, m, tile_y, y_stride);
  }
}

}  // namespace

void f32_group_dots_avx512(const std::byte* w, int64_t rows, int64_t cols, const float* x, int64_t m, float* y,
                           int64_t y_stride) {
  group_dots(reinterpret_cast<const float*>(w), rows, cols, x, m, y, y_stride);
}

void f16_group_dots_avx512(const std::byte* w, int64_t rows, int64_t cols, const float* x, int64_t m, float* y,
                           int64_t y_stride) {
  group_dots(reinterpret_cast<const uint16_t*>(w), rows, cols, x, m, y, y_stride);
}

}  // namespace snapstream::kernels::cpu
