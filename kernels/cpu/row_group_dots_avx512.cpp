// Q4_K rows regrouped sixteen at a time against Q8_K activation rows, on AVX-512 VNNI: one
// 64-byte part gives every row of the group four values in each nibble, so one dpbusd per nibble
// multiplies sixteen rows by four broadcast activations, and nothing is unpacked per row.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "kernels/cpu/k_scales16_avx512.h"
#include "kernels/cpu/row_group_dots.h"
#include "kernels/row_groups.h"

namespace snapstream::kernels::cpu {
namespace {

constexpr int64_t kGroupBlockBytes = 16 * 144;
constexpr int64_t kScalesAt = 64, kPartsAt = 256;
// Activation rows one pass over a block keeps accumulators for (registers: three per row).
constexpr int kMaxRows = 4;
// Quantised activation bytes the groups meet at a time.
constexpr int64_t kChunkBytes = 32 * 1024;
// Each chunk reads the whole matrix again, from memory, so a decode batch of up to this many
// rows is one chunk however wide its rows are: its activations come from L2 instead.
constexpr int64_t kMinChunkRows = 16;

// Activation rows of `blocks` blocks each in one chunk: a whole number of passes.
constexpr int64_t chunk_rows(int64_t blocks) {
  return std::max<int64_t>(kMinChunkRows, kChunkBytes / (256 * blocks) / kMaxRows * kMaxRows);
}
constexpr int64_t kMaxChunk = chunk_rows(1);

__m512i broadcast4(const int8_t* q) {
  int32_t four;
  std::memcpy(&four, q, 4);
  return _mm512_set1_epi32(four);
}

// What one block of a group contributes besides its values, unpacked once for every pass of
// activation rows over it (row r in lane r).
struct BlockTerms {
  __m512 d, dmin;
  // Sub-block s's scale times sixteen (its values are the parts' low nibbles), and sub-block
  // s + 4's scale (its values are the high nibbles, multiplied in place, so sixteen times theirs):
  // every scaled sum comes out sixteen times the block's, which no lane's int32 overflows.
  __m512i low_scales[4], high_scales[4];
  // Row r's mins as 16-bit pairs in lane r: sub-blocks (0, 2), (1, 3), (4, 6) and (5, 7).
  __m512i min_pairs[4];
};

// Inlined: out of line, GCC returned the terms through memory once per block.
[[gnu::always_inline]] inline BlockTerms block_terms(const std::byte* block) {
  BlockTerms terms;
  terms.d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block)));
  terms.dmin = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32)));
  // Byte s % 4 of lane r holds row r's scale (or min) of sub-block s.
  const KScales16 unpacked =
      unpack_k_scale_words(_mm512_loadu_si512(block + kScalesAt), _mm512_loadu_si512(block + kScalesAt + 64),
                           _mm512_loadu_si512(block + kScalesAt + 128));
  const __m512i byte = _mm512_set1_epi32(0xFF);
  for (int s = 0; s < 4; ++s) {
    terms.low_scales[s] = _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(unpacked.scales[0], 8 * s), byte), 4);
    terms.high_scales[s] = _mm512_and_si512(_mm512_srli_epi32(unpacked.scales[1], 8 * s), byte);
  }
  const __m512i even_bytes = _mm512_set1_epi32(0x00FF00FF);
  terms.min_pairs[0] = _mm512_and_si512(unpacked.mins[0], even_bytes);
  terms.min_pairs[1] = _mm512_srli_epi16(unpacked.mins[0], 8);
  terms.min_pairs[2] = _mm512_and_si512(unpacked.mins[1], even_bytes);
  terms.min_pairs[3] = _mm512_srli_epi16(unpacked.mins[1], 8);
  return terms;
}

// The same block of G consecutive groups.
template <int G>
using Blocks = std::array<const std::byte*, G>;

// Block b of G groups (one or two) against J activation rows, their running totals kept in
// totals[g] (a row's sixteen apart): lane r of each is row r's. The integer sums are the band
// kernels' times sixteen (Σ scale · value · activation and Σ min · activation sums, exact) and the
// float steps k_block_share's, so the bits are too. Two groups share each broadcast activation:
// the broadcasts and nibble masks, not the dot products, are what fills the vector ports, and
// sharing them lets the products set the pace. With `fetch`, next[g] (the same block of the
// groups after these) is fetched a line per part, so its misses overlap these products instead of
// stalling the next groups' first.
template <int G, int J>
void block_rows(Blocks<G> blocks, const BlockTerms* terms, int64_t b, const QuantisedRowView* x, Blocks<G> next, bool fetch,
                float* const* totals) {
  if (fetch)
    for (int g = 0; g < G; ++g)
      for (int64_t at = 0; at < kPartsAt; at += 64) _mm_prefetch(reinterpret_cast<const char*>(next[g] + at), _MM_HINT_T0);
  // High nibbles are multiplied where they lie: one AND instead of a shift (which takes the
  // port the dot products need) and an AND.
  const __m512i low_nibbles = _mm512_set1_epi8(0x0F), high_nibbles = _mm512_set1_epi8(static_cast<char>(0xF0));
  __m512i scaled[G][J];
  for (auto& group : scaled)
    for (auto& sum : group) sum = _mm512_setzero_si512();
  // Parts 8s..8s+7 hold sub-block s in their low nibbles and sub-block s + 4 in their high ones.
  // One activation row of one group leaves too few dot products in flight to hide their latency,
  // so its parts alternate between two sums per nibble (integers: the order changes no bit).
  constexpr int kChains = G * J == 1 ? 2 : 1;
  for (int s = 0; s < 4; ++s) {
    __m512i low[kChains][G][J], high[kChains][G][J];
    for (int c = 0; c < kChains; ++c)
      for (int g = 0; g < G; ++g)
        for (int j = 0; j < J; ++j) low[c][g][j] = high[c][g][j] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      const int p = 8 * s + k, c = k % kChains;
      __m512i low_values[G], high_values[G];
      for (int g = 0; g < G; ++g) {
        if (fetch) _mm_prefetch(reinterpret_cast<const char*>(next[g] + kPartsAt + 64 * p), _MM_HINT_T0);
        const __m512i part = _mm512_loadu_si512(blocks[g] + kPartsAt + 64 * p);
        low_values[g] = _mm512_and_si512(part, low_nibbles);
        high_values[g] = _mm512_and_si512(part, high_nibbles);
      }
      for (int j = 0; j < J; ++j) {
        const int8_t* a = x[j].q + 256 * b;
        const __m512i low_activations = broadcast4(a + 4 * p), high_activations = broadcast4(a + 128 + 4 * p);
        for (int g = 0; g < G; ++g) {
          low[c][g][j] = _mm512_dpbusd_epi32(low[c][g][j], low_values[g], low_activations);
          high[c][g][j] = _mm512_dpbusd_epi32(high[c][g][j], high_values[g], high_activations);
        }
      }
    }
    for (int c = 1; c < kChains; ++c)
      for (int g = 0; g < G; ++g)
        for (int j = 0; j < J; ++j) {
          low[0][g][j] = _mm512_add_epi32(low[0][g][j], low[c][g][j]);
          high[0][g][j] = _mm512_add_epi32(high[0][g][j], high[c][g][j]);
        }
    for (int g = 0; g < G; ++g)
      for (int j = 0; j < J; ++j)
        scaled[g][j] = _mm512_add_epi32(scaled[g][j],
                                        _mm512_add_epi32(_mm512_mullo_epi32(low[0][g][j], terms[g].low_scales[s]),
                                                         _mm512_mullo_epi32(high[0][g][j], terms[g].high_scales[s])));
  }
  // Converting sixteen times an integer and dividing by sixteen gives the integer's conversion.
  const __m512 sixteenth = _mm512_set1_ps(1.0f / 16.0f);
  for (int j = 0; j < J; ++j) {
    const int32_t* sum_pairs = x[j].sub_sum_pairs + 4 * b;  // as min_pairs holds their mins
    const __m512 a = _mm512_set1_ps(x[j].scales[b]);
    for (int g = 0; g < G; ++g) {
      __m512i min_sum = _mm512_setzero_si512();
      for (int k = 0; k < 4; ++k) min_sum = _mm512_dpwssd_epi32(min_sum, terms[g].min_pairs[k], _mm512_set1_epi32(sum_pairs[k]));
      const __m512 value_sum = _mm512_mul_ps(_mm512_cvtepi32_ps(scaled[g][j]), sixteenth);
      const __m512 share = _mm512_sub_ps(_mm512_mul_ps(_mm512_mul_ps(terms[g].d, a), value_sum),
                                         _mm512_mul_ps(_mm512_mul_ps(terms[g].dmin, a), _mm512_cvtepi32_ps(min_sum)));
      float* t = totals[g] + 16 * j;
      _mm512_store_ps(t, _mm512_add_ps(_mm512_load_ps(t), share));
    }
  }
}

// Block b of G groups against the chunk's rows, kMaxRows at a time. Kept out of line: with both
// instances inlined into one loop, one to three rows ran 8% slower than before pairs existed.
template <int G>
[[gnu::noinline]] void block_chunk(Blocks<G> blocks, int64_t b, const QuantisedRowView* x, int64_t rows, Blocks<G> next,
                                   bool fetch_next, float* const* totals) {
  BlockTerms terms[G];
  for (int g = 0; g < G; ++g) terms[g] = block_terms(blocks[g]);
  for (int64_t i = 0; i < rows; i += kMaxRows) {
    // The first pass over a block fetches the next groups'.
    const bool fetch = fetch_next && i == 0;
    float* t[G];
    for (int g = 0; g < G; ++g) t[g] = totals[g] + i * kRowGroupRows;
    switch (std::min<int64_t>(kMaxRows, rows - i)) {
      case 1: block_rows<G, 1>(blocks, terms, b, x + i, next, fetch, t); break;
      case 2: block_rows<G, 2>(blocks, terms, b, x + i, next, fetch, t); break;
      case 3: block_rows<G, 3>(blocks, terms, b, x + i, next, fetch, t); break;
      default: block_rows<G, 4>(blocks, terms, b, x + i, next, fetch, t); break;
    }
  }
}

}  // namespace

void q4_k_group_dots_avx512(const std::byte* w, int64_t groups, int64_t blocks, const QuantisedRowView* x, int64_t m,
                            float* y, int64_t y_stride) {
  // Activation rows in chunks that stay in L1 while every group meets them (prefill's 512 rows
  // would not fit; read again for each group from further out, they cost a sixth of the speed),
  // except that a decode batch is one chunk: llama-1b's shape at 16 rows read its matrices two
  // to four times a step in chunks of L1's size, and decoded 15% slower.
  // Within a chunk each block is met by all its rows in turn, so a group's blocks are read
  // once a chunk, not once per four rows (a 768x2048 matrix against 16 rows: 6% faster).
  const int64_t chunk = chunk_rows(blocks);
  alignas(64) float totals[2][kMaxChunk * kRowGroupRows];
  float* const group_totals[2] = {totals[0], totals[1]};
  const int64_t group_bytes = blocks * kGroupBlockBytes;
  for (int64_t first = 0; first < m; first += chunk) {
    const int64_t rows = std::min(m, first + chunk) - first;
    // Groups two at a time (the last alone when their number is odd) where a full pass of rows
    // keeps the ports busy; with fewer rows the weights' bandwidth sets the pace, and two groups
    // read side by side are two streams where one does.
    const int64_t at_once = rows >= kMaxRows ? 2 : 1;
    for (int64_t g = 0; g < groups;) {
      const int64_t together = std::min(at_once, groups - g);
      for (int64_t t = 0; t < together; ++t) std::fill_n(totals[t], rows * kRowGroupRows, 0.0f);
      for (int64_t b = 0; b < blocks; ++b) {
        const std::byte* block = w + g * group_bytes + b * kGroupBlockBytes;
        const int64_t after = g + together;
        const bool fetch = after < groups;
        const std::byte* next = fetch ? block + together * group_bytes : block;  // never past the matrix
        if (together == 2)
          block_chunk<2>({block, block + group_bytes}, b, x + first, rows,
                         {next, after + 1 < groups ? next + group_bytes : next}, fetch, group_totals);
        else
          block_chunk<1>({block}, b, x + first, rows, {next}, fetch, group_totals);
      }
      for (int64_t t = 0; t < together; ++t)
        for (int64_t i = 0; i < rows; ++i)
          std::copy_n(totals[t] + i * kRowGroupRows, kRowGroupRows, y + (first + i) * y_stride + (g + t) * kRowGroupRows);
      g += together;
    }
  }
}

}  // namespace snapstream::kernels::cpu
